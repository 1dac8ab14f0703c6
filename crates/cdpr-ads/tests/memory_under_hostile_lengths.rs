//! Memory under hostile frames: every length-bearing field of every ADS service and sum
//! command set to huge (or merely wrong) values. A counting global allocator (`cap`) gives
//! the bytes the server allocates to answer each frame, and a limit turns a runaway
//! allocation into an abort of this test rather than a machine out of memory. Then the same
//! kind of frames over TCP: the process's peak resident set grows by a bounded amount and a
//! fresh client is still served.
//!
//! One test function: the allocator's counters are process-wide, so nothing may run beside
//! the measurement.

use cap::Cap;
use cdpr_ads::fixtures::*;
use cdpr_ads::server::{Device, DeviceIdentity, PlcMemory, Session, SymbolTable};
use cdpr_ads::wire::{self, MAX_REPLY_LEN, cmd, group, trans_mode};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use std::alloc::System;
use std::cell::RefCell;
use std::io::Write;
use std::time::Duration;

#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

/// What one frame may make the server allocate, all buffers counted (realloc growth counts
/// the whole new size): the reply data (≤ MAX_REPLY_LEN), its copy into the payload and the
/// frame, the growth steps of those vectors, and per-item bookkeeping of a sum of at most
/// 64 KiB / 12 items. Eight times the reply limit, 512 KiB; before the fix one frame asked
/// for 3.75 GiB.
const FRAME_BUDGET: usize = 8 * MAX_REPLY_LEN;

/// A value for a length field: the interesting edges and anything at all.
fn length() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(4),
        Just(0xFFFF),
        Just(0x1_0000),
        Just(0x7FFF_FFFF),
        Just(0xF000_0000),
        Just(u32::MAX),
        0u32..4096,
        any::<u32>(),
    ]
}

/// Every index group the server knows, a symbol handle it handed out (0x10001) and
/// anything else.
fn index_group() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => prop::sample::select(vec![
            group::PLC_DATA,
            group::SYM_HANDLE_BY_NAME,
            group::SYM_VALUE_BY_NAME,
            group::SYM_VALUE_BY_HANDLE,
            group::SYM_RELEASE_HANDLE,
            group::SYM_INFO_BY_NAME,
            group::SYM_VERSION,
            group::SYM_INFO_BY_NAME_EX,
            group::SYM_UPLOAD,
            group::SYM_UPLOAD_INFO,
            group::SYM_DT_UPLOAD,
            group::SYM_UPLOAD_INFO2,
            group::SYM_DT_INFO_BY_NAME_EX,
            group::SUM_READ,
            group::SUM_WRITE,
            group::SUM_READ_WRITE,
            group::SUM_READ_EX,
            group::SUM_READ_EX2,
            group::SUM_ADD_NOTIFICATION,
            group::SUM_DELETE_NOTIFICATION,
            group::DEVICE_DATA,
        ]),
        1 => any::<u32>(),
    ]
}

fn index_offset() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), Just(0x1_0001), 0u32..2048, length()]
}

fn sum_group() -> impl Strategy<Value = u32> {
    group::SUM_READ..=group::SUM_DELETE_NOTIFICATION
}

fn le(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A sum command's sub-requests: `n` items whose every length field is hostile, then some
/// write data (less than the items declare, or exactly a little).
fn sum_items(g: u32) -> impl Strategy<Value = Vec<u8>> {
    let item = (index_group(), index_offset(), length(), length()).prop_map(
        move |(ig, io, a, b)| match g {
            group::SUM_READ_WRITE => le(&[ig, io, a, b]),
            group::SUM_ADD_NOTIFICATION => {
                let mut p = le(&[ig, io, a, trans_mode::SERVER_CYCLE, 0, b]);
                p.extend_from_slice(&[0; 16]);
                p
            }
            group::SUM_DELETE_NOTIFICATION => le(&[io]),
            _ => le(&[ig, io, a]),
        },
    );
    (
        prop::collection::vec(item, 0..8),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(items, tail)| items.concat().into_iter().chain(tail).collect())
}

/// (command, payload) of a request with hostile length fields.
fn hostile_request() -> impl Strategy<Value = (u16, Vec<u8>)> {
    let data = || prop::collection::vec(any::<u8>(), 0..64);
    prop_oneof![
        (index_group(), index_offset(), length())
            .prop_map(|(ig, io, n)| (cmd::READ, le(&[ig, io, n]))),
        (index_group(), index_offset(), length(), data()).prop_map(|(ig, io, n, d)| {
            let mut p = le(&[ig, io, n]);
            p.extend(d);
            (cmd::WRITE, p)
        }),
        (index_group(), index_offset(), length(), length(), data()).prop_map(
            |(ig, io, r, w, d)| {
                let mut p = le(&[ig, io, r, w]);
                p.extend(d);
                (cmd::READ_WRITE, p)
            }
        ),
        // Sum commands, the item count in the index offset: as many as sent, or hostile.
        (sum_group(), length(), any::<bool>())
            .prop_flat_map(|(g, r, exact)| (Just(g), Just(r), Just(exact), sum_items(g)))
            .prop_map(|(g, r, exact, items)| {
                let per = match g {
                    group::SUM_READ_WRITE => 16,
                    group::SUM_ADD_NOTIFICATION => 40,
                    group::SUM_DELETE_NOTIFICATION => 4,
                    _ => 12,
                };
                let count = if exact {
                    (items.len() / per) as u32
                } else {
                    r.rotate_left(7)
                };
                let mut p = le(&[g, count, r, items.len() as u32]);
                p.extend(items);
                (cmd::READ_WRITE, p)
            }),
        (index_group(), index_offset(), length(), length(), length()).prop_map(
            |(ig, io, n, mode, cycle)| {
                let mut p = le(&[ig, io, n, mode % 8, 0, cycle]);
                p.extend_from_slice(&[0; 16]);
                (cmd::ADD_NOTIFICATION, p)
            }
        ),
        (any::<u16>(), length(), data()).prop_map(|(state, n, d)| {
            let mut p = state.to_le_bytes().to_vec();
            p.extend_from_slice(&[0, 0]);
            p.extend(le(&[n]));
            p.extend(d);
            (cmd::WRITE_CONTROL, p)
        }),
        length().prop_map(|h| (cmd::DELETE_NOTIFICATION, le(&[h]))),
        Just((cmd::READ_STATE, vec![])),
        Just((cmd::READ_DEVICE_INFO, vec![])),
    ]
}

fn device() -> Device {
    let memory = PlcMemory::new(SymbolTable::from_robot(&uvigo8()).expect("table"));
    Device::new(
        DeviceIdentity {
            net_id: wire::AmsNetId::LOCAL,
            port: 851,
            name: "memory".into(),
        },
        memory,
    )
}

/// A session that holds one symbol handle (0x10001), so that handle reads are reachable.
fn session_with_handle(d: &Device) -> Session {
    let mut s = Session::default();
    let h = d.read_write(
        &mut s,
        &request_header(cmd::READ_WRITE, 0),
        group::SYM_HANDLE_BY_NAME,
        0,
        4,
        b"GVL_Shadow.aFrameAnchors",
    );
    assert_eq!(h, Ok(0x1_0001u32.to_le_bytes().to_vec()));
    s
}

/// Bytes allocated while `device` answers one frame (the reply included).
fn allocated_by(d: &Device, s: &mut Session, command: u16, payload: &[u8]) -> usize {
    let header = request_header(command, 7);
    let before = ALLOC.total_allocated();
    let reply = d.handle_frame(s, &header, payload);
    let used = ALLOC.total_allocated() - before;
    if let Some(reply) = reply {
        assert!(
            reply.len() <= wire::MAX_AMS_LEN + 6,
            "reply of {} bytes",
            reply.len()
        );
    }
    used
}

/// Peak and current resident set of this process, bytes (Linux).
fn resident() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace()
            .nth(1)?
            .parse::<u64>()
            .ok()
            .map(|k| k * 1024)
    };
    Some((kb("VmHWM:")?, kb("VmRSS:")?))
}

#[test]
fn hostile_lengths_allocate_a_bounded_amount_and_the_server_keeps_serving() {
    // A regression that allocates gigabytes aborts here ("memory allocation failed").
    ALLOC
        .set_limit(ALLOC.allocated() + (512 << 20))
        .expect("limit above what is allocated");

    // The worst frame known, by hand: 0xF083 accepting a 4 GiB reply, one item asking for
    // 0xF000_0000 bytes of an unknown index group.
    let d = device();
    let mut s = session_with_handle(&d);
    let mut known = le(&[group::SUM_READ_EX, 1, u32::MAX, 12]);
    known.extend(le(&[0x0BAD_0000, 0, 0xF000_0000]));
    let worst_known = allocated_by(&d, &mut s, cmd::READ_WRITE, &known);
    assert!(
        worst_known < 4096,
        "the 4 GiB sum read: {worst_known} bytes"
    );

    // Generated frames, shrunk to the smallest offender on failure.
    let mut runner = TestRunner::new(Config {
        cases: 20_000,
        failure_persistence: None,
        ..Config::default()
    });
    let session = RefCell::new(s);
    let worst = RefCell::new((0usize, 0u16, Vec::new()));
    let result = runner.run(&hostile_request(), |(command, payload)| {
        let used = allocated_by(&d, &mut session.borrow_mut(), command, &payload);
        let mut w = worst.borrow_mut();
        if used > w.0 {
            *w = (used, command, payload.clone());
        }
        prop_assert!(
            used <= FRAME_BUDGET,
            "command {command}: {used} bytes allocated for {payload:02x?}"
        );
        Ok(())
    });
    let (used, command, payload) = worst.take();
    eprintln!(
        "worst generated frame: command {command}, {used} bytes allocated (the 4 GiB sum read: {worst_known}); payload {:02x?}",
        &payload[..payload.len().min(48)]
    );
    if let Err(e) = result {
        panic!("{e}");
    }

    // Over TCP: the same kind of frames into a running PLC, reconnecting whenever the server
    // closes a connection on purpose. The peak resident set may grow by what the server
    // legitimately holds (threads, per-connection buffers), not by what frames claim.
    let rt = runtime();
    let port = rt.server.local_addr().port();
    // Start the peak from here (Linux: "5" resets VmHWM); if that is refused the peak
    // includes the process's history, which only makes the bound harder to meet.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let (_, rss_before) = resident().expect("/proc/self/status");
    let heap_before = ALLOC.allocated();
    let mut sampler = TestRunner::deterministic();
    let mut conn = raw_connect(port);
    let (mut sent, mut closed) = (0u32, 0u32);
    for k in 0..3000u32 {
        let (command, payload) = hostile_request()
            .new_tree(&mut sampler)
            .expect("a frame")
            .current();
        let frame = wire::encode_frame(&request_header(command, k), &payload);
        if conn.write_all(&frame).is_ok() && k % 50 != 49 {
            sent += 1;
            continue;
        }
        // Every 50th frame (and after a failed write): the connection still answers, or
        // was closed on purpose; then a fresh one must be answered.
        if !probe(&mut conn, 0x8000_0000 | k) {
            closed += 1;
            conn = raw_connect(port);
            assert!(
                probe(&mut conn, 0x4000_0000 | k),
                "fresh client after frame {k}"
            );
        }
    }
    assert!(probe(&mut conn, 1), "the last connection is answered");
    let (peak, _) = resident().expect("/proc/self/status");
    let growth = peak.saturating_sub(rss_before);
    eprintln!(
        "TCP: {sent} hostile frames, {closed} connections closed by the server; peak RSS {} MiB (+{} MiB), heap now {} KiB (+{} KiB)",
        peak >> 20,
        growth >> 20,
        ALLOC.allocated() >> 10,
        ALLOC.allocated().saturating_sub(heap_before) >> 10
    );
    assert!(growth < 64 << 20, "peak RSS grew by {} MiB", growth >> 20);

    // A real client still gets real answers.
    let c = client(&rt);
    let h = ads::Handle::new(c.device(target()), "GVL_Shadow.aFrameAnchors").expect("handle");
    let mut b = [0u8; 192];
    h.read(&mut b).expect("read after the hostile frames");
    assert_eq!(f64s(&b)[2], 825.0);
    drop(rt);
    std::thread::sleep(Duration::from_millis(10));
}
