//! The per-step logic of a trajectory run, shared by every face that plays a trajectory:
//! sample the trajectory at the next step's time, turn the sample into a command (IK lengths,
//! compensated or not, or seed 001's tension controller), step the physics.
//!
//! [`run`](super::run) records every step of a [`Player`] headless; the viewer owns one and
//! advances it as many steps per frame as wall-clock time asks. Both therefore produce the
//! same states for the same inputs, step for step (`tests/cli/viewer_matches_simulate.rs` checks it).

use super::RunOptions;
use super::controllers::{FeedbackLinearization, LengthController};
use super::feedforward::{self, TorqueFeedforward};
use super::record::Record;
use crate::kinematics;
use crate::robot::Robot;
use crate::sim::{Command, ControlMode, Sim, SimError, SimState};
use crate::trajectory::{Sample, Trajectory};

/// A [`Sim`] playing a [`Trajectory`] through a controller, one fixed step at a time.
pub struct Player {
    trajectory: Trajectory,
    options: RunOptions,
    lengths_ctl: LengthController,
    tension_ctl: FeedbackLinearization,
    feedforward: TorqueFeedforward,
    sim: Sim,
    /// Time of the trajectory's first sample: step k plays the sample at t0 + k·dt.
    t0: f64,
    first: Sample,
    /// Steps taken since the start.
    step: u64,
    /// The sample and the command of the last step (of the start, before any step).
    commanded: Sample,
    command: Command,
    /// Tension mode: the IK lengths of the commanded pose; velocity and torque mode: the
    /// payouts the length mode would command (what the record shows as the length command);
    /// empty otherwise.
    ik_lengths: Vec<f64>,
    uncompensated: u64,
    /// Where the last step's sample was found in the trajectory.
    cursor: usize,
}

impl Player {
    /// The platform at rest where the trajectory's first command holds it (length and ideal
    /// modes: the elastic equilibrium of the commanded lengths; tension mode: the first pose).
    pub fn new(
        robot: &Robot,
        trajectory: Trajectory,
        options: &RunOptions,
    ) -> Result<Player, SimError> {
        let first = *trajectory
            .samples
            .first()
            .ok_or_else(|| SimError::Start("the trajectory is empty".into()))?;
        let t0 = first.t;
        let start_pose = kinematics::effective_pose(robot, &first.pose);
        let lengths_ctl = LengthController::new(robot, options.compensate);
        let tension_ctl = FeedbackLinearization {
            kp: options.kp,
            kd: options.kd,
            bounds: robot.tension,
        };
        // Settled once: where the first command holds the platform (tension mode: at the first
        // pose, held by the tension distribution).
        let (sim, command) = match options.config.control {
            ControlMode::Tension => {
                let sim = Sim::at(robot, options.config.clone(), &start_pose)?;
                let s = trajectory.sample_at(t0).unwrap_or(first);
                let command = tension_ctl.command(robot, &s, sim.state());
                (sim, command)
            }
            _ => {
                let command = Command::Lengths(lengths_ctl.lengths(robot, &start_pose).0);
                let sim = Sim::holding(robot, options.config.clone(), &start_pose, Some(&command))?;
                (sim, command)
            }
        };
        let ik_lengths = match command {
            Command::Tensions(_) => kinematics::lengths(robot, &first.pose),
            _ => Vec::new(),
        };
        let feedforward = TorqueFeedforward::new(robot, options.compensate);
        let mut player = Player {
            trajectory,
            options: options.clone(),
            lengths_ctl,
            tension_ctl,
            feedforward,
            sim,
            t0,
            first,
            step: 0,
            commanded: first,
            command,
            ik_lengths,
            uncompensated: 0,
            cursor: 0,
        };
        if options.config.control.needs_drives() {
            // Settled on lengths; the drives are then commanded from the first sample.
            let sample = Sample {
                pose: start_pose,
                ..player.trajectory.sample_at(t0).unwrap_or(first)
            };
            player.command = player.drive_command(&sample);
            player.sim.set_command(&player.command)?;
        }
        Ok(player)
    }

    /// Velocity and torque mode: the drives' command for `sample` from the torque
    /// feed-forward's demand (payouts, rates, torques) and the measured payouts.
    fn drive_command(&mut self, sample: &Sample) -> Command {
        let robot = self.sim.robot();
        let demand = self.feedforward.demand(robot, &self.trajectory, sample);
        let state = self.sim.state();
        let command = robot.drives.iter().enumerate().map(|(k, d)| {
            let payout = state.winch[k];
            let rate = state.motor_velocities[k] * d.payout_per_radian();
            match self.options.config.control {
                ControlMode::Velocity => {
                    feedforward::velocity_command(d, demand.payouts[k], demand.rates[k], payout)
                }
                _ => {
                    demand.torques[k]
                        + feedforward::weak_feedback(
                            d,
                            demand.payouts[k],
                            demand.rates[k],
                            payout,
                            rate,
                        )
                }
            }
        });
        let values = command.collect();
        self.ik_lengths = demand.payouts;
        match self.options.config.control {
            ControlMode::Velocity => Command::Velocities(values),
            _ => Command::Torques(values),
        }
    }

    /// Samples the trajectory at the next step's time and sets the command for it. Fails only
    /// on a command the physics refuses (non-finite, wrong count).
    pub fn command_next_step(&mut self) -> Result<(), SimError> {
        let robot = self.sim.robot();
        let t = self.t0 + (self.step + 1) as f64 * self.options.config.dt;
        let sample = self
            .trajectory
            .sample_from(t, &mut self.cursor)
            .unwrap_or(self.first);
        let sample = Sample {
            pose: kinematics::effective_pose(robot, &sample.pose),
            ..sample
        };
        let command = match self.options.config.control {
            ControlMode::Tension => {
                let command = self.tension_ctl.command(robot, &sample, self.sim.state());
                self.ik_lengths = kinematics::lengths(robot, &sample.pose);
                command
            }
            ControlMode::Velocity | ControlMode::Torque => self.drive_command(&sample),
            _ => {
                let (l, ok) = self.lengths_ctl.lengths(robot, &sample.pose);
                if !ok {
                    self.uncompensated += 1;
                }
                Command::Lengths(l)
            }
        };
        self.sim.set_command_for(&command, &sample.pose)?;
        self.commanded = sample;
        self.command = command;
        Ok(())
    }

    /// Steps the physics once with the command set by [`Player::command_next_step`]. A
    /// blow-up is returned; the state is then the one of the failed step.
    pub fn step_physics(&mut self) -> Result<(), SimError> {
        let result = self.sim.step();
        // The step is counted even when it failed: the clock never plays a sample twice.
        self.step += 1;
        result
    }

    /// One step: command, then physics.
    pub fn advance_one_step(&mut self) -> Result<(), SimError> {
        self.command_next_step()?;
        self.step_physics()
    }

    /// The last step (or the start) as a [`Record`], borrowed: nothing is copied.
    pub fn record(&self) -> Record<'_> {
        match &self.command {
            Command::Lengths(l) => Record {
                commanded: &self.commanded,
                length_command: l,
                tension_command: None,
                state: self.sim.state(),
            },
            Command::Tensions(t) => Record {
                commanded: &self.commanded,
                length_command: &self.ik_lengths,
                tension_command: Some(t),
                state: self.sim.state(),
            },
            Command::Velocities(_) | Command::Torques(_) => Record {
                commanded: &self.commanded,
                length_command: &self.ik_lengths,
                tension_command: None,
                state: self.sim.state(),
            },
        }
    }

    pub fn state(&self) -> &SimState {
        self.sim.state()
    }

    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    pub fn robot(&self) -> &Robot {
        self.sim.robot()
    }

    pub fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    pub fn options(&self) -> &RunOptions {
        &self.options
    }

    /// The trajectory sample of the last step (pose made effective for the robot's DOF).
    pub fn commanded(&self) -> &Sample {
        &self.commanded
    }

    /// The command of the last step.
    pub fn command(&self) -> &Command {
        &self.command
    }

    /// Steps taken since the start.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// Simulated time since the start, s (the trajectory's own clock minus its start time).
    pub fn elapsed(&self) -> f64 {
        self.step as f64 * self.options.config.dt
    }

    /// Steps whose compensation was infeasible and used plain IK lengths.
    pub fn uncompensated_steps(&self) -> u64 {
        self.uncompensated
    }
}
