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
    let n = reference.len().min(actual.len());
    if n < 3 {
        return 0;
    }
    // Centre on the global means first (keeps the sums below well conditioned).
    let (mr, ma) = (mean(&reference[..n]), mean(&actual[..n]));
    let centre = |x: &[Point], m: Point| -> Vec<Point> {
        x[..n]
            .iter()
            .map(|p| [p[0] - m[0], p[1] - m[1], p[2] - m[2]])
            .collect()
    };
    let (r, a) = (centre(reference, mr), centre(actual, ma));
    // Prefix sums of the channels and of the squared norms, for the overlap statistics.
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
    let mut rhos = Vec::with_capacity(max_lag.min(n - 2) + 1);
    for k in 0..=max_lag.min(n - 2) {
        let m = n - k;
        let count = m as f64;
        let dot: f64 = r[..m]
            .iter()
            .zip(&a[k..])
            .map(|(x, y)| x[0] * y[0] + x[1] * y[1] + x[2] * y[2])
            .sum();
        // Overlap sums: reference over [0, m), actual over [k, n).
        let (mut cross, mut r_var, mut a_var) = (dot, r_sq[m], a_sq[n] - a_sq[k]);
        for c in 0..3 {
            let (sr, sa) = (r_sum[m][c], a_sum[n][c] - a_sum[k][c]);
            cross -= sr * sa / count;
            r_var -= sr * sr / count;
            a_var -= sa * sa / count;
        }
        let denominator = (r_var * a_var).sqrt();
        let rho = if denominator > 0.0 {
            cross / denominator
        } else {
            0.0
        };
        rhos.push(rho);
    }
    let best = rhos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    rhos.iter().position(|&r| r >= best - 1e-9).unwrap_or(0)
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
