//! The ADS crate's integration tests over loopback TCP, as one test binary (each file in
//! `tests/` would be a binary of its own, linked against every dependency).
//!
//! Apart, in binaries of their own: `memory_under_hostile_lengths.rs` (a counting global
//! allocator: its counters are process-wide, nothing may run beside it) and `pyads.rs`
//! (a libtest-mimic harness running Python's pyads, `harness = false` in Cargo.toml).
//!
//! Run one module: `cargo test -p cdpr-ads --test integration exchange_choice::`.

/// The crates.io `ads` client against the virtual PLC's server.
mod ads_crate_client;
/// Broken frames and a slow-loris do not take the server down.
mod broken_frames;
/// The shadow's controller interface over ADS: geometry, exchange, allow-list, reconnection.
mod controller_over_ads;
/// The exchange picked or forced, fallbacks, handles re-resolved after an online change.
mod exchange_choice;
/// The shadow's inputs by device notification: every PLC cycle, with the PLC's time.
mod notify_exchange;
/// One notification frame per PLC cycle and client, stamped with the PLC's time.
mod plc_cycle_notifications;
/// Secure ADS (TLS): the three modes, refusals and their words, hostile peers in the tunnel.
mod secure_ads;
/// A peer that never reads, and a flood of idle connections, cost only themselves.
mod server_under_load;
/// The shadow's library loop over ADS rides out a dropped link.
mod shadow_loop_over_ads;
/// The GVL shipped for TwinCAT declares what the virtual PLC serves.
mod twincat_gvl;
/// The PLC library shipped for TwinCAT (FB, TcUnit suite) as blark parses it, against the GVL.
mod twincat_library;
/// The ADS UDP service (identify, add route) and the route table.
mod udp_service;
/// A foreign client cannot write what the PLC owns nor stop it.
mod write_protection;
