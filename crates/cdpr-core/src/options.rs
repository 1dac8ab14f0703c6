//! Options as the core declares them, once, for every face: each has a name, a kind (a number
//! in a unit and range, a whole number, a flag, a named choice, a name or a file), a help
//! text and its default where it lives. The command line builds its flags from these specs,
//! Python checks its keyword arguments and a sweep its TOML keys with the same
//! [`OptionSpec::parse`] / [`OptionValue`], so ranges and messages cannot drift. The run
//! options are one table ([`crate::run::request`]); a command's own options (a workspace
//! grid, a comparison's lag window) are specs next to the code that uses them. Knows no
//! robot.

use crate::choice::{Choice, UnknownChoice};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A year, s: the longest run, wait or clock any option takes.
pub const YEAR_S: f64 = 3.2e7;

/// How the face showing a message spells an option's name (the command line `--grid`, Python
/// `grid=`); set once by the face when it starts, before core makes or shows a message.
static SPELLING: OnceLock<fn(&str) -> String> = OnceLock::new();

/// Makes every [`Name`] in a message show as `spelling` spells it. The first face to call this
/// keeps it: one process shows one face.
pub fn spell_names_with(spelling: fn(&str) -> String) {
    // A second call (a face's tests calling it again) sets nothing and need not say so.
    let _ = SPELLING.set(spelling);
}

/// An option or data input (`grid`, `guess`) named in one of core's messages. The message holds
/// the name, not its spelling: it shows as the face spells it ([`spell_names_with`]), `` `grid` ``
/// where no face has said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name(pub &'static str);

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match SPELLING.get() {
            Some(spell) => f.write_str(&spell(self.0)),
            None => write!(f, "`{}`", self.0),
        }
    }
}

/// Which part of a run an option belongs to; a face offers the groups it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The robot and its payload.
    Robot,
    /// What is played: the trajectory and how a built-in one is shaped.
    Trajectory,
    /// The physical model and its step.
    Physics,
    /// How the run drives the model and what it reports.
    Run,
    /// An option of one command (a workspace grid, a comparison's lag window).
    Command,
}

/// What values an option takes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A finite number within `[min, max]`, in `unit` (SI; "" for a ratio). A time (unit
    /// `s`) may be given with its unit: `10ms`, `250us`, `0.5s`.
    Number {
        unit: &'static str,
        min: f64,
        max: f64,
    },
    /// `count` finite numbers within ±`limit`, in `unit` (a box's corners, an offset).
    Numbers {
        unit: &'static str,
        count: usize,
        limit: f64,
    },
    /// A whole number within `[min, max]`.
    Whole { min: u64, max: u64 },
    /// On or off.
    Flag,
    /// One name of a [`Choice`]: its names and helps.
    Choice(fn() -> Vec<(&'static str, &'static str)>),
    /// A shipped name or a file (robots, trajectories).
    Name,
    /// A file.
    File,
}

/// One option: everything a face needs to offer it.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    /// Its name: the request's field, the Python keyword, the TOML key, the `--flag`.
    pub name: &'static str,
    pub group: Group,
    pub kind: Kind,
    /// What it does, one or two sentences (units and ranges are added by the faces).
    pub help: &'static str,
    /// The command line's spelling when it is not `--name` with `-` for `_`: an option that is
    /// on by default is turned off by a `--no-…` flag.
    pub flag: Option<&'static str>,
    /// A one-letter flag on the command line.
    pub short: Option<char>,
    /// The placeholder in the command line's help (`M/S`, `S`, `KG`).
    pub value_name: &'static str,
    /// The default in words, where it is not a value ("the built-in's own").
    pub default_text: Option<&'static str>,
    /// The default of a command's own option (a run option's is [`RunRequest`]'s:
    /// `crate::run::RunRequest::default()`).
    pub default: DefaultValue,
    /// The heading a face lists it under (None: the command's options).
    pub heading: Option<&'static str>,
    /// The option it only makes sense with (a clip's `fps` with `video`).
    pub requires: Option<&'static str>,
    /// Another spelling the command line keeps taking (`--no-resume` for `--force`).
    pub alias: Option<&'static str>,
}

/// The default value of a command's own option.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// None, or given by its owner (a run option's by the run request).
    None,
    Number(f64),
    Whole(u64),
}

impl OptionSpec {
    pub const fn new(
        group: Group,
        kind: Kind,
        value_name: &'static str,
        help: &'static str,
    ) -> Self {
        OptionSpec {
            name: "",
            group,
            kind,
            help,
            flag: None,
            short: None,
            value_name,
            default_text: None,
            default: DefaultValue::None,
            heading: None,
            requires: None,
            alias: None,
        }
    }
    /// Another spelling the command line keeps taking.
    pub const fn alias(self, alias: &'static str) -> Self {
        OptionSpec {
            alias: Some(alias),
            ..self
        }
    }
    /// The placeholder in the command line's help.
    pub const fn value_name(self, value_name: &'static str) -> Self {
        OptionSpec { value_name, ..self }
    }
    /// The heading a face lists it under.
    pub const fn heading(self, heading: &'static str) -> Self {
        OptionSpec {
            heading: Some(heading),
            ..self
        }
    }
    /// The option it only makes sense with.
    pub const fn requires(self, option: &'static str) -> Self {
        OptionSpec {
            requires: Some(option),
            ..self
        }
    }
    /// The default of a command's own option.
    pub const fn default(self, default: DefaultValue) -> Self {
        OptionSpec { default, ..self }
    }
    pub const fn flag(self, flag: &'static str) -> Self {
        OptionSpec {
            flag: Some(flag),
            ..self
        }
    }
    pub const fn short(self, short: char) -> Self {
        OptionSpec {
            short: Some(short),
            ..self
        }
    }
    pub const fn default_text(self, text: &'static str) -> Self {
        OptionSpec {
            default_text: Some(text),
            ..self
        }
    }

    /// The default of a command's own number option (NaN when it has none: a face shows no
    /// default then, and the option's tests catch a spec that lacks one).
    pub const fn default_number(&self) -> f64 {
        match self.default {
            DefaultValue::Number(x) => x,
            DefaultValue::Whole(n) => n as f64,
            DefaultValue::None => f64::NAN,
        }
    }

    /// The default of a command's own whole-number option (0 when it has none).
    pub const fn default_whole(&self) -> usize {
        match self.default {
            DefaultValue::Whole(n) => n as usize,
            _ => 0,
        }
    }

    /// The command line's long flag, without the dashes.
    pub fn cli_flag(&self) -> String {
        match self.flag {
            Some(f) => f.to_string(),
            None => self.name.replace('_', "-"),
        }
    }

    /// Parses the text of a value (command line, environment): numbers checked against the
    /// range, names against the choice. The problem, if any, is worded without the option's
    /// name (the face puts its own spelling in front).
    pub fn parse(&self, text: &str) -> Result<Value, Problem> {
        let trimmed = text.trim();
        match self.kind {
            Kind::Number { unit, min, max } => {
                let value = if unit == "s" {
                    seconds(trimmed)
                } else {
                    trimmed.parse().ok()
                }
                .ok_or_else(|| Problem::NotANumber {
                    given: text.to_string(),
                })?;
                check_number(value, text, unit, min, max).map(Value::Number)
            }
            Kind::Numbers { unit, count, limit } => {
                let values = trimmed
                    .split(',')
                    .map(|t| t.trim().parse::<f64>())
                    .collect::<Result<Vec<f64>, _>>()
                    .map_err(|_| Problem::NotANumber {
                        given: text.to_string(),
                    })?;
                check_numbers(&values, unit, count, limit).map(|()| Value::Numbers(values))
            }
            Kind::Whole { min, max } => match trimmed.parse::<u64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(Value::Whole(n as i64)),
                _ => Err(Problem::NotWhole {
                    given: text.to_string(),
                    min,
                    max,
                }),
            },
            Kind::Flag => match trimmed {
                "true" | "on" | "yes" | "1" => Ok(Value::Flag(true)),
                "false" | "off" | "no" | "0" => Ok(Value::Flag(false)),
                _ => Err(Problem::WrongType {
                    expected: "true or false",
                    given: text.to_string(),
                }),
            },
            Kind::Choice(names) => {
                let names = names();
                names
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(trimmed))
                    .map(|(n, _)| Value::Text(n.to_string()))
                    .ok_or_else(|| Problem::NotAChoice {
                        given: text.to_string(),
                        known: names.iter().map(|(n, _)| *n).collect(),
                    })
            }
            Kind::Name | Kind::File => Ok(Value::Text(text.to_string())),
        }
    }

    /// The range and unit in words ("0.001 to 10 m/s"), for help texts.
    pub fn range_text(&self) -> Option<String> {
        match self.kind {
            Kind::Number { unit, min, max } => Some(format!(
                "{} to {}{}",
                short(min),
                short(max),
                unit_suffix(unit)
            )),
            Kind::Whole { min, max } => Some(format!("{min} to {max}")),
            Kind::Numbers { unit, count, .. } => Some(format!(
                "{count} numbers{}",
                unit_suffix(unit).replace(' ', " in ")
            )),
            _ => None,
        }
    }

    /// `problem` with this option's name.
    pub fn error(&'static self, problem: Problem) -> OptionError {
        OptionError {
            option: self.name,
            problem,
        }
    }
}

/// A value of an option as a face hands it over (a command-line text once parsed, a Python
/// object, a TOML value).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(f64),
    Whole(i64),
    Flag(bool),
    Text(String),
    /// Several numbers (a box's corners).
    Numbers(Vec<f64>),
    /// No value: the option's default (Python's `None`).
    Unset,
}

impl Value {
    /// The value in words, for messages.
    pub fn describe(&self) -> String {
        match self {
            Value::Number(x) => format!("{x}"),
            Value::Whole(n) => format!("{n}"),
            Value::Flag(b) => format!("{b}"),
            Value::Text(t) => format!("\"{t}\""),
            Value::Numbers(v) => {
                let parts: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
                parts.join(",")
            }
            Value::Unset => "nothing".into(),
        }
    }
}

/// What is wrong with a value, without the option's name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("`{given}` is not a number")]
    NotANumber { given: String },
    #[error("must be between {} and {}{}, got {given}", short(*min), short(*max), unit_suffix(unit))]
    OutOfRange {
        given: String,
        unit: &'static str,
        min: f64,
        max: f64,
    },
    #[error("must be a whole number from {min} to {max}, got {given}")]
    NotWhole { given: String, min: u64, max: u64 },
    #[error("`{given}` is not one of {}", crate::choice::or_list(known))]
    NotAChoice {
        given: String,
        known: Vec<&'static str>,
    },
    #[error("expected {expected}, got {given}")]
    WrongType {
        expected: &'static str,
        given: String,
    },
    #[error("is required: {0}")]
    Missing(&'static str),
    /// A text its type's parser refused, in the parser's words (which name the text).
    #[error("{0}")]
    Unreadable(String),
    /// A value that breaks a rule held against another option (`task` against `nc`).
    #[error("must be {rule} {}, got {given}", Name(other))]
    Against {
        rule: &'static str,
        other: &'static str,
        given: String,
    },
    #[error("needs {count} numbers{}, every one within ±{}, got {given}", unit_suffix(unit).replace(' ', " in "), short(*limit))]
    NotNumbers {
        given: String,
        unit: &'static str,
        count: usize,
        limit: f64,
    },
}

/// A bad value of a named option, or an unknown option.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {problem}", Name(option))]
pub struct OptionError {
    /// The option's name in [`OPTIONS`] (or the unknown name given).
    pub option: &'static str,
    pub problem: Problem,
}

/// An option name that is not in [`OPTIONS`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unknown option `{given}`{}", nearest.map_or_else(String::new, |n| format!(" (did you mean {}?)", Name(n))))]
pub struct UnknownOption {
    pub given: String,
    pub nearest: Option<&'static str>,
}

impl UnknownOption {
    /// The message about a key of a file (a sweep spec): the nearest key as the file spells it,
    /// not as the face showing the message spells an option.
    pub fn as_file_key(&self) -> String {
        format!(
            "unknown option `{}`{}",
            self.given,
            did_you_mean(self.nearest)
        )
    }
}

/// A request's field, read from and turned into a [`Value`].
pub trait OptionValue: Sized {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<Self, OptionError>;
    fn to_value(&self) -> Value;
}

/// The seconds `text` says (`10ms`, `250us`/`250µs`, `5ns`, `0.5s` or bare seconds),
/// unchecked: it may be negative, zero, huge or not finite.
pub fn seconds(text: &str) -> Option<f64> {
    let t = text.trim();
    let (number, per_second) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix("ns") {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    // Divided, not multiplied by 1e-6: 100 / 1e6 is the double nearest 1e-4 (as
    // `Duration::from_micros(100).as_secs_f64()` is), 100 × 1e-6 lies just above it.
    number.trim().parse::<f64>().ok().map(|v| v / per_second)
}

fn check_numbers(
    values: &[f64],
    unit: &'static str,
    count: usize,
    limit: f64,
) -> Result<(), Problem> {
    if values.len() == count && values.iter().all(|v| v.is_finite() && v.abs() <= limit) {
        Ok(())
    } else {
        Err(Problem::NotNumbers {
            given: Value::Numbers(values.to_vec()).describe(),
            unit,
            count,
            limit,
        })
    }
}

pub fn check_number(
    value: f64,
    given: &str,
    unit: &'static str,
    min: f64,
    max: f64,
) -> Result<f64, Problem> {
    if value.is_finite() && (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(Problem::OutOfRange {
            given: given.trim().to_string(),
            unit,
            min,
            max,
        })
    }
}

impl OptionValue for f64 {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<f64, OptionError> {
        let x = match &value {
            Value::Number(x) => *x,
            Value::Whole(n) => *n as f64,
            other => {
                return Err(spec.error(Problem::WrongType {
                    expected: "a number",
                    given: other.describe(),
                }));
            }
        };
        match spec.kind {
            Kind::Number { unit, min, max } => {
                check_number(x, &crate::text::short(x), unit, min, max).map_err(|p| spec.error(p))
            }
            _ => Ok(x),
        }
    }
    fn to_value(&self) -> Value {
        Value::Number(*self)
    }
}

impl OptionValue for usize {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<usize, OptionError> {
        let (min, max) = match spec.kind {
            Kind::Whole { min, max } => (min, max),
            _ => (0, u64::MAX),
        };
        let bad = |given: String| spec.error(Problem::NotWhole { given, min, max });
        match value {
            Value::Whole(n) if n >= 0 && (min..=max).contains(&(n as u64)) => Ok(n as usize),
            Value::Whole(n) => Err(bad(n.to_string())),
            Value::Number(x) => Err(bad(format!("{x}"))),
            other => Err(spec.error(Problem::WrongType {
                expected: "a whole number",
                given: other.describe(),
            })),
        }
    }
    fn to_value(&self) -> Value {
        Value::Whole(*self as i64)
    }
}

impl OptionValue for bool {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<bool, OptionError> {
        match value {
            Value::Flag(b) => Ok(b),
            other => Err(spec.error(Problem::WrongType {
                expected: "true or false",
                given: other.describe(),
            })),
        }
    }
    fn to_value(&self) -> Value {
        Value::Flag(*self)
    }
}

impl OptionValue for String {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<String, OptionError> {
        match value {
            Value::Text(t) => Ok(t),
            other => Err(spec.error(Problem::WrongType {
                expected: "a name or a file",
                given: other.describe(),
            })),
        }
    }
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

/// An optional value: [`Value::Unset`] is `None`.
impl<T: OptionValue> OptionValue for Option<T> {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<Option<T>, OptionError> {
        match value {
            Value::Unset => Ok(None),
            v => T::from_value(spec, v).map(Some),
        }
    }
    fn to_value(&self) -> Value {
        match self {
            None => Value::Unset,
            Some(v) => v.to_value(),
        }
    }
}

/// [`OptionValue`] for types written as their text: parsed with `FromStr`, whose error (a
/// `String` naming the text and what it should be) is the problem; shown with `Display`.
#[macro_export]
macro_rules! text_value {
    ($($ty:ty),+ $(,)?) => {$(
        impl $crate::options::OptionValue for $ty {
            fn from_value(
                spec: &'static $crate::options::OptionSpec,
                value: $crate::options::Value,
            ) -> Result<Self, $crate::options::OptionError> {
                let text = <String as $crate::options::OptionValue>::from_value(spec, value)?;
                text.parse()
                    .map_err(|why: String| spec.error($crate::options::Problem::Unreadable(why)))
            }
            fn to_value(&self) -> $crate::options::Value {
                $crate::options::Value::Text(self.to_string())
            }
        }
    )+};
}

impl OptionValue for PathBuf {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<PathBuf, OptionError> {
        String::from_value(spec, value).map(PathBuf::from)
    }
    fn to_value(&self) -> Value {
        Value::Text(self.display().to_string())
    }
}

/// A command's inputs as one typed value: its options' table ([`OptionSpec`]s, each with
/// its unit, range, help and the field's default) and access by name, so that every face
/// (command-line flags, Python keywords, a sweep's TOML keys) is derived from the table and
/// checks a value the same way. Declared with [`crate::request!`].
pub trait Request: Default + Clone + 'static {
    /// Its options, in the order the faces list them.
    const OPTIONS: &'static [OptionSpec];
    /// Sets the option `name` to `value`, checked against its spec.
    fn set(&mut self, name: &str, value: Value) -> Result<(), SetError>;
    /// The value of the option `name` (None: no such option).
    fn get(&self, name: &str) -> Option<Value>;
    /// The spec of option `name`, if it is one of the request's.
    fn spec(name: &str) -> Option<&'static OptionSpec> {
        Self::OPTIONS.iter().find(|s| s.name == name)
    }
    /// The default of option `name` as a face shows it (None: no default value to show).
    fn default_value(name: &str) -> Option<Value> {
        Self::default()
            .get(name)
            .filter(|v| !matches!(v, Value::Unset))
    }
}

/// The spec named `name` of a request's table (the table declares every field's spec).
pub fn spec_named(table: &'static [OptionSpec], name: &str) -> &'static OptionSpec {
    table
        .iter()
        .find(|s| s.name == name)
        .expect("the request! table declares every field's spec")
}

/// Declares a request (each field with its default), its table of options (each field's
/// spec, named after the field) and its [`Request`] implementation, from one table:
///
/// ```ignore
/// request! {
///     /// What `cdpr workspace` computes.
///     #[derive(Debug, Clone, PartialEq)]
///     pub struct WorkspaceRequest, table WORKSPACE_OPTIONS;
///     /// Cells per axis.
///     grid: usize = 30, whole(Group::Command, 2, 400, "cells per axis");
/// }
/// ```
#[macro_export]
macro_rules! request {
    ($(#[$meta:meta])* pub struct $name:ident, table $table:ident;
     $( $(#[doc = $doc:literal])* $field:ident : $ty:ty = $default:expr, $spec:expr; )+) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )+
        }

        impl Default for $name {
            fn default() -> $name {
                $name { $( $field: $default, )+ }
            }
        }

        #[doc = concat!("Every option of [`", stringify!($name), "`], in the order the faces list them.")]
        pub const $table: &[$crate::options::OptionSpec] = &[
            $( $crate::options::OptionSpec { name: stringify!($field), ..$spec }, )+
        ];

        impl $name {
            /// Sets the option `name` to `value`, checked against its spec (range, type,
            /// names).
            pub fn set(
                &mut self,
                name: &str,
                value: $crate::options::Value,
            ) -> Result<(), $crate::options::SetError> {
                match name {
                    $( stringify!($field) => {
                        self.$field = $crate::options::OptionValue::from_value(
                            $crate::options::spec_named($table, stringify!($field)),
                            value,
                        )?;
                        Ok(())
                    } )+
                    _ => Err($crate::options::SetError::Unknown($crate::options::unknown(
                        name,
                        $table.iter().map(|s| s.name),
                    ))),
                }
            }

            /// The value of the option `name` (None: no such option).
            pub fn get(&self, name: &str) -> Option<$crate::options::Value> {
                match name {
                    $( stringify!($field) => {
                        Some($crate::options::OptionValue::to_value(&self.$field))
                    } )+
                    _ => None,
                }
            }
        }

        impl $crate::options::Request for $name {
            const OPTIONS: &'static [$crate::options::OptionSpec] = $table;
            fn set(
                &mut self,
                name: &str,
                value: $crate::options::Value,
            ) -> Result<(), $crate::options::SetError> {
                $name::set(self, name, value)
            }
            fn get(&self, name: &str) -> Option<$crate::options::Value> {
                $name::get(self, name)
            }
        }
    };
}

/// A port or a count that fits a smaller integer: a whole number within its spec's range.
macro_rules! small_whole {
    ($($ty:ty),+) => {$(
        impl OptionValue for $ty {
            fn from_value(spec: &'static OptionSpec, value: Value) -> Result<Self, OptionError> {
                let n = usize::from_value(spec, value)?;
                <$ty>::try_from(n).map_err(|_| {
                    spec.error(Problem::NotWhole {
                        given: n.to_string(),
                        min: 0,
                        max: u64::from(<$ty>::MAX),
                    })
                })
            }
            fn to_value(&self) -> Value {
                Value::Whole(i64::from(*self))
            }
        }
    )+};
}

small_whole!(u16, u32);

/// A time, given in seconds (or with its unit on the command line: `10ms`).
impl OptionValue for std::time::Duration {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<Self, OptionError> {
        f64::from_value(spec, value).map(std::time::Duration::from_secs_f64)
    }
    fn to_value(&self) -> Value {
        Value::Number(self.as_secs_f64())
    }
}

/// Numbers: a list of the spec's count, each within its limit.
impl OptionValue for Vec<f64> {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<Self, OptionError> {
        let values = match value {
            Value::Numbers(v) => v,
            Value::Text(t) => match spec.parse(&t).map_err(|p| spec.error(p))? {
                Value::Numbers(v) => v,
                other => vec![f64::from_value(spec, other)?],
            },
            other => {
                return Err(spec.error(Problem::WrongType {
                    expected: "a list of numbers",
                    given: other.describe(),
                }));
            }
        };
        if let Kind::Numbers { unit, count, limit } = spec.kind {
            check_numbers(&values, unit, count, limit).map_err(|p| spec.error(p))?;
        }
        Ok(values)
    }
    fn to_value(&self) -> Value {
        Value::Numbers(self.clone())
    }
}

/// A [`Choice`] is given by its name.
#[macro_export]
macro_rules! choice_value {
    ($($ty:ty),+) => {$(
        impl $crate::options::OptionValue for $ty {
            fn from_value(
                spec: &'static $crate::options::OptionSpec,
                value: $crate::options::Value,
            ) -> Result<$ty, $crate::options::OptionError> {
                $crate::options::choice_from_value::<$ty>(spec, value)
            }
            fn to_value(&self) -> $crate::options::Value {
                $crate::options::Value::Text($crate::choice::Choice::name(*self).to_string())
            }
        }
    )+};
}

/// The names and helps of a [`Choice`], for [`Kind::Choice`].
pub fn choices<T: Choice>() -> Vec<(&'static str, &'static str)> {
    T::all().into_iter().map(|v| (v.name(), v.help())).collect()
}

pub const fn number(
    group: Group,
    unit: &'static str,
    min: f64,
    max: f64,
    value_name: &'static str,
    help: &'static str,
) -> OptionSpec {
    OptionSpec::new(group, Kind::Number { unit, min, max }, value_name, help)
}

pub const fn whole(group: Group, min: u64, max: u64, help: &'static str) -> OptionSpec {
    OptionSpec::new(group, Kind::Whole { min, max }, "N", help)
}

pub const fn flag(group: Group, help: &'static str) -> OptionSpec {
    OptionSpec::new(group, Kind::Flag, "", help)
}

pub const fn choice(
    group: Group,
    names: fn() -> Vec<(&'static str, &'static str)>,
    value_name: &'static str,
    help: &'static str,
) -> OptionSpec {
    OptionSpec::new(group, Kind::Choice(names), value_name, help)
}

/// A [`Choice`] from a [`Value`] (its name), checked against its names.
pub fn choice_from_value<T: Choice>(
    spec: &'static OptionSpec,
    value: Value,
) -> Result<T, OptionError> {
    match value {
        Value::Text(name) => {
            T::from_name(&name).map_err(|UnknownChoice { given, known, .. }| {
                spec.error(Problem::NotAChoice { given, known })
            })
        }
        other => Err(spec.error(Problem::WrongType {
            expected: "a name",
            given: other.describe(),
        })),
    }
}

/// Why setting an option by name was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SetError {
    #[error(transparent)]
    Unknown(#[from] UnknownOption),
    #[error(transparent)]
    Value(#[from] OptionError),
}

impl SetError {
    /// What it says of a key of a file, without the option's name (the located error names
    /// the field); an unknown key's nearest name as the file spells it.
    pub fn as_file_message(&self) -> String {
        match self {
            SetError::Value(e) => e.problem.to_string(),
            SetError::Unknown(e) => e.as_file_key(),
        }
    }
}

/// A TOML value as an option's value (a sweep spec's keys, a test suite's).
impl From<&toml::Value> for Value {
    fn from(v: &toml::Value) -> Value {
        match v {
            toml::Value::Float(x) => Value::Number(*x),
            toml::Value::Integer(i) => Value::Whole(*i),
            toml::Value::Boolean(b) => Value::Flag(*b),
            toml::Value::String(s) => Value::Text(s.clone()),
            toml::Value::Array(items)
                if items
                    .iter()
                    .all(|i| i.as_float().is_some() || i.as_integer().is_some()) =>
            {
                Value::Numbers(
                    items
                        .iter()
                        .filter_map(|i| i.as_float().or(i.as_integer().map(|k| k as f64)))
                        .collect(),
                )
            }
            other => Value::Text(other.to_string()),
        }
    }
}

/// `name` as an unknown option among `known`, with the nearest name if one is close.
pub fn unknown(name: &str, known: impl IntoIterator<Item = &'static str>) -> UnknownOption {
    // Near: a couple of edits from the whole name, or from its start (`stifness` →
    // `stiffness_scale`).
    let score = |k: &str| {
        let start: String = k.chars().take(name.chars().count()).collect();
        edit_distance(name, k).min(edit_distance(name, &start))
    };
    let nearest = known
        .into_iter()
        .map(|k| (score(k), k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n);
    UnknownOption {
        given: name.to_string(),
        nearest,
    }
}

/// " (did you mean `name`?)" for a nearest name, "" for none: the end of a message about a
/// name that is not known.
pub fn did_you_mean(nearest: Option<&str>) -> String {
    match nearest {
        Some(n) => format!(" (did you mean `{n}`?)"),
        None => String::new(),
    }
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

pub use crate::text::short;

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// The number an option of `spec` gives: `value` checked against the spec's range.
pub fn checked_number(spec: &'static OptionSpec, value: f64) -> Result<f64, OptionError> {
    f64::from_value(spec, Value::Number(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DT: OptionSpec = OptionSpec {
        name: "dt",
        ..number(Group::Physics, "s", 1e-5, 0.01, "S", "step")
    };

    #[test]
    fn texts_are_parsed_against_the_spec_without_its_name() {
        assert_eq!(DT.parse(" 0.002 "), Ok(Value::Number(0.002)));
        assert_eq!(
            DT.parse("1e-9").unwrap_err().to_string(),
            "must be between 1e-5 and 0.01 s, got 1e-9"
        );
        assert_eq!(
            DT.parse("x").unwrap_err().to_string(),
            "`x` is not a number"
        );
        assert!(DT.parse("nan").is_err() && DT.parse("inf").is_err());
        assert_eq!(DT.range_text().as_deref(), Some("1e-5 to 0.01 s"));
        const N: OptionSpec = OptionSpec {
            name: "n",
            ..whole(Group::Command, 1, 100, "count")
        };
        assert_eq!(N.parse("100"), Ok(Value::Whole(100)));
        assert!(N.parse("-1").is_err() && N.parse("2.5").is_err());
        assert_eq!(
            f64::from_value(&DT, Value::Number(0.5))
                .unwrap_err()
                .to_string(),
            "`dt`: must be between 1e-5 and 0.01 s, got 0.5"
        );
    }

    #[test]
    fn unknown_names_suggest_the_nearest() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            unknown("speeed", ["speed", "dt"]).to_string(),
            "unknown option `speeed` (did you mean `speed`?)"
        );
        assert_eq!(
            unknown("zzz", ["speed"]).to_string(),
            "unknown option `zzz`"
        );
    }
}
