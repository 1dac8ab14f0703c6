//! The ADS UDP service (identify, add route) end to end on loopback: the library's client and
//! the `ads` crate's (a foreign client) against the virtual PLC's responder; the route table
//! it fills, and the AMS/TCP server serving only routed NetIds when told to.

use cdpr_ads::fixtures::*;
use cdpr_ads::link::{self, RouteError, RouteRequest, UdpServiceError};
use cdpr_ads::server::udp as udp_server;
use cdpr_ads::server::{self, Runtime, ServerConfig, Timing, UdpConfig};
use cdpr_ads::wire::udp::{self, UdpMessage, service, tag};
use cdpr_ads::wire::{AmsAddr, AmsNetId};
use cdpr_core::trajectory::Trajectory;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(2);

/// A virtual PLC with its UDP service on a free loopback port; that port.
fn with_udp(require_route: bool) -> (Runtime, SocketAddr) {
    with_udp_as(require_route, AmsNetId::LOCAL)
}

fn with_udp_as(require_route: bool, net_id: AmsNetId) -> (Runtime, SocketAddr) {
    let mut config = ServerConfig::new("127.0.0.1:0".parse().expect("addr"));
    config.require_route = require_route;
    let mut rt = Runtime::start(
        &uvigo8(),
        Trajectory::default(),
        Timing::default(),
        server::DeviceIdentity {
            net_id,
            ..server::default_identity()
        },
        config,
    )
    .expect("starts");
    let udp = rt
        .serve_udp(UdpConfig::new("127.0.0.1:0".parse().expect("addr")))
        .expect("UDP starts");
    (rt, udp)
}

fn request(plc: SocketAddr, password: &str) -> RouteRequest {
    RouteRequest {
        plc: plc.to_string(),
        user: "Administrator".into(),
        password: password.into(),
        net_id: AmsNetId([192, 168, 7, 9, 1, 1]),
        host: "192.168.7.9".into(),
        route_name: Some("laptop".into()),
        temporary: true,
        timeout: TIMEOUT,
    }
}

#[test]
fn identify_names_the_virtual_plc() {
    let (_rt, udp) = with_udp(false);
    let info = link::identify(&udp.to_string(), TIMEOUT).expect("answers");
    assert_eq!(info.net_id, AmsNetId::LOCAL);
    assert_eq!(info.host_name, "cdpr-vplc");
    assert_eq!(
        info.tc_version.map(|v| v.to_string()),
        Some("3.1.4024".into())
    );
    assert!(info.os.expect("os").describe().contains("cdpr virtual PLC"));
    assert_eq!(info.address, udp);
    // The `ads` crate's client reads the same.
    let theirs = ads::udp::get_info(("127.0.0.1", udp.port())).expect("ads crate identify");
    assert_eq!(theirs.netid.0, AmsNetId::LOCAL.0);
    assert_eq!(theirs.hostname, "cdpr-vplc");
    assert_eq!(theirs.twincat_version, (3, 1, 4024));
}

#[test]
fn add_route_checks_the_password_and_fills_the_route_table() {
    let (rt, udp) = with_udp(false);
    let err = link::add_route(&request(udp, "wrong")).expect_err("refused");
    assert!(matches!(err, RouteError::Credentials { .. }), "{err}");
    assert!(err.to_string().contains("--password"), "{err}");
    assert!(rt.routes.list().is_empty());

    let added = link::add_route(&request(udp, "1")).expect("added");
    assert_eq!(added.plc_net_id, AmsNetId::LOCAL);
    let routes = rt.routes.list();
    assert_eq!(routes.len(), 1);
    assert_eq!(routes[0].name, "laptop");
    assert_eq!(routes[0].host, "192.168.7.9");
    assert_eq!(routes[0].net_id, AmsNetId([192, 168, 7, 9, 1, 1]));
    assert!(routes[0].temporary);

    // The `ads` crate's add_route (a foreign client): wrong password as an ADS error 0x704,
    // then a second route.
    let netid = ads::AmsNetId::new(10, 1, 2, 3, 1, 1);
    let target = ("127.0.0.1", udp.port());
    let e = ads::udp::add_route(target, netid, "10.1.2.3", None, None, Some("no"), false)
        .expect_err("refused");
    assert!(
        format!("{e}").contains("0x704") || format!("{e:?}").contains("1796"),
        "{e:?}"
    );
    ads::udp::add_route(target, netid, "10.1.2.3", Some("other"), None, None, false)
        .expect("added with the factory default");
    assert!(rt.routes.contains(AmsNetId([10, 1, 2, 3, 1, 1])));
    let report = rt.finish(0.0);
    assert_eq!(report.routes.len(), 2);
}

#[test]
fn no_answer_and_hostile_datagrams_are_told_apart() {
    // Nothing listens: the port is closed (ICMP), told at once.
    let free = UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free port");
    let started = Instant::now();
    let err = link::identify(&free.to_string(), TIMEOUT).expect_err("nobody");
    assert!(matches!(err, UdpServiceError::PortClosed { .. }), "{err}");
    assert!(started.elapsed() < TIMEOUT, "{:?}", started.elapsed());
    // A socket that reads and never answers: no answer within the timeout.
    let silent = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let err = link::identify(
        &silent.local_addr().expect("addr").to_string(),
        Duration::from_millis(200),
    )
    .expect_err("silent");
    assert!(matches!(err, UdpServiceError::NoAnswer { .. }), "{err}");
    assert!(err.to_string().contains("firewall"), "{err}");
    // Hostile datagrams leave the responder answering.
    let (rt, udp) = with_udp(false);
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let mut lying = Vec::new();
    lying.extend_from_slice(&0x7114_6603u32.to_le_bytes());
    lying.extend_from_slice(&[0; 16]);
    lying.extend_from_slice(&u32::MAX.to_le_bytes());
    for junk in [&b""[..], b"hello", &lying, &[0xff; 4000]] {
        s.send_to(junk, udp).expect("sent");
    }
    assert_eq!(
        link::net_id_of(&udp.to_string(), TIMEOUT).expect("still answers"),
        AmsNetId::LOCAL
    );
    let ignored = rt
        .udp
        .as_ref()
        .expect("udp")
        .stats()
        .ignored
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(ignored, 4);
}

#[test]
fn require_route_serves_only_netids_with_a_route() {
    // Not 127.0.0.1.1.1: the `ads` crate sends a request for that NetId to its own.
    let plc = AmsNetId([5, 6, 7, 8, 1, 1]);
    let (rt, udp) = with_udp_as(true, plc);
    let target = ads::AmsAddr::new(ads::AmsNetId::from(plc.0), 851);
    let me = ads::AmsAddr::new(ads::AmsNetId::new(192, 168, 7, 9, 1, 1), 30000);
    let connect = || {
        ads::Client::new(
            ("127.0.0.1", rt.server.local_addr().port()),
            ads::Timeouts::new(Duration::from_millis(500)),
            ads::Source::Addr(me),
        )
        .expect("TCP connects")
    };
    let c = connect();
    assert!(c.device(target).get_state().is_err(), "no route: closed");
    drop(c);
    link::add_route(&request(udp, "1")).expect("added");
    let c = connect();
    let (state, _) = c.device(target).get_state().expect("served with a route");
    assert!(matches!(state, ads::AdsState::Run));
    assert!(
        rt.server
            .stats()
            .no_route
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 1
    );
}

#[test]
fn the_shadow_asks_the_plc_for_its_net_id_else_guesses() {
    use cdpr_ads::shadow::{NetIdOrigin, choose_net_id};
    let plc = AmsNetId([5, 4, 3, 2, 1, 1]);
    let (mut rt, _) = with_udp_as(false, plc);
    let ip = serve_udp_on_own_loopback(&mut rt);
    let asked = choose_net_id(&format!("{ip}:48898"), None, TIMEOUT).expect("asked");
    assert_eq!((asked.net_id, asked.origin), (plc, NetIdOrigin::Asked));
    assert!(asked.note.contains("asked over UDP"), "{}", asked.note);
    // Given wins without asking.
    let given = choose_net_id(&ip.to_string(), Some(AmsNetId::LOCAL), TIMEOUT).expect("given");
    assert_eq!(
        (given.net_id, given.origin),
        (AmsNetId::LOCAL, NetIdOrigin::Given)
    );
    // Nobody on UDP 48899 of 127.0.0.3 (only 127.10+.x.y are taken above): guessed.
    let guessed = choose_net_id("127.0.0.3:1", None, Duration::from_millis(300)).expect("guess");
    assert_eq!(
        (guessed.net_id, guessed.origin),
        (AmsNetId([127, 0, 0, 3, 1, 1]), NetIdOrigin::Guessed)
    );
    assert!(guessed.note.contains("nobody answered"), "{}", guessed.note);
}

fn add_route_datagram(invoke_id: u32, password: &str) -> Vec<u8> {
    UdpMessage::new(service::ADD_ROUTE, invoke_id, AmsAddr::default())
        .with_bytes(tag::NET_ID, &[192, 168, 7, 9, 1, 1])
        .with_str(tag::USER_NAME, "Administrator")
        .with_str(tag::PASSWORD, password)
        .encode()
        .expect("encodes")
}

/// The add-route replies that reach `socket` before `until`: (when, status).
fn statuses_until(socket: &UdpSocket, until: Instant) -> Vec<(Instant, u32)> {
    statuses_of(socket, until, usize::MAX)
}

/// The first `most` add-route statuses that come to `socket` before `until`, with when each
/// came (back as soon as `most` have).
fn statuses_of(socket: &UdpSocket, until: Instant, most: usize) -> Vec<(Instant, u32)> {
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    while let Some(left) = until
        .checked_duration_since(Instant::now())
        .filter(|_| got.len() < most)
    {
        socket
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .expect("timeout");
        let Ok((n, _)) = socket.recv_from(&mut buf) else {
            continue;
        };
        let m = udp::decode(&buf[..n]).expect("a reply");
        got.push((Instant::now(), m.get_u32(tag::STATUS).expect("status")));
    }
    got
}

#[test]
fn a_password_guesser_waits_ever_longer_and_other_peers_not_at_all() {
    let (rt, udp) = with_udp(false);
    // A burst of 2 000 wrong passwords (answered in 0.04 s before): one answer, after the
    // first refusal's delay; the rest not looked at.
    let guesser = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let burst = Instant::now();
    for k in 0..2000 {
        guesser
            .send_to(&add_route_datagram(k, "guess"), udp)
            .expect("sent");
    }
    // Another peer (another loopback address) with the right password meanwhile: at once.
    let other = UdpSocket::bind("127.0.0.2:0").expect("bind 127.0.0.2");
    let asked = Instant::now();
    other
        .send_to(&add_route_datagram(1, "1"), udp)
        .expect("sent");
    let answer = statuses_until(&other, asked + Duration::from_secs(1));
    assert_eq!(answer.len(), 1, "{answer:?}");
    assert_eq!(answer[0].1, 0, "added");
    let answers = statuses_until(&guesser, burst + Duration::from_millis(1500));
    // Sent within the first refusal's delay, the burst gets one answer; a machine so slow
    // that the burst outlasts it, one more per doubling.
    assert!(
        (1..=3).contains(&answers.len()),
        "{} of 2000 answered",
        answers.len()
    );
    assert!(answers.iter().all(|(_, status)| *status == 0x704));
    assert!(answers[0].0 - burst >= udp_server::FIRST_REFUSAL_DELAY);
    assert!(
        answer[0].0 < answers[0].0,
        "the right password of another peer was answered after the guesser's wrong one"
    );
    // One wrong password at a time, each sent when the last was answered: each waits twice
    // as long as the one before (at least; a slow machine only adds).
    let before = answers.len() as u32;
    let mut waits = Vec::new();
    for k in 0..4 {
        let sent = Instant::now();
        guesser
            .send_to(&add_route_datagram(10_000 + k, "guess"), udp)
            .expect("sent");
        let got = statuses_of(&guesser, sent + Duration::from_secs(5), 1);
        assert_eq!(got.len(), 1, "try {k}: {got:?}");
        waits.push(got[0].0 - sent);
    }
    for (k, wait) in waits.iter().enumerate() {
        let n = before + k as u32 + 1;
        let due = udp_server::refusal_delay(n);
        assert!(*wait >= due, "refusal {n}: {wait:?}, due {due:?}");
    }
    let stats = rt.udp.as_ref().expect("udp").stats();
    assert_eq!(
        stats.routes_refused.load(Ordering::Relaxed),
        u64::from(before) + 4
    );
    assert!(stats.routes_throttled.load(Ordering::Relaxed) > 1000);
}

#[test]
fn identify_answers_only_well_formed_requests_and_under_twice_their_size() {
    let (_rt, udp) = with_udp(false);
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let identify = |bytes: &[u8]| -> Option<Vec<u8>> {
        s.send_to(bytes, udp).expect("sent");
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .expect("timeout");
        let mut buf = [0u8; 8192];
        s.recv_from(&mut buf).ok().map(|(n, _)| buf[..n].to_vec())
    };
    let bare = UdpMessage::new(service::IDENTIFY, 3, AmsAddr::default())
        .encode()
        .expect("encodes");
    // Bytes after the items; cut inside an item; longer than a message may be (read cut at
    // 4 KiB, its one item whole in the first 4 KiB, before).
    let mut trailing = bare.clone();
    trailing.extend_from_slice(&[0; 40]);
    let asking = UdpMessage::new(service::IDENTIFY, 3, AmsAddr::default())
        .with_bytes(tag::OS_VERSION, &[0; udp::OS_VERSION_ROOM])
        .encode()
        .expect("encodes");
    let mut long = UdpMessage::new(service::IDENTIFY, 3, AmsAddr::default())
        .with_bytes(tag::OS_VERSION, &[0; 4000])
        .encode()
        .expect("encodes");
    long.extend_from_slice(&[0; 1000]);
    for (what, bytes) in [
        ("trailing bytes", &trailing[..]),
        ("cut", &asking[..asking.len() - 10]),
        ("too long", &long[..]),
    ] {
        assert_eq!(identify(bytes), None, "{what} answered");
    }
    let reply = identify(&bare).expect("a bare identify is answered");
    let ratio = reply.len() as f64 / bare.len() as f64;
    assert!(
        ratio < 2.0,
        "{} bytes for {}: ×{ratio:.2}",
        reply.len(),
        bare.len()
    );
    let full = identify(&asking).expect("answered");
    assert!(
        full.len() <= asking.len(),
        "{} > {}",
        full.len(),
        asking.len()
    );
    assert!(
        udp::decode(&full)
            .expect("decodes")
            .get(tag::OS_VERSION)
            .is_some()
    );
}
