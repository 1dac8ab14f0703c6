//! Controllers that turn a trajectory sample (and, for tension control, the measured state)
//! into a [`Command`].

use crate::kinematics::{self, Pose};
use crate::robot::{Dof, Robot, TensionBounds};
use crate::sim::{Command, SimState};
use crate::statics;
use crate::trajectory::Sample;
use nalgebra::{DVector, Rotation3, Vector3};

/// Length commands from inverse kinematics, optionally minus the pre-stretch f*/k of the
/// minimum-norm tension distribution so that elastic cables land the platform on target (for
/// a robot with cable mass: the catenary rest lengths, [`statics::heavy::catenary_rest_lengths`]).
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
    /// the uncompensated IK lengths are returned (and `false`). Robots with legs get their
    /// actuator coordinates ([`kinematics::actuator_positions`]; `false` when pulled back).
    pub fn lengths(&self, robot: &Robot, pose: &Pose) -> (Vec<f64>, bool) {
        let (positions, reachable) = kinematics::actuator_positions(robot, pose);
        if !robot.is_cable_robot() || !self.compensate {
            return (positions, reachable);
        }
        if robot.has_cable_mass() {
            // Cables with mass: the unstretched lengths that hold the platform on target with
            // every cable hanging as its catenary (statics::heavy).
            return match statics::heavy::catenary_rest_lengths(robot, pose, self.bounds) {
                Ok(h) => (h.rest_lengths, true),
                Err(_) => (positions, false),
            };
        }
        let dist = statics::tension_distribution(robot, pose, self.bounds);
        if !dist.feasible {
            return (positions, false);
        }
        (
            statics::rest_lengths_for(robot, &positions, &dist.tensions),
            true,
        )
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
    /// The default gains, seed 001's: Kp = 1500 1/s², Kd = 1500 1/s.
    pub const DEFAULT_KP: f64 = 1500.0;
    pub const DEFAULT_KD: f64 = 1500.0;

    pub fn command(&self, robot: &Robot, sample: &Sample, state: &SimState) -> Command {
        Command::Tensions(self.tensions(robot, sample, &state.pose, &state.twist))
    }

    /// The tensions for `sample` with the platform at `pose` moving at `twist` (origin
    /// velocity and angular velocity, world axes).
    pub fn tensions(
        &self,
        robot: &Robot,
        sample: &Sample,
        pose: &Pose,
        twist: &[f64; 6],
    ) -> Vec<f64> {
        let pose = *pose;
        let rotation = pose.rotation();
        let desired = kinematics::effective_pose(robot, &sample.pose);
        // Linear: acceleration of the platform origin.
        let e_p = desired.position - pose.position;
        let v = Vector3::new(twist[0], twist[1], twist[2]);
        let v_d = Vector3::new(sample.velocity[0], sample.velocity[1], sample.velocity[2]);
        let a_d = Vector3::new(
            sample.acceleration[0],
            sample.acceleration[1],
            sample.acceleration[2],
        );
        let a_o = a_d + e_p * self.kp + (v_d - v) * self.kd;
        // Angular: rotation-vector error, desired angular velocity/acceleration from the
        // roll/pitch/yaw rates (E(rpy)·rates; the Ė·rates term is neglected).
        let w = Vector3::new(twist[3], twist[4], twist[5]);
        let r_err: Rotation3<f64> = desired.rotation() * rotation.inverse();
        let e_r = r_err.scaled_axis();
        let e = desired.angular_rate_matrix();
        let w_d = e * Vector3::new(sample.velocity[3], sample.velocity[4], sample.velocity[5]);
        let dw_d = e * Vector3::new(
            sample.acceleration[3],
            sample.acceleration[4],
            sample.acceleration[5],
        );
        let alpha = match robot.dof {
            Dof::Six => dw_d + e_r * self.kp + (w_d - w) * self.kd,
            // An under-constrained platform cannot be held level: only damp its rotation and let
            // it settle where the cables' moments vanish (measured on silva4: a stiffness term
            // towards level leaves a steady position error of |R c|·|e_R| at the origin, and
            // dropping the term from the force makes the platform tumble).
            Dof::Three => -w * self.kd,
        };
        let p = &robot.platform;
        let r_c = rotation * p.com;
        let inertia = rotation.matrix() * p.inertia * rotation.matrix().transpose();
        let gravity = Vector3::new(0.0, 0.0, -p.mass * crate::robot::GRAVITY);
        // Cable force needed for origin acceleration a_o and angular acceleration α.
        let force = (a_o + alpha.cross(&r_c) + w.cross(&w.cross(&r_c))) * p.mass - gravity;
        let moment = inertia * alpha + w.cross(&(inertia * w)) + r_c.cross(&force);
        match robot.dof {
            Dof::Six => {
                let w_matrix = kinematics::inverse(robot, &pose).wrench_matrix();
                let target = DVector::from_column_slice(&[
                    force.x, force.y, force.z, moment.x, moment.y, moment.z,
                ]);
                statics::distribute_wrench(&w_matrix, &target, self.bounds).tensions
            }
            Dof::Three => {
                // Under-constrained: forces exactly, moments (about the origin, at the actual
                // orientation) in least squares, weighted by 1/arm² to compare N·m with N.
                let ik = kinematics::InverseKinematics::at_actual_pose(robot, &pose);
                let full = ik.wrench_matrix_full();
                let w_force = full.rows(0, 3).into_owned();
                let w_moment = full.rows(3, 3).into_owned();
                let arm = robot
                    .cables
                    .iter()
                    .map(|c| (c.platform_anchor - p.com).norm())
                    .fold(1e-3, f64::max);
                let f = DVector::from_column_slice(&[force.x, force.y, force.z]);
                let m = DVector::from_column_slice(&[moment.x, moment.y, moment.z]);
                statics::distribute_force_first(
                    &w_force,
                    &f,
                    &w_moment,
                    &m,
                    self.bounds,
                    1.0 / (arm * arm),
                )
                .unwrap_or_else(|| statics::distribute_wrench(&w_force, &f, self.bounds).tensions)
            }
        }
    }
}
