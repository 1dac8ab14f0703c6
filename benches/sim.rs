//! Physics steps per second on uvigo8 (ideal winches, platform moving under a changing
//! command), for the elastic and the chain model; plus the chain's solver settings, and the
//! chain on uvigo8-pulleys (a swivel pulley at the root of every cable's chain); and what a
//! drive as built costs a step: uvigo8's PID winches against uvigo8-drives' servo drives (the
//! cascade, the motor equation implicit with the cable, substepped at its 200 Hz velocity
//! loop), both in length mode.
//! Run: cargo bench --no-default-features --bench sim
//! A drive's cost is below the run-to-run noise of a shared machine: compare PID and drives in
//! interleaved rounds pinned to one core and take the least of each one's medians, e.g.
//! `for r in 1 2 3 4 5 6; do taskset -c 1 target/release/deps/sim-* --bench
//! "step_elastic_uvigo8_(pid|drives)" --measurement-time 8; done` (docs/src/measurements.md).

use cdpr_core::fixtures::{robot, uvigo8};
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::sim::{ChainConfig, Command, ControlMode, ModelKind, Sim, SimConfig};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// Commands along a 2 cm circle at 0.1 m/s, one per step, so the bench covers motion.
fn commands(robot: &Robot, steps: usize) -> Vec<Command> {
    (0..steps)
        .map(|k| {
            let phase = k as f64 * 1e-3 * 5.0;
            let pose = Pose::new(0.02 * phase.cos(), 0.02 * phase.sin(), 0.15, 0.0, 0.0, 0.0);
            Command::Lengths(kinematics::lengths(robot, &pose))
        })
        .collect()
}

fn bench_model(c: &mut Criterion, name: &str, config: SimConfig) {
    bench_robot(c, name, &uvigo8(), config)
}

fn bench_robot(c: &mut Criterion, name: &str, robot: &Robot, config: SimConfig) {
    let robot = robot.clone();
    let cmds = commands(&robot, 1000);
    let mut sim =
        Sim::at(&robot, config, &Pose::new(0.02, 0.0, 0.15, 0.0, 0.0, 0.0)).expect("starts");
    let mut k = 0;
    c.bench_function(name, |b| {
        b.iter(|| {
            sim.set_command(&cmds[k % cmds.len()]).expect("valid");
            k += 1;
            sim.step().expect("steps");
            black_box(sim.state().pose)
        })
    });
}

fn benches(c: &mut Criterion) {
    let elastic = SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, 1e-3);
    bench_model(c, "step_elastic_uvigo8", elastic);
    let chain = SimConfig::new(ModelKind::CHAIN, ControlMode::Ideal, 1e-3);
    bench_model(c, "step_chain_uvigo8", chain.clone());
    let pulleys = robot("uvigo8-pulleys");
    bench_robot(c, "step_chain_uvigo8_pulleys", &pulleys, chain.clone());
    let chain4 = SimConfig {
        chain: ChainConfig {
            solver_iterations: 4,
            pgs_iterations: 1,
            ..ChainConfig::default()
        },
        ..chain
    };
    bench_model(c, "step_chain_uvigo8_4substeps", chain4);
    let length = |model| SimConfig::new(model, ControlMode::Length, 1e-3);
    let drives = robot("uvigo8-drives");
    bench_model(c, "step_elastic_uvigo8_pid", length(ModelKind::ELASTIC));
    bench_robot(
        c,
        "step_elastic_uvigo8_drives",
        &drives,
        length(ModelKind::ELASTIC),
    );
    bench_model(c, "step_chain_uvigo8_pid", length(ModelKind::CHAIN));
    bench_robot(
        c,
        "step_chain_uvigo8_drives",
        &drives,
        length(ModelKind::CHAIN),
    );
}

criterion_group!(name = sim; config = Criterion::default().sample_size(30); targets = benches);
criterion_main!(sim);
