//! The live view's public port: an accepting front of ours before the foxglove crate's server,
//! which listens on a loopback port of its own.
//!
//! Why a front: foxglove 0.30's `WebSocketServer` binds its listener itself and spawns a task
//! per accepted connection with no cap and no deadline for the WebSocket upgrade (a connection
//! that sends nothing waits in the handshake for ever); it takes no listener, no filter and no
//! limit (0.30.3's builder: name, bind, TLS, capabilities, handlers, backlog size, runtime).
//! 500 idle connections stayed open for ever, and about 1 012 of them took the process's 1 024
//! descriptors from the ADS server beside it. So the front, on the public port:
//!
//! - reads each connection's upgrade request itself, which must be complete (its header's
//!   blank line) within [`UPGRADE_DEADLINE`] and [`MAX_REQUEST`] bytes, before the crate sees
//!   the connection; at most [`MAX_UPGRADING`] requests are awaited at once, and one more
//!   closes the oldest of them (a real client's request follows its connect within a
//!   millisecond: the one still waiting is the one to go), past twice that the newcomer is
//!   closed;
//! - then opens a connection to the crate's server, hands it the request and copies both ways;
//!   at most [`MAX_VIEWERS`] at once, one more is closed at once;
//! - closes a viewer that has read nothing for [`STALL_TIMEOUT`] (the crate drops a slow
//!   viewer's oldest messages but keeps a dead one's connection for ever);
//! - takes each connection's descriptors from the process's budget ([`crate::ports`]), shared
//!   with the ADS server, and refuses the connection the budget cannot take.
//!
//! What is refused or timed out is counted ([`FrontStats`]) and logged at most once a second per
//! kind, with the count held back. The copy costs a viewer a loopback hop (tens of
//! microseconds against the 10 ms between snapshots) and the process two descriptors and two
//! threads per viewer.

use crate::ports::{self, Held};
use crate::throttle::SharedThrottle;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Viewers (upgraded connections) at once: far more screens than watch one robot.
pub const MAX_VIEWERS: usize = 32;
/// Upgrade requests awaited at once (twice this many threads at most, the evicted ones
/// ending).
pub const MAX_UPGRADING: usize = 16;
/// A connection's upgrade request must be complete this long after it opened.
pub const UPGRADE_DEADLINE: Duration = Duration::from_secs(5);
/// The largest upgrade request (a browser's is under 1 KiB).
pub const MAX_REQUEST: usize = 16 * 1024;
/// A viewer whose socket takes nothing this long is closed.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Descriptors a viewer holds: its socket, the front's to the crate, the crate's.
pub const DESCRIPTORS_PER_VIEWER: usize = 3;

/// What the front closed, for the live view's figures.
#[derive(Debug, Default)]
pub struct FrontStats {
    /// Connections that became viewers.
    pub viewers: AtomicU64,
    /// Closed at once: every viewer's place taken, twice [`MAX_UPGRADING`] requests awaited, or
    /// the descriptor budget spent.
    pub refused: AtomicU64,
    /// Closed for an upgrade request not complete within [`UPGRADE_DEADLINE`] (or too long),
    /// or to make room for a newer one.
    pub timed_out: AtomicU64,
    /// Viewers closed for reading nothing for [`STALL_TIMEOUT`].
    pub stalled: AtomicU64,
}

struct Shared {
    upstream: SocketAddr,
    stop: AtomicBool,
    /// Connections whose request is awaited: id, opening time, their socket (to shut down).
    upgrading: Mutex<Vec<(u64, Instant, Arc<TcpStream>)>>,
    /// Threads awaiting a request (including evicted ones not yet ended).
    upgrading_threads: AtomicUsize,
    viewers: Mutex<Vec<Viewer>>,
    next: AtomicU64,
    stats: FrontStats,
    refused_log: SharedThrottle,
    timed_out_log: SharedThrottle,
}

/// A viewer: its id, its socket and the front's to the crate (to shut down).
type Viewer = (u64, Arc<TcpStream>, Arc<TcpStream>);

/// The running front; stops (and closes its connections) on drop.
pub(super) struct Front {
    shared: Arc<Shared>,
    addr: SocketAddr,
    accept: Option<JoinHandle<()>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Front {
    /// Serves `listener` (bound by the caller, so that a taken port is refused before the
    /// crate's server starts), forwarding to the crate's server on `upstream`.
    pub(super) fn start(listener: TcpListener, upstream: SocketAddr) -> io::Result<Front> {
        ports::descriptors();
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            upstream,
            stop: AtomicBool::new(false),
            upgrading: Mutex::new(Vec::new()),
            upgrading_threads: AtomicUsize::new(0),
            viewers: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
            stats: FrontStats::default(),
            refused_log: SharedThrottle::new("live view connections refused"),
            timed_out_log: SharedThrottle::new("live view connections closed before upgrading"),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("live-view-accept".into())
                .spawn(move || accept_loop(&shared, &listener))?
        };
        Ok(Front {
            shared,
            addr,
            accept: Some(accept),
        })
    }

    pub(super) fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub(super) fn stats(&self) -> &FrontStats {
        &self.shared.stats
    }

    fn halt(&mut self) {
        let Some(accept) = self.accept.take() else {
            return;
        };
        self.shared.stop.store(true, Ordering::Relaxed);
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_millis(200));
        let _ = accept.join();
        for (_, _, s) in lock(&self.shared.upgrading).drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        for (_, a, b) in lock(&self.shared.viewers).drain(..) {
            let _ = a.shutdown(Shutdown::Both);
            let _ = b.shutdown(Shutdown::Both);
        }
        self.shared.refused_log.flush(true);
        self.shared.timed_out_log.flush(true);
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.halt();
    }
}

fn accept_loop(shared: &Arc<Shared>, listener: &TcpListener) {
    while !shared.stop.load(Ordering::Relaxed) {
        let (stream, peer) = match listener.accept() {
            Ok(_) if shared.stop.load(Ordering::Relaxed) => break,
            Ok(accepted) => accepted,
            Err(e) => {
                shared
                    .refused_log
                    .warn(|| format!("live view: accept failed: {e}"));
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        shared.refused_log.flush(false);
        shared.timed_out_log.flush(false);
        let Some(held) = ports::descriptors().take(1) else {
            refuse(
                shared,
                peer,
                "the process's descriptors for connections are taken",
            );
            continue;
        };
        let under_way = shared.upgrading_threads.fetch_add(1, Ordering::AcqRel);
        if under_way >= MAX_UPGRADING {
            // The oldest request still awaited gives its place up.
            let oldest = {
                let mut waiting = lock(&shared.upgrading);
                let k = waiting
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, (_, opened, _))| *opened)
                    .map(|(k, _)| k);
                k.map(|k| waiting.swap_remove(k))
            };
            if let Some((_, _, socket)) = oldest {
                let _ = socket.shutdown(Shutdown::Both);
            }
            if under_way >= 2 * MAX_UPGRADING {
                shared.upgrading_threads.fetch_sub(1, Ordering::AcqRel);
                refuse(
                    shared,
                    peer,
                    &format!("{MAX_UPGRADING} upgrade requests awaited already"),
                );
                continue;
            }
        }
        let spawned = {
            let shared = Arc::clone(shared);
            std::thread::Builder::new()
                .name(format!("live-view-{peer}"))
                .spawn(move || {
                    serve(&shared, stream, peer, held);
                })
        };
        if let Err(e) = spawned {
            shared.upgrading_threads.fetch_sub(1, Ordering::AcqRel);
            refuse(shared, peer, &format!("no thread for it: {e}"));
        }
    }
}

fn refuse(shared: &Shared, peer: SocketAddr, why: &str) {
    shared.stats.refused.fetch_add(1, Ordering::Relaxed);
    shared
        .refused_log
        .warn(|| format!("live view: refused a connection from {peer}: {why}"));
}

/// One connection: its upgrade request awaited, then copied to and from the crate's server.
fn serve(shared: &Arc<Shared>, stream: TcpStream, peer: SocketAddr, mut held: Held) {
    let client = Arc::new(stream);
    let id = shared.next.fetch_add(1, Ordering::Relaxed);
    let opened = Instant::now();
    lock(&shared.upgrading).push((id, opened, Arc::clone(&client)));
    let request = read_request(&client, opened + UPGRADE_DEADLINE);
    let still_waiting = {
        let mut waiting = lock(&shared.upgrading);
        let before = waiting.len();
        waiting.retain(|(k, _, _)| *k != id);
        waiting.len() < before
    };
    shared.upgrading_threads.fetch_sub(1, Ordering::AcqRel);
    let why = match (request, still_waiting) {
        (Ok(request), true) => Ok(request),
        (_, false) => Err("closed to make room for newer connections".to_string()),
        (Err(e), true) => Err(e),
    };
    let request = match why {
        Ok(request) => request,
        Err(why) => {
            shared.stats.timed_out.fetch_add(1, Ordering::Relaxed);
            shared.timed_out_log.warn(|| {
                format!("live view: closed a connection from {peer} before its upgrade: {why}")
            });
            return;
        }
    };
    if lock(&shared.viewers).len() >= MAX_VIEWERS {
        return refuse(
            shared,
            peer,
            &format!("{MAX_VIEWERS} viewers connected already"),
        );
    }
    if !held.grow(DESCRIPTORS_PER_VIEWER - 1) {
        return refuse(
            shared,
            peer,
            "the process's descriptors for connections are taken",
        );
    }
    let upstream = match connect_upstream(shared.upstream, &request) {
        Ok(u) => Arc::new(u),
        Err(e) => return refuse(shared, peer, &format!("the live view's server: {e}")),
    };
    if client.set_read_timeout(None).is_err()
        || client.set_write_timeout(Some(STALL_TIMEOUT)).is_err()
    {
        return;
    }
    let _ = client.set_nodelay(true);
    lock(&shared.viewers).push((id, Arc::clone(&client), Arc::clone(&upstream)));
    shared.stats.viewers.fetch_add(1, Ordering::Relaxed);
    tracing::info!(%peer, "live view: viewer connected");
    let held = Arc::new(held);
    let up = {
        let (from, to, held) = (
            Arc::clone(&client),
            Arc::clone(&upstream),
            Arc::clone(&held),
        );
        std::thread::Builder::new()
            .name(format!("live-view-up-{peer}"))
            .spawn(move || {
                let _ = copy(&from, &to);
                let _ = to.shutdown(Shutdown::Write);
                drop(held);
            })
    };
    if up.is_ok() {
        match copy(&upstream, &client) {
            Err(Copy::Write(e)) if crate::timed_out::timed_out(&e) => {
                shared.stats.stalled.fetch_add(1, Ordering::Relaxed);
                shared.timed_out_log.warn(|| {
                    format!(
                        "live view: closed viewer {peer}, which read nothing for {STALL_TIMEOUT:?}"
                    )
                });
            }
            _ => tracing::info!(%peer, "live view: viewer disconnected"),
        }
    }
    let _ = client.shutdown(Shutdown::Both);
    let _ = upstream.shutdown(Shutdown::Both);
    lock(&shared.viewers).retain(|(k, _, _)| *k != id);
}

/// Reads an HTTP request's header (up to its blank line) by `deadline`; what came.
fn read_request(client: &TcpStream, deadline: Instant) -> Result<Vec<u8>, String> {
    let mut request = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "no complete upgrade request within {UPGRADE_DEADLINE:?} ({} bytes)",
                request.len()
            ));
        }
        client
            .set_read_timeout(Some(left))
            .map_err(|e| e.to_string())?;
        match (&*client).read(&mut chunk) {
            Ok(0) => return Err("closed before its upgrade request was complete".into()),
            Ok(n) => {
                // The blank line may straddle two reads: look from 3 bytes before the new ones.
                let from = request.len().saturating_sub(3);
                request.extend_from_slice(&chunk[..n]);
                if request[from..].windows(4).any(|w| w == b"\r\n\r\n") {
                    return Ok(request);
                }
                if request.len() > MAX_REQUEST {
                    return Err(format!("an upgrade request over {MAX_REQUEST} bytes"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if crate::timed_out::timed_out(&e) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn connect_upstream(upstream: SocketAddr, request: &[u8]) -> io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&upstream, Duration::from_secs(1))?;
    s.set_nodelay(true)?;
    // The crate reads whatever comes; a write to it blocked this long means it is gone.
    s.set_write_timeout(Some(STALL_TIMEOUT))?;
    (&s).write_all(request)?;
    Ok(s)
}

enum Copy {
    Read,
    Write(io::Error),
}

/// Copies `from` to `to` until either ends.
fn copy(from: &TcpStream, to: &TcpStream) -> Result<(), Copy> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match (&*from).read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(Copy::Read),
        };
        (&*to).write_all(&buf[..n]).map_err(Copy::Write)?;
    }
}
