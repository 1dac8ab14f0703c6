//! The contract the shadow's client relies on: with a PLC task, a client's cyclic
//! notifications on PLC data come as one DeviceNotification frame per PLC cycle holding every
//! registered handle's sample, stamped with the PLC's time (its start + cycles × 10 ms), no
//! cycle skipped, each sample taken after that cycle's outputs were written.

use cdpr_ads::fixtures::*;
use cdpr_ads::wire::{self, Cursor, NotificationParams, Request, cmd, group, trans_mode};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// One notification frame: its stamp and (handle, bytes) samples.
type Frame = (u64, Vec<(u32, Vec<u8>)>);

fn parse(payload: &[u8]) -> Option<Frame> {
    let mut c = Cursor::new(payload);
    let _length = c.u32()?;
    if c.u32()? != 1 {
        return None;
    }
    let stamp = c.u64()?;
    let n = c.u32()?;
    let samples = (0..n)
        .map(|_| {
            let h = c.u32()?;
            let len = c.u32()? as usize;
            Some((h, c.bytes(len)?.to_vec()))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((stamp, samples))
}

#[test]
fn one_frame_per_plc_cycle_with_every_sample_and_the_plcs_stamp() {
    let rt = runtime();
    let table = rt.plc.memory().table();
    let mut s = raw_connect(rt.server.local_addr().port());
    let names = [
        "GVL_Shadow.nCycle",
        "GVL_Shadow.aCmdLengths",
        "GVL_Shadow.aTcpPose",
    ];
    for (k, name) in names.iter().enumerate() {
        let sym = table.lookup_str(name).expect("symbol");
        let req = Request::AddNotification(NotificationParams {
            index_group: group::PLC_DATA,
            index_offset: sym.offset,
            length: u32::try_from(sym.size()).expect("u32"),
            trans_mode: trans_mode::SERVER_CYCLE,
            max_delay: 0,
            // 0, 10 ms, 1 µs: all at most the task period, so every cycle.
            cycle_time: [0, 100_000, 10][k],
        });
        s.write_all(&request_frame(&req, k as u32))
            .expect("register");
    }
    let mut buf = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        let mut chunk = [0u8; 8192];
        if let Ok(n) = s.read(&mut chunk) {
            buf.extend_from_slice(&chunk[..n]);
        }
        while let Ok(Some((f, used))) = wire::decode_frame(&buf, 1 << 20) {
            if let wire::Frame::Ams { header, payload } = f
                && header.command == cmd::NOTIFICATION
            {
                frames.push(parse(payload).expect("a notification frame"));
            }
            buf.drain(..used);
        }
    }
    // The first frame may come before the third registration: from the second on, all three.
    let full: Vec<&Frame> = frames.iter().filter(|(_, s)| s.len() == 3).collect();
    assert!(
        full.len() > 50,
        "{} full frames of {}",
        full.len(),
        frames.len()
    );
    assert!(
        frames.iter().skip(3).all(|(_, s)| s.len() == 3),
        "one frame per cycle"
    );
    let cycle_of = |f: &Frame| u32::from_le_bytes(f.1[0].1[..4].try_into().expect("4"));
    let origin = full[0].0 - u64::from(cycle_of(full[0])) * 100_000;
    for w in full.windows(2) {
        assert_eq!(cycle_of(w[1]), cycle_of(w[0]) + 1, "no cycle skipped");
        assert_eq!(w[1].0 - w[0].0, 100_000, "10 ms of PLC time apart");
    }
    for f in &full {
        // The sample of nCycle is the cycle the stamp ends: taken after its outputs.
        assert_eq!(f.0 - u64::from(cycle_of(f)) * 100_000, origin);
    }
}
