//! Inverse kinematics, Jacobians and the wrench matrix (seed 000 eqs. 1–3, seed 001 eqs. 2–4).
//!
//! Conventions: l_i = a_i − (r + R b_i) points from the platform anchor to the frame anchor,
//! d_i = l_i/|l_i|, and column i of the wrench matrix is [d_i; (R b_i) × d_i], so that the
//! cables' wrench about the platform origin is W f. The length Jacobian with respect to the
//! twist (ṙ, ω) is J = −Wᵀ.

pub mod capstan;
mod fk;
pub mod legs;
pub mod pulley;
pub mod solutions;

pub use crate::pose::{ONE_TURN, Pose, radians_beyond_a_turn, wrap_angle};
pub use fk::{
    FkError, FkMethod, FkOptions, FkRequest, FkSolution, OPTIONS as FK_OPTIONS, forward,
    forward_lm, forward_sphere,
};
pub use solutions::{AngleUnit, FkReport, IkReport, fk_report, ik_report, pose_warnings};

pub use pulley::PulleyGeometry;

use crate::robot::{Cable, Dof, Mechanism, Robot};
use nalgebra::{DMatrix, Matrix3, Vector3};
use serde::Serialize;

/// One cable's geometry at a pose.
///
/// Without a pulley the cable runs straight from its frame anchor a_i to its platform
/// anchor. Over a swivel pulley ([`pulley`]) its free segment runs from the tangent point
/// c_i instead, and everything that uses the cable's direction uses that free segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CableGeometry {
    /// The free segment, platform anchor → exit point: l_i = a_i − (r + R b_i) without a
    /// pulley, c_i − (r + R b_i) over one, m.
    pub vector: Vector3<f64>,
    /// The cable's length from the swivel point: |l_i|, plus the wrapped length r β over a
    /// pulley, m.
    pub length: f64,
    /// d_i = l_i / |l_i| (zero for a zero-length cable).
    pub direction: Vector3<f64>,
    /// R b_i: platform anchor relative to the platform origin, world axes, m.
    pub arm: Vector3<f64>,
    /// The pulley's swivel, wrap and tangent point, when the cable has one.
    pub pulley: Option<PulleyGeometry>,
}

impl CableGeometry {
    pub fn new(cable: &Cable, position: &Vector3<f64>, rotation: &Matrix3<f64>) -> CableGeometry {
        let arm = rotation * cable.platform_anchor;
        let Some(p) = &cable.pulley else {
            let vector = cable.frame_anchor - position - arm;
            let length = vector.norm();
            let direction = if length > 1e-12 {
                vector / length
            } else {
                Vector3::zeros()
            };
            return CableGeometry {
                vector,
                length,
                direction,
                arm,
                pulley: None,
            };
        };
        let anchor = position + arm;
        let g = pulley::wrap(p, &cable.frame_anchor, &anchor);
        let vector = g.tangent - anchor;
        let direction = if g.free_length > 1e-12 {
            vector / g.free_length
        } else {
            Vector3::zeros()
        };
        CableGeometry {
            vector,
            length: g.wrapped_length + g.free_length,
            direction,
            arm,
            pulley: Some(g),
        }
    }

    /// Length of the free (straight) segment, m: the length without a pulley.
    pub fn free_length(&self) -> f64 {
        self.pulley.map_or(self.length, |p| p.free_length)
    }

    /// Where the free segment leaves the frame: the tangent point over a pulley, else the
    /// frame anchor (world frame, m).
    pub fn exit_point(&self, platform_anchor_world: &Vector3<f64>) -> Vector3<f64> {
        platform_anchor_world + self.vector
    }

    /// Moment of a unit tension about the platform origin: (R b_i) × d_i.
    pub fn moment_arm(&self) -> Vector3<f64> {
        self.arm.cross(&self.direction)
    }

    /// Seed 000's cable angles (eqs. 2–3).
    pub fn angles(&self) -> CableAngles {
        CableAngles::of(&self.vector)
    }

    /// Row of ∂L_i/∂q for q = (x, y, z, roll, pitch, yaw), given E(rpy) (see
    /// [`Pose::angular_rate_matrix`]): [−d_iᵀ, −((R b_i) × d_i)ᵀ E].
    pub fn pose_gradient(&self, rate_matrix: &Matrix3<f64>) -> [f64; 6] {
        let m = rate_matrix.transpose() * self.moment_arm();
        let d = self.direction;
        [-d.x, -d.y, -d.z, -m.x, -m.y, -m.z]
    }
}

/// Seed 000's cable angles, rad: θz the elevation of l_i above the XY plane (eq. 2), θx and θy
/// the angles of its horizontal projection with the X and Y axes (eq. 3). For a vertical cable
/// the projection vanishes; then θz = π/2 and θx = θy = π/2 by convention.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CableAngles {
    pub theta_z: f64,
    pub theta_x: f64,
    pub theta_y: f64,
}

impl CableAngles {
    pub fn of(l: &Vector3<f64>) -> CableAngles {
        let half_pi = std::f64::consts::FRAC_PI_2;
        let horizontal = (l.x * l.x + l.y * l.y).sqrt();
        let length = l.norm();
        if horizontal < 1e-12 || length < 1e-12 {
            return CableAngles {
                theta_z: half_pi,
                theta_x: half_pi,
                theta_y: half_pi,
            };
        }
        // l·l_xy = |l_xy|², so eq. 2 is arccos(|l_xy| / |l|); clamp against rounding.
        let acos = |c: f64| c.clamp(-1.0, 1.0).acos();
        CableAngles {
            theta_z: acos(horizontal / length),
            theta_x: acos(l.x / horizontal),
            theta_y: acos(l.y / horizontal),
        }
    }
}

/// Inverse kinematics of every cable at a pose.
#[derive(Debug, Clone, PartialEq)]
pub struct InverseKinematics {
    pub pose: Pose,
    pub dof: Dof,
    pub cables: Vec<CableGeometry>,
}

/// The pose a robot actually takes: 3-DOF robots hold the orientation at zero.
pub fn effective_pose(robot: &Robot, pose: &Pose) -> Pose {
    match robot.dof {
        Dof::Six => *pose,
        Dof::Three => Pose::from_position(pose.position),
    }
}

/// Longest cable length a user may give, m.
pub const MAX_LENGTH: f64 = 1.0e4;

/// Why lengths a user gave do not fit the robot.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LengthsError {
    #[error("{given} lengths given but the robot has {cables} cables")]
    Count { given: usize, cables: usize },
    #[error(
        "item {item} must be a length in (0, {}] m, got {}",
        crate::text::short(MAX_LENGTH),
        crate::text::short(*value)
    )]
    OutOfRange { item: usize, value: f64 },
}

/// Cable lengths a user gave for `robot`: one per cable, each positive and at most
/// [`MAX_LENGTH`].
pub fn check_lengths(robot: &Robot, values: &[f64]) -> Result<(), LengthsError> {
    if values.len() != robot.cables.len() {
        return Err(LengthsError::Count {
            given: values.len(),
            cables: robot.cables.len(),
        });
    }
    match values
        .iter()
        .enumerate()
        .find(|(_, v)| !(**v > 0.0 && **v <= MAX_LENGTH))
    {
        Some((k, &value)) => Err(LengthsError::OutOfRange { item: k + 1, value }),
        None => Ok(()),
    }
}

/// The actuator coordinates that put the platform at `pose`, and whether the pose was taken as
/// given: a cable robot's IK lengths (m); a robot with legs its mechanism's inverse
/// kinematics (carriage positions, m, or crank angles, rad), a pose out of reach first pulled
/// back towards the neutral pose by seed 004's proportional bisection (then `false`).
pub fn actuator_positions(robot: &Robot, pose: &Pose) -> (Vec<f64>, bool) {
    match &robot.mechanism {
        Mechanism::Cables => (lengths(robot, pose), true),
        Mechanism::LinearDelta { delta, .. } => {
            let reachable = |p: &Vector3<f64>| delta.inverse(p).is_ok();
            if reachable(&pose.position) {
                let d = delta.actuators(&pose.position).unwrap_or([0.0; 3]);
                return (d.to_vec(), true);
            }
            let step = pose.position - delta.neutral;
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..50 {
                let mid = 0.5 * (lo + hi);
                if reachable(&(delta.neutral + step * mid)) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let d = delta
                .actuators(&(delta.neutral + step * lo))
                .unwrap_or([0.0; 3]);
            (d.to_vec(), false)
        }
        Mechanism::Rssu2(r) => {
            let (roll, pitch) = r.combine(pose.rpy.x, pose.rpy.y, 1e-9);
            let clipped = roll != pose.rpy.x || pitch != pose.rpy.y;
            let angles = r.inverse(roll, pitch).unwrap_or([0.0; 2]);
            (angles.to_vec(), !clipped)
        }
    }
}

/// Inverse kinematics (seed 000 eq. 1). For a 3-DOF robot the orientation is taken as zero.
pub fn inverse(robot: &Robot, pose: &Pose) -> InverseKinematics {
    InverseKinematics::at_actual_pose(robot, &effective_pose(robot, pose))
}

/// Cable lengths only (m), without allocation beyond the result.
pub fn lengths(robot: &Robot, pose: &Pose) -> Vec<f64> {
    inverse(robot, pose).lengths()
}

impl InverseKinematics {
    /// Inverse kinematics at the pose exactly as given, also for a 3-DOF robot (whose platform
    /// physically tilts even though its controller holds the orientation at zero).
    pub fn at_actual_pose(robot: &Robot, pose: &Pose) -> InverseKinematics {
        let rotation = pose.rotation();
        let cables = robot
            .cables
            .iter()
            .map(|c| CableGeometry::new(c, &pose.position, rotation.matrix()))
            .collect();
        InverseKinematics {
            pose: *pose,
            dof: robot.dof,
            cables,
        }
    }

    pub fn lengths(&self) -> Vec<f64> {
        self.cables.iter().map(|c| c.length).collect()
    }

    pub fn directions(&self) -> Vec<Vector3<f64>> {
        self.cables.iter().map(|c| c.direction).collect()
    }

    pub fn angles(&self) -> Vec<CableAngles> {
        self.cables.iter().map(CableGeometry::angles).collect()
    }

    /// Full 6×m wrench matrix, column i = [d_i; (R b_i) × d_i].
    pub fn wrench_matrix_full(&self) -> DMatrix<f64> {
        let mut w = DMatrix::zeros(6, self.cables.len());
        for (i, c) in self.cables.iter().enumerate() {
            let m = c.moment_arm();
            w.column_mut(i).copy_from_slice(&[
                c.direction.x,
                c.direction.y,
                c.direction.z,
                m.x,
                m.y,
                m.z,
            ]);
        }
        w
    }

    /// Wrench matrix restricted to the controlled degrees of freedom: 6×m, or 3×m (force rows)
    /// for a 3-DOF robot.
    pub fn wrench_matrix(&self) -> DMatrix<f64> {
        let full = self.wrench_matrix_full();
        full.rows(0, self.dof.count()).into_owned()
    }

    /// Length Jacobian with respect to the twist (ṙ, ω): J = −Wᵀ, m×6 (m×3 for 3 DOF).
    pub fn twist_jacobian(&self) -> DMatrix<f64> {
        -self.wrench_matrix().transpose()
    }

    /// ∂L/∂q for q = (x, y, z, roll, pitch, yaw), m×6 (m×3 for 3 DOF: q = (x, y, z)).
    pub fn pose_jacobian(&self) -> DMatrix<f64> {
        let e = self.pose.angular_rate_matrix();
        let n = self.dof.count();
        let mut j = DMatrix::zeros(self.cables.len(), n);
        for (i, c) in self.cables.iter().enumerate() {
            let row = c.pose_gradient(&e);
            for k in 0..n {
                j[(i, k)] = row[k];
            }
        }
        j
    }
}

#[cfg(test)]
mod pulley_tests;
#[cfg(test)]
mod tests;
