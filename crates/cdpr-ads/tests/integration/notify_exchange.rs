//! The shadow's inputs by device notification against the virtual PLC over TCP: every PLC
//! cycle arrives, in order, stamped with the PLC's own time (its start + cycles × 10 ms), so
//! the lockstep shadow misses none — where polling can fall between two PLC cycles on a busy
//! machine. And `auto` picks notifications where the PLC serves them.

use cdpr_ads::fixtures::*;
use cdpr_ads::link::{
    AdsConfig, AdsController, AdsTransport, Exchange, ExchangeChoice, ShadowLink, WritePolicy,
};
use cdpr_ads::server::Runtime;
use cdpr_ads::shadow::{self, CycleTiming, Shadow, ShadowConfig};
use cdpr_ads::wire::{AmsAddr, AmsNetId};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn lockstep_shadow(rt: &Runtime, exchange: ExchangeChoice) -> Shadow<AdsController> {
    let robot = uvigo8();
    let mut config = AdsConfig::new(
        rt.server.local_addr().to_string(),
        AmsAddr::new(AmsNetId::LOCAL, 851),
    );
    config.exchange = exchange;
    let t = AdsTransport::connect(config).expect("connects");
    let link = ShadowLink::connect(
        t,
        &cdpr_ads::PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::AllowListed,
    )
    .expect("resolves");
    let config = ShadowConfig {
        write: true,
        timing: CycleTiming::Lockstep {
            plc_period: Duration::from_millis(10),
        },
        ..ShadowConfig::default()
    };
    Shadow::new(link, Some(robot), config).expect("the shadow starts")
}

#[test]
fn notified_inputs_bring_every_plc_cycle_with_the_plcs_time() {
    let rt = seed000_runtime(&uvigo8(), 0.4);
    let mut s = lockstep_shadow(&rt, ExchangeChoice::Force(Exchange::Notify));
    let stop = AtomicBool::new(false);
    // (counter, stamp) of every exchanged cycle.
    let mut seen: Vec<(u32, u64)> = Vec::new();
    shadow::run_with(&mut s, Some(Duration::from_millis(1500)), &stop, |sh, r| {
        if let (Some(c), Some(t)) = (r.plc_cycle, sh.last_inputs().plc_time) {
            seen.push((c, t));
        }
    })
    .expect("runs");
    let sum = s.summary();
    assert_eq!(sum.exchange, Some(Exchange::Notify));
    assert!(seen.len() > 50, "{} cycles", seen.len());
    // A shadow cycle late on a busy machine takes the samples that came meanwhile at once
    // (lockstep advances by the counter's delta) and reports the newest: the counters seen rise,
    // each with its own PLC time, and every sample between the first and the last was taken.
    for w in seen.windows(2) {
        let ((c0, t0), (c1, t1)) = (w[0], w[1]);
        let delta = c1.wrapping_sub(c0);
        assert!((1..=10).contains(&delta), "in order: {c0} then {c1}");
        assert_eq!(
            t1 - t0,
            100_000 * u64::from(delta),
            "10 ms of PLC time a cycle between cycles {c0} and {c1}"
        );
    }
    let (first, last) = (seen[0].0, seen[seen.len() - 1].0);
    assert!(
        sum.samples > u64::from(last.wrapping_sub(first)),
        "{} samples for cycles {first} … {last}",
        sum.samples
    );
    assert_eq!(sum.missed_plc_cycles, 0);
    assert_eq!((sum.reconnects, sum.gaps), (0, 0));
}

#[test]
fn auto_picks_notifications_where_the_plc_serves_them() {
    let rt = seed000_runtime(&uvigo8(), 0.4);
    let mut s = lockstep_shadow(&rt, ExchangeChoice::Auto);
    let stop = AtomicBool::new(false);
    shadow::run(&mut s, Some(Duration::from_millis(300)), &stop).expect("runs");
    assert_eq!(s.summary().exchange, Some(Exchange::Notify));
}
