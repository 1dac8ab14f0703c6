//! The `cdpr workspace` contract on uvigo8: seed 000's box contained, the 5 N report, the plot.

use crate::common;
use crate::common::*;

#[test]
fn uvigo8_workspace_contains_the_test_box_and_reports_the_5n_height() {
    let dir = scratch("cli_workspace");
    let png = dir.join("ws.png");
    let v = json(&with(
        "workspace --robot uvigo8 --grid 10 --plot",
        &[png.to_str().expect("utf-8"), "--json"],
    ));
    assert_eq!(v["workspace_box"]["contained"], true, "{v}");
    let volume = v["volume"]["volume"].as_f64().expect("volume");
    // Far less than the 2.9 × 2.3 × 0.85 m frame, far more than the 8 l test box.
    assert!(volume > 0.008 && volume < 2.9 * 2.3 * 0.85, "{volume}");
    let above = v["min_tension"]["everywhere_above_z"]
        .as_f64()
        .expect("5 N height");
    assert!(above > 0.05 && above < 0.25, "{above}");
    assert_eq!(v["min_tension"]["f_min"], 5.0);
    for f in v["plot"].as_array().expect("plot files") {
        let path = f.as_str().expect("path");
        assert!(
            std::fs::metadata(path).expect("written").len() > 1000,
            "{path}"
        );
    }
    assert!(dir.join("ws.svg").is_file());
}

#[test]
fn the_text_report_names_volume_and_tension_and_bad_regions_are_refused() {
    let o = cdpr(&words("workspace --robot uvigo8 --grid 6 --no-plot"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for word in [
        "volume",
        "contained",
        "5 N minimum tension",
        "stops being reachable below",
    ] {
        assert!(out.contains(word), "missing `{word}` in:\n{out}");
    }
    let o = cdpr(&words("workspace --robot uvigo8 --region 0,0,0,1,1"));
    common::assert_fails(&o, "'--region <BOX>': needs 6 numbers");
    // A tension floor the robot cannot keep in its box: a computed "no", exit status 2.
    let o = cdpr(&words(
        "workspace --robot uvigo8 --grid 4 --f-min 8 --no-plot",
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stdout(&o).contains("NOT contained"));
}

#[test]
fn interference_removes_the_crate_and_its_cables_from_silva4_obstacles_workspace() {
    let dir = scratch("cli_workspace_interference");
    let png = dir.join("ws.png");
    let base = json(&with(
        "workspace --robot silva4-obstacle --grid 12 --no-plot",
        &["--json"],
    ));
    assert!(
        base["interference"].is_null(),
        "not checked without the flag"
    );
    let v = json(&with(
        "workspace --robot silva4-obstacle --grid 12 --interference --clearance 0.02 --plot",
        &[png.to_str().expect("utf-8"), "--json"],
    ));
    let i = &v["interference"];
    assert_eq!(i["clearance"], 0.02, "{v}");
    let by_kind = &i["cells_by_kind"];
    let platform = by_kind["platform_obstacle"].as_u64().expect("count");
    let cables = by_kind["cable_obstacle"].as_u64().expect("count");
    assert!(platform > 0 && cables > 0, "{i}");
    let removed = i["cells_removed"].as_u64().expect("removed");
    let (before, after) = (
        base["volume"]["cells_feasible"].as_u64().expect("cells"),
        v["volume"]["cells_feasible"].as_u64().expect("cells"),
    );
    assert_eq!(before - after, removed, "{i}");
    assert_eq!(i["volume_before"], base["volume"]["volume"]);
    assert!(dir.join("ws.svg").is_file());
    let svg = std::fs::read_to_string(dir.join("ws.svg")).expect("svg");
    assert!(svg.contains("interference (clearance 20 mm)"), "legend");
}
