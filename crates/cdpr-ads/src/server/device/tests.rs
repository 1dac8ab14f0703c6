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

/// The hostile frame of issue 14: a 0xF083 sum read that accepts a 4 GiB reply, with one item
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
