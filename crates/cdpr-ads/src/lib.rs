//! cdpr-ads: the controller boundary over ADS (Beckhoff TwinCAT's Automation Device
//! Specification) and the live shadow that drives `cdpr-core`'s physics with a controller's
//! commands. Laid out as the protocol reads, in layers (each uses only those above it):
//!
//! - [`wire`]: the ADS wire format — AMS/TCP and AMS headers, the ADS commands, sum commands,
//!   return codes, AMS addresses. Bytes only: nothing in it knows a robot;
//! - [`plc_symbols`], [`units`]: the controller's conventions, shared by both ends — which
//!   symbols hold what (the robot file's `[plc]` section) and their units (mm, degrees);
//! - [`secure`]: Secure ADS — TLS 1.2 on TCP 8016 in TwinCAT's three modes (self-signed
//!   certificates with pins, a shared CA, a pre-shared key) and its TlsConnectInfo; used by
//!   both ends, the server and the link;
//! - [`server`]: what stands in for TwinCAT — an AMS/TCP server, the ADS device behind it, the
//!   PLC memory and symbol table it serves, and the virtual PLC that writes them (`cdpr plc`);
//! - [`link`]: how the shadow talks to a controller — the [`link::Controller`] trait, its
//!   implementation over the `ads` crate's client, the guards of the exchange. The link never
//!   uses the server (a test-only in-process transport aside), the server never the link;
//! - [`shadow`]: a `cdpr_core::sim::Sim` stepped with a [`link::Controller`]'s commands;
//! - [`live_view`]: a face's run served over the Foxglove WebSocket protocol (`--foxglove`),
//!   beside the run, never in its way ([`exposure`]: the warning of a non-loopback address);
//! - [`proxy`]: a plant network rehearsed between a shadow and its PLC (`cdpr proxy`): AMS/TCP
//!   frames delayed, stalled, reset or swallowed.
//!
//! `cdpr_core`: the server uses its robot, kinematics and trajectory, never `sim`; the shadow
//! owns a `Sim` and a `Controller`. Nothing here knows of windows. SI everywhere but in the
//! symbols (mm, degrees), converted in [`units`] and nowhere else.
#![deny(clippy::unwrap_used)]

pub mod exposure;
pub mod link;
pub mod live_view;
pub mod plc_symbols;
pub mod ports;
pub mod proxy;
pub mod realtime;
pub mod requests;
pub mod secure;
pub mod server;
pub mod shadow;
pub mod suite;
mod throttle;
mod timed_out;
pub mod units;
pub mod wire;

pub use plc_symbols::PlcSymbols;

#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
