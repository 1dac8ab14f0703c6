//! The issue's figure for recordings: a 10-minute shadow session at 1 kHz (uvigo8, 8 cables,
//! plus the shadow's 4 columns: 600 001 rows of 42 numbers) written as CSV and as MCAP
//! through core's recorder, then reopened through the one reader ([`RunFile`]): file size,
//! write cost per cycle, time to open, `row()` latency for a random jump and for the next
//! row (a slider dragged), and the peak memory of opening (VmHWM of a child process that only
//! opens the file). A measurement, not a check, hence ignored; run it in release:
//!
//! ```sh
//! cargo test --release -p cdpr-core --test recording_figure -- --ignored --nocapture
//! ```
//!
//! The rows are a real 9.6 s run of seed000 on uvigo8 (elastic cables), repeated with the
//! time running on, so that the numbers compress as a real run's do.

use cdpr_core::recording::sidecar::Sidecar;
use cdpr_core::recording::{Recorder, RunFile};
use cdpr_core::run::{RunOptions, run};
use cdpr_core::sim::{ControlMode, ModelKind, SimConfig};
use cdpr_core::trajectory::BuiltinOptions;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Rows of the figure's record: 10 minutes at 1 kHz.
const ROWS: usize = 600_001;
/// Set in the child process that only opens the file named by it.
const OPEN_ONLY: &str = "CDPR_FIGURE_OPEN_ONLY";

fn status_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Opens `path` and prints the resident memory before and the peak after, kB.
fn open_only(path: &Path) {
    let before = status_kb("VmRSS:");
    let f = RunFile::open(path).expect("opens");
    let peak = status_kb("VmHWM:");
    println!(
        "OPENED rows={} rss_before_kb={before} hwm_kb={peak}",
        f.len()
    );
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Writes the record to `path`; the write cost per row and the slowest row, µs, and what the
/// process's resident memory grew by while writing, kB (halfway and at the end: bounded
/// memory means the two are alike).
fn write(path: &Path) -> (f64, f64, u64, u64) {
    let robot = cdpr_core::fixtures::robot("uvigo8");
    let options = RunOptions::new(SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, 1e-3));
    let seed000 = BuiltinOptions {
        speed: 0.4,
        ..BuiltinOptions::default()
    };
    let traj = cdpr_core::trajectory::builtin(&robot, "seed000", &seed000).expect("seed000");
    let outcome = run(&robot, &traj, &options, &mut |_| {}).expect("runs");
    let meta = Sidecar::new("cdpr shadow: robot uvigo8 (figure)").with_robot(&robot);
    let mut recorder = Recorder::create(path, &robot, &traj, &meta)
        .expect("created")
        .with_extra_columns(&["plc_cycle", "enable", "rejected", "gap"])
        .with_dt(1e-3);
    let n = outcome.records.len();
    let mut buf = outcome.records[0].clone();
    let rss_before = status_kb("VmRSS:");
    let (mut worst, mut rss_half) = (0f64, 0);
    let started = Instant::now();
    for k in 0..ROWS {
        let row_started = Instant::now();
        let r = &outcome.records[k % n];
        buf.commanded = r.commanded;
        buf.length_command.clone_from(&r.length_command);
        buf.state.clone_from(&r.state);
        buf.state.time = k as f64 * 1e-3;
        let extra = [k as f64, 1.0, 0.0, f64::from(k % n == 0 && k > 0)];
        recorder
            .write_with(&buf.as_record(), &extra)
            .expect("written");
        worst = worst.max(row_started.elapsed().as_secs_f64());
        if k == ROWS / 2 {
            rss_half = status_kb("VmRSS:").saturating_sub(rss_before);
        }
    }
    recorder.finish().expect("finished");
    let rss_end = status_kb("VmRSS:").saturating_sub(rss_before);
    (
        started.elapsed().as_secs_f64() / ROWS as f64 * 1e6,
        worst * 1e6,
        rss_half,
        rss_end,
    )
}

fn measure(path: &Path) {
    let (per_row_us, worst_us, rss_half, rss_end) = write(path);
    let size = std::fs::metadata(path).expect("written").len();
    // Peak memory of opening alone: a child process (this test, told to only open).
    let child = std::process::Command::new(std::env::current_exe().expect("exe"))
        .args([
            "--exact",
            "ten_minutes_at_1_khz",
            "--ignored",
            "--nocapture",
        ])
        .env(OPEN_ONLY, path)
        .output()
        .expect("child runs");
    let out = String::from_utf8_lossy(&child.stdout);
    let opened = out
        .lines()
        .find(|l| l.starts_with("OPENED"))
        .unwrap_or("OPENED ?")
        .to_string();
    let started = Instant::now();
    let mut f = RunFile::open(path).expect("opens");
    let open_s = started.elapsed().as_secs_f64();
    assert_eq!(f.len(), ROWS);
    // Random jumps (a click on the plot, a jump to an event): most read a block or chunk.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut jumps = Vec::new();
    for _ in 0..300 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let k = (x >> 33) as usize % ROWS;
        let t = Instant::now();
        f.row(k).expect("row");
        jumps.push(t.elapsed().as_secs_f64() * 1e6);
    }
    // The slider dragged: 20 000 neighbouring rows from the middle on.
    let mut steps = Vec::new();
    for k in ROWS / 2..ROWS / 2 + 20_000 {
        let t = Instant::now();
        f.row(k).expect("row");
        steps.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "FIGURE {}: {:.1} MB, write {:.2} µs/row (slowest {:.0} µs; memory +{rss_half} kB \
         halfway, +{rss_end} kB at the end), open {:.2} s ({opened}), random row p50 {:.0} µs \
         p99 {:.0} µs, next row mean {:.2} µs p99 {:.1} µs max {:.0} µs",
        path.extension().and_then(|e| e.to_str()).unwrap_or("?"),
        size as f64 / 1e6,
        per_row_us,
        worst_us,
        open_s,
        percentile(jumps.clone(), 0.5),
        percentile(jumps, 0.99),
        mean(&steps),
        percentile(steps.clone(), 0.99),
        percentile(steps, 1.0),
    );
}

#[test]
#[ignore = "a measurement (10 minutes of 1 kHz records): run in release with --ignored"]
fn ten_minutes_at_1_khz() {
    if let Some(path) = std::env::var_os(OPEN_ONLY) {
        open_only(&PathBuf::from(path));
        return;
    }
    let dir = std::env::temp_dir().join(format!("cdpr-figure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    for name in ["shadow.csv", "shadow.mcap"] {
        measure(&dir.join(name));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
