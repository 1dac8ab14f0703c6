//! The one place where SI meets the controller's units (mm, degrees), for poses: the symbols
//! hold x, y, z in mm and roll, pitch, yaw in degrees.

use cdpr_core::kinematics::Pose;

/// A pose as the controller holds it: [x, y, z] mm, [roll, pitch, yaw] degrees.
pub fn pose_to_plc(pose: &Pose) -> [f64; 6] {
    let a = pose.to_array();
    [
        a[0] * 1e3,
        a[1] * 1e3,
        a[2] * 1e3,
        a[3].to_degrees(),
        a[4].to_degrees(),
        a[5].to_degrees(),
    ]
}

/// The inverse of [`pose_to_plc`]; `a` holds at least 6 values (missing ones read as 0).
pub fn pose_from_plc(a: &[f64]) -> Pose {
    let v = |k: usize| a.get(k).copied().unwrap_or(0.0);
    Pose::new(
        v(0) / 1e3,
        v(1) / 1e3,
        v(2) / 1e3,
        v(3).to_radians(),
        v(4).to_radians(),
        v(5).to_radians(),
    )
}

/// Metres to millimetres, element-wise.
pub fn to_mm(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    values.into_iter().map(|v| v * 1e3).collect()
}

/// Millimetres to metres, element-wise.
pub fn from_mm(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    values.into_iter().map(|v| v / 1e3).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pose_round_trips_through_plc_units() {
        let p = Pose::new(0.1, -0.2, 0.3, 0.01, -0.02, 0.5);
        let plc = pose_to_plc(&p);
        assert_eq!(plc[0], 100.0);
        assert!((plc[5] - 28.64788975654116).abs() < 1e-12);
        let back = pose_from_plc(&plc);
        let (dp, da) = back.distance(&p);
        assert!(dp < 1e-15 && da < 1e-15);
    }
}
