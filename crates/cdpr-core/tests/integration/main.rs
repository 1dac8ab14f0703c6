//! The core library's integration tests, as one test binary (each file in `tests/` would be a
//! binary of its own, linked against every dependency: linking dominated a cold `cargo test`).
//! One module per behaviour checked, each against independent numbers (closed forms, the
//! papers' figures, finite differences).
//!
//! Run one module: `cargo test -p cdpr-core --test integration sim_tracking::`.

/// The robots with rigid legs: workspace against the papers, Rapier against the closed form.
mod legs;
/// Tracking metrics with known answers.
mod metrics_compare;
/// Hostile edits of the shipped robot files: loaded or refused clearly, never a panic.
mod robot_files;
/// The drives as built: torques by hand, the models against each other, torque and
/// velocity mode.
mod sim_drives;
/// Tension mode (seed 001's controller) converges within the tension bounds.
mod sim_tension;
/// Seed 000's trajectory tracked on uvigo8: elastic, chain, PID winches.
mod sim_tracking;
/// The surrogate predicts what it was not fitted on.
mod surrogate;
/// The built-in trajectories against the papers.
mod trajectory_builtins;
/// CSV import and export.
mod trajectory_csv;
/// Cable-space rates, the winch-limit check, time scaling.
mod trajectory_limits;
/// Speed profiles against closed forms.
mod trajectory_profiles;
