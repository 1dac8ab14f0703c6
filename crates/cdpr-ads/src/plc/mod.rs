//! ADS (Beckhoff TwinCAT's Automation Device Specification): the controller boundary.
//!
//! Named `plc` because `ads` is the crates.io client this module uses.
//!
//! - [`wire`]: the wire format (AMS/TCP, AMS header, commands, sum commands, error codes);
//! - [`symbols`], [`memory`]: the symbol table built from a robot file and the bytes behind it;
//! - [`device`], [`server`]: an AMS/TCP server on std threads that serves them (the part of
//!   TwinCAT no crate offers);
//! - [`virtual_plc`]: a TwinCAT stand-in with a PLC task (10 ms) and an NC task (2 ms) that runs
//!   a trajectory through the inverse kinematics within the winch limits;
//! - [`controller`], [`ads_client`]: what the shadow needs from a controller, as a trait, with
//!   an `ads`-crate implementation and an in-process one; [`exchange`]: how the `ads`-crate
//!   one moves its bytes (sum commands by handle or by address, or single requests).
//!
//! Units: SI everywhere else; mm and degrees only in the symbols, converted in [`units`].
//! Layering: uses `robot`, `kinematics`, `trajectory`; never `sim`.

pub mod ads_client;
pub mod controller;
pub mod device;
pub mod exchange;
pub mod guard;
pub mod in_process;
pub mod memory;
pub mod server;
pub mod symbols;
pub mod units;
pub mod virtual_plc;
pub mod wire;

pub use ads_client::{AdsConfig, AdsController, AdsSource, AdsTransport};
pub use controller::{
    Controller, ControllerError, ControllerGeometry, CycleInputs, ShadowLink, ShadowOutputs,
    Transport, WritePolicy,
};
pub use device::{Device, DeviceIdentity, Session};
pub use exchange::{Exchange, ExchangeChoice};
pub use guard::{Backoff, CommandGuard, Rejection};
pub use in_process::{InProcessController, InProcessTransport};
pub use memory::PlcMemory;
pub use server::{DEFAULT_LISTEN, Server, ServerConfig};
pub use symbols::{IecType, Scalar, SymbolTable};
pub use virtual_plc::{PlcCore, PlcStats, Timing, VirtualPlc};
pub use wire::{AmsAddr, AmsNetId};

use cdpr_core::robot::Robot;
use cdpr_core::trajectory::Trajectory;
use std::sync::atomic::Ordering;

/// A virtual PLC serving its memory over ADS: what `cdpr plc` runs.
pub struct Runtime {
    /// Declared first so that it drops first: the server stops before the tasks.
    pub server: Server,
    pub plc: VirtualPlc,
}

impl Runtime {
    /// Builds the symbol table from `robot`, starts the tasks playing `trajectory` and the
    /// server answering as `identity` on `config.listen`.
    pub fn start(
        robot: &Robot,
        trajectory: Trajectory,
        timing: Timing,
        identity: DeviceIdentity,
        config: ServerConfig,
    ) -> Result<Runtime, virtual_plc::PlcError> {
        let memory = PlcMemory::new(SymbolTable::from_robot(robot)?);
        let core = PlcCore::new(robot, trajectory, std::sync::Arc::clone(&memory), timing)?;
        let plc = VirtualPlc::start(core)?;
        let server = Server::start(config, Device::new(identity, memory))?;
        Ok(Runtime { server, plc })
    }

    /// Stops server and tasks; the PLC's final statistics.
    pub fn stop(self) -> PlcStats {
        let Runtime { server, plc } = self;
        server.stop();
        plc.stop()
    }

    /// Stops server and tasks after `seconds` of serving; what `cdpr plc` reports at exit.
    pub fn finish(self, seconds: f64) -> PlcReport {
        let s = self.server.stats();
        let (connections, frames, rejected_connections, evicted_connections) = (
            s.connections.load(Ordering::Relaxed),
            s.frames.load(Ordering::Relaxed),
            s.rejected.load(Ordering::Relaxed),
            s.evicted.load(Ordering::Relaxed),
        );
        let stats = self.stop();
        let r = &stats.reaction;
        PlcReport {
            seconds,
            plc_cycles: stats.plc_cycles,
            nc_ticks: stats.nc_ticks,
            overruns: stats.overruns,
            finished: stats.finished,
            reaction_samples: r.samples(),
            reaction_p50_cycles: r.quantile(0.5),
            reaction_p99_cycles: r.quantile(0.99),
            reaction_max_cycles: r.max,
            motion_delay_cycles: stats.motion_delay_cycles,
            connections,
            frames,
            rejected_connections,
            evicted_connections,
        }
    }
}

/// A virtual PLC's run summarised: its tasks, the reaction times it measured (in PLC
/// cycles, seed 003's figure) and its server's traffic. The serde form is `cdpr plc --json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlcReport {
    pub seconds: f64,
    pub plc_cycles: u32,
    pub nc_ticks: u64,
    pub overruns: u64,
    pub finished: bool,
    pub reaction_samples: u64,
    pub reaction_p50_cycles: Option<u32>,
    pub reaction_p99_cycles: Option<u32>,
    pub reaction_max_cycles: Option<u32>,
    pub motion_delay_cycles: Option<u32>,
    pub connections: u64,
    pub frames: u64,
    /// Connections closed for a malformed, oversized or truncated frame.
    pub rejected_connections: u64,
    /// Connections closed to make room for a new client when all places were taken.
    pub evicted_connections: u64,
}

/// The identity a pyads or TwinCAT client expects of a local runtime: 127.0.0.1.1.1, port 851.
pub fn default_identity() -> DeviceIdentity {
    DeviceIdentity {
        net_id: AmsNetId::LOCAL,
        port: 851,
        name: "cdpr vPLC".into(),
    }
}
