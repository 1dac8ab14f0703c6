//! `cdpr shadow --secure` against `cdpr plc --secure` as a user runs them, in each of TwinCAT's
//! three modes (the self-signed one, with its route, is in `route.rs`); the options of a mode
//! checked; plain ADS at Secure ADS's port said as such.

use super::secure_ads::{self_signed, signed};
use crate::common::*;
use cdpr_ads::fixtures::have_openssl;
use std::path::Path;
use std::process::Command;

/// A CA (`ca.pem`) and two certificates signed by it (`plc.pem`, CN plc; `laptop.pem`, CN
/// laptop), made with the `openssl` command as Beckhoff documents it.
fn pki(dir: &Path) {
    self_signed(dir, "ca", "LabCA");
    signed(dir, "plc", "plc");
    signed(dir, "laptop", "laptop");
}

/// The shadow's JSON report against `cdpr plc` with `plc_args`, the shadow with `shadow_args`.
fn shadow_report(plc_args: &str, shadow_args: &str) -> (serde_json::Value, String) {
    let (p, addr) = plc(&words(&format!(
        "--robot uvigo8 --trajectory seed000 --listen 127.0.0.1:0 --udp-listen off --duration 30 \
         {plc_args}"
    )));
    let v = json(&words(&format!(
        "shadow --plc {addr} --robot uvigo8 --duration 0.5 --json {shadow_args}"
    )));
    let mut p = p;
    let _ = p.child.kill();
    let (_, _, err) = p.finish();
    (v, err)
}

#[test]
fn the_shadow_runs_over_a_shared_ca_and_a_pre_shared_key() {
    if !have_openssl("shared CA") {
        return;
    }
    let dir = scratch("secure-sca");
    pki(&dir);
    let f = |name: &str| dir.join(name).display().to_string();
    let (v, plc_err) = shadow_report(
        &format!(
            "--secure sca --cert {} --key {} --ca {}",
            f("plc.pem"),
            f("plc.key"),
            f("ca.pem")
        ),
        &format!(
            "--secure sca --cert {} --key {} --ca {} --plc-cn plc",
            f("laptop.pem"),
            f("laptop.key"),
            f("ca.pem")
        ),
    );
    assert_eq!(v["secure"], "sca", "{v}");
    assert_eq!(v["exchange"], "notify", "{v}");
    assert!(v["cycles"].as_u64().unwrap_or(0) > 50, "{v}");
    assert!(plc_err.contains("mode sca"), "{plc_err}");
    assert!(
        plc_err.contains("Secure ADS client accepted") || plc_err.contains("certificate"),
        "{plc_err}"
    );

    let (v, _) = shadow_report(
        "--secure psk --psk-identity Lab-Laptop --psk-password s3cret",
        "--secure psk --psk-identity lab-laptop --psk-password s3cret",
    );
    assert_eq!(v["secure"], "psk", "{v}");
    assert!(v["cycles"].as_u64().unwrap_or(0) > 50, "{v}");

    // The password from the environment, as the help recommends.
    let (p, addr) = plc(&words(
        "--robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --duration 30 --secure psk \
         --psk-identity lab --psk-password fromenv",
    ));
    let o = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(words(&format!(
            "shadow --plc {addr} --robot uvigo8 --duration 0.2 --json --secure psk \
             --psk-identity lab"
        )))
        .env("CDPR_PSK_PASSWORD", "fromenv")
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let mut p = p;
    let _ = p.child.kill();
}

#[test]
fn a_modes_options_are_checked_and_named() {
    let o = cdpr(&words("plc --robot uvigo8 --secure sca --cert x.crt"));
    assert_fails(&o, "--secure sca needs --key, --ca");
    let o = cdpr(&words(
        "shadow --plc 127.0.0.1 --robot uvigo8 --secure psk --psk-identity lab --ca ca.pem",
    ));
    assert_fails(
        &o,
        "--ca belongs to --secure sca (a shared CA), not --secure psk",
    );
    let o = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(words("shadow --plc 127.0.0.1 --robot uvigo8 --secure psk"))
        .env_remove("CDPR_PSK_PASSWORD")
        .output()
        .expect("runs");
    assert_fails(&o, "--secure psk needs --psk-identity and --psk-password");
    let o = cdpr(&words(
        "shadow --plc 127.0.0.1 --robot uvigo8 --psk-identity lab",
    ));
    assert_fails(&o, "--secure");
    let o = cdpr(&words(
        "shadow --plc 127.0.0.1 --robot uvigo8 --secure ssc --plc-cn plc",
    ));
    assert_fails(&o, "--plc-cn belongs to --secure sca");
}

/// Plain ADS at port 8016: the shadow says that port is Secure ADS's, not "no route".
#[test]
fn plain_ads_at_the_secure_port_says_so() {
    let found = (1..200u8).find_map(|k| {
        let ip = format!("127.32.{}.{k}", std::process::id() % 250);
        let p = Proc::spawn(&words(&format!(
            "plc --robot uvigo8 --listen {ip}:8016 --udp-listen off --duration 30 --secure psk \
             --psk-identity lab --psk-password pw"
        )));
        p.first_line.contains("serving ADS").then_some((p, ip))
    });
    let (mut p, ip) = found.expect("a free loopback address for port 8016");
    let o = cdpr(&words(&format!(
        "shadow --plc {ip}:8016 --ams-net-id 127.0.0.1.1.1 --robot uvigo8 --duration 0.2 \
         --timeout 300ms"
    )));
    assert_fails(&o, "is Secure ADS (TLS): connect with --secure");
    let _ = p.child.kill();
}
