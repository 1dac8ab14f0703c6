//! The built-in trajectories: seed 000's squares and diagonals, seed 003's pick & place,
//! seed 001's quintic, and the stop / blend / continuous timings.

use cdpr_core::fixtures::robot;
use cdpr_core::trajectory::{
    self, BuiltinOptions, ProfileKind, Trajectory, Transition, limits::CableLimits,
};
use nalgebra::Vector3;

fn speed(s: &trajectory::Sample) -> f64 {
    Vector3::new(s.velocity[0], s.velocity[1], s.velocity[2]).norm()
}

fn seed000(speed: f64) -> Trajectory {
    let options = BuiltinOptions {
        speed,
        ..BuiltinOptions::default()
    };
    trajectory::builtin(&robot("uvigo8"), "seed000", &options).unwrap()
}

#[test]
fn seed000_has_the_papers_segments_and_sample_count() {
    let t = seed000(0.1);
    assert_eq!(t.segments, ["XY", "XZ", "YZ", "Up", "Down"]);
    // 12 sides of 0.2 m and two diagonals of 0.2·√3 m, each D/v + v/a with a = 3 m/s².
    let diagonal = 0.2 * 3f64.sqrt();
    let duration = 12.0 * (0.2 / 0.1 + 0.1 / 3.0) + 2.0 * (diagonal / 0.1 + 0.1 / 3.0);
    let expected = (duration / 0.002).ceil() as usize + 1;
    assert_eq!(t.samples.len(), expected);
    assert_eq!(expected, 15_699); // seed 000's "15 700-sample" trajectory
    assert!((t.samples[1].t - 0.002).abs() < 1e-15);
}

#[test]
fn seed000_visits_the_corners_and_stays_in_the_box() {
    let t = seed000(0.4);
    let corners = [
        [0.1, -0.1, 0.05],
        [0.1, 0.1, 0.05],
        [-0.1, 0.1, 0.05],
        [0.1, -0.1, 0.25],
        [-0.1, -0.1, 0.25],
        [-0.1, 0.1, 0.25],
        [0.1, 0.1, 0.25],
    ];
    let mut min = Vector3::repeat(f64::INFINITY);
    let mut max = Vector3::repeat(f64::NEG_INFINITY);
    for s in &t.samples {
        min = min.inf(&s.pose.position);
        max = max.sup(&s.pose.position);
        assert_eq!(s.pose.rpy, Vector3::zeros());
    }
    assert_eq!(min, Vector3::new(-0.1, -0.1, 0.05));
    assert_eq!(max, Vector3::new(0.1, 0.1, 0.25));
    for c in corners {
        let c = Vector3::from(c);
        let closest = t
            .samples
            .iter()
            .map(|s| (s.pose.position - c).norm())
            .fold(f64::INFINITY, f64::min);
        // A stop falls between two grid instants; the platform creeps there at a = 3 m/s².
        assert!(
            closest <= 0.5 * 3.0 * 0.002f64.powi(2),
            "corner {c:?} missed by {closest}"
        );
    }
    // Starts and ends at rest at (−0.1, −0.1, 0.05); peak speed is the commanded one.
    let (first, last) = (t.samples[0], *t.samples.last().unwrap());
    assert_eq!(first.pose.position, Vector3::new(-0.1, -0.1, 0.05));
    assert_eq!(last.pose.position, Vector3::new(-0.1, -0.1, 0.05));
    assert_eq!(speed(&last), 0.0);
    let peak = t.samples.iter().map(speed).fold(0.0, f64::max);
    assert!((peak - 0.4).abs() < 1e-12);
    // Each segment tag covers one contiguous run, in the paper's order.
    let order: Vec<usize> = t.samples.iter().map(|s| s.segment.unwrap()).collect();
    assert!(order.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1));
}

#[test]
fn seed000_moves_in_its_planes() {
    let t = seed000(0.1);
    for s in &t.samples {
        let p = s.pose.position;
        match t.segment_name(s).unwrap() {
            "XY" => assert_eq!(p.z, 0.05),
            "XZ" => assert_eq!(p.y, -0.1),
            "YZ" => assert_eq!(p.x, -0.1),
            _ => {
                // Diagonal: x − y = 0 and z − 0.05 = (x + 0.1) along the whole line.
                assert!((p.x - p.y).abs() < 1e-12 && (p.z - 0.15 - p.x).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn seed000_box_moves_into_other_workspaces() {
    let b = trajectory::benchmark_box(&robot("silva4"));
    assert_eq!(b.min, Vector3::new(-0.1, -0.1, 0.5));
    assert_eq!(b.max, Vector3::new(0.1, 0.1, 0.7));
    let t = trajectory::builtin(&robot("caroca"), "seed000", &BuiltinOptions::default()).unwrap();
    let ws = robot("caroca").workspace;
    assert!(t.samples.iter().all(|s| ws.contains(&s.pose.position)));
}

#[test]
fn blending_keeps_moving_through_the_corners() {
    let options = BuiltinOptions {
        transition: Some(Transition::Blend),
        ..BuiltinOptions::default()
    };
    let t = trajectory::builtin(&robot("uvigo8"), "seed000", &options).unwrap();
    let stopped = seed000(0.1);
    assert!(t.duration() < stopped.duration());
    let n = t.samples.len();
    // Never faster than commanded (two symmetric ramps at a corner add up to at most v), and
    // no stop between the ends except where Up reverses into Down.
    let apex = Vector3::new(0.1, 0.1, 0.25);
    for s in &t.samples[1..n - 1] {
        assert!(speed(s) <= 0.1 + 1e-12);
        if speed(s) < 1e-3 {
            assert!(
                (s.pose.position - apex).norm() < 1e-3,
                "stopped at t = {}",
                s.t
            );
        }
    }
    // Corners are cut but the path stays in the box.
    let ws = robot("uvigo8").workspace;
    assert!(t.samples.iter().all(|s| ws.contains(&s.pose.position)));
}

#[test]
fn constant_profile_steps_at_every_corner() {
    let options = BuiltinOptions {
        profile: Some(ProfileKind::Constant),
        ..BuiltinOptions::default()
    };
    let t = trajectory::builtin(&robot("uvigo8"), "seed000", &options).unwrap();
    let n = t.samples.len();
    for s in &t.samples[..n - 1] {
        assert!((speed(s) - 0.1).abs() < 1e-12);
    }
    let path = 2.4 + 2.0 * 0.2 * 3f64.sqrt();
    assert!((t.duration() - path / 0.1).abs() <= 0.002);
}

#[test]
fn pickplace_on_silva4_passes_seed_003s_table_2_point() {
    for v in [0.1, 0.5] {
        let options = BuiltinOptions {
            speed: v,
            ..BuiltinOptions::default()
        };
        let t = trajectory::builtin(&robot("silva4"), "pickplace", &options).unwrap();
        assert_eq!(t.segments, ["Up", "Arc", "Down"]);
        let table2 = Vector3::new(-0.1, 0.18488, 0.471622);
        let closest = t
            .samples
            .iter()
            .map(|s| (s.pose.position - table2).norm())
            .fold(f64::INFINITY, f64::min);
        assert!(closest < v * 0.002, "{closest}");
        // The arc's apex: half the distance between the tops above their midpoint.
        let top = t
            .samples
            .iter()
            .map(|s| s.pose.position.z)
            .fold(0.0, f64::max);
        let radius = (0.2f64.powi(2) + (2.0f64 * 0.18488).powi(2)).sqrt() / 2.0;
        assert!((top - (0.55 + radius)).abs() < 1e-3, "{top}");
        let peak = t.samples.iter().map(speed).fold(0.0, f64::max);
        assert!((peak - v).abs() < 1e-3 * v, "{peak}");
        let ws = robot("silva4").workspace;
        assert!(t.samples.iter().all(|s| ws.contains(&s.pose.position)));
    }
}

#[test]
fn pickplace_arc_is_a_circle_in_the_exact_mode() {
    let options = BuiltinOptions {
        transition: Some(Transition::Continuous),
        ..BuiltinOptions::default()
    };
    let t = trajectory::builtin(&robot("silva4"), "pickplace", &options).unwrap();
    let centre = Vector3::new(0.0, 0.0, 0.55);
    let radius = (0.2f64.powi(2) + (2.0f64 * 0.18488).powi(2)).sqrt() / 2.0;
    for s in t
        .samples
        .iter()
        .filter(|s| t.segment_name(s) == Some("Arc"))
    {
        assert!(((s.pose.position - centre).norm() - radius).abs() < 1e-12);
        // Centripetal acceleration v²/r towards the centre (plus the tangential part).
        let v = speed(s);
        let a = Vector3::new(s.acceleration[0], s.acceleration[1], s.acceleration[2]);
        let inward = (centre - s.pose.position) / radius;
        assert!((a.dot(&inward) - v * v / radius).abs() < 1e-9);
    }
}

#[test]
fn pickplace_is_within_seed_003s_winch_limits_on_silva4() {
    let silva4 = robot("silva4");
    let limits = CableLimits::of(&silva4);
    assert_eq!(
        (
            limits.max_velocity,
            limits.max_acceleration,
            limits.max_jerk
        ),
        (3.0, 15.0, 22.5)
    );
    for v in [0.1, 0.5] {
        let options = BuiltinOptions {
            speed: v,
            ..BuiltinOptions::default()
        };
        let t = trajectory::builtin(&silva4, "pickplace", &options).unwrap();
        let check = trajectory::limits::check(&silva4, &t, &limits).unwrap();
        assert!(check.ok, "{v} m/s: {check:?}");
        assert!(check.velocity.value <= v + 1e-9);
    }
    // At constant speed through the line–arc junctions the curvature jump breaks the jerk
    // limit: the reason the default blends.
    let options = BuiltinOptions {
        speed: 0.5,
        transition: Some(Transition::Continuous),
        ..BuiltinOptions::default()
    };
    let t = trajectory::builtin(&silva4, "pickplace", &options).unwrap();
    let check = trajectory::limits::check(&silva4, &t, &limits).unwrap();
    assert!(!check.ok && check.jerk.ratio > 5.0 && check.velocity.ratio < 1.0);
}

#[test]
fn poly5_on_caroca_is_a_quintic_between_rest_states() {
    let caroca = robot("caroca");
    let options = BuiltinOptions {
        speed: 0.5,
        ..BuiltinOptions::default()
    };
    let t = trajectory::builtin(&caroca, "poly5", &options).unwrap();
    let (a, b) = (t.samples[0], *t.samples.last().unwrap());
    assert_eq!(a.pose.position, Vector3::new(-1.0, -0.5, 1.0));
    assert_eq!(b.pose.position, Vector3::new(1.0, 0.5, 2.0));
    assert_eq!((a.velocity, a.acceleration), ([0.0; 6], [0.0; 6]));
    assert_eq!((b.velocity, b.acceleration), ([0.0; 6], [0.0; 6]));
    let distance = 6f64.sqrt();
    assert!((t.duration() - 15.0 / 8.0 * distance / 0.5).abs() <= 0.002);
    // Midway: half the distance at the peak speed.
    let mid = t.sample_at(t.duration() / 2.0).unwrap();
    assert!((mid.pose.position - Vector3::new(0.0, 0.0, 1.5)).norm() < 1e-3);
    assert!(t.samples.iter().all(|s| s.pose.rpy == Vector3::zeros()));
}

#[test]
fn unknown_names_and_bad_options_are_named() {
    let uvigo8 = robot("uvigo8");
    let e = trajectory::builtin(&uvigo8, "squares", &BuiltinOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("`squares`") && text.contains("seed000, pickplace, poly5"));
    let e = trajectory::load("no/such.csv", &uvigo8, &BuiltinOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no/such.csv"));
    let bad = BuiltinOptions {
        speed: -1.0,
        ..BuiltinOptions::default()
    };
    let e = trajectory::builtin(&uvigo8, "seed000", &bad).unwrap_err();
    assert!(e.to_string().starts_with("speed = -1"), "{e}");
    let bad = BuiltinOptions {
        dt: 0.0,
        ..BuiltinOptions::default()
    };
    let e = trajectory::builtin(&uvigo8, "poly5", &bad).unwrap_err();
    assert!(e.to_string().starts_with("dt = 0"), "{e}");
    let bad = BuiltinOptions {
        profile: Some(ProfileKind::Scurve),
        jerk: Some(f64::NAN),
        ..BuiltinOptions::default()
    };
    let e = trajectory::builtin(&uvigo8, "seed000", &bad).unwrap_err();
    assert!(e.to_string().starts_with("jerk = NaN"), "{e}");
}
