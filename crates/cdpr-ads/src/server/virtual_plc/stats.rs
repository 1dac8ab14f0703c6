//! What the virtual PLC measures: its cycles, and the shadow's reaction time in PLC cycles.

/// Reaction-time figures, in PLC cycles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReactionStats {
    /// counts[r] = how many echoes arrived r cycles after the cycle they answer (the last slot
    /// holds everything ≥ its index).
    pub counts: Vec<u64>,
    pub last: Option<u32>,
    pub max: Option<u32>,
    /// Echoes of a cycle the PLC had not run yet when it read them (a client writing the
    /// cycle counter ahead): no reaction, so not in the counts.
    pub ahead: u64,
}

impl ReactionStats {
    const SLOTS: usize = 64;

    pub(super) fn record(&mut self, cycles: u32) {
        if self.counts.is_empty() {
            self.counts = vec![0; Self::SLOTS];
        }
        let slot = (cycles as usize).min(Self::SLOTS - 1);
        self.counts[slot] += 1;
        self.last = Some(cycles);
        self.max = Some(self.max.map_or(cycles, |m| m.max(cycles)));
    }

    pub fn samples(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The q-quantile (0…1) of the recorded reactions.
    pub fn quantile(&self, q: f64) -> Option<u32> {
        let n = self.samples();
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (r, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(r as u32);
            }
        }
        None
    }
}

/// What the PLC has seen so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlcStats {
    pub plc_cycles: u32,
    pub nc_ticks: u64,
    /// NC ticks the real-time loop started late by more than one NC period.
    pub overruns: u64,
    /// PLC cycles that started more than one task period late (run late, never skipped).
    pub late_cycles: u64,
    pub reaction: ReactionStats,
    /// Seed 003's figure: PLC cycles from the first commanded length change to the first
    /// change of the shadow's written-back lengths (None until both happened).
    pub motion_delay_cycles: Option<u32>,
    /// The trajectory has been played to its end.
    pub finished: bool,
    /// A PLC simulating drives: what the emulated axes' monitor saw.
    pub axes: Option<super::drives::AxisMonitor>,
}
