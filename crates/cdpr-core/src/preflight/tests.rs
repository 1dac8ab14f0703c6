use super::*;
use crate::fixtures::uvigo8;
use crate::robot::GRAVITY;
use crate::trajectory::{BuiltinOptions, ProfileKind};

/// A straight line along x at constant speed `v` from `x0`, z = 0.15, sampled every `dt`.
fn line(x0: f64, v: f64, duration: f64, dt: f64) -> Trajectory {
    let n = (duration / dt).round() as usize;
    let samples = (0..=n)
        .map(|k| {
            let t = k as f64 * dt;
            Sample {
                t,
                pose: Pose::new(x0 + v * t, 0.0, 0.15, 0.0, 0.0, 0.0),
                velocity: [v, 0.0, 0.0, 0.0, 0.0, 0.0],
                acceleration: [0.0; 6],
                segment: Some(0),
            }
        })
        .collect();
    Trajectory {
        samples,
        segments: vec!["line".into()],
    }
}

#[test]
fn intervals_are_cut_by_the_largest_of_the_three_ratios() {
    let options = PreflightOptions::default();
    // 10 mm in 1 ms: the spatial step (1 mm) cuts it into 10.
    let fast = line(0.0, 10.0, 0.001, 0.001);
    assert_eq!(
        checked_samples(&fast, &options).expect("ok").samples.len(),
        11
    );
    // Standing still for 1 s: the time step (10 ms) cuts it into 100.
    let still = line(0.0, 0.0, 1.0, 1.0);
    let checked = checked_samples(&still, &options).expect("ok");
    assert_eq!(checked.samples.len(), 101);
    assert!((checked.samples[37].t - 0.37).abs() < 1e-12);
    // A yaw turn of 0.1 rad in one interval: the angle step (1 mrad) cuts it into 100.
    let mut turn = line(0.0, 0.0, 0.001, 0.001);
    turn.samples[1].pose = Pose::new(0.0, 0.0, 0.15, 0.0, 0.0, 0.1);
    assert_eq!(
        checked_samples(&turn, &options).expect("ok").samples.len(),
        101
    );
    let bad = PreflightOptions {
        step: 0.0,
        ..options
    };
    assert!(checked_samples(&fast, &bad).is_err());
}

#[test]
fn leaving_the_workspace_box_is_found_within_one_step_of_the_closed_form_time() {
    let robot = uvigo8();
    let (x0, v) = (0.0005, 0.1);
    // Sparse samples (every 0.25 s): the checked sampling finds the crossing anyway.
    let traj = line(x0, v, 1.5, 0.25);
    let report = run(&robot, &traj, &PreflightOptions::default()).expect("runs");
    assert!(!report.ok);
    let first = report.first_violation.expect("a violation");
    assert_eq!(first.check, CheckKind::Workspace);
    assert_eq!(first.subject, "x max");
    let crossing = (robot.workspace.max.x - x0) / v; // 0.995 s
    let step_time = PreflightOptions::default().step / v; // 10 ms
    assert!(
        first.t >= crossing && first.t <= crossing + step_time + 1e-12,
        "first violation at {} s, crossing at {crossing} s",
        first.t
    );
    assert!((first.by - (x0 + v * first.t - robot.workspace.max.x)).abs() < 1e-12);
    assert!((first.pose[0] - (x0 + v * first.t)).abs() < 1e-12);
    // Everything else holds on this slow line inside uvigo8's frame.
    for w in &report.total.checks {
        if w.check != CheckKind::Workspace && w.applies {
            assert_eq!(w.violations, 0, "{:?}", w);
        }
    }
}

#[test]
fn winch_velocity_matches_finite_differences_of_the_cable_lengths() {
    let robot = uvigo8();
    let v = 1.5;
    let traj = line(-0.05, v, 0.05, 0.001);
    let report = run(&robot, &traj, &PreflightOptions::default()).expect("runs");
    let first = report.first_violation.expect("too fast");
    assert_eq!(first.check, CheckKind::Velocity);
    assert_eq!(first.t, 0.0);
    // Independently: the cable speeds at the start by a central difference of the lengths.
    let h = 1e-6;
    let at = |x: f64| kinematics::lengths(&robot, &Pose::new(x, 0.0, 0.15, 0.0, 0.0, 0.0));
    let (a, b) = (at(-0.05 - h), at(-0.05 + h));
    let (cable, speed) = (0..a.len())
        .map(|i| (i, ((b[i] - a[i]) / (2.0 * h) * v).abs()))
        .max_by(|p, q| p.1.total_cmp(&q.1))
        .expect("cables");
    assert_eq!(first.subject, robot.cables[cable].name);
    assert!(
        (first.value - speed).abs() < 1e-6,
        "{} vs {speed}",
        first.value
    );
    assert!((first.by - (speed - robot.winch.max_velocity)).abs() < 1e-6);
}

#[test]
fn seed000_with_the_s_curve_holds_everywhere_on_uvigo8() {
    let robot = uvigo8();
    let options = BuiltinOptions {
        profile: Some(ProfileKind::Scurve),
        dt: 0.002,
        ..BuiltinOptions::default()
    };
    let traj = trajectory::load("seed000", &robot, &options).expect("builds");
    let report = run(&robot, &traj, &PreflightOptions::default()).expect("runs");
    assert!(report.ok, "{:?}", report.first_violation);
    let names: Vec<&str> = report.segments.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["XY", "XZ", "YZ", "Up", "Down"]);
    // The whole's worst is the worst of the segments'.
    for (i, w) in report.total.checks.iter().enumerate() {
        let seg = report
            .segments
            .iter()
            .filter_map(|s| s.checks[i].margin)
            .fold(f64::INFINITY, f64::min);
        match w.margin {
            Some(m) => assert_eq!(m, seg),
            None => assert!(!w.applies || seg.is_infinite()),
        }
    }
}

#[test]
fn a_heavy_payload_breaks_the_tensions() {
    let robot = uvigo8().with_mass(50.0);
    let traj = line(0.0, 0.0, 0.1, 0.05);
    let report = run(&robot, &traj, &PreflightOptions::default()).expect("runs");
    let first = report.first_violation.expect("too heavy");
    assert_eq!(first.t, 0.0);
    assert!(matches!(
        first.check,
        CheckKind::Tensions | CheckKind::Slack
    ));
}

#[test]
fn accelerating_upwards_weighs_like_a_heavier_platform_at_rest() {
    // d'Alembert: a platform accelerating upwards at a (no rotation) needs the cable forces of
    // a platform of mass m (g + a)/g at rest, whatever the centre of mass.
    let mut robot = uvigo8();
    robot.platform.com = nalgebra::Vector3::new(0.01, -0.02, 0.03);
    let a = 4.0;
    let mut moving = line(0.0, 0.0, 0.1, 0.05);
    for s in &mut moving.samples {
        s.acceleration[2] = a;
    }
    let heavier = robot.with_mass(robot.platform.mass * (GRAVITY + a) / GRAVITY);
    let at_rest = line(0.0, 0.0, 0.1, 0.05);
    let options = PreflightOptions::default();
    let worst = |robot: &Robot, traj: &Trajectory, check: CheckKind| {
        let report = run(robot, traj, &options).expect("runs");
        let w = report
            .total
            .checks
            .iter()
            .find(|w| w.check == check)
            .expect("reported")
            .clone();
        w.value.expect("a value")
    };
    for check in [CheckKind::Tensions, CheckKind::Slack] {
        let dynamic = worst(&robot, &moving, check);
        let heavy = worst(&heavier, &at_rest, check);
        let still = worst(&robot, &at_rest, check);
        assert!(
            (dynamic - heavy).abs() < 1e-9 * heavy.abs().max(1.0),
            "{check:?}: {dynamic} vs {heavy}"
        );
        assert!((dynamic - still).abs() > 1e-3, "{check:?}: inertia counts");
    }
}
