//! `cdpr test`'s virtual-PLC scenarios: the shipped suite (robots/suites/shipped.toml, four
//! scenarios, 47.5 s of shadow time) run whole on one thread and on two, and its longest
//! scenario alone (seed 000 at a 1 ms PLC task: 14.7 s, 14 690 exchanges with a physics step,
//! a recorded row and the watched symbol each). The figure to hold: many times real time, the
//! suite's wall time ÷ its shadow time printed as the real-time factor.
//! Run: cargo bench --no-default-features --bench suite

use cdpr_ads::link::Interrupt;
use cdpr_ads::suite::{RunSettings, ScenarioResult, Suite, run::run_scenario, run_suite};
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::Instant;

fn shipped() -> Suite {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("robots/suites/shipped.toml");
    Suite::from_file(&path).expect("the shipped suite")
}

fn settings(jobs: usize) -> RunSettings {
    RunSettings {
        records: std::env::temp_dir().join(format!("cdpr-bench-suite-{}", std::process::id())),
        jobs,
    }
}

fn bench(c: &mut Criterion) {
    let suite = shipped();
    let stop = Interrupt::new();
    for jobs in [1, 2] {
        let started = Instant::now();
        let results =
            run_suite(&suite, &settings(jobs), &stop, &|_: &ScenarioResult| {}).expect("runs");
        let wall = started.elapsed().as_secs_f64();
        let simulated: f64 = results
            .iter()
            .map(|r| r.run.as_ref().map_or(0.0, |run| run.simulated))
            .sum();
        assert!(
            results.iter().all(|r| r.passed()),
            "the shipped suite passes"
        );
        println!(
            "shipped suite, {jobs} job(s): {simulated:.1} s of shadow time in {wall:.2} s wall \
             ({:.0}× real time)",
            simulated / wall
        );
    }
    let fast = suite
        .scenarios
        .iter()
        .position(|s| s.name == "seed000 at a 1 ms task")
        .expect("the 1 ms scenario");
    let mut group = c.benchmark_group("suite");
    group.sample_size(10);
    group.bench_function("seed000 at a 1 ms task (14.7 s of shadow time)", |b| {
        b.iter(|| run_scenario(&suite, fast, &settings(1), &stop, &|_: &ScenarioResult| {}))
    });
    group.bench_function("shipped suite, 2 jobs", |b| {
        b.iter(|| run_suite(&suite, &settings(2), &stop, &|_: &ScenarioResult| {}).expect("runs"))
    });
    group.finish();
    let _ = std::fs::remove_dir_all(settings(1).records);
}

criterion_group!(benches, bench);
criterion_main!(benches);
