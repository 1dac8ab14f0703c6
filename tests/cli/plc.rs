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
