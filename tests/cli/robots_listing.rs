//! `cdpr robots`: the shipped robots once each and the robot files at hand, a broken one with
//! its mistake, other TOML files left out.

use crate::common::*;
use cdpr_core::robot::BUILTIN_ROBOTS;

#[test]
fn lists_the_shipped_robots_and_the_files_at_hand() {
    let dir = scratch("robots_at_hand");
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/robots/silva4.toml"))
        .expect("silva4.toml");
    let mine = cdpr_core::fixtures::edited(&text, "name = \"silva4\"", "name = \"mine4\"");
    std::fs::write(dir.join("mine4.toml"), mine).expect("write");
    // A robot file with a mistake is listed with it; other TOML files are not robots.
    std::fs::write(
        dir.join("broken.toml"),
        "name = \"b\"\n[platform]\nmass = -1\n",
    )
    .expect("write");
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"x\"\n").expect("write");
    let dir_arg = dir.to_str().expect("utf-8");
    let v = json(&["robots", "--dir", dir_arg, "--json"]);
    let robots = v["robots"].as_array().expect("robots");
    let shipped: Vec<&str> = robots
        .iter()
        .filter(|r| r["source"] == "shipped")
        .map(|r| r["name"].as_str().expect("name"))
        .collect();
    let names: Vec<&str> = BUILTIN_ROBOTS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        shipped, names,
        "each shipped robot once (robots/*.toml are them)"
    );
    let uvigo8 = &robots[0];
    assert_eq!(
        (uvigo8["kind"].as_str(), uvigo8["cables"].as_u64()),
        (Some("cdpr"), Some(8))
    );
    let local: Vec<&serde_json::Value> = robots
        .iter()
        .filter(|r| r["source"].as_str().is_some_and(|s| s.starts_with(dir_arg)))
        .collect();
    assert_eq!(local.len(), 2, "{local:?}");
    let broken = local
        .iter()
        .find(|r| r["name"] == "broken")
        .expect("broken");
    assert!(
        broken["error"]
            .as_str()
            .is_some_and(|e| e.matches("broken.toml").count() == 1 && e.contains("platform.")),
        "the file and the field, the file named once: {broken}"
    );
    let mine4 = local.iter().find(|r| r["name"] == "mine4").expect("mine4");
    assert_eq!(
        (mine4["cables"].as_u64(), &mine4["error"]),
        (Some(4), &serde_json::Value::Null)
    );
    // The table says how to use them.
    let o = cdpr(&["robots"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("--robot NAME"));
}
