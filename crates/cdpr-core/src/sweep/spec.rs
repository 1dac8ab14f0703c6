//! The spec file: parsed strictly, every value checked against its range, errors located as
//! `file:line: field: message`. Its run options are core's ([`RunRequest`], read in
//! [`super::locate`]), its parameters sweep specs ([`super::parameters`]).

use super::SweepError;
use super::locate::{Locator, run_options};
use super::parameters::{ParamValues, Parameter, RawParameters, parse_parameters};
use crate::options::Value;
use crate::robot::Robot;
use crate::run::request::RunRequest;
use crate::toml_location;
use crate::trajectory;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Most runs a spec may ask for (grid product or random samples).
pub const MAX_RUNS: u64 = 1_000_000;
/// Largest spec file read, bytes.
const MAX_SPEC_BYTES: u64 = 1 << 20;

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
/// The sweep's own keys ([`SWEEP_KEYS`]); every other top-level key is a run option.
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

impl Spec {
    /// Reads and checks the spec file at `path` (robot and CSV paths in it are relative to
    /// its directory, else to the current one).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Spec, SweepError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text =
            crate::toml_location::read_capped(path, MAX_SPEC_BYTES).map_err(|e| match e {
                Some(error) => SweepError::Io {
                    file: file.clone(),
                    error,
                },
                None => SweepError::Invalid {
                    file: file.clone(),
                    line: 0,
                    field: "(file)".into(),
                    message: format!("larger than {MAX_SPEC_BYTES} bytes: not a sweep spec"),
                },
            })?;
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
        let resolve = |name: &str| resolve(base, name);
        let robots = parse_robots(&loc, &raw.robots, &resolve)?;
        let speeds = parse_speeds(&loc, raw.speeds.as_ref())?;
        let (run, warnings) = run_options(&loc)?;
        let seed = parse_seed(&loc, raw.seed.as_ref())?;
        let mode = parse_mode(&loc, raw.mode.as_ref(), raw.samples.as_ref())?;
        let parameters = match &raw.parameters {
            Some(p) => parse_parameters(&loc, p, matches!(mode, Mode::Random { .. }))?,
            None => Vec::new(),
        };
        let probe = RunRequest {
            speed: speeds[0],
            ..run.clone()
        };
        let trajectories = parse_trajectories(&loc, &raw.trajectories, &robots, &probe, &resolve)?;
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

/// A robot or CSV path of the spec: relative to the spec's directory when it exists there,
/// else as written (a shipped name, or relative to the current directory).
fn resolve(base: Option<&Path>, name: &str) -> String {
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
}

/// `robots`: each once, each loaded (a file that does not load is refused here).
fn parse_robots(
    loc: &Locator,
    raw: &Spanned<Vec<String>>,
    resolve: &dyn Fn(&str) -> String,
) -> Result<Vec<(String, Robot)>, SweepError> {
    loc.list(raw, "robots")?;
    let mut robots: Vec<(String, Robot)> = Vec::new();
    for name in raw.get_ref() {
        if robots.iter().any(|(n, _)| n == name) {
            return Err(loc.at(raw.span(), "robots", format!("`{name}` is listed twice")));
        }
        let robot =
            Robot::load(&resolve(name)).map_err(|e| loc.at(raw.span(), "robots", e.to_string()))?;
        robots.push((name.clone(), robot));
    }
    Ok(robots)
}

/// `speeds`, each within the run option `speed`'s range (default: its default).
fn parse_speeds(loc: &Locator, raw: Option<&Spanned<Vec<f64>>>) -> Result<Vec<f64>, SweepError> {
    let Some(s) = raw else {
        return Ok(vec![RunRequest::default().speed]);
    };
    loc.list(s, "speeds")?;
    for &v in s.get_ref() {
        loc.option(s.span(), "speeds", "speed", Value::Number(v))?;
    }
    Ok(s.get_ref().clone())
}

/// `seed`: a whole number ≥ 0 (default 0).
fn parse_seed(loc: &Locator, raw: Option<&Spanned<i64>>) -> Result<u64, SweepError> {
    let Some(s) = raw else { return Ok(0) };
    u64::try_from(*s.get_ref()).map_err(|_| {
        loc.at(
            s.span(),
            "seed",
            format!("must be a whole number ≥ 0, got {}", s.get_ref()),
        )
    })
}

/// `mode` (grid or random) and, in random mode only, `samples`.
fn parse_mode(
    loc: &Locator,
    mode: Option<&Spanned<String>>,
    samples: Option<&Spanned<i64>>,
) -> Result<Mode, SweepError> {
    let random = match mode {
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
    match (samples, random) {
        (Some(s), false) => Err(loc.at(
            s.span(),
            "samples",
            "is for mode = \"random\" (a grid runs every combination)",
        )),
        (None, true) => Err(loc.top(
            "mode",
            "mode = \"random\" needs `samples = N` (the number of runs)",
        )),
        (None, false) => Ok(Mode::Grid),
        (Some(s), true) => {
            let n = *s.get_ref();
            if (1..=MAX_RUNS as i64).contains(&n) {
                Ok(Mode::Random { samples: n as u64 })
            } else {
                Err(loc.at(
                    s.span(),
                    "samples",
                    format!("must be a whole number from 1 to {MAX_RUNS}, got {n}"),
                ))
            }
        }
    }
}

/// `trajectories`: each once, resolved, and loaded once (on every robot, with the spec's run
/// options at its first speed) so that a typo is refused here rather than failing every run.
fn parse_trajectories(
    loc: &Locator,
    raw: &Spanned<Vec<String>>,
    robots: &[(String, Robot)],
    probe: &RunRequest,
    resolve: &dyn Fn(&str) -> String,
) -> Result<Vec<(String, String)>, SweepError> {
    loc.list(raw, "trajectories")?;
    let options = probe.builtin_options();
    let mut trajectories: Vec<(String, String)> = Vec::new();
    for name in raw.get_ref() {
        if trajectories.iter().any(|(n, _)| n == name) {
            return Err(loc.at(
                raw.span(),
                "trajectories",
                format!("`{name}` is listed twice"),
            ));
        }
        let resolved = resolve(name);
        for (robot_name, robot) in robots {
            trajectory::load(&resolved, robot, &options).map_err(|e| {
                loc.at(
                    raw.span(),
                    "trajectories",
                    format!("`{name}` on robot {robot_name}: {e}"),
                )
            })?;
        }
        trajectories.push((name.clone(), resolved));
    }
    Ok(trajectories)
}
