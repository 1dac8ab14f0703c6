//! The link: how the shadow talks to a controller. [`Controller`] is what the shadow needs
//! (read the geometry and each cycle's commands, write its state back, reconnect), and
//! [`ShadowLink`] its one implementation, over a [`Transport`]: the `ads` crate's client
//! ([`ads_client`]: a real TwinCAT or `cdpr plc`) or, in tests, the virtual PLC's memory in-process
//! ([`in_process`]). Beside it the guards of the exchange: the command guard and the back-off
//! between reconnect attempts ([`guard`]).
//!
//! Uses: [`crate::wire`], the controller's conventions ([`crate::plc_symbols`],
//! [`crate::units`]). Never [`crate::server`], except the in-process transport, which reads
//! the virtual PLC's memory and is compiled for tests only (and the `fixtures` feature).

pub mod ads_client;
pub mod guard;
#[cfg(any(test, feature = "fixtures"))]
pub mod in_process;
pub mod shadow_link;

pub use ads_client::{AdsConfig, AdsController, AdsSource, AdsTransport, Exchange, ExchangeChoice};
pub use guard::{Backoff, CommandGuard, Rejection};
#[cfg(any(test, feature = "fixtures"))]
pub use in_process::{InProcessController, InProcessTransport};
pub use shadow_link::{
    Controller, ControllerError, ControllerGeometry, CycleInputs, ShadowLink, ShadowOutputs,
    Transport, WritePolicy,
};
