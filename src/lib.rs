//! cdpr: an open, self-contained digital shadow for cable-driven parallel robots.
//!
//! Layers, each depending only on those above it in this list:
//! `robot` (files, model) → `kinematics` / `statics` → `trajectory` / `metrics` → `sim` →
//! (`shadow`, `viewer`, the `cdpr` binary).

pub mod kinematics;
pub mod metrics;
pub mod plc;
pub mod report;
pub mod robot;
pub mod sim;
pub mod statics;
pub mod trajectory;
#[cfg(feature = "viewer")]
pub mod viewer;
