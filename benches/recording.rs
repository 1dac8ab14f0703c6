//! Recordings: what writing a run costs per step, as CSV and as MCAP, and what the
//! replay's slider costs per row read back — the next row (the slider dragged, or playing) and
//! a random row (a click on the plot, a jump to an event).
//!
//! A real 4 s run of seed000 on uvigo8 (elastic cables, 1 ms steps), written with the shadow's
//! four extra columns as `cdpr shadow --record` writes it, into a file under the system's temp
//! directory; rows are read back from a minute of it (60 000 rows: more 1024-row blocks and
//! MCAP chunks than the reader caches, so a jump reads from the file). The 10-minute 1 kHz figure (file size, time to open, peak memory) is
//! `crates/cdpr-core/tests/recording_figure.rs`, see docs/src/measurements.md.
//!
//! Run: cargo bench --no-default-features --bench recording

use cdpr_core::recording::sidecar::Sidecar;
use cdpr_core::recording::{Pace, Recorder, RunFile};
use cdpr_core::run::{RunOptions, RunOutcome, run};
use cdpr_core::sim::{ControlMode, ModelKind, SimConfig};
use cdpr_core::trajectory::{BuiltinOptions, Trajectory};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};

const EXTRA: [&str; 4] = ["plc_cycle", "enable", "rejected", "gap"];

fn seed000_run() -> (cdpr_core::robot::Robot, Trajectory, RunOutcome) {
    let robot = cdpr_core::fixtures::robot("uvigo8");
    let options = RunOptions::new(SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, 1e-3));
    let seed000 = BuiltinOptions {
        speed: 0.4,
        ..BuiltinOptions::default()
    };
    let mut traj = cdpr_core::trajectory::builtin(&robot, "seed000", &seed000).expect("seed000");
    traj.samples.retain(|s| s.t <= 4.0);
    let outcome = run(&robot, &traj, &options, &mut |_| {}).expect("runs");
    (robot, traj, outcome)
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("cdpr-bench-{}-{name}", std::process::id()))
}

/// Writes `rows` records to `path` (through core's one recorder): `outcome`'s, repeated with
/// the time running on.
fn write_all(
    path: &Path,
    robot: &cdpr_core::robot::Robot,
    traj: &Trajectory,
    outcome: &RunOutcome,
    rows: usize,
    pace: Pace,
) {
    let meta = Sidecar::new("cdpr bench: recording").with_robot(robot);
    let mut recorder = Recorder::create_paced(path, robot, traj, &meta, pace)
        .expect("created")
        .with_extra_columns(&EXTRA)
        .with_dt(1e-3);
    let n = outcome.records.len();
    let mut buf = outcome.records[0].clone();
    for k in 0..rows {
        let r = &outcome.records[k % n];
        buf.commanded = r.commanded;
        buf.length_command.clone_from(&r.length_command);
        buf.state.clone_from(&r.state);
        buf.state.time = k as f64 * 1e-3;
        recorder
            .write_with(&buf.as_record(), &[k as f64, 1.0, 0.0, 0.0])
            .expect("written");
    }
    recorder.finish().expect("finished");
}

fn bench(c: &mut Criterion) {
    let (robot, traj, outcome) = seed000_run();
    let steps = outcome.records.len();
    let mut g = c.benchmark_group("recording");
    g.sample_size(10);
    // The shadow's pace: the slowest write is a chunk compressed inside a cycle.
    let live = scratch("live.mcap");
    g.bench_function(format!("write_mcap_live_{steps}_steps"), |b| {
        b.iter(|| write_all(&live, &robot, &traj, &outcome, steps, Pace::Live))
    });
    let _ = std::fs::remove_file(&live);
    for ext in ["csv", "mcap"] {
        let path = scratch(&format!("run.{ext}"));
        // Per step: divide the figure by the steps written (printed once).
        eprintln!("recording/write_{ext}: {steps} steps per iteration");
        g.bench_function(format!("write_{ext}_{steps}_steps"), |b| {
            b.iter(|| write_all(&path, &robot, &traj, &outcome, steps, Pace::Offline))
        });
        // A minute at 1 kHz: more blocks and chunks than the reader caches.
        write_all(&path, &robot, &traj, &outcome, 60_000, Pace::Offline);
        let mut file = RunFile::open(&path).expect("opens");
        let rows = file.len();
        let mut k = 0;
        g.bench_function(format!("next_row_{ext}"), |b| {
            b.iter(|| {
                k = (k + 1) % rows;
                black_box(file.row(k).expect("row"))
            })
        });
        // A jump: a row of a block or chunk not in the cache (a quarter of the run away).
        let mut x = 0usize;
        g.bench_function(format!("random_row_{ext}"), |b| {
            b.iter_batched(
                || {
                    x = (x + rows / 4 + 1031) % rows;
                    x
                },
                |k| black_box(file.row(k).expect("row")),
                BatchSize::SmallInput,
            )
        });
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(cdpr_core::recording::sidecar::path_of(&path));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
