//! What can go wrong between the shadow and a controller, and what each error means for the
//! link (reconnect, re-resolve, give up).

use super::ads_client::Exchange;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ControllerError {
    #[error("PLC symbol `{symbol}`: {reason}")]
    Symbol { symbol: String, reason: String },
    #[error("PLC symbol `{symbol}` element {element}: {value} is not a finite number")]
    NotFinite {
        symbol: String,
        element: usize,
        value: f64,
    },
    #[error("writing to the PLC is disabled (the shadow writes only with --write)")]
    WriteDisabled,
    #[error(
        "PLC symbol `{symbol}` is not on the robot file's plc.writable allow-list: nothing was written"
    )]
    NotWritable { symbol: String },
    #[error("PLC symbol `{symbol}`: ADS error {code:#x} ({text})")]
    Ads {
        symbol: String,
        code: u32,
        text: String,
    },
    /// The connection is gone or unusable: reconnect (see [`Backoff`](super::Backoff)).
    #[error("link to the PLC lost: {0}")]
    Link(String),
    /// The peer sent what no ADS device sends (a frame beyond the limits, a reply longer than
    /// asked for): the connection was dropped; reconnecting may help.
    #[error("link to the PLC dropped: {0}")]
    Broken(String),
    /// No TCP connection to the controller could be opened (reconnecting may help later).
    #[error("{}", unreachable_text(endpoint, *refused, text))]
    Unreachable {
        endpoint: String,
        /// Refused: the host answered that nothing listens on the port.
        refused: bool,
        text: String,
    },
    /// Secure ADS: the TLS handshake or the TlsConnectInfo failed; the text says what to
    /// change on which side (reconnecting helps only once that is done, or after a PLC
    /// restart).
    #[error("Secure ADS: {text}")]
    Secure { endpoint: String, text: String },
    /// The PLC no longer knows a handle the link holds (ADS 0x710 symbol not found, 0x711
    /// symbol version invalid, 0x722 symbol not active, 0x1 internal error on a handle): an
    /// online change or a re-download. [`ShadowLink`] re-resolves and carries on.
    #[error(
        "PLC symbol `{symbol}`: ADS error {code:#x} ({text}): its handle is stale (an online change or a re-download)"
    )]
    Stale {
        symbol: String,
        code: u32,
        text: String,
    },
    /// The exchange asked for is not served by this PLC (see [`Exchange`]).
    #[error(
        "the PLC does not serve the `{exchange}` exchange ({}): {reason}; `auto` uses what it serves",
        exchange.wire()
    )]
    Unsupported { exchange: Exchange, reason: String },
    /// A stop was asked for (Ctrl-C, SIGTERM) while the link waited: not a fault of the PLC.
    #[error("interrupted (Ctrl-C or a signal) while waiting for the PLC")]
    Interrupted,
}

impl ControllerError {
    /// Whether reconnecting may help.
    pub fn is_link(&self) -> bool {
        matches!(
            self,
            ControllerError::Link(_)
                | ControllerError::Broken(_)
                | ControllerError::Unreachable { .. }
                | ControllerError::Secure { .. }
        )
    }

    /// Whether re-resolving the symbols on the same link may help.
    pub fn is_stale(&self) -> bool {
        matches!(self, ControllerError::Stale { .. })
    }
}

fn unreachable_text(endpoint: &str, refused: bool, text: &str) -> String {
    if refused {
        format!(
            "no PLC listening on {endpoint} (connection refused): is TwinCAT — or `cdpr plc` — \
             running on that host, and the port right (ADS: 48898)?"
        )
    } else {
        format!("cannot open a TCP connection to {endpoint}: {text}")
    }
}
