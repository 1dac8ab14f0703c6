//! The command-line contract of `ik`, `fk`, `tensions` and `equilibrium`: the papers' numbers,
//! round trips through the binary, exit statuses, and inputs refused naming the item.

use crate::common;
use crate::common::*;

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
    common::assert_stderr(&o, "no robot `nosuchrobot`: not a shipped robot");
}

#[test]
fn fk_and_equilibrium_refuse_absurd_lengths() {
    let o = cdpr(&["fk", "--robot", "silva4", "--lengths", "1e300,1,1,1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--lengths: item 1 must be a length in (0, 1e4] m, got 1e300"),
        "{}",
        stderr(&o)
    );
    let o = cdpr(&[
        "equilibrium",
        "--robot",
        "silva4",
        "--rest-lengths",
        "1,1,-1,1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--rest-lengths: item 3"),
        "{}",
        stderr(&o)
    );
}

/// `--pose 1e300` is refused by the argument parser, the option and range named.
#[test]
fn huge_poses_are_refused_with_the_option_and_its_range() {
    for cmd in ["ik -r uvigo8 --pose", "tensions -r uvigo8 --pose"] {
        for pose in ["1e300,0,1", "0,0,1,0,0,1e300", "0,-2e3,1"] {
            let o = cdpr(&with(cmd, &[pose]));
            assert_eq!(o.status.code(), Some(2), "{cmd} {pose}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.contains("--pose") && err.contains("must be between"),
                "{err}"
            );
        }
    }
}

#[test]
fn ik_over_pulleys_reports_swivel_wrap_and_tangent_points_and_fk_inverts_it() {
    let point = json(&words("ik -r uvigo8 --pose 0,0,0.1 --json"));
    for key in ["swivel_angles", "wrap_angles", "tangent_points"] {
        assert!(point.get(key).is_none(), "{key} for a point-exit robot");
    }
    let pose = "0.04,-0.07,0.2,0.03,-0.02,0.1";
    let v = json(&with("ik -r uvigo8-pulleys --pose", &[pose, "--json"]));
    let (swivel, wrap) = (floats(&v["swivel_angles"]), floats(&v["wrap_angles"]));
    let tangents = v["tangent_points"].as_array().expect("tangent_points");
    assert_eq!((swivel.len(), wrap.len(), tangents.len()), (8, 8, 8));
    // Cable 1 (upper0) leaves its pillar at (1.32545, 1.09656, 0.825) towards a platform
    // below and inside: the wheel turns towards −x, −y (γ about −z from +x: between 90° and
    // 180°, since seen along −z the y axis is mirrored) and the cable wraps more than 90°.
    assert!(
        swivel[0] > std::f64::consts::FRAC_PI_2 && swivel[0] < std::f64::consts::PI,
        "{swivel:?}"
    );
    let (quarter, half) = (std::f64::consts::FRAC_PI_2, std::f64::consts::PI);
    assert!(wrap.iter().all(|b| *b > quarter && *b < half), "{wrap:?}");
    let t0 = floats(&tangents[0]);
    // 25 mm wheel: the tangent point is within 2 r of the swivel point.
    let a0 = [1.32545, 1.09656, 0.825];
    let dist = (0..3).map(|k| (t0[k] - a0[k]).powi(2)).sum::<f64>().sqrt();
    assert!(dist > 0.0 && dist < 0.05, "{t0:?}");
    let lengths: Vec<String> = floats(&v["lengths"])
        .iter()
        .map(|l| format!("{l:.15}"))
        .collect();
    let f = json(&with(
        "fk -r uvigo8-pulleys --lengths",
        &[&lengths.join(","), "--json"],
    ));
    for (g, e) in floats(&f["pose"])
        .iter()
        .zip([0.04, -0.07, 0.2, 0.03, -0.02, 0.1])
    {
        assert!((g - e).abs() < 1e-9, "{f}");
    }
    let text = stdout(&cdpr(&with("ik -r uvigo8-pulleys --pose", &[pose])));
    assert!(
        text.contains("swivel γ [rad]") && text.contains("wrap β [rad]"),
        "{text}"
    );
    assert!(text.contains("over swivel pulleys"), "{text}");
}

#[test]
fn cables_with_mass_report_both_tensions_and_ik_catenary_lands_the_platform() {
    // uvigo8-pulleys (2.5 g/m): the exit-end tension exceeds the platform-end one by about
    // the weight of the rise, w·Δz, and every cable sags by a millimetre or two.
    let v = json(&words("tensions -r uvigo8-pulleys --pose 0,0,0.15 --json"));
    let platform = floats(&v["tensions"]);
    let exit = floats(&v["exit_tensions"]);
    let sags = floats(&v["sags"]);
    assert_eq!((platform.len(), exit.len(), sags.len()), (8, 8, 8));
    for k in 0..8 {
        assert!(exit[k] > platform[k], "{k}: {} vs {}", exit[k], platform[k]);
        // w = 0.0025·9.81 N/m over a rise of less than the 0.6 m frame height.
        assert!(exit[k] - platform[k] < 0.0025 * 9.81 * 0.7, "{k}");
        assert!(sags[k] > 5e-4 && sags[k] < 5e-3, "{k}: {}", sags[k]);
    }
    assert!(v["catenary_rounds"].as_u64().unwrap() >= 2);
    // A massless robot's report has none of these keys.
    let v = json(&words("tensions -r uvigo8 --pose 0,0,0.15 --json"));
    assert!(v.get("exit_tensions").is_none() && v.get("sags").is_none());

    // ik --catenary: its rest lengths, given back to `equilibrium`, hold the platform on
    // target with the catenary forces.
    let pose = "0.02,0.01,0.16";
    let ik = json(&words(&format!(
        "ik -r uvigo8-pulleys --pose {pose} --catenary --json"
    )));
    assert!(ik.get("lengths").is_some(), "the ik report is kept");
    let rest = floats(&ik["catenary"]["rest_lengths"]);
    let change = floats(&ik["catenary"]["length_change"]);
    let lengths = floats(&ik["lengths"]);
    for k in 0..8 {
        assert!((rest[k] - lengths[k] - change[k]).abs() < 1e-12);
    }
    let list: Vec<String> = rest.iter().map(|x| format!("{x:.12}")).collect();
    let eq = json(&words(&format!(
        "equilibrium -r uvigo8-pulleys --rest-lengths {} --guess {pose} --json",
        list.join(",")
    )));
    let p = floats(&eq["pose"]);
    for (k, want) in [0.02, 0.01, 0.16].iter().enumerate() {
        assert!((p[k] - want).abs() < 1e-8, "{k}: {}", p[k]);
    }
    assert_eq!(floats(&eq["exit_tensions"]).len(), 8);
}
