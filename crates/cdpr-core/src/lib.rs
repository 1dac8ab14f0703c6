//! cdpr-core: the model and the physics of cable-driven parallel robots, with no knowledge of
//! sockets or windows.
//!
//! Layers, each depending only on those above it in this list:
//! `robot` (files, model; `legs`: the closed forms of the robots with rigid legs) →
//! `kinematics` / `statics` → `workspace` / `trajectory` / `metrics` → `sim` → `surrogate` →
//! `report`; `export` (the robot as a MuJoCo model) reads `robot`, `kinematics` and `statics`.
//! Above this crate: `cdpr-ads` (the controller boundary and the live shadow),
//! `cdpr-viewer` (Bevy) and the `cdpr` binary; none of them re-implements physics.
#![deny(clippy::unwrap_used)]

pub mod export;
pub mod kinematics;
pub mod legs;
pub mod metrics;
pub mod report;
pub mod robot;
pub mod sim;
pub mod statics;
pub mod surrogate;
pub mod sweep;
pub mod toml_location;
pub mod trajectory;
pub mod workspace;

#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
