//! What a drive as built costs a physics step: uvigo8 with its PID winches against
//! uvigo8-drives with its servo drives (the cascade, the motor equation implicit with the
//! cable, substepped at the 200 Hz velocity loop), both in length mode under a changing
//! command, for the elastic and the chain model.
//! Run: cargo bench --no-default-features --bench drives

use cdpr_core::fixtures::robot;
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::sim::{Command, ControlMode, ModelKind, Sim, SimConfig};
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

fn bench_robot(c: &mut Criterion, name: &str, robot: &Robot, model: ModelKind) {
    let cmds = commands(robot, 1000);
    let config = SimConfig::new(model, ControlMode::Length, 1e-3);
    let mut sim =
        Sim::at(robot, config, &Pose::new(0.02, 0.0, 0.15, 0.0, 0.0, 0.0)).expect("starts");
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
    let (pid, drives) = (robot("uvigo8"), robot("uvigo8-drives"));
    bench_robot(c, "step_elastic_pid", &pid, ModelKind::ELASTIC);
    bench_robot(c, "step_elastic_drives", &drives, ModelKind::ELASTIC);
    bench_robot(c, "step_chain_pid", &pid, ModelKind::CHAIN);
    bench_robot(c, "step_chain_drives", &drives, ModelKind::CHAIN);
}

criterion_group!(name = drives; config = Criterion::default().sample_size(30); targets = benches);
criterion_main!(drives);
