//! How [`ShadowLink`](super::ShadowLink) moves the bytes of named symbols: over ADS or
//! in-process.

use super::ads_client::Exchange;
use super::error::ControllerError;
use crate::wire::IecType;

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
    /// Opens a new link (the old one is dropped).
    fn reopen(&mut self) -> Result<(), ControllerError>;
    /// The exchange in use on this link, once picked (see [`Controller::exchange`]).
    fn exchange(&self) -> Option<Exchange> {
        None
    }
}
