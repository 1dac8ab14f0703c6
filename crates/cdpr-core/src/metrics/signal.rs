//! Resampling, lag by cross-correlation, and the per-sample error statistics.

use super::frechet::Point;

/// Positions of `t_src`/`x_src` at the times `t` (both increasing) by linear interpolation;
/// held constant outside the source's time span.
pub fn resample(t_src: &[f64], x_src: &[Point], t: &[f64]) -> Vec<Point> {
    let mut out = Vec::with_capacity(t.len());
    if t_src.is_empty() {
        return out;
    }
    let last = t_src.len() - 1;
    let mut k = 0; // t_src[k] ≤ time < t_src[k+1] once inside; t is increasing
    for &time in t {
        if time <= t_src[0] {
            out.push(x_src[0]);
            continue;
        }
        if time >= t_src[last] {
            out.push(x_src[last]);
            continue;
        }
        while t_src[k + 1] <= time {
            k += 1;
        }
        let u = (time - t_src[k]) / (t_src[k + 1] - t_src[k]);
        let (a, b) = (x_src[k], x_src[k + 1]);
        out.push([
            a[0] + (b[0] - a[0]) * u,
            a[1] + (b[1] - a[1]) * u,
            a[2] + (b[2] - a[2]) * u,
        ]);
    }
    out
}

fn mean(x: &[Point]) -> Point {
    let n = x.len().max(1) as f64;
    let mut m = [0.0; 3];
    for p in x {
        for c in 0..3 {
            m[c] += p[c];
        }
    }
    m.map(|v| v / n)
}

/// The lag k ∈ [0, max_lag] (samples; the actual behind the reference, actualᵢ₊ₖ ≈ referenceᵢ)
/// maximising the normalised cross-correlation of the mean-removed x, y, z channels over the
/// overlapping samples i ∈ [0, n−k):
///
/// ρ(k) = Σᵢ (rᵢ − r̄ₖ)·(aᵢ₊ₖ − āₖ) / √(Σᵢ |rᵢ − r̄ₖ|² · Σᵢ |aᵢ₊ₖ − āₖ|²),
///
/// with the means r̄ₖ, āₖ taken over the overlap (the dot product sums the three axes).
/// Why normalised: MATLAB's raw `xcorr` sum (seed 000's tool) shrinks with the overlap, which
/// biases it towards short lags whenever the path ends far from its mean — on `seed000` a pure
/// 35-sample delay comes out as 8 samples. ρ(k) ≤ 1 with equality for an exact (delayed,
/// offset) copy, so such a copy's lag is found exactly. Near-ties (within 1e-9) go to the
/// smaller lag: a path without features, such as one straight line at constant speed, looks
/// the same at every shift (a shift is an offset once the means are removed), and no lag is
/// the honest answer there; real peaks are sharper than that by orders of magnitude.
pub fn lag(reference: &[Point], actual: &[Point], max_lag: usize) -> usize {
    let Some(overlap) = Overlap::new(reference, actual) else {
        return 0;
    };
    let lags = max_lag.min(overlap.n - 2);
    // Every lag's sum at once by FFT (O(n log n) instead of O(n · lags)), good to ~1e-15 of
    // ρ; only the lags whose screened ρ is within SCREEN_MARGIN of the best can be the answer
    // (a lag outside is below the best by more than the 1e-9 tie window plus twice the
    // FFT's error), and those get their exact sum: the lag chosen is the exact rule's.
    let screened: Vec<f64> = fft_dots(&overlap.r, &overlap.a, lags)
        .iter()
        .enumerate()
        .map(|(k, &dot)| overlap.rho(k, dot))
        .collect();
    let top = screened.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let near: Vec<usize> = (0..=lags)
        .filter(|&k| screened[k] >= top - SCREEN_MARGIN)
        .collect();
    if !top.is_finite() || near.len() > (lags + 1) / 8 + 8 {
        // A flat correlation (no peak to speak of): every lag exactly.
        return overlap.choose((0..=lags).zip(split_dots(&overlap.r, &overlap.a, lags)));
    }
    let exact = near
        .into_iter()
        .map(|k| (k, exact_dot(&overlap.r, &overlap.a, k)));
    overlap.choose(exact)
}

/// How far below the best screened ρ a lag may be and still be checked exactly: far above
/// the FFT's error (~1e-15 of ρ on centred channels) plus the 1e-9 tie window.
const SCREEN_MARGIN: f64 = 1e-7;

/// Σᵢ rᵢ·aᵢ₊ₖ over i ∈ [0, n−k), in order of i from 0.0: bit for bit [`straight_dots`]'s
/// and [`tiled_dots`]' sum of lag k.
fn exact_dot(r: &[Point], a: &[Point], k: usize) -> f64 {
    let mut s = 0.0;
    for (x, y) in r[..r.len() - k].iter().zip(&a[k..]) {
        s += dot3(x, y);
    }
    s
}

/// Σᵢ rᵢ·aᵢ₊ₖ for every k ∈ [0, lags] by FFT: the three channels' cross-spectra summed, one
/// inverse transform; zero-padded so the circular correlation is the linear one.
fn fft_dots(r: &[Point], a: &[Point], lags: usize) -> Vec<f64> {
    use rustfft::FftPlanner;
    use rustfft::num_complex::Complex;
    let n = r.len();
    let size = (n + lags + 1).next_power_of_two();
    let mut planner = FftPlanner::<f64>::new();
    let forward = planner.plan_fft_forward(size);
    let mut spectrum = vec![Complex::new(0.0, 0.0); size];
    let (mut x, mut y) = (spectrum.clone(), spectrum.clone());
    for c in 0..3 {
        for (i, v) in x.iter_mut().enumerate() {
            *v = Complex::new(if i < n { r[i][c] } else { 0.0 }, 0.0);
        }
        for (i, v) in y.iter_mut().enumerate() {
            *v = Complex::new(if i < n { a[i][c] } else { 0.0 }, 0.0);
        }
        forward.process(&mut x);
        forward.process(&mut y);
        for ((s, xr), ya) in spectrum.iter_mut().zip(&x).zip(&y) {
            *s += xr.conj() * ya;
        }
    }
    planner.plan_fft_inverse(size).process(&mut spectrum);
    let scale = 1.0 / size as f64;
    spectrum[..=lags].iter().map(|v| v.re * scale).collect()
}

/// [`tiled_dots`] with the lags shared between two threads when there is much to do (each
/// lag's sum is computed exactly as on one thread).
fn split_dots(r: &[Point], a: &[Point], lags: usize) -> Vec<f64> {
    if (lags as u64 + 1) * (r.len() as u64) < 20_000_000 {
        return tiled_dots(r, a, lags);
    }
    let half = lags / 2;
    std::thread::scope(|scope| {
        let upper = scope.spawn(|| dots_from(r, a, half + 1, lags));
        let mut sums = dots_from(r, a, 0, half);
        match upper.join() {
            Ok(upper) => sums.extend(upper),
            Err(panic) => std::panic::resume_unwind(panic),
        }
        sums
    })
}

/// [`lag`] computed with the textbook loop over every lag (the oracle of its tests).
#[cfg(test)]
pub(crate) fn lag_reference(reference: &[Point], actual: &[Point], max_lag: usize) -> usize {
    let Some(overlap) = Overlap::new(reference, actual) else {
        return 0;
    };
    let lags = max_lag.min(overlap.n - 2);
    overlap.choose((0..=lags).zip(straight_dots(&overlap.r, &overlap.a, lags)))
}

/// The paired samples centred on their global means (keeps the sums well conditioned), with
/// the prefix sums that give each lag's overlap statistics.
struct Overlap {
    n: usize,
    r: Vec<Point>,
    a: Vec<Point>,
    r_sum: Vec<Point>,
    r_sq: Vec<f64>,
    a_sum: Vec<Point>,
    a_sq: Vec<f64>,
}

impl Overlap {
    /// None for fewer than three pairs.
    fn new(reference: &[Point], actual: &[Point]) -> Option<Overlap> {
        let n = reference.len().min(actual.len());
        if n < 3 {
            return None;
        }
        let (mr, ma) = (mean(&reference[..n]), mean(&actual[..n]));
        let centre = |x: &[Point], m: Point| -> Vec<Point> {
            x[..n]
                .iter()
                .map(|p| [p[0] - m[0], p[1] - m[1], p[2] - m[2]])
                .collect()
        };
        let (r, a) = (centre(reference, mr), centre(actual, ma));
        let prefix = |x: &[Point]| {
            let mut sum = vec![[0.0; 3]; n + 1];
            let mut sq = vec![0.0; n + 1];
            for (k, p) in x.iter().enumerate() {
                for c in 0..3 {
                    sum[k + 1][c] = sum[k][c] + p[c];
                }
                sq[k + 1] = sq[k] + p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
            }
            (sum, sq)
        };
        let ((r_sum, r_sq), (a_sum, a_sq)) = (prefix(&r), prefix(&a));
        Some(Overlap {
            n,
            r,
            a,
            r_sum,
            r_sq,
            a_sum,
            a_sq,
        })
    }

    /// ρ(k) of the doc of [`lag`], from Σᵢ rᵢ·aᵢ₊ₖ (`dot`).
    fn rho(&self, k: usize, dot: f64) -> f64 {
        let n = self.n;
        let m = n - k;
        let count = m as f64;
        // Overlap sums: reference over [0, m), actual over [k, n).
        let (mut cross, mut r_var, mut a_var) = (dot, self.r_sq[m], self.a_sq[n] - self.a_sq[k]);
        for c in 0..3 {
            let (sr, sa) = (self.r_sum[m][c], self.a_sum[n][c] - self.a_sum[k][c]);
            cross -= sr * sa / count;
            r_var -= sr * sr / count;
            a_var -= sa * sa / count;
        }
        let denominator = (r_var * a_var).sqrt();
        if denominator > 0.0 {
            cross / denominator
        } else {
            0.0
        }
    }

    /// The smallest lag whose ρ is within 1e-9 of the best, of (lag, exact sum) in lag order.
    fn choose(&self, dots: impl Iterator<Item = (usize, f64)>) -> usize {
        let rhos: Vec<(usize, f64)> = dots.map(|(k, dot)| (k, self.rho(k, dot))).collect();
        let best = rhos.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max);
        rhos.iter().find(|r| r.1 >= best - 1e-9).map_or(0, |r| r.0)
    }
}

#[inline]
fn dot3(x: &Point, y: &Point) -> f64 {
    x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
}

/// Σᵢ rᵢ·aᵢ₊ₖ over i ∈ [0, n−k) for every k ∈ [0, lags], each sum taken in order of i: the
/// textbook loop, one lag after the other (the test oracle of [`tiled_dots`]).
#[cfg(test)]
pub(crate) fn straight_dots(r: &[Point], a: &[Point], lags: usize) -> Vec<f64> {
    let n = r.len();
    (0..=lags)
        .map(|k| {
            r[..n - k]
                .iter()
                .zip(&a[k..])
                .map(|(x, y)| dot3(x, y))
                .sum()
        })
        .collect()
}

/// [`straight_dots`], bit for bit, fast on long runs: the samples are walked in tiles that
/// stay in cache while every lag takes its share (one pass over the data instead of one per
/// lag), four lags at a time (independent sums the processor overlaps). Each lag's sum still
/// adds its terms one by one in order of i, so every sum is the same floating-point number.
pub(crate) fn tiled_dots(r: &[Point], a: &[Point], lags: usize) -> Vec<f64> {
    dots_from(r, a, 0, lags)
}

/// [`tiled_dots`] for the lags `first..=lags` only (sums in that order).
fn dots_from(r: &[Point], a: &[Point], first: usize, lags: usize) -> Vec<f64> {
    const TILE: usize = 2048;
    let n = r.len();
    let mut sums = vec![0.0f64; lags + 1];
    let mut start = 0;
    while start < n {
        let end = (start + TILE).min(n);
        let mut k = first;
        while k <= lags {
            if k + 3 <= lags {
                // Lags k … k+3: i runs to n−k−3 for all four, then the lower lags finish.
                let common = end.min(n - k - 3);
                let [mut s0, mut s1, mut s2, mut s3] =
                    [sums[k], sums[k + 1], sums[k + 2], sums[k + 3]];
                for i in start..common.max(start) {
                    let x = &r[i];
                    s0 += dot3(x, &a[i + k]);
                    s1 += dot3(x, &a[i + k + 1]);
                    s2 += dot3(x, &a[i + k + 2]);
                    s3 += dot3(x, &a[i + k + 3]);
                }
                let from = common.max(start);
                for i in from..end.min(n - k) {
                    s0 += dot3(&r[i], &a[i + k]);
                }
                for i in from..end.min(n - k - 1) {
                    s1 += dot3(&r[i], &a[i + k + 1]);
                }
                for i in from..end.min(n - k - 2) {
                    s2 += dot3(&r[i], &a[i + k + 2]);
                }
                [sums[k], sums[k + 1], sums[k + 2], sums[k + 3]] = [s0, s1, s2, s3];
                k += 4;
            } else {
                let mut s = sums[k];
                for i in start..end.min(n - k) {
                    s += dot3(&r[i], &a[i + k]);
                }
                sums[k] = s;
                k += 1;
            }
        }
        start = end;
    }
    sums.split_off(first)
}

/// Error statistics of paired samples, m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorStats {
    pub rms: [f64; 3],
    pub rms_3d: f64,
    pub max_3d: f64,
    pub nrmse: [Option<f64>; 3],
}

/// A reference channel whose RMS spread about its mean is below this (m) is constant: its
/// NRMSE (a ratio to that spread) is undefined and reported as null.
pub const NRMSE_MIN_SPREAD: f64 = 1e-9;

/// RMS per axis, RMS and maximum of the 3D error, and seed 004's NRMSE per axis:
/// 1 − ‖x_ref − x‖ / ‖x_ref − mean(x_ref)‖ (MATLAB `goodnessOfFit`, 'NRMSE').
pub fn error_stats(reference: &[Point], actual: &[Point]) -> ErrorStats {
    let n = reference.len().min(actual.len());
    let m = mean(&reference[..n]);
    let mut sq = [0.0; 3];
    let mut spread = [0.0; 3];
    let mut max2 = 0.0f64;
    for (r, a) in reference[..n].iter().zip(&actual[..n]) {
        let mut e2 = 0.0;
        for c in 0..3 {
            let e = r[c] - a[c];
            sq[c] += e * e;
            e2 += e * e;
            spread[c] += (r[c] - m[c]) * (r[c] - m[c]);
        }
        max2 = max2.max(e2);
    }
    let count = n.max(1) as f64;
    let nrmse = std::array::from_fn(|c| {
        if spread[c].sqrt() <= NRMSE_MIN_SPREAD * count.sqrt() {
            None
        } else {
            Some(1.0 - (sq[c] / spread[c]).sqrt())
        }
    });
    ErrorStats {
        rms: sq.map(|s| (s / count).sqrt()),
        rms_3d: ((sq[0] + sq[1] + sq[2]) / count).sqrt(),
        max_3d: max2.sqrt(),
        nrmse,
    }
}
