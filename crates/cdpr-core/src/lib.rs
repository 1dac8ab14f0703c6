//! cdpr-core: the model and the physics of cable-driven parallel robots, with no knowledge of
//! sockets or windows.
//!
//! Modules in layers, each using only the layers below it (declared and checked in
//! `layers.rs`, a test, which also refuses circles between the modules inside a module):
//! 1. `choice`, `text`, `toml_location`, `plotting`, `colors` — named choices, numbers in
//!    messages, where in a TOML file, plot axes, the tension colour scale; then `pose` (the platform pose) and `options` (the
//!    specs of options — name, unit, range, help — every face reads): what knows no robot;
//! 2. `legs` — the closed forms of the robots with rigid legs (linear delta, 2-RSSU);
//! 3. `robot` — robot files compiled into an immutable model;
//! 4. `kinematics`, then `statics` and `interference` (cables that must not touch);
//! 5. `trajectory`, then `metrics`, `workspace`, `export`;
//! 6. `surrogate` — seed 004's filters (below the physics, which runs them as a model);
//! 7. `sim` — the physics core: one [`sim::Sim`] stepping one of the [`sim::MODELS`];
//! 8. `run` — trajectories played through controllers into the physics, recorded and
//!    summarised; the one set of run options ([`run::RunRequest`]);
//! 9. `recording` — runs as CSV or MCAP files, read back through one reader;
//! 10. `identify`, `calibrate`, `sweep`, `report` — what runs many runs, fits recorded ones
//!     or writes documents.
//!
//! Above this crate: `cdpr-ads` (the controller boundary and the live shadow),
//! `cdpr-viewer` (Bevy) and the `cdpr` binary; none of them re-implements physics.
#![deny(clippy::unwrap_used)]

pub mod calibrate;
pub mod choice;
pub mod colors;
pub mod csv_input;
pub mod export;
pub mod identify;
pub mod interference;
pub mod job;
pub mod kinematics;
pub mod legs;
pub mod metrics;
pub mod options;
pub mod plotting;
pub mod pose;
pub mod preflight;
pub mod recording;
pub mod report;
pub mod robot;
pub mod run;
pub mod sim;
pub mod statics;
pub mod surrogate;
pub mod sweep;
pub mod text;
pub mod toml_location;
pub mod trajectory;
pub mod workspace;

#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
#[cfg(test)]
mod layers;
