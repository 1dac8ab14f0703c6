//! The `cdpr` binary on the robots with legs: check, ik, simulate, and their errors.

use crate::common::{cdpr, with, words};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The number of points of seed 002's required cylinder (150 mm diameter, 220 mm high) on a
/// 10 mm grid, counted here from the grid's definition: in integer millimetres, the lattice
/// points (10 i, 10 j) with (10 i)² + (10 j)² ≤ 75² (177 of them: 15 + 2·(15 + 15 + 13 + 13 +
/// 11 + 9 + 5) for |i| = 0…7), on every 10 mm layer from the top face to the bottom face, both
/// included (220 / 10 + 1 = 23 layers): 177 · 23 = 4071.
fn cylinder_cloud_points() -> u64 {
    let (radius_mm, height_mm, step_mm) = (75i64, 220i64, 10i64);
    let reach = radius_mm / step_mm;
    let per_layer = (-reach..=reach)
        .flat_map(|i| (-reach..=reach).map(move |j| (i, j)))
        .filter(|(i, j)| (step_mm * i).pow(2) + (step_mm * j).pow(2) <= radius_mm.pow(2))
        .count() as u64;
    assert_eq!(per_layer, 177, "the hand count of one layer");
    let layers = (height_mm / step_mm + 1) as u64;
    per_layer * layers
}

#[test]
fn check_reports_the_papers_numbers() {
    let o = cdpr(&["check", "robots/keops.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("rails at 45.00°"), "{out}");
    let n = cylinder_cloud_points();
    assert!(
        out.contains(&format!("{n} of {n} points (10 mm grid) reachable")),
        "{out}"
    );
    let o = cdpr(&["check", "rssu2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("reach: pitch [-30.27°, 30.27°], roll [-26.38°, 26.38°]"),
        "{out}"
    );
}

#[test]
fn ik_gives_actuators_or_says_why_not() {
    // On the axis the three carriages are equal (symmetry).
    let o = cdpr(&words("ik --robot keops --pose 0,0,-0.6,0,0,0 --json"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let a: Vec<f64> = serde_json::from_value(v["actuators"].clone()).expect("actuators");
    assert_eq!(a.len(), 3);
    assert!(
        (a[0] - a[1]).abs() < 1e-12 && (a[1] - a[2]).abs() < 1e-12,
        "{a:?}"
    );
    // Far below the cylinder: out of reach, exit code 2, the constraint named.
    let o = cdpr(&words("ik --robot keops --pose 0,0,-1.5,0,0,0"));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stdout).contains("NOT reachable"));
    // Level platform: both cranks horizontal (the rest pose of the file's geometry).
    let o = cdpr(&words("ik --robot rssu2 --pose 0,0,0,0,0,0 --json"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let a: Vec<f64> = serde_json::from_value(v["actuators"].clone()).expect("actuators");
    assert!(a.iter().all(|x| x.abs() < 1e-9), "{a:?}");
}

#[test]
fn simulate_tilts_the_rssu2_and_judges_it_in_angles() {
    let dir = std::env::temp_dir().join(format!("cdpr-cli-legs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let csv = dir.join("tilt.csv");
    let o = cdpr(&with(
        "simulate --robot rssu2 --trajectory tilt --speed 1.0 --control ideal --json --out",
        &[csv.to_str().expect("utf-8 path")],
    ));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let angles = v["angles"].as_array().expect("angle metrics");
    let total = angles.last().expect("a total");
    assert_eq!(total["segment"], "TOTAL");
    assert!(
        total["max_pitch_deg"].as_f64().expect("number") < 0.05,
        "{total}"
    );
    let header = std::fs::read_to_string(&csv).expect("csv written");
    let header = header
        .lines()
        .find(|l| !l.starts_with('#'))
        .expect("a header");
    assert!(header.contains("actuator_cmd_2,actuator_2"), "{header}");
    assert!(header.contains("leg_force_3"), "{header}");
    // A translating trajectory is refused with the way out; so is a cable-only model.
    let o = cdpr(&words("simulate --robot rssu2 --trajectory seed000"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("use `tilt`"),
        "{}",
        text(&o.stderr)
    );
    let o = cdpr(&words(
        "simulate --robot keops --trajectory seed000 --model elastic",
    ));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("only the chain or surrogate model applies, not elastic"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_rssu2_surrogate_fits_its_rapier_model_and_runs() {
    let dir = std::env::temp_dir().join(format!("cdpr-cli-legs-sur-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let params = dir.join("rssu2.toml");
    let params = params.to_str().expect("utf-8 path");
    // Identified on steps of roll and pitch (seed 004), judged on damped square waves it did
    // not see: the filters must beat taking the demand itself as the response by far.
    let o = cdpr(&with(
        "surrogate fit --robot rssu2 --signals steps --validate dsquare --out",
        &[params, "--json"],
    ));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let dofs: Vec<&str> = v["dofs"]
        .as_array()
        .expect("dofs")
        .iter()
        .filter_map(|d| d["dof"].as_str())
        .collect();
    assert_eq!(dofs, ["roll", "pitch"], "the 2-RSSU only turns");
    for score in v["validation"][0]["scores"].as_array().expect("scores") {
        let (nrmse, baseline) = (score["nrmse"].as_f64(), score["baseline"].as_f64());
        let (nrmse, baseline) = (nrmse.expect("nrmse"), baseline.expect("baseline"));
        assert!(nrmse > 0.8 && nrmse > baseline + 0.3, "{score}");
    }
    let o = cdpr(&with(
        "simulate --robot rssu2 --trajectory tilt --model surrogate --surrogate",
        &[params, "--json"],
    ));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let total = v["angles"]
        .as_array()
        .and_then(|a| a.last())
        .expect("angles");
    // Slow tilts (0.1 rad/s): the fitted delay and low-pass lag by well under a degree.
    assert!(
        total["max_pitch_deg"].as_f64().expect("number") < 2.0,
        "{total}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn workspace_reports_the_delta_cylinder_and_the_rssu2_reach() {
    let dir = std::env::temp_dir().join(format!("cdpr-cli-legs-ws-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let plot = dir.join("keops.png");
    let o = cdpr(&with(
        "workspace --robot keops --plot",
        &[plot.to_str().expect("utf-8"), "--json"],
    ));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["covered"], true);
    assert_eq!(v["coverage"]["points"], cylinder_cloud_points());
    assert!(std::fs::metadata(&plot).expect("plot written").len() > 10_000);
    let o = cdpr(&words("workspace --robot rssu2 --json"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let pitch = v["pitch_deg"][1].as_f64().expect("pitch range");
    assert!((pitch - 30.27).abs() < 0.005, "{pitch}");
    let _ = std::fs::remove_dir_all(&dir);
}
