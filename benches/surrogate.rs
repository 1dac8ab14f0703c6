//! Speed of seed 004's filter surrogate on uvigo8 (all six DOFs filtered, 1 ms period):
//! 100 s of motion (100 000 steps), the filters alone and with the combination step against
//! the wrench-feasible workspace (feasibility map, exact QP at its edges). Real-time factor =
//! 100 s / the time per iteration (seed 004: 216×; the goal here: ≥ 20 000×).
//! Run: cargo bench --no-default-features --bench surrogate

use cdpr::robot::Robot;
use cdpr::surrogate::run::step_all;
use cdpr::surrogate::{
    CdprReachability, DofEntry, DofParams, Reachability, Surrogate, SurrogateParams,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const DT: f64 = 1e-3;
const SECONDS: f64 = 100.0;

fn uvigo8() -> Robot {
    Robot::builtin("uvigo8").expect("shipped").expect("parses")
}

/// Plausible fitted values (what `cdpr surrogate fit` gives on the elastic model).
fn params(robot: &Robot) -> SurrogateParams {
    let mut p = SurrogateParams::empty(&robot.name, DT, robot.home);
    for k in 0..6 {
        let dof = DofParams {
            delay_s: 0.01 + 0.002 * k as f64,
            gain: 1.0,
            natural_frequency_hz: 4.0 + k as f64,
            damping: 0.9,
        };
        p.set_dof(k, DofEntry::from_params(&dof, None));
    }
    p
}

/// 100 s of demands: a 5 cm circle in x, y at 0.2 Hz, z and the angles oscillating; every
/// 20 s a stretch pushed out of the workspace so that the combination step has work.
fn demands(robot: &Robot) -> Vec<[f64; 6]> {
    let n = (SECONDS / DT) as usize;
    let h = robot.home;
    (0..n)
        .map(|k| {
            let t = k as f64 * DT;
            let w = std::f64::consts::TAU * 0.2 * t;
            let r = if (t % 20.0) > 18.0 { 1.5 } else { 0.05 };
            [
                h[0] + r * w.cos(),
                h[1] + r * w.sin(),
                h[2] + 0.05 * (0.7 * w).sin(),
                0.03 * (1.3 * w).sin(),
                0.03 * (1.1 * w).cos(),
                0.05 * (0.9 * w).sin(),
            ]
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let robot = uvigo8();
    let surrogate = Surrogate::new(&params(&robot), DT);
    let input = demands(&robot);
    let reach = CdprReachability::with_map(&robot, 0.01);
    let mut out = Vec::with_capacity(input.len());
    let mut group = c.benchmark_group("surrogate_uvigo8_100s");
    group.throughput(Throughput::Elements(input.len() as u64));
    group.sample_size(20);
    group.bench_function("filters", |b| {
        b.iter(|| {
            step_all(&surrogate, None, black_box(&input), &mut out);
            black_box(out.last().copied())
        })
    });
    group.sample_size(10);
    // Zero-rotation demands (as the seed000 trajectory): the map answers the interior.
    let flat: Vec<[f64; 6]> = input
        .iter()
        .map(|p| [p[0], p[1], p[2], 0.0, 0.0, 0.0])
        .collect();
    group.bench_function("combined_zero_rotation", |b| {
        b.iter(|| {
            let r: &dyn Reachability = &reach;
            let stats = step_all(&surrogate, Some(r), black_box(&flat), &mut out);
            black_box((stats, out.last().copied()))
        })
    });
    // Rotated demands: every step goes to the exact tension-distribution QP.
    group.bench_function("combined_rotating", |b| {
        b.iter(|| {
            let r: &dyn Reachability = &reach;
            let stats = step_all(&surrogate, Some(r), black_box(&input), &mut out);
            black_box((stats, out.last().copied()))
        })
    });
    group.finish();
}

criterion_group!(surrogate, benches);
criterion_main!(surrogate);
