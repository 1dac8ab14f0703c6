//! The drive stage: what the winch modes do to a command before the physical model sees it.
//! `ideal` passes the commanded positions through with their rates; `length` shapes them
//! within the robot's velocity, acceleration and jerk limits (the model then closes a PID
//! loop on the shaped set points); `tension` passes the pulls through; `velocity` passes the
//! payout rates through within the winch's velocity limit and `torque` the torques (each
//! drive saturates its own). Actuators with a
//! travel (a linear delta's carriages, a 2-RSSU's cranks) never get a command beyond it.

use super::models::Actuation;
use super::winch::SetpointShaper;
use super::{Command, ControlMode};
use crate::robot::Winch;

#[derive(Debug, Clone)]
pub(crate) struct DriveStage {
    mode: ControlMode,
    /// The command of the following steps (positions or tensions), within the travel.
    command: Vec<f64>,
    /// The positions handed to the model last: set points (`length`), commands (`ideal`),
    /// and their rates.
    positions: Vec<f64>,
    rates: Vec<f64>,
    shapers: Vec<SetpointShaper>,
    /// Actuator travel [min, max] (empty: unlimited).
    travel: Vec<[f64; 2]>,
}

impl DriveStage {
    pub fn new(mode: ControlMode, actuators: usize, travel: Vec<[f64; 2]>) -> DriveStage {
        DriveStage {
            mode,
            command: vec![0.0; actuators],
            positions: vec![0.0; actuators],
            rates: vec![0.0; actuators],
            shapers: Vec::new(),
            travel,
        }
    }

    pub fn actuators(&self) -> usize {
        self.command.len()
    }

    /// Settles on `command` with the actuators at rest at `positions`.
    pub fn settle(&mut self, command: &Command, positions: &[f64]) {
        self.command.copy_from_slice(command.values());
        self.positions.copy_from_slice(positions);
        self.rates.iter_mut().for_each(|r| *r = 0.0);
        self.shapers = positions.iter().map(|&p| SetpointShaper::at(p)).collect();
    }

    /// Takes `command` for the following steps (checked by the caller).
    pub fn set_command(&mut self, command: &Command) {
        self.set_values(command.values());
    }

    /// [`DriveStage::set_command`] from the values alone (checked by the caller).
    pub fn set_values(&mut self, values: &[f64]) {
        self.command.copy_from_slice(values);
        for (c, [lo, hi]) in self.command.iter_mut().zip(&self.travel) {
            *c = c.clamp(*lo, *hi);
        }
    }

    /// What holds the actuators where `settle` put them.
    pub fn hold(&self) -> Actuation<'_> {
        match self.mode {
            ControlMode::Tension => Actuation::Pull(&self.command),
            ControlMode::Velocity => Actuation::Rate(&self.command),
            ControlMode::Torque => Actuation::Torque(&self.command),
            ControlMode::Ideal => Actuation::Follow {
                positions: &self.positions,
                rates: &self.rates,
            },
            ControlMode::Length => Actuation::Servo {
                set_points: &self.positions,
                rates: &self.rates,
            },
        }
    }

    /// This step's actuation.
    pub fn actuate(&mut self, dt: f64, limits: &Winch) -> Actuation<'_> {
        match self.mode {
            ControlMode::Tension | ControlMode::Torque => return self.hold(),
            ControlMode::Velocity => {
                let v = limits.max_velocity;
                self.command.iter_mut().for_each(|c| *c = c.clamp(-v, v));
            }
            ControlMode::Ideal => {
                for ((position, rate), &command) in self
                    .positions
                    .iter_mut()
                    .zip(&mut self.rates)
                    .zip(&self.command)
                {
                    *rate = (command - *position) / dt;
                    *position = command;
                }
            }
            ControlMode::Length => {
                for (k, shaper) in self.shapers.iter_mut().enumerate() {
                    self.positions[k] = shaper.update(self.command[k], dt, limits);
                    self.rates[k] = shaper.velocity;
                }
            }
        }
        self.hold()
    }
}
