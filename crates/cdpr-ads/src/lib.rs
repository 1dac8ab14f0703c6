//! cdpr-ads: the controller boundary over ADS (Beckhoff TwinCAT's protocol) and the live
//! shadow that drives `cdpr-core`'s physics with a controller's commands.
//!
//! - [`plc`]: the wire format, an ADS server and a virtual PLC (a TwinCAT stand-in), and the
//!   [`plc::Controller`] trait the shadow talks to, over ADS or in-process;
//! - [`shadow`]: a `cdpr_core::sim::Sim` stepped with a [`plc::Controller`]'s commands.
//!
//! Layering: `plc` uses `cdpr_core`'s robot, kinematics and trajectory, never `sim`; `shadow`
//! owns a `Sim` and a `Controller`. Nothing here knows of windows.
#![deny(clippy::unwrap_used)]

pub mod plc;
pub mod plc_symbols;
pub mod shadow;

pub use plc_symbols::PlcSymbols;

#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
