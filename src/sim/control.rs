//! Controllers that turn a trajectory sample (and, for tension control, the measured state)
//! into a [`Command`].

use super::{Command, SimState};
use crate::kinematics::{self, Pose};
use crate::robot::{Dof, Robot, TensionBounds};
use crate::statics;
use crate::trajectory::Sample;
use nalgebra::{DVector, Rotation3, Vector3};

/// Length commands from inverse kinematics, optionally minus the pre-stretch f*/k of the
/// minimum-norm tension distribution so that elastic cables land the platform on target.
#[derive(Debug, Clone, Copy)]
pub struct LengthController {
    pub compensate: bool,
    pub bounds: TensionBounds,
}

impl LengthController {
    pub fn new(robot: &Robot, compensate: bool) -> LengthController {
        LengthController {
            compensate,
            bounds: robot.tension,
        }
    }

    /// Commanded payouts for a desired pose. When the distribution is infeasible at the pose
    /// the uncompensated IK lengths are returned (and `false`).
    pub fn lengths(&self, robot: &Robot, pose: &Pose) -> (Vec<f64>, bool) {
        let lengths = kinematics::lengths(robot, pose);
        if !self.compensate {
            return (lengths, true);
        }
        let dist = statics::tension_distribution(robot, pose, self.bounds);
        if !dist.feasible {
            return (lengths, false);
        }
        let rest = robot
            .cables
            .iter()
            .zip(&lengths)
            .zip(&dist.tensions)
            .map(|((c, &l), &f)| c.rest_length_for(l, f))
            .collect();
        (rest, true)
    }

    pub fn command(&self, robot: &Robot, sample: &Sample) -> Command {
        Command::Lengths(self.lengths(robot, &sample.pose).0)
    }
}

/// Seed 001's tension controller (eqs. 6–8): feedback linearisation of the platform dynamics
///     ẍ = ẍ_d + Kp (x_d − x) + Kd (ẋ_d − ẋ),
/// mapped to the wrench the cables must produce (Newton–Euler about the centre of mass,
/// moved to the platform origin), then to tensions by the minimum-norm distribution within
/// the bounds. Orientation errors use the rotation vector of R_d Rᵀ; a 3-DOF robot controls
/// the force rows only.
#[derive(Debug, Clone, Copy)]
pub struct FeedbackLinearization {
    pub kp: f64,
    pub kd: f64,
    pub bounds: TensionBounds,
}

impl FeedbackLinearization {
    /// Seed 001's gains Kp = Kd = 1500 with the robot's tension bounds.
    pub fn seed001(robot: &Robot) -> FeedbackLinearization {
        FeedbackLinearization {
            kp: 1500.0,
            kd: 1500.0,
            bounds: robot.tension,
        }
    }

    pub fn command(&self, robot: &Robot, sample: &Sample, state: &SimState) -> Command {
        let pose = state.pose;
        let rotation = pose.rotation();
        let desired = kinematics::effective_pose(robot, &sample.pose);
        // Linear: acceleration of the platform origin.
        let e_p = desired.position - pose.position;
        let v = Vector3::new(state.twist[0], state.twist[1], state.twist[2]);
        let v_d = Vector3::new(sample.velocity[0], sample.velocity[1], sample.velocity[2]);
        let a_d = Vector3::new(
            sample.acceleration[0],
            sample.acceleration[1],
            sample.acceleration[2],
        );
        let a_o = a_d + e_p * self.kp + (v_d - v) * self.kd;
        // Angular: rotation-vector error, desired angular velocity/acceleration from the
        // roll/pitch/yaw rates (E(rpy)·rates; the Ė·rates term is neglected).
        let w = Vector3::new(state.twist[3], state.twist[4], state.twist[5]);
        let (alpha, w_now) = match robot.dof {
            Dof::Six => {
                let r_err: Rotation3<f64> = desired.rotation() * rotation.inverse();
                let e_r = r_err.scaled_axis();
                let e = desired.angular_rate_matrix();
                let w_d =
                    e * Vector3::new(sample.velocity[3], sample.velocity[4], sample.velocity[5]);
                let dw_d = e * Vector3::new(
                    sample.acceleration[3],
                    sample.acceleration[4],
                    sample.acceleration[5],
                );
                (dw_d + e_r * self.kp + (w_d - w) * self.kd, w)
            }
            Dof::Three => (Vector3::zeros(), w),
        };
        let p = &robot.platform;
        let r_c = rotation * p.com;
        let a_c = a_o + alpha.cross(&r_c) + w_now.cross(&w_now.cross(&r_c));
        let gravity = Vector3::new(0.0, 0.0, -p.mass * crate::robot::GRAVITY);
        let force = a_c * p.mass - gravity;
        let inertia = rotation.matrix() * p.inertia * rotation.matrix().transpose();
        let moment = inertia * alpha + w_now.cross(&(inertia * w_now)) + r_c.cross(&force);
        let ik = kinematics::inverse(robot, &pose);
        let w_matrix = ik.wrench_matrix();
        let target = match robot.dof {
            Dof::Six => DVector::from_column_slice(&[
                force.x, force.y, force.z, moment.x, moment.y, moment.z,
            ]),
            Dof::Three => DVector::from_column_slice(&[force.x, force.y, force.z]),
        };
        Command::Tensions(statics::distribute_wrench(&w_matrix, &target, self.bounds).tensions)
    }
}
