//! The interface every physical model implements, so that [`Sim`](super::Sim) — and through
//! it `cdpr simulate`, the ADS shadow and the viewer — steps any of them the same way, in
//! bevy_rapier's order: the drive stage turns the command into an [`Actuation`] (sync), the
//! model steps under it (step), and the model writes what it computed into the
//! [`SimState`] (write-back).

use super::{Command, SimError, SimState};
use crate::kinematics::Pose;
use crate::robot::Robot;
use nalgebra::Vector3;

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
        super::elastic_rest_pose(robot, command, guess)
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
