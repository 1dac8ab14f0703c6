//! Fixtures for the ADS tests and benches of the workspace: a virtual PLC on an ephemeral
//! loopback port, and an `ads` crate client for it. Compiled for this crate's tests and, with
//! the `fixtures` feature, for the other crates'.
#![allow(clippy::expect_used)]

use crate::server::{self, Runtime, ServerConfig, Timing};
use cdpr_core::robot::Robot;
use cdpr_core::trajectory::Trajectory;
use std::time::Duration;

pub use cdpr_core::fixtures::{robot, uvigo8};

/// A virtual PLC for uvigo8 holding its home pose (no trajectory), on 127.0.0.1:<free port>.
pub fn runtime() -> Runtime {
    runtime_with(&uvigo8(), Trajectory::default())
}

/// A virtual PLC for `robot` playing `trajectory`, on 127.0.0.1:<free port>.
pub fn runtime_with(robot: &Robot, trajectory: Trajectory) -> Runtime {
    runtime_serving(robot, trajectory, None)
}

/// [`runtime_with`], plain ADS or (`secure`) Secure ADS only.
fn runtime_serving(
    robot: &Robot,
    trajectory: Trajectory,
    secure: Option<std::sync::Arc<crate::secure::SecureServer>>,
) -> Runtime {
    let config = ServerConfig {
        secure,
        ..ServerConfig::new("127.0.0.1:0".parse().expect("address"))
    };
    Runtime::start(
        robot,
        trajectory,
        Timing::default(),
        server::default_identity(),
        config,
    )
    .expect("virtual PLC starts")
}

/// Starts `rt`'s UDP service on port 48899 (where pyads and the shadow's NetId question go,
/// with no way to say another) of a loopback address of its own, 127.x.y.z (all of 127/8 is
/// loopback on Linux), so that tests running side by side do not meet; that address.
pub fn serve_udp_on_own_loopback(rt: &mut Runtime) -> std::net::Ipv4Addr {
    let seed = std::process::id().wrapping_mul(2_654_435_761)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
    for k in 0..500u32 {
        let n = seed.wrapping_add(k.wrapping_mul(2_654_435_761));
        let [a, b, c, _] = n.to_le_bytes();
        // 127.10.0.2 and up: clear of 127.0.0.x, which other tests use.
        let ip = std::net::Ipv4Addr::new(127, 10 + a % 200, b, 2 + c % 250);
        let udp = server::UdpConfig::new((ip, 48899).into());
        if rt.serve_udp(udp).is_ok() {
            return ip;
        }
    }
    panic!("no free 127.x.y.z:48899 for the UDP service");
}

/// An `ads` crate client of `rt`'s server.
pub fn client(rt: &Runtime) -> ads::Client {
    client_at(("127.0.0.1", rt.server.local_addr().port()))
}

/// An `ads` crate client of the AMS/TCP server at `addr` (2 s timeouts).
pub fn client_at(addr: impl std::net::ToSocketAddrs) -> ads::Client {
    ads::Client::new(
        addr,
        ads::Timeouts::new(Duration::from_secs(2)),
        ads::Source::Auto,
    )
    .expect("connects")
}

/// The PLC runtime's address as the `ads` crate spells it.
pub fn target() -> ads::AmsAddr {
    ads::AmsAddr::new(ads::AmsNetId::new(127, 0, 0, 1, 1, 1), 851)
}

/// Little-endian LREALs.
pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// A writing, free-running (2 ms) shadow of `robot` with `model`, over ADS to `rt`'s server.
pub fn shadow_over_ads(
    rt: &Runtime,
    robot: &Robot,
    model: cdpr_core::sim::ModelKind,
) -> crate::shadow::Shadow<crate::link::AdsController> {
    shadow_over_ads_by(rt, robot, model, crate::link::ExchangeChoice::Auto)
}

/// [`shadow_over_ads`] over `exchange`.
pub fn shadow_over_ads_by(
    rt: &Runtime,
    robot: &Robot,
    model: cdpr_core::sim::ModelKind,
    exchange: crate::link::ExchangeChoice,
) -> crate::shadow::Shadow<crate::link::AdsController> {
    use crate::link::{AdsConfig, AdsTransport, ShadowLink, WritePolicy};
    use crate::shadow::{CycleTiming, Shadow, ShadowConfig};
    use crate::wire::{AmsAddr, AmsNetId};
    let target = AmsAddr::new(AmsNetId::LOCAL, 851);
    let mut ads = AdsConfig::new(rt.server.local_addr().to_string(), target);
    ads.exchange = exchange;
    let t = AdsTransport::connect(ads).expect("connects");
    let link = ShadowLink::connect(
        t,
        &crate::PlcSymbols::of(robot).expect("[plc]"),
        WritePolicy::AllowListed,
    )
    .expect("resolves");
    let mut config = ShadowConfig {
        write: true,
        timing: CycleTiming::Free {
            period: Duration::from_millis(2),
            plc_period: Duration::from_millis(10),
        },
        ..ShadowConfig::default()
    };
    config.sim.model = model;
    Shadow::new(link, Some(robot.clone()), config).expect("the shadow starts")
}

/// A record kept in memory (a shadow's [`crate::shadow::Recorder`] writes into it).
#[derive(Clone, Default)]
pub struct Buffer(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("buffer").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// ------------------------------------------------------------------------------ raw frames

/// The header of a request from a made-up client (10.0.0.9.1.1:30000) to the PLC runtime.
pub fn request_header(command: u16, invoke_id: u32) -> crate::wire::AmsHeader {
    use crate::wire::{self, AmsAddr, AmsHeader, AmsNetId};
    AmsHeader {
        target: AmsAddr::new(AmsNetId::LOCAL, 851),
        source: AmsAddr::new(AmsNetId([10, 0, 0, 9, 1, 1]), 30000),
        command,
        state_flags: wire::flags::REQUEST,
        data_length: 0,
        error_code: 0,
        invoke_id,
    }
}

/// A complete request frame (AMS/TCP header included).
pub fn request_frame(req: &crate::wire::Request, invoke_id: u32) -> Vec<u8> {
    use crate::wire;
    wire::encode_frame(
        &request_header(req.command(), invoke_id),
        &wire::encode_request(req),
    )
}

/// A raw TCP connection to the server on 127.0.0.1:`port` (no delay, 50 ms read timeout).
pub fn raw_connect(port: u16) -> std::net::TcpStream {
    let s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    s.set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    s
}

/// Sends a ReadState and waits (up to 5 s, else panics) for its reply, skipping any other
/// frame (replies to earlier frames, notifications). `false` if the server closed the
/// connection.
pub fn probe(s: &mut std::net::TcpStream, invoke_id: u32) -> bool {
    use crate::wire::{self, Request, cmd};
    use std::io::{Read, Write};
    use std::time::Instant;
    let req = request_frame(&Request::ReadState, invoke_id);
    if s.write_all(&req).is_err() {
        return false;
    }
    let mut buf = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        while let Ok(Some((f, used))) = wire::decode_frame(&buf, 1 << 20) {
            if let wire::Frame::Ams { header, payload } = f
                && header.command == cmd::READ_STATE
                && header.invoke_id == invoke_id
            {
                assert_eq!(header.state_flags, wire::flags::REPLY);
                assert_eq!(payload.len(), 8, "ReadState reply");
                return true;
            }
            buf.drain(..used);
        }
        assert!(
            Instant::now() < deadline,
            "server stopped answering; {} bytes pending: {:02x?}",
            buf.len(),
            &buf[..buf.len().min(64)],
        );
        let mut chunk = [0u8; 4096];
        match s.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if crate::timed_out::timed_out(&e) => {}
            Err(_) => return false,
        }
    }
}

/// A virtual PLC for `robot` playing seed 000's trajectory at `speed` m/s (2 ms samples), on
/// 127.0.0.1:<free port>.
pub fn seed000_runtime(robot: &Robot, speed: f64) -> Runtime {
    let options = cdpr_core::trajectory::BuiltinOptions {
        speed,
        dt: 0.002,
        ..cdpr_core::trajectory::BuiltinOptions::default()
    };
    let trajectory = cdpr_core::trajectory::builtin(robot, "seed000", &options).expect("seed000");
    runtime_with(robot, trajectory)
}

/// A virtual PLC for `robot` playing `trajectory`, speaking only Secure ADS (`secure`'s
/// mode) on 127.0.0.1:<free port>.
pub fn secure_runtime(
    robot: &Robot,
    trajectory: Trajectory,
    secure: std::sync::Arc<crate::secure::SecureServer>,
) -> Runtime {
    runtime_serving(robot, trajectory, Some(secure))
}

/// Whether the `openssl` command is there (the Secure ADS tests check the wire with it and make
/// their PKI with it, as Beckhoff documents); without it the test prints why and is skipped,
/// unless `CDPR_REQUIRE_OPENSSL=1` (CI), when it fails.
pub fn have_openssl(test: &str) -> bool {
    let present = std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        assert!(
            std::env::var("CDPR_REQUIRE_OPENSSL").as_deref() != Ok("1"),
            "{test}: the `openssl` command is missing and CDPR_REQUIRE_OPENSSL=1: install \
             OpenSSL 3 (apt install openssl)"
        );
        eprintln!("{test}: SKIPPED: no `openssl` command");
    }
    present
}

/// `openssl ARGS` in `dir`, which must succeed; its stdout.
pub fn openssl(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A self-signed certificate, also good as a CA, with the `openssl` command as Beckhoff's
/// documentation makes its root CA: `NAME.key`, `NAME.pem`, CN `cn`.
pub fn openssl_ca(dir: &std::path::Path, name: &str, cn: &str) {
    let (key, pem, subj) = (
        format!("{name}.key"),
        format!("{name}.pem"),
        format!("/CN={cn}"),
    );
    openssl(dir, &["genrsa", "-out", &key, "2048"]);
    openssl(
        dir,
        &[
            "req", "-x509", "-new", "-nodes", "-key", &key, "-sha256", "-subj", &subj, "-days",
            "30", "-out", &pem,
        ],
    );
}

/// A key and certificate `NAME.key`, `NAME.pem` with CN `cn`, signed by the CA `ca`
/// (`CA.pem`, `CA.key` in `dir`), with the `openssl` command.
pub fn openssl_signed(dir: &std::path::Path, ca: &str, name: &str, cn: &str) {
    let (key, csr, pem, subj) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.pem"),
        format!("/CN={cn}"),
    );
    let (ca_pem, ca_key) = (format!("{ca}.pem"), format!("{ca}.key"));
    openssl(dir, &["genrsa", "-out", &key, "2048"]);
    openssl(
        dir,
        &["req", "-new", "-key", &key, "-subj", &subj, "-out", &csr],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_pem,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-days",
            "30",
            "-sha256",
            "-out",
            &pem,
        ],
    );
}

/// `cdpr proxy` in-process on 127.0.0.1:<free port> to `to`, swallowing everything both ways
/// from `after` the first connection on, its connections kept open (a PLC whose host stopped
/// answering without closing anything).
pub fn blackhole_after(to: std::net::SocketAddr, after: Duration) -> crate::proxy::Proxy {
    let faults = crate::requests::ProxyRequest {
        blackhole_after: Some(after),
        ..Default::default()
    };
    let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    crate::proxy::Proxy::start(listen, to, faults).expect("the proxy starts")
}
