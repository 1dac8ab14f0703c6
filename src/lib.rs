//! cdpr: an open, self-contained digital shadow for cable-driven parallel robots.
//!
//! Layers, each depending only on those above it in this list:
//! `robot` (files, model; `legs`: the closed forms of the robots with rigid legs) →
//! `kinematics` / `statics` → `workspace` / `trajectory` / `metrics` → `sim` → `surrogate` →
//! `plc` (the controller boundary; it does not use `sim`) → (`shadow`, `viewer`, the `cdpr`
//! binary). `shadow` owns a `sim::Sim` and a `plc::Controller` and steps the one with the
//! other's commands.

pub mod kinematics;
pub mod legs;
pub mod metrics;
pub mod plc;
pub mod report;
pub mod robot;
pub mod shadow;
pub mod sim;
pub mod statics;
pub mod surrogate;
pub mod trajectory;
#[cfg(feature = "viewer")]
pub mod viewer;
pub mod workspace;
