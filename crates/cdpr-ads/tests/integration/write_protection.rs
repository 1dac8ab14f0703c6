//! A client from a foreign NetId (10.0.0.9.1.1) over TCP, without `--allow-writes`: it can
//! neither rewrite the PLC's geometry nor stop its cycle counter; what the shadow writes back
//! stays writable.

use cdpr_ads::fixtures::*;
use cdpr_ads::wire::{self, Request, ads_state, error, group};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Sends `req` and returns the result code of its reply (the first u32 of the payload).
fn result_of(s: &mut TcpStream, req: &Request, invoke_id: u32) -> u32 {
    s.write_all(&request_frame(req, invoke_id)).expect("send");
    let mut buf = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some((wire::Frame::Ams { header, payload }, _))) =
            wire::decode_frame(&buf, 1 << 20)
        {
            assert_eq!(header.invoke_id, invoke_id);
            return u32::from_le_bytes(payload[..4].try_into().expect("result"));
        }
        let mut chunk = [0u8; 4096];
        if let Ok(n) = s.read(&mut chunk) {
            buf.extend_from_slice(&chunk[..n]);
        }
    }
    panic!("no reply");
}

fn write(offset: u32, data: &[u8]) -> Request<'_> {
    Request::Write {
        index_group: group::PLC_DATA,
        index_offset: offset,
        data,
    }
}

#[test]
fn a_foreign_net_id_can_neither_write_the_geometry_nor_stop_the_cycle() {
    let rt = runtime();
    let table = rt.plc.memory().table();
    let anchors = table
        .lookup_str("GVL_Shadow.aFrameAnchors")
        .expect("anchors");
    let echo = table.lookup_str("GVL_Shadow.nShadowCycle").expect("echo");
    let before = rt
        .plc
        .memory()
        .read(anchors.offset, anchors.size())
        .expect("read");
    let mut s = raw_connect(rt.server.local_addr().port());

    let zeros = vec![0u8; anchors.size()];
    assert_eq!(
        result_of(&mut s, &write(anchors.offset, &zeros), 1),
        error::INVALID_ACCESS
    );
    let stop = Request::WriteControl {
        ads_state: ads_state::STOP,
        device_state: 0,
        data: &[],
    };
    assert_eq!(result_of(&mut s, &stop, 2), error::ACCESS_DENIED);
    assert_eq!(
        result_of(&mut s, &write(echo.offset, &[7, 0, 0, 0]), 3),
        error::NO_ERROR
    );

    let cycles = rt.plc.stats().plc_cycles;
    std::thread::sleep(Duration::from_millis(100));
    assert!(rt.plc.stats().plc_cycles > cycles, "nCycle still counts");
    assert_eq!(rt.plc.memory().ads_state(), ads_state::RUN);
    assert_eq!(
        rt.plc
            .memory()
            .read(anchors.offset, anchors.size())
            .expect("read"),
        before,
        "the geometry untouched"
    );
}
