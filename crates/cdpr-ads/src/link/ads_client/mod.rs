//! The link over the project's own ADS client ([`connection`]): [`AdsTransport`] resolves the shadow's
//! symbols and moves their bytes as one of three [`Exchange`]s ([`exchange`]).

pub mod config;
pub mod connection;
pub mod exchange;
mod failure;
mod readable;
pub mod transport;

pub use config::{AdsConfig, AdsSource};
pub use exchange::{Exchange, ExchangeChoice};
pub use transport::{AdsController, AdsTransport, SILENT_SUM_WRITES};
