//! Secure ADS (ADS over TLS 1.2) on the wire, checked with a tool this project did not write:
//! the `openssl` command. `openssl s_client` talks to `cdpr plc --secure ssc|sca|psk` with
//! hand-made bytes (a TlsConnectInfo, then one bare AMS frame, ReadDeviceInfo); `openssl
//! s_server` stands in for a PLC's TLS endpoint and records what `cdpr shadow --secure psk`
//! sends: a 64-byte TlsConnectInfo, then AMS frames without the 6-byte AMS/TCP header.
//!
//! Without the `openssl` command the tests say why and pass, unless `CDPR_REQUIRE_OPENSSL=1`
//! (CI), when they fail.

use crate::common::*;
use cdpr_ads::fixtures::{have_openssl, openssl};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a byte count or an exit is waited for: far above a TLS handshake on a loaded
/// 2-core machine (milliseconds), a hang guard only.
const WAIT: Duration = Duration::from_secs(20);
/// The virtual PLC's NetId (its default).
const PLC_NET_ID: [u8; 6] = [127, 0, 0, 1, 1, 1];
/// The NetId the stand-in PLC (`s_server`) answers with.
const FAKE_PLC_NET_ID: [u8; 6] = [5, 6, 7, 8, 1, 1];
const PSK_IDENTITY: &str = "cdpr-test";
const PSK_PASSWORD: &str = "s3cret-psk";
const PSK_CIPHER: &str = "PSK-AES256-CBC-SHA384";
/// The invoke id of the hand-made ReadDeviceInfo.
const INVOKE_ID: u32 = 7;
/// TlsConnectInfo answer + AMS header + ReadDeviceInfo reply data.
const ANSWER_AND_REPLY: usize = 64 + 32 + 24;

// ------------------------------------------------------------------------------ the tool

/// The PSK as TwinCAT derives it, SHA-256(UPPERCASE(identity) ‖ password), in hex: computed by
/// `openssl dgst`, not by the code under test.
fn psk_hex(dir: &Path, identity: &str, password: &str) -> String {
    let input = dir.join("psk-input");
    std::fs::write(&input, format!("{}{password}", identity.to_uppercase())).expect("write");
    let out = openssl(dir, &["dgst", "-sha256", "-r", "psk-input"]);
    let hex = String::from_utf8_lossy(&out)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        hex.len(),
        64,
        "openssl dgst said {:?}",
        String::from_utf8_lossy(&out)
    );
    hex
}

/// A self-signed key and certificate `NAME.key`, `NAME.pem` with CN `cn`.
pub(crate) fn self_signed(dir: &Path, name: &str, cn: &str) {
    cdpr_ads::fixtures::openssl_ca(dir, name, cn);
}

/// A key and certificate `NAME.key`, `NAME.pem` with CN `cn`, signed by `ca.pem`/`ca.key`.
pub(crate) fn signed(dir: &Path, name: &str, cn: &str) {
    cdpr_ads::fixtures::openssl_signed(dir, "ca", name, cn);
}

/// A child process's output, collected on a thread; waited for by byte count or end.
struct Collected {
    rx: Receiver<Vec<u8>>,
    bytes: Vec<u8>,
    ended: bool,
}

impl Collected {
    fn of(mut pipe: impl Read + Send + 'static) -> Collected {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Collected {
            rx,
            bytes: Vec::new(),
            ended: false,
        }
    }

    /// Takes what arrived until `until(bytes so far)`, the end of the stream, or `within`.
    fn wait(&mut self, within: Duration, until: impl Fn(&[u8]) -> bool) {
        let deadline = Instant::now() + within;
        while !self.ended && !until(&self.bytes) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(chunk) => self.bytes.extend_from_slice(&chunk),
                Err(RecvTimeoutError::Disconnected) => self.ended = true,
                Err(RecvTimeoutError::Timeout) => return,
            }
        }
    }

    /// At least `n` bytes (or the end, or `within`).
    fn wait_for(&mut self, n: usize, within: Duration) -> &[u8] {
        self.wait(within, |b| b.len() >= n);
        &self.bytes
    }

    /// The end of the stream within `within`: whether it came.
    fn wait_end(&mut self, within: Duration) -> bool {
        self.wait(within, |_| false);
        self.ended
    }
}

/// An `openssl` process, killed when dropped (also when an assertion fails).
struct Openssl {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Collected,
    stderr: Arc<Mutex<Vec<u8>>>,
    line: String,
}

impl Openssl {
    fn spawn(dir: &Path, args: &[&str]) -> Openssl {
        let mut child = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("openssl runs");
        let stdin = child.stdin.take();
        let stdout = Collected::of(child.stdout.take().expect("stdout"));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        {
            let stderr = Arc::clone(&stderr);
            let mut pipe = child.stderr.take().expect("stderr");
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    stderr.lock().expect("stderr").extend_from_slice(&buf[..n]);
                }
            });
        }
        Openssl {
            child,
            stdin,
            stdout,
            stderr,
            line: format!("openssl {}", args.join(" ")),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to openssl's stdin");
        stdin.flush().expect("flush");
    }

    /// What it said on stderr so far, with its command line: for failure messages.
    fn told(&self) -> String {
        format!(
            "{}\n  stderr: {}",
            self.line,
            String::from_utf8_lossy(&self.stderr.lock().expect("stderr"))
        )
    }
}

impl Drop for Openssl {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `cdpr plc`, killed when dropped.
struct Plc(Proc);

impl Drop for Plc {
    fn drop(&mut self) {
        let _ = self.0.child.kill();
        let _ = self.0.child.wait();
    }
}

impl Plc {
    fn stderr(&self) -> String {
        self.0.stderr.lock().expect("stderr").clone()
    }
}

/// `cdpr plc --secure MODE EXTRA` on a free loopback port, its files in `dir`; the process
/// and its address.
fn secure_plc(mode: &str, dir: &Path, extra: &[&str]) -> (Plc, String) {
    let secure_dir = dir.join("plc-secure").display().to_string();
    let line = format!(
        "--robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --duration 600 --secure {mode}"
    );
    let mut args = words(&line);
    args.extend_from_slice(&["--secure-dir", &secure_dir]);
    args.extend_from_slice(extra);
    let (p, addr) = plc(&args);
    let first = p.first_line.clone();
    let p = Plc(p);
    assert!(
        first.contains("Secure ADS") && first.contains(&format!("mode {mode}")),
        "first line: {first}"
    );
    (p, addr)
}

// ------------------------------------------------------------------------------ the bytes

/// A client's TlsConnectInfo, written out from the layout (not by the code under test).
fn connect_info(
    flags: u16,
    net_id: [u8; 6],
    host: &str,
    credentials: Option<(&str, &str)>,
) -> Vec<u8> {
    let (user, password) = credentials.unwrap_or(("", ""));
    let mut b = Vec::new();
    b.extend_from_slice(&((64 + user.len() + password.len()) as u16).to_le_bytes());
    b.extend_from_slice(&flags.to_le_bytes());
    b.push(1); // version
    b.push(0); // error
    b.extend_from_slice(&net_id);
    b.push(user.len() as u8);
    b.push(password.len() as u8);
    b.resize(32, 0);
    b.extend_from_slice(host.as_bytes());
    b.resize(64, 0);
    b.extend_from_slice(user.as_bytes());
    b.extend_from_slice(password.as_bytes());
    b
}

/// A server's 64-byte answer: response | AMS allowed, no error, `net_id`.
fn connect_answer(net_id: [u8; 6]) -> Vec<u8> {
    let mut b = connect_info(0x03, net_id, "fake-plc", None);
    b[5] = 0;
    b
}

/// One bare AMS frame (no AMS/TCP header): ReadDeviceInfo to the PLC's port 851.
fn read_device_info() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&PLC_NET_ID);
    b.extend_from_slice(&851u16.to_le_bytes());
    b.extend_from_slice(&[10, 0, 0, 1, 1, 1]);
    b.extend_from_slice(&30000u16.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes()); // command: ReadDeviceInfo
    b.extend_from_slice(&4u16.to_le_bytes()); // state flags: request over TCP
    b.extend_from_slice(&0u32.to_le_bytes()); // data length
    b.extend_from_slice(&0u32.to_le_bytes()); // error
    b.extend_from_slice(&INVOKE_ID.to_le_bytes());
    b
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The 64-byte answer of the virtual PLC; `error` expected in it.
#[track_caller]
fn check_answer(a: &[u8], error: u8, context: &str) {
    assert!(
        a.len() >= 64,
        "{} bytes, a 64-byte answer expected: {a:02x?}\n{context}",
        a.len()
    );
    assert_eq!(
        u16_at(a, 0),
        64,
        "answer length: {:02x?}\n{context}",
        &a[..64]
    );
    let flags = u16_at(a, 2);
    assert_ne!(
        flags & 0x01,
        0,
        "response flag: {:02x?}\n{context}",
        &a[..64]
    );
    assert_eq!(a[4], 1, "version: {:02x?}\n{context}", &a[..64]);
    assert_eq!(a[5], error, "error byte: {:02x?}\n{context}", &a[..64]);
    assert_eq!(
        a[6..12],
        PLC_NET_ID,
        "the PLC's NetId: {:02x?}\n{context}",
        &a[..64]
    );
    if error == 0 {
        assert_ne!(
            flags & 0x02,
            0,
            "AMS allowed flag: {:02x?}\n{context}",
            &a[..64]
        );
    }
}

/// The ReadDeviceInfo reply after the answer; the device name.
#[track_caller]
fn check_device_info_reply(b: &[u8], context: &str) -> String {
    assert!(
        b.len() >= ANSWER_AND_REPLY,
        "{} bytes, {ANSWER_AND_REPLY} expected (answer, AMS header, ReadDeviceInfo reply): \
         {b:02x?}\n{context}",
        b.len()
    );
    let r = &b[64..];
    let header = format!("{:02x?}", &r[..32]);
    assert_eq!(
        r[0..6],
        [10, 0, 0, 1, 1, 1],
        "reply's target NetId: {header}"
    );
    assert_eq!(u16_at(r, 6), 30000, "reply's target port: {header}");
    assert_eq!(r[8..14], PLC_NET_ID, "reply's source NetId: {header}");
    assert_eq!(u16_at(r, 14), 851, "reply's source port: {header}");
    assert_eq!(u16_at(r, 16), 1, "command: {header}");
    assert_eq!(u16_at(r, 18), 0x0005, "state flags: {header}");
    assert_eq!(u32_at(r, 20), 24, "data length: {header}");
    assert_eq!(u32_at(r, 24), 0, "AMS error: {header}");
    assert_eq!(u32_at(r, 28), INVOKE_ID, "invoke id: {header}");
    let data = &r[32..56];
    assert_eq!(u32_at(data, 0), 0, "ADS result: {data:02x?}");
    let name: String = String::from_utf8_lossy(&data[8..24])
        .trim_end_matches('\0')
        .to_string();
    assert!(!name.is_empty(), "empty device name: {data:02x?}");
    format!("{name} {}.{}.{}", data[4], data[5], u16_at(data, 6))
}

// ------------------------------------------------------------------------------ s_client

/// `openssl s_client` to `addr` in TLS 1.2 with `extra`; `stdin` written to it at once
/// (s_client sends it once its handshake is done).
fn s_client(dir: &Path, addr: &str, extra: &[&str], stdin: &[u8]) -> Openssl {
    let mut args = vec![
        "s_client", "-connect", addr, "-tls1_2", "-quiet", "-ign_eof",
    ];
    args.extend_from_slice(extra);
    let mut c = Openssl::spawn(dir, &args);
    c.send(stdin);
    c
}

/// A TlsConnectInfo `request` and one ReadDeviceInfo through `s_client`: the answer must
/// accept it and the reply must come; the device as it names itself.
fn read_device_info_through(dir: &Path, addr: &str, extra: &[&str], request: &[u8]) -> String {
    let mut bytes = request.to_vec();
    bytes.extend_from_slice(&read_device_info());
    let mut c = s_client(dir, addr, extra, &bytes);
    let got = c.stdout.wait_for(ANSWER_AND_REPLY, WAIT).to_vec();
    let told = c.told();
    check_answer(&got, 0, &told);
    let device = check_device_info_reply(&got, &told);
    assert_eq!(
        got.len(),
        ANSWER_AND_REPLY,
        "more than the reply: {got:02x?}\n{told}"
    );
    device
}

/// A TlsConnectInfo `request` through `s_client` that the PLC refuses with `error`: the
/// 64-byte answer says so, and nothing follows it (the PLC closes the connection).
fn refused_through(dir: &Path, addr: &str, extra: &[&str], request: &[u8], error: u8) {
    let mut bytes = request.to_vec();
    // A frame after the refused TlsConnectInfo must not be answered.
    bytes.extend_from_slice(&read_device_info());
    let mut c = s_client(dir, addr, extra, &bytes);
    let ended = c.stdout.wait_end(WAIT);
    let got = c.stdout.bytes.clone();
    let told = c.told();
    check_answer(&got, error, &told);
    assert_eq!(got.len(), 64, "bytes after a refusal: {got:02x?}\n{told}");
    assert!(
        ended,
        "the connection stayed open after the refusal (s_client's stdout did not end)\n{told}"
    );
}

/// The requester's NetId in the hand-made TlsConnectInfos.
const CLIENT_NET_ID: [u8; 6] = [10, 0, 0, 1, 1, 1];

/// Self-signed mode: a client certificate made by `openssl req`, registered with the PLC's
/// user and password in the TlsConnectInfo (flags 0xF0: AddRemote, SelfSigned, IpAddr,
/// IgnoreCn), then one ReadDeviceInfo. A wrong password first: error 4, then the end.
#[test]
fn s_client_self_signed_registers_and_reads_the_device_info() {
    if !have_openssl("s_client_self_signed_registers_and_reads_the_device_info") {
        return;
    }
    let dir = scratch("secure_ads_ssc");
    self_signed(&dir, "client", "sclient");
    let (plc, addr) = secure_plc("ssc", &dir, &[]);
    let cert = ["-cert", "client.pem", "-key", "client.key"];

    let wrong = connect_info(0xF0, CLIENT_NET_ID, "sclient", Some(("Administrator", "2")));
    assert_eq!(wrong.len(), 64 + "Administrator".len() + 1);
    refused_through(&dir, &addr, &cert, &wrong, 4);

    let right = connect_info(0xF0, CLIENT_NET_ID, "sclient", Some(("Administrator", "1")));
    let device = read_device_info_through(&dir, &addr, &cert, &right);
    eprintln!("ssc: ReadDeviceInfo through openssl s_client: {device}");
    assert!(!plc.stderr().contains("panicked"), "{}", plc.stderr());
}

/// Shared-CA mode: a CA, the PLC's and the client's certificates made with the openssl
/// command; the host name "sclient" is the client certificate's CN. Another host name
/// without IgnoreCn: error 2.
#[test]
fn s_client_shared_ca_reads_the_device_info_and_a_cn_mismatch_is_error_2() {
    if !have_openssl("s_client_shared_ca_reads_the_device_info_and_a_cn_mismatch_is_error_2") {
        return;
    }
    let dir = scratch("secure_ads_sca");
    openssl(
        &dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-subj",
            "/CN=cdpr test CA",
            "-days",
            "2",
        ],
    );
    signed(&dir, "plc", "plc");
    signed(&dir, "client", "sclient");
    let path = |f: &str| dir.join(f).display().to_string();
    let (plc_pem, plc_key, ca_pem) = (path("plc.pem"), path("plc.key"), path("ca.pem"));
    let (plc, addr) = secure_plc(
        "sca",
        &dir,
        &["--cert", &plc_pem, "--key", &plc_key, "--ca", &ca_pem],
    );
    let client = [
        "-cert",
        "client.pem",
        "-key",
        "client.key",
        "-CAfile",
        "ca.pem",
        "-verify_return_error",
    ];

    let device = read_device_info_through(
        &dir,
        &addr,
        &client,
        &connect_info(0, CLIENT_NET_ID, "sclient", None),
    );
    eprintln!("sca: ReadDeviceInfo through openssl s_client: {device}");
    refused_through(
        &dir,
        &addr,
        &client,
        &connect_info(0, CLIENT_NET_ID, "someone-else", None),
        2,
    );
    assert!(!plc.stderr().contains("panicked"), "{}", plc.stderr());
}

/// PSK mode: the key as TwinCAT derives it (computed by `openssl dgst`), TLS 1.2 with
/// PSK-AES256-CBC-SHA384; the identity in another case (TwinCAT compares it
/// case-insensitively). A wrong password: no handshake, nothing on s_client's stdout.
#[test]
fn s_client_psk_reads_the_device_info_and_a_wrong_key_gets_no_handshake() {
    if !have_openssl("s_client_psk_reads_the_device_info_and_a_wrong_key_gets_no_handshake") {
        return;
    }
    let dir = scratch("secure_ads_psk");
    let (plc, addr) = secure_plc(
        "psk",
        &dir,
        &[
            "--psk-identity",
            PSK_IDENTITY,
            "--psk-password",
            PSK_PASSWORD,
        ],
    );
    let hex = psk_hex(&dir, PSK_IDENTITY, PSK_PASSWORD);
    let identity = PSK_IDENTITY.to_uppercase();
    let psk = [
        "-psk",
        &hex,
        "-psk_identity",
        &identity,
        "-cipher",
        PSK_CIPHER,
    ];
    let device = read_device_info_through(
        &dir,
        &addr,
        &psk,
        &connect_info(0, CLIENT_NET_ID, "sclient", None),
    );
    eprintln!("psk: ReadDeviceInfo through openssl s_client: {device}");

    let wrong = psk_hex(&dir, PSK_IDENTITY, "not-the-password");
    let psk = [
        "-psk",
        &wrong,
        "-psk_identity",
        &identity,
        "-cipher",
        PSK_CIPHER,
    ];
    let mut c = s_client(
        &dir,
        &addr,
        &psk,
        &connect_info(0, CLIENT_NET_ID, "sclient", None),
    );
    assert!(
        c.stdout.wait_end(WAIT),
        "s_client did not end after a wrong key\n{}",
        c.told()
    );
    assert!(
        c.stdout.bytes.is_empty(),
        "bytes without a handshake: {:02x?}",
        c.stdout.bytes
    );
    assert!(!plc.stderr().contains("panicked"), "{}", plc.stderr());
}

// ------------------------------------------------------------------------------ s_server

/// A free loopback port (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `openssl s_server` on `port` with the PSK of `password`, listening when returned. Its
/// readiness is probed with one TCP connection, closed at once: s_server reports the failed
/// handshake on stderr and accepts the next one.
fn psk_s_server(dir: &Path, port: u16, password: &str) -> Openssl {
    let hex = psk_hex(dir, PSK_IDENTITY, password);
    let accept = format!("127.0.0.1:{port}");
    let s = Openssl::spawn(
        dir,
        &[
            "s_server",
            "-accept",
            &accept,
            "-tls1_2",
            "-nocert",
            "-psk",
            &hex,
            "-psk_identity",
            PSK_IDENTITY,
            "-cipher",
            PSK_CIPHER,
            "-quiet",
        ],
    );
    let deadline = Instant::now() + WAIT;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "s_server does not listen\n{}",
            s.told()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    s
}

/// A `cdpr shadow`, killed when dropped. Not [`Proc`]: that waits for the first stderr line,
/// which the shadow prints only when it fails, after the exchange this test must answer.
struct Shadow {
    child: Child,
    stderr: Collected,
}

impl Drop for Shadow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cdpr shadow --secure psk` against `port`, its files in `dir`.
fn psk_shadow(dir: &Path, port: u16) -> Shadow {
    let secure_dir = dir.join("shadow-secure").display().to_string();
    let line = format!(
        "shadow --plc 127.0.0.1:{port} --robot uvigo8 --headless --secure psk \
         --psk-identity {PSK_IDENTITY} --psk-password {PSK_PASSWORD} --duration 0.5 --timeout 2s"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(words(&line))
        .args(["--secure-dir", &secure_dir])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cdpr runs");
    let stderr = Collected::of(child.stderr.take().expect("stderr"));
    Shadow { child, stderr }
}

/// The shadow's exit within [`WAIT`]: (success, stderr).
fn shadow_end(mut p: Shadow) -> (bool, String) {
    let ended = p.stderr.wait_end(WAIT);
    let err = String::from_utf8_lossy(&p.stderr.bytes).into_owned();
    assert!(ended, "cdpr shadow still running after {WAIT:?}: {err}");
    let deadline = Instant::now() + WAIT;
    let ok = loop {
        if let Some(status) = p.child.try_wait().expect("wait") {
            break status.success();
        }
        assert!(
            Instant::now() < deadline,
            "cdpr shadow closed stderr but runs on: {err}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    (ok, err)
}

/// The bare AMS frames at the start of `b` (each a 32-byte header to the stand-in PLC, its
/// data length what follows): (command, data length) of each whole one, and where they end.
fn frames_to_fake_plc(b: &[u8]) -> (Vec<(u16, usize)>, usize) {
    let (mut at, mut frames) = (0, Vec::new());
    while at + 32 <= b.len() && b[at..at + 6] == FAKE_PLC_NET_ID {
        let len = u32_at(b, at + 20) as usize;
        if at + 32 + len > b.len() {
            break;
        }
        frames.push((u16_at(b, at + 16), len));
        at += 32 + len;
    }
    (frames, at)
}

/// `openssl s_server` as the PLC's TLS endpoint: the shadow's first bytes inside TLS are a
/// 64-byte TlsConnectInfo; after the answer (written to s_server's stdin once the request
/// came) it sends bare AMS frames to the NetId of the answer, no AMS/TCP header. Nothing
/// answers them: the shadow fails, but not in TLS.
#[test]
fn s_server_sees_a_tls_connect_info_then_bare_ams_frames_from_the_shadow() {
    if !have_openssl("s_server_sees_a_tls_connect_info_then_bare_ams_frames_from_the_shadow") {
        return;
    }
    let dir = scratch("secure_ads_s_server");
    let port = free_port();
    let mut s = psk_s_server(&dir, port, PSK_PASSWORD);
    let shadow = psk_shadow(&dir, port);

    let info = s.stdout.wait_for(64, WAIT).to_vec();
    assert!(
        info.len() >= 64,
        "no TlsConnectInfo: {info:02x?}\n{}",
        s.told()
    );
    let head = format!("{:02x?}", &info[..64]);
    assert_eq!(u16_at(&info, 0), 64, "TlsConnectInfo length: {head}");
    assert_eq!(u16_at(&info, 2), 0, "flags: {head}");
    assert_eq!(info[4], 1, "version: {head}");
    assert_eq!(info[5], 0, "error: {head}");
    assert_eq!(info[6..12], PLC_NET_ID, "the shadow's NetId: {head}");
    assert_eq!((info[12], info[13]), (0, 0), "no user, no password: {head}");
    assert!(
        info[14..32].iter().all(|&b| b == 0),
        "reserved bytes: {head}"
    );
    let host: String = String::from_utf8_lossy(&info[32..64])
        .trim_end_matches('\0')
        .to_string();
    assert!(
        !host.is_empty() && !host.contains('\0'),
        "host name: {head}"
    );
    s.send(&connect_answer(FAKE_PLC_NET_ID));

    // The first frame, whole.
    s.stdout
        .wait(WAIT, |b| !frames_to_fake_plc(&b[64..]).0.is_empty());
    let (ok, err) = shadow_end(shadow);
    let after = s.stdout.bytes[64..].to_vec();
    let (frames, end) = frames_to_fake_plc(&after);
    assert!(
        !frames.is_empty(),
        "no bare AMS frame to 5.6.7.8.1.1:851 after the TlsConnectInfo: {after:02x?}\n\
         shadow: {err}\n{}",
        s.told()
    );
    let mut at = 0;
    for (i, (command, len)) in frames.iter().enumerate() {
        let f = &after[at..at + 32];
        let header = format!("{f:02x?}");
        assert_eq!(u16_at(f, 6), 851, "target port, frame {i}: {header}");
        assert_eq!(f[8..14], PLC_NET_ID, "source NetId, frame {i}: {header}");
        assert_eq!(u16_at(f, 18), 0x0004, "state flags, frame {i}: {header}");
        assert_eq!(u32_at(f, 24), 0, "error, frame {i}: {header}");
        eprintln!("shadow → s_server: bare AMS frame, command {command}, {len} bytes of data");
        at += 32 + len;
    }
    // What follows the frames: nothing, or the shadow's next connection (it reconnects when
    // the PLC does not answer), which begins with a TlsConnectInfo again.
    let rest = &after[end..];
    if !rest.is_empty() {
        assert!(
            rest.len() >= 6 && u16_at(rest, 0) == 64 && rest[4] == 1,
            "after the frames neither a frame to 5.6.7.8.1.1 nor a new TlsConnectInfo: \
             {rest:02x?}"
        );
        eprintln!("then the shadow reconnected ({} bytes more)", rest.len());
    }

    assert!(
        !ok,
        "the shadow succeeded against a PLC that answers no ADS: {err}"
    );
    let lower = err.to_lowercase();
    assert!(
        !lower.contains("tls") || !lower.contains("handshake"),
        "a TLS error after a TLS exchange that worked: {err}"
    );
    assert!(!lower.contains("psk mismatch"), "{err}");
    assert!(
        lower.contains("accepted the secure ads connection but answered no ads request"),
        "the shadow does not say that the PLC did not answer: {err}"
    );
    // The PLC accepted this machine in its TlsConnectInfo answer: no route to advise.
    assert!(!lower.contains("route add"), "{err}");
    eprintln!("the shadow, as expected: {}", err.trim());
}

/// A PLC whose PSK password differs: the handshake fails, said as a PSK mismatch.
#[test]
fn s_server_with_another_psk_password_is_a_psk_mismatch() {
    if !have_openssl("s_server_with_another_psk_password_is_a_psk_mismatch") {
        return;
    }
    let dir = scratch("secure_ads_s_server_mismatch");
    let port = free_port();
    let s = psk_s_server(&dir, port, "another-password");
    let (ok, err) = shadow_end(psk_shadow(&dir, port));
    assert!(!ok, "{err}");
    assert!(
        err.contains("PSK mismatch"),
        "no `PSK mismatch` in: {err}\n{}",
        s.told()
    );
    assert!(!err.contains("panicked"), "{err}");
}
