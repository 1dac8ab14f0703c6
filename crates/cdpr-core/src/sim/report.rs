//! What a headless run reports (`cdpr simulate`): tracking metrics against the command, the
//! tension range, the speed, the warnings; and the run written as CSV. The command line only
//! formats a [`SimulationReport`] (a table, or its serde form as `--json`).

use super::run::{RunOptions, RunOutcome, csv_columns};
use super::{ControlMode, ModelKind};
use crate::metrics::{self, CompareOptions, Comparison};
use crate::robot::{Mechanism, Robot};
use crate::trajectory::Trajectory;
use serde::Serialize;
use std::io::Write;

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
    /// Why the run stopped early (what was recorded before is kept).
    pub error: Option<String>,
    /// Things the user should know about the run (printed as warnings, not errors).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
    let reference = outcome.commanded(source);
    let actual = outcome.actual(source);
    let tracking = if turns_only(robot) {
        Tracking::Angles {
            angles: angle_errors(&reference, &actual),
        }
    } else {
        let compare = CompareOptions {
            remove_lag,
            ..CompareOptions::default()
        };
        match metrics::compare(&reference, &actual, &compare) {
            Ok(c) => Tracking::Metrics(c),
            Err(e) => Tracking::MetricsError {
                metrics_error: e.to_string(),
            },
        }
    };
    let config = &options.config;
    let mut warnings = Vec::new();
    if options.compensate && config.control == ControlMode::Tension {
        warnings.push("--compensate has no effect in tension mode".to_string());
    }
    if outcome.uncompensated_steps > 0 {
        warnings.push(format!(
            "the command was adjusted on {} steps (tension distribution infeasible: plain IK lengths; or the pose out of the robot's reach: pulled back)",
            outcome.uncompensated_steps
        ));
    }
    let range = tension_range(outcome);
    SimulationReport {
        tracking,
        rtf: outcome.rtf(),
        steps: outcome.steps,
        wall_s: outcome.wall_s,
        simulated_s: outcome.records.last().map(|r| r.state.time),
        model: config.model,
        control: config.control,
        limited_steps: outcome.limited_steps,
        compensate: options.compensate,
        dt: config.dt,
        tension_min: range.map(|r| r.0),
        tension_max: range.map(|r| r.1),
        error: outcome.error.as_ref().map(|e| e.to_string()),
        warnings,
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
    let mut names: Vec<String> = reference.segments.clone();
    names.push("TOTAL".into());
    let mut out = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let total = k == reference.segments.len();
        let pairs: Vec<_> = reference
            .samples
            .iter()
            .zip(&actual.samples)
            .filter(|(r, _)| total || r.segment == Some(k))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let stats = |dof: usize| {
            let n = pairs.len() as f64;
            let mut err2 = 0.0;
            let mut max = 0.0f64;
            let mean = pairs
                .iter()
                .map(|(r, _)| r.pose.to_array()[dof])
                .sum::<f64>()
                / n;
            let mut spread = 0.0;
            for (r, a) in &pairs {
                let (x, y) = (r.pose.to_array()[dof], a.pose.to_array()[dof]);
                err2 += (x - y).powi(2);
                max = max.max((x - y).abs());
                spread += (x - mean).powi(2);
            }
            let nrmse = (spread > 1e-12 * n).then(|| 1.0 - (err2 / spread).sqrt());
            ((err2 / n).sqrt().to_degrees(), max.to_degrees(), nrmse)
        };
        let (roll, pitch) = (stats(3), stats(4));
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

/// Smallest and largest recorded tension (or leg force); None when nothing was recorded.
pub fn tension_range(outcome: &RunOutcome) -> Option<(f64, f64)> {
    outcome
        .records
        .iter()
        .flat_map(|r| r.state.tensions.iter())
        .fold(None, |range, &f| match range {
            None => Some((f, f)),
            Some((lo, hi)) => Some((f64::min(lo, f), f64::max(hi, f))),
        })
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
    let mut w = csv::Writer::from_writer(out);
    let (actuators, legs) = match outcome.records.first() {
        Some(r) if !robot.is_cable_robot() => (r.length_command.len(), r.state.lengths.len()),
        _ => (0, 0),
    };
    let mut header = csv_columns(robot.cable_count());
    for i in 1..=actuators {
        header.extend([format!("actuator_cmd_{i}"), format!("actuator_{i}")]);
    }
    for i in 1..=legs {
        header.extend([format!("leg_length_{i}"), format!("leg_force_{i}")]);
    }
    header.push("segment".into());
    w.write_record(&header)?;
    let mut row: Vec<String> = Vec::with_capacity(header.len());
    for r in &outcome.records {
        row.clear();
        row.push(format!("{}", r.state.time));
        row.extend(r.commanded.pose.to_array().iter().map(|v| format!("{v}")));
        row.extend(r.state.pose.to_array().iter().map(|v| format!("{v}")));
        for i in 0..robot.cable_count() {
            row.push(format!("{}", r.length_command[i]));
            row.push(format!("{}", r.state.lengths[i]));
            row.push(format!("{}", r.state.tensions[i]));
        }
        for i in 0..actuators {
            row.push(format!("{}", r.length_command[i]));
            row.push(format!("{}", r.state.winch[i]));
        }
        for i in 0..legs {
            row.push(format!("{}", r.state.lengths[i]));
            row.push(format!("{}", r.state.tensions[i]));
        }
        row.push(source.segment_name(&r.commanded).unwrap_or("").to_string());
        w.write_record(&row)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinematics::Pose;
    use crate::sim::run::{self, hold};

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

        // Reference roll 0, 0.1, 0.2 rad; actual lags by 0.1 rad on the last two samples:
        // errors 0, 0.1, 0.1 → RMS √(0.02/3), max 0.1; spread Σ(x − 0.1)² = 0.02, so
        // NRMSE = 1 − √(0.02/0.02) = 0. Pitch is constant: no NRMSE.
        let at = |t: f64, roll: f64| crate::trajectory::Sample {
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
