//! Pre-flight: a whole trajectory checked before it goes to the real robot (seed 003's "safe
//! start-up"), sampled finely enough to see every corner.
//!
//! **Sampling rule.** Every sample of the trajectory is checked, and each interval between two
//! consecutive samples is cut into n equal sub-intervals, n the smallest whole number that
//! makes every sub-interval move the platform's position by at most `step` (default 1 mm),
//! each angle by at most `angle_step` (default 1 mrad) and last at most `time_step` (default
//! 10 ms). Between stored samples the pose, velocity and acceleration are interpolated
//! linearly ([`Trajectory::sample_at`]: a controller's linear interpolation between set
//! points). A boundary crossed between two checked samples is therefore located within one
//! step; cable lengths move by at most `step + |b|·angle_step` between checked samples.
//!
//! **Checks** at every checked sample (margin ≥ 0 holds, margin < 0 is a violation by −margin):
//! - `workspace`: the position inside the robot file's `[workspace]` box (the box the robot is
//!   meant to work in; a cable robot's inverse kinematics exists everywhere, so the box is
//!   what "reachable" means here); margin = distance to the nearest face, m;
//! - `tensions`: a tension distribution within [f_min, f_max] moves the platform along the
//!   path: W f = −w_g + [`statics::inertial_rows`] (gravity and the platform's inertia at the
//!   sample's velocity and acceleration; minimum-norm QP); value = largest tension, margin =
//!   f_max − value, N. When no tensions ≤ f_max do, the value is the largest tension of the
//!   distribution with f_max lifted;
//! - `slack`: value = the largest achievable minimum tension (LP, tensions ≤ f_max), margin =
//!   value − f_min, N: a negative margin means some cable would have to go below f_min (slack
//!   at 0);
//! - `velocity`, `acceleration`, `jerk`: the winch limits, from the inverse kinematics' rates
//!   as [`trajectory::limits`] computes them (the jerk at the checked sampling);
//! - `wrap`: each pulley's wrap angle β ≤ its `max_wrap`, rad (robots with pulleys);
//! - `swivel`: each pulley's swivel angle γ within its `swivel_range`, rad (when given);
//! - `interference`: cables against each other, the platform and the frame, cables and
//!   platform against the robot's obstacles, each pair held to `clearance` (default 10 mm;
//!   [`interference::check`]); value = the closest pair's distance, margin = distance − its
//!   limit, m. A pluggable step ([`INTERFERENCE`]).
//!
//! A value counts as a violation only beyond a tolerance of 1e-9 of its limit's scale, so a
//! trajectory that touches a limit exactly holds.

#[cfg(test)]
mod tests;

use crate::interference;
use crate::kinematics::{self, Pose, capstan};
use crate::options::{Group, number};
use crate::robot::{Robot, TensionBounds};
use crate::statics;
use crate::trajectory::limits::{self, RateKind};
use crate::trajectory::{self, Sample, Trajectory, TrajectoryError};
use serde::Serialize;

crate::request! {
    /// What `cdpr preflight` (and Python's `cdpr.preflight`) is asked, beyond the run's robot
    /// and trajectory: how finely to check, and against what.
    #[derive(Debug, Clone, PartialEq)]
    pub struct PreflightRequest, table OPTIONS;
    /// The largest position change between checked samples, m.
    step: f64 = 1e-3,
        number(Group::Command, "m", 1e-5, 1.0, "M",
            "largest platform displacement between two checked samples (the trajectory's own \
             samples are all checked; longer intervals are subdivided)");
    /// The largest change of any angle between checked samples, rad.
    angle_step: f64 = 1e-3,
        number(Group::Command, "rad", 1e-5, 0.5, "RAD",
            "largest change of roll, pitch or yaw between two checked samples");
    /// The longest time between checked samples, s.
    time_step: f64 = 0.01,
        number(Group::Command, "s", 1e-5, 10.0, "S", "longest time between two checked samples");
    /// The clearance cables and platform keep, m.
    clearance: f64 = interference::DEFAULT_CLEARANCE, interference::CLEARANCE;
    /// A minimum tension replacing the robot file's, N.
    f_min: Option<f64> = None, statics::solutions::F_MIN;
    /// A maximum tension replacing the robot file's, N.
    f_max: Option<f64> = None, statics::solutions::F_MAX;
}

impl PreflightRequest {
    /// The checks' settings for `robot`: its tension bounds with the request's overrides.
    pub fn options(&self, robot: &Robot) -> Result<PreflightOptions, statics::StaticsError> {
        Ok(PreflightOptions {
            step: self.step,
            angle_step: self.angle_step,
            time_step: self.time_step,
            clearance: self.clearance,
            bounds: Some(statics::tension_bounds(robot, self.f_min, self.f_max)?),
        })
    }
}

/// How finely to check, and against what.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PreflightOptions {
    /// m, see [`PreflightRequest::step`].
    pub step: f64,
    /// rad, see [`PreflightRequest::angle_step`].
    pub angle_step: f64,
    /// s, see [`PreflightRequest::time_step`].
    pub time_step: f64,
    /// Clearance cables and platform keep from each other, the frame and obstacles, m
    /// ([`interference::CLEARANCE`]).
    pub clearance: f64,
    /// Tension bounds (None: the robot file's).
    pub bounds: Option<TensionBounds>,
}

impl Default for PreflightOptions {
    fn default() -> PreflightOptions {
        let request = PreflightRequest::default();
        PreflightOptions {
            step: request.step,
            angle_step: request.angle_step,
            time_step: request.time_step,
            clearance: request.clearance,
            bounds: None,
        }
    }
}

/// Why a pre-flight could not be run (bad input, not a violation).
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error("{0}")]
    Trajectory(#[from] TrajectoryError),
    #[error("{name} = {value}: {reason}")]
    Option {
        name: &'static str,
        value: f64,
        reason: String,
    },
    #[error("{0}")]
    Robot(String),
    #[error("the trajectory has no samples")]
    Empty,
    #[error("{0}")]
    Statics(#[from] statics::StaticsError),
}

/// One measure of a check at one sample: the value, its margin to the limit (< 0: violated by
/// −margin) and what it is about (a cable, an obstacle, a face of the box).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measure {
    pub value: f64,
    pub margin: f64,
    pub subject: String,
}

/// The interference step: the worst measure of `clearance` at a pose (value = distance, m,
/// margin = distance − clearance), None when nothing can interfere (no obstacles).
pub type InterferenceStep = fn(&Robot, &Pose, f64) -> Option<Measure>;

/// The interference step plugged in (None: the check is reported as not run): the closest
/// pair of [`interference::check`] (cable–cable, cable–platform, cable–frame, cable and
/// platform against obstacles) measured against its limit.
pub const INTERFERENCE: Option<InterferenceStep> = Some(closest_pair);

/// The pair of [`interference::check`] with the smallest distance − limit: value = its
/// distance, margin = distance − limit, subject = "cable a – obstacle b".
fn closest_pair(robot: &Robot, pose: &Pose, clearance: f64) -> Option<Measure> {
    interference::check(robot, pose, clearance)
        .pairs
        .iter()
        .min_by(|a, b| (a.distance - a.limit).total_cmp(&(b.distance - b.limit)))
        .map(|p| Measure {
            value: p.distance,
            margin: p.distance - p.limit,
            subject: {
                let text = p.to_string();
                text.rsplit_once(':')
                    .map_or(text.clone(), |(who, _)| who.to_string())
            },
        })
}

/// The checks, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    Workspace,
    Tensions,
    Slack,
    Velocity,
    Acceleration,
    Jerk,
    Wrap,
    Swivel,
    Interference,
    Torque,
}

/// Every check, in report order.
pub const CHECKS: [CheckKind; 10] = [
    CheckKind::Workspace,
    CheckKind::Tensions,
    CheckKind::Slack,
    CheckKind::Velocity,
    CheckKind::Acceleration,
    CheckKind::Jerk,
    CheckKind::Wrap,
    CheckKind::Swivel,
    CheckKind::Interference,
    CheckKind::Torque,
];

impl CheckKind {
    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Workspace => "workspace",
            CheckKind::Tensions => "tensions",
            CheckKind::Slack => "slack",
            CheckKind::Velocity => "velocity",
            CheckKind::Acceleration => "acceleration",
            CheckKind::Jerk => "jerk",
            CheckKind::Wrap => "wrap",
            CheckKind::Swivel => "swivel",
            CheckKind::Interference => "interference",
            CheckKind::Torque => "torque",
        }
    }

    /// SI unit of value and margin.
    pub fn unit(self) -> &'static str {
        match self {
            CheckKind::Workspace | CheckKind::Interference => "m",
            CheckKind::Tensions | CheckKind::Slack => "N",
            CheckKind::Velocity => "m/s",
            CheckKind::Acceleration => "m/s²",
            CheckKind::Jerk => "m/s³",
            CheckKind::Wrap | CheckKind::Swivel => "rad",
            CheckKind::Torque => "N·m",
        }
    }

    fn index(self) -> usize {
        CHECKS.iter().position(|c| *c == self).unwrap_or(0)
    }
}

/// The worst of one check over a stretch of the trajectory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Worst {
    pub check: CheckKind,
    pub unit: &'static str,
    /// What the value is compared with, in words ("≤ 0.5 m/s").
    pub limit: String,
    /// False when the check does not apply (no pulleys, no swivel range, no interference
    /// step); then the fields below are null.
    pub applies: bool,
    /// Why it does not apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The value where the margin is smallest.
    pub value: Option<f64>,
    /// The smallest margin (< 0: violated by −margin).
    pub margin: Option<f64>,
    /// When, s.
    pub t: Option<f64>,
    /// Which cable, obstacle or face.
    pub subject: Option<String>,
    /// Checked samples (or sample pairs) that violate it.
    pub violations: usize,
}

/// One segment's (or the whole trajectory's) worst of every check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentReport {
    /// The segment's tag ("" for untagged samples).
    pub name: String,
    pub start: f64,
    pub end: f64,
    pub ok: bool,
    pub checks: Vec<Worst>,
}

/// The first violation in time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub t: f64,
    /// x, y, z (m), roll, pitch, yaw (rad).
    pub pose: [f64; 6],
    pub segment: String,
    pub check: CheckKind,
    pub unit: &'static str,
    pub subject: String,
    pub value: f64,
    pub limit: String,
    /// How far beyond the limit (−margin), in `unit`.
    pub by: f64,
}

/// What [`run`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreflightReport {
    pub robot: String,
    pub ok: bool,
    pub duration: f64,
    /// Samples of the trajectory as given.
    pub trajectory_samples: usize,
    /// Samples checked (the trajectory's plus the subdivisions).
    pub checked_samples: usize,
    pub options: PreflightOptions,
    pub f_min: f64,
    pub f_max: f64,
    /// Every check over the whole trajectory.
    pub total: SegmentReport,
    /// Per segment, in order of first appearance.
    pub segments: Vec<SegmentReport>,
    pub first_violation: Option<Violation>,
}

fn positive(name: &'static str, value: f64) -> Result<(), PreflightError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(PreflightError::Option {
            name,
            value,
            reason: "must be a positive number".into(),
        })
    }
}

/// The samples to check: the trajectory's own and the subdivisions of the module's rule.
pub fn checked_samples(
    trajectory: &Trajectory,
    options: &PreflightOptions,
) -> Result<Trajectory, PreflightError> {
    positive("step", options.step)?;
    positive("angle_step", options.angle_step)?;
    positive("time_step", options.time_step)?;
    let samples = &trajectory.samples;
    let mut pieces = Vec::with_capacity(samples.len());
    let mut total = 1.0f64;
    for pair in samples.windows(2) {
        let (a, b) = (pair[0].pose.to_array(), pair[1].pose.to_array());
        let moved = (0..3).map(|c| (b[c] - a[c]).powi(2)).sum::<f64>().sqrt();
        let turned = (3..6).map(|c| (b[c] - a[c]).abs()).fold(0.0, f64::max);
        let n = (moved / options.step)
            .max(turned / options.angle_step)
            .max((pair[1].t - pair[0].t) / options.time_step)
            .ceil()
            .max(1.0);
        total += n;
        pieces.push(n);
    }
    if total.is_nan() || total > trajectory::MAX_SAMPLES as f64 {
        return Err(TrajectoryError::TooManySamples {
            samples: total,
            what: "the pre-flight sampling",
            duration: trajectory.duration(),
            dt: trajectory.duration() / total.max(1.0),
            options: "step, angle_step or time_step",
        }
        .into());
    }
    let mut out = Vec::with_capacity(total as usize);
    for (k, pair) in samples.windows(2).enumerate() {
        let n = pieces[k] as usize;
        out.push(pair[0]);
        for j in 1..n {
            let t = pair[0].t + (pair[1].t - pair[0].t) * j as f64 / n as f64;
            out.push(interpolate(&pair[0], &pair[1], t));
        }
    }
    if let Some(last) = samples.last() {
        out.push(*last);
    }
    Ok(Trajectory {
        samples: out,
        segments: trajectory.segments.clone(),
    })
}

/// Linear interpolation between two samples (the segment of the earlier one).
fn interpolate(a: &Sample, b: &Sample, t: f64) -> Sample {
    let u = (t - a.t) / (b.t - a.t);
    let lerp = |x: [f64; 6], y: [f64; 6]| {
        let mut out = [0.0; 6];
        for i in 0..6 {
            out[i] = x[i] + (y[i] - x[i]) * u;
        }
        out
    };
    Sample {
        t,
        pose: Pose::from_array(lerp(a.pose.to_array(), b.pose.to_array())),
        velocity: lerp(a.velocity, b.velocity),
        acceleration: lerp(a.acceleration, b.acceleration),
        segment: a.segment,
    }
}

/// Running worst (smallest margin) of every check over one stretch.
#[derive(Debug, Clone)]
struct Tracker {
    name: String,
    start: f64,
    end: f64,
    worst: Vec<Option<(Measure, f64)>>,
    violations: Vec<usize>,
}

impl Tracker {
    fn new(name: String, t: f64) -> Tracker {
        Tracker {
            name,
            start: t,
            end: t,
            worst: vec![None; CHECKS.len()],
            violations: vec![0; CHECKS.len()],
        }
    }

    fn see(&mut self, check: CheckKind, m: &Measure, t: f64, violated: bool) {
        let i = check.index();
        self.start = self.start.min(t);
        self.end = self.end.max(t);
        if violated {
            self.violations[i] += 1;
        }
        let better = match &self.worst[i] {
            None => true,
            Some((w, _)) => m.margin < w.margin,
        };
        if better {
            self.worst[i] = Some((m.clone(), t));
        }
    }

    fn report(&self, limits: &[(String, Option<String>)]) -> SegmentReport {
        let checks: Vec<Worst> = CHECKS
            .iter()
            .map(|&check| {
                let i = check.index();
                let (limit, reason) = limits[i].clone();
                let w = self.worst[i].as_ref();
                Worst {
                    check,
                    unit: check.unit(),
                    limit,
                    applies: reason.is_none(),
                    reason,
                    value: w.map(|(m, _)| m.value),
                    margin: w.map(|(m, _)| m.margin),
                    t: w.map(|(_, t)| *t),
                    subject: w.map(|(m, _)| m.subject.clone()),
                    violations: self.violations[i],
                }
            })
            .collect();
        SegmentReport {
            name: self.name.clone(),
            start: self.start,
            end: self.end,
            ok: self.violations.iter().all(|v| *v == 0),
            checks,
        }
    }
}

/// Collects measures per segment, the whole, and the first violation.
struct Collector<'a> {
    samples: &'a Trajectory,
    total: Tracker,
    segments: Vec<Tracker>,
    /// Index into `segments` of each segment tag (+1 slot for untagged).
    slot: Vec<Option<usize>>,
    first: Option<(f64, usize, CheckKind, Measure, String)>,
    tolerance: [f64; 10],
    limit_text: Vec<(String, Option<String>)>,
}

impl Collector<'_> {
    fn see(&mut self, check: CheckKind, k: usize, t: f64, m: Measure) {
        let violated = m.margin < -self.tolerance[check.index()];
        let sample = &self.samples.samples[k];
        let tag = sample.segment.unwrap_or(self.samples.segments.len());
        let slot = match self.slot.get(tag).copied().flatten() {
            Some(s) => s,
            None => {
                let name = self.samples.segment_name(sample).unwrap_or("").to_string();
                self.segments.push(Tracker::new(name, t));
                let s = self.segments.len() - 1;
                if tag >= self.slot.len() {
                    self.slot.resize(tag + 1, None);
                }
                self.slot[tag] = Some(s);
                s
            }
        };
        self.segments[slot].see(check, &m, t, violated);
        self.total.see(check, &m, t, violated);
        if violated && self.first.as_ref().is_none_or(|(t0, ..)| t < *t0) {
            let limit = self.limit_text[check.index()].0.clone();
            self.first = Some((t, k, check, m, limit));
        }
    }
}

/// The worst over cables of per-cable margins: (value, margin, cable index).
fn worst_of(items: impl Iterator<Item = (usize, f64, f64)>) -> Option<(usize, f64, f64)> {
    items.fold(None, |best: Option<(usize, f64, f64)>, item| match best {
        Some(b) if b.2 <= item.2 => Some(b),
        _ => Some(item),
    })
}

/// Checks `trajectory` on `robot` (see the module's documentation for the sampling and the
/// checks).
pub fn run(
    robot: &Robot,
    trajectory: &Trajectory,
    options: &PreflightOptions,
) -> Result<PreflightReport, PreflightError> {
    if !robot.is_cable_robot() {
        return Err(PreflightError::Robot(format!(
            "pre-flight checks cable robots; {} is a {}",
            robot.name,
            robot.mechanism.kind()
        )));
    }
    if trajectory.samples.is_empty() {
        return Err(PreflightError::Empty);
    }
    if !(options.clearance.is_finite() && options.clearance >= 0.0) {
        return Err(PreflightError::Option {
            name: "clearance",
            value: options.clearance,
            reason: "must be a number ≥ 0".into(),
        });
    }
    let bounds = statics::tension_bounds(
        robot,
        options.bounds.map(|b| b.min),
        options.bounds.map(|b| b.max),
    )?;
    let checked = checked_samples(trajectory, options)?;
    let winch = limits::CableLimits::of(robot);
    let pulleys = robot.has_pulleys();
    let swivels = robot
        .cables
        .iter()
        .any(|c| c.pulley.as_ref().is_some_and(|p| p.swivel_range.is_some()));
    let ws = robot.workspace;
    let limit_text: Vec<(String, Option<String>)> = CHECKS
        .iter()
        .map(|check| match check {
            CheckKind::Workspace => (
                format!(
                    "in [{},{}]×[{},{}]×[{},{}]",
                    ws.min.x, ws.max.x, ws.min.y, ws.max.y, ws.min.z, ws.max.z
                ),
                None,
            ),
            CheckKind::Tensions => (format!("≤ {}", bounds.max), None),
            CheckKind::Slack => (format!("≥ {}", bounds.min), None),
            CheckKind::Velocity => (format!("≤ {}", winch.max_velocity), None),
            CheckKind::Acceleration => (format!("≤ {}", winch.max_acceleration), None),
            CheckKind::Jerk => (format!("≤ {}", winch.max_jerk), None),
            CheckKind::Wrap => (
                "≤ max_wrap".into(),
                (!pulleys).then(|| "no pulleys".to_string()),
            ),
            CheckKind::Swivel => (
                "within swivel_range".into(),
                (!swivels).then(|| "no swivel range given".to_string()),
            ),
            CheckKind::Interference => (
                format!("≥ clearance {}", options.clearance),
                INTERFERENCE
                    .is_none()
                    .then(|| "no interference step in this build".to_string()),
            ),
            CheckKind::Torque => (
                "≤ torque_limit".into(),
                (!robot.has_drives()).then(|| "no drives in the robot file".to_string()),
            ),
        })
        .collect();
    let torque_limit = robot
        .drives
        .iter()
        .map(|d| d.torque_limit)
        .fold(0.0, f64::max);
    let scale = |x: f64| 1e-9 * x.abs().max(1e-3);
    let tolerance = [
        1e-12,
        scale(bounds.max),
        scale(bounds.min.max(1.0)),
        scale(winch.max_velocity),
        scale(winch.max_acceleration),
        scale(winch.max_jerk),
        1e-12,
        1e-12,
        1e-12,
        scale(torque_limit),
    ];
    let start = checked.start_time();
    let mut c = Collector {
        samples: &checked,
        total: Tracker::new(String::new(), start),
        segments: Vec::new(),
        slot: Vec::new(),
        first: None,
        tolerance,
        limit_text: limit_text.clone(),
    };
    let name = |i: usize| robot.cables[i].name.clone();
    // Robots with drives: per checked sample the tensions and the pulleys' wraps, for the
    // torque check once the cable rates are known.
    let mut loads: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    for (k, s) in checked.samples.iter().enumerate() {
        let pose = kinematics::effective_pose(robot, &s.pose);
        let p = pose.position;
        // Workspace: distance to the nearest face (negative outside).
        let faces = (0..3).flat_map(|a| {
            let axis = ["x", "y", "z"][a];
            [
                (format!("{axis} min"), p[a] - ws.min[a]),
                (format!("{axis} max"), ws.max[a] - p[a]),
            ]
        });
        if let Some((face, d)) = faces.min_by(|a, b| a.1.total_cmp(&b.1)) {
            c.see(
                CheckKind::Workspace,
                k,
                s.t,
                Measure {
                    value: d,
                    margin: d,
                    subject: face,
                },
            );
        }
        let ik = kinematics::inverse(robot, &pose);
        // Tensions and slack.
        let w = ik.wrench_matrix();
        // Gravity and the platform's inertia along the path (Newton–Euler).
        let target = -statics::gravity_rows(robot, &ik)
            + statics::inertial_rows(robot, &pose, &s.velocity, &s.acceleration);
        let d = statics::distribute_wrench(&w, &target, bounds);
        let lifted = if d.feasible || d.largest_min_tension.is_some() {
            None
        } else {
            let relaxed = TensionBounds {
                min: bounds.min,
                max: bounds.max * 1e6,
            };
            Some(statics::distribute_wrench(&w, &target, relaxed))
        };
        let tensions = match &lifted {
            Some(l) => &l.tensions,
            None => &d.tensions,
        };
        if robot.has_drives() {
            let wraps = ik
                .cables
                .iter()
                .map(|g| g.pulley.as_ref().map_or(0.0, |p| p.wrap))
                .collect();
            loads.push((tensions.clone(), wraps));
        }
        let top = worst_of(
            tensions
                .iter()
                .enumerate()
                .map(|(i, f)| (i, *f, bounds.max - f)),
        );
        if let Some((i, f, margin)) = top {
            let margin = match &lifted {
                Some(l) if !l.feasible => -l.residual.max(tolerance[1] * 2.0),
                _ => margin,
            };
            let subject = match &lifted {
                Some(l) if !l.feasible => format!(
                    "no non-negative tensions hold the platform (residual {:.3} N)",
                    l.residual
                ),
                _ => name(i),
            };
            c.see(
                CheckKind::Tensions,
                k,
                s.t,
                Measure {
                    value: f,
                    margin,
                    subject,
                },
            );
        }
        let best = match (d.feasible, d.largest_min_tension) {
            (false, Some(t)) => Some((t, d.tensions.clone())),
            (false, None) => None,
            (true, _) => statics::largest_min_tension(&w, &target, bounds.max),
        };
        if let Some((t_min, f)) = best {
            let lowest = worst_of(f.iter().enumerate().map(|(i, x)| (i, *x, *x)));
            let subject = lowest.map_or_else(String::new, |(i, ..)| name(i));
            c.see(
                CheckKind::Slack,
                k,
                s.t,
                Measure {
                    value: t_min,
                    margin: t_min - bounds.min,
                    subject,
                },
            );
        }
        // Pulleys.
        let wraps = ik.cables.iter().enumerate().filter_map(|(i, g)| {
            let pulley = robot.cables[i].pulley.as_ref()?;
            let geo = g.pulley.as_ref()?;
            Some((i, geo.wrap, pulley.max_wrap - geo.wrap))
        });
        if let Some((i, beta, margin)) = worst_of(wraps) {
            c.see(
                CheckKind::Wrap,
                k,
                s.t,
                Measure {
                    value: beta,
                    margin,
                    subject: name(i),
                },
            );
        }
        let swivel = ik.cables.iter().enumerate().filter_map(|(i, g)| {
            let [lo, hi] = robot.cables[i].pulley.as_ref()?.swivel_range?;
            let gamma = g.pulley.as_ref()?.swivel;
            Some((i, gamma, (gamma - lo).min(hi - gamma)))
        });
        if let Some((i, gamma, margin)) = worst_of(swivel) {
            c.see(
                CheckKind::Swivel,
                k,
                s.t,
                Measure {
                    value: gamma,
                    margin,
                    subject: name(i),
                },
            );
        }
        if let Some(step) = INTERFERENCE
            && let Some(m) = step(robot, &pose, options.clearance)
        {
            c.see(CheckKind::Interference, k, s.t, m);
        }
    }
    // Winch limits, as trajectory::limits computes them.
    let rates = limits::cable_rates(robot, &checked);
    let mut seen = Vec::new();
    limits::visit_rates(&rates, |kind, k, t, values| {
        let (check, limit) = match kind {
            RateKind::Velocity => (CheckKind::Velocity, winch.max_velocity),
            RateKind::Acceleration => (CheckKind::Acceleration, winch.max_acceleration),
            RateKind::Jerk => (CheckKind::Jerk, winch.max_jerk),
        };
        if let Some((i, v, margin)) = worst_of(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| (i, v.abs(), limit - v.abs())),
        ) {
            seen.push((check, k, t, i, v, margin));
        }
    });
    for (check, k, t, i, value, margin) in seen {
        c.see(
            check,
            k,
            t,
            Measure {
                value,
                margin,
                subject: name(i),
            },
        );
    }
    // Drive torques: each motor's equation at the planned motion, τ = J·l̈/ρ + b·ω +
    // τ_c·tanh(ω/ω₀) − ρ·T_w, with the tension on the winch side of its pulley.
    for (k, (tensions, wraps)) in loads.iter().enumerate() {
        let torques = robot.drives.iter().enumerate().map(|(i, d)| {
            let rho = d.payout_per_radian();
            let rate = rates.velocity[k][i];
            let ratio = robot.cables[i]
                .pulley
                .map_or(1.0, |p| capstan::winch_ratio(p.friction, wraps[i], rate));
            let torque = d.torque_for(
                rate / rho,
                rates.acceleration[k][i] / rho,
                tensions[i] * ratio,
            );
            (i, torque.abs(), d.torque_limit - torque.abs())
        });
        if let Some((i, value, margin)) = worst_of(torques) {
            c.see(
                CheckKind::Torque,
                k,
                rates.t[k],
                Measure {
                    value,
                    margin,
                    subject: name(i),
                },
            );
        }
    }
    let first_violation = c.first.take().map(|(t, k, check, m, limit)| {
        let sample = checked.sample_at(t).unwrap_or(checked.samples[k]);
        let segment = checked
            .segment_name(&checked.samples[k])
            .unwrap_or("")
            .to_string();
        Violation {
            t,
            pose: kinematics::effective_pose(robot, &sample.pose).to_array(),
            segment,
            check,
            unit: check.unit(),
            subject: m.subject,
            value: m.value,
            limit,
            by: -m.margin,
        }
    });
    let total = c.total.report(&limit_text);
    let segments = c.segments.iter().map(|s| s.report(&limit_text)).collect();
    Ok(PreflightReport {
        robot: robot.name.clone(),
        ok: total.ok,
        duration: trajectory.duration(),
        trajectory_samples: trajectory.samples.len(),
        checked_samples: checked.samples.len(),
        options: PreflightOptions {
            bounds: Some(bounds),
            ..*options
        },
        f_min: bounds.min,
        f_max: bounds.max,
        total,
        segments,
        first_violation,
    })
}
