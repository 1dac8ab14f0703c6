//! Free-running: the commanded lengths placed on the PLC's own time line.
//!
//! The PLC publishes a new command once per cycle of its task, but the free-running shadow
//! polls on its own clock: a 2 ms shadow against a 10 ms PLC sees the same command four times
//! and then a jump. Stepping the physics to the wall clock towards whatever was read last
//! makes a staircase of the commands, and the tensions ripple with it.
//!
//! So each new value of the cycle counter n gets a time on the PLC's time line,
//! t(n) = t(n_prev) + (n − n_prev)·P with P the PLC period (the counter's measured rate once
//! known, else the configured period), kept in phase with the earliest arrival: a sample seen
//! before its predicted time moves the line to it, one later than a period and a poll past
//! its prediction (a stalled or restarted PLC) starts the line again. The physics then reads
//! the commands linearly interpolated on that time line one period and one poll late — by then
//! the next sample has arrived, so the commands move as smoothly as in lockstep, where the
//! counter itself is the clock.
//!
//! Samples that came by notification carry the PLC's own time stamp: then the line advances
//! by the stamps' difference, the PLC's time, rather than by a predicted period.

use std::collections::VecDeque;

/// The commands read with the first sight of counter `counter`, at PLC time `time`.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    counter: u32,
    /// The PLC's time stamp (FILETIME, 100 ns), when the sample came by notification.
    stamp: Option<u64>,
    time: f64,
    commands: Vec<f64>,
}

/// Samples on the PLC time line (see the module docs).
#[derive(Debug, Clone, Default)]
pub(super) struct Timeline {
    samples: VecDeque<Sample>,
}

/// Samples kept: far more than the delay needs (two), few enough to cost nothing.
const KEPT: usize = 16;

impl Timeline {
    /// Forgets everything (a resync: the platform re-settled at `commands`).
    pub fn reset(&mut self) {
        self.samples.clear();
    }

    /// A sample read at shadow time `now`: the counter and the commanded lengths. Only the
    /// first sight of each counter value counts (the value the PLC published that cycle).
    /// `stamp`: the PLC's time stamp of a notified sample; `period`: the PLC period, `poll`:
    /// the shadow's own, s.
    pub fn observe(
        &mut self,
        (counter, stamp): (u32, Option<u64>),
        commands: &[f64],
        now: f64,
        period: f64,
        poll: f64,
    ) {
        let time = match self.samples.back() {
            Some(last) if last.counter == counter => return,
            Some(last) => {
                let advanced = i64::from(counter.wrapping_sub(last.counter) as i32);
                let predicted = match (last.stamp, stamp) {
                    (Some(a), Some(b)) if b > a => last.time + (b - a) as f64 * 1e-7,
                    _ => last.time + advanced as f64 * period,
                };
                let lag = now - predicted;
                if advanced <= 0 || lag < 0.0 || lag > period + poll {
                    now
                } else {
                    predicted
                }
            }
            None => now,
        };
        // The oldest sample's vector is reused: nothing is allocated once the line is full.
        let mut kept = if self.samples.len() == KEPT {
            self.samples.pop_front().map(|s| s.commands)
        } else {
            None
        }
        .unwrap_or_default();
        kept.clear();
        kept.extend_from_slice(commands);
        self.samples.push_back(Sample {
            counter,
            stamp,
            time,
            commands: kept,
        });
    }

    /// The commands at PLC time `t`, linearly interpolated between the samples around it;
    /// before the first sample the first, after the last the last (held). `None` before any
    /// sample.
    #[cfg(test)]
    pub fn at(&self, t: f64) -> Option<Vec<f64>> {
        let mut out = Vec::new();
        self.fill(t, &mut out).then_some(out)
    }

    /// [`Timeline::at`] into `out` (its length becomes the commands'); false, and `out`
    /// untouched, before any sample.
    pub fn fill(&self, t: f64, out: &mut Vec<f64>) -> bool {
        let after = self.samples.iter().position(|s| s.time > t);
        let (a, b) = match after {
            None | Some(0) => {
                let held = if after.is_none() {
                    self.samples.back()
                } else {
                    self.samples.front()
                };
                return match held {
                    Some(s) => {
                        out.clone_from(&s.commands);
                        true
                    }
                    None => false,
                };
            }
            Some(k) => (&self.samples[k - 1], &self.samples[k]),
        };
        let w = (t - a.time) / (b.time - a.time);
        out.clear();
        out.extend(
            a.commands
                .iter()
                .zip(&b.commands)
                .map(|(x, y)| x + (y - x) * w),
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: f64 = 0.010;
    const POLL: f64 = 0.002;

    #[test]
    fn a_ramp_seen_at_jittered_polls_comes_out_as_the_ramp() {
        // The PLC publishes c(n) = n mm at t = 10 n ms; the shadow sees each value at its
        // first poll after it, polls every 2 ms with up to 1.9 ms of jitter.
        let mut line = Timeline::default();
        let mut seen = None;
        let mut poll_at = 0.0;
        let mut k = 0u32;
        while poll_at < 1.0 {
            let n = (poll_at / P).floor() as u32;
            if seen != Some(n) {
                line.observe((n, None), &[f64::from(n)], poll_at, P, POLL);
                seen = Some(n);
            }
            k += 1;
            poll_at = f64::from(k) * POLL + 0.0019 * f64::from((k * 7919) % 11) / 10.0;
        }
        // On the line, one period and a poll late, the commands are the ramp t/P exactly:
        // no staircase left.
        for j in 0..200 {
            let t = 0.9 + f64::from(j) * 0.0005;
            let c = line.at(t - P - POLL).expect("samples")[0];
            let phase = line
                .samples
                .front()
                .map_or(0.0, |s| s.time - f64::from(s.counter) * P);
            let ramp = (t - P - POLL - phase) / P;
            assert!((c - ramp).abs() < 1e-9, "t {t}: {c} vs {ramp}");
        }
    }

    #[test]
    fn a_stall_restarts_the_line_and_only_new_counters_count() {
        let mut line = Timeline::default();
        line.observe((1, None), &[1.0], 0.010, P, POLL);
        line.observe((1, None), &[9.0], 0.012, P, POLL);
        line.observe((2, None), &[2.0], 0.021, P, POLL);
        assert_eq!(
            line.at(0.015),
            Some(vec![1.5]),
            "the first sight of 1 and 2"
        );
        // Counter 3 arrives 50 ms late: a new line from where it was seen.
        line.observe((3, None), &[3.0], 0.080, P, POLL);
        assert_eq!(line.at(0.050), Some(vec![2.5]));
        assert_eq!(line.at(1.0), Some(vec![3.0]), "held after the last");
        assert_eq!(line.at(0.0), Some(vec![1.0]), "held before the first");
        line.reset();
        assert_eq!(line.at(0.5), None);
    }

    #[test]
    fn notified_samples_are_placed_by_the_plc_stamps_not_the_period() {
        // The shadow believes 12 ms; the PLC's stamps say 10 ms (100 000 ticks) a cycle, and
        // the samples arrive with jitter: the line follows the stamps.
        let mut line = Timeline::default();
        let t0 = 133_000_000_000_000_000u64;
        for n in 0..5u32 {
            let arrival = 0.010 * f64::from(n) + 0.0013 * f64::from(n % 3);
            let stamp = t0 + 100_000 * u64::from(n);
            line.observe((n, Some(stamp)), &[f64::from(n)], arrival, 0.012, POLL);
        }
        let times: Vec<f64> = line.samples.iter().map(|s| s.time).collect();
        for (k, w) in times.windows(2).enumerate() {
            assert!((w[1] - w[0] - 0.010).abs() < 1e-12, "step {k}: {times:?}");
        }
        // Polled (no stamps), the same arrivals are placed by the 12 ms period.
        let mut polled = Timeline::default();
        polled.observe((0, None), &[0.0], 0.0, 0.012, POLL);
        polled.observe((1, None), &[1.0], 0.0113, 0.012, POLL);
        assert_eq!(
            polled.samples[1].time, 0.0113,
            "seen before its predicted 12 ms"
        );
    }
}
