//! `[cables]`' pulley and cable-mass keys: `pulley_radius`, `pulley_axis`, `pulley_friction`,
//! `pulley_max_wrap`, `pulley_swivel_range` and `cable_mass_per_length`, checked and located
//! as every robot-file value is (`file:line: cables.<key>: …`).

use super::Pulley;
use super::error::{RobotFileError, max_for};
use super::fields::{Ctx, numbers, per_cable, span_of, vec3};
use super::raw::{RawCables, ScalarOrList};
use crate::text::Plain;
use toml::Spanned;

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
    let each = |s: &Option<Spanned<ScalarOrList>>, key: &str, rule: Rule, default: f64| match s {
        None => Ok(vec![default; count]),
        Some(s) => per_cable_within(ctx, s, key, names, rule),
    };
    let density = each(
        &raw.cable_mass_per_length,
        "cables.cable_mass_per_length",
        Rule::at_least_zero("≥ 0 kg/m", max_for("kg")),
        0.0,
    )?;
    let Some(raw_radius) = &raw.pulley_radius else {
        refuse_pulley_keys(ctx, raw)?;
        return Ok((vec![None; count], density));
    };
    let radius = per_cable_within(
        ctx,
        raw_radius,
        "cables.pulley_radius",
        names,
        Rule::at_least_zero("≥ 0 m (0 = no pulley)", MAX_PULLEY_RADIUS),
    )?;
    let friction = each(
        &raw.pulley_friction,
        "cables.pulley_friction",
        Rule::at_least_zero("≥ 0", MAX_PULLEY_FRICTION),
        0.0,
    )?;
    let max_wrap = each(
        &raw.pulley_max_wrap,
        "cables.pulley_max_wrap",
        Rule {
            what: "positive (rad)",
            max: 2.0 * DEFAULT_MAX_WRAP,
            holds: |x| x > 0.0,
        },
        DEFAULT_MAX_WRAP,
    )?;
    let swivel_range = match &raw.pulley_swivel_range {
        None => None,
        Some(s) => Some(swivel_range(ctx, s)?),
    };
    let axes = match &raw.pulley_axis {
        None if radius.iter().any(|r| *r > 0.0) => {
            return Err(ctx.err(
                span_of(raw_radius),
                "cables.pulley_axis",
                "missing: a pulley needs its swivel axis, one unit vector per cable \
                 (the cable arrives from the winch travelling along −axis)",
            ));
        }
        None => Vec::new(),
        Some(list) => axes(ctx, list, names)?,
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

/// What each cable's value of a key must be: within `max` (as every per-cable number) and
/// `holds`, said as `what` ("≥ 0 kg/m").
pub(super) struct Rule {
    pub(super) what: &'static str,
    pub(super) max: f64,
    pub(super) holds: fn(f64) -> bool,
}

impl Rule {
    pub(super) fn at_least_zero(what: &'static str, max: f64) -> Rule {
        Rule {
            what,
            max,
            holds: |x| x >= 0.0,
        }
    }
}

/// A per-cable key's values, each held to `rule` ("cable 2 (b) must be ≥ 0, got -1").
pub(super) fn per_cable_within(
    ctx: &Ctx,
    s: &Spanned<ScalarOrList>,
    key: &str,
    names: &[String],
    rule: Rule,
) -> Result<Vec<f64>, RobotFileError> {
    let v = per_cable(ctx, s, key, names.len(), rule.max)?;
    if let Some((k, x)) = v.iter().enumerate().find(|(_, x)| !(rule.holds)(**x)) {
        return Err(ctx.err(
            span_of(s),
            key,
            format!(
                "cable {} ({}) must be {}, got {}",
                k + 1,
                names[k],
                rule.what,
                Plain(*x)
            ),
        ));
    }
    Ok(v)
}

/// Without a `pulley_radius`, the other pulley keys are a mistake: said at the first given.
fn refuse_pulley_keys(ctx: &Ctx, raw: &RawCables) -> Result<(), RobotFileError> {
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
    Ok(())
}

/// `pulley_swivel_range`: [min, max] with −π ≤ min < max ≤ π rad.
fn swivel_range(ctx: &Ctx, s: &Spanned<Vec<f64>>) -> Result<[f64; 2], RobotFileError> {
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
    Ok([v[0], v[1]])
}

/// `pulley_axis`: one unit vector per cable.
fn axes(
    ctx: &Ctx,
    list: &Spanned<Vec<Spanned<Vec<f64>>>>,
    names: &[String],
) -> Result<Vec<nalgebra::Vector3<f64>>, RobotFileError> {
    let count = names.len();
    ctx.one_per_cable(
        list,
        list.get_ref().len(),
        "cables.pulley_axis",
        "axes",
        count,
    )?;
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
    Ok(axes)
}
