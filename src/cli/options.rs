//! Core's run options ([`cdpr_core::run::OPTIONS`]) as command-line flags: a command names
//! the options it takes ([`Selection`]) and flattens [`RunArgs`]; each flag's name, help,
//! range, unit and default come from the table, and the values parsed make a
//! [`RunRequest`]. Core's messages name options as written in the table (`dt`, `f_min`);
//! [`flags`] turns those names into this command line's spelling (`--dt`, `--f-min`).

use cdpr_core::choice::Choice;
use cdpr_core::options::{DefaultValue, Group, Kind, OptionSpec, Value};
use cdpr_core::run::{OPTIONS, RunRequest};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};
use std::marker::PhantomData;

/// Which of core's run options a command takes: whole groups of the table (less some), so that
/// a new row of the table reaches every command that takes its group with no edit here; or
/// named options, for a command that takes a few.
pub trait Selection: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// The groups it takes.
    const GROUPS: &'static [Group] = &[];
    /// Options of those groups it does not take.
    const EXCEPT: &'static [&'static str] = &[];
    /// Options it takes whatever their group.
    const NAMES: &'static [&'static str] = &[];
    /// Those the command cannot do without.
    const REQUIRED: &'static [&'static str] = &[];

    /// Whether the command takes option `spec`.
    fn takes(spec: &OptionSpec) -> bool {
        Self::NAMES.contains(&spec.name)
            || (Self::GROUPS.contains(&spec.group) && !Self::EXCEPT.contains(&spec.name))
    }
}

/// The run options a command takes, parsed into a request (defaults for those not given).
#[derive(Debug, Clone)]
pub struct RunArgs<S: Selection> {
    pub request: RunRequest,
    /// The options given on the command line.
    pub given: Vec<&'static str>,
    selection: PhantomData<S>,
}

impl<S: Selection> RunArgs<S> {
    /// The options it takes, in the table's order (the order the help lists them).
    fn specs() -> impl Iterator<Item = &'static OptionSpec> {
        OPTIONS.iter().filter(|s| S::takes(s))
    }
}

/// Whether a flag option is on by default (then the command line turns it off).
fn on_by_default(spec: &OptionSpec) -> bool {
    RunRequest::default().get(spec.name) == Some(Value::Flag(true))
}

/// "Cruise speed of a built-in trajectory (0.001 to 10 m/s) [default: 0.1]".
pub fn help_of(spec: &OptionSpec) -> String {
    let mut help = String::new();
    if matches!(spec.kind, Kind::Flag) && on_by_default(spec) {
        help.push_str("Turn off what is on by default: ");
        help.push_str(spec.help);
    } else {
        let mut chars = spec.help.chars();
        if let Some(first) = chars.next() {
            help.extend(first.to_uppercase());
            help.push_str(chars.as_str());
        }
    }
    if let Some(range) = spec.range_text() {
        help.push_str(&format!(" ({range})"));
    }
    let run_default = match spec.group {
        Group::Command => None,
        _ => RunRequest::default().get(spec.name),
    };
    let default = match (spec.default_text, run_default, spec.default) {
        (Some(text), _, _) => Some(text.to_string()),
        (None, Some(Value::Number(x)), _) | (None, None, DefaultValue::Number(x)) => {
            Some(format!("{x}"))
        }
        (None, Some(Value::Whole(n)), _) => Some(format!("{n}")),
        (None, None, DefaultValue::Whole(n)) => Some(format!("{n}")),
        (None, Some(Value::Text(t)), _) if matches!(spec.kind, Kind::Choice(_)) => Some(t),
        _ => None,
    };
    if let Some(d) = default {
        help.push_str(&format!(" [default: {d}]"));
    }
    help
}

/// The clap argument of one option.
fn arg(spec: &'static OptionSpec, required: bool) -> Arg {
    let mut a = Arg::new(spec.name)
        .long(spec.cli_flag())
        .help(help_of(spec))
        .required(required);
    if let Some(c) = spec.short {
        a = a.short(c);
    }
    match spec.kind {
        Kind::Flag => a.action(ArgAction::SetTrue),
        Kind::Choice(names) => {
            let values: Vec<PossibleValue> = names()
                .into_iter()
                .map(|(name, help)| PossibleValue::new(name).help(help))
                .collect();
            a.value_name(spec.value_name)
                .value_parser(PossibleValuesParser::new(values).map(Value::Text))
                .ignore_case(true)
        }
        Kind::Number { .. } | Kind::Whole { .. } => a
            .value_name(spec.value_name)
            .allow_negative_numbers(true)
            .value_parser(move |text: &str| spec.parse(text).map_err(|p| p.to_string())),
        Kind::Name | Kind::File => a
            .value_name(spec.value_name)
            .value_parser(|text: &str| Ok::<Value, String>(Value::Text(text.to_string()))),
    }
}

impl<S: Selection> clap::Args for RunArgs<S> {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(Self::specs().map(|s| arg(s, S::REQUIRED.contains(&s.name))))
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.args(Self::specs().map(|s| arg(s, false)))
    }
}

impl<S: Selection> FromArgMatches for RunArgs<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = RunArgs {
            request: RunRequest::default(),
            given: Vec::new(),
            selection: PhantomData,
        };
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for spec in Self::specs() {
            let value = match spec.kind {
                Kind::Flag => matches
                    .get_flag(spec.name)
                    .then(|| Value::Flag(!on_by_default(spec))),
                _ => matches.get_one::<Value>(spec.name).cloned(),
            };
            if let Some(v) = value {
                self.request.set(spec.name, v).map_err(|e| {
                    clap::Error::raw(
                        clap::error::ErrorKind::ValueValidation,
                        format!("--{}: {e}\n", spec.cli_flag()),
                    )
                })?;
                self.given.push(spec.name);
            }
        }
        Ok(())
    }
}

/// A clap value parser for a command's own number option, checked against its spec in core.
pub fn number_of(
    spec: &'static OptionSpec,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| match spec.parse(text) {
        Ok(Value::Number(x)) => Ok(x),
        Ok(other) => Err(format!("expected a number, got {other:?}")),
        Err(p) => Err(p.to_string()),
    }
}

/// A clap value parser for a command's own whole-number option, checked against its spec.
pub fn whole_of(
    spec: &'static OptionSpec,
) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |text: &str| match spec.parse(text) {
        Ok(Value::Whole(n)) => usize::try_from(n).map_err(|e| e.to_string()),
        Ok(other) => Err(format!("expected a whole number, got {other:?}")),
        Err(p) => Err(p.to_string()),
    }
}

/// A clap value parser for one of core's named choices (possible values and their help from
/// core's table).
pub fn choice<T: Choice + Clone + Send + Sync>() -> impl TypedValueParser<Value = T> {
    let values: Vec<PossibleValue> = T::all()
        .into_iter()
        .map(|v| PossibleValue::new(v.name()).help(v.help()))
        .collect();
    PossibleValuesParser::new(values).try_map(|name: String| T::from_name(&name))
}

/// A [`Selection`]: `groups [..] except [..]` or `names [..]`, then `required [..]`.
macro_rules! selection {
    ($(#[$doc:meta])* $name:ident, groups [$($group:ident),*], except [$($except:literal),*],
     required [$($required:literal),*]) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name;
        $(#[$doc])*
        impl Selection for $name {
            const GROUPS: &'static [Group] = &[$(Group::$group),*];
            const EXCEPT: &'static [&'static str] = &[$($except),*];
            const REQUIRED: &'static [&'static str] = &[$($required),*];
        }
    };
    ($(#[$doc:meta])* $name:ident, names [$($option:literal),*], required [$($required:literal),*]) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name;
        $(#[$doc])*
        impl Selection for $name {
            const NAMES: &'static [&'static str] = &[$($option),*];
            const REQUIRED: &'static [&'static str] = &[$($required),*];
        }
    };
}

selection!(
    /// `cdpr simulate`: every option of a run.
    Simulate,
    groups [Robot, Trajectory, Physics, Run],
    except [],
    required ["robot", "trajectory"]
);

selection!(
    /// A robot, for the commands that work on one (`ik`, `tensions`, …).
    RobotOnly,
    groups [Robot],
    except [],
    required ["robot"]
);

selection!(
    /// `cdpr preflight`: the robot with its payload, the trajectory and its shape.
    Preflight,
    groups [Robot, Trajectory],
    except [],
    required ["robot", "trajectory"]
);

selection!(
    /// The shape of a built-in trajectory (`cdpr trajectory`, which names the trajectory
    /// `--name` and samples it at its own `--dt`).
    Shape,
    groups [Trajectory],
    except ["trajectory"],
    required []
);

selection!(
    /// `cdpr plc`: what the virtual PLC plays (sampled at its NC's rate).
    Played,
    groups [Trajectory],
    except [],
    required []
);

selection!(
    /// `cdpr view`: a run as `simulate` takes it, robot and trajectory optional (the demo),
    /// less what only a finished run reports.
    #[cfg(feature = "viewer")]
    View,
    groups [Robot, Trajectory, Physics, Run],
    except ["settle", "remove_lag"],
    required []
);

selection!(
    /// `cdpr shadow`: the robot and the physics of the shadow (the commands come from the
    /// controller).
    Shadow,
    groups [Robot, Physics],
    except [],
    required []
);

selection!(
    /// `cdpr surrogate fit|validate`: how the reference runs are made (their model is chosen
    /// by the command: elastic for cable robots unless `--model` says otherwise).
    Reference,
    names ["control", "dt", "speed", "compensate", "combine"],
    required []
);

/// Names core's messages use that are not run options of the table: each command's own
/// options, as core names them.
const OTHER_OPTIONS: &[&str] = &[
    "guess",
    "f_min",
    "f_max",
    "grid",
    "region",
    "orientation",
    "levels",
    "step",
    "force",
    "dofs",
    "signals",
    "fit_gain",
    "method",
    "max_delay",
    "reference",
    "angle_step",
    "time_step",
    "clearance",
];

/// Core's message with every option it names in backticks (`dt`) spelled as this command
/// line's flag (`--dt`).
pub fn flags(message: &str) -> String {
    let mut out = String::with_capacity(message.len() + 8);
    let mut rest = message;
    while let Some(open) = rest.find('`') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('`') {
            Some(close) => {
                let name = &after[..close];
                let flag = OPTIONS
                    .iter()
                    .find(|s| s.name == name)
                    .map(|s| s.cli_flag())
                    .or_else(|| {
                        OTHER_OPTIONS
                            .contains(&name)
                            .then(|| name.replace('_', "-"))
                    });
                match flag {
                    Some(f) => out.push_str(&format!("--{f}")),
                    None => out.push_str(&format!("`{name}`")),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs<Simulate>,
    }

    #[test]
    fn flags_come_from_the_table_and_make_a_request() {
        let cli = Cli::try_parse_from([
            "cdpr",
            "--robot",
            "uvigo8",
            "-t",
            "seed000",
            "--dt",
            "0.002",
            "--model",
            "Elastic",
            "--no-lag",
            "--compensate",
            "--pgs",
            "3",
        ])
        .expect("parses");
        let r = &cli.run.request;
        assert_eq!(r.robot.as_deref(), Some("uvigo8"));
        assert_eq!(r.dt, 0.002);
        assert_eq!(r.model.name(), "elastic");
        assert!(!r.remove_lag && r.compensate);
        assert_eq!(r.pgs, 3);
        assert!(cli.run.given.contains(&"dt") && !cli.run.given.contains(&"speed"));
        assert_eq!(r.speed, RunRequest::default().speed);

        let e = Cli::try_parse_from(["cdpr", "-r", "x", "-t", "y", "--dt", "0.5"]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("--dt <S>") && text.contains("must be between 1e-5 and 0.01 s, got 0.5"),
            "{text}"
        );
        let e =
            Cli::try_parse_from(["cdpr", "-r", "x", "-t", "y", "--model", "rigid"]).unwrap_err();
        assert!(e.to_string().contains("chain, elastic, surrogate"), "{e}");
        assert!(
            Cli::try_parse_from(["cdpr", "-t", "y"]).is_err(),
            "robot is required"
        );
    }

    #[test]
    fn core_messages_get_the_command_lines_flags() {
        assert_eq!(
            flags("give a `guess` closer; `remove_lag`, `link_mass` and `chain`"),
            "give a --guess closer; --no-lag, --link-mass and `chain`"
        );
        assert_eq!(flags("no backticks"), "no backticks");
        assert_eq!(flags("an `odd one"), "an `odd one");
    }
}
