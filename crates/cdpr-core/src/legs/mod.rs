//! Parallel robots built from rigid legs rather than cables: seed 002's linear delta (Keops)
//! and seed 004's 2-RSSU motion platform. Their closed-form inverse kinematics and workspace
//! checks live here (below the robot files, which hold them); what the commands report about
//! them is in `kinematics::legs` and `workspace::legs`, the Rapier model of their legs in
//! `sim::models::legs`.

pub mod coverage;
pub mod design;
pub mod linear_delta;
pub mod rssu2;

pub use linear_delta::{Cylinder, LinearDelta, Violation};
pub use rssu2::{Rssu2, Rssu2Violation};
