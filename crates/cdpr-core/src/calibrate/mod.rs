//! A robot file fitted to one recorded run of the real robot: its drives (J, b, τ_c and a
//! torque offset per drive), its cables' stiffness and its geometry (frame anchors and the
//! offsets of the measured payouts) — seed 004's method, characterise the real mechanism from
//! its measured responses and simulate the characterised model, applied to seed 000's next
//! step, the shadow's forces against the servo motors' torques.
//!
//! A run as measured ([`Measured`]: poses from a tracker, the drives' payouts and torques,
//! uniformly sampled) is smoothed and differentiated ([`signals`]) into [`Samples`]
//! ([`prepare`]); [`fit::calibrate`] fits the model of [`model`] to them.

pub mod fit;
pub mod input;
pub mod model;
pub mod output;
pub mod signals;

pub use fit::{Calibration, CalibrationError, Estimate, Residuals, Unexcited, calibrate};
pub use model::{Group, Quantity, Samples};

use crate::pose::Pose;
use crate::robot::Robot;
use crate::robot::drives::FRICTION_SMOOTHING;
use signals::GaussianKernel;

/// A run as measured, at a uniform step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measured {
    /// s.
    pub times: Vec<f64>,
    /// The platform's measured pose (x, y, z, roll, pitch, yaw), per sample.
    pub poses: Vec<[f64; 6]>,
    /// Per sample, per cable (row-major): the payout the drive measures, m.
    pub payouts: Vec<f64>,
    /// Per sample, per drive (row-major): the torque the drive reports, N·m.
    pub torques: Vec<f64>,
    pub cables: usize,
    pub drives: usize,
}

/// How a recording is smoothed and thinned for the fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preparation {
    /// The smoothing kernel's standard deviation σ, s (a Gaussian: −3 dB at 0.13/σ Hz, a
    /// 3 Hz motion passes at 98 % with σ = 10 ms).
    pub smoothing: f64,
    /// Samples kept per second (the fit's rate), Hz.
    pub rate: f64,
}

impl Default for Preparation {
    fn default() -> Self {
        Preparation {
            smoothing: 0.01,
            rate: 100.0,
        }
    }
}

/// A step differs from the run's median step by more than this share: a gap, not used.
const STEP_TOLERANCE: f64 = 0.01;

/// `measured` (a run of `robot`, whose drives convert payout rates to motor rates) smoothed
/// and differentiated (one Gaussian kernel, [`signals`]) and thinned to `preparation.rate`; a sample is kept only when its
/// whole window is finite and evenly stepped (no gap, no NaN inside it).
pub fn prepare(
    robot: &Robot,
    measured: &Measured,
    preparation: &Preparation,
) -> Result<Samples, CalibrationError> {
    let n = measured.times.len();
    let shape = |what: &'static str, found: usize, expected: usize| {
        if found == expected {
            Ok(())
        } else {
            Err(CalibrationError::Shape {
                what,
                found,
                expected,
            })
        }
    };
    shape("poses", measured.poses.len(), n)?;
    shape("payouts", measured.payouts.len(), n * measured.cables)?;
    shape("torques", measured.torques.len(), n * measured.drives)?;
    let mut steps: Vec<f64> = measured.times.windows(2).map(|w| w[1] - w[0]).collect();
    steps.sort_by(f64::total_cmp);
    let h = steps.get(steps.len() / 2).copied().unwrap_or(0.0);
    if h.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Err(CalibrationError::NoStep);
    }
    let sg = GaussianKernel::new(preparation.smoothing, h);
    let half = sg.half();
    // Prefix counts of the samples with a value that is not finite and of the steps (into
    // sample k) off the median: a window is clean when it holds neither.
    let (cables, drives) = (measured.cables, measured.drives);
    let finite = |k: usize| {
        measured.poses[k].iter().all(|x| x.is_finite())
            && measured.payouts[k * cables..(k + 1) * cables]
                .iter()
                .chain(&measured.torques[k * drives..(k + 1) * drives])
                .all(|x| x.is_finite())
    };
    let uneven = |k: usize| {
        k > 0 && {
            let off = ((measured.times[k] - measured.times[k - 1]) - h).abs();
            off.is_nan() || off > STEP_TOLERANCE * h
        }
    };
    let prefix = |bad: &dyn Fn(usize) -> bool| {
        let mut p = vec![0usize; n + 1];
        for k in 0..n {
            p[k + 1] = p[k] + usize::from(bad(k));
        }
        p
    };
    let (not_finite, off_step) = (prefix(&|k| !finite(k)), prefix(&uneven));
    let clean = |k: usize| {
        let (first, last) = (k - half, k + half);
        not_finite[last + 1] == not_finite[first] && off_step[last + 1] == off_step[first + 1]
    };
    let stride = ((1.0 / (preparation.rate * h)).round() as usize).max(1);
    let column = |get: &dyn Fn(usize) -> f64| -> Vec<f64> { (0..n).map(get).collect() };
    let pose_columns: Vec<Vec<f64>> = (0..6).map(|c| column(&|k| measured.poses[k][c])).collect();
    let payout_columns: Vec<Vec<f64>> = (0..cables)
        .map(|i| column(&|k| measured.payouts[k * cables + i]))
        .collect();
    let torque_columns: Vec<Vec<f64>> = (0..drives)
        .map(|i| column(&|k| measured.torques[k * drives + i]))
        .collect();
    // The Coulomb friction's regressor tanh(θ̇/ω₀) taken at every sample and then smoothed
    // like the torque it explains: smoothing the torque spreads the friction's step at a
    // reversal over the window, which tanh of the smoothed rate would not (and the fit would
    // then trade τ_c for b).
    let friction_columns: Vec<Vec<f64>> = payout_columns
        .iter()
        .zip(&robot.drives)
        .map(|(column, d)| {
            let per_rate = 1.0 / (d.payout_per_radian() * FRICTION_SMOOTHING);
            (0..n)
                .map(|k| {
                    sg.at(column, k, h)
                        .map_or(0.0, |[_, rate, _]| (rate * per_rate).tanh())
                })
                .collect()
        })
        .collect();
    let mut samples = Samples {
        cables,
        ..Samples::default()
    };
    let mut k = half;
    while k + half < n {
        if clean(k) {
            let mut pose = [0.0; 6];
            let (mut velocity, mut acceleration) = ([0.0; 6], [0.0; 6]);
            for c in 0..6 {
                if let Some([v, d1, d2]) = sg.at(&pose_columns[c], k, h) {
                    (pose[c], velocity[c], acceleration[c]) = (v, d1, d2);
                }
            }
            samples.times.push(measured.times[k]);
            samples.poses.push(Pose::from_array(pose));
            samples.velocities.push(velocity);
            samples.accelerations.push(acceleration);
            for column in &payout_columns {
                samples
                    .payouts
                    .push(sg.at(column, k, h).unwrap_or([0.0; 3]));
            }
            let smoothed = |column: &Vec<f64>| sg.at(column, k, h).map_or(0.0, |[v, _, _]| v);
            samples.torques.extend(torque_columns.iter().map(smoothed));
            samples
                .friction
                .extend(friction_columns.iter().map(smoothed));
            k += stride;
        } else {
            k += 1;
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests;
