//! Core's run options ([`cdpr_core::run::OPTIONS`]) as command-line flags: a command names
//! the options it takes ([`Selection`]) and flattens [`RunArgs`]; each flag's name, help,
//! range, unit and default come from the table, and the values parsed make a
//! [`RunRequest`]. Core's messages name options by their table's name
//! ([`cdpr_core::options::Name`]); [`flag_spelling`] spells them as this command line's flags
//! (`--dt`, `--no-lag`).

use cdpr_core::options::{DefaultValue, Group, Kind, OptionSpec, Request, Value};
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

/// Whether a flag option of `R` is on by default (then the command line turns it off).
fn on_by_default<R: Request>(spec: &OptionSpec) -> bool {
    R::default().get(spec.name) == Some(Value::Flag(true))
}

/// "Cruise speed of a built-in trajectory (0.001 to 10 m/s) [default: 0.1]": a run option's
/// help, or a command's own option declared alone (its default in its spec).
pub fn help_of(spec: &OptionSpec) -> String {
    let default = match spec.group {
        Group::Command => match spec.default {
            DefaultValue::Number(x) => Some(Value::Number(x)),
            DefaultValue::Whole(n) => Some(Value::Whole(n as i64)),
            DefaultValue::None => None,
        },
        _ => RunRequest::default_value(spec.name),
    };
    help_with(spec, default, on_by_default::<RunRequest>(spec))
}

/// The first clause of a help text, for `-h` (`--help` has it whole): up to the first `; ` or
/// ` (` after a few words.
fn first_clause(help: &'static str) -> &'static str {
    // Outside parentheses only: a clause cut inside one would leave it open.
    let mut depth = 0usize;
    for (at, ch) in help.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        let rest = &help[at..];
        if depth == 0
            && at >= 20
            && (rest.starts_with("; ") || rest.starts_with(" (") || rest.starts_with(" — "))
        {
            return &help[..at];
        }
    }
    help
}

/// An option's help: its text, range and unit, and its default.
fn help_with(spec: &OptionSpec, default: Option<Value>, on_by_default: bool) -> String {
    let mut help = String::new();
    if matches!(spec.kind, Kind::Flag) && on_by_default {
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
    let default = match (spec.default_text, default) {
        (Some(text), _) => Some(text.to_string()),
        (None, Some(Value::Number(x))) if spec.value_name == "TIME" => Some(time_text(x)),
        (None, Some(Value::Number(x))) => Some(format!("{x}")),
        (None, Some(Value::Whole(n))) => Some(format!("{n}")),
        (None, Some(Value::Numbers(v))) => Some(Value::Numbers(v).describe()),
        (None, Some(Value::Text(t))) if matches!(spec.kind, Kind::Choice(_)) => Some(t),
        (None, Some(Value::Text(t))) if !t.is_empty() => Some(t),
        _ => None,
    };
    if let Some(d) = default {
        help.push_str(&format!(" [default: {d}]"));
    }
    help
}

/// A time as the command line takes it: `10ms`, `2s`.
fn time_text(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{}ms", cdpr_core::text::short(seconds * 1e3))
    } else {
        format!("{}s", cdpr_core::text::short(seconds))
    }
}

/// The clap argument of one option of `R`.
fn arg<R: Request>(spec: &'static OptionSpec, required: bool) -> Arg {
    let default = R::default_value(spec.name);
    let long = help_with(spec, default.clone(), on_by_default::<R>(spec));
    let short = OptionSpec {
        help: first_clause(spec.help),
        ..*spec
    };
    let short = help_with(&short, default, on_by_default::<R>(spec));
    let mut a = Arg::new(spec.name)
        .long(spec.cli_flag())
        .help(short.clone())
        .required(required);
    if short != long {
        a = a.long_help(long);
    }
    if let Some(c) = spec.short {
        a = a.short(c);
    }
    if let Some(heading) = spec.heading {
        a = a.help_heading(heading);
    }
    if let Some(other) = spec.requires {
        a = a.requires(other);
    }
    if let Some(alias) = spec.alias {
        a = a.alias(alias);
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
        Kind::Number { .. } | Kind::Whole { .. } | Kind::Numbers { .. } => a
            .value_name(spec.value_name)
            .allow_negative_numbers(true)
            .allow_hyphen_values(matches!(spec.kind, Kind::Numbers { .. }))
            .value_parser(move |text: &str| checked::<R>(spec, text)),
        Kind::Name | Kind::File => a
            .value_name(spec.value_name)
            .value_parser(move |text: &str| checked::<R>(spec, text)),
    }
}

/// The value `text` gives option `spec` of `R`, checked as the request checks it (so that a
/// bad value is refused by the parser, naming the flag): the problem without the option's
/// name, which clap puts in front.
fn checked<R: Request>(spec: &'static OptionSpec, text: &str) -> Result<Value, String> {
    let value = spec.parse(text).map_err(|p| p.to_string())?;
    match R::default().set(spec.name, value.clone()) {
        Ok(()) => Ok(value),
        Err(cdpr_core::options::SetError::Value(e)) => Err(e.problem.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Sets `request`'s options `specs` that `matches` gives, noting which in `given`.
fn fill<R: Request>(
    request: &mut R,
    given: &mut Vec<&'static str>,
    specs: impl Iterator<Item = &'static OptionSpec>,
    matches: &ArgMatches,
) -> Result<(), clap::Error> {
    for spec in specs {
        let value = match spec.kind {
            Kind::Flag => matches
                .get_flag(spec.name)
                .then(|| Value::Flag(!on_by_default::<R>(spec))),
            _ => matches.get_one::<Value>(spec.name).cloned(),
        };
        if let Some(v) = value {
            request.set(spec.name, v).map_err(|e| {
                clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{e}\n"))
            })?;
            given.push(spec.name);
        }
    }
    Ok(())
}

impl<S: Selection> clap::Args for RunArgs<S> {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(Self::specs().map(|s| arg::<RunRequest>(s, S::REQUIRED.contains(&s.name))))
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.args(Self::specs().map(|s| arg::<RunRequest>(s, false)))
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
        fill(&mut self.request, &mut self.given, Self::specs(), matches)
    }
}

/// A command's own request, every option of its table a flag (name, help, range, unit and
/// default from the table): the command flattens it and reads `request`.
#[derive(Debug, Clone)]
pub struct RequestArgs<R: Request> {
    pub request: R,
    /// The options given on the command line.
    pub given: Vec<&'static str>,
}

impl<R: Request + std::fmt::Debug> clap::Args for RequestArgs<R> {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(R::OPTIONS.iter().map(|s| arg::<R>(s, false)))
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<R: Request> FromArgMatches for RequestArgs<R> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = RequestArgs {
            request: R::default(),
            given: Vec::new(),
        };
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        fill(
            &mut self.request,
            &mut self.given,
            R::OPTIONS.iter(),
            matches,
        )
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

/// Every request table the command line takes options from: the run's and each command's
/// own (core's, the ADS layer's, the viewer's). Core's messages name these options as the
/// tables do (`grid`), and [`flags`] spells them as the command line does (`--grid`); the help
/// tests walk every table through its command's `--help`.
pub const TABLES: &[(&str, &[OptionSpec])] = &[
    ("simulate", cdpr_core::run::OPTIONS),
    ("workspace", cdpr_core::workspace::survey::OPTIONS),
    ("preflight", cdpr_core::preflight::OPTIONS),
    ("feedforward", cdpr_core::run::feedforward::OPTIONS),
    ("export", cdpr_core::export::MJCF_OPTIONS),
    ("trajectory", cdpr_core::trajectory::perturb::OPTIONS),
    ("compare", cdpr_core::metrics::OPTIONS),
    ("fk", cdpr_core::kinematics::FK_OPTIONS),
    ("surrogate fit", cdpr_core::identify::session::OPTIONS),
    ("plc", cdpr_ads::requests::PLC_OPTIONS),
    ("shadow", cdpr_ads::requests::LINK_OPTIONS),
    ("plc, shadow, proxy", cdpr_ads::requests::RUN_FOR_OPTIONS),
    ("proxy", cdpr_ads::requests::PROXY_OPTIONS),
    ("discover", cdpr_ads::requests::DISCOVER_OPTIONS),
    ("route add", cdpr_ads::requests::ROUTE_OPTIONS),
    ("sweep", cdpr_core::sweep::OPTIONS),
    ("test", cdpr_ads::requests::TEST_OPTIONS),
    #[cfg(feature = "viewer")]
    ("view", cdpr_viewer::request::OPTIONS),
];

/// An option or input core's messages name (`dt`, `remove_lag`, `guess`), as this command line
/// spells it: its table's flag (`--dt`, `--no-lag`), else the name as a flag (`--guess`).
pub fn flag_spelling(name: &str) -> String {
    let flag = TABLES
        .iter()
        .flat_map(|(_, table)| table.iter())
        .find(|s| s.name == name)
        .map_or_else(|| name.replace('_', "-"), |s| s.cli_flag());
    format!("--{flag}")
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
    fn core_messages_name_options_by_this_command_lines_flags() {
        cdpr_core::options::spell_names_with(flag_spelling);
        use cdpr_core::options::Name;
        assert_eq!(
            format!(
                "give a {} closer; {}, {} and `chain`",
                Name("guess"),
                Name("remove_lag"),
                Name("link_mass")
            ),
            "give a --guess closer; --no-lag, --link-mass and `chain`"
        );
        let e = cdpr_core::run::RunRequest::default()
            .set("dt", cdpr_core::options::Value::Number(0.5))
            .expect_err("out of range");
        assert_eq!(
            e.to_string(),
            "--dt: must be between 1e-5 and 0.01 s, got 0.5"
        );
    }
}
