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
    pub fn of(robot: &Robot) -> Result<PlcSymbols, RobotFileError> {
        let mut symbols = PlcSymbols::from_section(&robot.plc)?;
        symbols.read_pulleys |= robot.cables.iter().any(|c| c.pulley.is_some());
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
    })
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
