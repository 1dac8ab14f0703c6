//! Tracking metrics: how closely an actual trajectory follows a reference (seed 000, Table 1;
//! seed 004's NRMSE).
//!
//! [`compare`] (1) keeps the reference samples inside the actual's time span, (2) resamples
//! the actual onto those instants by linear interpolation (seed 000 does so with the shadow's
//! 50 ms samples against the 2 ms log), (3) finds the lag maximising the normalised cross-
//! correlation of the mean-removed x, y, z channels (see [`lag`]; actual assumed behind,
//! searched up to `max_lag_s`) and
//! removes it (pairs referenceᵢ with actualᵢ₊ₖ) unless told not to, then (4) computes per-axis
//! RMS, 3D RMS and maximum, discrete Fréchet distance and NRMSE, in total and per segment
//! (by the reference's `segment` tags). Positions only; metres.

mod frechet;
mod signal;

pub use frechet::{FrechetEstimate, Point, frechet, frechet_within};
pub use signal::{ErrorStats, NRMSE_MIN_SPREAD, error_stats, lag, resample};

use crate::options::{Group, Kind, OptionSpec, flag, number};
use crate::trajectory::Trajectory;
use serde::Serialize;

crate::request! {
    /// What `cdpr compare` (and `report`, Python's `cdpr.compare`) is asked: which columns of
    /// the files, and how the lag is treated.
    #[derive(Debug, Clone, PartialEq)]
    pub struct CompareRequest, table OPTIONS;
    /// The suffix of the reference's pose columns (`_cmd`: x_cmd, y_cmd, …).
    reference_suffix: String = String::new(),
        OptionSpec::new(Group::Command, Kind::Name, "SUFFIX",
            "read the reference's pose columns with this suffix (`_cmd`: x_cmd, y_cmd, …)")
            .flag("reference-columns");
    /// The suffix of the actual's pose columns.
    actual_suffix: String = String::new(),
        OptionSpec::new(Group::Command, Kind::Name, "SUFFIX",
            "read the actual's pose columns with this suffix").flag("actual-columns");
    /// Remove the lag found by cross-correlation before computing the errors.
    remove_lag: bool = true,
        flag(Group::Command, "keep the lag: compare sample by sample without shifting the \
            actual back").flag("no-lag");
    /// The largest lag the cross-correlation searches, s.
    max_lag: f64 = 1.0,
        number(Group::Command, "s", 0.0, 60.0, "S", "largest lag searched by the cross-correlation");
}

impl CompareRequest {
    /// The comparison's settings.
    pub fn options(&self) -> CompareOptions {
        CompareOptions {
            remove_lag: self.remove_lag,
            max_lag_s: self.max_lag,
        }
    }
}

/// Why two trajectories could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("the {0} trajectory has no samples")]
    Empty(&'static str),
    #[error(
        "the reference (t = {reference_start} … {reference_end} s) and the actual trajectory (t = {actual_start} … {actual_end} s) do not overlap in time"
    )]
    NoOverlap {
        reference_start: f64,
        reference_end: f64,
        actual_start: f64,
        actual_end: f64,
    },
    #[error(
        "{name} {0}: the lag search bound must be a non-negative number of seconds",
        name = crate::options::Name("max_lag")
    )]
    MaxLag(f64),
    #[error(
        "only {0} reference samples fall inside the actual trajectory's time span (after removing the lag); at least 2 are needed"
    )]
    TooShort(usize),
}

/// Options of [`compare`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareOptions {
    /// Remove the lag found by cross-correlation before computing the errors (default true).
    pub remove_lag: bool,
    /// Largest lag searched, s (default 1 s: seed 000 found 70 ms, seed 003 up to 18 PLC
    /// cycles). Also capped at half the compared samples.
    pub max_lag_s: f64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            remove_lag: true,
            max_lag_s: 1.0,
        }
    }
}

/// The metrics of one set of paired samples (all positions, metres).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Number of sample pairs.
    pub samples: usize,
    /// RMS error per axis [x, y, z].
    pub rms: [f64; 3],
    /// √(mean |e|²) of the 3D error e.
    pub rms_3d: f64,
    /// Largest |e|.
    pub max_3d: f64,
    /// Discrete Fréchet distance of the two 3D paths.
    pub frechet: f64,
    /// The full paths' discrete Fréchet distance lies within ±this of `frechet` (0: exact;
    /// above [`FRECHET_CELLS_PER_SAMPLE`] the paths are thinned, see [`frechet_within`]).
    pub frechet_tolerance: f64,
    /// Seed 004's NRMSE per axis (see `nrmse_definition`); null where the reference is constant.
    pub nrmse: [Option<f64>; 3],
}

/// One segment's metrics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentMetrics {
    pub name: String,
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// The result of [`compare`]; its JSON form is `cdpr compare --json`'s output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Unit of every distance below.
    pub units: &'static str,
    pub reference_samples: usize,
    pub actual_samples: usize,
    /// Reference samples left out because they lie outside the actual's time span.
    pub reference_outside_actual: usize,
    /// Lag of the actual behind the reference, in reference samples and seconds.
    pub lag_samples: usize,
    pub lag_s: f64,
    /// Whether the lag was removed before the error metrics.
    pub lag_removed: bool,
    /// Lag search bound used, s.
    pub max_lag_s: f64,
    #[serde(flatten)]
    pub total: Metrics,
    pub nrmse_definition: &'static str,
    /// Per segment of the reference, in order of first appearance (empty without tags).
    pub segments: Vec<SegmentMetrics>,
}

/// Text of the NRMSE definition carried in the JSON output.
pub const NRMSE_DEFINITION: &str = "per axis 1 - ||x_ref - x|| / ||x_ref - mean(x_ref)|| \
    (MATLAB goodnessOfFit 'NRMSE', as in seed 004): 1 is a perfect fit, the range is -inf..1; \
    null where the reference channel is constant (RMS spread below 1 nm)";

/// Reference and actual positions paired sample by sample after resampling and lag removal.
#[derive(Debug, Clone, PartialEq)]
pub struct Alignment {
    /// Reference times of the pairs, s.
    pub t: Vec<f64>,
    pub reference: Vec<Point>,
    /// Actual positions at the paired instants (t + lag).
    pub actual: Vec<Point>,
    /// Reference segment index of each pair (into `segment_names`).
    pub segment: Vec<Option<usize>>,
    pub segment_names: Vec<String>,
    pub lag_samples: usize,
    pub lag_s: f64,
    /// Reference samples outside the actual's time span.
    pub outside: usize,
}

/// A trajectory's positions as [`compare_tracks`] reads them: times (increasing), points,
/// segment tags (indices into `segment_names`; may be empty for an actual trajectory).
#[derive(Debug, Clone, Copy)]
pub struct Track<'a> {
    pub t: &'a [f64],
    pub points: &'a [Point],
    pub segment: &'a [Option<usize>],
    pub segment_names: &'a [String],
}

/// Times, positions and segment tags of a trajectory.
pub fn positions(trajectory: &Trajectory) -> (Vec<f64>, Vec<Point>, Vec<Option<usize>>) {
    let n = trajectory.samples.len();
    let (mut t, mut p, mut seg) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for s in &trajectory.samples {
        let q = s.pose.position;
        t.push(s.t);
        p.push([q.x, q.y, q.z]);
        seg.push(s.segment);
    }
    (t, p, seg)
}

/// Resamples the actual onto the reference instants and pairs them with the given lag
/// (`None`: found by cross-correlation within `max_lag_s`).
pub fn align(
    reference: &Trajectory,
    actual: &Trajectory,
    lag_samples: Option<usize>,
    max_lag_s: f64,
) -> Result<Alignment, MetricsError> {
    with_tracks(reference, actual, |r, a| {
        align_tracks(r, a, lag_samples, max_lag_s)
    })
}

/// Calls `f` with the position tracks of `reference` (with its segments) and `actual`.
fn with_tracks<T>(
    reference: &Trajectory,
    actual: &Trajectory,
    f: impl FnOnce(&Track, &Track) -> T,
) -> T {
    let (t_ref, p_ref, s_ref) = positions(reference);
    let (t_act, p_act, _) = positions(actual);
    f(
        &Track {
            t: &t_ref,
            points: &p_ref,
            segment: &s_ref,
            segment_names: &reference.segments,
        },
        &Track {
            t: &t_act,
            points: &p_act,
            segment: &[],
            segment_names: &[],
        },
    )
}

/// [`align`] on tracks.
pub fn align_tracks(
    reference: &Track,
    actual: &Track,
    lag_samples: Option<usize>,
    max_lag_s: f64,
) -> Result<Alignment, MetricsError> {
    if !(max_lag_s.is_finite() && max_lag_s >= 0.0) {
        return Err(MetricsError::MaxLag(max_lag_s));
    }
    let (t_ref, p_ref) = (reference.t, reference.points);
    let (t_act, p_act) = (actual.t, actual.points);
    let (Some(&a0), Some(&a1)) = (t_act.first(), t_act.last()) else {
        return Err(MetricsError::Empty("actual"));
    };
    let (Some(&r0), Some(&r1)) = (t_ref.first(), t_ref.last()) else {
        return Err(MetricsError::Empty("reference"));
    };
    // Tolerance for logs whose clocks differ by rounding.
    let eps = 1e-9 * (1.0 + a1.abs());
    let first = t_ref.partition_point(|&t| t < a0 - eps);
    let end = t_ref.partition_point(|&t| t <= a1 + eps);
    if first >= end {
        return Err(MetricsError::NoOverlap {
            reference_start: r0,
            reference_end: r1,
            actual_start: a0,
            actual_end: a1,
        });
    }
    let t = &t_ref[first..end];
    let r = &p_ref[first..end];
    let a = resample(t_act, p_act, t);
    let n = t.len();
    if n < 2 {
        return Err(MetricsError::TooShort(n));
    }
    let k = match lag_samples {
        Some(k) => k,
        None => {
            let dt = (t[n - 1] - t[0]) / (n - 1) as f64;
            let bound = ((max_lag_s / dt).floor() as usize).min(n / 2);
            lag(r, &a, bound)
        }
    };
    if n < k + 2 {
        return Err(MetricsError::TooShort(n.saturating_sub(k)));
    }
    let pairs = n - k;
    let segment = (first..first + pairs)
        .map(|k| reference.segment.get(k).copied().flatten())
        .collect();
    Ok(Alignment {
        t: t[..pairs].to_vec(),
        reference: r[..pairs].to_vec(),
        actual: a[k..].to_vec(),
        segment,
        segment_names: reference.segment_names.to_vec(),
        lag_samples: k,
        lag_s: t[k] - t[0],
        outside: t_ref.len() - n,
    })
}

/// The Fréchet programme's budget, cells per sample pair (at least [`FRECHET_MIN_CELLS`]):
/// about 0.2–0.4 µs per sample, a tenth of an elastic-model physics step, so the metrics never
/// cost more than the run they judge. Every run of the user guide fits (a band of ~200 cells); a slow run
/// sampled every few µm of path does not, and is thinned.
pub const FRECHET_CELLS_PER_SAMPLE: usize = 200;
/// See [`FRECHET_CELLS_PER_SAMPLE`].
pub const FRECHET_MIN_CELLS: usize = 20_000_000;

fn metrics_of(reference: &[Point], actual: &[Point]) -> Metrics {
    let stats = error_stats(reference, actual);
    let budget = (FRECHET_CELLS_PER_SAMPLE.saturating_mul(reference.len())).max(FRECHET_MIN_CELLS);
    let f = frechet_within(reference, actual, budget);
    Metrics {
        samples: reference.len(),
        rms: stats.rms,
        rms_3d: stats.rms_3d,
        max_3d: stats.max_3d,
        frechet: f.distance,
        frechet_tolerance: f.tolerance,
        nrmse: stats.nrmse,
    }
}

impl Alignment {
    /// Metrics of all pairs and of each tagged segment.
    /// The total and the segments are computed on two threads (each is one Fréchet
    /// programme over every pair: on a long run they dominate the metrics' cost).
    pub fn metrics(&self) -> (Metrics, Vec<SegmentMetrics>) {
        std::thread::scope(|scope| {
            let total = scope.spawn(|| metrics_of(&self.reference, &self.actual));
            let segments = self.segment_metrics();
            let total = match total.join() {
                Ok(total) => total,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            (total, segments)
        })
    }

    fn segment_metrics(&self) -> Vec<SegmentMetrics> {
        self.segment_names
            .iter()
            .enumerate()
            .filter_map(|(index, name)| {
                let (r, a): (Vec<Point>, Vec<Point>) = self
                    .segment
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s == Some(index))
                    .map(|(k, _)| (self.reference[k], self.actual[k]))
                    .unzip();
                (!r.is_empty()).then(|| SegmentMetrics {
                    name: name.clone(),
                    metrics: metrics_of(&r, &a),
                })
            })
            .collect()
    }
}

/// Compares `actual` against `reference` (see the module documentation).
pub fn compare(
    reference: &Trajectory,
    actual: &Trajectory,
    options: &CompareOptions,
) -> Result<Comparison, MetricsError> {
    with_tracks(reference, actual, |r, a| compare_tracks(r, a, options))
}

/// [`compare`] on tracks (positions only: what a long run keeps of its steps).
pub fn compare_tracks(
    reference: &Track,
    actual: &Track,
    options: &CompareOptions,
) -> Result<Comparison, MetricsError> {
    // The lag is always measured (and reported); `remove_lag` decides whether it is applied.
    let found = align_tracks(reference, actual, None, options.max_lag_s)?;
    let (lag_samples, lag_s) = (found.lag_samples, found.lag_s);
    let aligned = if options.remove_lag || lag_samples == 0 {
        found
    } else {
        align_tracks(reference, actual, Some(0), options.max_lag_s)?
    };
    let (total, segments) = aligned.metrics();
    Ok(Comparison {
        units: "m",
        reference_samples: reference.t.len(),
        actual_samples: actual.t.len(),
        reference_outside_actual: aligned.outside,
        lag_samples,
        lag_s,
        lag_removed: options.remove_lag,
        max_lag_s: options.max_lag_s,
        total,
        nrmse_definition: NRMSE_DEFINITION,
        segments,
    })
}

#[cfg(test)]
mod tests;
