//! A run digested into what `cdpr simulate` reports: tracking metrics against the command,
//! the tension range, the speed, the warnings ([`SimulationReport`], whose serde form is
//! `--json`), gathered record by record in constant memory per step ([`RunDigest`]). The
//! command line only formats the report.

use super::record::Record;
use super::{RunOptions, RunOutcome, RunSummary};
use crate::metrics::{self, CompareOptions, Comparison, Point, Track};
use crate::robot::{Mechanism, Robot};
use crate::sim::{ControlMode, ModelKind};
use crate::trajectory::Trajectory;
use nalgebra::Vector3;
use serde::Serialize;

/// How tracking is judged: seed 000's metrics on positions, or angle errors for a platform
/// that only turns; the reason when the metrics cannot be computed.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Tracking {
    Metrics(Comparison),
    Angles { angles: Vec<AngleErrors> },
    MetricsError { metrics_error: String },
}

/// A run summarised. Its serde form is `cdpr simulate --json`.
#[derive(Debug, Clone, Serialize)]
pub struct SimulationReport {
    #[serde(flatten)]
    pub tracking: Tracking,
    /// Simulated seconds per wall-clock second.
    pub rtf: f64,
    pub steps: u64,
    pub wall_s: f64,
    /// How the wall time splits (filled in by [`crate::job::Job::run`], which times the phases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_split: Option<WallSplit>,
    /// Simulated time of the last recorded step (None: nothing recorded).
    pub simulated_s: Option<f64>,
    pub model: ModelKind,
    pub control: ControlMode,
    /// Steps whose demand the model pulled back into the robot's reach.
    pub limited_steps: u64,
    pub compensate: bool,
    pub dt: f64,
    /// Smallest and largest tension (cables) or axial force (legs) recorded, N; None when
    /// the model has no such channels (the surrogate of a robot with legs).
    pub tension_min: Option<f64>,
    pub tension_max: Option<f64>,
    /// Cables that went below the robot's minimum tension during the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub low_tension: Vec<LowTension>,
    /// Robots with drives: per drive its peak and RMS torque and the time at its limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drives: Vec<DriveLoad>,
    /// Where the platform left the region it can physically be in (the run is not
    /// physical from there on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escape: Option<Escape>,
    /// Why the run stopped early (what was recorded before is kept).
    pub error: Option<String>,
    /// Things the user should know about the run (printed as warnings, not errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The run was interrupted (Ctrl-C) before its end: everything is of the steps before.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Records handed out (the start and every good step).
    #[serde(skip)]
    pub records: u64,
}

/// Where the wall time of a run went, s: loading the robot and trajectory, stepping the
/// physics (with the per-step bookkeeping), writing the CSV, computing the metrics. The four
/// add up to the reported wall time (`other_s` takes the rest: printing, the output file's
/// creation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WallSplit {
    pub load_s: f64,
    pub physics_s: f64,
    pub output_s: f64,
    pub metrics_s: f64,
    pub other_s: f64,
}

/// Tracking metrics of `outcome` (a run of `trajectory` with `options`) against its command.
/// `remove_lag`: compare after removing the lag (seed 000's Table 1) or at equal instants.
pub fn simulation_report(
    robot: &Robot,
    outcome: &RunOutcome,
    source: &Trajectory,
    options: &RunOptions,
    remove_lag: bool,
) -> SimulationReport {
    let mut digest = RunDigest::new(robot, source, options);
    for r in &outcome.records {
        digest.push(&r.as_record());
    }
    let summary = RunSummary {
        steps: outcome.steps,
        records: outcome.records.len() as u64,
        simulated_s: outcome.records.last().map(|r| r.state.time),
        wall_s: outcome.wall_s,
        error: None,
        stopped: false,
        uncompensated_steps: outcome.uncompensated_steps,
        limited_steps: outcome.limited_steps,
    };
    let mut report = digest.report(&summary, remove_lag);
    report.error = outcome.error.as_ref().map(|e| e.to_string());
    report
}

/// Time a cable spent below the robot's minimum tension.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LowTension {
    /// 1-based cable number and its name in the robot file.
    pub cable: usize,
    pub name: String,
    /// Total time below the minimum, s (steps × dt).
    pub seconds: f64,
    /// First recorded time below the minimum, s.
    pub first_s: f64,
    /// Lowest tension recorded, N.
    pub lowest: f64,
}

/// What one drive gave over a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriveLoad {
    /// 1-based, with its cable's name.
    pub drive: usize,
    pub name: String,
    /// Largest |τ|, N·m, and in % of rated.
    pub peak_torque: f64,
    pub peak_percent: f64,
    /// RMS torque, N·m, and in % of rated (the motor's heating: rated is its continuous).
    pub rms_torque: f64,
    pub rms_percent: f64,
    /// Time at the torque limit, s, and when it was first reached.
    pub at_limit_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_at_limit_s: Option<f64>,
}

/// The drives' figures as a table, one line each after a header (what `cdpr simulate` and
/// `cdpr shadow` print); nothing without drives.
pub fn drive_table(loads: &[DriveLoad]) -> Vec<String> {
    if loads.is_empty() {
        return Vec::new();
    }
    let width = loads.iter().map(|d| d.name.len()).max().unwrap_or(0).max(5);
    let mut lines = vec![format!(
        "{:<w$}  peak N·m  peak %  RMS N·m  RMS %  at limit",
        "drive",
        w = width + 3
    )];
    for d in loads {
        lines.push(format!(
            "{:>2} {:<w$}  {:>8.3}  {:>6.1}  {:>7.3}  {:>5.1}  {:>6.3} s",
            d.drive,
            d.name,
            d.peak_torque,
            d.peak_percent,
            d.rms_torque,
            d.rms_percent,
            d.at_limit_s,
            w = width
        ));
    }
    lines
}

/// Each drive's torque gathered step by step ([`DriveLoad`]s in constant memory): the
/// headless run's digest and the shadow's summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DriveTally {
    drives: Vec<crate::robot::Drive>,
    names: Vec<String>,
    /// The step between two pushes, s (time at the limit is steps × it).
    dt: f64,
    /// Per drive: Σ τ², peak |τ|, steps at the limit, first time at it.
    sums: Vec<(f64, f64, u64, Option<f64>)>,
    steps: u64,
}

impl DriveTally {
    /// For `robot`'s drives, pushed every `dt`.
    pub fn new(robot: &Robot, dt: f64) -> DriveTally {
        DriveTally {
            drives: robot.drives.clone(),
            names: robot.cables.iter().map(|c| c.name.clone()).collect(),
            dt,
            sums: vec![(0.0, 0.0, 0, None); robot.drives.len()],
            steps: 0,
        }
    }

    /// One step's torques at time `t` (ignored unless one per drive).
    pub fn push(&mut self, t: f64, torques: &[f64]) {
        if torques.len() != self.drives.len() || torques.is_empty() {
            return;
        }
        self.steps += 1;
        for ((sum, d), &tau) in self.sums.iter_mut().zip(&self.drives).zip(torques) {
            sum.0 += tau * tau;
            sum.1 = sum.1.max(tau.abs());
            if tau.abs() >= d.torque_limit * (1.0 - 1e-9) {
                sum.2 += 1;
                sum.3.get_or_insert(t);
            }
        }
    }

    /// The figures so far.
    pub fn loads(&self) -> Vec<DriveLoad> {
        let dt = self.dt;
        let n = self.steps.max(1) as f64;
        self.drives
            .iter()
            .zip(&self.sums)
            .enumerate()
            .map(|(k, (d, &(sq, peak, limit, first)))| {
                let rms = (sq / n).sqrt();
                DriveLoad {
                    drive: k + 1,
                    name: self.names.get(k).cloned().unwrap_or_default(),
                    peak_torque: peak,
                    peak_percent: d.percent_of_rated(peak),
                    rms_torque: rms,
                    rms_percent: d.percent_of_rated(rms),
                    at_limit_s: limit as f64 * dt,
                    first_at_limit_s: first,
                }
            })
            .collect()
    }
}

/// Where the platform left the region it can physically be in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Escape {
    pub t: f64,
    /// Platform position then, m.
    pub position: [f64; 3],
    /// The region: the robot's frame and workspace boxes, grown by a tenth of their size, m.
    pub box_min: [f64; 3],
    pub box_max: [f64; 3],
}

impl Escape {
    /// The escape in words: when, where, and why the run is then not physical.
    pub fn message(&self) -> String {
        format!(
            "the platform left the robot's frame at t = {:.3} s (at x {:.3}, y {:.3}, z {:.3} m; \
             the frame and workspace span x {:.3} … {:.3}, y {:.3} … {:.3}, z {:.3} … {:.3} m with a margin): \
             the run is not physical (slack cables, an unreachable pose, too heavy a payload?)",
            self.t,
            self.position[0],
            self.position[1],
            self.position[2],
            self.box_min[0],
            self.box_max[0],
            self.box_min[1],
            self.box_max[1],
            self.box_min[2],
            self.box_max[2]
        )
    }
}

/// What the report of a run needs, gathered record by record: per step the time, the
/// commanded and the actual position (or roll, pitch, yaw for a platform that only turns) and
/// the segment tag — eight numbers, whatever the number of cables; tension extremes and
/// low-tension spans in constant memory.
pub struct RunDigest {
    turns_only: bool,
    dt: f64,
    config: (ModelKind, ControlMode),
    compensate: bool,
    tension_floor: Option<f64>,
    cable_names: Vec<String>,
    region: (Vector3<f64>, Vector3<f64>),
    segment_names: Vec<String>,
    t: Vec<f64>,
    commanded: Vec<Point>,
    actual: Vec<Point>,
    segment: Vec<Option<usize>>,
    tension: Option<(f64, f64)>,
    /// Per cable: steps below the floor, first time, lowest value.
    low: Vec<(u64, f64, f64)>,
    escape: Option<Escape>,
    records: u64,
    drives: DriveTally,
}

impl RunDigest {
    /// An empty digest for a run of `source` on `robot` with `options`.
    pub fn new(robot: &Robot, source: &Trajectory, options: &RunOptions) -> RunDigest {
        let (lo, hi) = (
            robot.frame.min.inf(&robot.workspace.min),
            robot.frame.max.sup(&robot.workspace.max),
        );
        let margin = 0.1 * (hi - lo).max();
        let margin = Vector3::repeat(margin.max(0.05));
        let cables = robot.is_cable_robot();
        RunDigest {
            turns_only: turns_only(robot),
            dt: options.config.dt,
            config: (options.config.model, options.config.control),
            compensate: options.compensate,
            tension_floor: cables.then_some(robot.tension.min),
            cable_names: robot.cables.iter().map(|c| c.name.clone()).collect(),
            region: (lo - margin, hi + margin),
            segment_names: source.segments.clone(),
            t: Vec::new(),
            commanded: Vec::new(),
            actual: Vec::new(),
            segment: Vec::new(),
            tension: None,
            low: vec![(0, 0.0, f64::INFINITY); robot.cable_count()],
            escape: None,
            records: 0,
            drives: DriveTally::new(robot, options.config.dt),
        }
    }

    /// Takes one record (the start first, then every step in order).
    pub fn push(&mut self, r: &Record<'_>) {
        let channels = |p: &crate::kinematics::Pose| -> Point {
            if self.turns_only {
                [p.rpy.x, p.rpy.y, p.rpy.z]
            } else {
                [p.position.x, p.position.y, p.position.z]
            }
        };
        self.t.push(r.state.time);
        self.commanded.push(channels(&r.commanded.pose));
        self.actual.push(channels(&r.state.pose));
        self.segment.push(r.commanded.segment);
        let first = self.records == 0;
        self.records += 1;
        // The start is the rest state the run begins from, not a step: its tensions (the
        // settled pre-tension) are not part of the summary.
        if first {
            return;
        }
        self.drives.push(r.state.time, &r.state.motor_torques);
        for &f in &r.state.tensions {
            self.tension = Some(match self.tension {
                None => (f, f),
                Some((lo, hi)) => (lo.min(f), hi.max(f)),
            });
        }
        if let Some(floor) = self.tension_floor
            && r.state.tensions.len() == self.low.len()
        {
            for (low, &f) in self.low.iter_mut().zip(&r.state.tensions) {
                if f < floor {
                    if low.0 == 0 {
                        low.1 = r.state.time;
                    }
                    low.0 += 1;
                    low.2 = low.2.min(f);
                }
            }
        }
        let p = r.state.pose.position;
        let (lo, hi) = &self.region;
        if self.escape.is_none() && (0..3).any(|k| p[k] < lo[k] || p[k] > hi[k]) {
            self.escape = Some(Escape {
                t: r.state.time,
                position: [p.x, p.y, p.z],
                box_min: [lo.x, lo.y, lo.z],
                box_max: [hi.x, hi.y, hi.z],
            });
        }
    }

    /// Where the platform first left its physical region, if it did.
    pub fn escape(&self) -> Option<&Escape> {
        self.escape.as_ref()
    }

    /// The report: tracking metrics of the recorded steps against their command, the tension
    /// range and its warnings. `remove_lag`: compare after removing the lag (seed 000's Table
    /// 1) or at equal instants.
    pub fn report(&self, summary: &RunSummary, remove_lag: bool) -> SimulationReport {
        let reference = Track {
            t: &self.t,
            points: &self.commanded,
            segment: &self.segment,
            segment_names: &self.segment_names,
        };
        let actual = Track {
            t: &self.t,
            points: &self.actual,
            segment: &[],
            segment_names: &[],
        };
        let tracking = if self.turns_only {
            Tracking::Angles {
                angles: angle_errors_of(&reference, &actual),
            }
        } else {
            let compare = CompareOptions {
                remove_lag,
                ..CompareOptions::default()
            };
            match metrics::compare_tracks(&reference, &actual, &compare) {
                Ok(c) => Tracking::Metrics(c),
                Err(e) => Tracking::MetricsError {
                    metrics_error: e.to_string(),
                },
            }
        };
        let (model, control) = self.config;
        let mut warnings = Vec::new();
        if self.compensate && control == ControlMode::Tension {
            warnings.push(format!(
                "{} has no effect in tension mode",
                crate::options::Name("compensate")
            ));
        }
        if summary.uncompensated_steps > 0 {
            warnings.push(format!(
                "the command was adjusted on {} steps (tension distribution infeasible: plain IK lengths; or the pose out of the robot's reach: pulled back)",
                summary.uncompensated_steps
            ));
        }
        let low_tension = self.low_tension();
        if let Some(floor) = self.tension_floor {
            for l in &low_tension {
                warnings.push(format!(
                    "cable {} ({}) was below the robot's minimum tension {floor:.2} N for {:.3} s in total, first at t = {:.3} s (lowest {:.2} N{})",
                    l.cable,
                    l.name,
                    l.seconds,
                    l.first_s,
                    l.lowest,
                    if l.lowest <= 0.0 { ": slack" } else { "" }
                ));
            }
        }
        let drives = self.drives.loads();
        for d in drives.iter().filter(|d| d.at_limit_s > 0.0) {
            warnings.push(format!(
                "drive {} ({}) was at its torque limit for {:.3} s in total, first at t = {:.3} s",
                d.drive,
                d.name,
                d.at_limit_s,
                d.first_at_limit_s.unwrap_or(0.0)
            ));
        }
        SimulationReport {
            tracking,
            rtf: rtf(summary.simulated_s, summary.wall_s),
            steps: summary.steps,
            wall_s: summary.wall_s,
            wall_split: None,
            simulated_s: summary.simulated_s,
            model,
            control,
            limited_steps: summary.limited_steps,
            compensate: self.compensate,
            dt: self.dt,
            tension_min: self.tension.map(|r| r.0),
            tension_max: self.tension.map(|r| r.1),
            low_tension,
            drives,
            escape: self.escape.clone(),
            error: summary.error.as_ref().map(|e| e.to_string()),
            warnings,
            interrupted: false,
            records: summary.records,
        }
    }

    /// The cables that went below the robot's minimum tension, in cable order.
    pub fn low_tension(&self) -> Vec<LowTension> {
        self.low
            .iter()
            .enumerate()
            .filter(|(_, l)| l.0 > 0)
            .map(|(i, &(steps, first_s, lowest))| LowTension {
                cable: i + 1,
                name: self.cable_names.get(i).cloned().unwrap_or_default(),
                seconds: steps as f64 * self.dt,
                first_s,
                lowest,
            })
            .collect()
    }
}

/// Simulated seconds per wall-clock second.
pub fn rtf(simulated_s: Option<f64>, wall_s: f64) -> f64 {
    let simulated = simulated_s.unwrap_or(0.0);
    if wall_s > 0.0 {
        simulated / wall_s
    } else {
        f64::INFINITY
    }
}

/// A platform that only turns (the 2-RSSU): its tracking is judged in angles.
pub fn turns_only(robot: &Robot) -> bool {
    matches!(robot.mechanism, Mechanism::Rssu2(_))
}

/// Tracking of one segment (or the total) in angles: RMS and largest error of roll and pitch
/// (degrees) and seed 004's NRMSE (None for a constant reference).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AngleErrors {
    pub segment: String,
    pub rms_roll_deg: f64,
    pub max_roll_deg: f64,
    pub rms_pitch_deg: f64,
    pub max_pitch_deg: f64,
    pub nrmse_roll: Option<f64>,
    pub nrmse_pitch: Option<f64>,
}

/// Commanded against simulated at the same instants (no lag removed), per segment then total.
pub fn angle_errors(reference: &Trajectory, actual: &Trajectory) -> Vec<AngleErrors> {
    let angles = |traj: &Trajectory| -> Vec<Point> {
        traj.samples
            .iter()
            .map(|s| [s.pose.rpy.x, s.pose.rpy.y, s.pose.rpy.z])
            .collect()
    };
    let (r, a) = (angles(reference), angles(actual));
    let t: Vec<f64> = reference.samples.iter().map(|s| s.t).collect();
    let segment: Vec<Option<usize>> = reference.samples.iter().map(|s| s.segment).collect();
    angle_errors_of(
        &Track {
            t: &t,
            points: &r,
            segment: &segment,
            segment_names: &reference.segments,
        },
        &Track {
            t: &t,
            points: &a,
            segment: &[],
            segment_names: &[],
        },
    )
}

/// [`angle_errors`] on tracks whose points are (roll, pitch, yaw).
fn angle_errors_of(reference: &Track, actual: &Track) -> Vec<AngleErrors> {
    let mut names: Vec<String> = reference.segment_names.to_vec();
    names.push("TOTAL".into());
    let n_pairs = reference.points.len().min(actual.points.len());
    let mut out = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let total = k == reference.segment_names.len();
        let pairs: Vec<(&Point, &Point)> = (0..n_pairs)
            .filter(|&i| total || reference.segment.get(i).copied().flatten() == Some(k))
            .map(|i| (&reference.points[i], &actual.points[i]))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let stats = |dof: usize| {
            let n = pairs.len() as f64;
            let mut err2 = 0.0;
            let mut max = 0.0f64;
            let mean = pairs.iter().map(|(r, _)| r[dof]).sum::<f64>() / n;
            let mut spread = 0.0;
            for (r, a) in &pairs {
                let (x, y) = (r[dof], a[dof]);
                err2 += (x - y).powi(2);
                max = max.max((x - y).abs());
                spread += (x - mean).powi(2);
            }
            let nrmse = (spread > 1e-12 * n).then(|| 1.0 - (err2 / spread).sqrt());
            ((err2 / n).sqrt().to_degrees(), max.to_degrees(), nrmse)
        };
        let (roll, pitch) = (stats(0), stats(1));
        out.push(AngleErrors {
            segment: name.clone(),
            rms_roll_deg: roll.0,
            max_roll_deg: roll.1,
            rms_pitch_deg: pitch.0,
            max_pitch_deg: pitch.1,
            nrmse_roll: roll.2,
            nrmse_pitch: pitch.2,
        });
    }
    out
}

/// Smallest and largest tension (or leg force) of the recorded steps, the start (the rest
/// state before the first step) left out; None when no step was recorded.
pub fn tension_range(outcome: &RunOutcome) -> Option<(f64, f64)> {
    outcome
        .records
        .iter()
        .skip(1)
        .flat_map(|r| r.state.tensions.iter())
        .fold(None, |range, &f| match range {
            None => Some((f, f)),
            Some((lo, hi)) => Some((f64::min(lo, f), f64::max(hi, f))),
        })
}
