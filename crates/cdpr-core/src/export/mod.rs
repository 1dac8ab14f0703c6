//! Exports of a robot to other simulators, so that anyone can cross-check our physics there.
//!
//! [`mjcf`]: a self-contained MuJoCo (MJCF) document — the platform as a free body, each cable
//! a spatial tendon with the robot file's stiffness and damping and a one-sided spring.

mod mjcf;
pub mod xml;

pub use mjcf::{MJCF_DT_RANGE, MjcfIntegrator, MjcfOptions, OPTIONS as MJCF_OPTIONS, mjcf};

use crate::statics::StaticsError;

/// Why a robot cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(
        "{name} is a {kind} robot (rigid legs, not cables): the MJCF export writes cables as \
         tendons and is for cable-driven robots only"
    )]
    NotCableRobot { name: String, kind: &'static str },
    #[error("the time step must be between {min} and {max} s, got {dt}")]
    BadStep { dt: f64, min: f64, max: f64 },
    #[error(
        "{name} cannot hang at its home pose {home:?} within its tension bounds, so it has no \
         pre-tensioned rest lengths to export: {source}"
    )]
    HomeInfeasible {
        name: String,
        home: [f64; 6],
        #[source]
        source: StaticsError,
    },
    #[error(
        "cable {cable} ({name}) would need a rest length of {rest} m at home (IK length {length} m, \
         tension {tension} N): not a positive length"
    )]
    RestLength {
        cable: usize,
        name: String,
        rest: f64,
        length: f64,
        tension: f64,
    },
}
