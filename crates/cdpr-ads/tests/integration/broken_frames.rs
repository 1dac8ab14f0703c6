//! Robustness: 10 000 random and mutated frames against the real server over TCP, then a
//! valid request must still be answered; and 200 000 random payloads straight into the
//! request handler. Seeded (xorshift64), so a failure reproduces.

use cdpr_ads::fixtures::*;
use cdpr_ads::server::{DeviceIdentity, Session};
use cdpr_ads::wire::{self, AmsNetId, NotificationParams, Request, SumItem, group};
use std::io::{Read, Write};
use std::net::Shutdown;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Marsaglia's xorshift64: enough randomness for fuzzing, no crate needed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts panics on the server's threads (`ads-accept`, `ads-notify`, `ads-conn-…`,
/// `plc-tasks`) only: a failing assertion of another test in this binary, which runs in
/// parallel, must not be reported here as a server panic.
fn count_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let name = std::thread::current().name().map(str::to_owned);
        if name.is_some_and(|n| n.starts_with("ads-") || n.starts_with("plc-")) {
            PANICS.fetch_add(1, Ordering::SeqCst);
        }
        previous(info);
    }));
}

/// Valid requests of every kind, the seeds the mutations start from.
fn corpus() -> Vec<Vec<u8>> {
    let name = b"GVL_Shadow.aCmdLengths".as_slice();
    let items = [
        SumItem {
            index_group: group::PLC_DATA,
            index_offset: 0,
            length: 16,
            read_length: 16,
            data: &[],
        },
        SumItem {
            index_group: group::SYM_VALUE_BY_HANDLE,
            index_offset: 0x10001,
            length: 4,
            read_length: 4,
            data: &[],
        },
    ];
    let sum = |g: u32| Request::ReadWrite {
        index_group: g,
        index_offset: 2,
        read_length: 64,
        data: Box::leak(wire::encode_sum_items(g, &items).into_boxed_slice()),
    };
    let reqs = vec![
        Request::ReadState,
        Request::ReadDeviceInfo,
        Request::Read {
            index_group: group::PLC_DATA,
            index_offset: 8,
            length: 16,
        },
        Request::Write {
            index_group: group::PLC_DATA,
            index_offset: 600,
            data: &[1, 2, 3, 4],
        },
        Request::ReadWrite {
            index_group: group::SYM_HANDLE_BY_NAME,
            index_offset: 0,
            read_length: 4,
            data: name,
        },
        Request::ReadWrite {
            index_group: group::SYM_INFO_BY_NAME_EX,
            index_offset: 0,
            read_length: 798,
            data: name,
        },
        Request::Read {
            index_group: group::SYM_VALUE_BY_HANDLE,
            index_offset: 0x10001,
            length: 64,
        },
        Request::Read {
            index_group: group::SYM_UPLOAD,
            index_offset: 0,
            length: 4096,
        },
        sum(group::SUM_READ),
        sum(group::SUM_READ_EX),
        sum(group::SUM_READ_WRITE),
        sum(group::SUM_WRITE),
        Request::AddNotification(NotificationParams {
            index_group: group::PLC_DATA,
            index_offset: 0,
            length: 8,
            trans_mode: 4,
            max_delay: 0,
            cycle_time: 100_000,
        }),
        Request::DeleteNotification { handle: 1 },
        Request::WriteControl {
            ads_state: 5,
            device_state: 0,
            data: &[],
        },
    ];
    let mut frames: Vec<Vec<u8>> = reqs
        .iter()
        .enumerate()
        .map(|(k, r)| request_frame(r, k as u32))
        .collect();
    frames.push(vec![0x00, 0x10, 2, 0, 0, 0, 0, 0]); // router: port request
    frames
}

fn mutate(rng: &mut XorShift, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut f = seeds[rng.below(seeds.len())].clone();
    match rng.below(8) {
        0 => {
            let n = rng.below(120);
            rng.bytes(n)
        }
        1 => {
            for _ in 0..1 + rng.below(4) {
                let k = rng.below(f.len());
                f[k] ^= 1 << rng.below(8);
            }
            f
        }
        2 => {
            let k = rng.below(f.len());
            f[k] = rng.next() as u8;
            f
        }
        3 => {
            // Random AMS/TCP length, sometimes enormous.
            let v = if rng.below(2) == 0 {
                rng.next() as u32
            } else {
                rng.below(200) as u32
            };
            f[2..6].copy_from_slice(&v.to_le_bytes());
            f
        }
        4 if f.len() >= 30 => {
            // Random AMS data length or command id, TCP length left consistent.
            let k = if rng.below(2) == 0 { 26 } else { 22 };
            let v = rng.next() as u32;
            f[k..k + 2].copy_from_slice(&v.to_le_bytes()[..2]);
            f
        }
        5 if f.len() > 38 => {
            // Garbage payload, lengths fixed up so that the frame parses.
            let n = rng.below(200);
            f.truncate(38);
            f.extend(rng.bytes(n));
            let ams = (32 + n) as u32;
            f[2..6].copy_from_slice(&ams.to_le_bytes());
            f[26..30].copy_from_slice(&(n as u32).to_le_bytes());
            f
        }
        6 => {
            let n = rng.below(f.len());
            f.truncate(n);
            f
        }
        _ => {
            let n = rng.below(64);
            f.extend(rng.bytes(n));
            f
        }
    }
}

/// Reads and discards until the server closes the connection (or the socket fails), or
/// `keep_going` says stop; the stream needs a read timeout for `keep_going` to be polled.
fn drain_until_closed(s: &mut std::net::TcpStream, keep_going: impl Fn() -> bool) {
    let mut sink = [0u8; 4096];
    while keep_going() {
        match s.read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
}

#[test]
fn ten_thousand_broken_frames_do_not_take_the_server_down() {
    count_panics();
    let rt = runtime();
    let port = rt.server.local_addr().port();
    let seeds = corpus();
    let mut rng = XorShift(0x5EED_CDB2_0AD5_0001);
    let mut s = raw_connect(port);
    let (mut answered, mut reconnects) = (0, 0);
    for k in 0..10_000u32 {
        let f = mutate(&mut rng, &seeds);
        if std::env::var("FUZZ_TRACE").is_ok() {
            eprintln!("{k}: {:02x?}", &f[..f.len().min(48)]);
        }
        let declared = f
            .get(2..6)
            .map(|b| 6 + u32::from_le_bytes(b.try_into().expect("4")) as usize);
        let _ = s.write_all(&f);
        if declared == Some(f.len()) {
            // A whole frame (valid or not): the same connection must still answer, or have
            // been closed by the server on purpose.
            if probe(&mut s, 0x8000_0000 | k) {
                answered += 1;
                continue;
            }
        } else {
            // Truncated or with trailing bytes: end the stream so that the server sees it.
            let _ = s.shutdown(Shutdown::Write);
            let until = Instant::now() + Duration::from_secs(6);
            drain_until_closed(&mut s, || Instant::now() < until);
        }
        reconnects += 1;
        s = raw_connect(port);
        assert!(
            probe(&mut s, 0x4000_0000 | k),
            "a fresh connection is answered after frame {k}"
        );
    }
    // A real client still gets real answers.
    let c = client(&rt);
    let dev = c.device(target());
    let h = ads::Handle::new(dev, "GVL_Shadow.aFrameAnchors").expect("handle after fuzzing");
    let mut b = [0u8; 192];
    h.read(&mut b).expect("read after fuzzing");
    assert_eq!(f64s(&b)[2], 825.0);
    assert_eq!(
        PANICS.load(Ordering::SeqCst),
        0,
        "no server thread panicked"
    );
    let rejected = rt.server.stats().rejected.load(Ordering::Relaxed);
    eprintln!(
        "fuzz: {answered} answered on the same connection, {reconnects} reconnects, {rejected} connections closed as malformed"
    );
    assert!(
        rejected > 100 && answered > 1000,
        "the corpus exercised both paths"
    );
}

#[test]
fn random_payloads_into_the_request_handler_never_panic() {
    let robot = uvigo8();
    let memory = cdpr_ads::server::PlcMemory::new(
        cdpr_ads::server::SymbolTable::from_robot(&robot).expect("table"),
    );
    // Half the time as `cdpr plc` builds it: notifications sampled by the PLC task, every
    // write allowed (so that writes reach the memory).
    let device = cdpr_ads::server::Device::new(
        DeviceIdentity {
            net_id: AmsNetId::LOCAL,
            port: 851,
            name: "fuzz".into(),
        },
        memory,
    );
    let plc_device = device
        .clone()
        .allow_writes(true)
        .driven_by_plc(Duration::from_millis(10));
    let mut session = Session::default();
    let mut rng = XorShift(42);
    let seeds = corpus();
    for k in 0..200_000u32 {
        let f = if k % 2 == 0 {
            mutate(&mut rng, &seeds)
        } else {
            let n = rng.below(300);
            rng.bytes(n)
        };
        let _ = wire::decode_frame(&f, wire::MAX_AMS_LEN);
        // Whatever the bytes, interpret them as every command's payload.
        let command = (k % 10) as u16;
        let h = request_header(command, k);
        let payload = f.get(6..).unwrap_or_default();
        let device = if k % 4 < 2 { &device } else { &plc_device };
        if let Some(reply) = device.handle_frame(&mut session, &h, payload) {
            let parsed = wire::decode_frame(&reply, usize::MAX).expect("own replies parse");
            assert!(parsed.is_some());
        }
        if k % 1000 == 0 {
            let _ = device.due_notifications(&mut session, Instant::now());
            let _ = plc_device.plc_cycle_notifications(&mut session, k / 1000, u64::from(k));
        }
    }
}

/// Slow-loris: 200 attackers each open a connection, send half an AMS/TCP header and hold
/// it; whenever the server closes one, it is re-opened at once. Meanwhile 40 legitimate
/// clients connect one after the other and each asks for the ADS state: every one of them
/// must be answered (the server makes room by closing the oldest connection that has not
/// completed a frame).
#[test]
fn a_slow_loris_of_200_connections_does_not_lock_clients_out() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let rt = runtime();
    let port = rt.server.local_addr().port();
    let stop = Arc::new(AtomicBool::new(false));
    let attackers: Vec<_> = (0..200)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut opened = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
                        continue;
                    };
                    opened += 1;
                    let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
                    let _ = s.write_all(&[0, 0, 0x40]);
                    drain_until_closed(&mut s, || !stop.load(Ordering::Relaxed));
                }
                opened
            })
        })
        .collect();
    // Let the attackers fill every slot (64) and then some.
    let until = Instant::now() + Duration::from_secs(5);
    while rt.server.stats().connections.load(Ordering::Relaxed) < 100 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut served = 0;
    for k in 0..40u32 {
        let mut s = raw_connect(port);
        if probe(&mut s, k) {
            served += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let opened: u32 = attackers
        .into_iter()
        .map(|a| a.join().expect("attacker"))
        .sum();
    let evicted = rt.server.stats().evicted.load(Ordering::Relaxed);
    eprintln!(
        "slow-loris: 200 attackers opened {opened} connections, {evicted} evicted; {served} of 40 clients served"
    );
    assert_eq!(served, 40, "every legitimate client is served");
    assert!(evicted > 0, "the attack filled the server");
}
