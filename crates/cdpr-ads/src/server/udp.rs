//! The virtual PLC's side of the ADS UDP service (port 48899): it answers an identify with its
//! NetId, host name, TwinCAT and OS versions, and an add-route by checking the user name and
//! password against its own ([`UdpConfig`]) and recording the route ([`RouteTable`]), as a
//! TwinCAT system does. A wrong user or password gets TwinCAT's answer, status 0x704
//! (ADSERR_DEVICE_INVALIDACCESS: what TwinCAT 3 replies, pyads issue #460).
//!
//! One thread, one fixed receive buffer ([`MAX_DATAGRAM`]); a datagram that does not decode,
//! a reply (never answered, so two responders cannot ping-pong) or an unknown service gets no
//! answer and a log line — one per power of two of them, so a flood cannot flood the log.

use super::routes::{Route, RouteTable};
use crate::wire::error::{INVALID_ACCESS, INVALID_PARAMETER, NO_ERROR, NO_MEMORY};
use crate::wire::udp::{self, MAX_DATAGRAM, OsVersion, REPLY, TcVersion, UdpMessage, service, tag};
use crate::wire::{AmsAddr, AmsNetId};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// The AMS port TwinCAT's system service answers the UDP service from.
pub const SYSTEM_SERVICE_PORT: u16 = 10000;
/// TwinCAT's factory user name for adding routes.
pub const DEFAULT_USER: &str = "Administrator";
/// TwinCAT's factory password (Windows images; TwinCAT/BSD asks for one at install).
pub const DEFAULT_PASSWORD: &str = "1";

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
        // Short, so that the thread notices `stop`.
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        let local_addr = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(UdpStats::default());
        let responder = Responder {
            config,
            me: AmsAddr::new(net_id, SYSTEM_SERVICE_PORT),
            routes,
            stats: Arc::clone(&stats),
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
}

impl Responder {
    fn serve(&self, socket: &UdpSocket, stop: &AtomicBool) {
        let mut buf = [0u8; MAX_DATAGRAM];
        while !stop.load(Ordering::Relaxed) {
            let (n, peer) = match socket.recv_from(&mut buf) {
                Ok(got) => got,
                Err(e) if crate::timed_out::timed_out(&e) => {
                    continue;
                }
                // An ICMP error of an earlier reply (the peer left), or an interrupted call.
                Err(_) => continue,
            };
            let reply = match udp::decode(buf.get(..n).unwrap_or_default()) {
                Ok(m) => self.answer(&m, peer),
                Err(e) => {
                    self.ignored(peer, &e.to_string());
                    None
                }
            };
            if let Some(reply) = reply
                && let Err(e) = socket.send_to(&reply, peer)
            {
                tracing::debug!(%peer, "ADS UDP reply not sent: {e}");
            }
        }
    }

    fn ignored(&self, peer: SocketAddr, why: &str) {
        let n = self.stats.ignored.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_power_of_two() {
            tracing::warn!(%peer, ignored = n, "ADS UDP datagram ignored: {why}");
        }
    }

    /// The encoded reply to `m`, if one is due.
    fn answer(&self, m: &UdpMessage, peer: SocketAddr) -> Option<Vec<u8>> {
        if m.is_reply() {
            self.ignored(peer, "a reply, not a request");
            return None;
        }
        let reply = UdpMessage::new(m.service | REPLY, m.invoke_id, self.me);
        let reply = match m.service {
            service::IDENTIFY => {
                self.stats.identifies.fetch_add(1, Ordering::Relaxed);
                let reply = reply
                    .with_str(tag::COMPUTER_NAME, &self.config.host_name)
                    .with_bytes(tag::NET_ID, &self.me.net_id.0)
                    .with_bytes(tag::OS_VERSION, &self.config.os.encode())
                    .with_bytes(tag::TC_VERSION, &self.config.tc_version.encode());
                match &self.config.fingerprint {
                    Some(f) => reply.with_str(tag::FINGERPRINT, f),
                    None => reply,
                }
            }
            service::ADD_ROUTE => reply.with_u32(tag::STATUS, self.add_route(m, peer)),
            other => {
                self.ignored(peer, &format!("unknown service {other}"));
                return None;
            }
        };
        reply.encode().ok()
    }

    /// The status of an add-route: 0, or TwinCAT's code for what is wrong.
    fn add_route(&self, m: &UdpMessage, peer: SocketAddr) -> u32 {
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
            return refuse(INVALID_ACCESS, "wrong user name or password");
        }
        let Some(net_id) = m.get_net_id(tag::NET_ID) else {
            return refuse(INVALID_PARAMETER, "no NetId item");
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
                NO_ERROR
            }
            Err(e) => refuse(NO_MEMORY, &e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn responder() -> Responder {
        Responder {
            config: UdpConfig::new("127.0.0.1:0".parse().expect("addr")),
            me: AmsAddr::new(AmsNetId([5, 6, 7, 8, 1, 1]), SYSTEM_SERVICE_PORT),
            routes: RouteTable::new(),
            stats: Arc::new(UdpStats::default()),
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

    fn status(reply: Option<Vec<u8>>) -> Option<u32> {
        let m = udp::decode(&reply?).ok()?;
        assert_eq!(m.invoke_id, 77);
        assert_eq!(m.service, service::ADD_ROUTE | REPLY);
        m.get_u32(tag::STATUS)
    }

    #[test]
    fn add_route_answers_as_twincat_and_names_the_route_by_its_host() {
        let r = responder();
        assert_eq!(
            status(r.answer(&add_route("Administrator", "2"), peer())),
            Some(INVALID_ACCESS)
        );
        assert_eq!(
            status(r.answer(&add_route("guest", "1"), peer())),
            Some(INVALID_ACCESS)
        );
        assert!(r.routes.list().is_empty());
        // User names are case-insensitive (Windows accounts); no route name: the host's.
        assert_eq!(
            status(r.answer(&add_route("administrator", "1"), peer())),
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
        assert_eq!(status(r.answer(&no_id, peer())), Some(INVALID_PARAMETER));
        let reply = UdpMessage::new(service::IDENTIFY | REPLY, 1, AmsAddr::default());
        assert_eq!(r.answer(&reply, peer()), None);
    }

    proptest! {
        #[test]
        fn any_request_gets_a_bounded_answer_or_none(
            service in prop_oneof![Just(1u32), Just(6u32), any::<u32>()],
            items in prop::collection::vec(
                (prop_oneof![Just(2u16), Just(5), Just(7), Just(9), Just(12), Just(13), any::<u16>()],
                 prop::collection::vec(any::<u8>(), 0..300)),
                0..12),
        ) {
            let r = responder();
            let m = UdpMessage { invoke_id: 1, service, source: AmsAddr::default(), items };
            if let Some(reply) = r.answer(&m, peer()) {
                prop_assert!(reply.len() <= MAX_DATAGRAM);
                prop_assert!(udp::decode(&reply).is_ok());
            }
            prop_assert!(r.routes.list().len() <= 1);
        }
    }
}
