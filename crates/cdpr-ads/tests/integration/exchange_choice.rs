//! The ADS client's exchanges against the virtual PLC's server: each forced exchange moves the
//! same bytes in the frames it should; `poll` (`auto` without notifications, which this proxy
//! does not pass on: see `notify_exchange.rs`) picks sum commands by handle here; a device that
//! refuses sum commands (TwinCAT 2 before 2.11 R2 B2018) or never answers them (pyads' test
//! server) gets the next exchange; and handles the PLC invalidates (an online change) are
//! re-resolved on the same connection, by the client and in the shadow's loop.
//!
//! The misbehaviour comes from a proxy between client and server (the server itself is not
//! touched): it refuses or swallows requests to chosen index groups, and on demand releases
//! every handle the client holds (ADS 0xF006 on the client's own connection, before the
//! client's next request) — the server then answers those handles with its real 0x710, as
//! TwinCAT does after an online change or a re-download.

use cdpr_ads::fixtures::*;
use cdpr_ads::link::ads_client::SILENT_SUM_WRITES;
use cdpr_ads::link::{
    AdsConfig, AdsController, AdsTransport, Controller, ControllerError, Exchange, ExchangeChoice,
    ShadowLink, ShadowOutputs, WritePolicy,
};
use cdpr_ads::server::Runtime;
use cdpr_ads::server::memory;
use cdpr_ads::shadow::{self, Shadow, ShadowConfig};
use cdpr_ads::wire::{AmsAddr, AmsNetId};
use cdpr_core::kinematics::{self, Pose};
use std::collections::{BTreeSet, HashMap};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

// ------------------------------------------------------------------------------ the proxy

#[derive(Default)]
struct ProxyState {
    /// Handles the server handed out (snooped from 0xF003 replies).
    handles: BTreeSet<u32>,
    /// Release them all before the client's next request.
    release: bool,
    /// ReadWrite requests to these index groups are answered with this ADS code by the proxy;
    /// 0: swallowed, never answered; [`HANG_UP`]: the connection is closed instead.
    refuse: HashMap<u32, u32>,
    released: u64,
    refused: u64,
    swallowed: u64,
}

/// A verdict for [`ProxyState::refuse`]: close the client's connection on the request (the
/// link dropped while a request is on its way, before any reply).
const HANG_UP: u32 = u32::MAX;

struct Proxy {
    addr: SocketAddr,
    state: Arc<Mutex<ProxyState>>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn read_frame(s: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut frame = vec![0u8; 6];
    s.read_exact(&mut frame)?;
    let len = u32_at(&frame, 2) as usize;
    frame.resize(6 + len, 0);
    s.read_exact(&mut frame[6..])?;
    Ok(frame)
}

/// An AMS frame: AMS/TCP header, then target and source (8 bytes each, as given), command,
/// state flags, length, error 0, invoke id, payload.
fn frame(route: [&[u8]; 2], command: u16, flags: u16, invoke: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8, 0];
    f.extend_from_slice(&(32 + payload.len() as u32).to_le_bytes());
    f.extend_from_slice(route[0]);
    f.extend_from_slice(route[1]);
    f.extend_from_slice(&command.to_le_bytes());
    f.extend_from_slice(&flags.to_le_bytes());
    f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    f.extend_from_slice(&0u32.to_le_bytes());
    f.extend_from_slice(&invoke.to_le_bytes());
    f.extend_from_slice(payload);
    f
}

fn lock(m: &Mutex<ProxyState>) -> std::sync::MutexGuard<'_, ProxyState> {
    m.lock().expect("proxy state")
}

/// One client connection, relayed request by request (the shadow's client is synchronous and
/// asks for no notifications).
fn relay(mut client: TcpStream, upstream: SocketAddr, st: &Mutex<ProxyState>) -> io::Result<()> {
    let mut server = TcpStream::connect(upstream)?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    loop {
        let request = read_frame(&mut client)?;
        let (target, source) = (&request[6..14], &request[14..22]);
        let command = u16_at(&request, 22);
        let release: Vec<u32> = {
            let mut s = lock(st);
            if std::mem::take(&mut s.release) {
                s.handles.iter().copied().collect()
            } else {
                Vec::new()
            }
        };
        for (k, h) in release.iter().enumerate() {
            let payload: Vec<u8> = [0xF006u32, 0, 4, *h]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            let f = frame([target, source], 3, 4, 0xFFFF_0000 + k as u32, &payload);
            server.write_all(&f)?;
            read_frame(&mut server)?;
            lock(st).released += 1;
        }
        let group = (command == 9 && request.len() >= 42).then(|| u32_at(&request, 38));
        let verdict = group.and_then(|g| lock(st).refuse.get(&g).copied());
        match verdict {
            Some(HANG_UP) => {
                let _ = client.shutdown(std::net::Shutdown::Both);
                return Ok(());
            }
            Some(0) => {
                lock(st).swallowed += 1;
                continue;
            }
            Some(code) => {
                let payload: Vec<u8> = [code, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
                let invoke = u32_at(&request, 34);
                client.write_all(&frame([source, target], command, 5, invoke, &payload))?;
                lock(st).refused += 1;
                continue;
            }
            None => {}
        }
        server.write_all(&request)?;
        let reply = read_frame(&mut server)?;
        let handles = match group {
            Some(0xF003) => handle_reply(&reply),
            Some(0xF082) => sum_handle_replies(&request, &reply),
            _ => Vec::new(),
        };
        lock(st).handles.extend(handles);
        client.write_all(&reply)?;
    }
}

/// The handle in a reply to a handle request (0xF003): result, length, handle.
fn handle_reply(reply: &[u8]) -> Vec<u32> {
    if reply.len() >= 50 && u32_at(reply, 38) == 0 {
        vec![u32_at(reply, 46)]
    } else {
        Vec::new()
    }
}

/// The handles in a reply to a sum read-write (0xF082) whose items ask for handles: the
/// request holds N (group, offset, read length, write length) items, the reply N (result,
/// length) pairs, then the blocks at their lengths.
fn sum_handle_replies(request: &[u8], reply: &[u8]) -> Vec<u32> {
    let n = u32_at(request, 42) as usize;
    let (items, heads) = (54, 46);
    let mut block = heads + 8 * n;
    let mut out = Vec::new();
    for k in 0..n {
        let (group, (result, len)) = (
            u32_at(request, items + 16 * k),
            (
                u32_at(reply, heads + 8 * k),
                u32_at(reply, heads + 8 * k + 4) as usize,
            ),
        );
        if group == 0xF003 && result == 0 && len == 4 {
            out.push(u32_at(reply, block));
        }
        block += len;
    }
    out
}

impl Proxy {
    fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        let state = Arc::new(Mutex::new(ProxyState::default()));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(client) = conn else { break };
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || relay(client, upstream, &shared));
            }
        });
        Proxy { addr, state }
    }

    fn of(rt: &Runtime) -> Proxy {
        Proxy::start(rt.server.local_addr())
    }

    /// An online change: every handle handed out so far dies before the next request.
    fn invalidate(&self) {
        lock(&self.state).release = true;
    }

    /// ReadWrite requests to `group` are answered `code` (0: never answered, [`HANG_UP`]: the
    /// connection closed).
    fn refuse(&self, group: u32, code: u32) {
        lock(&self.state).refuse.insert(group, code);
    }

    /// Requests to `group` pass again.
    fn allow(&self, group: u32) {
        lock(&self.state).refuse.remove(&group);
    }

    fn counts(&self) -> (u64, u64, u64) {
        let s = lock(&self.state);
        (s.released, s.refused, s.swallowed)
    }
}

// ------------------------------------------------------------------------------ helpers

fn transport(addr: SocketAddr, exchange: ExchangeChoice, timeout_ms: u64) -> AdsTransport {
    let mut config = AdsConfig::new(addr.to_string(), AmsAddr::new(AmsNetId::LOCAL, 851));
    config.exchange = exchange;
    config.timeout = Duration::from_millis(timeout_ms);
    AdsTransport::connect(config).expect("connects")
}

fn link(addr: SocketAddr, exchange: ExchangeChoice) -> AdsController {
    link_with_timeout(addr, exchange, 500)
}

fn link_with_timeout(addr: SocketAddr, exchange: ExchangeChoice, timeout_ms: u64) -> AdsController {
    ShadowLink::connect(
        transport(addr, exchange, timeout_ms),
        &cdpr_ads::PlcSymbols::of(&uvigo8()).expect("[plc]"),
        WritePolicy::AllowListed,
    )
    .expect("resolves")
}

fn outputs(cycle: u32) -> ShadowOutputs {
    let robot = uvigo8();
    let pose = Pose::new(0.02, -0.01, 0.14, 0.0, 0.01, 0.02);
    ShadowOutputs {
        pose,
        lengths: kinematics::lengths(&robot, &pose),
        tensions: (0..8).map(|k| 5.0 + f64::from(k)).collect(),
        cycle,
        interference: false,
        torques: Vec::new(),
        feedforward_torques: Vec::new(),
        payouts: Vec::new(),
    }
}

fn frames(rt: &Runtime) -> u64 {
    rt.server.stats().frames.load(Ordering::Relaxed)
}

fn connections(rt: &Runtime) -> u64 {
    rt.server.stats().connections.load(Ordering::Relaxed)
}

/// External writes per symbol name, those that have any.
fn writes(rt: &Runtime) -> Vec<(String, u64)> {
    let m = rt.plc.memory();
    m.table()
        .symbols()
        .iter()
        .enumerate()
        .map(|(k, s)| (s.name.clone(), m.external_writes(k)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

fn reals(rt: &Runtime, name: &str) -> Vec<f64> {
    let m = rt.plc.memory();
    let r = m.table().lookup_str(name).expect(name);
    m.with_image(|img| memory::get_reals(img, &r)).expect(name)
}

const OUTPUTS: [&str; 4] = [
    "GVL_Shadow.aShadowPose",
    "GVL_Shadow.aShadowLengths",
    "GVL_Shadow.aShadowTensions",
    "GVL_Shadow.nShadowCycle",
];

// ------------------------------------------------------------------------------ tests

#[test]
fn every_exchange_moves_the_same_bytes_in_the_frames_it_should() {
    let robot = uvigo8();
    let home = kinematics::lengths(&robot, &Pose::from_array(robot.home));
    for (choice, expect, per_read, per_cycle_read) in [
        (ExchangeChoice::Poll, Exchange::SumHandle, 1, 1),
        (
            ExchangeChoice::Force(Exchange::SumHandle),
            Exchange::SumHandle,
            1,
            1,
        ),
        (
            ExchangeChoice::Force(Exchange::SumAddress),
            Exchange::SumAddress,
            1,
            1,
        ),
        // One request per symbol: five geometry symbols; commands, counter, enable, reaction.
        (
            ExchangeChoice::Force(Exchange::Single),
            Exchange::Single,
            5,
            4,
        ),
    ] {
        let rt = runtime();
        let mut c = link(rt.server.local_addr(), choice);
        assert_eq!(c.exchange(), None, "{choice}: picked at the first exchange");
        let before = frames(&rt);
        let g = c.read_geometry().expect("geometry");
        assert_eq!(frames(&rt) - before, per_read, "{choice}: geometry");
        assert_eq!(c.exchange(), Some(expect), "{choice}");
        for (k, cable) in robot.cables.iter().enumerate() {
            assert!((g.frame_anchors[k] - cable.frame_anchor).norm() < 1e-12);
            assert!((g.platform_anchors[k] - cable.platform_anchor).norm() < 1e-12);
        }
        let before = frames(&rt);
        let inputs = c.read_cycle().expect("cycle");
        assert_eq!(frames(&rt) - before, per_cycle_read, "{choice}: cycle read");
        for (got, want) in inputs.commanded_lengths.iter().zip(&home) {
            assert!((got - want).abs() < 1e-12, "{choice}: {got} vs {want}");
        }
        let before = frames(&rt);
        c.write_cycle(&outputs(9)).expect("write");
        let per_write = if expect == Exchange::Single { 4 } else { 1 };
        assert_eq!(frames(&rt) - before, per_write, "{choice}: write");
        let written = writes(&rt);
        assert_eq!(
            written,
            OUTPUTS.map(|n| (n.to_string(), 1)).to_vec(),
            "{choice}: each output once, nothing else"
        );
        let pose = reals(&rt, "GVL_Shadow.aShadowPose");
        assert!((pose[0] - 20.0).abs() < 1e-9 && (pose[2] - 140.0).abs() < 1e-9);
        let tensions = reals(&rt, "GVL_Shadow.aShadowTensions");
        assert_eq!(tensions, (0..8).map(|k| 5.0 + k as f64).collect::<Vec<_>>());
        assert_eq!(c.transport().probe_reopens, 0);
    }
}

#[test]
fn a_device_without_sum_commands_gets_single_requests_at_no_cost_of_a_timeout() {
    // TwinCAT 2 before 2.11 R2 B2018: sum commands are an unknown index group (0x702).
    let rt = runtime();
    let proxy = Proxy::of(&rt);
    for group in [0xF080, 0xF081, 0xF083] {
        proxy.refuse(group, 0x702);
    }
    let mut c = link(proxy.addr, ExchangeChoice::Poll);
    let inputs = c.read_cycle().expect("read");
    assert_eq!(c.exchange(), Some(Exchange::Single));
    assert_eq!(proxy.counts().1, 2, "0xF083 then 0xF080 refused, once each");
    c.write_cycle(&outputs(inputs.cycle + 5)).expect("write");
    assert_eq!(proxy.counts().1, 2, "no sum write tried");
    assert_eq!(writes(&rt), OUTPUTS.map(|n| (n.to_string(), 1)).to_vec());
    assert_eq!(
        (c.transport().probe_reopens, connections(&rt)),
        (0, 1),
        "the same connection throughout"
    );
    // Forced, the refused exchange is an error that names it and the PLC's answer.
    let mut c = link(proxy.addr, ExchangeChoice::Force(Exchange::SumHandle));
    match c.read_cycle() {
        Err(e @ ControllerError::Unsupported { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("`sum-handle`") && text.contains("0x702") && text.contains("auto"),
                "{text}"
            );
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn a_device_that_reads_sums_but_refuses_sum_writes_gets_single_writes() {
    let rt = runtime();
    let proxy = Proxy::of(&rt);
    proxy.refuse(0xF081, 0x701);
    let mut c = link(proxy.addr, ExchangeChoice::Poll);
    c.read_cycle().expect("read");
    assert_eq!(c.exchange(), Some(Exchange::SumHandle));
    c.write_cycle(&outputs(12)).expect("written one by one");
    assert!(
        c.transport().writes_one_by_one(),
        "for the rest of the connection"
    );
    assert_eq!(writes(&rt), OUTPUTS.map(|n| (n.to_string(), 1)).to_vec());
    let before = frames(&rt);
    c.write_cycle(&outputs(13)).expect("write");
    assert_eq!(frames(&rt) - before, 4, "one request per output");
    assert_eq!(proxy.counts().1, 1, "the sum write was tried once");
    assert_eq!(writes(&rt), OUTPUTS.map(|n| (n.to_string(), 2)).to_vec());
    // The reads were served as sums and stay so.
    let before = frames(&rt);
    c.read_cycle().expect("read");
    assert_eq!(frames(&rt) - before, 1);
    assert_eq!(c.exchange(), Some(Exchange::SumHandle));
    // Forced, the refusal is the PLC's error, named.
    let mut c = link(proxy.addr, ExchangeChoice::Force(Exchange::SumHandle));
    c.read_cycle().expect("read");
    let e = c.write_cycle(&outputs(14)).expect_err("refused");
    assert!(e.to_string().contains("0x701"), "{e}");
}

#[test]
fn a_lost_sum_write_reply_is_retried_next_cycle_and_only_silence_in_a_row_gives_it_up() {
    // One sum write unanswered (a reply lost on the way) used to make every later write of
    // the run single; a timeout is no proof that the PLC lacks sum writes.
    let rt = runtime();
    let proxy = Proxy::of(&rt);
    let mut c = link_with_timeout(proxy.addr, ExchangeChoice::Poll, 200);
    c.read_cycle().expect("read");
    assert_eq!(c.exchange(), Some(Exchange::SumHandle));
    proxy.refuse(0xF081, 0);
    c.write_cycle(&outputs(12))
        .expect("written one by one after the lost reply");
    proxy.allow(0xF081);
    assert_eq!(proxy.counts().2, 1, "one sum write swallowed");
    assert_eq!(writes(&rt), OUTPUTS.map(|n| (n.to_string(), 1)).to_vec());
    assert!(!c.transport().writes_one_by_one());
    let before = frames(&rt);
    c.write_cycle(&outputs(13)).expect("write");
    assert_eq!(
        frames(&rt) - before,
        1,
        "the next cycle's write is a sum again"
    );
    assert_eq!(writes(&rt), OUTPUTS.map(|n| (n.to_string(), 2)).to_vec());
    let before = frames(&rt);
    c.read_cycle().expect("read");
    assert_eq!(frames(&rt) - before, 1, "and the reads sums");
    assert_eq!(c.exchange(), Some(Exchange::SumHandle));
    // A device that never answers sum writes: after three silences in a row, single writes
    // (no timeout per cycle for the rest of the connection).
    proxy.refuse(0xF081, 0);
    for cycle in 20..20 + SILENT_SUM_WRITES {
        c.write_cycle(&outputs(cycle)).expect("written one by one");
    }
    assert!(c.transport().writes_one_by_one());
    let swallowed = proxy.counts().2;
    assert_eq!(swallowed, 1 + u64::from(SILENT_SUM_WRITES));
    c.write_cycle(&outputs(30)).expect("single writes");
    assert_eq!(proxy.counts().2, swallowed, "no sum write tried");
    assert_eq!(
        writes(&rt),
        OUTPUTS
            .map(|n| (n.to_string(), 3 + u64::from(SILENT_SUM_WRITES)))
            .to_vec()
    );
}

#[test]
fn a_link_dropped_with_a_request_on_its_way_is_a_lost_link_not_an_exchange_not_served() {
    // The `ads` crate reports a connection closed before the reply as a timed-out reply, at
    // once. Taken for silence, a sum write on a dropped link looked like a device that does
    // not take sum writes: the client reopened quietly and wrote one by one for the rest of
    // the connection, and the shadow counted neither a reconnect nor a gap (a flaky
    // shadow_ads run in CI). Likewise the first exchange of a connection: not "not served".
    let rt = runtime();
    let proxy = Proxy::of(&rt);
    // A reply timeout of an hour: a closed connection must be known at once, not at the
    // timeout — a write still waiting after a minute waited for the timeout, and fails the
    // test as hung (a guard against the hang, not a speed figure).
    let mut c = link_with_timeout(proxy.addr, ExchangeChoice::Poll, 3_600_000);
    c.read_cycle().expect("read");
    assert_eq!(c.exchange(), Some(Exchange::SumHandle));
    proxy.refuse(0xF081, HANG_UP);
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = c.write_cycle(&outputs(12));
        let _ = done.send((c, result));
    });
    let (c, result) = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("hung: the write on a closed connection waited for the hour-long reply timeout");
    let e = result.expect_err("the link is gone");
    assert!(e.is_link(), "{e}");
    assert_eq!(c.exchange(), Some(Exchange::SumHandle), "no fallback");
    assert_eq!(c.transport().probe_reopens, 0);
    assert_eq!(connections(&rt), 1, "not reopened behind the caller's back");
    // The first exchange of a connection, dropped: a lost link, no next candidate tried.
    proxy.refuse(0xF081, 0);
    proxy.refuse(0xF083, HANG_UP);
    let mut c = link(proxy.addr, ExchangeChoice::Poll);
    let e = c.read_cycle().expect_err("the link is gone");
    assert!(e.is_link(), "{e}");
    assert_eq!(c.exchange(), None);
    assert_eq!(c.transport().probe_reopens, 0);
    assert_eq!(connections(&rt), 2);
}

#[test]
fn a_device_that_never_answers_sum_reads_by_handle_gets_sums_by_address() {
    // pyads' test server: 0xF083 is looked up as a variable's address, raises, and no reply
    // ever comes. The probe waits out one timeout, reopens and resolves again.
    let rt = runtime();
    let proxy = Proxy::of(&rt);
    proxy.refuse(0xF083, 0);
    let t = transport(proxy.addr, ExchangeChoice::Poll, 200);
    let mut c = ShadowLink::connect(
        t,
        &cdpr_ads::PlcSymbols::of(&uvigo8()).expect("[plc]"),
        WritePolicy::AllowListed,
    )
    .expect("resolves");
    let g = c.read_geometry().expect("geometry after the probe");
    assert!((g.frame_anchors[3] - uvigo8().cables[3].frame_anchor).norm() < 1e-12);
    assert_eq!(c.exchange(), Some(Exchange::SumAddress));
    assert_eq!(proxy.counts().2, 1, "one request unanswered");
    assert_eq!(c.transport().probe_reopens, 1);
    assert_eq!(connections(&rt), 2, "the client was reopened once");
    let inputs = c.read_cycle().expect("read");
    c.write_cycle(&outputs(inputs.cycle + 1))
        .expect("sum write by address");
    assert_eq!(writes(&rt), OUTPUTS.map(|n| (n.to_string(), 1)).to_vec());
    assert_eq!(proxy.counts().2, 1, "nothing else unanswered");
    // Forced, the silent exchange fails with the timeout named.
    let t = transport(proxy.addr, ExchangeChoice::Force(Exchange::SumHandle), 200);
    let mut c = ShadowLink::connect(
        t,
        &cdpr_ads::PlcSymbols::of(&uvigo8()).expect("[plc]"),
        WritePolicy::ReadOnly,
    )
    .expect("resolves");
    let e = c.read_geometry().expect_err("not served");
    assert!(
        matches!(
            e,
            ControllerError::Unsupported {
                exchange: Exchange::SumHandle,
                ..
            }
        ) && e.to_string().contains("no reply within 200ms"),
        "{e}"
    );
}

#[test]
fn invalidated_handles_are_re_resolved_on_the_same_connection() {
    // Sums by handle re-resolve by sum read-write (0xF082), or one request each where that is
    // refused; single requests one request each.
    for (mode, refuse_sum_read_write) in [
        (Exchange::SumHandle, false),
        (Exchange::SumHandle, true),
        (Exchange::Single, false),
    ] {
        let rt = runtime();
        let proxy = Proxy::of(&rt);
        if refuse_sum_read_write {
            proxy.refuse(0xF082, 0x701);
        }
        let mut c = link(proxy.addr, ExchangeChoice::Force(mode));
        c.read_cycle().expect("read");
        proxy.invalidate();
        let inputs = c.read_cycle().expect("read after the online change");
        assert!(proxy.counts().0 >= 13, "{mode}: the handles were released");
        assert_eq!(c.re_resolves(), 1, "{mode}");
        let home = kinematics::lengths(&uvigo8(), &Pose::from_array(uvigo8().home));
        for (got, want) in inputs.commanded_lengths.iter().zip(&home) {
            assert!((got - want).abs() < 1e-12, "{mode}");
        }
        proxy.invalidate();
        c.write_cycle(&outputs(31))
            .expect("write after the online change");
        assert_eq!(c.re_resolves(), 2, "{mode}");
        assert_eq!(writes(&rt), OUTPUTS.map(|n| (n.to_string(), 1)).to_vec());
        assert_eq!(
            (connections(&rt), c.transport().reconnects),
            (1, 0),
            "{mode}: the link stayed up"
        );
        assert_eq!(c.exchange(), Some(mode), "kept");
        let refused = u64::from(refuse_sum_read_write);
        assert_eq!(
            proxy.counts().1,
            refused,
            "{mode}: 0xF082 tried once per connection"
        );
    }
    // By address, released handles go unnoticed: the reason auto prefers handles.
    let rt = runtime();
    let proxy = Proxy::of(&rt);
    let mut c = link(proxy.addr, ExchangeChoice::Force(Exchange::SumAddress));
    c.read_cycle().expect("read");
    proxy.invalidate();
    c.read_cycle().expect("read");
    assert!(proxy.counts().0 >= 13);
    assert_eq!(c.re_resolves(), 0);
}

#[test]
fn the_shadow_loop_rides_out_online_changes_without_a_reconnect() {
    let robot = uvigo8();
    let rt = seed000_runtime(&robot, 0.4);
    let proxy = Proxy::of(&rt);
    // Free-running every 2 ms, the PLC task 10 ms: the defaults.
    let config = ShadowConfig {
        write: true,
        ..ShadowConfig::default()
    };
    let mut s = Shadow::new(link(proxy.addr, ExchangeChoice::Poll), Some(robot), config)
        .expect("the shadow starts");
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| shadow::run(&mut s, None, &stop));
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(300));
            proxy.invalidate();
        }
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::Relaxed);
        worker.join().expect("no panic").expect("runs");
    });
    let sum = s.summary();
    eprintln!(
        "{} cycles, re-resolves {}, gaps {}, reconnects {}, exchange {:?}, rejected {}",
        sum.cycles, sum.re_resolves, sum.gaps, sum.reconnects, sum.exchange, sum.rejected
    );
    assert_eq!(
        (sum.re_resolves, sum.gaps, sum.reconnects),
        (3, 3, 0),
        "three online changes, each a gap, the link never dropped"
    );
    assert_eq!(sum.exchange, Some(Exchange::SumHandle));
    assert_eq!(sum.rejected, 0);
    assert_eq!(connections(&rt), 1);
    let stats = rt.stop();
    assert!(stats.reaction.samples() > 0, "the PLC saw echoes");
}
