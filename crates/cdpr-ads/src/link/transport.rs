//! How [`ShadowLink`](super::ShadowLink) moves the bytes of named symbols: over ADS or
//! in-process.

use super::ads_client::Exchange;
use super::error::ControllerError;
use crate::wire::IecType;
use std::time::Instant;

/// Notified samples kept untaken at most: ten seconds of a 1 ms task (a connection's own queue
/// holds bytes, not samples; this bounds what a reader that stops reading leaves behind). The
/// oldest go first, and the counter shows the gap.
pub(crate) const MAX_READY: usize = 10_000;

/// The bytes of the cycle's inputs, and the PLC's time stamp when they came by notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    pub values: Vec<Vec<u8>>,
    /// Windows FILETIME (100 ns since 1601) the PLC stamped the sample with.
    pub plc_time: Option<u64>,
}

/// Moves bytes of named symbols; the transport under [`ShadowLink`].
pub trait Transport {
    /// Resolves the names (handles, types); called on connect and after each reconnect.
    fn resolve(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError>;
    /// Reads the given symbols (indices into the resolved names): in one request where the
    /// PLC serves sum commands, else one per symbol (see [`Exchange`]). A handle the PLC no
    /// longer knows is [`ControllerError::Stale`].
    fn sum_read(&mut self, symbols: &[usize]) -> Result<Vec<Vec<u8>>, ControllerError>;
    /// Writes the given symbols, as [`Transport::sum_read`] reads them.
    fn sum_write(&mut self, items: &[(usize, Vec<u8>)]) -> Result<(), ControllerError>;
    /// Reads the cycle's inputs into `out`, oldest first: by notification where the transport
    /// subscribed to them, every sample the PLC sent since the last call with its time stamp
    /// (none when no new one has come), else one, as [`Transport::sum_read`] reads it (no
    /// time stamp).
    fn read_inputs(
        &mut self,
        symbols: &[usize],
        out: &mut Vec<Inputs>,
    ) -> Result<(), ControllerError> {
        out.push(Inputs {
            values: self.sum_read(symbols)?,
            plc_time: None,
        });
        Ok(())
    }
    /// Waits until `until`, or less when inputs the PLC sends of its own accord (notifications)
    /// may have arrived: true then. A transport that only polls sleeps to `until`.
    fn wait_for_inputs(&mut self, until: Instant) -> bool {
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
        false
    }
    /// Opens a new link (the old one is dropped).
    fn reopen(&mut self) -> Result<(), ControllerError>;
    /// The PLC runtime's ADS state (`wire::ads_state`), asked now; `None` where the transport
    /// cannot ask or the device does not say.
    fn plc_state(&mut self) -> Result<Option<u16>, ControllerError> {
        Ok(None)
    }
    /// The exchange in use on this link, once picked (see [`Controller::exchange`]).
    fn exchange(&self) -> Option<Exchange> {
        None
    }
}
