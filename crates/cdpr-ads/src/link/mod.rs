//! The link: how the shadow talks to a controller. [`Controller`] is what the shadow needs
//! (read the geometry and each cycle's commands, write its state back, reconnect), and
//! [`ShadowLink`] its one implementation, over a [`Transport`]: the `ads` crate's client
//! ([`ads_client`]: a real TwinCAT or `cdpr plc`) or, in tests, the virtual PLC's memory
//! in-process ([`in_process`]). Beside it the guards of the exchange: the command guard
//! ([`guard`]) and the back-off between reconnect attempts ([`backoff`]).
//!
//! - [`controller`]: the trait and what crosses it (SI);
//! - [`error`]: what can go wrong, and whether reconnecting or re-resolving helps;
//! - [`shadow_link`]: [`ShadowLink`] — the symbols resolved and type-checked ([`slot`]),
//!   the allow-list ([`write_policy`]), mm and degrees converted ([`crate::units`]);
//! - [`transport`]: how its bytes travel;
//! - [`interrupt`]: the stop request that ends any wait of the link at once.
//!
//! Beside it, the ADS UDP service (port 48899) as a client: [`discover`](mod@discover)
//! (identify one host or broadcast), [`route`] (add a route on the PLC), both over
//! [`udp_service`].
//!
//! Uses: [`crate::wire`], the controller's conventions ([`crate::plc_symbols`],
//! [`crate::units`]). Never [`crate::server`], except the in-process transport, which reads
//! the virtual PLC's memory and is compiled for tests only (and the `fixtures` feature).

pub mod ads_client;
pub mod backoff;
pub mod controller;
pub mod discover;
pub mod error;
pub mod guard;
pub mod in_process;
pub mod interrupt;
pub mod route;
pub mod shadow_link;
mod slot;
pub mod transport;
pub mod udp_service;
pub mod write_policy;

pub use ads_client::{AdsConfig, AdsController, AdsSource, AdsTransport, Exchange, ExchangeChoice};
pub use backoff::Backoff;
pub use controller::{
    Controller, ControllerGeometry, ControllerPulleys, CycleInputs, Sample, ShadowOutputs,
};
pub use discover::{SystemInfo, announced_fingerprint, discover, identify, net_id_of};
pub use error::ControllerError;
pub use guard::{CommandGuard, Refused, Rejection};
pub use in_process::{InProcessController, InProcessTransport};
pub use interrupt::Interrupt;
pub use route::{RouteAdded, RouteError, RouteRequest, add_route};
pub use shadow_link::ShadowLink;
pub use transport::Transport;
pub use udp_service::UdpServiceError;
pub use write_policy::WritePolicy;
