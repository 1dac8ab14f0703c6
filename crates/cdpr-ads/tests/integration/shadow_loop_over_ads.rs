//! The shadow's library loop (`cdpr_ads::shadow::run`, what `cdpr shadow` and a viewer run) over
//! the `ads` crate against the virtual PLC's server in this process: the link dropped under
//! it, and the PLC's view of its reaction time.

use cdpr_ads::fixtures::*;
use cdpr_ads::link::AdsController;
use cdpr_ads::server::Runtime;
use cdpr_ads::shadow::{self, Shadow, ShadowError};
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

/// Header and rows of an in-memory record.
fn record_rows(buffer: &Buffer) -> (Vec<String>, Vec<Vec<String>>) {
    let bytes = buffer.0.lock().expect("buffer").clone();
    cdpr_core::fixtures::csv_rows(bytes.as_slice())
}

#[test]
fn a_plc_lost_and_never_regained_ends_the_run_with_an_error_a_gap_row_and_agreeing_figures() {
    // The PLC goes away 1 s into a 2.5 s run and never comes back (its process killed: the
    // listener gone, every connection closed). Before, the run ended Ok with gaps 0 and a
    // record that simply stopped at 1 s.
    let robot = uvigo8();
    let rt = seed000_runtime(&robot, 0.4);
    let mut s = shadow_of(&rt);
    let buffer = Buffer::default();
    s.record_to(
        shadow::Recorder::new(Box::new(buffer.clone()), &robot, Default::default())
            .expect("record"),
    );
    let stop = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        let worker = scope.spawn(|| shadow::run(&mut s, Some(Duration::from_millis(2500)), &stop));
        std::thread::sleep(Duration::from_millis(1000));
        rt.stop();
        worker.join().expect("no panic")
    });
    let (at, lost_for) = match outcome {
        Err(ShadowError::Lost { at_s, for_s }) => (at_s, for_s),
        other => panic!("expected the PLC lost, got {other:?}"),
    };
    eprintln!(
        "lost at {at:.3} s for {lost_for:.3} s: {}",
        ShadowError::Lost {
            at_s: at,
            for_s: lost_for
        }
    );
    assert!((0.9..1.2).contains(&at), "lost at {at} s");
    assert!((1.2..1.7).contains(&lost_for), "lost for {lost_for} s");
    let sum = s.summary();
    assert_eq!((sum.reconnects, sum.gaps), (0, 1));
    let (header, rows) = record_rows(&buffer);
    let (t, gap, enable) = (
        cdpr_core::fixtures::column(&header, "t"),
        cdpr_core::fixtures::column(&header, "gap"),
        cdpr_core::fixtures::column(&header, "enable"),
    );
    let last = rows.last().expect("rows");
    let gaps = rows.iter().filter(|r| r[gap] == "1").count() as u64;
    assert_eq!(gaps, sum.gaps, "one gap row per gap counted");
    assert_eq!((last[gap].as_str(), last[enable].as_str()), ("1", "0"));
    let last_t = cdpr_core::fixtures::num(last, t);
    assert!(
        (last_t - s.time()).abs() < 1e-9,
        "record {last_t} s, summary {} s",
        s.time()
    );
    assert!(
        last_t > 2.4,
        "the record reaches the end of the run: {last_t}"
    );
    let before = cdpr_core::fixtures::num(&rows[rows.len() - 2], t);
    assert!(
        (before - at).abs() < 0.05,
        "the row before the gap is where it was lost: {before}"
    );
}

#[test]
fn ctrl_c_ends_a_request_blocked_on_a_silent_plc_at_once() {
    // The PLC's host stops answering (its packets dropped) while the shadow waits out a 20 s
    // timeout for a reply: the interrupt shuts the socket down under the wait.
    let robot = uvigo8();
    let rt = seed000_runtime(&robot, 0.4);
    // Silent from 0.5 s after the shadow connects.
    let relay =
        cdpr_ads::fixtures::blackhole_after(rt.server.local_addr(), Duration::from_millis(500));
    let interrupt = cdpr_ads::link::Interrupt::new();
    let mut ads = cdpr_ads::link::AdsConfig::new(
        relay.local_addr().to_string(),
        cdpr_ads::wire::AmsAddr::new(cdpr_ads::wire::AmsNetId::LOCAL, 851),
    );
    ads.timeout = Duration::from_secs(20);
    ads.interrupt = interrupt.clone();
    let t = cdpr_ads::link::AdsTransport::connect(ads).expect("connects");
    let link = cdpr_ads::link::ShadowLink::connect(
        t,
        &cdpr_ads::PlcSymbols::of(&robot).expect("[plc]"),
        cdpr_ads::link::WritePolicy::ReadOnly,
    )
    .expect("resolves");
    let mut s =
        Shadow::new(link, Some(robot.clone()), shadow::ShadowConfig::default()).expect("starts");
    let took = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let r = shadow::run(&mut s, Some(Duration::from_secs(60)), interrupt.flag());
            (r, std::time::Instant::now())
        });
        // The black hole opens at 0.5 s; then long enough for a request to be stuck waiting
        // for its reply.
        std::thread::sleep(Duration::from_millis(1200));
        let raised = std::time::Instant::now();
        interrupt.raise();
        let (result, ended) = worker.join().expect("no panic");
        result.expect("an interrupted run is a clean stop");
        ended - raised
    });
    eprintln!(
        "ended {:.1} ms after the interrupt",
        took.as_secs_f64() * 1e3
    );
    assert!(took < Duration::from_millis(500), "{took:?}");
    drop(rt);
}
