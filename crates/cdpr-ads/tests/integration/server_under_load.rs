//! The server under load: a peer that registers 100 notifications and never reads costs
//! only itself, and a flood of connections that each send one frame and then idle locks no
//! fresh client out.

use cdpr_ads::fixtures::*;
use cdpr_ads::wire::{self, NotificationParams, Request, cmd, group, trans_mode};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn add_notification(offset: u32, length: u32) -> Request<'static> {
    Request::AddNotification(NotificationParams {
        index_group: group::PLC_DATA,
        index_offset: offset,
        length,
        trans_mode: trans_mode::SERVER_CYCLE,
        max_delay: 0,
        cycle_time: 0,
    })
}

/// One notification as received: arrival, stamp, the cycle counter it carries, and the PLC's
/// cycle when it arrived.
type Received = (Instant, u64, u32, u32);

/// Reads frames from `s` until `until`, returning each DeviceNotification's arrival, stamp,
/// first sample's first 4 bytes (the cycle counter) and `plc_cycle()` at its arrival.
fn notifications(s: &mut TcpStream, until: Instant, plc_cycle: impl Fn() -> u32) -> Vec<Received> {
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while Instant::now() < until {
        let mut chunk = [0u8; 4096];
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => continue,
        }
        let (now, cycle_now) = (Instant::now(), plc_cycle());
        while let Ok(Some((f, used))) = wire::decode_frame(&buf, 1 << 20) {
            if let wire::Frame::Ams { header, payload } = f
                && header.command == cmd::NOTIFICATION
                && payload.len() >= 28
            {
                let stamp = u64::from_le_bytes(payload[8..16].try_into().expect("8"));
                let value = u32::from_le_bytes(payload[28..32].try_into().expect("4"));
                out.push((now, stamp, value, cycle_now));
            }
            buf.drain(..used);
        }
    }
    out
}

#[test]
fn a_peer_that_never_reads_delays_no_other_clients_notifications() {
    let rt = runtime();
    let port = rt.server.local_addr().port();
    let table = rt.plc.memory().table();
    let cycle = table.lookup_str("GVL_Shadow.nCycle").expect("cycle");
    let image = u32::try_from(table.image_len()).expect("u32");

    // The hostile peer: 100 notifications of the whole data area every PLC cycle (90 KB per
    // cycle), and it never reads a byte.
    let mut hostile = raw_connect(port);
    for k in 0..100 {
        hostile
            .write_all(&request_frame(&add_notification(0, image), k))
            .expect("register");
    }
    // A well-behaved client: the cycle counter every PLC cycle.
    let mut good = raw_connect(port);
    good.write_all(&request_frame(&add_notification(cycle.offset, 4), 1))
        .expect("register");
    let got = notifications(&mut good, Instant::now() + Duration::from_secs(5), || {
        rt.plc.stats().plc_cycles
    });
    let stats = rt.server.stats();
    let (dropped, stuck) = (
        stats.dropped_notifications.load(Ordering::Relaxed),
        stats.stuck.load(Ordering::Relaxed),
    );
    drop(hostile);

    assert!(got.len() > 100, "{} notifications in 5 s", got.len());
    // Every PLC cycle, none skipped, each stamped 10 ms after the one before (PLC time).
    for w in got.windows(2) {
        assert_eq!(w[1].2, w[0].2 + 1, "consecutive cycles");
        assert_eq!(w[1].1 - w[0].1, 100_000, "stamps 10 ms apart");
    }
    // How far behind the PLC each notification arrived, in PLC cycles (0: before the next
    // cycle ran); and, for the record, the wall-clock inter-arrival times.
    let mut lags: Vec<u32> = got.iter().map(|g| g.3.saturating_sub(g.2)).collect();
    lags.sort_unstable();
    let mut gaps: Vec<f64> = got
        .windows(2)
        .map(|w| (w[1].0 - w[0].0).as_secs_f64() * 1e3)
        .collect();
    gaps.sort_by(f64::total_cmp);
    let q = |p: f64| gaps[((p * gaps.len() as f64) as usize).min(gaps.len() - 1)];
    let lag = |p: f64| lags[((p * lags.len() as f64) as usize).min(lags.len() - 1)];
    eprintln!(
        "well-behaved client beside a peer that never reads: {} notifications, behind the PLC \
         p50 {} / p90 {} / max {} cycles; inter-arrival p50 {:.1} ms, p99 {:.1} ms, max \
         {:.1} ms; hostile frames dropped {dropped}, connections closed as stuck {stuck}",
        got.len(),
        lag(0.5),
        lag(0.9),
        lag(1.0),
        q(0.5),
        q(0.99),
        q(1.0)
    );
    // Before: every write to the hostile peer held every client's notifications up to 2 s
    // (200 cycles). Now a notification arrives before the PLC's next cycle but for the
    // scheduler's hiccups.
    assert!(lag(0.9) <= 1, "p90 {} cycles behind the PLC", lag(0.9));
    assert!(lag(1.0) < 50, "at worst {} cycles behind the PLC", lag(1.0));
    assert!(dropped > 0 || stuck > 0, "the hostile peer was held up");
}

/// A flood of 330 connections per second, each sending one valid request and then sitting
/// idle (never reading): 200 fresh clients, one every 10 ms, each asking the state twice,
/// must all be served, at most 5 % of them after one reconnect (as the shadow and every
/// ADS client that survives a dropped link does). Before: 142 of 610 failed (a fresh client
/// not yet read from was the first to be evicted).
///
/// Not 200 of 200 at the first attempt: whatever the rule, a client whose first request the
/// server has not read yet cannot be told from the flood's connections, and on a loaded 2-core
/// CI machine (the Secure ADS tests generate RSA keys beside this one) the server's threads
/// can stall for the 200 ms the flood takes to turn over all 64 places (199 of 200, twice).
#[test]
fn a_flood_of_idle_connections_locks_no_fresh_client_out() {
    let rt = runtime();
    let port = rt.server.local_addr().port();
    let stop = Arc::new(AtomicBool::new(false));
    let flood = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut held: std::collections::VecDeque<TcpStream> = Default::default();
            let mut opened = 0u32;
            let start = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                // 330 per second on an absolute schedule.
                let due = start + Duration::from_secs_f64(f64::from(opened) / 330.0);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                opened += 1;
                let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
                    continue;
                };
                let _ = s.write_all(&request_frame(&Request::ReadState, opened));
                held.push_back(s);
                if held.len() > 400 {
                    held.pop_front();
                }
            }
            opened
        })
    };
    // Let the flood fill every place first.
    let until = Instant::now() + Duration::from_secs(5);
    while rt.server.stats().evicted.load(Ordering::Relaxed) < 50 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let (mut served, mut at_first) = (0, 0);
    let started = Instant::now();
    // One fresh client every 10 ms for 2 s, beside the flood.
    for k in 0..200u32 {
        let due = started + Duration::from_millis(10 * u64::from(k));
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        for attempt in 0..2 {
            let mut s = raw_connect(port);
            if probe(&mut s, 4 * k + 2 * attempt) && probe(&mut s, 4 * k + 2 * attempt + 1) {
                served += 1;
                at_first += u32::from(attempt == 0);
                break;
            }
        }
    }
    let took = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let opened = flood.join().expect("flood");
    let evicted = rt.server.stats().evicted.load(Ordering::Relaxed);
    eprintln!(
        "flood: {opened} connections at 330/s, {evicted} evicted; {served} of 200 fresh \
         clients served in {took:.1?}, {at_first} at the first attempt"
    );
    assert!(evicted > 0, "the flood filled the server");
    assert_eq!(served, 200, "every fresh client is served");
    assert!(
        at_first >= 190,
        "{at_first} of 200 served at the first attempt"
    );
}
