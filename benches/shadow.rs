//! The shadow's full exchange cycle over ADS on loopback, physics included: one sum read of
//! the virtual PLC's commanded lengths, the physics stepped 2 ms (two 1 ms steps), one sum
//! write of pose, lengths, tensions and the cycle echo. The goal: p50 ≤ 0.5 ms and
//! p99 ≤ 2 ms over 10 000 cycles (seed 000's pyads gateway: 48–60 ms per exchange).
//!
//! Two figures per model:
//! - back to back: 10 000 cycles with the shadow's clock advanced 2 ms per call and no sleep —
//!   the work of a cycle alone;
//! - real time: 10 000 cycles of `shadow::run` at its 2 ms period (20 s) — what `cdpr shadow`
//!   does, with the PLC's reaction time (seed 003's figure, PLC cycles) measured meanwhile.
//!
//! Criterion times one back-to-back cycle too, and the cycle at a 1 ms PLC task (NC 1 ms),
//! by notification and polled: every sample since the last cycle taken, 1 ms of physics, the
//! echo of the newest written — with the PLC's reaction over 10 s of the shadow's real loop.
//! Run: cargo bench --no-default-features --bench shadow

use cdpr_ads::fixtures::shadow_over_ads_by;
use cdpr_ads::link::{AdsController, ExchangeChoice};
use cdpr_ads::server::{self, Runtime, ServerConfig, Timing};
use cdpr_ads::shadow::{self, Shadow, Summary};
use cdpr_core::robot::Robot;
use cdpr_core::sim::ModelKind;
use cdpr_core::trajectory::{self, BuiltinOptions};
use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const CYCLES: u64 = 10_000;

fn runtime(robot: &Robot, hold: Duration) -> Runtime {
    runtime_timed(
        robot,
        Timing {
            hold,
            ..Timing::default()
        },
    )
}

fn runtime_timed(robot: &Robot, timing: Timing) -> Runtime {
    // seed000 at 0.1 m/s lasts 31 s: the PLC moves for the whole bench.
    let options = BuiltinOptions {
        speed: 0.1,
        dt: 0.002,
        ..BuiltinOptions::default()
    };
    let trajectory = trajectory::builtin(robot, "seed000", &options).expect("seed000");
    let config = ServerConfig::new("127.0.0.1:0".parse().expect("address"));
    Runtime::start(
        robot,
        trajectory,
        timing,
        server::default_identity(),
        config,
    )
    .expect("PLC")
}

fn shadow(rt: &Runtime, robot: &Robot, model: ModelKind) -> Shadow<AdsController> {
    cdpr_ads::fixtures::shadow_over_ads(rt, robot, model)
}

fn print(name: &str, s: &Summary) {
    let us = |v: Option<f64>| v.map_or(f64::NAN, |v| v * 1e6);
    println!(
        "{name}: {} cycles: cycle p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs (ADS p50 {:.0} / p99 {:.0} µs, physics p50 {:.0} / p99 {:.0} µs); overruns {}, skipped steps {}, rejected {}",
        s.cycles,
        us(s.cycle_p50_s),
        us(s.cycle_p99_s),
        s.cycle_max_s * 1e6,
        us(s.io_p50_s),
        us(s.io_p99_s),
        us(s.physics_p50_s),
        us(s.physics_p99_s),
        s.overruns,
        s.skipped_steps,
        s.rejected
    );
}

fn benches(c: &mut Criterion) {
    let robot = cdpr_core::fixtures::uvigo8();
    for model in [ModelKind::CHAIN, ModelKind::ELASTIC] {
        let name = model.name();
        let rt = runtime(&robot, Duration::from_millis(20));
        let mut s = shadow(&rt, &robot, model);
        let origin = s.clock_origin();
        let mut k = 0u64;
        let mut next = || {
            k += 1;
            origin + Duration::from_millis(2 * k)
        };
        for _ in 0..CYCLES {
            let now = next();
            s.cycle_at(now).expect("cycle");
        }
        print(&format!("shadow_cycle_{name}_back_to_back"), &s.summary());
        c.bench_function(&format!("shadow_cycle_{name}_ads"), |b| {
            b.iter(|| {
                let now = next();
                s.cycle_at(now).expect("cycle")
            })
        });
        drop(s);
        rt.stop();
    }

    // Real time, the default model, as `cdpr shadow --cycle 2ms` runs it; the PLC holds its
    // start pose until the shadow answers, so that it can time the first motion too.
    let rt = runtime(&robot, Duration::from_millis(500));
    let mut s = shadow(&rt, &robot, ModelKind::CHAIN);
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    shadow::run(&mut s, Some(Duration::from_millis(2 * CYCLES)), &stop).expect("runs");
    let wall = started.elapsed().as_secs_f64();
    print("shadow_cycle_chain_real_time", &s.summary());
    let stats = rt.stop();
    let r = &stats.reaction;
    println!(
        "real time over {wall:.1} s: PLC reaction p50 {:?}, p99 {:?}, max {:?} PLC cycles over {} echoes; motion delay {:?} PLC cycles; the shadow's reading of the PLC's diagnostic: p50 {:?}",
        r.quantile(0.5),
        r.quantile(0.99),
        r.max,
        r.samples(),
        stats.motion_delay_cycles,
        s.summary().reaction_cycles
    );
}

fn fast_task(c: &mut Criterion) {
    let robot = cdpr_core::fixtures::uvigo8();
    let timing = Timing {
        task: Duration::from_millis(1),
        nc: Duration::from_millis(1),
        hold: Duration::from_millis(200),
    };
    for (name, exchange) in [
        ("notify", ExchangeChoice::Auto),
        ("poll", ExchangeChoice::Poll),
    ] {
        let rt = runtime_timed(&robot, timing);
        let mut s = shadow_over_ads_by(&rt, &robot, ModelKind::CHAIN, exchange);
        let origin = s.clock_origin();
        let mut k = 0u64;
        c.bench_function(&format!("shadow_cycle_1ms_task_{name}"), |b| {
            b.iter(|| {
                k += 1;
                s.cycle_at(origin + Duration::from_millis(k))
                    .expect("cycle")
            })
        });
        drop(s);
        rt.stop();
        // The real loop for 10 s: the PLC's reaction.
        let rt = runtime_timed(&robot, timing);
        let mut s = shadow_over_ads_by(&rt, &robot, ModelKind::CHAIN, exchange);
        shadow::run(
            &mut s,
            Some(Duration::from_secs(10)),
            &AtomicBool::new(false),
        )
        .expect("runs");
        print(&format!("shadow_1ms_task_{name}_real_time"), &s.summary());
        let stats = rt.stop();
        let r = &stats.reaction;
        println!(
            "1 ms task, {name}: PLC reaction p50 {:?}, p99 {:?}, max {:?} PLC cycles over {} echoes ({} late PLC cycles); samples {}, most in one cycle {}, missed {}; {}",
            r.quantile(0.5),
            r.quantile(0.99),
            r.max,
            r.samples(),
            stats.late_cycles,
            s.summary().samples,
            s.summary().samples_per_cycle_max,
            s.summary().missed_plc_cycles,
            s.summary().scheduling.unwrap_or_default(),
        );
    }
}

criterion_group! {
    name = shadow_benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = benches, fast_task
}
criterion_main!(shadow_benches);
