//! The robot file of a cable robot (TOML, SI units) compiled into a [`Robot`]: its cables,
//! its home pose and the checks across sections (anchors inside the frame, no zero-length
//! cable at home). A robot with legs is handed to [`super::mechanism`].
//!
//! Every error names the file, the field and, where the parser knows it, the line, so that a
//! user can fix a file without reading this code. Nothing here panics on user input.

use super::error::{
    MAX_CABLES, MAX_COORDINATE, MAX_HOME_ANGLE, MIN_CABLE_LENGTH, RobotFileError, max_for,
};
use super::fields::{
    Ctx, aabb, build_platform, build_winch, finite, per_cable, plc_section, refuse_sections,
    span_of, vec3, within,
};
use super::raw::{RawBox, RawCables, RawRobot, RawTension};
use super::{Aabb, Cable, Dof, Robot, Stiffness, TensionBounds};
use crate::text::Plain;
use toml::Spanned;

/// Parses and validates the text of a robot file; `file` is only used in messages.
pub fn parse_robot(text: &str, file: &str) -> Result<Robot, RobotFileError> {
    let ctx = Ctx { text, file };
    super::bounds::check_list_lengths(text, file)?;
    let raw: RawRobot = toml::from_str(text).map_err(|e| ctx.toml_error(&e))?;
    build(&ctx, raw)
}

/// A cable robot from the file's sections, each checked and then checked against the others;
/// a robot with legs is handed to [`super::mechanism`].
fn build(ctx: &Ctx, raw: RawRobot) -> Result<Robot, RobotFileError> {
    let kind = robot_kind(ctx, raw.kind.as_ref())?;
    if kind != "cdpr" {
        return super::mechanism::build_legs(ctx, kind, raw);
    }
    refuse_sections(
        ctx,
        "cable (kind = \"cdpr\")",
        &[
            ("actuators", raw.actuators.is_some()),
            ("linear_delta", raw.linear_delta.is_some()),
            ("rssu2", raw.rssu2.is_some()),
        ],
        "a cable robot's drive limits go in [winch]; set `kind` for a robot with legs",
    )?;
    let dof = cable_dof(ctx, raw.dof.as_ref())?;
    let missing = |section: &str| ctx.missing(section, "a cable robot needs it");
    let raw_cables = raw.cables.as_ref().ok_or_else(|| missing("cables"))?;
    let raw_tension = raw.tension.as_ref().ok_or_else(|| missing("tension"))?;
    let raw_winch = raw.winch.as_ref().ok_or_else(|| missing("winch"))?;
    let raw_workspace = raw.workspace.as_ref().ok_or_else(|| missing("workspace"))?;

    let platform = build_platform(ctx, &raw.platform)?;
    let cables = build_cables(ctx, raw_cables, dof)?;
    let tension = build_tension(ctx, raw_tension)?;
    let winch = build_winch(ctx, raw_winch, "winch")?;
    let names: Vec<String> = cables.iter().map(|c| c.name.clone()).collect();
    let drives = super::drives::build(ctx, raw_winch, &names)?;
    let workspace = aabb(ctx, raw_workspace, "workspace")?;
    let frame = frame_box(ctx, raw.frame.as_ref(), raw_cables, &cables, &workspace)?;
    let home = match &raw.home {
        Some(h) => home_pose(ctx, h)?,
        None => {
            let c = workspace.center();
            [c.x, c.y, c.z, 0.0, 0.0, 0.0]
        }
    };

    let plc = plc_section(ctx, raw.plc);
    let raw_obstacles = raw.obstacles.unwrap_or_default();
    let obstacles = super::obstacles::build(ctx, &raw_obstacles)?;

    let robot = Robot {
        mechanism: super::Mechanism::Cables,
        name: raw.name,
        description: raw.description,
        source: raw.source,
        path: None,
        dof,
        cables,
        platform,
        tension,
        winch,
        drives,
        workspace,
        frame,
        home,
        plc,
        obstacles,
    };
    cables_have_length(ctx, raw_cables, raw.home.as_ref(), &robot)?;
    super::obstacles::anchors_outside(ctx, &raw_obstacles, &robot)?;
    Ok(robot)
}

/// `kind`: which robot the file describes, a cable robot when it is absent.
fn robot_kind(ctx: &Ctx, kind: Option<&Spanned<String>>) -> Result<&'static str, RobotFileError> {
    Ok(match kind {
        None => "cdpr",
        Some(k) => match k.get_ref().as_str() {
            "cdpr" => "cdpr",
            "linear_delta" => "linear_delta",
            "rssu2" => "rssu2",
            other => {
                return Err(ctx.err(
                    span_of(k),
                    "kind",
                    format!("unknown robot kind `{other}`: use cdpr, linear_delta or rssu2"),
                ));
            }
        },
    })
}

/// `dof`: a cable robot's degrees of freedom, 3 or 6; it has no default.
fn cable_dof(ctx: &Ctx, dof: Option<&Spanned<i64>>) -> Result<Dof, RobotFileError> {
    let Some(raw_dof) = dof else {
        return Err(ctx.err(None, "dof", "missing field `dof` (3 or 6)"));
    };
    match *raw_dof.get_ref() {
        3 => Ok(Dof::Three),
        6 => Ok(Dof::Six),
        other => Err(ctx.err(
            span_of(raw_dof),
            "dof",
            format!("must be 3 (translation only) or 6 (full pose), got {other}"),
        )),
    }
}

/// `[tension]`: 0 ≤ min < max, N (cables cannot push).
fn build_tension(ctx: &Ctx, raw: &RawTension) -> Result<TensionBounds, RobotFileError> {
    let tension_range = (0.0, max_for("N"));
    let tmin = finite(ctx, &raw.min, "tension.min")?;
    if tmin < 0.0 {
        return Err(ctx.err(
            span_of(&raw.min),
            "tension.min",
            format!("cables cannot push: must be ≥ 0 N, got {tmin}"),
        ));
    }
    let tmin = within(ctx, &raw.min, "tension.min", tension_range, "N")?;
    let tmax = within(ctx, &raw.max, "tension.max", tension_range, "N")?;
    if tmax <= tmin {
        return Err(ctx.err(
            span_of(&raw.max),
            "tension.max",
            format!("must exceed tension.min ({tmin} N), got {tmax} N"),
        ));
    }
    Ok(TensionBounds {
        min: tmin,
        max: tmax,
    })
}

/// `[frame]`, which must hold every frame anchor; without it, the box around the frame anchors
/// and the workspace.
fn frame_box(
    ctx: &Ctx,
    raw: Option<&RawBox>,
    raw_cables: &RawCables,
    cables: &[Cable],
    workspace: &Aabb,
) -> Result<Aabb, RobotFileError> {
    match raw {
        Some(f) => {
            let frame = aabb(ctx, f, "frame")?;
            anchors_in_frame(ctx, raw_cables, cables, &frame)?;
            Ok(frame)
        }
        None => {
            let mut min = cables[0].frame_anchor;
            let mut max = min;
            for c in cables {
                min = min.inf(&c.frame_anchor);
                max = max.sup(&c.frame_anchor);
            }
            Ok(Aabb {
                min: min.inf(&workspace.min),
                max: max.sup(&workspace.max),
            })
        }
    }
}

/// `home`: x, y, z (m, within ±[`MAX_COORDINATE`]) and optionally roll, pitch, yaw (rad,
/// within ±[`MAX_HOME_ANGLE`]).
fn home_pose(ctx: &Ctx, h: &Spanned<Vec<f64>>) -> Result<[f64; 6], RobotFileError> {
    let v = h.get_ref();
    if v.len() != 3 && v.len() != 6 {
        return Err(ctx.err(
            span_of(h),
            "home",
            format!(
                "needs 3 or 6 numbers (x, y, z[, roll, pitch, yaw]), got {}",
                v.len()
            ),
        ));
    }
    if let Some(x) = v.iter().find(|x| !x.is_finite()) {
        return Err(ctx.err(span_of(h), "home", format!("must be finite, got {x}")));
    }
    let names = ["x", "y", "z", "roll", "pitch", "yaw"];
    for (k, x) in v.iter().enumerate() {
        let (max, unit) = if k < 3 {
            (MAX_COORDINATE, "m")
        } else {
            (MAX_HOME_ANGLE, "rad")
        };
        if x.abs() > max {
            return Err(ctx.err(
                span_of(h),
                "home",
                format!(
                    "{} must be within ±{max} {unit}, got {}",
                    names[k],
                    Plain(*x)
                ),
            ));
        }
    }
    let mut pose = [0.0; 6];
    pose[..v.len()].copy_from_slice(v);
    Ok(pose)
}

/// Every frame anchor (pulley) lies in the file's `[frame]` box: above its floor, inside
/// its walls.
fn anchors_in_frame(
    ctx: &Ctx,
    raw: &RawCables,
    cables: &[Cable],
    frame: &Aabb,
) -> Result<(), RobotFileError> {
    let tolerance = 1e-9;
    for (k, (c, s)) in cables.iter().zip(raw.frame_anchors.get_ref()).enumerate() {
        let a = c.frame_anchor;
        let outside =
            (0..3).find(|&i| a[i] < frame.min[i] - tolerance || a[i] > frame.max[i] + tolerance);
        let Some(i) = outside else { continue };
        let axis = ["x", "y", "z"][i];
        let why = if i == 2 && a.z < frame.min.z {
            format!("below the floor of the [frame] box (z = {} m)", frame.min.z)
        } else {
            format!(
                "outside the [frame] box ({axis} ∈ [{}, {}] m)",
                frame.min[i], frame.max[i]
            )
        };
        return Err(ctx.err(
            span_of(s),
            &format!("cables.frame_anchors[{k}]"),
            format!(
                "frame anchor of cable {} ({}) at ({}, {}, {}) m is {why}",
                k + 1,
                c.name,
                a.x,
                a.y,
                a.z
            ),
        ));
    }
    Ok(())
}

/// No cable has zero length at the home pose (its frame anchor on its platform anchor).
fn cables_have_length(
    ctx: &Ctx,
    raw: &RawCables,
    home: Option<&Spanned<Vec<f64>>>,
    robot: &Robot,
) -> Result<(), RobotFileError> {
    // |a_i − (r + R b_i)| at home: the inverse kinematics' length, written out (the
    // kinematics sit a layer above the robot file).
    let at_home = crate::pose::Pose::from_array(robot.home);
    let rotation = at_home.rotation();
    let lengths: Vec<f64> = robot
        .cables
        .iter()
        .map(|c| (c.frame_anchor - at_home.position - rotation.matrix() * c.platform_anchor).norm())
        .collect();
    for (k, length) in lengths.iter().enumerate() {
        if *length >= MIN_CABLE_LENGTH {
            continue;
        }
        let where_home = if home.is_some() {
            "the file's `home`"
        } else {
            "the workspace centre (no `home` given)"
        };
        return Err(ctx.err(
            raw.frame_anchors.get_ref().get(k).and_then(span_of),
            &format!("cables.frame_anchors[{k}]"),
            format!(
                "cable {} ({}) has zero length ({} m) at the home pose ({}), {where_home}: \
                 its frame anchor is on its platform anchor",
                k + 1,
                robot.cables[k].name,
                Plain(*length),
                robot
                    .home
                    .iter()
                    .map(|v| format!("{v:.4}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(())
}

/// `[cables]`: per cable its anchors, stiffness, damping and pulley, with the counts agreeing
/// and no two cables the same.
fn build_cables(ctx: &Ctx, raw: &RawCables, dof: Dof) -> Result<Vec<Cable>, RobotFileError> {
    let frame = raw.frame_anchors.get_ref();
    let platform = raw.platform_anchors.get_ref();
    let count = cable_count(ctx, raw, dof)?;
    let names = cable_names(ctx, raw, count)?;
    let stiffness = cable_stiffness(ctx, raw, count, &names)?;
    let damping = per_cable(ctx, &raw.damping, "cables.damping", count, max_for("N·s/m"))?;
    if let Some((k, v)) = damping.iter().enumerate().find(|(_, v)| **v < 0.0) {
        return Err(ctx.err(
            span_of(&raw.damping),
            "cables.damping",
            format!("cable {} ({}) must be ≥ 0 N·s/m, got {v}", k + 1, names[k]),
        ));
    }

    let (pulleys, densities) = super::pulleys::build(ctx, raw, &names)?;
    let mut cables = Vec::with_capacity(count);
    let mut twins = super::twins::Twins::with_capacity(count);
    for k in 0..count {
        let a = vec3(ctx, &frame[k], &format!("cables.frame_anchors[{k}]"))?;
        let b = vec3(ctx, &platform[k], &format!("cables.platform_anchors[{k}]"))?;
        if let Some(j) = twins.add(a, b) {
            return Err(ctx.err(
                span_of(&platform[k]),
                &format!("cables.platform_anchors[{k}]"),
                format!(
                    "cable {} ({}) coincides with cable {} ({}): same frame and platform anchors",
                    k + 1,
                    names[k],
                    j + 1,
                    names[j]
                ),
            ));
        }
        cables.push(Cable {
            name: names[k].clone(),
            frame_anchor: a,
            platform_anchor: b,
            stiffness: stiffness[k],
            damping: damping[k],
            pulley: pulleys[k],
            mass_per_length: densities[k],
        });
    }
    Ok(cables)
}

/// The number of cables: as many platform anchors as frame anchors, and at least one cable
/// per degree of freedom.
fn cable_count(ctx: &Ctx, raw: &RawCables, dof: Dof) -> Result<usize, RobotFileError> {
    let platform = raw.platform_anchors.get_ref();
    let count = raw.frame_anchors.get_ref().len();
    // Found by the token scan before the parse; checked here too, so that no way of writing
    // the list builds more than the limit.
    if count > MAX_CABLES {
        return Err(RobotFileError::TooManyCables {
            file: ctx.file.to_string(),
            line: span_of(&raw.frame_anchors)
                .map_or(0, |s| crate::toml_location::line_of(ctx.text, s.start)),
            field: "cables.frame_anchors".into(),
            count,
            max: MAX_CABLES,
        });
    }
    if platform.len() != count {
        return Err(ctx.err(
            span_of(&raw.platform_anchors),
            "cables.platform_anchors",
            format!("has {} anchors but cables.frame_anchors has {count}: every cable needs one of each", platform.len()),
        ));
    }
    if count < dof.count() {
        return Err(ctx.err(
            span_of(&raw.frame_anchors),
            "cables.frame_anchors",
            format!(
                "{count} cables cannot hold {} degrees of freedom",
                dof.count()
            ),
        ));
    }
    Ok(count)
}

/// `cables.names`, one per cable; `cable1`, `cable2`, … when absent.
fn cable_names(ctx: &Ctx, raw: &RawCables, count: usize) -> Result<Vec<String>, RobotFileError> {
    match &raw.names {
        Some(n) => {
            ctx.one_per_cable(n, n.get_ref().len(), "cables.names", "names", count)?;
            Ok(n.get_ref().clone())
        }
        None => Ok((1..=count).map(|k| format!("cable{k}")).collect()),
    }
}

/// Each cable's stiffness, from exactly one of `stiffness` (N/m) and `ea` (N), positive.
fn cable_stiffness(
    ctx: &Ctx,
    raw: &RawCables,
    count: usize,
    names: &[String],
) -> Result<Vec<Stiffness>, RobotFileError> {
    let max_stiffness = max_for("N/m");
    let stiffness: Vec<Stiffness> = match (&raw.stiffness, &raw.ea) {
        (Some(_), Some(ea)) => {
            return Err(ctx.err(
                span_of(ea),
                "cables.ea",
                "give either `stiffness` (N/m) or `ea` (N, k = EA/L0), not both",
            ));
        }
        (None, None) => {
            return Err(ctx.err(
                span_of(&raw.frame_anchors),
                "cables.stiffness",
                "missing: give `stiffness` (N/m) or `ea` (N, k = EA/L0)",
            ));
        }
        (Some(k), None) => per_cable(ctx, k, "cables.stiffness", count, max_stiffness)?
            .into_iter()
            .map(Stiffness::Constant)
            .collect(),
        (None, Some(ea)) => per_cable(ctx, ea, "cables.ea", count, max_stiffness)?
            .into_iter()
            .map(Stiffness::Ea)
            .collect(),
    };
    for (k, s) in stiffness.iter().enumerate() {
        let (value, name, span) = match s {
            Stiffness::Constant(v) => (
                *v,
                "cables.stiffness",
                raw.stiffness.as_ref().map(|s| s.span()),
            ),
            Stiffness::Ea(v) => (*v, "cables.ea", raw.ea.as_ref().map(|s| s.span())),
        };
        if value <= 0.0 {
            return Err(ctx.err(
                span,
                name,
                format!(
                    "cable {} ({}) must be positive, got {value}",
                    k + 1,
                    names[k]
                ),
            ));
        }
    }
    Ok(stiffness)
}
