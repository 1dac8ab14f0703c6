//! The shadow against pyads' own test server (`tests/pyads_testserver.py`: `AdsTestServer` +
//! `AdvancedHandler`, unchanged, serving uvigo8's GVL while a 10 ms PLC task moves the
//! commanded pose on a circle).
//!
//! That server answers sum reads and writes by index group and offset only, and a request it
//! cannot serve gets no reply at all. Checked here, in each exchange it serves: the geometry
//! read equals the robot file's; cycles run; only the allow-listed symbols are written (the
//! server's variables count the writes); a server stopped and restarted mid-run is one
//! reconnect and one gap; at a held pose, the PLC's commanded lengths equal our inverse
//! kinematics of it and the shadow's written pose and lengths sit where those lengths hold the
//! platform. `auto` picks sum-by-address there (one unanswered probe per connection), forced
//! sum-by-handle fails naming the exchange, and a GVL without the optional reaction symbol
//! costs one unanswered request.

use cdpr_ads::fixtures::*;
use cdpr_ads::link::{Exchange, ExchangeChoice};
use cdpr_ads::shadow::{self, ShadowSetup, Summary};
use cdpr_ads::wire::AmsNetId;
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

pub fn tests() -> Vec<crate::PyTest> {
    vec![
        (
            "testserver_auto_picks_sum_by_address_and_rides_out_a_restart",
            |py| whole_loop(py, ExchangeChoice::Auto, Exchange::SumAddress),
            false,
        ),
        (
            "testserver_sum_by_address_forced_runs_the_whole_loop",
            |py| {
                whole_loop(
                    py,
                    ExchangeChoice::Force(Exchange::SumAddress),
                    Exchange::SumAddress,
                )
            },
            false,
        ),
        (
            "testserver_single_requests_forced_run_the_whole_loop",
            |py| {
                whole_loop(
                    py,
                    ExchangeChoice::Force(Exchange::Single),
                    Exchange::Single,
                )
            },
            false,
        ),
        (
            "testserver_sum_by_handle_forced_fails_naming_the_exchange",
            sum_by_handle_forced_fails,
            false,
        ),
        (
            "testserver_without_the_reaction_symbol_costs_one_unanswered_request",
            without_the_reaction_symbol,
            false,
        ),
        (
            "measure_cycle_and_reaction_per_exchange",
            measure_cycle_and_reaction_per_exchange,
            true,
        ),
    ]
}

/// Short: each unanswered probe waits it out.
const TIMEOUT: Duration = Duration::from_millis(300);
/// How long the test waits for the Python side to say something before giving up.
const PATIENCE: Duration = Duration::from_secs(30);

/// `tests/pyads_testserver.py` running: its port, its stdin for commands, its JSON lines.
struct PyPlc {
    child: Child,
    stdin: ChildStdin,
    events: Receiver<Value>,
    port: u16,
}

impl PyPlc {
    fn start(python: &Path, extra: &[&str]) -> PyPlc {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/pyads_testserver.py");
        let robot = cdpr_core::fixtures::workspace_root().join("robots/uvigo8.toml");
        let mut child = Command::new(python)
            .arg(&script)
            .arg(&robot)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python runs");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (send, events) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) => {
                        if send.send(v).is_err() {
                            break;
                        }
                    }
                    Err(e) => eprintln!("pyads_testserver.py said ({e}): {line}"),
                }
            }
        });
        let mut plc = PyPlc {
            child,
            stdin,
            events,
            port: 0,
        };
        let listening = plc.wait_for("listening");
        assert_eq!(
            listening["pyads"], "3.6.0",
            "the pyads this was written against"
        );
        plc.port = listening["port"].as_u64().expect("port") as u16;
        plc
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").expect("python reads its stdin");
        self.stdin.flush().expect("flush");
    }

    /// The next event named `name` (others, e.g. `unanswered`, are only printed).
    fn wait_for(&self, name: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .events
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no `{name}` from pyads_testserver.py ({e})"));
            if v["event"] == name {
                return v;
            }
            assert_ne!(v["event"], "thread_error", "{v}");
            eprintln!("pyads_testserver.py: {v}");
        }
    }

    fn ask(&mut self, command: &str, answer: &str) -> Value {
        self.send(command);
        self.wait_for(answer)
    }

    fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for PyPlc {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn setup(endpoint: String, choice: ExchangeChoice, robot: &Robot) -> ShadowSetup {
    let mut setup = ShadowSetup::new(endpoint);
    setup.ams_net_id = Some(AmsNetId::LOCAL);
    setup.robot = Some(robot.clone());
    setup.config.write = true;
    setup.exchange = choice;
    setup.timeout = TIMEOUT;
    setup
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("a list: {v}"))
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn allow_listed(robot: &Robot) -> Vec<String> {
    let mut w = cdpr_ads::PlcSymbols::of(robot).expect("[plc]").writable;
    w.sort();
    w
}

/// Connect, run the loop 1.5 s, restart the server (300 ms down), run 1.5 s, hold the pose,
/// run 1 s, stop; then check everything both sides saw.
fn whole_loop(python: &Path, choice: ExchangeChoice, expect: Exchange) {
    let robot = uvigo8();
    let mut plc = PyPlc::start(python, &[]);
    let connected = shadow::connect(&setup(plc.endpoint(), choice, &robot))
        .unwrap_or_else(|e| panic!("{choice}: {e:?}"));
    assert_eq!(connected.exchange, Some(expect), "{choice}");
    assert!(
        connected.banner.contains(&format!("ADS exchange {expect}")),
        "{}",
        connected.banner
    );
    let mut s = connected.shadow;
    // The geometry, read over the test server, is the robot file's (the server has it in mm).
    for (k, cable) in robot.cables.iter().enumerate() {
        assert!((s.geometry().frame_anchors[k] - cable.frame_anchor).norm() < 1e-12);
        assert!((s.geometry().platform_anchors[k] - cable.platform_anchor).norm() < 1e-12);
    }
    assert!(s.start_report().from_file && s.start_report().anchors.is_empty());
    assert!(s.start_report().reaction_diagnostic);

    let stop = AtomicBool::new(false);
    let held = std::thread::scope(|scope| {
        let worker = scope.spawn(|| shadow::run(&mut s, None, &stop));
        std::thread::sleep(Duration::from_millis(1500));
        plc.ask("restart 300", "restarted");
        std::thread::sleep(Duration::from_millis(1500));
        let held = plc.ask("hold", "held");
        // Long enough for the platform to come to rest (damped within ~0.1 s).
        std::thread::sleep(Duration::from_millis(1000));
        stop.store(true, Ordering::Relaxed);
        worker.join().expect("no panic").expect("the loop ran");
        held
    });
    let sum = s.summary();
    let stats = plc.ask("stats", "stats");
    eprintln!(
        "{choice}: {} cycles, p50 {:?} p99 {:?} s, reconnects {}, gaps {}, reaction p50 {:?}; \
         PLC: {} cycles, writes {}, unanswered {}, reaction {}",
        sum.cycles,
        sum.cycle_p50_s,
        sum.cycle_p99_s,
        sum.reconnects,
        sum.gaps,
        sum.reaction_cycles,
        stats["cycle"],
        stats["writes"],
        stats["unanswered"],
        stats["reaction"]
    );

    assert_eq!(sum.exchange, Some(expect), "picked again after the restart");
    assert_eq!(
        (sum.reconnects, sum.gaps, sum.re_resolves, sum.rejected),
        (1, 1, 0, 0),
        "one restart: one reconnect, one gap"
    );
    assert!(sum.cycles > 100, "{} cycles", sum.cycles);
    // auto's requests that get no reply, per connection (two connections): its notification
    // request, and the polled probe of sum-by-handle (2 before notifications were asked for:
    // the extra one per connection costs one timeout, then everything is polled).
    let unanswered = if choice == ExchangeChoice::Auto { 6 } else { 0 };
    assert_eq!(stats["unanswered"], unanswered, "{stats}");

    // Written: the allow-listed symbols and nothing else, each at least once per exchange.
    let writes = stats["writes"].as_object().expect("writes");
    let mut written: Vec<String> = writes.keys().cloned().collect();
    written.sort();
    assert_eq!(written, allow_listed(&robot));
    let counts: Vec<u64> = writes.values().map(|n| n.as_u64().expect("n")).collect();
    for &n in &counts {
        assert!(
            n >= fewest_writes(&sum),
            "{n} writes for {} cycles, {} gaps",
            sum.cycles,
            sum.gaps
        );
    }
    // Sum writes move all four at once; single writes may be cut between two by the restart.
    let spread = counts.iter().max().expect("4") - counts.iter().min().expect("4");
    assert!(
        spread <= u64::from(expect == Exchange::Single),
        "{counts:?}"
    );

    // The PLC saw the shadow's echoes, and the shadow read the PLC's verdict on them.
    assert!(stats["reaction"]["samples"].as_u64() > Some(10), "{stats}");
    assert!(sum.reaction_samples > 10);
    let (echo, cycle) = (stats["shadow_cycle"].as_u64(), stats["cycle"].as_u64());
    assert!(echo.is_some_and(|e| e > 0 && Some(e) <= cycle), "{stats}");

    // At the held pose: the PLC's commands are our inverse kinematics of it...
    let held_mm = numbers(&held["pose_mm"]);
    let pose = Pose::new(
        held_mm[0] / 1e3,
        held_mm[1] / 1e3,
        held_mm[2] / 1e3,
        0.0,
        0.0,
        0.0,
    );
    let ik_mm: Vec<f64> = kinematics::lengths(&robot, &pose)
        .iter()
        .map(|l| l * 1e3)
        .collect();
    let cmd = numbers(&stats["cmd_lengths"]);
    for (c, k) in cmd.iter().zip(&ik_mm) {
        assert!((c - k).abs() < 1e-9, "commanded {c} mm, IK {k} mm");
    }
    // ...and the shadow, at rest, sits where they hold the platform, by statics alone: a little
    // below the commanded pose (elastic cables under 1 kg: 0.93 mm at home, up to ~1.5 mm at
    // the circle's far edge), level; each written length is its commanded length stretched by
    // Hooke's law under the written tension (k = 20 000 N/m); the written tensions along the
    // cables at the written pose carry the platform's weight; and the written lengths are that
    // pose's geometry (to a micrometre: the chain model takes them from its bodies' anchors).
    let written_pose = numbers(&stats["shadow_pose"]);
    let d: Vec<f64> = (0..3).map(|k| written_pose[k] - held_mm[k]).collect();
    let offset = d.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!(
        offset < 2.5,
        "shadow {written_pose:?} vs held {held_mm:?}: {offset} mm"
    );
    assert!(d[2] < 0.0, "it sags below the commanded pose: {d:?}");
    for (k, angle) in written_pose[3..].iter().enumerate() {
        assert!(angle.abs() < 0.1, "angle {k}: {angle}°");
    }
    let at = Pose::new(
        written_pose[0] / 1e3,
        written_pose[1] / 1e3,
        written_pose[2] / 1e3,
        written_pose[3].to_radians(),
        written_pose[4].to_radians(),
        written_pose[5].to_radians(),
    );
    let ik = kinematics::inverse(&robot, &at);
    let lengths = numbers(&stats["shadow_lengths"]);
    let tensions = numbers(&stats["shadow_tensions"]);
    let mut force = nalgebra::Vector3::zeros();
    for (k, cable) in ik.cables.iter().enumerate() {
        let (l, c, t) = (lengths[k], cmd[k], tensions[k]);
        assert!(
            (l - cable.length * 1e3).abs() < 1e-3,
            "cable {k}: written {l} mm, geometry {} mm",
            cable.length * 1e3
        );
        let hooke_mm = t / 20_000.0 * 1e3;
        assert!(
            t > 0.0 && ((l - c) - hooke_mm).abs() < 0.005,
            "cable {k}: stretch {} mm, {t} N / k = {hooke_mm} mm",
            l - c
        );
        force += cable.direction * t;
    }
    let weight = robot.platform.mass * cdpr_core::robot::GRAVITY;
    assert!(
        (force - nalgebra::Vector3::new(0.0, 0.0, weight)).norm() < 0.005 * weight,
        "the tensions hold {force:?} N against a weight of {weight} N"
    );
}

fn sum_by_handle_forced_fails(python: &Path) {
    let robot = uvigo8();
    let mut plc = PyPlc::start(python, &[]);
    let choice = ExchangeChoice::Force(Exchange::SumHandle);
    let e = match shadow::connect(&setup(plc.endpoint(), choice, &robot)) {
        Ok(_) => panic!("pyads' test server does not serve sum reads by handle"),
        Err(e) => e,
    };
    let text = format!("{e:#}");
    assert!(
        text.contains("`sum-handle`")
            && text.contains("0xF083")
            && text.contains("no reply within 300ms")
            && text.contains("`auto`"),
        "{text}"
    );
    let stats = plc.ask("stats", "stats");
    assert_eq!(stats["unanswered"], 1, "the one probe: {stats}");
    assert_eq!(stats["writes"], serde_json::json!({}), "nothing written");
}

fn without_the_reaction_symbol(python: &Path) {
    let robot = uvigo8();
    let mut plc = PyPlc::start(python, &["--no-reaction"]);
    let choice = ExchangeChoice::Force(Exchange::SumAddress);
    let connected =
        shadow::connect(&setup(plc.endpoint(), choice, &robot)).unwrap_or_else(|e| panic!("{e:?}"));
    let mut s = connected.shadow;
    assert!(!s.start_report().reaction_diagnostic);
    shadow::run(
        &mut s,
        Some(Duration::from_millis(500)),
        &AtomicBool::new(false),
    )
    .expect("the loop runs without it");
    let sum = s.summary();
    let stats = plc.ask("stats", "stats");
    assert_eq!(
        stats["unanswered"], 1,
        "the probe of nReactionCycles: {stats}"
    );
    assert_eq!((sum.reconnects, sum.gaps, sum.reaction_samples), (0, 0, 0));
    assert!(sum.cycles > 10);
    let echo = stats["writes"]["GVL_Shadow.nShadowCycle"].as_u64();
    assert!(echo >= Some(fewest_writes(&sum)), "{stats}");
}

/// The fewest writes a run of the shadow makes. Every cycle writes but two kinds: one whose
/// write was in flight when the PLC went away (lost with the connection, one per gap), and one
/// that took no physics step and answers a PLC counter it already answered (the shadow's write
/// stage skips it: nothing new to say), which a busy machine makes now and then — at most 1 %
/// of the cycles here.
fn fewest_writes(sum: &Summary) -> u64 {
    sum.cycles
        .saturating_sub(sum.gaps + sum.cycles.div_ceil(100))
}

// ------------------------------------------------------------------------------ measured

/// One row of the measurement: cycle p50/p99 (ms) and reaction p50/p99 (PLC cycles).
fn row(server: &str, exchange: &str, sum: &Summary) {
    let ms = |s: Option<f64>| s.map_or("-".into(), |s| format!("{:.3}", s * 1e3));
    let cycles = |c: Option<u32>| c.map_or("-".into(), |c| c.to_string());
    println!(
        "{server:<22} {exchange:<12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5}",
        sum.cycles,
        ms(sum.cycle_p50_s),
        ms(sum.cycle_p99_s),
        ms(sum.io_p50_s),
        ms(sum.io_p99_s),
        format!(
            "{}/{}",
            cycles(sum.reaction_cycles),
            cycles(sum.reaction_p99_cycles)
        ),
        sum.overruns
    );
}

/// The shadow's cycle and reaction times, 10 s per exchange (`CDPR_MEASURE_S` to change),
/// against the virtual PLC (`cdpr plc`'s runtime, in this process, playing seed000 at 0.4 m/s)
/// and against pyads' test server.
fn measure_cycle_and_reaction_per_exchange(python: &Path) {
    let seconds: f64 = std::env::var("CDPR_MEASURE_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let duration = Duration::from_secs_f64(seconds);
    let robot = uvigo8();
    println!(
        "{:<22} {:<12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5}",
        "server",
        "exchange",
        "cycles",
        "p50 [ms]",
        "p99 [ms]",
        "ADS p50",
        "ADS p99",
        "reaction",
        "overr"
    );
    let all = [Exchange::SumHandle, Exchange::SumAddress, Exchange::Single];
    for exchange in all {
        let rt = seed000_runtime(&robot, 0.4);
        let endpoint = rt.server.local_addr().to_string();
        let mut s = shadow::connect(&setup(endpoint, ExchangeChoice::Force(exchange), &robot))
            .expect("connects")
            .shadow;
        shadow::run(&mut s, Some(duration), &AtomicBool::new(false)).expect("runs");
        row("cdpr plc (virtual PLC)", exchange.name(), &s.summary());
        let stats = rt.stop();
        println!(
            "{:<35} PLC's own reaction p50/p99/max {:?}/{:?}/{:?} over {} echoes",
            "",
            stats.reaction.quantile(0.5),
            stats.reaction.quantile(0.99),
            stats.reaction.max,
            stats.reaction.samples()
        );
    }
    for exchange in [Exchange::SumAddress, Exchange::Single] {
        let mut plc = PyPlc::start(python, &["--period-s", "8"]);
        let mut s = shadow::connect(&setup(
            plc.endpoint(),
            ExchangeChoice::Force(exchange),
            &robot,
        ))
        .expect("connects")
        .shadow;
        shadow::run(&mut s, Some(duration), &AtomicBool::new(false)).expect("runs");
        row("pyads AdsTestServer", exchange.name(), &s.summary());
        let stats = plc.ask("stats", "stats");
        println!("{:<35} PLC's own reaction {}", "", stats["reaction"]);
    }
}
