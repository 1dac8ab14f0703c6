//! The ADS wire format, all of it: AMS/TCP and AMS headers, commands, state flags, index
//! groups, return codes, request/response payloads, sum-command payloads and notification
//! frames. Everything is little-endian. Decoders take any byte slice and return an error
//! instead of panicking (the fuzz test in `tests/ads_fuzz.rs` holds them to that).
//!
//! Layout (Beckhoff InfoSys "AMS/TCP Header", "AMS Header"; `/work/scratch/notes/ads.md`):
//! ```text
//!  0  u16 reserved (0 = ADS command; 0x1000 port open, 0x0001 port close: router frames)
//!  2  u32 length of what follows (32 + payload)
//!  6  6×u8 target NetId, u16 target port, 6×u8 source NetId, u16 source port
//! 22  u16 command id, u16 state flags, u32 payload length, u32 error code, u32 invoke id
//! 38  payload
//! ```

use std::fmt;
use std::str::FromStr;

mod command;
mod sum;

pub use command::*;
pub use sum::*;

/// Bytes of the AMS/TCP header (reserved + length).
pub const TCP_HEADER_LEN: usize = 6;
/// Bytes of the AMS header.
pub const AMS_HEADER_LEN: usize = 32;
/// Largest AMS length (header + payload) the server accepts: 64 KiB. The whole process image
/// of the shipped robots is under 2 KiB and a 500-item sum command under 20 KiB, so anything
/// bigger is a broken or hostile peer; it is refused before its bytes are read.
pub const MAX_AMS_LEN: usize = 64 * 1024;
/// Largest read data the server builds for one request, whatever length the request claims
/// it accepts: the same 64 KiB. Every length on the wire is checked against what the server
/// holds (the data area, the symbol upload) and this limit before a byte is allocated.
pub const MAX_REPLY_LEN: usize = MAX_AMS_LEN;

/// Command ids (InfoSys "ADS Commands").
pub mod cmd {
    pub const READ_DEVICE_INFO: u16 = 1;
    pub const READ: u16 = 2;
    pub const WRITE: u16 = 3;
    pub const READ_STATE: u16 = 4;
    pub const WRITE_CONTROL: u16 = 5;
    pub const ADD_NOTIFICATION: u16 = 6;
    pub const DELETE_NOTIFICATION: u16 = 7;
    pub const NOTIFICATION: u16 = 8;
    pub const READ_WRITE: u16 = 9;
}

/// State flags of the AMS header.
pub mod flags {
    pub const RESPONSE: u16 = 0x0001;
    pub const NO_RETURN: u16 = 0x0002;
    pub const ADS_COMMAND: u16 = 0x0004;
    /// What a request carries and what a notification carries (the `ads` crate drops a
    /// notification with any other value).
    pub const REQUEST: u16 = ADS_COMMAND;
    /// What every reply carries (the `ads` crate rejects any other value).
    pub const REPLY: u16 = ADS_COMMAND | RESPONSE;
}

/// AMS/TCP "reserved" values of router frames (the `ads` crate's `Source::Request`).
pub mod router {
    pub const ADS: u16 = 0x0000;
    pub const PORT_CLOSE: u16 = 0x0001;
    pub const PORT_CONNECT: u16 = 0x1000;
    pub const ROUTER_NOTE: u16 = 0x1001;
    pub const GET_LOCAL_NETID: u16 = 0x1002;
}

/// Index groups served by the virtual PLC.
pub mod group {
    /// PLC data area: every symbol lives here at a fixed offset (TwinCAT 3 reports 0x4040 for
    /// GVL variables in its symbol information).
    pub const PLC_DATA: u32 = 0x4040;
    pub const SYM_HANDLE_BY_NAME: u32 = 0xF003;
    pub const SYM_VALUE_BY_NAME: u32 = 0xF004;
    pub const SYM_VALUE_BY_HANDLE: u32 = 0xF005;
    pub const SYM_RELEASE_HANDLE: u32 = 0xF006;
    pub const SYM_INFO_BY_NAME: u32 = 0xF007;
    pub const SYM_VERSION: u32 = 0xF008;
    pub const SYM_INFO_BY_NAME_EX: u32 = 0xF009;
    pub const SYM_UPLOAD: u32 = 0xF00B;
    pub const SYM_UPLOAD_INFO: u32 = 0xF00C;
    pub const SYM_DT_UPLOAD: u32 = 0xF00E;
    pub const SYM_UPLOAD_INFO2: u32 = 0xF00F;
    pub const SUM_READ: u32 = 0xF080;
    pub const SUM_WRITE: u32 = 0xF081;
    pub const SUM_READ_WRITE: u32 = 0xF082;
    pub const SUM_READ_EX: u32 = 0xF083;
    pub const SUM_READ_EX2: u32 = 0xF084;
    pub const SUM_ADD_NOTIFICATION: u32 = 0xF085;
    pub const SUM_DELETE_NOTIFICATION: u32 = 0xF086;
    pub const DEVICE_DATA: u32 = 0xF100;
}

/// ADS return codes (InfoSys "ADS Return Codes"; names as in Beckhoff's AdsDef.h).
pub mod error {
    pub const NO_ERROR: u32 = 0;
    pub const TARGET_PORT_NOT_FOUND: u32 = 0x006;
    pub const TARGET_MACHINE_NOT_FOUND: u32 = 0x007;
    pub const DEVICE_ERROR: u32 = 0x700;
    pub const SERVICE_NOT_SUPPORTED: u32 = 0x701;
    pub const INVALID_GROUP: u32 = 0x702;
    pub const INVALID_OFFSET: u32 = 0x703;
    pub const INVALID_ACCESS: u32 = 0x704;
    pub const INVALID_SIZE: u32 = 0x705;
    pub const INVALID_DATA: u32 = 0x706;
    pub const NO_MEMORY: u32 = 0x70A;
    pub const INVALID_PARAMETER: u32 = 0x70B;
    pub const SYMBOL_NOT_FOUND: u32 = 0x710;
    pub const TRANSMODE_NOT_SUPPORTED: u32 = 0x713;
    pub const NOTIFY_HANDLE_INVALID: u32 = 0x714;
    pub const NO_MORE_HANDLES: u32 = 0x716;
}

/// ADS states (ReadState / WriteControl).
pub mod ads_state {
    pub const RESET: u16 = 2;
    pub const RUN: u16 = 5;
    pub const STOP: u16 = 6;
}

/// Notification transmission modes.
pub mod trans_mode {
    pub const NONE: u32 = 0;
    pub const SERVER_CYCLE: u32 = 3;
    pub const SERVER_ON_CHANGE: u32 = 4;
    pub const SERVER_CYCLE2: u32 = 5;
    pub const SERVER_ON_CHANGE2: u32 = 6;
}

// ------------------------------------------------------------------------------ addresses

/// An AMS NetId: six bytes, written `a.b.c.d.e.f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AmsNetId(pub [u8; 6]);

impl AmsNetId {
    /// `127.0.0.1.1.1`, what pyads and the `ads` crate use for a local runtime.
    pub const LOCAL: AmsNetId = AmsNetId([127, 0, 0, 1, 1, 1]);
}

impl fmt::Display for AmsNetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{}.{}.{}.{}.{}.{}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

impl FromStr for AmsNetId {
    type Err = String;
    fn from_str(s: &str) -> Result<AmsNetId, String> {
        let parts: Vec<&str> = s.trim().split('.').collect();
        if parts.len() != 6 {
            return Err(format!("AMS NetId `{s}` must have 6 dot-separated bytes"));
        }
        let mut id = [0u8; 6];
        for (byte, part) in id.iter_mut().zip(&parts) {
            *byte = part
                .parse()
                .map_err(|_| format!("AMS NetId `{s}`: `{part}` is not a byte (0–255)"))?;
        }
        Ok(AmsNetId(id))
    }
}

/// NetId and AMS port of one end of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AmsAddr {
    pub net_id: AmsNetId,
    pub port: u16,
}

impl AmsAddr {
    pub fn new(net_id: AmsNetId, port: u16) -> AmsAddr {
        AmsAddr { net_id, port }
    }
}

impl fmt::Display for AmsAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.net_id, self.port)
    }
}

// ------------------------------------------------------------------------------ little readers

/// A bounds-checked little-endian cursor: every read returns `None` past the end.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data }
    }
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.data.len() < n {
            return None;
        }
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        Some(head)
    }
    pub fn u16(&mut self) -> Option<u16> {
        self.bytes(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    pub fn u32(&mut self) -> Option<u32> {
        self.bytes(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Option<u64> {
        let lo = self.u32()? as u64;
        let hi = self.u32()? as u64;
        Some(lo | (hi << 32))
    }
    pub fn rest(&self) -> &'a [u8] {
        self.data
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

pub(crate) fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// A `usize` as a wire `u32`, saturating (lengths here are bounded by [`MAX_AMS_LEN`]).
pub fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

// ------------------------------------------------------------------------------ frames

/// The 32-byte AMS header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AmsHeader {
    pub target: AmsAddr,
    pub source: AmsAddr,
    pub command: u16,
    pub state_flags: u16,
    pub data_length: u32,
    pub error_code: u32,
    pub invoke_id: u32,
}

impl AmsHeader {
    fn decode(b: &[u8]) -> Option<AmsHeader> {
        let mut c = Cursor::new(b);
        let addr = |c: &mut Cursor| -> Option<AmsAddr> {
            let id = c.bytes(6)?;
            let mut net_id = [0u8; 6];
            net_id.copy_from_slice(id);
            Some(AmsAddr::new(AmsNetId(net_id), c.u16()?))
        };
        let target = addr(&mut c)?;
        let source = addr(&mut c)?;
        Some(AmsHeader {
            target,
            source,
            command: c.u16()?,
            state_flags: c.u16()?,
            data_length: c.u32()?,
            error_code: c.u32()?,
            invoke_id: c.u32()?,
        })
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        for a in [self.target, self.source] {
            out.extend_from_slice(&a.net_id.0);
            put_u16(out, a.port);
        }
        put_u16(out, self.command);
        put_u16(out, self.state_flags);
        put_u32(out, self.data_length);
        put_u32(out, self.error_code);
        put_u32(out, self.invoke_id);
    }

    /// Whether the frame is a reply (or a notification sent by a server) rather than a
    /// request a server has to answer.
    pub fn is_response(&self) -> bool {
        self.state_flags & flags::RESPONSE != 0
    }
}

/// Why a byte stream is not a frame. Any of these closes the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {length} bytes exceeds the limit of {limit} bytes")]
    TooLarge { length: usize, limit: usize },
    #[error("AMS frame of {length} bytes is shorter than the 32-byte AMS header")]
    TooShort { length: usize },
    #[error("AMS header says {data_length} payload bytes, the AMS/TCP header leaves {actual}")]
    Inconsistent { data_length: u32, actual: usize },
    #[error("unknown AMS/TCP frame kind {0:#06x}")]
    UnknownKind(u16),
}

/// One decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    Ams {
        header: AmsHeader,
        payload: &'a [u8],
    },
    /// A router frame (port open/close, notes): reserved field and its body.
    Router { kind: u16, body: &'a [u8] },
}

/// Reads the 6-byte AMS/TCP header: the frame kind and how many bytes follow it. Rejects a
/// length above `limit` before anything else is read.
pub fn frame_length(tcp_header: &[u8; 6], limit: usize) -> Result<(u16, usize), FrameError> {
    let kind = u16::from_le_bytes([tcp_header[0], tcp_header[1]]);
    let length = u32::from_le_bytes([tcp_header[2], tcp_header[3], tcp_header[4], tcp_header[5]]);
    let length = usize::try_from(length).unwrap_or(usize::MAX);
    if length > limit {
        return Err(FrameError::TooLarge { length, limit });
    }
    Ok((kind, length))
}

/// Decodes a complete frame (AMS/TCP header included). `Ok(None)`: more bytes are needed.
/// On success also returns the number of bytes the frame took.
pub fn decode_frame(buf: &[u8], limit: usize) -> Result<Option<(Frame<'_>, usize)>, FrameError> {
    let Some(head) = buf.get(..TCP_HEADER_LEN) else {
        return Ok(None);
    };
    let mut tcp = [0u8; 6];
    tcp.copy_from_slice(head);
    let (kind, length) = frame_length(&tcp, limit)?;
    let Some(body) = buf.get(TCP_HEADER_LEN..TCP_HEADER_LEN + length) else {
        return Ok(None);
    };
    let used = TCP_HEADER_LEN + length;
    match kind {
        router::ADS => {}
        router::PORT_CLOSE
        | router::PORT_CONNECT
        | router::ROUTER_NOTE
        | router::GET_LOCAL_NETID => return Ok(Some((Frame::Router { kind, body }, used))),
        other => return Err(FrameError::UnknownKind(other)),
    }
    let header = AmsHeader::decode(body).ok_or(FrameError::TooShort { length })?;
    let payload = &body[AMS_HEADER_LEN..];
    if header.data_length as usize != payload.len() {
        return Err(FrameError::Inconsistent {
            data_length: header.data_length,
            actual: payload.len(),
        });
    }
    Ok(Some((Frame::Ams { header, payload }, used)))
}

/// Encodes an ADS frame: AMS/TCP header, AMS header (its data length set from `payload`).
pub fn encode_frame(header: &AmsHeader, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(TCP_HEADER_LEN + AMS_HEADER_LEN + payload.len());
    put_u16(&mut out, router::ADS);
    put_u32(&mut out, len32(AMS_HEADER_LEN + payload.len()));
    let header = AmsHeader {
        data_length: len32(payload.len()),
        ..*header
    };
    header.encode(&mut out);
    out.extend_from_slice(payload);
    out
}

/// The reply to a port-open router frame: the NetId and AMS port the client is to use.
pub fn encode_port_connect_reply(addr: AmsAddr) -> Vec<u8> {
    let mut out = Vec::with_capacity(14);
    put_u16(&mut out, router::PORT_CONNECT);
    put_u32(&mut out, 8);
    out.extend_from_slice(&addr.net_id.0);
    put_u16(&mut out, addr.port);
    out
}

#[cfg(test)]
mod tests;
