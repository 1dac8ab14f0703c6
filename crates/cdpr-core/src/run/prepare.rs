//! A [`RunRequest`] turned into what a run needs: the robot (with its payload), the
//! trajectory sampled at the physics step, the surrogate's parameters, and the compiled
//! [`RunOptions`] — with the rules across options applied once, here, for every face.

use super::request::{CommandSource, RunRequest};
use super::{RunError, RunOptions, step_budget};
use crate::options::OptionError;
use crate::robot::{Robot, RobotFileError};
use crate::sim::{ControlMode, SimConfig, SurrogateSetup};
use crate::surrogate::{ParamsError, SurrogateParams};
use crate::trajectory::{self, BuiltinOptions, Trajectory, TrajectoryError};
use std::error::Error;

/// Why a request could not be turned into a run. Each variant says what was being loaded;
/// its name (robot, trajectory) only where the cause does not already say it, so that a
/// chain of causes names everything once.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Option(#[from] OptionError),
    #[error("loading robot{}", unless_named(source, spec))]
    Robot {
        spec: String,
        #[source]
        source: RobotFileError,
    },
    #[error("loading the trajectory{}", unless_named(source, spec))]
    Trajectory {
        spec: String,
        #[source]
        source: TrajectoryError,
    },
    #[error("reading the surrogate parameters")]
    Surrogate(#[source] ParamsError),
    #[error("checking the run's length")]
    Budget(#[source] RunError),
}

/// " `name`", unless a message of `error`'s chain already names it.
fn unless_named(error: &(dyn Error + 'static), name: &str) -> String {
    let mut cause: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.to_string().contains(name) {
            return String::new();
        }
        cause = e.source();
    }
    format!(" `{name}`")
}

/// A request resolved for one robot: the options compiled, the warnings a user should see.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub options: RunOptions,
    /// Things the user should know before the run (e.g. an option without effect here, a
    /// surrogate fitted on another robot).
    pub warnings: Vec<String>,
}

impl RunRequest {
    /// The robot asked for, carrying the payload asked for.
    pub fn load_robot(&self) -> Result<Robot, LoadError> {
        self.load_robot_noted().map(|(robot, _)| robot)
    }

    /// [`RunRequest::load_robot`], with what a user should be told about the choice
    /// ([`crate::robot::lookup::Found::note`]: a robot file of the same name not used).
    pub fn load_robot_noted(&self) -> Result<(Robot, Option<String>), LoadError> {
        let spec = self.robot_spec()?;
        let found = crate::robot::lookup::find(spec).map_err(|source| LoadError::Robot {
            spec: spec.to_string(),
            source,
        })?;
        let note = found.note(spec);
        Ok((self.with_payload(found.robot), note))
    }

    /// `robot` carrying the payload asked for (unchanged without one).
    pub fn with_payload(&self, robot: Robot) -> Robot {
        match self.payload {
            Some(mass) => robot.with_mass(mass),
            None => robot,
        }
    }

    /// A built-in trajectory's options: its shape as asked, sampled at the physics step.
    pub fn builtin_options(&self) -> BuiltinOptions {
        BuiltinOptions {
            speed: self.speed,
            dt: self.dt,
            profile: self.profile,
            accel: self.accel,
            jerk: self.jerk,
            transition: self.transition,
        }
    }

    /// The trajectory asked for, on `robot`, sampled at the physics step.
    pub fn load_trajectory(&self, robot: &Robot) -> Result<Trajectory, LoadError> {
        let spec = self.trajectory_spec()?;
        trajectory::load(spec, robot, &self.builtin_options()).map_err(|source| {
            LoadError::Trajectory {
                spec: spec.to_string(),
                source,
            }
        })
    }

    /// The surrogate's parameters when a file is given (with a warning when they were fitted
    /// on another robot than `robot`, if known).
    pub fn load_surrogate(
        &self,
        robot: Option<&Robot>,
    ) -> Result<(Option<SurrogateSetup>, Vec<String>), LoadError> {
        let Some(path) = &self.surrogate else {
            return Ok((None, Vec::new()));
        };
        let params = SurrogateParams::read(path).map_err(LoadError::Surrogate)?;
        let mut warnings = Vec::new();
        if let Some(robot) = robot
            && params.robot != robot.name
        {
            warnings.push(format!(
                "{} was fitted on robot `{}`, used here on `{}`",
                path.display(),
                params.robot,
                robot.name
            ));
        }
        let mut setup = SurrogateSetup::new(params);
        setup.combine = self.combine;
        Ok((Some(setup), warnings))
    }

    /// The physics asked for: model, winch mode (see [`RunRequest::control_mode`]), step,
    /// chain settings, the surrogate's parameters.
    pub fn sim_config(
        &self,
        source: CommandSource,
        surrogate: Option<SurrogateSetup>,
    ) -> SimConfig {
        SimConfig {
            dt: self.dt,
            model: self.model,
            control: self.control_mode(source),
            chain: self.chain(),
            surrogate,
            cable_nodes: self.cable_nodes,
        }
    }

    /// The request resolved for `robot`: the surrogate's parameters read, the options
    /// compiled, the rules across options applied (a model that needs its parameters and has
    /// none is refused when the simulation is built, with the model's own message).
    pub fn resolve(&self, robot: &Robot, source: CommandSource) -> Result<Resolved, LoadError> {
        // (`compensate` in tension mode is warned about by the run's report.)
        let (surrogate, mut warnings) = self.load_surrogate(Some(robot))?;
        warnings.extend(robot.orientation_warning());
        let config = self.sim_config(source, surrogate);
        Ok(Resolved {
            options: RunOptions {
                config,
                compensate: self.compensate,
                kp: self.kp,
                kd: self.kd,
                settle_time: self.settle,
            },
            warnings,
        })
    }

    /// Everything a trajectory run needs: the robot, the trajectory and the resolved options,
    /// the run's length checked against the budget before anything is stepped.
    pub fn prepare(&self) -> Result<Prepared, LoadError> {
        let robot = self.load_robot()?;
        let trajectory = self.load_trajectory(&robot)?;
        self.prepare_with(robot, trajectory)
    }

    /// [`RunRequest::prepare`] for a robot and a trajectory the caller already has (Python
    /// objects, arrays).
    pub fn prepare_with(
        &self,
        robot: Robot,
        trajectory: Trajectory,
    ) -> Result<Prepared, LoadError> {
        let Resolved { options, warnings } = self.resolve(&robot, CommandSource::Trajectory)?;
        step_budget(&trajectory, &options).map_err(LoadError::Budget)?;
        Ok(Prepared {
            robot,
            trajectory,
            options,
            warnings,
        })
    }

    /// The run in words, as the first (comment) line of a run's CSV says it (what `cdpr
    /// report` titles a run with).
    pub fn describe(&self, robot: &Robot, control: ControlMode) -> String {
        format!(
            "cdpr simulate: robot {}, trajectory {}, speed {} m/s, model {}, control {}{}, dt {} s",
            robot.name,
            self.trajectory.as_deref().unwrap_or("?"),
            self.speed,
            self.model.name(),
            control.name(),
            if self.compensate { ", compensated" } else { "" },
            self.dt
        )
    }
}

/// A trajectory run ready to go.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub robot: Robot,
    pub trajectory: Trajectory,
    pub options: RunOptions,
    pub warnings: Vec<String>,
}
