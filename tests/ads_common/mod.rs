//! Helpers for the ADS tests: a virtual PLC on an ephemeral loopback port, and an `ads`
//! crate client for it.
#![allow(dead_code)]

use cdpr::plc::{self, Runtime, ServerConfig, Timing};
use cdpr::robot::Robot;
use cdpr::trajectory::Trajectory;
use std::time::Duration;

pub fn uvigo8() -> Robot {
    Robot::builtin("uvigo8").expect("shipped").expect("parses")
}

/// A virtual PLC for uvigo8 holding its home pose (no trajectory), on 127.0.0.1:<free port>.
pub fn runtime() -> Runtime {
    runtime_with(&uvigo8(), Trajectory::default())
}

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

pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}
