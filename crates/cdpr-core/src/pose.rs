//! Platform pose and its rotation convention.

use nalgebra::{Isometry3, Matrix3, Rotation3, Translation3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// Platform pose: position of the platform origin (m) and roll, pitch, yaw (rad) with
/// R = Rz(yaw)·Ry(pitch)·Rx(roll).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Pose {
    pub position: Vector3<f64>,
    /// (roll, pitch, yaw), rad.
    pub rpy: Vector3<f64>,
}

impl Pose {
    pub fn new(x: f64, y: f64, z: f64, roll: f64, pitch: f64, yaw: f64) -> Pose {
        Pose {
            position: Vector3::new(x, y, z),
            rpy: Vector3::new(roll, pitch, yaw),
        }
    }

    pub fn from_position(p: Vector3<f64>) -> Pose {
        Pose {
            position: p,
            rpy: Vector3::zeros(),
        }
    }

    pub fn from_array(a: [f64; 6]) -> Pose {
        Pose::new(a[0], a[1], a[2], a[3], a[4], a[5])
    }

    pub fn to_array(&self) -> [f64; 6] {
        let (p, r) = (self.position, self.rpy);
        [p.x, p.y, p.z, r.x, r.y, r.z]
    }

    /// R = Rz(yaw)·Ry(pitch)·Rx(roll) (nalgebra's `from_euler_angles` is exactly this).
    pub fn rotation(&self) -> Rotation3<f64> {
        Rotation3::from_euler_angles(self.rpy.x, self.rpy.y, self.rpy.z)
    }

    pub fn world_from_platform(&self) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::from(self.position),
            UnitQuaternion::from_rotation_matrix(&self.rotation()),
        )
    }

    /// The pose with this position and rotation, angles recovered in the same convention:
    /// nalgebra's `Rotation3::euler_angles` without its divisions by cos(pitch), which atan2
    /// does not need (cos(pitch) > 0 away from gimbal lock) — one libm call fewer, which
    /// counts in the elastic model's step.
    pub fn from_rotation(position: Vector3<f64>, rotation: &Rotation3<f64>) -> Pose {
        let r = rotation.matrix();
        let rpy = if r[(2, 0)].abs() < 1.0 {
            let roll = r[(2, 1)].atan2(r[(2, 2)]);
            let yaw = r[(1, 0)].atan2(r[(0, 0)]);
            Vector3::new(roll, -r[(2, 0)].asin(), yaw)
        } else {
            // Gimbal lock: nalgebra's choice (yaw 0, all of the angle in roll).
            let (roll, pitch, yaw) = rotation.euler_angles();
            Vector3::new(roll, pitch, yaw)
        };
        Pose { position, rpy }
    }

    /// Pose of an isometry, angles recovered in the same convention.
    pub fn from_isometry(iso: &Isometry3<f64>) -> Pose {
        Pose::from_rotation(iso.translation.vector, &iso.rotation.to_rotation_matrix())
    }

    /// Maps roll/pitch/yaw rates to the angular velocity in world axes: ω = E(rpy)·d(rpy)/dt,
    /// E = [Rz·Ry·e_x, Rz·e_y, e_z].
    pub fn angular_rate_matrix(&self) -> Matrix3<f64> {
        let (pitch, yaw) = (self.rpy.y, self.rpy.z);
        let (sp, cp) = pitch.sin_cos();
        let (sy, cy) = yaw.sin_cos();
        Matrix3::new(cy * cp, -sy, 0.0, sy * cp, cy, 0.0, -sp, 0.0, 1.0)
    }

    /// Largest position (m) and angle (rad) difference between two poses.
    pub fn distance(&self, other: &Pose) -> (f64, f64) {
        let dp = (self.position - other.position).amax();
        let dr = (self.rpy - other.rpy).map(wrap_angle).amax();
        (dp, dr)
    }
}

/// Largest roll, pitch or yaw given in radians that is taken without a word: one turn (2π).
/// Beyond it an angle in radians is pointless (the same rotation as its remainder) and almost
/// always a number meant in degrees (`90` for a quarter turn).
pub const ONE_TURN: f64 = std::f64::consts::TAU;

/// A hint when angles given in radians (roll, pitch, yaw: the entries after x, y, z of
/// `pose_values`) exceed one turn in magnitude: "yaw 90 rad: did you mean {degrees}?", where
/// `degrees` is how the caller's face asks for degrees (`--degrees`, `degrees=True`). None when
/// every angle is within a turn.
pub fn radians_beyond_a_turn(pose_values: &[f64], degrees: &str) -> Option<String> {
    const NAMES: [&str; 3] = ["roll", "pitch", "yaw"];
    let big: Vec<String> = pose_values
        .iter()
        .skip(3)
        .zip(NAMES)
        .filter(|(a, _)| a.abs() > ONE_TURN)
        .map(|(a, name)| format!("{name} {a} rad"))
        .collect();
    (!big.is_empty()).then(|| format!("{}: did you mean {degrees}?", big.join(", ")))
}

/// Wraps an angle to (−π, π].
pub fn wrap_angle(a: f64) -> f64 {
    let two_pi = std::f64::consts::TAU;
    let mut w = a.rem_euclid(two_pi);
    if w > std::f64::consts::PI {
        w -= two_pi;
    }
    w
}

/// Largest |x|, |y|, |z| of a pose a user gives, m (no robot is a kilometre wide).
pub const POSITION_LIMIT_M: f64 = 1e3;
/// Largest |roll|, |pitch|, |yaw| of a pose a user gives: 360, in degrees or radians (one turn
/// either way in degrees, and more than enough in radians).
pub const ANGLE_LIMIT: f64 = 360.0;

/// The coordinates' names, in [`Pose::to_array`] order.
pub const COORDINATES: [&str; 6] = ["x", "y", "z", "roll", "pitch", "yaw"];

/// Why numbers a user gave are not a pose.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PoseError {
    #[error("expected 3 (x,y,z) or 6 (x,y,z,roll,pitch,yaw) numbers, got {0}")]
    Count(usize),
    #[error("{coordinate} must be between -{limit} and {limit}{unit}, got {}{}", crate::text::short(*value),
        if *unit == " m" { " (millimetres? poses are in metres)" } else { "" })]
    OutOfRange {
        coordinate: &'static str,
        value: f64,
        limit: f64,
        unit: &'static str,
    },
}

impl Pose {
    /// The pose a user gave as 3 (x, y, z; no rotation) or 6 numbers, positions in m and
    /// angles in degrees when `degrees`, else radians; each within [`POSITION_LIMIT_M`] and
    /// [`ANGLE_LIMIT`] (and finite).
    pub fn from_user(values: &[f64], degrees: bool) -> Result<Pose, PoseError> {
        if values.len() != 3 && values.len() != 6 {
            return Err(PoseError::Count(values.len()));
        }
        let mut a = [0.0; 6];
        for (k, &v) in values.iter().enumerate() {
            let (limit, unit) = if k < 3 {
                (POSITION_LIMIT_M, " m")
            } else if degrees {
                (ANGLE_LIMIT, "°")
            } else {
                (ANGLE_LIMIT, " rad")
            };
            if !(v.is_finite() && v.abs() <= limit) {
                return Err(PoseError::OutOfRange {
                    coordinate: COORDINATES[k],
                    value: v,
                    limit,
                    unit,
                });
            }
            a[k] = if k >= 3 && degrees { v.to_radians() } else { v };
        }
        Ok(Pose::from_array(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn rotation_is_rz_ry_rx() {
        let pose = Pose::new(0.0, 0.0, 0.0, 0.3, -0.2, 0.7);
        let rx = Rotation3::from_axis_angle(&Vector3::x_axis(), 0.3);
        let ry = Rotation3::from_axis_angle(&Vector3::y_axis(), -0.2);
        let rz = Rotation3::from_axis_angle(&Vector3::z_axis(), 0.7);
        assert_relative_eq!(
            pose.rotation().matrix(),
            (rz * ry * rx).matrix(),
            epsilon = 1e-14
        );
    }

    #[test]
    fn angular_rate_matrix_matches_finite_differences() {
        let pose = Pose::new(0.0, 0.0, 0.0, 0.4, 0.3, -0.8);
        let rates = Vector3::new(0.7, -0.2, 0.5);
        let h = 1e-6;
        let mut next = pose;
        next.rpy += rates * h;
        let mut prev = pose;
        prev.rpy -= rates * h;
        // dR/dt · Rᵀ = [ω]×
        let rdot = (next.rotation().matrix() - prev.rotation().matrix()) / (2.0 * h);
        let skew = rdot * pose.rotation().matrix().transpose();
        let omega_fd = Vector3::new(skew[(2, 1)], skew[(0, 2)], skew[(1, 0)]);
        assert_relative_eq!(pose.angular_rate_matrix() * rates, omega_fd, epsilon = 1e-8);
    }

    #[test]
    fn angles_from_a_rotation_match_nalgebra() {
        for (roll, pitch, yaw) in [
            (0.0, 0.0, 0.0),
            (0.3, -0.2, 0.7),
            (-2.9, 1.2, -3.0),
            (1.0, -1.55, 2.0),
            (0.4, std::f64::consts::FRAC_PI_2, -0.3),
        ] {
            let rotation = Rotation3::from_euler_angles(roll, pitch, yaw);
            let (r, p, y) = rotation.euler_angles();
            let pose = Pose::from_rotation(Vector3::zeros(), &rotation);
            assert_relative_eq!(pose.rpy, Vector3::new(r, p, y), epsilon = 1e-12);
        }
    }

    #[test]
    fn angles_beyond_a_turn_in_radians_ask_for_degrees() {
        let hint = |v: &[f64]| radians_beyond_a_turn(v, "--degrees");
        assert_eq!(
            hint(&[0.0, 0.0, 0.15, 0.0, 0.0, 90.0]).as_deref(),
            Some("yaw 90 rad: did you mean --degrees?")
        );
        assert_eq!(
            hint(&[0.0, 0.0, 0.15, -45.0, 0.1, 7.0]).as_deref(),
            Some("roll -45 rad, yaw 7 rad: did you mean --degrees?")
        );
        // Within a turn either way (2π itself included), and positions never count.
        let turn = std::f64::consts::TAU;
        assert_eq!(hint(&[500.0, 0.0, 0.15, turn, -turn, 3.0]), None);
        assert_eq!(hint(&[0.0, 0.0, 90.0]), None);
        assert!(hint(&[0.0, 0.0, 0.0, 0.0, 6.3, 0.0]).is_some());
    }

    #[test]
    fn isometry_round_trip() {
        let pose = Pose::new(0.1, -0.2, 0.3, 0.2, -0.4, 1.2);
        let back = Pose::from_isometry(&pose.world_from_platform());
        let (dp, dr) = pose.distance(&back);
        assert!(dp < 1e-14 && dr < 1e-12);
    }
}
