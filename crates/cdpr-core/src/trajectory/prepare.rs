//! `cdpr trajectory` as a library call: a trajectory loaded (built-in or CSV), optionally
//! time-scaled to the winch limits, checked against them and perturbed, summarised in a
//! serialisable [`TrajectoryReport`] (the command's `--json`).

use super::limits::{self, CableLimits, LimitCheck};
use super::perturb::{Perturbation, perturb};
use super::{BuiltinOptions, Trajectory, TrajectoryError, load};
use crate::robot::Robot;
use serde::Serialize;
use std::path::PathBuf;

/// What to do with a trajectory after loading it.
#[derive(Debug, Clone, Default)]
pub struct Preparation {
    /// Slow it down uniformly until it respects the winch limits (resampled at the built-in
    /// options' dt); implies `check`.
    pub time_scale: bool,
    /// Check the cables' velocity, acceleration and jerk against the winch limits.
    pub check: bool,
    /// Turn it into a synthetic follower's copy (after the check).
    pub perturbation: Option<Perturbation>,
}

/// Which step failed, and why.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// Names the trajectory unless its cause does already (each name printed once).
    #[error("{}", if source.to_string().contains(name.as_str()) {
        format!("trajectory for {robot}")
    } else {
        format!("trajectory `{name}` for {robot}")
    })]
    Load {
        name: String,
        robot: String,
        #[source]
        source: TrajectoryError,
    },
    #[error("time-scaling `{name}` to {robot}'s winch limits")]
    TimeScale {
        name: String,
        robot: String,
        #[source]
        source: TrajectoryError,
    },
    #[error("checking the winch limits")]
    Check(#[source] TrajectoryError),
    #[error("perturbing the trajectory")]
    Perturb(#[source] TrajectoryError),
}

/// A contiguous run of one segment tag.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentRun {
    pub name: String,
    pub start_s: f64,
    pub end_s: f64,
}

/// A prepared trajectory summarised.
#[derive(Debug, Clone, Serialize)]
pub struct TrajectoryReport {
    pub robot: String,
    pub name: String,
    pub samples: usize,
    pub start_s: f64,
    pub duration_s: f64,
    /// Length of the platform origin's path, m.
    pub path_length: f64,
    /// Largest speed of the platform origin, m/s.
    pub peak_speed: f64,
    pub segments: Vec<SegmentRun>,
    /// Samples whose position is outside the robot's `[workspace]` box (before perturbing).
    pub outside_workspace: usize,
    /// t → factor·t applied by the time-scaling.
    pub time_scale_factor: Option<f64>,
    pub perturbed: bool,
    pub check: Option<LimitCheck>,
    /// Where the trajectory was written (set by whoever writes it).
    pub out: Option<PathBuf>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl TrajectoryReport {
    /// False when the check found a limit exceeded.
    pub fn within_limits(&self) -> bool {
        self.check.as_ref().is_none_or(|c| c.ok)
    }
}

/// Loads `name` for `robot` and prepares it; returns the trajectory and its summary.
pub fn prepare(
    robot: &Robot,
    name: &str,
    options: &BuiltinOptions,
    preparation: &Preparation,
) -> Result<(Trajectory, TrajectoryReport), PrepareError> {
    let mut traj = load(name, robot, options).map_err(|source| PrepareError::Load {
        name: name.to_string(),
        robot: robot.name.clone(),
        source,
    })?;
    let cable_limits = CableLimits::of(robot);
    let mut factor = None;
    if preparation.time_scale {
        let scaled =
            limits::time_scale(robot, &traj, &cable_limits, options.dt).map_err(|source| {
                PrepareError::TimeScale {
                    name: name.to_string(),
                    robot: robot.name.clone(),
                    source,
                }
            })?;
        factor = Some(scaled.factor);
        traj = scaled.trajectory;
    }
    let check = if preparation.check || preparation.time_scale {
        Some(limits::check(robot, &traj, &cable_limits).map_err(PrepareError::Check)?)
    } else {
        None
    };
    let outside = traj
        .samples
        .iter()
        .filter(|s| !robot.workspace.contains(&s.pose.position))
        .count();
    let mut warnings = Vec::new();
    if outside > 0 {
        warnings.push(format!(
            "{outside} of {} samples are outside {}'s workspace",
            traj.samples.len(),
            robot.name
        ));
    }
    if let Some(p) = &preparation.perturbation {
        traj = perturb(&traj, p).map_err(PrepareError::Perturb)?;
    }
    let report = TrajectoryReport {
        robot: robot.name.clone(),
        name: name.to_string(),
        samples: traj.samples.len(),
        start_s: traj.start_time(),
        duration_s: traj.duration(),
        path_length: path_length(&traj),
        peak_speed: peak_speed(&traj),
        segments: segment_runs(&traj),
        outside_workspace: outside,
        time_scale_factor: factor,
        perturbed: preparation.perturbation.is_some(),
        check,
        out: None,
        warnings,
    };
    Ok((traj, report))
}

/// Start and end time of each contiguous run of a segment tag.
pub fn segment_runs(t: &Trajectory) -> Vec<SegmentRun> {
    let mut runs: Vec<SegmentRun> = Vec::new();
    for s in &t.samples {
        let name = t.segment_name(s).unwrap_or("");
        match runs.last_mut() {
            Some(last) if last.name == name => last.end_s = s.t,
            _ => runs.push(SegmentRun {
                name: name.to_string(),
                start_s: s.t,
                end_s: s.t,
            }),
        }
    }
    runs
}

/// Largest speed of the platform origin over the samples, m/s.
pub fn peak_speed(t: &Trajectory) -> f64 {
    t.samples
        .iter()
        .map(|s| (s.velocity[0].powi(2) + s.velocity[1].powi(2) + s.velocity[2].powi(2)).sqrt())
        .fold(0.0, f64::max)
}

/// Length of the polyline through the samples' positions, m.
pub fn path_length(t: &Trajectory) -> f64 {
    t.samples
        .windows(2)
        .map(|w| (w[1].pose.position - w[0].pose.position).norm())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed000_summary_matches_the_papers_geometry() {
        // Seed 000 §5's test at 0.1 m/s: three 0.2 m squares (0.8 m each) and the diagonal of
        // the 0.2 × 0.2 × 0.2 m box up and back (2 · 0.2√3 m): 2.4 + 0.4√3 ≈ 3.093 m of path,
        // cruising at 0.1 m/s, in the five tagged segments XY XZ YZ Up Down.
        let robot = crate::fixtures::uvigo8();
        let options = BuiltinOptions {
            speed: 0.1,
            ..BuiltinOptions::default()
        };
        let preparation = Preparation {
            check: true,
            ..Preparation::default()
        };
        let (traj, report) = prepare(&robot, "seed000", &options, &preparation).expect("builds");
        // The samples (every 2 ms) need not fall on a move's first and last instants: each of
        // the 14 moves (4 edges × 3 squares, up, down) may lose at most the travel of one
        // sample accelerating from rest at 3 m/s², ½ a dt² = 6 µm, at each end.
        let expected = 2.4 + 0.4 * 3f64.sqrt();
        let bound = 14.0 * 2.0 * 0.5 * 3.0 * 0.002f64.powi(2);
        assert!(
            report.path_length <= expected + 1e-12 && expected - report.path_length < bound,
            "{} vs {expected}",
            report.path_length
        );
        assert!(
            (report.peak_speed - 0.1).abs() < 1e-9,
            "{}",
            report.peak_speed
        );
        let names: Vec<&str> = report.segments.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["XY", "XZ", "YZ", "Up", "Down"]);
        assert_eq!(report.samples, traj.samples.len());
        assert_eq!(report.outside_workspace, 0);
        // A pure translation pays cables out at |d·v| ≤ |v| = 0.1 m/s, a fifth of uvigo8's
        // 0.5 m/s; the trapezoid steps the acceleration by 3 m/s² within one 2 ms sample, a
        // jerk of ~1500 m/s³ against the winch's 50: the check must say so.
        let check = report.check.as_ref().expect("checked");
        assert!(check.velocity.ratio <= 0.2 + 1e-9, "{:?}", check.velocity);
        assert!(check.jerk.ratio > 1.0, "{:?}", check.jerk);
        assert!(!report.within_limits());
        assert!(report.warnings.is_empty());
        assert_eq!(report.segments[0].start_s, traj.start_time());
        assert_eq!(
            report.segments[4].end_s,
            traj.start_time() + traj.duration()
        );
    }

    #[test]
    fn an_unknown_name_fails_at_the_load_step_naming_robot_and_name() {
        let robot = crate::fixtures::uvigo8();
        let err = prepare(
            &robot,
            "no-such",
            &BuiltinOptions::default(),
            &Preparation::default(),
        )
        .expect_err("unknown");
        assert!(matches!(err, PrepareError::Load { .. }));
        // The cause names the trajectory: the context does not repeat it.
        assert_eq!(err.to_string(), "trajectory for uvigo8");
        let cause = std::error::Error::source(&err)
            .expect("a cause")
            .to_string();
        assert!(cause.contains("`no-such`"), "{cause}");
    }
}
