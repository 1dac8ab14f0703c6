//! Fitting one DOF's delay and filter to a reference response by maximising seed 004's NRMSE.
//!
//! The criterion is `crate::metrics`' NRMSE, 1 − ‖y − ŷ‖ / ‖y − mean(y)‖ (MATLAB
//! `goodnessOfFit`), averaged over the reference series as seed 004 averages its four
//! validation signals. Two methods:
//! - [`FitMethod::Grid`], seed 004's own: the gain fixed at 1, ζ and f_n on a 0.05 grid over
//!   the given ranges (the paper: ζ ∈ [1, 1.6], f_n ∈ [1, 3] Hz), the delay "observed" — here
//!   the integer delay that is best on a coarse version of the same grid, refined by a
//!   pattern search;
//! - [`FitMethod::NelderMead`] (default): a coarse grid over wide ranges (log-spaced f_n), then
//!   bounded Nelder–Mead (argmin's, see [`super::optimize`]) on (ln f_n, ζ[, K]) from the best grid points, then the same integer
//!   pattern search over the delay with Nelder–Mead warm-started at each candidate. It never
//!   does worse than its own starting grid, and on seed 004's ranges it finds the grid's
//!   optimum or better (tested).

use super::filter::{DofFilter, DofParams, DofState};
use super::optimize;

/// One reference response of one DOF: the commanded input and the measured output, both as
/// deviations from the rest value, sampled every `dt` of the fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub input: Vec<f64>,
    pub output: Vec<f64>,
}

/// A reference output whose RMS spread about its mean is below this is not excited: its NRMSE
/// (a ratio to that spread) says nothing and it is left out (as `metrics` reports null).
pub const MIN_SPREAD: f64 = 1e-9;

/// Seed 004's NRMSE of `actual` against `reference` (1 is perfect, −∞…1); None when the
/// reference is constant. The same definition as [`crate::metrics`] (checked in the tests).
pub fn nrmse(reference: &[f64], actual: &[f64]) -> Option<f64> {
    let n = reference.len().min(actual.len());
    if n == 0 {
        return None;
    }
    let mean = reference[..n].iter().sum::<f64>() / n as f64;
    let (mut err, mut spread) = (0.0, 0.0);
    for (r, a) in reference[..n].iter().zip(&actual[..n]) {
        err += (r - a) * (r - a);
        spread += (r - mean) * (r - mean);
    }
    if spread.sqrt() <= MIN_SPREAD * (n as f64).sqrt() {
        None
    } else {
        Some(1.0 - (err / spread).sqrt())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitMethod {
    /// Seed 004's exhaustive 0.05 grid over ζ ∈ [1, 1.6] and f_n ∈ [1, 3] Hz, gain 1.
    Grid,
    /// Coarse grid, then bounded Nelder–Mead and an integer delay search.
    NelderMead,
}

crate::named_choice!(FitMethod, "fit method", {
    Grid => "grid", "seed 004's exhaustive 0.05 grid over ζ ∈ [1, 1.6] and f_n ∈ [1, 3] Hz, gain 1";
    NelderMead => "nelder-mead", "a coarse grid, then bounded Nelder–Mead and an integer delay search";
});

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    pub method: FitMethod,
    /// Natural frequency search range, Hz.
    pub frequency_hz: (f64, f64),
    /// Damping ratio search range.
    pub damping: (f64, f64),
    /// Grid step of ζ and f_n for the `Grid` method (seed 004: 0.05).
    pub grid_step: f64,
    /// Longest delay considered, s.
    pub max_delay_s: f64,
    /// Fit the gain too (Nelder–Mead only; seed 004 fixes it at 1).
    pub fit_gain: bool,
    /// Gain range when fitted.
    pub gain: (f64, f64),
}

impl FitOptions {
    /// Seed 004's search: ζ ∈ [1, 1.6], f_n ∈ [1, 3] Hz in 0.05 steps, delay up to 0.25 s.
    pub fn paper_grid() -> FitOptions {
        FitOptions {
            method: FitMethod::Grid,
            frequency_hz: (1.0, 3.0),
            damping: (1.0, 1.6),
            grid_step: 0.05,
            max_delay_s: 0.25,
            fit_gain: false,
            gain: (1.0, 1.0),
        }
    }

    /// Wide ranges for Nelder–Mead: f_n from 0.1 Hz to min(100 Hz, a quarter of the sampling
    /// rate) — beyond that Tustin's warping distorts the filter — and ζ ∈ [0.2, 4].
    pub fn wide(dt: f64) -> FitOptions {
        FitOptions {
            method: FitMethod::NelderMead,
            frequency_hz: (0.1, (0.25 / dt).min(100.0)),
            damping: (0.2, 4.0),
            grid_step: 0.05,
            max_delay_s: 0.25,
            fit_gain: false,
            gain: (0.8, 1.2),
        }
    }
}

/// The result for one DOF.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DofFit {
    pub params: DofParams,
    /// Mean NRMSE over the excited series.
    pub nrmse: f64,
    /// NRMSE per series (None: that series does not excite this DOF).
    pub per_series: Vec<Option<f64>>,
    /// Filter runs spent.
    pub evaluations: usize,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("no reference series excites this DOF (its output never moves)")]
    NotExcited,
    #[error("bad fit option: {0}")]
    Options(String),
}

/// Evaluates candidate filters against the series; counts evaluations.
struct Evaluator<'a> {
    series: Vec<(&'a Series, f64)>,
    dt: f64,
    evaluations: usize,
}

impl Evaluator<'_> {
    /// Mean NRMSE of the candidate over the excited series (the quantity maximised).
    fn score(&mut self, delay: usize, f: f64, zeta: f64, gain: f64) -> f64 {
        self.evaluations += 1;
        let params = DofParams {
            delay_s: delay as f64 * self.dt,
            gain,
            natural_frequency_hz: f,
            damping: zeta,
        };
        let filter = DofFilter::new(&params, self.dt);
        let mut total = 0.0;
        for (s, spread) in &self.series {
            let mut state = DofState::at_rest(&filter, s.input[0]);
            let mut err = 0.0;
            for (&u, &y) in s.input.iter().zip(&s.output) {
                let e = y - state.step(&filter, u);
                err += e * e;
            }
            total += 1.0 - err.sqrt() / spread;
        }
        let score = total / self.series.len() as f64;
        if score.is_finite() {
            score
        } else {
            f64::NEG_INFINITY
        }
    }
}

/// A candidate: (score, delay samples, f_n, ζ, K).
type Candidate = (f64, usize, f64, f64, f64);

/// Fits delay, f_n, ζ (and K if asked) of one DOF to `series` sampled every `dt`.
pub fn fit_dof(series: &[Series], dt: f64, options: &FitOptions) -> Result<DofFit, FitError> {
    check_options(options, dt)?;
    let excited: Vec<(&Series, f64)> = series
        .iter()
        .filter(|s| !s.input.is_empty() && s.input.len() == s.output.len())
        .filter_map(|s| {
            let n = s.output.len() as f64;
            let mean = s.output.iter().sum::<f64>() / n;
            let spread = s
                .output
                .iter()
                .map(|y| (y - mean).powi(2))
                .sum::<f64>()
                .sqrt();
            (spread > MIN_SPREAD * n.sqrt()).then_some((s, spread))
        })
        .collect();
    if excited.is_empty() {
        return Err(FitError::NotExcited);
    }
    let mut ev = Evaluator {
        series: excited,
        dt,
        evaluations: 0,
    };
    let max_delay = (options.max_delay_s / dt).round().max(0.0) as usize;
    let best = match options.method {
        FitMethod::Grid => grid_fit(&mut ev, options, max_delay),
        FitMethod::NelderMead => nelder_mead_fit(&mut ev, options, max_delay),
    };
    let (_, delay, f, zeta, gain) = best;
    let params = DofParams {
        delay_s: delay as f64 * dt,
        gain,
        natural_frequency_hz: f,
        damping: zeta,
    };
    let filter = DofFilter::new(&params, dt);
    let mut out = Vec::new();
    let per_series: Vec<Option<f64>> = series
        .iter()
        .map(|s| {
            super::filter::filter_series(&filter, &s.input, &mut out);
            nrmse(&s.output, &out)
        })
        .collect();
    let scored: Vec<f64> = per_series.iter().flatten().copied().collect();
    Ok(DofFit {
        params,
        nrmse: scored.iter().sum::<f64>() / scored.len().max(1) as f64,
        per_series,
        evaluations: ev.evaluations,
    })
}

fn check_options(o: &FitOptions, dt: f64) -> Result<(), FitError> {
    let range_ok = |(lo, hi): (f64, f64)| lo.is_finite() && hi.is_finite() && 0.0 < lo && lo <= hi;
    if !(dt.is_finite() && dt > 0.0) {
        return Err(FitError::Options(format!("dt must be positive, got {dt}")));
    }
    if !range_ok(o.frequency_hz) || !range_ok(o.damping) || !range_ok(o.gain) {
        return Err(FitError::Options(
            "frequency, damping and gain ranges must be positive with min ≤ max".into(),
        ));
    }
    if !(o.grid_step.is_finite() && o.grid_step > 0.0) {
        return Err(FitError::Options(format!(
            "grid step must be positive, got {}",
            o.grid_step
        )));
    }
    if !(o.max_delay_s.is_finite() && o.max_delay_s >= 0.0) {
        return Err(FitError::Options(format!(
            "max delay must be ≥ 0 s, got {}",
            o.max_delay_s
        )));
    }
    Ok(())
}

/// lo, lo + step, …, hi (hi included within rounding).
fn steps(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let n = ((hi - lo) / step + 1e-9).floor() as usize;
    (0..=n).map(|k| lo + k as f64 * step).collect()
}

/// At most `count` integer delays spread over [0, max].
fn delay_candidates(max: usize, count: usize) -> (Vec<usize>, usize) {
    let stride = max.div_ceil(count.max(1)).max(1);
    let mut d: Vec<usize> = (0..=max).step_by(stride).collect();
    if d.last() != Some(&max) {
        d.push(max);
    }
    (d, stride)
}

fn best_of(a: Candidate, b: Candidate) -> Candidate {
    if b.0 > a.0 { b } else { a }
}

/// Integer pattern search over the delay around `best`, re-optimising the rest with `refit`.
fn delay_search(
    ev: &mut Evaluator,
    mut best: Candidate,
    stride: usize,
    max_delay: usize,
    refit: &mut dyn FnMut(&mut Evaluator, usize, &Candidate) -> Candidate,
) -> Candidate {
    let mut step = stride;
    while step >= 1 {
        let mut moved = false;
        for d in [best.1.checked_sub(step), Some(best.1 + step)]
            .into_iter()
            .flatten()
            .filter(|&d| d <= max_delay)
        {
            let c = refit(ev, d, &best);
            if c.0 > best.0 {
                best = c;
                moved = true;
            }
        }
        if !moved {
            step /= 2;
        }
    }
    best
}

fn grid_fit(ev: &mut Evaluator, o: &FitOptions, max_delay: usize) -> Candidate {
    let (f_lo, f_hi) = o.frequency_hz;
    let (z_lo, z_hi) = o.damping;
    let fine_f = steps(f_lo, f_hi, o.grid_step);
    let fine_z = steps(z_lo, z_hi, o.grid_step);
    let grid = |ev: &mut Evaluator, d: usize, fs: &[f64], zs: &[f64]| {
        let mut best: Candidate = (f64::NEG_INFINITY, d, fs[0], zs[0], 1.0);
        for &f in fs {
            for &z in zs {
                best = best_of(best, (ev.score(d, f, z, 1.0), d, f, z, 1.0));
            }
        }
        best
    };
    // The delay: best on a coarse version of the grid (every 4th value), then refined.
    let coarse_f: Vec<f64> = fine_f.iter().step_by(4).copied().collect();
    let coarse_z: Vec<f64> = fine_z.iter().step_by(4).copied().collect();
    let (delays, stride) = delay_candidates(max_delay, 16);
    let mut best: Candidate = (f64::NEG_INFINITY, 0, f_lo, z_lo, 1.0);
    for d in delays {
        best = best_of(best, grid(ev, d, &coarse_f, &coarse_z));
    }
    let mut at_fixed = |ev: &mut Evaluator, d: usize, c: &Candidate| {
        (ev.score(d, c.2, c.3, 1.0), d, c.2, c.3, 1.0)
    };
    best = delay_search(ev, best, stride, max_delay, &mut at_fixed);
    grid(ev, best.1, &fine_f, &fine_z)
}

fn nelder_mead_fit(ev: &mut Evaluator, o: &FitOptions, max_delay: usize) -> Candidate {
    let (f_lo, f_hi) = o.frequency_hz;
    let (z_lo, z_hi) = o.damping;
    let (g_lo, g_hi) = if o.fit_gain { o.gain } else { (1.0, 1.0) };
    let log_f: Vec<f64> = (0..12)
        .map(|k| (f_lo.ln() + (f_hi / f_lo).ln() * k as f64 / 11.0).exp())
        .collect();
    let zetas: Vec<f64> = (0..8)
        .map(|k| z_lo + (z_hi - z_lo) * k as f64 / 7.0)
        .collect();
    let (delays, stride) = delay_candidates(max_delay, 12);
    let mut grid: Vec<Candidate> = Vec::new();
    for &d in &delays {
        for &f in &log_f {
            for &z in &zetas {
                grid.push((ev.score(d, f, z, 1.0), d, f, z, 1.0));
            }
        }
    }
    grid.sort_by(|a, b| b.0.total_cmp(&a.0));
    // Nelder–Mead in (ln f, ζ[, K]) at a fixed delay, from a starting candidate.
    let local = |ev: &mut Evaluator, d: usize, start: &Candidate, evals: u64| {
        let mut x0 = vec![start.2.ln(), start.3];
        let mut lo = vec![f_lo.ln(), z_lo];
        let mut hi = vec![f_hi.ln(), z_hi];
        let mut step = vec![0.2, 0.1 * (z_hi - z_lo).max(0.05)];
        if o.fit_gain {
            x0.push(start.4.clamp(g_lo, g_hi));
            lo.push(g_lo);
            hi.push(g_hi);
            step.push(0.02);
        }
        let gain_of = |x: &[f64]| if o.fit_gain { x[2] } else { 1.0 };
        let mut cost = |x: &[f64]| -ev.score(d, x[0].exp(), x[1], gain_of(x));
        let (x, c) = optimize::minimize(&mut cost, &x0, &step, &lo, &hi, 1e-10, evals);
        best_of(*start, (-c, d, x[0].exp(), x[1], gain_of(&x)))
    };
    let mut best: Candidate = grid[0];
    for start in grid.iter().take(3) {
        let c = local(ev, start.1, start, 150);
        best = best_of(best, c);
    }
    let mut refit = |ev: &mut Evaluator, d: usize, c: &Candidate| {
        let start = (ev.score(d, c.2, c.3, c.4), d, c.2, c.3, c.4);
        local(ev, d, &start, 60)
    };
    delay_search(ev, best, stride, max_delay, &mut refit)
}
