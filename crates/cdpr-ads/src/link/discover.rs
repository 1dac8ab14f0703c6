//! Who is out there: the ADS UDP service's identify, sent to one host or broadcast on the
//! local subnets, and the TwinCAT systems that answered ([`SystemInfo`]). TwinCAT's "Add Route"
//! dialog's *Broadcast Search* does the same.

use super::udp_service::{self, Send, UdpServiceError};
use crate::wire::udp::{
    FINGERPRINT_ROOM, OS_VERSION_ROOM, OsVersion, TcVersion, UdpMessage, service, tag,
};
use crate::wire::{AmsAddr, AmsNetId};
use std::net::SocketAddr;
use std::time::Duration;

/// A TwinCAT system (or `cdpr plc`) as its identify reply describes it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SystemInfo {
    /// Its AMS NetId: what `--ams-net-id` and the route on the other side name.
    #[serde(serialize_with = "as_text")]
    pub net_id: AmsNetId,
    pub host_name: String,
    pub tc_version: Option<TcVersion>,
    pub os: Option<OsVersion>,
    /// TwinCAT 3.1.4024+ sends a fingerprint (of its ADS-secure certificate).
    pub fingerprint: Option<String>,
    /// The address the reply came from.
    pub address: SocketAddr,
}

fn as_text<S: serde::Serializer>(id: &AmsNetId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(id)
}

impl SystemInfo {
    fn from_reply(m: &UdpMessage, address: SocketAddr) -> SystemInfo {
        SystemInfo {
            // The header's source: what pyads and Beckhoff's AdsLib read.
            net_id: m.source.net_id,
            host_name: m.get_str(tag::COMPUTER_NAME).unwrap_or_default(),
            tc_version: m.get(tag::TC_VERSION).and_then(TcVersion::decode),
            os: m.get(tag::OS_VERSION).and_then(OsVersion::decode),
            fingerprint: m.get_str(tag::FINGERPRINT).filter(|f| !f.is_empty()),
            address,
        }
    }
}

/// An identify asking for the OS version and the certificate's fingerprint too, with the room
/// they take: the virtual PLC answers a bare identify (the `ads` crate's, 24 bytes) with the
/// NetId, host name and TwinCAT version alone, and adds an item only when the request gave it
/// as many bytes (no amplifier). A TwinCAT system's reply carries all of them.
fn request() -> UdpMessage {
    UdpMessage::new(service::IDENTIFY, 0, AmsAddr::default())
        .with_bytes(tag::OS_VERSION, &[0; OS_VERSION_ROOM])
        .with_bytes(tag::FINGERPRINT, &[0; FINGERPRINT_ROOM])
}

/// The system at `host` (HOST or HOST:PORT, the service's 48899 by default): its first answer
/// within `timeout`.
pub fn identify(host: &str, timeout: Duration) -> Result<SystemInfo, UdpServiceError> {
    let to = udp_service::resolve_one(host)?;
    let replies = udp_service::exchange(request(), Send::To(to), timeout)?;
    replies
        .first()
        .map(|(m, from)| SystemInfo::from_reply(m, *from))
        .ok_or(UdpServiceError::NoAnswer {
            target: to.to_string(),
            timeout,
        })
}

/// The AMS NetId of the system at `host` (see [`identify`]).
pub fn net_id_of(host: &str, timeout: Duration) -> Result<AmsNetId, UdpServiceError> {
    identify(host, timeout).map(|s| s.net_id)
}

/// Every system that answers within `timeout`: the one at `target`, or with `None` all those
/// on the local subnets (a broadcast to 255.255.255.255 and each subnet's broadcast address,
/// see [`udp_service::broadcast_targets`]). Each system once (the first of its answers).
pub fn discover(
    target: Option<&str>,
    timeout: Duration,
) -> Result<Vec<SystemInfo>, UdpServiceError> {
    let replies = match target {
        Some(host) => {
            return identify(host, timeout).map(|s| vec![s]);
        }
        None => {
            let targets = udp_service::broadcast_targets();
            udp_service::exchange(request(), Send::All(&targets), timeout)?
        }
    };
    let mut systems: Vec<SystemInfo> = Vec::new();
    for (m, from) in &replies {
        let s = SystemInfo::from_reply(m, *from);
        if !systems
            .iter()
            .any(|o| o.net_id == s.net_id && o.address == s.address)
        {
            systems.push(s);
        }
    }
    Ok(systems)
}

/// The fingerprint of its Secure ADS certificate the system at `endpoint` (`host:port`, the
/// port ignored: the identify goes to UDP 48899) announces in its identify (TwinCAT 3.1.4024+,
/// `cdpr plc --secure ssc`); `None` when it does not answer within `timeout` or announces none.
pub fn announced_fingerprint(endpoint: &str, timeout: Duration) -> Option<String> {
    let host = match endpoint.rsplit_once(':') {
        Some((h, p))
            if p.bytes().all(|b| b.is_ascii_digit()) && (!h.contains(':') || h.ends_with(']')) =>
        {
            h
        }
        _ => endpoint,
    };
    identify(host.trim_matches(['[', ']']), timeout)
        .ok()
        .and_then(|s| s.fingerprint)
}
