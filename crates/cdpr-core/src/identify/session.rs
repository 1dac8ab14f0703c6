//! `cdpr surrogate fit|validate` as library calls: references loaded from CSV or produced by
//! the physics core, DOF and signal names resolved, and the serialisable reports the command
//! prints (its `--json`).

use super::reference::{DofReport, DofScore, ReferenceRun, SurrogateError};
use crate::options::{Group, Name, choice, choices, flag, number};
use crate::robot::{Dof, Robot};
use crate::run::request::CommandSource;
use crate::run::{RunOptions, RunRequest};
use crate::sim::ModelKind;
use crate::surrogate::{DOF_NAMES, FitMethod, FitOptions, Reachability, dof_index};
use crate::trajectory;
use crate::trajectory::signals::{SignalKind, robot_dofs};
use serde::Serialize;
use std::path::{Path, PathBuf};

crate::choice_value!(FitMethod);

/// The identification signals a fit runs when it is given no references, written as the
/// `signals` option takes them: seed 004's steps and chirp, one DOF at a time.
pub const DEFAULT_SIGNALS: &str = "steps,chirp";

crate::request! {
    /// How `cdpr surrogate fit` fits, beyond its references.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct FitRequest, table OPTIONS;
    /// The fit method.
    method: FitMethod = FitMethod::NelderMead,
        choice(Group::Command, choices::<FitMethod>, "METHOD",
            "fit method: seed 004's 0.05 grid (ζ ∈ [1, 1.6], f_n ∈ [1, 3] Hz, gain 1) or a \
             coarse grid over wide ranges refined by Nelder–Mead");
    /// Fit the static gain too.
    fit_gain: bool = false,
        flag(Group::Command, "fit the static gain too (Nelder–Mead only; seed 004 fixes it at 1)");
    /// The longest delay the fit considers, s.
    max_delay: f64 = 0.25,
        number(Group::Command, "s", 0.0, 2.0, "S", "longest delay considered");
}

/// How reference runs are produced by the physics core.
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicsSetup {
    /// The run options of the reference runs, as `cdpr simulate` takes them: winch mode, step
    /// (also the fit's), speed of built-in trajectories, compensation, the combination step.
    /// Its `model` is not used: see `model`.
    pub request: RunRequest,
    /// The physics model of the reference runs; None: the robot's cheapest (elastic for cable
    /// robots, chain for robots with legs).
    pub model: Option<ModelKind>,
}

impl PhysicsSetup {
    /// The step of the runs and of the fit, s.
    pub fn dt(&self) -> f64 {
        self.request.dt
    }

    /// The physics model of generated runs: the one asked for, else the robot's cheapest.
    pub fn model(&self, robot: &Robot) -> Result<ModelKind, SurrogateError> {
        match self.model {
            Some(model) if model.entry().needs_surrogate => Err(SurrogateError::Setup(format!(
                "{}: reference runs come from the physics core ({}), not `{model}`",
                Name("model"),
                crate::choice::or_list(
                    &crate::sim::MODELS
                        .iter()
                        .filter(|m| !m.needs_surrogate)
                        .map(|m| m.name)
                        .collect::<Vec<_>>()
                )
            ))),
            Some(model) => Ok(model),
            None if robot.is_cable_robot() => Ok(ModelKind::ELASTIC),
            None => Ok(ModelKind::CHAIN),
        }
    }

    /// The options of a reference run on `robot`: `cdpr simulate`'s for the same request.
    pub fn run_options(&self, robot: &Robot) -> Result<RunOptions, SurrogateError> {
        let request = RunRequest {
            model: self.model(robot)?,
            ..self.request.clone()
        };
        request
            .resolve(robot, CommandSource::Trajectory)
            .map(|r| r.options)
            .map_err(|e| SurrogateError::Setup(e.to_string()))
    }

    /// Seed 004's combination step for `robot` (None: skipped).
    pub fn reachability(&self, robot: &Robot) -> Option<Box<dyn Reachability + Send + Sync>> {
        self.request
            .combine
            .then(|| crate::sim::models::reachability(robot))
    }
}

/// A reference: a CSV file as recorded (`cdpr simulate --out`), or a trajectory name run
/// through the physics core (`progress` gets the fraction simulated).
pub fn load_reference(
    robot: &Robot,
    spec: &str,
    setup: &PhysicsSetup,
    progress: &mut dyn FnMut(f64),
) -> Result<ReferenceRun, SurrogateError> {
    if Path::new(spec).is_file() {
        return ReferenceRun::from_csv(spec).map_err(|e| SurrogateError::Reference {
            name: format!("reading reference `{spec}`"),
            message: e.to_string(),
        });
    }
    let traj = trajectory::load(spec, robot, &setup.request.builtin_options()).map_err(|e| {
        SurrogateError::Reference {
            name: format!("reference `{spec}` is neither a file nor a trajectory name"),
            message: e.to_string(),
        }
    })?;
    let name = format!("{spec} ({})", setup.model(robot)?.name());
    super::reference::physics_run(robot, &traj, &setup.run_options(robot)?, &name, progress)
}

/// DOF indices from names (`x`…`yaw`); none given: all the robot commands.
pub fn parse_dofs(robot: &Robot, names: &[String]) -> Result<Vec<usize>, SurrogateError> {
    if names.is_empty() {
        return Ok(robot_dofs(robot));
    }
    names
        .iter()
        .map(|n| {
            dof_index(n.trim()).ok_or_else(|| {
                SurrogateError::Setup(format!(
                    "{}: `{n}` is not a DOF (x, y, z, roll, pitch, yaw)",
                    Name("dofs")
                ))
            })
        })
        .collect()
}

/// Identification signals from names.
pub fn parse_signals(names: &[String]) -> Result<Vec<SignalKind>, SurrogateError> {
    names
        .iter()
        .map(|s| {
            SignalKind::from_name(s.trim()).ok_or_else(|| {
                SurrogateError::Setup(format!(
                    "{}: unknown signal `{s}` (steps, chirp, dsine, dsquare, sines)",
                    Name("signals")
                ))
            })
        })
        .collect()
}

/// The pose the filters rest at: the robot's home, orientation zero for a 3-DOF robot.
pub fn rest_pose(robot: &Robot) -> [f64; 6] {
    let mut rest = robot.home;
    if robot.dof == Dof::Three {
        rest[3..].fill(0.0);
    }
    rest
}

/// The fit's search: seed 004's grid, or wide ranges with Nelder–Mead at the runs' `dt`;
/// `fit_gain` only with Nelder–Mead.
pub fn fit_options(
    method: FitMethod,
    dt: f64,
    max_delay_s: f64,
    fit_gain: bool,
) -> Result<FitOptions, SurrogateError> {
    let mut options = match method {
        FitMethod::Grid => FitOptions::paper_grid(),
        FitMethod::NelderMead => FitOptions::wide(dt),
    };
    options.max_delay_s = max_delay_s;
    if fit_gain {
        if method == FitMethod::Grid {
            return Err(SurrogateError::Setup(format!(
                "{} needs {} nelder-mead (seed 004's grid fixes the gain at 1)",
                Name("fit_gain"),
                Name("method")
            )));
        }
        options.fit_gain = true;
    }
    Ok(options)
}

/// Warnings for fitted parameters that sit on the edge of their search range (the optimum
/// may lie beyond it): f_n and ζ at either bound, the delay at its longest, the gain (when
/// fitted) at either bound.
pub fn bound_warnings(reports: &[DofReport], options: &FitOptions, dt: f64) -> Vec<String> {
    let on = |v: f64, bound: f64| (v - bound).abs() <= 1e-3 * bound.abs().max(1e-9);
    let mut out = Vec::new();
    for r in reports {
        let q = r.fit.params;
        let mut check = |name: &str, v: f64, (lo, hi): (f64, f64), unit: &str, both: bool| {
            if on(v, hi) || (both && on(v, lo)) {
                // 4 significant digits (the optimiser lands a hair off a bound: 100.00000000000004)
                // and no space before an empty unit.
                let n = |x: f64| format!("{}", format!("{x:.3e}").parse::<f64>().unwrap_or(x));
                let unit = if unit.is_empty() {
                    String::new()
                } else {
                    format!(" {unit}")
                };
                out.push(format!(
                    "{}: {name} = {}{unit} sits on its search bound ({} … {}{unit}); the best fit may lie beyond it",
                    r.dof,
                    n(v),
                    n(lo),
                    n(hi)
                ));
            }
        };
        check(
            "f_n",
            q.natural_frequency_hz,
            options.frequency_hz,
            "Hz",
            true,
        );
        check("ζ", q.damping, options.damping, "", true);
        if options.fit_gain {
            check("K", q.gain, options.gain, "", true);
        }
        if options.max_delay_s > 0.0 && q.delay_s >= options.max_delay_s - dt {
            out.push(format!(
                "{}: delay = {} s sits on {} {} s; the best fit may lie beyond it",
                r.dof,
                q.delay_s,
                Name("max_delay"),
                options.max_delay_s
            ));
        }
    }
    out
}

/// The DOFs of `dofs` that were not fitted (their demand does not move in any reference), as
/// one warning, or None when all were.
pub fn unfitted_warning(dofs: &[usize], reports: &[DofReport], runs: &[String]) -> Option<String> {
    let missing: Vec<&str> = dofs
        .iter()
        .map(|&d| DOF_NAMES[d])
        .filter(|name| !reports.iter().any(|r| r.dof == *name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "{} {} not move in {}: not fitted (the surrogate passes {} demand through)",
        missing.join(", "),
        if missing.len() == 1 { "does" } else { "do" },
        runs.join(", "),
        if missing.len() == 1 { "its" } else { "their" },
    ))
}

/// One reference's scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    pub reference: String,
    pub scores: Vec<DofScore>,
}

/// What `cdpr surrogate fit` reports.
#[derive(Debug, Clone, Serialize)]
pub struct FitReport {
    /// The parameter file written.
    pub params: PathBuf,
    /// Wall time of the fit alone, s.
    pub fit_s: f64,
    pub dofs: Vec<DofReport>,
    pub validation: Vec<Validation>,
    /// DOFs left unfitted, parameters on their search bounds.
    pub warnings: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> PhysicsSetup {
        PhysicsSetup {
            request: RunRequest::default(),
            model: None,
        }
    }

    #[test]
    fn names_models_and_options_resolve_or_are_refused_by_name() {
        let uvigo8 = crate::fixtures::uvigo8();
        let keops = crate::fixtures::robot("keops");
        assert_eq!(setup().model(&uvigo8).expect("default"), ModelKind::ELASTIC);
        assert_eq!(setup().model(&keops).expect("default"), ModelKind::CHAIN);
        let surrogate = PhysicsSetup {
            model: Some(ModelKind::SURROGATE),
            ..setup()
        };
        assert!(surrogate.model(&uvigo8).is_err());

        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse_dofs(&uvigo8, &names(&["z", " yaw"])).expect("dofs"),
            [2, 5]
        );
        let e = parse_dofs(&uvigo8, &names(&["w"])).expect_err("no such DOF");
        assert!(e.to_string().contains("`w` is not a DOF"), "{e}");
        assert_eq!(
            parse_signals(&names(&["steps", "chirp"]))
                .expect("signals")
                .len(),
            2
        );
        assert!(parse_signals(&names(&["noise"])).is_err());

        let silva4 = crate::fixtures::robot("silva4");
        assert_eq!(rest_pose(&silva4)[3..], [0.0; 3]);
        assert_eq!(rest_pose(&silva4)[..3], silva4.home[..3]);

        assert!(fit_options(FitMethod::Grid, 0.001, 0.25, true).is_err());
        let o = fit_options(FitMethod::NelderMead, 0.001, 0.1, true).expect("options");
        assert!(o.fit_gain && o.max_delay_s == 0.1);
        // A quarter of the 1 kHz sampling rate caps f_n at 100 Hz (Tustin's warping).
        assert_eq!(o.frequency_hz.1, 100.0);
    }

    #[test]
    fn a_named_reference_is_run_through_the_physics_core_at_the_setup_step() {
        let robot = crate::fixtures::robot("silva4");
        let mut calls = 0;
        let run = load_reference(
            &robot,
            "pickplace",
            &PhysicsSetup {
                request: RunRequest {
                    speed: 0.5,
                    ..RunRequest::default()
                },
                model: None,
            },
            &mut |_| calls += 1,
        )
        .expect("runs");
        assert_eq!(run.dt, 0.001);
        assert_eq!(run.name, "pickplace (elastic)");
        assert!(calls > 0);
        let e =
            load_reference(&robot, "no-such-thing", &setup(), &mut |_| {}).expect_err("neither");
        assert!(
            e.to_string()
                .contains("neither a file nor a trajectory name"),
            "{e}"
        );
    }
}
