//! The physics core: one platform, m cables, stepped at a fixed dt by whoever owns it.
//!
//! Model vs. state as in MuJoCo: a [`Robot`] is the immutable model; a [`Sim`] holds the
//! changing state and steps it: `Sim::new(robot, config)`, `set_command`, `step`, `state`.
//! It knows nothing of windows or sockets; the CLI, the ADS shadow and the viewer all drive
//! this same type. Two physical models share the interface:
//! - `chain` ([`chain`]): seed 000's per-cable joint chain in Rapier (universal at a_i,
//!   active prismatic winch, passive prismatic spring-damper, spherical closure on the
//!   platform);
//! - `elastic` ([`elastic`]): the platform as the only body, each cable a unilateral
//!   spring-damper force (the fast mode and the chain's cross-check).
//!
//! and three winch modes: `ideal` (the payout follows the command exactly), `length` (a PID
//! drive with the robot's velocity/acceleration/jerk limits) and `tension` (commanded
//! tensions, negatives clipped to zero, as in seed 001).

mod chain;
pub mod control;
pub mod driver;
mod elastic;
mod legs;
pub mod run;
pub mod winch;

pub use chain::ChainConfig;

use crate::kinematics::{self, Pose};
use crate::robot::Robot;
use crate::statics::{self, EquilibriumOptions};
use elastic::{CableDrive, ElasticModel};
use serde::Serialize;
use winch::{PidWinch, SetpointShaper};

/// Which physical model to step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Per-cable joint chains in Rapier (seed 000's construction).
    Chain,
    /// Platform-only rigid body with unilateral spring-damper cables (fast).
    Elastic,
}

/// How the winches are driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ControlMode {
    /// PID drive tracking commanded lengths within the winch limits.
    Length,
    /// The payout follows the commanded length exactly (kinematic winch).
    Ideal,
    /// Commanded tensions applied directly; negative values are ignored.
    Tension,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimConfig {
    /// Fixed step, s.
    pub dt: f64,
    pub model: ModelKind,
    pub control: ControlMode,
    pub chain: ChainConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            dt: 1e-3,
            model: ModelKind::Elastic,
            control: ControlMode::Ideal,
            chain: ChainConfig::default(),
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
}

/// Everything observable after a step (SI, world axes).
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// Tension from the cable's spring stretch and damper (k·e + c·ė, ≥ 0), N.
    pub tensions: Vec<f64>,
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
    fn at_rest(pose: Pose, actuators: usize, channels: usize) -> SimState {
        SimState {
            time: 0.0,
            step: 0,
            pose,
            twist: [0.0; 6],
            winch: vec![0.0; actuators],
            lengths: vec![0.0; channels],
            tensions: vec![0.0; channels],
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
    #[error("a {given} command does not fit control mode `{mode:?}`")]
    WrongCommand {
        given: &'static str,
        mode: ControlMode,
    },
    #[error("dt must be a positive number of seconds up to 0.01, got {0}")]
    BadStep(f64),
    #[error("simulation blew up at step {step} (t = {time:.4} s): {what}")]
    BlowUp { step: u64, time: f64, what: String },
    #[error("cannot start: {0}")]
    Start(String),
}

// The elastic model stays inline: it is the hot path, stepped hundreds of thousands of times a second.
#[allow(clippy::large_enum_variant)]
enum Model {
    Elastic(ElasticModel),
    Chain(Box<chain::ChainModel>),
    /// A robot with rigid legs (linear delta, 2-RSSU): the same chain construction.
    Legs(Box<legs::LegModel>),
}

/// Per-cable drive state of `length` mode.
#[derive(Debug)]
struct Drive {
    shaper: SetpointShaper,
    pid: PidWinch,
}

/// A running simulation of one robot.
pub struct Sim {
    robot: Robot,
    config: SimConfig,
    model: Model,
    /// Current command (lengths or tensions, per the mode).
    command: Vec<f64>,
    /// Rest lengths of the last step and their rates (ideal and length modes).
    rest: Vec<f64>,
    rest_rate: Vec<f64>,
    drives: Vec<Drive>,
    /// Robots with legs: the actuators' travel [min, max]; commands are clamped into it.
    limits: Vec<[f64; 2]>,
    state: SimState,
    // Scratch for the residual.
    prev_velocity: nalgebra::Vector6<f64>,
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
        if !(config.dt > 0.0 && config.dt <= 0.01) {
            return Err(SimError::BadStep(config.dt));
        }
        let pose = kinematics::effective_pose(robot, pose);
        if !robot.is_cable_robot() {
            return Sim::legs_at(robot, config, &pose);
        }
        let m = robot.cable_count();
        let model = match config.model {
            ModelKind::Elastic => Model::Elastic(ElasticModel::new(robot, &pose)),
            ModelKind::Chain => {
                Model::Chain(Box::new(chain::ChainModel::new(robot, &pose, &config)?))
            }
        };
        let mut sim = Sim {
            robot: robot.clone(),
            config,
            model,
            command: vec![0.0; m],
            rest: vec![0.0; m],
            rest_rate: vec![0.0; m],
            drives: Vec::new(),
            limits: Vec::new(),
            state: SimState::at_rest(pose, m, m),
            prev_velocity: nalgebra::Vector6::zeros(),
        };
        let start = match config.control {
            ControlMode::Tension => {
                let d = statics::tension_distribution(robot, &pose, robot.tension);
                Command::Tensions(d.tensions)
            }
            _ => match statics::pretensioned_rest_lengths(robot, &pose, robot.tension) {
                Ok((rest, _)) => Command::Lengths(rest),
                Err(_) => Command::Lengths(kinematics::lengths(robot, &pose)),
            },
        };
        sim.settle(&start)?;
        Ok(sim)
    }

    /// A robot with legs at rest at `pose` (its actuators where the inverse kinematics puts
    /// them); only the Rapier chain model and position-driven actuators apply.
    fn legs_at(robot: &Robot, config: SimConfig, pose: &Pose) -> Result<Sim, SimError> {
        if config.model != ModelKind::Chain {
            return Err(SimError::Start(format!(
                "{} has rigid legs: only the `chain` model (its Rapier joint chains) applies, not `{:?}`",
                robot.name, config.model
            ).to_lowercase()));
        }
        if config.control == ControlMode::Tension {
            return Err(SimError::Start(format!(
                "{} has rigid legs: its actuators take positions (ideal or length mode), not tensions",
                robot.name
            )));
        }
        let pose = match &robot.mechanism {
            crate::robot::Mechanism::Rssu2(_) => {
                Pose::new(0.0, 0.0, 0.0, pose.rpy.x, pose.rpy.y, 0.0)
            }
            _ => *pose,
        };
        let model = legs::LegModel::new(robot, &pose, &config)?;
        let (m, n) = (model.actuator_count(), model.leg_count());
        let mut start = vec![0.0; m];
        model.fill(&mut start, &mut vec![0.0; n], &mut vec![0.0; n]);
        let mut sim = Sim {
            robot: robot.clone(),
            config,
            model: Model::Legs(Box::new(model)),
            command: start.clone(),
            rest: start.clone(),
            rest_rate: vec![0.0; m],
            drives: Vec::new(),
            limits: match &robot.mechanism {
                crate::robot::Mechanism::LinearDelta { delta, .. } => vec![delta.stroke; m],
                crate::robot::Mechanism::Rssu2(r) => vec![r.crank_limits; m],
                crate::robot::Mechanism::Cables => Vec::new(),
            },
            state: SimState::at_rest(pose, m, n),
            prev_velocity: nalgebra::Vector6::zeros(),
        };
        sim.settle(&Command::Lengths(start))?;
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
        match &self.model {
            Model::Legs(model) => model.polylines(),
            _ => Vec::new(),
        }
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

    /// Puts the platform at rest where `command` holds it: the elastic equilibrium of the
    /// commanded lengths, or the current pose for tensions. Winch drives start holding their
    /// load. Time and step count are kept.
    pub fn settle(&mut self, command: &Command) -> Result<(), SimError> {
        self.check_command(command)?;
        if let Model::Legs(model) = &mut self.model {
            // Rigid legs: no elastic statics; the platform stays where it is, the drives take
            // the command as their start.
            let Command::Lengths(values) = command else {
                return Err(SimError::WrongCommand {
                    given: "tensions",
                    mode: self.config.control,
                });
            };
            self.command.copy_from_slice(values);
            self.rest.copy_from_slice(values);
            self.rest_rate.iter_mut().for_each(|r| *r = 0.0);
            self.drives = values
                .iter()
                .map(|&v| Drive {
                    shaper: SetpointShaper::at(v),
                    pid: PidWinch::at(v),
                })
                .collect();
            **model = legs::LegModel::new(&self.robot, &self.state.pose, &self.config)?;
            self.prev_velocity = nalgebra::Vector6::zeros();
            self.observe(0.0);
            return Ok(());
        }
        let pose = match command {
            Command::Lengths(rest) => {
                let options = EquilibriumOptions {
                    guess: Some(self.state.pose),
                    ..Default::default()
                };
                statics::elastic_equilibrium(&self.robot, rest, &options)
                    .map_err(|e| {
                        SimError::Start(format!(
                            "no static equilibrium for the commanded lengths: {e}"
                        ))
                    })?
                    .pose
            }
            Command::Tensions(_) => self.state.pose,
        };
        let values = match command {
            Command::Lengths(v) | Command::Tensions(v) => v.clone(),
        };
        self.command.copy_from_slice(&values);
        let rest = match command {
            Command::Lengths(v) => v.clone(),
            Command::Tensions(_) => kinematics::lengths(&self.robot, &pose),
        };
        self.rest.copy_from_slice(&rest);
        self.rest_rate.iter_mut().for_each(|r| *r = 0.0);
        let lengths = kinematics::lengths(&self.robot, &pose);
        self.drives = self
            .robot
            .cables
            .iter()
            .zip(&rest)
            .zip(&lengths)
            .map(|((c, &l0), &l)| {
                let tension = c.stiffness_at(l0) * (l - l0).max(0.0);
                Drive {
                    shaper: SetpointShaper::at(l0),
                    pid: PidWinch::holding(l0, tension, &self.robot.winch),
                }
            })
            .collect();
        match &mut self.model {
            Model::Elastic(e) => e.set_pose(&pose),
            Model::Chain(c) => c.place(&pose, &rest, &self.robot)?,
            Model::Legs(_) => unreachable!("legs are settled above"),
        }
        self.prev_velocity = nalgebra::Vector6::zeros();
        self.observe(0.0);
        Ok(())
    }

    fn check_command(&self, command: &Command) -> Result<(), SimError> {
        let (values, kind) = match command {
            Command::Lengths(v) => (v, "lengths"),
            Command::Tensions(v) => (v, "tensions"),
        };
        if values.len() != self.command.len() {
            return Err(SimError::CommandCount {
                expected: self.command.len(),
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
        let fits = matches!(
            (command, self.config.control),
            (Command::Tensions(_), ControlMode::Tension)
                | (
                    Command::Lengths(_),
                    ControlMode::Ideal | ControlMode::Length
                )
        );
        if !fits {
            return Err(SimError::WrongCommand {
                given: kind,
                mode: self.config.control,
            });
        }
        Ok(())
    }

    /// Moves the platform to `pose` at rest by hand, keeping the winches and the command
    /// (the next steps show how the cables react: slack, pulling back, ...).
    pub fn place(&mut self, pose: &Pose) -> Result<(), SimError> {
        let pose = kinematics::effective_pose(&self.robot, pose);
        match &mut self.model {
            Model::Elastic(e) => e.set_pose(&pose),
            Model::Chain(c) => c.place(&pose, &self.rest, &self.robot)?,
            Model::Legs(l) => **l = legs::LegModel::new(&self.robot, &pose, &self.config)?,
        }
        self.prev_velocity = nalgebra::Vector6::zeros();
        self.observe(0.0);
        Ok(())
    }

    /// Total mechanical energy of the elastic model (kinetic, elastic, gravitational), J;
    /// None for the chain model.
    pub fn energy(&self) -> Option<f64> {
        match &self.model {
            Model::Elastic(e) => Some(e.energy(&self.rest)),
            Model::Chain(_) | Model::Legs(_) => None,
        }
    }

    /// Sets the command used by the following steps.
    pub fn set_command(&mut self, command: &Command) -> Result<(), SimError> {
        self.check_command(command)?;
        match command {
            Command::Lengths(v) | Command::Tensions(v) => self.command.copy_from_slice(v),
        }
        // Actuators of robots with legs never leave their travel (rail stroke, crank stops).
        for (c, [lo, hi]) in self.command.iter_mut().zip(&self.limits) {
            *c = c.clamp(*lo, *hi);
        }
        Ok(())
    }

    /// Advances the simulation by one step of `config.dt`.
    pub fn step(&mut self) -> Result<(), SimError> {
        let dt = self.config.dt;
        match (&mut self.model, self.config.control) {
            (Model::Elastic(model), ControlMode::Tension) => {
                model.step(&CableDrive::Tension(&self.command), dt)
            }
            (Model::Elastic(model), ControlMode::Ideal) => {
                for ((rest, rate), &command) in self
                    .rest
                    .iter_mut()
                    .zip(&mut self.rest_rate)
                    .zip(&self.command)
                {
                    *rate = (command - *rest) / dt;
                    *rest = command;
                }
                model.step(
                    &CableDrive::Rest {
                        lengths: &self.rest,
                        rates: &self.rest_rate,
                    },
                    dt,
                );
            }
            (Model::Elastic(model), ControlMode::Length) => {
                let geometry = model.lengths().zip(model.length_rates());
                for ((k, drive), (length, length_rate)) in
                    self.drives.iter_mut().enumerate().zip(geometry)
                {
                    let cable = &self.robot.cables[k];
                    let before = drive.pid.position;
                    let set_point = drive.shaper.update(self.command[k], dt, &self.robot.winch);
                    let stiffness = cable.stiffness_at(before);
                    let taut = length > before;
                    drive.pid.step(
                        set_point,
                        drive.shaper.velocity,
                        length,
                        length_rate,
                        stiffness,
                        cable.damping,
                        taut,
                        &self.robot.winch,
                        dt,
                    );
                    self.rest[k] = drive.pid.position;
                    self.rest_rate[k] = drive.pid.velocity;
                }
                model.step(
                    &CableDrive::Rest {
                        lengths: &self.rest,
                        rates: &self.rest_rate,
                    },
                    dt,
                );
            }
            (Model::Chain(model), mode) => {
                let drive = match mode {
                    ControlMode::Tension => chain::ChainDrive::Tension(&self.command),
                    ControlMode::Ideal => chain::ChainDrive::Kinematic(&self.command),
                    ControlMode::Length => {
                        for (k, drive) in self.drives.iter_mut().enumerate() {
                            self.rest[k] =
                                drive.shaper.update(self.command[k], dt, &self.robot.winch);
                            self.rest_rate[k] = drive.shaper.velocity;
                        }
                        chain::ChainDrive::Pid {
                            set_points: &self.rest,
                            rates: &self.rest_rate,
                        }
                    }
                };
                model.step(&drive, &self.robot, dt);
            }
            (Model::Legs(model), ControlMode::Length) => {
                for (k, drive) in self.drives.iter_mut().enumerate() {
                    self.rest[k] = drive.shaper.update(self.command[k], dt, &self.robot.winch);
                    self.rest_rate[k] = drive.shaper.velocity;
                }
                model.step(&self.rest, Some(&self.rest_rate), dt);
            }
            (Model::Legs(model), _) => model.step(&self.command, None, dt),
        }
        self.state.step += 1;
        self.state.time = self.state.step as f64 * dt;
        self.observe(dt);
        self.guard()
    }

    /// Fills the state from the model; `dt` > 0 also computes the wrench residual.
    fn observe(&mut self, dt: f64) {
        let s = &mut self.state;
        match &self.model {
            Model::Elastic(model) => {
                s.pose = model.pose();
                s.twist = model.twist();
                for (length, l) in s.lengths.iter_mut().zip(model.lengths()) {
                    *length = l;
                }
                if dt > 0.0 {
                    s.tensions.copy_from_slice(&model.tensions);
                } else {
                    // Not stepped yet: the static spring tensions of the current state.
                    for (k, cable) in self.robot.cables.iter().enumerate() {
                        s.tensions[k] = match self.config.control {
                            ControlMode::Tension => self.command[k].max(0.0),
                            _ => {
                                cable.stiffness_at(self.rest[k])
                                    * (s.lengths[k] - self.rest[k]).max(0.0)
                            }
                        };
                    }
                }
                s.tensions_constraint.copy_from_slice(&s.tensions);
                s.winch.copy_from_slice(&self.rest);
                s.wrench_residual = if dt > 0.0 { model.residual } else { 0.0 };
            }
            Model::Legs(model) => {
                s.pose = model.pose();
                s.twist = model.twist();
                model.fill(&mut s.winch, &mut s.lengths, &mut s.tensions);
                s.tensions_constraint.copy_from_slice(&s.tensions);
                // The leg forces are read from the closures; no cable wrench to balance.
                s.wrench_residual = 0.0;
                self.prev_velocity = model.com_velocity();
            }
            Model::Chain(model) => {
                let before = s.pose;
                s.pose = model.pose();
                s.twist = model.twist();
                model.fill_cables(
                    &mut s.winch,
                    &mut s.lengths,
                    &mut s.tensions,
                    &mut s.tensions_constraint,
                );
                let velocity_com = model.com_velocity();
                s.wrench_residual = if dt > 0.0 {
                    newton_euler_residual(
                        &self.robot,
                        &before,
                        &s.tensions,
                        &self.prev_velocity,
                        &velocity_com,
                        model.orientation(),
                        dt,
                    )
                } else {
                    0.0
                };
                self.prev_velocity = velocity_com;
            }
        }
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
        if let Some((k, _)) = s.tensions.iter().enumerate().find(|(_, f)| !f.is_finite()) {
            let what = match self.robot.cables.get(k) {
                Some(c) => format!("tension of cable {} ({}) is not finite", k + 1, c.name),
                None => format!("force in leg {} is not finite", k + 1),
            };
            return Err(blow(what));
        }
        let v = (s.twist[0].powi(2) + s.twist[1].powi(2) + s.twist[2].powi(2)).sqrt();
        let w = (s.twist[3].powi(2) + s.twist[4].powi(2) + s.twist[5].powi(2)).sqrt();
        if v > MAX_SPEED || w > MAX_SPIN {
            return Err(blow(format!("runaway velocity: {v:.1} m/s, {w:.1} rad/s")));
        }
        if let Model::Chain(model) = &self.model
            && let Some((k, drift)) = model.worst_drift()
            && drift > chain::MAX_DRIFT
        {
            return Err(blow(format!(
                "constraint drift {:.2} mm at cable {} ({}) exceeds {} mm",
                drift * 1e3,
                k + 1,
                self.robot.cables[k].name,
                chain::MAX_DRIFT * 1e3
            )));
        }
        if let Model::Legs(model) = &self.model
            && let Some((k, drift)) = model.worst_drift()
            && drift > chain::MAX_DRIFT
        {
            return Err(blow(format!(
                "constraint drift {:.2} mm at leg {} exceeds {} mm",
                drift * 1e3,
                k + 1,
                chain::MAX_DRIFT * 1e3
            )));
        }
        Ok(())
    }
}

/// Newton–Euler residual about the centre of mass for the tensions of the last step.
fn newton_euler_residual(
    robot: &Robot,
    pose: &Pose,
    tensions: &[f64],
    v0: &nalgebra::Vector6<f64>,
    v1: &nalgebra::Vector6<f64>,
    orientation: nalgebra::UnitQuaternion<f64>,
    dt: f64,
) -> f64 {
    let ik = kinematics::inverse(robot, pose);
    let com_arm = pose.rotation() * robot.platform.com;
    let mut force = nalgebra::Vector3::new(0.0, 0.0, -robot.platform.mass * crate::robot::GRAVITY);
    let mut torque = nalgebra::Vector3::zeros();
    for (g, f) in ik.cables.iter().zip(tensions) {
        force += g.direction * *f;
        torque += (g.arm - com_arm).cross(&g.direction) * *f;
    }
    let rot = orientation.to_rotation_matrix();
    let inertia = rot.matrix() * robot.platform.inertia * rot.matrix().transpose();
    let a = (v1.fixed_rows::<3>(0) - v0.fixed_rows::<3>(0)) / dt;
    let w0 = v0.fixed_rows::<3>(3).into_owned();
    let w1 = v1.fixed_rows::<3>(3).into_owned();
    let alpha = (w1 - w0) / dt;
    let lin = force - a * robot.platform.mass;
    let ang = torque - inertia * alpha - w1.cross(&(inertia * w1));
    (lin.norm_squared() + ang.norm_squared()).sqrt()
}

#[cfg(test)]
mod tests;
