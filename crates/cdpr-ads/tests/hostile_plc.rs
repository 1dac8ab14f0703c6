//! The shadow's ADS client against a hostile PLC on loopback: replies whose AMS/TCP length is
//! 0x40000000, 0xFFFFFFF0 or 10, data lengths beyond what was asked for, and floods of
//! device notifications (unsolicited, or registered and never taken). A counting allocator
//! with a 256 MiB ceiling turns any allocation of a claimed length into a failed test (before
//! the client's own codec, 0xFFFFFFF0 aborted the process allocating 4 GiB), and the bytes
//! held after a flood must stay within the notification budget.

use cap::Cap;
use cdpr_ads::link::ads_client::connection::{ConnError, Connection, NOTIFICATION_BUDGET, Source};
use cdpr_ads::link::{AdsConfig, AdsTransport, ControllerError, Transport};
use cdpr_ads::wire::{
    self, AmsAddr, AmsHeader, AmsNetId, NotificationParams, cmd, flags, trans_mode,
};
use std::alloc::System;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, 256 << 20);

const TARGET: AmsAddr = AmsAddr::new(AmsNetId::LOCAL, 851);

/// A request as the fake PLC sees it.
struct Asked {
    header: AmsHeader,
}

/// Reads one request frame (the test's own peer trusts its client).
fn read_request(s: &mut TcpStream) -> Option<Asked> {
    let mut head = [0u8; 6];
    s.read_exact(&mut head).ok()?;
    let len = u32::from_le_bytes([head[2], head[3], head[4], head[5]]) as usize;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    let mut frame = head.to_vec();
    frame.extend_from_slice(&body);
    match wire::decode_frame(&frame, 1 << 20).ok()?? {
        (wire::Frame::Ams { header, .. }, _) => Some(Asked { header }),
        _ => None,
    }
}

/// A reply frame to `asked` with `payload`.
fn reply(asked: &Asked, payload: &[u8]) -> Vec<u8> {
    let header = AmsHeader {
        target: asked.header.source,
        source: asked.header.target,
        command: asked.header.command,
        state_flags: flags::REPLY,
        data_length: 0,
        error_code: 0,
        invoke_id: asked.header.invoke_id,
    };
    wire::encode_frame(&header, payload)
}

/// A fake PLC: each connection's requests go to `answer`, which writes what it likes.
fn fake_plc(answer: fn(&mut TcpStream, Asked)) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_nodelay(true);
            std::thread::spawn(move || {
                while let Some(asked) = read_request(&mut s) {
                    answer(&mut s, asked);
                }
            });
        }
    });
    addr
}

fn open(addr: SocketAddr) -> Connection {
    Connection::open(
        &addr.to_string(),
        TARGET,
        Source::Auto,
        Duration::from_millis(500),
        None,
    )
    .expect("connects")
}

fn ams_tcp_header(length: u32) -> Vec<u8> {
    let mut f = vec![0u8, 0];
    f.extend_from_slice(&length.to_le_bytes());
    f
}

#[test]
fn claimed_frame_lengths_are_refused_before_they_allocate() {
    for (length, what) in [
        (0x4000_0000u32, "1 GiB"),
        (0xFFFF_FFF0, "4 GiB"),
        (10, "shorter than an AMS header"),
    ] {
        let addr = match length {
            0x4000_0000 => fake_plc(|s, _| {
                let _ = s.write_all(&ams_tcp_header(0x4000_0000));
                let _ = s.write_all(&[0u8; 64]);
            }),
            0xFFFF_FFF0 => fake_plc(|s, _| {
                let _ = s.write_all(&ams_tcp_header(0xFFFF_FFF0));
                let _ = s.write_all(&[0u8; 64]);
            }),
            _ => fake_plc(|s, _| {
                let mut f = ams_tcp_header(10);
                f.extend_from_slice(&[0u8; 10]);
                let _ = s.write_all(&f);
            }),
        };
        let before = ALLOC.allocated();
        let mut c = open(addr);
        let e = c.read(0x4040, 0, 8).expect_err(what);
        assert!(
            matches!(&e, ConnError::Garbled(m) if m.contains("broken frame")),
            "{what}: {e}"
        );
        assert!(
            ALLOC.allocated() < before + (1 << 20),
            "{what}: {} bytes held",
            ALLOC.allocated() - before
        );
    }
}

#[test]
fn a_reply_longer_than_the_request_is_refused_and_the_transport_says_so() {
    // Answers every ReadWrite and Read with 0xFFFF_FF00 bytes claimed and 16 sent.
    let addr = fake_plc(|s, asked| {
        let mut p = 0u32.to_le_bytes().to_vec();
        p.extend_from_slice(&0xFFFF_FF00u32.to_le_bytes());
        p.extend_from_slice(&[0u8; 16]);
        let _ = s.write_all(&reply(&asked, &p));
    });
    let mut c = open(addr);
    let e = c.read(0x4040, 0, 8).expect_err("refused");
    assert!(e.to_string().contains("asked for"), "{e}");
    // Through the shadow's transport: a lost link naming the reply, no panic, no abort.
    let mut t = AdsTransport::connect(AdsConfig::new(addr.to_string(), TARGET)).expect("tcp");
    let e = t.resolve(&["GVL.x".into()]).expect_err("refused");
    assert!(
        matches!(&e, ControllerError::Broken(m) if m.contains("asked for")),
        "{e}"
    );
}

#[test]
fn a_late_reply_is_dropped_by_its_invoke_id_and_the_connection_stays_usable() {
    // The first request is answered late (after the client's timeout), twice; then in time.
    let addr = fake_plc(|s, asked| {
        if asked.header.invoke_id == 1 {
            std::thread::sleep(Duration::from_millis(700));
        }
        let mut p = 0u32.to_le_bytes().to_vec();
        p.extend_from_slice(&4u32.to_le_bytes());
        p.extend_from_slice(&asked.header.invoke_id.to_le_bytes());
        let _ = s.write_all(&reply(&asked, &p));
    });
    let mut c = open(addr);
    assert!(matches!(c.read(0x4040, 0, 4), Err(ConnError::Timeout(_))));
    // The reply to request 1 arrives while request 2 waits: dropped, request 2's taken.
    assert_eq!(c.read(0x4040, 0, 4).expect("second"), 2u32.to_le_bytes());
}

/// A notification frame from the fake PLC with `samples` of `size` bytes for `handle`.
fn notification(handle: u32, samples: usize, size: usize) -> Vec<u8> {
    let data = vec![0xA5u8; size];
    let items: Vec<(u32, &[u8])> = (0..samples).map(|_| (handle, &data[..])).collect();
    let a = AmsAddr::new(AmsNetId::LOCAL, 851);
    wire::encode_notification(a, a, 133_000_000_000_000_000, &items)
}

#[test]
fn notification_floods_cost_a_bounded_queue_not_memory() {
    // Every request is answered after 200 notifications of 1 KiB each: half for a handle
    // nobody registered, half for the handle the client registered but never takes.
    let addr = fake_plc(|s, asked| {
        let mut flood = Vec::with_capacity(200 * 1100);
        for k in 0..200 {
            let handle = if k % 2 == 0 { 99 } else { 1 };
            flood.extend_from_slice(&notification(handle, 1, 1024));
        }
        let _ = s.write_all(&flood);
        let payload = if asked.header.command == cmd::ADD_NOTIFICATION {
            let mut p = 0u32.to_le_bytes().to_vec();
            p.extend_from_slice(&1u32.to_le_bytes());
            p
        } else {
            let mut p = 0u32.to_le_bytes().to_vec();
            p.extend_from_slice(&4u32.to_le_bytes());
            p.extend_from_slice(&[0; 4]);
            p
        };
        let _ = s.write_all(&reply(&asked, &payload));
    });
    let mut c = open(addr);
    let handle = c
        .add_notification(NotificationParams {
            index_group: 0x4040,
            index_offset: 0,
            length: 1024,
            trans_mode: trans_mode::SERVER_CYCLE,
            max_delay: 0,
            cycle_time: 1,
        })
        .expect("registered");
    assert_eq!(handle, 1);
    let start = ALLOC.allocated();
    let mut peak = start;
    let t0 = Instant::now();
    let mut reads = 0;
    // 200 notifications of 1 KiB per request until 5 times the budget was offered.
    while reads * 200 * 1024 < 5 * NOTIFICATION_BUDGET && t0.elapsed() < Duration::from_secs(20) {
        c.read(0x4040, 0, 4).expect("read");
        reads += 1;
        peak = peak.max(ALLOC.allocated());
    }
    let counts = c.notification_counts();
    let offered = reads * 200 * 1024;
    assert!(
        offered > 4 * NOTIFICATION_BUDGET,
        "the flood offered only {offered} bytes"
    );
    assert!(
        peak - start < NOTIFICATION_BUDGET + (2 << 20),
        "held {} bytes for {offered} offered",
        peak - start
    );
    assert!(counts.dropped > 0, "{counts:?}");
    // The registration's 200 came before its handle was known; then 100 of each per read.
    assert_eq!(counts.unsolicited, counts.received + 200, "{counts:?}");
    assert_eq!(counts.received, 100 * reads as u64, "{counts:?}");
    // What is queued is the newest, in order, and taken one stamp at a time.
    let s = c.next_stamp(Duration::ZERO).expect("ok").expect("queued");
    assert_eq!(s.samples, vec![(1, vec![0xA5; 1024])]);
}

/// A fake Secure ADS PLC (TLS-PSK, `lab`/`pw`): answers the TlsConnectInfo with `info` (its
/// bytes as given), then every request with `frame` (bytes, no AMS/TCP header).
fn fake_secure_plc(info: Vec<u8>, frame: Vec<u8>) -> SocketAddr {
    use openssl::ssl::{SslAcceptor, SslMethod, SslVerifyMode, SslVersion};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).expect("acceptor");
    b.set_min_proto_version(Some(SslVersion::TLS1_2))
        .expect("tls");
    b.set_max_proto_version(Some(SslVersion::TLS1_2))
        .expect("tls");
    b.set_cipher_list(cdpr_ads::secure::PSK_CIPHERS)
        .expect("ciphers");
    b.set_psk_server_callback(|_, _, key_out| {
        let key = cdpr_ads::secure::psk_key("lab", "pw");
        key_out[..key.len()].copy_from_slice(&key);
        Ok(key.len())
    });
    b.set_verify(SslVerifyMode::NONE);
    let acceptor = std::sync::Arc::new(b.build());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(tcp) = stream else { continue };
            let (acceptor, info, frame) = (acceptor.clone(), info.clone(), frame.clone());
            std::thread::spawn(move || {
                let Ok(mut s) = acceptor.accept(tcp) else {
                    return;
                };
                let mut request = [0u8; 64];
                if s.read_exact(&mut request).is_err() || s.write_all(&info).is_err() {
                    return;
                }
                // Each request: a 32-byte AMS header and its data; answered with `frame`.
                let mut header = [0u8; 32];
                while s.read_exact(&mut header).is_ok() {
                    let len = u32::from_le_bytes([header[20], header[21], header[22], header[23]]);
                    let mut data = vec![0u8; (len as usize).min(1 << 16)];
                    if s.read_exact(&mut data).is_err() || s.write_all(&frame).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Inside TLS too, no length a peer sends is allocated before it is capped: the TlsConnectInfo
/// answer's (64 to 512 bytes) and a bare AMS frame's (the AMS header's data length, against
/// the 64 KiB limit), here under the 256 MiB allocator ceiling that a 1 or 4 GiB allocation
/// would break.
#[test]
fn claimed_lengths_inside_tls_are_refused_before_they_allocate() {
    let dir = std::env::temp_dir().join(format!("cdpr-hostile-tls-{}", std::process::id()));
    let client = cdpr_ads::secure::SecureClient {
        dir: Some(dir.clone()),
        ..cdpr_ads::secure::SecureClient::new(cdpr_ads::secure::ClientMode::Psk {
            identity: "lab".into(),
            password: "pw".into(),
        })
    };
    let ok_info = cdpr_ads::secure::ConnectInfo::response(None, AmsNetId::LOCAL, "fake")
        .encode()
        .expect("encodes");
    let open_secure = |addr: SocketAddr| {
        Connection::open(
            &addr.to_string(),
            TARGET,
            Source::Auto,
            Duration::from_millis(500),
            Some(&client),
        )
    };
    for (claim, what) in [(0x4000_0000u32, "1 GiB"), (0xFFFF_FFF0, "4 GiB")] {
        let mut frame = vec![0u8; 32];
        frame[16..18].copy_from_slice(&cmd::READ.to_le_bytes());
        frame[18..20].copy_from_slice(&flags::REPLY.to_le_bytes());
        frame[20..24].copy_from_slice(&claim.to_le_bytes());
        frame.extend_from_slice(&[0u8; 64]);
        let addr = fake_secure_plc(ok_info.clone(), frame);
        let before = ALLOC.allocated();
        let mut c = open_secure(addr).expect("TLS and TlsConnectInfo pass");
        let e = c.read(0x4040, 0, 8).expect_err(what);
        assert!(
            matches!(&e, ConnError::Garbled(m) if m.contains("exceeds the limit")),
            "{what}: {e}"
        );
        assert!(
            ALLOC.allocated() < before + (4 << 20),
            "{what}: {} bytes held",
            ALLOC.allocated().saturating_sub(before)
        );
    }
    // A TlsConnectInfo answer claiming 65 535 bytes: refused from its first two bytes.
    let mut huge = ok_info.clone();
    huge[..2].copy_from_slice(&u16::MAX.to_le_bytes());
    let addr = fake_secure_plc(huge, Vec::new());
    match open_secure(addr) {
        Err(e) => assert!(e.to_string().contains("65535 bytes"), "{e}"),
        Ok(_) => panic!("a 64 KiB TlsConnectInfo answer was taken"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
