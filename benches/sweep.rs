//! Sweep throughput: the shipped example spec (12 elastic runs of uvigo8 on poly5) executed
//! on 1 and 2 threads, rows discarded. Run: cargo bench --no-default-features --bench sweep
//! (or time `cdpr sweep robots/sweeps/uvigo8-stiffness.toml --out runs.csv --force --jobs N`).

use cdpr_core::fixtures::workspace_root;
use cdpr_core::sweep::{ExecuteOptions, Spec, execute};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::ops::ControlFlow;

fn benches(c: &mut Criterion) {
    let spec = Spec::from_file(workspace_root().join("robots/sweeps/uvigo8-stiffness.toml"))
        .expect("the example spec");
    for jobs in [1, 2] {
        let options = ExecuteOptions {
            jobs,
            ..Default::default()
        };
        c.bench_function(&format!("sweep 12 runs, {jobs} jobs"), |b| {
            b.iter(|| {
                let summary = execute(&spec, &options, |row| {
                    black_box(row);
                    ControlFlow::Continue(())
                })
                .expect("runs");
                black_box(summary.done)
            })
        });
    }
}

criterion_group! {
    name = group;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(group);
