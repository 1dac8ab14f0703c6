//! Reply payloads as a client reads them: the result code, the data of a read, the handle of a
//! new notification, and DeviceNotification frames (time stamps and their samples). Every
//! length is checked against the bytes that arrived and against what the request asked for:
//! what a peer claims decides nothing but the error.

use super::Cursor;

/// Why a reply payload is not what the request allows. The connection is closed on any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("a reply of {0} bytes, shorter than its fixed part")]
    Short(usize),
    #[error("a reply claiming {claimed} data bytes where {asked} were asked for")]
    Longer { claimed: usize, asked: usize },
    #[error("a reply claiming {claimed} data bytes carries {actual}")]
    Truncated { claimed: usize, actual: usize },
    #[error("a notification whose lengths do not add up ({0})")]
    Notification(&'static str),
}

/// The result code that starts every reply payload (Write, WriteControl, DeleteNotification).
pub fn decode_status(payload: &[u8]) -> Result<u32, ReplyError> {
    Cursor::new(payload)
        .u32()
        .ok_or(ReplyError::Short(payload.len()))
}

/// A Read or ReadWrite reply: `Ok(Err(code))` for an ADS error, else the data — at most
/// `asked` bytes (a longer claim is refused, never allocated).
pub fn decode_data(payload: &[u8], asked: usize) -> Result<Result<&[u8], u32>, ReplyError> {
    let mut c = Cursor::new(payload);
    let result = c.u32().ok_or(ReplyError::Short(payload.len()))?;
    if result != 0 {
        return Ok(Err(result));
    }
    let claimed = c.u32().ok_or(ReplyError::Short(payload.len()))? as usize;
    if claimed > asked {
        return Err(ReplyError::Longer { claimed, asked });
    }
    let actual = c.rest().len();
    c.bytes(claimed)
        .map(Ok)
        .ok_or(ReplyError::Truncated { claimed, actual })
}

/// An AddDeviceNotification reply: `Ok(Err(code))` for an ADS error, else the handle.
pub fn decode_notification_handle(payload: &[u8]) -> Result<Result<u32, u32>, ReplyError> {
    let mut c = Cursor::new(payload);
    let result = c.u32().ok_or(ReplyError::Short(payload.len()))?;
    if result != 0 {
        return Ok(Err(result));
    }
    c.u32().map(Ok).ok_or(ReplyError::Short(payload.len()))
}

/// One time stamp of a DeviceNotification and its samples, borrowed from the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp<'a> {
    /// Windows FILETIME: 100 ns ticks since 1601-01-01 UTC (the PLC's time).
    pub filetime: u64,
    /// (notification handle, data).
    pub samples: Vec<(u32, &'a [u8])>,
}

/// A DeviceNotification payload: length, stamp count, then per stamp its FILETIME, sample
/// count and samples (handle, size, data). Counts are checked against the bytes present
/// before anything is reserved for them.
pub fn decode_notification(payload: &[u8]) -> Result<Vec<Stamp<'_>>, ReplyError> {
    let bad = ReplyError::Notification;
    let mut c = Cursor::new(payload);
    let length = c.u32().ok_or(bad("no length"))? as usize;
    if length != c.rest().len() {
        return Err(bad("its length field is not the payload's"));
    }
    let stamps = c.u32().ok_or(bad("no stamp count"))? as usize;
    // A stamp takes at least 12 bytes, a sample at least 8.
    if stamps > c.rest().len() / 12 {
        return Err(bad("more stamps than bytes for them"));
    }
    let mut out = Vec::with_capacity(stamps);
    for _ in 0..stamps {
        let filetime = c.u64().ok_or(bad("a stamp cut short"))?;
        let count = c.u32().ok_or(bad("a stamp cut short"))? as usize;
        if count > c.rest().len() / 8 {
            return Err(bad("more samples than bytes for them"));
        }
        let mut samples = Vec::with_capacity(count);
        for _ in 0..count {
            let handle = c.u32().ok_or(bad("a sample cut short"))?;
            let size = c.u32().ok_or(bad("a sample cut short"))? as usize;
            samples.push((handle, c.bytes(size).ok_or(bad("a sample cut short"))?));
        }
        out.push(Stamp { filetime, samples });
    }
    if !c.is_empty() {
        return Err(bad("bytes after the last stamp"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{AmsAddr, AmsNetId, decode_frame, encode_notification};

    #[test]
    fn a_notification_frame_of_the_server_decodes_to_its_samples() {
        let a = AmsAddr::new(AmsNetId::LOCAL, 851);
        let frame =
            encode_notification(a, a, 133_000_000_000_000_000, &[(7, &[1, 2, 3]), (9, &[])]);
        let Some((crate::wire::Frame::Ams { payload, .. }, _)) =
            decode_frame(&frame, 1 << 16).expect("frame")
        else {
            panic!("not an AMS frame");
        };
        let stamps = decode_notification(payload).expect("decodes");
        assert_eq!(
            stamps,
            vec![Stamp {
                filetime: 133_000_000_000_000_000,
                samples: vec![(7, &[1u8, 2, 3][..]), (9, &[][..])],
            }]
        );
    }

    #[test]
    fn claims_beyond_the_bytes_or_the_request_are_refused() {
        // result 0, length 0xFFFF_FFF0, no data.
        let p = [0, 0, 0, 0, 0xF0, 0xFF, 0xFF, 0xFF];
        assert!(matches!(decode_data(&p, 8), Err(ReplyError::Longer { .. })));
        let p = [0, 0, 0, 0, 4, 0, 0, 0, 1, 2];
        assert_eq!(
            decode_data(&p, 8),
            Err(ReplyError::Truncated {
                claimed: 4,
                actual: 2
            })
        );
        assert_eq!(decode_data(&[5, 7, 0, 0], 8), Ok(Err(0x705)));
        // A million stamps claimed in 8 bytes.
        let mut n = vec![];
        n.extend_from_slice(&8u32.to_le_bytes());
        n.extend_from_slice(&1_000_000u32.to_le_bytes());
        n.extend_from_slice(&[0; 4]);
        assert!(decode_notification(&n).is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = decode_data(&bytes, 64);
            let _ = decode_notification(&bytes);
            let _ = decode_notification_handle(&bytes);
            let _ = decode_status(&bytes);
        }
    }
}
