//! Sum-command payloads (0xF080–0xF086) and notification frames.
//!
//! All sum commands are ReadWrite requests to 0xF080..0xF086 with the item count N in the
//! index offset. Sub-requests first (fixed size each), then the concatenated write data.

use super::{
    AmsAddr, AmsHeader, Cursor, NotificationParams, cmd, encode_frame, error, flags, group, len32,
    put_u32,
};

/// One item of a sum read (0xF080, 0xF083, 0xF084) or sum write (0xF081).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SumItem<'a> {
    pub index_group: u32,
    pub index_offset: u32,
    /// Bytes to read (read-type sums) or to write.
    pub length: u32,
    /// Read-write items only: bytes to read back.
    pub read_length: u32,
    /// Write data (sum write and sum read-write), else empty.
    pub data: &'a [u8],
}

/// Decodes the sub-requests of a sum command with `count` items. `Err`: 0x705.
pub fn decode_sum_items(group_id: u32, count: u32, data: &[u8]) -> Result<Vec<SumItem<'_>>, u32> {
    let bad = error::INVALID_SIZE;
    let count = count as usize;
    let per_item = match group_id {
        group::SUM_READ_WRITE => 16,
        _ => 12,
    };
    // Bounds the allocation below by what the payload can hold.
    if count.checked_mul(per_item).is_none_or(|n| n > data.len()) {
        return Err(bad);
    }
    let mut c = Cursor::new(data);
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        let index_group = c.u32().ok_or(bad)?;
        let index_offset = c.u32().ok_or(bad)?;
        let (read_length, length) = match group_id {
            group::SUM_READ_WRITE => (c.u32().ok_or(bad)?, c.u32().ok_or(bad)?),
            group::SUM_WRITE => (0, c.u32().ok_or(bad)?),
            _ => {
                let n = c.u32().ok_or(bad)?;
                (n, n)
            }
        };
        items.push(SumItem {
            index_group,
            index_offset,
            length,
            read_length,
            data: &[],
        });
    }
    if matches!(group_id, group::SUM_WRITE | group::SUM_READ_WRITE) {
        for item in &mut items {
            item.data = c.bytes(item.length as usize).ok_or(bad)?;
        }
    }
    Ok(items)
}

/// Encodes sum sub-requests (for clients and tests).
pub fn encode_sum_items(group_id: u32, items: &[SumItem]) -> Vec<u8> {
    let mut out = Vec::new();
    for it in items {
        put_u32(&mut out, it.index_group);
        put_u32(&mut out, it.index_offset);
        match group_id {
            group::SUM_READ_WRITE => {
                put_u32(&mut out, it.read_length);
                put_u32(&mut out, len32(it.data.len()));
            }
            group::SUM_WRITE => put_u32(&mut out, len32(it.data.len())),
            _ => put_u32(&mut out, it.length),
        }
    }
    if matches!(group_id, group::SUM_WRITE | group::SUM_READ_WRITE) {
        for it in items {
            out.extend_from_slice(it.data);
        }
    }
    out
}

/// Decodes the items of a sum AddDeviceNotification (0xF085): `count` × 40 bytes.
pub fn decode_sum_notifications(count: u32, data: &[u8]) -> Result<Vec<NotificationParams>, u32> {
    let count = count as usize;
    if count.checked_mul(40).is_none_or(|n| n > data.len()) {
        return Err(error::INVALID_SIZE);
    }
    let mut c = Cursor::new(data);
    (0..count)
        .map(|_| NotificationParams::decode(&mut c).ok_or(error::INVALID_SIZE))
        .collect()
}

/// Decodes the handles of a sum DeleteDeviceNotification (0xF086): `count` × u32.
pub fn decode_sum_handles(count: u32, data: &[u8]) -> Result<Vec<u32>, u32> {
    let count = count as usize;
    if count.checked_mul(4).is_none_or(|n| n > data.len()) {
        return Err(error::INVALID_SIZE);
    }
    let mut c = Cursor::new(data);
    (0..count)
        .map(|_| c.u32().ok_or(error::INVALID_SIZE))
        .collect()
}

/// Encodes the read data of a sum reply from each item's (result, data, requested length).
/// The caller bounds the requested lengths ([`MAX_REPLY_LEN`](super::MAX_REPLY_LEN)):
/// - 0xF080: N results, then each block padded to its requested length (failed ones too:
///   the format has no other way to find the next block);
/// - 0xF083: N (result, length) pairs, then each successful block padded to its requested
///   length; a failed item has length 0 and no block;
/// - 0xF082 / 0xF084: N (result, length) pairs, then the blocks packed at their real length;
/// - 0xF081 / 0xF086: N results; 0xF085: N (result, handle) pairs.
pub fn encode_sum_reply(group_id: u32, results: &[(u32, Vec<u8>, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let with_length = matches!(
        group_id,
        group::SUM_READ_EX | group::SUM_READ_EX2 | group::SUM_READ_WRITE
    );
    for (result, data, _) in results {
        put_u32(&mut out, *result);
        if with_length {
            put_u32(&mut out, len32(data.len()));
        }
        if group_id == group::SUM_ADD_NOTIFICATION {
            // (result, handle) pairs; the handle is the item's 4 data bytes.
            let mut handle = [0u8; 4];
            for (d, s) in handle.iter_mut().zip(data) {
                *d = *s;
            }
            out.extend_from_slice(&handle);
        }
    }
    match group_id {
        group::SUM_READ => {
            for (_, data, requested) in results {
                let start = out.len();
                out.extend_from_slice(data);
                out.resize(start + (*requested as usize).max(data.len()), 0);
            }
        }
        group::SUM_READ_EX => {
            for (result, data, requested) in results {
                if *result == error::NO_ERROR {
                    let start = out.len();
                    out.extend_from_slice(data);
                    out.resize(start + (*requested as usize).max(data.len()), 0);
                }
            }
        }
        group::SUM_READ_EX2 | group::SUM_READ_WRITE => {
            for (_, data, _) in results {
                out.extend_from_slice(data);
            }
        }
        _ => {}
    }
    out
}

// ------------------------------------------------------------------------------ notifications

/// Seconds between 1601-01-01 (Windows FILETIME epoch) and 1970-01-01.
const FILETIME_UNIX_OFFSET_S: u64 = 11_644_473_600;

/// A time as Windows FILETIME: 100 ns ticks since 1601-01-01 UTC.
pub fn filetime(t: std::time::SystemTime) -> u64 {
    let since = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (since.as_secs() + FILETIME_UNIX_OFFSET_S) * 10_000_000 + u64::from(since.subsec_nanos() / 100)
}

/// A DeviceNotification frame (command 8, state flags 0x0004) with one time stamp and the
/// given (handle, data) samples.
pub fn encode_notification(
    target: AmsAddr,
    source: AmsAddr,
    filetime: u64,
    samples: &[(u32, &[u8])],
) -> Vec<u8> {
    let mut body = Vec::new();
    put_u32(&mut body, 1); // stamps
    body.extend_from_slice(&filetime.to_le_bytes());
    put_u32(&mut body, len32(samples.len()));
    for (handle, data) in samples {
        put_u32(&mut body, *handle);
        put_u32(&mut body, len32(data.len()));
        body.extend_from_slice(data);
    }
    let mut payload = Vec::with_capacity(body.len() + 4);
    put_u32(&mut payload, len32(body.len()));
    payload.extend_from_slice(&body);
    let header = AmsHeader {
        target,
        source,
        command: cmd::NOTIFICATION,
        state_flags: flags::REQUEST,
        data_length: 0,
        error_code: 0,
        invoke_id: 0,
    };
    encode_frame(&header, &payload)
}
