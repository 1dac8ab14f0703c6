//! The shadow's clock: the time of its physics, and the time the controller is at.
//!
//! Free-running, the controller's time is the wall clock since the origin; in lockstep it is
//! the PLC's cycle counter times the PLC's period (so the clock needs the counter read in the
//! cycle). Each sample gets its place on the commands' time line here ([`Clock::place`]), and
//! the counter values no sample brought are counted as missed. Alongside: the PLC's period, as
//! the notifications' stamps say it or as its counter shows it against the wall clock.

use super::config::CycleTiming;
use super::stats::ShadowStats;
use super::timeline::{Period, Placement};
use std::collections::VecDeque;
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

/// The lower convex hull of (counter, arrival) points of polled samples over the last
/// [`LowerHull::SPAN`] s: a sample is seen between its PLC cycle's start and a poll later, so
/// the samples seen soonest lie on a line whose slope is the PLC's period — the hull's, without
/// the polls' lateness in it (the counter's rate from first to last sample has it, divided by
/// the span: 2 ms over 0.3 s is 0.7 %, a drift the commands' time line would have to follow).
#[derive(Debug, Clone, Default)]
struct LowerHull {
    /// (counter counted from the first point, arrival s), counters increasing.
    points: VecDeque<(f64, f64)>,
    /// The counter of the first point, and the counted offset of the last one.
    origin: Option<(u32, f64)>,
}

impl LowerHull {
    /// How far back the hull reaches, s: the PLC's clock drifts against this machine's by
    /// tens of ppm, the slope follows.
    const SPAN: f64 = 10.0;

    /// A sample of `counter` first seen at `arrival`.
    fn push(&mut self, counter: u32, arrival: f64) {
        let x = match self.origin {
            None => {
                self.origin = Some((counter, 0.0));
                0.0
            }
            Some((last, x)) => {
                let x = x + f64::from(counter.wrapping_sub(last));
                self.origin = Some((counter, x));
                x
            }
        };
        let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| {
            (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
        };
        while let [.., o, a] = self.points.make_contiguous() {
            if cross(*o, *a, (x, arrival)) > 0.0 {
                break;
            }
            self.points.pop_back();
        }
        self.points.push_back((x, arrival));
        while self.points.len() > 3
            && self
                .points
                .get(1)
                .is_some_and(|p| p.1 < arrival - Self::SPAN)
        {
            self.points.pop_front();
        }
    }

    /// The period: the hull's slope between a quarter and three quarters of its span (its
    /// ends are the first and the newest sight, on the hull however late they came), once the
    /// span is at least `counts` cycles.
    fn period(&self, counts: f64) -> Option<f64> {
        let (first, last) = (self.points.front()?.0, self.points.back()?.0);
        let span = last - first;
        if span < counts {
            return None;
        }
        let (x1, x3) = (first + 0.25 * span, first + 0.75 * span);
        Some((self.at(x3)? - self.at(x1)?) / (x3 - x1))
    }

    /// The hull's arrival at counter offset `x`, interpolated between its points.
    fn at(&self, x: f64) -> Option<f64> {
        let k = self.points.iter().position(|p| p.0 >= x)?.max(1);
        let (a, b) = (self.points[k - 1], self.points[k]);
        Some(a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0))
    }
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

/// What a cycle's read brought, for the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Brought {
    /// Samples of a new counter value.
    pub new: usize,
    /// Samples whose values could not be used at all (a NaN or an infinity).
    pub unusable: usize,
}

/// Stamp spans the PLC's period is the median of.
const STAMP_SPANS: usize = 15;

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
    /// The PLC counter of the newest sample.
    counter: u32,
    /// Free-running: the samples' places on the PLC's time line.
    placement: Placement,
    /// Free-running: when the last cycle ran (an overrun is a late one).
    last_call: Option<Instant>,
    /// Where the estimate of the PLC's period runs from.
    probe: Option<PeriodProbe>,
    /// The PLC's period as its stamps or its counter show it, s.
    period_estimate: Option<f64>,
    /// The newest sample's stamp and counter, and the last stamp spans per count, s: the
    /// period the stamps say.
    last_stamp: Option<(u64, u32)>,
    stamp_spans: VecDeque<f64>,
    /// Polled samples' first sights, for the period without the polls' lateness.
    hull: LowerHull,
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
            placement: Placement::default(),
            last_call: None,
            probe: None,
            period_estimate: None,
            last_stamp: None,
            stamp_spans: VecDeque::with_capacity(STAMP_SPANS),
            hull: LowerHull::default(),
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

    /// The shadow time a sample read at `now` came at: the wall clock's free-running, the
    /// physics' in lockstep.
    pub(super) fn arrival(&self, now: Instant) -> f64 {
        match self.timing {
            CycleTiming::Free { .. } => self.origin.time_at(now),
            CycleTiming::Lockstep { .. } => self.time(),
        }
    }

    /// The wall-clock instant of shadow time 0 for the free-running clock.
    pub(super) fn origin(&self) -> Instant {
        self.origin.wall
    }

    /// The PLC counter last exchanged.
    pub(super) fn counter(&self) -> u32 {
        self.counter
    }

    /// The place on the commands' time line of the sample of `counter` (`stamp`: the PLC's, when
    /// it came by notification) that arrived at shadow time `arrival`, s: in lockstep the
    /// physics' time the counter's advance brings (the counter × the PLC period), free-running
    /// its PLC time ([`Placement`]). `None`: the counter has not moved (the same sample again).
    /// Counter values skipped are counted as missed PLC cycles: samples the shadow never had.
    pub(super) fn place(
        &mut self,
        counter: u32,
        stamp: Option<u64>,
        (arrival, configured): (f64, Duration),
        stats: &mut ShadowStats,
    ) -> Option<f64> {
        let delta = counter.wrapping_sub(self.counter);
        if delta == 0 {
            return None;
        }
        stats.missed_plc_cycles += u64::from(delta - 1);
        self.counter = counter;
        match self.timing {
            CycleTiming::Lockstep { plc_period } => {
                self.plc.periods += u64::from(delta);
                Some(self.plc.time(plc_period.as_secs_f64()))
            }
            CycleTiming::Free { .. } => {
                let period = Period {
                    measured: self.period_estimate,
                    configured: configured.as_secs_f64(),
                };
                self.placement.place(counter, stamp, arrival, period)
            }
        }
    }

    /// The sample of the line's start (the start, a resync), arrived at shadow time
    /// `arrival`: free-running PLC time 0, in lockstep the physics' time.
    pub(super) fn start_line(&mut self, counter: u32, stamp: Option<u64>, arrival: f64) -> f64 {
        self.placement.reset();
        self.counter = counter;
        match self.timing {
            CycleTiming::Lockstep { plc_period } => self.plc.time(plc_period.as_secs_f64()),
            CycleTiming::Free { .. } => {
                let period = Period {
                    measured: None,
                    configured: 0.0,
                };
                self.placement
                    .place(counter, stamp, arrival, period)
                    .unwrap_or(0.0)
            }
        }
    }

    /// The time this cycle's physics must reach, after a read that `brought` what it says:
    /// in lockstep the counter's advance (see [`Clock::place`]), free-running the wall clock at
    /// `now`. Counts polls and overruns.
    pub(super) fn tick(&mut self, now: Instant, brought: Brought, stats: &mut ShadowStats) -> Tick {
        let tick = match self.timing {
            CycleTiming::Lockstep { .. } if brought.new == 0 && brought.unusable > 0 => {
                return Tick::Rejected;
            }
            CycleTiming::Lockstep { .. } if brought.new == 0 => {
                stats.polls += 1;
                return Tick::Polled;
            }
            CycleTiming::Lockstep { plc_period } => Tick::Due {
                target: self.plc.time(plc_period.as_secs_f64()),
                plc_cycle: self.counter,
            },
            CycleTiming::Free { period, .. } => {
                if let Some(previous) = self.last_call
                    && now.saturating_duration_since(previous) > period + period / 2
                {
                    stats.overruns += 1;
                }
                Tick::Due {
                    target: self.origin.time_at(now),
                    plc_cycle: self.counter,
                }
            }
        };
        self.last_call = Some(now);
        tick
    }

    /// A sample of a new counter value read at `now`, for the estimate of the PLC's period:
    /// from notified samples' stamps (the median of the last [`STAMP_SPANS`] spans per count,
    /// so that a stall or a step of the PLC's clock between two samples does not count), else
    /// the slope of the polled samples' lower hull (from 0.1 s and four counts on, refined as
    /// it runs).
    pub(super) fn observe(
        &mut self,
        now: Instant,
        counter: u32,
        stamp: Option<u64>,
        stats: &mut ShadowStats,
    ) {
        if let (Some((last, last_counter)), Some(stamp)) = (self.last_stamp, stamp) {
            let counted = counter.wrapping_sub(last_counter);
            if stamp > last && counted > 0 && counted < 1 << 31 {
                if self.stamp_spans.len() == STAMP_SPANS {
                    self.stamp_spans.pop_front();
                }
                self.stamp_spans
                    .push_back((stamp - last) as f64 * 1e-7 / f64::from(counted));
                // A copy on the stack: this runs for every notified sample.
                let mut spans = [0.0; STAMP_SPANS];
                let n = self.stamp_spans.len();
                for (to, &from) in spans.iter_mut().zip(&self.stamp_spans) {
                    *to = from;
                }
                spans[..n].sort_by(f64::total_cmp);
                let estimate = spans[n / 2];
                self.period_estimate = Some(estimate);
                stats.plc_period_estimate = Some(estimate);
            }
        }
        self.last_stamp = stamp.map(|s| (s, counter));
        let probe = *self.probe.get_or_insert(PeriodProbe {
            since: now,
            counter,
        });
        let elapsed = now.saturating_duration_since(probe.since).as_secs_f64();
        let counted = counter.wrapping_sub(probe.counter);
        if stamp.is_none() {
            self.hull.push(counter, self.origin.time_at(now));
        }
        if elapsed >= 0.1 && counted >= 4 {
            let estimate = elapsed / f64::from(counted);
            if stamp.is_none()
                && let Some(hull) = self.hull.period(4.0)
            {
                self.period_estimate = Some(hull);
                stats.plc_period_estimate = Some(hull);
            }
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

    /// The shadow time at `now` after a gap of `gap` in which nothing was stepped
    /// (lockstep: the gap added to the shadow time; free-running: the wall clock's).
    pub(super) fn time_after(&self, now: Instant, gap: Duration) -> f64 {
        match self.timing {
            CycleTiming::Free { .. } => self.origin.time_at(now).max(self.time()),
            CycleTiming::Lockstep { .. } => self.time() + gap.as_secs_f64(),
        }
    }

    /// A resync at `now` with the PLC at `counter`, after a gap of `gap` (lockstep: added to
    /// the shadow time; free-running: the wall clock has it). Returns the new shadow time.
    pub(super) fn rebase(&mut self, now: Instant, gap: Duration, counter: u32) -> f64 {
        let time = self.time_after(now, gap);
        self.set_time(time);
        self.counter = counter;
        self.plc = Counted::at(time);
        self.probe = None;
        self.last_stamp = None;
        self.stamp_spans.clear();
        self.hull = LowerHull::default();
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

    const NEW: Brought = Brought {
        new: 1,
        unusable: 0,
    };
    const NONE: Brought = Brought {
        new: 0,
        unusable: 0,
    };

    #[test]
    fn lockstep_time_is_the_counters_advance_times_the_plc_period() {
        let t0 = Instant::now();
        let mut clock = Clock::new(LOCKSTEP, 1e-3, t0, u32::MAX - 1);
        let mut stats = ShadowStats::default();
        let unusable = Brought {
            new: 0,
            unusable: 1,
        };
        assert_eq!(clock.tick(t0, unusable, &mut stats), Tick::Rejected);
        let ten = Duration::from_millis(10);
        assert_eq!(
            clock.place(u32::MAX - 1, None, (0.0, ten), &mut stats),
            None
        );
        assert_eq!(clock.tick(t0, NONE, &mut stats), Tick::Polled);
        // Through the wrap: 3 cycles on, two of them missed; then one more.
        let line = clock.place(1, None, (0.0, ten), &mut stats).expect("new");
        assert!((line - 0.030).abs() < 1e-15);
        let Tick::Due { target, plc_cycle } = clock.tick(t0, NEW, &mut stats) else {
            panic!("due");
        };
        assert_eq!((plc_cycle, stats.polls, stats.missed_plc_cycles), (1, 1, 2));
        assert!((target - 0.030).abs() < 1e-15);
        assert!((clock.place(2, None, (0.0, ten), &mut stats).expect("new") - 0.040).abs() < 1e-15);
        assert_eq!(stats.missed_plc_cycles, 2, "the next one: none missed");
        // A thousand steps of 1 ms are exactly 1 s, not a sum's drift away.
        (0..1000).for_each(|_| clock.stepped());
        assert_eq!(clock.time(), 1.0);
        assert!(went_back(5, 4) && !went_back(u32::MAX, 0));
    }

    #[test]
    fn the_lower_hull_of_polled_sights_gives_the_period_without_the_polls_lateness() {
        // A 10 ms PLC polled every 2 ms: each counter first seen 0–2 ms into its cycle (a
        // poll's phase), plus up to 3 ms more now and then (a late poll). From first to last
        // sight the rate is off by up to 5 ms over the span; the hull's slope is not.
        let mut hull = LowerHull::default();
        let mut worst: f64 = 0.0;
        for n in 0..300u32 {
            let late =
                0.002 * f64::from((n * 7919) % 97) / 97.0 + if n % 17 == 0 { 0.003 } else { 0.0 };
            hull.push(1000 + n, 0.5 + 0.01 * f64::from(n) + late);
            if n >= 20 {
                let p = hull.period(4.0).expect("a period");
                worst = worst.max((p - 0.01).abs() / 0.01 * f64::from(n) / 20.0);
            }
        }
        // Within 0.3 % at 0.2 s, and falling as the span grows (at 3 s within 0.02 %); the
        // counter's rate from the first sight is off by the first's 5 ms over the span, 2.5 %
        // at 0.2 s.
        assert!(worst < 3e-3, "{worst}");
        assert!(hull.points.len() < 20, "{} points kept", hull.points.len());
    }

    #[test]
    fn the_period_is_the_stamps_at_once_else_the_counters_rate() {
        let t0 = Instant::now();
        let timing = CycleTiming::Free {
            period: Duration::from_millis(2),
            plc_period: Duration::from_millis(10),
        };
        let mut stats = ShadowStats::default();
        let mut clock = Clock::new(timing, 1e-3, t0, 0);
        let stamp = 133_000_000_000_000_000u64;
        // Two stamps 2 ms of PLC time apart (one counter skipped): 1 ms a cycle, at once.
        clock.observe(t0, 1, Some(stamp), &mut stats);
        clock.observe(t0, 3, Some(stamp + 20_000), &mut stats);
        assert_eq!(clock.plc_period_s(Duration::from_millis(10)), 1e-3);
        // Polled: the configured one until 0.1 s and four counts, then the counter's rate.
        let mut clock = Clock::new(timing, 1e-3, t0, 0);
        clock.observe(t0, 100, None, &mut stats);
        clock.observe(t0 + Duration::from_millis(50), 125, None, &mut stats);
        assert_eq!(clock.plc_period_s(Duration::from_millis(10)), 0.010);
        clock.observe(t0 + Duration::from_millis(200), 200, None, &mut stats);
        assert!((clock.plc_period_s(Duration::from_millis(10)) - 0.002).abs() < 1e-12);
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
            clock.tick(at(2), NONE, &mut stats),
            Tick::Due {
                target: 0.002,
                plc_cycle: 7
            }
        );
        clock.tick(at(4), NEW, &mut stats);
        assert_eq!(stats.overruns, 0, "on time");
        clock.tick(at(8), NONE, &mut stats);
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
