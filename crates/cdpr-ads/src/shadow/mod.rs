//! The live shadow of a controller: the physics core driven by a PLC's commanded cable lengths,
//! its pose, lengths and tensions written back (issue 6; seed 000 §3–4, seed 003 §3.3, §4.2).
//!
//! A [`Shadow`] owns a [`Controller`] (a real TwinCAT or `cdpr plc` over ADS, or the virtual
//! PLC in-process) and a [`Sim`]. [`Shadow::new`] reads the controller's geometry, builds the
//! model from it (seed 000's automatic generation, [`model`]) and puts the platform at rest
//! where the controller's commanded lengths hold it. Each [`Shadow::cycle`] is one exchange:
//! one sum read of commanded lengths, cycle counter and enable flag; the physics stepped at its
//! fixed dt up to the controller's time, the commands interpolated linearly between the last
//! sample and this one; one sum write of pose, lengths, tensions and the counter echo. The
//! shadow never re-implements physics: it only feeds `Sim::set_command` and calls `Sim::step`.
//!
//! Time, two ways ([`CycleTiming`]):
//! - free-running: the controller's time is the wall clock since the start (the PLC runs in
//!   real time); each cycle steps floor(elapsed / dt) − steps done, at most
//!   [`ShadowConfig::max_catch_up`] of them (the rest is skipped and counted, never silently).
//!   The commands are not sampled on the shadow's clock (a staircase whenever the PLC
//!   publishes less often than the shadow polls) but interpolated on the PLC's time line, its
//!   cycle counter, one PLC period and one poll late (`timeline`);
//! - lockstep: the PLC's cycle counter is the clock: a counter that advanced by n steps the
//!   physics n × the PLC task period (the period of the task that increments the counter, 10 ms
//!   in seed 003 and `cdpr plc`; given by the user, and checked against an estimate from the
//!   counter's rate). An unchanged counter is a poll: nothing stepped, nothing written.
//!
//! Safety: nothing is written unless [`ShadowConfig::write`], and then only through
//! [`Controller::write_cycle`], which refuses symbols not on the allow-list before a byte goes
//! out; [`Shadow::new`] writes once, so a refused configuration fails at start. Samples with a
//! NaN/infinite value or a length jump beyond the winch's velocity limit are rejected: the last
//! good command is held, the event logged (rate-limited) and flagged in the record.
//!
//! Faults: a lost link (or any ADS error mid-cycle) sends the shadow offline; each later
//! `cycle` call retries with exponential back-off (it never sleeps itself), re-resolving the
//! handles. On return — or when the cycle counter goes back, a PLC restarted — the platform is
//! re-settled where the new commands hold it, the clock re-based, and the record's next row
//! carries `gap = 1`. A controller whose anchors changed meanwhile is refused.
//!
//! For a viewer: drive `cycle()` from a thread of its own at the shadow's period (or call
//! [`run`]) and read [`Shadow::state`], [`Shadow::robot`], [`Shadow::stats`] for drawing.

mod config;
mod connect;
mod cycle;
mod error;
pub mod model;
pub mod record;
mod report;
mod run;
pub mod stats;
mod throttle;
mod timeline;

pub use config::{CycleTiming, ShadowConfig};
pub use connect::{Connected, ShadowSetup, connect, endpoint, net_id};
pub use error::ShadowError;
pub use model::{AnchorDifference, AnchorKind, Consistency};
pub use record::{RecordError, Recorder};
pub use report::{AnchorSummary, ShadowReport, StartSummary};
pub use run::{run, run_with};
pub use stats::{Histogram, ShadowStats, Summary};

use crate::link::{CommandGuard, Controller, ControllerGeometry, CycleInputs};
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::sim::{Command, Sim, SimState};
use serde::Serialize;
use std::time::{Duration, Instant};
use throttle::Throttle;

/// What [`Shadow::new`] found and did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartReport {
    pub cables: usize,
    /// Mass, stiffness and limits came from a robot file (else from the default template).
    pub from_file: bool,
    /// The controller's TCP pose (orientation zeroed for a 3-DOF robot).
    pub tcp_pose: Pose,
    /// Where the platform rests: the elastic equilibrium of the commanded lengths, searched
    /// from the TCP pose.
    pub start_pose: Pose,
    /// |start − TCP| position, m: the sag of elastic cables under uncompensated lengths.
    pub sag: f64,
    pub consistency: Consistency,
    /// With a robot file: every anchor further than [`model::ANCHOR_TOLERANCE`] from the
    /// controller's (the model uses the controller's).
    pub anchors: Vec<AnchorDifference>,
    /// The controller's commanded lengths at start (the platform rests where they hold it), m.
    pub commanded_lengths: Vec<f64>,
    /// The PLC cycle counter at start.
    pub plc_cycle: u32,
    /// The PLC publishes its reaction-time diagnostic.
    pub reaction_diagnostic: bool,
}

/// What one [`Shadow::cycle`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleStatus {
    /// Read, stepped, written.
    Exchanged,
    /// Lockstep: the counter had not moved; nothing stepped or written.
    Polled,
    /// Lockstep: the sample could not be used (non-finite) and gives no time; nothing done.
    Rejected,
    /// The link is down; the next attempt is due at `retry_at`.
    Offline,
    /// The link is back (or the PLC restarted); the physics was re-settled.
    Resynced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleReport {
    pub status: CycleStatus,
    pub steps: u64,
    /// This cycle's sample was refused and the last good command held.
    pub rejected: bool,
    pub plc_cycle: Option<u32>,
    pub retry_at: Option<Instant>,
}

impl CycleReport {
    fn new(status: CycleStatus) -> CycleReport {
        CycleReport {
            status,
            steps: 0,
            rejected: false,
            plc_cycle: None,
            retry_at: None,
        }
    }
}

enum Link {
    Up,
    Down {
        since: Instant,
        next_attempt: Instant,
        backoff: crate::link::Backoff,
    },
}

/// A time as a base plus a whole number of periods. Counting periods rather than adding them
/// keeps the count exact over days (a sum of 0.001 s drifts 1e-9 of a step in a few thousand).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counted {
    /// s.
    base: f64,
    periods: u64,
}

impl Counted {
    fn at(base: f64) -> Counted {
        Counted { base, periods: 0 }
    }

    fn time(&self, period: f64) -> f64 {
        self.base + self.periods as f64 * period
    }
}

/// The free-running clock's origin: the wall instant of shadow time `time`.
#[derive(Debug, Clone, Copy)]
struct Origin {
    wall: Instant,
    time: f64,
}

impl Origin {
    /// Shadow time at wall instant `now`.
    fn time_at(&self, now: Instant) -> f64 {
        self.time + now.saturating_duration_since(self.wall).as_secs_f64()
    }
}

/// The instant and the PLC counter an estimate of the PLC's period runs from.
#[derive(Debug, Clone, Copy)]
struct PeriodProbe {
    since: Instant,
    counter: u32,
}

/// A step to be recorded once the cycle's write is out.
struct PendingRow {
    t: f64,
    command: Vec<f64>,
    state: SimState,
    rejected: bool,
    gap: bool,
}

/// The live shadow of one controller. See the module docs.
pub struct Shadow<C: Controller> {
    controller: C,
    config: ShadowConfig,
    robot: Robot,
    sim: Sim,
    geometry: ControllerGeometry,
    start: StartReport,
    guard: CommandGuard,
    link: Link,
    /// Shadow time of the physics state: physics steps of dt since a base time.
    clock: Counted,
    /// Shadow time at which the last accepted sample was read.
    good_time: f64,
    /// Free-running: the wall instant and the shadow time of the clock's origin.
    origin: Origin,
    /// The PLC counter last exchanged.
    counter: u32,
    /// Lockstep: PLC cycles counted since the last re-base.
    lock: Counted,
    /// Where the estimate of the PLC's period runs from.
    period_probe: Option<PeriodProbe>,
    period_warned: bool,
    /// The command the physics ended the last cycle on, m.
    command: Vec<f64>,
    /// Free-running: the commands on the PLC's time line.
    timeline: timeline::Timeline,
    commanded_pose: Pose,
    last_inputs: CycleInputs,
    last_call: Option<Instant>,
    gap_pending: bool,
    recorder: Option<Recorder>,
    pending: Vec<PendingRow>,
    stats: ShadowStats,
    /// The controller's re-resolution count already accounted for.
    seen_re_resolves: u64,
    warn_rejected: Throttle,
    warn_behind: Throttle,
    warn_offline: Throttle,
}

impl<C: Controller> Shadow<C> {
    /// Reads the controller's geometry and first sample, builds the model (anchors from the
    /// controller; the rest from `file`, else [`model::default_robot`]), settles the platform
    /// where the commanded lengths hold it and — with `config.write` — writes that state once.
    pub fn new(
        mut controller: C,
        file: Option<Robot>,
        config: ShadowConfig,
    ) -> Result<Shadow<C>, ShadowError> {
        let period = config.timing.period();
        if period.is_zero() || period > Duration::from_secs(10) {
            return Err(ShadowError::Config(format!(
                "the cycle period must lie in (0, 10] s, got {period:?}"
            )));
        }
        if !(config.guard_slack.is_finite() && config.guard_slack >= 0.0) {
            return Err(ShadowError::Config(format!(
                "the guard slack must be ≥ 0 m, got {}",
                config.guard_slack
            )));
        }
        let geometry = controller.read_geometry()?;
        let (robot, anchors, from_file) = match &file {
            Some(f) => (
                f.with_geometry(&geometry.frame_anchors, &geometry.platform_anchors)?,
                model::compare_anchors(f, &geometry, model::ANCHOR_TOLERANCE),
                true,
            ),
            None => (model::default_robot(&geometry)?, Vec::new(), false),
        };
        let inputs = controller.read_cycle()?;
        let consistency = model::consistency(&robot, &geometry, &inputs.commanded_lengths);
        let tcp_pose = kinematics::effective_pose(&robot, &geometry.tcp_pose);
        let mut sim = Sim::at(&robot, config.sim.clone(), &tcp_pose)?;
        sim.settle(&Command::Lengths(inputs.commanded_lengths.clone()))?;
        let start_pose = sim.state().pose;
        let mut guard = CommandGuard::new(&robot.winch, config.guard_slack);
        // The first sample has nothing to jump from: accepted as the baseline.
        let _ = guard.check(inputs.clone(), 0.0);
        let start = StartReport {
            cables: robot.cable_count(),
            from_file,
            tcp_pose,
            start_pose,
            sag: (start_pose.position - tcp_pose.position).norm(),
            consistency,
            anchors,
            commanded_lengths: inputs.commanded_lengths.clone(),
            plc_cycle: inputs.cycle,
            reaction_diagnostic: inputs.reaction_cycles.is_some(),
        };
        warn_inconsistent(&start);
        let now = Instant::now();
        let seen_re_resolves = controller.re_resolves();
        let mut shadow = Shadow {
            controller,
            config,
            command: inputs.commanded_lengths.clone(),
            timeline: timeline::Timeline::default(),
            commanded_pose: tcp_pose,
            counter: inputs.cycle,
            lock: Counted::at(0.0),
            last_inputs: inputs,
            robot,
            sim,
            geometry,
            start,
            guard,
            link: Link::Up,
            clock: Counted::at(0.0),
            good_time: 0.0,
            origin: Origin {
                wall: now,
                time: 0.0,
            },
            period_probe: None,
            period_warned: false,
            last_call: None,
            gap_pending: false,
            recorder: None,
            pending: Vec::new(),
            stats: ShadowStats::default(),
            seen_re_resolves,
            warn_rejected: Throttle::default(),
            warn_behind: Throttle::default(),
            warn_offline: Throttle::default(),
        };
        if shadow.config.write {
            shadow.write_outputs(shadow.last_inputs.cycle)?;
        }
        Ok(shadow)
    }

    /// Records every following physics step.
    pub fn record_to(&mut self, recorder: Recorder) {
        self.recorder = Some(recorder);
    }

    /// One exchange now (see [`Shadow::cycle_at`]).
    pub fn cycle(&mut self) -> Result<CycleReport, ShadowError> {
        self.cycle_at(Instant::now())
    }

    /// Symbols the controller re-resolved on the live link since the last call, because the
    /// PLC had invalidated their handles (an online change or a re-download,
    /// [`Controller::re_resolves`]): counted in `re_resolves`; the caller flags the gap.
    fn take_re_resolves(&mut self) -> u64 {
        let total = self.controller.re_resolves();
        let new = total.saturating_sub(self.seen_re_resolves);
        self.seen_re_resolves = total;
        self.stats.re_resolves += new;
        new
    }

    /// A gap in the record: counted, and the next recorded step carries `gap = 1`.
    fn mark_gap(&mut self) {
        self.stats.gaps += 1;
        self.gap_pending = true;
    }

    /// Flushes the record.
    pub fn finish(&mut self) -> Result<(), ShadowError> {
        if let Some(r) = &mut self.recorder {
            r.finish()?;
        }
        Ok(())
    }

    pub fn robot(&self) -> &Robot {
        &self.robot
    }

    /// The physics state (pose, lengths, tensions) as of the last cycle.
    pub fn state(&self) -> &SimState {
        self.sim.state()
    }

    /// Shadow time of that state, s.
    pub fn time(&self) -> f64 {
        self.clock.time(self.config.sim.dt)
    }

    /// Jumps the shadow time to `t` (skips and gaps).
    fn set_time(&mut self, t: f64) {
        self.clock = Counted::at(t);
    }

    /// The wall-clock instant of shadow time 0 for the free-running clock.
    pub fn clock_origin(&self) -> Instant {
        self.origin.wall
    }

    pub fn stats(&self) -> &ShadowStats {
        &self.stats
    }

    pub fn summary(&self) -> Summary {
        Summary {
            exchange: self.controller.exchange(),
            ..self.stats.summary()
        }
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

    /// The last sample read from the controller.
    pub fn last_inputs(&self) -> &CycleInputs {
        &self.last_inputs
    }

    /// Whether the link to the controller is up.
    pub fn is_linked(&self) -> bool {
        matches!(self.link, Link::Up)
    }

    /// When the link went down (`None` while it is up).
    pub fn offline_since(&self) -> Option<Instant> {
        match self.link {
            Link::Up => None,
            Link::Down { since, .. } => Some(since),
        }
    }

    pub fn controller(&self) -> &C {
        &self.controller
    }
}

fn warn_inconsistent(start: &StartReport) {
    let c = &start.consistency;
    match c.fk_position_offset {
        Some(d) if d > 1e-3 => tracing::warn!(
            "the controller's TCP pose and its commanded lengths disagree by {:.2} mm (forward kinematics of the lengths): check units and anchors",
            d * 1e3
        ),
        None => tracing::warn!(
            "forward kinematics of the controller's commanded lengths does not converge from its TCP pose: check units and anchors"
        ),
        _ => {}
    }
    if c.angle_mismatch > 0.5f64.to_radians() {
        tracing::warn!(
            "the controller's cable angles differ from the model's by up to {:.2}° (seed 000 eqs. 2–3 conventions?)",
            c.angle_mismatch.to_degrees()
        );
    }
}

#[cfg(test)]
mod tests;
