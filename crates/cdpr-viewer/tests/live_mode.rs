//! Live mode without a window: the viewer's app (MinimalPlugins, manual updates) drawing the
//! ADS shadow of the virtual PLC served in this process. What it shows must be the shadow's own
//! physics (every sample it draws is a row of the shadow's record, exactly), its ghost the
//! controller's commanded pose, and its indicator the state of the link.

use cdpr_ads::fixtures::*;
use cdpr_ads::link::WritePolicy;
use cdpr_ads::link::{AdsConfig, AdsController, AdsTransport, ShadowLink};
use cdpr_ads::server::Runtime;
use cdpr_ads::shadow::{CycleTiming, Recorder, Shadow, ShadowConfig};
use cdpr_ads::wire::{AmsAddr, AmsNetId};
use cdpr_core::kinematics;
use cdpr_core::trajectory::{self, BuiltinOptions, ProfileKind};
use cdpr_viewer::live::{self, LinkState};
use cdpr_viewer::{LiveInfo, Playback, headless_app};
use std::time::{Duration, Instant};

fn shadow_of(rt: &Runtime, record: &std::path::Path) -> Shadow<AdsController> {
    let robot = uvigo8();
    let transport = AdsTransport::connect(AdsConfig {
        timeout: Duration::from_millis(200),
        ..AdsConfig::new(
            rt.server.local_addr().to_string(),
            AmsAddr::new(AmsNetId::LOCAL, 851),
        )
    })
    .expect("connects");
    let symbols = cdpr_ads::PlcSymbols::of(&robot).expect("[plc]");
    let link =
        ShadowLink::connect(transport, &symbols, WritePolicy::AllowListed).expect("resolves");
    let config = ShadowConfig {
        write: true,
        timing: CycleTiming::Free {
            period: Duration::from_millis(2),
            plc_period: Duration::from_millis(10),
        },
        ..ShadowConfig::default()
    };
    let mut shadow = Shadow::new(link, Some(robot.clone()), config).expect("starts");
    shadow.record_to(Recorder::create(record, &robot, Default::default()).expect("record"));
    shadow
}

/// (t, x, y, z) of every record row (shortest round-trip numbers: exact).
fn record_rows(path: &std::path::Path) -> Vec<[f64; 4]> {
    let mut reader = csv::Reader::from_path(path).expect("record");
    let headers = reader.headers().expect("header").clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (t, x, y, z) = (col("t"), col("x"), col("y"), col("z"));
    reader
        .records()
        .map(|r| {
            let r = r.expect("row");
            [t, x, y, z].map(|k| r[k].parse::<f64>().expect("number"))
        })
        .collect()
}

#[test]
fn live_mode_draws_the_shadows_own_states_and_the_controllers_pose() {
    let robot = uvigo8();
    // S-curves within uvigo8's winch limits: the PLC's limiter passes the lengths unchanged,
    // so its commanded pose is on the path.
    let options = BuiltinOptions {
        speed: 0.2,
        dt: 0.002,
        profile: Some(ProfileKind::Scurve),
        ..BuiltinOptions::default()
    };
    let path = trajectory::builtin(&robot, "seed000", &options).expect("seed000");
    let rt = runtime_with(&robot, path.clone());
    let dir = std::env::temp_dir().join(format!("cdpr-viewer-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let record = dir.join("live.csv");
    let info = LiveInfo {
        address: rt.server.local_addr().to_string(),
        lines: Vec::new(),
    };
    // Before the shadow exists: its free-running clock starts after this instant.
    let before = Instant::now();
    let (feed, handle) =
        live::spawn(shadow_of(&rt, &record), info, None, Default::default()).expect("thread");
    let mut app = headless_app(Playback::live(feed), Duration::from_millis(16));

    // 1.5 s of frames at ~60 Hz (the shadow runs on its own thread meanwhile).
    let started = Instant::now();
    let mut frames = 0;
    while started.elapsed() < Duration::from_millis(1500) {
        app.update();
        frames += 1;
        std::thread::sleep(Duration::from_millis(16));
    }
    let playback = app.world().resource::<Playback>();
    assert!(playback.is_live() && playback.driver().is_none());
    let feed = playback.live_feed().expect("live");
    let latest = &feed.latest;
    assert_eq!(latest.link, LinkState::Connected);
    // The shadow's time is its own (free-running: the wall clock since it started), never
    // ahead of the wall clock, and its physics (dt = 1 ms) never steps past it; the viewer
    // shows the shadow's step count, not one of its own. How close to real time it keeps up
    // depends on the machine: `benches/shadow.rs` measures the cycle's cost.
    let wall = before.elapsed().as_secs_f64();
    let dt = 1e-3;
    assert!(
        latest.time > 0.0 && latest.time <= wall,
        "shadow time {:.3} s after {wall:.3} s of wall time",
        latest.time
    );
    assert_eq!(playback.total_steps, latest.steps);
    assert!(
        latest.steps > 0 && latest.steps as f64 * dt <= latest.time + 1e-9,
        "{} steps in {:.3} s of shadow time",
        latest.steps,
        latest.time
    );
    assert!(latest.summary.cycles > 0, "no shadow cycle");

    // The ghost is the controller's commanded pose: its cable lengths are the commanded ones,
    // and it lies on the trajectory the PLC plays.
    let ghost = latest.commanded;
    let ik = kinematics::lengths(&robot, &ghost);
    assert_eq!(ik.len(), latest.commanded_lengths.len());
    for (a, b) in ik.iter().zip(&latest.commanded_lengths) {
        assert!((a - b).abs() < 1e-6, "IK(ghost) {a} vs commanded {b}");
    }
    let off_path = path
        .samples
        .iter()
        .map(|s| (s.pose.position - ghost.position).norm())
        .fold(f64::INFINITY, f64::min);
    assert!(off_path < 1e-3, "ghost {off_path} m from seed000");
    // The platform follows it within the cables' sag (0.9–2.8 mm, not compensated) and a
    // cycle's lag (0.2 m/s × 2 ms).
    let error = (latest.state.pose.position - ghost.position).norm();
    assert!(error < 5e-3, "platform {error} m from the ghost");

    let history = &playback.history;
    let drawn = history.actual_path.len();
    // One trail sample per 10 physics steps at most (`SAMPLE_EVERY`), at least one.
    assert!(
        drawn > 0 && drawn as u64 <= latest.steps / 10 + 1,
        "{drawn} trail samples for {} steps",
        latest.steps
    );
    let steps_drawn = latest.steps;
    let drawn_path: Vec<[f64; 3]> = history.actual_path.iter().copied().collect();
    let ghost_moved = history.commanded_path.len() > 2
        && history.commanded_path.front() != history.commanded_path.back();
    assert!(ghost_moved, "the ghost's trail did not move");
    eprintln!(
        "{frames} frames, {drawn} samples, shadow {:.3} s, {} cycles, p50 {:?}",
        latest.time, latest.summary.cycles, latest.summary.cycle_p50_s
    );

    // The link going away shows as offline, then the handle stops the shadow and flushes.
    drop(app);
    let outcome = handle.finish().expect("the shadow thread ends");
    outcome.result.expect("no error");
    let stats = rt.stop();
    assert!(
        stats.reaction.samples() > 0,
        "the PLC saw none of the shadow's echoes"
    );

    // Every state the viewer drew is a state the shadow recorded, bit for bit (the viewer runs
    // no physics of its own). The first sample is the settled start, before the record.
    let rows = record_rows(&record);
    // Every physics step is a record row: at least the steps drawn (the shadow went on
    // stepping until the handle stopped it).
    assert!(
        rows.len() as u64 >= steps_drawn,
        "{} rows for {steps_drawn} steps",
        rows.len()
    );
    for (k, p) in drawn_path.iter().enumerate().skip(1) {
        assert!(
            rows.iter().any(|r| [r[1], r[2], r[3]] == *p),
            "drawn sample {k} at {p:?} is in no record row"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn live_mode_shows_a_lost_link_as_offline() {
    let robot = uvigo8();
    let rt = runtime_with(
        &robot,
        trajectory::builtin(&robot, "seed000", &BuiltinOptions::default()).expect("seed000"),
    );
    let dir = std::env::temp_dir().join(format!("cdpr-viewer-offline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let info = LiveInfo::default();
    let (feed, handle) = live::spawn(
        shadow_of(&rt, &dir.join("r.csv")),
        info,
        None,
        Default::default(),
    )
    .expect("thread");
    let mut app = headless_app(Playback::live(feed), Duration::from_millis(16));
    app.update();
    let link = |app: &cdpr_viewer::bevy::app::App| {
        let playback = app.world().resource::<Playback>();
        playback.live_feed().expect("live").latest.link.clone()
    };
    assert_eq!(link(&app), LinkState::Connected);
    let lost = Instant::now();
    rt.stop(); // the PLC is gone: server and tasks
    let offline = loop {
        app.update();
        if let LinkState::Offline { since } = link(&app) {
            break since;
        }
        // A hang guard (the link's timeout is 200 ms), not a speed figure.
        assert!(
            lost.elapsed() < Duration::from_secs(60),
            "hung: still {:?} a minute after the PLC stopped",
            link(&app)
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // `since` is the instant of the cycle that lost the link: at most one cycle (2 ms, plus
    // a read that was under way) before the PLC went away.
    assert!(
        offline + Duration::from_millis(100) >= lost,
        "offline {:?} before the PLC stopped",
        lost - offline
    );
    let outcome = handle.finish().expect("the shadow thread ends");
    // Offline is not an error: the shadow retries until it is stopped.
    outcome.result.expect("stopped cleanly");
    assert_eq!(outcome.summary.reconnects, 0);
    let _ = std::fs::remove_dir_all(&dir);
}
