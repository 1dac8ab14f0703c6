//! What `cdpr ik` computes for the robots with legs (seed 002's linear delta, seed 004's
//! 2-RSSU): their actuator positions at a pose, as a serialisable struct (the `--json`).

use super::{AngleUnit, Pose};
use crate::robot::{Mechanism, Robot};
use serde::Serialize;

/// Actuator positions of a robot with legs at a pose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LegsIk {
    pub robot: String,
    /// Angles in the unit asked for.
    pub pose: [f64; 6],
    /// Rail positions (m, linear delta) or crank angles (2-RSSU, in the unit asked for);
    /// for an unreachable pose what could still be computed.
    pub actuators: Option<Vec<f64>>,
    pub actuator_unit: &'static str,
    pub reachable: bool,
    /// The constraint the pose violates.
    pub violation: Option<String>,
}

/// Inverse kinematics of a linear delta or a 2-RSSU.
pub fn legs_ik(robot: &Robot, pose: &Pose, unit: AngleUnit) -> LegsIk {
    let (actuators, violation, actuator_unit) = match &robot.mechanism {
        Mechanism::LinearDelta { delta, .. } => match delta.inverse(&pose.position) {
            Ok(ik) => (Some(ik.actuators.to_vec()), None, "m"),
            Err(v) => (
                delta.actuators(&pose.position).map(|d| d.to_vec()),
                Some(v.to_string()),
                "m",
            ),
        },
        Mechanism::Rssu2(r) => match r.inverse(pose.rpy.x, pose.rpy.y) {
            Ok(a) => (
                Some(a.iter().map(|x| unit.from_rad(*x)).collect()),
                None,
                unit.name(),
            ),
            Err(v) => (None, Some(v.to_string()), unit.name()),
        },
        Mechanism::Cables => (None, None, ""),
    };
    LegsIk {
        robot: robot.name.clone(),
        pose: unit.pose(pose),
        actuators,
        actuator_unit,
        reachable: violation.is_none(),
        violation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ik_of_the_rssu2_at_rest_is_reachable_and_degrees_scale_radians() {
        let robot = crate::fixtures::robot("rssu2");
        let rest = Pose::new(0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        let rad = legs_ik(&robot, &rest, AngleUnit::Rad);
        let deg = legs_ik(&robot, &rest, AngleUnit::Deg);
        assert!(rad.reachable && rad.violation.is_none());
        let (a, b) = (
            rad.actuators.expect("angles"),
            deg.actuators.expect("angles"),
        );
        assert_eq!(a.len(), 2);
        for (r, d) in a.iter().zip(&b) {
            assert!((r.to_degrees() - d).abs() < 1e-9);
        }
        assert_eq!((rad.actuator_unit, deg.actuator_unit), ("rad", "deg"));
    }
}
