//! pyads (the Python client seed 000 and 003 used) against the virtual PLC, and the shadow
//! against pyads' own test server:
//! - `tests/pyads_client.py`: pyads reads/writes by name, sum read, sum write, a notification, an
//!   error code, against the virtual PLC's server;
//! - `tests/pyads_route.py`: pyads' `adsGetNetIdForPLC` and `add_route_to_plc` (the ADS UDP
//!   service, port 48899) against the virtual PLC's responder; the route lands in its table;
//! - `tests/pyads_testserver.py`: pyads' `AdsTestServer` with `AdvancedHandler` (what PLC
//!   programmers test with) serving uvigo8's GVL while a tiny PLC task moves the commands; the
//!   library's shadow runs its whole loop against it in each exchange that server serves
//!   (see `testserver.rs` beside this file).
//!
//! Runs Python from `CDPR_PYADS_PYTHON` (default `.venv-ci/bin/python`, which `.ci/run`
//! creates). Without pyads the tests are reported as ignored, their names saying
//! `[SKIPPED: …]` and why, unless `CDPR_REQUIRE_PYADS=1` (CI sets it), when they fail. A
//! libtest-mimic harness (`harness = false` in Cargo.toml): libtest has no way to skip a test
//! at run time. The ignored `measure_*` trial prints the cycle and reaction figures of the
//! README (`cargo test -p cdpr-ads --test pyads -- --ignored measure`).

use cdpr_ads::fixtures::*;
use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support_pyads/testserver.rs"]
mod testserver;

const MISSING: &str = "no Python with pyads (set CDPR_PYADS_PYTHON or run .ci/run)";

fn python() -> Option<PathBuf> {
    let root = cdpr_core::fixtures::workspace_root();
    let candidate = std::env::var_os("CDPR_PYADS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".venv-ci/bin/python"));
    let has_pyads = Command::new(&candidate)
        .args(["-c", "import pyads"])
        .output()
        .is_ok_and(|o| o.status.success());
    has_pyads.then_some(candidate)
}

/// A test that needs pyads: its name, its body, and whether it only measures (ignored unless
/// asked for).
type PyTest = (&'static str, fn(&Path), bool);

fn main() {
    let args = Arguments::from_args();
    let required = std::env::var("CDPR_REQUIRE_PYADS").is_ok_and(|v| v == "1");
    let python = python();
    let mut tests: Vec<PyTest> = vec![
        (
            "pyads_reads_writes_sums_and_gets_notified",
            pyads_reads_writes_sums_and_gets_notified,
            false,
        ),
        (
            "pyads_identifies_and_adds_a_route_over_udp",
            pyads_identifies_and_adds_a_route_over_udp,
            false,
        ),
    ];
    tests.extend(testserver::tests());
    let trials = tests
        .into_iter()
        .map(|(name, body, measure)| match &python {
            Some(python) => {
                let python = python.clone();
                Trial::test(name, move || {
                    body(&python);
                    Ok(())
                })
                .with_ignored_flag(measure)
            }
            None if required && !measure => Trial::test(name, || {
                Err(format!("CDPR_REQUIRE_PYADS=1 but {MISSING}").into())
            }),
            // Reported as ignored, the reason in its name; run anyway (--include-ignored) it
            // fails with that reason rather than pass without testing anything.
            None => Trial::test(format!("{name} [SKIPPED: {MISSING}]"), || {
                Err(MISSING.into())
            })
            .with_ignored_flag(true),
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

/// Runs `tests/<script>` with `args`; its JSON on stdout (it must succeed).
fn run_script(python: &Path, script: &str, args: &[&str]) -> serde_json::Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    let out = Command::new(python)
        .arg(&script)
        .args(args)
        .output()
        .expect("python runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pyads script failed:\n{stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn pyads_reads_writes_sums_and_gets_notified(python: &Path) {
    let rt = runtime();
    let endpoint = format!("127.0.0.1:{}", rt.server.local_addr().port());
    let v = run_script(python, "pyads_client.py", &[&endpoint]);

    assert_eq!(v["state"], serde_json::json!([5, 0]), "ADS state Run");
    assert_eq!(v["device_name"], "cdpr vPLC");

    // Commanded lengths at home against the library's own inverse kinematics, in mm.
    let robot = uvigo8();
    let ik = cdpr_core::kinematics::lengths(
        &robot,
        &cdpr_core::kinematics::Pose::from_array(robot.home),
    );
    let got: Vec<f64> = v["cmd_lengths"]
        .as_array()
        .expect("list")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect();
    assert_eq!(got.len(), 8);
    for (g, w) in got.iter().zip(&ik) {
        assert!((g - w * 1000.0).abs() < 1e-9, "{g} vs {}", w * 1000.0);
    }
    let anchors: Vec<f64> = v["frame_anchors"]
        .as_array()
        .expect("list")
        .iter()
        .map(|x| x.as_f64().expect("n"))
        .collect();
    assert_eq!(anchors[0], robot.cables[0].frame_anchor.x * 1000.0);
    assert_eq!(v["anchor_2_3"].as_f64(), Some(825.0));

    let back: Vec<f64> = v["tensions_back"]
        .as_array()
        .expect("list")
        .iter()
        .map(|x| x.as_f64().expect("n"))
        .collect();
    assert_eq!(back, (0..8).map(|k| 10.0 + k as f64).collect::<Vec<_>>());

    let sum = &v["sum_read"];
    assert_eq!(
        sum["GVL_Shadow.nShadowCycle"], 4242,
        "sum read sees the write by name"
    );
    assert_eq!(
        sum["GVL_Shadow.aCmdLengths"].as_array().map(Vec::len),
        Some(8)
    );
    assert_eq!(v["echo_after_sum_write"], 7);

    let notified: Vec<u64> = v["notified"]
        .as_array()
        .expect("list")
        .iter()
        .map(|x| x.as_u64().expect("n"))
        .collect();
    assert!(notified.len() >= 5, "notifications: {notified:?}");
    assert!(notified.windows(2).all(|w| w[1] >= w[0]), "{notified:?}");
    assert_eq!(v["unknown_symbol_error"], 0x710);
    assert_eq!(
        v["protected_write_error"], 0x704,
        "aCmdLengths is the PLC's"
    );
    assert_eq!(v["symbol_version"], 1);
    assert_eq!(v["runtime_state"], 5, "Run, device state 0");
    assert_eq!(v["system_state"], serde_json::json!([5, 0]));

    // The writes pyads made really landed in the PLC's memory.
    let memory = rt.plc.memory();
    let table = memory.table();
    let k = table
        .symbols()
        .iter()
        .position(|s| s.name == "GVL_Shadow.aShadowPose")
        .expect("pose");
    assert_eq!(memory.external_writes(k), 1);
    eprintln!("pyads {} interop OK", v["pyads"]);
}

/// pyads' UDP functions (a foreign client) against the virtual PLC's responder on
/// 127.x.y.z:48899: the NetId it reports, a route added with TwinCAT's factory credentials
/// and found in the route table, a wrong password refused.
fn pyads_identifies_and_adds_a_route_over_udp(python: &Path) {
    let mut rt = runtime();
    let ip = serve_udp_on_own_loopback(&mut rt);
    let v = run_script(
        python,
        "pyads_route.py",
        &[&ip.to_string(), "10.20.30.40.1.1"],
    );
    assert_eq!(v["net_id"], "127.0.0.1.1.1", "{v}");
    assert_eq!(v["added"], true, "{v}");
    assert_ne!(v["wrong_password"], true, "{v}");
    let routes = rt.routes.list();
    assert_eq!(routes.len(), 1, "{routes:?}");
    let r = &routes[0];
    assert_eq!(r.net_id.to_string(), "10.20.30.40.1.1");
    assert_eq!(
        (r.name.as_str(), r.host.as_str()),
        ("pyads-route", "10.20.30.40")
    );
    assert!(!r.temporary);
    eprintln!(
        "pyads {} UDP service interop OK (wrong password: {})",
        v["pyads"], v["wrong_password"]
    );
}
