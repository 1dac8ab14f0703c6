//! `compare` on seed 000 at 100 mm/s sampled every 2 ms (15 699 samples each), including the
//! discrete Fréchet distance; and Fréchet alone on 20 000 × 20 000 samples, for a tracking
//! copy (the pruned band) and for unrelated paths (the full dynamic programme).
//! And the metrics of a long slow run: seed 000 at 5 mm/s, 309 295 samples; and Fréchet of a
//! path that stands still against one that wobbles, 200 000 samples each (a held channel,
//! rssu2's x, y, z: once a minute's dynamic programme).
//! Run: cargo bench --no-default-features --bench metrics

use cdpr_core::metrics::{self, CompareOptions, Point};
use cdpr_core::trajectory::perturb::{Perturbation, perturb};
use cdpr_core::trajectory::{self, BuiltinOptions, Trajectory};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn seed000(dt: f64) -> Trajectory {
    let robot = cdpr_core::fixtures::uvigo8();
    let options = BuiltinOptions {
        dt,
        ..BuiltinOptions::default()
    };
    trajectory::builtin(&robot, "seed000", &options).expect("builds")
}

/// A synthetic shadow: 70 ms late, 3 Hz low-pass, 0.5 mm sag, same sampling period.
fn shadow(reference: &Trajectory) -> Trajectory {
    let p = Perturbation {
        delay: 0.07,
        lowpass_hz: Some(3.0),
        offset: [0.0, 0.0, -0.0005],
        resample: None,
    };
    perturb(reference, &p).expect("perturbs")
}

fn points(t: &Trajectory, n: usize) -> Vec<Point> {
    t.samples[..n]
        .iter()
        .map(|s| [s.pose.position.x, s.pose.position.y, s.pose.position.z])
        .collect()
}

fn benches(c: &mut Criterion) {
    let reference = seed000(0.002);
    let actual = shadow(&reference);
    assert_eq!(reference.samples.len(), 15_699);
    let options = CompareOptions::default();
    let mut group = c.benchmark_group("metrics");
    group.sample_size(10);
    group.bench_function("compare_seed000_15699_samples", |b| {
        b.iter(|| metrics::compare(black_box(&reference), black_box(&actual), &options))
    });

    // 20 000 samples each: seed 000 sampled every 1.5 ms.
    let fine = seed000(0.0015);
    let p = points(&fine, 20_000);
    let q = points(&shadow(&fine), 20_000);
    group.bench_function("frechet_20000x20000_tracking", |b| {
        b.iter(|| metrics::frechet(black_box(&p), black_box(&q)))
    });
    let reversed: Vec<Point> = p.iter().rev().copied().collect();
    group.bench_function("frechet_20000x20000_unrelated", |b| {
        b.iter(|| metrics::frechet(black_box(&p), black_box(&reversed)))
    });
    // The metrics of a long slow run, as `simulate` computes them after
    // `trajectory --name seed000 --speed 0.005 --dt 0.002` (618.6 s): 309 295 samples,
    // lag search over 500 lags, Fréchet of the total and of the five segments.
    let slow = trajectory::builtin(
        &cdpr_core::fixtures::uvigo8(),
        "seed000",
        &BuiltinOptions {
            dt: 0.002,
            speed: 0.005,
            ..BuiltinOptions::default()
        },
    )
    .expect("builds");
    let slow_actual = shadow(&slow);
    group.bench_function("compare_seed000_slow_309295_samples", |b| {
        b.iter(|| metrics::compare(black_box(&slow), black_box(&slow_actual), &options))
    });
    let n = 200_000;
    let still: Vec<Point> = vec![[0.1, -0.2, 1.5]; n];
    let wobble: Vec<Point> = (0..n)
        .map(|k| {
            let s = k as f64 * 1e-3;
            [0.1 + 1e-4 * s.sin(), -0.2, 1.5 + 2e-4 * (3.0 * s).cos()]
        })
        .collect();
    group.bench_function("frechet_200000_still_vs_wobble", |b| {
        b.iter(|| metrics::frechet(black_box(&still), black_box(&wobble)))
    });
    group.finish();
}

criterion_group!(metrics_benches, benches);
criterion_main!(metrics_benches);
