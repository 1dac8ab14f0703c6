//! The robot file format (TOML, SI units) and its validation.
//!
//! Every error names the file, the field and, where the parser knows it, the line, so that a
//! user can fix a file without reading this code. Nothing here panics on user input.

use super::{Aabb, Cable, Dof, Platform, PlcSymbols, Robot, Stiffness, TensionBounds, Winch};
use crate::toml_location::{self, Located, line_of};
use nalgebra::{Matrix3, Vector3};
use serde::Deserialize;
use std::ops::Range;
use toml::Spanned;

/// What can go wrong reading a robot file.
#[derive(Debug, thiserror::Error)]
pub enum RobotFileError {
    /// The OS error is part of the message (not a `source`), so that a `{:#}` chain prints
    /// it once.
    #[error("{file}: cannot read the robot file: {error}")]
    Io { file: String, error: std::io::Error },
    #[error("{file}: is larger than {max} bytes: not a robot file")]
    TooLarge { file: String, max: u64 },
    #[error("no robot `{spec}`: not a shipped robot ({builtin}) and none of {searched} exists")]
    NotFound {
        spec: String,
        builtin: String,
        /// The files looked for, in lookup order.
        searched: String,
    },
    /// A path (it has a separator or ends in `.toml`) that does not exist; `shipped` is the
    /// shipped robot its stem names, if any.
    #[error("file not found: {path}{}", match shipped {
        Some(name) => format!(" (`{name}` alone names the shipped robot {name})"),
        None => String::new(),
    })]
    FileNotFound {
        path: String,
        shipped: Option<String>,
    },
    /// A section the robot needs is not in the file (no line to point at).
    #[error("{file}: missing section [{section}] ({why})")]
    MissingSection {
        file: String,
        section: String,
        why: String,
    },
    /// `file:line: field: message`, or `file: field: message` when the line is unknown.
    #[error("{file}{}: {field}: {message}", line_suffix(*.line))]
    Invalid {
        file: String,
        /// 1-based line, 0 when unknown.
        line: usize,
        field: String,
        message: String,
    },
}

impl RobotFileError {
    /// The dotted field path the error is about (e.g. `cables.frame_anchors[2]`).
    pub fn field(&self) -> Option<&str> {
        match self {
            RobotFileError::Invalid { field, .. } => Some(field),
            RobotFileError::MissingSection { section, .. } => Some(section),
            _ => None,
        }
    }
}

fn line_suffix(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

// ---------------------------------------------------------------------------------------
// Physical ranges. Values beyond them are typos or hostile input: the kinematics, statics and
// simulator downstream are not meant for them (1e300 m overflows a squared length).

/// Largest coordinate of any point (anchors, boxes, home), m.
pub const MAX_COORDINATE: f64 = 1.0e3;
/// Platform mass range, kg.
pub const MASS_RANGE: (f64, f64) = (1.0e-6, 1.0e6);
/// Range of the platform's principal moments of inertia, kg·m².
pub const INERTIA_RANGE: (f64, f64) = (1.0e-15, 1.0e6);
/// Largest angle of the home pose, rad (one turn).
pub const MAX_HOME_ANGLE: f64 = 2.0 * std::f64::consts::PI;
/// Shortest cable at the home pose, m: a cable needs a length (and a direction).
pub const MIN_CABLE_LENGTH: f64 = 1.0e-6;
/// Largest file read as a robot file, bytes.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The largest positive value accepted for a quantity in `unit`.
pub(super) fn max_for(unit: &str) -> f64 {
    match unit {
        "m" => MAX_COORDINATE,
        "kg" => MASS_RANGE.1,
        "kg·m²" => INERTIA_RANGE.1,
        _ => 1.0e12,
    }
}

// ---------------------------------------------------------------------------------------
// Raw, as-written structures. `Spanned` keeps the byte range so that errors can give a line.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRobot {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) source: String,
    /// `cdpr` (default), `linear_delta` or `rssu2`.
    #[serde(default)]
    pub(super) kind: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) dof: Option<Spanned<i64>>,
    pub(super) platform: RawPlatform,
    #[serde(default)]
    pub(super) cables: Option<RawCables>,
    #[serde(default)]
    pub(super) tension: Option<RawTension>,
    #[serde(default)]
    pub(super) winch: Option<RawWinch>,
    /// Actuator limits and drive gains of a robot with legs (the `winch` of a CDPR).
    #[serde(default)]
    pub(super) actuators: Option<RawWinch>,
    #[serde(default)]
    pub(super) linear_delta: Option<super::mechanism::RawLinearDelta>,
    #[serde(default)]
    pub(super) rssu2: Option<super::mechanism::RawRssu2>,
    #[serde(default)]
    pub(super) workspace: Option<RawBox>,
    #[serde(default)]
    pub(super) frame: Option<RawBox>,
    #[serde(default)]
    pub(super) home: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    pub(super) plc: RawPlc,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlatform {
    mass: Spanned<f64>,
    com: Spanned<Vec<f64>>,
    inertia: Spanned<RawInertia>,
    size: Spanned<Vec<f64>>,
    #[serde(default)]
    box_center: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    payload_options: Option<Spanned<Vec<f64>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawInertia {
    Named(String),
    Diagonal(Vec<f64>),
    Full(Vec<Vec<f64>>),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScalarOrList {
    Scalar(f64),
    List(Vec<f64>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCables {
    #[serde(default)]
    names: Option<Spanned<Vec<String>>>,
    frame_anchors: Spanned<Vec<Spanned<Vec<f64>>>>,
    platform_anchors: Spanned<Vec<Spanned<Vec<f64>>>>,
    #[serde(default)]
    stiffness: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    ea: Option<Spanned<ScalarOrList>>,
    damping: Spanned<ScalarOrList>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTension {
    min: Spanned<f64>,
    max: Spanned<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWinch {
    max_velocity: Spanned<f64>,
    max_acceleration: Spanned<f64>,
    max_jerk: Spanned<f64>,
    #[serde(default)]
    mass: Option<Spanned<f64>>,
    #[serde(default)]
    kp: Option<Spanned<f64>>,
    #[serde(default)]
    ki: Option<Spanned<f64>>,
    #[serde(default)]
    kd: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBox {
    min: Spanned<Vec<f64>>,
    max: Spanned<Vec<f64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlc {
    frame_anchors: Option<Spanned<String>>,
    platform_anchors: Option<Spanned<String>>,
    lengths: Option<Spanned<String>>,
    cable_angles: Option<Spanned<String>>,
    tcp_pose: Option<Spanned<String>>,
    commanded_lengths: Option<Spanned<String>>,
    cycle_counter: Option<Spanned<String>>,
    motion_enable: Option<Spanned<String>>,
    shadow_pose: Option<Spanned<String>>,
    shadow_lengths: Option<Spanned<String>>,
    shadow_tensions: Option<Spanned<String>>,
    shadow_cycle: Option<Spanned<String>>,
    writable: Option<Spanned<Vec<String>>>,
}

/// Default reflected mass of a winch (drum and motor inertia J/r²), kg.
pub const DEFAULT_WINCH_MASS: f64 = 0.2;
/// Default PID of the simulated winch drive (see `sim`), used when `[winch]` gives none:
/// with the default mass a 160 Hz position loop (√(kp/m) = 1000 rad/s), damping ratio
/// kd/(2√(kp·m)) = 1.5, integral time kp/ki = 0.1 s.
pub const DEFAULT_WINCH_KP: f64 = 2.0e5;
pub const DEFAULT_WINCH_KI: f64 = 2.0e6;
pub const DEFAULT_WINCH_KD: f64 = 600.0;

impl PlcSymbols {
    /// The names used by the GVL shipped in `assets/twincat/GVL_Shadow.TcGVL`.
    pub fn defaults() -> PlcSymbols {
        let shadow_pose = "GVL_Shadow.aShadowPose".to_string();
        let shadow_lengths = "GVL_Shadow.aShadowLengths".to_string();
        let shadow_tensions = "GVL_Shadow.aShadowTensions".to_string();
        let shadow_cycle = "GVL_Shadow.nShadowCycle".to_string();
        PlcSymbols {
            frame_anchors: "GVL_Shadow.aFrameAnchors".into(),
            platform_anchors: "GVL_Shadow.aPlatformAnchors".into(),
            lengths: "GVL_Shadow.aCableLengths".into(),
            cable_angles: "GVL_Shadow.aCableAngles".into(),
            tcp_pose: "GVL_Shadow.aTcpPose".into(),
            commanded_lengths: "GVL_Shadow.aCmdLengths".into(),
            cycle_counter: "GVL_Shadow.nCycle".into(),
            motion_enable: "GVL_Shadow.bMotionEnable".into(),
            writable: vec![
                shadow_pose.clone(),
                shadow_lengths.clone(),
                shadow_tensions.clone(),
                shadow_cycle.clone(),
            ],
            shadow_pose,
            shadow_lengths,
            shadow_tensions,
            shadow_cycle,
        }
    }
}

// ---------------------------------------------------------------------------------------

/// Parses and validates the text of a robot file; `file` is only used in messages.
pub fn parse_robot(text: &str, file: &str) -> Result<Robot, RobotFileError> {
    let ctx = Ctx { text, file };
    let raw: RawRobot = toml::from_str(text).map_err(|e| ctx.toml_error(&e))?;
    build(&ctx, raw)
}

pub(super) struct Ctx<'a> {
    text: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    pub(super) fn err(
        &self,
        span: Option<Range<usize>>,
        field: &str,
        message: impl Into<String>,
    ) -> RobotFileError {
        RobotFileError::Invalid {
            file: self.file.to_string(),
            line: span.map(|s| line_of(self.text, s.start)).unwrap_or(0),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// A section the robot needs and the file lacks.
    pub(super) fn missing(&self, section: &str, why: impl Into<String>) -> RobotFileError {
        RobotFileError::MissingSection {
            file: self.file.to_string(),
            section: section.to_string(),
            why: why.into(),
        }
    }

    /// Where table `table` is written (its header, or `table = {…}` at the top level).
    pub(super) fn table_span(&self, table: &str) -> Option<Range<usize>> {
        toml_location::table_span(self.text, table)
    }

    /// Turns a TOML/serde error into ours, with the line and the dotted field of its span.
    fn toml_error(&self, error: &toml::de::Error) -> RobotFileError {
        let Located {
            line,
            field,
            message,
        } = toml_location::locate(self.text, error);
        // A missing top-level table: its span is the whole document, so no line to give.
        if field == "platform" && message.starts_with("missing field `platform`") {
            return self.missing("platform", "every robot needs its mass, inertia and size");
        }
        let line = if !field.contains('.') && message.starts_with("missing field") {
            0
        } else {
            line
        };
        RobotFileError::Invalid {
            file: self.file.to_string(),
            line,
            field,
            message,
        }
    }
}

pub(super) fn span_of<T>(s: &Spanned<T>) -> Option<Range<usize>> {
    Some(s.span())
}

pub(super) fn finite(ctx: &Ctx, s: &Spanned<f64>, field: &str) -> Result<f64, RobotFileError> {
    let v = *s.get_ref();
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ctx.err(
            span_of(s),
            field,
            format!("must be a finite number, got {v}"),
        ))
    }
}

/// A finite coordinate (m) within ±[`MAX_COORDINATE`].
pub(super) fn coordinate(ctx: &Ctx, s: &Spanned<f64>, field: &str) -> Result<f64, RobotFileError> {
    let v = finite(ctx, s, field)?;
    if v.abs() <= MAX_COORDINATE {
        Ok(v)
    } else {
        Err(ctx.err(
            span_of(s),
            field,
            format!("must be within ±{MAX_COORDINATE} m, got {v}"),
        ))
    }
}

/// A positive number no larger than the cap of its unit ([`max_for`]).
pub(super) fn positive(
    ctx: &Ctx,
    s: &Spanned<f64>,
    field: &str,
    unit: &str,
) -> Result<f64, RobotFileError> {
    let v = finite(ctx, s, field)?;
    let max = max_for(unit);
    if v <= 0.0 {
        Err(ctx.err(
            span_of(s),
            field,
            format!("must be positive, got {v} {unit}"),
        ))
    } else if v > max {
        Err(ctx.err(
            span_of(s),
            field,
            format!(
                "must be at most {} {unit}, got {} {unit}",
                Short(max),
                Short(v)
            ),
        ))
    } else {
        Ok(v)
    }
}

/// A number within [lo, hi] (unit for the message).
fn within(
    ctx: &Ctx,
    s: &Spanned<f64>,
    field: &str,
    (lo, hi): (f64, f64),
    unit: &str,
) -> Result<f64, RobotFileError> {
    let v = finite(ctx, s, field)?;
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(ctx.err(
            span_of(s),
            field,
            format!(
                "must be between {} and {} {unit}, got {} {unit}",
                Short(lo),
                Short(hi),
                Short(v)
            ),
        ))
    }
}

/// Exactly `n` numbers (`what` names them in the message).
pub(super) fn numbers<'a>(
    ctx: &Ctx,
    s: &'a Spanned<Vec<f64>>,
    field: &str,
    n: usize,
    what: &str,
) -> Result<&'a [f64], RobotFileError> {
    let v = s.get_ref();
    if v.len() != n {
        return Err(ctx.err(
            span_of(s),
            field,
            format!("needs {n} numbers ({what}), got {}", v.len()),
        ));
    }
    Ok(v)
}

/// A point or vector (x, y, z) in m: three finite numbers within ±[`MAX_COORDINATE`].
pub(super) fn vec3(
    ctx: &Ctx,
    s: &Spanned<Vec<f64>>,
    field: &str,
) -> Result<Vector3<f64>, RobotFileError> {
    let v = numbers(ctx, s, field, 3, "x, y, z")?;
    for (k, x) in v.iter().enumerate() {
        let axis = ["x", "y", "z"][k];
        if !x.is_finite() {
            return Err(ctx.err(
                span_of(s),
                field,
                format!("component {axis} must be a finite number, got {x}"),
            ));
        }
        if x.abs() > MAX_COORDINATE {
            return Err(ctx.err(
                span_of(s),
                field,
                format!(
                    "component {axis} must be within ±{MAX_COORDINATE} m, got {}",
                    Short(*x)
                ),
            ));
        }
    }
    Ok(Vector3::new(v[0], v[1], v[2]))
}

/// A per-cable value given as one number for all cables or one per cable, each in [0, max].
fn per_cable(
    ctx: &Ctx,
    s: &Spanned<ScalarOrList>,
    field: &str,
    count: usize,
    max: f64,
) -> Result<Vec<f64>, RobotFileError> {
    let values = match s.get_ref() {
        ScalarOrList::Scalar(v) => vec![*v; count],
        ScalarOrList::List(list) => {
            if list.len() != count {
                return Err(ctx.err(
                    span_of(s),
                    field,
                    format!(
                        "gives {} values but the file has {count} cables",
                        list.len()
                    ),
                ));
            }
            list.clone()
        }
    };
    if let Some((k, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(ctx.err(
            span_of(s),
            field,
            format!("value for cable {} is not finite: {v}", k + 1),
        ));
    }
    if let Some((k, v)) = values.iter().enumerate().find(|(_, v)| **v > max) {
        return Err(ctx.err(
            span_of(s),
            field,
            format!(
                "value for cable {} must be at most {}, got {}",
                k + 1,
                Short(max),
                Short(*v)
            ),
        ));
    }
    Ok(values)
}

pub(super) fn aabb(ctx: &Ctx, raw: &RawBox, name: &str) -> Result<Aabb, RobotFileError> {
    let min = vec3(ctx, &raw.min, &format!("{name}.min"))?;
    let max = vec3(ctx, &raw.max, &format!("{name}.max"))?;
    if let Some(k) = (0..3).find(|&k| min[k] > max[k]) {
        return Err(ctx.err(
            span_of(&raw.max),
            &format!("{name}.max"),
            format!(
                "{} max {} is below min {}",
                ["x", "y", "z"][k],
                max[k],
                min[k]
            ),
        ));
    }
    Ok(Aabb { min, max })
}

/// Sections (or top-level keys) of the other kinds of robot must not be in a file: they
/// would be ignored silently.
pub(super) fn refuse_sections(
    ctx: &Ctx,
    kind: &str,
    present: &[(&str, bool)],
    hint: &str,
) -> Result<(), RobotFileError> {
    if let Some((section, _)) = present.iter().find(|(_, there)| *there) {
        let span = ctx.table_span(section);
        let shown = if span
            .as_ref()
            .is_some_and(|s| ctx.text[s.clone()].starts_with('['))
        {
            format!("[{section}]")
        } else {
            format!("`{section}`")
        };
        return Err(ctx.err(
            span,
            section,
            format!("a {kind} robot takes no {shown}: remove it ({hint})"),
        ));
    }
    Ok(())
}

fn build(ctx: &Ctx, raw: RawRobot) -> Result<Robot, RobotFileError> {
    let kind = match &raw.kind {
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
    };
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
    let Some(raw_dof) = &raw.dof else {
        return Err(ctx.err(None, "dof", "missing field `dof` (3 or 6)"));
    };
    let dof = match *raw_dof.get_ref() {
        3 => Dof::Three,
        6 => Dof::Six,
        other => {
            return Err(ctx.err(
                span_of(raw_dof),
                "dof",
                format!("must be 3 (translation only) or 6 (full pose), got {other}"),
            ));
        }
    };
    let missing = |section: &str| ctx.missing(section, "a cable robot needs it");
    let raw_cables = raw.cables.as_ref().ok_or_else(|| missing("cables"))?;
    let raw_tension = raw.tension.as_ref().ok_or_else(|| missing("tension"))?;
    let raw_winch = raw.winch.as_ref().ok_or_else(|| missing("winch"))?;
    let raw_workspace = raw.workspace.as_ref().ok_or_else(|| missing("workspace"))?;

    // --- platform
    let platform = build_platform(ctx, &raw.platform)?;

    // --- cables
    let cables = build_cables(ctx, raw_cables, dof)?;

    // --- tension bounds
    let tension_range = (0.0, max_for("N"));
    let tmin = finite(ctx, &raw_tension.min, "tension.min")?;
    if tmin < 0.0 {
        return Err(ctx.err(
            span_of(&raw_tension.min),
            "tension.min",
            format!("cables cannot push: must be ≥ 0 N, got {tmin}"),
        ));
    }
    let tmin = within(ctx, &raw_tension.min, "tension.min", tension_range, "N")?;
    let tmax = within(ctx, &raw_tension.max, "tension.max", tension_range, "N")?;
    if tmax <= tmin {
        return Err(ctx.err(
            span_of(&raw_tension.max),
            "tension.max",
            format!("must exceed tension.min ({tmin} N), got {tmax} N"),
        ));
    }

    // --- winch
    let winch = build_winch(ctx, raw_winch, "winch")?;
    // --- boxes and home
    let workspace = aabb(ctx, raw_workspace, "workspace")?;
    let frame = match &raw.frame {
        Some(f) => {
            let frame = aabb(ctx, f, "frame")?;
            anchors_in_frame(ctx, raw_cables, &cables, &frame)?;
            frame
        }
        None => {
            let mut min = cables[0].frame_anchor;
            let mut max = min;
            for c in &cables {
                min = min.inf(&c.frame_anchor);
                max = max.sup(&c.frame_anchor);
            }
            Aabb {
                min: min.inf(&workspace.min),
                max: max.sup(&workspace.max),
            }
        }
    };
    let home = match &raw.home {
        Some(h) => home_pose(ctx, h)?,
        None => {
            let c = workspace.center();
            [c.x, c.y, c.z, 0.0, 0.0, 0.0]
        }
    };

    let plc = build_plc(ctx, raw.plc)?;

    let robot = Robot {
        mechanism: super::Mechanism::Cables,
        name: raw.name,
        description: raw.description,
        source: raw.source,
        path: None,
        dof,
        cables,
        platform,
        tension: TensionBounds {
            min: tmin,
            max: tmax,
        },
        winch,
        workspace,
        frame,
        home,
        plc,
    };
    cables_have_length(ctx, raw_cables, raw.home.as_ref(), &robot)?;
    Ok(robot)
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
                    Short(*x)
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
    let pose = crate::kinematics::Pose::from_array(robot.home);
    let lengths = crate::kinematics::InverseKinematics::at_actual_pose(robot, &pose).lengths();
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
                Short(*length),
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

pub(super) fn build_platform(ctx: &Ctx, p: &RawPlatform) -> Result<Platform, RobotFileError> {
    positive(ctx, &p.mass, "platform.mass", "kg")?;
    let mass = within(ctx, &p.mass, "platform.mass", MASS_RANGE, "kg")?;
    let com = vec3(ctx, &p.com, "platform.com")?;
    let size = vec3(ctx, &p.size, "platform.size")?;
    if let Some(k) = (0..3).find(|&k| size[k] <= 0.0) {
        return Err(ctx.err(
            span_of(&p.size),
            "platform.size",
            format!(
                "box edge {} must be positive, got {}",
                ["x", "y", "z"][k],
                size[k]
            ),
        ));
    }
    let box_center = match &p.box_center {
        Some(c) => vec3(ctx, c, "platform.box_center")?,
        None => com,
    };
    let field = "platform.inertia";
    let inertia = match p.inertia.get_ref() {
        RawInertia::Named(name) if name == "uniform_box" => {
            Platform::uniform_box_inertia(mass, &size)
        }
        RawInertia::Named(name) => {
            return Err(ctx.err(
                span_of(&p.inertia),
                field,
                format!(
                    "unknown inertia `{name}`: give \"uniform_box\", [ixx, iyy, izz] or a 3×3 matrix (kg·m²)"
                ),
            ));
        }
        RawInertia::Diagonal(d) => {
            if d.len() != 3 {
                return Err(ctx.err(
                    span_of(&p.inertia),
                    field,
                    format!(
                        "needs 3 principal moments [ixx, iyy, izz] (or a 3×3 matrix), got {} numbers",
                        d.len()
                    ),
                ));
            }
            Matrix3::from_diagonal(&Vector3::new(d[0], d[1], d[2]))
        }
        RawInertia::Full(m) => {
            if m.len() != 3 || m.iter().any(|row| row.len() != 3) {
                return Err(ctx.err(
                    span_of(&p.inertia),
                    field,
                    "a full inertia matrix needs 3 rows of 3 numbers (kg·m²)",
                ));
            }
            Matrix3::from_fn(|r, c| m[r][c])
        }
    };
    check_inertia(ctx, &p.inertia, &inertia)?;
    let payload_options = match &p.payload_options {
        Some(list) => {
            if let Some(v) = list
                .get_ref()
                .iter()
                .find(|v| !(v.is_finite() && (MASS_RANGE.0..=MASS_RANGE.1).contains(*v)))
            {
                return Err(ctx.err(
                    span_of(list),
                    "platform.payload_options",
                    format!(
                        "every option must be a mass between {} and {} kg, got {}",
                        Short(MASS_RANGE.0),
                        Short(MASS_RANGE.1),
                        Short(*v)
                    ),
                ));
            }
            list.get_ref().clone()
        }
        None => Vec::new(),
    };
    let platform = Platform {
        mass,
        com,
        inertia,
        size,
        box_center,
        payload_options,
    };
    Ok(platform)
}

pub(super) fn build_winch(ctx: &Ctx, w: &RawWinch, section: &str) -> Result<Winch, RobotFileError> {
    let name = |field: &str| format!("{section}.{field}");
    let gain =
        |s: &Option<Spanned<f64>>, name: &str, default: f64| -> Result<f64, RobotFileError> {
            match s {
                Some(v) => {
                    let x = finite(ctx, v, name)?;
                    if x < 0.0 {
                        Err(ctx.err(span_of(v), name, format!("must be ≥ 0, got {x}")))
                    } else {
                        within(ctx, v, name, (0.0, max_for("gain")), "(SI)")
                    }
                }
                None => Ok(default),
            }
        };
    Ok(Winch {
        max_velocity: positive(ctx, &w.max_velocity, &name("max_velocity"), "m/s")?,
        max_acceleration: positive(ctx, &w.max_acceleration, &name("max_acceleration"), "m/s²")?,
        max_jerk: positive(ctx, &w.max_jerk, &name("max_jerk"), "m/s³")?,
        mass: match &w.mass {
            Some(m) => positive(ctx, m, &name("mass"), "kg")?,
            None => DEFAULT_WINCH_MASS,
        },
        kp: gain(&w.kp, &name("kp"), DEFAULT_WINCH_KP)?,
        ki: gain(&w.ki, &name("ki"), DEFAULT_WINCH_KI)?,
        kd: gain(&w.kd, &name("kd"), DEFAULT_WINCH_KD)?,
    })
}

fn check_inertia(
    ctx: &Ctx,
    s: &Spanned<RawInertia>,
    inertia: &Matrix3<f64>,
) -> Result<(), RobotFileError> {
    let field = "platform.inertia";
    if inertia.iter().any(|x| !x.is_finite()) {
        return Err(ctx.err(
            span_of(s),
            field,
            "all entries must be finite numbers (kg·m²)",
        ));
    }
    let (lo, hi) = INERTIA_RANGE;
    if inertia.amax() > hi {
        return Err(ctx.err(
            span_of(s),
            field,
            format!(
                "entries must be at most {} kg·m², got {}",
                Short(hi),
                Short(inertia.amax())
            ),
        ));
    }
    if (inertia - inertia.transpose()).abs().max() > 1e-12 * inertia.abs().max().max(1.0) {
        return Err(ctx.err(span_of(s), field, "the inertia matrix must be symmetric"));
    }
    let eig = inertia.symmetric_eigenvalues();
    if eig.iter().any(|&e| e <= 0.0) {
        return Err(ctx.err(
            span_of(s),
            field,
            format!(
                "must be positive definite (principal moments {:.3e}, {:.3e}, {:.3e} kg·m²)",
                eig[0], eig[1], eig[2]
            ),
        ));
    }
    if let Some(e) = eig.iter().find(|&&e| e < lo) {
        return Err(ctx.err(
            span_of(s),
            field,
            format!(
                "principal moment {} kg·m² is below {} kg·m²: not a physical body",
                Short(*e),
                Short(lo)
            ),
        ));
    }
    // A rigid body's principal moments obey the triangle inequality.
    let (a, b, c) = (eig[0], eig[1], eig[2]);
    let slack = 1e-12 * (a + b + c).max(1.0);
    if a > b + c + slack || b > a + c + slack || c > a + b + slack {
        return Err(ctx.err(
            span_of(s),
            field,
            format!("principal moments {a:.3e}, {b:.3e}, {c:.3e} kg·m² violate the triangle inequality: no rigid body has them"),
        ));
    }
    Ok(())
}

fn build_cables(ctx: &Ctx, raw: &RawCables, dof: Dof) -> Result<Vec<Cable>, RobotFileError> {
    let frame = raw.frame_anchors.get_ref();
    let platform = raw.platform_anchors.get_ref();
    let count = frame.len();
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
    let names = match &raw.names {
        Some(n) => {
            if n.get_ref().len() != count {
                return Err(ctx.err(
                    span_of(n),
                    "cables.names",
                    format!(
                        "gives {} names but the file has {count} cables",
                        n.get_ref().len()
                    ),
                ));
            }
            n.get_ref().clone()
        }
        None => (1..=count).map(|k| format!("cable{k}")).collect(),
    };
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
    let damping = per_cable(ctx, &raw.damping, "cables.damping", count, max_for("N·s/m"))?;
    if let Some((k, v)) = damping.iter().enumerate().find(|(_, v)| **v < 0.0) {
        return Err(ctx.err(
            span_of(&raw.damping),
            "cables.damping",
            format!("cable {} ({}) must be ≥ 0 N·s/m, got {v}", k + 1, names[k]),
        ));
    }

    let mut cables = Vec::with_capacity(count);
    for k in 0..count {
        let a = vec3(ctx, &frame[k], &format!("cables.frame_anchors[{k}]"))?;
        let b = vec3(ctx, &platform[k], &format!("cables.platform_anchors[{k}]"))?;
        // Pairwise, but only a few flops a pair: 2000 cables take milliseconds.
        let twin = cables.iter().position(|other: &Cable| {
            (other.frame_anchor - a).norm_squared() < 1e-18
                && (other.platform_anchor - b).norm_squared() < 1e-18
        });
        if let Some(j) = twin {
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
        });
    }
    Ok(cables)
}

/// A PLC symbol name: not empty, no blanks or control characters, at most 255 bytes.
fn symbol(ctx: &Ctx, s: &Spanned<String>, field: &str) -> Result<String, RobotFileError> {
    let name = s.get_ref();
    let problem = if name.trim().is_empty() {
        Some("is empty: give the symbol's name (e.g. \"GVL_Shadow.aCmdLengths\")")
    } else if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("holds blanks or control characters: not a PLC symbol name")
    } else if name.len() > 255 {
        Some("is longer than 255 bytes: not a PLC symbol name")
    } else {
        None
    };
    match problem {
        Some(p) => Err(ctx.err(span_of(s), field, format!("symbol name {name:?} {p}"))),
        None => Ok(name.clone()),
    }
}

pub(super) fn build_plc(ctx: &Ctx, raw: RawPlc) -> Result<PlcSymbols, RobotFileError> {
    let d = PlcSymbols::defaults();
    let writable = match raw.writable {
        Some(w) => {
            for name in w.get_ref() {
                if name.trim().is_empty()
                    || name.chars().any(|c| c.is_whitespace() || c.is_control())
                {
                    return Err(ctx.err(
                        span_of(&w),
                        "plc.writable",
                        format!("empty or blank symbol name {name:?}"),
                    ));
                }
            }
            w.into_inner()
        }
        None => d.writable,
    };
    let pick = |v: Option<Spanned<String>>, key: &str, default: String| match v {
        Some(s) => symbol(ctx, &s, &format!("plc.{key}")),
        None => Ok(default),
    };
    Ok(PlcSymbols {
        frame_anchors: pick(raw.frame_anchors, "frame_anchors", d.frame_anchors)?,
        platform_anchors: pick(raw.platform_anchors, "platform_anchors", d.platform_anchors)?,
        lengths: pick(raw.lengths, "lengths", d.lengths)?,
        cable_angles: pick(raw.cable_angles, "cable_angles", d.cable_angles)?,
        tcp_pose: pick(raw.tcp_pose, "tcp_pose", d.tcp_pose)?,
        commanded_lengths: pick(
            raw.commanded_lengths,
            "commanded_lengths",
            d.commanded_lengths,
        )?,
        cycle_counter: pick(raw.cycle_counter, "cycle_counter", d.cycle_counter)?,
        motion_enable: pick(raw.motion_enable, "motion_enable", d.motion_enable)?,
        shadow_pose: pick(raw.shadow_pose, "shadow_pose", d.shadow_pose)?,
        shadow_lengths: pick(raw.shadow_lengths, "shadow_lengths", d.shadow_lengths)?,
        shadow_tensions: pick(raw.shadow_tensions, "shadow_tensions", d.shadow_tensions)?,
        shadow_cycle: pick(raw.shadow_cycle, "shadow_cycle", d.shadow_cycle)?,
        writable,
    })
}

/// A number as people write it in a message: plain from 0.001 to 1e5 (9.607, 0.001, 250),
/// elsewhere the shorter of plain and scientific notation (1e-6, 1e300); never 9.607e0.
pub(crate) struct Short(pub(crate) f64);

impl std::fmt::Display for Short {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (plain, exp) = (format!("{}", self.0), format!("{:e}", self.0));
        let ordinary = (1e-3..1e5).contains(&self.0.abs());
        f.write_str(if !ordinary && exp.len() < plain.len() {
            &exp
        } else {
            &plain
        })
    }
}

#[cfg(test)]
mod short_tests {
    use super::Short;

    /// Issue 15: numbers in robot-file messages as people write them, never `9.607e0`.
    #[test]
    fn numbers_in_messages_take_the_shorter_notation() {
        let s = |x: f64| Short(x).to_string();
        assert_eq!(s(9.607), "9.607");
        assert_eq!(s(-9.607), "-9.607");
        assert_eq!(s(0.001), "0.001");
        assert_eq!(s(1e-6), "1e-6");
        assert_eq!(s(1e6), "1e6");
        assert_eq!(s(1e300), "1e300");
        assert_eq!(s(250.0), "250");
        assert_eq!(s(0.0), "0");
    }
}
