//! `cdpr trajectory`: seed 000 written and summarised, the winch-limit check and time scaling,
//! unknown names and bad files refused with the file and line.

use crate::common;
use crate::common::*;

fn path_str(p: &std::path::Path) -> String {
    p.display().to_string()
}

#[test]
fn trajectory_writes_seed000_and_summarises_it_as_json() {
    let dir = scratch("trajectory_seed000");
    let out = path_str(&dir.join("seed000.csv"));
    let v = json(&with(
        "trajectory --robot uvigo8 --name seed000 --speed 0.1 --out",
        &[&out, "--json"],
    ));
    assert_eq!(v["samples"], 15_699);
    let names: Vec<&str> = v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["XY", "XZ", "YZ", "Up", "Down"]);
    assert!((v["peak_speed"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    // The description is in the sidecar; the CSV starts with its header.
    let meta = std::fs::read_to_string(format!("{}.meta.toml", out)).unwrap();
    assert!(
        meta.contains(
            "description = \"cdpr trajectory: robot uvigo8, trajectory seed000, speed 0.1 m/s\""
        ),
        "{meta}"
    );
    assert!(lines.next().unwrap().starts_with("t,x,y,z,roll,pitch,yaw,"));
    assert_eq!(lines.count(), 15_699);
}

#[test]
fn check_passes_pickplace_on_silva4_and_fails_a_trapezoid_on_uvigo8() {
    let v = json(&words(
        "trajectory -r silva4 --name pickplace --speed 0.5 --check --json",
    ));
    assert_eq!(v["check"]["ok"], true);
    assert_eq!(v["check"]["jerk"]["limit"], 22.5);
    // A trapezoid's acceleration steps are an unbounded jerk: exit status 2, named cable.
    let o = cdpr(&words("trajectory -r uvigo8 --name seed000 --check"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("jerk [m/s³]") && text.contains("EXCEEDS uvigo8's winch limits"));
    // Time scaling fixes a smooth trajectory that is too fast.
    let v = json(&words(
        "trajectory -r silva4 --name poly5 --speed 4 --time-scale --json",
    ));
    assert_eq!(v["check"]["ok"], true);
    assert!(v["time_scale_factor"].as_f64().unwrap() > 1.0);
}

#[test]
fn bad_inputs_fail_with_the_file_and_line() {
    let dir = scratch("trajectory_bad_inputs");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "t,x,y,z\n0,0,0,0\n0.1,0,0,0\n0.05,0,0,0\n").unwrap();
    let bad = path_str(&bad);
    let o = cdpr(&["compare", "--reference", &bad, "--actual", &bad, "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(
        err.contains("reading the reference trajectory") && err.contains("bad.csv:4: t = 0.05 s"),
        "{err}"
    );
    let o = cdpr(&words("trajectory -r uvigo8 --name spiral"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(
        "`spiral` is neither a built-in trajectory (seed000, pickplace, poly5, tilt, steps, chirp"
    ));
    let o = cdpr(&words("trajectory -r uvigo8 --name seed000 --speed 0"));
    common::assert_stderr(&o, "invalid value '0' for '--speed <M/S>': must be between");
}
