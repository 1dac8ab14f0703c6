//! Frames: the AMS/TCP header (frame kind and length), the 32-byte AMS header, and a frame
//! decoded from or encoded into a byte stream.

use super::{
    AMS_HEADER_LEN, AmsAddr, AmsNetId, Cursor, TCP_HEADER_LEN, flags, len32, put_u16, put_u32,
    router,
};

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

/// How frames are delimited on a stream: plain ADS (TCP 48898) puts the 6-byte AMS/TCP header
/// before each; Secure ADS (TLS on 8016) leaves it out, and the AMS header's own data length
/// frames them (the TLS records carry no boundaries the reader may rely on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    AmsTcp,
    Bare,
}

impl Framing {
    /// Decodes a complete frame from the front of `buf` (see [`decode_frame`]): `Ok(None)`
    /// while more bytes are needed; a length above `limit` (AMS header + payload) is refused as
    /// soon as it can be read, before anything waits for the body.
    pub fn decode(
        self,
        buf: &[u8],
        limit: usize,
    ) -> Result<Option<(Frame<'_>, usize)>, FrameError> {
        match self {
            Framing::AmsTcp => decode_frame(buf, limit),
            Framing::Bare => {
                let Some(prefix) = buf.get(..AMS_HEADER_LEN) else {
                    return Ok(None);
                };
                let length = bare_frame_length(prefix, limit)?;
                let Some(body) = buf.get(..length) else {
                    return Ok(None);
                };
                let header = AmsHeader::decode(body).ok_or(FrameError::TooShort { length })?;
                Ok(Some((
                    Frame::Ams {
                        header,
                        payload: &body[AMS_HEADER_LEN..],
                    },
                    length,
                )))
            }
        }
    }

    /// The bytes before a frame's length is known.
    pub fn header_len(self) -> usize {
        match self {
            Framing::AmsTcp => TCP_HEADER_LEN,
            Framing::Bare => AMS_HEADER_LEN,
        }
    }

    /// The bytes to send of a frame [`encode_frame`] made (with its AMS/TCP header).
    pub fn outgoing(self, frame: &[u8]) -> &[u8] {
        match self {
            Framing::AmsTcp => frame,
            Framing::Bare => frame.get(TCP_HEADER_LEN..).unwrap_or_default(),
        }
    }
}

/// The length (AMS header + payload) of a frame without AMS/TCP header, from its first 32
/// bytes: the AMS header's data length at offset 20. Rejects one above `limit`.
pub fn bare_frame_length(ams_header: &[u8], limit: usize) -> Result<usize, FrameError> {
    let Some(&[a, b, c, d]) = ams_header.get(20..24) else {
        return Err(FrameError::TooShort {
            length: ams_header.len(),
        });
    };
    let data = usize::try_from(u32::from_le_bytes([a, b, c, d])).unwrap_or(usize::MAX);
    let length = data.saturating_add(AMS_HEADER_LEN);
    if length > limit {
        return Err(FrameError::TooLarge { length, limit });
    }
    Ok(length)
}
