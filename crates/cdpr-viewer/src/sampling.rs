//! How often the viewer samples a run for its trails and plots: one rule for a played run
//! ([`crate::playback`]) and a live shadow ([`crate::live`]), which both read it from here
//! (rather than one of them from the other).

/// Trail and plot samples are taken every this many steps (10 ms at dt = 1 ms).
pub const SAMPLE_EVERY: u64 = 10;
/// Plot window, samples (10 s).
pub const PLOT_SAMPLES: usize = 1000;
/// Longest trail, samples (100 s: a whole seed 000 loop at 0.1 m/s fits).
pub const TRAIL_SAMPLES: usize = 10_000;
