//! Work budgets: options each within its range whose product is too much (samples, steps,
//! grid cells, cloud points), and inputs that are too large (a CSV whose time jumps a billion
//! seconds, /dev/zero), are refused by the library with the numbers and the options to
//! change — at once and in bounded memory, never an abort, a panic, a hang or gigabytes.
//! Every run here is spawned under `ulimit -v` with a deadline, so that a regression fails
//! the test instead of eating the machine.

use crate::common::{capped, refused, scratch, words};

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

/// The CSV in a scratch directory of the test's own (`test`): tests run in parallel.
fn jump_csv(test: &str) -> String {
    let dir = scratch(&format!("budgets_jump_{test}"));
    let path = dir.join("jump.csv");
    std::fs::write(&path, "t,x,y,z\n0,0,0,1\n1000000000,0,0,1\n").expect("written");
    path.display().to_string()
}

#[test]
fn a_csv_whose_time_jumps_a_billion_seconds_is_refused_by_the_budget() {
    let csv = jump_csv("simulate");
    // simulate: 1e12 steps at 1 ms.
    let r = refused(&["simulate", "-r", "uvigo8", "-t", &csv], 1, "steps");
    assert!(r.stderr.contains("at most"), "{}", r.stderr);
    // trajectory: summarising (and time-scaling: it is at rest) two samples is fine,
    // resampling them every 10 ms is not.
    let r = capped(&["trajectory", "-r", "uvigo8", "--name", &csv, "--time-scale"]);
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
    let r = capped(&["compare", "--reference", &csv, "--actual", &csv]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn compare_reads_a_bounded_amount_of_csv() {
    let csv = jump_csv("compare");
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

#[test]
fn the_workspace_grid_budget_names_the_options() {
    // Each option within its range, their product beyond the budget: refused at once by
    // the library, naming both.
    let r = refused(
        &words("workspace -r uvigo8 --no-plot --grid 400 --orientation 10 --levels 21"),
        1,
        "at most",
    );
    assert!(
        r.stderr.contains("--grid 400") && r.stderr.contains("--levels 21"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_linear_delta_cloud_budget_names_the_step() {
    // A step within its range whose cloud would be too large for the budget.
    let r = refused(
        &words("workspace -r keops --no-plot --step 1e-4"),
        1,
        "at most",
    );
    assert!(
        r.stderr.contains("--step") && r.stderr.contains("points"),
        "{}",
        r.stderr
    );
}
