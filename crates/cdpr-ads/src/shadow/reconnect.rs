//! When the link or the PLC goes away: offline with back-off, reconnect, and the resync that
//! puts the platform at rest where the new commands hold it (a gap in the record); a live link
//! that brings no new sample for longer than [`Shadow::stall_limit`] (a PLC whose task stopped,
//! a runtime STOP, notifications that stalled) holds the physics the same way, and a run that
//! ends without its PLC says so ([`Shadow::end_at`]).

use super::cycle::{CycleReport, CycleStatus};
use super::{Shadow, ShadowError, model};
use crate::link::{Backoff, Controller, ControllerError, ControllerGeometry, CycleInputs};
use cdpr_core::sim::Command;
use std::time::{Duration, Instant};

/// Down since when, and when to try again.
struct Outage {
    since: Instant,
    next_attempt: Instant,
    backoff: Backoff,
}

/// A live link without new samples since `since`.
struct Stall {
    since: Instant,
    /// The PLC said it is in STOP when the stall was noticed.
    stopped: bool,
}

/// The fewest seconds without a new sample that make a stall: well above a desktop's
/// scheduling hiccup and one frame held up on a network (a switch's buffer, a retransmission:
/// `cdpr proxy --spike 100ms`), and above the horizon past which the commands brake to a hold
/// (50 ms), so that a stretch the curve through the samples bridges is never taken for one.
pub const STALL_MIN: f64 = 0.2;

/// A stall is also this many of the PLC's periods without a new sample (a slow task).
pub const STALL_PERIODS: f64 = 10.0;

/// The link as the shadow sees it: up, or down with a back-off; when the last new sample came
/// and whether the samples have stalled; and the controller's re-resolutions already accounted
/// for.
pub(super) struct LinkState {
    down: Option<Outage>,
    stall: Option<Stall>,
    /// When the last sample of a new counter value came.
    fresh: Instant,
    seen_re_resolves: u64,
}

impl LinkState {
    /// Up at `now`, the controller having re-resolved its symbols `re_resolves` times so far.
    pub(super) fn up(re_resolves: u64, now: Instant) -> LinkState {
        LinkState {
            down: None,
            stall: None,
            fresh: now,
            seen_re_resolves: re_resolves,
        }
    }

    /// Whether the samples have stalled on a live link (nothing stepped meanwhile).
    pub(super) fn stalled(&self) -> bool {
        self.stall.is_some()
    }

    /// Since when the samples have stalled, and whether the PLC said it is in STOP.
    pub(super) fn stalled_since(&self) -> Option<(Instant, bool)> {
        self.stall.as_ref().map(|s| (s.since, s.stopped))
    }

    pub(super) fn is_up(&self) -> bool {
        self.down.is_none()
    }

    /// When the link went down (`None` while it is up).
    pub(super) fn down_since(&self) -> Option<Instant> {
        self.down.as_ref().map(|d| d.since)
    }

    /// Re-resolutions since the last call, of `total` so far.
    fn new_re_resolves(&mut self, total: u64) -> u64 {
        let new = total.saturating_sub(self.seen_re_resolves);
        self.seen_re_resolves = total;
        new
    }
}

impl<C: Controller> Shadow<C> {
    /// Symbols the controller re-resolved on the live link since the last call, because the
    /// PLC had invalidated their handles (an online change or a re-download,
    /// [`Controller::re_resolves`]): counted in `re_resolves`; the caller flags the gap.
    pub(super) fn take_re_resolves(&mut self) -> u64 {
        let new = self.link.new_re_resolves(self.controller.re_resolves());
        self.stats.re_resolves += new;
        new
    }

    /// A gap in the record: counted, and the next recorded step carries `gap = 1`.
    pub(super) fn mark_gap(&mut self) {
        self.stats.gaps += 1;
        self.recording.mark_gap();
    }

    pub(super) fn lose_link(&mut self, now: Instant, e: &ControllerError) {
        let mut backoff = Backoff::default();
        let next_attempt = now + backoff.next_delay();
        tracing::warn!(
            "link to the PLC lost at {:.3} s ({e}); reconnecting with back-off",
            self.clock.time()
        );
        // A stall that ends in a lost link is one stretch without samples, from its start.
        let since = self.link.stall.take().map_or(now, |s| s.since);
        self.link.down = Some(Outage {
            since,
            next_attempt,
            backoff,
        });
    }

    /// How long a live link may bring no new sample before the shadow holds: [`STALL_MIN`],
    /// or [`STALL_PERIODS`] of the PLC's period if longer, s.
    pub fn stall_limit(&self) -> f64 {
        (STALL_PERIODS * self.plc_period()).max(STALL_MIN)
    }

    /// A cycle's read brought a new sample at `now`: the stall, if any, is over.
    pub(super) fn fresh_sample(&mut self, now: Instant) {
        self.link.fresh = now;
    }

    /// A cycle whose read brought nothing new at `now`: a stall once the last new sample is
    /// older than [`Shadow::stall_limit`]. The PLC is asked for its state once (a runtime STOP
    /// is told apart from a task or a network that stalled), the stall counted and said, and
    /// nothing is stepped or recorded until the samples come again (then a resync: a gap).
    /// The report of the cycle that ends here (`None`: not stalled, the cycle goes on). A PLC
    /// that does not answer the state's request within the timeout is lost.
    pub(super) fn check_stall(&mut self, now: Instant) -> Option<CycleReport> {
        let stalled = CycleReport::new(CycleStatus::Stalled);
        if self.link.stall.is_some() {
            return Some(stalled);
        }
        let quiet = now.saturating_duration_since(self.link.fresh).as_secs_f64();
        if quiet <= self.stall_limit() {
            return None;
        }
        // The stall first, so that a stop asked for while the PLC is asked leaves it said.
        self.link.stall = Some(Stall {
            since: self.link.fresh,
            stopped: false,
        });
        self.stats.stalls += 1;
        let stopped = match self.controller.plc_state() {
            Ok(state) => state == Some(crate::wire::ads_state::STOP),
            Err(ControllerError::Interrupted) => {
                return Some(CycleReport::new(CycleStatus::Interrupted));
            }
            Err(e) if e.is_link() => {
                self.lose_link(now, &e);
                return Some(CycleReport::new(CycleStatus::Offline));
            }
            Err(_) => false,
        };
        if let Some(stall) = self.link.stall.as_mut() {
            stall.stopped = stopped;
        }
        self.stats.plc_stops += u64::from(stopped);
        let counter = self.clock.counter();
        let why = if stopped {
            "the PLC is in STOP".to_string()
        } else {
            "its task stopped, or the samples stalled on the way".to_string()
        };
        self.warnings.stalled.warn(now, || {
            format!(
                "no new sample from the PLC for {:.0} ms (its cycle counter stands at \
                 {counter}): {why}; the shadow holds, nothing is recorded until the samples \
                 come again (a gap)",
                quiet * 1e3
            )
        });
        Some(stalled)
    }

    /// The samples came again after a stall, the newest usable one `inputs`: the platform
    /// re-settled where they hold it, a gap.
    pub(super) fn end_stall(
        &mut self,
        now: Instant,
        inputs: CycleInputs,
    ) -> Result<(), ShadowError> {
        let Some(stall) = self.link.stall.take() else {
            return Ok(());
        };
        let gap = now.saturating_duration_since(stall.since);
        self.stats.without_samples_s += gap.as_secs_f64();
        self.warnings.stalled.warn(now, || {
            format!(
                "samples from the PLC again after {:.0} ms{}; re-synchronised at its commanded \
                 lengths",
                gap.as_secs_f64() * 1e3,
                if stall.stopped { " in STOP" } else { "" }
            )
        });
        self.link.fresh = now;
        self.resync(now, inputs, gap)
    }

    /// The run ends at `now`. A run that ends while the link is down, or its samples stalled,
    /// closes its record with one gap row at the end (`gap = 1`, `enable = 0`, the state held)
    /// and counts the gap, so that the record, `gaps` and `simulated_s` agree. A link down
    /// for longer than `lost_after` (the link's timeout) is an error naming when it was lost.
    pub fn end_at(&mut self, now: Instant, lost_after: Duration) -> Result<(), ShadowError> {
        let (since, lost) = match (&self.link.down, &self.link.stall) {
            (Some(outage), _) => (outage.since, true),
            (None, Some(stall)) => (stall.since, false),
            (None, None) => return Ok(()),
        };
        let gap = now.saturating_duration_since(since);
        let lost_at = self.clock.time();
        let end = self.clock.time_after(now, gap);
        self.stats.without_samples_s += gap.as_secs_f64();
        self.mark_gap();
        if end > lost_at {
            self.clock.set_time(end);
            self.recording
                .step(end, self.drive.command(), self.sim.state(), false);
            let counter = self.clock.counter();
            self.recording.flush(&self.robot, counter, false)?;
        }
        self.link.down = None;
        self.link.stall = None;
        if lost && gap > lost_after {
            return Err(ShadowError::Lost {
                at_s: lost_at,
                for_s: gap.as_secs_f64(),
            });
        }
        Ok(())
    }

    /// Offline: one reconnect attempt when due; on success the geometry is checked and the
    /// physics re-synchronised.
    pub(super) fn reconnect_at(&mut self, now: Instant) -> Result<CycleReport, ShadowError> {
        let Some(outage) = &self.link.down else {
            return Ok(CycleReport::new(CycleStatus::Exchanged));
        };
        let (since, due) = (outage.since, outage.next_attempt);
        let offline = |retry: Instant| CycleReport {
            retry_at: Some(retry),
            ..CycleReport::new(CycleStatus::Offline)
        };
        if now < due {
            return Ok(offline(due));
        }
        let attempt_started = Instant::now();
        let attempt = self.controller.reconnect().and_then(|()| {
            let geometry = self.controller.read_geometry()?;
            let inputs = self.controller.read_cycle()?;
            Ok((geometry, inputs))
        });
        let (geometry, inputs) = match attempt {
            Ok(v) => v,
            Err(ControllerError::Interrupted) => return Ok(offline(now)),
            Err(e) => {
                let (retry, delay) = match &mut self.link.down {
                    Some(outage) => {
                        let delay = outage.backoff.next_delay();
                        outage.next_attempt = now + delay;
                        (outage.next_attempt, delay)
                    }
                    None => (now, Duration::ZERO),
                };
                self.warnings.offline.warn(now, || {
                    format!(
                        "PLC still unreachable ({e}); next attempt in {} ms",
                        delay.as_millis()
                    )
                });
                return Ok(offline(retry));
            }
        };
        self.check_geometry(&geometry)?;
        // The attempt itself took time (a connect, the symbols, the first samples): the
        // platform is re-settled at its end, so that the next cycle does not find the samples
        // older than they are.
        let now = now + attempt_started.elapsed();
        let gap = now.saturating_duration_since(since);
        self.stats.reconnects += 1;
        self.stats.without_samples_s += gap.as_secs_f64();
        self.link.fresh = now;
        tracing::warn!(
            "reconnected to the PLC after {:.0} ms; re-synchronised at its commanded lengths",
            gap.as_secs_f64() * 1e3
        );
        self.link.down = None;
        self.resync(now, inputs, gap)?;
        Ok(CycleReport::new(CycleStatus::Resynced))
    }

    /// Refuses a controller whose anchors moved since the start: the model would be wrong.
    pub(super) fn check_geometry(&self, geometry: &ControllerGeometry) -> Result<(), ShadowError> {
        match model::geometry_change(&self.geometry, geometry) {
            None => Err(ShadowError::CableCountChanged {
                before: self.geometry.frame_anchors.len(),
                now: geometry.frame_anchors.len(),
            }),
            Some((cable, moved)) if moved > model::ANCHOR_TOLERANCE => {
                Err(ShadowError::GeometryChanged {
                    cable,
                    moved_mm: moved * 1e3,
                })
            }
            Some(_) => Ok(()),
        }
    }

    /// Puts the platform at rest where `inputs` hold it, re-bases the clocks, takes `inputs`
    /// as the guard's new baseline and marks a gap of `gap` (lockstep: added to the shadow
    /// time; free-running: the wall clock has it).
    pub(super) fn resync(
        &mut self,
        now: Instant,
        inputs: CycleInputs,
        gap: Duration,
    ) -> Result<(), ShadowError> {
        self.sim
            .settle(&Command::Lengths(inputs.commanded_lengths.clone()))?;
        self.link.stall = None;
        self.link.fresh = now;
        let time = self.clock.rebase(now, gap, inputs.cycle);
        self.drive.reset(&inputs.commanded_lengths);
        self.recording.command_moved();
        let line = self.start_line(&inputs, self.clock.arrival(now));
        self.commands = super::commands::Commands::new(
            &self.robot.winch,
            self.config.guard_slack,
            inputs,
            time,
            line,
        );
        self.mark_gap();
        Ok(())
    }
}
