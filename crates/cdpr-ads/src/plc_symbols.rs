//! The names of the controller's symbols: the robot file's `[plc]` section, which the core
//! keeps uninterpreted ([`PlcSection`]) and this crate parses and validates.
//!
//! Errors are the core's [`RobotFileError`]s, located as every robot-file error is
//! (`file:line: plc.<key>: …`): the section is read again from the file's text, so that a
//! wrong type, an unknown key or a bad name gets the line it is written on.

use cdpr_core::robot::{PlcSection, Robot, RobotFileError};
use cdpr_core::toml_location::{self, Located, line_of};
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// The interference flag's name in the shipped GVL.
pub const INTERFERENCE_DEFAULT: &str = "GVL_Shadow.bInterference";

/// ADS symbol names the shadow reads and writes (controller units: mm, degrees).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlcSymbols {
    /// Frame anchors a_i, ARRAY[1..m, 1..3] OF LREAL, mm.
    pub frame_anchors: String,
    /// Platform anchors b_i, ARRAY[1..m, 1..3] OF LREAL, mm.
    pub platform_anchors: String,
    /// Current cable lengths, ARRAY[1..m] OF LREAL, mm.
    pub lengths: String,
    /// Cable angles θz, θx per cable, ARRAY[1..m, 1..2] OF LREAL, degrees.
    pub cable_angles: String,
    /// TCP pose x, y, z, roll, pitch, yaw, ARRAY[1..6] OF LREAL, mm and degrees.
    pub tcp_pose: String,
    /// Commanded cable lengths (motor set points), ARRAY[1..m] OF LREAL, mm.
    pub commanded_lengths: String,
    /// PLC cycle counter, UDINT.
    pub cycle_counter: String,
    /// Motion enable flag, BOOL.
    pub motion_enable: String,
    /// Shadow's platform pose written back, ARRAY[1..6] OF LREAL, mm and degrees.
    pub shadow_pose: String,
    /// Shadow's cable lengths written back, ARRAY[1..m] OF LREAL, mm.
    pub shadow_lengths: String,
    /// Shadow's cable tensions written back, ARRAY[1..m] OF LREAL, N.
    pub shadow_tensions: String,
    /// Shadow's cycle counter echo, UDINT (lets the PLC measure the reaction time).
    pub shadow_cycle: String,
    /// Shadow's interference flag, BOOL: true while cables or the platform come closer than
    /// the clearance to each other or an obstacle. Written only when named (`[plc]
    /// interference`, on `writable` like every output); [`INTERFERENCE_DEFAULT`] in the GVL.
    pub interference: Option<String>,
    /// The only symbols the shadow may ever write (resolved once, when the link is made).
    pub writable: Vec<String>,
    /// Optional: swivel-pulley radii, ARRAY[1..m] OF LREAL, mm (0: the cable leaves at its
    /// frame anchor). Read with the geometry when the PLC has it (and `pulley_axes`).
    pub pulley_radii: String,
    /// Optional: unit swivel axes per cable, ARRAY[1..m, 1..3] OF LREAL, world frame.
    pub pulley_axes: String,
    /// Whether the shadow asks the PLC for `pulley_radii`/`pulley_axes` at all: when the
    /// robot has pulleys or its `[plc]` names either symbol, and when there is no robot file
    /// ([`PlcSymbols::asking_for_everything`]). A PLC that is silent on unknown names (pyads'
    /// test server) costs a timeout per question, so a point-anchor robot does not ask.
    pub read_pulleys: bool,
    /// Further symbols read in every sample beside the inputs, never written (a test suite's
    /// conditions on the PLC's own state, `GVL.bDone`): any elementary scalar, an element
    /// of an array named with its index. Not from the robot file: empty unless a caller asks.
    pub watched: Vec<String>,
    /// The drives' symbols, each optional (a robot with drives only).
    pub drives: DriveSymbols,
}

/// What a controller's torque values are in (`[plc] actual_torque_unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TorqueUnit {
    /// N·m, motor side (the default).
    #[default]
    NewtonMetre,
    /// % of the drive's rated torque.
    Percent,
    /// ‰ of the drive's rated torque (CiA 402 "torque actual value", object 0x6077).
    Permille,
}

impl TorqueUnit {
    /// The spellings `actual_torque_unit` takes.
    pub const NAMES: &str = "\"N·m\" (or \"Nm\"), \"percent\", \"permille\"";

    fn parse(s: &str) -> Option<TorqueUnit> {
        match s {
            "N·m" | "Nm" | "N*m" | "N.m" => Some(TorqueUnit::NewtonMetre),
            "percent" | "%" => Some(TorqueUnit::Percent),
            "permille" | "‰" => Some(TorqueUnit::Permille),
            _ => None,
        }
    }

    /// A value in this unit as N·m, for a drive rated `rated` N·m.
    pub fn to_newton_metres(self, value: f64, rated: f64) -> f64 {
        match self {
            TorqueUnit::NewtonMetre => value,
            TorqueUnit::Percent => value / 100.0 * rated,
            TorqueUnit::Permille => value / 1000.0 * rated,
        }
    }
}

/// How a controller gives its drives' actual positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PositionUnit {
    /// Cable lengths (payouts), mm (`[plc] actual_lengths`).
    Millimetres,
    /// Motor positions, encoder increments counted from zero payout (`[plc]
    /// actual_motor_positions`).
    Increments,
}

/// The drives' symbols: read to compare the shadow with the real drives, written to hand the
/// controller the shadow's torques, a feed-forward, or to stand in for the drives. Each is an
/// ARRAY[1..m] of numbers; every symbol written must be on `writable` too.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct DriveSymbols {
    /// Read every cycle: the drives' actual torques, in `actual_torque_unit`.
    pub actual_torques: Option<String>,
    pub actual_torque_unit: TorqueUnit,
    /// Read every cycle: the drives' actual positions, as cable lengths (mm) or motor
    /// positions (increments).
    pub actual_positions: Option<(String, PositionUnit)>,
    /// Written every cycle: the shadow's motor torques, N·m.
    pub shadow_torques: Option<String>,
    /// Written every cycle: the torque each drive will need one PLC cycle ahead, N·m (a
    /// torque feed-forward).
    pub feedforward_torques: Option<String>,
    /// Written every cycle, standing in for the drives: each axis's actual position in
    /// encoder increments (what an NC axis's encoder input is linked to).
    pub axis_positions: Option<String>,
    /// Written every cycle, standing in for the drives: each axis's actual torque — an
    /// integer array in ‰ of rated (CiA 402's unit), a REAL/LREAL array in N·m.
    pub axis_torques: Option<String>,
    /// Per cable, from the robot's drives: rated torque (N·m) and payout per encoder
    /// increment (m); empty for a robot without drives.
    pub scaling: Vec<DriveScale>,
}

/// The drive symbols a virtual PLC serves for a robot with drives: the names its `[plc]`
/// gives, the GVL's defaults for those it leaves out, and the PLC's own monitor of the axes
/// the shadow stands in for (beside the cycle counter, in its GVL).
#[derive(Debug, Clone, PartialEq)]
pub struct ServedDrives {
    pub actual_torques: String,
    pub actual_torque_unit: TorqueUnit,
    pub actual_positions: String,
    pub actual_position_unit: PositionUnit,
    pub shadow_torques: String,
    pub feedforward_torques: String,
    pub axis_positions: String,
    pub axis_torques: String,
    /// The emulated axes' following errors, mm (set point − actual position).
    pub following_errors: String,
    /// Whether an emulated axis is in error (BOOL), and the NC error code (UDINT, 0x4550:
    /// following-error monitoring, as TwinCAT's NC reports it).
    pub axis_error: String,
    pub axis_error_id: String,
}

impl PlcSymbols {
    /// The drive symbols a virtual PLC serves (see [`ServedDrives`]).
    pub fn served_drives(&self) -> ServedDrives {
        let d = &self.drives;
        let gvl = |name: &str| match self.cycle_counter.rsplit_once('.') {
            Some((gvl, _)) => format!("{gvl}.{name}"),
            None => name.to_string(),
        };
        let or = |named: &Option<String>, default: &str| {
            named
                .clone()
                .unwrap_or_else(|| format!("GVL_Shadow.{default}"))
        };
        let (actual_positions, actual_position_unit) = d.actual_positions.clone().unwrap_or((
            "GVL_Shadow.aActualLengths".to_string(),
            PositionUnit::Millimetres,
        ));
        ServedDrives {
            actual_torques: or(&d.actual_torques, "aActualTorques"),
            actual_torque_unit: d.actual_torque_unit,
            actual_positions,
            actual_position_unit,
            shadow_torques: or(&d.shadow_torques, "aShadowTorques"),
            feedforward_torques: or(&d.feedforward_torques, "aFeedforwardTorques"),
            axis_positions: or(&d.axis_positions, "aAxisPositions"),
            axis_torques: or(&d.axis_torques, "aAxisTorques"),
            following_errors: gvl("aAxisFollowingErrors"),
            axis_error: gvl("bAxisError"),
            axis_error_id: gvl("nAxisErrorId"),
        }
    }
}

/// One drive's numbers the link converts with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DriveScale {
    pub rated_torque: f64,
    pub metres_per_increment: f64,
}

impl DriveSymbols {
    /// Whether any drive symbol is named.
    pub fn any(&self) -> bool {
        self.read().next().is_some() || self.written().next().is_some()
    }

    /// The symbols read, in the order they are read.
    pub fn read(&self) -> impl Iterator<Item = &String> {
        self.actual_torques
            .iter()
            .chain(self.actual_positions.iter().map(|(name, _)| name))
    }

    /// The symbols written, in the order they go out.
    pub fn written(&self) -> impl Iterator<Item = &String> {
        self.shadow_torques
            .iter()
            .chain(&self.feedforward_torques)
            .chain(&self.axis_positions)
            .chain(&self.axis_torques)
    }
}

/// The `[plc]` keys as written. `Spanned` keeps the byte range so that errors can give a line.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPlc {
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
    interference: Option<Spanned<String>>,
    writable: Option<Spanned<Vec<String>>>,
    pulley_radii: Option<Spanned<String>>,
    pulley_axes: Option<Spanned<String>>,
    actual_torques: Option<Spanned<String>>,
    actual_torque_unit: Option<Spanned<String>>,
    actual_lengths: Option<Spanned<String>>,
    actual_motor_positions: Option<Spanned<String>>,
    shadow_torques: Option<Spanned<String>>,
    feedforward_torques: Option<Spanned<String>>,
    axis_positions: Option<Spanned<String>>,
    axis_torques: Option<Spanned<String>>,
}

/// The robot file read for its `[plc]` section alone (every other key is the core's).
#[derive(Deserialize)]
struct PlcOnly {
    #[serde(default)]
    plc: RawPlc,
}

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
            pulley_radii: "GVL_Shadow.aPulleyRadii".into(),
            pulley_axes: "GVL_Shadow.aPulleyAxes".into(),
            read_pulleys: false,
            interference: None,
            watched: Vec::new(),
            drives: DriveSymbols::default(),
        }
    }

    /// The defaults, asking the PLC for the optional pulleys too: the symbols of a shadow
    /// started without a robot file, which takes the whole geometry from the PLC.
    pub fn asking_for_everything() -> PlcSymbols {
        PlcSymbols {
            read_pulleys: true,
            ..PlcSymbols::defaults()
        }
    }

    /// The diagnostic symbol a PLC publishes its measured reaction time in (the virtual PLC
    /// does; the shadow reads it when the PLC has it): beside the cycle counter, in the same
    /// GVL (`GVL_Shadow.nReactionCycles` by default).
    pub fn reaction(&self) -> String {
        match self.cycle_counter.rsplit_once('.') {
            Some((gvl, _)) => format!("{gvl}.nReactionCycles"),
            None => "nReactionCycles".to_string(),
        }
    }

    /// The symbols `robot`'s file names (its `[plc]` section), the defaults for those it
    /// leaves out; all defaults for a robot without the section.
    /// The pulleys are asked for when the robot has any (or the section names them).
    /// The drive symbols take the robot's drives' scaling; named on a robot without drives,
    /// the first is refused where it is written.
    pub fn of(robot: &Robot) -> Result<PlcSymbols, RobotFileError> {
        let mut symbols = PlcSymbols::from_section(&robot.plc)?;
        symbols.read_pulleys |= robot.cables.iter().any(|c| c.pulley.is_some());
        if robot.has_drives() {
            symbols.drives.scaling = robot
                .drives
                .iter()
                .map(|d| DriveScale {
                    rated_torque: d.rated_torque,
                    metres_per_increment: d.payout_at(1.0),
                })
                .collect();
        } else if symbols.drives.any() {
            let text = &robot.plc.text;
            let ctx = Ctx {
                text,
                file: &robot.plc.file,
            };
            let raw = toml::from_str::<PlcOnly>(text)
                .map_err(|e| ctx.toml_error(&e))?
                .plc;
            let first = [
                (raw.actual_torques, "actual_torques"),
                (raw.actual_lengths, "actual_lengths"),
                (raw.actual_motor_positions, "actual_motor_positions"),
                (raw.shadow_torques, "shadow_torques"),
                (raw.feedforward_torques, "feedforward_torques"),
                (raw.axis_positions, "axis_positions"),
                (raw.axis_torques, "axis_torques"),
            ]
            .into_iter()
            .filter_map(|(v, key)| v.map(|v| (v.span().start, key)))
            .min();
            if let Some((at, key)) = first {
                return Err(RobotFileError::Invalid {
                    file: robot.plc.file.clone(),
                    line: line_of(text, at),
                    field: format!("plc.{key}"),
                    message: "is a drive's symbol, and the robot has no drives: describe them \
                              in [winch] (drum_radius, gear_ratio, rotor_inertia, torque_limit, \
                              rated_torque; docs/src/drives.md)"
                        .into(),
                });
            }
        }
        Ok(symbols)
    }

    /// Parses and validates a `[plc]` section: every name not empty, without blanks or
    /// control characters, at most 255 bytes; no unknown key. Errors name the file, the line
    /// and the key.
    pub fn from_section(section: &PlcSection) -> Result<PlcSymbols, RobotFileError> {
        if section.table.is_none() {
            return Ok(PlcSymbols::defaults());
        }
        let ctx = Ctx {
            text: &section.text,
            file: &section.file,
        };
        let raw = toml::from_str::<PlcOnly>(ctx.text)
            .map_err(|e| ctx.toml_error(&e))?
            .plc;
        build(&ctx, raw)
    }
}

/// Where the errors point: the file's name and text.
struct Ctx<'a> {
    text: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    fn err<T>(&self, at: &Spanned<T>, field: &str, message: String) -> RobotFileError {
        RobotFileError::Invalid {
            file: self.file.to_string(),
            line: line_of(self.text, at.span().start),
            field: field.to_string(),
            message,
        }
    }

    /// A TOML/serde error (a wrong type, an unknown key) with the line and the dotted field
    /// of its span.
    fn toml_error(&self, error: &toml::de::Error) -> RobotFileError {
        let Located {
            line,
            field,
            message,
        } = toml_location::locate(self.text, error);
        RobotFileError::Invalid {
            file: self.file.to_string(),
            line,
            field,
            message,
        }
    }
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
        Some(p) => Err(ctx.err(s, field, format!("symbol name {name:?} {p}"))),
        None => Ok(name.clone()),
    }
}

fn build(ctx: &Ctx, raw: RawPlc) -> Result<PlcSymbols, RobotFileError> {
    let d = PlcSymbols::defaults();
    let writable = match raw.writable {
        Some(w) => {
            for name in w.get_ref() {
                if name.trim().is_empty()
                    || name.chars().any(|c| c.is_whitespace() || c.is_control())
                {
                    return Err(ctx.err(
                        &w,
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
        interference: match raw.interference {
            Some(s) => Some(symbol(ctx, &s, "plc.interference")?),
            None => None,
        },
        writable,
        read_pulleys: raw.pulley_radii.is_some() || raw.pulley_axes.is_some(),
        pulley_radii: pick(raw.pulley_radii, "pulley_radii", d.pulley_radii)?,
        pulley_axes: pick(raw.pulley_axes, "pulley_axes", d.pulley_axes)?,
        watched: Vec::new(),
        drives: DriveSymbols {
            actual_torque_unit: match &raw.actual_torque_unit {
                Some(u) => TorqueUnit::parse(u.get_ref()).ok_or_else(|| {
                    ctx.err(
                        u,
                        "plc.actual_torque_unit",
                        format!(
                            "unknown unit {:?}: one of {}",
                            u.get_ref(),
                            TorqueUnit::NAMES
                        ),
                    )
                })?,
                None => TorqueUnit::default(),
            },
            actual_torques: optional(ctx, raw.actual_torques, "actual_torques")?,
            actual_positions: match (raw.actual_lengths, raw.actual_motor_positions) {
                (Some(_), Some(both)) => {
                    return Err(ctx.err(
                        &both,
                        "plc.actual_motor_positions",
                        "the drives' positions are read once: give actual_lengths (mm) or \
                         actual_motor_positions (encoder increments), not both"
                            .into(),
                    ));
                }
                (Some(l), None) => Some((
                    symbol(ctx, &l, "plc.actual_lengths")?,
                    PositionUnit::Millimetres,
                )),
                (None, Some(p)) => Some((
                    symbol(ctx, &p, "plc.actual_motor_positions")?,
                    PositionUnit::Increments,
                )),
                (None, None) => None,
            },
            shadow_torques: optional(ctx, raw.shadow_torques, "shadow_torques")?,
            feedforward_torques: optional(ctx, raw.feedforward_torques, "feedforward_torques")?,
            axis_positions: optional(ctx, raw.axis_positions, "axis_positions")?,
            axis_torques: optional(ctx, raw.axis_torques, "axis_torques")?,
            scaling: Vec::new(),
        },
    })
}

/// An optional symbol name, checked as every name is.
fn optional(
    ctx: &Ctx,
    v: Option<Spanned<String>>,
    key: &str,
) -> Result<Option<String>, RobotFileError> {
    v.map(|s| symbol(ctx, &s, &format!("plc.{key}")))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdpr_core::fixtures::{robot_text, uvigo8};
    use cdpr_core::robot::parse_robot;

    const GOOD: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../robots/silva4.toml"
    ));

    /// The symbols of `text`'s `[plc]`, read as `cdpr check` reads them.
    fn symbols(text: &str) -> Result<PlcSymbols, RobotFileError> {
        PlcSymbols::of(&parse_robot(text, "bad.toml").expect("the core takes any [plc]"))
    }

    fn line_of(text: &str, needle: &str) -> usize {
        text.lines()
            .position(|l| l.contains(needle))
            .expect("needle in text")
            + 1
    }

    fn assert_names(err: &RobotFileError, field: &str, line: usize, words: &str) {
        let msg = err.to_string();
        assert_eq!(err.field(), Some(field), "field in: {msg}");
        assert!(
            msg.starts_with(&format!("bad.toml:{line}: {field}: ")),
            "expected line {line} in: {msg}"
        );
        assert!(msg.contains(words), "expected `{words}` in: {msg}");
    }

    #[test]
    fn empty_plc_symbols_are_refused() {
        let text = format!("{GOOD}\n[plc]\ntcp_pose = \"GVL.a\"\ncommanded_lengths = \"\"\n");
        assert_names(
            &symbols(&text).expect_err("empty"),
            "plc.commanded_lengths",
            line_of(&text, "commanded_lengths = \"\""),
            "symbol name \"\" is empty",
        );
        let text = format!("{GOOD}\n[plc]\nlengths = \"GVL a\"\n");
        assert_names(
            &symbols(&text).expect_err("blank"),
            "plc.lengths",
            line_of(&text, "GVL a"),
            "blanks",
        );
        let long = "G".repeat(256);
        let text = format!("{GOOD}\n[plc]\nshadow_cycle = \"{long}\"\n");
        assert_names(
            &symbols(&text).expect_err("long"),
            "plc.shadow_cycle",
            line_of(&text, &long),
            "longer than 255 bytes",
        );
        let text = format!("{GOOD}\n[plc]\nwritable = [\"GVL.a\", \" \"]\n");
        assert_names(
            &symbols(&text).expect_err("blank writable"),
            "plc.writable",
            line_of(&text, "writable"),
            "empty or blank symbol name \" \"",
        );
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_refused_where_they_are_written() {
        let text = format!("{GOOD}\n[plc]\nlengths = \"GVL.a\"\ncomanded_lengths = \"GVL.b\"\n");
        assert_names(
            &symbols(&text).expect_err("typo"),
            "plc.comanded_lengths",
            line_of(&text, "comanded_lengths"),
            "unknown field `comanded_lengths`",
        );
        let text = format!("{GOOD}\n[plc]\n\ncycle_counter = 3\n");
        assert_names(
            &symbols(&text).expect_err("a number"),
            "plc.cycle_counter",
            line_of(&text, "cycle_counter"),
            "invalid type: integer `3`, expected a string",
        );
        // An inline table is the same section.
        let text = GOOD.replacen("name = ", "plc = { lengths = \"\" }\nname = ", 1);
        assert_names(
            &symbols(&text).expect_err("inline"),
            "plc.lengths",
            line_of(&text, "plc = {"),
            "is empty",
        );
    }

    #[test]
    fn drive_symbols_take_their_units_and_are_refused_where_they_cannot_be() {
        let drives = cdpr_core::fixtures::robot_text("uvigo8-drives");
        let with = |lines: &str| drives.replacen("[plc]", &format!("[plc]\n{lines}"), 1);
        // The built-in names the drives' actual values and the shadow's torques.
        let s = symbols(drives).expect("uvigo8-drives");
        assert_eq!(
            s.drives.actual_torques.as_deref(),
            Some("GVL_Shadow.aActualTorques")
        );
        assert_eq!(
            s.drives.actual_positions,
            Some((
                "GVL_Shadow.aActualLengths".to_string(),
                PositionUnit::Millimetres
            ))
        );
        assert_eq!(s.drives.actual_torque_unit, TorqueUnit::NewtonMetre);
        // The scaling from the drives: 0.5 N·m rated; an increment of a 2²⁰ encoder on
        // ρ = √(0.025² + (0.003/2π)²)/5 m/rad is 2πρ/2²⁰ m (by hand).
        let rho = (0.025f64.powi(2) + (0.003 / std::f64::consts::TAU).powi(2)).sqrt() / 5.0;
        for d in &s.drives.scaling {
            assert_eq!(d.rated_torque, 0.5);
            let by_hand = std::f64::consts::TAU * rho / 1_048_576.0;
            assert!((d.metres_per_increment - by_hand).abs() < 1e-18);
        }
        // Units: percent converts with the rated torque, a typo is refused on its line.
        assert_eq!(TorqueUnit::Percent.to_newton_metres(40.0, 0.5), 0.2);
        assert_eq!(TorqueUnit::Permille.to_newton_metres(-500.0, 0.5), -0.25);
        let text = with("actual_torque_unit = \"percent\"");
        assert_eq!(
            symbols(&text).expect("percent").drives.actual_torque_unit,
            TorqueUnit::Percent
        );
        let text = with("actual_torque_unit = \"Nm/A\"");
        assert_names(
            &symbols(&text).expect_err("unit"),
            "plc.actual_torque_unit",
            line_of(&text, "Nm/A"),
            "unknown unit \"Nm/A\": one of",
        );
        // Positions once: lengths or increments, not both.
        let text = with("actual_motor_positions = \"GVL.aPos\"");
        assert_names(
            &symbols(&text).expect_err("both"),
            "plc.actual_motor_positions",
            line_of(&text, "GVL.aPos"),
            "not both",
        );
        let text = with("actual_motor_positions = \"GVL.aPos\"")
            .replace("actual_lengths = \"GVL_Shadow.aActualLengths\"", "");
        assert_eq!(
            symbols(&text).expect("increments").drives.actual_positions,
            Some(("GVL.aPos".to_string(), PositionUnit::Increments))
        );
        // A drive's symbol on a robot without drives: refused where it is written.
        let text = format!("{GOOD}\n[plc]\nlengths = \"GVL.a\"\naxis_torques = \"GVL.t\"\n");
        assert_names(
            &symbols(&text).expect_err("no drives"),
            "plc.axis_torques",
            line_of(&text, "GVL.t"),
            "the robot has no drives",
        );
        let text = format!("{GOOD}\n[plc]\nshadow_torques = \" \"\n");
        assert!(symbols(&text).is_err());
    }

    #[test]
    fn reaction_symbol_sits_in_the_counters_gvl() {
        let mut p = PlcSymbols::defaults();
        assert_eq!(p.reaction(), "GVL_Shadow.nReactionCycles");
        p.cycle_counter = "MAIN.fbRobot.nCycle".into();
        assert_eq!(p.reaction(), "MAIN.fbRobot.nReactionCycles");
    }

    #[test]
    fn names_left_out_take_the_gvl_defaults() {
        let d = PlcSymbols::defaults();
        // No section: the defaults (silva4 has none); a robot made in code, too.
        assert_eq!(symbols(GOOD).expect("defaults"), d);
        assert_eq!(
            PlcSymbols::from_section(&PlcSection::default()).expect("none"),
            d
        );
        // uvigo8 spells the defaults out.
        assert!(robot_text("uvigo8").contains("[plc]"));
        assert_eq!(PlcSymbols::of(&uvigo8()).expect("uvigo8"), d);
        // The pulleys are asked for by a robot with pulleys, one whose [plc] names them, and
        // a shadow without a robot file; not by a robot whose cables leave at points.
        assert!(!d.read_pulleys);
        assert!(PlcSymbols::asking_for_everything().read_pulleys);
        let pulleys = cdpr_core::fixtures::robot("uvigo8-pulleys");
        assert!(
            PlcSymbols::of(&pulleys)
                .expect("uvigo8-pulleys")
                .read_pulleys
        );
        let named = format!("{GOOD}\n[plc]\npulley_axes = \"MAIN.aAxes\"\n");
        let s = symbols(&named).expect("parses");
        assert!(s.read_pulleys && s.pulley_axes == "MAIN.aAxes");
        assert_eq!(s.pulley_radii, d.pulley_radii);
        // One name given, the others kept.
        let text = format!("{GOOD}\n[plc]\ncycle_counter = \"MAIN.fbRobot.nCycle\"\n");
        let s = symbols(&text).expect("parses");
        assert_eq!(s.cycle_counter, "MAIN.fbRobot.nCycle");
        assert_eq!(
            PlcSymbols {
                cycle_counter: d.cycle_counter.clone(),
                ..s
            },
            d
        );
        // The allow-list as written (not lower-cased here).
        let text = format!("{GOOD}\n[plc]\nwritable = [\"GVL.A\"]\n");
        assert_eq!(symbols(&text).expect("parses").writable, ["GVL.A"]);
    }
}
