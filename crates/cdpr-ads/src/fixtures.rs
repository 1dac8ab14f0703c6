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
    client_at(("127.0.0.1", rt.server.local_addr().port()))
}

/// An `ads` crate client of the AMS/TCP server at `addr` (2 s timeouts).
pub fn client_at(addr: impl std::net::ToSocketAddrs) -> ads::Client {
    ads::Client::new(
        addr,
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

/// A writing, free-running (2 ms) shadow of `robot` with `model`, over ADS to `rt`'s server.
pub fn shadow_over_ads(
    rt: &Runtime,
    robot: &Robot,
    model: cdpr_core::sim::ModelKind,
) -> crate::shadow::Shadow<crate::plc::AdsController> {
    use crate::plc::{AdsConfig, AdsTransport, AmsAddr, AmsNetId, ShadowLink, WritePolicy};
    use crate::shadow::{CycleTiming, Shadow, ShadowConfig};
    let target = AmsAddr::new(AmsNetId::LOCAL, 851);
    let t = AdsTransport::connect(AdsConfig::new(rt.server.local_addr().to_string(), target))
        .expect("connects");
    let link = ShadowLink::connect(t, &robot.plc, WritePolicy::AllowListed).expect("resolves");
    let mut config = ShadowConfig {
        write: true,
        timing: CycleTiming::Free {
            period: Duration::from_millis(2),
        },
        ..ShadowConfig::default()
    };
    config.sim.model = model;
    Shadow::new(link, Some(robot.clone()), config).expect("the shadow starts")
}
