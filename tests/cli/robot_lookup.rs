//! How `--robot` and `cdpr check` find a robot, and that `cdpr robots` lists what they find:
//! a path that does not exist is an error (never the shipped robot of that stem); a name is the
//! shipped robot, else ./robots/NAME.toml, else ./NAME.toml.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Output};

/// `cdpr ARGS` run in `dir`.
fn cdpr_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the cdpr binary runs")
}

/// uvigo8's robot file under another name.
fn renamed(name: &str) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/robots/uvigo8.toml"))
        .expect("robots/uvigo8.toml");
    assert!(text.contains("name = \"uvigo8\""));
    text.replacen("name = \"uvigo8\"", &format!("name = \"{name}\""), 1)
}

#[test]
fn a_missing_robot_file_is_not_found_not_the_shipped_robot() {
    let dir = scratch("lookup-missing");
    for args in [
        &["check", "/nonexistent/dir/uvigo8.toml"][..],
        &[
            "ik",
            "--robot",
            "/nonexistent/dir/uvigo8.toml",
            "--pose",
            "0,0,0.15",
        ],
        &["check", "uvigo8.toml"],
    ] {
        let o = cdpr_in(&dir, args);
        assert!(!o.status.success(), "{args:?}: {}", stdout(&o));
        assert!(!stdout(&o).contains("OK"), "{args:?}: {}", stdout(&o));
        let err = stderr(&o);
        let path = args.iter().find(|a| a.ends_with(".toml")).expect("a path");
        assert!(err.contains(&format!("file not found: {path}")), "{err}");
        assert!(
            err.contains("`uvigo8` alone names the shipped robot"),
            "{err}"
        );
    }
    // A stem that is no shipped robot: no suggestion.
    let o = cdpr_in(&dir, &["check", "robots/mine.toml"]);
    assert_fails(&o, "file not found: robots/mine.toml");
    assert!(!stderr(&o).contains("alone names"), "{}", stderr(&o));
}

#[test]
fn every_robot_listed_is_found_by_what_the_listing_shows() {
    let dir = scratch("lookup-listing");
    std::fs::create_dir_all(dir.join("robots")).expect("mkdir");
    std::fs::write(dir.join("robots/mine.toml"), renamed("mine")).expect("write");
    std::fs::write(dir.join("here.toml"), renamed("here")).expect("write");
    std::fs::write(dir.join("mine.toml"), renamed("mine_here")).expect("write");

    let o = cdpr_in(&dir, &["robots", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let listed: Vec<(String, String)> = v["robots"]
        .as_array()
        .expect("robots")
        .iter()
        .map(|r| {
            (
                r["robot_arg"].as_str().expect("robot_arg").to_string(),
                r["name"].as_str().expect("name").to_string(),
            )
        })
        .collect();
    for (arg, name) in [
        ("mine", "mine"),
        ("here", "here"),
        ("mine.toml", "mine_here"),
    ] {
        assert!(
            listed.iter().any(|(a, n)| a == arg && n == name),
            "{arg} → {name} not in {listed:?}"
        );
    }
    // What the listing shows is what `check` and --robot find.
    for (arg, name) in &listed {
        let o = cdpr_in(&dir, &["check", arg, "--json"]);
        assert!(o.status.success(), "check {arg}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(v["name"].as_str(), Some(name.as_str()), "check {arg}");
    }
    for arg in ["mine", "here"] {
        let o = cdpr_in(
            &dir,
            &["ik", "--robot", arg, "--pose", "0,0,0.15", "--json"],
        );
        assert!(o.status.success(), "--robot {arg}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(v["robot"].as_str(), Some(arg), "--robot {arg}");
    }
    // The name finds ./robots/mine.toml first and says which file it leaves out.
    let o = cdpr_in(&dir, &["check", "mine"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("mine: OK"), "{}", stdout(&o));
    assert_stderr(
        &o,
        "`mine` is robots/mine.toml; mine.toml (a different robot file) is not used",
    );
    // The help states the rule.
    let o = cdpr_in(&dir, &["ik", "--help"]);
    assert!(
        stdout(&o).contains("else ./robots/NAME.toml, else ./NAME.toml"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_shipped_name_wins_over_a_local_file_and_says_so() {
    let dir = scratch("lookup-shadow");
    std::fs::write(dir.join("uvigo8.toml"), renamed("uvigo8_local")).expect("write");
    let o = cdpr_in(&dir, &["check", "uvigo8"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("uvigo8: OK"), "{}", stdout(&o));
    assert_stderr(
        &o,
        "`uvigo8` is the shipped robot `uvigo8`; uvigo8.toml (a different robot file) is not used: give its path",
    );
    let o = cdpr_in(&dir, &["check", "uvigo8.toml"]);
    assert!(stdout(&o).starts_with("uvigo8_local: OK"), "{}", stdout(&o));
    // The listing shows the local file by its path.
    let o = cdpr_in(&dir, &["robots"]);
    assert!(
        stdout(&o).lines().any(|l| l.starts_with("uvigo8.toml ")),
        "{}",
        stdout(&o)
    );
}
