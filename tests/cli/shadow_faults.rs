//! `cdpr shadow` under faults, as two real processes: a PLC killed and never regained is an
//! error with a gap row and agreeing figures, not a clean run; Ctrl-C ends the shadow within
//! half a second whatever it waits for (a request on a silent PLC with a 60 s timeout, the
//! start-up's probe, samples that stalled on the way).

use crate::common::{self, Proc, scratch, silent_listener};
use cdpr_core::fixtures::{column, csv_rows, num};
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `cdpr plc` playing seed000 behind `cdpr proxy` (in-process), whose host goes silent 1.5 s
/// after the shadow connects: everything swallowed, the connections left open.
fn plc_going_silent() -> (Proc, cdpr_ads::proxy::Proxy) {
    let (plc, addr) = common::plc(&common::words(
        "--robot uvigo8 --listen 127.0.0.1:0 --trajectory seed000 --hold 20ms --duration 30",
    ));
    let silent_from = Duration::from_millis(1500);
    let relay = cdpr_ads::fixtures::blackhole_after(addr.parse().expect("addr"), silent_from);
    (plc, relay)
}

/// `cdpr ARGS` with its output piped (no first line awaited: a shadow of a silent PLC says
/// nothing until it gives up).
fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cdpr runs")
}

fn sigint(pid: u32) {
    let kill = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
}

/// SIGINT to `child` and how long it took to exit, with its exit code and stderr.
fn interrupted(mut child: Child) -> (Duration, Option<i32>, String) {
    let sent = Instant::now();
    sigint(child.id());
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(sent.elapsed() < Duration::from_secs(90), "still running");
        std::thread::sleep(Duration::from_millis(2));
    };
    let took = sent.elapsed();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    (took, status.code(), err)
}

#[test]
fn a_plc_killed_mid_run_is_an_error_with_a_gap_row_not_a_clean_run() {
    let dir = scratch("shadow_plc_killed");
    let record = dir.join("run.csv");
    let (mut plc, addr) = common::plc(&common::words(
        "--robot uvigo8 --listen 127.0.0.1:0 --trajectory seed000 --hold 20ms --duration 30",
    ));
    let run = Proc::spawn(&[
        "shadow",
        "--plc",
        &addr,
        "--ams-net-id",
        "127.0.0.1.1.1",
        "--robot",
        "uvigo8",
        "--write",
        "--record",
        record.to_str().expect("utf-8"),
        "--duration",
        "4",
        "--json",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    // kill -9: no goodbye, the port closed, never back.
    plc.child.kill().expect("SIGKILL");
    let _ = plc.child.wait();
    let (ok, out, err) = run.finish();
    assert!(!ok, "a lost PLC is no clean run: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("the statistics, as JSON");
    let error = v["error"].as_str().expect("an error");
    assert!(error.contains("the PLC was lost at"), "{error}");
    assert!(err.contains("the PLC was lost at"), "{err}");
    assert_eq!(
        (v["reconnects"].as_u64(), v["gaps"].as_u64()),
        (Some(0), Some(1))
    );
    let simulated = v["simulated_s"].as_f64().expect("simulated_s");
    let wall = v["wall_s"].as_f64().expect("wall_s");
    assert!(
        (simulated - wall).abs() < 0.2,
        "simulated {simulated} s of {wall} s"
    );
    let (header, rows) = csv_rows(std::fs::File::open(&record).expect("record"));
    let (t, gap, enable) = (
        column(&header, "t"),
        column(&header, "gap"),
        column(&header, "enable"),
    );
    let gaps: Vec<usize> = (0..rows.len()).filter(|&k| rows[k][gap] == "1").collect();
    assert_eq!(gaps, vec![rows.len() - 1], "one gap row, the last");
    let last = &rows[rows.len() - 1];
    assert_eq!(last[enable], "0");
    assert!(
        (num(last, t) - simulated).abs() < 1e-6,
        "record and summary agree"
    );
    let before = num(&rows[rows.len() - 2], t);
    assert!(
        (1.0..2.0).contains(&before),
        "the data stops where the PLC died: {before} s"
    );
}

#[test]
fn ctrl_c_ends_a_shadow_waiting_on_a_silent_plc_within_half_a_second() {
    // The router's port request (`--source request`) and the start-up's first request, each
    // waiting out a long timeout; before, the shadow exited only when the timeout ran out.
    let addr = silent_listener();
    for extra in ["--source request --timeout 60s", "--timeout 20s"] {
        let mut args = vec!["shadow", "--plc", &addr, "--ams-net-id", "127.0.0.1.1.1"];
        args.extend(common::words(extra));
        let child = spawn(&args);
        std::thread::sleep(Duration::from_millis(1000));
        let (took, code, err) = interrupted(child);
        eprintln!(
            "{extra}: exited {:.1} ms after SIGINT: {err}",
            took.as_secs_f64() * 1e3
        );
        assert!(
            took < Duration::from_millis(500),
            "{extra}: {took:?}: {err}"
        );
        assert_eq!(code, Some(130), "{extra}: {err}");
        assert!(
            err.contains("interrupted before the shadow started"),
            "{err}"
        );
    }
}

#[test]
fn ctrl_c_ends_a_shadow_whose_samples_stalled_on_the_way_within_half_a_second() {
    // The PLC's host stops answering mid-run (a relay that swallows everything, connections
    // left open) and the shadow's next request waits on a 20 s timeout; Ctrl-C ends it at
    // once, the record finished with a gap row closing the stall, the statistics printed.
    let dir = scratch("shadow_stalled_ctrl_c");
    let record = dir.join("run.csv");
    let (mut plc, relay) = plc_going_silent();
    let relayed = relay.local_addr().to_string();
    let run = Proc::spawn(&[
        "shadow",
        "--plc",
        &relayed,
        "--ams-net-id",
        "127.0.0.1.1.1",
        "--robot",
        "uvigo8",
        "--timeout",
        "20s",
        "--record",
        record.to_str().expect("utf-8"),
        "--json",
    ]);
    std::thread::sleep(Duration::from_millis(2300));
    let sent = Instant::now();
    run.interrupt();
    let (ok, out, err) = run.finish();
    let took = sent.elapsed();
    eprintln!("exited {:.1} ms after SIGINT", took.as_secs_f64() * 1e3);
    assert!(took < Duration::from_millis(500), "{took:?}: {err}");
    assert!(ok, "stalled, then stopped by the user: a clean stop: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("the statistics, as JSON");
    assert_eq!(
        (v["stalls"].as_u64(), v["gaps"].as_u64()),
        (Some(1), Some(1)),
        "{v}"
    );
    let (header, rows) = csv_rows(std::fs::File::open(&record).expect("record"));
    let gap = column(&header, "gap");
    assert_eq!(
        rows.last().expect("rows")[gap],
        "1",
        "the stall closes the record"
    );
    let _ = relay.stop();
    let _ = plc.child.kill();
    let _ = plc.child.wait();
}

#[test]
fn the_duration_ends_a_run_whose_request_is_blocked_on_time() {
    // `--duration 3` with `--timeout 20s`, the PLC's host silent from 1.5 s: before, the run
    // ended when the blocked request's 20 s ran out, not at its duration.
    let (mut plc, relay) = plc_going_silent();
    let relayed = relay.local_addr().to_string();
    let started = Instant::now();
    let run = Proc::spawn(&[
        "shadow",
        "--plc",
        &relayed,
        "--ams-net-id",
        "127.0.0.1.1.1",
        "--timeout",
        "20s",
        "--duration",
        "3",
        "--json",
    ]);
    let v = run.json();
    let took = started.elapsed();
    eprintln!("a 3 s run took {:.2} s of wall time", took.as_secs_f64());
    assert!(took < Duration::from_secs(5), "{took:?}");
    let wall = v["wall_s"].as_f64().expect("wall_s");
    assert!((wall - 3.0).abs() < 0.5, "{wall} s");
    assert_eq!(v["stalls"].as_u64(), Some(1), "{v}");
    let _ = relay.stop();
    let _ = plc.child.kill();
    let _ = plc.child.wait();
}
