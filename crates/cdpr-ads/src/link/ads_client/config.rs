//! Where the controller is and how the client reaches it.

use super::exchange::ExchangeChoice;
use crate::link::Interrupt;
use crate::secure::SecureClient;
use crate::wire::AmsAddr;
use std::time::Duration;

/// Which AMS source address the client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdsSource {
    /// The local IPv4 address + ".1.1", port 58913 (the route on the PLC must name it).
    Auto,
    /// Ask the router on the other end for a port (a TwinCAT router on 127.0.0.1 wants it).
    Request,
    /// A fixed address.
    Fixed(AmsAddr),
}

/// Where the controller is and how to talk to it.
#[derive(Debug, Clone)]
pub struct AdsConfig {
    /// `host:port` of the AMS/TCP endpoint (TwinCAT: port 48898).
    pub endpoint: String,
    /// NetId and AMS port of the PLC runtime (TwinCAT 3's first runtime: 851).
    pub target: AmsAddr,
    pub source: AdsSource,
    /// Connect, read and write timeout; a dead PLC is noticed within it.
    pub timeout: Duration,
    /// How reads and writes travel (default: probe).
    pub exchange: ExchangeChoice,
    /// Secure ADS (TLS, TCP 8016) in one of its modes; `None`: plain ADS.
    pub secure: Option<SecureClient>,
    /// A stop request that ends every wait of the link at once (Ctrl-C, SIGTERM).
    pub interrupt: Interrupt,
}

impl AdsConfig {
    pub fn new(endpoint: impl Into<String>, target: AmsAddr) -> AdsConfig {
        AdsConfig {
            endpoint: endpoint.into(),
            target,
            source: AdsSource::Auto,
            timeout: Duration::from_millis(500),
            exchange: ExchangeChoice::Auto,
            secure: None,
            interrupt: Interrupt::new(),
        }
    }
}
