//! The `cdpr simulate` contract: defaults work, JSON keys, the CSV header, clear errors.

mod common;
use common::*;

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
    let dir = scratch("cli_sim_json");
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
    assert!(v["rtf"].as_f64().unwrap() > 1.0);
    assert_eq!(v["segments"].as_array().unwrap().len(), 5);

    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines = text.lines();
    // The run's description (a comment line), then the header.
    let description = lines.next().unwrap();
    assert!(
        description.starts_with("# cdpr simulate: robot uvigo8"),
        "{description}"
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
fn an_unknown_trajectory_and_an_out_of_range_dt_are_named() {
    let o = cdpr(&words("simulate -r uvigo8 -t nosuch"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nosuch"), "{}", stderr(&o));
    let o = cdpr(&words("simulate -r uvigo8 -t seed000 --dt 0.5"));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--dt") && stderr(&o).contains("must be"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_blow_up_keeps_the_record_and_names_the_step() {
    let dir = scratch("cli_sim_blowup");
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
