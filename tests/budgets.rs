//! Issue 15 (sim area): absurd numbers on `simulate`, `trajectory` and `compare` end in one
//! clear error, fast and in bounded memory — never an abort, a panic, a hang or gigabytes.
//! Every run here is spawned under `ulimit -v` with a deadline, so that a regression fails
//! the test instead of eating the machine.

mod common;

use common::scratch;
use std::time::Duration;

/// Virtual memory cap of every run, KB (the debug binary maps ~1 GB before it allocates).
const MEMORY_KB: u64 = 3_000_000;
/// Deadline of every run: well above a normal error exit, well below a runaway.
const DEADLINE: Duration = Duration::from_secs(20);

type Run = common::Bounded;

/// `cdpr ARGS` under the memory cap, killed at the deadline.
fn bounded(args: &[&str]) -> Run {
    common::bounded(
        args,
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        MEMORY_KB,
        DEADLINE,
    )
}

/// The run failed with `code` within the deadline, and its first stderr line names `needle`.
#[track_caller]
fn refused(args: &[&str], code: i32, needle: &str) -> Run {
    let r = bounded(args);
    assert!(
        r.elapsed < DEADLINE,
        "cdpr {args:?} ran past {DEADLINE:?} (stderr: {})",
        r.stderr
    );
    assert_eq!(
        r.code,
        Some(code),
        "cdpr {args:?}: exit {:?}, stderr: {}",
        r.code,
        r.stderr
    );
    assert!(
        r.stderr.contains(needle),
        "cdpr {args:?}: no `{needle}` in stderr: {}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("memory allocation"),
        "{}",
        r.stderr
    );
    r
}

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[test]
fn simulate_refuses_absurd_steps_speeds_and_settle_times() {
    for (line, option) in [
        ("simulate -r uvigo8 -t seed000 --dt 1e-9", "--dt"),
        ("simulate -r uvigo8 -t seed000 --dt 1e-300", "--dt"),
        ("simulate -r uvigo8 -t seed000 --speed 1e-9", "--speed"),
        ("simulate -r uvigo8 -t seed000 --settle 1e12", "--settle"),
        ("simulate -r uvigo8 -t seed000 --settle -1", "--settle"),
        (
            "simulate -r uvigo8 -t seed000 --substeps 1000000",
            "--substeps",
        ),
        ("simulate -r uvigo8 -t seed000 --pgs 1000000", "--pgs"),
        (
            "simulate -r uvigo8 -t seed000 --link-mass 1e9",
            "--link-mass",
        ),
        ("simulate -r uvigo8 -t seed000 --kp 1e30", "--kp"),
        ("simulate -r uvigo8 -t seed000 --kd -5", "--kd"),
        ("simulate -r uvigo8 -t seed000 --jerk 1e-12", "--jerk"),
    ] {
        let r = refused(&words(line), 2, option);
        assert!(r.stderr.contains("must be between") || r.stderr.contains("whole number"));
    }
}

#[test]
fn trajectory_refuses_absurd_sampling_delays_and_limits() {
    for (line, option) in [
        ("trajectory -r uvigo8 --name seed000 --dt 1e-9", "--dt"),
        (
            "trajectory -r uvigo8 --name seed000 --speed 1e-9",
            "--speed",
        ),
        ("trajectory -r uvigo8 --name seed000 --delay 1e9", "--delay"),
        (
            "trajectory -r uvigo8 --name seed000 --accel 1e-9 --check --time-scale",
            "--accel",
        ),
        (
            "trajectory -r uvigo8 --name seed000 --resample 1e-12",
            "--resample",
        ),
        (
            "trajectory -r uvigo8 --name seed000 --lowpass 1e-30",
            "--lowpass",
        ),
        (
            "trajectory -r uvigo8 --name seed000 --offset 1e300,0,0",
            "--offset",
        ),
    ] {
        let code = if option == "--offset" { 1 } else { 2 };
        refused(&words(line), code, option);
    }
}

/// Within the per-option ranges the products can still be too much: the library's sample
/// budget answers with the numbers and the options to change.
#[test]
fn the_sample_budget_names_the_options_and_the_numbers() {
    // 1e-5 s is a valid --dt, 0.001 m/s a valid --speed: together ~1e8 samples.
    let r = refused(
        &words("trajectory -r uvigo8 --name seed000 --dt 1e-5 --speed 0.001"),
        1,
        "samples",
    );
    assert!(r.stderr.contains("at most"), "{}", r.stderr);
    assert!(r.stderr.contains("dt"), "{}", r.stderr);
}

fn jump_csv() -> String {
    let dir = scratch("bounds_sim_jump");
    let path = dir.join("jump.csv");
    std::fs::write(&path, "t,x,y,z\n0,0,0,1\n1000000000,0,0,1\n").expect("written");
    path.display().to_string()
}

#[test]
fn a_csv_whose_time_jumps_a_billion_seconds_is_refused_by_the_budget() {
    let csv = jump_csv();
    // simulate: 1e12 steps at 1 ms.
    let r = refused(&["simulate", "-r", "uvigo8", "-t", &csv], 1, "steps");
    assert!(r.stderr.contains("at most"), "{}", r.stderr);
    // trajectory: summarising (and time-scaling: it is at rest) two samples is fine,
    // resampling them every 10 ms is not.
    let r = bounded(&["trajectory", "-r", "uvigo8", "--name", &csv, "--time-scale"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    refused(
        &[
            "trajectory",
            "-r",
            "uvigo8",
            "--name",
            &csv,
            "--resample",
            "0.01",
        ],
        1,
        "samples",
    );
    // compare: two samples against two samples.
    let r = bounded(&["compare", "--reference", &csv, "--actual", &csv]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn compare_reads_a_bounded_amount_of_csv() {
    let csv = jump_csv();
    let r = refused(
        &["compare", "--reference", "/dev/zero", "--actual", &csv],
        1,
        "/dev/zero",
    );
    assert!(r.stderr.contains("line"), "{}", r.stderr);
    refused(
        &["compare", "--reference", &csv, "--actual", "/dev/zero"],
        1,
        "/dev/zero",
    );
}

/// Item 4: a platform commanded through the floor in tension mode falls: the cables go slack
/// (warned, per cable, with the time below the minimum and when it started) and the run ends
/// in an error, not exit 0.
#[test]
fn a_platform_that_falls_out_of_the_frame_is_an_error_and_slack_cables_are_named() {
    let dir = scratch("bounds_sim_fall");
    let path = dir.join("fall.csv");
    std::fs::write(&path, "t,x,y,z\n0,0,0,0.6\n1,0,0,0.6\n3,0,0,-10\n").expect("written");
    let csv = path.display().to_string();
    let out = dir.join("run.csv").display().to_string();
    let args = [
        "simulate",
        "-r",
        "silva4",
        "-t",
        &csv,
        "--model",
        "elastic",
        "--control",
        "tension",
        "--out",
        &out,
    ];
    let r = refused(&args, 1, "left the robot's frame");
    assert!(r.stderr.contains("not physical"), "{}", r.stderr);
    for cable in ["cable 1 (cable1)", "cable 4 (cable4)"] {
        let line = r
            .stderr
            .lines()
            .find(|l| l.contains(cable))
            .unwrap_or_else(|| panic!("no warning for {cable}: {}", r.stderr));
        assert!(line.contains("minimum tension 0.50 N"), "{line}");
        assert!(line.contains(" s in total, first at t = 1.0"), "{line}");
    }
    // The summary and the file are still written.
    assert!(r.stdout.contains("tensions"), "{}", r.stdout);
    let rows = std::fs::read_to_string(&out)
        .expect("written")
        .lines()
        .count();
    assert_eq!(rows, 2 + 3001); // description, header, rows
}
