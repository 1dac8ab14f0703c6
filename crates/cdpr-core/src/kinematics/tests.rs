use super::*;
use crate::fixtures::{robot, uvigo8};
use crate::robot::{Robot, parse_robot};
use approx::assert_relative_eq;
use proptest::prelude::*;

/// A 4-cable point-mass robot: frame anchors (±1, ±1, 2) m, all cables on the origin.
const POINT4: &str = r#"
name = "point4"
dof = 3
[platform]
mass = 2.0
com = [0.0, 0.0, 0.0]
inertia = "uniform_box"
size = [0.1, 0.1, 0.1]
[cables]
frame_anchors = [[1.0, 1.0, 2.0], [-1.0, 1.0, 2.0], [-1.0, -1.0, 2.0], [1.0, -1.0, 2.0]]
platform_anchors = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
stiffness = 1000.0
damping = 0.0
[tension]
min = 0.0
max = 100.0
[winch]
max_velocity = 1.0
max_acceleration = 1.0
max_jerk = 1.0
[workspace]
min = [-0.5, -0.5, 0.0]
max = [0.5, 0.5, 1.0]
"#;

#[test]
fn hand_derived_symmetric_case() {
    let robot = parse_robot(POINT4, "point4").expect("valid");
    let ik = inverse(&robot, &Pose::default());
    // Every cable is (±1, ±1, 2): length √6, elevation arccos(√2/√6), azimuth 45° off the axes.
    assert_eq!((ik.cables.len(), robot.cables.len()), (4, 4));
    for (g, c) in ik.cables.iter().zip(&robot.cables) {
        assert_relative_eq!(g.length, 6f64.sqrt(), epsilon = 1e-15);
        assert_relative_eq!(g.direction, c.frame_anchor / 6f64.sqrt(), epsilon = 1e-15);
        let a = g.angles();
        assert_relative_eq!(a.theta_z, (1.0 / 3f64.sqrt()).acos(), epsilon = 1e-15);
        let expect_x = if c.frame_anchor.x > 0.0 { 45f64 } else { 135.0 };
        let expect_y = if c.frame_anchor.y > 0.0 { 45f64 } else { 135.0 };
        assert_relative_eq!(a.theta_x.to_degrees(), expect_x, epsilon = 1e-12);
        assert_relative_eq!(a.theta_y.to_degrees(), expect_y, epsilon = 1e-12);
    }
    // Symmetry: 4 f · (2/√6) = m g.
    let d = crate::statics::tension_distribution(&robot, &Pose::default(), robot.tension);
    let f = 2.0 * crate::robot::GRAVITY * 6f64.sqrt() / 8.0;
    for t in &d.tensions {
        assert_relative_eq!(*t, f, epsilon = 1e-9);
    }
}

#[test]
fn vertical_cable_angles_follow_the_stated_convention() {
    let a = CableAngles::of(&Vector3::new(0.0, 0.0, 1.0));
    let half_pi = std::f64::consts::FRAC_PI_2;
    assert_eq!(
        (a.theta_z, a.theta_x, a.theta_y),
        (half_pi, half_pi, half_pi)
    );
}

fn random_pose(robot: &Robot, u: [f64; 6]) -> Pose {
    let (lo, hi) = (robot.workspace.min, robot.workspace.max);
    let p = |k: usize| lo[k] + (hi[k] - lo[k]) * u[k];
    let angle = |x: f64| (x - 0.5) * 0.4; // ±0.2 rad
    effective_pose(
        robot,
        &Pose::new(p(0), p(1), p(2), angle(u[3]), angle(u[4]), angle(u[5])),
    )
}

fn finite_difference_jacobian(robot: &Robot, pose: &Pose) -> DMatrix<f64> {
    let n = robot.dof.count();
    let m = robot.cable_count();
    let h = 1e-6;
    let mut j = DMatrix::zeros(m, n);
    for k in 0..n {
        let mut plus = pose.to_array();
        let mut minus = pose.to_array();
        plus[k] += h;
        minus[k] -= h;
        let lp = lengths(robot, &Pose::from_array(plus));
        let lm = lengths(robot, &Pose::from_array(minus));
        for i in 0..m {
            j[(i, k)] = (lp[i] - lm[i]) / (2.0 * h);
        }
    }
    j
}

#[test]
fn pose_jacobian_matches_finite_differences() {
    for name in ["uvigo8", "silva4", "caroca"] {
        let robot = robot(name);
        for u in [
            [0.1, 0.9, 0.3, 0.2, 0.8, 0.6],
            [0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
            [0.9, 0.05, 0.95, 1.0, 0.0, 0.3],
        ] {
            let pose = random_pose(&robot, u);
            let analytic = inverse(&robot, &pose).pose_jacobian();
            let numeric = finite_difference_jacobian(&robot, &pose);
            assert_relative_eq!(analytic, numeric, epsilon = 1e-8);
        }
    }
}

#[test]
fn twist_jacobian_is_minus_w_transpose_and_predicts_length_rates() {
    // Move the platform by a small twist (v, ω) and compare the length change with J·(v, ω)·dt.
    let robot = uvigo8();
    let pose = Pose::new(0.03, -0.05, 0.12, 0.1, -0.05, 0.2);
    let ik = inverse(&robot, &pose);
    let j = ik.twist_jacobian();
    assert_relative_eq!(j, -ik.wrench_matrix().transpose(), epsilon = 0.0);
    let v = Vector3::new(0.2, -0.1, 0.3);
    let w = Vector3::new(0.5, 0.2, -0.4);
    let dt = 1e-6;
    let iso = pose.world_from_platform();
    let moved = nalgebra::Isometry3::from_parts(
        nalgebra::Translation3::from(iso.translation.vector + v * dt),
        nalgebra::UnitQuaternion::from_scaled_axis(w * dt) * iso.rotation,
    );
    let l1 = lengths(&robot, &Pose::from_isometry(&moved));
    let l0 = ik.lengths();
    let twist = nalgebra::DVector::from_column_slice(&[v.x, v.y, v.z, w.x, w.y, w.z]);
    let predicted = &j * twist;
    for i in 0..robot.cable_count() {
        assert_relative_eq!((l1[i] - l0[i]) / dt, predicted[i], epsilon = 1e-5);
    }
}

#[test]
fn seed_003_forward_kinematics_example() {
    // Seed 003, Table 2: lengths (1362.06030, 1421.83276, 1223.78845, 1153.80164) mm give the
    // position (−100.00, 184.88, 471.62) mm.
    let robot = robot("silva4");
    let lengths = [1.36206030, 1.42183276, 1.22378845, 1.15380164];
    let expected = Vector3::new(-0.100, 0.18488, 0.47162);
    let sphere = forward_sphere(&robot, &lengths, &FkOptions::default()).expect("sphere");
    let lm = forward_lm(&robot, &lengths, &FkOptions::default()).expect("lm");
    for sol in [sphere, lm] {
        assert!(
            (sol.pose.position - expected).amax() < 0.005e-3,
            "{:?}",
            sol.pose.position
        );
        assert!(sol.residual < 1e-7);
        assert_eq!(sol.pose.rpy, Vector3::zeros());
    }
    // The pure closed form on exact lengths needs no iteration at all.
    let exact = super::lengths(&robot, &Pose::from_position(expected));
    let sol = forward_sphere(&robot, &exact, &FkOptions::default()).expect("sphere");
    assert_eq!(sol.iterations, 0);
    assert!((sol.pose.position - expected).amax() < 1e-12);
}

#[test]
fn fk_reports_bad_input_clearly() {
    let robot = uvigo8();
    let err = forward(&robot, &[1.0; 7], &FkOptions::default()).unwrap_err();
    assert_eq!(
        err,
        FkError::LengthCount {
            expected: 8,
            got: 7
        }
    );
    let mut l = lengths(&robot, &Pose::from_array(robot.home));
    l[2] = f64::NAN;
    let err = forward(&robot, &l, &FkOptions::default()).unwrap_err();
    assert!(err.to_string().contains("cable 3 (upper2)"), "{err}");
    // Lengths no pose can produce: one cable 20 cm too long.
    let mut l = lengths(&robot, &Pose::from_array(robot.home));
    l[0] += 0.2;
    let err = forward(&robot, &l, &FkOptions::default()).unwrap_err();
    assert!(matches!(err, FkError::Inconsistent { .. }), "{err}");
    assert!(forward_sphere(&robot, &l, &FkOptions::default()).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn fk_inverts_ik_on_every_robot(u in proptest::array::uniform6(0.0f64..1.0), which in 0usize..3) {
        let robot = robot(["uvigo8", "silva4", "caroca"][which]);
        let pose = random_pose(&robot, u);
        let l = lengths(&robot, &pose);
        let sol = forward(&robot, &l, &FkOptions::default()).expect("converges");
        let (dp, dr) = sol.pose.distance(&pose);
        prop_assert!(dp < 1e-9 && dr < 1e-9, "{:?} vs {:?}", sol.pose, pose);
        prop_assert!(sol.residual < 1e-10);
        if robot.dof == crate::robot::Dof::Three {
            let s = forward_sphere(&robot, &l, &FkOptions::default()).expect("sphere");
            prop_assert!((s.pose.position - pose.position).amax() < 1e-9);
        }
    }
}

#[test]
fn shipped_pulley_robot_wraps_about_a_right_angle_plus_the_cable_elevation() {
    let robot = crate::robot::Robot::builtin("uvigo8-pulleys")
        .unwrap()
        .unwrap();
    let point = crate::robot::Robot::builtin("uvigo8").unwrap().unwrap();
    let home = Pose::from_array(robot.home);
    let ik = inverse(&robot, &home);
    let ik0 = inverse(&point, &home);
    for (c, c0) in ik.cables.iter().zip(&ik0.cables) {
        let p = c.pulley.unwrap();
        // The cable comes up the pillar and leaves towards a platform anchor below the swivel
        // point: β = 90° + the free segment's depression angle.
        // d points up the free segment: β = 90° + asin(d_z), exactly (the cable turns from
        // straight up to −d).
        let expected = std::f64::consts::FRAC_PI_2 + c.direction.z.asin();
        assert!(
            (p.wrap - expected).abs() < 1e-12,
            "{} vs {expected}",
            p.wrap
        );
        assert!(p.wrap > std::f64::consts::FRAC_PI_2 && p.wrap < std::f64::consts::PI);
        assert!(
            (c.length - c0.length).abs() < 0.05,
            "{} vs {}",
            c.length,
            c0.length
        );
    }
}
