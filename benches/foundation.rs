//! IK, FK (warm start), tension distribution, the largest-minimum-tension LP and the
//! interference check on uvigo8; and a robot file of 1024 cables (the most one may have)
//! parsed, validated and its home statics answered (the figure that was once a "< 5 s"
//! assertion in `robot::tests`); the pre-flight of a one-minute trajectory.
//! Run: cargo bench --no-default-features --bench foundation

use cdpr_core::fixtures::uvigo8;
use cdpr_core::kinematics::{self, FkOptions, Pose};
use cdpr_core::robot::parse_robot;
use cdpr_core::statics;
use criterion::{Criterion, criterion_group, criterion_main};
use nalgebra::DVector;
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let robot = uvigo8();
    let pose = Pose::new(0.05, -0.03, 0.18, 0.01, -0.02, 0.03);

    c.bench_function("ik_uvigo8", |b| {
        b.iter(|| kinematics::lengths(&robot, black_box(&pose)))
    });

    // Warm start as in a 2 ms control cycle at 400 mm/s: the previous pose is 0.8 mm away.
    let lengths = kinematics::lengths(&robot, &pose);
    let previous = Pose::new(0.0508, -0.03, 0.18, 0.01, -0.02, 0.03);
    let options = FkOptions {
        guess: Some(previous),
        ..FkOptions::default()
    };
    c.bench_function("fk_warm_uvigo8", |b| {
        b.iter(|| kinematics::forward_lm(&robot, black_box(&lengths), &options).expect("converges"))
    });

    c.bench_function("tda_uvigo8", |b| {
        b.iter(|| statics::tension_distribution(&robot, black_box(&pose), robot.tension))
    });

    // The bare QP against clarabel's interior point on the same data.
    let ik = kinematics::inverse(&robot, &pose);
    let w = ik.wrench_matrix();
    let target = -statics::gravity_rows(&robot, &ik);
    let lo = DVector::from_element(8, robot.tension.min);
    let hi = DVector::from_element(8, robot.tension.max);
    c.bench_function("qp_active_set_uvigo8", |b| {
        b.iter(|| statics::min_norm_qp(black_box(&w), &target, &lo, &hi).expect("feasible"))
    });
    // The shadow's per-cycle interference check: uvigo8 with one box obstacle (28 cable
    // pairs, 8 cable–platform, 8 cable–frame, 8 cable–box, platform–frame, platform–box).
    let mut with_box = robot.clone();
    with_box
        .obstacles
        .push(cdpr_core::robot::obstacles::Obstacle {
            name: "box".into(),
            shape: cdpr_core::robot::obstacles::Shape::Box {
                min: nalgebra::Vector3::new(0.3, 0.3, 0.0),
                max: nalgebra::Vector3::new(0.5, 0.5, 0.3),
            },
        });
    c.bench_function("interference_uvigo8_one_box", |b| {
        b.iter(|| cdpr_core::interference::check(&with_box, black_box(&pose), 0.01))
    });
    c.bench_function("qp_clarabel_uvigo8", |b| {
        b.iter(|| {
            statics::min_norm_qp_clarabel(black_box(&w), &target, &lo, &hi).expect("feasible")
        })
    });
    // The largest-minimum-tension LP of pre-flight and the workspace, at the next sample of a
    // path (1 mm on, the same optimal basis): proved from the last basis, against clarabel's
    // interior point alone.
    let next = kinematics::inverse(&robot, &Pose::new(0.051, -0.03, 0.18, 0.01, -0.02, 0.03));
    let (w_next, target_next) = (next.wrench_matrix(), -statics::gravity_rows(&robot, &next));
    let f_max = robot.tension.max;
    c.bench_function("lp_largest_min_tension_next_sample_uvigo8", |b| {
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            let (w, target) = if flip {
                (&w, &target)
            } else {
                (&w_next, &target_next)
            };
            statics::largest_min_tension(black_box(w), target, f_max).expect("feasible")
        })
    });
    c.bench_function("lp_clarabel_uvigo8", |b| {
        b.iter(|| {
            statics::largest_min_tension_clarabel(black_box(&w), &target, f_max).expect("feasible")
        })
    });
}

/// A robot file of `n` cables on a circle (the one of `robot::tests`'s
/// `the_most_cables_a_file_may_have_parse_and_their_statics_answer`).
fn many_cables(n: usize) -> String {
    let mut frame = String::new();
    let mut platform = String::new();
    for i in 0..n {
        let t = std::f64::consts::TAU * i as f64 / n as f64;
        frame.push_str(&format!(
            "[{}, {}, {}],\n",
            2.0 * t.cos(),
            2.0 * t.sin(),
            2.0 + 0.5 * (i % 2) as f64
        ));
        platform.push_str(&format!("[{}, {}, 0.0],\n", 0.1 * t.cos(), 0.1 * t.sin()));
    }
    format!(
        "name = \"many\"\ndof = 6\nhome = [0.0, 0.0, 1.0]\n[platform]\nmass = 500.0\ncom = [0.0, 0.0, 0.0]\n\
         inertia = \"uniform_box\"\nsize = [0.2, 0.2, 0.1]\n[cables]\nframe_anchors = [\n{frame}]\n\
         platform_anchors = [\n{platform}]\nstiffness = 2e4\ndamping = 50.0\n[tension]\nmin = 1.0\nmax = 1000.0\n\
         [winch]\nmax_velocity = 1.0\nmax_acceleration = 5.0\nmax_jerk = 50.0\n\
         [workspace]\nmin = [-0.5, -0.5, 0.5]\nmax = [0.5, 0.5, 1.5]\n"
    )
}

/// 1024 cables (`robot::MAX_CABLES`): parse and validate, the home report at 500 kg, and at 1 kg (infeasible: the
/// slow path of the tension distribution).
fn robot_file_benches(c: &mut Criterion) {
    let text = many_cables(cdpr_core::robot::MAX_CABLES);
    let mut group = c.benchmark_group("robot_1024_cables");
    group.sample_size(10);
    group.bench_function("parse", |b| {
        b.iter(|| parse_robot(black_box(&text), "many.toml").expect("valid"))
    });
    let robot = parse_robot(&text, "many.toml").expect("valid");
    group.bench_function("home_report", |b| {
        b.iter(|| statics::home_report(black_box(&robot)))
    });
    let light = robot.with_mass(1.0);
    group.bench_function("home_report_infeasible", |b| {
        b.iter(|| statics::home_report(black_box(&light)))
    });
    group.finish();
}

/// `cdpr preflight` of seed 000's test on uvigo8 at 0.055 m/s with the S-curve profile: a
/// 58.6 s trajectory (2 ms samples), every check at the default subdivision (1 mm, 1 mrad,
/// 10 ms). Ten runs of several seconds each.
fn preflight_benches(c: &mut Criterion) {
    use cdpr_core::preflight::{self, PreflightOptions};
    use cdpr_core::trajectory::{self, BuiltinOptions, ProfileKind};
    let robot = uvigo8();
    let options = BuiltinOptions {
        speed: 0.055,
        profile: Some(ProfileKind::Scurve),
        ..BuiltinOptions::default()
    };
    let traj = trajectory::builtin(&robot, "seed000", &options).expect("builds");
    assert!(
        (55.0..65.0).contains(&traj.duration()),
        "{} s",
        traj.duration()
    );
    let mut group = c.benchmark_group("preflight");
    group.sample_size(10);
    group.bench_function("preflight_uvigo8_seed000_60s", |b| {
        b.iter(|| {
            preflight::run(&robot, black_box(&traj), &PreflightOptions::default()).expect("runs")
        })
    });
    group.finish();
}

criterion_group!(foundation, benches, robot_file_benches, preflight_benches);
criterion_main!(foundation);
