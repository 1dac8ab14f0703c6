//! The ADS UDP service (port 48899): discovery ("identify") and add-route, as bytes.
//!
//! Layout (the `ads` crate's `udp.rs`, Beckhoff's `AdsLib.cpp` `AddRemoteRoute`, pyads'
//! `adsAddRouteToPLC`), little-endian:
//! ```text
//!  0  u32 magic 0x71146603
//!  4  u32 invoke id (echoed in the reply)
//!  8  u32 service: 1 identify, 6 add route; a reply ORs 0x80000000
//! 12  6×u8 source AMS NetId, u16 source AMS port
//! 20  u32 item count
//! 24  items: u16 tag, u16 length, `length` bytes (strings NUL-terminated)
//! ```
//! [`decode`] takes any bytes and returns an error instead of panicking: a bad magic, a count
//! beyond [`MAX_ITEMS`] or beyond what the datagram holds, an item running past its end.
//! Every length is checked against the bytes at hand before anything is copied, and a datagram
//! is at most [`MAX_DATAGRAM`] bytes (what the receivers' fixed buffers hold).

use super::{AmsAddr, AmsNetId, Cursor, put_u16, put_u32};

/// The UDP port of the service.
pub const UDP_PORT: u16 = 48899;
/// The first four bytes of every message.
pub const MAGIC: u32 = 0x7114_6603;
/// A reply's service id is the request's with this bit set.
pub const REPLY: u32 = 0x8000_0000;
/// Largest datagram sent or read. A TwinCAT identify reply is about 400 bytes; the receivers
/// read into a buffer of this size, so a longer datagram arrives truncated and fails to decode.
pub const MAX_DATAGRAM: usize = 4096;
/// Most items a message may claim (TwinCAT sends at most a dozen).
pub const MAX_ITEMS: u32 = 64;
/// Bytes of the header before the items.
pub const HEADER_LEN: usize = 24;
/// The room an identify request gives an item it asks for ([`tag::OS_VERSION`]): a reply
/// carries an optional item only when the request asked for it with at least as many bytes,
/// so that an identify is never an amplifier for those items (see `server::udp`).
/// OSVERSIONINFO's fixed part and 127 UTF-16 characters with their NUL.
pub const OS_VERSION_ROOM: usize = OS_FIXED + 2 * OS_TEXT_MAX;
/// The room asked for [`tag::FINGERPRINT`]: SHA-256 as 32 hex pairs and 31 colons, NUL.
pub const FINGERPRINT_ROOM: usize = 96;

/// Service ids.
pub mod service {
    /// Who are you: NetId, host name, TwinCAT and OS versions.
    pub const IDENTIFY: u32 = 1;
    /// Add a route to the sender (user name and password checked).
    pub const ADD_ROUTE: u32 = 6;
}

/// Item tags.
pub mod tag {
    /// u32: the result of an add-route (0 ok, else an ADS error code).
    pub const STATUS: u16 = 1;
    pub const PASSWORD: u16 = 2;
    /// 4 bytes: major, minor, build (u16).
    pub const TC_VERSION: u16 = 3;
    /// Windows' OSVERSIONINFO (see [`super::OsVersion`]).
    pub const OS_VERSION: u16 = 4;
    pub const COMPUTER_NAME: u16 = 5;
    /// 6 bytes.
    pub const NET_ID: u16 = 7;
    /// u32: bit 0 = temporary route.
    pub const OPTIONS: u16 = 9;
    pub const ROUTE_NAME: u16 = 12;
    pub const USER_NAME: u16 = 13;
    pub const FINGERPRINT: u16 = 18;
}

/// Why bytes are not a UDP service message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UdpError {
    #[error("{len} bytes: shorter than the {HEADER_LEN}-byte ADS UDP header")]
    TooShort { len: usize },
    #[error("{len} bytes: longer than the {MAX_DATAGRAM} bytes a UDP service message may have")]
    TooLong { len: usize },
    #[error("magic {0:#010x} is not the ADS UDP service's 0x71146603")]
    BadMagic(u32),
    #[error("{count} items claimed, more than the {MAX_ITEMS} allowed")]
    TooManyItems { count: u32 },
    #[error("item {index} of {count} (tag {tag}) runs past the end of the message")]
    Truncated { index: u32, count: u32, tag: u16 },
    #[error("item with tag {tag} has {len} bytes, more than an item's u16 length can say")]
    ItemTooLong { tag: u16, len: usize },
}

/// One message of the service, request or reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpMessage {
    pub invoke_id: u32,
    /// The service id, [`REPLY`] set in a reply.
    pub service: u32,
    pub source: AmsAddr,
    /// (tag, data) in wire order.
    pub items: Vec<(u16, Vec<u8>)>,
}

impl UdpMessage {
    /// A message without items.
    pub fn new(service: u32, invoke_id: u32, source: AmsAddr) -> UdpMessage {
        UdpMessage {
            invoke_id,
            service,
            source,
            items: Vec::new(),
        }
    }

    /// Whether this is a reply (the [`REPLY`] bit).
    pub fn is_reply(&self) -> bool {
        self.service & REPLY != 0
    }

    /// The service without the reply bit.
    pub fn service_id(&self) -> u32 {
        self.service & !REPLY
    }

    pub fn with_bytes(mut self, tag: u16, data: &[u8]) -> UdpMessage {
        self.items.push((tag, data.to_vec()));
        self
    }

    /// A NUL-terminated string item.
    pub fn with_str(mut self, tag: u16, text: &str) -> UdpMessage {
        let mut data = Vec::with_capacity(text.len() + 1);
        data.extend_from_slice(text.as_bytes());
        data.push(0);
        self.items.push((tag, data));
        self
    }

    pub fn with_u32(self, tag: u16, value: u32) -> UdpMessage {
        self.with_bytes(tag, &value.to_le_bytes())
    }

    /// The data of the first item with `tag`.
    pub fn get(&self, tag: u16) -> Option<&[u8]> {
        self.items
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, d)| d.as_slice())
    }

    /// A string item: the bytes before the first NUL, invalid UTF-8 replaced.
    pub fn get_str(&self, tag: u16) -> Option<String> {
        self.get(tag).map(c_string)
    }

    /// A u32 item (its first four bytes; `None` when shorter).
    pub fn get_u32(&self, tag: u16) -> Option<u32> {
        let b = self.get(tag)?.get(..4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A 6-byte NetId item.
    pub fn get_net_id(&self, tag: u16) -> Option<AmsNetId> {
        let b = self.get(tag)?.get(..6)?;
        let mut id = [0u8; 6];
        id.copy_from_slice(b);
        Some(AmsNetId(id))
    }

    /// How many bytes [`UdpMessage::encode`] makes of it: a request read from a datagram of
    /// any other length had bytes beyond its items.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.items.iter().map(|(_, d)| 4 + d.len()).sum::<usize>()
    }

    /// The bytes on the wire. Refuses an item longer than a u16 says, or a message longer than
    /// [`MAX_DATAGRAM`] (a receiver would read it truncated).
    pub fn encode(&self) -> Result<Vec<u8>, UdpError> {
        let mut out = Vec::with_capacity(HEADER_LEN + 64);
        put_u32(&mut out, MAGIC);
        put_u32(&mut out, self.invoke_id);
        put_u32(&mut out, self.service);
        out.extend_from_slice(&self.source.net_id.0);
        put_u16(&mut out, self.source.port);
        let count = u32::try_from(self.items.len()).unwrap_or(u32::MAX);
        if count > MAX_ITEMS {
            return Err(UdpError::TooManyItems { count });
        }
        put_u32(&mut out, count);
        for (tag, data) in &self.items {
            let len = u16::try_from(data.len()).map_err(|_| UdpError::ItemTooLong {
                tag: *tag,
                len: data.len(),
            })?;
            put_u16(&mut out, *tag);
            put_u16(&mut out, len);
            out.extend_from_slice(data);
        }
        if out.len() > MAX_DATAGRAM {
            return Err(UdpError::TooLong { len: out.len() });
        }
        Ok(out)
    }
}

/// The bytes before the first NUL as text, invalid UTF-8 replaced.
pub fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(bytes.get(..end).unwrap_or_default()).into_owned()
}

/// Decodes a datagram. Bytes after the last counted item are ignored (as Beckhoff's
/// `AddRemoteRoute` does).
pub fn decode(bytes: &[u8]) -> Result<UdpMessage, UdpError> {
    if bytes.len() > MAX_DATAGRAM {
        return Err(UdpError::TooLong { len: bytes.len() });
    }
    let mut c = Cursor::new(bytes);
    let short = UdpError::TooShort { len: bytes.len() };
    let magic = c.u32().ok_or(short.clone())?;
    if magic != MAGIC {
        return Err(UdpError::BadMagic(magic));
    }
    let invoke_id = c.u32().ok_or(short.clone())?;
    let service = c.u32().ok_or(short.clone())?;
    let mut net_id = [0u8; 6];
    net_id.copy_from_slice(c.bytes(6).ok_or(short.clone())?);
    let port = c.u16().ok_or(short.clone())?;
    let count = c.u32().ok_or(short)?;
    if count > MAX_ITEMS {
        return Err(UdpError::TooManyItems { count });
    }
    // Each item takes at least its 4-byte head: a count the bytes cannot hold is refused
    // before anything is allocated for it.
    if count as usize > c.rest().len() / 4 {
        return Err(UdpError::Truncated {
            index: (c.rest().len() / 4) as u32,
            count,
            tag: 0,
        });
    }
    let mut items = Vec::with_capacity(count as usize);
    for index in 0..count {
        let truncated = |tag| UdpError::Truncated { index, count, tag };
        let tag = c.u16().ok_or(truncated(0))?;
        let len = c.u16().ok_or(truncated(tag))?;
        let data = c.bytes(len as usize).ok_or(truncated(tag))?;
        items.push((tag, data.to_vec()));
    }
    Ok(UdpMessage {
        invoke_id,
        service,
        source: AmsAddr::new(AmsNetId(net_id), port),
        items,
    })
}

/// TwinCAT's version as the identify reply carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TcVersion {
    pub major: u8,
    pub minor: u8,
    pub build: u16,
}

impl TcVersion {
    pub fn decode(b: &[u8]) -> Option<TcVersion> {
        let b = b.get(..4)?;
        Some(TcVersion {
            major: b[0],
            minor: b[1],
            build: u16::from_le_bytes([b[2], b[3]]),
        })
    }
    pub fn encode(&self) -> [u8; 4] {
        let [lo, hi] = self.build.to_le_bytes();
        [self.major, self.minor, lo, hi]
    }
}

impl std::fmt::Display for TcVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.build)
    }
}

/// The operating system as the identify reply carries it: Windows' OSVERSIONINFO (size,
/// major, minor, build, platform as u32, then a service-pack text: UTF-16 on Windows, bytes
/// on TwinCAT/BSD and the RTOS).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OsVersion {
    pub major: u32,
    pub minor: u32,
    pub build: u32,
    /// 1 TC/RTOS, 2 Windows NT, 3 Windows CE (what the `ads` crate names); others as seen.
    pub platform: u32,
    /// The service-pack text (TwinCAT/BSD puts its name here).
    pub text: String,
}

/// Bytes of OSVERSIONINFO's fixed part.
const OS_FIXED: usize = 20;
/// Longest service-pack text read or written, in characters (OSVERSIONINFO's is 128).
const OS_TEXT_MAX: usize = 128;

impl OsVersion {
    pub fn decode(b: &[u8]) -> Option<OsVersion> {
        let mut c = Cursor::new(b);
        let _size = c.u32()?;
        let (major, minor, build, platform) = (c.u32()?, c.u32()?, c.u32()?, c.u32()?);
        let rest = c.rest();
        let text = if platform == 2 || platform == 3 {
            let units: Vec<u16> = rest
                .chunks_exact(2)
                .map(|p| u16::from_le_bytes([p[0], p[1]]))
                .take_while(|u| *u != 0)
                .take(OS_TEXT_MAX)
                .collect();
            String::from_utf16_lossy(&units)
        } else {
            c_string(rest.get(..rest.len().min(OS_TEXT_MAX)).unwrap_or_default())
        };
        Some(OsVersion {
            major,
            minor,
            build,
            platform,
            text,
        })
    }

    /// OSVERSIONINFO, the text NUL-terminated: UTF-16 for the Windows platforms (2, 3), bytes
    /// for the others; at most 127 characters of it.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(OS_FIXED + 2 * self.text.len() + 2);
        put_u32(&mut out, super::len32(OS_FIXED + OS_TEXT_MAX));
        for v in [self.major, self.minor, self.build, self.platform] {
            put_u32(&mut out, v);
        }
        if self.platform == 2 || self.platform == 3 {
            for unit in self.text.encode_utf16().take(OS_TEXT_MAX - 1) {
                put_u16(&mut out, unit);
            }
            put_u16(&mut out, 0);
        } else {
            out.extend(self.text.bytes().take(OS_TEXT_MAX - 1));
            out.push(0);
        }
        out
    }

    /// "Windows NT 10.0.19044 (…)" or "TwinCAT/BSD 13.2.0" as people read it.
    pub fn describe(&self) -> String {
        let name = match self.platform {
            1 => "TC/RTOS",
            2 => "Windows NT",
            3 => "Windows CE",
            _ => "",
        };
        let number = format!("{}.{}.{}", self.major, self.minor, self.build);
        match (name, self.text.trim()) {
            ("", "") => format!("platform {} {number}", self.platform),
            ("", text) => format!("{text} {number}"),
            (name, "") => format!("{name} {number}"),
            (name, text) => format!("{name} {number} ({text})"),
        }
    }
}

#[cfg(test)]
#[path = "udp_tests.rs"]
mod tests;
