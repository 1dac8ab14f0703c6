//! Reference responses for fitting and validating the surrogate: a recorded CSV (the
//! commanded `_cmd` columns are the input, the plain pose columns the output — what
//! `cdpr simulate --out` writes) or runs of the physics core on the identification signals.

use crate::robot::Robot;
use crate::run::{self, RunOptions, RunOutcome};
use crate::surrogate::combine::{DEFAULT_TOLERANCES, Reachability, combine};
use crate::surrogate::fit::{self, DofFit, FitError, FitOptions, Series, nrmse};
use crate::surrogate::params::{DofEntry, ParamsError, SurrogateParams};
use crate::surrogate::{DOF_NAMES, Surrogate};
use crate::trajectory::TrajectoryError;
use crate::trajectory::csv::{CsvOptions, read, read_with};
use crate::trajectory::signals::{self, SignalKind};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum SurrogateError {
    #[error(transparent)]
    Trajectory(#[from] TrajectoryError),
    #[error("{name}: {message}")]
    Reference { name: String, message: String },
    /// The cause is in the message, not also a `source` (chains print each cause once).
    #[error("physics run `{name}`: {cause}")]
    Sim { name: String, cause: run::RunError },
    #[error("DOF {dof}")]
    Fit { dof: &'static str, source: FitError },
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// A request that cannot be met (the option is named).
    #[error("{0}")]
    Setup(String),
}

/// One reference response: the demanded pose and the response, per sample, every `dt`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceRun {
    pub name: String,
    pub dt: f64,
    pub input: Vec<[f64; 6]>,
    pub output: Vec<[f64; 6]>,
}

impl ReferenceRun {
    /// Reads a run recorded by `cdpr simulate --out` (or any CSV with `t`, `x_cmd…` and `x…`
    /// columns on a uniform time grid).
    pub fn from_csv(path: &str) -> Result<ReferenceRun, SurrogateError> {
        let suffix = CsvOptions {
            suffix: "_cmd".into(),
        };
        let commanded = read_with(path, &suffix)?;
        let actual = read(path)?;
        let t: Vec<f64> = actual.samples.iter().map(|s| s.t).collect();
        let bad = |message: String| SurrogateError::Reference {
            name: path.to_string(),
            message,
        };
        if t.len() < 3 {
            return Err(bad(format!("{} samples: too few to fit anything", t.len())));
        }
        let dt = (t[t.len() - 1] - t[0]) / (t.len() - 1) as f64;
        if let Some(k) = (1..t.len()).find(|&k| ((t[k] - t[k - 1]) - dt).abs() > 0.01 * dt) {
            return Err(bad(format!(
                "the time grid is not uniform (row {}: step {} s, mean {} s); the surrogate needs a fixed period",
                k + 2,
                t[k] - t[k - 1],
                dt
            )));
        }
        Ok(ReferenceRun {
            name: path.to_string(),
            dt,
            input: commanded
                .samples
                .iter()
                .map(|s| s.pose.to_array())
                .collect(),
            output: actual.samples.iter().map(|s| s.pose.to_array()).collect(),
        })
    }

    /// The commanded and the simulated poses of a physics-core run.
    pub fn from_outcome(name: &str, outcome: &RunOutcome, dt: f64) -> ReferenceRun {
        ReferenceRun {
            name: name.to_string(),
            dt,
            input: outcome
                .records
                .iter()
                .map(|r| r.commanded.pose.to_array())
                .collect(),
            output: outcome
                .records
                .iter()
                .map(|r| r.state.pose.to_array())
                .collect(),
        }
    }

    /// The demanded poses after the combination step (unchanged without a reachability).
    pub fn combined_input(
        &self,
        rest: &[f64; 6],
        reach: Option<&dyn Reachability>,
    ) -> Vec<[f64; 6]> {
        match reach {
            None => self.input.clone(),
            Some(r) => self
                .input
                .iter()
                .map(|p| combine(r, rest, p, &DEFAULT_TOLERANCES).pose)
                .collect(),
        }
    }
}

/// Whether a channel moves (RMS spread above the NRMSE threshold).
fn moves(channel: &[f64]) -> bool {
    let n = channel.len().max(1) as f64;
    let mean = channel.iter().sum::<f64>() / n;
    let spread = channel
        .iter()
        .map(|v| (v - mean).powi(2))
        .sum::<f64>()
        .sqrt();
    spread > fit::MIN_SPREAD * n.sqrt()
}

/// DOF `dof` of a run as deviations from `rest`; None when its input does not move.
fn series(input: &[[f64; 6]], output: &[[f64; 6]], dof: usize, rest: &[f64; 6]) -> Option<Series> {
    let u: Vec<f64> = input.iter().map(|p| p[dof] - rest[dof]).collect();
    let y: Vec<f64> = output.iter().map(|p| p[dof] - rest[dof]).collect();
    moves(&u).then_some(Series {
        input: u,
        output: y,
    })
}

/// Runs the physics core on each identification `signal` for each DOF in turn (one run per
/// signal and DOF, named `signal:dof`), with `options` (model, winches, dt).
pub fn identification_runs(
    robot: &Robot,
    kinds: &[SignalKind],
    dofs: &[usize],
    options: &RunOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<ReferenceRun>, SurrogateError> {
    let dt = options.config.dt;
    let total = kinds.len() * dofs.len();
    let mut runs = Vec::with_capacity(total);
    for &kind in kinds {
        for &dof in dofs {
            let name = format!("{}:{}", kind.name(), DOF_NAMES[dof]);
            let traj = signals::single_dof(robot, kind, dof, dt)?;
            runs.push(physics_run(robot, &traj, options, &name, &mut |_| {})?);
            progress(runs.len(), total);
        }
    }
    Ok(runs)
}

/// `traj` through the physics core with `options`, recorded as the reference `name`; a run
/// that stops early is an error (a reference must be whole).
pub fn physics_run(
    robot: &Robot,
    traj: &crate::trajectory::Trajectory,
    options: &RunOptions,
    name: &str,
    progress: &mut dyn FnMut(f64),
) -> Result<ReferenceRun, SurrogateError> {
    let sim = |cause| SurrogateError::Sim {
        name: name.to_string(),
        cause,
    };
    let outcome = run::run(robot, traj, options, progress).map_err(sim)?;
    match outcome.error.clone() {
        Some(source) => Err(sim(source.into())),
        None => Ok(ReferenceRun::from_outcome(
            name,
            &outcome,
            options.config.dt,
        )),
    }
}

/// One DOF's fit and the runs it used.
#[derive(Debug, Clone, Serialize)]
pub struct DofReport {
    pub dof: &'static str,
    pub fit: DofFit,
    pub references: Vec<String>,
}

/// Fits every DOF of `dofs` on the runs that excite it (seed 004: each DOF on its own).
/// A DOF whose demand moves in none of the runs is left out (not in the reports, absent from
/// the parameters: the surrogate passes its demand through); no DOF moving at all is an error.
/// All runs must share one period; `reach` applies the combination step to the inputs.
pub fn fit_all(
    robot: &str,
    rest: &[f64; 6],
    runs: &[ReferenceRun],
    dofs: &[usize],
    options: &FitOptions,
    reach: Option<&dyn Reachability>,
) -> Result<(SurrogateParams, Vec<DofReport>), SurrogateError> {
    fit_all_with_progress(robot, rest, runs, dofs, options, reach, &mut |_| {})
}

/// [`fit_all`], reporting the fraction of DOFs done to `progress`.
pub fn fit_all_with_progress(
    robot: &str,
    rest: &[f64; 6],
    runs: &[ReferenceRun],
    dofs: &[usize],
    options: &FitOptions,
    reach: Option<&dyn Reachability>,
    progress: &mut dyn FnMut(f64),
) -> Result<(SurrogateParams, Vec<DofReport>), SurrogateError> {
    let Some(first) = runs.first() else {
        return Err(SurrogateError::Reference {
            name: "(none)".into(),
            message: "no reference run given".into(),
        });
    };
    let dt = first.dt;
    if let Some(other) = runs
        .iter()
        .find(|r| (r.dt - dt).abs() > 1e-9 * dt.max(1e-12) * 1e3)
    {
        return Err(SurrogateError::Reference {
            name: other.name.clone(),
            message: format!(
                "its period {} s differs from {} s of {}",
                other.dt, dt, first.name
            ),
        });
    }
    let inputs: Vec<Vec<[f64; 6]>> = runs.iter().map(|r| r.combined_input(rest, reach)).collect();
    let mut params = SurrogateParams::empty(robot, dt, *rest);
    let mut reports = Vec::new();
    for (done, &dof) in dofs.iter().enumerate() {
        progress(done as f64 / dofs.len().max(1) as f64);
        let mut names = Vec::new();
        let mut used = Vec::new();
        for (run, input) in runs.iter().zip(&inputs) {
            if let Some(s) = series(input, &run.output, dof, rest) {
                names.push(run.name.clone());
                used.push(s);
            }
        }
        if used.is_empty() {
            continue;
        }
        let fitted = fit::fit_dof(&used, dt, options).map_err(|source| SurrogateError::Fit {
            dof: DOF_NAMES[dof],
            source,
        })?;
        params.set_dof(
            dof,
            DofEntry::from_params(&fitted.params, Some(fitted.nrmse)),
        );
        reports.push(DofReport {
            dof: DOF_NAMES[dof],
            fit: fitted,
            references: names,
        });
    }
    progress(1.0);
    if reports.is_empty() {
        return Err(SurrogateError::Reference {
            name: runs
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            message: format!(
                "the demand of none of the DOFs to fit ({}) moves: nothing to fit",
                dofs.iter()
                    .map(|&d| DOF_NAMES[d])
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    Ok((params, reports))
}

/// NRMSE of one DOF on one run: the surrogate's, and the baseline of no model at all (the
/// combined demand taken as the response). None where the DOF's input or output is constant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DofScore {
    pub dof: &'static str,
    pub nrmse: Option<f64>,
    pub baseline: Option<f64>,
}

/// Runs the surrogate over a reference run's demand (combined when `reach` is given) and
/// scores every DOF whose input moves. The surrogate must be discretised at the run's dt.
pub fn validate(
    surrogate: &Surrogate,
    run: &ReferenceRun,
    reach: Option<&dyn Reachability>,
) -> Vec<DofScore> {
    let input = run.combined_input(&surrogate.rest, reach);
    let Some(first) = input.first() else {
        return Vec::new();
    };
    let mut state = surrogate.start(first);
    let simulated: Vec<[f64; 6]> = input
        .iter()
        .map(|u| surrogate.step(&mut state, u))
        .collect();
    (0..6)
        .filter_map(|dof| {
            let u: Vec<f64> = input.iter().map(|p| p[dof]).collect();
            if !moves(&u) {
                return None;
            }
            let y: Vec<f64> = run.output.iter().map(|p| p[dof]).collect();
            let s: Vec<f64> = simulated.iter().map(|p| p[dof]).collect();
            Some(DofScore {
                dof: DOF_NAMES[dof],
                nrmse: nrmse(&y, &s),
                baseline: nrmse(&y, &u),
            })
        })
        .collect()
}
