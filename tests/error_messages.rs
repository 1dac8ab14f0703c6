//! Issue 15, the rest on simulate, trajectory, compare and number formats: the wall time and
//! its split, one cause per error, one number format per quantity, bounded poses.

mod common;
use common::*;
use std::time::Instant;

/// The printed wall time is the whole command (loading, physics, output, metrics), and its
/// split adds up to it.
#[test]
fn simulate_wall_time_covers_the_whole_process_and_its_split_adds_up() {
    let dir = scratch("sim2_wall");
    let out = dir.join("run.csv");
    let started = Instant::now();
    let v = json(&with(
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --json --out",
        &[out.to_str().unwrap()],
    ));
    let process_s = started.elapsed().as_secs_f64();
    let wall = v["wall_s"].as_f64().expect("wall_s");
    // The process also starts up and exits (a few ms): the report covers all but that.
    assert!(
        wall <= process_s && wall >= 0.8 * process_s - 0.05,
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

/// Issue 15: every cause and every name once in an error ("x.csv: No such file or directory
/// (os error 2): No such file or directory (os error 2)" before).
#[test]
fn errors_print_each_cause_and_each_name_once() {
    let missing = "/nonexistent-sim2/none.csv";
    let bad = scratch("sim2_causes").join("bad.toml");
    std::fs::write(&bad, "garbage\n").unwrap();
    let bad = bad.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            with("compare --actual x.csv --reference", &[missing]),
            "No such file or directory",
            missing,
        ),
        (
            with(
                "report -o /tmp/sim2-none --actual x.csv --reference",
                &[missing],
            ),
            "No such file or directory",
            missing,
        ),
        (
            with("simulate -r uvigo8 -t", &[missing]),
            "neither a built-in trajectory",
            missing,
        ),
        (
            with("trajectory -r uvigo8 --name", &[missing]),
            "neither a built-in trajectory",
            missing,
        ),
        (
            with("simulate -t seed000 -r", &["/nonexistent-sim2/robot.toml"]),
            "no robot file",
            "/nonexistent-sim2/robot.toml",
        ),
        (
            with("simulate -t seed000 -r", &[bad]),
            "key with no value",
            bad,
        ),
    ];
    for (args, cause, name) in cases {
        let o = cdpr(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(
            err.matches(cause).count(),
            1,
            "{args:?}: cause twice in\n{err}"
        );
        assert_eq!(
            err.matches(name).count(),
            1,
            "{args:?}: name twice in\n{err}"
        );
    }
}

/// Issue 15: `--pose 1e300` is refused by the argument parser, the option and range named.
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

/// Issue 15: one number format per quantity — no `9.607e0`-style exponents for ordinary
/// magnitudes and no Debug forms (`[0.0, …]`, enum names) in the text of these commands.
#[test]
fn ordinary_numbers_print_without_exponents_or_debug_forms() {
    let runs = [
        "trajectory -r uvigo8 --name seed000 --check --speed 2",
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic",
        "check robots/uvigo8.toml",
        "equilibrium -r uvigo8 --sag-at 0,0,0.05",
        "ik -r uvigo8 --pose 0,0,0.15",
        "fk -r uvigo8 --lengths 0,1 --method lm",
        "ik -r keops --pose 0,0,5",
        "ik -r rssu2 --pose 0,0,0,80,0,0",
        "workspace -r uvigo8 --grid 10 --no-plot",
    ];
    let exponent = |s: &str| {
        // A mantissa, then e, then an exponent: 9.607e0, 2.1e-17, 1e3.
        let b = s.as_bytes();
        (1..b.len()).any(|k| {
            b[k] == b'e'
                && b[k - 1].is_ascii_digit()
                && b.get(k + 1)
                    .is_some_and(|c| c.is_ascii_digit() || *c == b'-')
                && b.get(k + 2).is_some_and(|c| c.is_ascii_digit())
        })
    };
    for run in runs {
        let o = cdpr(&words(run));
        let text = format!("{}{}", stdout(&o), stderr(&o));
        for line in text.lines() {
            // Residuals are tiny quantities, shown in scientific notation on purpose.
            if line.starts_with("residual") || line.contains("‖W f + w_g‖") {
                continue;
            }
            assert!(!exponent(line), "{run}: exponent in `{line}`");
            assert!(
                !line.contains("[0.0, ") && !line.contains(", 0.0]"),
                "{run}: Debug array in `{line}`"
            );
            assert!(
                !line.contains("[\"") && !line.contains(".1, -0.1"),
                "{run}: Debug list in `{line}`"
            );
            for debug in [
                "Lm",
                "Elastic",
                "Length,",
                "Some(",
                "None",
                "Unreachable",
                "Stroke",
                "CrankLimit",
            ] {
                assert!(!line.contains(debug), "{run}: `{debug}` in `{line}`");
            }
        }
    }
}
