//! The command-line contract of `trajectory`, `compare` and `report`.

mod common;
use common::*;

fn path_str(p: &std::path::Path) -> String {
    p.display().to_string()
}

#[test]
fn trajectory_writes_seed000_and_summarises_it_as_json() {
    let dir = scratch("cli_traj_seed000");
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
    assert_eq!(
        lines.next().unwrap(),
        "# cdpr trajectory: robot uvigo8, trajectory seed000, speed 0.1 m/s"
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
fn compare_finds_the_shadows_delay_and_reports_per_segment() {
    let dir = scratch("cli_traj_compare");
    let reference = path_str(&dir.join("ref.csv"));
    let shadow = path_str(&dir.join("shadow.csv"));
    let o = cdpr(&with(
        "trajectory -r uvigo8 --name seed000 --out",
        &[&reference],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr(&[
        "trajectory",
        "-r",
        "uvigo8",
        "--name",
        &reference,
        "--delay",
        "0.07",
        "--offset",
        "0,0,-0.0005",
        "--resample",
        "0.05",
        "--out",
        &shadow,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&[
        "compare",
        "--reference",
        &reference,
        "--actual",
        &shadow,
        "--json",
    ]);
    assert_eq!(v["lag_samples"], 35);
    assert!((v["lag_s"].as_f64().unwrap() - 0.07).abs() < 1e-9);
    assert!((floats(&v["rms"])[2] - 0.0005).abs() < 2e-5);
    assert_eq!(v["segments"].as_array().unwrap().len(), 5);
    assert!(
        v["nrmse_definition"]
            .as_str()
            .unwrap()
            .contains("goodnessOfFit")
    );
    // The human table is in mm, shaped like seed 000's Table 1.
    let o = cdpr(&["compare", "--reference", &reference, "--actual", &shadow]);
    let text = stdout(&o);
    assert!(text.contains("RMS X [mm]") && text.contains("TOTAL") && text.contains("Fréchet"));
}

#[test]
fn compare_reads_commanded_and_actual_columns_of_one_simulation_run() {
    let dir = scratch("cli_traj_columns");
    let run = dir.join("run.csv");
    let mut text = String::from(
        "t,x_cmd,y_cmd,z_cmd,roll_cmd,pitch_cmd,yaw_cmd,x,y,z,roll,pitch,yaw,length_cmd_1,length_1,tension_1,segment\n",
    );
    for k in 0..200 {
        let t = k as f64 * 0.002;
        let x = 0.1 * t;
        let seg = if k < 100 { "A" } else { "B" };
        text += &format!(
            "{t},{x},0,0.15,0,0,0,{},0,0.149,0,0,0,1.5,1.5,10,{seg}\n",
            x - 0.0001
        );
    }
    std::fs::write(&run, text).unwrap();
    let run = path_str(&run);
    let v = json(&[
        "compare",
        "--reference",
        &run,
        "--reference-columns",
        "_cmd",
        "--actual",
        &run,
        "--no-lag",
        "--json",
    ]);
    let rms = floats(&v["rms"]);
    assert!((rms[0] - 0.0001).abs() < 1e-12 && (rms[2] - 0.001).abs() < 1e-12);
    assert_eq!(v["segments"][1]["name"], "B");
}

#[test]
fn report_writes_json_markdown_and_plots() {
    let dir = scratch("cli_traj_report");
    let reference = path_str(&dir.join("ref.csv"));
    let actual = path_str(&dir.join("act.csv"));
    for (out, extra) in [(&reference, vec![]), (&actual, vec!["--lowpass", "4"])] {
        let mut args = vec![
            "trajectory",
            "-r",
            "silva4",
            "--name",
            "pickplace",
            "--speed",
            "0.5",
            "--out",
            out,
        ];
        args.extend(extra);
        let o = cdpr(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let report_dir = dir.join("report");
    let v = json(&[
        "report",
        "--reference",
        &reference,
        "--actual",
        &actual,
        "--out",
        &path_str(&report_dir),
        "--title",
        "pick & place",
        "--json",
    ]);
    assert_eq!(v["files"]["plots"].as_array().unwrap().len(), 6);
    for name in ["axes", "error", "paths"] {
        let png = std::fs::read(report_dir.join(format!("{name}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}.png");
        let svg = std::fs::read_to_string(report_dir.join(format!("{name}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("[mm]"), "{name}.svg");
    }
    let md = std::fs::read_to_string(report_dir.join("report.md")).unwrap();
    assert!(md.starts_with("# pick & place"));
    assert!(md.contains(
        "| Segment | RMS X (mm) | RMS Y (mm) | RMS Z (mm) | RMS X-Y-Z (mm) | Fréchet (mm) |"
    ));
    for row in ["| Up |", "| Arc |", "| Down |", "| **TOTAL** |"] {
        assert!(md.contains(row), "{row}");
    }
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("metrics.json")).unwrap())
            .unwrap();
    assert_eq!(metrics["lag_samples"], v["metrics"]["lag_samples"]);
}

#[test]
fn bad_inputs_fail_with_the_file_and_line() {
    let dir = scratch("cli_traj_bad");
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

#[test]
fn help_teaches_by_example() {
    for cmd in ["trajectory", "compare", "report"] {
        let o = cdpr(&[cmd, "--help"]);
        assert!(o.status.success());
        let text = stdout(&o);
        assert!(text.contains("Example"), "{cmd}");
        assert!(text.contains(&format!("cdpr {cmd} ")), "{cmd}");
    }
}
