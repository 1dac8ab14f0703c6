//! `cdpr plc` as a user runs it: the real binary serving ADS on loopback while it plays
//! seed 000's trajectory; an `ads` crate client reads the moving set points, and the exit
//! statistics come out as one JSON object.

use crate::common;

use crate::common::plc;
use std::time::Duration;

#[test]
fn cdpr_plc_serves_a_moving_trajectory_and_reports_on_exit() {
    // Before the PLC starts: its tasks cannot have run longer than this.
    let spawned = std::time::Instant::now();
    let (child, addr) = plc(&common::words(
        "--robot uvigo8 --listen 127.0.0.1:0 --trajectory seed000 --speed 0.4 --hold 20ms --duration 1.5 --json",
    ));
    let line = &child.first_line;
    assert!(
        line.contains("as 127.0.0.1.1.1:851") && line.contains("seed000"),
        "{line}"
    );
    let addr = addr.as_str();

    let client = cdpr_ads::fixtures::client_at(addr);
    let dev = client.device(cdpr_ads::fixtures::target());
    let cmd = ads::Handle::new(dev, "GVL_Shadow.aCmdLengths").expect("handle");
    let read = || {
        let mut b = [0u8; 64];
        cmd.read(&mut b).expect("read");
        f64::from_le_bytes(b[..8].try_into().expect("8"))
    };
    let first = read();
    std::thread::sleep(Duration::from_millis(300));
    let later = read();
    assert!(
        (later - first).abs() > 1.0,
        "cable 1 moves: {first} → {later} mm"
    );
    let enable: u8 = dev
        .read_value(
            0xF005,
            ads::Handle::new(dev, "GVL_Shadow.bMotionEnable")
                .expect("h")
                .raw(),
        )
        .expect("enable");
    assert_eq!(enable, 1, "motion enabled while the trajectory runs");
    drop(cmd);
    drop(client);

    let v = child.json();
    let cycles = v["plc_cycles"].as_u64().expect("plc_cycles");
    // About 150 PLC cycles of 10 ms in 1.5 s on an idle machine; on any machine at most one per
    // 10 ms of wall time (the tasks skip late ticks rather than bursting) and some: the client
    // read moving set points.
    let periods = spawned.elapsed().as_secs_f64() / 0.010;
    assert!(
        cycles > 0 && cycles as f64 <= periods + 1.0,
        "{cycles} PLC cycles of 10 ms in {:.0} periods of wall time",
        periods
    );
    assert!(v["nc_ticks"].as_u64().expect("nc_ticks") >= 5 * cycles);
    assert_eq!(v["connections"], 1);
    assert_eq!(v["rejected_connections"], 0);
}

#[test]
fn cdpr_plc_names_bad_options() {
    let run = common::cdpr;
    let o = run(&common::words(
        "plc --robot uvigo8 --trajectory nosuch --duration 0",
    ));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("nosuch"));
    let o = run(&common::words(
        "plc --robot uvigo8 --nc 3ms --listen 127.0.0.1:0 --duration 0",
    ));
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("multiple"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&common::words(
        "plc --robot uvigo8 --ams-net-id 1.2.3 --duration 0",
    ));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("6 dot-separated"));
}

/// SIGTERM (what a service manager or `kill` sends) and Ctrl-C end `cdpr plc` as
/// `--duration` does: the statistics printed, exit 0.
#[test]
fn cdpr_plc_prints_statistics_on_sigterm_and_sigint() {
    for signal in ["TERM", "INT"] {
        let (child, addr) = plc(&common::words("--robot uvigo8 --listen 127.0.0.1:0 --json"));
        // One client, so that the statistics have something to count.
        drop(cdpr_ads::fixtures::client_at(addr.as_str()));
        std::thread::sleep(Duration::from_millis(100));
        let pid = child.child.id().to_string();
        let killed = std::process::Command::new("kill")
            .args([format!("-{signal}").as_str(), pid.as_str()])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        let v = child.json();
        assert_eq!(v["connections"], 1, "SIG{signal}: {v}");
        assert!(v["plc_cycles"].as_u64().is_some_and(|c| c > 0), "{v}");
    }
}

/// Serving on every interface is allowed but never silent. (A `--duration` beyond what a clock
/// can wait, and the other numbers: hostile_numbers.rs.)
#[test]
fn cdpr_plc_warns_when_it_listens_beyond_loopback() {
    let o = common::cdpr(&common::words(
        "plc --robot uvigo8 --listen 0.0.0.0:0 --duration 0",
    ));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: --listen 0.0.0.0:0") && err.contains("every network interface"),
        "{err}"
    );
    let o = common::cdpr(&common::words(
        "plc --robot uvigo8 --listen 127.0.0.1:0 --duration 0",
    ));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
}

/// A robot whose arrays would exceed one ADS reply (20 000 cables: the anchors are 480 000
/// bytes) is refused at start, by the robot file's cable limit, rather than served in part.
#[test]
fn cdpr_plc_refuses_a_robot_whose_arrays_exceed_one_ads_read_at_its_file() {
    let uvigo8 =
        std::fs::read_to_string(cdpr_core::fixtures::workspace_root().join("robots/uvigo8.toml"))
            .expect("uvigo8");
    let n = 20_000;
    let ring = |r: f64, z: f64| {
        (0..n)
            .map(|k| {
                let t = std::f64::consts::TAU * k as f64 / n as f64;
                format!("[{:.6}, {:.6}, {z}]", r * t.cos(), r * t.sin())
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let names = (0..n)
        .map(|k| format!("\"c{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let mut toml = String::new();
    let mut skipping = false;
    for line in uvigo8.lines() {
        if skipping {
            skipping = line != "]";
            continue;
        }
        if line.starts_with("names = ") {
            toml += &format!("names = [{names}]\n");
        } else if line.starts_with("frame_anchors = [") {
            toml += &format!("frame_anchors = [{}]\n", ring(1.0, 0.8));
            skipping = true;
        } else if line.starts_with("platform_anchors = [") {
            toml += &format!("platform_anchors = [{}]\n", ring(0.1, 0.175));
            skipping = true;
        } else {
            toml += &format!("{}\n", line.replace("\"uvigo8\"", "\"ring20000\""));
        }
    }
    let file = std::env::temp_dir().join(format!("cdpr-ring20000-{}.toml", std::process::id()));
    std::fs::write(&file, toml).expect("robot file");
    let o = common::cdpr(&[
        "plc",
        "--robot",
        file.to_str().expect("utf-8"),
        "--listen",
        "127.0.0.1:0",
        "--duration",
        "0",
    ]);
    let _ = std::fs::remove_file(&file);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    // Its arrays would exceed what one ADS read carries (480 000 bytes of frame anchors against
    // 65 536); the robot file's cable limit refuses it first, naming the file, line and count
    // (at the 1 024 cables allowed, the largest array is 24 576 bytes: one read carries it).
    assert!(
        err.contains("20000 cables, more than the 1024") && err.contains("cdpr-ring20000-"),
        "{err}"
    );
}

/// `--wait-for-client`: the trajectory holds (motion disabled) until a client connects, then
/// plays after the hold.
#[test]
fn cdpr_plc_waits_for_a_client_before_the_trajectory_starts() {
    let (child, addr) = plc(&common::words(
        "--robot uvigo8 --listen 127.0.0.1:0 --trajectory seed000 --speed 0.4 --hold 20ms \
         --wait-for-client --duration 3 --json",
    ));
    assert!(
        child.first_line.contains("once a client connects"),
        "{}",
        child.first_line
    );
    // Longer than the hold: without the option the motion would be enabled by now.
    std::thread::sleep(Duration::from_millis(500));
    let client = cdpr_ads::fixtures::client_at(addr.as_str());
    let dev = client.device(cdpr_ads::fixtures::target());
    let enable = || -> u8 {
        let h = ads::Handle::new(dev, "GVL_Shadow.bMotionEnable").expect("h");
        dev.read_value(0xF005, h.raw()).expect("enable")
    };
    assert_eq!(enable(), 0, "held until a client connected");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(enable(), 1, "playing after the hold");
    drop(client);
    let v = child.json();
    assert!(v["late_cycles"].is_u64(), "{v}");
}
