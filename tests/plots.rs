//! Issue 15, area "plots": `report`, `workspace` and `surrogate fit` refuse absurd numbers by
//! name in bounded time, the README's surrogate commands work, and the plots are readable.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// Runs `cdpr ARGS` under a 4 GB address-space limit, killed after `limit`: a hang or a
/// runaway fails the test instead of eating the machine.
fn bounded(args: &[&str], limit: Duration) -> Output {
    use std::os::unix::process::ExitStatusExt;
    let run = common::bounded(
        args,
        Path::new(env!("CARGO_MANIFEST_DIR")),
        4_000_000,
        limit,
    );
    assert!(
        !run.timed_out,
        "cdpr {args:?} still running after {limit:?} (killed); stderr: {}",
        run.stderr
    );
    Output {
        // A wait status holds the exit code in its second byte.
        status: std::process::ExitStatus::from_raw(run.code.expect("exited") << 8),
        stdout: run.stdout.into_bytes(),
        stderr: run.stderr.into_bytes(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Exit code 2 (clap's), one message naming `option` and `needle`.
fn refused_by_clap(o: &Output, option: &str, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let e = stderr(o);
    assert!(e.contains(option) && e.contains(needle), "{e}");
}

/// A reference trajectory (seed000 on uvigo8) and a copy with one x replaced by `value`.
fn reference_and_bad(dir: &Path, value: &str) -> (PathBuf, PathBuf) {
    let reference = dir.join("ref.csv");
    let o = cdpr(&with(
        "trajectory -r uvigo8 --name seed000 --out",
        &[s(&reference)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&reference).expect("ref.csv");
    let mut out = String::new();
    for (k, line) in text.lines().enumerate() {
        if k == 100 {
            let mut cells: Vec<&str> = line.split(',').collect();
            cells[1] = value;
            out.push_str(&cells.join(","));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, out).expect("bad.csv");
    (reference, bad)
}

// ------------------------------------------------------------------ 1. absurd plot ranges

#[test]
fn report_with_an_absurd_value_is_refused_in_bounded_time() {
    let dir = scratch("bounds_plots_report_absurd");
    for value in ["1e308", "-1e300", "1e12"] {
        let (reference, bad) = reference_and_bad(&dir, value);
        let out = dir.join(format!("report-{value}"));
        let o = bounded(
            &with(
                "report --reference",
                &[s(&reference), "--actual", s(&bad), "--out", s(&out)],
            ),
            Duration::from_secs(20),
        );
        assert_eq!(o.status.code(), Some(1), "{value}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("actual") && e.contains(" x ") && e.contains("t = "),
            "{value}: the message names the series, axis and time: {e}"
        );
        assert_eq!(e.matches("error").count(), 1, "one error: {e}");
    }
}

#[test]
fn workspace_region_far_away_is_refused_by_name() {
    let o = bounded(
        &words("workspace -r uvigo8 --grid 4 --no-plot --region 0,0,0,1e300,1,1"),
        Duration::from_secs(20),
    );
    assert_fails(&o, "--region");
}

// ------------------------------------------------------------------ 2. bounded options

#[test]
fn workspace_numbers_are_bounded_by_name() {
    let limit = Duration::from_secs(20);
    let cases: [(&str, &str, &str); 8] = [
        (
            "workspace -r keops --no-plot --step 1e-6",
            "--step",
            "got 1e-6",
        ),
        (
            "workspace -r uvigo8 --no-plot --orientation 10 --levels 1000",
            "--levels",
            "got 1000",
        ),
        (
            "workspace -r uvigo8 --no-plot --orientation 10 --levels 0",
            "--levels",
            "got 0",
        ),
        (
            "workspace -r uvigo8 --no-plot --grid 100000",
            "--grid",
            "got 100000",
        ),
        ("workspace -r uvigo8 --no-plot --grid 1", "--grid", "got 1"),
        (
            "workspace -r uvigo8 --no-plot --orientation 1e9",
            "--orientation",
            "got 1e9",
        ),
        (
            "workspace -r uvigo8 --no-plot --min-tension -5",
            "--min-tension",
            "got -5",
        ),
        (
            "workspace -r uvigo8 --no-plot --min-tension nan",
            "--min-tension",
            "got nan",
        ),
    ];
    for (line, option, needle) in cases {
        let o = bounded(&words(line), limit);
        refused_by_clap(&o, option, needle);
    }
}

#[test]
fn workspace_grid_budget_names_the_options() {
    // Each option within its range, their product beyond the budget: refused at once by
    // the library, naming both.
    let o = bounded(
        &words("workspace -r uvigo8 --no-plot --grid 400 --orientation 10 --levels 21"),
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--grid 400") && e.contains("--levels 21") && e.contains("at most"),
        "{e}"
    );
}

#[test]
fn linear_delta_cloud_budget_names_the_step() {
    // A step within its range whose cloud would be too large for the budget.
    let o = bounded(
        &words("workspace -r keops --no-plot --step 1e-4"),
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--step") && e.contains("points") && e.contains("at most"),
        "{e}"
    );
}

#[test]
fn surrogate_fit_numbers_are_bounded_by_name() {
    let limit = Duration::from_secs(20);
    let base = "surrogate fit --robot uvigo8 --signals steps --out /nonexistent/x.toml";
    let cases = [
        ("--max-delay -1", "--max-delay", "got -1"),
        ("--max-delay 1e9", "--max-delay", "got 1e9"),
        ("--dt 0", "--dt", "got 0"),
        ("--dt 1e-9", "--dt", "got 1e-9"),
        ("--speed -1", "--speed", "got -1"),
        ("--speed inf", "--speed", "got inf"),
    ];
    for (tail, option, needle) in cases {
        let line = format!("{base} {tail}");
        let o = bounded(&words(&line), limit);
        refused_by_clap(&o, option, needle);
    }
    let o = bounded(
        &words("surrogate validate --robot uvigo8 --surrogate x.toml --reference dsine --dt 10"),
        limit,
    );
    refused_by_clap(&o, "--dt", "got 10");
}

// ------------------------------------------------------------------ 3. README surrogate fit

/// `cdpr ARGS` in `dir` (the README's commands use relative file names).
fn cdpr_in(dir: &Path, line: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(words(line))
        .current_dir(dir)
        .output()
        .expect("cdpr runs")
}

#[test]
fn readme_surrogate_fit_on_a_recorded_run_works() {
    let dir = scratch("bounds_plots_readme_surrogate");
    // README, "Simulation": how run.csv is written.
    let o = cdpr_in(
        &dir,
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --compensate --out run.csv --json",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // README, "Surrogate": the two commands on it.
    let o = cdpr_in(
        &dir,
        "surrogate fit --robot uvigo8 --reference run.csv --out params.toml",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    // seed000 moves x, y and z; the rotations stay at zero: one warning names them.
    assert_eq!(
        e.matches("roll, pitch, yaw do not move in run.csv").count(),
        1,
        "{e}"
    );
    let out = stdout(&o);
    assert!(out.contains("fitted 3 DOF(s) of uvigo8"), "{out}");
    let params = std::fs::read_to_string(dir.join("params.toml")).expect("params.toml");
    for dof in ["[x]", "[y]", "[z]"] {
        assert!(params.contains(dof), "{dof} in {params}");
    }
    assert!(!params.contains("[roll]"), "{params}");
    let o = cdpr_in(
        &dir,
        "surrogate validate --robot uvigo8 --surrogate params.toml --reference dsine,seed000",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("seed000"), "{}", stdout(&o));
}

#[test]
fn surrogate_fit_warns_when_a_parameter_sits_on_its_bound() {
    // README: a fit on chirp runs f_n to its 100 Hz bound.
    let dir = scratch("bounds_plots_surrogate_bound");
    let o = cdpr_in(
        &dir,
        "surrogate fit --robot uvigo8 --signals chirp --dofs x --model elastic --out p.toml --json",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("warning: x: f_n = ") && e.contains("sits on its search bound"),
        "{e}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(v["warnings"][0].as_str().unwrap().contains("f_n"), "{v}");
}

#[test]
fn a_fit_with_nothing_moving_is_one_clear_error() {
    let dir = scratch("bounds_plots_surrogate_nothing");
    let o = cdpr_in(
        &dir,
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --out run.csv",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr_in(
        &dir,
        "surrogate fit --robot uvigo8 --reference run.csv --dofs roll,yaw --out p.toml",
    );
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("none of the DOFs to fit (roll, yaw) moves"),
        "{e}"
    );
    assert_eq!(e.matches("moves").count(), 1, "said once: {e}");
}

// ------------------------------------------------------------------ 5. readable plots

/// The text elements of an SVG: (font-size, text).
fn svg_texts(path: &Path) -> Vec<(f64, String)> {
    let svg = std::fs::read_to_string(path).expect("svg");
    let mut out = Vec::new();
    for chunk in svg.split("<text").skip(1) {
        let (attributes, rest) = chunk.split_once('>').expect("a text element");
        let text = rest
            .split("</text>")
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let size = attributes
            .split("font-size=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse::<f64>().ok())
            .expect("font-size");
        out.push((size, text));
    }
    out
}

fn svg_width(path: &Path) -> f64 {
    let svg = std::fs::read_to_string(path).expect("svg");
    svg.split("width=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .expect("width")
}

/// No "-0", "-0.0", … tick labels; every text at least `min_size` (SVG units; plotters
/// writes px / 1.24) on a figure at most 1800 wide.
fn readable(path: &Path, min_size: f64) -> Vec<String> {
    let texts = svg_texts(path);
    assert!(!texts.is_empty(), "{}", path.display());
    for (size, text) in &texts {
        let negative_zero =
            text.starts_with('-') && text[1..].parse::<f64>().map(|v| v == 0.0).unwrap_or(false);
        assert!(!negative_zero, "{}: tick label `{text}`", path.display());
        assert!(
            *size >= min_size,
            "{}: `{text}` at font-size {size} < {min_size}",
            path.display()
        );
    }
    assert!(svg_width(path) <= 1800.0, "{}", path.display());
    texts.into_iter().map(|(_, t)| t).collect()
}

#[test]
fn report_plots_are_readable_and_show_both_series() {
    let dir = scratch("bounds_plots_report_svg");
    let o = cdpr_in(
        &dir,
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --compensate --out run.csv",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr_in(
        &dir,
        "report --reference run.csv --reference-columns _cmd --actual run.csv --out rep",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for name in ["axes", "error", "paths"] {
        let path = dir.join("rep").join(format!("{name}.svg"));
        let texts = readable(&path, 19.0);
        // The title names the run (its description, on one or two lines) and what is
        // compared, not file names.
        assert!(
            texts.join(" ").contains(
                "simulate: robot uvigo8, trajectory seed000, speed 0.4 m/s, model elastic, \
                 control ideal, compensated, dt 0.001 s: platform vs commanded"
            ),
            "{name}: {texts:?}"
        );
        assert!(
            !texts.iter().any(|t| t.contains(".csv")),
            "{name}: {texts:?}"
        );
    }
    // The actual (blue) is drawn translucent over the wide translucent reference (red).
    let svg = std::fs::read_to_string(dir.join("rep/axes.svg")).unwrap();
    let curve = |colour: &str| {
        svg.split("<polyline")
            .skip(1)
            .filter_map(|p| p.split("/>").next())
            // The legend's sample line has 2 points; the curves have hundreds.
            .filter(|p| p.contains(&format!("stroke=\"{colour}\"")) && p.len() > 500)
            .map(|p| {
                p.split("opacity=\"")
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .and_then(|s| s.parse::<f64>().ok())
                    .unwrap_or(1.0)
            })
            .collect::<Vec<_>>()
    };
    let (actual, reference) = (curve("#1F77B4"), curve("#D62728"));
    assert_eq!(actual.len(), 3, "one actual curve per axis");
    assert_eq!(reference.len(), 3, "one reference curve per axis");
    assert!(
        actual.iter().chain(&reference).all(|o| *o < 1.0),
        "{actual:?} {reference:?}"
    );
}

#[test]
fn workspace_plot_is_readable_with_a_defined_colour_bar() {
    let dir = scratch("bounds_plots_workspace_svg");
    let plot = dir.join("ws.png");
    let o = cdpr(&with("workspace -r uvigo8 --grid 8 --plot", &[s(&plot)]));
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(2),
        "{}",
        stderr(&o)
    );
    let texts = readable(&dir.join("ws.svg"), 19.0);
    assert!(
        texts
            .iter()
            .any(|t| t == "largest reachable minimum tension [N]"),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("uvigo8: wrench-feasible workspace")),
        "{texts:?}"
    );
}
