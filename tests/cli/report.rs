//! `cdpr report`: the JSON, Markdown and plots it writes, and a CSV with an absurd value refused
//! naming the series, the axis and the time.

use crate::common::*;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn writes_json_markdown_and_plots() {
    let dir = scratch("report_files");
    let reference = path_str(&dir.join("ref.csv"));
    let actual = path_str(&dir.join("act.csv"));
    for (out, extra) in [(&reference, vec![]), (&actual, vec!["--lowpass", "4"])] {
        let mut args = vec![
            "trajectory",
            "-r",
            "silva4",
            "--name",
            "pickplace",
            "--speed",
            "0.5",
            "--out",
            out,
        ];
        args.extend(extra);
        let o = cdpr(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let report_dir = dir.join("report");
    let v = json(&[
        "report",
        "--reference",
        &reference,
        "--actual",
        &actual,
        "--out",
        &path_str(&report_dir),
        "--title",
        "pick & place",
        "--json",
    ]);
    assert_eq!(v["files"]["plots"].as_array().unwrap().len(), 6);
    for name in ["axes", "error", "paths"] {
        let png = std::fs::read(report_dir.join(format!("{name}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}.png");
        let svg = std::fs::read_to_string(report_dir.join(format!("{name}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("[mm]"), "{name}.svg");
    }
    let md = std::fs::read_to_string(report_dir.join("report.md")).unwrap();
    assert!(md.starts_with("# pick & place"));
    assert!(md.contains(
        "| Segment | RMS X (mm) | RMS Y (mm) | RMS Z (mm) | RMS X-Y-Z (mm) | Fréchet (mm) |"
    ));
    for row in ["| Up |", "| Arc |", "| Down |", "| **TOTAL** |"] {
        assert!(md.contains(row), "{row}");
    }
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("metrics.json")).unwrap())
            .unwrap();
    assert_eq!(metrics["lag_samples"], v["metrics"]["lag_samples"]);
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

#[test]
fn a_csv_with_an_absurd_value_is_refused_naming_the_series_axis_and_time() {
    let dir = scratch("report_absurd");
    for value in ["1e308", "-1e300", "1e12"] {
        let (reference, bad) = reference_and_bad(&dir, value);
        let out = dir.join(format!("report-{value}"));
        // Refused in bounded time and memory (the plot's range would be absurd).
        let r = refused(
            &with(
                "report --reference",
                &[s(&reference), "--actual", s(&bad), "--out", s(&out)],
            ),
            1,
            "actual",
        );
        let e = &r.stderr;
        assert!(
            e.contains(" x ") && e.contains("t = "),
            "{value}: the message names the series, axis and time: {e}"
        );
        assert_eq!(e.matches("error").count(), 1, "one error: {e}");
    }
}

#[test]
fn a_run_recorded_as_mcap_is_compared_as_its_csv_and_a_truncated_one_is_said_so() {
    // It was read as CSV text: "not valid UTF-8 text".
    let dir = scratch("report_mcap");
    let (mcap, csv) = (dir.join("run.mcap"), dir.join("run.csv"));
    for out in [&mcap, &csv] {
        let o = cdpr(&[
            "simulate",
            "--robot",
            "silva4",
            "--trajectory",
            "pickplace",
            "--out",
            s(out),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let compare = |reference: &Path, actual: &Path, columns: &str| {
        let mut args = vec![
            "compare",
            "--reference",
            s(reference),
            "--reference-columns",
            "_cmd",
            "--actual",
            s(actual),
            "--json",
        ];
        if !columns.is_empty() {
            args.extend(["--actual-columns", columns]);
        }
        cdpr(&args)
    };
    let from_csv = compare(&csv, &csv, "");
    assert!(from_csv.status.success(), "{}", stderr(&from_csv));
    // The platform's pose against the commanded one: the same numbers as from the CSV.
    for (reference, actual) in [(&mcap, &mcap), (&csv, &mcap), (&mcap, &csv)] {
        let o = compare(reference, actual, "");
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("JSON"),
            serde_json::from_slice::<serde_json::Value>(&from_csv.stdout).expect("JSON"),
            "{} against {}",
            actual.display(),
            reference.display()
        );
        assert_eq!(stderr(&o), "", "no warning for a finished run");
    }
    let report_dir = dir.join("report");
    let o = cdpr(&[
        "report",
        "--reference",
        s(&csv),
        "--reference-columns",
        "_cmd",
        "--actual",
        s(&mcap),
        "--out",
        s(&report_dir),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(report_dir.join("report.md").is_file());
    // Columns an MCAP run does not have are named with those it has.
    let o = compare(&csv, &mcap, "_measured");
    assert!(!o.status.success());
    assert_stderr(&o, "`_measured` names neither");
    // Cut (the writer killed): read up to its last whole chunk, and said so.
    let bytes = std::fs::read(&mcap).expect("mcap");
    let cut = dir.join("cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).expect("cut");
    let o = compare(&csv, &cut, "");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_stderr(&o, "cut.mcap: never finished");
}
