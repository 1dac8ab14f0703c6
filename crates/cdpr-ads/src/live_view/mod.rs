//! The live view (`--foxglove [ADDR]` on `cdpr shadow`, `cdpr plc` and `cdpr view`): the
//! running scene and signals served over the Foxglove WebSocket protocol, so that Foxglove or
//! Lichtblick on a second screen, a tablet or a colleague's laptop follows the run without the
//! GPU or the build.
//!
//! Three parts, so that the run it shows is never slowed by it:
//! - [`LiveSender::offer`] (the face's side: a shadow's cycle, a virtual PLC's cycle, a
//!   viewer's frame): throttled to one snapshot per [`RUN_PERIOD`] by one atomic load; a taken
//!   offer copies a few numbers into a recycled buffer of a bounded queue ([`QUEUE`] buffers).
//!   A full queue drops the snapshot and counts it ([`LiveStats::dropped`]): frames are dropped,
//!   never cycles;
//! - a publisher thread builds the messages with `cdpr_core::recording::messages` (the MCAP
//!   recordings' builders: a live view and a recording of the same run carry the same
//!   messages) and logs them: `/run` ([`RunSample`](cdpr_core::recording::messages::RunSample))
//!   and `/tf` (the platform's transform) with each snapshot, ≤ 100 Hz; `/scene` (frame,
//!   pulleys, platform, cables coloured by tension) at ≤ 30 Hz ([`SCENE_PERIOD`]: what the
//!   tools draw); `/shadow/cycle` when the face sends its statistics (the shadow, once a
//!   second). A channel no client subscribed to is not encoded;
//! - the foxglove crate's `WebSocketServer` on a context of its own, with its own runtime
//!   threads, on a loopback port of its own: each client has its own outgoing queue, which
//!   drops its oldest messages when the client does not read (0.30.3 exposes no drop counter),
//!   so a stalled client slows neither the publisher nor the others;
//! - in front of it, on the public port, [`front`]: our own accepting front, because the crate
//!   caps nothing — at most [`front::MAX_VIEWERS`] viewers, an upgrade request complete within
//!   [`front::UPGRADE_DEADLINE`], a viewer that reads nothing for [`front::STALL_TIMEOUT`]
//!   closed, every connection's descriptors from the budget the ADS server shares
//!   ([`crate::ports`]).
//!
//! Log times are the wall clock (what a live timeline follows; a viewer's looping demo or a
//! shadow's re-synchronisation would jump a run's clock back); every message carries the run's
//! own time (`RunSample.t`, the transform's and the scene's stamps).
//!
//! The server speaks the foxglove crate's subprotocol `foxglove.sdk.v1`: the Foxglove app and
//! Lichtblick releases that know it (Lichtblick PR #819, December 2025) connect; an older
//! Lichtblick asks for `foxglove.websocket.v1` and is refused at the handshake.

pub mod crate_log;
mod faces;
pub mod front;
mod publisher;
mod sender;

pub use faces::{CYCLE_STATS_EVERY, EXTRA, ShadowFeed, plc_hook, shadow_cycle};
pub use sender::{LiveSender, Offered, Snapshot};

use crate::exposure::Exposure;
use cdpr_core::robot::Robot;
use foxglove::{Context, WebSocketServer, WebSocketServerHandle};
use sender::Counters;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Where `--foxglove` listens by default: loopback, Foxglove's default port (what the app's
/// "Open connection" dialog offers: `ws://localhost:8765`).
pub const DEFAULT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8765);

/// At most one snapshot (one `/run` sample, one `/tf`) per period: 100 Hz. A plot of a live
/// run at 1 kHz shows nothing a 100 Hz one does not, and the recordings keep every step.
pub const RUN_PERIOD: Duration = Duration::from_millis(10);

/// At most one `/scene` per period: the recordings' scene rate
/// ([`SCENE_RATE_HZ`](cdpr_core::recording::messages::SCENE_RATE_HZ), 30 Hz, about what
/// Foxglove and Lichtblick draw), rounded up to whole nanoseconds so that the rate is never
/// exceeded.
pub const SCENE_PERIOD: Duration =
    Duration::from_nanos((1e9 / cdpr_core::recording::messages::SCENE_RATE_HZ).ceil() as u64);

/// Snapshots the queue holds: at 100 Hz, 80 ms of publisher stall before a drop.
pub const QUEUE: usize = 8;

/// The warning for a live view on a non-loopback address (as the virtual PLC's).
pub const EXPOSURE: Exposure = Exposure {
    option: "--foxglove",
    what: "the live view",
    protocol: "the Foxglove WebSocket protocol",
    anyone_can: "watch the run (the robot, its poses, lengths and tensions)",
    otherwise: "",
};

#[derive(Debug, thiserror::Error)]
pub enum LiveViewError {
    #[error(
        "the live view cannot listen on {addr}: {source} (another `--foxglove` or a Foxglove \
         bridge holds the port? --foxglove ADDR:PORT names another, port 0 any free one)"
    )]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The foxglove crate's server, behind the front on a loopback port, did not start.
    #[error("the live view's WebSocket server cannot listen on loopback: {0}")]
    Server(#[source] foxglove::FoxgloveError),
    #[error("the live view's publisher thread did not start: {0}")]
    Thread(#[from] std::io::Error),
}

/// What a face declares when its live view starts.
#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    /// The server's name, shown by the app (`cdpr shadow`).
    pub name: String,
    /// Names of the face's extra values in each `/run` sample (`plc_cycle`, `enable`), in the
    /// channel's metadata under `extra`.
    pub extra: Vec<String>,
    /// Whether the face sends the shadow's cycle statistics (`/shadow/cycle` advertised).
    pub cycle_stats: bool,
}

/// The live view's figures so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct LiveStats {
    /// Clients connected now.
    pub clients: usize,
    /// Snapshots queued, and dropped because the queue was full.
    pub queued: u64,
    pub dropped: u64,
    /// Snapshots published (`/run` and `/tf` each), and scenes sent.
    pub published: u64,
    pub scenes: u64,
    /// Connections the front closed at once (every place taken, the descriptor budget spent),
    /// closed before their upgrade (not within [`front::UPGRADE_DEADLINE`], or to make room),
    /// and viewers closed for reading nothing for [`front::STALL_TIMEOUT`].
    pub refused: u64,
    pub timed_out: u64,
    pub stalled: u64,
}

/// A running live view: the server, the publisher thread and the faces' sender.
pub struct LiveView {
    /// The server and the channels hold it weakly: it lives as long as the view.
    _context: Arc<Context>,
    addr: SocketAddr,
    sender: LiveSender,
    counters: Arc<Counters>,
    /// Shared with the publisher thread (its log lines count the clients).
    server: Option<Arc<WebSocketServerHandle>>,
    /// The public port, forwarding to the server's loopback one.
    front: Option<front::Front>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl LiveView {
    /// Starts serving `robot`'s run on `addr` (port 0: any free one); bind errors name the
    /// address.
    pub fn start(
        addr: SocketAddr,
        robot: &Robot,
        options: LiveOptions,
    ) -> Result<LiveView, LiveViewError> {
        let context = Context::new();
        let channels = publisher::Channels::new(&context, &options);
        let front_listener = std::net::TcpListener::bind(addr)
            .map_err(|source| LiveViewError::Bind { addr, source })?;
        let mut server = WebSocketServer::new()
            .context(&context)
            .bind(Ipv4Addr::LOCALHOST.to_string(), 0);
        if !options.name.is_empty() {
            server = server.name(options.name.clone());
        }
        let server = server.start_blocking().map_err(LiveViewError::Server)?;
        let server = Arc::new(server);
        let upstream = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), server.port());
        let front = front::Front::start(front_listener, upstream)
            .map_err(|source| LiveViewError::Bind { addr, source })?;
        let local = front.local_addr();
        let counters = Arc::new(Counters::default());
        let (sender, queue) = sender::queue(QUEUE, RUN_PERIOD, Arc::clone(&counters));
        let stop = Arc::new(AtomicBool::new(false));
        let publisher = publisher::Publisher::new(robot.clone(), channels, Arc::clone(&counters));
        let thread = {
            let stop = Arc::clone(&stop);
            let server = Arc::clone(&server);
            std::thread::Builder::new()
                .name("cdpr-live-view".into())
                .spawn(move || publisher.run(queue, &stop, || server.client_count()))?
        };
        Ok(LiveView {
            _context: context,
            addr: local,
            sender,
            counters,
            server: Some(server),
            front: Some(front),
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// What to type in Foxglove's or Lichtblick's "Open connection" dialog.
    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// A sender for a face (cheap to clone).
    pub fn sender(&self) -> LiveSender {
        self.sender.clone()
    }

    pub fn stats(&self) -> LiveStats {
        let c = &self.counters;
        let f = self.front.as_ref().map(front::Front::stats);
        let front = |field: fn(&front::FrontStats) -> &std::sync::atomic::AtomicU64| {
            f.map_or(0, |f| field(f).load(Ordering::Relaxed))
        };
        LiveStats {
            clients: self.server.as_ref().map_or(0, |s| s.client_count()),
            queued: c.queued.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            published: c.published.load(Ordering::Relaxed),
            scenes: c.scenes.load(Ordering::Relaxed),
            refused: front(|f| &f.refused),
            timed_out: front(|f| &f.timed_out),
            stalled: front(|f| &f.stalled),
        }
    }

    /// Stops the publisher and the server; the figures at the end.
    pub fn stop(mut self) -> LiveStats {
        // The publisher first: it publishes what is still queued, so that the figures add
        // up (queued = published + what a full queue dropped).
        self.end_publisher();
        let stats = self.stats();
        self.shut_down();
        stats
    }

    fn end_publisher(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    fn shut_down(&mut self) {
        self.end_publisher();
        // The public port first: no viewer comes in while the server stops.
        drop(self.front.take());
        // The thread has ended: its reference to the handle is gone.
        if let Some(server) = self.server.take().and_then(Arc::into_inner) {
            // Closes the connections; the runtime's tasks end on their own.
            drop(server.stop());
        }
        // What the crate said meanwhile, counted.
        crate_log::report_held();
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.shut_down();
    }
}
