//! ads-client (jisotalo's Node.js client, 2.1.0) against the virtual PLC, with its default
//! options: `tests/node/ads_client_check.js` connects — as a Linux machine without a router
//! does (its own AMS address set by hand), and as to a local TwinCAT router (asking it for an
//! AMS port) —, reads and writes values, subscribes, creates and releases handles, reads
//! symbols and data types, and disconnects; it exits non-zero naming the call that failed.
//!
//! Needs `node` and the package installed (`npm ci --prefix tests/node`, which `.ci/run`
//! does). Without them the test is reported as ignored, its name saying `[SKIPPED: …]` and
//! why, unless `CDPR_REQUIRE_NODE=1` (CI sets it), when it fails. A libtest-mimic harness
//! (`harness = false` in Cargo.toml), as `tests/pyads.rs`.

use cdpr_ads::fixtures::*;
use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn node_dir() -> PathBuf {
    cdpr_core::fixtures::workspace_root().join("tests/node")
}

/// Why the test cannot run here, if it cannot.
fn missing() -> Option<String> {
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Some("no `node` on PATH (install nodejs, or run .ci/run)".into());
    }
    if !node_dir()
        .join("node_modules/ads-client/package.json")
        .is_file()
    {
        return Some("ads-client is not installed (npm ci --prefix tests/node)".into());
    }
    None
}

fn main() {
    let args = Arguments::from_args();
    let required = std::env::var("CDPR_REQUIRE_NODE").is_ok_and(|v| v == "1");
    let missing = missing();
    let trials = [
        (
            "ads_client_without_a_router_connects_reads_writes_subscribes_and_handles",
            "direct",
        ),
        (
            "ads_client_through_the_router_port_connects_reads_writes_subscribes_and_handles",
            "router",
        ),
    ]
    .into_iter()
    .map(|(name, mode)| match missing.clone() {
        None => Trial::test(name, move || {
            ads_client_with_default_options(&node_dir(), mode);
            Ok(())
        }),
        Some(why) if required => Trial::test(name, move || {
            Err(format!("CDPR_REQUIRE_NODE=1 but {why}").into())
        }),
        Some(why) => Trial::test(format!("{name} [SKIPPED: {why}]"), move || {
            Err(why.clone().into())
        })
        .with_ignored_flag(true),
    })
    .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn ads_client_with_default_options(dir: &Path, mode: &str) {
    let rt = runtime();
    let port = rt.server.local_addr().port();
    let out = Command::new("node")
        .current_dir(dir)
        .arg("ads_client_check.js")
        .args(["127.0.0.1", &port.to_string(), "127.0.0.1.1.1", "851", mode])
        .output()
        .expect("node runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ads-client check failed:\n{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    let passed = v["passed"].as_array().map_or(0, Vec::len);
    assert!(passed >= 20, "{v}");
    assert_eq!(v["protectedWrite"], 0x704, "{v}");
    // 12 of the GVL's symbols, the reaction diagnostic and the interference flag.
    assert_eq!(v["symbols"], 14, "the whole symbol upload: {v}");

    // What ads-client wrote landed, and nothing it may not write was touched.
    let memory = rt.plc.memory();
    let table = memory.table();
    for (k, s) in table.symbols().iter().enumerate() {
        if !table.is_writable(k) {
            assert_eq!(memory.external_writes(k), 0, "{} written", s.name);
        }
    }
    eprintln!(
        "ads-client ({mode}, as {}): {passed} calls passed: {}",
        v["local"], v["passed"]
    );
}
