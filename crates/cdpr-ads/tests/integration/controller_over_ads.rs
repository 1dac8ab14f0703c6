//! The shadow's controller interface over ADS (the `ads` crate client) against the virtual
//! PLC's server: geometry, per-cycle exchange, the write allow-list seen from the wire,
//! reconnection after the PLC drops the link or restarts, and the reaction time in PLC cycles.

use cdpr_ads::PlcSymbols;
use cdpr_ads::fixtures::*;
use cdpr_ads::link::{
    AdsConfig, AdsController, AdsTransport, Backoff, Controller, ControllerError, ExchangeChoice,
    ShadowLink, ShadowOutputs, WritePolicy,
};
use cdpr_ads::server::{
    self, Device, PlcCore, PlcMemory, Runtime, Server, ServerConfig, SymbolTable, Timing,
};
use cdpr_ads::wire::{AmsAddr, AmsNetId};
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::trajectory::Trajectory;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn config(rt: &Runtime) -> AdsConfig {
    AdsConfig::new(
        rt.server.local_addr().to_string(),
        AmsAddr::new(AmsNetId::LOCAL, 851),
    )
}

fn connect(rt: &Runtime, symbols: &PlcSymbols, policy: WritePolicy) -> AdsController {
    let t = AdsTransport::connect(config(rt)).expect("connects");
    ShadowLink::connect(t, symbols, policy).expect("symbols resolve")
}

fn outputs(cycle: u32) -> ShadowOutputs {
    let robot = uvigo8();
    let pose = Pose::new(0.02, 0.01, 0.14, 0.0, 0.01, 0.0);
    ShadowOutputs {
        pose,
        lengths: kinematics::lengths(&robot, &pose),
        tensions: vec![3.0; 8],
        cycle,
        interference: false,
        torques: Vec::new(),
        feedforward_torques: Vec::new(),
        payouts: Vec::new(),
    }
}

#[test]
fn geometry_and_cycle_over_ads_match_the_robot_file() {
    let rt = runtime();
    let robot = uvigo8();
    let mut c = connect(
        &rt,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::ReadOnly,
    );
    assert_eq!(c.cable_count(), 8);
    let g = c.read_geometry().expect("geometry");
    for (k, cable) in robot.cables.iter().enumerate() {
        assert!(
            (g.frame_anchors[k] - cable.frame_anchor).norm() < 1e-12,
            "anchor {k}"
        );
        assert!((g.platform_anchors[k] - cable.platform_anchor).norm() < 1e-12);
    }
    let ik = kinematics::lengths(&robot, &Pose::from_array(robot.home));
    let inputs = c.read_cycle().expect("cycle");
    assert_eq!(inputs.commanded_lengths.len(), ik.len());
    for (got, want) in inputs.commanded_lengths.iter().zip(&ik) {
        assert!((got - want).abs() < 1e-12);
    }
    assert_eq!(
        c.write_cycle(&outputs(1)),
        Err(ControllerError::WriteDisabled)
    );
}

#[test]
fn allow_list_refuses_before_a_single_frame_is_sent() {
    let rt = runtime();
    let robot = uvigo8();
    let mut symbols = PlcSymbols::of(&robot).expect("[plc]");
    symbols.shadow_pose = "GVL_Shadow.aTcpPose".into(); // an input of the shadow, not listed
    let mut c = connect(&rt, &symbols, WritePolicy::AllowListed);
    let frames = rt.server.stats().frames.load(Ordering::Relaxed);
    match c.write_cycle(&outputs(1)) {
        Err(ControllerError::NotWritable { symbol }) => assert_eq!(symbol, "GVL_Shadow.aTcpPose"),
        other => panic!("expected NotWritable, got {other:?}"),
    }
    assert_eq!(
        rt.server.stats().frames.load(Ordering::Relaxed),
        frames,
        "nothing went on the wire"
    );
    let memory = rt.plc.memory();
    let written: u64 = (0..memory.table().symbols().len())
        .map(|k| memory.external_writes(k))
        .sum();
    assert_eq!(written, 0);

    // With the robot file's own names the same write goes through, as one frame.
    let mut c = connect(
        &rt,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::AllowListed,
    );
    let frames = rt.server.stats().frames.load(Ordering::Relaxed);
    c.write_cycle(&outputs(9)).expect("allowed");
    assert_eq!(
        rt.server.stats().frames.load(Ordering::Relaxed),
        frames + 1,
        "one sum write"
    );
    let echo = memory
        .table()
        .lookup_str("GVL_Shadow.nShadowCycle")
        .expect("echo");
    let bytes = memory.read(echo.offset, 4).expect("read");
    assert_eq!(bytes, 9u32.to_le_bytes());
}

#[test]
fn unknown_symbol_is_named_with_its_ads_code() {
    let rt = runtime();
    let mut symbols = PlcSymbols::of(&uvigo8()).expect("[plc]");
    symbols.motion_enable = "GVL_Shadow.bNoSuchFlag".into();
    let t = AdsTransport::connect(config(&rt)).expect("connects");
    let e = ShadowLink::connect(t, &symbols, WritePolicy::ReadOnly)
        .err()
        .expect("refused");
    assert!(
        e.to_string().contains("GVL_Shadow.bNoSuchFlag") && e.to_string().contains("0x710"),
        "{e}"
    );
}

/// Retries with back-off until `reconnect` succeeds (at most ~10 s).
fn reconnect(c: &mut AdsController) -> usize {
    let mut backoff = Backoff::default();
    for attempt in 1..=20 {
        match c.reconnect() {
            Ok(()) => return attempt,
            Err(_) => std::thread::sleep(backoff.next_delay()),
        }
    }
    panic!("no reconnect");
}

#[test]
fn reconnects_after_the_link_drops_and_after_a_plc_restart() {
    let robot = uvigo8();
    let rt = runtime();
    let addr = rt.server.local_addr();
    let mut c = connect(
        &rt,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::AllowListed,
    );
    c.read_cycle().expect("first read");

    // The PLC drops every connection (a router restart): the next read fails as a link error.
    rt.server.drop_connections();
    // The client notices at its next exchange or soon after: poll (no fixed sleep to guess;
    // the deadline is a hang guard, not a speed figure).
    let deadline = Instant::now() + Duration::from_secs(60);
    let e = loop {
        match c.read_cycle() {
            Err(e) => break e,
            Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(_) => panic!("hung: the link still answers a minute after the PLC dropped it"),
        }
    };
    assert!(e.is_link(), "{e}");
    reconnect(&mut c);
    c.read_cycle().expect("read after reconnect");
    c.write_cycle(&outputs(3))
        .expect("write after reconnect: handles re-resolved");

    // The whole PLC goes away, then comes back on the same address.
    rt.stop();
    let e = c.read_cycle().expect_err("PLC gone");
    assert!(e.is_link(), "{e}");
    assert!(c.reconnect().is_err(), "nobody listening");
    let restarted = Instant::now();
    let rt = Runtime::start(
        &robot,
        Trajectory::default(),
        Timing::default(),
        server::default_identity(),
        ServerConfig::new(addr),
    )
    .expect("restart on the same port");
    reconnect(&mut c);
    let inputs = c.read_cycle().expect("read from the new PLC");
    // A fresh PLC counts from zero: its counter cannot exceed the 10 ms task periods since it
    // started (its schedule skips late ticks rather than bursting; +2 for the edges), however
    // slow the reconnection was; the old PLC's counter would not be bounded by that.
    let periods = restarted.elapsed().as_secs_f64() / Timing::default().task.as_secs_f64();
    assert!(
        f64::from(inputs.cycle) <= periods + 2.0,
        "a fresh PLC counts from zero: {} after {periods:.1} periods",
        inputs.cycle
    );
    assert_eq!(c.transport().reconnects, 2);
    drop(rt);
}

#[test]
fn reaction_time_over_ads_is_one_plc_cycle_when_the_shadow_answers_each_cycle() {
    // A shadow echoing each cycle counter it reads, while the PLC task measures how many of
    // its cycles each echo took to come back (seed 003's reaction time: 11–18 cycles through
    // pyads and CoppeliaSim). The PLC's clock is injected: its tasks are ticked by hand
    // between exchanges over the real ADS server, so the figure is exact on any machine. An
    // echo written before the next task reads it comes back in exactly one cycle. (The same
    // loop against the wall-clock PLC is measured in `benches/ads.rs`.)
    let robot = uvigo8();
    let memory = PlcMemory::new(SymbolTable::from_robot(&robot).expect("table"));
    let mut core = PlcCore::new(
        &robot,
        Trajectory::default(),
        std::sync::Arc::clone(&memory),
        Timing::default(),
    )
    .expect("core");
    let server = Server::start(
        ServerConfig::new("127.0.0.1:0".parse().expect("address")),
        Device::new(server::default_identity(), memory),
    )
    .expect("server");
    // Polled: the PLC here is ticked by hand, and its server's notifications (no PLC task
    // behind them) run on the wall clock.
    let mut config = AdsConfig::new(
        server.local_addr().to_string(),
        AmsAddr::new(AmsNetId::LOCAL, 851),
    );
    config.exchange = ExchangeChoice::Poll;
    let t = AdsTransport::connect(config).expect("connects");
    let mut c = ShadowLink::connect(
        t,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::AllowListed,
    )
    .expect("resolves");
    let cycles: u32 = 150;
    for cycle in 1..=cycles {
        for _ in 0..core.ticks_per_task() {
            core.tick();
        }
        let inputs = c.read_cycle().expect("read");
        assert_eq!(
            inputs.cycle,
            cycle,
            "one PLC task per {} NC ticks",
            core.ticks_per_task()
        );
        c.write_cycle(&outputs(inputs.cycle)).expect("write");
    }
    // One more task reads the last echo.
    for _ in 0..core.ticks_per_task() {
        core.tick();
    }
    let r = &core.stats().reaction;
    // Cycle 1 sees no echo yet; cycles 2 … 151 each see the previous one's.
    assert_eq!(r.samples(), u64::from(cycles));
    assert_eq!(r.quantile(0.5), Some(1));
    assert_eq!(r.max, Some(1));
    server.stop();
}

#[test]
fn a_shadow_reading_pulleys_from_the_plc_builds_the_pulley_robot() {
    // The virtual PLC of uvigo8-pulleys serves the pulley arrays (mm at the boundary); the
    // shadow reads them with the geometry and its model's lengths are uvigo8-pulleys' IK — with
    // no robot file (the template) and with uvigo8's file, whose cables leave at points.
    let robot = cdpr_core::fixtures::robot("uvigo8-pulleys");
    let rt = runtime_with(&robot, Trajectory::default());
    let symbols = PlcSymbols::of(&robot).expect("[plc]");
    let mut c = connect(&rt, &symbols, WritePolicy::ReadOnly);
    let g = c.read_geometry().expect("geometry");
    let p = g.pulleys.as_ref().expect("the PLC serves pulleys");
    for (k, cable) in robot.cables.iter().enumerate() {
        let pulley = cable.pulley.expect("pulley");
        assert!((p.radii[k] - pulley.radius).abs() < 1e-15, "{:?}", p.radii);
        assert!((p.axes[k] - pulley.axis).norm() < 1e-15);
    }
    // The raw symbol holds millimetres.
    let ads_client = client(&rt);
    let h =
        ads::Handle::new(ads_client.device(target()), "GVL_Shadow.aPulleyRadii").expect("handle");
    let mut buf = [0u8; 8 * 8];
    h.read(&mut buf).expect("read");
    assert_eq!(f64s(&buf), vec![25.0; 8]);
    let home = Pose::from_array(robot.home);
    let want = kinematics::lengths(&robot, &home);
    let point = uvigo8();
    assert!(point.cables.iter().all(|c| c.pulley.is_none()));
    for file in [None, Some(point)] {
        let shadow = cdpr_ads::shadow::Shadow::new(
            connect(&rt, &symbols, WritePolicy::ReadOnly),
            file,
            cdpr_ads::shadow::ShadowConfig::default(),
        )
        .expect("the shadow starts");
        let got = kinematics::lengths(shadow.robot(), &home);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() < 1e-12, "cable {k}: {g} vs {w}");
        }
        assert!(shadow.robot().cables.iter().all(|c| c.pulley.is_some()));
    }
}
