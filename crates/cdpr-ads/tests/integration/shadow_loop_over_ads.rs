//! The shadow's library loop (`cdpr_ads::shadow::run`, what `cdpr shadow` and a viewer run) over
//! the `ads` crate against the virtual PLC's server in this process: the link dropped under
//! it, and the PLC's view of its reaction time.

use cdpr_ads::fixtures::*;
use cdpr_ads::link::AdsController;
use cdpr_ads::server::Runtime;
use cdpr_ads::shadow::{self, Shadow};
use cdpr_core::sim::ModelKind;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn shadow_of(rt: &Runtime) -> Shadow<AdsController> {
    shadow_over_ads(rt, &uvigo8(), ModelKind::ELASTIC)
}

#[test]
fn the_shadow_loop_rides_out_a_dropped_link() {
    let robot = uvigo8();
    let rt = seed000_runtime(&robot, 0.4);
    let mut s = shadow_of(&rt);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| shadow::run(&mut s, Some(Duration::from_millis(2500)), &stop));
        std::thread::sleep(Duration::from_millis(1000));
        // A router restart: every connection is dropped; the server stays.
        rt.server.drop_connections();
        worker.join().expect("no panic").expect("runs to its end");
    });
    let sum = s.summary();
    eprintln!(
        "{} cycles, reconnects {}, gaps {}, rejected {}, reaction {:?}",
        sum.cycles, sum.reconnects, sum.gaps, sum.rejected, sum.reaction_cycles
    );
    assert_eq!((sum.reconnects, sum.gaps), (1, 1));
    assert_eq!(sum.rejected, 0);
    assert!(s.is_linked());
    // The PLC measured the shadow's reaction (seed 003's figure). How many echoes and how fast
    // depends on the machine's load here (two threads against the wall clock): exact with the
    // PLC ticked by hand in controller_over_ads.rs, measured in benches/ads.rs.
    let stats = rt.stop();
    assert!(
        stats.reaction.samples() > 0,
        "{} echoes",
        stats.reaction.samples()
    );
    assert_eq!(sum.reaction_cycles, stats.reaction.quantile(0.5));
}
