//! When the link or the PLC goes away: offline with back-off, reconnect, and the resync that
//! puts the platform at rest where the new commands hold it (a gap in the record).

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

/// The link as the shadow sees it: up, or down with a back-off; and the controller's
/// re-resolutions already accounted for.
pub(super) struct LinkState {
    down: Option<Outage>,
    seen_re_resolves: u64,
}

impl LinkState {
    /// Up, the controller having re-resolved its symbols `re_resolves` times so far.
    pub(super) fn up(re_resolves: u64) -> LinkState {
        LinkState {
            down: None,
            seen_re_resolves: re_resolves,
        }
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
        tracing::warn!("link to the PLC lost ({e}); reconnecting with back-off");
        self.link.down = Some(Outage {
            since: now,
            next_attempt,
            backoff,
        });
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
        let attempt = self.controller.reconnect().and_then(|()| {
            let geometry = self.controller.read_geometry()?;
            let inputs = self.controller.read_cycle()?;
            Ok((geometry, inputs))
        });
        let (geometry, inputs) = match attempt {
            Ok(v) => v,
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
        let gap = now.saturating_duration_since(since);
        self.stats.reconnects += 1;
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
