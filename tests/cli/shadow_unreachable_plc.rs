//! Why `cdpr shadow` cannot reach its PLC, told apart — nothing listening, a host
//! that takes the connection but answers no ADS request (TwinCAT without a route for this PC
//! closes it at once or stays silent), a wrong AMS NetId or port — each said once.

use crate::common::*;
use std::io::Read;
use std::net::TcpListener;

fn shadow(endpoint: &str, extra: &str) -> (Option<i32>, String) {
    let o = cdpr(&with(
        &format!("shadow --timeout 200ms {extra} --plc"),
        &[endpoint],
    ));
    (o.status.code(), stderr(&o))
}

/// Every sentence of the message once: no cause repeated down the chain.
fn said_once(err: &str, phrase: &str) {
    assert_eq!(
        err.matches(phrase).count(),
        1,
        "`{phrase}` not once in: {err}"
    );
}

#[test]
fn nothing_listening_is_not_a_missing_route() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let (code, err) = shadow(&format!("127.0.0.1:{port}"), "");
    assert_eq!(code, Some(1), "{err}");
    said_once(&err, "no PLC listening on 127.0.0.1:");
    assert!(!err.contains("route"), "{err}");
}

#[test]
fn a_connection_closed_or_left_unanswered_points_to_the_route() {
    // TwinCAT without a route for the client closes the connection at once.
    let closing = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = closing.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        for c in closing.incoming() {
            drop(c);
        }
    });
    let (code, err) = shadow(&addr, "");
    assert_eq!(code, Some(1), "{err}");
    said_once(&err, "accepted the connection but answered no ADS request");
    said_once(&err, "no route for this PC");
    assert!(
        err.contains("AMS NetId") && err.contains("assets/twincat/README.md"),
        "{err}"
    );
    // Or reads the request and never answers.
    let addr = silent_listener();
    let (code, err) = shadow(&addr, "");
    assert_eq!(code, Some(1), "{err}");
    said_once(&err, "no route for this PC");
    said_once(&err, "no reply within 200ms");
}

#[test]
fn a_wrong_net_id_or_port_is_named() {
    let (mut plc, addr) = plc(&words("-r uvigo8 --listen 127.0.0.1:0 --duration 10"));
    let (code, err) = shadow(&addr, "--ams-net-id 10.9.8.7.1.1");
    assert_eq!(code, Some(1), "{err}");
    said_once(&err, "10.9.8.7.1.1 is not the AMS NetId of the PLC");
    let (code, err) = shadow(&addr, "--ams-net-id 127.0.0.1.1.1 --ams-port 852");
    assert_eq!(code, Some(1), "{err}");
    said_once(&err, "no ADS device on AMS port 852");
    let _ = plc.child.kill();
}

#[test]
fn a_router_that_never_answers_the_port_request_ends_within_the_timeout() {
    // It takes the connection and reads, but answers nothing, not even the AMS port request.
    let addr = silent_listener();
    let started = std::time::Instant::now();
    let (code, err) = shadow(
        &addr,
        "--source request --ams-net-id 127.0.0.1.1.1 --duration 30",
    );
    let took = started.elapsed();
    assert_eq!(code, Some(1), "{err}");
    said_once(&err, "did not answer the AMS port request within 200ms");
    // Before its own client, this waited for ever (--timeout, --duration, SIGINT ignored).
    assert!(took < std::time::Duration::from_secs(10), "{took:?}: {err}");
}

#[test]
fn a_peer_claiming_a_gigabyte_frame_is_named_not_allocated() {
    // Answers the first request with an AMS/TCP header claiming 1 GiB: the shadow's client
    // refuses the length before it allocates (once, it took the shadow to 1.4 GB; 0xFFFFFFF0
    // aborted it).
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            std::thread::spawn(move || {
                use std::io::Write;
                let mut head = [0u8; 4096];
                if matches!(c.read(&mut head), Ok(n) if n > 0) {
                    let mut reply = vec![0u8, 0];
                    reply.extend_from_slice(&0x4000_0000u32.to_le_bytes());
                    reply.extend_from_slice(&[0u8; 64]);
                    let _ = c.write_all(&reply);
                }
                let _ = c.read(&mut head);
            });
        }
    });
    let (code, err) = shadow(&addr, "--ams-net-id 127.0.0.1.1.1");
    assert_eq!(code, Some(1), "{err}");
    said_once(&err, "answered, but not as an ADS device does");
    said_once(
        &err,
        "frame of 1073741824 bytes exceeds the limit of 65568 bytes",
    );
    assert!(!err.contains("route"), "{err}");
}
