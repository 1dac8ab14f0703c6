//! `[cables]`' pulley and cable-mass keys: `pulley_radius`, `pulley_axis`, `pulley_friction`,
//! `pulley_max_wrap`, `pulley_swivel_range` and `cable_mass_per_length`, checked and located
//! as every robot-file value is (`file:line: cables.<key>: …`).

use super::Pulley;
use super::error::{RobotFileError, max_for};
use super::fields::{Ctx, numbers, per_cable, span_of, vec3};
use super::raw::RawCables;
use crate::text::Plain;

/// Largest pulley radius, m.
pub const MAX_PULLEY_RADIUS: f64 = 1.0;
/// Largest capstan friction coefficient μ (a cable on a greased steel sheave is ~0.1).
pub const MAX_PULLEY_FRICTION: f64 = 1.0;
/// A pulley axis must have unit length within this.
pub const UNIT_AXIS_TOLERANCE: f64 = 1e-6;
/// Wrap allowed when the file gives no `pulley_max_wrap`: half a turn (beyond it the cable
/// would leave the wheel on the side it came from).
pub const DEFAULT_MAX_WRAP: f64 = std::f64::consts::PI;

/// The per-cable pulleys (None where the radius is 0 or no pulley keys are given) and
/// linear densities (kg/m).
pub(super) fn build(
    ctx: &Ctx,
    raw: &RawCables,
    names: &[String],
) -> Result<(Vec<Option<Pulley>>, Vec<f64>), RobotFileError> {
    let count = names.len();
    let density = match &raw.cable_mass_per_length {
        None => vec![0.0; count],
        Some(s) => {
            let v = per_cable(ctx, s, "cables.cable_mass_per_length", count, max_for("kg"))?;
            if let Some((k, x)) = v.iter().enumerate().find(|(_, x)| **x < 0.0) {
                return Err(ctx.err(
                    span_of(s),
                    "cables.cable_mass_per_length",
                    format!(
                        "cable {} ({}) must be ≥ 0 kg/m, got {}",
                        k + 1,
                        names[k],
                        Plain(*x)
                    ),
                ));
            }
            v
        }
    };
    let Some(raw_radius) = &raw.pulley_radius else {
        for (key, given) in [
            (
                "cables.pulley_axis",
                raw.pulley_axis.as_ref().map(|s| s.span()),
            ),
            (
                "cables.pulley_friction",
                raw.pulley_friction.as_ref().map(|s| s.span()),
            ),
            (
                "cables.pulley_max_wrap",
                raw.pulley_max_wrap.as_ref().map(|s| s.span()),
            ),
            (
                "cables.pulley_swivel_range",
                raw.pulley_swivel_range.as_ref().map(|s| s.span()),
            ),
        ] {
            if given.is_some() {
                return Err(ctx.err(
                    given,
                    key,
                    "belongs to a pulley, but the file gives no `pulley_radius` (m)",
                ));
            }
        }
        return Ok((vec![None; count], density));
    };
    let radius = per_cable(
        ctx,
        raw_radius,
        "cables.pulley_radius",
        count,
        MAX_PULLEY_RADIUS,
    )?;
    if let Some((k, r)) = radius.iter().enumerate().find(|(_, r)| **r < 0.0) {
        return Err(ctx.err(
            span_of(raw_radius),
            "cables.pulley_radius",
            format!(
                "cable {} ({}) must be ≥ 0 m (0 = no pulley), got {}",
                k + 1,
                names[k],
                Plain(*r)
            ),
        ));
    }
    let friction = match &raw.pulley_friction {
        None => vec![0.0; count],
        Some(s) => {
            let v = per_cable(ctx, s, "cables.pulley_friction", count, MAX_PULLEY_FRICTION)?;
            if let Some((k, x)) = v.iter().enumerate().find(|(_, x)| **x < 0.0) {
                return Err(ctx.err(
                    span_of(s),
                    "cables.pulley_friction",
                    format!(
                        "cable {} ({}) must be ≥ 0, got {}",
                        k + 1,
                        names[k],
                        Plain(*x)
                    ),
                ));
            }
            v
        }
    };
    let max_wrap = match &raw.pulley_max_wrap {
        None => vec![DEFAULT_MAX_WRAP; count],
        Some(s) => {
            let v = per_cable(
                ctx,
                s,
                "cables.pulley_max_wrap",
                count,
                2.0 * DEFAULT_MAX_WRAP,
            )?;
            if let Some((k, x)) = v.iter().enumerate().find(|(_, x)| **x <= 0.0) {
                return Err(ctx.err(
                    span_of(s),
                    "cables.pulley_max_wrap",
                    format!(
                        "cable {} ({}) must be positive (rad), got {}",
                        k + 1,
                        names[k],
                        Plain(*x)
                    ),
                ));
            }
            v
        }
    };
    let swivel_range = match &raw.pulley_swivel_range {
        None => None,
        Some(s) => {
            let v = numbers(ctx, s, "cables.pulley_swivel_range", 2, "min, max in rad")?;
            let pi = std::f64::consts::PI;
            if !(v[0].is_finite() && v[1].is_finite() && v[0] < v[1] && v[0] >= -pi && v[1] <= pi) {
                return Err(ctx.err(
                    span_of(s),
                    "cables.pulley_swivel_range",
                    format!(
                        "must be [min, max] with −π ≤ min < max ≤ π rad, got [{}, {}]",
                        Plain(v[0]),
                        Plain(v[1])
                    ),
                ));
            }
            Some([v[0], v[1]])
        }
    };
    let any_pulley = radius.iter().any(|r| *r > 0.0);
    let axes = match &raw.pulley_axis {
        None if any_pulley => {
            return Err(ctx.err(
                span_of(raw_radius),
                "cables.pulley_axis",
                "missing: a pulley needs its swivel axis, one unit vector per cable \
                 (the cable arrives from the winch travelling along −axis)",
            ));
        }
        None => Vec::new(),
        Some(list) => {
            if list.get_ref().len() != count {
                return Err(ctx.err(
                    span_of(list),
                    "cables.pulley_axis",
                    format!(
                        "gives {} axes but the file has {count} cables",
                        list.get_ref().len()
                    ),
                ));
            }
            let mut axes = Vec::with_capacity(count);
            for (k, s) in list.get_ref().iter().enumerate() {
                let field = format!("cables.pulley_axis[{k}]");
                let a = vec3(ctx, s, &field)?;
                let norm = a.norm();
                if norm == 0.0 {
                    return Err(ctx.err(
                        span_of(s),
                        &field,
                        format!(
                            "cable {} ({}): the swivel axis has zero length",
                            k + 1,
                            names[k]
                        ),
                    ));
                }
                if (norm - 1.0).abs() > UNIT_AXIS_TOLERANCE {
                    return Err(ctx.err(
                        span_of(s),
                        &field,
                        format!(
                            "cable {} ({}): the swivel axis must be a unit vector, its length \
                             is {} (divide by it: [{}, {}, {}])",
                            k + 1,
                            names[k],
                            Plain(norm),
                            Plain(a.x / norm),
                            Plain(a.y / norm),
                            Plain(a.z / norm)
                        ),
                    ));
                }
                axes.push(a);
            }
            axes
        }
    };
    let pulleys = (0..count)
        .map(|k| {
            (radius[k] > 0.0).then(|| Pulley {
                radius: radius[k],
                axis: axes[k],
                friction: friction[k],
                max_wrap: max_wrap[k],
                swivel_range,
            })
        })
        .collect();
    Ok((pulleys, density))
}
