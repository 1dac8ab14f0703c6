//! What a headless run reports (`cdpr simulate`): tracking metrics against the command, the
//! tension range, the speed, the warnings; and the run written as CSV. The command line only
//! formats a [`SimulationReport`] (a table, or its serde form as `--json`).

use super::run::{Record, RunOptions, RunOutcome, RunSummary, csv_columns};
use super::{ControlMode, ModelKind};
use crate::metrics::{self, CompareOptions, Comparison, Point, Track};
use crate::robot::{Mechanism, Robot};
use crate::trajectory::Trajectory;
use nalgebra::Vector3;
use serde::Serialize;
use std::io::Write;
use std::ops::ControlFlow;

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
    /// How the wall time splits (filled in by the command that times the phases).
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
    /// Where the platform left the region it can physically be in (the run is not
    /// physical from there on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escape: Option<Escape>,
    /// Why the run stopped early (what was recorded before is kept).
    pub error: Option<String>,
    /// Things the user should know about the run (printed as warnings, not errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
        digest.push(r);
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

/// A headless run and its report: what [`simulate`] returns.
#[derive(Debug)]
pub struct SimulatedRun {
    /// The report (its `wall_s` and `rtf` cover the stepping loop; a command timing more
    /// than that overwrites them).
    pub report: SimulationReport,
    /// How the run went (steps, records handed out, why it stopped early).
    pub summary: RunSummary,
    /// Wall-clock time of the metrics, s.
    pub metrics_s: f64,
}

/// Runs `trajectory` on `robot` with `options` and reports it — `cdpr simulate` and `cdpr
/// sweep` share this path, so that the same settings give the same numbers. Each record
/// (the start, then every good step) is handed to `on_record` as it is computed (e.g. to
/// write it; [`ControlFlow::Break`] stops the run), `progress` gets the fraction done. The
/// number of steps is checked against [`super::run::MAX_STEPS`] before anything runs.
/// `remove_lag`: metrics after removing the lag (seed 000's Table 1) or at equal instants.
pub fn simulate(
    robot: &Robot,
    trajectory: Trajectory,
    options: &RunOptions,
    remove_lag: bool,
    progress: &mut dyn FnMut(f64),
    on_record: &mut dyn FnMut(&Record) -> ControlFlow<()>,
) -> Result<SimulatedRun, super::SimError> {
    let mut digest = RunDigest::new(robot, &trajectory, options);
    let summary = super::run::run_with(robot, trajectory, options, progress, &mut |r| {
        digest.push(r);
        on_record(r)
    })?;
    let measuring = std::time::Instant::now();
    let report = digest.report(&summary, remove_lag);
    Ok(SimulatedRun {
        report,
        summary,
        metrics_s: measuring.elapsed().as_secs_f64(),
    })
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
        }
    }

    /// Takes one record (the start first, then every step in order).
    pub fn push(&mut self, r: &Record) {
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
            warnings.push("--compensate has no effect in tension mode".to_string());
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
            escape: self.escape.clone(),
            error: summary.error.as_ref().map(|e| e.to_string()),
            warnings,
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

/// The numeric columns of a run's record, in the CSV's order (see [`write_csv`]): shared by
/// the CSV writer and the faces that hand a run over as arrays (the Python package), so both
/// give the same columns with the same numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLayout {
    cable_robot: bool,
    cables: usize,
    actuators: usize,
    legs: usize,
}

impl RecordLayout {
    /// The layout of a run on `robot` whose first record is `first` (robots with legs take
    /// their actuator and leg counts from it; None: no record, no such columns).
    pub fn new(robot: &Robot, first: Option<&Record>) -> RecordLayout {
        let cable_robot = robot.is_cable_robot();
        let (actuators, legs) = match first {
            Some(r) if !cable_robot => (r.length_command.len(), r.state.lengths.len()),
            _ => (0, 0),
        };
        RecordLayout {
            cable_robot,
            cables: robot.cable_count(),
            actuators,
            legs,
        }
    }

    /// Names of the numeric columns (the CSV's header without the trailing `segment`).
    pub fn columns(&self) -> Vec<String> {
        let mut header = csv_columns(self.cables);
        for i in 1..=self.actuators {
            header.extend([format!("actuator_cmd_{i}"), format!("actuator_{i}")]);
        }
        for i in 1..=self.legs {
            header.extend([format!("leg_length_{i}"), format!("leg_force_{i}")]);
        }
        header
    }

    /// Hands the numbers of `r` to `field`, in [`columns`](Self::columns)' order; stops at
    /// the first error `field` returns.
    pub fn numbers<E>(
        &self,
        r: &Record,
        field: &mut impl FnMut(f64) -> Result<(), E>,
    ) -> Result<(), E> {
        field(r.state.time)?;
        for v in r.commanded.pose.to_array() {
            field(v)?;
        }
        for v in r.state.pose.to_array() {
            field(v)?;
        }
        for i in 0..self.cables {
            field(r.length_command[i])?;
            field(r.state.lengths[i])?;
            field(r.state.tensions[i])?;
        }
        for i in 0..self.actuators {
            field(r.length_command[i])?;
            field(r.state.winch[i])?;
        }
        for i in 0..self.legs {
            field(r.state.lengths[i])?;
            field(r.state.tensions[i])?;
        }
        Ok(())
    }

    /// Whether the robot has cables (else legs).
    pub fn cable_robot(&self) -> bool {
        self.cable_robot
    }
}

/// Writes a run as CSV record by record (see [`write_csv`] for the columns): memory does not
/// grow with the run. The header is written with the first record (whose sizes it takes).
/// A face with columns of its own (the ADS shadow's PLC cycle and flags) names them with
/// [`CsvRecorder::with_extra_columns`] and gives their values to [`CsvRecorder::write_with`].
pub struct CsvRecorder<W: Write> {
    w: csv::Writer<W>,
    robot: Robot,
    layout: Option<RecordLayout>,
    segment_names: Vec<String>,
    /// Columns after `segment`, written by the caller.
    extra: Vec<String>,
    buf: String,
}

impl<W: Write> CsvRecorder<W> {
    /// A recorder of a run of `source` (for its segment names) on `robot`.
    pub fn new(out: W, robot: &Robot, source: &Trajectory) -> CsvRecorder<W> {
        CsvRecorder {
            w: csv::Writer::from_writer(out),
            robot: robot.clone(),
            layout: None,
            segment_names: source.segments.clone(),
            extra: Vec::new(),
            buf: String::with_capacity(32),
        }
    }

    /// The same recorder with columns `names` after `segment`, whose values each row gives
    /// to [`CsvRecorder::write_with`].
    pub fn with_extra_columns(mut self, names: &[&str]) -> CsvRecorder<W> {
        self.extra = names.iter().map(|n| n.to_string()).collect();
        self
    }

    fn header(&mut self, first: Option<&Record>) -> Result<RecordLayout, csv::Error> {
        let layout = RecordLayout::new(&self.robot, first);
        let mut header = layout.columns();
        header.push("segment".into());
        header.extend(self.extra.iter().cloned());
        self.w.write_record(&header)?;
        self.layout = Some(layout);
        Ok(layout)
    }

    /// Writes one record (the header first, on the first call). Each number is formatted
    /// into one reused buffer and handed to the CSV writer as a field: no allocation per
    /// number (the bytes are those of `format!("{v}")`).
    pub fn write(&mut self, r: &Record) -> Result<(), csv::Error> {
        self.write_with(r, &[])
    }

    /// [`CsvRecorder::write`], then `extra`: the values of the extra columns, formatted as
    /// the others (an integer as such: `7`, not `7.0`). A count other than the columns'
    /// is refused by the CSV writer.
    pub fn write_with(&mut self, r: &Record, extra: &[f64]) -> Result<(), csv::Error> {
        use std::fmt::Write as _;
        let layout = match &self.layout {
            Some(l) => *l,
            None => self.header(Some(r))?,
        };
        let (w, buf) = (&mut self.w, &mut self.buf);
        layout.numbers(r, &mut |v: f64| -> Result<(), csv::Error> {
            buf.clear();
            // Writing to a String cannot fail.
            let _ = write!(buf, "{v}");
            w.write_field(buf.as_bytes())
        })?;
        let segment = r
            .commanded
            .segment
            .and_then(|k| self.segment_names.get(k))
            .map(String::as_str)
            .unwrap_or("");
        self.w.write_field(segment)?;
        for v in extra {
            self.buf.clear();
            let _ = write!(self.buf, "{v}");
            self.w.write_field(self.buf.as_bytes())?;
        }
        self.w.write_record(None::<&[u8]>)
    }

    /// Writes the header if no record came yet and flushes what was written; the recorder
    /// stays open (a long run flushes now and then, and at its end).
    pub fn flush(&mut self) -> Result<(), csv::Error> {
        if self.layout.is_none() {
            self.header(None)?;
        }
        self.w.flush()?;
        Ok(())
    }

    /// Flushes (writing the header if no record came) and returns the writer.
    pub fn finish(mut self) -> Result<W, csv::Error> {
        if self.layout.is_none() {
            self.header(None)?;
        }
        self.w.flush()?;
        self.w
            .into_inner()
            .map_err(|e| csv::Error::from(std::io::Error::other(e.to_string())))
    }
}

/// The run as CSV: `t,x_cmd,…,yaw_cmd,x,…,yaw`, per cable `length_cmd_i,length_i,tension_i`;
/// robots with legs: per actuator `actuator_cmd_i,actuator_i` (m or rad), per leg
/// `leg_length_i,leg_force_i`; then `segment`. Every number in Rust's shortest round-trip
/// form (reading the file back gives the recorded values bit for bit).
pub fn write_csv<W: Write>(
    out: W,
    robot: &Robot,
    source: &Trajectory,
    outcome: &RunOutcome,
) -> Result<(), csv::Error> {
    let mut recorder = CsvRecorder::new(out, robot, source);
    for r in &outcome.records {
        recorder.write(r)?;
    }
    recorder.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinematics::Pose;
    use crate::sim::run::{self, hold};
    use crate::trajectory::Sample;

    #[test]
    fn a_held_pose_reports_a_tension_range_that_balances_the_weight_and_a_readable_csv() {
        let robot = crate::fixtures::robot("silva4");
        let home = Pose::from_array(robot.home);
        let options = RunOptions {
            config: crate::sim::SimConfig {
                model: ModelKind::Elastic,
                ..Default::default()
            },
            ..Default::default()
        };
        let traj = hold(home, 0.5, options.config.dt);
        let outcome = run::run(&robot, &traj, &options, &mut |_| {}).expect("runs");
        let report = simulation_report(&robot, &outcome, &traj, &options, true);
        assert_eq!(report.steps as usize + 1, outcome.records.len());
        assert_eq!(
            report.simulated_s,
            outcome.records.last().map(|r| r.state.time)
        );
        // Four cables hold m·g between them: the largest tension is at least a quarter of
        // the weight, and none is negative (cables only pull).
        let (lo, hi) = (
            report.tension_min.expect("cables"),
            report.tension_max.expect("cables"),
        );
        let weight = robot.platform.mass * 9.81;
        assert!(
            lo >= 0.0 && hi >= weight / 4.0,
            "[{lo}, {hi}] N, weight {weight} N"
        );
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);

        // The CSV: a header of 13 + 3·4 + 1 columns and one row per record.
        let mut bytes = Vec::new();
        write_csv(&mut bytes, &robot, &traj, &outcome).expect("written");
        let text = String::from_utf8(bytes).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), outcome.records.len() + 1);
        assert_eq!(lines[0].split(',').count(), 13 + 12 + 1);
        let last: Vec<f64> = lines[lines.len() - 1]
            .split(',')
            .take(13)
            .map(|v| v.parse().expect("number"))
            .collect();
        let r = outcome.records.last().expect("records");
        assert_eq!(last[0], r.state.time);
        assert_eq!(last[7..13], r.state.pose.to_array());
    }

    #[test]
    fn extra_columns_follow_the_segment_and_leave_the_rest_as_it_was() {
        let robot = crate::fixtures::robot("silva4");
        let home = Pose::from_array(robot.home);
        let options = RunOptions::default();
        let traj = hold(home, 0.01, options.config.dt);
        let outcome = run::run(&robot, &traj, &options, &mut |_| {}).expect("runs");
        let mut plain = Vec::new();
        write_csv(&mut plain, &robot, &traj, &outcome).expect("written");
        let mut extended = CsvRecorder::new(Vec::new(), &robot, &traj)
            .with_extra_columns(&["plc_cycle", "enable"]);
        for (k, r) in outcome.records.iter().enumerate() {
            extended
                .write_with(r, &[4_294_967_295.0 - k as f64, (k % 2) as f64])
                .expect("written");
        }
        // Flushing keeps it open; a count other than the columns' is refused.
        extended.flush().expect("flushed");
        let r = &outcome.records[0];
        assert!(extended.write_with(r, &[1.0]).is_err());
        let extended = extended.finish().expect("finished");
        let (plain, extended) = (
            String::from_utf8(plain).expect("utf-8"),
            String::from_utf8(extended).expect("utf-8"),
        );
        let mut rows = 0;
        for (k, (p, e)) in plain.lines().zip(extended.lines()).enumerate() {
            let tail = match k {
                0 => ",plc_cycle,enable".to_string(),
                k => format!(",{},{}", 4_294_967_296 - k as u64, (k - 1) % 2),
            };
            assert_eq!(e, format!("{p}{tail}"), "line {k}");
            rows += 1;
        }
        assert_eq!(rows, outcome.records.len() + 1);
        // No record at all: the header alone.
        let mut empty = CsvRecorder::new(Vec::new(), &robot, &traj).with_extra_columns(&["gap"]);
        empty.flush().expect("header");
        let header = String::from_utf8(empty.finish().expect("finished")).expect("utf-8");
        assert!(header.ends_with(",segment,gap\n"), "{header}");
    }

    #[test]
    fn the_tension_range_of_nothing_is_none_and_angle_errors_match_a_hand_count() {
        let outcome = RunOutcome {
            records: Vec::new(),
            steps: 0,
            wall_s: 0.0,
            error: None,
            uncompensated_steps: 0,
            limited_steps: 0,
        };
        assert_eq!(tension_range(&outcome), None);

        // The start (the rest state before the first step) is not part of the range.
        let robot = crate::fixtures::robot("silva4");
        let options = RunOptions {
            config: crate::sim::SimConfig {
                model: ModelKind::Elastic,
                ..Default::default()
            },
            ..Default::default()
        };
        let traj = hold(Pose::from_array(robot.home), 0.01, options.config.dt);
        let mut outcome = run::run(&robot, &traj, &options, &mut |_| {}).expect("runs");
        outcome.records[0].state.tensions.fill(-7.0);
        let (lo, _) = tension_range(&outcome).expect("steps");
        assert!(lo >= 0.0, "{lo}");

        // Issue 15: the run's length is checked before anything is allocated.
        let jump = Trajectory {
            samples: vec![
                traj.samples[0],
                Sample {
                    t: 1e9,
                    ..traj.samples[0]
                },
            ],
            segments: Vec::new(),
        };
        match run::step_budget(&jump, &options) {
            Err(crate::sim::SimError::TooManySteps { steps, .. }) => assert_eq!(steps, 1e12),
            other => panic!("{other:?}"),
        }
        let settle = RunOptions {
            settle_time: -1.0,
            ..options.clone()
        };
        assert!(run::step_budget(&traj, &settle).is_err());
        assert_eq!(run::step_budget(&traj, &options).expect("short"), 10);

        // Reference roll 0, 0.1, 0.2 rad; actual lags by 0.1 rad on the last two samples:
        // errors 0, 0.1, 0.1 → RMS √(0.02/3), max 0.1; spread Σ(x − 0.1)² = 0.02, so
        // NRMSE = 1 − √(0.02/0.02) = 0. Pitch is constant: no NRMSE.
        let at = |t: f64, roll: f64| Sample {
            t,
            pose: Pose::new(0.0, 0.0, 0.0, roll, 0.0, 0.0),
            velocity: [0.0; 6],
            acceleration: [0.0; 6],
            segment: None,
        };
        let reference = Trajectory {
            samples: vec![at(0.0, 0.0), at(1.0, 0.1), at(2.0, 0.2)],
            segments: Vec::new(),
        };
        let actual = Trajectory {
            samples: vec![at(0.0, 0.0), at(1.0, 0.0), at(2.0, 0.1)],
            segments: Vec::new(),
        };
        let e = angle_errors(&reference, &actual);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].segment, "TOTAL");
        assert!((e[0].rms_roll_deg - (0.02f64 / 3.0).sqrt().to_degrees()).abs() < 1e-9);
        assert!((e[0].max_roll_deg - 0.1f64.to_degrees()).abs() < 1e-9);
        assert!(e[0].nrmse_roll.expect("roll moves").abs() < 1e-9);
        assert_eq!(e[0].nrmse_pitch, None);
    }
}
