//! What a user finds without the README: the help lists what can be named (shipped robots,
//! built-in trajectories, signals — from the library's own lists) and teaches by example,
//! `cdpr completions` writes completion scripts, a build without the viewer says how to get it.

use crate::common::*;
use cdpr_core::robot::{BUILTIN_ROBOTS, Robot};
use cdpr_core::trajectory::{BUILTINS, signals::SIGNALS};

#[test]
fn help_lists_every_shipped_robot_trajectory_and_signal() {
    for command in ["simulate", "trajectory", "view", "plc"] {
        let o = cdpr(&[command, "--help"]);
        if command == "view" && !cfg!(feature = "viewer") {
            continue;
        }
        assert!(o.status.success(), "{command}: {}", stderr(&o));
        let help = stdout(&o);
        for (name, _) in BUILTIN_ROBOTS {
            let robot = Robot::load(name).expect("shipped robot");
            assert!(
                help.contains(&format!("  {name:<8} {}", robot.description)),
                "`cdpr {command} --help` does not list {name}"
            );
        }
        for name in BUILTINS
            .iter()
            .chain(SIGNALS)
            .map(|(n, _)| *n)
            .chain(["tilt"])
        {
            assert!(
                help.contains(&format!("\n  {name:<9} ")),
                "`cdpr {command} --help` does not list trajectory {name}"
            );
        }
    }
    // Commands on a robot alone list the robots, not the trajectories.
    let help = stdout(&cdpr(&["ik", "--help"]));
    assert!(help.contains("Shipped robots") && help.contains("  caroca "));
    assert!(!help.contains("Built-in trajectories"));
}

#[test]
fn completions_cover_the_commands_and_their_options() {
    let bash = stdout(&cdpr(&["completions", "bash"]));
    for word in [
        "simulate",
        "robots",
        "--trajectory",
        "--exchange",
        "--quiet",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    assert!(stdout(&cdpr(&["completions", "zsh"])).starts_with("#compdef cdpr"));
    assert!(stdout(&cdpr(&["completions", "fish"])).contains("complete -c cdpr"));
    let o = cdpr(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert_stderr(&o, "possible values: bash, zsh, fish, elvish, powershell");
}

#[test]
fn view_without_the_viewer_says_how_to_get_it() {
    if cfg!(feature = "viewer") {
        let o = cdpr(&["view", "--help"]);
        assert!(o.status.success() && stdout(&o).contains("--screenshot"));
        return;
    }
    for args in [
        &["view"][..],
        &["view", "--plc", "127.0.0.1", "-r", "uvigo8"],
    ] {
        let o = cdpr(args);
        assert_eq!(o.status.code(), Some(1));
        assert_stderr(&o, "built without the 3D viewer");
        assert_stderr(&o, "--features viewer");
    }
}

#[test]
fn shadow_help_points_to_the_twincat_side() {
    let help = stdout(&cdpr(&["shadow", "--help"]));
    assert!(help.contains("assets/twincat/README.md"), "{help}");
    let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/twincat/README.md");
    assert!(std::path::Path::new(readme).is_file());
}

#[test]
fn trajectory_compare_and_report_help_teach_by_example() {
    for cmd in ["trajectory", "compare", "report"] {
        let o = cdpr(&[cmd, "--help"]);
        assert!(o.status.success());
        let text = stdout(&o);
        assert!(text.contains("Example"), "{cmd}");
        assert!(text.contains(&format!("cdpr {cmd} ")), "{cmd}");
    }
}

#[test]
fn the_top_level_help_lists_the_commands_and_examples() {
    let o = cdpr(&["--help"]);
    let out = stdout(&o);
    for word in ["check", "ik", "fk", "tensions", "equilibrium", "Examples"] {
        assert!(out.contains(word), "--help lacks {word}");
    }
}
