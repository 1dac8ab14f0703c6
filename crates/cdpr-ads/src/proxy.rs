//! A plant network rehearsed (`cdpr proxy`): a TCP proxy between a shadow and its PLC that
//! forwards plain AMS/TCP frame by frame and injects what a real network does — a delay with
//! jitter and rare spikes on every frame, stalls (nothing forwarded either way for a while,
//! then everything delivered in order), resets (both sides closed with a TCP RST) and a black
//! hole (everything swallowed, both connections kept open: a peer that vanishes without
//! closing).
//!
//! Frames, not bytes: each AMS/TCP frame (the 6-byte header — 2 reserved bytes, the u32 LE
//! length — and what follows) is read whole, stamped, and released at its due time by a writer
//! of its own direction, never before the frame ahead of it (a TCP stream does not reorder).
//! The delays are drawn from a seeded generator, one per direction of each connection, so a
//! seed gives the same delays frame by frame. Stalls, resets and the black hole are on one
//! clock that starts at the first connection.
//!
//! Std threads: an acceptor (which also keeps the fault clock), and per connection a reader
//! and a writer per direction.

use crate::requests::ProxyRequest;
use serde::Serialize;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// The longest frame forwarded: far above any ADS frame (a symbol upload of a large PLC is a
/// few MB); the memory a frame takes grows only with the bytes that came.
pub const MAX_FRAME: usize = 16 << 20;
/// Frames queued per direction before the reader stops reading (TCP's back-pressure then
/// holds the sender).
const QUEUE: usize = 4096;
/// How long a connection to the PLC may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The slice of every wait, so that a reset or the end is noticed within it.
const TICK: Duration = Duration::from_millis(5);

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("cannot listen on {listen}: {source}")]
    Listen {
        listen: SocketAddr,
        source: io::Error,
    },
    #[error(transparent)]
    Option(#[from] cdpr_core::options::OptionError),
}

/// A direction of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the client (the shadow) to the PLC.
    ToPlc,
    /// From the PLC to the client.
    FromPlc,
}

impl Direction {
    fn index(self) -> usize {
        match self {
            Direction::ToPlc => 0,
            Direction::FromPlc => 1,
        }
    }
}

/// What the proxy did, as it happens: the face prints these.
#[derive(Debug, Clone, PartialEq)]
pub enum ProxyEvent {
    /// A client connected and its connection to the PLC is made (`blackholed`: the black
    /// hole holds it instead).
    Connected {
        id: u64,
        client: SocketAddr,
        blackholed: bool,
    },
    /// The PLC refused or did not answer: the client's connection is reset.
    Refused { id: u64, why: String },
    /// A connection ended (by whom, how many frames each way).
    Closed {
        id: u64,
        why: String,
        to_plc: u64,
        from_plc: u64,
    },
    /// A stall began, `at_s` after the first connection.
    Stall { at_s: f64, for_s: f64 },
    /// The open connections were reset with a TCP RST.
    Reset { at_s: f64, connections: usize },
    /// The black hole opened.
    Blackhole { at_s: f64 },
}

impl std::fmt::Display for ProxyEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxyEvent::Connected {
                id,
                client,
                blackholed,
            } => write!(
                f,
                "connection {id} from {client}{}",
                if *blackholed {
                    " held in the black hole (no connection to the PLC)"
                } else {
                    " forwarded to the PLC"
                }
            ),
            ProxyEvent::Refused { id, why } => {
                write!(
                    f,
                    "connection {id}: the PLC cannot be reached ({why}): reset"
                )
            }
            ProxyEvent::Closed {
                id,
                why,
                to_plc,
                from_plc,
            } => write!(
                f,
                "connection {id} closed ({why}): {to_plc} frames to the PLC, {from_plc} from it"
            ),
            ProxyEvent::Stall { at_s, for_s } => {
                write!(
                    f,
                    "stall at {at_s:.3} s: nothing forwarded for {for_s:.3} s"
                )
            }
            ProxyEvent::Reset { at_s, connections } => write!(
                f,
                "reset at {at_s:.3} s: {connections} connection{} closed with a TCP RST",
                if *connections == 1 { "" } else { "s" }
            ),
            ProxyEvent::Blackhole { at_s } => write!(
                f,
                "black hole from {at_s:.3} s: everything swallowed, connections kept open"
            ),
        }
    }
}

/// One direction's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DirectionReport {
    /// Frames delivered.
    pub frames: u64,
    pub bytes: u64,
    /// Frames given a spike.
    pub spikes: u64,
    /// Frames held by a stall.
    pub held: u64,
    /// Frames swallowed by the black hole.
    pub swallowed: u64,
    /// The time each delivered frame spent in the proxy, s: p50, p99, max.
    pub added_p50_s: Option<f64>,
    pub added_p99_s: Option<f64>,
    pub added_max_s: f64,
}

/// What a proxy did over its run (`--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProxyReport {
    pub listen: SocketAddr,
    pub to: SocketAddr,
    pub seconds: f64,
    pub connections: u64,
    /// Connections whose PLC side could not be made.
    pub refused: u64,
    /// Connections ended on bytes that are not AMS/TCP (a frame longer than [`MAX_FRAME`]).
    pub broken: u64,
    pub stalls: u64,
    pub resets: u64,
    /// Connections closed by the resets.
    pub reset_connections: u64,
    /// When the black hole opened, s after the first connection.
    pub blackhole_at_s: Option<f64>,
    pub to_plc: DirectionReport,
    pub from_plc: DirectionReport,
}

/// Times in 50 µs buckets up to 5 s, the exact maximum beyond: a p50 of a few milliseconds to
/// a twentieth of one in 400 kB.
struct Histogram {
    counts: Vec<u32>,
    samples: u64,
    max_s: f64,
}

impl Histogram {
    const BUCKET_S: f64 = 50e-6;
    const BUCKETS: usize = 100_000;

    fn new() -> Histogram {
        Histogram {
            counts: vec![0; Histogram::BUCKETS],
            samples: 0,
            max_s: 0.0,
        }
    }

    fn add(&mut self, seconds: f64) {
        let s = seconds.max(0.0);
        let k = (s / Histogram::BUCKET_S) as usize;
        if let Some(c) = self.counts.get_mut(k) {
            *c = c.saturating_add(1);
        }
        self.samples += 1;
        self.max_s = self.max_s.max(s);
    }

    /// The q-quantile: the upper edge of its bucket (the maximum beyond the range).
    fn quantile(&self, q: f64) -> Option<f64> {
        if self.samples == 0 {
            return None;
        }
        let rank = ((q * self.samples as f64).ceil() as u64).clamp(1, self.samples);
        let mut seen = 0u64;
        for (k, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return Some(((k + 1) as f64 * Histogram::BUCKET_S).min(self.max_s));
            }
        }
        Some(self.max_s)
    }
}

/// One direction's counters.
struct Counters {
    frames: AtomicU64,
    bytes: AtomicU64,
    spikes: AtomicU64,
    held: AtomicU64,
    swallowed: AtomicU64,
    added: Mutex<Histogram>,
}

impl Counters {
    fn new() -> Counters {
        Counters {
            frames: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            spikes: AtomicU64::new(0),
            held: AtomicU64::new(0),
            swallowed: AtomicU64::new(0),
            added: Mutex::new(Histogram::new()),
        }
    }

    fn report(&self) -> DirectionReport {
        let h = self.added.lock().unwrap_or_else(PoisonError::into_inner);
        DirectionReport {
            frames: self.frames.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            spikes: self.spikes.load(Ordering::Relaxed),
            held: self.held.load(Ordering::Relaxed),
            swallowed: self.swallowed.load(Ordering::Relaxed),
            added_p50_s: h.quantile(0.5),
            added_p99_s: h.quantile(0.99),
            added_max_s: h.max_s,
        }
    }
}

/// The faults' clock and what it says at a moment.
struct Schedule {
    faults: ProxyRequest,
    /// The first connection.
    origin: OnceLock<Instant>,
}

impl Schedule {
    fn since_origin(&self, now: Instant) -> Option<Duration> {
        self.origin.get().map(|o| now.saturating_duration_since(*o))
    }

    /// The end of the stall `now` falls in.
    fn stall_end(&self, now: Instant) -> Option<Instant> {
        let every = self.faults.stall_every?;
        let since = self.since_origin(now)?;
        let k = (since.as_secs_f64() / every.as_secs_f64()).floor();
        if k < 1.0 {
            return None;
        }
        let start = every.mul_f64(k);
        let end = start + self.faults.stall_for;
        (since < end).then(|| now + (end - since))
    }

    fn blackholed(&self, now: Instant) -> bool {
        match (self.faults.blackhole_after, self.since_origin(now)) {
            (Some(after), Some(since)) => since >= after,
            _ => false,
        }
    }
}

/// SplitMix64: the delays' draws (no statistics beyond uniform are asked of it).
struct Draws(u64);

impl Draws {
    fn new(seed: u32, connection: u64, direction: Direction) -> Draws {
        Draws(
            u64::from(seed)
                ^ connection.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ ((direction.index() as u64 + 1) << 56),
        )
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A frame on its way.
struct Frame {
    bytes: Vec<u8>,
    arrived: Instant,
    due: Instant,
}

/// What a reader hands its writer.
enum Item {
    Frame(Frame),
    /// The source closed (FIN): passed on once the frames ahead are delivered.
    End,
    /// The source reset the connection: both sides are reset.
    Reset,
}

/// One proxied connection: the client's socket and the PLC's.
struct Link {
    id: u64,
    client: Arc<TcpStream>,
    plc: Option<Arc<TcpStream>>,
    /// Set when the threads must end without passing anything on (a reset, the proxy's end).
    killed: AtomicBool,
    /// Pump threads still running.
    running: AtomicUsize,
    /// Frames delivered each way.
    frames: [AtomicU64; 2],
    /// Why it ended, the first reason given.
    why: Mutex<Option<String>>,
}

impl Link {
    fn sockets(&self) -> impl Iterator<Item = &TcpStream> {
        std::iter::once(&*self.client).chain(self.plc.as_deref())
    }

    fn note(&self, why: &str) {
        let mut w = self.why.lock().unwrap_or_else(PoisonError::into_inner);
        if w.is_none() {
            *w = Some(why.to_string());
        }
    }

    /// Both sides closed with a TCP RST: SO_LINGER 0, and the readers woken (a read shut
    /// down sends nothing); the sockets close as the last thread lets go of them.
    fn reset(&self, why: &str) {
        self.note(why);
        self.killed.store(true, Ordering::SeqCst);
        for s in self.sockets() {
            let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
            let _ = s.shutdown(Shutdown::Read);
        }
    }

    /// Both sides closed in order (FIN): the proxy's end.
    fn close(&self, why: &str) {
        self.note(why);
        self.killed.store(true, Ordering::SeqCst);
        for s in self.sockets() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }
}

/// What the threads share.
struct Shared {
    listen: SocketAddr,
    to: SocketAddr,
    schedule: Schedule,
    started: Instant,
    stopping: AtomicBool,
    links: Mutex<Vec<Arc<Link>>>,
    counters: [Counters; 2],
    connections: AtomicU64,
    refused: AtomicU64,
    broken: AtomicU64,
    stalls: AtomicU64,
    resets: AtomicU64,
    reset_connections: AtomicU64,
    blackhole_at: OnceLock<f64>,
    events: Mutex<Sender<ProxyEvent>>,
}

impl Shared {
    fn event(&self, e: ProxyEvent) {
        let _ = self
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(e);
    }

    fn links(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Link>>> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running proxy.
pub struct Proxy {
    shared: Arc<Shared>,
    events: Receiver<ProxyEvent>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    /// Listens on `listen` and forwards every connection to `to` with `faults`.
    pub fn start(
        listen: SocketAddr,
        to: SocketAddr,
        faults: ProxyRequest,
    ) -> Result<Proxy, ProxyError> {
        faults.check()?;
        let listener =
            TcpListener::bind(listen).map_err(|source| ProxyError::Listen { listen, source })?;
        let listen = listener
            .local_addr()
            .map_err(|source| ProxyError::Listen { listen, source })?;
        listener
            .set_nonblocking(true)
            .map_err(|source| ProxyError::Listen { listen, source })?;
        let (tx, events) = mpsc::channel();
        let shared = Arc::new(Shared {
            listen,
            to,
            schedule: Schedule {
                faults,
                origin: OnceLock::new(),
            },
            started: Instant::now(),
            stopping: AtomicBool::new(false),
            links: Mutex::new(Vec::new()),
            counters: [Counters::new(), Counters::new()],
            connections: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            broken: AtomicU64::new(0),
            stalls: AtomicU64::new(0),
            resets: AtomicU64::new(0),
            reset_connections: AtomicU64::new(0),
            blackhole_at: OnceLock::new(),
            events: Mutex::new(tx),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("proxy-accept".into())
                .spawn(move || accept(&shared, &listener))
                .map_err(|source| ProxyError::Listen { listen, source })?
        };
        Ok(Proxy {
            shared,
            events,
            acceptor: Some(acceptor),
        })
    }

    /// The address it listens on (a port 0 asked for is the one given).
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.listen
    }

    /// What happened since the last call, waiting up to `wait` for the first.
    pub fn events(&self, wait: Duration) -> Vec<ProxyEvent> {
        let mut out = Vec::new();
        match self.events.recv_timeout(wait) {
            Ok(e) => out.push(e),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return out,
        }
        out.extend(self.events.try_iter());
        out
    }

    /// The figures so far.
    pub fn report(&self) -> ProxyReport {
        let s = &self.shared;
        ProxyReport {
            listen: s.listen,
            to: s.to,
            seconds: s.started.elapsed().as_secs_f64(),
            connections: s.connections.load(Ordering::Relaxed),
            refused: s.refused.load(Ordering::Relaxed),
            broken: s.broken.load(Ordering::Relaxed),
            stalls: s.stalls.load(Ordering::Relaxed),
            resets: s.resets.load(Ordering::Relaxed),
            reset_connections: s.reset_connections.load(Ordering::Relaxed),
            blackhole_at_s: s.blackhole_at.get().copied(),
            to_plc: s.counters[0].report(),
            from_plc: s.counters[1].report(),
        }
    }

    /// Stops accepting, closes every connection (FIN both ways) and returns the figures.
    pub fn stop(mut self) -> ProxyReport {
        self.finish();
        self.report()
    }

    fn finish(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        let links: Vec<Arc<Link>> = self.shared.links().drain(..).collect();
        for l in &links {
            l.close("the proxy stopped");
        }
        // The pumps see it within a tick; a writer blocked on a peer that does not read
        // within its write timeout.
        let deadline = Instant::now() + Duration::from_secs(1);
        while links.iter().any(|l| l.running.load(Ordering::SeqCst) > 0)
            && Instant::now() < deadline
        {
            std::thread::sleep(TICK);
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if self.acceptor.is_some() {
            self.finish();
        }
    }
}

/// Accepts until the proxy stops, and keeps the fault clock: stalls announced, resets done,
/// the black hole opened.
fn accept(shared: &Arc<Shared>, listener: &TcpListener) {
    let faults = &shared.schedule.faults;
    let mut next_id = 1u64;
    let mut resets_done = 0u64;
    let mut stalls_seen = 0u64;
    while !shared.stopping.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, from)) => {
                let id = next_id;
                next_id += 1;
                let now = Instant::now();
                let _ = shared.schedule.origin.set(now);
                shared.connections.fetch_add(1, Ordering::Relaxed);
                let shared = Arc::clone(shared);
                let spawned = std::thread::Builder::new()
                    .name(format!("proxy-{id}"))
                    .spawn(move || serve(&shared, id, client, from));
                if let Err(e) = spawned {
                    tracing::warn!("proxy: no thread for connection {id}: {e}");
                }
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => tracing::warn!("proxy: accept failed: {e}"),
        }
        let now = Instant::now();
        if let Some(since) = shared.schedule.since_origin(now) {
            let at = since.as_secs_f64();
            if let Some(every) = faults.reset_every {
                let due = (at / every.as_secs_f64()).floor() as u64;
                if due > resets_done {
                    resets_done = due;
                    let links: Vec<Arc<Link>> = shared.links().drain(..).collect();
                    for l in &links {
                        l.reset("reset by the proxy");
                    }
                    shared.resets.fetch_add(1, Ordering::Relaxed);
                    shared
                        .reset_connections
                        .fetch_add(links.len() as u64, Ordering::Relaxed);
                    shared.event(ProxyEvent::Reset {
                        at_s: at,
                        connections: links.len(),
                    });
                }
            }
            if let Some(every) = faults.stall_every {
                let k = (at / every.as_secs_f64()).floor() as u64;
                if k > stalls_seen && shared.schedule.stall_end(now).is_some() {
                    stalls_seen = k;
                    shared.stalls.fetch_add(1, Ordering::Relaxed);
                    shared.event(ProxyEvent::Stall {
                        at_s: at,
                        for_s: faults.stall_for.as_secs_f64(),
                    });
                }
            }
            if shared.schedule.blackholed(now) && shared.blackhole_at.set(at).is_ok() {
                shared.event(ProxyEvent::Blackhole { at_s: at });
            }
        }
        std::thread::sleep(TICK);
    }
}

/// One client: its PLC connection made (or the black hole's hold), then the two directions
/// pumped until both end.
fn serve(shared: &Arc<Shared>, id: u64, client: TcpStream, from: SocketAddr) {
    let blackholed = shared.schedule.blackholed(Instant::now());
    let plc = if blackholed {
        None
    } else {
        match TcpStream::connect_timeout(&shared.to, CONNECT_TIMEOUT) {
            Ok(s) => Some(s),
            Err(e) => {
                shared.refused.fetch_add(1, Ordering::Relaxed);
                shared.event(ProxyEvent::Refused {
                    id,
                    why: e.to_string(),
                });
                // As the PLC's refusal would reach the client: its connection reset.
                let _ = socket2::SockRef::from(&client).set_linger(Some(Duration::ZERO));
                return;
            }
        }
    };
    for s in std::iter::once(&client).chain(plc.as_ref()) {
        // Small frames go out at once, as ADS clients and TwinCAT send them.
        let _ = s.set_nodelay(true);
        let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
    }
    let link = Arc::new(Link {
        id,
        client: Arc::new(client),
        plc: plc.map(Arc::new),
        killed: AtomicBool::new(false),
        running: AtomicUsize::new(0),
        frames: [AtomicU64::new(0), AtomicU64::new(0)],
        why: Mutex::new(None),
    });
    shared.links().push(Arc::clone(&link));
    shared.event(ProxyEvent::Connected {
        id,
        client: from,
        blackholed,
    });
    let Some(plc) = link.plc.clone() else {
        // The black hole: read and swallow until the client goes or the proxy ends.
        link.running.fetch_add(1, Ordering::SeqCst);
        swallow(shared, &link);
        finish(shared, &link, "the client left the black hole");
        return;
    };
    let mut handles = Vec::new();
    for (direction, src, dst) in [
        (Direction::ToPlc, Arc::clone(&link.client), Arc::clone(&plc)),
        (
            Direction::FromPlc,
            Arc::clone(&plc),
            Arc::clone(&link.client),
        ),
    ] {
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        link.running.fetch_add(2, Ordering::SeqCst);
        let (s, l) = (Arc::clone(shared), Arc::clone(&link));
        let reader = std::thread::Builder::new()
            .name(format!("proxy-{id}-read"))
            .spawn(move || read(&s, &l, direction, &src, &tx));
        let (s, l) = (Arc::clone(shared), Arc::clone(&link));
        let writer = std::thread::Builder::new()
            .name(format!("proxy-{id}-write"))
            .spawn(move || write(&s, &l, direction, &dst, &rx));
        for h in [reader, writer] {
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    link.running.fetch_sub(1, Ordering::SeqCst);
                    link.reset(&format!("no thread: {e}"));
                }
            }
        }
    }
    drop(plc);
    for h in handles {
        let _ = h.join();
    }
    finish(shared, &link, "both sides closed");
}

/// The connection's end: out of the list, announced.
fn finish(shared: &Shared, link: &Arc<Link>, why: &str) {
    shared.links().retain(|l| !Arc::ptr_eq(l, link));
    link.note(why);
    let why = link
        .why
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .unwrap_or_default();
    shared.event(ProxyEvent::Closed {
        id: link.id,
        why,
        to_plc: link.frames[0].load(Ordering::Relaxed),
        from_plc: link.frames[1].load(Ordering::Relaxed),
    });
}

/// Reads the client's frames into nothing (the black hole's hold).
fn swallow(shared: &Shared, link: &Link) {
    while let Ok(Some(_)) = read_frame(&link.client) {
        if link.killed() {
            break;
        }
        shared.counters[0].swallowed.fetch_add(1, Ordering::Relaxed);
    }
    link.running.fetch_sub(1, Ordering::SeqCst);
}

/// How a frame read ended.
enum ReadEnd {
    Closed,
    Reset,
    Broken(String),
}

/// Reads one whole frame; `Ok(None)` at a clean end between frames.
fn read_frame(src: &TcpStream) -> Result<Option<Vec<u8>>, ReadEnd> {
    let mut src = src;
    let mut head = [0u8; crate::wire::TCP_HEADER_LEN];
    let mut got = 0;
    while got < head.len() {
        match src.read(&mut head[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(ReadEnd::Closed),
            Ok(n) => got += n,
            Err(e) => return Err(read_error(&e)),
        }
    }
    let length = u32::from_le_bytes([head[2], head[3], head[4], head[5]]) as usize;
    if length > MAX_FRAME {
        return Err(ReadEnd::Broken(format!(
            "a frame of {length} bytes, over the {MAX_FRAME} the proxy forwards: not AMS/TCP"
        )));
    }
    let mut bytes = head.to_vec();
    let mut body = src.take(length as u64);
    match body.read_to_end(&mut bytes) {
        Ok(_) if bytes.len() == head.len() + length => Ok(Some(bytes)),
        Ok(_) => Err(ReadEnd::Closed),
        Err(e) => Err(read_error(&e)),
    }
}

fn read_error(e: &io::Error) -> ReadEnd {
    match e.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => ReadEnd::Reset,
        _ => ReadEnd::Closed,
    }
}

/// A direction's reader: each frame stamped with its due time and queued.
fn read(
    shared: &Shared,
    link: &Link,
    direction: Direction,
    src: &TcpStream,
    tx: &SyncSender<Item>,
) {
    let faults = &shared.schedule.faults;
    let counters = &shared.counters[direction.index()];
    let mut draws = Draws::new(faults.seed, link.id, direction);
    let mut last_due: Option<Instant> = None;
    let end = loop {
        let frame = match read_frame(src) {
            Ok(Some(f)) => f,
            Ok(None) => break Item::End,
            Err(ReadEnd::Closed) => break Item::End,
            Err(ReadEnd::Reset) => break Item::Reset,
            Err(ReadEnd::Broken(why)) => {
                shared.broken.fetch_add(1, Ordering::Relaxed);
                link.note(&why);
                break Item::Reset;
            }
        };
        let arrived = Instant::now();
        if link.killed() {
            break Item::End;
        }
        if shared.schedule.blackholed(arrived) {
            counters.swallowed.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let jitter = faults.jitter.as_secs_f64() * (2.0 * draws.unit() - 1.0);
        let mut delay = (faults.delay.as_secs_f64() + jitter).max(0.0);
        if faults.spike_fraction > 0.0 && draws.unit() < faults.spike_fraction {
            delay += faults.spike.as_secs_f64();
            counters.spikes.fetch_add(1, Ordering::Relaxed);
        }
        // Never before the frame ahead: the stream's order.
        let due = arrived + Duration::from_secs_f64(delay);
        let due = last_due.map_or(due, |d| due.max(d));
        last_due = Some(due);
        let item = Item::Frame(Frame {
            bytes: frame,
            arrived,
            due,
        });
        if tx.send(item).is_err() {
            break Item::End;
        }
    };
    if !link.killed() {
        let _ = tx.send(end);
    }
    link.running.fetch_sub(1, Ordering::SeqCst);
}

/// Waits until `until` in ticks; false when the link was killed meanwhile.
fn wait_until(link: &Link, until: Instant) -> bool {
    loop {
        if link.killed() {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(TICK));
    }
}

/// Writes all of `bytes`, giving up when the link is killed.
fn write_all(link: &Link, dst: &TcpStream, bytes: &[u8]) -> io::Result<()> {
    let mut dst = dst;
    let mut at = 0;
    while at < bytes.len() {
        if link.killed() {
            return Err(io::ErrorKind::ConnectionAborted.into());
        }
        match dst.write(&bytes[at..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => at += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A direction's writer: each frame delivered at its due time, held through a stall,
/// swallowed in the black hole; the source's end passed on after the frames ahead of it.
fn write(shared: &Shared, link: &Link, direction: Direction, dst: &TcpStream, rx: &Receiver<Item>) {
    let counters = &shared.counters[direction.index()];
    loop {
        let item = match rx.recv_timeout(TICK) {
            Ok(item) => item,
            Err(RecvTimeoutError::Timeout) if link.killed() => break,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match item {
            Item::Frame(f) => {
                if !wait_until(link, f.due) {
                    break;
                }
                // Held: it came during a stall, or waits out one now.
                let mut held = shared.schedule.stall_end(f.arrived).is_some();
                while let Some(end) = shared.schedule.stall_end(Instant::now()) {
                    held = true;
                    if !wait_until(link, end) {
                        break;
                    }
                }
                if link.killed() {
                    break;
                }
                if held {
                    counters.held.fetch_add(1, Ordering::Relaxed);
                }
                if shared.schedule.blackholed(Instant::now()) {
                    counters.swallowed.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                match write_all(link, dst, &f.bytes) {
                    Ok(()) => {
                        counters.frames.fetch_add(1, Ordering::Relaxed);
                        link.frames[direction.index()].fetch_add(1, Ordering::Relaxed);
                        counters
                            .bytes
                            .fetch_add(f.bytes.len() as u64, Ordering::Relaxed);
                        counters
                            .added
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .add(f.arrived.elapsed().as_secs_f64());
                    }
                    Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                        link.reset(&format!("{} reset it", peer(direction.other())));
                        break;
                    }
                    Err(e) => {
                        link.note(&format!("writing {}: {e}", peer(direction.other())));
                        link.reset("a write failed");
                        break;
                    }
                }
            }
            Item::End => {
                // A vanished peer passes on nothing, its end neither.
                if !shared.schedule.blackholed(Instant::now()) {
                    link.note(&format!("{} closed it", peer(direction)));
                    let _ = dst.shutdown(Shutdown::Write);
                }
                break;
            }
            Item::Reset => {
                link.reset(&format!("{} reset it", peer(direction)));
                break;
            }
        }
    }
    link.running.fetch_sub(1, Ordering::SeqCst);
}

impl Direction {
    fn other(self) -> Direction {
        match self {
            Direction::ToPlc => Direction::FromPlc,
            Direction::FromPlc => Direction::ToPlc,
        }
    }
}

/// Who sends in `direction`.
fn peer(direction: Direction) -> &'static str {
    match direction {
        Direction::ToPlc => "the client",
        Direction::FromPlc => "the PLC",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An AMS/TCP frame of `len` bytes after the header, numbered `n` in its first four.
    fn frame(n: u32, len: usize) -> Vec<u8> {
        let mut f = vec![0u8, 0];
        f.extend_from_slice(&(len as u32).to_le_bytes());
        f.extend_from_slice(&n.to_le_bytes());
        f.resize(6 + len, 0xA5);
        f
    }

    fn number(f: &[u8]) -> u32 {
        u32::from_le_bytes([f[6], f[7], f[8], f[9]])
    }

    /// What the PLC's side received: each frame's number and when it came.
    type Arrivals = Arc<Mutex<Vec<(u32, Instant)>>>;

    /// A stand-in PLC on a free port answering each frame with the same frame at once (`hold`:
    /// frame N's answer, and so those behind it, that much later).
    fn echo(hold: Option<(u32, Duration)>) -> (SocketAddr, Arrivals) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
        let addr = listener.local_addr().expect("address");
        let arrivals: Arrivals = Arc::default();
        let seen = Arc::clone(&arrivals);
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                // Read on one thread (the arrivals as they come), answered on another.
                let (tx, rx) = mpsc::channel::<Vec<u8>>();
                let out = s.try_clone().expect("clone");
                std::thread::spawn(move || {
                    for f in rx {
                        if let Some((_, wait)) = hold.filter(|(n, _)| *n == number(&f)) {
                            std::thread::sleep(wait);
                        }
                        if (&out).write_all(&f).is_err() {
                            break;
                        }
                    }
                });
                std::thread::spawn(move || {
                    let _ = s.set_nodelay(true);
                    while let Ok(Some(f)) = read_frame(&s) {
                        seen.lock()
                            .expect("arrivals")
                            .push((number(&f), Instant::now()));
                        if tx.send(f).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        (addr, arrivals)
    }

    fn proxy(faults: ProxyRequest) -> (Proxy, Arrivals) {
        proxy_holding(faults, None)
    }

    fn proxy_holding(faults: ProxyRequest, hold: Option<(u32, Duration)>) -> (Proxy, Arrivals) {
        let (plc, arrivals) = echo(hold);
        let p = Proxy::start("127.0.0.1:0".parse().expect("address"), plc, faults)
            .expect("the proxy starts");
        (p, arrivals)
    }

    fn client(p: &Proxy) -> TcpStream {
        let c = TcpStream::connect(p.local_addr()).expect("connects");
        c.set_nodelay(true).expect("nodelay");
        c.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        c
    }

    /// One request and its reply through the proxy: the round trip, s.
    fn round_trip(c: &TcpStream, n: u32) -> f64 {
        let sent = Instant::now();
        (&*c).write_all(&frame(n, 40)).expect("sends");
        let reply = read_frame(c)
            .unwrap_or_else(|_| panic!("reply {n}"))
            .expect("a reply");
        assert_eq!(number(&reply), n, "replies in order");
        sent.elapsed().as_secs_f64()
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    #[test]
    fn every_frame_is_delayed_each_way_with_its_jitter() {
        let faults = ProxyRequest {
            delay: Duration::from_millis(5),
            jitter: Duration::from_millis(3),
            ..ProxyRequest::default()
        };
        let (p, _) = proxy(faults);
        let c = client(&p);
        let trips: Vec<f64> = (0..100).map(|n| round_trip(&c, n)).collect();
        drop(c);
        let r = p.stop();
        let p50 = median(trips.clone());
        let mut sorted = trips;
        sorted.sort_by(f64::total_cmp);
        let spread = sorted[90] - sorted[10];
        eprintln!(
            "round trip p50 {:.2} ms, p10–p90 {:.2} ms; in the proxy p50 {:?} / {:?} s",
            p50 * 1e3,
            spread * 1e3,
            r.to_plc.added_p50_s,
            r.from_plc.added_p50_s
        );
        // Two delays of 5 ± 3 ms: 10 ms at the median (sleeps never end early; a loaded
        // machine adds, up to four times that).
        assert!((0.009..0.040).contains(&p50), "p50 {p50} s");
        // The jitter spreads them: two uniform draws of ±3 ms, p10–p90 about 5.4 ms.
        assert!(spread > 0.002, "p10–p90 {spread} s");
        for d in [&r.to_plc, &r.from_plc] {
            assert_eq!(d.frames, 100);
            assert_eq!(d.bytes, 100 * 46);
            let p50 = d.added_p50_s.expect("frames");
            assert!((0.004..0.020).contains(&p50), "{d:?}");
        }
    }

    #[test]
    fn spikes_hit_about_the_fraction_asked_and_repeat_with_the_seed() {
        let faults = ProxyRequest {
            spike_fraction: 0.1,
            spike: Duration::from_millis(20),
            seed: 7,
            ..ProxyRequest::default()
        };
        let run = || {
            let (p, _) = proxy(faults.clone());
            let c = client(&p);
            let slow = (0..200)
                .map(|n| round_trip(&c, n))
                .filter(|t| *t >= 0.020)
                .count();
            drop(c);
            (slow, p.stop())
        };
        let (slow, r) = run();
        let spikes = r.to_plc.spikes + r.from_plc.spikes;
        eprintln!("{spikes} spikes in 400 frames, {slow} of 200 round trips ≥ 20 ms");
        // 10 % of 400 frames: 40 expected (a binomial's σ is 6).
        assert!((20..=60).contains(&spikes), "{spikes} spikes");
        // Every spiked round trip took the spike (two spikes in one trip count once); a slow
        // machine may add a few more.
        assert!(
            slow as u64 >= spikes / 2 && slow as u64 <= spikes + 10,
            "{slow} slow"
        );
        assert!(r.to_plc.added_max_s >= 0.020 || r.from_plc.added_max_s >= 0.020);
        // The same seed, the same frames spiked.
        let (_, again) = run();
        assert_eq!(
            (again.to_plc.spikes, again.from_plc.spikes),
            (r.to_plc.spikes, r.from_plc.spikes)
        );
    }

    #[test]
    fn a_stall_holds_both_ways_then_delivers_every_frame_in_order() {
        let faults = ProxyRequest {
            stall_every: Some(Duration::from_millis(600)),
            stall_for: Duration::from_millis(400),
            ..ProxyRequest::default()
        };
        // The PLC answers frame 50 (sent at 0.5 s) 0.2 s late: it and those behind it are sent
        // during the stall, towards the client.
        let (p, arrivals) = proxy_holding(faults, Some((50, Duration::from_millis(200))));
        let c = client(&p);
        let origin = Instant::now();
        // A frame every 10 ms for 0.9 s, replies read on a thread.
        let reader = {
            let c = c.try_clone().expect("clone");
            std::thread::spawn(move || {
                let mut got = Vec::new();
                while got.len() < 90 {
                    match read_frame(&c) {
                        Ok(Some(f)) => got.push((number(&f), Instant::now())),
                        _ => break,
                    }
                }
                got
            })
        };
        for n in 0..90u32 {
            (&c).write_all(&frame(n, 20)).expect("sends");
            std::thread::sleep(Duration::from_millis(10));
        }
        let replies = reader.join().expect("reader");
        let r = p.stop();
        let numbers: Vec<u32> = replies.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            numbers,
            (0..90).collect::<Vec<_>>(),
            "every reply, in order"
        );
        // Nothing reached the PLC during the stall (0.6 to 1.0 s after the connection), nor
        // the client; the frames held came right after it.
        let at = |t: &Instant| t.saturating_duration_since(origin).as_secs_f64();
        let quiet = |times: &[f64]| times.iter().all(|&t| !(0.62..0.98).contains(&t));
        let to_plc: Vec<f64> = arrivals
            .lock()
            .expect("arrivals")
            .iter()
            .map(|(_, t)| at(t))
            .collect();
        let to_client: Vec<f64> = replies.iter().map(|(_, t)| at(t)).collect();
        assert!(
            quiet(&to_plc),
            "the PLC got frames during the stall: {to_plc:?}"
        );
        assert!(
            quiet(&to_client),
            "the client got frames during the stall: {to_client:?}"
        );
        let burst = to_client
            .iter()
            .filter(|&&t| (0.98..1.1).contains(&t))
            .count();
        assert!(
            burst >= 30,
            "the held frames come at the stall's end: {to_client:?}"
        );
        assert_eq!(r.stalls, 1);
        assert!(r.to_plc.held >= 30 && r.from_plc.held >= 1, "{r:?}");
    }

    #[test]
    fn a_reset_gives_the_client_econnreset_and_new_connections_pass() {
        let faults = ProxyRequest {
            reset_every: Some(Duration::from_millis(300)),
            ..ProxyRequest::default()
        };
        let (p, _) = proxy(faults);
        let c = client(&p);
        round_trip(&c, 1);
        let waited = Instant::now();
        let mut buf = [0u8; 16];
        let e = (&c).read(&mut buf).expect_err("reset");
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}");
        assert!(
            waited.elapsed() < Duration::from_secs(2),
            "{:?}",
            waited.elapsed()
        );
        // A new connection is forwarded again.
        let again = client(&p);
        round_trip(&again, 2);
        let r = p.stop();
        assert!(r.resets >= 1 && r.reset_connections >= 1, "{r:?}");
    }

    #[test]
    fn the_black_hole_keeps_the_connection_open_and_silent() {
        let faults = ProxyRequest {
            blackhole_after: Some(Duration::from_millis(300)),
            ..ProxyRequest::default()
        };
        let (p, arrivals) = proxy(faults);
        let c = client(&p);
        round_trip(&c, 1);
        std::thread::sleep(Duration::from_millis(400));
        let before = arrivals.lock().expect("arrivals").len();
        // Still open: the writes go out, nothing comes back, no end and no reset.
        c.set_read_timeout(Some(Duration::from_millis(500)))
            .expect("timeout");
        for n in 2..10 {
            (&c).write_all(&frame(n, 40))
                .expect("the connection is open");
        }
        let mut buf = [0u8; 16];
        let e = (&c).read(&mut buf).expect_err("silence");
        assert!(
            matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{e}"
        );
        assert_eq!(
            arrivals.lock().expect("arrivals").len(),
            before,
            "the PLC got nothing"
        );
        // A new connection is held silent too.
        let late = client(&p);
        late.set_read_timeout(Some(Duration::from_millis(200)))
            .expect("timeout");
        (&late).write_all(&frame(99, 40)).expect("open");
        let e = (&late).read(&mut buf).expect_err("silence");
        assert!(
            matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{e}"
        );
        let r = p.stop();
        assert!(r.blackhole_at_s.is_some());
        assert!(r.to_plc.swallowed >= 9, "{r:?}");
    }

    #[test]
    fn a_plc_that_cannot_be_reached_resets_the_client() {
        // A port that was free a moment ago: nothing listens on it.
        let free = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port");
        let p = Proxy::start(
            "127.0.0.1:0".parse().expect("address"),
            free,
            ProxyRequest::default(),
        )
        .expect("starts");
        let c = client(&p);
        let mut buf = [0u8; 16];
        let e = (&c).read(&mut buf).expect_err("reset");
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}");
        assert_eq!(p.stop().refused, 1);
    }

    #[test]
    fn stalls_are_windows_on_the_clock_of_the_first_connection() {
        let s = Schedule {
            faults: ProxyRequest {
                stall_every: Some(Duration::from_secs(10)),
                stall_for: Duration::from_secs(2),
                blackhole_after: Some(Duration::from_secs(25)),
                ..ProxyRequest::default()
            },
            origin: OnceLock::new(),
        };
        let t0 = Instant::now();
        assert_eq!(
            s.stall_end(t0 + Duration::from_secs(11)),
            None,
            "no clock yet"
        );
        let _ = s.origin.set(t0);
        let at = |secs: f64| t0 + Duration::from_secs_f64(secs);
        for quiet in [0.0, 5.0, 9.99, 12.0, 15.0, 22.5] {
            assert_eq!(s.stall_end(at(quiet)), None, "{quiet} s");
        }
        assert_eq!(s.stall_end(at(10.5)), Some(at(12.0)));
        assert_eq!(s.stall_end(at(21.0)), Some(at(22.0)));
        assert!(!s.blackholed(at(24.9)) && s.blackholed(at(25.0)));
        let bad = ProxyRequest {
            stall_every: Some(Duration::from_secs(1)),
            stall_for: Duration::from_secs(1),
            ..ProxyRequest::default()
        };
        let e = bad.check().expect_err("a stall as long as its period");
        assert!(e.to_string().contains("shorter than"), "{e}");
    }

    #[test]
    fn draws_repeat_with_their_seed_and_differ_between_seeds_and_directions() {
        let take = |seed, dir| {
            let mut d = Draws::new(seed, 1, dir);
            (0..8).map(|_| d.unit()).collect::<Vec<f64>>()
        };
        assert_eq!(take(3, Direction::ToPlc), take(3, Direction::ToPlc));
        assert_ne!(take(3, Direction::ToPlc), take(4, Direction::ToPlc));
        assert_ne!(take(3, Direction::ToPlc), take(3, Direction::FromPlc));
        let mut d = Draws::new(0, 0, Direction::ToPlc);
        let mean = (0..10_000).map(|_| d.unit()).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }
}
