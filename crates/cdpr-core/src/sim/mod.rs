//! The physics core: one platform, its cables or legs, stepped at a fixed dt by whoever owns
//! it.
//!
//! Model vs. state as in MuJoCo: a [`Robot`] is the immutable model; a [`Sim`] holds the
//! changing state and steps it: `Sim::new(robot, config)`, `set_command`, `step`, `state`.
//! It knows nothing of windows or sockets; the CLI, the ADS shadow and the viewer all drive
//! this same type. Each step runs in bevy_rapier's order: the drive stage ([`drive`]) turns
//! the command into what the actuators do, the physical model steps under it, the model
//! writes its state back ([`models::PhysicalModel`]). The models are one table,
//! [`models::MODELS`] (`chain`, `elastic`, `surrogate`); the winch modes are [`ControlMode`]:
//! `ideal` (the payout follows the command exactly), `length` (a PID drive with the robot's
//! velocity/acceleration/jerk limits) and `tension` (commanded tensions, negatives clipped to
//! zero, as in seed 001).
//!
//! Playing a trajectory through a controller, recording and summarising a run is one layer up,
//! in [`crate::run`].

pub use crate::kinematics::capstan;
mod drive;
pub mod models;
pub mod motor;
pub mod winch;

pub use models::{ChainConfig, MODELS, ModelEntry, ModelKind, SurrogateSetup};

use crate::kinematics::{self, Pose};
use crate::robot::Robot;
use drive::DriveStage;
use models::PhysicalModel;
use serde::Serialize;

/// The physics step's range, s: below 10 µs a run is all overhead; above 10 ms the stiff
/// cables (k up to 10⁶ N/m on light platforms) and the PID drives go unstable.
pub const DT_RANGE: (f64, f64) = (1e-5, 0.01);

/// Most point masses per cable of the elastic model's lumped cables (`cable_nodes`).
pub const MAX_CABLE_NODES: usize = 200;

/// How the winches are driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlMode {
    /// PID drive tracking commanded lengths within the winch limits.
    Length,
    /// The payout follows the commanded length exactly (kinematic winch).
    Ideal,
    /// Commanded tensions applied directly; negative values are ignored.
    Tension,
    /// The drives' velocity loops on commanded payout rates (robots with drives).
    Velocity,
    /// Commanded motor torques, saturated at each drive's limit (robots with drives).
    Torque,
}

impl ControlMode {
    /// Whether the mode drives the motors of a robot file's drives (velocity, torque).
    pub fn needs_drives(self) -> bool {
        matches!(self, ControlMode::Velocity | ControlMode::Torque)
    }

    /// What a command of the mode carries, in messages ("lengths", "payout rates", …).
    pub fn command_kind(self) -> &'static str {
        match self {
            ControlMode::Length | ControlMode::Ideal => "lengths",
            ControlMode::Tension => "tensions",
            ControlMode::Velocity => "payout rates",
            ControlMode::Torque => "torques",
        }
    }
}

crate::named_choice!(ControlMode, "winch mode", {
    Length => "length", "a PID drive tracks the commanded lengths within the winch limits (like the real axes)";
    Ideal => "ideal", "the payout follows the commanded length exactly (isolates the cable elasticity)";
    Tension => "tension", "commanded tensions from seed 001's feedback-linearising controller, negative values ignored";
    Velocity => "velocity", "the drives' velocity loops on payout rates (the controller closes the position loop; robots with drives)";
    Torque => "torque", "commanded motor torques: the trajectory's feed-forward plus a weak feedback (robots with drives)";
});

#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Fixed step, s.
    pub dt: f64,
    pub model: ModelKind,
    pub control: ControlMode,
    pub chain: ChainConfig,
    /// The surrogate's parameters (`model = surrogate`).
    pub surrogate: Option<SurrogateSetup>,
    /// Elastic model: point masses per cable of nonzero density (0: massless straight
    /// cables). See [`models::elastic`]'s lumped cables.
    pub cable_nodes: usize,
}

impl SimConfig {
    /// `model` driven by `control` at the step `dt`, the chain's settings at their defaults
    /// and no surrogate.
    pub fn new(model: ModelKind, control: ControlMode, dt: f64) -> SimConfig {
        SimConfig {
            dt,
            model,
            control,
            chain: ChainConfig::default(),
            surrogate: None,
            cable_nodes: 0,
        }
    }
}

/// What the controller asks of the winches.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Cable payout (unstretched length from exit point to platform anchor), m, per cable.
    Lengths(Vec<f64>),
    /// Cable tensions, N, per cable (negative values are applied as zero).
    Tensions(Vec<f64>),
    /// Payout rates, m/s, per cable (velocity mode: the drives' velocity loops).
    Velocities(Vec<f64>),
    /// Motor torques, N·m, per cable (torque mode; saturated at each drive's limit).
    Torques(Vec<f64>),
}

impl Command {
    /// The values, whatever they command.
    pub fn values(&self) -> &[f64] {
        match self {
            Command::Lengths(v)
            | Command::Tensions(v)
            | Command::Velocities(v)
            | Command::Torques(v) => v,
        }
    }

    /// What the command carries, as [`ControlMode::command_kind`] says it.
    pub fn kind(&self) -> &'static str {
        match self {
            Command::Lengths(_) => "lengths",
            Command::Tensions(_) => "tensions",
            Command::Velocities(_) => "payout rates",
            Command::Torques(_) => "torques",
        }
    }
}

/// Everything observable after a step (SI, world axes).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct SimState {
    pub time: f64,
    pub step: u64,
    pub pose: Pose,
    /// Velocity of the platform origin (m/s) and angular velocity (rad/s), world axes.
    pub twist: [f64; 6],
    /// Winch payout (cable rest length), m.
    pub winch: Vec<f64>,
    /// Geometric cable length |a_i − p_i|, m.
    pub lengths: Vec<f64>,
    /// Tension from the cable's spring stretch and damper (k·e + c·ė, ≥ 0), N: the tension
    /// at the platform anchor (platform side of the pulley).
    pub tensions: Vec<f64>,
    /// Tension on the winch side of each pulley, N: the tension where the cable leaves its
    /// pulley towards the platform times the capstan ratio e^{−μβ·tanh(v/v₀)} of the wrap at
    /// this pose and the winch's payout rate ([`capstan`]). Equal to `tensions` without pulley
    /// friction and without cable mass; robots with legs: equal to `tensions`.
    pub winch_tensions: Vec<f64>,
    /// Robots with drives (else empty), per cable: the motor's torque (N·m: the drive's in
    /// length, velocity and torque mode; in ideal and tension mode the torque the motion
    /// takes, J·θ̈ + friction − ρ·T_w), its velocity (rad/s, growing as the cable pays out)
    /// and the following error (m: set point minus payout in length mode, else 0).
    pub motor_torques: Vec<f64>,
    pub motor_velocities: Vec<f64>,
    pub following_errors: Vec<f64>,
    /// Tension seen by the solver: the chain's closure-joint impulses divided by the step
    /// (equal to `tensions` in the elastic model). The two must agree.
    pub tensions_constraint: Vec<f64>,
    /// |W f + w_g − d(momentum)/dt|: Newton–Euler residual of the last step (N, N·m), with
    /// the reported tensions (elastic model: over the step's second half kick, whose tensions
    /// those are).
    pub wrench_residual: f64,
}

impl SimState {
    /// Time zero, at rest at `pose`, with `actuators` winch/actuator values and `channels`
    /// lengths and tensions (cables, or legs), all zero.
    fn at_rest(pose: Pose, actuators: usize, channels: usize, drives: usize) -> SimState {
        SimState {
            time: 0.0,
            step: 0,
            pose,
            twist: [0.0; 6],
            winch: vec![0.0; actuators],
            lengths: vec![0.0; channels],
            tensions: vec![0.0; channels],
            winch_tensions: vec![0.0; channels],
            motor_torques: vec![0.0; drives],
            motor_velocities: vec![0.0; drives],
            following_errors: vec![0.0; drives],
            tensions_constraint: vec![0.0; channels],
            wrench_residual: 0.0,
        }
    }
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SimError {
    #[error("command has {got} values but the robot has {expected} cables")]
    CommandCount { expected: usize, got: usize },
    #[error("command for cable {cable} ({name}) is not a finite number: {value}")]
    BadCommand {
        cable: usize,
        name: String,
        value: f64,
    },
    #[error("a command of {given} does not fit winch mode `{}`, which takes {}", mode.name(), mode.command_kind())]
    WrongCommand {
        given: &'static str,
        mode: ControlMode,
    },
    #[error("dt must be between {min} and {max} s, got {0}", min = DT_RANGE.0, max = DT_RANGE.1)]
    BadStep(f64),
    #[error("simulation blew up at step {step} (t = {time:.4} s): {what}")]
    BlowUp { step: u64, time: f64, what: String },
    #[error("cannot start: {0}")]
    Start(String),
}

/// A running simulation of one robot: the drive stage, the physical model and the state it
/// writes back.
pub struct Sim {
    robot: Robot,
    config: SimConfig,
    drive: DriveStage,
    model: Box<dyn PhysicalModel>,
    /// The pose the current command was computed for, when the caller said (pose-driven
    /// models use it; the others ignore it).
    demand: Option<Pose>,
    state: SimState,
    /// Whether a pulley has friction (the winch-side tensions need the wrap), and the winch
    /// payouts before the step (their rates).
    friction: bool,
    winch_before: Vec<f64>,
    /// Robots with drives, in the modes whose payout the model imposes (ideal, tension): the
    /// payouts before the step and their rates over the last one, for the motors' velocities
    /// and accelerations.
    drive_before: Vec<f64>,
    drive_rates: Vec<f64>,
}

/// Speeds beyond which a run is declared blown up (m/s, rad/s).
const MAX_SPEED: f64 = 100.0;
const MAX_SPIN: f64 = 1000.0;

impl Sim {
    /// A simulation of `robot` at rest at its home pose: winches pre-tensioned so that the
    /// platform sits exactly there (tension mode: the distribution's tensions).
    pub fn new(robot: &Robot, config: SimConfig) -> Result<Sim, SimError> {
        Sim::at(robot, config, &Pose::from_array(robot.home))
    }

    /// Like [`Sim::new`], at rest at `pose`.
    pub fn at(robot: &Robot, config: SimConfig, pose: &Pose) -> Result<Sim, SimError> {
        Sim::holding(robot, config, pose, None)
    }

    /// At rest where `command` holds the platform, searched from `pose` (None: the model's own
    /// start command, which holds it exactly at `pose`: pre-tensioned winches, or the tension
    /// distribution). The platform is settled once.
    pub fn holding(
        robot: &Robot,
        config: SimConfig,
        pose: &Pose,
        command: Option<&Command>,
    ) -> Result<Sim, SimError> {
        if !(config.dt >= DT_RANGE.0 && config.dt <= DT_RANGE.1) {
            return Err(SimError::BadStep(config.dt));
        }
        let pose = kinematics::effective_pose(robot, pose);
        let built = models::build(robot, &config, &pose)?;
        let mut sim = Sim {
            robot: robot.clone(),
            drive: DriveStage::new(config.control, built.actuators, built.travel),
            config,
            model: built.model,
            demand: Some(built.pose),
            state: SimState::at_rest(
                built.pose,
                built.actuators,
                built.channels,
                robot.drives.len(),
            ),
            friction: capstan::has_friction(robot),
            winch_before: vec![0.0; built.actuators],
            drive_before: vec![0.0; robot.drives.len()],
            drive_rates: vec![0.0; robot.drives.len()],
        };
        sim.settle(command.unwrap_or(&built.start))?;
        Ok(sim)
    }

    /// The name of command channel k (a cable, or an actuator of a robot with legs).
    fn channel_name(&self, k: usize) -> String {
        match self.robot.cables.get(k) {
            Some(c) => c.name.clone(),
            None => format!("actuator {}", k + 1),
        }
    }

    /// For robots with legs: per leg the points to draw it through (world, m) — its base,
    /// every joint centre, its end on the platform. Empty for cable robots (a cable is the
    /// segment from its frame anchor to its platform anchor).
    pub fn leg_polylines(&self) -> Vec<Vec<nalgebra::Vector3<f64>>> {
        self.model.leg_polylines()
    }

    pub fn robot(&self) -> &Robot {
        &self.robot
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    pub fn state(&self) -> &SimState {
        &self.state
    }

    /// Steps whose demand the model pulled back into the robot's reach since the last
    /// settle (the surrogate's combination step).
    pub fn limited_steps(&self) -> u64 {
        self.model.limited_steps()
    }

    /// Puts the platform at rest where `command` holds it: the elastic equilibrium of the
    /// commanded lengths, or the current pose for tensions and rigid legs. Winch drives start
    /// holding their load. Time and step count are kept.
    pub fn settle(&mut self, command: &Command) -> Result<(), SimError> {
        // The modes that drive the motors (velocity, torque) settle where lengths hold the
        // platform: their drives then start holding it (at rest, or with the holding torques).
        if self.config.control.needs_drives() && matches!(command, Command::Lengths(_)) {
            self.check_count_and_values(command.values())?;
        } else {
            self.check_command(command)?;
        }
        let pose =
            self.model
                .rest_pose(&self.robot, command, &self.state.pose, self.demand.as_ref())?;
        let actuators = match command {
            Command::Lengths(v) => v.clone(),
            _ => kinematics::lengths(&self.robot, &pose),
        };
        self.drive.settle(command, &actuators);
        self.model
            .place(&self.robot, &pose, &actuators, &self.drive.hold())?;
        self.model.write_back(&self.robot, &mut self.state, None);
        self.fill_winch_tensions(None);
        match self.config.control {
            ControlMode::Torque => self.drive.set_values(&self.state.motor_torques),
            ControlMode::Velocity => self.drive.set_values(&vec![0.0; self.drive.actuators()]),
            _ => {}
        }
        self.drive_rates.iter_mut().for_each(|r| *r = 0.0);
        Ok(())
    }

    fn check_command(&self, command: &Command) -> Result<(), SimError> {
        self.check_values(command.values(), command.kind())
    }

    /// Checks the values of a command carrying `kind` ([`Command::kind`]).
    fn check_values(&self, values: &[f64], kind: &'static str) -> Result<(), SimError> {
        self.check_count_and_values(values)?;
        if kind != self.config.control.command_kind() {
            return Err(SimError::WrongCommand {
                given: kind,
                mode: self.config.control,
            });
        }
        Ok(())
    }

    /// One finite value per actuator.
    fn check_count_and_values(&self, values: &[f64]) -> Result<(), SimError> {
        if values.len() != self.drive.actuators() {
            return Err(SimError::CommandCount {
                expected: self.drive.actuators(),
                got: values.len(),
            });
        }
        if let Some((k, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(SimError::BadCommand {
                cable: k + 1,
                name: self.channel_name(k),
                value: *v,
            });
        }
        Ok(())
    }

    /// Moves the platform to `pose` at rest by hand, keeping the winches and the command
    /// (the next steps show how the cables react: slack, pulling back, ...).
    pub fn place(&mut self, pose: &Pose) -> Result<(), SimError> {
        let pose = kinematics::effective_pose(&self.robot, pose);
        self.model.move_platform(&self.robot, &pose)?;
        self.model.write_back(&self.robot, &mut self.state, None);
        self.fill_winch_tensions(None);
        Ok(())
    }

    /// Total mechanical energy (kinetic, elastic, gravitational), J, where the model can
    /// tell (the elastic model).
    pub fn energy(&self) -> Option<f64> {
        self.model.energy()
    }

    /// Sets the command used by the following steps. Actuators with a travel (robots with
    /// legs) get it clamped into their travel.
    pub fn set_command(&mut self, command: &Command) -> Result<(), SimError> {
        self.check_command(command)?;
        self.drive.set_command(command);
        self.demand = None;
        Ok(())
    }

    /// [`Sim::set_command`] with lengths, borrowed: a caller that computes a command every
    /// step (the ADS shadow) fills one buffer rather than building a [`Command`] each time.
    pub fn set_command_lengths(&mut self, lengths: &[f64]) -> Result<(), SimError> {
        self.check_values(lengths, "lengths")?;
        self.drive.set_values(lengths);
        self.demand = None;
        Ok(())
    }

    /// Like [`Sim::set_command`], saying which pose the command was computed for (a
    /// trajectory sample): the surrogate filters that pose instead of the forward kinematics
    /// of the lengths; the physical models ignore it.
    pub fn set_command_for(&mut self, command: &Command, pose: &Pose) -> Result<(), SimError> {
        self.set_command(command)?;
        self.demand = Some(*pose);
        Ok(())
    }

    /// Advances the simulation by one step of `config.dt`: drive stage, model step, state
    /// written back, blow-up guard.
    pub fn step(&mut self) -> Result<(), SimError> {
        let dt = self.config.dt;
        let actuation = self.drive.actuate(dt, &self.robot.winch);
        let imposed = self.robot.has_drives()
            && matches!(
                self.config.control,
                ControlMode::Ideal | ControlMode::Tension
            );
        if self.friction {
            self.winch_before.copy_from_slice(&self.state.winch);
        }
        if imposed {
            self.drive_before.copy_from_slice(&self.state.winch);
        }
        self.model
            .step(&self.robot, &actuation, self.demand.as_ref(), dt);
        self.state.step += 1;
        self.state.time = self.state.step as f64 * dt;
        self.model
            .write_back(&self.robot, &mut self.state, Some(dt));
        self.fill_winch_tensions(Some(dt));
        if imposed {
            self.imposed_motor_torques(dt);
        }
        self.guard()
    }

    /// The torques the motion takes where the model imposes the payout (ideal and tension
    /// mode): τ = J·θ̈ + b·θ̇ + τ_c·tanh(θ̇/ω₀) − ρ·T_w, θ̈ over the step.
    fn imposed_motor_torques(&mut self, dt: f64) {
        let s = &mut self.state;
        for (k, drive) in self.robot.drives.iter().enumerate() {
            let rho = drive.payout_per_radian();
            let rate = (s.winch[k] - self.drive_before[k]) / dt;
            let omega = rate / rho;
            let alpha = (rate - self.drive_rates[k]) / dt / rho;
            self.drive_rates[k] = rate;
            s.motor_velocities[k] = omega;
            s.motor_torques[k] = drive.torque_for(omega, alpha, s.winch_tensions[k]);
            s.following_errors[k] = 0.0;
        }
    }

    /// The winch-side tensions of the state just written back ([`SimState::winch_tensions`]):
    /// the model's tensions where the cables leave their pulleys, times the capstan ratio of
    /// the wrap at the state's pose and the payout rate over the step (`stepped`: its dt;
    /// None: at rest, ratio 1).
    fn fill_winch_tensions(&mut self, stepped: Option<f64>) {
        let s = &mut self.state;
        let exit = self.model.exit_tensions().unwrap_or(&s.tensions);
        if !self.friction || !self.robot.is_cable_robot() {
            s.winch_tensions.copy_from_slice(exit);
            return;
        }
        let geometry = kinematics::InverseKinematics::at_actual_pose(&self.robot, &s.pose).cables;
        // Payout rates over the step (the winch positions before and after it).
        for (before, &now) in self.winch_before.iter_mut().zip(&s.winch) {
            *before = match stepped {
                Some(dt) => (now - *before) / dt,
                None => 0.0,
            };
        }
        capstan::winch_tensions(
            &self.robot,
            &geometry,
            exit,
            &self.winch_before,
            &mut s.winch_tensions,
        );
    }

    fn guard(&self) -> Result<(), SimError> {
        let s = &self.state;
        let blow = |what: String| SimError::BlowUp {
            step: s.step,
            time: s.time,
            what,
        };
        let finite = s
            .pose
            .to_array()
            .iter()
            .chain(&s.twist)
            .all(|x| x.is_finite());
        if !finite {
            return Err(blow("the platform state is not finite (NaN)".into()));
        }
        let channel = |k: usize| match self.robot.cables.get(k) {
            Some(c) => format!("cable {} ({})", k + 1, c.name),
            None => format!("leg {}", k + 1),
        };
        if let Some((k, _)) = s.tensions.iter().enumerate().find(|(_, f)| !f.is_finite()) {
            let what = if self.robot.is_cable_robot() {
                format!("tension of {} is not finite", channel(k))
            } else {
                format!("force in {} is not finite", channel(k))
            };
            return Err(blow(what));
        }
        let v = (s.twist[0].powi(2) + s.twist[1].powi(2) + s.twist[2].powi(2)).sqrt();
        let w = (s.twist[3].powi(2) + s.twist[4].powi(2) + s.twist[5].powi(2)).sqrt();
        if v > MAX_SPEED || w > MAX_SPIN {
            return Err(blow(format!("runaway velocity: {v:.1} m/s, {w:.1} rad/s")));
        }
        if let Some((k, drift)) = self.model.worst_gap()
            && drift > models::rapier::MAX_DRIFT
        {
            return Err(blow(format!(
                "constraint drift {:.2} mm at {} exceeds {} mm",
                drift * 1e3,
                channel(k),
                models::rapier::MAX_DRIFT * 1e3
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
