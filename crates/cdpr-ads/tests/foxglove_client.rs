//! The live view (`--foxglove`) against an independent client of the Foxglove WebSocket
//! protocol: Foxglove's own `@foxglove/ws-protocol` in Node.js, messages decoded with
//! `protobufjs` from the schemas the server advertises (`tests/node/foxglove_client_check.js`).
//! A shadow of uvigo8 runs over ADS against the virtual PLC in this process (seed 000 at
//! 0.4 m/s), its live view on a free loopback port:
//!
//! - the channels advertised (topics, schema names, protobuf), every message decoded, the
//!   rates within their bounds (`/scene` ≤ 30 Hz, `/run` and `/tf` ≤ 100 Hz, each well above
//!   zero on a loaded machine), the `/run` samples plausible (times growing, the pose within
//!   millimetres of the commanded one: the cables' elastic sag and the tracking lag);
//! - a client that stops reading its socket beside one that reads: the shadow keeps its
//!   cycles, the publisher keeps up (no snapshot dropped), the reading client keeps its rate.
//!
//! And, ignored unless asked (`cargo test -p cdpr-ads --test foxglove_client -- --ignored
//! measure`; `CDPR_MEASURE_S` sets the seconds per mode, 20 by default), the figure of
//! docs/src/measurements.md: the shadow's cycle time with the live view and a reading client
//! against without, alternating every 500 ms in one run so that the machine's load falls on
//! both alike.
//!
//! Needs `node` and the packages (`npm ci --prefix tests/node`, which `.ci/run` does); without
//! them the tests are reported as ignored, `[SKIPPED: …]` saying why, unless
//! `CDPR_REQUIRE_NODE=1` (CI), when they fail. A libtest-mimic harness, as `node_ads_client.rs`.

use cdpr_ads::fixtures::*;
use cdpr_ads::live_view::{self, LiveOptions, LiveView, ShadowFeed};
use cdpr_ads::shadow::{self, Summary};
use cdpr_core::sim::ModelKind;
use libtest_mimic::{Arguments, Trial};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn node_dir() -> PathBuf {
    cdpr_core::fixtures::workspace_root().join("tests/node")
}

/// Why the tests cannot run here, if they cannot.
fn missing() -> Option<String> {
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Some("no `node` on PATH (install nodejs, or run .ci/run)".into());
    }
    for package in ["@foxglove/ws-protocol", "ws", "protobufjs"] {
        if !node_dir()
            .join("node_modules")
            .join(package)
            .join("package.json")
            .is_file()
        {
            return Some(format!(
                "{package} is not installed (npm ci --prefix tests/node)"
            ));
        }
    }
    None
}

fn main() {
    let args = Arguments::from_args();
    let required = std::env::var("CDPR_REQUIRE_NODE").is_ok_and(|v| v == "1");
    let missing = missing();
    let tests: [(&str, fn()); 2] = [
        (
            "a_shadows_live_view_is_advertised_decoded_and_within_its_rates",
            live_view_of_a_shadow,
        ),
        (
            "a_client_that_never_reads_slows_neither_the_shadow_nor_a_reading_client",
            a_client_that_never_reads,
        ),
    ];
    let measure = Trial::test(
        "measure_the_shadows_cycle_with_and_without_the_live_view",
        move || {
            measure();
            Ok(())
        },
    )
    .with_ignored_flag(true);
    let trials = tests
        .into_iter()
        .map(|(name, test)| match missing.clone() {
            None => Trial::test(name, move || {
                test();
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
        .chain(missing.is_none().then_some(measure))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

/// Seconds each client listens.
const LISTEN_S: u64 = 3;

/// The node client on `addr` for `seconds`, reading or stalling.
fn client(addr: SocketAddr, mode: &str) -> Child {
    client_for(addr, mode, LISTEN_S)
}

fn client_for(addr: SocketAddr, mode: &str, seconds: u64) -> Child {
    Command::new("node")
        .current_dir(node_dir())
        .arg("foxglove_client_check.js")
        .args([
            format!("ws://{addr}"),
            seconds.to_string(),
            mode.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts")
}

fn report(child: Child) -> Value {
    let out = child.wait_with_output().expect("node ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the client failed:\n{stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// A shadow of uvigo8 with its live view, run for `run_for` while `clients` listen (started
/// once the view is up); the shadow's summary, the view's figures and the clients' reports.
fn shadow_with_clients(modes: &[&str]) -> (Summary, live_view::LiveStats, Vec<Value>) {
    let robot = uvigo8();
    let rt = seed000_runtime(&robot, 0.4);
    let mut s = shadow_over_ads(&rt, &robot, ModelKind::ELASTIC);
    let view = LiveView::start(
        "127.0.0.1:0".parse().expect("address"),
        &robot,
        LiveOptions {
            name: "cdpr shadow (test)".into(),
            extra: live_view::EXTRA.iter().map(|s| s.to_string()).collect(),
            cycle_stats: true,
        },
    )
    .expect("the live view starts");
    let mut feed = ShadowFeed::new(view.sender());
    let stop = AtomicBool::new(false);
    let clients: Vec<Child> = modes.iter().map(|m| client(view.local_addr(), m)).collect();
    // Long enough for node to start and listen LISTEN_S seconds.
    let run_for = Duration::from_secs(LISTEN_S + 3);
    shadow::run_with(&mut s, Some(run_for), &stop, |shadow, _| {
        feed.after_cycle(shadow)
    })
    .expect("the shadow runs");
    let reports = clients.into_iter().map(report).collect();
    let stats = view.stop();
    (s.summary(), stats, reports)
}

fn rate(r: &Value, topic: &str) -> f64 {
    r["topics"][topic]["rate"].as_f64().unwrap_or(0.0)
}

fn live_view_of_a_shadow() {
    let (summary, stats, reports) = shadow_with_clients(&["read"]);
    let r = &reports[0];
    eprintln!(
        "client: {}\nshadow: {} cycles, p99 {:?}; live view: {stats:?}",
        r["topics"], summary.cycles, summary.cycle_p99_s
    );
    assert_eq!(r["subprotocol"], "foxglove.sdk.v1");
    assert_eq!(r["server"]["name"], "cdpr shadow (test)");
    // The channels as advertised.
    let mut channels: Vec<(String, String, String, String)> = r["channels"]
        .as_array()
        .expect("channels")
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (
                s("topic"),
                s("encoding"),
                s("schemaEncoding"),
                s("schemaName"),
            )
        })
        .collect();
    channels.sort();
    let expected = [
        ("/run", "runsample.RunSample"),
        ("/scene", "foxglove.SceneUpdate"),
        ("/shadow/cycle", "shadowcycle.ShadowCycle"),
        ("/tf", "foxglove.FrameTransform"),
    ];
    assert_eq!(
        channels,
        expected
            .iter()
            .map(|(t, s)| (
                t.to_string(),
                "protobuf".into(),
                "protobuf".into(),
                s.to_string()
            ))
            .collect::<Vec<_>>()
    );
    let run_channel = r["channels"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["topic"] == "/run"))
        .expect("/run");
    assert_eq!(run_channel["metadata"]["extra"], "plc_cycle,enable");

    // Rates: at most the design's (a little timer slack), well above zero on a loaded machine.
    for (topic, low, high) in [
        ("/scene", 5.0, 31.0),
        ("/run", 20.0, 101.5),
        ("/tf", 20.0, 101.5),
    ] {
        let hz = rate(r, topic);
        assert!((low..=high).contains(&hz), "{topic}: {hz:.1} Hz");
        assert_eq!(r["topics"][topic]["logTimesGrew"], true, "{topic}");
    }
    let cycles = r["topics"]["/shadow/cycle"]["count"].as_u64().unwrap_or(0);
    assert!(
        (1..=LISTEN_S + 1).contains(&cycles),
        "{cycles} /shadow/cycle"
    );

    // The scene: frame (12 edges, 8 pulleys), platform, 8 cables, in the world frame.
    let entities = &r["topics"]["/scene"]["entities"];
    assert_eq!(entities[0]["id"], "frame");
    assert_eq!(entities[0]["spheres"], 8);
    assert_eq!(entities[1]["cubes"], 1);
    assert_eq!(entities[2]["lines"], 8);
    assert_eq!(r["topics"]["/tf"]["frames"][1], "platform");

    // The samples: decoded, times growing, the pose beside the commanded one.
    let run = &r["run"];
    assert!(run["decoded"].as_u64().unwrap_or(0) >= 60, "{run}");
    assert_eq!(run["timeGrew"], true);
    assert_eq!(run["cables"], 8);
    assert_eq!(run["extraLen"], 2);
    let error = run["maxPositionError"].as_f64().expect("error");
    assert!(error < 0.01, "the pose {error} m from the commanded one");
    let last = &run["last"];
    let tensions: Vec<f64> = last["tension"]
        .as_array()
        .expect("tensions")
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    // uvigo8 holds its platform up: the cables pull (together more than its weight's share
    // of a newton), none negative.
    assert_eq!(tensions.len(), 8);
    assert!(
        tensions.iter().sum::<f64>() > 1.0 && tensions.iter().all(|f| (0.0..1e4).contains(f)),
        "{tensions:?}"
    );
    let t = last["t"].as_f64().expect("t");
    assert!(t > 1.0 && t < (LISTEN_S + 4) as f64, "t = {t}");
    assert_eq!(stats.dropped, 0, "{stats:?}");
}

fn a_client_that_never_reads() {
    let (summary, stats, reports) = shadow_with_clients(&["stall", "read"]);
    let (stalled, reader) = (&reports[0], &reports[1]);
    let run_s = (LISTEN_S + 3) as f64;
    eprintln!(
        "stalled: {}\nreader: {}\nshadow: {} cycles, p99 {:?}, overruns {}; live view: {stats:?}",
        stalled["topics"], reader["topics"], summary.cycles, summary.cycle_p99_s, summary.overruns
    );
    // The shadow kept its 2 ms cycles (a loaded machine loses a few).
    assert!(
        summary.cycles as f64 > 0.7 * run_s / 0.002,
        "{} cycles",
        summary.cycles
    );
    // The publisher kept up: nothing dropped, ~100 snapshots a second.
    assert_eq!(stats.dropped, 0, "{stats:?}");
    assert!(stats.published as f64 > 0.7 * run_s * 100.0, "{stats:?}");
    // The reading client kept its rates.
    assert!(rate(reader, "/run") > 50.0, "{}", reader["topics"]);
    assert!(rate(reader, "/scene") > 5.0, "{}", reader["topics"]);
}

/// The shadow (uvigo8, chain model, free-running 2 ms, writing, as `cdpr shadow --write`)
/// against the virtual PLC in this process, its live view served to a node client that takes
/// every message (`CDPR_MEASURE_CLIENT`: `count`, the default, counts them — an app on another
/// screen decodes on its own CPU, not this machine's —, `read` decodes them here too);
/// the feed alternates on and off every 500 ms (off: the view idles, as without
/// `--foxglove`). Each cycle is timed around `Shadow::cycle_at`, as the shadow's statistics
/// time it; the offer runs after it, as in `shadow::run_with`.
fn measure() {
    let per_mode: f64 = std::env::var("CDPR_MEASURE_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20.0);
    let robot = uvigo8();
    let rt = seed000_runtime(&robot, 0.1);
    let mut s = shadow_over_ads(&rt, &robot, ModelKind::CHAIN);
    let view = LiveView::start(
        "127.0.0.1:0".parse().expect("address"),
        &robot,
        LiveOptions {
            name: "cdpr shadow (measure)".into(),
            extra: live_view::EXTRA.iter().map(|s| s.to_string()).collect(),
            cycle_stats: true,
        },
    )
    .expect("the live view starts");
    let mut feed = ShadowFeed::new(view.sender());
    let total = 2.0 * per_mode;
    let mode = std::env::var("CDPR_MEASURE_CLIENT").unwrap_or_else(|_| "count".into());
    let reader = client_for(view.local_addr(), &mode, total as u64 + 1);
    // The client connected and subscribed.
    std::thread::sleep(Duration::from_millis(1500));
    let period = Duration::from_millis(2);
    let started = Instant::now();
    let mut deadline = started;
    let (mut on, mut off) = (Vec::new(), Vec::new());
    while started.elapsed().as_secs_f64() < total {
        let live = (started.elapsed().as_millis() / 500) % 2 == 1;
        let t0 = Instant::now();
        s.cycle_at(t0).expect("the shadow cycles");
        let cycle = t0.elapsed().as_secs_f64();
        if live {
            feed.after_cycle(&s);
            on.push(cycle);
        } else {
            off.push(cycle);
        }
        deadline += period;
        let now = Instant::now();
        if deadline < now {
            deadline = now;
        } else {
            std::thread::sleep(deadline - now);
        }
    }
    let stats = view.stop();
    let client = report(reader);
    let figures = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((p * v.len() as f64) as usize).min(v.len() - 1)] * 1e3;
        (
            v.len(),
            q(0.5),
            q(0.99),
            v.last().copied().unwrap_or(0.0) * 1e3,
        )
    };
    let (n_off, p50_off, p99_off, max_off) = figures(&mut off);
    let (n_on, p50_on, p99_on, max_on) = figures(&mut on);
    eprintln!(
        "shadow cycle, {per_mode} s per mode alternating every 500 ms:\n  without the live view: \
         {n_off} cycles, p50 {p50_off:.3} ms, p99 {p99_off:.3} ms, max {max_off:.2} ms\n  with \
         --foxglove and a client ({mode}): {n_on} cycles, p50 {p50_on:.3} ms, p99 {p99_on:.3} \
         ms, max {max_on:.2} ms\n  p99 ratio {:.3}; live view {stats:?}; client rates /run {:.1} \
         Hz, /scene {:.1} Hz",
        p99_on / p99_off,
        rate(&client, "/run"),
        rate(&client, "/scene"),
    );
}
