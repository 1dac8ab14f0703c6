//! The shadow's clock: the time of its physics, and the time the controller is at.
//!
//! Free-running, the controller's time is the wall clock since the origin; in lockstep it is
//! the PLC's cycle counter times the PLC's period (so the clock needs the counter read in the
//! cycle). Alongside: the PLC's period as its counter shows it against the wall clock.

use super::config::CycleTiming;
use super::stats::ShadowStats;
use crate::link::CycleInputs;
use std::time::{Duration, Instant};

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

/// Where a cycle's physics has to go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Tick {
    /// Step the physics to shadow time `target`; the outputs answer PLC cycle `plc_cycle`.
    Due { target: f64, plc_cycle: u32 },
    /// Lockstep: the counter has not moved; nothing to do.
    Polled,
    /// Lockstep: the sample could not be used, so it gives no time.
    Rejected,
}

pub(super) struct Clock {
    timing: CycleTiming,
    /// The physics' fixed step, s.
    dt: f64,
    /// Shadow time of the physics state: steps of dt since a base time.
    physics: Counted,
    /// Free-running: the wall instant and the shadow time of the origin.
    origin: Origin,
    /// Lockstep: PLC cycles counted since the last re-base.
    plc: Counted,
    /// The PLC counter last exchanged.
    counter: u32,
    /// Free-running: when the last cycle ran (an overrun is a late one).
    last_call: Option<Instant>,
    /// Where the estimate of the PLC's period runs from.
    probe: Option<PeriodProbe>,
    /// The PLC's period as its counter shows it, s.
    period_estimate: Option<f64>,
    period_warned: bool,
}

impl Clock {
    /// Shadow time 0 at wall instant `now`, the PLC at `counter`.
    pub(super) fn new(timing: CycleTiming, dt: f64, now: Instant, counter: u32) -> Clock {
        Clock {
            timing,
            dt,
            physics: Counted::at(0.0),
            origin: Origin {
                wall: now,
                time: 0.0,
            },
            plc: Counted::at(0.0),
            counter,
            last_call: None,
            probe: None,
            period_estimate: None,
            period_warned: false,
        }
    }

    /// Shadow time of the physics state, s.
    pub(super) fn time(&self) -> f64 {
        self.physics.time(self.dt)
    }

    /// Jumps the shadow time to `t` (skips and gaps).
    pub(super) fn set_time(&mut self, t: f64) {
        self.physics = Counted::at(t);
    }

    /// One physics step taken.
    pub(super) fn stepped(&mut self) {
        self.physics.periods += 1;
    }

    /// The wall-clock instant of shadow time 0 for the free-running clock.
    pub(super) fn origin(&self) -> Instant {
        self.origin.wall
    }

    /// The PLC counter last exchanged.
    pub(super) fn counter(&self) -> u32 {
        self.counter
    }

    /// The time this cycle's physics must reach: in lockstep from the advance of the counter
    /// read (`counter`; `None`: no usable sample), free-running from the wall clock at `now`.
    /// Counts polls, missed PLC cycles and overruns.
    pub(super) fn tick(
        &mut self,
        now: Instant,
        counter: Option<u32>,
        stats: &mut ShadowStats,
    ) -> Tick {
        let tick = match (self.timing, counter) {
            (CycleTiming::Lockstep { .. }, None) => return Tick::Rejected,
            (CycleTiming::Lockstep { plc_period }, Some(counter)) => {
                let delta = counter.wrapping_sub(self.counter);
                if delta == 0 {
                    stats.polls += 1;
                    return Tick::Polled;
                }
                stats.missed_plc_cycles += u64::from(delta - 1);
                self.plc.periods += u64::from(delta);
                Tick::Due {
                    target: self.plc.time(plc_period.as_secs_f64()),
                    plc_cycle: counter,
                }
            }
            (CycleTiming::Free { period, .. }, _) => {
                if let Some(previous) = self.last_call
                    && now.saturating_duration_since(previous) > period + period / 2
                {
                    stats.overruns += 1;
                }
                Tick::Due {
                    target: self.origin.time_at(now),
                    plc_cycle: counter.unwrap_or(self.counter),
                }
            }
        };
        self.last_call = Some(now);
        tick
    }

    /// A sample read at `now`: on a new PLC cycle, the PLC's reaction diagnostic (counted in
    /// `stats`) and the estimate of its period.
    pub(super) fn observe(&mut self, now: Instant, inputs: &CycleInputs, stats: &mut ShadowStats) {
        if inputs.cycle == self.counter {
            return;
        }
        if let Some(r) = inputs.reaction_cycles.filter(|&r| r > 0) {
            stats.add_reaction(r);
        }
        let probe = *self.probe.get_or_insert(PeriodProbe {
            since: now,
            counter: inputs.cycle,
        });
        let elapsed = now.saturating_duration_since(probe.since).as_secs_f64();
        let counted = inputs.cycle.wrapping_sub(probe.counter);
        if elapsed >= 1.0 && counted > 0 {
            let estimate = elapsed / f64::from(counted);
            self.period_estimate = Some(estimate);
            stats.plc_period_estimate = Some(estimate);
            if let CycleTiming::Lockstep { plc_period } = self.timing {
                let given = plc_period.as_secs_f64();
                if elapsed >= 2.0 && !self.period_warned && (estimate / given - 1.0).abs() > 0.25 {
                    self.period_warned = true;
                    tracing::warn!(
                        "the PLC's counter advances every {:.2} ms but the PLC period is set to {:.2} ms: the shadow runs at the wrong speed (--plc-period)",
                        estimate * 1e3,
                        given * 1e3
                    );
                }
            }
        }
    }

    /// The PLC's period, s: the counter's measured rate once known, else `configured`.
    pub(super) fn plc_period_s(&self, configured: Duration) -> f64 {
        self.period_estimate.unwrap_or(configured.as_secs_f64())
    }

    /// The cycle's exchange answered PLC cycle `plc_cycle`.
    pub(super) fn exchanged(&mut self, plc_cycle: u32) {
        self.counter = plc_cycle;
    }

    /// A resync at `now` with the PLC at `counter`, after a gap of `gap` (lockstep: added to
    /// the shadow time; free-running: the wall clock has it). Returns the new shadow time.
    pub(super) fn rebase(&mut self, now: Instant, gap: Duration, counter: u32) -> f64 {
        let time = match self.timing {
            CycleTiming::Free { .. } => self.origin.time_at(now).max(self.time()),
            CycleTiming::Lockstep { .. } => self.time() + gap.as_secs_f64(),
        };
        self.set_time(time);
        self.counter = counter;
        self.plc = Counted::at(time);
        self.probe = None;
        self.last_call = None;
        time
    }
}

/// Whether the counter went back (a PLC restart), not forward through a wrap.
pub(super) fn went_back(previous: u32, now: u32) -> bool {
    (now.wrapping_sub(previous) as i32) < 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCKSTEP: CycleTiming = CycleTiming::Lockstep {
        plc_period: Duration::from_millis(10),
    };

    #[test]
    fn lockstep_time_is_the_counters_advance_times_the_plc_period() {
        let t0 = Instant::now();
        let mut clock = Clock::new(LOCKSTEP, 1e-3, t0, u32::MAX - 1);
        let mut stats = ShadowStats::default();
        assert_eq!(clock.tick(t0, None, &mut stats), Tick::Rejected);
        assert_eq!(clock.tick(t0, Some(u32::MAX - 1), &mut stats), Tick::Polled);
        // Through the wrap: 3 cycles on, two of them missed.
        let Tick::Due { target, plc_cycle } = clock.tick(t0, Some(1), &mut stats) else {
            panic!("due");
        };
        assert_eq!((plc_cycle, stats.polls, stats.missed_plc_cycles), (1, 1, 2));
        assert!((target - 0.030).abs() < 1e-15);
        clock.exchanged(1);
        // A thousand steps of 1 ms are exactly 1 s, not a sum's drift away.
        (0..1000).for_each(|_| clock.stepped());
        assert_eq!(clock.time(), 1.0);
        assert!(went_back(5, 4) && !went_back(u32::MAX, 0));
    }

    #[test]
    fn free_running_time_is_the_wall_clock_and_a_late_cycle_an_overrun() {
        let t0 = Instant::now();
        let timing = CycleTiming::Free {
            period: Duration::from_millis(2),
            plc_period: Duration::from_millis(10),
        };
        let mut clock = Clock::new(timing, 1e-3, t0, 7);
        let mut stats = ShadowStats::default();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        assert_eq!(
            clock.tick(at(2), None, &mut stats),
            Tick::Due {
                target: 0.002,
                plc_cycle: 7
            }
        );
        clock.tick(at(4), Some(8), &mut stats);
        assert_eq!(stats.overruns, 0, "on time");
        clock.tick(at(8), Some(8), &mut stats);
        assert_eq!(
            stats.overruns, 1,
            "4 ms after the last: more than 1.5 periods"
        );
        // A resync re-bases on the wall clock, never back in time.
        clock.set_time(0.5);
        assert_eq!(clock.rebase(at(10), Duration::ZERO, 3), 0.5);
        assert_eq!(clock.counter(), 3);
    }
}
