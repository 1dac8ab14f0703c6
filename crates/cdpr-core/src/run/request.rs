//! The one set of options of a run: [`RunRequest`] and its table [`OPTIONS`].
//!
//! Every option of a run — robot, trajectory, speed, profile, model, winch mode, step, chain
//! settings, compensation, gains, payload, settle time, … — is declared once below, with its
//! name, unit, range, default and help. The faces read it from here and nowhere else:
//! the command line builds its flags from [`OPTIONS`] (`cdpr simulate`, `view`, `shadow`, …),
//! Python turns keyword arguments into a request ([`RunRequest::set`]), a sweep spec reads its
//! keys from TOML the same way, the viewer's panel lists the models and winch modes, and the
//! shadow takes the physics options. The rules across options (which winch modes a model
//! takes, what the surrogate needs, the default winch mode) are [`RunRequest::resolve`]'s and
//! the model table's ([`crate::sim::MODELS`]). Errors name the option as written here
//! (`dt`, `kp`), never a face's spelling (`--dt`): each face maps them to its own.
//!
//! Adding an option: one row in the `request!` table below (and using it where it acts).

use super::controllers::FeedbackLinearization;
use crate::options::{
    Group, Kind, OptionError, OptionSpec, Problem, choice, choices, flag, number, whole,
};
use crate::robot::MASS_RANGE;
use crate::sim::{ChainConfig, ControlMode, DT_RANGE, MAX_CABLE_NODES, ModelKind};
use crate::trajectory::{ProfileKind, Transition};
use serde::Serialize;
use std::path::PathBuf;

crate::choice_value!(ModelKind, ControlMode, ProfileKind, Transition);

use Group::{Physics, Robot as RobotGroup, Run, Trajectory as TrajectoryGroup};

crate::request! {
    /// Everything a run is asked to do, as the user said it: the faces fill it (command
    /// line, Python keywords, a sweep spec's TOML, the viewer's panel) through
    /// [`RunRequest::set`], which checks each value against its spec, and the core resolves
    /// it ([`RunRequest::resolve`]). Its serde form has the options' names.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct RunRequest, table OPTIONS;
    /// A robot file, or the name of a shipped robot.
    robot: Option<String> = None,
        OptionSpec::new(RobotGroup, Kind::Name, "ROBOT",
            "a robot's name or a robot file's path (TOML): a name is a shipped robot, else \
             robots/NAME.toml, else NAME.toml; a path must exist (`cdpr robots` lists them)").short('r');
    /// Total moving mass, kg, replacing the robot file's (inertia scales with it).
    payload: Option<f64> = None,
        number(RobotGroup, "kg", MASS_RANGE.0, MASS_RANGE.1, "KG",
            "total moving mass in kg, replacing the robot file's (inertia scales with it); e.g. \
             caroca's 1 kg and 15 kg cases of seed 001").default_text("the robot file's");
    /// A built-in trajectory's name or a CSV file.
    trajectory: Option<String> = None,
        OptionSpec::new(TrajectoryGroup, Kind::Name, "NAME|CSV",
            "a built-in trajectory (seed000, pickplace, poly5; tilt: roll and pitch moves, \
             speed in rad/s; `cdpr trajectory --help` lists them all) or a CSV file \
             (t,x,y,z[,roll,pitch,yaw][,segment])").short('t');
    /// Cruise speed of a built-in trajectory, m/s.
    speed: f64 = 0.1,
        number(TrajectoryGroup, "m/s", 1e-3, 10.0, "M/S",
            "cruise speed of a built-in trajectory (seed 000 used 0.1 and 0.4, seed 003 0.1 and 0.5)");
    /// Speed profile of a built-in trajectory (None: the built-in's own).
    profile: Option<ProfileKind> = None,
        choice(TrajectoryGroup, choices::<ProfileKind>, "PROFILE",
            "speed profile of a built-in trajectory")
            .default_text("trapezoid for seed000, scurve for pickplace, poly5 for poly5");
    /// Path acceleration limit, m/s² (None: the built-in's own).
    accel: Option<f64> = None,
        number(TrajectoryGroup, "m/s²", 1e-2, 1e3, "M/S²", "path acceleration limit")
            .default_text("3, seed 003's 3000 mm/s²; none for poly5");
    /// Path jerk limit of the S-curve, m/s³ (None: the built-in's own).
    jerk: Option<f64> = None,
        number(TrajectoryGroup, "m/s³", 1e-2, 1e5, "M/S³", "path jerk limit of the S-curve")
            .default_text("8, seed 003's 8000 mm/s³; none for poly5");
    /// How a built-in trajectory's moves join (None: the built-in's own).
    transition: Option<Transition> = None,
        choice(TrajectoryGroup, choices::<Transition>, "TRANSITION", "how moves join")
            .default_text("stop for seed000, blend for pickplace, continuous for poly5");
    /// The physical model.
    model: ModelKind = ModelKind::CHAIN,
        choice(Physics, choices::<ModelKind>, "MODEL", "the physical model");
    /// The winch mode (None: the model's, else `length` for a trajectory and `ideal` for a
    /// controller's commands; see [`RunRequest::control_mode`]).
    control: Option<ControlMode> = None,
        choice(Physics, choices::<ControlMode>, "MODE", "how the winches are driven")
            .default_text("length; ideal for the surrogate (its filters include the drives) and \
                           for a controller's commands (its NC has shaped them already)");
    /// Physics step, s.
    dt: f64 = 1e-3,
        number(Physics, "s", DT_RANGE.0, DT_RANGE.1, "S",
            "physics step (a trajectory is sampled at it; at most 10 million steps per run)");
    /// Chain model: Rapier solver substeps per step.
    substeps: usize = ChainConfig::DEFAULT.solver_iterations,
        whole(Physics, 1, 100, "chain model: Rapier solver substeps per step");
    /// Chain model: projected Gauss–Seidel iterations per substep.
    pgs: usize = ChainConfig::DEFAULT.pgs_iterations,
        whole(Physics, 1, 100, "chain model: projected Gauss–Seidel iterations per substep");
    /// Chain model: mass of each intermediate link, kg.
    link_mass: f64 = ChainConfig::DEFAULT.link_mass,
        number(Physics, "kg", 1e-3, 100.0, "KG", "chain model: mass of each intermediate link");
    /// Elastic model: point masses per cable with mass (0: massless straight cables).
    cable_nodes: usize = 0,
        whole(Physics, 0, MAX_CABLE_NODES as u64,
            "elastic model: each cable with mass (`cable_mass_per_length` > 0) as this many point \
             masses on N + 1 spring-damper segments, so it sags (0: massless straight cables); \
             the static sag converges to the elastic catenary at second order in N");
    /// The surrogate's parameter file (from `cdpr surrogate fit`).
    surrogate: Option<PathBuf> = None,
        OptionSpec::new(Physics, Kind::File, "TOML",
            "surrogate parameter file (written by `cdpr surrogate fit`), for model surrogate");
    /// Seed 004's combination step in front of the surrogate.
    combine: bool = true,
        flag(Physics, "surrogate: seed 004's combination step, which scales unreachable demands \
                       back into the wrench-feasible workspace").flag("no-combine");
    /// Subtract the pre-stretch f*/k from the commanded lengths.
    compensate: bool = false,
        flag(Run, "subtract the pre-stretch f*/k (tension distribution at each commanded pose) \
                   from the commanded lengths, so that elastic cables land the platform on target");
    /// Proportional gain of the tension controller, 1/s².
    kp: f64 = FeedbackLinearization::DEFAULT_KP,
        number(Run, "1/s²", 0.0, 1e6, "1/S²",
            "proportional gain of the tension controller (seed 001: 1500)");
    /// Derivative gain of the tension controller, 1/s.
    kd: f64 = FeedbackLinearization::DEFAULT_KD,
        number(Run, "1/s", 0.0, 1e5, "1/S",
            "derivative gain of the tension controller (seed 001: 1500)");
    /// Simulated time after the trajectory ends, s.
    settle: f64 = 0.0,
        number(Run, "s", 0.0, 3600.0, "S", "keep simulating this long after the trajectory ends");
    /// Compute the tracking metrics after removing the lag (seed 000's Table 1).
    remove_lag: bool = true,
        flag(Run, "remove the lag before computing the tracking metrics (seed 000's Table 1)")
            .flag("no-lag");
}

/// The spec of option `name` (a name of the table).
#[cfg(test)]
fn spec(name: &str) -> &'static OptionSpec {
    crate::options::spec_named(OPTIONS, name)
}

/// The spec of option `name`, if there is one.
pub fn option(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|s| s.name == name)
}

/// The options of some groups, in table order.
pub fn options_in(groups: &[Group]) -> impl Iterator<Item = &'static OptionSpec> + '_ {
    OPTIONS.iter().filter(|s| groups.contains(&s.group))
}

/// The sampling period of a trajectory written or generated without physics (`cdpr
/// trajectory --dt`, Python's `cdpr.trajectory(dt=…)`): not the physics step, so a wider range.
pub const SAMPLE_DT: OptionSpec = OptionSpec {
    name: "dt",
    ..number(
        TrajectoryGroup,
        "s",
        1e-5,
        0.1,
        "S",
        "sampling period of the trajectory (seed 000 logs every 2 ms; at most 5 million samples)",
    )
};

/// Where a run's commands come from: the default winch mode depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandSource {
    /// A trajectory through the run's own controllers (`simulate`, `view`, sweeps, Python).
    Trajectory,
    /// A controller's set points (the ADS shadow): already shaped within the axes' limits by
    /// its NC, and followed by real drives within a couple of PLC cycles (seed 003: 2).
    Controller,
}

impl RunRequest {
    /// The winch mode: the one asked for; else the model's own (the surrogate's filters
    /// include the drives: `ideal`); else `length` (a PID drive within the winch limits) for a
    /// trajectory and `ideal` for a controller's set points (shaping them a second time would
    /// lag them, and the shadow samples them at its own cycle).
    pub fn control_mode(&self, source: CommandSource) -> ControlMode {
        self.control
            .or(self.model.entry().default_control)
            .unwrap_or(match source {
                CommandSource::Trajectory => ControlMode::Length,
                CommandSource::Controller => ControlMode::Ideal,
            })
    }

    /// The chain model's settings asked for.
    pub fn chain(&self) -> ChainConfig {
        ChainConfig {
            link_mass: self.link_mass,
            solver_iterations: self.substeps,
            pgs_iterations: self.pgs,
        }
    }

    /// The robot asked for, or an error saying it is required.
    pub fn robot_spec(&self) -> Result<&str, OptionError> {
        self.robot.as_deref().ok_or(OptionError {
            option: "robot",
            problem: Problem::Missing("a shipped robot's name or a robot file"),
        })
    }

    /// The trajectory asked for, or an error saying it is required.
    pub fn trajectory_spec(&self) -> Result<&str, OptionError> {
        self.trajectory.as_deref().ok_or(OptionError {
            option: "trajectory",
            problem: Problem::Missing("a built-in trajectory's name or a CSV file"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Value;

    #[test]
    fn every_field_has_one_spec_and_round_trips_through_get_and_set() {
        let defaults = RunRequest::default();
        let json = serde_json::to_value(&defaults).expect("serialises");
        let fields: Vec<&String> = json.as_object().expect("an object").keys().collect();
        assert_eq!(fields.len(), OPTIONS.len());
        for spec in OPTIONS {
            assert!(
                json.get(spec.name).is_some(),
                "{} is not a field",
                spec.name
            );
            let value = defaults.get(spec.name).expect("known");
            let mut copy = RunRequest::default();
            copy.set(spec.name, value)
                .expect("its own default is valid");
            assert_eq!(copy, defaults, "{}", spec.name);
        }
        // Names are unique, and so are the command line's flags.
        let mut names: Vec<String> = OPTIONS.iter().map(|s| s.cli_flag()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), OPTIONS.len());
    }

    #[test]
    fn values_are_checked_against_the_spec_and_errors_name_the_option() {
        let mut r = RunRequest::default();
        r.set("dt", Value::Number(0.002)).expect("in range");
        assert_eq!(r.dt, 0.002);
        let e = r.set("dt", Value::Number(0.5)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`dt`: must be between 1e-5 and 0.01 s, got 0.5"
        );
        let e = r.set("substeps", Value::Whole(0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`substeps`: must be a whole number from 1 to 100, got 0"
        );
        let e = r.set("model", Value::Text("rigid".into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`model`: `rigid` is not one of chain, elastic or surrogate"
        );
        r.set("model", Value::Text("Elastic".into()))
            .expect("case-blind");
        assert_eq!(r.model, ModelKind::ELASTIC);
        let e = r.set("speeed", Value::Number(0.2)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown option `speeed` (did you mean `speed`?)"
        );
        let e = r.set("compensate", Value::Number(1.0)).unwrap_err();
        assert_eq!(e.to_string(), "`compensate`: expected true or false, got 1");
        r.set("accel", Value::Unset)
            .expect("back to the built-in's own");
        assert_eq!(r.accel, None);
        // A whole number is a number; a fraction is not a whole number.
        r.set("kp", Value::Whole(10)).expect("a number");
        assert_eq!(r.kp, 10.0);
        assert!(r.set("pgs", Value::Number(2.5)).is_err());
        assert_eq!(spec("pgs").parse("100"), Ok(Value::Whole(100)));
    }

    #[test]
    fn the_winch_mode_follows_one_rule() {
        let mut r = RunRequest::default();
        assert_eq!(
            r.control_mode(CommandSource::Trajectory),
            ControlMode::Length
        );
        assert_eq!(
            r.control_mode(CommandSource::Controller),
            ControlMode::Ideal
        );
        r.model = ModelKind::SURROGATE;
        assert_eq!(
            r.control_mode(CommandSource::Trajectory),
            ControlMode::Ideal
        );
        r.control = Some(ControlMode::Tension);
        assert_eq!(
            r.control_mode(CommandSource::Controller),
            ControlMode::Tension
        );
    }

    #[test]
    fn the_chain_defaults_are_the_chain_models() {
        let r = RunRequest::default();
        assert_eq!(r.chain(), ChainConfig::DEFAULT);
    }
}
