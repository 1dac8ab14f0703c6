//! What a shadow has done so far: counts, and cycle-time histograms with bounded memory (a
//! shadow may run for days).

use crate::link::Exchange;
use cdpr_core::run::prediction::{PredictionError, PredictionTally};
use serde::Serialize;

/// Durations in 1 µs buckets up to [`Histogram::RANGE_US`], the exact maximum beyond: p50/p99
/// to the microsecond in 160 kB however long the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    counts: Vec<u64>,
    /// Samples at or above the range.
    overflow: u64,
    samples: u64,
    max_s: f64,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram {
            counts: vec![0; Histogram::RANGE_US],
            overflow: 0,
            samples: 0,
            max_s: 0.0,
        }
    }
}

impl Histogram {
    /// 20 ms: ten 2 ms cycles.
    pub const RANGE_US: usize = 20_000;

    pub fn add(&mut self, seconds: f64) {
        let s = if seconds.is_finite() {
            seconds.max(0.0)
        } else {
            0.0
        };
        let us = (s * 1e6) as usize;
        match self.counts.get_mut(us) {
            Some(c) => *c += 1,
            None => self.overflow += 1,
        }
        self.samples += 1;
        self.max_s = self.max_s.max(s);
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Largest sample, s (0 when empty).
    pub fn max(&self) -> f64 {
        self.max_s
    }

    /// The q-quantile (0…1), s: the upper edge of its microsecond bucket; the maximum when it
    /// falls beyond the range. None when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.samples == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.samples as f64).ceil() as u64).clamp(1, self.samples);
        let mut seen = 0;
        for (us, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(((us + 1) as f64 * 1e-6).min(self.max_s));
            }
        }
        Some(self.max_s)
    }
}

/// Counts of a running shadow.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShadowStats {
    /// Exchanges: read, physics, write.
    pub cycles: u64,
    /// Lockstep reads that found the PLC's counter unchanged (nothing to do).
    pub polls: u64,
    /// Physics steps taken.
    pub steps: u64,
    /// Samples refused (a NaN/infinite value or a length jump beyond the winch limits); the
    /// last good command was held each time.
    pub rejected: u64,
    /// Successful reconnects after the link was lost.
    pub reconnects: u64,
    /// Times the controller's symbols were re-resolved on a live link because the PLC had
    /// invalidated their handles (an online change or a re-download); each is also a gap.
    pub re_resolves: u64,
    /// Times the shadow re-synchronised (reconnect, PLC restart, physics reset, symbols
    /// re-resolved, samples again after a stall) or ended without its PLC: each is a gap in
    /// the record (one row with `gap = 1`).
    pub gaps: u64,
    /// Stretches on a live link without a new sample for longer than the stall limit (a
    /// stopped task, a runtime STOP, notifications that stalled): nothing was stepped or
    /// recorded in them.
    pub stalls: u64,
    /// Of those, the ones the PLC said were a runtime STOP (ADS ReadState).
    pub plc_stops: u64,
    /// Time without samples — offline or stalled, to the resync or the end —, s.
    pub without_samples_s: f64,
    /// Free-running cycles that started more than 1.5 `--cycle` periods after the one before
    /// (polls or notifications may run them more often: this counts the shadow falling behind
    /// its own schedule, not its wake-ups).
    pub overruns: u64,
    /// Physics steps skipped because the shadow fell further behind than it may catch up.
    pub skipped_steps: u64,
    /// Counter values no sample brought: PLC cycles whose commands the shadow never had
    /// (between two polls, or notifications lost). A sample that came late is not missed.
    pub missed_plc_cycles: u64,
    /// Samples of new counter values taken, and the most one cycle took (a backlog would
    /// show here: each cycle takes every sample that has come).
    pub samples: u64,
    pub most_samples: u64,
    /// Samples that came after the physics had read into the part of the curve they shape (the
    /// command went on along its slope meanwhile, and was blended into the new line), and the
    /// furthest it had read into it, s.
    pub late_samples: u64,
    pub late_max_s: f64,
    /// Times the physics blew up and was re-settled at the current command.
    pub physics_resets: u64,
    /// Exchanges at whose pose something interfered (see [`super::ShadowConfig::clearance`]).
    pub interference_cycles: u64,
    /// The first of them: shadow time, s, and what interfered then.
    pub first_interference: Option<(f64, Vec<String>)>,
    /// Read + physics + write of each exchange, s.
    pub cycle: Histogram,
    /// The ADS part alone (sum read + sum write), s.
    pub io: Histogram,
    /// The physics part alone, s.
    pub physics: Histogram,
    /// reaction[r]: echoes the PLC took r cycles after the cycle they answer, as its
    /// `nReactionCycles` diagnostic says (counted once per echo, as the PLC counts them; last
    /// slot: ≥ 63).
    pub reaction: Vec<u64>,
    /// PLC task period estimated from the cycle counter against the clock, s.
    pub plc_period_estimate: Option<f64>,
    /// Robots with drives: each drive's torque, step by step (empty otherwise).
    pub drives: cdpr_core::run::digest::DriveTally,
    /// The shadow's motor torques and payouts against the drives' actual ones, sample by
    /// sample, when the controller gives them (`[plc] actual_torques`, `actual_lengths`).
    pub torque_prediction: PredictionTally,
    pub length_prediction: PredictionTally,
}

impl ShadowStats {
    const REACTION_SLOTS: usize = 64;

    pub fn add_reaction(&mut self, cycles: u32) {
        if self.reaction.is_empty() {
            self.reaction = vec![0; Self::REACTION_SLOTS];
        }
        let slot = (cycles as usize).min(Self::REACTION_SLOTS - 1);
        self.reaction[slot] += 1;
    }

    pub fn reaction_samples(&self) -> u64 {
        self.reaction.iter().sum()
    }

    /// The q-quantile of the reported reaction times, PLC cycles.
    pub fn reaction_quantile(&self, q: f64) -> Option<u32> {
        let n = self.reaction_samples();
        if n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (r, &c) in self.reaction.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(r as u32);
            }
        }
        None
    }

    pub fn reaction_max(&self) -> Option<u32> {
        self.reaction.iter().rposition(|&c| c > 0).map(|r| r as u32)
    }
}

/// The statistics as `cdpr shadow --json` prints them (seconds, PLC cycles).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub cycles: u64,
    pub cycle_p50_s: Option<f64>,
    pub cycle_p99_s: Option<f64>,
    pub cycle_max_s: f64,
    pub io_p50_s: Option<f64>,
    pub io_p99_s: Option<f64>,
    pub physics_p50_s: Option<f64>,
    pub physics_p99_s: Option<f64>,
    pub rejected: u64,
    pub reconnects: u64,
    /// Symbols re-resolved on a live link after the PLC invalidated their handles.
    pub re_resolves: u64,
    pub gaps: u64,
    /// Stretches without a new sample on a live link, and how many of them the PLC said were
    /// a runtime STOP.
    pub stalls: u64,
    pub plc_stops: u64,
    /// Time without samples (offline or stalled), s.
    pub without_samples_s: f64,
    /// How the cycle's inputs travel over ADS on the current connection (`notify`,
    /// `sum-handle`, `sum-address`, `single`); null in-process or before the first exchange.
    pub exchange: Option<Exchange>,
    /// Median of the PLC's reported reaction time, PLC cycles (seed 003: 11–18 through its
    /// gateway, 2 on the real drives).
    pub reaction_cycles: Option<u32>,
    pub reaction_p99_cycles: Option<u32>,
    pub reaction_max_cycles: Option<u32>,
    pub reaction_samples: u64,
    pub polls: u64,
    pub steps: u64,
    pub overruns: u64,
    pub skipped_steps: u64,
    pub missed_plc_cycles: u64,
    /// Samples of new counter values taken, and the most one cycle took.
    pub samples: u64,
    pub samples_per_cycle_max: u64,
    /// How long the commands the physics follows lag the PLC's, s: free-running two PLC
    /// periods and one shadow cycle, the cycle counted as at least 2 ms (the segment read is final by then: the knot
    /// after its end has come); lockstep 0 (the physics' time is the PLC's).
    pub command_latency_s: f64,
    /// Samples that came after the physics had read into the part of the curve they shape
    /// (free-running past the sample two before them, lockstep past the one before): the
    /// command went on along its slope, then was blended into the line through the new sample.
    pub late_samples: u64,
    /// The furthest the physics had read into that part when such a sample came, s.
    pub late_max_s: f64,
    /// How the thread running the cycles was scheduled (`real-time (SCHED_FIFO 40)`, or
    /// `normal priority (why)`); null before the loop ran.
    pub scheduling: Option<String>,
    pub physics_resets: u64,
    pub plc_period_estimate_s: Option<f64>,
    /// Exchanges at whose pose something interfered.
    pub interference_cycles: u64,
    /// What interferes at the last exchange's pose: `cable upper2 – obstacle crate: 4.0 mm`
    /// (empty: nothing, or not checked).
    pub interference: Vec<String>,
    /// When something first interfered, s of shadow time (null: never, or not checked), and
    /// what did.
    pub first_interference_s: Option<f64>,
    pub first_interference: Vec<String>,
    /// Robots with drives: per drive the peak and RMS torque of the shadow's physics and the
    /// time at its limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drives: Vec<cdpr_core::run::digest::DriveLoad>,
    /// When the controller gives its drives' actual torques: per drive the shadow's
    /// prediction error (RMS, max, N·m and % of rated) and the lag that best aligns the two.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub torque_prediction: Vec<PredictionError>,
    /// When it gives their actual positions: the same for the payouts, m.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub length_prediction: Vec<PredictionError>,
}

impl ShadowStats {
    pub fn summary(&self) -> Summary {
        Summary {
            cycles: self.cycles,
            cycle_p50_s: self.cycle.quantile(0.5),
            cycle_p99_s: self.cycle.quantile(0.99),
            cycle_max_s: self.cycle.max(),
            io_p50_s: self.io.quantile(0.5),
            io_p99_s: self.io.quantile(0.99),
            physics_p50_s: self.physics.quantile(0.5),
            physics_p99_s: self.physics.quantile(0.99),
            rejected: self.rejected,
            reconnects: self.reconnects,
            re_resolves: self.re_resolves,
            gaps: self.gaps,
            stalls: self.stalls,
            plc_stops: self.plc_stops,
            without_samples_s: self.without_samples_s,
            exchange: None,
            reaction_cycles: self.reaction_quantile(0.5),
            reaction_p99_cycles: self.reaction_quantile(0.99),
            reaction_max_cycles: self.reaction_max(),
            reaction_samples: self.reaction_samples(),
            polls: self.polls,
            steps: self.steps,
            overruns: self.overruns,
            skipped_steps: self.skipped_steps,
            missed_plc_cycles: self.missed_plc_cycles,
            samples: self.samples,
            samples_per_cycle_max: self.most_samples,
            command_latency_s: 0.0,
            late_samples: self.late_samples,
            late_max_s: self.late_max_s,
            scheduling: None,
            physics_resets: self.physics_resets,
            plc_period_estimate_s: self.plc_period_estimate,
            interference_cycles: self.interference_cycles,
            interference: Vec::new(),
            first_interference_s: self.first_interference.as_ref().map(|f| f.0),
            first_interference: self
                .first_interference
                .as_ref()
                .map(|f| f.1.clone())
                .unwrap_or_default(),
            drives: self.drives.loads(),
            torque_prediction: self.torque_prediction.errors(),
            length_prediction: self.length_prediction.errors(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_match_sorted_samples() {
        // 1000 samples 1…1000 µs (+0.5 µs): p50 is the 500th, p99 the 990th.
        let mut h = Histogram::default();
        for k in (1..=1000).rev() {
            h.add((k as f64 + 0.5) * 1e-6);
        }
        assert_eq!(h.samples(), 1000);
        let q = |p: f64| (h.quantile(p).expect("samples") * 1e6).round() as u64;
        assert_eq!(q(0.5), 501, "bucket [500, 501) µs, upper edge");
        assert_eq!(q(0.99), 991);
        assert!((h.max() - 1000.5e-6).abs() < 1e-15);
        assert_eq!(Histogram::default().quantile(0.5), None);
    }

    #[test]
    fn histogram_beyond_its_range_reports_the_maximum() {
        let mut h = Histogram::default();
        h.add(0.001);
        h.add(0.5);
        h.add(f64::NAN);
        assert_eq!(h.quantile(1.0), Some(0.5));
        assert_eq!(
            h.quantile(0.5),
            Some(0.001001),
            "1 ms falls in [1000, 1001) µs"
        );
        assert_eq!(h.quantile(0.1), Some(1e-6), "the NaN counted as 0");
    }

    #[test]
    fn reaction_quantiles() {
        let mut s = ShadowStats::default();
        assert_eq!(s.reaction_quantile(0.5), None);
        for r in [1, 1, 1, 2, 70] {
            s.add_reaction(r);
        }
        assert_eq!(s.reaction_quantile(0.5), Some(1));
        assert_eq!(s.reaction_quantile(0.99), Some(63));
        assert_eq!(s.reaction_max(), Some(63));
        assert_eq!(s.summary().reaction_samples, 5);
    }
}
