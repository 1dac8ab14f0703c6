//! One degree of freedom of seed 004's surrogate: a pure delay of whole samples followed by a
//! second-order low-pass discretised with Tustin's bilinear transform (seed 004 eqs. 4–12).
//!
//! Continuous model (eq. 4): H(s) = K ω² / (s² + 2ζω s + ω²) · e^(−τ s).
//! The delay becomes z^(−d) with d = round(τ / T) whole samples (eq. 5). Tustin (eq. 7) puts
//! s = (2/T)(1 − z⁻¹)/(1 + z⁻¹); multiplying numerator and denominator by T²(1 + z⁻¹)²:
//!
//!   H(z) = K ω²T² (1 + 2z⁻¹ + z⁻²) / (a₀ + a₁ z⁻¹ + a₂ z⁻²)
//!   a₀ = 4 + 4ζωT + ω²T²,   a₁ = 2ω²T² − 8,   a₂ = 4 − 4ζωT + ω²T²,
//!
//! so that the difference equation on the delayed input v_k = u_(k−d) is
//!
//!   y_k = [K ω²T² (v_k + 2v_(k−1) + v_(k−2)) − a₁ y_(k−1) − a₂ y_(k−2)] / a₀.
//!
//! The DC gain is (4Kω²T²)/(a₀ + a₁ + a₂) = K, and for ζ, ω > 0 both poles lie inside the unit
//! circle at any T (Tustin maps the left half-plane into the unit disc): the filter cannot go
//! unstable however coarse the sampling. Tustin's price is frequency warping: the discrete
//! response at ω equals the continuous one at (2/T)·tan(ωT/2) (tested).

use serde::{Deserialize, Serialize};

/// The continuous parameters of one DOF, as written in a params file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DofParams {
    /// Pure delay τ, s (rounded to whole samples when discretised).
    pub delay_s: f64,
    /// Static gain K (seed 004 fixes it at 1).
    pub gain: f64,
    /// Natural frequency f_n = ω/2π, Hz.
    pub natural_frequency_hz: f64,
    /// Damping ratio ζ.
    pub damping: f64,
}

impl DofParams {
    /// The pitch parameters seed 004 publishes (its Table 4): τ = 0.08 s, K = 1, ζ = 1.5, f_n = 2.8 Hz.
    pub const PUBLISHED_PITCH: DofParams = DofParams {
        delay_s: 0.08,
        gain: 1.0,
        natural_frequency_hz: 2.8,
        damping: 1.5,
    };

    /// Whether the parameters describe a usable filter (finite, f_n and ζ positive, τ ≥ 0).
    pub fn check(&self) -> Result<(), String> {
        let finite = [
            self.delay_s,
            self.gain,
            self.natural_frequency_hz,
            self.damping,
        ]
        .iter()
        .all(|v| v.is_finite());
        if !finite {
            return Err("parameters must be finite numbers".into());
        }
        if self.delay_s < 0.0 {
            return Err(format!("delay_s must be ≥ 0, got {}", self.delay_s));
        }
        if self.natural_frequency_hz <= 0.0 {
            return Err(format!(
                "natural_frequency_hz must be > 0, got {}",
                self.natural_frequency_hz
            ));
        }
        if self.damping <= 0.0 {
            return Err(format!("damping must be > 0, got {}", self.damping));
        }
        Ok(())
    }
}

/// The discretised filter of one DOF at a sampling period: delay in samples and the
/// normalised coefficients of the difference equation (divided by a₀).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DofFilter {
    pub delay_samples: usize,
    /// K ω²T² / a₀ (the input taps are b, 2b, b).
    pub b: f64,
    /// a₁ / a₀
    pub a1: f64,
    /// a₂ / a₀
    pub a2: f64,
    pub gain: f64,
}

impl DofFilter {
    /// Discretises `params` at the period `dt` (s) by Tustin's method (module comment).
    pub fn new(params: &DofParams, dt: f64) -> DofFilter {
        let w = std::f64::consts::TAU * params.natural_frequency_hz;
        let wt = w * dt;
        let wt2 = wt * wt;
        let zeta = params.damping;
        let a0 = 4.0 + 4.0 * zeta * wt + wt2;
        let a1 = 2.0 * wt2 - 8.0;
        let a2 = 4.0 - 4.0 * zeta * wt + wt2;
        DofFilter {
            delay_samples: (params.delay_s / dt).round().max(0.0) as usize,
            b: params.gain * wt2 / a0,
            a1: a1 / a0,
            a2: a2 / a0,
            gain: params.gain,
        }
    }

    /// Frequency response of the discrete filter (delay included) at `f` Hz: (|H|, arg H rad).
    pub fn response(&self, f: f64, dt: f64) -> (f64, f64) {
        let theta = std::f64::consts::TAU * f * dt;
        // z⁻¹ = e^(−jθ); evaluate numerator and denominator as complex numbers.
        let (c1, s1) = (theta.cos(), -theta.sin());
        let (c2, s2) = ((2.0 * theta).cos(), -(2.0 * theta).sin());
        let num = (self.b * (1.0 + 2.0 * c1 + c2), self.b * (2.0 * s1 + s2));
        let den = (
            1.0 + self.a1 * c1 + self.a2 * c2,
            self.a1 * s1 + self.a2 * s2,
        );
        let mag = (num.0.hypot(num.1)) / den.0.hypot(den.1);
        let phase = num.1.atan2(num.0) - den.1.atan2(den.0) - theta * self.delay_samples as f64;
        (mag, phase)
    }
}

/// The changing part of one DOF: the delay line and the filter's two past inputs and outputs,
/// all as deviations from the rest value.
#[derive(Debug, Clone, PartialEq)]
pub struct DofState {
    line: Vec<f64>,
    head: usize,
    v1: f64,
    v2: f64,
    y1: f64,
    y2: f64,
}

impl DofState {
    /// At rest with the input held at `u` (a deviation) forever: the delay line full of `u`,
    /// the output at its steady state K·u.
    pub fn at_rest(filter: &DofFilter, u: f64) -> DofState {
        let y = filter.gain * u;
        DofState {
            line: vec![u; filter.delay_samples],
            head: 0,
            v1: u,
            v2: u,
            y1: y,
            y2: y,
        }
    }

    /// One sample: the input deviation `u` in, the output deviation out.
    #[inline]
    pub fn step(&mut self, filter: &DofFilter, u: f64) -> f64 {
        let v = if self.line.is_empty() {
            u
        } else {
            // The slot at `head` holds u_(k−d); replace it by u_k.
            let old = std::mem::replace(&mut self.line[self.head], u);
            self.head += 1;
            if self.head == self.line.len() {
                self.head = 0;
            }
            old
        };
        let y =
            filter.b * (v + 2.0 * self.v1 + self.v2) - filter.a1 * self.y1 - filter.a2 * self.y2;
        self.v2 = self.v1;
        self.v1 = v;
        self.y2 = self.y1;
        self.y1 = y;
        y
    }
}

/// Runs one DOF over a whole input series (deviations), starting at rest at the first input.
/// Used by the fit, where it is the inner loop.
pub fn filter_series(filter: &DofFilter, input: &[f64], out: &mut Vec<f64>) {
    out.clear();
    let Some(&first) = input.first() else {
        return;
    };
    let mut state = DofState::at_rest(filter, first);
    out.extend(input.iter().map(|&u| state.step(filter, u)));
}
