//! The command-line contract of `check`, `ik`, `fk`, `tensions`, `equilibrium`.

mod common;
use common::*;

#[test]
fn ik_json_has_the_contract_keys_and_right_numbers() {
    let v = json(&words(
        "ik --robot robots/silva4.toml --pose -0.1,0.18488,0.47162 --json",
    ));
    let lengths = floats(&v["lengths"]);
    // Seed 003, Table 2 (mm): the position gives back the measured lengths.
    let expected = [1.36206030, 1.42183276, 1.22378845, 1.15380164];
    assert_eq!(lengths.len(), expected.len(), "{lengths:?}");
    for (l, e) in lengths.iter().zip(expected) {
        assert!((l - e).abs() < 5e-6, "{l} vs {e}");
    }
    assert_eq!(v["directions"].as_array().unwrap().len(), 4);
    for key in ["theta_z", "theta_x", "theta_y"] {
        assert_eq!(floats(&v[key]).len(), 4, "{key}");
    }
}

#[test]
fn degrees_switch_the_angle_unit() {
    let rad = json(&words("ik -r uvigo8 --pose 0,0,0.1,0,0,0.1 --json"));
    let deg = json(&words(
        "ik -r uvigo8 --pose 0,0,0.1,0,0,5.729577951308232 --degrees --json",
    ));
    let (a, b) = (floats(&rad["lengths"]), floats(&deg["lengths"]));
    assert_eq!((a.len(), b.len()), (8, 8), "{a:?} {b:?}");
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-12);
    }
    let tz_rad = floats(&rad["theta_z"]);
    let tz_deg = floats(&deg["theta_z"]);
    assert!((tz_rad[0].to_degrees() - tz_deg[0]).abs() < 1e-9);
}

#[test]
fn fk_round_trips_ik_through_the_binary() {
    let pose = "0.04,-0.07,0.2,0.03,-0.02,0.1";
    let v = json(&with("ik -r uvigo8 --pose", &[pose, "--json"]));
    let lengths: Vec<String> = floats(&v["lengths"])
        .iter()
        .map(|l| format!("{l:.15}"))
        .collect();
    let f = json(&with(
        "fk -r uvigo8 --lengths",
        &[&lengths.join(","), "--json"],
    ));
    let got = floats(&f["pose"]);
    assert_eq!(got.len(), 6, "{got:?}");
    for (g, e) in got.iter().zip([0.04, -0.07, 0.2, 0.03, -0.02, 0.1]) {
        assert!((g - e).abs() < 1e-9, "{got:?}");
    }
    assert!(f["residual"].as_f64().unwrap() < 1e-10);
    assert!(f["iterations"].as_u64().is_some());
}

#[test]
fn fk_sphere_reproduces_seed_003() {
    let f = json(&words(
        "fk -r silva4 --method sphere --json --lengths 1.36206030,1.42183276,1.22378845,1.15380164",
    ));
    let p = floats(&f["pose"]);
    assert!(
        (p[0] * 1e3 + 100.00).abs() < 0.005
            && (p[1] * 1e3 - 184.88).abs() < 0.005
            && (p[2] * 1e3 - 471.62).abs() < 0.005,
        "{p:?}"
    );
    assert_eq!(&p[3..], &[0.0, 0.0, 0.0]);
}

#[test]
fn tensions_report_feasibility_and_exit_status() {
    let v = json(&words(
        "tensions -r caroca --pose 0,0,1.5 --payload 15 --json",
    ));
    assert_eq!(v["feasible"], true);
    let t = floats(&v["tensions"]);
    assert!(t.iter().all(|f| (1.0..=6500.0).contains(f)));
    assert!(v["residual"].as_f64().unwrap() < 1e-9);
    // 15 kg: the vertical components sum to m g, so Σ f ≥ 147 N.
    assert!(t.iter().sum::<f64>() > 15.0 * 9.81);

    let o = cdpr(&words(
        "tensions -r uvigo8 --pose 0,0,0.05 --f-min 5 --json",
    ));
    assert_eq!(o.status.code(), Some(2), "infeasible exits with 2");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("still one JSON object");
    assert_eq!(v["feasible"], false);
    assert!(v["largest_min_tension"].as_f64().unwrap() < 5.0);
    assert!(stderr(&o).contains("largest achievable minimum tension"));
}

#[test]
fn equilibrium_sag_pretension_and_rest_lengths_agree() {
    let sag = json(&words("equilibrium -r uvigo8 --sag-at 0,0,0.05 --json"));
    let z = floats(&sag["pose"])[2];
    assert!((z - 0.0490666).abs() < 1e-7, "{z}");
    let pre = json(&words(
        "equilibrium -r uvigo8 --pretensioned-at 0,0,0.05 --json",
    ));
    assert!((floats(&pre["pose"])[2] - 0.05).abs() < 1e-9);
    let rest: Vec<String> = floats(&pre["rest_lengths"])
        .iter()
        .map(|l| format!("{l:.15}"))
        .collect();
    let again = json(&with(
        "equilibrium -r uvigo8 --rest-lengths",
        &[&rest.join(","), "--json"],
    ));
    assert!((floats(&again["pose"])[2] - 0.05).abs() < 1e-9);
    assert_eq!(floats(&again["tensions"]).len(), 8);
}

#[test]
fn out_of_workspace_pose_warns_but_answers() {
    let o = cdpr(&words("ik -r uvigo8 --pose 0.5,0,0.1 --json"));
    assert!(o.status.success());
    assert!(stderr(&o).contains("outside uvigo8's workspace"));
    let _: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout stays pure JSON");
}

#[test]
fn malformed_input_gives_clear_errors() {
    let o = cdpr(&words("ik -r uvigo8 --pose 0,zero,0.1"));
    common::assert_fails(&o, "item 2 `zero` is not a number");
    let o = cdpr(&words("fk -r uvigo8 --lengths 1,2,3"));
    common::assert_fails(&o, "3 lengths given but the robot has 8 cables");
    let o = cdpr(&words("ik -r nosuchrobot --pose 0,0,0"));
    common::assert_stderr(&o, "no robot file `nosuchrobot`");
}

#[test]
fn check_validates_and_names_the_culprit() {
    let o = cdpr(&["check", "robots/uvigo8.toml"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("uvigo8: OK") && stdout(&o).contains("lower3"));
    let dir = scratch("check_bad");
    let bad = dir.join("bad.toml");
    let text = cdpr_core::fixtures::edited(
        &std::fs::read_to_string("robots/uvigo8.toml").unwrap(),
        "mass = 1.0 ",
        "mass = -1.0 ",
    );
    std::fs::write(&bad, &text).unwrap();
    let o = cdpr(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let line = text
        .lines()
        .position(|l| l.starts_with("mass = -1.0"))
        .unwrap()
        + 1;
    let err = stderr(&o);
    assert!(
        err.contains(&format!("bad.toml:{line}: platform.mass: must be positive")),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn help_teaches() {
    let o = cdpr(&["--help"]);
    let out = stdout(&o);
    for word in ["check", "ik", "fk", "tensions", "equilibrium", "Examples"] {
        assert!(out.contains(word), "--help lacks {word}");
    }
}
