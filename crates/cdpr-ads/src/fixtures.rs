//! Fixtures for the ADS tests and benches of the workspace: a virtual PLC on an ephemeral
//! loopback port, and an `ads` crate client for it. Compiled for this crate's tests and, with
//! the `fixtures` feature, for the other crates'.
#![allow(clippy::expect_used)]

use crate::plc::{self, Runtime, ServerConfig, Timing};
use cdpr_core::robot::Robot;
use cdpr_core::trajectory::Trajectory;
use std::time::Duration;

pub use cdpr_core::fixtures::{robot, uvigo8};

/// A virtual PLC for uvigo8 holding its home pose (no trajectory), on 127.0.0.1:<free port>.
pub fn runtime() -> Runtime {
    runtime_with(&uvigo8(), Trajectory::default())
}

/// A virtual PLC for `robot` playing `trajectory`, on 127.0.0.1:<free port>.
pub fn runtime_with(robot: &Robot, trajectory: Trajectory) -> Runtime {
    let config = ServerConfig::new("127.0.0.1:0".parse().expect("address"));
    Runtime::start(
        robot,
        trajectory,
        Timing::default(),
        plc::default_identity(),
        config,
    )
    .expect("virtual PLC starts")
}

/// An `ads` crate client of `rt`'s server.
pub fn client(rt: &Runtime) -> ads::Client {
    let addr = rt.server.local_addr();
    ads::Client::new(
        ("127.0.0.1", addr.port()),
        ads::Timeouts::new(Duration::from_secs(2)),
        ads::Source::Auto,
    )
    .expect("connects")
}

/// The PLC runtime's address as the `ads` crate spells it.
pub fn target() -> ads::AmsAddr {
    ads::AmsAddr::new(ads::AmsNetId::new(127, 0, 0, 1, 1, 1), 851)
}

/// Little-endian LREALs.
pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}
