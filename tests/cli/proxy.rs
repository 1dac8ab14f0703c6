//! A plant network rehearsed: `cdpr plc` ← `cdpr proxy` ← `cdpr shadow --record --json`, three
//! real processes over loopback, one fault each — a delay with jitter, rare spikes, a stall, a
//! TCP reset, a black hole (a peer that vanishes without closing), the PLC restarted with
//! another symbol table. Each checks the shadow's summary against its record (gaps flagged and
//! counted, no row lost or written twice, the PLC's cycle never going back but across a
//! restart) and the PLC's side (no stale echo after a reconnect), and prints the figures the
//! guide quotes.

use crate::common::{self, Proc, scratch};
use cdpr_core::fixtures::{column, csv_rows, num};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A `cdpr proxy` process whose stderr lines are kept with the moment each came: the faults'
/// wall-clock times.
struct ProxyProc {
    child: Child,
    lines: Arc<Mutex<Vec<(Instant, String)>>>,
    addr: String,
}

impl ProxyProc {
    fn start(to: &str, faults: &[&str]) -> ProxyProc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cdpr"))
            .args(["proxy", "--listen", "127.0.0.1:0", "--to", to, "--json"])
            .args(faults)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cdpr proxy runs");
        let mut reader = BufReader::new(child.stderr.take().expect("stderr"));
        let mut first = String::new();
        reader.read_line(&mut first).expect("first line");
        let addr = first
            .split("listening on ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_string();
        let lines = Arc::new(Mutex::new(vec![(Instant::now(), first)]));
        {
            let lines = Arc::clone(&lines);
            std::thread::spawn(move || {
                for line in reader.lines().map_while(Result::ok) {
                    lines.lock().expect("lines").push((Instant::now(), line));
                }
            });
        }
        ProxyProc { child, lines, addr }
    }

    /// When a line containing `needle` came, each time.
    fn when(&self, needle: &str) -> Vec<Instant> {
        self.lines
            .lock()
            .expect("lines")
            .iter()
            .filter(|(_, l)| l.contains(needle))
            .map(|(t, _)| *t)
            .collect()
    }

    /// Ctrl-C, then its figures.
    fn stop(mut self) -> Value {
        let kill = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(kill.success());
        let mut out = String::new();
        if let Some(mut s) = self.child.stdout.take() {
            let _ = s.read_to_string(&mut out);
        }
        let status = self.child.wait().expect("exits");
        std::thread::sleep(Duration::from_millis(50));
        let err: Vec<String> = self
            .lines
            .lock()
            .expect("lines")
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        assert!(status.success(), "the proxy failed: {}", err.join("\n"));
        eprintln!("{}", err.join("\n"));
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not one JSON object ({e}): {out}"))
    }
}

/// `cdpr plc` for uvigo8 playing seed 000 on `listen` for `seconds`.
fn plc(listen: &str, robot: &str, seconds: &str) -> (Proc, String) {
    common::plc(&[
        "--robot",
        robot,
        "--listen",
        listen,
        "--trajectory",
        "seed000",
        "--hold",
        "100ms",
        "--duration",
        seconds,
        "--json",
    ])
}

/// A shadow of the PLC behind `addr`, writing and recording to `record`, for `seconds`;
/// returns the process and the moment its start line came (its clock's zero, within the
/// start line's printing).
fn shadow(addr: &str, record: &Path, seconds: &str, extra: &[&str]) -> (Proc, Instant) {
    let mut args = vec![
        "shadow",
        "--plc",
        addr,
        "--ams-net-id",
        "127.0.0.1.1.1",
        "--headless",
        "--write",
        "--record",
        record.to_str().expect("utf-8"),
        "--duration",
        seconds,
        "--json",
    ];
    args.extend_from_slice(extra);
    let p = Proc::spawn(&args);
    (p, Instant::now())
}

/// The shadow's exit: (success, its JSON summary).
fn summary(p: Proc) -> (bool, Value) {
    let (ok, out, err) = p.finish();
    let v: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {out}\n{err}"));
    (ok, v)
}

/// A record's rows: t, plc_cycle, gap.
struct Row {
    t: f64,
    cycle: f64,
    gap: bool,
}

/// The record read and held to what every fault must keep: time strictly increasing (no row
/// written twice, none out of order), the PLC's cycle never going back but at a gap row that
/// follows a restart (`restarts`: how many), the gap rows as many as the summary's gaps.
fn checked_record(path: &Path, summary: &Value, restarts: usize) -> Vec<Row> {
    let (header, rows) = csv_rows(std::fs::File::open(path).expect("the record exists"));
    let (t, cycle, gap) = (
        column(&header, "t"),
        column(&header, "plc_cycle"),
        column(&header, "gap"),
    );
    let rows: Vec<Row> = rows
        .iter()
        .map(|r| Row {
            t: num(r, t),
            cycle: num(r, cycle),
            gap: r[gap] == "1",
        })
        .collect();
    assert!(!rows.is_empty(), "an empty record");
    for w in rows.windows(2) {
        assert!(w[1].t > w[0].t, "t goes {} → {}", w[0].t, w[1].t);
    }
    let backwards: Vec<(f64, f64, bool)> = rows
        .windows(2)
        .filter(|w| w[1].cycle < w[0].cycle)
        .map(|w| (w[0].cycle, w[1].cycle, w[1].gap))
        .collect();
    assert!(
        backwards.len() <= restarts && backwards.iter().all(|b| b.2),
        "the PLC's cycle goes back (before, after, at a gap row): {backwards:?}"
    );
    let gaps = rows.iter().filter(|r| r.gap).count() as u64;
    assert_eq!(
        Some(gaps),
        summary["gaps"].as_u64(),
        "gap rows against the summary's gaps"
    );
    // The summary's simulated time is the record's (free-running: the wall clock).
    let last = rows.last().map_or(0.0, |r| r.t);
    let simulated = summary["simulated_s"].as_f64().expect("simulated_s");
    assert!(
        (simulated - last).abs() < 0.05,
        "simulated {simulated} s, record to {last} s"
    );
    rows
}

/// The shadow's figures under a fault, as the guide quotes them.
fn figures(fault: &str, s: &Value) {
    let ms = |k: &str| {
        s[k].as_f64()
            .map_or("-".into(), |v| format!("{:.2}", v * 1e3))
    };
    eprintln!(
        "{fault}: shadow cycle p50 {} ms, p99 {} ms, ADS p50 {} ms, p99 {} ms; reaction p50 {} \
         p99 {} PLC cycles; late samples {}; gaps {}, reconnects {}, exchange {}, error {}",
        ms("cycle_p50_s"),
        ms("cycle_p99_s"),
        ms("io_p50_s"),
        ms("io_p99_s"),
        s["reaction_cycles"],
        s["reaction_p99_cycles"],
        s["late_samples"],
        s["gaps"],
        s["reconnects"],
        s["exchange"],
        s["error"]
    );
}

/// The wall-clock moment of record time `t` of a shadow that started at `zero`.
fn wall(zero: Instant, t: f64) -> Instant {
    zero + Duration::from_secs_f64(t.max(0.0))
}

/// Seconds from `a` to `b` (negative when `b` is earlier).
fn secs(a: Instant, b: Instant) -> f64 {
    if b >= a {
        (b - a).as_secs_f64()
    } else {
        -(a - b).as_secs_f64()
    }
}

/// The first gap row at wall time `after` or later, and how long after it it came (a row up
/// to 0.3 s before counts: the record's clock starts before its start line is read).
fn reconnect_after(rows: &[Row], zero: Instant, after: Instant) -> Option<f64> {
    rows.iter()
        .filter(|r| r.gap)
        .map(|r| secs(after, wall(zero, r.t)))
        .find(|d| *d > -0.3)
}

#[test]
fn a_delay_of_5_ms_with_3_ms_jitter_is_followed_without_a_gap() {
    let dir = scratch("proxy_delay");
    let record = dir.join("run.csv");
    let (plc, plc_addr) = plc("127.0.0.1:0", "uvigo8", "8");
    let proxy = ProxyProc::start(&plc_addr, &["--delay", "5ms", "--jitter", "3ms"]);
    let (run, _) = shadow(&proxy.addr, &record, "4", &[]);
    let (ok, s) = summary(run);
    let p = proxy.stop();
    let _ = plc.finish();
    figures("delay 5 ± 3 ms", &s);
    assert!(ok, "{s}");
    assert!(s["error"].is_null());
    for zero in ["gaps", "reconnects", "rejected"] {
        assert_eq!(s[zero], 0, "{zero}");
    }
    checked_record(&record, &s, 0);
    // Each frame spent 5 ± 3 ms in the proxy (2 to 8 ms: the p50 near 5 ms, however loaded
    // the machine, within four times that).
    for dir in ["to_plc", "from_plc"] {
        let p50 = p[dir]["added_p50_s"].as_f64().expect("frames went through");
        assert!((0.004..0.020).contains(&p50), "{dir}: p50 {p50} s");
        assert!(p[dir]["frames"].as_u64() > Some(100), "{dir}: {}", p[dir]);
    }
    // The shadow's writes wait for their replies: its ADS time holds the round trip (two
    // delays, 10 ms at the median).
    let io = s["io_p50_s"].as_f64().expect("io_p50_s");
    assert!(io > 0.004, "ADS p50 {io} s under a 10 ms round trip");
}

#[test]
fn one_frame_in_a_hundred_delayed_100_ms_is_followed_without_a_gap() {
    let dir = scratch("proxy_spikes");
    let record = dir.join("run.csv");
    let (plc, plc_addr) = plc("127.0.0.1:0", "uvigo8", "8");
    let proxy = ProxyProc::start(
        &plc_addr,
        &[
            "--spike-fraction",
            "0.01",
            "--spike",
            "100ms",
            "--seed",
            "3",
        ],
    );
    let (run, _) = shadow(&proxy.addr, &record, "5", &[]);
    let (ok, s) = summary(run);
    let p = proxy.stop();
    let _ = plc.finish();
    figures("1 % of frames 100 ms late", &s);
    assert!(ok, "{s}");
    assert!(s["error"].is_null());
    // 100 ms is within the 500 ms timeout: no reconnect. A spike alone is within the stall
    // limit (0.2 s); spikes that pile up to more are stalls, each a gap row, never frozen rows.
    assert_eq!(s["reconnects"], 0);
    assert_eq!(s["gaps"], s["stalls"], "{s}");
    checked_record(&record, &s, 0);
    let frames = p["to_plc"]["frames"].as_u64().expect("frames")
        + p["from_plc"]["frames"].as_u64().expect("frames");
    let spikes = p["to_plc"]["spikes"].as_u64().expect("spikes")
        + p["from_plc"]["spikes"].as_u64().expect("spikes");
    let fraction = spikes as f64 / frames as f64;
    eprintln!(
        "{spikes} spikes in {frames} frames ({:.2} %)",
        fraction * 100.0
    );
    assert!(frames > 500 && (0.004..0.025).contains(&fraction), "{p}");
    let max = p["from_plc"]["added_max_s"]
        .as_f64()
        .expect("max")
        .max(p["to_plc"]["added_max_s"].as_f64().expect("max"));
    assert!(max >= 0.1, "a spike held a frame 100 ms: max {max} s");
}

#[test]
fn a_stall_of_2_s_is_a_gap_and_the_shadow_is_back_within_a_second() {
    let dir = scratch("proxy_stall");
    let record = dir.join("run.csv");
    let (plc, plc_addr) = plc("127.0.0.1:0", "uvigo8", "12");
    // Stalls from 4 to 6 s and from 8 s on (counted from the shadow's connection): the shadow
    // ends before the second.
    let proxy = ProxyProc::start(&plc_addr, &["--stall-every", "4s", "--stall-for", "2s"]);
    let (run, zero) = shadow(&proxy.addr, &record, "7.3", &[]);
    let (ok, s) = summary(run);
    let stalls = proxy.when("stall at ");
    let p = proxy.stop();
    let plc_report = plc.json();
    figures("a 2 s stall", &s);
    assert!(ok, "{s}");
    assert!(s["error"].is_null(), "{s}");
    assert!(p["stalls"].as_u64() >= Some(1), "{p}");
    let rows = checked_record(&record, &s, 0);
    // The stall is one gap, counted and flagged: the record jumps over it (no rows recorded
    // with the PLC's cycle frozen while nothing came), and resumes within a second of its end.
    assert_eq!(s["gaps"], 1, "{s}");
    let k = rows.iter().position(|r| r.gap).expect("the gap row");
    let jump = rows[k].t - rows[k - 1].t;
    assert!(jump > 1.0, "the record jumps {jump} s over a 2 s stall");
    let frozen = longest_frozen(&rows);
    eprintln!("record jumps {jump:.3} s; longest run at one PLC cycle {frozen:.3} s");
    assert!(frozen < 0.5, "rows at one PLC cycle for {frozen} s");
    let end = stalls[0] + Duration::from_secs(2);
    let back = reconnect_after(&rows, zero, end).expect("a gap row after the stall");
    eprintln!("back {back:.3} s after the stall ended");
    assert!(back < 1.0, "back {back} s after the stall ended");
    assert_eq!(plc_report["echoes_ahead"], 0, "{plc_report}");
}

/// The longest stretch of record time at one PLC cycle, s.
fn longest_frozen(rows: &[Row]) -> f64 {
    let mut longest: f64 = 0.0;
    let mut since = 0;
    for k in 1..rows.len() {
        if rows[k].cycle != rows[since].cycle || rows[k].gap {
            since = k;
        }
        longest = longest.max(rows[k].t - rows[since].t);
    }
    longest
}

#[test]
fn a_tcp_reset_is_a_gap_and_a_reconnect_within_a_second() {
    let dir = scratch("proxy_reset");
    let record = dir.join("run.csv");
    let (plc, plc_addr) = plc("127.0.0.1:0", "uvigo8", "10");
    let proxy = ProxyProc::start(&plc_addr, &["--reset-every", "2s"]);
    let (run, zero) = shadow(&proxy.addr, &record, "5", &[]);
    let (ok, s) = summary(run);
    let resets = proxy.when("reset at ");
    let p = proxy.stop();
    let plc_report = plc.json();
    figures("a TCP reset every 2 s", &s);
    assert!(ok, "{s}");
    assert!(s["error"].is_null(), "{s}");
    let rows = checked_record(&record, &s, 0);
    // Each reset that hit the shadow's connection is one reconnect and one gap.
    let hit = p["reset_connections"].as_u64().expect("reset_connections");
    assert!(hit >= 1, "{p}");
    assert_eq!(s["reconnects"].as_u64(), Some(hit), "{s}");
    assert_eq!(s["gaps"].as_u64(), Some(hit), "{s}");
    for at in resets.iter().take(hit as usize) {
        let back = reconnect_after(&rows, zero, *at).expect("a gap row after the reset");
        eprintln!("back {back:.3} s after the reset");
        assert!(back < 1.0, "back {back} s after the reset");
    }
    // No echo of a cycle the PLC has not run: nothing stale written after a reconnect.
    assert_eq!(plc_report["echoes_ahead"], 0, "{plc_report}");
}

#[test]
fn a_peer_that_vanishes_is_noticed_within_the_timeout_and_ends_the_run_in_error() {
    let dir = scratch("proxy_blackhole");
    let record = dir.join("run.csv");
    let (plc, plc_addr) = plc("127.0.0.1:0", "uvigo8", "10");
    let proxy = ProxyProc::start(&plc_addr, &["--blackhole-after", "1.5s"]);
    let (run, zero) = shadow(&proxy.addr, &record, "5", &["--timeout", "500ms"]);
    let (ok, s) = summary(run);
    let hole = proxy.when("black hole from")[0];
    let _ = proxy.stop();
    let _ = plc.finish();
    figures("a black hole after 1.5 s", &s);
    // Lost and never regained: not a clean run.
    assert!(!ok, "a lost PLC is not a clean run: {s}");
    assert!(!s["error"].is_null(), "{s}");
    let rows = checked_record(&record, &s, 0);
    // Noticed within the timeout: no rows at a frozen PLC cycle, none long after the last
    // sample.
    let frozen = longest_frozen(&rows);
    eprintln!("longest run at one PLC cycle {frozen:.3} s");
    assert!(frozen < 0.5, "rows at one PLC cycle for {frozen} s");
    // The record's last row closes the run at its end (a gap row, the state held); the rows
    // before it stop within the timeout of the black hole.
    let (closing, stepped) = rows.split_last().expect("rows");
    assert!(closing.gap, "the record ends with a gap row");
    let last = wall(zero, stepped.last().expect("rows").t);
    let after = secs(hole, last);
    eprintln!("last row {after:.3} s after the black hole opened");
    assert!(after < 0.5 + 0.3, "rows {after} s into the black hole");
}

#[test]
fn a_plc_restarted_with_another_symbol_table_is_a_gap_and_no_stale_echo() {
    let dir = scratch("proxy_restart");
    let record = dir.join("run.csv");
    let (mut first, plc_addr) = plc("127.0.0.1:0", "uvigo8", "30");
    let proxy = ProxyProc::start(&plc_addr, &[]);
    let (run, zero) = shadow(&proxy.addr, &record, "6", &[]);
    // The first PLC is killed after 3 s; the new one, on the same port, has uvigo8's anchors
    // with swivel pulleys: its symbol table has two arrays more, and it counts from zero.
    std::thread::sleep(Duration::from_secs(3));
    first.child.kill().expect("kill");
    let _ = first.child.wait();
    std::thread::sleep(Duration::from_millis(500));
    let (second, again) = plc(&plc_addr, "uvigo8-pulleys", "4");
    let returned = Instant::now();
    assert_eq!(again, plc_addr);
    let (ok, s) = summary(run);
    let _ = proxy.stop();
    let after = second.json();
    figures("the PLC restarted", &s);
    assert!(ok, "{s}");
    assert!(s["error"].is_null(), "{s}");
    assert_eq!(s["reconnects"], 1, "{s}");
    let rows = checked_record(&record, &s, 1);
    assert_eq!(s["gaps"], 1, "{s}");
    let back = reconnect_after(&rows, zero, returned).expect("a gap row after the restart");
    eprintln!("back {back:.3} s after the new PLC served");
    assert!(back < 1.0, "back {back} s after the new PLC served");
    // The rows after the gap answer the new PLC's cycles (counted from zero), never the old
    // one's; and the new PLC saw no echo of a cycle it has not run.
    let k = rows.iter().position(|r| r.gap).expect("the gap row");
    assert!(
        rows[k].cycle < rows[k - 1].cycle,
        "the new PLC's count: {} after {}",
        rows[k].cycle,
        rows[k - 1].cycle
    );
    assert_eq!(after["echoes_ahead"], 0, "{after}");
    assert!(after["reaction_samples"].as_u64() > Some(0), "{after}");
}
