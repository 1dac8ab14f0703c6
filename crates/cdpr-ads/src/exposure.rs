//! Who can reach a server this crate starts: one rule and one wording for every listening face
//! (the virtual PLC's ADS, the live view's WebSocket). Loopback is this machine only; any other
//! address is accepted — a lab network, a tablet at a demo — with a warning naming who can now
//! reach it, since neither ADS nor the Foxglove WebSocket protocol authenticates anyone.

use std::net::{IpAddr, SocketAddr};

/// A server that has no authentication, as its warning names it.
#[derive(Debug, Clone, Copy)]
pub struct Exposure {
    /// The option that chose the address (`--listen`).
    pub option: &'static str,
    /// What listens (`the virtual PLC`).
    pub what: &'static str,
    /// Its protocol (`ADS`).
    pub protocol: &'static str,
    /// What anyone who reaches it can do (`read and write its symbols`).
    pub anyone_can: &'static str,
    /// How else to be safe, with its leading punctuation (` (or --secure)`), or "".
    pub otherwise: &'static str,
}

/// Who can reach a server listening on `ip`: `None` on loopback (this machine only).
pub fn reachable_from(ip: IpAddr) -> Option<String> {
    if ip.is_loopback() {
        None
    } else if ip.is_unspecified() {
        Some("every network interface of this machine".to_string())
    } else {
        Some(format!("the network of {ip}"))
    }
}

impl Exposure {
    /// The warning for listening on `addr`; `None` on loopback.
    pub fn warning(&self, addr: SocketAddr) -> Option<String> {
        let who = reachable_from(addr.ip())?;
        Some(format!(
            "{} {addr}: {} is reachable from {who}, and {} has no authentication: anyone who can \
             reach it can {}. Use 127.0.0.1 unless that is what you want{}.",
            self.option, self.what, self.protocol, self.anyone_can, self.otherwise
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLC: Exposure = Exposure {
        option: "--listen",
        what: "the virtual PLC",
        protocol: "ADS",
        anyone_can: "read and write its symbols",
        otherwise: " (or --secure)",
    };

    #[test]
    fn loopback_is_quiet_and_other_addresses_name_who_reaches_them() {
        for quiet in ["127.0.0.1:48898", "127.3.4.5:1", "[::1]:8765"] {
            assert_eq!(
                PLC.warning(quiet.parse().expect("address")),
                None,
                "{quiet}"
            );
        }
        assert_eq!(
            PLC.warning("0.0.0.0:48898".parse().expect("address"))
                .as_deref(),
            Some(
                "--listen 0.0.0.0:48898: the virtual PLC is reachable from every network \
                 interface of this machine, and ADS has no authentication: anyone who can reach \
                 it can read and write its symbols. Use 127.0.0.1 unless that is what you want \
                 (or --secure)."
            )
        );
        let lan = PLC
            .warning("192.168.1.20:48898".parse().expect("address"))
            .expect("a warning");
        assert!(
            lan.contains("reachable from the network of 192.168.1.20,"),
            "{lan}"
        );
    }
}
