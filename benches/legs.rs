//! The robots with legs: closed-form inverse kinematics, seed 002's workspace check and one
//! physics step of their Rapier leg chains (ideal actuators, moving).
//! Run: cargo bench --no-default-features --bench legs

use cdpr_core::kinematics::Pose;
use cdpr_core::legs::coverage::coverage;
use cdpr_core::robot::{Mechanism, Robot};
use cdpr_core::sim::{Command, ControlMode, ModelKind, Sim, SimConfig};
use criterion::{Criterion, criterion_group, criterion_main};
use nalgebra::Vector3;
use std::hint::black_box;

fn load(name: &str) -> Robot {
    cdpr_core::fixtures::robot(name)
}

fn kinematics(c: &mut Criterion) {
    let keops = load("keops");
    let Mechanism::LinearDelta { delta, cylinder } = &keops.mechanism else {
        panic!("keops is a linear delta")
    };
    let p = Vector3::new(0.03, -0.02, cylinder.z_top - 0.1);
    c.bench_function("linear_delta inverse (all constraints)", |b| {
        b.iter(|| black_box(delta.inverse(black_box(&p))))
    });
    c.bench_function("linear_delta coverage, 10 mm cloud (4071 points)", |b| {
        b.iter(|| black_box(coverage(delta, cylinder, 0.01).reachable))
    });
    let rssu2 = load("rssu2");
    let Mechanism::Rssu2(r) = &rssu2.mechanism else {
        panic!("rssu2 is a 2-RSSU")
    };
    c.bench_function("rssu2 inverse", |b| {
        b.iter(|| black_box(r.inverse(black_box(0.2), black_box(-0.3))))
    });
    c.bench_function("rssu2 combine (out of reach, bisection)", |b| {
        b.iter(|| black_box(r.combine(black_box(0.6), black_box(0.6), 1e-9)))
    });
}

fn steps(c: &mut Criterion) {
    let config = SimConfig::new(ModelKind::CHAIN, ControlMode::Ideal, 1e-3);
    let keops = load("keops");
    let Mechanism::LinearDelta { delta, cylinder } = keops.mechanism.clone() else {
        panic!("keops is a linear delta")
    };
    let centre = Vector3::new(0.0, 0.0, cylinder.z_top - 0.5 * cylinder.height);
    let commands: Vec<Vec<f64>> = (0..1000)
        .map(|k| {
            let phase = k as f64 * std::f64::consts::TAU / 1000.0;
            let p = centre + Vector3::new(0.02 * phase.cos(), 0.02 * phase.sin(), 0.0);
            delta.actuators(&p).expect("in reach").to_vec()
        })
        .collect();
    let mut sim = Sim::at(
        &keops,
        config.clone(),
        &Pose::from_position(centre + Vector3::x() * 0.02),
    )
    .expect("starts");
    bench_steps(c, "keops chain step (6 arms)", &mut sim, &commands);
    let rssu2 = load("rssu2");
    let Mechanism::Rssu2(r) = rssu2.mechanism.clone() else {
        panic!("rssu2 is a 2-RSSU")
    };
    let commands: Vec<Vec<f64>> = (0..1000)
        .map(|k| {
            let phase = k as f64 * std::f64::consts::TAU / 1000.0;
            r.inverse(0.1 * phase.sin(), 0.1 * phase.cos())
                .expect("in reach")
                .to_vec()
        })
        .collect();
    let mut sim =
        Sim::at(&rssu2, config, &Pose::new(0.0, 0.0, 0.0, 0.0, 0.1, 0.0)).expect("starts");
    bench_steps(c, "rssu2 chain step", &mut sim, &commands);
}

/// One physics step per iteration, the actuators commanded around `commands` in turn.
fn bench_steps(c: &mut Criterion, name: &str, sim: &mut Sim, commands: &[Vec<f64>]) {
    let mut k = 0;
    c.bench_function(name, |b| {
        b.iter(|| {
            sim.set_command(&Command::Lengths(commands[k % commands.len()].clone()))
                .expect("valid");
            k += 1;
            sim.step().expect("steps");
            black_box(sim.state().pose)
        })
    });
}

criterion_group!(benches, kinematics, steps);
criterion_main!(benches);
