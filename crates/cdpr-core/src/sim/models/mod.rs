//! The physical models, in one table ([`MODELS`]): each model's file implements
//! [`PhysicalModel`] and declares its [`ModelEntry`] (name, help, the winch modes and robots it
//! takes, how it is built); the table lists them. Every face reads the table — the command
//! line's `--model` values and help, Python's `cdpr.models()`, the sweep spec, the viewer's
//! picker — so adding a model is its file and one line here.
//!
//! Every model is stepped the same way by [`Sim`](super::Sim) — and through it by `cdpr
//! simulate`, the ADS shadow and the viewer — in bevy_rapier's order: the drive stage turns the
//! command into an [`Actuation`] (sync), the model steps under it (step), and the model writes
//! what it computed into the [`SimState`] (write-back).
//!
//! - `chain` ([`chain`]): seed 000's per-cable joint chain in Rapier (universal at a_i, active
//!   prismatic winch, passive prismatic spring-damper, spherical closure on the platform);
//!   robots with rigid legs get the same construction leg by leg ([`legs`]);
//! - `elastic` ([`elastic`]): the platform as the only body, each cable a unilateral
//!   spring-damper force (the fast mode and the chain's cross-check);
//! - `surrogate` ([`surrogate`]): seed 004's digital filters.

pub(crate) mod chain;
pub(crate) mod elastic;
pub(crate) mod legs;
pub(crate) mod lumped;
pub(crate) mod rapier;
pub(crate) mod surrogate;

pub use chain::ChainConfig;
pub use surrogate::{SurrogateSetup, reachability};

use super::{Command, ControlMode, SimConfig, SimError, SimState};
use crate::choice::{Choice, UnknownChoice};
use crate::kinematics::{self, Pose};
use crate::robot::Robot;
use crate::statics;
use nalgebra::Vector3;
use serde::{Serialize, Serializer};

/// Every model, in the order faces list them.
pub const MODELS: &[ModelEntry] = &[chain::ENTRY, elastic::ENTRY, surrogate::ENTRY];

/// One model as the faces know it: its name and help, what drives and robots it takes, and
/// how it is built.
pub struct ModelEntry {
    /// The name on the command line, in files and in Python.
    pub name: &'static str,
    /// One line: what it is.
    pub help: &'static str,
    /// The winch modes it can be driven with.
    pub controls: &'static [ControlMode],
    /// The winch mode it is driven with when none is asked for (None: the run's default).
    pub default_control: Option<ControlMode>,
    /// Whether it models robots with rigid legs (every model models cable robots).
    pub legs: bool,
    /// Whether it needs the surrogate's fitted parameters.
    pub needs_surrogate: bool,
    /// Why a sweep of robot parameters cannot use it (None: it can).
    pub not_swept: Option<&'static str>,
    /// Builds it for `robot` at rest at `pose` (the checks above already passed).
    pub build: fn(&Robot, &SimConfig, &Pose) -> Result<Built, SimError>,
}

/// Which physical model to step: a name of the [`MODELS`] table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModelKind(&'static str);

impl ModelKind {
    /// Seed 000's per-cable joint chains in Rapier.
    pub const CHAIN: ModelKind = ModelKind(chain::ENTRY.name);
    /// The platform alone on unilateral spring-damper cables.
    pub const ELASTIC: ModelKind = ModelKind(elastic::ENTRY.name);
    /// Seed 004's digital filters.
    pub const SURROGATE: ModelKind = ModelKind(surrogate::ENTRY.name);

    /// Its entry in [`MODELS`].
    pub fn entry(self) -> &'static ModelEntry {
        MODELS
            .iter()
            .find(|m| m.name == self.0)
            .expect("a ModelKind is always a name of the table")
    }

    pub fn name(self) -> &'static str {
        self.0
    }

    pub fn help(self) -> &'static str {
        self.entry().help
    }
}

impl Choice for ModelKind {
    const WHAT: &'static str = "model";
    fn all() -> Vec<ModelKind> {
        MODELS.iter().map(|m| ModelKind(m.name)).collect()
    }
    fn name(self) -> &'static str {
        self.0
    }
    fn help(self) -> &'static str {
        self.entry().help
    }
}

impl std::fmt::Display for ModelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::str::FromStr for ModelKind {
    type Err = UnknownChoice;
    fn from_str(name: &str) -> Result<ModelKind, UnknownChoice> {
        ModelKind::from_name(name)
    }
}

impl Serialize for ModelKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> serde::Deserialize<'de> for ModelKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ModelKind, D::Error> {
        let name = String::deserialize(d)?;
        ModelKind::from_name(&name).map_err(serde::de::Error::custom)
    }
}

/// A model built for a robot, and what the simulation around it needs.
pub struct Built {
    pub(crate) model: Box<dyn PhysicalModel>,
    /// The start pose (a 2-RSSU only turns).
    pub(crate) pose: Pose,
    /// The command that holds the platform there.
    pub(crate) start: Command,
    pub(crate) actuators: usize,
    /// Lengths and forces reported: per cable, or per leg.
    pub(crate) channels: usize,
    /// Actuator travel [min, max] per actuator (robots with legs; empty: unlimited).
    pub(crate) travel: Vec<[f64; 2]>,
}

impl Built {
    /// A cable robot's model at rest at `pose`: held by the pre-tensioned rest lengths (IK
    /// lengths where the tension distribution is infeasible), or by the distribution's
    /// tensions in tension mode.
    pub(crate) fn cables(
        model: Box<dyn PhysicalModel>,
        robot: &Robot,
        config: &SimConfig,
        pose: &Pose,
    ) -> Built {
        let cables = robot.cable_count();
        let start = match config.control {
            ControlMode::Tension => Command::Tensions(
                statics::tension_distribution(robot, pose, robot.tension).tensions,
            ),
            _ => match statics::pretensioned_rest_lengths(robot, pose, robot.tension) {
                Ok((rest, _)) => Command::Lengths(rest),
                Err(_) => Command::Lengths(kinematics::lengths(robot, pose)),
            },
        };
        Built {
            model,
            pose: *pose,
            start,
            actuators: cables,
            channels: cables,
            travel: Vec::new(),
        }
    }
}

/// Builds the model `config` asks for, for `robot` at rest at `pose`, after checking that the
/// model takes this robot and this winch mode (the rules of [`ModelEntry`], said once here).
pub(crate) fn build(robot: &Robot, config: &SimConfig, pose: &Pose) -> Result<Built, SimError> {
    let entry = config.model.entry();
    if !robot.is_cable_robot() {
        if !entry.legs {
            let takes: Vec<&str> = MODELS.iter().filter(|m| m.legs).map(|m| m.name).collect();
            return Err(SimError::Start(format!(
                "{} has rigid legs: only the {} model applies, not {}",
                robot.name,
                crate::choice::or_list(&takes),
                entry.name
            )));
        }
        if config.control == ControlMode::Tension {
            return Err(SimError::Start(format!(
                "{} has rigid legs: its actuators take positions (ideal or length mode), not tensions",
                robot.name
            )));
        }
    }
    if config.control.needs_drives() && !robot.has_drives() {
        return Err(SimError::Start(format!(
            "{} winches drive motors: {} describes none (its [winch] has no drum_radius, \
             gear_ratio, rotor_inertia, torque_limit, rated_torque; see the drives page)",
            config.control.name(),
            robot.name
        )));
    }
    if !entry.controls.contains(&config.control) {
        return Err(SimError::Start(format!(
            "the {} model is driven with {} winches, not {}",
            entry.name,
            crate::choice::or_list(&entry.controls.iter().map(|c| c.name()).collect::<Vec<_>>()),
            config.control.name()
        )));
    }
    if config.cable_nodes > 0 && config.model != ModelKind::ELASTIC {
        return Err(SimError::Start(format!(
            "cable nodes ({} {}) are a discretisation of the elastic model, not of the {} model",
            crate::options::Name("cable_nodes"),
            config.cable_nodes,
            entry.name
        )));
    }
    if entry.needs_surrogate && config.surrogate.is_none() {
        return Err(SimError::Start(format!(
            "the {} model needs its parameters ({}: a file written by `cdpr surrogate fit`)",
            entry.name,
            crate::options::Name("surrogate")
        )));
    }
    (entry.build)(robot, config, pose)
}

/// What the drive stage hands the model for one step, per actuator (a cable's winch, a leg's
/// actuator).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Actuation<'a> {
    /// `ideal`: land exactly on `positions` this step; `rates` is the change since the last
    /// step's positions over dt.
    Follow {
        positions: &'a [f64],
        rates: &'a [f64],
    },
    /// `length`: a PID drive towards the shaped `set_points` moving at `rates`; the model
    /// closes the loop, implicitly where its integrator allows.
    Servo {
        set_points: &'a [f64],
        rates: &'a [f64],
    },
    /// `tension`: pulls, N (negative values act as zero).
    Pull(&'a [f64]),
    /// `velocity`: the drives' velocity loops on these payout rates, m/s.
    Rate(&'a [f64]),
    /// `torque`: the drives' torques, N·m (each saturated at its limit).
    Torque(&'a [f64]),
}

impl Actuation<'_> {
    /// What the drive of actuator `k` is asked (the modes a drive model serves: length,
    /// velocity, torque).
    pub(crate) fn drive_command(&self, k: usize) -> Option<crate::sim::motor::DriveCommand> {
        use crate::sim::motor::DriveCommand;
        match *self {
            Actuation::Servo { set_points, rates } => Some(DriveCommand::Position {
                set_point: set_points[k],
                rate: rates[k],
            }),
            Actuation::Rate(rates) => Some(DriveCommand::Velocity(rates[k])),
            Actuation::Torque(torques) => Some(DriveCommand::Torque(torques[k])),
            Actuation::Follow { .. } | Actuation::Pull(_) => None,
        }
    }
}

/// A physical model of one robot: the platform and whatever moves it.
pub(crate) trait PhysicalModel: Send + Sync {
    /// Where `command` holds the platform at rest, searched from `guess`; `demand` is the
    /// pose the command was computed for, when the caller knows it. Default: the elastic
    /// equilibrium of commanded lengths (tensions: `guess`).
    fn rest_pose(
        &self,
        robot: &Robot,
        command: &Command,
        guess: &Pose,
        demand: Option<&Pose>,
    ) -> Result<Pose, SimError> {
        let _ = demand;
        elastic_rest_pose(robot, command, guess)
    }

    /// Puts the platform at rest at `pose` with the actuators at `actuators` (cable payouts or
    /// joint coordinates), to be held by `hold` (the drive of the command just settled).
    fn place(
        &mut self,
        robot: &Robot,
        pose: &Pose,
        actuators: &[f64],
        hold: &Actuation,
    ) -> Result<(), SimError>;

    /// Moves the platform to `pose` at rest by hand, keeping the actuators where they are.
    fn move_platform(&mut self, robot: &Robot, pose: &Pose) -> Result<(), SimError>;

    /// One step of `dt` under `actuation`; `demand` as in [`PhysicalModel::rest_pose`].
    fn step(&mut self, robot: &Robot, actuation: &Actuation, demand: Option<&Pose>, dt: f64);

    /// Writes pose, twist, actuators, lengths and forces into `state` (time and step are the
    /// caller's); `stepped`: since the last step (else since `place`).
    fn write_back(&mut self, robot: &Robot, state: &mut SimState, stepped: Option<f64>);

    /// The tensions where the cables leave their pulleys (or frame anchors) towards the
    /// platform, N, when they differ from the platform-side ones of the state (cables with
    /// mass); the capstan ratio applies to them ([`SimState::winch_tensions`]).
    fn exit_tensions(&self) -> Option<&[f64]> {
        None
    }

    /// The largest closure gap (m) and where (cable or leg index), for models with closures.
    fn worst_gap(&self) -> Option<(usize, f64)> {
        None
    }

    /// Total mechanical energy, J, where the model can tell.
    fn energy(&self) -> Option<f64> {
        None
    }

    /// Per leg the points to draw it through (robots with legs).
    fn leg_polylines(&self) -> Vec<Vec<Vector3<f64>>> {
        Vec::new()
    }

    /// Steps whose demand the model could not take as given and pulled back (the surrogate's
    /// combination step).
    fn limited_steps(&self) -> u64 {
        0
    }
}

/// Where elastic cables of rest lengths `command` hold the platform, searched from `guess`
/// (tensions: `guess`, the platform stays where it is).
pub(crate) fn elastic_rest_pose(
    robot: &Robot,
    command: &Command,
    guess: &Pose,
) -> Result<Pose, SimError> {
    match command {
        Command::Lengths(rest) => {
            let options = statics::EquilibriumOptions {
                guess: Some(*guess),
                ..Default::default()
            };
            statics::elastic_equilibrium(robot, rest, &options)
                .map(|e| e.pose)
                .map_err(|e| {
                    SimError::Start(format!(
                        "no static equilibrium for the commanded lengths: {e}"
                    ))
                })
        }
        Command::Tensions(_) | Command::Velocities(_) | Command::Torques(_) => Ok(*guess),
    }
}
