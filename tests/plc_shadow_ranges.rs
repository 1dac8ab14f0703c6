//! Issue 15, the PLC-side faces: every number `cdpr plc` and `cdpr shadow` take is bounded —
//! a value out of range is one clear clap error naming the option and the range (exit 2), never
//! a panic (101), an abort (134) or a run that loses real time without saying so.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// Options that must be refused, with the range their message gives. `--plc 127.0.0.1:9` is
/// never contacted: clap refuses the value before anything runs.
const REFUSED: &[(&str, &str)] = &[
    ("plc -r uvigo8 --duration 1e300", "--duration"),
    ("plc -r uvigo8 --duration=-1", "--duration"),
    ("plc -r uvigo8 --duration nan", "--duration"),
    ("plc -r uvigo8 --task 1e300s", "--task"),
    ("plc -r uvigo8 --nc 1e-9s", "--nc"),
    ("plc -r uvigo8 --nc 1e300", "--nc"),
    ("plc -r uvigo8 --hold 1e300", "--hold"),
    ("plc -r uvigo8 --speed 1e-9", "--speed"),
    ("plc -r uvigo8 --speed 1e9", "--speed"),
    ("shadow --plc 127.0.0.1:9 --duration 1e300", "--duration"),
    ("shadow --plc 127.0.0.1:9 --duration inf", "--duration"),
    ("shadow --plc 127.0.0.1:9 --dt 1e-9", "--dt"),
    ("shadow --plc 127.0.0.1:9 --dt 1e-300", "--dt"),
    ("shadow --plc 127.0.0.1:9 --dt 10", "--dt"),
    ("shadow --plc 127.0.0.1:9 --timeout 1e300s", "--timeout"),
    ("shadow --plc 127.0.0.1:9 --timeout 1us", "--timeout"),
    (
        "shadow --plc 127.0.0.1:9 --plc-period 1e300",
        "--plc-period",
    ),
    ("shadow --plc 127.0.0.1:9 --plc-period 1ns", "--plc-period"),
    ("shadow --plc 127.0.0.1:9 --cycle 1e300s", "--cycle"),
    ("shadow --plc 127.0.0.1:9 --cycle 1e-12s", "--cycle"),
    (
        "simulate -r uvigo8 -t seed000 --substeps 1000000",
        "--substeps",
    ),
    ("simulate -r uvigo8 -t seed000 --pgs 0", "--pgs"),
];

#[test]
fn out_of_range_numbers_are_refused_by_name_with_their_range() {
    for (line, option) in REFUSED {
        let o = cdpr(&words(line));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "cdpr {line}: {err}");
        assert!(
            err.contains(option)
                && (err.contains("between") || err.contains("from 1 to"))
                && !err.contains("panicked"),
            "cdpr {line}: {err}"
        );
    }
}

#[test]
fn the_edges_of_the_ranges_are_accepted() {
    // The smallest physics step runs (a short, read-only shadow of a virtual PLC); the
    // largest durations parse (checked by a run that stops at once for another reason).
    let (mut plc, addr) = plc(&words("-r uvigo8 --listen 127.0.0.1:0 --duration 3"));
    let started = Instant::now();
    let o = cdpr(&with(
        "shadow --model elastic --duration 0.5 --json --dt 1e-5 --plc",
        &[&addr],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    // 10 µs steps: 200 per 2 ms cycle. Whatever this machine manages, no real time is lost
    // silently: the steps done plus those skipped (counted) cover the simulated time.
    let steps = s["steps"].as_u64().expect("steps") + s["skipped_steps"].as_u64().expect("skipped");
    let simulated = s["simulated_s"].as_f64().expect("simulated_s");
    assert!(
        (steps as f64 * 1e-5 - simulated).abs() < 2e-3,
        "{steps} steps of 10 µs for {simulated} s simulated"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    let _ = plc.child.kill();
    let o = cdpr(&words(
        "shadow --plc 127.0.0.1:9 --duration 3.1e7 --timeout 60s --plc-period 10s --cycle 1s -r nosuchrobot",
    ));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_stderr(&o, "nosuchrobot");
}
