//! The AMS/TCP server: std threads, two per connection (one reads and answers requests, one
//! writes its notifications), plus one that samples the wall-clock notifications.
//!
//! Threads rather than async: a handful of clients, requests answered in microseconds from
//! memory, and no runtime to carry. A malformed, oversized or truncated frame closes that
//! connection with a log line; nothing a peer sends can take the server down (the fuzz test
//! `tests/integration/broken_frames.rs` sends it 10 000 broken frames, `tests/memory_under_hostile_lengths.rs` counts the bytes
//! hostile length fields make it allocate).
//!
//! Notifications: samples are taken by the PLC task after each of its cycles (through a
//! [`CycleHook`]) or by the wall-clock thread, never by a socket write. Each connection has a
//! bounded queue of frames ([`OUTBOX_FRAMES`], [`OUTBOX_BYTES`]) and its own writer thread: a
//! client that does not read fills its own queue (further frames for it are dropped and
//! counted), and a write blocked for longer than [`WRITE_TIMEOUT`] closes its connection;
//! nobody else waits for it.
//!
//! Limits (see [`ServerConfig::new`]): 64 connections; when all are taken, a new client gets
//! the place of the connection with least claim to it (see [`Progress::eviction_key`]): one
//! stalled mid-frame, one that never sent anything for longer than a frame may take, then the
//! longest idle — never a client that has just connected, nor one that is talking — so
//! neither a slow-loris nor a flood of connections can lock clients out. A frame must be complete
//! within 1 s of its first byte, and a connection's first frame within 10 s of its opening
//! ([`ServerConfig::silent_timeout`]); frames up to 64 KiB ([`wire::MAX_AMS_LEN`]), replies up to
//! 64 KiB of data ([`wire::MAX_REPLY_LEN`]), 4096 symbol handles and 1024 notifications per
//! connection.
//!
//! Descriptors: each connection takes [`DESCRIPTORS_PER_CONNECTION`] from the process's budget
//! ([`crate::ports`], shared with the live view), each Secure ADS handshake under way
//! [`DESCRIPTORS_PER_HANDSHAKE`]; one the budget cannot take is closed at once and counted
//! ([`ServerStats::refused`]), so that no flood on another port can leave this one without.
//!
//! Logs: what a peer can cause once per connection (a malformed frame, a failed handshake, a
//! refusal, a silent connection closed) is logged at most once a second per kind, with the
//! count held back since ([`crate::throttle`]); a flood of 2 300 malformed connections wrote
//! 2 300 lines before.

use super::device::{Device, Session};
use super::routes::RouteTable;
use crate::ports::{self, Held};
use crate::secure::SecureServer;
use crate::throttle::SharedThrottle;
use crate::wire::{
    self, AMS_HEADER_LEN, AmsAddr, Frame, FrameError, Framing, TCP_HEADER_LEN, router,
};
use openssl::ssl::SslStream;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Server settings. [`ServerConfig::new`] gives the defaults a pyads/TwinCAT client expects of
/// a local runtime, bound to 127.0.0.1 only.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// Frames whose AMS length exceeds this are refused (connection closed).
    pub max_frame: usize,
    /// Simultaneous connections; one more makes the server close the oldest incomplete or
    /// longest idle one.
    pub max_connections: usize,
    /// A frame that has started must be complete within this time.
    pub frame_timeout: Duration,
    /// A connection that has sent no complete frame this long after it opened is closed (a
    /// client sends its first request at once; an idle connection that has talked may stay,
    /// until its place is needed).
    pub silent_timeout: Duration,
    /// The routes added over the UDP service ([`super::udp`]); shared with the responder.
    pub routes: RouteTable,
    /// Serve only peers with a route: an AMS frame from a source NetId without one closes
    /// the connection, as TwinCAT does (its clients then report a missing route). Secure ADS
    /// clients passed their TlsConnectInfo: they are not checked again.
    pub require_route: bool,
    /// Secure ADS: every connection is TLS in this acceptor's mode, its frames without the
    /// AMS/TCP header; `None`: plain ADS.
    pub secure: Option<Arc<SecureServer>>,
    /// Each connection's reader and writer threads ask for real-time scheduling
    /// ([`crate::realtime`]): they carry the PLC's samples and the shadow's echo, and a
    /// virtual PLC whose tasks run real-time but whose connections do not makes its clients
    /// wait for them behind those tasks.
    pub realtime: bool,
}

impl ServerConfig {
    pub fn new(listen: SocketAddr) -> ServerConfig {
        ServerConfig {
            listen,
            max_frame: wire::MAX_AMS_LEN,
            max_connections: 64,
            // Clients write a frame in one call; on a LAN it arrives within milliseconds.
            frame_timeout: Duration::from_secs(1),
            silent_timeout: SILENT_TIMEOUT,
            routes: RouteTable::new(),
            require_route: false,
            secure: None,
            realtime: false,
        }
    }
}

/// A write to a client that blocks this long (it does not read, its socket buffers are full)
/// closes its connection.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(3);
/// Notification frames queued for one connection; past this, its new frames are dropped
/// (and counted) until its writer catches up: 2.5 s of 10 ms cycles.
pub const OUTBOX_FRAMES: usize = 256;
/// Bytes of notification frames queued for one connection, likewise (a frame is always taken
/// into an empty queue): what a client that does not read can make the server hold for it.
pub const OUTBOX_BYTES: usize = 1 << 20;

/// How long a new connection may stay without sending a frame, by default
/// ([`ServerConfig::silent_timeout`]).
pub const SILENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Descriptors one connection holds: its socket, the reader's and the control handle.
pub const DESCRIPTORS_PER_CONNECTION: usize = 3;
/// Descriptors one Secure ADS handshake under way holds: its socket and the handle its
/// deadline shuts down.
pub const DESCRIPTORS_PER_HANDSHAKE: usize = 2;

/// The default listen address: loopback, ADS port 48898.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:48898";

/// Counters for tests and the exit summary.
#[derive(Debug, Default)]
pub struct ServerStats {
    pub connections: AtomicU64,
    pub frames: AtomicU64,
    /// Connections closed because of a malformed, oversized or truncated frame.
    pub rejected: AtomicU64,
    /// Connections closed to make room for a new client (all places taken).
    pub evicted: AtomicU64,
    /// Connections closed because a frame came from a NetId without a route
    /// ([`ServerConfig::require_route`]).
    pub no_route: AtomicU64,
    /// Notification frames written.
    pub notifications: AtomicU64,
    /// Notification frames dropped because their connection's queue was full.
    pub dropped_notifications: AtomicU64,
    /// Connections closed because a write to them blocked for [`WRITE_TIMEOUT`].
    pub stuck: AtomicU64,
    /// Secure ADS connections whose handshake failed or whose TlsConnectInfo was refused.
    pub refused_tls: AtomicU64,
    /// Connections closed at once, unserved: the process's descriptor budget could not take
    /// them ([`crate::ports`]), or twice [`MAX_HANDSHAKES`] Secure ADS handshakes were still
    /// under way after [`EVICTION_WAIT`].
    pub refused: AtomicU64,
    /// Connections closed because they sent no frame within [`ServerConfig::silent_timeout`].
    pub silent: AtomicU64,
}

/// The server's rate-limited warnings, one per kind of trouble a peer can cause once per
/// connection.
#[derive(Debug)]
struct Logs {
    malformed: SharedThrottle,
    handshake: SharedThrottle,
    refused: SharedThrottle,
    silent: SharedThrottle,
    stuck: SharedThrottle,
    unserved: SharedThrottle,
}

impl Logs {
    const fn new() -> Logs {
        Logs {
            malformed: SharedThrottle::new("ADS connections closed for a malformed frame"),
            handshake: SharedThrottle::new("Secure ADS handshakes failed or refused"),
            refused: SharedThrottle::new("ADS connections refused"),
            silent: SharedThrottle::new("ADS connections closed for sending nothing"),
            stuck: SharedThrottle::new("ADS connections closed for not reading"),
            unserved: SharedThrottle::new("ADS connections or accepts failed"),
        }
    }

    /// Says what each held back, once a second has gone by since its last line (`force`: now).
    fn flush(&self, force: bool) {
        for t in [
            &self.malformed,
            &self.handshake,
            &self.refused,
            &self.silent,
            &self.stuck,
            &self.unserved,
        ] {
            t.flush(force);
        }
    }
}

/// A connection's byte stream: plain TCP, or TLS over it shared by the connection's reader
/// and writer (an OpenSSL stream is not to be used from two threads at once: each takes it in
/// turn, the reader only once bytes have arrived).
enum Link {
    Plain(TcpStream),
    Tls {
        tls: Arc<Mutex<SslStream<TcpStream>>>,
        /// The socket under it, to wait for bytes without holding the TLS stream.
        raw: Arc<TcpStream>,
    },
}

impl Link {
    fn framing(&self) -> Framing {
        match self {
            Link::Plain(_) => Framing::AmsTcp,
            Link::Tls { .. } => Framing::Bare,
        }
    }

    fn tcp(&self) -> &TcpStream {
        match self {
            Link::Plain(s) => s,
            Link::Tls { raw, .. } => raw,
        }
    }

    /// A copy for another thread (the reader's own socket handle over plain TCP).
    fn split(&self) -> io::Result<Link> {
        Ok(match self {
            Link::Plain(s) => Link::Plain(s.try_clone()?),
            Link::Tls { tls, raw } => Link::Tls {
                tls: Arc::clone(tls),
                raw: Arc::clone(raw),
            },
        })
    }

    /// Writes a frame [`wire::encode_frame`] made, in this link's framing.
    fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        let bytes = self.framing().outgoing(frame);
        match self {
            Link::Plain(s) => s.write_all(bytes),
            Link::Tls { tls, .. } => lock(tls).write_all(bytes),
        }
    }
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Link::Plain(s) => s.read(buf),
            Link::Tls { tls, raw } => {
                if lock(tls).ssl().pending() == 0 {
                    // Without the lock: a writer may write meanwhile. OpenSSL does not read
                    // ahead, so the socket's bytes are all that is left to decrypt.
                    let mut one = [0u8; 1];
                    if raw.peek(&mut one)? == 0 {
                        return Ok(0);
                    }
                }
                lock(tls).read(buf)
            }
        }
    }
}

struct Conn {
    writer: Mutex<Link>,
    /// The socket once more, to shut it down without waiting for a writer blocked in a write
    /// (shutting down unblocks that write).
    control: TcpStream,
    session: Mutex<Session>,
    alive: AtomicBool,
    progress: Mutex<Progress>,
    outbox: Mutex<Outbox>,
    /// Signalled when a frame is queued or the connection closes.
    ready: Condvar,
    /// Its descriptors in the process's budget, given back when the last of its threads lets
    /// go of it (its sockets closed).
    _descriptors: Held,
}

/// A connection's queued notification frames and their bytes.
#[derive(Default)]
struct Outbox {
    frames: VecDeque<Vec<u8>>,
    bytes: usize,
}

impl Outbox {
    fn full(&self) -> bool {
        self.frames.len() >= OUTBOX_FRAMES || self.bytes >= OUTBOX_BYTES
    }
}

impl Conn {
    /// Queues notification frames for the writer; `false` for each one dropped because the
    /// queue is full.
    fn queue(&self, frames: Vec<Vec<u8>>, stats: &ServerStats) {
        if frames.is_empty() {
            return;
        }
        let mut q = lock(&self.outbox);
        for f in frames {
            let fits = q.frames.is_empty() || q.bytes + f.len() <= OUTBOX_BYTES;
            if q.full() || !fits {
                stats.dropped_notifications.fetch_add(1, Ordering::Relaxed);
            } else {
                q.bytes += f.len();
                q.frames.push_back(f);
            }
        }
        drop(q);
        self.ready.notify_one();
    }

    fn close(&self) {
        self.alive.store(false, Ordering::Relaxed);
        let _ = self.control.shutdown(std::net::Shutdown::Both);
        self.ready.notify_all();
    }

    fn outbox_full(&self) -> bool {
        lock(&self.outbox).full()
    }
}

/// How far a connection has got: what decides which one makes room for a new client.
#[derive(Debug, Clone, Copy)]
struct Progress {
    opened: Instant,
    frames: u64,
    /// When the first byte of the frame now being received arrived.
    partial_since: Option<Instant>,
    last_frame: Instant,
}

impl Progress {
    /// Eviction order, smallest first: connections stalled mid-frame (a slow loris), the
    /// longest stalled first; then connections not read from since they opened, oldest
    /// first; then those that completed a frame, the longest idle first.
    ///
    /// A client that has just connected and sent its first request, whose bytes the server
    /// has not read yet, counts as silent: ranking it with the stalled ones by its opening
    /// time would make it the first to go once a flood of half-frames has churned every
    /// older connection out (what a busy 2-core machine does before its thread runs).
    ///
    /// A connection opened less than `grace` ago that has not completed a frame yet is the
    /// last to go: it is a client whose first request the server has not read yet (on a busy
    /// machine its thread may not have run). Ranked with the silent ones, a flood of
    /// connections that each send a frame and then idle made every fresh client the victim
    /// (142 of 610 failed at 330 connections/s).
    ///
    /// A connection answered less than [`TALKING`] ago is last of all: a client between two
    /// of its requests. Ranked with the idle ones, a flood of fresh connections (which outrank
    /// those) made it the victim between its requests on a loaded machine (1 of 200); after
    /// [`TALKING`] a connection that sent one frame and went quiet is idle again.
    fn eviction_key(&self, now: Instant, grace: Duration) -> (u8, Instant) {
        match (self.partial_since, self.frames) {
            (Some(since), _) => (0, since),
            (None, 0) if now.saturating_duration_since(self.opened) > grace => (1, self.opened),
            (None, 0) => (3, self.opened),
            (None, _) if now.saturating_duration_since(self.last_frame) > TALKING => {
                (2, self.last_frame)
            }
            (None, _) => (4, self.last_frame),
        }
    }
}

/// How long after its last answer a connection counts as talking (a client's next request
/// follows its answer within a round trip; far less than the time a flood's connection holds
/// its place, 64 places at hundreds of connections a second).
const TALKING: Duration = Duration::from_millis(50);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Shared {
    device: Device,
    config: ServerConfig,
    stop: AtomicBool,
    conns: Mutex<Vec<Arc<Conn>>>,
    stats: Arc<ServerStats>,
    /// AMS ports handed out to clients that ask the "router" for one (`ads` crate
    /// `Source::Request`); TwinCAT hands out ports from 32768 up as well.
    next_port: AtomicU16,
    /// Secure ADS handshakes under way (each on a thread of its own, at most
    /// [`MAX_HANDSHAKES`]).
    handshakes: AtomicUsize,
    /// Their sockets and deadlines: a handshake not done by [`HANDSHAKE_DEADLINE`] has its
    /// socket shut down by the notification thread (a peer dribbling a byte now and then
    /// would otherwise keep a handshake thread for minutes, each read within its timeout).
    handshake_deadlines: Mutex<Vec<(u64, Instant, TcpStream)>>,
    next_handshake: AtomicU64,
    logs: Logs,
}

/// Secure ADS handshakes at once; a connection beyond them closes the oldest handshake under
/// way (a flood of connections that never finish a handshake holds at most twice this many
/// threads, each for at most [`HANDSHAKE_DEADLINE`], and cannot keep a real client out).
pub const MAX_HANDSHAKES: usize = 16;
/// How long a connection beyond twice [`MAX_HANDSHAKES`] waits for the thread of a handshake
/// given up to end before it is refused.
pub const EVICTION_WAIT: Duration = Duration::from_millis(200);
/// Each step of a Secure ADS handshake (TLS, the TlsConnectInfo) must come within this.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(2);
/// The whole of a Secure ADS handshake must be done within this.
pub const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(5);

/// A running server; stops (and closes every connection) on [`Server::stop`] or drop.
pub struct Server {
    shared: Arc<Shared>,
    local_addr: SocketAddr,
    threads: Vec<JoinHandle<()>>,
}

impl Server {
    /// Binds and starts serving `device`.
    pub fn start(config: ServerConfig, device: Device) -> io::Result<Server> {
        // The soft descriptor limit raised before any connection comes.
        ports::descriptors();
        let listener = TcpListener::bind(config.listen)?;
        let local_addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            device,
            config,
            stop: AtomicBool::new(false),
            conns: Mutex::new(Vec::new()),
            stats: Arc::new(ServerStats::default()),
            next_port: AtomicU16::new(32905),
            handshakes: AtomicUsize::new(0),
            handshake_deadlines: Mutex::new(Vec::new()),
            next_handshake: AtomicU64::new(0),
            logs: Logs::new(),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("ads-accept".into())
                .spawn(move || accept_loop(&shared, &listener))?
        };
        let notify = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("ads-notify".into())
                .spawn(move || notify_loop(&shared))?
        };
        tracing::info!(%local_addr, ams = %AmsAddr::new(shared.device.identity.net_id, shared.device.identity.port), "ADS server listening");
        Ok(Server {
            shared,
            local_addr,
            threads: vec![accept, notify],
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn stats(&self) -> &ServerStats {
        &self.shared.stats
    }

    /// The counters, shared: for whoever outlives a borrow of the server (the PLC's start
    /// gate of `--wait-for-client`).
    pub fn shared_stats(&self) -> Arc<ServerStats> {
        Arc::clone(&self.shared.stats)
    }

    /// What a PLC task calls after each cycle to sample the data notifications (see
    /// [`Device::plc_cycle_notifications`]); without a device built
    /// [`driven_by_plc`](Device::driven_by_plc) it samples nothing.
    pub fn cycle_hook(&self) -> CycleHook {
        CycleHook(Arc::clone(&self.shared))
    }

    pub fn device(&self) -> &Device {
        &self.shared.device
    }

    /// Closes every connection (clients see the peer vanish) but keeps listening: what a
    /// PLC restart looks like from outside.
    pub fn drop_connections(&self) {
        for c in lock(&self.shared.conns).drain(..) {
            c.close();
        }
    }

    /// Stops accepting, closes every connection and joins the server threads.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        if self.threads.is_empty() {
            return;
        }
        self.shared.stop.store(true, Ordering::Relaxed);
        // The accept loop blocks in accept(): one connection wakes it to see `stop`.
        let mut wake = self.local_addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_millis(200));
        self.drop_connections();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // What a flood held back, said before the summary.
        self.shared.logs.flush(true);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.halt();
    }
}

fn accept_loop(shared: &Arc<Shared>, listener: &TcpListener) {
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok(_) if shared.stop.load(Ordering::Relaxed) => break,
            Ok((stream, peer)) => match shared.config.secure.clone() {
                None => {
                    let Some(held) = take_descriptors(shared, DESCRIPTORS_PER_CONNECTION, peer)
                    else {
                        continue;
                    };
                    make_room(shared, peer);
                    if let Err(e) = spawn_connection(shared, Link::Plain(stream), peer, held) {
                        shared
                            .logs
                            .unserved
                            .warn(|| format!("cannot serve ADS connection from {peer}: {e}"));
                    }
                }
                Some(secure) => secure_handshake(shared, secure, stream, peer),
            },
            Err(e) => {
                shared
                    .logs
                    .unserved
                    .warn(|| format!("ADS accept failed: {e}"));
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// `n` descriptors from the process's budget for a connection from `peer`; `None` (the
/// connection, dropped by the caller, closed at once): refused, counted and logged.
fn take_descriptors(shared: &Shared, n: usize, peer: SocketAddr) -> Option<Held> {
    let budget = ports::descriptors();
    let held = budget.take(n);
    if held.is_none() {
        shared.stats.refused.fetch_add(1, Ordering::Relaxed);
        shared.logs.refused.warn(|| {
            format!(
                "refused ADS connection from {peer}: the process's descriptors for connections \
                 are taken ({} of {}, RLIMIT_NOFILE {})",
                budget.held(),
                budget.budget(),
                budget.limit()
            )
        });
    }
    held
}

/// With every place taken, closes the connection that has least claim to its place (see
/// [`Progress::eviction_key`]) so that `peer` can be served.
fn make_room(shared: &Shared, peer: SocketAddr) {
    let mut conns = lock(&shared.conns);
    if conns.len() < shared.config.max_connections {
        return;
    }
    let (now, grace) = (Instant::now(), shared.config.frame_timeout);
    let victim = conns
        .iter()
        .enumerate()
        .min_by_key(|(_, c)| lock(&c.progress).eviction_key(now, grace))
        .map(|(k, _)| k);
    if let Some(k) = victim {
        let c = conns.swap_remove(k);
        c.close();
        shared.stats.evicted.fetch_add(1, Ordering::Relaxed);
        let evicted = shared.stats.evicted.load(Ordering::Relaxed);
        // Under a flood of connections, a line per eviction would flood the log too.
        if evicted.is_power_of_two() {
            tracing::warn!(%peer, open = conns.len() + 1, evicted,
                "all ADS connections taken: closed the oldest incomplete or longest idle one");
        }
    }
}

/// A Secure ADS client: the TLS handshake and its TlsConnectInfo on a thread of its own (a
/// slow client must not hold up the accept loop), then served as any other.
fn secure_handshake(
    shared: &Arc<Shared>,
    secure: Arc<SecureServer>,
    stream: TcpStream,
    peer: SocketAddr,
) {
    let Some(mut held) = take_descriptors(shared, DESCRIPTORS_PER_HANDSHAKE, peer) else {
        return;
    };
    let under_way = shared.handshakes.fetch_add(1, Ordering::AcqRel);
    if under_way >= MAX_HANDSHAKES {
        // All places taken: the oldest handshake gives its place up (a real client's takes a
        // millisecond; one that has not finished is the one to go), so that a flood of
        // connections that never finish cannot lock real clients out. Past twice the cap
        // (its threads not yet gone), the newcomer is refused.
        let oldest = lock(&shared.handshake_deadlines)
            .iter()
            .min_by_key(|(_, deadline, _)| *deadline)
            .and_then(|(_, _, socket)| socket.try_clone().ok());
        if let Some(socket) = oldest {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
        // The threads of the handshakes given up are on their way out (a millisecond each, more
        // on a loaded machine): the newcomer waits for one to go, which also holds a flood
        // back, and is refused only if none goes in time.
        let waited = Instant::now() + EVICTION_WAIT;
        while shared.handshakes.load(Ordering::Acquire) > 2 * MAX_HANDSHAKES
            && Instant::now() < waited
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        if shared.handshakes.load(Ordering::Acquire) > 2 * MAX_HANDSHAKES {
            shared.handshakes.fetch_sub(1, Ordering::AcqRel);
            shared.stats.refused.fetch_add(1, Ordering::Relaxed);
            shared.logs.refused.warn(|| {
                format!("{MAX_HANDSHAKES} Secure ADS handshakes under way: closed a new connection from {peer}")
            });
            return;
        }
    }
    let shared2 = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name(format!("ads-tls-{peer}"))
        .spawn(move || {
            let shared = shared2;
            let _ = stream.set_nodelay(true);
            let id = shared.next_handshake.fetch_add(1, Ordering::Relaxed);
            if let Ok(guard) = stream.try_clone() {
                lock(&shared.handshake_deadlines).push((
                    id,
                    Instant::now() + HANDSHAKE_DEADLINE,
                    guard,
                ));
            }
            let accepted = secure.accept(stream, HANDSHAKE_TIMEOUT);
            lock(&shared.handshake_deadlines).retain(|(k, _, _)| *k != id);
            shared.handshakes.fetch_sub(1, Ordering::AcqRel);
            match accepted {
                Ok((tls, info)) => {
                    tracing::info!(%peer, host = %info.host_name, net_id = %info.net_id,
                        mode = secure.mode_name(), "Secure ADS client accepted");
                    // A self-signed registration is a route, listed with those added over UDP
                    // (`cdpr plc` prints it, `--json` lists it).
                    if info.flags & crate::secure::connect_info::flag::ADD_REMOTE != 0 {
                        let _ = shared.config.routes.add(super::routes::Route {
                            net_id: info.net_id,
                            name: format!("{} (Secure ADS)", info.host_name),
                            host: peer.ip().to_string(),
                            temporary: false,
                            from: Some(peer),
                        });
                    }
                    // The handshake's deadline handle is gone; the connection holds one more.
                    let grown = DESCRIPTORS_PER_CONNECTION - DESCRIPTORS_PER_HANDSHAKE;
                    if !held.grow(grown) {
                        drop(held);
                        let Some(h) = take_descriptors(&shared, DESCRIPTORS_PER_CONNECTION, peer)
                        else {
                            return;
                        };
                        held = h;
                    }
                    let raw = match tls.get_ref().try_clone() {
                        Ok(r) => Arc::new(r),
                        Err(e) => {
                            shared
                                .logs
                                .unserved
                                .warn(|| format!("cannot serve ADS connection from {peer}: {e}"));
                            return;
                        }
                    };
                    if shared.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    make_room(&shared, peer);
                    let link = Link::Tls {
                        tls: Arc::new(Mutex::new(tls)),
                        raw,
                    };
                    if let Err(e) = spawn_connection(&shared, link, peer, held) {
                        shared
                            .logs
                            .unserved
                            .warn(|| format!("cannot serve ADS connection from {peer}: {e}"));
                    }
                }
                Err(e) => {
                    shared.stats.refused_tls.fetch_add(1, Ordering::Relaxed);
                    shared.logs.handshake.warn(|| format!("Secure ADS: {e}"));
                }
            }
        });
    if let Err(e) = spawned {
        shared.handshakes.fetch_sub(1, Ordering::AcqRel);
        shared
            .logs
            .unserved
            .warn(|| format!("cannot serve ADS connection from {peer}: {e}"));
    }
}

fn spawn_connection(
    shared: &Arc<Shared>,
    link: Link,
    peer: SocketAddr,
    descriptors: Held,
) -> io::Result<()> {
    let stream = link.tcp();
    stream.set_nonblocking(false)?;
    // Request/reply ping-pong: Nagle would add up to 40 ms per reply.
    stream.set_nodelay(true)?;
    // Short read timeout so the thread notices `stop`; a stuck reader cannot block writers.
    stream.set_read_timeout(Some(Duration::from_millis(100)))?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let reader = link.split()?;
    let control = stream.try_clone()?;
    let now = Instant::now();
    let conn = Arc::new(Conn {
        writer: Mutex::new(link),
        control,
        session: Mutex::new(Session::default()),
        alive: AtomicBool::new(true),
        progress: Mutex::new(Progress {
            opened: now,
            frames: 0,
            partial_since: None,
            last_frame: now,
        }),
        outbox: Mutex::new(Outbox::default()),
        ready: Condvar::new(),
        _descriptors: descriptors,
    });
    {
        let (shared, conn) = (Arc::clone(shared), Arc::clone(&conn));
        std::thread::Builder::new()
            .name(format!("ads-write-{peer}"))
            .spawn(move || {
                crate::realtime::prefer_current_thread(
                    shared.config.realtime,
                    crate::realtime::Role::Connection,
                );
                write_loop(&shared, &conn)
            })?;
    }
    lock(&shared.conns).push(Arc::clone(&conn));
    shared.stats.connections.fetch_add(1, Ordering::Relaxed);
    tracing::info!(%peer, "ADS client connected");
    let spawned = {
        let (shared, conn) = (Arc::clone(shared), Arc::clone(&conn));
        std::thread::Builder::new()
            .name(format!("ads-conn-{peer}"))
            .spawn(move || {
                crate::realtime::prefer_current_thread(shared.config.realtime, crate::realtime::Role::Connection);
                let reason = serve(&shared, &conn, reader);
                conn.close();
                lock(&shared.conns).retain(|c| !Arc::ptr_eq(c, &conn));
                match reason {
                    Closed::Peer => tracing::info!(%peer, "ADS client disconnected"),
                    Closed::Stopped => {}
                    Closed::Io(e) => tracing::info!(%peer, "ADS connection lost: {e}"),
                    Closed::NoRoute(net_id) => {
                        let n = shared.stats.no_route.fetch_add(1, Ordering::Relaxed) + 1;
                        if n.is_power_of_two() {
                            tracing::warn!(%peer, %net_id, closed = n,
                                "closing ADS connection: no route for its AMS NetId (--require-route)");
                        }
                    }
                    Closed::Malformed(e) => {
                        shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                        shared
                            .logs
                            .malformed
                            .warn(|| format!("closing ADS connection from {peer}: {e}"));
                    }
                    Closed::Silent => {
                        shared.stats.silent.fetch_add(1, Ordering::Relaxed);
                        shared.logs.silent.warn(|| {
                            format!(
                                "closing ADS connection from {peer}: no frame within {:?} of \
                                 its opening",
                                shared.config.silent_timeout
                            )
                        });
                    }
                }
            })
    };
    if let Err(e) = spawned {
        // Its writer must not wait for a connection nobody serves.
        conn.close();
        lock(&shared.conns).retain(|c| !Arc::ptr_eq(c, &conn));
        return Err(e);
    }
    Ok(())
}

enum Closed {
    Peer,
    Stopped,
    Io(io::Error),
    Malformed(String),
    /// No frame within [`ServerConfig::silent_timeout`] of the opening.
    Silent,
    /// A frame from this NetId, which has no route ([`ServerConfig::require_route`]).
    NoRoute(wire::AmsNetId),
}

/// Fills `buf` from the stream. `Ok(false)`: clean end of stream before the first byte.
/// While no byte of a frame has arrived the wait is unbounded for a connection that has
/// talked (an idle client is fine) and bounded by the silent timeout for one that has not;
/// once one has, the rest must come within the frame timeout.
fn fill(
    shared: &Shared,
    conn: &Conn,
    stream: &mut Link,
    buf: &mut [u8],
    started: bool,
) -> Result<bool, Closed> {
    let mut got = 0;
    let mut deadline = started.then(|| Instant::now() + shared.config.frame_timeout);
    while got < buf.len() {
        if shared.stop.load(Ordering::Relaxed) || !conn.alive.load(Ordering::Relaxed) {
            return Err(Closed::Stopped);
        }
        match stream.read(&mut buf[got..]) {
            Ok(0) if got == 0 && !started => return Ok(false),
            Ok(0) => {
                return Err(Closed::Malformed(format!(
                    "truncated frame: stream ended after {got} of {} bytes",
                    buf.len()
                )));
            }
            Ok(n) => {
                got += n;
                deadline.get_or_insert_with(|| {
                    let now = Instant::now();
                    lock(&conn.progress).partial_since = Some(now);
                    now + shared.config.frame_timeout
                });
            }
            Err(e) if crate::timed_out::timed_out(&e) => {
                if deadline.is_some_and(|d| Instant::now() > d) {
                    return Err(Closed::Malformed(format!(
                        "truncated frame: {got} of {} bytes within {:?}",
                        buf.len(),
                        shared.config.frame_timeout
                    )));
                }
                if deadline.is_none() && silent_too_long(shared, conn) {
                    return Err(Closed::Silent);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Closed::Io(e)),
        }
    }
    Ok(true)
}

/// Whether `conn` has sent no frame and has been open longer than the silent timeout.
fn silent_too_long(shared: &Shared, conn: &Conn) -> bool {
    let p = lock(&conn.progress);
    p.frames == 0 && p.opened.elapsed() > shared.config.silent_timeout
}

fn serve(shared: &Shared, conn: &Conn, mut stream: Link) -> Closed {
    let mut buf = Vec::with_capacity(1024);
    let framing = stream.framing();
    loop {
        // The first bytes, up to the length: the AMS/TCP header, or (Secure ADS) the AMS
        // header, behind the AMS/TCP header this loop would have had (so one decoder serves).
        let mut head = [0u8; TCP_HEADER_LEN + AMS_HEADER_LEN];
        let prefix = match framing {
            Framing::AmsTcp => &mut head[..TCP_HEADER_LEN],
            Framing::Bare => &mut head[TCP_HEADER_LEN..],
        };
        match fill(shared, conn, &mut stream, prefix, false) {
            Ok(true) => {}
            Ok(false) => return Closed::Peer,
            Err(c) => return c,
        }
        let (length, have) = match framing {
            Framing::AmsTcp => {
                let mut tcp = [0u8; TCP_HEADER_LEN];
                tcp.copy_from_slice(&head[..TCP_HEADER_LEN]);
                match wire::frame_length(&tcp, shared.config.max_frame) {
                    Ok((_, length)) => (length, TCP_HEADER_LEN),
                    Err(e) => return Closed::Malformed(e.to_string()),
                }
            }
            Framing::Bare => {
                match wire::bare_frame_length(&head[TCP_HEADER_LEN..], shared.config.max_frame) {
                    Ok(length) => {
                        head[2..TCP_HEADER_LEN].copy_from_slice(&wire::len32(length).to_le_bytes());
                        (length, TCP_HEADER_LEN + AMS_HEADER_LEN)
                    }
                    Err(e) => return Closed::Malformed(e.to_string()),
                }
            }
        };
        buf.clear();
        buf.extend_from_slice(&head[..have]);
        buf.resize(TCP_HEADER_LEN + length, 0);
        if let Err(c) = fill(shared, conn, &mut stream, &mut buf[have..], true) {
            return c;
        }
        shared.stats.frames.fetch_add(1, Ordering::Relaxed);
        {
            let mut p = lock(&conn.progress);
            p.frames += 1;
            p.partial_since = None;
            p.last_frame = Instant::now();
        }
        let reply = match wire::decode_frame(&buf, shared.config.max_frame) {
            Ok(Some((Frame::Ams { header, .. }, _)))
                if shared.config.require_route
                    // Over Secure ADS the TlsConnectInfo exchange was the route check.
                    && framing == Framing::AmsTcp
                    && !shared.config.routes.contains(header.source.net_id) =>
            {
                return Closed::NoRoute(header.source.net_id);
            }
            Ok(Some((Frame::Ams { header, payload }, _))) => {
                shared
                    .device
                    .handle_frame(&mut lock(&conn.session), &header, payload)
            }
            // A client giving its AMS port back: a TwinCAT router closes the connection then
            // (ads-client's disconnect waits for that).
            Ok(Some((Frame::Router { kind, .. }, _))) if kind == router::PORT_CLOSE => {
                return Closed::Peer;
            }
            Ok(Some((Frame::Router { kind, body }, _))) => router_frame(shared, kind, body),
            Ok(None) => return Closed::Malformed(FrameError::TooShort { length }.to_string()),
            Err(e) => return Closed::Malformed(e.to_string()),
        };
        if let Some(reply) = reply
            && let Err(e) = lock(&conn.writer).send(&reply)
        {
            return Closed::Io(e);
        }
    }
}

/// Router frames from clients that believe they talk to a TwinCAT router: a port request
/// gets the device's NetId and a fresh port; a port close ends the connection (in `serve`);
/// everything else needs no answer.
fn router_frame(shared: &Shared, kind: u16, body: &[u8]) -> Option<Vec<u8>> {
    match kind {
        router::PORT_CONNECT => {
            let port = shared.next_port.fetch_add(1, Ordering::Relaxed);
            let net_id = shared.device.identity.net_id;
            tracing::debug!(port, "router port request");
            Some(wire::encode_port_connect_reply(AmsAddr::new(net_id, port)))
        }
        _ => {
            tracing::debug!(kind, len = body.len(), "router frame ignored");
            None
        }
    }
}

/// A connection's writer: sends its queued notification frames, one at a time, until the
/// connection closes. A write that fails or blocks for [`WRITE_TIMEOUT`] closes the
/// connection (the frame is half sent: the stream is lost anyway).
fn write_loop(shared: &Shared, conn: &Conn) {
    loop {
        let frame = {
            let mut q = lock(&conn.outbox);
            loop {
                if !conn.alive.load(Ordering::Relaxed) || shared.stop.load(Ordering::Relaxed) {
                    return;
                }
                if let Some(f) = q.frames.pop_front() {
                    q.bytes -= f.len();
                    break f;
                }
                q = conn
                    .ready
                    .wait_timeout(q, Duration::from_millis(200))
                    .map_or_else(|e| e.into_inner().0, |(g, _)| g);
            }
        };
        // Bound first: the guard must be gone before `close` takes the lock again.
        let written = lock(&conn.writer).send(&frame);
        if let Err(e) = written {
            if crate::timed_out::timed_out(&e) {
                shared.stats.stuck.fetch_add(1, Ordering::Relaxed);
                shared.logs.stuck.warn(|| {
                    format!("closing an ADS connection that has not read for {WRITE_TIMEOUT:?}")
                });
            }
            conn.close();
            return;
        }
        shared.stats.notifications.fetch_add(1, Ordering::Relaxed);
    }
}

/// The wall-clock notifications: every registration when no PLC task drives the device, the
/// runtime state and symbol version ones always. Queues frames, never writes.
fn notify_loop(shared: &Shared) {
    while !shared.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let mut next = now + Duration::from_millis(5);
        let conns: Vec<Arc<Conn>> = lock(&shared.conns).clone();
        for c in conns.iter().filter(|c| c.alive.load(Ordering::Relaxed)) {
            let (frames, due) = shared.device.due_notifications(&mut lock(&c.session), now);
            if let Some(due) = due {
                next = next.min(due);
            }
            c.queue(frames, &shared.stats);
        }
        lock(&shared.handshake_deadlines).retain(|(_, deadline, socket)| {
            let late = *deadline <= now;
            if late {
                let _ = socket.shutdown(std::net::Shutdown::Both);
            }
            !late
        });
        shared.logs.flush(false);
        let wait = next.saturating_duration_since(Instant::now());
        std::thread::sleep(wait.max(Duration::from_micros(200)));
    }
}

/// What the PLC task calls after each of its cycles ([`Server::cycle_hook`]): samples every
/// connection's PLC-driven notifications right then, one frame per client with every sample
/// due, stamped with the PLC's time, and queues them for the connections' writers (it never
/// waits for a socket). A connection whose queue is full is not even sampled: its frames for
/// this cycle are dropped and counted.
#[derive(Clone)]
pub struct CycleHook(Arc<Shared>);

impl CycleHook {
    /// After PLC cycle `cycle`, whose end is `stamp` (FILETIME, PLC time).
    pub fn after_cycle(&self, cycle: u32, stamp: u64) {
        let shared = &self.0;
        if shared.device.plc_task.is_none() {
            return;
        }
        let conns: Vec<Arc<Conn>> = lock(&shared.conns).clone();
        for c in conns.iter().filter(|c| c.alive.load(Ordering::Relaxed)) {
            let mut session = lock(&c.session);
            if session.notification_count() == 0 {
                continue;
            }
            if c.outbox_full() {
                shared
                    .stats
                    .dropped_notifications
                    .fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let frames = shared
                .device
                .plc_cycle_notifications(&mut session, cycle, stamp);
            drop(session);
            c.queue(frames, &shared.stats);
        }
    }
}

impl std::fmt::Debug for CycleHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CycleHook")
    }
}

#[cfg(test)]
mod tests {
    use super::Progress;
    use std::time::{Duration, Instant};

    fn progress(opened: Instant, frames: u64, partial_since: Option<Instant>) -> Progress {
        Progress {
            opened,
            frames,
            partial_since,
            last_frame: opened,
        }
    }

    /// The order `make_room` picks its victim in: a client not read from yet outlives
    /// every half-frame, even half-frames that arrived after it connected, and every idle
    /// connection while it is fresh.
    #[test]
    fn a_client_not_yet_read_outlives_connections_stalled_mid_frame_and_idle_ones() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let silent_older = progress(at(0), 0, None);
        let client = progress(at(10), 0, None);
        let loris = progress(at(20), 0, Some(at(21)));
        let later_loris = progress(at(50), 0, Some(at(51)));
        let idle = progress(at(0), 3, None);
        let mut all = [
            ("client", client),
            ("later loris", later_loris),
            ("idle", idle),
            ("loris", loris),
            ("silent older", silent_older),
        ];
        let grace = Duration::from_secs(1);
        all.sort_by_key(|(_, p)| p.eviction_key(at(60), grace));
        let order: Vec<_> = all.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            order,
            ["loris", "later loris", "idle", "silent older", "client"]
        );
        // Silent for longer than a frame may take: no longer a fresh client.
        all.sort_by_key(|(_, p)| p.eviction_key(at(1500), grace));
        let order: Vec<_> = all.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            order,
            ["loris", "later loris", "silent older", "client", "idle"]
        );
        // A client answered a moment ago (between two requests) outlives fresh connections;
        // once quiet for longer than TALKING it is idle and goes before them.
        let answered = Progress {
            last_frame: at(40),
            ..progress(at(5), 1, None)
        };
        let mut all = [("answered", answered), ("fresh", progress(at(50), 0, None))];
        all.sort_by_key(|(_, p)| p.eviction_key(at(60), grace));
        assert_eq!(all.map(|(n, _)| n), ["fresh", "answered"]);
        all.sort_by_key(|(_, p)| p.eviction_key(at(200), grace));
        assert_eq!(all.map(|(n, _)| n), ["answered", "fresh"]);
    }
}
