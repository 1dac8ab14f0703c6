//! Speed of seed 004's filter surrogate on uvigo8 (all six DOFs filtered, 1 ms period):
//! 100 s of motion (100 000 steps), the filters alone and with the combination step against
//! the wrench-feasible workspace (feasibility map, exact QP at its edges). Real-time factor =
//! 100 s / the time per iteration (seed 004: 216×; the goal here: ≥ 20 000×).
//! Run: cargo bench --no-default-features --bench surrogate

use cdpr_core::fixtures::uvigo8;
use cdpr_core::robot::Robot;
use cdpr_core::surrogate::step_all;
use cdpr_core::surrogate::{
    CdprReachability, DofEntry, DofParams, Reachability, Surrogate, SurrogateParams,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const DT: f64 = 1e-3;
const SECONDS: f64 = 100.0;

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

/// 100 s of demands inside uvigo8's workspace: a 5 cm circle in x, y at 0.2 Hz, z and the
/// angles oscillating; `limited` pushes 1 s in every 20 s out to 1.5 m (the combination step
/// bisects those back, ~16 QPs per step).
fn demands(robot: &Robot, rotating: bool, limited: bool) -> Vec<[f64; 6]> {
    let n = (SECONDS / DT) as usize;
    let h = robot.home;
    let a = if rotating { 1.0 } else { 0.0 };
    (0..n)
        .map(|k| {
            let t = k as f64 * DT;
            let w = std::f64::consts::TAU * 0.2 * t;
            let r = if limited && (t % 20.0) > 19.0 {
                1.5
            } else {
                0.05
            };
            [
                h[0] + r * w.cos(),
                h[1] + r * w.sin(),
                h[2] + 0.05 * (0.7 * w).sin(),
                a * 0.03 * (1.3 * w).sin(),
                a * 0.03 * (1.1 * w).cos(),
                a * 0.05 * (0.9 * w).sin(),
            ]
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let robot = uvigo8();
    let surrogate = Surrogate::new(&params(&robot), DT);
    let reach = CdprReachability::with_map(&robot, 0.01);
    let mut out = Vec::new();
    let mut group = c.benchmark_group("surrogate_uvigo8_100s");
    group.throughput(Throughput::Elements((SECONDS / DT) as u64));
    group.sample_size(20);
    let cases: [(&str, bool, bool, bool); 4] = [
        // The filters alone (seed 004's model without the combination step).
        ("filters", true, false, false),
        // + combination, zero rotation inside the workspace: the map answers every step.
        ("combined_in_workspace", false, false, true),
        // + combination, rotating: every step goes to the exact tension-distribution QP.
        ("combined_rotating", true, false, true),
        // + combination with 5 % of the steps out of reach (bisected back).
        ("combined_5pct_out_of_reach", false, true, true),
    ];
    for (name, rotating, limited, combine) in cases {
        let input = demands(&robot, rotating, limited);
        if combine {
            group.sample_size(10);
        }
        group.bench_function(name, |b| {
            b.iter(|| {
                let r: Option<&dyn Reachability> = combine.then_some(&reach as &dyn Reachability);
                let stats = step_all(&surrogate, r, black_box(&input), &mut out);
                black_box((stats, out.last().copied()))
            })
        });
    }
    group.finish();
}

criterion_group!(surrogate, benches);
criterion_main!(surrogate);
