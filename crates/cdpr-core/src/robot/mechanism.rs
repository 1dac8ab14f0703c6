//! Robot files of the kinds with rigid legs (`kind = "linear_delta"` or `"rssu2"`).

use super::error::{MAX_COORDINATE, RobotFileError};
use super::fields::{
    Ctx, aabb, build_platform, build_winch, coordinate, numbers, plc_section, positive,
    refuse_sections, span_of,
};
use super::raw::{RawLinearDelta, RawRobot, RawRssu2};
use super::{Aabb, Dof, Mechanism, Platform, Robot, TensionBounds};
use crate::legs::{Cylinder, LinearDelta, Rssu2};
use crate::text::Plain;
use nalgebra::Vector3;
use toml::Spanned;

fn range(ctx: &Ctx, s: &Spanned<Vec<f64>>, field: &str) -> Result<[f64; 2], RobotFileError> {
    let v = numbers(ctx, s, field, 2, "min, max")?;
    let (lo, hi) = (v[0], v[1]);
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(ctx.err(
            Some(s.span()),
            field,
            format!("must be finite, got [{lo}, {hi}]"),
        ));
    }
    if lo.abs().max(hi.abs()) > MAX_COORDINATE {
        return Err(ctx.err(
            Some(s.span()),
            field,
            format!(
                "must be within ±{} (m or rad), got [{}, {}]",
                MAX_COORDINATE,
                Plain(lo),
                Plain(hi)
            ),
        ));
    }
    if lo >= hi {
        return Err(ctx.err(
            Some(s.span()),
            field,
            format!("needs min < max, got [{lo}, {hi}]"),
        ));
    }
    Ok([lo, hi])
}

pub(super) fn build_legs(ctx: &Ctx, kind: &str, raw: RawRobot) -> Result<Robot, RobotFileError> {
    refuse_sections(
        ctx,
        kind,
        &[
            ("cables", raw.cables.is_some()),
            ("tension", raw.tension.is_some()),
            ("winch", raw.winch.is_some()),
            (
                "linear_delta",
                kind != "linear_delta" && raw.linear_delta.is_some(),
            ),
            ("rssu2", kind != "rssu2" && raw.rssu2.is_some()),
            ("home", raw.home.is_some()),
            ("obstacles", raw.obstacles.is_some()),
        ],
        "a robot with legs has no cables; its drive limits go in [actuators] and its home is \
         its rest pose",
    )?;
    let platform = build_platform(ctx, &raw.platform)?;
    let raw_actuators = raw
        .actuators
        .as_ref()
        .ok_or_else(|| ctx.missing("actuators", format!("a {kind} needs its actuator limits")))?;
    let actuators = build_winch(ctx, raw_actuators, "actuators")?;
    if let Some((key, span)) = super::drives::first_drive_key(raw_actuators) {
        return Err(ctx.err(
            Some(span),
            &format!("actuators.{key}"),
            "the drive-train model (motor, gearbox, drum) is for the winches of a cable robot",
        ));
    }
    let expected_dof = if kind == "linear_delta" {
        (3, Dof::Three)
    } else {
        (6, Dof::Six)
    };
    if let Some(d) = &raw.dof
        && *d.get_ref() != expected_dof.0
    {
        return Err(ctx.err(
            span_of(d),
            "dof",
            format!(
                "a {kind} has dof = {} (or leave it out), got {}",
                expected_dof.0,
                d.get_ref()
            ),
        ));
    }
    let (mechanism, default_box, home) = match kind {
        "linear_delta" => {
            let r = raw
                .linear_delta
                .as_ref()
                .ok_or_else(|| ctx.missing("linear_delta", "the robot's dimensions"))?;
            let (delta, cylinder) = build_linear_delta(ctx, r)?;
            let c = Vector3::new(0.0, 0.0, cylinder.z_top - 0.5 * cylinder.height);
            let half = Vector3::new(cylinder.radius, cylinder.radius, 0.5 * cylinder.height);
            (
                Mechanism::LinearDelta { delta, cylinder },
                Aabb {
                    min: c - half,
                    max: c + half,
                },
                [c.x, c.y, c.z, 0.0, 0.0, 0.0],
            )
        }
        _ => {
            let r = raw
                .rssu2
                .as_ref()
                .ok_or_else(|| ctx.missing("rssu2", "the platform's dimensions"))?;
            let rssu2 = build_rssu2(ctx, r)?;
            let reach = Vector3::new(rssu2.forward, rssu2.half_width, 0.05);
            (
                Mechanism::Rssu2(rssu2),
                Aabb {
                    min: -reach,
                    max: reach,
                },
                [0.0; 6],
            )
        }
    };
    let workspace = match &raw.workspace {
        Some(b) => aabb(ctx, b, "workspace")?,
        None => default_box,
    };
    let frame = match &raw.frame {
        Some(f) => aabb(ctx, f, "frame")?,
        None => frame_of(&mechanism, &workspace, &platform, &home),
    };
    Ok(Robot {
        mechanism,
        name: raw.name,
        description: raw.description,
        source: raw.source,
        path: None,
        dof: expected_dof.1,
        cables: Vec::new(),
        platform,
        tension: TensionBounds {
            min: 0.0,
            max: f64::INFINITY,
        },
        winch: actuators,
        drives: Vec::new(),
        workspace,
        frame,
        home,
        plc: plc_section(ctx, raw.plc),
        obstacles: Vec::new(),
    })
}

fn build_linear_delta(
    ctx: &Ctx,
    r: &RawLinearDelta,
) -> Result<(LinearDelta, Cylinder), RobotFileError> {
    let f = "linear_delta";
    let angle = positive(ctx, &r.rail_angle, &format!("{f}.rail_angle"), "rad")?;
    if angle >= std::f64::consts::FRAC_PI_2 {
        return Err(ctx.err(
            Some(r.rail_angle.span()),
            &format!("{f}.rail_angle"),
            "must be below π/2 (90°)",
        ));
    }
    let cylinder = Cylinder {
        radius: positive(
            ctx,
            &r.cylinder.radius,
            &format!("{f}.cylinder.radius"),
            "m",
        )?,
        height: positive(
            ctx,
            &r.cylinder.height,
            &format!("{f}.cylinder.height"),
            "m",
        )?,
        z_top: coordinate(ctx, &r.cylinder.z_top, &format!("{f}.cylinder.z_top"))?,
    };
    let delta = LinearDelta {
        rail_angle: angle,
        base_radius: positive(ctx, &r.base_radius, &format!("{f}.base_radius"), "m")?,
        platform_radius: positive(
            ctx,
            &r.platform_radius,
            &format!("{f}.platform_radius"),
            "m",
        )?,
        arm_length: positive(ctx, &r.arm_length, &format!("{f}.arm_length"), "m")?,
        arm_spacing: positive(ctx, &r.arm_spacing, &format!("{f}.arm_spacing"), "m")?,
        arm_radius: positive(ctx, &r.arm_radius, &format!("{f}.arm_radius"), "m")?,
        stroke: range(ctx, &r.stroke, &format!("{f}.stroke"))?,
        spherical_limit: positive(
            ctx,
            &r.spherical_limit,
            &format!("{f}.spherical_limit"),
            "rad",
        )?,
        neutral: Vector3::new(0.0, 0.0, cylinder.z_top - 0.5 * cylinder.height),
    };
    if delta.actuators(&delta.neutral).is_none() {
        return Err(ctx.err(
            Some(r.arm_length.span()),
            &format!("{f}.arm_length"),
            "the arms cannot reach the centre of the cylinder from the rails",
        ));
    }
    Ok((delta, cylinder))
}

fn build_rssu2(ctx: &Ctx, r: &RawRssu2) -> Result<Rssu2, RobotFileError> {
    let f = "rssu2";
    let p = Rssu2 {
        half_width: positive(ctx, &r.half_width, &format!("{f}.half_width"), "m")?,
        forward: positive(ctx, &r.forward, &format!("{f}.forward"), "m")?,
        crank: positive(ctx, &r.crank, &format!("{f}.crank"), "m")?,
        rod: positive(ctx, &r.rod, &format!("{f}.rod"), "m")?,
        crank_limits: range(ctx, &r.crank_limits, &format!("{f}.crank_limits"))?,
    };
    if !p.reachable(0.0, 0.0) {
        return Err(ctx.err(
            Some(r.crank_limits.span()),
            &format!("{f}.crank_limits"),
            "the level rest pose must be reachable",
        ));
    }
    Ok(p)
}

/// A drawing box around the whole mechanism.
/// The drawing frame when the file gives none: the workspace, the legs' bases and travel, and
/// the platform's box turned any way about its home pose (a sphere round it).
fn frame_of(mechanism: &Mechanism, workspace: &Aabb, platform: &Platform, home: &[f64; 6]) -> Aabb {
    let mut min = workspace.min;
    let mut max = workspace.max;
    let mut grow = |p: Vector3<f64>| {
        min = min.inf(&p);
        max = max.sup(&p);
    };
    match mechanism {
        Mechanism::LinearDelta { delta, .. } => {
            for i in 0..3 {
                grow(delta.rail_origin(i));
                grow(delta.rail_origin(i) + delta.rail_direction(i) * delta.stroke[1]);
            }
        }
        Mechanism::Rssu2(r) => {
            for i in 0..2 {
                grow(r.pivot(i) - Vector3::new(0.0, 0.0, r.crank));
                grow(r.pivot(i) + Vector3::new(0.0, 0.0, r.crank));
            }
        }
        Mechanism::Cables => {}
    }
    let centre = Vector3::new(home[0], home[1], home[2]) + platform.box_center;
    let radius = Vector3::repeat(0.5 * platform.size.norm());
    grow(centre - radius);
    grow(centre + radius);
    Aabb { min, max }
}
