//! ADS round trips on loopback against the virtual PLC, with the crates.io `ads` client:
//! a single read by handle, the per-cycle sum read of the shadow's inputs, and a full exchange
//! cycle (sum read + sum write). Criterion reports mean/median; p50/p99 over 10 000 requests
//! are printed as well (seed 000's gateway: 48–60 ms per exchange, seed 003: 3 ms per read),
//! and so is the reaction time in PLC cycles of a 2 ms echo loop against the wall-clock PLC.
//! The shadow's exchange once more over Secure ADS (TLS 1.2, PSK and self-signed modes): what
//! the encryption costs per cycle, and a connection's set-up (TCP, TLS handshake,
//! TlsConnectInfo).
//! Run: cargo bench --no-default-features --bench ads

use cdpr_ads::link::{
    AdsConfig, AdsController, AdsTransport, Controller, Exchange, ExchangeChoice, ShadowLink,
    ShadowOutputs, WritePolicy,
};
use cdpr_ads::secure::{ClientMode, SecureClient, SecureServer, ServerMode};
use cdpr_ads::server::{self, Runtime, ServerConfig, Timing};
use cdpr_ads::wire::{AmsAddr, AmsNetId};
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::trajectory::Trajectory;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn runtime(robot: &Robot) -> Runtime {
    runtime_with(robot, None)
}

fn runtime_with(robot: &Robot, secure: Option<SecureServer>) -> Runtime {
    let config = ServerConfig {
        secure: secure.map(std::sync::Arc::new),
        ..ServerConfig::new("127.0.0.1:0".parse().expect("address"))
    };
    Runtime::start(
        robot,
        Trajectory::default(),
        Timing::default(),
        server::default_identity(),
        config,
    )
    .expect("virtual PLC")
}

fn controller(rt: &Runtime, robot: &Robot) -> AdsController {
    controller_with(rt, robot, None)
}

fn controller_with(rt: &Runtime, robot: &Robot, secure: Option<SecureClient>) -> AdsController {
    let target = AmsAddr::new(AmsNetId::LOCAL, 851);
    // Polled by sum commands, as the names say: `auto` would take the inputs by notification
    // (a queue's pop, ~1.5 µs: the shadow's default, measured in `measurements.md` on the loop).
    let config = AdsConfig {
        secure,
        exchange: ExchangeChoice::Force(Exchange::SumHandle),
        ..AdsConfig::new(rt.server.local_addr().to_string(), target)
    };
    let t = AdsTransport::connect(config).expect("connects");
    ShadowLink::connect(
        t,
        &cdpr_ads::PlcSymbols::of(robot).expect("[plc]"),
        WritePolicy::AllowListed,
    )
    .expect("resolves")
}

/// p50 / p99 / max of `n` timed calls, printed in µs.
fn percentiles(name: &str, n: usize, mut f: impl FnMut()) {
    let mut t: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    t.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name}: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs over {n} requests",
        us(t[n / 2]),
        us(t[n * 99 / 100]),
        us(t[n - 1])
    );
}

fn benches(c: &mut Criterion) {
    let robot = cdpr_core::fixtures::uvigo8();
    let rt = runtime(&robot);

    let client = cdpr_ads::fixtures::client_at(("127.0.0.1", rt.server.local_addr().port()));
    let dev = client.device(cdpr_ads::fixtures::target());
    let handle = ads::Handle::new(dev, "GVL_Shadow.aCmdLengths").expect("handle");
    let mut buf = [0u8; 64];
    c.bench_function("ads_read_by_handle_64B", |b| {
        b.iter(|| handle.read(black_box(&mut buf)).expect("read"))
    });
    percentiles("ads_read_by_handle_64B", 10_000, || {
        handle.read(&mut buf).expect("read")
    });

    let mut ctl = controller(&rt, &robot);
    c.bench_function("ads_sum_read_cycle_inputs", |b| {
        b.iter(|| black_box(ctl.read_cycle().expect("sum read")))
    });
    percentiles("ads_sum_read_cycle_inputs", 10_000, || {
        black_box(ctl.read_cycle().expect("sum read"));
    });

    let pose = Pose::from_array(robot.home);
    let outputs = ShadowOutputs {
        pose,
        lengths: kinematics::lengths(&robot, &pose),
        tensions: vec![5.0; robot.cable_count()],
        cycle: 0,
        interference: false,
        torques: Vec::new(),
        feedforward_torques: Vec::new(),
        payouts: Vec::new(),
    };
    c.bench_function("ads_exchange_cycle_read_and_write", |b| {
        b.iter(|| {
            let inputs = ctl.read_cycle().expect("sum read");
            let out = ShadowOutputs {
                cycle: inputs.cycle,
                ..outputs.clone()
            };
            ctl.write_cycle(&out).expect("sum write");
        })
    });
    percentiles("ads_exchange_cycle_read_and_write", 10_000, || {
        let inputs = ctl.read_cycle().expect("sum read");
        let out = ShadowOutputs {
            cycle: inputs.cycle,
            ..outputs.clone()
        };
        ctl.write_cycle(&out).expect("sum write");
    });
    drop(handle);
    drop(ctl);
    rt.stop();
    secure_ads(c, &robot, &outputs);
    reaction_on_the_wall_clock(&robot);
}

/// The shadow's sum read and full exchange over Secure ADS, PSK and self-signed, and the
/// set-up of a connection (TCP, TLS handshake, TlsConnectInfo, symbol resolution).
fn secure_ads(c: &mut Criterion, robot: &Robot, outputs: &ShadowOutputs) {
    let dir = std::env::temp_dir().join(format!("cdpr-bench-secure-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let psk = ("bench".to_string(), "secret".to_string());
    let modes = [
        (
            "psk",
            ServerMode::Psk {
                entries: vec![psk.clone()],
            },
            ClientMode::Psk {
                identity: psk.0.clone(),
                password: psk.1.clone(),
            },
        ),
        (
            "ssc",
            ServerMode::SelfSigned {
                user: "Administrator".into(),
                password: "1".into(),
            },
            ClientMode::SelfSigned {
                register: Some(("Administrator".into(), "1".into())),
            },
        ),
    ];
    for (name, server_mode, client_mode) in modes {
        let server = SecureServer::new(server_mode, Some(&dir.join("plc")), AmsNetId::LOCAL)
            .expect("Secure ADS server");
        let rt = runtime_with(robot, Some(server));
        let client = SecureClient {
            dir: Some(dir.join("client")),
            ..SecureClient::new(client_mode)
        };
        let mut ctl = controller_with(&rt, robot, Some(client.clone()));
        c.bench_function(&format!("secure_{name}_sum_read_cycle_inputs"), |b| {
            b.iter(|| black_box(ctl.read_cycle().expect("sum read")))
        });
        percentiles(
            &format!("secure_{name}_sum_read_cycle_inputs"),
            10_000,
            || {
                black_box(ctl.read_cycle().expect("sum read"));
            },
        );
        let mut exchange = || {
            let inputs = ctl.read_cycle().expect("sum read");
            let out = ShadowOutputs {
                cycle: inputs.cycle,
                ..outputs.clone()
            };
            ctl.write_cycle(&out).expect("sum write");
        };
        c.bench_function(
            &format!("secure_{name}_exchange_cycle_read_and_write"),
            |b| b.iter(&mut exchange),
        );
        percentiles(
            &format!("secure_{name}_exchange_cycle_read_and_write"),
            10_000,
            exchange,
        );
        drop(ctl);
        percentiles(&format!("secure_{name}_connection_setup"), 100, || {
            black_box(controller_with(&rt, robot, Some(client.clone())));
        });
        rt.stop();
    }
    let rt = runtime(robot);
    percentiles("plain_connection_setup", 100, || {
        black_box(controller(&rt, robot));
    });
    rt.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The reaction time over ADS against the wall-clock PLC (moved here from
/// `crates/cdpr-ads/tests/integration/controller_over_ads.rs`, where the PLC is now ticked by
/// hand): a shadow loop at the NC rate (2 ms) echoing each cycle counter it reads for 1.5 s,
/// while the PLC task (10 ms) counts how many cycles each echo took to come back. Expected on
/// an idle machine: p50 1 cycle (seed 003 measured 11–18 through pyads and CoppeliaSim).
fn reaction_on_the_wall_clock(robot: &Robot) {
    let rt = runtime(robot);
    let mut c = controller(&rt, robot);
    let pose = Pose::from_array(robot.home);
    let outputs = ShadowOutputs {
        pose,
        lengths: kinematics::lengths(robot, &pose),
        tensions: vec![5.0; robot.cable_count()],
        cycle: 0,
        interference: false,
        torques: Vec::new(),
        feedforward_torques: Vec::new(),
        payouts: Vec::new(),
    };
    let start = Instant::now();
    let mut next = start;
    while start.elapsed() < Duration::from_millis(1500) {
        let inputs = c.read_cycle().expect("read");
        let out = ShadowOutputs {
            cycle: inputs.cycle,
            ..outputs.clone()
        };
        c.write_cycle(&out).expect("write");
        next += Duration::from_millis(2);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    drop(c);
    let stats = rt.stop();
    let r = &stats.reaction;
    println!(
        "ads_reaction_wall_clock: {} samples, p50 {:?}, p99 {:?}, max {:?} PLC cycles",
        r.samples(),
        r.quantile(0.5),
        r.quantile(0.99),
        r.max
    );
}

criterion_group! {
    name = ads_benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(ads_benches);
