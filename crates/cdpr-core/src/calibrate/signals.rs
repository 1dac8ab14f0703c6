//! Smoothing and differentiating uniformly sampled signals with one Gaussian kernel: the
//! smoothed value is G∗x and its rates are G′∗x and G″∗x, the exact derivatives of that same
//! smoothed signal. Identification takes a motor's velocity and acceleration from its measured
//! position this way rather than by differencing, which multiplies a 10 µm encoder noise by
//! 1/dt² (10 m/s² at 1 kHz); the torques and poses pass the same kernel, so that every term of
//! the model is filtered alike — no delay (the kernel is centred), the same band — as
//! Gautier and Khalil's inverse-dynamics identification filters positions and torques alike.
//! (A Savitzky–Golay filter would not do: its smoothing and its derivative filters have
//! different responses, and the fit trades parameters to make up the difference.)

/// A Gaussian kernel of standard deviation σ sampled at a step h, to ±5σ.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianKernel {
    half: usize,
    /// Per sample of the window (offset −half..=half): the weights of G, G′·h and G″·h²
    /// (in samples: divide by h and h² for per-second rates).
    weights: [Vec<f64>; 3],
}

/// How many σ the kernel reaches on each side (its tail beyond: e^{−12.5} ≈ 4e-6).
const REACH: f64 = 5.0;

impl GaussianKernel {
    /// The kernel of standard deviation `sigma` (s) at the sample step `h` (s), at least one
    /// sample each side.
    pub fn new(sigma: f64, h: f64) -> GaussianKernel {
        let sigma = (sigma / h).max(0.5);
        let half = (REACH * sigma).ceil().clamp(1.0, 1e6) as usize;
        let offsets: Vec<f64> = (0..=2 * half).map(|j| j as f64 - half as f64).collect();
        let g: Vec<f64> = offsets
            .iter()
            .map(|u| (-0.5 * u * u / (sigma * sigma)).exp())
            .collect();
        let sum: f64 = g.iter().sum();
        let g: Vec<f64> = g.iter().map(|w| w / sum).collect();
        // x(k − j): the kernel's offset j reads the sample j before the centre, so that a
        // ramp x = t reads −u at offset u; G′ = −u/σ²·G, G″ = (u²/σ⁴ − 1/σ²)·G, each scaled
        // so that the truncated kernel is exact on a ramp and on a parabola.
        let mut d1: Vec<f64> = offsets
            .iter()
            .zip(&g)
            .map(|(u, w)| -u / (sigma * sigma) * w)
            .collect();
        let ramp: f64 = d1.iter().zip(&offsets).map(|(w, u)| w * -u).sum();
        d1.iter_mut().for_each(|w| *w /= ramp);
        let mut d2: Vec<f64> = offsets
            .iter()
            .zip(&g)
            .map(|(u, w)| (u * u / sigma.powi(4) - 1.0 / (sigma * sigma)) * w)
            .collect();
        // Σ G″ = 0 (a constant has no curvature) and Σ G″·u²/2 = 1.
        let mean = d2.iter().sum::<f64>();
        d2.iter_mut().zip(&g).for_each(|(w, g)| *w -= mean * g);
        let parabola: f64 = d2.iter().zip(&offsets).map(|(w, u)| w * u * u / 2.0).sum();
        d2.iter_mut().for_each(|w| *w /= parabola);
        // Stored in reading order: weight of x[k − half + i] is the kernel's at offset
        // half − i.
        let reversed = |w: Vec<f64>| w.into_iter().rev().collect::<Vec<f64>>();
        GaussianKernel {
            half,
            weights: [reversed(g), reversed(d1), reversed(d2)],
        }
    }

    /// Samples on each side of the centre.
    pub fn half(&self) -> usize {
        self.half
    }

    /// The smoothed value and its first and second derivative (per second, at the step `h`)
    /// of `x` at sample `k`; `None` within `half` samples of either end.
    pub fn at(&self, x: &[f64], k: usize, h: f64) -> Option<[f64; 3]> {
        if k < self.half || k + self.half >= x.len() {
            return None;
        }
        let window = &x[k - self.half..=k + self.half];
        let dot = |w: &[f64]| w.iter().zip(window).map(|(w, x)| w * x).sum::<f64>();
        Some([
            dot(&self.weights[0]),
            dot(&self.weights[1]) / h,
            dot(&self.weights[2]) / (h * h),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::TAU;

    /// A sine through a Gaussian of σ: e^{−ω²σ²/2}·sin ωt, and its derivatives are that
    /// function's (the Fourier transform of a Gaussian, by hand).
    #[test]
    fn a_sine_comes_out_as_the_closed_form_says() {
        let (h, sigma) = (1e-3, 0.01);
        let kernel = GaussianKernel::new(sigma, h);
        let w = TAU * 3.0;
        let x: Vec<f64> = (0..400).map(|k| (w * k as f64 * h).sin()).collect();
        let gain = (-0.5 * w * w * sigma * sigma).exp();
        let k = 200;
        let t = k as f64 * h;
        let [v, d1, d2] = kernel.at(&x, k, h).unwrap();
        assert!((v - gain * (w * t).sin()).abs() < 1e-6, "{v}");
        assert!((d1 - gain * w * (w * t).cos()).abs() < 1e-5 * w, "{d1}");
        assert!(
            (d2 + gain * w * w * (w * t).sin()).abs() < 1e-4 * w * w,
            "{d2}"
        );
        assert_eq!(kernel.at(&x, kernel.half() - 1, h), None);
        assert!(kernel.at(&x, kernel.half(), h).is_some());
        assert_eq!(kernel.at(&x, 400 - kernel.half(), h), None);
    }

    /// A parabola: G∗t² = t² + σ², slope 2t, curvature 2 (exact, by construction, on the
    /// truncated kernel too).
    #[test]
    fn a_parabola_and_its_derivatives() {
        let (h, sigma) = (1e-3, 0.004);
        let kernel = GaussianKernel::new(sigma, h);
        let x: Vec<f64> = (0..100).map(|k| (k as f64 * h).powi(2)).collect();
        let t = 50.0 * h;
        let [v, d1, d2] = kernel.at(&x, 50, h).unwrap();
        assert!((v - (t * t + sigma * sigma)).abs() < 1e-9, "{v}");
        assert!((d1 - 2.0 * t).abs() < 1e-9, "{d1}");
        assert!((d2 - 2.0).abs() < 1e-7, "{d2}");
    }

    /// White noise of σ comes out of the second derivative with σ·|G″|/h²: at σ = 10
    /// samples about 1 000 times quieter than plain differencing's σ·√6/h², as the
    /// continuous kernel's ‖G″‖ = (3/(8√π σ⁵))^½ says.
    #[test]
    fn noise_is_attenuated() {
        let kernel = GaussianKernel::new(0.01, 1e-3);
        let norm: f64 = kernel.weights[2].iter().map(|w| w * w).sum::<f64>().sqrt();
        let closed = (3.0 / (8.0 * std::f64::consts::PI.sqrt() * 10f64.powi(5))).sqrt();
        assert!((norm / closed - 1.0).abs() < 0.01, "{norm} vs {closed}");
        assert!(norm < 6f64.sqrt() / 1000.0, "{norm}");
    }
}
