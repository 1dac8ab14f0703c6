//! The server side: what stands in for TwinCAT. An AMS/TCP server ([`tcp`]) on std threads
//! hands each frame to an ADS device ([`device`]), which serves a symbol table ([`symbols`])
//! and the bytes behind it ([`memory`]); a virtual PLC ([`virtual_plc`]) with a PLC task
//! (10 ms) and an NC task (2 ms) writes those bytes as it plays a trajectory through the
//! inverse kinematics within the winch limits; [`runtime`] starts the lot, as `cdpr plc` does.
//! Beside the AMS/TCP server, the ADS UDP service of port 48899 ([`udp`]: discovery and
//! add-route) and the route table it fills ([`routes`]), which the server can require.
//!
//! Uses: [`crate::wire`], the controller's conventions ([`crate::plc_symbols`],
//! [`crate::units`]) and `cdpr_core`'s robot, kinematics and trajectory (never `sim`). Never
//! [`crate::link`]: the server is what real clients (pyads, TwinCAT tools, the shadow's link)
//! talk to over ADS, and knows nothing of them.

pub mod device;
pub mod memory;
pub mod routes;
pub mod runtime;
pub mod symbols;
pub mod tcp;
pub mod udp;
pub mod virtual_plc;

pub use device::{Device, DeviceIdentity, Session};
pub use memory::PlcMemory;
pub use routes::{Route, RouteTable};
pub use runtime::{PlcReport, Runtime, RuntimeOptions, default_identity};
pub use symbols::SymbolTable;
pub use tcp::{CycleHook, DEFAULT_LISTEN, Server, ServerConfig};
pub use udp::{UdpConfig, UdpResponder};
pub use virtual_plc::{PlcCore, PlcStats, Timing, VirtualPlc};
