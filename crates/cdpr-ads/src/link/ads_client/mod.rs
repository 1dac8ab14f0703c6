//! The link over the crates.io `ads` 0.4 client: [`AdsTransport`] resolves the shadow's
//! symbols and moves their bytes as one of three [`Exchange`]s ([`exchange`]).

pub mod exchange;
pub mod transport;

pub use exchange::{Exchange, ExchangeChoice};
pub use transport::{AdsConfig, AdsController, AdsSource, AdsTransport, error_text};
