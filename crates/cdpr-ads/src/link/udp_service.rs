//! How a request of the ADS UDP service (port 48899) travels: one socket, the request sent to
//! one host (or broadcast), the answers that match it collected until a deadline. What can go
//! wrong, said so that a user knows what to do ([`UdpServiceError`]). Also where this machine
//! is: its first non-loopback IPv4 address ([`local_ipv4`]) and its subnets' broadcast
//! addresses ([`broadcast_targets`]).
//!
//! Used by the link's `discover` and `route` modules.

use crate::wire::udp::{self, MAX_DATAGRAM, REPLY, UDP_PORT, UdpError, UdpMessage};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::{Duration, Instant};

/// What went wrong with a request of the UDP service.
#[derive(Debug, thiserror::Error)]
pub enum UdpServiceError {
    #[error("`{host}` is not a host this machine can resolve: {source}")]
    Resolve {
        host: String,
        #[source]
        source: io::Error,
    },
    #[error("opening a UDP socket for the ADS UDP service failed: {0}")]
    Socket(#[source] io::Error),
    #[error(
        "no answer from {target} within {timeout:?}: a firewall drops UDP port 48899 (TwinCAT/BSD's \
         pf, Windows' firewall), the host is not a TwinCAT system, or it is not reachable from here"
    )]
    NoAnswer { target: String, timeout: Duration },
    #[error(
        "{target} answered that nothing listens on its UDP port (ICMP port unreachable): no TwinCAT \
         router runs there, or the port is not 48899"
    )]
    PortClosed { target: String },
    #[error("{from} answered, but not as the ADS UDP service does: {why}")]
    NotAds { from: SocketAddr, why: UdpError },
    #[error("the request cannot be sent: {0}")]
    Request(#[source] UdpError),
}

/// `HOST` or `HOST:PORT` (IPv6 in brackets) resolved, the UDP service's port by default.
pub fn resolve(host: &str) -> Result<Vec<SocketAddr>, UdpServiceError> {
    let host = host.trim();
    let has_port = match host.rsplit_once(':') {
        Some((h, port)) => {
            !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!h.contains(':') || h.ends_with(']'))
        }
        None => false,
    };
    let resolved = if has_port {
        host.to_socket_addrs()
    } else {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        (bare, UDP_PORT).to_socket_addrs()
    };
    let resolve_error = |source| UdpServiceError::Resolve {
        host: host.to_string(),
        source,
    };
    let addrs: Vec<SocketAddr> = resolved.map_err(resolve_error)?.collect();
    if addrs.is_empty() {
        return Err(resolve_error(io::Error::new(
            io::ErrorKind::NotFound,
            "no address",
        )));
    }
    Ok(addrs)
}

/// The address of `host` to send to (see [`resolve`]): its first IPv4 address (TwinCAT's UDP
/// service answers on IPv4), else its first.
pub fn resolve_one(host: &str) -> Result<SocketAddr, UdpServiceError> {
    let addrs = resolve(host)?;
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| UdpServiceError::Resolve {
            host: host.to_string(),
            source: io::Error::new(io::ErrorKind::NotFound, "no address"),
        })
}

/// A fresh invoke id, so that a late answer to an earlier request is not taken for this one's.
fn invoke_id() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    nanos ^ std::process::id().rotate_left(16)
}

/// Where to send and how long to collect.
pub(crate) enum Send<'a> {
    /// One host: the socket is connected to it, so that a closed port is told at once.
    To(SocketAddr),
    /// Several addresses (broadcasts allowed); every answer until the deadline is kept.
    All(&'a [SocketAddr]),
}

/// Sends `request` (its invoke id replaced) and collects the replies to it until `timeout`
/// (one host: until its first reply). Datagrams that are not such a reply are skipped; if
/// nothing else came, the last of them is the error.
pub(crate) fn exchange(
    request: UdpMessage,
    send: Send<'_>,
    timeout: Duration,
) -> Result<Vec<(UdpMessage, SocketAddr)>, UdpServiceError> {
    let request = UdpMessage {
        invoke_id: invoke_id(),
        ..request
    };
    let bytes = request.encode().map_err(UdpServiceError::Request)?;
    let v6 = match &send {
        Send::To(a) => a.is_ipv6(),
        Send::All(all) => all.first().is_some_and(SocketAddr::is_ipv6),
    };
    let any: SocketAddr = if v6 {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let socket = UdpSocket::bind(any).map_err(UdpServiceError::Socket)?;
    let target_text = match &send {
        Send::To(a) => a.to_string(),
        Send::All(all) => all
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    };
    match &send {
        Send::To(a) => {
            socket.connect(a).map_err(UdpServiceError::Socket)?;
            socket.send(&bytes).map_err(UdpServiceError::Socket)?;
        }
        Send::All(all) => {
            socket
                .set_broadcast(true)
                .map_err(UdpServiceError::Socket)?;
            let mut sent = 0;
            let mut last = None;
            for a in all.iter() {
                match socket.send_to(&bytes, a) {
                    Ok(_) => sent += 1,
                    Err(e) => last = Some(e),
                }
            }
            if sent == 0 {
                return Err(UdpServiceError::Socket(last.unwrap_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "no address to send to")
                })));
            }
        }
    }
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; MAX_DATAGRAM];
    let mut replies = Vec::new();
    let mut stray = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        socket
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .map_err(UdpServiceError::Socket)?;
        let (n, from) = match socket.recv_from(&mut buf) {
            Ok(got) => got,
            Err(e) if crate::timed_out::timed_out(&e) => {
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                return Err(UdpServiceError::PortClosed {
                    target: target_text,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(UdpServiceError::Socket(e)),
        };
        match udp::decode(buf.get(..n).unwrap_or_default()) {
            Ok(m) if m.service == request.service | REPLY && m.invoke_id == request.invoke_id => {
                replies.push((m, from));
                if matches!(send, Send::To(_)) {
                    break;
                }
            }
            // A reply to someone else (a broadcast answered late, another tool's request):
            // not ours, not wrong.
            Ok(_) => {}
            Err(why) => stray = Some(UdpServiceError::NotAds { from, why }),
        }
    }
    match (replies.is_empty(), stray, send) {
        (true, Some(e), _) => Err(e),
        (true, None, Send::To(_)) => Err(UdpServiceError::NoAnswer {
            target: target_text,
            timeout,
        }),
        _ => Ok(replies),
    }
}

/// The IPv4 address this machine reaches `peer` from (a UDP socket "connected" to it; nothing
/// is sent): what an `ads` client's automatic source NetId is made of (`AdsSource::Auto`).
pub fn local_ipv4_toward(peer: SocketAddr) -> Option<Ipv4Addr> {
    let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    s.connect(peer).ok()?;
    match s.local_addr().ok()?.ip() {
        IpAddr::V4(ip) if !ip.is_unspecified() => Some(ip),
        _ => None,
    }
}

/// This machine's first non-loopback IPv4 address: the one it would use to reach the
/// internet (a UDP socket "connected" to a public address; nothing is sent), else the one
/// toward a private network. `None` without any IPv4 route.
pub fn local_ipv4() -> Option<Ipv4Addr> {
    ["8.8.8.8:53", "10.255.255.255:9", "192.168.255.255:9"]
        .iter()
        .find_map(|probe| {
            let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
            s.connect(probe).ok()?;
            match s.local_addr().ok()?.ip() {
                IpAddr::V4(ip) if !ip.is_loopback() && !ip.is_unspecified() => Some(ip),
                _ => None,
            }
        })
}

/// Where a discovery is sent: 255.255.255.255 and, on Linux, each IPv4 subnet's broadcast
/// address (from `/proc/net/route`: the directly connected networks, loopback left out),
/// all on the UDP service's port. Elsewhere 255.255.255.255 only.
pub fn broadcast_targets() -> Vec<SocketAddr> {
    let mut out: Vec<SocketAddr> = vec![(Ipv4Addr::BROADCAST, UDP_PORT).into()];
    if let Ok(table) = std::fs::read_to_string("/proc/net/route") {
        for ip in subnet_broadcasts(&table) {
            let a = SocketAddr::from((ip, UDP_PORT));
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    out
}

/// The broadcast addresses of the directly connected networks in a `/proc/net/route` table
/// (columns Iface, Destination, Gateway, Flags, …, Mask; addresses in hex, network order).
fn subnet_broadcasts(table: &str) -> Vec<Ipv4Addr> {
    let hex = |h: &str| u32::from_str_radix(h, 16).ok().map(u32::to_ne_bytes);
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (iface, dest, gateway, mask) =
                (cols.first()?, cols.get(1)?, cols.get(2)?, cols.get(7)?);
            let (dest, gateway, mask) = (hex(dest)?, hex(gateway)?, hex(mask)?);
            let on_link = gateway == [0; 4] && mask != [0; 4] && mask != [255; 4];
            (on_link && *iface != "lo").then(|| {
                let mut b = [0u8; 4];
                for k in 0..4 {
                    b[k] = dest[k] | !mask[k];
                }
                Ipv4Addr::from(b)
            })
        })
        .filter(|ip| !ip.is_loopback())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_get_the_udp_port_unless_given() {
        let one = |h: &str| resolve(h).expect("resolves")[0];
        assert_eq!(one("127.0.0.1"), "127.0.0.1:48899".parse().expect("addr"));
        assert_eq!(
            one("127.0.0.1:5000"),
            "127.0.0.1:5000".parse().expect("addr")
        );
        assert_eq!(one("[::1]"), "[::1]:48899".parse().expect("addr"));
        assert!(matches!(
            resolve("no such host.invalid"),
            Err(UdpServiceError::Resolve { .. })
        ));
    }

    #[test]
    fn subnet_broadcasts_come_from_the_on_link_routes() {
        // `/proc/net/route` of a machine on 192.168.1.0/24 and 10.0.0.0/8 with a default route.
        let table = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
            eth0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n\
            eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n\
            eth1\t0000000A\t00000000\t0001\t0\t0\t100\t000000FF\t0\t0\t0\n\
            lo\t0000007F\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n\
            broken line\n";
        let got = subnet_broadcasts(table);
        if cfg!(target_endian = "little") {
            assert_eq!(
                got,
                [
                    Ipv4Addr::new(192, 168, 1, 255),
                    Ipv4Addr::new(10, 255, 255, 255)
                ]
            );
        }
        assert_eq!(
            broadcast_targets()[0],
            "255.255.255.255:48899".parse().expect("addr")
        );
    }
}
