//! `cdpr plc` + `cdpr shadow` as a user runs them: two real processes talking ADS over
//! loopback TCP on a free port. The shadow follows seed 000's trajectory, its written-back pose
//! is checked on the PLC, its record replays exactly through the physics core and matches
//! `cdpr simulate` of the same trajectory; the allow-list, a dying PLC and Ctrl-C are tested
//! the same way.

use crate::common;

use crate::common::{Proc, scratch};
use cdpr_ads::link::{AdsConfig, AdsTransport, Controller, ShadowLink, WritePolicy};
use cdpr_ads::shadow::ShadowConfig;
use cdpr_ads::wire::{AmsAddr, AmsNetId};
use cdpr_core::fixtures::{column, csv_rows, num, uvigo8};
use cdpr_core::kinematics::Pose;
use cdpr_core::metrics::{self, CompareOptions};
use cdpr_core::sim::{Command as SimCommand, Sim};
use std::path::Path;
use std::time::{Duration, Instant};

/// `cdpr plc` for uvigo8 on `listen`; returns the process and the address it serves on.
fn plc(listen: &str, extra: &[&str]) -> (Proc, String) {
    let mut args = vec!["--robot", "uvigo8", "--listen", listen];
    args.extend_from_slice(extra);
    common::plc(&args)
}

fn shadow(addr: &str, extra: &[&str]) -> Proc {
    let mut args = vec![
        "shadow",
        "--plc",
        addr,
        "--ams-net-id",
        "127.0.0.1.1.1",
        "--headless",
    ];
    args.extend_from_slice(extra);
    Proc::spawn(&args)
}

fn link(addr: &str) -> cdpr_ads::link::AdsController {
    let t = AdsTransport::connect(AdsConfig::new(addr, AmsAddr::new(AmsNetId::LOCAL, 851)))
        .expect("connects");
    ShadowLink::connect(
        t,
        &cdpr_ads::PlcSymbols::of(&uvigo8()).expect("[plc]"),
        WritePolicy::ReadOnly,
    )
    .expect("resolves")
}

/// Raw ADS reads of one symbol by name (what a TwinCAT engineer would look at).
fn read_symbol(addr: &str, name: &str, len: usize) -> Vec<u8> {
    let client = cdpr_ads::fixtures::client_at(addr);
    let dev = client.device(cdpr_ads::fixtures::target());
    let h = ads::Handle::new(dev, name).expect("handle");
    let mut b = vec![0u8; len];
    h.read(&mut b).expect("read");
    b
}

fn f64s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8")))
        .collect()
}

/// Header and rows of a CSV file.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    csv_rows(std::fs::File::open(path).expect("the CSV exists"))
}

#[test]
fn shadow_follows_seed000_writes_back_and_matches_simulate() {
    let dir = scratch("shadow_follows_seed000");
    let record = dir.join("run.csv");
    let (plc, addr) = plc(
        "127.0.0.1:0",
        &common::words("--trajectory seed000 --speed 0.4 --hold 1s --duration 13 --json"),
    );
    // What the shadow will read at start (the PLC holds its start pose for 1 s).
    let mut watch = link(&addr);
    let geometry = watch.read_geometry().expect("geometry");
    let start_lengths = watch.read_cycle().expect("cycle").commanded_lengths;
    let run = shadow(
        &addr,
        &[
            "--robot",
            "uvigo8",
            "--write",
            "--record",
            record.to_str().expect("utf-8"),
            "--duration",
            "11.5",
            "--cycle",
            "lockstep",
            "--json",
        ],
    );
    assert!(
        run.first_line.contains("writing the allow-listed symbols"),
        "{}",
        run.first_line
    );
    // Meanwhile, look at what arrives on the PLC.
    let mut polled: Vec<Vec<f64>> = Vec::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(11) {
        std::thread::sleep(Duration::from_millis(100));
        let pose = f64s(&read_symbol(&addr, "GVL_Shadow.aShadowPose", 48));
        if pose.iter().any(|v| *v != 0.0) {
            polled.push(pose);
        }
    }
    let summary = run.json();
    let plc_stats = plc.json();
    eprintln!(
        "shadow: {} cycles, p50 {:?} s, p99 {:?} s, max {:?} s, reaction {:?} (max {:?}) PLC cycles; PLC: reaction p50 {:?}, motion delay {:?} cycles",
        summary["cycles"],
        summary["cycle_p50_s"],
        summary["cycle_p99_s"],
        summary["cycle_max_s"],
        summary["reaction_cycles"],
        summary["reaction_max_cycles"],
        plc_stats["reaction_p50_cycles"],
        plc_stats["motion_delay_cycles"]
    );
    // Lockstep: at most one exchange per PLC cycle (10 ms), the counter polled in between.
    // (How many of the PLC's cycles the shadow caught depends on the machine's load.)
    let cycles = summary["cycles"].as_u64().expect("cycles");
    let plc_cycles = plc_stats["plc_cycles"].as_u64().expect("plc_cycles");
    assert!(
        cycles > 0 && cycles <= plc_cycles,
        "{cycles} shadow cycles for {plc_cycles} PLC cycles"
    );
    if summary["exchange"] == "notify" {
        // Every PLC cycle arrives by notification, in order: none missed.
        assert_eq!(summary["missed_plc_cycles"], 0);
    } else {
        assert!(summary["polls"].as_u64().expect("polls") >= cycles);
    }
    for zero in ["rejected", "reconnects", "gaps", "physics_resets"] {
        assert_eq!(summary[zero], 0, "{zero}");
    }
    assert!(summary["error"].is_null());
    // Seed 003's reaction time (11–18 PLC cycles through its gateway), measured by the PLC and
    // read back by the shadow. Its value over two processes depends on the machine's load:
    // printed above; exact with an injected clock in
    // crates/cdpr-ads/tests/integration/controller_over_ads.rs, measured against the wall
    // clock in benches/ads.rs.
    assert!(summary["reaction_cycles"].as_u64().expect("reaction") >= 1);
    assert!(plc_stats["reaction_p50_cycles"].as_u64().expect("p50") >= 1);

    // Every pose seen on the PLC is one the shadow recorded (mm on the PLC, m in the record).
    let (header, rows) = read_csv(&record);
    let x = column(&header, "x");
    assert!(!polled.is_empty(), "no pose reached the PLC");
    for pose in &polled {
        let found = rows.iter().any(|r| {
            (0..3).all(|k| (num(r, x + k) * 1e3 - pose[k]).abs() < 1e-9)
                && (3..6).all(|k| (num(r, x + k).to_degrees() - pose[k]).abs() < 1e-9)
        });
        assert!(found, "PLC pose {pose:?} is not in the record");
    }
    let spread = polled
        .iter()
        .map(|p| p[0])
        .fold(f64::NEG_INFINITY, f64::max)
        - polled.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min);
    assert!(
        spread > 150.0,
        "the written pose moves over the squares: {spread} mm in x"
    );

    // The record replays exactly: the robot file on the controller's anchors, at rest where
    // the start lengths hold it, stepped with the recorded commands, gives the recorded poses.
    let robot = uvigo8()
        .with_geometry(&geometry.frame_anchors, &geometry.platform_anchors)
        .expect("fits");
    let config = ShadowConfig::default().sim;
    let tcp = Pose::from_array(geometry.tcp_pose.to_array());
    let mut replay = Sim::at(&robot, config, &tcp).expect("sim");
    replay
        .settle(&SimCommand::Lengths(start_lengths))
        .expect("settles");
    let cmd = column(&header, "length_cmd_1");
    let mut worst: f64 = 0.0;
    for row in &rows {
        let command = (0..8).map(|k| num(row, cmd + 3 * k)).collect();
        replay
            .set_command(&SimCommand::Lengths(command))
            .expect("command");
        replay.step().expect("steps");
        let p = replay.state().pose.position;
        for k in 0..3 {
            worst = worst.max((p[k] - num(row, x + k)).abs());
        }
    }
    assert!(worst < 1e-9, "replay differs by {worst} m");

    // Against `cdpr simulate` of the same trajectory with the same model: same columns, and
    // the same motion once the start offset (PLC hold minus the shadow's start) is removed.
    let sim_csv = dir.join("sim.csv");
    let sim = common::json(&common::with(
        "simulate --robot uvigo8 --trajectory seed000 --speed 0.4 --model chain --control ideal --out",
        &[sim_csv.to_str().expect("utf-8"), "--json"],
    ));
    assert!(sim["error"].is_null());
    let (sim_header, _) = read_csv(&sim_csv);
    assert_eq!(
        header[..sim_header.len()],
        sim_header[..],
        "the record starts with simulate's columns"
    );
    let reference = cdpr_core::trajectory::csv::read(&sim_csv).expect("sim.csv");
    let actual = cdpr_core::trajectory::csv::read(&record).expect("run.csv");
    let options = CompareOptions {
        max_lag_s: 1.5,
        ..CompareOptions::default()
    };
    let c = metrics::compare(&reference, &actual, &options).expect("compares");
    eprintln!(
        "shadow vs cdpr simulate: lag {:.3} s, RMS 3D {:.3} mm, max 3D {:.3} mm over {} samples",
        c.lag_s,
        c.total.rms_3d * 1e3,
        c.total.max_3d * 1e3,
        c.total.samples
    );
    // Lockstep, the shadow's clock is the PLC's: it started at PLC cycle c0 while the PLC held
    // its start pose for 1 s (100 cycles), so it sees the motion start exactly 1 s − c0·10 ms
    // later than `cdpr simulate` (a whole number of its 1 ms samples). (Free-running, it would
    // step to the wall clock, which a loaded machine's virtual PLC falls behind by the NC
    // ticks it drops: several mm against `cdpr simulate` here, none against a real TwinCAT.)
    let c0 = summary["start"]["plc_cycle"].as_f64().expect("cycle");
    let expected_lag = 1.0 - c0 * 0.010;
    assert!(
        (c.lag_s - expected_lag).abs() < 1.5e-3,
        "lag {} s, expected {expected_lag} s",
        c.lag_s
    );
    assert!(
        c.reference_outside_actual <= 1,
        "only t = 0, before the first step"
    );
    // Tolerance. The commands differ from simulate's by (a) the linear interpolation over a
    // 10 ms PLC cycle, |l̈|·T²/8 ≤ 3 m/s²·(10 ms)²/8 = 38 µm, and (b) the moment of the read:
    // the shadow polls every 1 ms and normally reads the set point of the NC tick that ended
    // the PLC cycle; when the virtual PLC ran late and caught up, or the shadow's poll was
    // late, it reads a later tick's — at most 4 ticks (8 ms) later, or it would have seen the
    // next counter value — plus one of the shadow's own 1 ms polls when that poll was late
    // too: 9 ms, 3.6 mm at 0.4 m/s. Max 3.7 mm is that bound with (a) (3.38 mm seen once in a
    // full parallel `cargo test`, over the 3.2 mm of four ticks alone); RMS 0.5 mm says such
    // reads are the exception (about 0.1 mm measured on a quiet machine, 0.02 mm on the
    // segments without one). In-process, where nothing is late, free-running agrees with
    // `sim::run` to 10 µm (`shadow::tests::free_running_shadow_matches_a_simulation_…`).
    //
    // Those bounds hold while the virtual PLC keeps its schedule. A PLC process starved of CPU
    // (CI's two cores shared with a build) runs ticks late by more than a period — counted as
    // its `overruns` — and the shadow then reads set points one late catch-up further on
    // (4.5 mm max, 0.6 mm RMS seen once so): the bounds are then those of a PLC late by
    // another 10 ms cycle, 4 mm more at 0.4 m/s.
    //
    // Likewise a shadow starved of CPU: a cycle that took longer than its 1 ms poll period
    // makes the next read that much later (11 ms seen once with the whole test suite running
    // on two cores): the max bound grows by the trajectory's speed × the longest cycle.
    let overruns = plc_stats["overruns"].as_u64().expect("overruns");
    let (rms, max) = if overruns == 0 {
        (0.5e-3, 3.7e-3)
    } else {
        eprintln!("the virtual PLC overran {overruns} times: bounds for one more late cycle");
        (1.5e-3, 7.7e-3)
    };
    let longest_cycle = summary["cycle_max_s"].as_f64().expect("cycle_max_s");
    let (rms, max) = if longest_cycle > 1e-3 {
        eprintln!("a shadow cycle took {longest_cycle} s: bounds for reads that much later");
        (rms + 0.5e-3, max + 0.4 * longest_cycle)
    } else {
        (rms, max)
    };
    assert!(
        c.total.rms_3d < rms,
        "RMS 3D {} mm ({overruns} PLC overruns)",
        c.total.rms_3d * 1e3
    );
    assert!(
        c.total.max_3d < max,
        "max 3D {} mm ({overruns} PLC overruns)",
        c.total.max_3d * 1e3
    );
}

#[test]
fn the_allow_list_blocks_a_read_only_symbol_before_anything_is_written() {
    let dir = scratch("shadow_allow_list");
    let (plc, addr) = plc("127.0.0.1:0", &["--duration", "4"]);
    // uvigo8 with the shadow's pose sent to the controller's TCP pose: a symbol the robot
    // file's plc.writable list does not name (read-only in its sense).
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("robots/uvigo8.toml"))
            .expect("uvigo8.toml");
    let bad = cdpr_core::fixtures::edited(
        &text,
        "shadow_pose = \"GVL_Shadow.aShadowPose\"",
        "shadow_pose = \"GVL_Shadow.aTcpPose\"",
    );
    let file = dir.join("bad_plc.toml");
    std::fs::write(&file, bad).expect("write robot file");
    let file = file.to_str().expect("utf-8");
    let (ok, _, err) = shadow(&addr, &["--robot", file, "--write", "--duration", "1"]).finish();
    assert!(!ok, "refused");
    assert!(
        err.contains("GVL_Shadow.aTcpPose")
            && err.contains("plc.writable")
            && err.contains("nothing was written"),
        "{err}"
    );
    // Nothing of the sum write reached the PLC: no echo, no lengths, no tensions.
    assert_eq!(read_symbol(&addr, "GVL_Shadow.nShadowCycle", 4), vec![0; 4]);
    assert!(
        f64s(&read_symbol(&addr, "GVL_Shadow.aShadowLengths", 64))
            .iter()
            .all(|v| *v == 0.0)
    );
    assert!(
        f64s(&read_symbol(&addr, "GVL_Shadow.aShadowTensions", 64))
            .iter()
            .all(|v| *v == 0.0)
    );
    // Without --write the same file shadows the PLC and writes nothing at all.
    let v = shadow(&addr, &["--robot", file, "--duration", "0.5", "--json"]).json();
    assert!(v["cycles"].as_u64().expect("cycles") > 0);
    assert_eq!(v["write"], false);
    assert_eq!(read_symbol(&addr, "GVL_Shadow.nShadowCycle", 4), vec![0; 4]);
    let _ = plc.finish();
}

#[test]
fn a_shadow_whose_plc_dies_and_returns_reconnects_and_marks_the_gap() {
    let dir = scratch("shadow_reconnect");
    let record = dir.join("run.csv");
    let (first, addr) = plc("127.0.0.1:0", &["--duration", "2"]);
    let run = shadow(
        &addr,
        &[
            "--model",
            "elastic",
            "--write",
            "--record",
            record.to_str().expect("utf-8"),
            "--duration",
            "5",
            "--json",
        ],
    );
    // The first PLC ends after 2 s (its process exits: the link drops, the port closes).
    let _ = first.finish();
    std::thread::sleep(Duration::from_millis(800));
    // A new PLC process on the same port, counting from zero.
    let (second, again) = plc(&addr, &["--duration", "3", "--json"]);
    assert_eq!(again, addr);
    let v = run.json();
    let after = second.json();
    eprintln!(
        "reconnects {}, gaps {}, cycles {}; the new PLC saw {} reaction samples",
        v["reconnects"], v["gaps"], v["cycles"], after["reaction_samples"]
    );
    assert_eq!(v["reconnects"], 1);
    assert_eq!(v["gaps"], 1);
    assert!(v["error"].is_null());
    // The shadow answers the new PLC (how fast, in PLC cycles, depends on the machine's
    // load: see controller_over_ads.rs and benches/ads.rs for the figure).
    assert!(
        after["reaction_samples"].as_u64().expect("samples") > 0,
        "the shadow answers the new PLC"
    );
    // The record jumps over the outage once, flagged.
    let (header, rows) = read_csv(&record);
    let (t, gap) = (column(&header, "t"), column(&header, "gap"));
    let flagged: Vec<usize> = (0..rows.len()).filter(|&k| rows[k][gap] == "1").collect();
    assert_eq!(flagged.len(), 1);
    let k = flagged[0];
    let jump = num(&rows[k], t) - num(&rows[k - 1], t);
    // The outage lasted at least the 800 ms slept between the two PLCs (a sleep never ends
    // early, and the free-running shadow's time is the wall clock).
    assert!(jump > 0.5, "the outage lasted about a second: {jump} s");
    assert!(
        rows.windows(2).all(|w| num(&w[1], t) > num(&w[0], t)),
        "time increases"
    );
}

#[test]
fn ctrl_c_stops_the_shadow_and_flushes_the_record() {
    let dir = scratch("shadow_ctrl_c");
    let record = dir.join("run.csv");
    let (plc, addr) = plc(
        "127.0.0.1:0",
        &common::words("--trajectory seed000 --hold 20ms --duration 5"),
    );
    // Before the shadow starts: its clock cannot have run longer than this.
    let spawned = Instant::now();
    let run = shadow(
        &addr,
        &[
            "--model",
            "elastic",
            "--record",
            record.to_str().expect("utf-8"),
            "--json",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    run.interrupt();
    let v = run.json();
    let steps = v["steps"].as_u64().expect("steps");
    // Stepped, and never ahead of the wall clock (1 ms steps; how close it keeps up depends on
    // the machine: benches/shadow.rs measures a cycle's cost).
    let wall = spawned.elapsed().as_secs_f64();
    assert!(
        steps > 0 && steps as f64 * 1e-3 <= wall,
        "{steps} steps of 1 ms in {wall:.3} s"
    );
    let (_, rows) = read_csv(&record);
    assert_eq!(rows.len() as u64, steps, "every step is in the record");
    let _ = plc.finish();
}

#[test]
fn the_ads_exchange_is_picked_or_forced_and_reported() {
    let (plc, addr) = plc("127.0.0.1:0", &["--duration", "6"]);
    // auto: the virtual PLC sends the inputs by notification every PLC cycle, the first
    // choice; polled, it serves sum commands by handle, the first of those.
    let (ok, out, err) = shadow(&addr, &["--duration", "0.3", "--json"]).finish();
    assert!(ok, "{err}");
    assert!(
        err.contains("ADS exchange notify (auto: the PLC sends every sample"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["exchange"], "notify");
    assert_eq!(v["exchange_choice"], "auto");
    assert_eq!(v["re_resolves"], 0);
    let (ok, out, err) = shadow(
        &addr,
        &["--exchange", "poll", "--duration", "0.3", "--json"],
    )
    .finish();
    assert!(ok, "{err}");
    assert!(err.contains("ADS exchange sum-handle (poll)"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["exchange"], "sum-handle");
    // Forced: single requests, in the start line, the JSON and the text statistics.
    let (ok, out, err) = shadow(
        &addr,
        &["--exchange", "single", "--duration", "0.3", "--json"],
    )
    .finish();
    assert!(ok, "{err}");
    assert!(err.contains("ADS exchange single (forced)"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        (&v["exchange"], &v["exchange_choice"]),
        (&"single".into(), &"single".into())
    );
    assert!(v["cycles"].as_u64() > Some(0));
    let (ok, out, err) =
        shadow(&addr, &["--exchange", "sum-address", "--duration", "0.3"]).finish();
    assert!(ok, "{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("ADS exchange"))
        .unwrap_or_else(|| panic!("no exchange row:\n{out}"));
    assert!(row.ends_with("sum-address"), "{row}");
    // A name that is none of them is refused with the choices.
    let (ok, _, err) = shadow(&addr, &["--exchange", "sum", "--duration", "0.3"]).finish();
    assert!(!ok);
    assert!(
        err.contains("`sum`")
            && err.contains("auto, poll, notify, sum-handle, sum-address or single"),
        "{err}"
    );
    let _ = plc.finish();
}

#[test]
fn a_shadow_at_the_smallest_physics_step_accounts_for_every_step() {
    // The smallest physics step the shadow takes (a short, read-only shadow of a virtual PLC).
    let (mut plc, addr) = plc("127.0.0.1:0", &["--duration", "3"]);
    // A 0.5 s shadow: killed (and failed as hung) if it is still running after a minute.
    let args = common::with(
        "shadow --model elastic --duration 0.5 --json --dt 1e-5 --plc",
        &[&addr],
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = common::bounded(&args, root, 4_000_000, Duration::from_secs(60));
    assert!(
        !o.timed_out,
        "hung: a 0.5 s shadow still running after a minute"
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let s: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    // 10 µs steps: 200 per 2 ms cycle. Whatever this machine manages, no real time is lost
    // silently: the steps done plus those skipped (counted) cover the simulated time.
    let steps = s["steps"].as_u64().expect("steps") + s["skipped_steps"].as_u64().expect("skipped");
    let simulated = s["simulated_s"].as_f64().expect("simulated_s");
    assert!(
        (steps as f64 * 1e-5 - simulated).abs() < 2e-3,
        "{steps} steps of 10 µs for {simulated} s simulated"
    );
    let _ = plc.child.kill();
}
