//! The virtual PLC's side of the ADS UDP service (port 48899): it answers an identify with its
//! NetId, host name, TwinCAT and OS versions, and an add-route by checking the user name and
//! password against its own ([`UdpConfig`]) and recording the route ([`RouteTable`]), as a
//! TwinCAT system does. A wrong user or password gets TwinCAT's answer, status 0x704
//! (ADSERR_DEVICE_INVALIDACCESS: what TwinCAT 3 replies, pyads issue #460).
//!
//! Wrong credentials are answered later the more often a peer (an IP address) gave them in a
//! row: the n-th refusal waits [`FIRST_REFUSAL_DELAY`] · 2ⁿ⁻¹ (at most [`MAX_REFUSAL_DELAY`]),
//! and the peer's add-routes are not looked at until it went out, so a password guesser gets
//! a handful of answers a minute instead of thousands a second; a right password resets the
//! peer, and other peers are answered at once meanwhile (nothing sleeps: replies wait in a
//! queue).
//!
//! An identify is answered only when it is well formed (every byte of the datagram in its
//! items) and with no more than a client needs: the NetId (the header's source), the host
//! name and the TwinCAT version, 46 bytes for a bare 24-byte request. The OS version and the
//! certificate's fingerprint come only when the request asks for them by carrying their tags
//! with at least as many bytes as the answer takes ([`udp::OS_VERSION_ROOM`],
//! [`udp::FINGERPRINT_ROOM`]: what `cdpr discover` sends), so that a forged source address gets
//! back less than twice what was sent.
//!
//! One thread, one fixed receive buffer ([`MAX_DATAGRAM`] and one byte, so that a longer
//! datagram is seen cut and refused); a datagram that does not decode, a reply (never
//! answered, so two responders cannot ping-pong) or an unknown service gets no answer and a
//! log line — one per power of two of them, so a flood cannot flood the log.

use super::routes::{Route, RouteTable};
use crate::wire::error::{INVALID_ACCESS, INVALID_PARAMETER, NO_ERROR, NO_MEMORY};
use crate::wire::udp::{self, MAX_DATAGRAM, OsVersion, REPLY, TcVersion, UdpMessage, service, tag};
use crate::wire::{AmsAddr, AmsNetId};
use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The AMS port TwinCAT's system service answers the UDP service from.
pub const SYSTEM_SERVICE_PORT: u16 = 10000;
/// TwinCAT's factory user name for adding routes.
pub const DEFAULT_USER: &str = "Administrator";
/// TwinCAT's factory password (Windows images; TwinCAT/BSD asks for one at install).
pub const DEFAULT_PASSWORD: &str = "1";
/// The UDP socket's receive buffer asked for, bytes: room for a burst of thousands of
/// datagrams.
const RECEIVE_BUFFER_BYTES: usize = 4 << 20;

/// How long the first refusal of wrong credentials from a peer waits; each further one in a
/// row waits twice as long as the one before.
pub const FIRST_REFUSAL_DELAY: Duration = Duration::from_millis(100);
/// The longest a refusal waits (reached at the tenth wrong password in a row).
pub const MAX_REFUSAL_DELAY: Duration = Duration::from_secs(30);
/// A peer's wrong passwords are forgotten after this long without one.
const FORGET_STRIKES: Duration = Duration::from_secs(600);
/// Peers whose wrong passwords are remembered (the one longest quiet is forgotten first).
const MAX_PEERS: usize = 4096;
/// How often the serving thread looks at its stop flag.
const POLL: Duration = Duration::from_millis(100);

/// What the responder answers with.
#[derive(Debug, Clone)]
pub struct UdpConfig {
    pub listen: SocketAddr,
    /// User name and password an add-route must carry.
    pub user: String,
    pub password: String,
    /// The host name an identify reports.
    pub host_name: String,
    pub tc_version: TcVersion,
    pub os: OsVersion,
    /// The SHA-256 fingerprint of the Secure ADS certificate, as TwinCAT 3.1.4024+ sends it
    /// in an identify (`cdpr discover` shows it, `cdpr route add --secure ssc` compares it).
    pub fingerprint: Option<String>,
}

impl UdpConfig {
    /// TwinCAT's factory credentials, TwinCAT 3.1.4024, the host name `cdpr-vplc`.
    pub fn new(listen: SocketAddr) -> UdpConfig {
        UdpConfig {
            listen,
            user: DEFAULT_USER.into(),
            password: DEFAULT_PASSWORD.into(),
            host_name: "cdpr-vplc".into(),
            tc_version: TcVersion {
                major: 3,
                minor: 1,
                build: 4024,
            },
            os: OsVersion {
                major: 0,
                minor: 1,
                build: 0,
                platform: 0,
                text: format!("cdpr virtual PLC ({})", std::env::consts::OS),
            },
            fingerprint: None,
        }
    }
}

/// Counters for tests and the exit summary.
#[derive(Debug, Default)]
pub struct UdpStats {
    pub identifies: AtomicU64,
    pub routes_added: AtomicU64,
    /// Add-routes refused (wrong credentials, no NetId, table full).
    pub routes_refused: AtomicU64,
    /// Add-routes not looked at: their peer's last wrong password was not answered yet.
    pub routes_throttled: AtomicU64,
    /// Datagrams ignored: not the service's, replies, unknown services.
    pub ignored: AtomicU64,
}

/// A running responder; stops on [`UdpResponder::stop`] or drop.
pub struct UdpResponder {
    local_addr: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<UdpStats>,
    thread: Option<JoinHandle<()>>,
}

impl UdpResponder {
    /// Binds `config.listen` and answers as `net_id`, adding routes to `routes`.
    pub fn start(
        config: UdpConfig,
        net_id: AmsNetId,
        routes: RouteTable,
    ) -> io::Result<UdpResponder> {
        let socket = UdpSocket::bind(config.listen)?;
        // A receive buffer a burst cannot fill: the kernel's default (208 KiB, a few hundred
        // small datagrams) drops whatever arrives behind a guesser's burst, other peers'
        // requests included, before this thread can tell them apart. Best effort: the
        // kernel caps it at its rmem_max.
        let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(RECEIVE_BUFFER_BYTES);
        // Short, so that the thread notices `stop`.
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        let local_addr = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(UdpStats::default());
        let mut responder = Responder {
            config,
            me: AmsAddr::new(net_id, SYSTEM_SERVICE_PORT),
            routes,
            stats: Arc::clone(&stats),
            strikes: Strikes::default(),
        };
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("ads-udp".into())
                .spawn(move || responder.serve(&socket, &stop))?
        };
        tracing::info!(%local_addr, "ADS UDP service (identify, add route) listening");
        Ok(UdpResponder {
            local_addr,
            stop,
            stats,
            thread: Some(thread),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn stats(&self) -> &UdpStats {
        &self.stats
    }

    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for UdpResponder {
    fn drop(&mut self) {
        self.halt();
    }
}

struct Responder {
    config: UdpConfig,
    me: AmsAddr,
    routes: RouteTable,
    stats: Arc<UdpStats>,
    strikes: Strikes,
}

/// A reply and when it goes out.
#[derive(Debug)]
struct Outgoing {
    due: Instant,
    bytes: Vec<u8>,
}

/// The wrong passwords of each peer, in a row.
#[derive(Default)]
struct Strikes {
    peers: HashMap<IpAddr, Strike>,
}

#[derive(Debug, Clone, Copy)]
struct Strike {
    /// Wrong passwords in a row.
    count: u32,
    /// The last one's answer goes out then; the peer's add-routes are ignored until it has.
    quiet_until: Instant,
}

impl Strikes {
    /// Whether `peer`'s add-routes are ignored at `now`.
    fn quiet(&self, peer: IpAddr, now: Instant) -> bool {
        self.peers.get(&peer).is_some_and(|s| now < s.quiet_until)
    }

    /// One more wrong password from `peer` at `now`: how long its refusal waits.
    fn wrong(&mut self, peer: IpAddr, now: Instant) -> Duration {
        if self.peers.len() >= MAX_PEERS && !self.peers.contains_key(&peer) {
            self.peers
                .retain(|_, s| now < s.quiet_until + FORGET_STRIKES);
            if self.peers.len() >= MAX_PEERS
                && let Some(oldest) = self
                    .peers
                    .iter()
                    .min_by_key(|(_, s)| s.quiet_until)
                    .map(|(ip, _)| *ip)
            {
                self.peers.remove(&oldest);
            }
        }
        let strike = self.peers.entry(peer).or_insert(Strike {
            count: 0,
            quiet_until: now,
        });
        if now >= strike.quiet_until + FORGET_STRIKES {
            strike.count = 0;
        }
        strike.count = strike.count.saturating_add(1);
        let delay = refusal_delay(strike.count);
        strike.quiet_until = now + delay;
        delay
    }

    /// A right password: `peer` starts afresh.
    fn right(&mut self, peer: IpAddr) {
        self.peers.remove(&peer);
    }
}

/// How long the `n`-th wrong password in a row waits for its answer (`n` ≥ 1).
pub fn refusal_delay(n: u32) -> Duration {
    let doublings = n.saturating_sub(1).min(20);
    FIRST_REFUSAL_DELAY
        .saturating_mul(1 << doublings)
        .min(MAX_REFUSAL_DELAY)
}

impl Responder {
    fn serve(&mut self, socket: &UdpSocket, stop: &AtomicBool) {
        // One byte more than a message may have: a longer datagram arrives cut to this and
        // is refused as too long, never read as its first 4 KiB.
        let mut buf = vec![0u8; MAX_DATAGRAM + 1];
        let mut waiting: Vec<(SocketAddr, Outgoing)> = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            waiting.retain(|(peer, out)| {
                if out.due > now {
                    return true;
                }
                send(socket, &out.bytes, *peer);
                false
            });
            let wait = waiting
                .iter()
                .map(|(_, out)| out.due.saturating_duration_since(now))
                .min()
                .unwrap_or(POLL)
                .clamp(Duration::from_millis(1), POLL);
            if let Err(e) = socket.set_read_timeout(Some(wait)) {
                tracing::debug!("ADS UDP service: cannot set the read timeout: {e}");
            }
            let (n, peer) = match socket.recv_from(&mut buf) {
                Ok(got) => got,
                // A timeout, an ICMP error of an earlier reply (the peer left), or an
                // interrupted call.
                Err(_) => continue,
            };
            let now = Instant::now();
            match self.receive(buf.get(..n).unwrap_or_default(), peer, now) {
                Some(out) if out.due <= now => send(socket, &out.bytes, peer),
                Some(out) => waiting.push((peer, out)),
                None => {}
            }
        }
    }

    /// What to send back for the datagram `bytes` from `peer`, and when.
    fn receive(&mut self, bytes: &[u8], peer: SocketAddr, now: Instant) -> Option<Outgoing> {
        match udp::decode(bytes) {
            Ok(m) => self.answer(&m, bytes.len(), peer, now),
            Err(e) => {
                self.ignored(peer, &e.to_string());
                None
            }
        }
    }

    fn ignored(&self, peer: SocketAddr, why: &str) {
        let n = self.stats.ignored.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_power_of_two() {
            tracing::warn!(%peer, ignored = n, "ADS UDP datagram ignored: {why}");
        }
    }

    /// The encoded reply to `m` (read from a datagram of `len` bytes), if one is due, and when.
    fn answer(
        &mut self,
        m: &UdpMessage,
        len: usize,
        peer: SocketAddr,
        now: Instant,
    ) -> Option<Outgoing> {
        if m.is_reply() {
            self.ignored(peer, "a reply, not a request");
            return None;
        }
        let reply = UdpMessage::new(m.service | REPLY, m.invoke_id, self.me);
        let (reply, due) = match m.service {
            service::IDENTIFY => {
                if m.encoded_len() != len {
                    self.ignored(
                        peer,
                        &format!(
                            "an identify of {len} bytes whose items take {}: malformed",
                            m.encoded_len()
                        ),
                    );
                    return None;
                }
                self.stats.identifies.fetch_add(1, Ordering::Relaxed);
                (self.identify(m, reply), now)
            }
            service::ADD_ROUTE => {
                if self.strikes.quiet(peer.ip(), now) {
                    let n = self.stats.routes_throttled.fetch_add(1, Ordering::Relaxed) + 1;
                    if n.is_power_of_two() {
                        tracing::warn!(%peer, throttled = n,
                            "ADS add-route ignored: the peer's last wrong password is not answered yet");
                    }
                    return None;
                }
                let (status, delay) = self.add_route(m, peer, now);
                (reply.with_u32(tag::STATUS, status), now + delay)
            }
            other => {
                self.ignored(peer, &format!("unknown service {other}"));
                return None;
            }
        };
        let bytes = reply.encode().ok()?;
        Some(Outgoing { due, bytes })
    }

    /// An identify's reply: NetId (the header), host name and TwinCAT version; the OS version
    /// and the fingerprint when the request asked for them with room for them.
    fn identify(&self, m: &UdpMessage, reply: UdpMessage) -> UdpMessage {
        let mut reply = reply
            .with_str(tag::COMPUTER_NAME, &self.config.host_name)
            .with_bytes(tag::TC_VERSION, &self.config.tc_version.encode());
        let asked = |tag: u16, data: &[u8]| m.get(tag).is_some_and(|room| room.len() >= data.len());
        let os = self.config.os.encode();
        if asked(tag::OS_VERSION, &os) {
            reply = reply.with_bytes(tag::OS_VERSION, &os);
        }
        if let Some(f) = &self.config.fingerprint {
            let mut text = f.clone().into_bytes();
            text.push(0);
            if asked(tag::FINGERPRINT, &text) {
                reply = reply.with_bytes(tag::FINGERPRINT, &text);
            }
        }
        reply
    }

    /// The status of an add-route (0, or TwinCAT's code for what is wrong) and how long its
    /// answer waits.
    fn add_route(&mut self, m: &UdpMessage, peer: SocketAddr, now: Instant) -> (u32, Duration) {
        let user = m.get_str(tag::USER_NAME).unwrap_or_default();
        let password = m.get_str(tag::PASSWORD).unwrap_or_default();
        let refuse = |code: u32, why: &str| {
            let n = self.stats.routes_refused.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_power_of_two() {
                tracing::warn!(%peer, refused = n, "ADS add-route refused: {why}");
            }
            code
        };
        // Windows' user names are case-insensitive, passwords are not.
        if !user.eq_ignore_ascii_case(&self.config.user) || password != self.config.password {
            let delay = self.strikes.wrong(peer.ip(), now);
            return (refuse(INVALID_ACCESS, "wrong user name or password"), delay);
        }
        self.strikes.right(peer.ip());
        let Some(net_id) = m.get_net_id(tag::NET_ID) else {
            return (refuse(INVALID_PARAMETER, "no NetId item"), Duration::ZERO);
        };
        let host = m
            .get_str(tag::COMPUTER_NAME)
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| peer.ip().to_string());
        let route = Route {
            net_id,
            name: m
                .get_str(tag::ROUTE_NAME)
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| host.clone()),
            host,
            temporary: m.get_u32(tag::OPTIONS).is_some_and(|o| o & 1 != 0),
            from: Some(peer),
        };
        match self.routes.add(route.clone()) {
            Ok(added) => {
                self.stats.routes_added.fetch_add(1, Ordering::Relaxed);
                tracing::info!(%peer, name = %route.name, net_id = %route.net_id, host = %route.host,
                    temporary = route.temporary, ?added, "ADS route added");
                (NO_ERROR, Duration::ZERO)
            }
            Err(e) => (refuse(NO_MEMORY, &e.to_string()), Duration::ZERO),
        }
    }
}

fn send(socket: &UdpSocket, bytes: &[u8], peer: SocketAddr) {
    if let Err(e) = socket.send_to(bytes, peer) {
        tracing::debug!(%peer, "ADS UDP reply not sent: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::udp::{FINGERPRINT_ROOM, OS_VERSION_ROOM};
    use proptest::prelude::*;

    fn responder() -> Responder {
        Responder {
            config: UdpConfig::new("127.0.0.1:0".parse().expect("addr")),
            me: AmsAddr::new(AmsNetId([5, 6, 7, 8, 1, 1]), SYSTEM_SERVICE_PORT),
            routes: RouteTable::new(),
            stats: Arc::new(UdpStats::default()),
            strikes: Strikes::default(),
        }
    }

    fn peer() -> SocketAddr {
        "192.168.1.50:50000".parse().expect("addr")
    }

    fn add_route(user: &str, password: &str) -> UdpMessage {
        UdpMessage::new(service::ADD_ROUTE, 77, AmsAddr::default())
            .with_bytes(tag::NET_ID, &[192, 168, 1, 50, 1, 1])
            .with_str(tag::USER_NAME, user)
            .with_str(tag::PASSWORD, password)
    }

    /// `m` answered as if it came in a datagram of exactly its bytes.
    fn answer(
        r: &mut Responder,
        m: &UdpMessage,
        from: SocketAddr,
        now: Instant,
    ) -> Option<Outgoing> {
        r.answer(m, m.encoded_len(), from, now)
    }

    fn status(reply: Option<Outgoing>) -> Option<u32> {
        let m = udp::decode(&reply?.bytes).ok()?;
        assert_eq!(m.invoke_id, 77);
        assert_eq!(m.service, service::ADD_ROUTE | REPLY);
        m.get_u32(tag::STATUS)
    }

    #[test]
    fn add_route_answers_as_twincat_and_names_the_route_by_its_host() {
        let mut r = responder();
        let mut now = Instant::now();
        assert_eq!(
            status(answer(
                &mut r,
                &add_route("Administrator", "2"),
                peer(),
                now
            )),
            Some(INVALID_ACCESS)
        );
        now += MAX_REFUSAL_DELAY;
        assert_eq!(
            status(answer(&mut r, &add_route("guest", "1"), peer(), now)),
            Some(INVALID_ACCESS)
        );
        now += MAX_REFUSAL_DELAY;
        assert!(r.routes.list().is_empty());
        // User names are case-insensitive (Windows accounts); no route name: the host's.
        assert_eq!(
            status(answer(
                &mut r,
                &add_route("administrator", "1"),
                peer(),
                now
            )),
            Some(0)
        );
        let routes = r.routes.list();
        assert_eq!(routes.len(), 1);
        assert_eq!(
            (routes[0].name.as_str(), routes[0].host.as_str()),
            ("192.168.1.50", "192.168.1.50")
        );
        // No NetId: an invalid parameter. A reply is never answered.
        let no_id = UdpMessage::new(service::ADD_ROUTE, 77, AmsAddr::default())
            .with_str(tag::USER_NAME, "Administrator")
            .with_str(tag::PASSWORD, "1");
        assert_eq!(
            status(answer(&mut r, &no_id, peer(), now)),
            Some(INVALID_PARAMETER)
        );
        let reply = UdpMessage::new(service::IDENTIFY | REPLY, 1, AmsAddr::default());
        assert!(answer(&mut r, &reply, peer(), now).is_none());
    }

    #[test]
    fn wrong_passwords_from_one_peer_are_answered_ever_later_and_others_at_once() {
        // A guesser sending a wrong password every millisecond for 60 s: 10 tries looked at
        // (9 answers out within the minute), each refusal waiting twice as long as the one
        // before up to the cap; every other try not looked at. A right password from another
        // peer meanwhile is answered at once.
        let mut r = responder();
        let start = Instant::now();
        let other: SocketAddr = "192.168.1.51:50000".parse().expect("addr");
        let mut answered = Vec::new();
        for ms in 0..60_000u64 {
            let now = start + Duration::from_millis(ms);
            if let Some(out) = answer(&mut r, &add_route("Administrator", "guess"), peer(), now) {
                assert_eq!(
                    status(Some(Outgoing {
                        due: out.due,
                        bytes: out.bytes.clone()
                    })),
                    Some(INVALID_ACCESS)
                );
                answered.push((now, out.due - now));
            }
            if ms == 30_000 {
                let out =
                    answer(&mut r, &add_route("Administrator", "1"), other, now).expect("answered");
                assert_eq!(out.due, now, "the other peer waits for nothing");
                assert_eq!(status(Some(out)), Some(0));
            }
        }
        let delays: Vec<u64> = answered.iter().map(|(_, d)| d.as_millis() as u64).collect();
        assert_eq!(
            delays,
            [100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30_000]
        );
        let out_in_a_minute = answered
            .iter()
            .filter(|(at, wait)| *at + *wait <= start + Duration::from_secs(60))
            .count();
        assert_eq!(out_in_a_minute, 9);
        // Each try after the first came when the one before had been answered, not before.
        for pair in answered.windows(2) {
            assert!(pair[1].0 >= pair[0].0 + pair[0].1);
        }
        assert_eq!(
            r.stats.routes_throttled.load(Ordering::Relaxed),
            60_000 - answered.len() as u64
        );
        // The right password, once the wait is over, resets the peer.
        let later = start + Duration::from_secs(120);
        assert_eq!(
            status(answer(
                &mut r,
                &add_route("Administrator", "1"),
                peer(),
                later
            )),
            Some(0)
        );
        let out =
            answer(&mut r, &add_route("Administrator", "x"), peer(), later).expect("answered");
        assert_eq!(out.due - later, FIRST_REFUSAL_DELAY);
    }

    #[test]
    fn the_delay_doubles_up_to_its_cap() {
        assert_eq!(refusal_delay(1), FIRST_REFUSAL_DELAY);
        assert_eq!(refusal_delay(4), FIRST_REFUSAL_DELAY * 8);
        assert_eq!(refusal_delay(10), MAX_REFUSAL_DELAY);
        assert_eq!(refusal_delay(u32::MAX), MAX_REFUSAL_DELAY);
    }

    #[test]
    fn identify_is_answered_small_and_only_when_well_formed() {
        let mut r = responder();
        r.config.fingerprint = Some(["AB"; 32].join(":"));
        let now = Instant::now();
        // A bare identify (the `ads` crate's, TwinCAT's broadcast search): NetId in the
        // header, host name, TwinCAT version; under twice the request.
        let bare = UdpMessage::new(service::IDENTIFY, 5, AmsAddr::default());
        let out = answer(&mut r, &bare, peer(), now).expect("answered");
        assert_eq!(out.due, now);
        let reply = udp::decode(&out.bytes).expect("decodes");
        assert_eq!(reply.source.net_id, AmsNetId([5, 6, 7, 8, 1, 1]));
        assert_eq!(
            reply.get_str(tag::COMPUTER_NAME).as_deref(),
            Some("cdpr-vplc")
        );
        assert!(reply.get(tag::TC_VERSION).is_some());
        assert_eq!(
            (reply.get(tag::OS_VERSION), reply.get(tag::FINGERPRINT)),
            (None, None)
        );
        let ratio = out.bytes.len() as f64 / bare.encoded_len() as f64;
        assert!(
            ratio < 2.0,
            "{} bytes for {}: {ratio}",
            out.bytes.len(),
            bare.encoded_len()
        );
        // Asked with room: OS version and fingerprint too, the reply smaller than the request.
        let asking = bare
            .clone()
            .with_bytes(tag::OS_VERSION, &[0; OS_VERSION_ROOM])
            .with_bytes(tag::FINGERPRINT, &[0; FINGERPRINT_ROOM]);
        let out = answer(&mut r, &asking, peer(), now).expect("answered");
        let reply = udp::decode(&out.bytes).expect("decodes");
        assert!(reply.get(tag::OS_VERSION).is_some());
        assert_eq!(reply.get_str(tag::FINGERPRINT), r.config.fingerprint);
        assert!(
            out.bytes.len() <= asking.encoded_len(),
            "{} > {}",
            out.bytes.len(),
            asking.encoded_len()
        );
        // Asked without room: left out.
        let cramped = bare
            .clone()
            .with_bytes(tag::OS_VERSION, &[])
            .with_bytes(tag::FINGERPRINT, &[0; 4]);
        let reply = udp::decode(
            &answer(&mut r, &cramped, peer(), now)
                .expect("answered")
                .bytes,
        )
        .expect("decodes");
        assert_eq!(
            (reply.get(tag::OS_VERSION), reply.get(tag::FINGERPRINT)),
            (None, None)
        );
        // Malformed: bytes after the items, or cut short; cut past the receive buffer.
        let mut trailing = bare.encode().expect("encodes");
        trailing.extend_from_slice(&[0; 8]);
        assert!(r.receive(&trailing, peer(), now).is_none());
        let whole = asking.encode().expect("encodes");
        for cut in [4, 23, 25, whole.len() - 1] {
            assert!(
                r.receive(&whole[..cut], peer(), now).is_none(),
                "cut at {cut}"
            );
        }
        let mut long = UdpMessage::new(service::IDENTIFY, 5, AmsAddr::default())
            .with_bytes(tag::OS_VERSION, &[0; 4000])
            .encode()
            .expect("encodes");
        long.extend_from_slice(&[0; 200]);
        assert!(r.receive(&long[..MAX_DATAGRAM + 1], peer(), now).is_none());
        assert!(r.receive(&whole, peer(), now).is_some());
        assert_eq!(r.stats.identifies.load(Ordering::Relaxed), 4);
    }

    proptest! {
        #[test]
        fn any_request_gets_a_bounded_answer_or_none(
            id in prop_oneof![Just(1u32), Just(6u32), any::<u32>()],
            items in prop::collection::vec(
                (prop_oneof![Just(2u16), Just(5), Just(7), Just(9), Just(12), Just(13), any::<u16>()],
                 prop::collection::vec(any::<u8>(), 0..300)),
                0..12),
        ) {
            let mut r = responder();
            let m = UdpMessage { invoke_id: 1, service: id, source: AmsAddr::default(), items };
            if let Some(reply) = answer(&mut r, &m, peer(), Instant::now()) {
                prop_assert!(reply.bytes.len() <= MAX_DATAGRAM);
                prop_assert!(udp::decode(&reply.bytes).is_ok());
                if id == service::IDENTIFY {
                    prop_assert!(reply.bytes.len() < 2 * m.encoded_len().max(udp::HEADER_LEN) + 8);
                }
            }
            prop_assert!(r.routes.list().len() <= 1);
        }
    }
}
