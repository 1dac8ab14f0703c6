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
//!   an `ads`-crate implementation and an in-process one.
//!
//! Units: SI everywhere else; mm and degrees only in the symbols, converted in [`units`].
//! Layering: uses `robot`, `kinematics`, `trajectory`; never `sim`.

pub mod ads_client;
pub mod controller;
pub mod device;
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
pub use guard::{Backoff, CommandGuard, Rejection};
pub use in_process::{InProcessController, InProcessTransport};
pub use memory::PlcMemory;
pub use server::{DEFAULT_LISTEN, Server, ServerConfig};
pub use symbols::{IecType, Scalar, SymbolTable};
pub use virtual_plc::{PlcCore, PlcStats, Timing, VirtualPlc};
pub use wire::{AmsAddr, AmsNetId};

use cdpr_core::robot::Robot;
use cdpr_core::trajectory::Trajectory;

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
}

/// The identity a pyads or TwinCAT client expects of a local runtime: 127.0.0.1.1.1, port 851.
pub fn default_identity() -> DeviceIdentity {
    DeviceIdentity {
        net_id: AmsNetId::LOCAL,
        port: 851,
        name: "cdpr vPLC".into(),
    }
}
