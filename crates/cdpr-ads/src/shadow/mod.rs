//! The live shadow of a controller: the physics core driven by a PLC's commanded cable lengths,
//! its pose, lengths and tensions written back (seed 000 §3–4, seed 003 §3.3, §4.2).
//!
//! A [`Shadow`] owns a [`Controller`] (a real TwinCAT or `cdpr plc` over ADS, or the virtual
//! PLC in-process) and a [`Sim`]. [`Shadow::new`] reads the controller's geometry, builds the
//! model from it (seed 000's automatic generation, [`model`]) and puts the platform at rest
//! where the controller's commanded lengths hold it ([`start`]). Each [`Shadow::cycle`] is one
//! exchange, in stages ([`cycle`]): read every sample of commanded lengths, cycle counter and
//! enable flag that has come since the last cycle (one sum read when polled, each notification
//! when they come by notification); place each on the PLC's time line and guard it
//! ([`clock`], [`commands`]); step the physics at its fixed dt to the time it must reach, each
//! step's command read off the curve through the samples ([`step`], [`timeline`]); write one sum
//! write of pose, lengths, tensions and the echo of the newest counter; record the cycle's
//! statistics ([`stats`]) and its steps ([`record`]). The shadow never re-implements physics:
//! it only feeds `Sim::set_command_lengths` and calls `Sim::step`.
//!
//! Time, two ways ([`CycleTiming`]):
//! - free-running: the physics' time is the wall clock since the start (the PLC runs in real
//!   time); each cycle steps floor(elapsed / dt) − steps done, at most
//!   [`ShadowConfig::max_catch_up`] of them (the rest is skipped and counted, never silently).
//!   The commands are read off the PLC's time line two PLC periods and one cycle late, when the
//!   samples that settle the curve there have come; a late one is extrapolated for and blended
//!   in ([`timeline`]);
//! - lockstep: the PLC's cycle counter is the clock: a counter that advanced by n steps the
//!   physics n × the PLC task period (the period of the task that increments the counter, 10 ms
//!   in seed 003 and `cdpr plc`; given by the user, and checked against an estimate from the
//!   counter's rate) along the samples up to the newest. An unchanged counter is a poll:
//!   nothing stepped, nothing written.
//!
//! [`run`] starts a cycle on a fixed schedule and, by notification, as each sample comes; its
//! thread asks for real-time scheduling ([`crate::realtime`]).
//!
//! Safety: nothing is written unless [`ShadowConfig::write`], and then only through
//! [`Controller::write_cycle`], which refuses symbols not on the allow-list before a byte goes
//! out; [`Shadow::new`] writes once, so a refused configuration fails at start. Samples with a
//! NaN/infinite value or a length jump beyond the winch's velocity limit are rejected: the last
//! good command is held, the event logged (rate-limited) and flagged in the record.
//!
//! Faults: a lost link (or any ADS error mid-cycle) sends the shadow offline; each later
//! `cycle` call retries with exponential back-off (it never sleeps itself), re-resolving the
//! handles ([`reconnect`]). On return — or when the cycle counter goes back, a PLC restarted — the platform is
//! re-settled where the new commands hold it, the clock re-based, and the record's next row
//! carries `gap = 1`. A controller whose anchors changed meanwhile is refused. A live link
//! that brings no new sample for [`Shadow::stall_limit`] (a stopped task, a runtime STOP —
//! asked with ADS ReadState —, notifications stalled on the network) holds the physics the same
//! way: nothing stepped or recorded until the samples come again, then a resync and a gap. A
//! run that ends offline or stalled closes its record with one gap row at its end; offline for
//! longer than [`ShadowConfig::lost_after`] it ends with [`ShadowError::Lost`]. A stop asked for
//! through the link's [`Interrupt`](crate::link::Interrupt) ends any blocked wait at once.
//!
//! For a viewer: drive `cycle()` from a thread of its own at the shadow's period (or call
//! [`run`]) and read [`Shadow::state`], [`Shadow::commanded_pose`], [`Shadow::robot`],
//! [`Shadow::stats`] for drawing.

mod clock;
mod commands;
mod config;
mod connect;
mod cycle;
mod error;
pub mod model;
mod reaction;
mod reconnect;
pub mod record;
mod report;
mod run;
mod start;
pub mod stats;
mod step;
mod timeline;
mod warnings;

pub use config::{CycleTiming, ShadowConfig};
pub use connect::{
    Connected, NetIdChoice, NetIdOrigin, ShadowSetup, choose_net_id, connect, endpoint,
    endpoint_on, net_id,
};
pub use cycle::{CycleReport, CycleStatus};
pub use error::ShadowError;
pub use model::{AnchorDifference, AnchorKind, Consistency};
pub use record::{Actuals, RecordError, Recorder};
pub use report::{AnchorSummary, ShadowReport, StartSummary};
pub use run::{cycle_period, run, run_with};
pub use start::StartReport;
pub use stats::{Histogram, ShadowStats, Summary};

use crate::link::{Controller, ControllerGeometry, CycleInputs, ShadowOutputs};
use cdpr_core::kinematics::Pose;
use cdpr_core::robot::Robot;
use cdpr_core::sim::{Sim, SimState};
use std::time::Instant;

/// Free-running, how late after the least delay a sample may come and still be in before the
/// physics reads into the part of the curve it shapes, s: the shadow's cycle, or this if longer — a desktop
/// scheduler's hiccup, which a 0.5 ms cycle would otherwise turn into late samples.
const LATE_MARGIN: f64 = 2e-3;

/// The live shadow of one controller. See the module docs.
pub struct Shadow<C: Controller> {
    // What it talks to and what it simulates.
    controller: C,
    config: ShadowConfig,
    robot: Robot,
    /// The controller's geometry as read at start.
    geometry: ControllerGeometry,
    start: StartReport,
    sim: Sim,
    // The parts of a cycle, by role.
    /// The link: up, or down with a back-off.
    link: reconnect::LinkState,
    /// Clock: the physics' time and the controller's.
    clock: clock::Clock,
    /// Guard: the samples as the command guard lets them through.
    commands: commands::Commands,
    /// Step: the command the physics follows, and its buffers.
    drive: step::Drive,
    /// The commands on the PLC's time line.
    timeline: timeline::Timeline,
    /// Free-running: the PLC time the physics reads at a shadow time.
    read_clock: timeline::ReadClock,
    /// The samples of a read, the buffer reused.
    batch: Vec<crate::link::Sample>,
    /// The echoes written, to count the PLC's reaction figure once per echo.
    echoes: reaction::Echoes,
    /// Write: the outputs, one buffer reused.
    outputs: ShadowOutputs,
    /// Record: the steps waiting for the write, the record, the commanded pose.
    recording: record::Recording,
    /// Statistics.
    stats: ShadowStats,
    /// Throttles of the warnings.
    warnings: warnings::Warnings,
    /// The interference check at the last exchange's pose (with a clearance).
    interference: Option<cdpr_core::interference::Report>,
    /// How the thread running the cycles is scheduled, once [`run`] has started.
    scheduling: Option<crate::realtime::Scheduling>,
}

impl<C: Controller> Shadow<C> {
    /// Records every following physics step (a recorder made for [`Shadow::actuals`]).
    pub fn record_to(&mut self, recorder: Recorder) {
        self.recording.attach(recorder);
        let i = self.commands.last_read();
        self.recording
            .set_actual(&i.actual_torques, &i.actual_lengths);
    }

    /// What the shadow reads of the drives beside the commands (the record's columns).
    pub fn actuals(&self) -> Actuals {
        let i = self.commands.last_read();
        Actuals {
            torques: !i.actual_torques.is_empty(),
            lengths: !i.actual_lengths.is_empty(),
        }
    }

    /// Flushes the record.
    pub fn finish(&mut self) -> Result<(), ShadowError> {
        self.recording.finish()
    }

    pub fn robot(&self) -> &Robot {
        &self.robot
    }

    /// The physics state (pose, lengths, tensions) as of the last cycle.
    pub fn state(&self) -> &SimState {
        self.sim.state()
    }

    /// The pose the commanded lengths the physics follows define for rigid cables (forward
    /// kinematics, warm-started): the viewer's ghost. Solved once per recorded step, or —
    /// without a record — at most once per cycle, when asked.
    pub fn commanded_pose(&self) -> Pose {
        self.recording
            .commanded_pose(&self.robot, self.drive.command())
    }

    /// The commanded lengths the physics follows (the controller's samples on its time line,
    /// see the module docs), m: those [`Shadow::commanded_pose`] is solved from.
    pub fn commanded_lengths(&self) -> &[f64] {
        self.drive.command()
    }

    /// Shadow time of that state, s.
    pub fn time(&self) -> f64 {
        self.clock.time()
    }

    /// The wall-clock instant of shadow time 0 for the free-running clock.
    pub fn clock_origin(&self) -> Instant {
        self.clock.origin()
    }

    pub fn stats(&self) -> &ShadowStats {
        &self.stats
    }

    pub fn summary(&self) -> Summary {
        Summary {
            exchange: self.controller.exchange(),
            command_latency_s: self.command_latency(),
            scheduling: self.scheduling.as_ref().map(ToString::to_string),
            interference: self
                .interference
                .iter()
                .flat_map(|r| r.violations().map(|p| p.to_string()))
                .collect(),
            ..self.stats.summary()
        }
    }

    /// How long the commands the physics follows lag the PLC's, s (see
    /// [`Summary::command_latency_s`]).
    pub fn command_latency(&self) -> f64 {
        match self.config.timing {
            CycleTiming::Free { period, .. } => {
                2.0 * self.plc_period() + period.as_secs_f64().max(LATE_MARGIN)
            }
            CycleTiming::Lockstep { .. } => 0.0,
        }
    }

    /// The interference check at the last exchange's pose (None: not checked, see
    /// [`ShadowConfig::clearance`]).
    pub fn interference(&self) -> Option<&cdpr_core::interference::Report> {
        self.interference.as_ref()
    }

    pub fn start_report(&self) -> &StartReport {
        &self.start
    }

    /// The controller's geometry as read at start.
    pub fn geometry(&self) -> &ControllerGeometry {
        &self.geometry
    }

    pub fn config(&self) -> &ShadowConfig {
        &self.config
    }

    /// The last sample read from the controller (refused or not).
    pub fn last_inputs(&self) -> &CycleInputs {
        self.commands.last_read()
    }

    /// Whether the samples come by notification on the current connection.
    fn notified(&self) -> bool {
        self.controller.exchange() == Some(crate::link::Exchange::Notify)
    }

    /// Waits until `until`, or less when the controller sends samples of its own accord
    /// (notifications) and one may have come: true then (time for a cycle).
    pub fn wait_for_samples(&mut self, until: Instant) -> bool {
        if self.link.is_up() {
            self.controller.wait_for_inputs(until)
        } else {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
            false
        }
    }

    /// Whether the link to the controller is up.
    pub fn is_linked(&self) -> bool {
        self.link.is_up()
    }

    /// Whether the link is up but its samples have stalled (the physics holds; see
    /// [`Shadow::stall_limit`]).
    pub fn is_stalled(&self) -> bool {
        self.link.stalled()
    }

    /// Since when the link's samples have stalled (`None`: they come, or the link is down),
    /// and whether the PLC said it is in STOP.
    pub fn stalled_since(&self) -> Option<(Instant, bool)> {
        self.link.stalled_since()
    }

    /// When the link went down (`None` while it is up).
    pub fn offline_since(&self) -> Option<Instant> {
        self.link.down_since()
    }

    pub fn controller(&self) -> &C {
        &self.controller
    }
}

#[cfg(test)]
mod tests;
