//! Helpers for driving the real `cdpr` binary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn cdpr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the cdpr binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs, expects success, parses stdout as one JSON object.
pub fn json(args: &[&str]) -> serde_json::Value {
    let o = cdpr(args);
    assert!(o.status.success(), "cdpr {args:?} failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout of {args:?} is not one JSON object ({e}): {}",
            stdout(&o)
        )
    })
}

pub fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}
