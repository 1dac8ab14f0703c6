//! AMS addresses: the NetId and port of each end of a conversation.

use std::fmt;
use std::str::FromStr;

/// An AMS NetId: six bytes, written `a.b.c.d.e.f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AmsNetId(pub [u8; 6]);

impl AmsNetId {
    /// `127.0.0.1.1.1`, what pyads and the `ads` crate use for a local runtime.
    pub const LOCAL: AmsNetId = AmsNetId([127, 0, 0, 1, 1, 1]);
    /// `0.0.0.0.0.0`: not known yet (a Secure ADS client takes the PLC's from its answer).
    pub const UNSPECIFIED: AmsNetId = AmsNetId([0; 6]);

    /// TwinCAT's default NetId of a system: its IPv4 address + `.1.1`.
    pub const fn from_ipv4(ip: std::net::Ipv4Addr) -> AmsNetId {
        let [a, b, c, d] = ip.octets();
        AmsNetId([a, b, c, d, 1, 1])
    }
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
    pub const fn new(net_id: AmsNetId, port: u16) -> AmsAddr {
        AmsAddr { net_id, port }
    }
}

impl fmt::Display for AmsAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.net_id, self.port)
    }
}
