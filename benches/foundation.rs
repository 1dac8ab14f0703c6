//! IK, FK (warm start) and tension distribution on uvigo8.
//! Run: cargo bench --no-default-features --bench foundation

use cdpr_core::fixtures::uvigo8;
use cdpr_core::kinematics::{self, FkOptions, Pose};
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
    c.bench_function("qp_clarabel_uvigo8", |b| {
        b.iter(|| {
            statics::min_norm_qp_clarabel(black_box(&w), &target, &lo, &hi).expect("feasible")
        })
    });
}

criterion_group!(foundation, benches);
criterion_main!(foundation);
