//! No port starves another, and no flood floods the log: `cdpr plc` under the usual limit of
//! 1 024 descriptors (`ulimit -n 1024`, soft and hard, so that raising the soft limit cannot
//! help) takes 2 000 idle connections at each of its ports and still serves an ADS client and
//! a Foxglove viewer at once; the idle connections are closed after their deadlines; N
//! malformed connections, failed handshakes or closing Foxglove subscribers write a bounded
//! number of lines, and what they held back is counted in them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The descriptor limit the PLC runs under: a default shell's.
const NOFILE: u32 = 1024;
/// Idle connections opened at each port.
const IDLE: usize = 2000;

/// `cdpr plc ARGS` under `ulimit -n NOFILE`; its stderr gathered on a thread.
struct Plc {
    child: Child,
    stderr: Arc<Mutex<String>>,
    ads: SocketAddr,
    live: Option<SocketAddr>,
}

impl Plc {
    fn spawn(args: &str) -> Plc {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -n {NOFILE}; exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_cdpr"))
            .arg("plc")
            .args(crate::common::words(args))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cdpr plc runs");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let wants_live = args.contains("--foxglove");
        let (mut ads, mut live, mut seen) = (None, None, String::new());
        while ads.is_none() || (wants_live && live.is_none()) {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("cdpr plc ended: {seen}"))
                .expect("stderr");
            let after = |tag: &str| {
                line.split(tag)
                    .nth(1)
                    .and_then(|s| s.split_whitespace().next())
                    .and_then(|s| s.parse::<SocketAddr>().ok())
            };
            ads = ads.or(after("serving ADS on "));
            live = live.or(after("live view on ws://"));
            seen.push_str(&line);
            seen.push('\n');
        }
        let stderr = Arc::new(Mutex::new(seen));
        {
            let stderr = Arc::clone(&stderr);
            std::thread::spawn(move || {
                for line in lines.map_while(Result::ok) {
                    let mut s = stderr.lock().expect("stderr");
                    s.push_str(&line);
                    s.push('\n');
                }
            });
        }
        Plc {
            child,
            stderr,
            ads: ads.expect("ADS address"),
            live,
        }
    }

    /// SIGINT, the exit awaited; (success, stdout, stderr).
    fn finish(mut self) -> (bool, String, String) {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let mut out = String::new();
        if let Some(mut s) = self.child.stdout.take() {
            let _ = s.read_to_string(&mut out);
        }
        let ok = self.child.wait().expect("exits").success();
        std::thread::sleep(Duration::from_millis(200));
        let err = self.stderr.lock().expect("stderr").clone();
        (ok, out, err)
    }
}

/// This process needs a descriptor per idle connection (and the PLC's limit stays 1 024):
/// the soft limit raised to the hard one, as the library does at its first listener.
fn room_for(connections: usize) {
    let limit = cdpr_ads::ports::descriptors().limit();
    assert!(
        limit >= connections + 200,
        "this test opens {connections} connections and may have {limit} descriptors: raise the \
         hard limit (ulimit -Hn)"
    );
}

/// `n` connections to `addr` that send nothing (those the kernel completes: a PLC that
/// closes them at once still counts each).
fn idle(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok())
        .collect()
}

/// How many of `conns` the far end has closed (a read finds the end or a reset).
fn closed(conns: &[TcpStream]) -> usize {
    conns
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).expect("nonblocking");
            let mut b = [0u8; 64];
            match (&**s).read(&mut b) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
            }
        })
        .count()
}

/// An ADS client's request answered; how long it took.
fn ads_served(addr: SocketAddr) -> Duration {
    let started = Instant::now();
    let client = ads::Client::new(
        addr,
        ads::Timeouts::new(Duration::from_secs(2)),
        ads::Source::Auto,
    )
    .unwrap_or_else(|e| panic!("ADS connection refused: {e}"));
    let dev = client.device(cdpr_ads::fixtures::target());
    dev.get_info()
        .unwrap_or_else(|e| panic!("ADS request unanswered: {e}"));
    started.elapsed()
}

/// A WebSocket upgrade to the live view answered with 101; the socket and the time it took.
fn upgrade(addr: SocketAddr) -> (TcpStream, Duration) {
    let started = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(3)))
        .expect("timeout");
    write!(
        s,
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Protocol: foxglove.sdk.v1\r\n\r\n"
    )
    .expect("request");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            other => panic!(
                "no upgrade answer ({other:?}): {}",
                String::from_utf8_lossy(&head)
            ),
        }
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    (s, started.elapsed())
}

/// One WebSocket frame from the server (unmasked): its opcode and payload.
fn frame(s: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).expect("frame header");
    let len = match h[1] & 0x7F {
        126 => {
            let mut l = [0u8; 2];
            s.read_exact(&mut l).expect("length");
            u64::from(u16::from_be_bytes(l))
        }
        127 => {
            let mut l = [0u8; 8];
            s.read_exact(&mut l).expect("length");
            u64::from_be_bytes(l)
        }
        n => u64::from(n),
    };
    let mut payload = vec![0u8; usize::try_from(len).expect("length")];
    s.read_exact(&mut payload).expect("payload");
    (h[0] & 0x0F, payload)
}

/// A masked text frame, as a client sends it.
fn send_text(s: &mut TcpStream, text: &str) {
    let key = [0x37u8, 0xFA, 0x21, 0x3D];
    let mut f = vec![0x81u8];
    let n = text.len();
    if n < 126 {
        f.push(0x80 | u8::try_from(n).expect("short"));
    } else {
        f.push(0x80 | 126);
        f.extend_from_slice(&u16::try_from(n).expect("< 64 KiB").to_be_bytes());
    }
    f.extend_from_slice(&key);
    f.extend(text.bytes().enumerate().map(|(k, b)| b ^ key[k % 4]));
    s.write_all(&f).expect("send");
}

/// A viewer that subscribes to every channel advertised, then reads no more.
fn subscriber(addr: SocketAddr) -> TcpStream {
    let (mut s, _) = upgrade(addr);
    let channels = loop {
        let (op, payload) = frame(&mut s);
        if op != 1 {
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&payload).expect("JSON");
        if v["op"] == "advertise" {
            break v["channels"].as_array().cloned().unwrap_or_default();
        }
    };
    let subs: Vec<String> = channels
        .iter()
        .enumerate()
        .map(|(k, c)| format!("{{\"id\":{k},\"channelId\":{}}}", c["id"]))
        .collect();
    send_text(
        &mut s,
        &format!(
            "{{\"op\":\"subscribe\",\"subscriptions\":[{}]}}",
            subs.join(",")
        ),
    );
    s
}

/// The lines of `stderr` that contain `needle`.
fn lines_with<'a>(stderr: &'a str, needle: &str) -> Vec<&'a str> {
    stderr.lines().filter(|l| l.contains(needle)).collect()
}

/// The numbers a throttle reported held back: "(+N more since" and ": N more since".
fn held_back(lines: &[&str]) -> u64 {
    lines
        .iter()
        .filter_map(|l| {
            let (before, _) = l.split_once(" more since the last message")?;
            let n = before.rsplit(['+', ' ']).next()?;
            n.parse::<u64>().ok()
        })
        .sum()
}

#[test]
fn two_thousand_idle_connections_at_each_port_lock_out_neither_ads_nor_a_viewer() {
    room_for(2 * IDLE);
    let plc = Plc::spawn(
        "--robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --trajectory seed000 \
         --duration 120 --foxglove 127.0.0.1:0 --silent-timeout 3s",
    );
    let live = plc.live.expect("live view address");
    let started = Instant::now();
    let at_live = idle(live, IDLE);
    let live_opened = Instant::now();
    let at_ads = idle(plc.ads, IDLE);
    let ads_opened = Instant::now();
    let opened = started.elapsed();
    let ads_took = ads_served(plc.ads);
    let (viewer, viewer_took) = upgrade(live);
    eprintln!(
        "{} + {} idle connections opened in {opened:.1?}; then ADS served in {ads_took:.1?}, \
         a viewer upgraded in {viewer_took:.1?}",
        at_live.len(),
        at_ads.len()
    );
    assert!(at_live.len() > IDLE / 2 && at_ads.len() > IDLE / 2);
    // Within the client's own timeout (2 s), with room for a loaded machine.
    assert!(ads_took < Duration::from_secs(2), "{ads_took:?}");
    assert!(viewer_took < Duration::from_secs(3), "{viewer_took:?}");

    // The deadlines after the last of each was opened: 5 s for an upgrade, the 3 s asked for
    // an ADS connection's first frame (10 s by default; 3 s more for a loaded machine); the
    // viewer that upgraded stays.
    let deadline = |from: Instant, d: Duration| {
        if let Some(wait) =
            (from + d + Duration::from_secs(3)).checked_duration_since(Instant::now())
        {
            std::thread::sleep(wait);
        }
    };
    deadline(live_opened, cdpr_ads::live_view::front::UPGRADE_DEADLINE);
    assert_eq!(closed(&at_live), at_live.len(), "idle at the live view");
    deadline(ads_opened, Duration::from_secs(3));
    assert_eq!(closed(&at_ads), at_ads.len(), "idle at ADS");
    assert_eq!(closed(std::slice::from_ref(&viewer)), 0, "the viewer");
    drop((at_live, at_ads, viewer));

    let (ok, out, err) = plc.finish();
    assert!(ok, "{err}");
    // Each refusal and timeout counted; the log bounded (one line a second per kind, the
    // evictions at powers of two), never a line per connection.
    let warnings = lines_with(&err, "WARN");
    eprintln!("{} warning lines", warnings.len());
    assert!(warnings.len() < 80, "{} lines:\n{err}", warnings.len());
    assert!(held_back(&warnings) > 0, "{err}");
    assert!(
        out.contains("refused / silent / failed handshakes"),
        "{out}"
    );
}

#[test]
fn a_flood_of_malformed_connections_writes_a_bounded_log_that_counts_them_all() {
    const N: u64 = 300;
    let plc = Plc::spawn("--robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --duration 60");
    // An AMS/TCP header announcing a 2 GiB frame: refused at its first six bytes.
    for _ in 0..N {
        let mut s = TcpStream::connect(plc.ads).expect("connects");
        let _ = s.write_all(&[0, 0, 0xFF, 0xFF, 0xFF, 0x7F]);
        let mut b = [0u8; 8];
        s.set_read_timeout(Some(Duration::from_secs(2)))
            .expect("timeout");
        let _ = s.read(&mut b);
    }
    let (ok, _, err) = plc.finish();
    assert!(ok, "{err}");
    let logged = lines_with(&err, "closing ADS connection from");
    let summary = lines_with(&err, "ADS connections closed for a malformed frame");
    let mut all = logged.clone();
    all.extend(&summary);
    eprintln!(
        "{N} malformed connections: {} lines, {} held back",
        all.len(),
        held_back(&all)
    );
    assert!(all.len() <= 10, "{err}");
    assert_eq!(logged.len() as u64 + held_back(&all), N, "{err}");
}

#[test]
fn a_handshake_flood_at_secure_ads_writes_a_bounded_log_and_a_client_still_gets_in() {
    room_for(IDLE);
    let plc = Plc::spawn(
        "--robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --duration 120 --secure psk \
         --psk-identity lab --psk-password s3cret",
    );
    let started = Instant::now();
    // 200 failed handshakes (a ClientHello that is not one), then 2 000 silent connections.
    for _ in 0..200 {
        if let Ok(mut s) = TcpStream::connect(plc.ads) {
            let _ = s.write_all(b"\x16\x03\x01\x00\x05hello");
        }
    }
    let silent = idle(plc.ads, IDLE);
    let o = crate::common::cdpr(&crate::common::words(&format!(
        "shadow --plc {} --robot uvigo8 --duration 0.3 --json --secure psk --psk-identity lab \
         --psk-password s3cret",
        plc.ads
    )));
    let took = started.elapsed();
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    eprintln!(
        "200 broken handshakes and {} silent connections, then a Secure ADS shadow served \
         ({took:.1?} in all)",
        silent.len()
    );
    drop(silent);
    let (ok, out, err) = plc.finish();
    assert!(ok, "{err}");
    let warnings = lines_with(&err, "WARN");
    eprintln!("{} warning lines", warnings.len());
    assert!(warnings.len() < 60, "{} lines:\n{err}", warnings.len());
    // Every failed handshake counted: those logged plus those held back.
    let handshakes = lines_with(&err, "Secure ADS");
    assert!(
        handshakes.len() as u64 + held_back(&handshakes) >= 200,
        "{err}"
    );
    assert!(
        out.contains("refused / silent / failed handshakes"),
        "{out}"
    );
}

#[test]
fn foxglove_subscribers_that_stop_reading_and_close_write_a_bounded_log() {
    let plc = Plc::spawn(
        "--robot uvigo8 --listen 127.0.0.1:0 --udp-listen off --trajectory seed000 \
         --duration 60 --foxglove 127.0.0.1:0",
    );
    let live = plc.live.expect("live view address");
    let subscribers: Vec<TcpStream> = (0..30).map(|_| subscriber(live)).collect();
    // Their queues fill (100 snapshots a second, the scene at 30 Hz).
    std::thread::sleep(Duration::from_secs(3));
    drop(subscribers);
    std::thread::sleep(Duration::from_millis(1500));
    let (ok, _, err) = plc.finish();
    assert!(ok, "{err}");
    let from_crate = lines_with(&err, " foxglove::");
    let reported: u64 = lines_with(&err, "(foxglove crate) logged ")
        .iter()
        .filter_map(|l| {
            l.split("logged ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    eprintln!(
        "30 subscribers closed: {} of the crate's lines shown, {reported} held back",
        from_crate.len()
    );
    assert!(from_crate.len() <= 10, "{err}");
}
