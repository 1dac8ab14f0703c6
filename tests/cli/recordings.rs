//! MCAP recordings checked by an independent reader: the same run written as `run.mcap` and
//! `run.csv`, then `tests/python/check_mcap.py` (the PyPI `mcap` package, protobuf decoded
//! from the schemas in the file by `mcap-protobuf-support`) checks every channel, the message
//! counts, every `/run` value against the CSV bit for bit, `/tf` against the pose, the scene's
//! cables against the recorded lengths, the metadata and the robot attachments.
//!
//! Python comes from `CDPR_PYTHON` (default `.venv-ci/bin/python`, which `.ci/run` creates);
//! without the packages the test says so and passes, unless `CDPR_REQUIRE_PYTHON=1` (CI).

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn python() -> Option<PathBuf> {
    python_with("mcap, mcap_protobuf")
}

fn check_mcap(python: &Path, mcap: &Path, csv: &Path, extra: &[&str]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_mcap.py");
    let mut command = Command::new(python);
    command.arg(script).arg(mcap).arg(csv);
    if !extra.is_empty() {
        command.args(["--extra", &extra.join(",")]);
    }
    command.output().expect("python runs")
}

/// `cdpr simulate ARGS --out FILE` for a .mcap and a .csv in `dir`.
fn simulate_both(dir: &Path, args: &[&str]) -> (PathBuf, PathBuf) {
    let (mcap, csv) = (dir.join("run.mcap"), dir.join("run.csv"));
    for out in [&mcap, &csv] {
        let mut all = vec!["simulate"];
        all.extend_from_slice(args);
        let out = out.to_str().expect("utf-8 path");
        all.extend(["--out", out]);
        let o = cdpr(&all);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    (mcap, csv)
}

#[test]
fn a_simulated_run_as_mcap_holds_the_csvs_numbers_for_an_independent_reader() {
    let Some(python) = python() else { return };
    for (robot, trajectory) in [("uvigo8", "tilt"), ("keops", "poly5")] {
        let dir = scratch(&format!("recordings-{robot}"));
        let (mcap, csv) = simulate_both(&dir, &["--robot", robot, "--trajectory", trajectory]);
        let o = check_mcap(&python, &mcap, &csv, &[]);
        assert!(o.status.success(), "{robot}: {}", stderr(&o));
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        let rows = summary["rows"].as_u64().expect("rows");
        assert!(rows > 1000, "{robot}: {rows} rows");
        // 30 scenes a simulated second: the run lasts (rows − 1) ms.
        let scenes = summary["counts"]["/scene"].as_u64().expect("scenes");
        assert_eq!(scenes, (rows - 1) * 30 / 1000 + 1, "{robot}");
        assert_eq!(summary["metadata"]["robot"], robot);
        assert_eq!(
            summary["attachments"],
            serde_json::json!(["robot.json", "robot.toml"]),
            "{robot}"
        );
        assert_eq!(summary["metadata"]["dt"], "0.001");
        let description = summary["metadata"]["description"].as_str().expect("text");
        assert!(description.contains(trajectory), "{description}");
        // The file is smaller than the CSV (compressed chunks), scene included.
        let size = |p: &Path| std::fs::metadata(p).expect("exists").len();
        assert!(
            size(&mcap) < size(&csv),
            "{} vs {}",
            size(&mcap),
            size(&csv)
        );
    }
}

#[test]
fn the_independent_check_fails_on_another_runs_numbers() {
    let Some(python) = python() else { return };
    let dir = scratch("recordings-other-run");
    let (mcap, _) = simulate_both(&dir, &["--robot", "keops", "--trajectory", "poly5"]);
    let other = dir.join("other.csv");
    let o = cdpr(&[
        "simulate",
        "--robot",
        "keops",
        "--trajectory",
        "poly5",
        "--speed",
        "0.05",
        "--out",
        other.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = check_mcap(&python, &mcap, &other, &[]);
    assert!(!o.status.success(), "another run passed the check");
    assert!(stderr(&o).contains("check_mcap:"), "{}", stderr(&o));
}

#[test]
fn a_recording_of_another_type_is_refused_naming_the_file_and_the_types() {
    let dir = scratch("recordings-extension");
    let path = dir.join("run.txt");
    let o = cdpr(&[
        "simulate",
        "--robot",
        "keops",
        "--trajectory",
        "poly5",
        "--out",
        path.to_str().expect("utf-8"),
    ]);
    assert_fails(&o, &path.display().to_string());
    assert_stderr(&o, ".csv");
    assert_stderr(&o, ".mcap");
    assert!(!path.exists(), "nothing written");
    // The shadow refuses it before asking a PLC (none listens on port 1).
    let o = cdpr(&[
        "shadow",
        "--plc",
        "127.0.0.1:1",
        "--record",
        path.to_str().expect("utf-8"),
    ]);
    assert_fails(&o, &path.display().to_string());
    assert!(!stderr(&o).contains("PLC"), "{}", stderr(&o));
    assert!(!path.exists(), "nothing written");
}

#[test]
fn a_shadow_records_mcap_with_its_columns_and_cycle_statistics() {
    let Some(python) = python() else { return };
    let dir = scratch("recordings-shadow");
    let record = dir.join("shadow.mcap");
    let (plc, addr) = plc(&[
        "--robot",
        "uvigo8",
        "--listen",
        "127.0.0.1:0",
        "--trajectory",
        "seed000",
        "--hold",
        "20ms",
        "--duration",
        "6",
    ]);
    let run = Proc::spawn(&[
        "shadow",
        "--plc",
        &addr,
        "--ams-net-id",
        "127.0.0.1.1.1",
        "--headless",
        "--model",
        "elastic",
        "--record",
        record.to_str().expect("utf-8"),
        "--duration",
        "2.5",
        "--json",
    ]);
    let summary = run.json();
    let _ = plc.finish();
    let steps = summary["steps"].as_u64().expect("steps");
    // No CSV twin (a shadow never runs twice the same): the rows are /run's own, and /tf,
    // /scene, the metadata and the extra columns are checked against them.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_mcap.py");
    let o = Command::new(&python)
        .arg(script)
        .arg(&record)
        .arg("-")
        .args(["--extra", "plc_cycle,enable,rejected,gap", "--cycle"])
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let checked: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        checked["counts"]["/run"].as_u64(),
        Some(steps),
        "every step recorded"
    );
    // Once a second of shadow time: at 0, 1 and 2 s (2.5 s run).
    let cycles = checked["counts"]["/shadow/cycle"].as_u64().expect("cycles");
    assert!((2..=3).contains(&cycles), "{cycles} /shadow/cycle messages");
    assert!(
        checked["metadata"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("cdpr shadow")),
        "{checked}"
    );
}

#[test]
fn a_sweep_records_one_mcap_file_per_run_named_by_its_index() {
    let Some(python) = python() else { return };
    let dir = scratch("recordings-sweep");
    let (rows, records) = (dir.join("rows.csv"), dir.join("runs"));
    let o = cdpr(&[
        "sweep",
        "robots/sweeps/uvigo8-stiffness.toml",
        "--out",
        rows.to_str().expect("utf-8"),
        "--shard",
        "1/6",
        "--record-dir",
        records.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(&records)
        .expect("the directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // 12 runs, shard 1 of 6: runs 1 and 7.
    assert_eq!(names, ["run-000001.mcap", "run-000007.mcap"]);
    let mut reader = csv::Reader::from_path(&rows).expect("rows");
    let header = reader.headers().expect("header").clone();
    let at = |name: &str| header.iter().position(|h| h == name).expect(name);
    for row in reader.records() {
        let row = row.expect("row");
        let index: u64 = row[at("index")].parse().expect("index");
        let steps: u64 = row[at("steps")].parse().expect("steps");
        let file = records.join(format!("run-{index:06}.mcap"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_mcap.py");
        let o = Command::new(&python)
            .arg(script)
            .arg(&file)
            .arg("-")
            .output()
            .expect("python runs");
        assert!(o.status.success(), "{}: {}", file.display(), stderr(&o));
        let checked: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        // The initial state and one record per step.
        assert_eq!(
            checked["counts"]["/run"].as_u64(),
            Some(steps + 1),
            "run {index}"
        );
        let description = checked["metadata"]["description"].as_str().expect("text");
        assert!(
            description.contains(&format!("run {index}:")),
            "{description}"
        );
        assert_eq!(checked["metadata"]["dt"], "0.002");
    }
}
