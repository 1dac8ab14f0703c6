//! Every CSV cdpr writes opens with the default readers of pandas (`read_csv(path)`) and
//! numpy (`genfromtxt(path, delimiter=",", names=True)`): a header row first, then numbers,
//! the description in the sidecar (`run.csv.meta.toml`). PlotJuggler's CSV loader asks the
//! same (a header row and a numeric time column, `t`, checked below).
//!
//! Python comes from `CDPR_PYTHON` (default `.venv-ci/bin/python`, which `.ci/run` creates);
//! without numpy and pandas the test says so and passes, unless `CDPR_REQUIRE_PYTHON=1` (CI).

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Reads each CSV named on the command line with the libraries' defaults; prints, per file,
/// what each saw: column names, row count, first and last rows (numbers as `repr`, so that
/// Rust parses back the very float Python holds; `None` for what is not a number).
const READ_WITH_DEFAULTS: &str = r#"
import json, math, sys
import numpy as np
import pandas as pd

def num(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else repr(f)

out = []
for path in sys.argv[1:]:
    frame = pd.read_csv(path)
    array = np.genfromtxt(path, delimiter=",", names=True)
    array = np.atleast_1d(array)
    out.append({
        "pandas": {
            "columns": [str(c) for c in frame.columns],
            "rows": int(len(frame)),
            "numeric": [bool(pd.api.types.is_numeric_dtype(frame[c])) for c in frame.columns],
            "first": [num(v) for v in frame.iloc[0].tolist()],
            "last": [num(v) for v in frame.iloc[-1].tolist()],
        },
        "numpy": {
            "columns": list(array.dtype.names),
            "rows": int(len(array)),
            "first": [num(v) for v in array[0].tolist()],
            "last": [num(v) for v in array[-1].tolist()],
        },
    })
print(json.dumps(out))
"#;

fn python() -> Option<PathBuf> {
    python_with("numpy, pandas")
}

/// Header and rows as the CSV crate reads them: what cdpr wrote.
fn written(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).expect("the CSV opens");
    let header = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.expect("row").iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// A Python value (`repr` of a float, or null) against the field cdpr wrote: the same
/// number (pandas' default parser may round the last bit: numpy's is exact), or both not
/// numbers.
fn check_value(file: &str, who: &str, column: &str, python: &serde_json::Value, field: &str) {
    let ours = field.parse::<f64>().ok().filter(|v| !v.is_nan());
    let theirs = python
        .as_str()
        .map(|s| s.parse::<f64>().expect("repr parses"));
    match (ours, theirs) {
        (None, None) => {}
        (Some(a), Some(b)) if who == "numpy" => {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{file}: {who}: `{column}`: {a} vs {b}"
            )
        }
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= 2.0 * f64::EPSILON * a.abs(),
            "{file}: {who}: `{column}`: {a} vs {b}"
        ),
        _ => panic!("{file}: {who}: `{column}`: `{field}` read as {python}"),
    }
}

/// `paths` read by pandas and numpy with their defaults: the columns, the row count and
/// the first and last rows cdpr wrote; `t` (when there) numeric and first, for PlotJuggler.
fn check_with_defaults(python: &Path, paths: &[(&Path, usize)]) {
    let mut command = Command::new(python);
    command.args(["-c", READ_WITH_DEFAULTS]);
    command.args(paths.iter().map(|(p, _)| p.as_os_str()));
    let o = command.output().expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let seen: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    for ((path, rows), seen) in paths.iter().zip(seen.as_array().expect("a list")) {
        let file = path.display().to_string();
        let (header, body) = written(path);
        assert_eq!(body.len(), *rows, "{file}: rows cdpr says");
        let first_line = std::fs::read_to_string(path).expect("read");
        assert!(!first_line.starts_with('#'), "{file} starts with a comment");
        for who in ["pandas", "numpy"] {
            let s = &seen[who];
            let columns: Vec<&str> = s["columns"]
                .as_array()
                .expect("columns")
                .iter()
                .map(|c| c.as_str().expect("a name"))
                .collect();
            assert_eq!(columns, header, "{file}: {who}'s columns");
            assert_eq!(
                s["rows"].as_u64(),
                Some(*rows as u64),
                "{file}: {who}'s rows"
            );
            for (which, row) in [("first", &body[0]), ("last", &body[rows - 1])] {
                let values = s[which].as_array().expect("values");
                assert_eq!(values.len(), header.len());
                for ((column, field), v) in header.iter().zip(row).zip(values) {
                    check_value(&file, who, column, v, field);
                }
            }
        }
        if header.iter().any(|c| c == "t") {
            assert_eq!(header[0], "t", "{file}: time first, for PlotJuggler");
            assert_eq!(seen["pandas"]["numeric"][0], true, "{file}: `t` numeric");
        }
    }
}

#[test]
fn every_csv_cdpr_writes_opens_with_the_defaults_of_pandas_and_numpy() {
    let Some(python) = python() else {
        return;
    };
    let dir = scratch("csv_readers");
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let (sim, traj, sweep, record) = (
        dir.join("sim.csv"),
        dir.join("traj.csv"),
        dir.join("sweep.csv"),
        dir.join("shadow.csv"),
    );
    let v = json(&with(
        "simulate -r silva4 -t pickplace --speed 0.5 --json --out",
        &[&s(&sim)],
    ));
    let sim_rows = v["steps"].as_u64().expect("steps") as usize + 1;
    // Pulleys with friction add the winch-side tension columns.
    let pulleys = dir.join("pulleys.csv");
    let v = json(&with(
        "simulate -r uvigo8-pulleys -t seed000 --speed 0.4 --model elastic --json --out",
        &[&s(&pulleys)],
    ));
    let pulley_rows = v["steps"].as_u64().expect("steps") as usize + 1;
    let header = written(&pulleys).0;
    assert!(
        (1..=8).all(|i| header.contains(&format!("winch_tension_{i}"))),
        "{header:?}"
    );
    let v = json(&with(
        "trajectory -r uvigo8 --name seed000 --speed 0.4 --json --out",
        &[&s(&traj)],
    ));
    let traj_rows = v["samples"].as_u64().expect("samples") as usize;
    let o = cdpr(&with(
        "sweep robots/sweeps/uvigo8-stiffness.toml --shard 0/12 --out",
        &[&s(&sweep)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // The shadow of a virtual PLC for a second.
    let (plc, addr) = plc(&words(
        "--robot uvigo8 --listen 127.0.0.1:0 --trajectory seed000 --speed 0.4 --duration 4",
    ));
    let shadow = Proc::spawn(&with(
        "shadow --ams-net-id 127.0.0.1.1.1 --headless --robot uvigo8 --duration 1 --json --plc",
        &[&addr, "--record", &s(&record)],
    ));
    let (ok, _, err) = shadow.finish();
    assert!(ok, "{err}");
    plc.interrupt();
    let _ = plc.finish();
    let record_rows = written(&record).1.len();
    assert!(record_rows > 10, "{record_rows} rows in a second of shadow");
    for (p, what) in [
        (&sim, "cdpr simulate"),
        (&traj, "cdpr trajectory"),
        (&sweep, "cdpr sweep"),
        (&record, "cdpr shadow"),
    ] {
        let described = cdpr_core::recording::sidecar::read_description(p).unwrap_or_default();
        assert!(described.starts_with(what), "{}: {described}", p.display());
    }
    check_with_defaults(
        &python,
        &[
            (&sim, sim_rows),
            (&pulleys, pulley_rows),
            (&traj, traj_rows),
            (&sweep, 1),
            (&record, record_rows),
        ],
    );
}
