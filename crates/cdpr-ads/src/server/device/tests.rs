use super::*;
use crate::server::symbols::SymbolTable;
use crate::wire::{AmsAddr, NotificationParams, trans_mode};
use std::time::Instant;

fn device() -> Device {
    let robot = cdpr_core::fixtures::uvigo8();
    let memory = PlcMemory::new(SymbolTable::from_robot(&robot).expect("table"));
    Device::new(
        DeviceIdentity {
            net_id: wire::AmsNetId::LOCAL,
            port: 851,
            name: "test".into(),
        },
        memory,
    )
}

fn header() -> AmsHeader {
    AmsHeader {
        target: AmsAddr::new(wire::AmsNetId::LOCAL, 851),
        source: AmsAddr::new(wire::AmsNetId([10, 0, 0, 1, 1, 1]), 30000),
        ..AmsHeader::default()
    }
}

fn rw(
    d: &Device,
    s: &mut Session,
    ig: u32,
    io: u32,
    rlen: u32,
    data: &[u8],
) -> Result<Vec<u8>, u32> {
    d.read_write(s, &header(), ig, io, rlen, data)
}

fn handle(d: &Device, s: &mut Session, name: &str) -> u32 {
    let h = rw(d, s, group::SYM_HANDLE_BY_NAME, 0, 4, name.as_bytes()).expect("handle");
    u32::from_le_bytes(h.try_into().expect("4 bytes"))
}

/// A handle-by-name request for `name` asking for a reply of `read_len` bytes.
fn handle_by_name(d: &Device, s: &mut Session, read_len: u32, name: &[u8]) -> Result<Vec<u8>, u32> {
    rw(d, s, group::SYM_HANDLE_BY_NAME, 0, read_len, name)
}

#[test]
fn handles_live_until_released() {
    let (d, mut s) = (device(), Session::default());
    let h = handle(&d, &mut s, "GVL_Shadow.nShadowCycle");
    assert_ne!(h, 0);
    d.write(&mut s, group::SYM_VALUE_BY_HANDLE, h, &7u32.to_le_bytes())
        .expect("write");
    assert_eq!(
        d.read(&s, group::SYM_VALUE_BY_HANDLE, h, 4),
        Ok(7u32.to_le_bytes().to_vec())
    );
    assert_eq!(
        d.read(&s, group::SYM_VALUE_BY_HANDLE, h, 8),
        Err(error::INVALID_SIZE)
    );
    d.write(&mut s, group::SYM_RELEASE_HANDLE, 0, &h.to_le_bytes())
        .expect("release");
    assert_eq!(
        d.read(&s, group::SYM_VALUE_BY_HANDLE, h, 4),
        Err(error::SYMBOL_NOT_FOUND)
    );
    assert_eq!(
        d.write(&mut s, group::SYM_RELEASE_HANDLE, 0, &h.to_le_bytes()),
        Err(error::SYMBOL_NOT_FOUND)
    );
    assert_eq!(
        handle_by_name(&d, &mut s, 2, b"GVL_Shadow.nCycle"),
        Err(error::INVALID_SIZE)
    );
}

#[test]
fn handle_table_is_bounded() {
    let (d, mut s) = (device(), Session::default());
    for _ in 0..MAX_HANDLES {
        handle(&d, &mut s, "GVL_Shadow.nCycle");
    }
    assert_eq!(
        handle_by_name(&d, &mut s, 4, b"GVL_Shadow.nCycle"),
        Err(error::NO_MEMORY)
    );
}

#[test]
fn symbol_info_and_value_by_name() {
    let (d, mut s) = (device(), Session::default());
    let info = rw(
        &d,
        &mut s,
        group::SYM_INFO_BY_NAME,
        0,
        12,
        b"GVL_Shadow.aTcpPose\0",
    )
    .expect("info");
    assert_eq!(&info[8..], &48u32.to_le_bytes());
    let entry = rw(
        &d,
        &mut s,
        group::SYM_INFO_BY_NAME_EX,
        0,
        798,
        b"GVL_Shadow.aTcpPose",
    )
    .expect("entry");
    assert_eq!(
        u32::from_le_bytes(entry[..4].try_into().expect("4")) as usize,
        entry.len()
    );
    assert_eq!(
        rw(
            &d,
            &mut s,
            group::SYM_INFO_BY_NAME_EX,
            0,
            10,
            b"GVL_Shadow.aTcpPose"
        ),
        Err(error::INVALID_SIZE)
    );
    let pose = rw(
        &d,
        &mut s,
        group::SYM_VALUE_BY_NAME,
        0,
        48,
        b"GVL_Shadow.aTcpPose",
    )
    .expect("value");
    assert_eq!(pose.len(), 48);
    assert_eq!(
        rw(&d, &mut s, group::SYM_VALUE_BY_NAME, 0, 48, b"nope"),
        Err(error::SYMBOL_NOT_FOUND)
    );
}

#[test]
fn sum_commands_dispatch_per_item() {
    let (d, mut s) = (device(), Session::default());
    // 0xF082 of two 0xF003 sub-requests: TwinCAT's "sum handle" idiom.
    let names = [
        b"GVL_Shadow.nCycle".as_slice(),
        b"GVL_Shadow.nope".as_slice(),
    ];
    let items: Vec<wire::SumItem> = names
        .iter()
        .map(|n| wire::SumItem {
            index_group: group::SYM_HANDLE_BY_NAME,
            index_offset: 0,
            length: 0,
            read_length: 4,
            data: n,
        })
        .collect();
    let req = wire::encode_sum_items(group::SUM_READ_WRITE, &items);
    let reply = rw(&d, &mut s, group::SUM_READ_WRITE, 2, 24, &req).expect("sum");
    assert_eq!(&reply[..8], &[0, 0, 0, 0, 4, 0, 0, 0]);
    assert_eq!(&reply[8..16], &[0x10, 7, 0, 0, 0, 0, 0, 0]);
    assert_eq!(reply.len(), 20, "packed: one 4-byte handle");
    // A sum inside a sum is refused per item, and an over-long sum read as a whole.
    let nested = [wire::SumItem {
        index_group: group::SUM_READ,
        index_offset: 0,
        length: 4,
        read_length: 4,
        data: &[],
    }];
    let reply = rw(
        &d,
        &mut s,
        group::SUM_READ,
        1,
        8,
        &wire::encode_sum_items(group::SUM_READ, &nested),
    )
    .expect("sum");
    assert_eq!(&reply[..4], &error::SERVICE_NOT_SUPPORTED.to_le_bytes());
    let huge = [wire::SumItem {
        index_group: group::PLC_DATA,
        index_offset: 0,
        length: u32::MAX,
        read_length: 0,
        data: &[],
    }];
    assert_eq!(
        rw(
            &d,
            &mut s,
            group::SUM_READ,
            1,
            64,
            &wire::encode_sum_items(group::SUM_READ, &huge)
        ),
        Err(error::INVALID_SIZE)
    );
}

#[test]
fn notifications_are_cyclic_or_on_change() {
    let (d, mut s) = (device(), Session::default());
    let cycle = d
        .memory
        .table()
        .lookup_str("GVL_Shadow.nCycle")
        .expect("cycle");
    let params = |mode: u32| NotificationParams {
        index_group: group::PLC_DATA,
        index_offset: cycle.offset,
        length: 4,
        trans_mode: mode,
        max_delay: 0,
        cycle_time: 100_000, // 10 ms in 100 ns ticks
    };
    assert_eq!(
        d.add_notification(&mut s, &header(), &params(1)),
        Err(error::TRANSMODE_NOT_SUPPORTED)
    );
    let on_change = d
        .add_notification(&mut s, &header(), &params(trans_mode::SERVER_ON_CHANGE))
        .expect("add");
    let t0 = Instant::now();
    assert_eq!(
        d.due_notifications(&mut s, t0).0.len(),
        1,
        "the current value at once"
    );
    assert_eq!(
        d.due_notifications(&mut s, t0 + Duration::from_millis(25))
            .0
            .len(),
        0,
        "unchanged"
    );
    d.memory
        .write_external(cycle.offset, &5u32.to_le_bytes())
        .expect("write");
    let (frames, next) = d.due_notifications(&mut s, t0 + Duration::from_millis(35));
    assert_eq!(frames.len(), 1);
    assert!(next.is_some_and(|n| n > t0 + Duration::from_millis(35)));
    let frame = &frames[0];
    assert_eq!(
        &frame[6..14],
        &header()
            .source
            .net_id
            .0
            .iter()
            .chain(&30000u16.to_le_bytes())
            .copied()
            .collect::<Vec<u8>>()[..]
    );
    assert_eq!(&frame[frame.len() - 4..], &5u32.to_le_bytes());
    let del = |s: &mut Session, h: u32| {
        d.request(s, &header(), &Request::DeleteNotification { handle: h })
            .result()
    };
    assert_eq!(del(&mut s, on_change), 0);
    assert_eq!(del(&mut s, on_change), error::NOTIFY_HANDLE_INVALID);
}

/// A hostile frame: a 0xF083 sum read that accepts a 4 GiB reply, with one item
/// asking for 0xF000_0000 bytes of an unknown index group. The item fails with its own code
/// and no data: the reply is one (result, length) pair, 8 bytes, not 3.75 GiB of padding.
#[test]
fn failed_sum_items_answer_without_padding() {
    let (d, mut s) = (device(), Session::default());
    let item = |index_group: u32, length: u32| wire::SumItem {
        index_group,
        index_offset: 0,
        length,
        read_length: length,
        data: &[],
    };
    let req = wire::encode_sum_items(group::SUM_READ_EX, &[item(0x1234, 0xF000_0000)]);
    let reply = rw(&d, &mut s, group::SUM_READ_EX, 1, u32::MAX, &req).expect("sum");
    // 0x705: the length is refused before the group is even looked at.
    let mut want = error::INVALID_SIZE.to_le_bytes().to_vec();
    want.extend_from_slice(&0u32.to_le_bytes());
    assert_eq!(reply, want);

    // A failed item between two good ones: (result, length) pairs, then only the good blocks.
    let cycle = d
        .memory
        .table()
        .lookup_str("GVL_Shadow.nCycle")
        .expect("cycle");
    let good = wire::SumItem {
        index_offset: cycle.offset,
        ..item(group::PLC_DATA, 4)
    };
    let req = wire::encode_sum_items(group::SUM_READ_EX, &[good, item(0x1234, 16), good]);
    let reply = rw(&d, &mut s, group::SUM_READ_EX, 3, 64, &req).expect("sum");
    assert_eq!(reply.len(), 3 * 8 + 4 + 4, "{reply:?}");
    assert_eq!(&reply[8..16], &[0x02, 7, 0, 0, 0, 0, 0, 0]);

    // A legal-looking item larger than anything the PLC holds, on a readable group: 0x705
    // for that item, nothing allocated for it; the others still answered.
    let req = wire::encode_sum_items(
        group::SUM_READ_EX,
        &[item(group::PLC_DATA, 0x7FFF_FFFF), good],
    );
    let reply = rw(&d, &mut s, group::SUM_READ_EX, 2, u32::MAX, &req).expect("sum");
    assert_eq!(&reply[..8], &[0x05, 7, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&reply[8..16], &[0, 0, 0, 0, 4, 0, 0, 0]);
    assert_eq!(reply.len(), 16 + 4);

    // 0xF080 has no lengths to skip a failed block by: every block is padded, so the whole
    // sum must fit the reply limit or it is refused before anything is read.
    let req = wire::encode_sum_items(group::SUM_READ, &[item(0x1234, 0xF000_0000)]);
    assert_eq!(
        rw(&d, &mut s, group::SUM_READ, 1, u32::MAX, &req),
        Err(error::INVALID_SIZE)
    );
    let req = wire::encode_sum_items(group::SUM_READ, &[item(0x1234, 16), good]);
    let reply = rw(&d, &mut s, group::SUM_READ, 2, 64, &req).expect("sum");
    assert_eq!(
        reply.len(),
        8 + 16 + 4,
        "the failed block padded, as clients step by it"
    );
}

/// What ads-client 2.1 asks at connect and for `readValue`/`createVariableHandle`.
#[test]
fn data_types_by_name_and_handles_with_their_type_as_twincat_3_answers() {
    let (d, mut s) = (device(), Session::default());
    // 0xF011: the entry of an array type names its element type and bounds ...
    let e = rw(
        &d,
        &mut s,
        group::SYM_DT_INFO_BY_NAME_EX,
        0,
        u32::MAX,
        b"ARRAY [1..8] OF LREAL\0",
    )
    .expect("array type");
    let u32_at = |b: &[u8], k: usize| u32::from_le_bytes(b[k..k + 4].try_into().expect("4"));
    let u16_at = |b: &[u8], k: usize| u16::from_le_bytes(b[k..k + 2].try_into().expect("2"));
    assert_eq!(u32_at(&e, 0) as usize, e.len(), "entryLength");
    assert_eq!(u32_at(&e, 16), 64, "size");
    assert_eq!(u32_at(&e, 24), 5, "ADST_REAL64");
    assert_eq!(u32_at(&e, 28), wire::DATATYPE_FLAG_DATATYPE);
    let (name_len, type_len, dims) = (
        u16_at(&e, 32) as usize,
        u16_at(&e, 34) as usize,
        u16_at(&e, 38),
    );
    assert_eq!(dims, 1);
    assert_eq!(&e[42..42 + name_len], b"ARRAY [1..8] OF LREAL");
    let ty = 42 + name_len + 1;
    assert_eq!(&e[ty..ty + type_len], b"LREAL");
    let bounds = ty + type_len + 2;
    assert_eq!(&e[bounds..], &[1, 0, 0, 0, 8, 0, 0, 0]);
    // ... an elementary type none, and an array the table does not use is served as well.
    let e = rw(
        &d,
        &mut s,
        group::SYM_DT_INFO_BY_NAME_EX,
        0,
        u32::MAX,
        b"udint",
    )
    .expect("udint");
    assert_eq!((u32_at(&e, 16), u32_at(&e, 24), u16_at(&e, 34)), (4, 19, 0));
    assert!(
        rw(
            &d,
            &mut s,
            group::SYM_DT_INFO_BY_NAME_EX,
            0,
            u32::MAX,
            b"ARRAY[0..7] OF LREAL"
        )
        .is_ok()
    );
    for unknown in [
        &b"ST_Unknown"[..],
        b"ARRAY [0..4294967295, 0..4294967295] OF LREAL",
        b"\xff",
    ] {
        assert_eq!(
            rw(
                &d,
                &mut s,
                group::SYM_DT_INFO_BY_NAME_EX,
                0,
                u32::MAX,
                unknown
            ),
            Err(error::SYMBOL_NOT_FOUND)
        );
    }

    // 0xF003 with room for it: handle, size, type decoration, type name.
    let r = handle_by_name(&d, &mut s, 0xFFFF_FFFF, b"GVL_Shadow.aCmdLengths\0").expect("handle");
    assert_eq!(u32_at(&r, 4), 64);
    assert_eq!(u32_at(&r, 8), 0);
    assert_eq!(u16_at(&r, 12), 21);
    assert_eq!(&r[14..], b"ARRAY [1..8] OF LREAL\0");
    let h = u32_at(&r, 0);
    assert_eq!(
        d.read(&s, group::SYM_VALUE_BY_HANDLE, h, 64)
            .map(|v| v.len()),
        Ok(64)
    );
    // Four bytes asked: the handle alone (pyads, the `ads` crate).
    assert_eq!(
        handle_by_name(&d, &mut s, 4, b"GVL_Shadow.nCycle").map(|v| v.len()),
        Ok(4)
    );

    // A sum of handle requests each claiming 0xFFFF (ads-client's createVariableHandleMulti):
    // budgeted by what the replies hold, every item answered.
    let names: Vec<&[u8]> = vec![
        b"GVL_Shadow.nCycle\0",
        b"GVL_Shadow.aTcpPose\0",
        b"GVL_Shadow.aCmdLengths\0",
    ];
    let items: Vec<wire::SumItem> = names
        .iter()
        .map(|n| wire::SumItem {
            index_group: group::SYM_HANDLE_BY_NAME,
            index_offset: 0,
            length: 0,
            read_length: 0xFFFF,
            data: n,
        })
        .collect();
    let req = wire::encode_sum_items(group::SUM_READ_WRITE, &items);
    let reply = rw(&d, &mut s, group::SUM_READ_WRITE, 3, u32::MAX, &req).expect("sum");
    for k in 0..3 {
        assert_eq!(u32_at(&reply, 8 * k), 0, "item {k}: {reply:?}");
        assert!(
            u32_at(&reply, 8 * k + 4) > 14,
            "item {k} carries the handle info"
        );
    }
}

#[test]
fn runtime_state_and_symbol_version_notify_and_the_system_service_stays_in_run() {
    let d = device().allow_writes(true);
    let mut s = Session::default();
    let add = |s: &mut Session, ig: u32, length: u32| {
        let p = NotificationParams {
            index_group: ig,
            index_offset: 0,
            length,
            trans_mode: trans_mode::SERVER_ON_CHANGE,
            max_delay: 0,
            cycle_time: 0,
        };
        d.add_notification(s, &header(), &p)
    };
    add(&mut s, group::DEVICE_DATA, 4).expect("0xF100");
    add(&mut s, group::SYM_VERSION, 1).expect("0xF008");
    let t0 = Instant::now();
    let (frames, _) = d.due_notifications(&mut s, t0);
    assert_eq!(frames.len(), 1, "both samples in one frame");
    let f = &frames[0];
    assert_eq!(&f[f.len() - 13..f.len() - 9], &[5, 0, 0, 0], "Run");
    assert_eq!(f[f.len() - 1], 1, "symbol version 1");
    assert!(
        d.due_notifications(&mut s, t0 + Duration::from_millis(5))
            .0
            .is_empty()
    );
    // Stopped over ADS: a notification says so; the system service (port 10000) stays Run.
    let stop = Request::WriteControl {
        ads_state: ads_state::STOP,
        device_state: 0,
        data: &[],
    };
    assert_eq!(d.request(&mut s, &header(), &stop).result(), 0);
    let (frames, _) = d.due_notifications(&mut s, t0 + Duration::from_millis(10));
    assert_eq!(frames.len(), 1);
    assert_eq!(&frames[0][frames[0].len() - 4..], &[6, 0, 0, 0], "Stop");
    let system = AmsHeader {
        target: AmsAddr::new(wire::AmsNetId::LOCAL, SYSTEM_SERVICE_PORT),
        command: cmd::READ_STATE,
        ..header()
    };
    let reply = d.handle_frame(&mut s, &system, &[]).expect("reply");
    assert_eq!(
        &reply[reply.len() - 8..],
        &[0, 0, 0, 0, 5, 0, 0, 0],
        "system Run"
    );
}

/// A client with no `--allow-writes`: the PLC's own symbols answer 0x704 to every way of
/// writing them, the shadow's stay writable, and the runtime cannot be stopped.
#[test]
fn a_foreign_client_cannot_write_what_the_plc_owns_nor_stop_it() {
    let (d, mut s) = (device(), Session::default());
    let table = d.memory.table();
    let anchors = table
        .lookup_str("GVL_Shadow.aFrameAnchors")
        .expect("anchors");
    let echo = table.lookup_str("GVL_Shadow.nShadowCycle").expect("echo");
    let zeros = vec![0u8; anchors.size()];
    assert_eq!(
        d.write(&mut s, group::PLC_DATA, anchors.offset, &zeros),
        Err(error::INVALID_ACCESS)
    );
    let h = handle(&d, &mut s, "GVL_Shadow.aFrameAnchors");
    assert_eq!(
        d.write(&mut s, group::SYM_VALUE_BY_HANDLE, h, &zeros),
        Err(error::INVALID_ACCESS)
    );
    // One element, a range that only touches it, a read-write: refused too.
    assert_eq!(
        d.write(&mut s, group::PLC_DATA, anchors.offset + 8, &[1]),
        Err(error::INVALID_ACCESS)
    );
    assert_eq!(
        rw(&d, &mut s, group::PLC_DATA, anchors.offset, 8, &[0; 8]),
        Err(error::INVALID_ACCESS)
    );
    let items = [
        wire::SumItem {
            index_group: group::PLC_DATA,
            index_offset: anchors.offset,
            length: 8,
            read_length: 0,
            data: &[0; 8],
        },
        wire::SumItem {
            index_group: group::PLC_DATA,
            index_offset: echo.offset,
            length: 4,
            read_length: 0,
            data: &[9, 0, 0, 0],
        },
    ];
    let req = wire::encode_sum_items(group::SUM_WRITE, &items);
    let reply = rw(&d, &mut s, group::SUM_WRITE, 2, 8, &req).expect("sum");
    assert_eq!(reply, [0x04, 7, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        d.read(&s, group::PLC_DATA, echo.offset, 4),
        Ok(vec![9, 0, 0, 0])
    );
    let k = table
        .symbols()
        .iter()
        .position(|s| s.name == "GVL_Shadow.aFrameAnchors")
        .expect("k");
    assert_eq!(d.memory.external_writes(k), 0);
    for state in [ads_state::STOP, ads_state::RUN] {
        let req = Request::WriteControl {
            ads_state: state,
            device_state: 0,
            data: &[],
        };
        assert_eq!(
            d.request(&mut s, &header(), &req).result(),
            error::ACCESS_DENIED
        );
    }
    assert_eq!(d.memory.ads_state(), ads_state::RUN);
    // With --allow-writes, all of it goes through.
    let d = d.allow_writes(true);
    assert_eq!(
        d.write(&mut s, group::PLC_DATA, anchors.offset, &zeros),
        Ok(())
    );
}

/// A symbol larger than one reply (a 20 000-cable robot's arrays): 0x705 by handle, by
/// address and by name, rather than half of it.
#[test]
fn a_symbol_larger_than_a_reply_answers_invalid_size() {
    let table = SymbolTable::for_symbols(&crate::plc_symbols::PlcSymbols::defaults(), 20_000)
        .expect("table");
    let anchors = table
        .lookup_str("GVL_Shadow.aFrameAnchors")
        .expect("anchors");
    assert_eq!(anchors.size(), 480_000);
    assert_eq!(table.larger_than(wire::MAX_REPLY_LEN).count(), 7);
    let d = Device::new(
        DeviceIdentity {
            net_id: wire::AmsNetId::LOCAL,
            port: 851,
            name: "test".into(),
        },
        PlcMemory::new(table),
    );
    let mut s = Session::default();
    let size = u32::try_from(anchors.size()).expect("u32");
    assert_eq!(
        d.read(&s, group::PLC_DATA, anchors.offset, size),
        Err(error::INVALID_SIZE)
    );
    let h = handle(&d, &mut s, "GVL_Shadow.aFrameAnchors");
    assert_eq!(
        d.read(&s, group::SYM_VALUE_BY_HANDLE, h, size),
        Err(error::INVALID_SIZE)
    );
    assert_eq!(
        rw(
            &d,
            &mut s,
            group::SYM_VALUE_BY_NAME,
            0,
            size,
            b"GVL_Shadow.aFrameAnchors"
        ),
        Err(error::INVALID_SIZE)
    );
    // An element still reads.
    assert!(
        rw(
            &d,
            &mut s,
            group::SYM_VALUE_BY_NAME,
            0,
            8,
            b"GVL_Shadow.aFrameAnchors[20000,3]"
        )
        .is_ok()
    );
}

/// Driven by a PLC task: one frame per cycle per client with every registration's sample,
/// stamped with the time the PLC gives; a longer cycle time every k-th cycle.
#[test]
fn plc_driven_notifications_batch_one_frame_per_cycle() {
    let d = device().driven_by_plc(Duration::from_millis(10));
    let mut s = Session::default();
    let cycle = d
        .memory
        .table()
        .lookup_str("GVL_Shadow.nCycle")
        .expect("cycle");
    let pose = d
        .memory
        .table()
        .lookup_str("GVL_Shadow.aTcpPose")
        .expect("pose");
    let add = |s: &mut Session, offset: u32, length: u32, ticks: u32| {
        let p = NotificationParams {
            index_group: group::PLC_DATA,
            index_offset: offset,
            length,
            trans_mode: trans_mode::SERVER_CYCLE,
            max_delay: 0,
            cycle_time: ticks,
        };
        d.add_notification(s, &header(), &p).expect("add")
    };
    add(&mut s, cycle.offset, 4, 0);
    add(&mut s, pose.offset, 48, 100_000); // 10 ms
    add(&mut s, cycle.offset, 4, 300_000); // 30 ms: every 3rd cycle
    assert!(
        d.due_notifications(&mut s, Instant::now()).0.is_empty(),
        "not on the wall clock"
    );
    let samples = |f: &[u8]| u32::from_le_bytes(f[54..58].try_into().expect("4"));
    for c in 1..=6u32 {
        let frames = d.plc_cycle_notifications(&mut s, c, 1000 + u64::from(c));
        assert_eq!(frames.len(), 1, "cycle {c}");
        let f = &frames[0];
        assert_eq!(
            &f[46..54],
            &(1000 + u64::from(c)).to_le_bytes(),
            "the PLC's stamp"
        );
        assert_eq!(
            samples(f),
            if (c - 1) % 3 == 0 { 3 } else { 2 },
            "cycle {c}"
        );
    }
}
