//! `cdpr simulate`: the defaults work, the JSON keys, the CSV header, the wall time and its
//! split, a blow-up and a fall out of the frame kept on record, clear errors.

use crate::common::*;
use std::time::Instant;

#[test]
fn default_simulation_of_seed000_prints_seed_000_style_results() {
    let o = cdpr(&words(
        "simulate --robot robots/uvigo8.toml --trajectory seed000 --speed 0.1",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for word in [
        "chain model",
        "length winches",
        "real time",
        "XY",
        "XZ",
        "YZ",
        "Up",
        "Down",
        "TOTAL",
        "Fréchet",
    ] {
        assert!(out.contains(word), "missing `{word}` in:\n{out}");
    }
}

#[test]
fn json_and_csv_outputs_follow_the_contract() {
    let dir = scratch("simulate_json_csv");
    let csv_path = dir.join("run.csv");
    let v = json(&with(
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --compensate --json --out",
        &[csv_path.to_str().unwrap()],
    ));
    for key in "lag_samples lag_s rms rms_3d max_3d frechet nrmse segments rtf steps wall_s"
        .split_whitespace()
    {
        assert!(v.get(key).is_some(), "JSON lacks `{key}`");
    }
    let rms = v["rms_3d"].as_f64().unwrap();
    assert!(rms > 0.0 && rms < 1e-3, "rms_3d {rms} m");
    // The real-time factor is simulated over wall time, of the steps taken (its size is the
    // machine's business: benches/sim.rs).
    let simulated = v["simulated_s"].as_f64().unwrap();
    let wall = v["wall_s"].as_f64().unwrap();
    let rtf = v["rtf"].as_f64().unwrap();
    assert!(
        (rtf - simulated / wall).abs() <= 1e-9 * rtf,
        "rtf {rtf}, {simulated} s in {wall} s"
    );
    assert!(
        (simulated - v["steps"].as_f64().unwrap() * 1e-3).abs() < 1e-9,
        "{simulated} s for {} steps of 1 ms",
        v["steps"]
    );
    assert_eq!(v["segments"].as_array().unwrap().len(), 5);

    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines = text.lines();
    // The header first: the run's description is in the sidecar.
    let meta = std::fs::read_to_string(format!("{}.meta.toml", csv_path.display())).unwrap();
    assert!(
        meta.contains("description = \"cdpr simulate: robot uvigo8"),
        "{meta}"
    );
    let header = lines.next().unwrap();
    let mut expected =
        String::from("t,x_cmd,y_cmd,z_cmd,roll_cmd,pitch_cmd,yaw_cmd,x,y,z,roll,pitch,yaw");
    for i in 1..=8 {
        expected.push_str(&format!(",length_cmd_{i},length_{i},tension_{i}"));
    }
    expected.push_str(",segment");
    assert_eq!(header, expected);
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len() as u64, v["steps"].as_u64().unwrap() + 1);
    assert!(!text.contains("NaN") && !text.contains("inf"));
    // The recorded file is itself a trajectory `cdpr compare` reads (commanded vs actual).
    let c = json(&[
        "compare",
        "--reference",
        csv_path.to_str().unwrap(),
        "--reference-columns",
        "_cmd",
        "--actual",
        csv_path.to_str().unwrap(),
        "--json",
    ]);
    assert!((c["rms_3d"].as_f64().unwrap() - rms).abs() < 1e-6);
}

#[test]
fn an_unknown_trajectory_is_named() {
    // (An out-of-range --dt and the other numbers: hostile_numbers.rs.)
    let o = cdpr(&words("simulate -r uvigo8 -t nosuch"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nosuch"), "{}", stderr(&o));
}

#[test]
fn a_blow_up_keeps_the_record_and_names_the_step() {
    let dir = scratch("simulate_blow_up");
    let robot = dir.join("stiff.toml");
    let text = cdpr_core::fixtures::edited(
        &std::fs::read_to_string("robots/uvigo8.toml").unwrap(),
        "stiffness = 20000.0",
        "stiffness = 2.0e9",
    );
    std::fs::write(&robot, text).unwrap();
    let csv_path = dir.join("run.csv");
    let o = cdpr(&[
        "simulate",
        "-r",
        robot.to_str().unwrap(),
        "-t",
        "seed000",
        "--model",
        "elastic",
        "--control",
        "ideal",
        "--dt",
        "0.005",
        "--out",
        csv_path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("blew up at step"), "{err}");
    let text = std::fs::read_to_string(&csv_path).expect("the record is written before the error");
    assert!(text.lines().count() >= 2);
    assert!(!text.contains("NaN"));
}

/// A platform commanded through the floor in tension mode falls: the cables go slack
/// (warned, per cable, with the time below the minimum and when it started) and the run ends
/// in an error, not exit 0.
#[test]
fn a_platform_that_falls_out_of_the_frame_is_an_error_and_slack_cables_are_named() {
    let dir = scratch("simulate_fall");
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
    assert_eq!(rows, 1 + 3001); // header, rows (the description is in the sidecar)
}

/// The printed wall time is the whole command (loading, physics, output, metrics), and its
/// split adds up to it.
#[test]
fn simulate_wall_time_covers_the_whole_process_and_its_split_adds_up() {
    let dir = scratch("simulate_wall_time");
    let out = dir.join("run.csv");
    let started = Instant::now();
    let v = json(&with(
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --json --out",
        &[out.to_str().unwrap()],
    ));
    let process_s = started.elapsed().as_secs_f64();
    let wall = v["wall_s"].as_f64().expect("wall_s");
    // Measured inside the process, the report cannot exceed what the process took (true
    // however fast or loaded the machine: no speed is asserted here).
    assert!(
        wall <= process_s,
        "reported {wall} s, the process took {process_s} s"
    );
    let split = &v["wall_split"];
    let parts: Vec<f64> = ["load_s", "physics_s", "output_s", "metrics_s", "other_s"]
        .iter()
        .map(|k| {
            split[k]
                .as_f64()
                .unwrap_or_else(|| panic!("wall_split.{k}: {split}"))
        })
        .collect();
    assert!(parts.iter().all(|&p| p >= 0.0), "{split}");
    // It covers the whole command, not the stepping loop alone: loading, physics, writing the
    // CSV and the metrics were each timed.
    assert!(parts[..4].iter().all(|&p| p > 0.0), "{split}");
    let sum: f64 = parts.iter().sum();
    assert!(
        (sum - wall).abs() <= 1e-3 + 1e-3 * wall,
        "{split} vs {wall}"
    );
    // The table says it too.
    let o = cdpr(&words(
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let line = text
        .lines()
        .find(|l| l.starts_with("wall time "))
        .unwrap_or_else(|| panic!("no wall time line in\n{text}"));
    for part in ["physics", "metrics", "output", "loading"] {
        assert!(line.contains(part), "{line}");
    }
}

#[test]
fn ctrl_c_finishes_the_file_where_the_run_stopped_and_marks_it_interrupted() {
    let dir = scratch("interrupted");
    for name in ["interrupted.csv", "interrupted.mcap"] {
        let path = dir.join(name);
        let out = path.display().to_string();
        // A run of minutes (the chain model, a minute of settling), stopped after a moment.
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_cdpr"))
            .args(words(
                "simulate --robot uvigo8 --trajectory seed000 --model chain --settle 600 --out",
            ))
            .arg(&out)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cdpr runs");
        let started = Instant::now();
        while !path.exists() && started.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(700));
        let kill = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(kill.success());
        let interrupted = Instant::now();
        let o = child.wait_with_output().expect("exits");
        // Ctrl-C is answered within a step, not at the run's end.
        assert!(interrupted.elapsed().as_secs() < 5, "{name}");
        assert_eq!(o.status.code(), Some(130), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("interrupted at t = ")
                && err.contains(&format!("kept in {out}, marked interrupted")),
            "{name}: {err}"
        );
        // "… the N steps before are kept …": the file holds N + 1 records (the start too).
        let line = err
            .lines()
            .find(|l| l.contains("interrupted at"))
            .unwrap_or_default();
        let steps: usize = line
            .split("; the ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no step count in {err}"));
        let file = cdpr_core::recording::RunFile::open(&path).expect("the file reads");
        assert!(file.interrupted(), "{name}");
        assert_eq!(file.len(), steps + 1, "{name}");
        if name.ends_with(".csv") {
            let meta = std::fs::read_to_string(format!("{out}.meta.toml")).expect("sidecar");
            assert!(
                meta.contains("interrupted = true") && meta.contains("ended_s = "),
                "{meta}"
            );
        }
    }
}
