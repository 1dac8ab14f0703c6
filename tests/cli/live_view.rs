//! `--foxglove` as a user runs it: `cdpr plc` and `cdpr shadow` each serving a live view on a
//! free loopback port, a taken port refused naming the address, a non-loopback address served
//! with the virtual PLC's warning, the shadow's summary counting what was published and
//! dropped. The protocol itself is checked by an independent client in
//! `crates/cdpr-ads/tests/foxglove_client.rs`.

use crate::common::{self, Proc};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

/// `cdpr ARGS` started, its stderr read line by line until it announces its live view ("…
/// live view on ws://ADDR (…"), then drained on a thread (so the process never blocks on a
/// full pipe); the process, its stderr lines so far and the address.
fn spawn_live(args: &str) -> (Child, Vec<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(common::words(args))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cdpr runs");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen = Vec::new();
    let addr = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("no live view announced: {seen:?}"))
            .expect("stderr");
        let addr = line
            .split("live view on ws://")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .map(str::to_string);
        seen.push(line);
        if let Some(addr) = addr {
            break addr;
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, seen, addr)
}

#[test]
fn cdpr_plc_serves_its_live_view_and_a_taken_port_is_an_error_naming_it() {
    let (plc, lines, live) = spawn_live(
        "plc --robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --trajectory seed000 \
         --duration 4 --foxglove 127.0.0.1:0",
    );
    // The banner stays the first line; the live view follows it.
    assert!(lines[0].contains("serving ADS on"), "{lines:?}");
    assert!(
        TcpStream::connect(&live).is_ok(),
        "nothing listens on {live}"
    );

    // A second live view on the same port: an error naming the address, before serving.
    let o = common::cdpr(&common::words(&format!(
        "plc --robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --duration 1 --foxglove {live}"
    )));
    common::assert_fails(&o, &format!("the live view cannot listen on {live}"));

    let out = plc.wait_with_output().expect("exits");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("live view: "), "{stdout}");
}

#[test]
fn a_live_view_beyond_loopback_is_served_with_the_plcs_warning() {
    let o = common::cdpr(&common::words(
        "plc --robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --duration 0 --foxglove 0.0.0.0:0",
    ));
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: --foxglove 0.0.0.0:0: the live view is reachable from every network interface of this machine, and the Foxglove WebSocket protocol has no authentication"),
        "{err}"
    );
    assert!(err.contains("live view on ws://0.0.0.0:"), "{err}");
    // Loopback: no warning.
    let o = common::cdpr(&common::words(
        "plc --robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --duration 0 --foxglove 127.0.0.1:0",
    ));
    assert!(
        !common::stderr(&o).contains("warning"),
        "{}",
        common::stderr(&o)
    );
}

#[test]
fn cdpr_shadow_reports_what_its_live_view_published_and_dropped() {
    let (plc, addr) = common::plc(&common::words(
        "--robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --trajectory seed000 --duration 6",
    ));
    let shadow = Proc::spawn(&common::words(&format!(
        "shadow --plc {addr} --ams-net-id 127.0.0.1.1.1 --robot uvigo8 --duration 2 --json \
         --foxglove 127.0.0.1:0"
    )));
    let v = shadow.json();
    let live = &v["live_view"];
    // 2 s at ≤ 100 snapshots a second (a loaded machine takes fewer, never more).
    let published = live["published"].as_u64().expect("published");
    assert!((20..=202).contains(&published), "{v}");
    assert_eq!(live["dropped"], 0, "{v}");
    assert_eq!(live["queued"], live["published"], "{v}");
    plc.interrupt();
    let (ok, _, err) = plc.finish();
    assert!(ok, "{err}");
}
