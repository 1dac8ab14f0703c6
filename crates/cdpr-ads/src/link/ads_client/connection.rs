//! One AMS/TCP connection of the shadow's client, on the project's own wire codec
//! ([`crate::wire`]) rather than the `ads` crate's client, whose reader thread trusts the
//! lengths a peer sends (an AMS/TCP length of 0xFFFFFFF0 aborts the process allocating it, a
//! length of 10 panics the thread) and queues notifications without bound.
//!
//! Here, on the caller's thread, with no thread of its own:
//! - every frame's length is checked against [`FRAME_LIMIT`] as soon as its 6-byte AMS/TCP
//!   header is in, before a byte of it is kept; at most one frame and one read's worth of the
//!   next are ever buffered;
//! - every reply is checked against its request (command, invoke id, the data length asked
//!   for); a late reply to a request that timed out is recognised by its invoke id and
//!   dropped, so the connection survives it;
//! - device notifications are kept per time stamp in a queue of at most
//!   [`NOTIFICATION_BUDGET`] bytes (the oldest dropped and counted beyond it), and only for
//!   handles this connection registered;
//! - every wait has a deadline: the TCP connect, the router's port request, each reply.

use crate::link::interrupt::{self, Interrupt, Watch};
use crate::secure::{SecureClient, SecureError};
use crate::wire::{
    self, AMS_HEADER_LEN, AmsAddr, AmsHeader, AmsNetId, Frame, Framing, MAX_AMS_LEN,
    NotificationParams, ReplyError, Request, cmd, flags, router,
};
use openssl::ssl::SslStream;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Largest AMS frame (header + payload) accepted from a PLC: the 64 KiB the server side also
/// holds to, plus the AMS header. Nothing the shadow asks for comes near it.
pub const FRAME_LIMIT: usize = MAX_AMS_LEN + AMS_HEADER_LEN;

/// Most bytes of notification samples kept unread: at 10 ms PLC cycles and the shipped
/// robots' ~200 bytes a cycle, minutes of samples; beyond it the oldest are dropped.
pub const NOTIFICATION_BUDGET: usize = 4 << 20;

/// The AMS port the client uses with [`Source::Auto`] (what the `ads` crate and pyads use).
pub const AUTO_SOURCE_PORT: u16 = 58913;

/// Which AMS source address the connection uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The local IPv4 address + ".1.1", port 58913 (the route on the PLC must name it).
    Auto,
    /// Ask the router on the other end for a port (a TwinCAT router on 127.0.0.1 wants it).
    Request,
    /// A fixed address.
    Fixed(AmsAddr),
}

/// How a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    /// The device answered with an ADS error code.
    #[error("ADS error {:#x} ({})", .0, wire::error::text(*.0))]
    Ads(u32),
    /// No reply within the timeout; the connection is still in step (a late reply is
    /// recognised and dropped).
    #[error("no reply within {0:?}")]
    Timeout(Duration),
    /// The peer closed the connection, or the socket failed.
    #[error("{0}")]
    Closed(String),
    /// The peer sent something that is not a reply to this request.
    #[error("the PLC sent {0}")]
    Garbled(String),
    /// A stop was asked for ([`Interrupt`]): the socket was shut down under the wait.
    #[error("interrupted (Ctrl-C or a signal)")]
    Interrupted,
}

impl From<ReplyError> for ConnError {
    fn from(e: ReplyError) -> ConnError {
        ConnError::Garbled(e.to_string())
    }
}

/// Why no connection could be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Io(io::Error),
    #[error("{0}")]
    Router(String),
    /// Secure ADS: the TLS handshake or the TlsConnectInfo failed.
    #[error("{0}")]
    Secure(SecureError),
}

/// The byte stream under a connection: plain TCP, or TLS over it (Secure ADS).
enum Stream {
    Plain(TcpStream),
    Tls(Box<SslStream<TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref(),
        }
    }

    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.write_all(b),
            Stream::Tls(s) => s.write_all(b),
        }
    }

    /// Reads what has arrived (OpenSSL returns a record's plaintext, or `WouldBlock` while a
    /// record is incomplete).
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(b),
            Stream::Tls(s) => s.read(b),
        }
    }
}

/// One time stamp of notification samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamped {
    /// Windows FILETIME of the PLC: 100 ns ticks since 1601-01-01 UTC.
    pub filetime: u64,
    /// (notification handle, data), as the PLC sent them.
    pub samples: Vec<(u32, Vec<u8>)>,
}

impl Stamped {
    fn bytes(&self) -> usize {
        self.samples.iter().map(|(_, d)| d.len() + 8).sum::<usize>() + 12
    }
}

/// An owned frame, out of the receive buffer.
enum Received {
    Ams { header: AmsHeader, payload: Vec<u8> },
    Router { kind: u16, body: Vec<u8> },
}

/// What the notification queue has seen.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct NotificationCounts {
    /// Stamps queued.
    pub received: u64,
    /// Stamps dropped, oldest first, because the queue was over its budget.
    pub dropped: u64,
    /// Samples for handles this connection did not register (ignored).
    pub unsolicited: u64,
}

/// One AMS/TCP connection to an ADS device (see the module docs).
pub struct Connection {
    stream: Stream,
    /// With the AMS/TCP header (plain ADS) or without (Secure ADS).
    framing: Framing,
    /// What the user should hear once about the Secure ADS session (a route registered, a
    /// certificate pinned or created).
    notes: Vec<String>,
    target: AmsAddr,
    source: AmsAddr,
    port_opened: bool,
    timeout: Duration,
    invoke: u32,
    /// Bytes received and not yet framed.
    pending: Vec<u8>,
    registered: Vec<u32>,
    queue: VecDeque<Stamped>,
    queued_bytes: usize,
    counts: NotificationCounts,
    /// Shuts the socket down when a stop is asked for, so that no wait outlives it.
    interrupt: Interrupt,
    _watch: Option<Watch>,
}

impl Connection {
    /// Opens a TCP connection to `endpoint` (`host:port`) and sets up the AMS source address;
    /// every step within `timeout`. With `secure`, Secure ADS: the TLS handshake and the
    /// TlsConnectInfo exchange first, then frames without the AMS/TCP header; a `target`
    /// NetId of 0.0.0.0.0.0 is then taken from the PLC's TlsConnectInfo answer.
    pub fn open(
        endpoint: &str,
        target: AmsAddr,
        source: Source,
        timeout: Duration,
        secure: Option<&SecureClient>,
    ) -> Result<Connection, OpenError> {
        Connection::open_interruptible(endpoint, target, source, timeout, secure, &Interrupt::new())
    }

    /// [`Connection::open`], every wait of it and of the connection ended within a fraction
    /// of a second when `interrupt` is raised ([`ConnError::Interrupted`], or an I/O error of
    /// kind `Interrupted` while opening).
    pub fn open_interruptible(
        endpoint: &str,
        target: AmsAddr,
        source: Source,
        timeout: Duration,
        secure: Option<&SecureClient>,
        interrupt: &Interrupt,
    ) -> Result<Connection, OpenError> {
        let addr: SocketAddr = endpoint
            .to_socket_addrs()
            .map_err(OpenError::Io)?
            .next()
            .ok_or_else(|| {
                OpenError::Io(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("`{endpoint}` resolves to no address"),
                ))
            })?;
        // Before the TCP connection: the PLC times its handshake from it.
        let made = secure
            .map(SecureClient::make_own_certificate)
            .transpose()
            .map_err(OpenError::Secure)?
            .flatten();
        let stream = interrupt::connect(addr, timeout, interrupt).map_err(OpenError::Io)?;
        // Watched before the TLS handshake, whose reads a stop must end too.
        let watch = interrupt.watch(&stream);
        stream.set_nodelay(true).map_err(OpenError::Io)?;
        stream
            .set_write_timeout(Some(timeout))
            .map_err(OpenError::Io)?;
        let local = stream.local_addr().map_err(OpenError::Io)?;
        let auto = match local.ip() {
            IpAddr::V4(ip) => AmsAddr::new(AmsNetId::from_ipv4(ip), AUTO_SOURCE_PORT),
            IpAddr::V6(_) => AmsAddr::new(AmsNetId::LOCAL, AUTO_SOURCE_PORT),
        };
        let (stream, framing, target, notes) = match secure {
            None => (Stream::Plain(stream), Framing::AmsTcp, target, Vec::new()),
            Some(secure) => {
                let own = match source {
                    Source::Fixed(a) => a,
                    Source::Auto => auto,
                    Source::Request => {
                        return Err(OpenError::Router(
                            "`--source request` asks a router for a port over plain ADS; Secure                              ADS has no router frames: use `auto` or NETID:PORT"
                                .into(),
                        ));
                    }
                };
                let session = secure
                    .connect(stream, endpoint, own.net_id, timeout)
                    .map_err(|e| match interrupt.raised() {
                        true => OpenError::Io(io::Error::new(
                            io::ErrorKind::Interrupted,
                            "interrupted (Ctrl-C or a signal)",
                        )),
                        false => OpenError::Secure(e),
                    })?;
                let target = if target.net_id == AmsNetId::UNSPECIFIED {
                    AmsAddr::new(session.plc_net_id, target.port)
                } else {
                    target
                };
                (
                    Stream::Tls(Box::new(session.stream)),
                    Framing::Bare,
                    target,
                    made.into_iter().chain(session.notes).collect(),
                )
            }
        };
        let mut c = Connection {
            stream,
            framing,
            notes,
            target,
            source: AmsAddr::new(AmsNetId::LOCAL, AUTO_SOURCE_PORT),
            port_opened: false,
            timeout,
            invoke: 0,
            pending: Vec::new(),
            registered: Vec::new(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            counts: NotificationCounts::default(),
            interrupt: interrupt.clone(),
            _watch: watch,
        };
        c.source = match source {
            Source::Fixed(a) => a,
            Source::Auto => auto,
            Source::Request => {
                let a = c.request_port(endpoint)?;
                c.port_opened = true;
                a
            }
        };
        Ok(c)
    }

    /// The router's port request (AMS/TCP kind 0x1000): the NetId and port to use.
    fn request_port(&mut self, endpoint: &str) -> Result<AmsAddr, OpenError> {
        let ask = [0x00, 0x10, 2, 0, 0, 0, 0, 0];
        self.stream.write_all(&ask).map_err(OpenError::Io)?;
        let deadline = Some(Instant::now() + self.timeout);
        loop {
            let frame = self.next_frame(deadline).map_err(|e| {
                if let ConnError::Interrupted = e {
                    return OpenError::Io(io::Error::new(
                        io::ErrorKind::Interrupted,
                        "interrupted (Ctrl-C or a signal)",
                    ));
                }
                OpenError::Router(match e {
                    ConnError::Timeout(t) => format!(
                        "{endpoint} accepted the connection but did not answer the AMS port \
                         request within {t:?}: not a TwinCAT router? (`--source auto` or a \
                         fixed `--source` address skips the request)"
                    ),
                    other => format!("the AMS port request to {endpoint}: {other}"),
                })
            })?;
            match frame {
                Received::Router { kind, body } if kind == router::PORT_CONNECT => {
                    return match body.as_slice() {
                        &[a, b, c, d, e, f, lo, hi] => Ok(AmsAddr::new(
                            AmsNetId([a, b, c, d, e, f]),
                            u16::from_le_bytes([lo, hi]),
                        )),
                        other => Err(OpenError::Router(format!(
                            "the router at {endpoint} answered the port request with {} bytes, \
                             8 expected",
                            other.len()
                        ))),
                    };
                }
                _ => continue,
            }
        }
    }

    /// This connection's own AMS address (what a route on the PLC must name).
    pub fn source(&self) -> AmsAddr {
        self.source
    }

    /// The PLC's AMS address (its NetId from the Secure ADS answer when asked for).
    pub fn target(&self) -> AmsAddr {
        self.target
    }

    /// What the Secure ADS session has to tell (once: taken).
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// What the notification queue has seen.
    pub fn notification_counts(&self) -> NotificationCounts {
        self.counts
    }

    /// Sends one request and waits for its reply's payload (an ADS error in the AMS header is
    /// [`ConnError::Ads`]). Notifications arriving meanwhile are queued; anything else that is
    /// not this request's reply (a late reply to one that timed out) is dropped.
    fn request(&mut self, req: &Request) -> Result<Vec<u8>, ConnError> {
        self.invoke = self.invoke.wrapping_add(1);
        let header = AmsHeader {
            target: self.target,
            source: self.source,
            command: req.command(),
            state_flags: flags::REQUEST,
            data_length: 0,
            error_code: 0,
            invoke_id: self.invoke,
        };
        let frame = wire::encode_frame(&header, &wire::encode_request(req));
        self.stream
            .write_all(self.framing.outgoing(&frame))
            .map_err(|e| {
                if self.interrupt.raised() {
                    ConnError::Interrupted
                } else if crate::timed_out::timed_out(&e) {
                    ConnError::Timeout(self.timeout)
                } else {
                    ConnError::Closed(format!("sending a request: {e}"))
                }
            })?;
        let deadline = Some(Instant::now() + self.timeout);
        loop {
            match self.next_frame(deadline)? {
                Received::Ams { header, payload } if header.is_response() => {
                    if header.invoke_id != self.invoke || header.command != req.command() {
                        tracing::debug!(
                            invoke = header.invoke_id,
                            "a reply to an earlier request, dropped"
                        );
                        continue;
                    }
                    if header.error_code != 0 {
                        return Err(ConnError::Ads(header.error_code));
                    }
                    return Ok(payload);
                }
                Received::Ams { header, payload } if header.command == cmd::NOTIFICATION => {
                    self.queue_notification(&payload)?;
                }
                _ => {}
            }
        }
    }

    /// Read: at most `length` bytes of (group, offset).
    pub fn read(
        &mut self,
        index_group: u32,
        index_offset: u32,
        length: usize,
    ) -> Result<Vec<u8>, ConnError> {
        let payload = self.request(&Request::Read {
            index_group,
            index_offset,
            length: wire::len32(length),
        })?;
        Ok(wire::decode_data(&payload, length)?
            .map_err(ConnError::Ads)?
            .to_vec())
    }

    /// Write `data` to (group, offset).
    pub fn write(
        &mut self,
        index_group: u32,
        index_offset: u32,
        data: &[u8],
    ) -> Result<(), ConnError> {
        let payload = self.request(&Request::Write {
            index_group,
            index_offset,
            data,
        })?;
        match wire::decode_status(&payload)? {
            0 => Ok(()),
            code => Err(ConnError::Ads(code)),
        }
    }

    /// ReadWrite: send `data`, get at most `read_length` bytes back.
    pub fn write_read(
        &mut self,
        index_group: u32,
        index_offset: u32,
        data: &[u8],
        read_length: usize,
    ) -> Result<Vec<u8>, ConnError> {
        let payload = self.request(&Request::ReadWrite {
            index_group,
            index_offset,
            read_length: wire::len32(read_length),
            data,
        })?;
        Ok(wire::decode_data(&payload, read_length)?
            .map_err(ConnError::Ads)?
            .to_vec())
    }

    /// ReadState: the device's ADS state (`wire::ads_state`: RUN 5, STOP 6, …) and its device
    /// state.
    pub fn read_state(&mut self) -> Result<(u16, u16), ConnError> {
        let payload = self.request(&Request::ReadState)?;
        match *payload.as_slice() {
            [r0, r1, r2, r3, ..] if u32::from_le_bytes([r0, r1, r2, r3]) != 0 => {
                Err(ConnError::Ads(u32::from_le_bytes([r0, r1, r2, r3])))
            }
            [_, _, _, _, a0, a1, d0, d1] => {
                Ok((u16::from_le_bytes([a0, a1]), u16::from_le_bytes([d0, d1])))
            }
            _ => Err(ConnError::Garbled(format!(
                "a ReadState reply of {} bytes, 8 expected",
                payload.len()
            ))),
        }
    }

    /// AddDeviceNotification: the handle its samples will carry.
    pub fn add_notification(&mut self, params: NotificationParams) -> Result<u32, ConnError> {
        let payload = self.request(&Request::AddNotification(params))?;
        let handle = wire::decode_notification_handle(&payload)?.map_err(ConnError::Ads)?;
        self.registered.push(handle);
        Ok(handle)
    }

    /// DeleteDeviceNotification; its samples still queued are dropped.
    pub fn delete_notification(&mut self, handle: u32) -> Result<(), ConnError> {
        self.registered.retain(|&h| h != handle);
        for s in &mut self.queue {
            s.samples.retain(|(h, _)| *h != handle);
        }
        let payload = self.request(&Request::DeleteNotification { handle })?;
        match wire::decode_status(&payload)? {
            0 => Ok(()),
            code => Err(ConnError::Ads(code)),
        }
    }

    /// The oldest queued stamp; when none is queued, waits up to `wait` for one.
    pub fn next_stamp(&mut self, wait: Duration) -> Result<Option<Stamped>, ConnError> {
        if self.queue.is_empty() {
            self.receive_notifications(wait)?;
        }
        let s = self.queue.pop_front();
        if let Some(s) = &s {
            self.queued_bytes = self.queued_bytes.saturating_sub(s.bytes());
        }
        Ok(s)
    }

    /// Waits until bytes arrive or `until`, whichever is first, to the microsecond (not a read
    /// timeout's scheduler tick): true when a stamp is queued or something may be read.
    pub fn wait_readable(&mut self, until: Instant) -> bool {
        if !self.queue.is_empty()
            || !matches!(self.framing.decode(&self.pending, FRAME_LIMIT), Ok(None))
        {
            return true;
        }
        if let Stream::Tls(s) = &self.stream
            && s.ssl().pending() > 0
        {
            return true;
        }
        super::readable::wait(self.stream.tcp(), until)
    }

    /// Takes in whatever frames have arrived (waiting up to `wait` for the first).
    fn receive_notifications(&mut self, wait: Duration) -> Result<(), ConnError> {
        // A poll (`wait` zero) takes what the socket holds without waiting: a socket timeout
        // is rounded up to the kernel's tick (4 ms at HZ=250), far longer than a poll may take.
        let deadline = (!wait.is_zero()).then(|| Instant::now() + wait);
        let before = self.counts.received;
        loop {
            let frame = match self.next_frame(deadline) {
                Ok(f) => f,
                Err(ConnError::Timeout(_)) => return Ok(()),
                Err(e) => return Err(e),
            };
            if let Received::Ams { header, payload } = frame
                && header.command == cmd::NOTIFICATION
                && !header.is_response()
            {
                self.queue_notification(&payload)?;
            }
            // Once something came, take only what is already here.
            if self.counts.received > before && self.pending.len() < self.framing.header_len() {
                return Ok(());
            }
        }
    }

    fn queue_notification(&mut self, payload: &[u8]) -> Result<(), ConnError> {
        for stamp in wire::decode_notification(payload)? {
            let mut samples = Vec::with_capacity(stamp.samples.len());
            for (handle, data) in stamp.samples {
                if self.registered.contains(&handle) {
                    samples.push((handle, data.to_vec()));
                } else {
                    self.counts.unsolicited += 1;
                }
            }
            if samples.is_empty() {
                continue;
            }
            let s = Stamped {
                filetime: stamp.filetime,
                samples,
            };
            self.queued_bytes += s.bytes();
            self.queue.push_back(s);
            self.counts.received += 1;
            while self.queued_bytes > NOTIFICATION_BUDGET {
                let Some(old) = self.queue.pop_front() else {
                    break;
                };
                self.queued_bytes = self.queued_bytes.saturating_sub(old.bytes());
                self.counts.dropped += 1;
            }
        }
        Ok(())
    }

    /// The next complete frame, reading until `deadline` (`None`: only what has arrived).
    /// The frame's length is checked against [`FRAME_LIMIT`] before its body is waited for.
    fn next_frame(&mut self, deadline: Option<Instant>) -> Result<Received, ConnError> {
        loop {
            match self.framing.decode(&self.pending, FRAME_LIMIT) {
                Ok(Some((frame, used))) => {
                    let owned = match frame {
                        Frame::Ams { header, payload } => Received::Ams {
                            header,
                            payload: payload.to_vec(),
                        },
                        Frame::Router { kind, body } => Received::Router {
                            kind,
                            body: body.to_vec(),
                        },
                    };
                    self.pending.drain(..used);
                    return Ok(owned);
                }
                Ok(None) => {}
                Err(e) => return Err(ConnError::Garbled(format!("a broken frame: {e}"))),
            }
            self.fill(deadline)?;
        }
    }

    /// Reads what has arrived into the pending bytes, waiting until `deadline` at most
    /// (`None`: not at all).
    fn fill(&mut self, deadline: Option<Instant>) -> Result<(), ConnError> {
        let broken = |e: io::Error| ConnError::Closed(e.to_string());
        match deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ConnError::Timeout(self.timeout));
                }
                self.stream
                    .tcp()
                    .set_read_timeout(Some(left.max(Duration::from_micros(10))))
                    .map_err(broken)?;
            }
            None => self.stream.tcp().set_nonblocking(true).map_err(broken)?,
        }
        let mut chunk = [0u8; 16 * 1024];
        let got = self.stream.read(&mut chunk);
        if self.interrupt.raised() {
            return Err(ConnError::Interrupted);
        }
        if deadline.is_none() {
            self.stream.tcp().set_nonblocking(false).map_err(broken)?;
        }
        match got {
            Ok(0) => Err(ConnError::Closed(
                "the PLC closed the connection".to_string(),
            )),
            Ok(n) => {
                self.pending.extend_from_slice(&chunk[..n]);
                Ok(())
            }
            Err(e) if crate::timed_out::timed_out(&e) => Err(ConnError::Timeout(self.timeout)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(ConnError::Closed(e.to_string())),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if self.port_opened && self.framing == Framing::AmsTcp {
            // Port close (AMS/TCP kind 0x0001) with the port given: best effort.
            let [lo, hi] = self.source.port.to_le_bytes();
            let _ = self.stream.write_all(&[0x01, 0x00, 2, 0, 0, 0, lo, hi]);
        }
    }
}
