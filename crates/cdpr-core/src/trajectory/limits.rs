//! Winch (cable-space) limits: checking a trajectory against the robot's winch velocity,
//! acceleration and jerk limits (seed 003: 3 m/s, 15 m/s², 22.5 m/s³), and slowing it down
//! uniformly until it respects them.
//!
//! Cable rates come from the IK Jacobian J = ∂l/∂q (q = pose coordinates the robot controls):
//! l̇ = J q̇ and l̈ = J q̈ + J̇ q̇, with J̇ q̇ the directional derivative of J along q̇ (central
//! difference over a 0.1 mm step). Because a sampled trajectory may jump (a `constant` profile
//! steps its velocity, a trapezoid its acceleration), the peaks also include the difference
//! quotients between consecutive samples, (l̇ₖ₊₁ − l̇ₖ)/Δt and, for the jerk, (l̈ₖ₊₁ − l̈ₖ)/Δt.
//! The jerk is therefore measured at the sampling period: acceleration steps show as Δa/Δt,
//! which no finite limit admits as Δt → 0 — use the S-curve when jerk matters.

use super::{Sample, Trajectory, TrajectoryError};
use crate::kinematics::{self, Pose};
use crate::robot::Robot;
use nalgebra::{DMatrix, DVector};
use serde::Serialize;

/// Limits on every winch (cable length rates), SI.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CableLimits {
    /// m/s
    pub max_velocity: f64,
    /// m/s²
    pub max_acceleration: f64,
    /// m/s³
    pub max_jerk: f64,
}

impl CableLimits {
    /// The robot file's `[winch]` limits.
    pub fn of(robot: &Robot) -> CableLimits {
        CableLimits {
            max_velocity: robot.winch.max_velocity,
            max_acceleration: robot.winch.max_acceleration,
            max_jerk: robot.winch.max_jerk,
        }
    }
}

/// The largest magnitude of one cable-space quantity over the trajectory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peak {
    /// Largest |value| over all cables and samples.
    pub value: f64,
    pub limit: f64,
    /// value / limit (> 1: violated).
    pub ratio: f64,
    /// Cable where the peak occurs.
    pub cable: String,
    /// Time of the peak, s.
    pub t: f64,
    /// Number of (cable, sample) values above the limit.
    pub violations: usize,
    /// First time the limit is exceeded, s.
    pub first_violation_t: Option<f64>,
}

/// Result of [`check`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitCheck {
    pub ok: bool,
    pub velocity: Peak,
    pub acceleration: Peak,
    pub jerk: Peak,
}

impl LimitCheck {
    fn ratios(&self) -> (f64, f64, f64) {
        (
            self.velocity.ratio,
            self.acceleration.ratio,
            self.jerk.ratio,
        )
    }
}

/// Cable lengths and their rates at every sample: `[sample][cable]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CableRates {
    pub t: Vec<f64>,
    pub length: Vec<Vec<f64>>,
    pub velocity: Vec<Vec<f64>>,
    pub acceleration: Vec<Vec<f64>>,
}

fn jacobian(robot: &Robot, pose: &Pose) -> DMatrix<f64> {
    kinematics::inverse(robot, pose).pose_jacobian()
}

/// Cable lengths, velocities (J q̇) and accelerations (J q̈ + J̇ q̇) at every sample.
pub fn cable_rates(robot: &Robot, trajectory: &Trajectory) -> CableRates {
    let n = robot.dof.count();
    let mut rates = CableRates {
        t: Vec::with_capacity(trajectory.samples.len()),
        length: Vec::with_capacity(trajectory.samples.len()),
        velocity: Vec::with_capacity(trajectory.samples.len()),
        acceleration: Vec::with_capacity(trajectory.samples.len()),
    };
    for s in &trajectory.samples {
        let ik = kinematics::inverse(robot, &s.pose);
        let j = ik.pose_jacobian();
        let qd = DVector::from_column_slice(&s.velocity[..n]);
        let qdd = DVector::from_column_slice(&s.acceleration[..n]);
        let mut ldd = &j * &qdd;
        let speed = qd.amax();
        if speed > 0.0 {
            // J̇ q̇ = d/dh J(q + h q̇) q̇, central difference over a 0.1 mm step.
            let h = 1e-4 / speed;
            let shifted = |sign: f64| {
                let mut q = s.pose.to_array();
                for k in 0..n {
                    q[k] += sign * h * qd[k];
                }
                jacobian(robot, &Pose::from_array(q))
            };
            ldd += (shifted(1.0) - shifted(-1.0)) * &qd / (2.0 * h);
        }
        rates.t.push(s.t);
        rates.length.push(ik.lengths());
        rates.velocity.push((&j * &qd).as_slice().to_vec());
        rates.acceleration.push(ldd.as_slice().to_vec());
    }
    rates
}

/// Running peak of |values| against a limit.
struct PeakTracker<'a> {
    robot: &'a Robot,
    peak: Peak,
}

impl<'a> PeakTracker<'a> {
    fn new(robot: &'a Robot, limit: f64) -> PeakTracker<'a> {
        PeakTracker {
            robot,
            peak: Peak {
                value: 0.0,
                limit,
                ratio: 0.0,
                cable: String::new(),
                t: 0.0,
                violations: 0,
                first_violation_t: None,
            },
        }
    }

    fn see(&mut self, values: &[f64], t: f64) {
        for (cable, v) in values.iter().enumerate() {
            let m = v.abs();
            if m > self.peak.limit {
                self.peak.violations += 1;
                self.peak.first_violation_t.get_or_insert(t);
            }
            if m > self.peak.value {
                self.peak.value = m;
                self.peak.t = t;
                self.peak.cable = self.robot.cables[cable].name.clone();
            }
        }
    }

    fn done(mut self) -> Peak {
        self.peak.ratio = self.peak.value / self.peak.limit;
        self.peak
    }
}

/// A cable-space quantity compared with a winch limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKind {
    Velocity,
    Acceleration,
    Jerk,
}

/// Every cable-space value [`check`] compares with the winch limits, in time order:
/// `f(kind, k, t, values)` (one value per cable) gets at each sample k its velocity J q̇ and
/// acceleration J q̈ + J̇ q̇, then, between samples k and k+1 (at their mid-time, k the earlier
/// one), the difference quotients of the velocities (an acceleration) and of the accelerations
/// (a jerk).
pub fn visit_rates(rates: &CableRates, mut f: impl FnMut(RateKind, usize, f64, &[f64])) {
    let cables = rates.velocity.first().map_or(0, Vec::len);
    let mut quotient = vec![0.0; cables];
    for k in 0..rates.t.len() {
        f(RateKind::Velocity, k, rates.t[k], &rates.velocity[k]);
        f(
            RateKind::Acceleration,
            k,
            rates.t[k],
            &rates.acceleration[k],
        );
        if k + 1 < rates.t.len() {
            let dt = rates.t[k + 1] - rates.t[k];
            let mid = (rates.t[k] + rates.t[k + 1]) / 2.0;
            for (c, q) in quotient.iter_mut().enumerate() {
                *q = (rates.velocity[k + 1][c] - rates.velocity[k][c]) / dt;
            }
            f(RateKind::Acceleration, k, mid, &quotient);
            for (c, q) in quotient.iter_mut().enumerate() {
                *q = (rates.acceleration[k + 1][c] - rates.acceleration[k][c]) / dt;
            }
            f(RateKind::Jerk, k, mid, &quotient);
        }
    }
}

/// Checks every cable's velocity, acceleration and jerk against `limits`.
pub fn check(
    robot: &Robot,
    trajectory: &Trajectory,
    limits: &CableLimits,
) -> Result<LimitCheck, TrajectoryError> {
    for (name, value) in [
        ("max_velocity", limits.max_velocity),
        ("max_acceleration", limits.max_acceleration),
        ("max_jerk", limits.max_jerk),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(TrajectoryError::Option {
                name,
                value: value.to_string(),
                reason: "a winch limit must be a positive number".into(),
            });
        }
    }
    let rates = cable_rates(robot, trajectory);
    let mut velocity = PeakTracker::new(robot, limits.max_velocity);
    let mut acceleration = PeakTracker::new(robot, limits.max_acceleration);
    let mut jerk = PeakTracker::new(robot, limits.max_jerk);
    visit_rates(&rates, |kind, _, t, values| match kind {
        RateKind::Velocity => velocity.see(values, t),
        RateKind::Acceleration => acceleration.see(values, t),
        RateKind::Jerk => jerk.see(values, t),
    });
    let (velocity, acceleration, jerk) = (velocity.done(), acceleration.done(), jerk.done());
    Ok(LimitCheck {
        ok: velocity.violations + acceleration.violations + jerk.violations == 0,
        velocity,
        acceleration,
        jerk,
    })
}

/// The trajectory played `factor` (≥ 1) times slower, sampled every `dt` from its start:
/// positions by cubic Hermite interpolation of the original samples (exact at them, O(Δt⁴)
/// between), velocities /factor, accelerations /factor².
/// More than [`MAX_SAMPLES`](super::MAX_SAMPLES) samples is an error.
pub fn stretch(
    trajectory: &Trajectory,
    factor: f64,
    dt: f64,
) -> Result<Trajectory, TrajectoryError> {
    let samples = &trajectory.samples;
    if samples.is_empty() {
        return Ok(trajectory.clone());
    }
    let t0 = trajectory.start_time();
    let count = super::sample_budget(
        trajectory.duration() * factor,
        dt,
        "the time-scaled trajectory",
        "dt, accel or jerk, or the trajectory",
    )?;
    let out = (0..count)
        .map(|n| {
            let t = t0 + n as f64 * dt;
            let tau = (t0 + (t - t0) / factor).min(t0 + trajectory.duration());
            let k = samples.partition_point(|s| s.t <= tau);
            let mut sample = if k == 0 || k >= samples.len() {
                let s = samples[k.min(samples.len() - 1)];
                Sample { t, ..s }
            } else {
                hermite(&samples[k - 1], &samples[k], tau, t)
            };
            for c in 0..6 {
                sample.velocity[c] /= factor;
                sample.acceleration[c] /= factor * factor;
            }
            sample
        })
        .collect();
    Ok(Trajectory {
        samples: out,
        segments: trajectory.segments.clone(),
    })
}

fn hermite(a: &Sample, b: &Sample, tau: f64, t: f64) -> Sample {
    let h = b.t - a.t;
    let u = (tau - a.t) / h;
    let (u2, u3) = (u * u, u * u * u);
    let (h00, h10, h01, h11) = (
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        -2.0 * u3 + 3.0 * u2,
        u3 - u2,
    );
    let (pa, pb) = (a.pose.to_array(), b.pose.to_array());
    let mut pose = [0.0; 6];
    let mut velocity = [0.0; 6];
    let mut acceleration = [0.0; 6];
    for c in 0..6 {
        pose[c] = h00 * pa[c] + h10 * h * a.velocity[c] + h01 * pb[c] + h11 * h * b.velocity[c];
        velocity[c] = a.velocity[c] + (b.velocity[c] - a.velocity[c]) * u;
        acceleration[c] = a.acceleration[c] + (b.acceleration[c] - a.acceleration[c]) * u;
    }
    Sample {
        t,
        pose: Pose::from_array(pose),
        velocity,
        acceleration,
        segment: a.segment,
    }
}

/// Result of [`time_scale`].
#[derive(Debug, Clone, PartialEq)]
pub struct TimeScaled {
    pub trajectory: Trajectory,
    /// Duration ratio new/old (1 when the input already respects the limits).
    pub factor: f64,
    /// Check of the returned trajectory.
    pub check: LimitCheck,
}

/// Slows `trajectory` down uniformly (t → factor·t) until it respects `limits`, resampled
/// every `dt`. A smooth trajectory's cable velocity scales as 1/factor, acceleration 1/factor²
/// and jerk 1/factor³, which gives the first factor; steps in velocity or acceleration (seen
/// at the sampling period) only scale as 1/factor and 1/factor², so a remaining violation is
/// corrected with those laws. Fails if the limits are still exceeded after 20 rounds.
pub fn time_scale(
    robot: &Robot,
    trajectory: &Trajectory,
    limits: &CableLimits,
    dt: f64,
) -> Result<TimeScaled, TrajectoryError> {
    if !(dt.is_finite() && dt > 0.0) {
        return Err(TrajectoryError::Option {
            name: "dt",
            value: dt.to_string(),
            reason: "the sampling period must be a positive number of seconds".into(),
        });
    }
    if trajectory.samples.len() < 2 {
        return Err(TrajectoryError::Geometry(
            "time scaling needs at least two samples".into(),
        ));
    }
    let mut factor = 1.0;
    let mut check = check(robot, trajectory, limits)?;
    if check.ok {
        return Ok(TimeScaled {
            trajectory: trajectory.clone(),
            factor,
            check,
        });
    }
    for round in 0..20 {
        let (rv, ra, rj) = check.ratios();
        let step = if round == 0 {
            rv.max(ra.sqrt()).max(rj.cbrt())
        } else {
            rv.max(ra).max(rj.sqrt())
        };
        factor *= step.max(1.0) * 1.0001;
        let scaled = stretch(trajectory, factor, dt)?;
        check = self::check(robot, &scaled, limits)?;
        if check.ok {
            return Ok(TimeScaled {
                trajectory: scaled,
                factor,
                check,
            });
        }
    }
    Err(TrajectoryError::Geometry(format!(
        "could not slow the trajectory down enough to respect the winch limits (factor {factor:.3}; peaks/limits: velocity {:.3}, acceleration {:.3}, jerk {:.3})",
        check.velocity.ratio, check.acceleration.ratio, check.jerk.ratio
    )))
}
