//! A synthetic tracking response: what a follower that lags, smooths and sags would record.
//!
//! Not physics (that is `sim`'s job): a pure delay, a critically damped second-order low-pass
//! per channel (two cascaded first-order lags, the shape seed 004 fits per degree of freedom)
//! and a constant position offset, optionally re-sampled at a coarser period (seed 000's shadow
//! reports every 50 ms). Used to demonstrate and test `compare` with known disturbances.

use super::csv::differentiate;
use super::{Sample, Trajectory, TrajectoryError};
use crate::kinematics::Pose;
use crate::options::{Group, Kind, OptionSpec, number};

/// What to do to a trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Perturbation {
    /// Pure delay, s (≥ 0).
    pub delay: f64,
    /// Cut-off frequency of the critically damped low-pass, Hz (`None`: no filter).
    pub lowpass_hz: Option<f64>,
    /// Added to x, y, z, m.
    pub offset: [f64; 3],
    /// Output sampling period, s (`None`: the input's mean period).
    pub resample: Option<f64>,
}

/// Help heading of the options that make a perturbed copy.
pub const PERTURBED: &str = "Perturbed copy (a synthetic follower)";

crate::request! {
    /// A perturbed copy as `cdpr trajectory` is asked for one (every option unset: no copy).
    #[derive(Debug, Clone, PartialEq)]
    pub struct PerturbRequest, table OPTIONS;
    /// Pure delay, s.
    delay: Option<f64> = None,
        number(Group::Command, "s", 0.0, 3600.0, "S", "perturb: delay the copy by this many seconds")
            .heading(PERTURBED);
    /// Cut-off of the critically damped low-pass, Hz.
    lowpass: Option<f64> = None,
        number(Group::Command, "Hz", 1e-2, 1e4, "HZ",
            "perturb: critically damped 2nd-order low-pass with this cut-off").heading(PERTURBED);
    /// Added to x, y, z, m.
    offset: Option<Vec<f64>> = None,
        OptionSpec::new(Group::Command, Kind::Numbers { unit: "m", count: 3, limit: 100.0 },
            "DX,DY,DZ", "perturb: add a constant position offset").heading(PERTURBED);
    /// Output sampling period, s.
    resample: Option<f64> = None,
        number(Group::Command, "s", 1e-4, 60.0, "S",
            "perturb: write the copy sampled every S seconds (seed 000's shadow: 0.05)")
            .heading(PERTURBED);
}

impl PerturbRequest {
    /// The perturbation asked for (None: none of its options given).
    pub fn perturbation(&self) -> Option<Perturbation> {
        if *self == PerturbRequest::default() {
            return None;
        }
        let offset = match self.offset.as_deref() {
            Some(&[dx, dy, dz]) => [dx, dy, dz],
            _ => [0.0; 3],
        };
        Some(Perturbation {
            delay: self.delay.unwrap_or(0.0),
            lowpass_hz: self.lowpass,
            offset,
            resample: self.resample,
        })
    }
}

fn invalid(name: &'static str, value: f64, reason: &str) -> TrajectoryError {
    TrajectoryError::Option {
        name,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// The perturbed copy, extended past the end by the delay and five filter time constants so
/// that the follower also comes to rest. Velocities and accelerations are finite differences.
pub fn perturb(trajectory: &Trajectory, p: &Perturbation) -> Result<Trajectory, TrajectoryError> {
    if trajectory.samples.len() < 2 {
        return Err(TrajectoryError::Geometry(
            "perturbing needs at least two samples".into(),
        ));
    }
    if !(p.delay.is_finite() && p.delay >= 0.0) {
        return Err(invalid("delay", p.delay, "must be ≥ 0 s"));
    }
    if let Some(f) = p.lowpass_hz
        && !(f.is_finite() && f > 0.0)
    {
        return Err(invalid("lowpass", f, "must be a positive frequency in Hz"));
    }
    if let Some(dt) = p.resample
        && !(dt.is_finite() && dt > 0.0)
    {
        return Err(invalid("resample", dt, "must be a positive period in s"));
    }
    if let Some(d) = p.offset.iter().find(|d| !d.is_finite()) {
        return Err(invalid("offset", *d, "must be finite"));
    }
    let n = trajectory.samples.len();
    let dt = trajectory.duration() / (n - 1) as f64;
    let tau = p.lowpass_hz.map(|f| 1.0 / (std::f64::consts::TAU * f));
    let extra = p.delay + 5.0 * tau.unwrap_or(0.0);
    let t0 = trajectory.start_time();
    super::sample_budget(
        trajectory.duration() + extra,
        dt,
        "the perturbed copy at the input's sampling period",
        "delay or lowpass",
    )?;
    let steps = ((trajectory.duration() + extra) / dt).ceil() as usize;
    let times: Vec<f64> = (0..=steps).map(|k| t0 + k as f64 * dt).collect();
    // Exact discretisation of a first-order lag with a zero-order-held input.
    let alpha = tau.map(|tau| 1.0 - (-dt / tau).exp());
    let start = trajectory.samples[0].pose.to_array();
    let (mut stage1, mut stage2) = (start, start);
    let mut fine: Vec<(f64, [f64; 6], Option<usize>)> = Vec::with_capacity(times.len());
    for &t in &times {
        let source = trajectory
            .sample_at(t - p.delay)
            .expect("the trajectory has samples");
        let mut x = source.pose.to_array();
        if let Some(alpha) = alpha {
            for c in 0..6 {
                stage1[c] += alpha * (x[c] - stage1[c]);
                stage2[c] += alpha * (stage1[c] - stage2[c]);
            }
            x = stage2;
        }
        for (value, offset) in x.iter_mut().zip(p.offset) {
            *value += offset;
        }
        fine.push((t, x, source.segment));
    }
    let fine = Trajectory {
        samples: fine
            .into_iter()
            .map(|(t, x, segment)| Sample {
                t,
                pose: Pose::from_array(x),
                velocity: [0.0; 6],
                acceleration: [0.0; 6],
                segment,
            })
            .collect(),
        segments: trajectory.segments.clone(),
    };
    let mut out = match p.resample {
        None => fine,
        Some(period) => {
            let end = fine.samples.last().map(|s| s.t).unwrap_or(t0);
            super::sample_budget(end - t0, period, "the resampled copy", "resample")?;
            let count = ((end - t0) / period).floor() as usize;
            Trajectory {
                samples: (0..=count)
                    .filter_map(|k| fine.sample_at(t0 + k as f64 * period))
                    .collect(),
                segments: fine.segments,
            }
        }
    };
    let t: Vec<f64> = out.samples.iter().map(|s| s.t).collect();
    for c in 0..6 {
        let x: Vec<f64> = out.samples.iter().map(|s| s.pose.to_array()[c]).collect();
        let (v, a) = differentiate(&t, &x);
        for (k, s) in out.samples.iter_mut().enumerate() {
            s.velocity[c] = v[k];
            s.acceleration[c] = a[k];
        }
    }
    Ok(out)
}
