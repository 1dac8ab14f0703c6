//! The spec file: parsed strictly, every value checked against a physical range, errors
//! located as `file:line: field: message`.

use super::SweepError;
use crate::options::{SetError, Value};
use crate::robot::Robot;
use crate::run::request::{self, RunRequest};
use crate::toml_location::{self, line_of};
use crate::trajectory;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Most runs a spec may ask for (grid product or random samples).
pub const MAX_RUNS: u64 = 1_000_000;
/// Largest spec file read, bytes.
const MAX_SPEC_BYTES: u64 = 1 << 20;
/// Longest list of values (robots, trajectories, speeds, a parameter's list).
const MAX_LIST: usize = 10_000;

/// One sweepable robot or run parameter: its name in the spec and the columns, its unit and
/// its physical range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parameter {
    pub name: &'static str,
    pub unit: &'static str,
    pub min: f64,
    pub max: f64,
    pub help: &'static str,
}

/// The parameters a spec may sweep, in column (and grid) order.
pub const PARAMETERS: [Parameter; 8] = [
    Parameter {
        name: "stiffness_scale",
        unit: "",
        min: 1e-3,
        max: 1e3,
        help: "multiplies every cable's stiffness (k or EA)",
    },
    Parameter {
        name: "damping_scale",
        unit: "",
        min: 0.0,
        max: 1e3,
        help: "multiplies every cable's damping",
    },
    Parameter {
        name: "payload",
        unit: "kg",
        min: 0.0,
        max: 1e4,
        help: "kg added to the moving mass (inertia scaled with the mass)",
    },
    Parameter {
        name: "anchor_offset",
        unit: "m",
        min: 0.0,
        max: 0.1,
        help: "std-dev of a random offset (seeded per run) of every frame anchor coordinate",
    },
    Parameter {
        name: "winch_speed_scale",
        unit: "",
        min: 1e-2,
        max: 1e2,
        help: "multiplies the winches' velocity limit",
    },
    Parameter {
        name: "winch_accel_scale",
        unit: "",
        min: 1e-2,
        max: 1e2,
        help: "multiplies the winches' acceleration and jerk limits",
    },
    Parameter {
        name: "kp",
        unit: "1/s²",
        min: 0.0,
        max: 1e6,
        help: "the tension controller's proportional gain (the run option `kp`)",
    },
    Parameter {
        name: "kd",
        unit: "1/s",
        min: 0.0,
        max: 1e5,
        help: "the tension controller's derivative gain (the run option `kd`)",
    },
];

/// The values a parameter takes.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValues {
    /// Every value (grid), or one drawn uniformly (random).
    List(Vec<f64>),
    /// A uniform draw in [min, max] (random mode only).
    Uniform { min: f64, max: f64 },
}

impl ParamValues {
    fn len(&self) -> usize {
        match self {
            ParamValues::List(v) => v.len(),
            ParamValues::Uniform { .. } => 1,
        }
    }
}

/// Grid (every combination) or random (`samples` draws).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Grid,
    Random { samples: u64 },
}

/// A checked sweep spec.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Where it was read from (named in errors).
    pub origin: String,
    /// The robots as written in the spec, and loaded.
    pub robots: Vec<(String, Robot)>,
    /// The trajectories as written, and as resolved (a spec-relative CSV path made whole).
    pub trajectories: Vec<(String, String)>,
    pub speeds: Vec<f64>,
    /// Every other run option, as `cdpr simulate` takes them (the spec's top-level keys).
    pub run: RunRequest,
    pub mode: Mode,
    pub seed: u64,
    /// The swept parameters, in [`PARAMETERS`] order.
    pub parameters: Vec<(Parameter, ParamValues)>,
    /// What the user should know about the spec (a deprecated key).
    pub warnings: Vec<String>,
}

/// The sweep's own keys; every other top-level key is a run option ([`RunRequest`]).
#[derive(Deserialize)]
struct Raw {
    robots: Spanned<Vec<String>>,
    trajectories: Spanned<Vec<String>>,
    speeds: Option<Spanned<Vec<f64>>>,
    mode: Option<Spanned<String>>,
    samples: Option<Spanned<i64>>,
    seed: Option<Spanned<i64>>,
    parameters: Option<RawParameters>,
}

/// The run options a spec takes at its top level ([`RunRequest`]'s, less those a sweep sets
/// itself), in the table's order.
pub fn run_option_keys() -> Vec<&'static str> {
    request::OPTIONS
        .iter()
        .map(|s| s.name)
        .filter(|n| !NOT_RUN_KEYS.iter().any(|(k, _)| k == n))
        .collect()
}

/// The keys [`Raw`] takes.
const SWEEP_KEYS: [&str; 7] = [
    "robots",
    "trajectories",
    "speeds",
    "mode",
    "samples",
    "seed",
    "parameters",
];

/// Run options a sweep does not take at the top level: what is swept, or has a sweep
/// parameter of its own.
const NOT_RUN_KEYS: [(&str, &str); 4] = [
    ("robot", "list them in `robots`"),
    ("trajectory", "list them in `trajectories`"),
    ("speed", "list them in `speeds`"),
    (
        "payload",
        "a sweep adds mass: `[parameters] payload` (kg added to the robot file's)",
    ),
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParameters {
    stiffness_scale: Option<Spanned<toml::Value>>,
    damping_scale: Option<Spanned<toml::Value>>,
    payload: Option<Spanned<toml::Value>>,
    anchor_offset: Option<Spanned<toml::Value>>,
    winch_speed_scale: Option<Spanned<toml::Value>>,
    winch_accel_scale: Option<Spanned<toml::Value>>,
    kp: Option<Spanned<toml::Value>>,
    kd: Option<Spanned<toml::Value>>,
}

impl RawParameters {
    /// In [`PARAMETERS`] order.
    fn values(self) -> [Option<Spanned<toml::Value>>; 8] {
        [
            self.stiffness_scale,
            self.damping_scale,
            self.payload,
            self.anchor_offset,
            self.winch_speed_scale,
            self.winch_accel_scale,
            self.kp,
            self.kd,
        ]
    }
}

/// Errors located in one text.
struct Locator<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Locator<'_> {
    fn at(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> SweepError {
        SweepError::Invalid {
            file: self.origin.to_string(),
            line: line_of(self.text, span.start),
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn top(&self, field: &str, message: impl Into<String>) -> SweepError {
        let line = toml_location::key_span(self.text, "", field)
            .map(|s| line_of(self.text, s.start))
            .unwrap_or(0);
        SweepError::Invalid {
            file: self.origin.to_string(),
            line,
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// `value` checked as the run option `name` (its range, its names), located at `span`
    /// and reported as `field`.
    fn option(
        &self,
        span: Range<usize>,
        field: &str,
        name: &str,
        value: Value,
    ) -> Result<(), SweepError> {
        RunRequest::default()
            .set(name, value)
            .map_err(|e| self.at(span, field, problem_of(e)))
    }

    fn list<T>(&self, v: &Spanned<Vec<T>>, field: &str) -> Result<(), SweepError> {
        if v.get_ref().is_empty() {
            return Err(self.at(
                v.span(),
                field,
                "the list is empty: give at least one value",
            ));
        }
        if v.get_ref().len() > MAX_LIST {
            return Err(self.at(
                v.span(),
                field,
                format!("{} values; at most {MAX_LIST}", v.get_ref().len()),
            ));
        }
        Ok(())
    }
}

fn out_of_range(x: f64, min: f64, max: f64, unit: &str) -> String {
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    format!(
        "must be between {} and {}{unit}, got {x}",
        crate::text::short(min),
        crate::text::short(max)
    )
}

impl Spec {
    /// Reads and checks the spec file at `path` (robot and CSV paths in it are relative to
    /// its directory, else to the current one).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Spec, SweepError> {
        use std::io::Read;
        let path = path.as_ref();
        let file = path.display().to_string();
        let io = |error| SweepError::Io {
            file: file.clone(),
            error,
        };
        let mut text = String::new();
        std::fs::File::open(path)
            .map_err(io)?
            .take(MAX_SPEC_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(io)?;
        if text.len() as u64 > MAX_SPEC_BYTES {
            return Err(SweepError::Invalid {
                file,
                line: 0,
                field: "(file)".into(),
                message: format!("larger than {MAX_SPEC_BYTES} bytes: not a sweep spec"),
            });
        }
        Spec::parse(&text, &file, path.parent())
    }

    /// Parses and checks `text`; `origin` names it in errors. Relative robot and CSV paths
    /// are relative to the current directory.
    pub fn from_text(text: &str, origin: &str) -> Result<Spec, SweepError> {
        Spec::parse(text, origin, None)
    }

    fn parse(text: &str, origin: &str, base: Option<&Path>) -> Result<Spec, SweepError> {
        let loc = Locator { text, origin };
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let l = toml_location::locate(text, &e);
            SweepError::Invalid {
                file: origin.to_string(),
                line: l.line,
                field: l.field,
                message: l.message,
            }
        })?;
        let resolve = |name: &str| -> String {
            match base {
                Some(dir) if !Path::new(name).is_absolute() => {
                    let joined: PathBuf = dir.join(name);
                    if joined.exists() {
                        joined.display().to_string()
                    } else {
                        name.to_string()
                    }
                }
                _ => name.to_string(),
            }
        };

        loc.list(&raw.robots, "robots")?;
        let mut robots: Vec<(String, Robot)> = Vec::new();
        for name in raw.robots.get_ref() {
            if robots.iter().any(|(n, _)| n == name) {
                return Err(loc.at(
                    raw.robots.span(),
                    "robots",
                    format!("`{name}` is listed twice"),
                ));
            }
            let robot = Robot::load(&resolve(name))
                .map_err(|e| loc.at(raw.robots.span(), "robots", e.to_string()))?;
            robots.push((name.clone(), robot));
        }

        let speeds = match &raw.speeds {
            None => vec![RunRequest::default().speed],
            Some(s) => {
                loc.list(s, "speeds")?;
                for &v in s.get_ref() {
                    loc.option(s.span(), "speeds", "speed", Value::Number(v))?;
                }
                s.get_ref().clone()
            }
        };
        let (run, warnings) = run_options(&loc)?;
        let seed = match &raw.seed {
            None => 0,
            Some(s) => u64::try_from(*s.get_ref()).map_err(|_| {
                loc.at(
                    s.span(),
                    "seed",
                    format!("must be a whole number ≥ 0, got {}", s.get_ref()),
                )
            })?,
        };
        let random = match &raw.mode {
            None => false,
            Some(m) => match m.get_ref().as_str() {
                "grid" => false,
                "random" => true,
                other => {
                    return Err(loc.at(
                        m.span(),
                        "mode",
                        format!("`{other}` is not a mode: grid or random"),
                    ));
                }
            },
        };
        let mode = match (&raw.samples, random) {
            (Some(s), false) => {
                return Err(loc.at(
                    s.span(),
                    "samples",
                    "is for mode = \"random\" (a grid runs every combination)",
                ));
            }
            (None, true) => {
                return Err(loc.top(
                    "mode",
                    "mode = \"random\" needs `samples = N` (the number of runs)",
                ));
            }
            (None, false) => Mode::Grid,
            (Some(s), true) => {
                let n = *s.get_ref();
                if !(1..=MAX_RUNS as i64).contains(&n) {
                    return Err(loc.at(
                        s.span(),
                        "samples",
                        format!("must be a whole number from 1 to {MAX_RUNS}, got {n}"),
                    ));
                }
                Mode::Random { samples: n as u64 }
            }
        };

        let mut parameters = Vec::new();
        if let Some(p) = raw.parameters {
            for (param, value) in PARAMETERS.iter().zip(p.values()) {
                let Some(value) = value else { continue };
                let field = format!("parameters.{}", param.name);
                let values = parameter_values(&loc, param, &field, &value)?;
                if let (ParamValues::Uniform { .. }, Mode::Grid) = (&values, mode) {
                    return Err(loc.at(
                        value.span(),
                        &field,
                        "{min, max} is for mode = \"random\"; a grid needs a list of values",
                    ));
                }
                parameters.push((*param, values));
            }
        }

        // The trajectories: each resolved, and loaded once (on the first robot at the first
        // speed) so that a typo is refused here rather than failing every run.
        loc.list(&raw.trajectories, "trajectories")?;
        let mut trajectories: Vec<(String, String)> = Vec::new();
        for name in raw.trajectories.get_ref() {
            if trajectories.iter().any(|(n, _)| n == name) {
                return Err(loc.at(
                    raw.trajectories.span(),
                    "trajectories",
                    format!("`{name}` is listed twice"),
                ));
            }
            let resolved = resolve(name);
            let options = RunRequest {
                speed: speeds[0],
                ..run.clone()
            }
            .builtin_options();
            for (robot_name, robot) in &robots {
                trajectory::load(&resolved, robot, &options).map_err(|e| {
                    loc.at(
                        raw.trajectories.span(),
                        "trajectories",
                        format!("`{name}` on robot {robot_name}: {e}"),
                    )
                })?;
            }
            trajectories.push((name.clone(), resolved));
        }

        let spec = Spec {
            origin: origin.to_string(),
            robots,
            trajectories,
            speeds,
            run,
            mode,
            seed,
            parameters,
            warnings,
        };
        spec.count()?;
        Ok(spec)
    }

    /// The sizes of the grid's dimensions, slowest first, with their names.
    pub(super) fn dimensions(&self) -> Vec<(&str, usize)> {
        let mut d = vec![
            ("robots", self.robots.len()),
            ("trajectories", self.trajectories.len()),
            ("speeds", self.speeds.len()),
        ];
        for (p, v) in &self.parameters {
            d.push((p.name, v.len()));
        }
        d
    }

    /// The number of runs, within [`MAX_RUNS`] (else [`SweepError::TooManyRuns`], which names
    /// the lists and their lengths).
    pub fn count(&self) -> Result<u64, SweepError> {
        match self.mode {
            Mode::Random { samples } => Ok(samples),
            Mode::Grid => {
                let dims = self.dimensions();
                let runs: f64 = dims.iter().map(|(_, n)| *n as f64).product();
                if runs <= MAX_RUNS as f64 {
                    Ok(runs as u64)
                } else {
                    let detail = dims
                        .iter()
                        .map(|(name, n)| format!("{n} {name}"))
                        .collect::<Vec<_>>()
                        .join(" × ");
                    Err(SweepError::TooManyRuns {
                        runs,
                        detail: format!("grid of {detail}"),
                    })
                }
            }
        }
    }

    /// The columns of a row, in order: `index, seed, robot, trajectory, speed`, the swept
    /// parameters, `status, error`, then [`super::METRIC_COLUMNS`].
    pub fn columns(&self) -> Vec<String> {
        let mut c: Vec<String> = ["index", "seed", "robot", "trajectory", "speed"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        c.extend(self.parameters.iter().map(|(p, _)| p.name.to_string()));
        c.extend(["status".to_string(), "error".to_string()]);
        c.extend(super::METRIC_COLUMNS.iter().map(|s| s.to_string()));
        c
    }
}

/// What a [`SetError`] says, without the option's name (the located error names the field).
fn problem_of(e: SetError) -> String {
    match e {
        SetError::Value(e) => e.problem.to_string(),
        SetError::Unknown(e) => e.to_string(),
    }
}

/// A TOML value as a run option's value.
fn value_of(v: &toml::Value) -> Value {
    match v {
        toml::Value::Float(x) => Value::Number(*x),
        toml::Value::Integer(i) => Value::Whole(*i),
        toml::Value::Boolean(b) => Value::Flag(*b),
        toml::Value::String(s) => Value::Text(s.clone()),
        other => Value::Text(other.to_string()),
    }
}

/// The spec's top-level keys other than the sweep's own: run options, each checked as
/// `cdpr simulate` checks it; `no_lag` is the old spelling of `remove_lag = false`.
fn run_options(loc: &Locator) -> Result<(RunRequest, Vec<String>), SweepError> {
    let table: BTreeMap<String, Spanned<toml::Value>> = toml::from_str(loc.text).map_err(|e| {
        let l = toml_location::locate(loc.text, &e);
        SweepError::Invalid {
            file: loc.origin.to_string(),
            line: l.line,
            field: l.field,
            message: l.message,
        }
    })?;
    let mut run = RunRequest::default();
    let mut warnings = Vec::new();
    for (key, value) in &table {
        if SWEEP_KEYS.contains(&key.as_str()) {
            continue;
        }
        let span = value.span();
        if let Some((_, why)) = NOT_RUN_KEYS.iter().find(|(k, _)| k == key) {
            return Err(loc.at(span, key, format!("is not a run option of a sweep: {why}")));
        }
        let (name, v) = match (key.as_str(), value.get_ref()) {
            ("no_lag", toml::Value::Boolean(b)) => {
                warnings.push(format!(
                    "{}: `no_lag = {b}` is deprecated: write `remove_lag = {}`",
                    loc.origin, !b
                ));
                ("remove_lag", Value::Flag(!b))
            }
            (k, v) => (k, value_of(v)),
        };
        run.set(name, v).map_err(|e| {
            let message = match e {
                // Suggest among what a spec takes, not among every run option.
                SetError::Unknown(_) => crate::options::unknown(
                    key,
                    SWEEP_KEYS.iter().copied().chain(run_option_keys()),
                )
                .to_string(),
                e => problem_of(e),
            };
            loc.at(span.clone(), key, message)
        })?;
    }
    if let Some(why) = run.model.entry().not_swept {
        let span = table.get("model").map(|v| v.span()).unwrap_or(0..0);
        return Err(loc.at(
            span,
            "model",
            format!(
                "{why}: {}",
                crate::choice::or_list(
                    &crate::sim::MODELS
                        .iter()
                        .filter(|m| m.not_swept.is_none())
                        .map(|m| m.name)
                        .collect::<Vec<_>>(),
                )
            ),
        ));
    }
    Ok((run, warnings))
}

/// A parameter's list or `{min, max}`, every number within the parameter's range.
fn parameter_values(
    loc: &Locator,
    param: &Parameter,
    field: &str,
    value: &Spanned<toml::Value>,
) -> Result<ParamValues, SweepError> {
    let err = |message: String| loc.at(value.span(), field, message);
    let number = |v: &toml::Value| -> Result<f64, SweepError> {
        let x = match v {
            toml::Value::Float(x) => *x,
            toml::Value::Integer(i) => *i as f64,
            other => {
                return Err(err(format!(
                    "expected numbers, got {} `{other}`",
                    other.type_str()
                )));
            }
        };
        if x.is_finite() && (param.min..=param.max).contains(&x) {
            Ok(x)
        } else {
            Err(err(out_of_range(x, param.min, param.max, param.unit)))
        }
    };
    match value.get_ref() {
        toml::Value::Array(items) => {
            if items.is_empty() {
                return Err(err("the list is empty: give at least one value".into()));
            }
            if items.len() > MAX_LIST {
                return Err(err(format!("{} values; at most {MAX_LIST}", items.len())));
            }
            Ok(ParamValues::List(
                items.iter().map(number).collect::<Result<_, _>>()?,
            ))
        }
        toml::Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| *k != "min" && *k != "max") {
                return Err(err(format!(
                    "unknown key `{k}`: expected {{min = …, max = …}}"
                )));
            }
            let get = |k: &str| {
                t.get(k)
                    .ok_or_else(|| err(format!("missing `{k}`: expected {{min = …, max = …}}")))
                    .and_then(number)
            };
            let (min, max) = (get("min")?, get("max")?);
            if min > max {
                return Err(err(format!("min {min} is above max {max}")));
            }
            Ok(ParamValues::Uniform { min, max })
        }
        other => Err(err(format!(
            "expected a list of numbers or {{min = …, max = …}}, got {} `{other}`",
            other.type_str()
        ))),
    }
}
