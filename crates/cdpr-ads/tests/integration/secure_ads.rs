//! Secure ADS (ADS over TLS 1.2) between the shadow's client and the virtual PLC, in the three
//! modes (self-signed certificates with route registration and pins, a shared CA, PSK): what
//! connects, what is refused and with which words, every exchange over TLS, and hostile
//! peers inside the tunnel on either side.
//!
//! Every test keeps its files (certificates, pins, a PKI) in a fresh directory of its own
//! under the system's temp dir, removed at its end; servers listen on 127.0.0.1:0.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use cdpr_ads::fixtures::*;
use cdpr_ads::link::{
    AdsConfig, AdsController, AdsSource, AdsTransport, ControllerError, Exchange, ExchangeChoice,
    ShadowLink, WritePolicy,
};
use cdpr_ads::secure::connect_info::flag;
use cdpr_ads::secure::{
    ClientMode, ConnectError, ConnectInfo, PSK_CIPHERS, SecureClient, SecureServer, ServerMode,
    fingerprint, psk_key,
};
use cdpr_ads::server::{self, Runtime};
use cdpr_ads::shadow::{self, CycleTiming, Shadow, ShadowConfig, ShadowSetup};
use cdpr_ads::wire::{AmsAddr, AmsNetId};
use cdpr_core::trajectory::Trajectory;
use openssl::ssl::{SslAcceptor, SslConnector, SslMethod, SslStream, SslVerifyMode, SslVersion};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

// ------------------------------------------------------------------------------ helpers

/// A fresh directory under the temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "cdpr-secure-ads-{name}-{}-{nanos}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn plc_net_id() -> AmsNetId {
    server::default_identity().net_id
}

fn runtime(secure: SecureServer) -> Runtime {
    secure_runtime(&uvigo8(), Trajectory::default(), Arc::new(secure))
}

fn ssc_server(dir: &Path) -> SecureServer {
    SecureServer::new(
        ServerMode::SelfSigned {
            user: "Administrator".into(),
            password: "1".into(),
        },
        Some(dir),
        plc_net_id(),
    )
    .expect("self-signed server")
}

fn psk_server(dir: &Path) -> SecureServer {
    SecureServer::new(
        ServerMode::Psk {
            entries: vec![("Shadow-Laptop".into(), "secret".into())],
        },
        Some(dir),
        plc_net_id(),
    )
    .expect("PSK server")
}

fn client(mode: ClientMode, dir: &Path) -> SecureClient {
    SecureClient {
        dir: Some(dir.to_path_buf()),
        ..SecureClient::new(mode)
    }
}

fn ssc(register: Option<(&str, &str)>) -> ClientMode {
    ClientMode::SelfSigned {
        register: register.map(|(u, p)| (u.to_string(), p.to_string())),
    }
}

fn psk(password: &str) -> ClientMode {
    ClientMode::Psk {
        identity: "shadow-laptop".into(),
        password: password.into(),
    }
}

/// A client configuration for `rt`, the PLC's NetId left to its TlsConnectInfo answer.
fn config(rt: &Runtime, secure: SecureClient) -> AdsConfig {
    let mut c = AdsConfig::new(
        rt.server.local_addr().to_string(),
        AmsAddr::new(AmsNetId([0; 6]), 851),
    );
    c.timeout = Duration::from_secs(3);
    c.secure = Some(secure);
    c
}

fn endpoint(rt: &Runtime) -> String {
    rt.server.local_addr().to_string()
}

/// The error of a connection that must fail: the text the user reads.
fn connect_err(config: AdsConfig) -> String {
    match AdsTransport::connect(config) {
        Ok(_) => panic!("the connection should have been refused"),
        Err(e @ ControllerError::Secure { .. }) => {
            let text = e.to_string();
            assert!(
                text.starts_with("Secure ADS: ") && text.contains("127.0.0.1:"),
                "the message names Secure ADS and the endpoint: {text}"
            );
            text
        }
        Err(e) => panic!("expected a Secure ADS error, got {e}"),
    }
}

fn connect(config: AdsConfig) -> AdsTransport {
    match AdsTransport::connect(config) {
        Ok(t) => t,
        Err(e) => panic!("connects: {e}"),
    }
}

/// A writing shadow over `t`: free-running at 2 ms, or lockstep for notifications.
fn shadow_over(t: AdsTransport, lockstep: bool) -> Shadow<AdsController> {
    let robot = uvigo8();
    let link = match ShadowLink::connect(
        t,
        &cdpr_ads::PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::AllowListed,
    ) {
        Ok(l) => l,
        Err(e) => panic!("resolves: {e}"),
    };
    let timing = if lockstep {
        CycleTiming::Lockstep {
            plc_period: Duration::from_millis(10),
        }
    } else {
        CycleTiming::Free {
            period: Duration::from_millis(2),
            plc_period: Duration::from_millis(10),
        }
    };
    let config = ShadowConfig {
        write: true,
        timing,
        ..ShadowConfig::default()
    };
    Shadow::new(link, Some(robot), config).expect("the shadow starts")
}

/// Runs `s` for `ms` milliseconds; the cycles it exchanged.
fn run_for(s: &mut Shadow<AdsController>, ms: u64) -> u64 {
    let stop = AtomicBool::new(false);
    let mut exchanged = 0u64;
    shadow::run_with(s, Some(Duration::from_millis(ms)), &stop, |_, r| {
        if r.plc_cycle.is_some() {
            exchanged += 1;
        }
    })
    .expect("runs");
    let sum = s.summary();
    assert!(sum.cycles > 0, "no cycles");
    assert_eq!(sum.reconnects, 0, "no reconnection");
    exchanged
}

fn assert_words(text: &str, words: &[&str]) {
    for w in words {
        assert!(text.contains(w), "`{w}` missing from: {text}");
    }
}

fn read_text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The fingerprint of the PEM certificate at `p`.
fn fingerprint_of(p: &Path) -> String {
    let pem = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    fingerprint(&openssl::x509::X509::from_pem(&pem).expect("PEM")).expect("fingerprint")
}

/// A TLS 1.2 PSK connection to `port` made with the `openssl` crate alone, as
/// `shadow-laptop`/`secret`.
fn raw_psk_client(port: u16) -> SslStream<TcpStream> {
    let mut b = SslConnector::builder(SslMethod::tls_client()).expect("connector");
    b.set_min_proto_version(Some(SslVersion::TLS1_2)).unwrap();
    b.set_max_proto_version(Some(SslVersion::TLS1_2)).unwrap();
    b.set_cipher_list(PSK_CIPHERS).unwrap();
    let key = psk_key("shadow-laptop", "secret");
    b.set_psk_client_callback(move |_, _, id, key_out| {
        let name = b"shadow-laptop\0";
        id[..name.len()].copy_from_slice(name);
        key_out[..key.len()].copy_from_slice(&key);
        Ok(key.len())
    });
    b.set_verify(SslVerifyMode::NONE);
    let mut c = b.build().configure().expect("configure");
    c.set_verify_hostname(false);
    c.set_use_server_name_indication(false);
    let tcp = TcpStream::connect(("127.0.0.1", port)).expect("tcp");
    tcp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    tcp.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    c.connect("127.0.0.1", tcp).expect("PSK handshake")
}

/// Sends `info` and reads the 64-byte answer.
fn exchange_info(s: &mut SslStream<TcpStream>, info: &ConnectInfo) -> (Vec<u8>, ConnectInfo) {
    s.write_all(&info.encode().expect("encodes")).expect("sent");
    let mut answer = vec![0u8; 64];
    s.read_exact(&mut answer).expect("a 64-byte answer");
    let decoded = ConnectInfo::decode(&answer).expect("decodes");
    (answer, decoded)
}

/// Reads until the peer closes (0 or an error other than a timeout) within `within`;
/// whether it closed.
fn closes_within(s: &mut SslStream<TcpStream>, within: Duration) -> bool {
    let end = Instant::now() + within;
    let mut buf = [0u8; 1024];
    while Instant::now() < end {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => {
                let timeout = matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
                if !timeout {
                    return true;
                }
            }
        }
    }
    false
}

fn wait_for(what: &str, within: Duration, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + within;
    while !cond() {
        assert!(
            Instant::now() < end,
            "{what} did not happen within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

// ------------------------------------------------------------------------------ self-signed

#[test]
fn self_signed_registers_once_pins_both_sides_then_connects_without_credentials() {
    let tmp = TempDir::new("ssc-ok");
    let (plc_dir, client_dir) = (tmp.join("plc"), tmp.join("client"));
    let secure = ssc_server(&plc_dir);
    let plc_fp = secure.fingerprint().expect("a certificate").to_string();
    let rt = runtime(secure);

    let mut first = connect(config(
        &rt,
        client(ssc(Some(("Administrator", "1"))), &client_dir),
    ));
    assert_eq!(
        first.target().net_id,
        plc_net_id(),
        "the NetId of the answer"
    );
    let client_net_id = first.source().expect("a source").net_id;
    let notes = first.take_notes().join("\n");
    assert!(notes.contains("route registered"), "{notes}");
    drop(first);

    let pins = read_text(&client_dir.join("known-plcs"));
    assert!(
        pins.lines()
            .any(|l| l == format!("{} {plc_fp}", endpoint(&rt))),
        "the PLC pinned by its endpoint: {pins}"
    );
    let trusted = read_text(&plc_dir.join("trusted-clients"));
    let client_fp = fingerprint_of(&client_dir.join("client.crt"));
    assert!(
        trusted
            .lines()
            .any(|l| l == format!("{client_net_id} {client_fp}")),
        "the client registered by its NetId: {trusted}"
    );

    // Again, without credentials: known by its certificate now.
    let mut second = connect(config(&rt, client(ssc(None), &client_dir)));
    let notes = second.take_notes();
    assert!(
        notes.is_empty(),
        "nothing registered, nothing created: {notes:?}"
    );
    assert_eq!(second.target().net_id, plc_net_id());
    drop(second);

    // The shadow's own way in, over the same route.
    let mut setup = ShadowSetup::new(endpoint(&rt));
    setup.robot = Some(uvigo8());
    setup.timeout = Duration::from_secs(3);
    setup.secure = Some(client(ssc(None), &client_dir));
    let mut c = match shadow::connect(&setup) {
        Ok(c) => c,
        Err(e) => panic!("the shadow connects: {e}"),
    };
    assert_eq!(c.target.net_id, plc_net_id());
    let exchanged = run_for(&mut c.shadow, 500);
    assert!(exchanged > 0, "cycles exchanged over TLS");
    assert!(rt.server.stats().frames.load(Ordering::Relaxed) > 0);
}

#[test]
fn self_signed_without_registration_or_pin_says_to_add_a_route() {
    let tmp = TempDir::new("ssc-noroute");
    let rt = runtime(ssc_server(&tmp.join("plc")));
    let e = connect_err(config(&rt, client(ssc(None), &tmp.join("client"))));
    assert_words(&e, &["no route", "cdpr route add", "--user", "--password"]);
    assert!(
        !tmp.join("client/known-plcs").exists(),
        "nothing pinned without a route"
    );
}

#[test]
fn self_signed_wrong_password_is_refused_with_error_4() {
    let tmp = TempDir::new("ssc-password");
    let rt = runtime(ssc_server(&tmp.join("plc")));
    let e = connect_err(config(
        &rt,
        client(ssc(Some(("Administrator", "2"))), &tmp.join("client")),
    ));
    assert_words(
        &e,
        &["refused", "TlsConnectInfo error 4", "user or password"],
    );
    assert!(
        !tmp.join("client/known-plcs").exists(),
        "a refused PLC is not pinned"
    );
    let trusted = std::fs::read_to_string(tmp.join("plc/trusted-clients")).unwrap_or_default();
    assert!(
        trusted.lines().all(|l| l.starts_with('#')),
        "no route added: {trusted}"
    );
}

#[test]
fn self_signed_pinned_plc_but_unregistered_certificate_is_refused_with_error_3() {
    let tmp = TempDir::new("ssc-unknown");
    let rt = runtime(ssc_server(&tmp.join("plc")));
    let (a, b) = (tmp.join("a"), tmp.join("b"));
    drop(connect(config(
        &rt,
        client(ssc(Some(("Administrator", "1"))), &a),
    )));
    std::fs::create_dir_all(&b).unwrap();
    std::fs::copy(a.join("known-plcs"), b.join("known-plcs")).unwrap();
    let e = connect_err(config(&rt, client(ssc(None), &b)));
    assert_words(
        &e,
        &["TlsConnectInfo error 3", "does not trust", "cdpr route add"],
    );
    assert_ne!(
        fingerprint_of(&a.join("client.crt")),
        fingerprint_of(&b.join("client.crt")),
        "two machines, two certificates"
    );
}

#[test]
fn a_changed_plc_fingerprint_is_refused_until_accepted_then_pinned_again() {
    let tmp = TempDir::new("ssc-changed");
    let secure = ssc_server(&tmp.join("plc"));
    let plc_fp = secure.fingerprint().expect("fp").to_string();
    let rt = runtime(secure);
    let dir = tmp.join("client");
    drop(connect(config(
        &rt,
        client(ssc(Some(("Administrator", "1"))), &dir),
    )));
    let other = ["AB"; 32].join(":");
    let pins = dir.join("known-plcs");
    std::fs::write(&pins, format!("{} {other}\n", endpoint(&rt))).unwrap();

    let e = connect_err(config(&rt, client(ssc(None), &dir)));
    assert_words(
        &e,
        &[
            "changed",
            "--accept-fingerprint",
            &plc_fp,
            &other,
            "do not connect",
        ],
    );

    let mut accept = client(ssc(None), &dir);
    accept.accept_fingerprint = Some(plc_fp.to_lowercase());
    let mut t = connect(config(&rt, accept));
    let notes = t.take_notes().join("\n");
    assert!(notes.contains("accepted the new certificate"), "{notes}");
    drop(t);
    let text = read_text(&pins);
    assert!(
        text.lines()
            .any(|l| l == format!("{} {plc_fp}", endpoint(&rt))),
        "re-pinned: {text}"
    );
    assert!(!text.contains(&other), "the old pin is gone: {text}");
    // And from now on without the flag.
    drop(connect(config(&rt, client(ssc(None), &dir))));
}

// ------------------------------------------------------------------------------ shared CA

/// A PLC certificate signed by the CA in `dir` (`ca.pem`, `ca.key`) that expired yesterday,
/// made with the `openssl` crate: `plc-expired.pem`, `plc-expired.key`.
fn make_expired(dir: &Path) {
    use openssl::asn1::Asn1Time;
    use openssl::bn::BigNum;
    use openssl::hash::MessageDigest;
    use openssl::pkey::PKey;
    use openssl::rsa::Rsa;
    use openssl::x509::{X509, X509NameBuilder};
    let ca = X509::from_pem(&std::fs::read(dir.join("ca.pem")).unwrap()).unwrap();
    let ca_key = PKey::private_key_from_pem(&std::fs::read(dir.join("ca.key")).unwrap()).unwrap();
    let key = PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", "plc").unwrap();
    let name = name.build();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&BigNum::from_u32(4242).unwrap().to_asn1_integer().unwrap())
        .unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(ca.subject_name()).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::from_unix(now - 30 * 86_400).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::from_unix(now - 86_400).unwrap())
        .unwrap();
    b.sign(&ca_key, MessageDigest::sha256()).unwrap();
    let cert = b.build();
    std::fs::write(dir.join("plc-expired.pem"), cert.to_pem().unwrap()).unwrap();
    std::fs::write(
        dir.join("plc-expired.key"),
        key.private_key_to_pem_pkcs8().unwrap(),
    )
    .unwrap();
}

fn sca_server(pki: &Path, plc: &str) -> SecureServer {
    SecureServer::new(
        ServerMode::SharedCa {
            cert: pki.join(format!("{plc}.pem")),
            key: pki.join(format!("{plc}.key")),
            ca: pki.join("ca.pem"),
        },
        Some(pki),
        plc_net_id(),
    )
    .expect("shared-CA server")
}

fn sca_client(pki: &Path, ca: &str, host_name: &str) -> SecureClient {
    let mut c = client(
        ClientMode::SharedCa {
            cert: pki.join("client.pem"),
            key: pki.join("client.key"),
            ca: pki.join(format!("{ca}.pem")),
        },
        &pki.join("client-dir"),
    );
    c.host_name = Some(host_name.to_string());
    c
}

#[test]
fn shared_ca_connects_and_refuses_a_cn_mismatch_a_foreign_ca_and_an_expired_certificate() {
    if !have_openssl("shared_ca") {
        return;
    }
    let tmp = TempDir::new("sca");
    let pki = tmp.0.as_path();
    openssl_ca(pki, "ca", "TestCA");
    openssl_signed(pki, "ca", "plc", "plc");
    openssl_signed(pki, "ca", "client", "shadow-client");
    openssl_ca(pki, "ca2", "OtherCA");
    make_expired(pki);

    let rt = runtime(sca_server(pki, "plc"));
    // The certificate's CN as the host name: accepted, and a shadow runs.
    let t = connect(config(&rt, sca_client(pki, "ca", "shadow-client")));
    assert_eq!(t.target().net_id, plc_net_id());
    let mut s = shadow_over(t, false);
    assert!(run_for(&mut s, 500) > 0, "cycles exchanged");
    drop(s);

    // The PLC's CN named (--plc-cn): the right one passes, another is refused before anything
    // is sent (a laptop's certificate from the same CA must not pass for the PLC).
    let mut named = sca_client(pki, "ca", "shadow-client");
    named.plc_common_name = Some("PLC".into());
    drop(connect(config(&rt, named.clone())));
    named.plc_common_name = Some("line-3-plc".into());
    let e = connect_err(config(&rt, named));
    assert_words(
        &e,
        &[
            "names CN `plc`",
            "--plc-cn asks for `line-3-plc`",
            "nothing was sent",
        ],
    );

    // Another host name than the certificate's CN.
    let e = connect_err(config(&rt, sca_client(pki, "ca", "other")));
    assert_words(
        &e,
        &[
            "TlsConnectInfo error 2",
            "common name",
            "--secure-host-name",
        ],
    );

    // The client trusts another CA than the one that signed the PLC's certificate.
    let e = connect_err(config(&rt, sca_client(pki, "ca2", "shadow-client")));
    assert_words(
        &e,
        &["TLS handshake", "not signed by the CA", "ca2.pem", "--ca"],
    );
    drop(rt);

    // The PLC's certificate expired.
    let rt = runtime(sca_server(pki, "plc-expired"));
    let e = connect_err(config(&rt, sca_client(pki, "ca", "shadow-client")));
    assert_words(&e, &["TLS handshake", "expired", "renew"]);
}

// ------------------------------------------------------------------------------ PSK

#[test]
fn psk_identity_is_case_insensitive_and_a_wrong_password_is_a_psk_mismatch() {
    let tmp = TempDir::new("psk");
    let rt = runtime(psk_server(&tmp.0));
    let t = connect(config(&rt, client(psk("secret"), &tmp.0)));
    assert_eq!(t.target().net_id, plc_net_id());
    let mut s = shadow_over(t, false);
    assert!(run_for(&mut s, 500) > 0, "cycles exchanged");
    drop(s);

    let e = connect_err(config(&rt, client(psk("Secret"), &tmp.0)));
    assert_words(&e, &["TLS handshake", "PSK mismatch", "password"]);
}

// ------------------------------------------------------------------------------ TlsConnectInfo

#[test]
fn a_tls_connect_info_of_another_version_is_answered_with_error_1() {
    let tmp = TempDir::new("version");
    let rt = runtime(psk_server(&tmp.0));
    let refused_before = rt.server.stats().refused_tls.load(Ordering::Relaxed);
    let mut s = raw_psk_client(rt.server.local_addr().port());
    let info = ConnectInfo {
        version: 2,
        ..ConnectInfo::request(0, AmsNetId([10, 0, 0, 9, 1, 1]), "raw", None)
    };
    let (bytes, answer) = exchange_info(&mut s, &info);
    assert_eq!(bytes.len(), 64);
    assert_eq!(u16::from_le_bytes([bytes[0], bytes[1]]), 64);
    assert_ne!(answer.flags & flag::RESPONSE, 0, "the response flag");
    assert_eq!(answer.flags & flag::AMS_ALLOWED, 0, "no AMS allowed");
    assert_eq!(bytes[5], 1);
    assert_eq!(answer.refusal(), Some(ConnectError::Version));
    assert_eq!(answer.net_id, plc_net_id());
    assert!(
        closes_within(&mut s, Duration::from_secs(2)),
        "the PLC closes after refusing"
    );
    wait_for("the refusal counted", Duration::from_secs(2), || {
        rt.server.stats().refused_tls.load(Ordering::Relaxed) > refused_before
    });
}

// ------------------------------------------------------------------------------ exchanges

#[test]
fn every_exchange_runs_over_tls() {
    let tmp = TempDir::new("exchanges");
    let rt = seed_runtime_psk(&tmp.0);
    for exchange in [
        Exchange::SumHandle,
        Exchange::SumAddress,
        Exchange::Single,
        Exchange::Notify,
    ] {
        let mut c = config(&rt, client(psk("secret"), &tmp.0));
        c.exchange = ExchangeChoice::Force(exchange);
        let mut s = shadow_over(connect(c), exchange == Exchange::Notify);
        let exchanged = run_for(&mut s, 400);
        let sum = s.summary();
        assert_eq!(sum.exchange, Some(exchange), "forced {exchange:?}");
        assert!(sum.cycles > 0 && exchanged > 0, "{exchange:?}: no cycles");
    }
}

/// A PSK PLC playing seed 000 (moving, so every exchange carries changing values).
fn seed_runtime_psk(dir: &Path) -> Runtime {
    let robot = uvigo8();
    let options = cdpr_core::trajectory::BuiltinOptions {
        speed: 0.4,
        dt: 0.002,
        ..cdpr_core::trajectory::BuiltinOptions::default()
    };
    let trajectory = cdpr_core::trajectory::builtin(&robot, "seed000", &options).expect("seed000");
    secure_runtime(&robot, trajectory, Arc::new(psk_server(dir)))
}

// ------------------------------------------------------------------------------ hostile peers

#[test]
fn a_huge_frame_length_inside_tls_closes_the_connection_on_the_server() {
    let tmp = TempDir::new("hostile-client");
    let rt = runtime(psk_server(&tmp.0));
    let rejected_before = rt.server.stats().rejected.load(Ordering::Relaxed);
    let mut s = raw_psk_client(rt.server.local_addr().port());
    let (_, answer) = exchange_info(
        &mut s,
        &ConnectInfo::request(0, AmsNetId([10, 0, 0, 9, 1, 1]), "raw", None),
    );
    assert_eq!(answer.refusal(), None, "accepted");
    let mut header = [0u8; 32];
    header[..6].copy_from_slice(&plc_net_id().0);
    header[6..8].copy_from_slice(&851u16.to_le_bytes());
    header[8..14].copy_from_slice(&[10, 0, 0, 9, 1, 1]);
    header[14..16].copy_from_slice(&30000u16.to_le_bytes());
    header[16..18].copy_from_slice(&2u16.to_le_bytes()); // Read
    header[18..20].copy_from_slice(&4u16.to_le_bytes()); // request
    header[20..24].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    s.write_all(&header).expect("sent");
    assert!(
        closes_within(&mut s, Duration::from_secs(2)),
        "the server closes a connection announcing 4 GiB"
    );
    wait_for("the rejection counted", Duration::from_secs(2), || {
        rt.server.stats().rejected.load(Ordering::Relaxed) > rejected_before
    });
}

/// A fake PLC speaking TLS-PSK: answers the TlsConnectInfo properly, then to any request an
/// AMS header claiming 0x7FFF_FFF0 data bytes (and nothing after it). Serves up to `n`
/// connections (the client may reopen); its port.
fn fake_plc(n: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).expect("acceptor");
    b.set_min_proto_version(Some(SslVersion::TLS1_2)).unwrap();
    b.set_max_proto_version(Some(SslVersion::TLS1_2)).unwrap();
    b.set_cipher_list(PSK_CIPHERS).unwrap();
    b.set_psk_server_callback(|_, identity, key_out| {
        let identity = String::from_utf8_lossy(identity.unwrap_or_default()).to_string();
        let key = psk_key(&identity, "secret");
        key_out[..key.len()].copy_from_slice(&key);
        Ok(key.len())
    });
    b.set_verify(SslVerifyMode::NONE);
    let acceptor = Arc::new(b.build());
    std::thread::spawn(move || {
        for tcp in listener.incoming().take(n) {
            let Ok(tcp) = tcp else { continue };
            let acceptor = Arc::clone(&acceptor);
            std::thread::spawn(move || {
                tcp.set_read_timeout(Some(Duration::from_secs(10))).ok();
                let Ok(mut s) = acceptor.accept(tcp) else {
                    return;
                };
                let mut head = [0u8; 2];
                if s.read_exact(&mut head).is_err() {
                    return;
                }
                let mut rest = vec![0u8; usize::from(u16::from_le_bytes(head)).max(2) - 2];
                if s.read_exact(&mut rest).is_err() {
                    return;
                }
                let answer = ConnectInfo::response(None, AmsNetId([10, 9, 8, 7, 1, 1]), "fake")
                    .encode()
                    .unwrap();
                if s.write_all(&answer).is_err() {
                    return;
                }
                let mut buf = [0u8; 4096];
                // To the first request: a header announcing ~2 GiB, then silence until the
                // client goes.
                if !matches!(s.read(&mut buf), Ok(n) if n > 0) {
                    return;
                }
                let mut header = [0u8; 32];
                header[16..18].copy_from_slice(&2u16.to_le_bytes());
                header[18..20].copy_from_slice(&5u16.to_le_bytes()); // reply
                header[20..24].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
                if s.write_all(&header).is_err() {
                    return;
                }
                while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    port
}

#[test]
fn a_huge_frame_length_from_a_fake_plc_inside_tls_is_an_error_on_the_client() {
    let tmp = TempDir::new("hostile-plc");
    let port = fake_plc(8);
    let mut c = AdsConfig::new(
        format!("127.0.0.1:{port}"),
        AmsAddr::new(AmsNetId([0; 6]), 851),
    );
    c.timeout = Duration::from_secs(2);
    c.secure = Some(client(psk("secret"), &tmp.0));
    let started = Instant::now();
    let t = connect(c);
    assert_eq!(t.target().net_id, AmsNetId([10, 9, 8, 7, 1, 1]));
    let e = match ShadowLink::connect(
        t,
        &cdpr_ads::PlcSymbols::of(&uvigo8()).expect("[plc]"),
        WritePolicy::AllowListed,
    ) {
        Ok(_) => panic!("a PLC sending a 2 GiB frame must not be served"),
        Err(e) => e.to_string(),
    };
    assert_words(&e, &["exceeds the limit"]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "refused at once, not after reading: {:?}",
        started.elapsed()
    );
}

/// A peer that dribbles its ClientHello a byte a second (each byte within the per-read
/// timeout) is cut off at the handshake deadline, not minutes later; and a flood of silent
/// connections does not keep a real client out.
#[test]
fn a_dribbled_or_flooded_handshake_is_cut_off() {
    use cdpr_ads::server::tcp::{HANDSHAKE_DEADLINE, MAX_HANDSHAKES};
    use std::io::Read;
    let tmp = TempDir::new("dribble");
    let rt = runtime(psk_server(&tmp.0));
    let addr = rt.server.local_addr();
    let mut slow = TcpStream::connect(addr).expect("connects");
    slow.set_read_timeout(Some(Duration::from_millis(900)))
        .expect("timeout");
    let started = std::time::Instant::now();
    // A TLS record header announcing a 200-byte handshake message, then a byte a second.
    let hello = [
        0x16u8, 0x03, 0x01, 0x00, 0xC8, 0x01, 0x00, 0x00, 0xC4, 0x03, 0x03,
    ];
    let mut closed = None;
    for b in hello.iter().cycle().take(20) {
        if slow.write_all(&[*b]).is_err() {
            closed = Some(started.elapsed());
            break;
        }
        let mut buf = [0u8; 64];
        match slow.read(&mut buf) {
            Ok(0) => {
                closed = Some(started.elapsed());
                break;
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                closed = Some(started.elapsed());
                break;
            }
        }
    }
    let closed = closed.expect("the dribbling peer is cut off");
    assert!(
        closed >= HANDSHAKE_DEADLINE - Duration::from_millis(500)
            && closed < HANDSHAKE_DEADLINE + Duration::from_secs(3),
        "cut off after {closed:?}, deadline {HANDSHAKE_DEADLINE:?}"
    );

    // A flood of silent connections, twice the handshake places, cannot keep a real client
    // out: each newcomer closes the oldest handshake under way, and the real one (a
    // millisecond's handshake) gets through while they keep coming.
    let mut silent: Vec<TcpStream> = (0..2 * MAX_HANDSHAKES)
        .map(|_| TcpStream::connect(addr).expect("connects"))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // A real client (which reconnects, as the shadow does) is in within 2 s, while the flood
    // still holds its sockets; without eviction the silent ones would hold every place until
    // their 5 s deadline. (On a loaded machine the evicted handshakes' threads may not have
    // ended yet when the first attempt comes: then that attempt is refused.)
    wait_for(
        "a real client during the flood",
        Duration::from_secs(2),
        || AdsTransport::connect(config(&rt, client(psk("secret"), &tmp.0))).is_ok(),
    );
    // The oldest silent ones were closed to make room.
    silent[0]
        .set_read_timeout(Some(Duration::from_secs(1)))
        .expect("timeout");
    let mut buf = [0u8; 8];
    assert!(
        matches!(silent[0].read(&mut buf), Ok(0) | Err(_)),
        "the oldest silent handshake was closed"
    );
    silent.clear();
}

/// The two sides set to different things: each said as such. A PSK client at a self-signed
/// PLC finds no cipher in common; a Secure ADS client at a plain ADS port is closed during the
/// handshake (the plain server takes the ClientHello for a broken AMS/TCP frame); a plain client
/// at a Secure ADS port gets no ADS answer and the PLC counts a failed handshake.
#[test]
fn mismatched_modes_and_ports_are_told_apart() {
    let tmp = TempDir::new("mismatch");
    let rt = runtime(ssc_server(&tmp.0.join("plc")));
    let text = connect_err(config(&rt, client(psk("secret"), &tmp.0.join("c"))));
    assert_words(
        &text,
        &[
            "TLS handshake",
            "no cipher suite in common",
            "different modes",
        ],
    );

    let plain = cdpr_ads::fixtures::runtime();
    let mut c = AdsConfig::new(
        plain.server.local_addr().to_string(),
        AmsAddr::new(AmsNetId([0; 6]), 851),
    );
    c.timeout = Duration::from_secs(3);
    c.secure = Some(client(psk("secret"), &tmp.0.join("c")));
    let text = connect_err(c);
    assert_words(
        &text,
        &[
            "TLS handshake",
            "closed the connection during the handshake",
            "8016",
        ],
    );

    let refused_before = rt.server.stats().refused_tls.load(Ordering::Relaxed);
    let mut c = AdsConfig::new(endpoint(&rt), AmsAddr::new(plc_net_id(), 851));
    c.timeout = Duration::from_millis(500);
    let answered = AdsTransport::connect(c).and_then(|t| {
        ShadowLink::connect(t, &cdpr_ads::PlcSymbols::defaults(), WritePolicy::ReadOnly).map(|_| ())
    });
    assert!(answered.is_err(), "a plain client gets no ADS over TLS");
    wait_for(
        "the failed handshake counted",
        Duration::from_secs(3),
        || rt.server.stats().refused_tls.load(Ordering::Relaxed) > refused_before,
    );
}

/// A first connection told which certificate to expect (`--accept-fingerprint`, or the PLC's
/// UDP announcement in `cdpr route add`) and shown another sends nothing: no credentials, no
/// route registered, no pin.
#[test]
fn an_unexpected_certificate_on_first_use_gets_no_credentials() {
    let tmp = TempDir::new("unexpected");
    let rt = runtime(ssc_server(&tmp.0.join("plc")));
    let mut c = client(ssc(Some(("Administrator", "1"))), &tmp.0.join("client"));
    let other = "AB:".repeat(31) + "AB";
    c.accept_fingerprint = Some(other.clone());
    let text = connect_err(config(&rt, c));
    assert_words(&text, &["not the expected", &other, "nothing was sent"]);
    assert!(!tmp.0.join("client/known-plcs").exists(), "nothing pinned");
    assert!(
        !tmp.0.join("plc/trusted-clients").exists(),
        "no route registered on the PLC"
    );
    // The expected one (however written) is accepted.
    let mut c = client(ssc(Some(("Administrator", "1"))), &tmp.0.join("client"));
    let fp = rt_fingerprint(&tmp.0.join("plc"));
    c.accept_fingerprint = Some(fp.replace(':', "").to_lowercase());
    drop(connect(config(&rt, c)));
    assert!(read_text(&tmp.0.join("client/known-plcs")).contains(&fp));
}

fn rt_fingerprint(plc_dir: &Path) -> String {
    fingerprint_of(&plc_dir.join("plc.crt"))
}

/// The client's whole handshake has a deadline (3 × the timeout), not only each read: a peer
/// that sends a byte well inside each read's timeout (every 150 ms against 1 s, margin for a
/// loaded machine) is cut off, and said so.
#[test]
fn a_peer_dribbling_the_handshake_is_cut_off_by_the_client() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = listener.accept() {
            // A TLS record header announcing a long ServerHello, then a byte at a time.
            for b in [0x16u8, 0x03, 0x03, 0x10, 0x00]
                .iter()
                .chain([0u8; 200].iter())
            {
                if s.write_all(&[*b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(150));
            }
        }
    });
    let tmp = TempDir::new("dribbling-peer");
    let mut c = AdsConfig::new(addr.to_string(), AmsAddr::new(AmsNetId([0; 6]), 851));
    c.timeout = Duration::from_secs(1);
    c.secure = Some(client(psk("secret"), &tmp.0));
    let started = Instant::now();
    let text = connect_err(c);
    let took = started.elapsed();
    assert_words(&text, &["no complete handshake within 3s"]);
    assert!(
        took >= Duration::from_millis(2900) && took < Duration::from_secs(6),
        "cut off after {took:?}"
    );
}

/// Credentials go out where they are needed only: a shadow given --secure-user connects to a
/// PLC pinned already without sending them (wrong ones do not matter); `cdpr route add`
/// (`always_register`) sends them every time (wrong ones are refused with error 4). And the
/// virtual PLC binds a registered certificate to its NetId: another registered client's
/// certificate does not open this NetId's route.
#[test]
fn credentials_go_out_on_first_use_or_when_asked_and_a_route_is_bound_to_its_net_id() {
    let tmp = TempDir::new("first-use");
    let rt = runtime(ssc_server(&tmp.0.join("plc")));
    let a = tmp.0.join("a");
    drop(connect(config(
        &rt,
        client(ssc(Some(("Administrator", "1"))), &a),
    )));
    // Pinned now: wrong credentials are not even sent.
    drop(connect(config(
        &rt,
        client(ssc(Some(("Administrator", "wrong"))), &a),
    )));
    let mut again = client(ssc(Some(("Administrator", "wrong"))), &a);
    again.always_register = true;
    let text = connect_err(config(&rt, again));
    assert_words(&text, &["TlsConnectInfo error 4"]);

    // Client b registers as another NetId; then, as a's NetId, without credentials: refused.
    let b = tmp.0.join("b");
    let as_net_id = |id: [u8; 6], c: SecureClient| {
        let mut cfg = config(&rt, c);
        cfg.source = AdsSource::Fixed(AmsAddr::new(AmsNetId(id), 30000));
        cfg
    };
    drop(connect(as_net_id(
        [10, 0, 0, 2, 1, 1],
        client(ssc(Some(("Administrator", "1"))), &b),
    )));
    drop(connect(as_net_id(
        [10, 0, 0, 2, 1, 1],
        client(ssc(None), &b),
    )));
    let a_net_id = {
        let t = connect(config(&rt, client(ssc(None), &a)));
        t.source().expect("connected").net_id.0
    };
    let text = connect_err(as_net_id(a_net_id, client(ssc(None), &b)));
    assert_words(&text, &["TlsConnectInfo error 3"]);
}
