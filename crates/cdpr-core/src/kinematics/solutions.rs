//! What `cdpr ik` and `cdpr fk` report: plain serialisable structs (their serde form is the
//! command's `--json`), with angles in the unit the user asked for and the warnings a user
//! should see. The command line only formats them.

use super::{FkError, FkMethod, FkOptions, Pose, forward_lm, forward_sphere};
use crate::robot::{Dof, Robot};
use serde::Serialize;

/// The unit angles are read and reported in at the user boundary (SI inside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AngleUnit {
    #[default]
    Rad,
    Deg,
}

impl AngleUnit {
    /// `rad` or `deg`.
    pub fn name(self) -> &'static str {
        match self {
            AngleUnit::Rad => "rad",
            AngleUnit::Deg => "deg",
        }
    }

    /// An angle in radians, in this unit.
    pub fn from_rad(self, a: f64) -> f64 {
        match self {
            AngleUnit::Rad => a,
            AngleUnit::Deg => a.to_degrees(),
        }
    }

    /// An angle in this unit, in radians.
    pub fn to_rad(self, a: f64) -> f64 {
        match self {
            AngleUnit::Rad => a,
            AngleUnit::Deg => a.to_radians(),
        }
    }

    /// A pose as x, y, z (m) and roll, pitch, yaw in this unit.
    pub fn pose(self, pose: &Pose) -> [f64; 6] {
        let a = pose.to_array();
        std::array::from_fn(|k| if k < 3 { a[k] } else { self.from_rad(a[k]) })
    }

    /// A pose from x, y, z (m) and roll, pitch, yaw in this unit; missing values are zero.
    pub fn pose_from(self, values: &[f64]) -> Pose {
        let a: [f64; 6] = std::array::from_fn(|k| {
            let v = values.get(k).copied().unwrap_or(0.0);
            if k < 3 { v } else { self.to_rad(v) }
        });
        Pose::from_array(a)
    }
}

/// Warnings about a pose given to or found for `robot`: outside its `[workspace]` box, or
/// angles given to a 3-DOF robot (held at zero). `what` names the pose in the message.
pub fn pose_warnings(robot: &Robot, pose: &Pose, what: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !robot.workspace.contains(&pose.position) {
        let (lo, hi) = (robot.workspace.min, robot.workspace.max);
        out.push(format!(
            "{what} ({:.4}, {:.4}, {:.4}) m is outside {}'s workspace x∈[{}, {}] y∈[{}, {}] z∈[{}, {}] m",
            pose.position.x,
            pose.position.y,
            pose.position.z,
            robot.name,
            lo.x,
            hi.x,
            lo.y,
            hi.y,
            lo.z,
            hi.z
        ));
    }
    if robot.dof == Dof::Three && pose.rpy.amax() > 0.0 {
        out.push(format!(
            "{} has 3 DOF: the orientation is held at zero and the angles given are ignored",
            robot.name
        ));
    }
    out
}

/// Inverse kinematics of a cable robot at a pose, as `cdpr ik` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IkReport {
    pub robot: String,
    /// The pose used (angles of a 3-DOF robot held at zero), angles in `angle_unit`.
    pub pose: [f64; 6],
    /// m, one per cable.
    pub lengths: Vec<f64>,
    /// Unit vectors platform anchor → exit point (the frame anchor, or over a swivel pulley
    /// the tangent point where the cable leaves the wheel).
    pub directions: Vec<[f64; 3]>,
    /// Seed 000's cable angles of the free segment (platform anchor → exit point), in
    /// `angle_unit`.
    pub theta_z: Vec<f64>,
    pub theta_x: Vec<f64>,
    pub theta_y: Vec<f64>,
    pub angle_unit: AngleUnit,
    /// Only for a robot with swivel pulleys, one per cable (null for a cable that leaves at a
    /// point): the swivel angle γ of the wheel about its axis, in `angle_unit`, in (−π, π] rad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swivel_angles: Option<Vec<Option<f64>>>,
    /// Only with pulleys: the wrap β of the cable round the wheel, in `angle_unit`, [0, 2π) rad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrap_angles: Option<Vec<Option<f64>>>,
    /// Only with pulleys: where the cable leaves the wheel, world frame, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tangent_points: Option<Vec<Option<[f64; 3]>>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Cable lengths, directions and angles of `robot` at `pose`.
pub fn ik_report(robot: &Robot, pose: &Pose, unit: AngleUnit) -> IkReport {
    let ik = super::inverse(robot, pose);
    let angles = ik.angles();
    let of = |f: fn(&super::CableAngles) -> f64| -> Vec<f64> {
        angles.iter().map(|x| unit.from_rad(f(x))).collect()
    };
    let has_pulleys = robot.cables.iter().any(|c| c.pulley.is_some());
    let per_pulley = |f: &dyn Fn(&super::PulleyGeometry) -> f64| -> Option<Vec<Option<f64>>> {
        has_pulleys.then(|| {
            ik.cables
                .iter()
                .map(|c| c.pulley.as_ref().map(|p| unit.from_rad(f(p))))
                .collect()
        })
    };
    IkReport {
        swivel_angles: per_pulley(&|p| p.swivel),
        wrap_angles: per_pulley(&|p| p.wrap),
        tangent_points: has_pulleys.then(|| {
            ik.cables
                .iter()
                .map(|c| c.pulley.map(|p| [p.tangent.x, p.tangent.y, p.tangent.z]))
                .collect()
        }),
        robot: robot.name.clone(),
        pose: unit.pose(&ik.pose),
        lengths: ik.lengths(),
        directions: ik.directions().iter().map(|d| [d.x, d.y, d.z]).collect(),
        theta_z: of(|x| x.theta_z),
        theta_x: of(|x| x.theta_x),
        theta_y: of(|x| x.theta_y),
        angle_unit: unit,
        warnings: pose_warnings(robot, pose, "pose"),
    }
}

/// Forward kinematics, as `cdpr fk` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FkReport {
    pub robot: String,
    /// Angles in `angle_unit`.
    pub pose: [f64; 6],
    /// max_i |L_i(pose) − l_i|, m.
    pub residual: f64,
    pub iterations: usize,
    pub method: FkMethod,
    pub angle_unit: AngleUnit,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The pose that gives the measured `lengths`, by `method`.
pub fn fk_report(
    robot: &Robot,
    lengths: &[f64],
    method: FkMethod,
    options: &FkOptions,
    unit: AngleUnit,
) -> Result<FkReport, FkError> {
    let sol = match method {
        FkMethod::Lm => forward_lm(robot, lengths, options),
        FkMethod::Sphere => forward_sphere(robot, lengths, options),
    }?;
    Ok(FkReport {
        robot: robot.name.clone(),
        pose: unit.pose(&sol.pose),
        residual: sol.residual,
        iterations: sol.iterations,
        method: sol.method,
        angle_unit: unit,
        warnings: pose_warnings(robot, &sol.pose, "the solution"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ik_in_degrees_is_ik_in_radians_scaled_and_fk_returns_the_pose() {
        let robot = crate::fixtures::robot("caroca");
        let pose = Pose::new(0.1, -0.2, 1.5, 0.05, -0.03, 0.1);
        let rad = ik_report(&robot, &pose, AngleUnit::Rad);
        let deg = ik_report(&robot, &pose, AngleUnit::Deg);
        assert_eq!(rad.lengths, deg.lengths);
        assert_eq!(rad.lengths.len(), robot.cable_count());
        for (r, d) in rad.theta_z.iter().zip(&deg.theta_z) {
            assert!((r * 180.0 / std::f64::consts::PI - d).abs() < 1e-9);
        }
        assert!((deg.pose[5] - 0.1f64.to_degrees()).abs() < 1e-12);
        // Lengths are |a − (r + R b)|, computed here by hand for cable 1.
        let c = &robot.cables[0];
        let l = c.frame_anchor - (pose.position + pose.rotation() * c.platform_anchor);
        assert!((rad.lengths[0] - l.norm()).abs() < 1e-12);
        let d = l / l.norm();
        assert!((rad.directions[0][2] - d.z).abs() < 1e-12);

        let fk = fk_report(
            &robot,
            &rad.lengths,
            FkMethod::Lm,
            &FkOptions::default(),
            AngleUnit::Deg,
        )
        .expect("solves");
        assert!(fk.residual < 1e-9, "{}", fk.residual);
        for (got, want) in fk.pose.iter().zip(deg.pose) {
            assert!((got - want).abs() < 1e-5, "{:?} vs {:?}", fk.pose, deg.pose);
        }
    }

    #[test]
    fn pulley_robots_report_swivel_wrap_and_tangent_points_and_point_robots_do_not() {
        let pose = Pose::new(0.05, -0.03, 0.12, 0.05, -0.02, 0.1);
        let point = ik_report(&crate::fixtures::uvigo8(), &pose, AngleUnit::Rad);
        let json = serde_json::to_value(&point).expect("serialises");
        for key in ["swivel_angles", "wrap_angles", "tangent_points"] {
            assert!(json.get(key).is_none(), "{key} in {json}");
        }
        let robot = crate::fixtures::robot("uvigo8-pulleys");
        let rad = ik_report(&robot, &pose, AngleUnit::Rad);
        let deg = ik_report(&robot, &pose, AngleUnit::Deg);
        let (swivel, wrap, tangent) = (
            rad.swivel_angles.clone().expect("swivel"),
            rad.wrap_angles.clone().expect("wrap"),
            rad.tangent_points.clone().expect("tangent"),
        );
        let rotation = pose.rotation();
        for (k, c) in robot.cables.iter().enumerate() {
            let (g, b, t) = (
                swivel[k].expect("γ"),
                wrap[k].expect("β"),
                tangent[k].expect("c"),
            );
            let t = nalgebra::Vector3::from(t);
            let p = pose.position + rotation * c.platform_anchor;
            // Axis −z: γ is the azimuth of p − a seen along −z (e_x = X, e_y = −z × X = −Y).
            let v = p - c.frame_anchor;
            assert!((g - (-v.y).atan2(v.x)).abs() < 1e-12, "{g}");
            // The tangent point is on the wheel (r from its centre) and the free segment is
            // tangent there; the directions reported run towards it.
            let r = c.pulley.expect("pulley").radius;
            let u = nalgebra::Vector3::new(v.x, v.y, 0.0).normalize();
            let m = c.frame_anchor + u * r;
            assert!(((t - m).norm() - r).abs() < 1e-12);
            assert!((t - m).dot(&(t - p)).abs() < 1e-12);
            let d = nalgebra::Vector3::from(rad.directions[k]);
            assert!((d - (t - p).normalize()).norm() < 1e-12);
            // Free length + r β is the reported length.
            assert!((rad.lengths[k] - (r * b + (t - p).norm())).abs() < 1e-12);
            let dg = deg.swivel_angles.as_ref().expect("deg")[k].expect("γ");
            assert!((dg - g.to_degrees()).abs() < 1e-9);
            // θz is the free segment's elevation.
            let elevation = ((t - p).z / (t - p).norm()).asin();
            assert!((rad.theta_z[k] - elevation).abs() < 1e-12);
        }
    }

    #[test]
    fn poses_outside_the_box_or_with_angles_for_three_dof_are_warned_about() {
        let robot = crate::fixtures::robot("silva4");
        assert_eq!(robot.dof, Dof::Three);
        let home = Pose::from_array(robot.home);
        assert!(pose_warnings(&robot, &home, "pose").is_empty());
        let far = Pose::new(100.0, 0.0, robot.home[2], 0.0, 0.0, 0.0);
        let w = pose_warnings(&robot, &far, "pose");
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("pose (100.0000, "), "{w:?}");
        let tilted = Pose::new(robot.home[0], robot.home[1], robot.home[2], 0.1, 0.0, 0.0);
        let w = pose_warnings(&robot, &tilted, "pose");
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("has 3 DOF"), "{w:?}");
    }
}
