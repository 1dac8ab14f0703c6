use super::*;
use crate::kinematics::Pose;
use crate::sim::{ControlMode, ModelKind};
use crate::trajectory::{Sample, Trajectory};

/// silva4 held at home for `seconds` (elastic cables, ideal winches, 1 ms), and its run.
fn silva4_held(seconds: f64) -> (crate::robot::Robot, RunOptions, Trajectory, RunOutcome) {
    let robot = crate::fixtures::robot("silva4");
    let home = Pose::from_array(robot.home);
    let options = RunOptions::new(crate::sim::SimConfig::new(
        ModelKind::ELASTIC,
        ControlMode::Ideal,
        1e-3,
    ));
    let traj = hold(home, seconds, options.config.dt);
    let outcome = run(&robot, &traj, &options, &mut |_| {}).expect("runs");
    (robot, options, traj, outcome)
}

#[test]
fn a_held_pose_reports_a_tension_range_that_balances_the_weight_and_a_readable_csv() {
    let (robot, options, traj, outcome) = silva4_held(0.5);
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
    let (robot, _, traj, outcome) = silva4_held(0.01);
    let mut plain = Vec::new();
    write_csv(&mut plain, &robot, &traj, &outcome).expect("written");
    let mut extended =
        CsvRecorder::new(Vec::new(), &robot, &traj).with_extra_columns(&["plc_cycle", "enable"]);
    for (k, r) in outcome.records.iter().enumerate() {
        extended
            .write_with(
                &r.as_record(),
                &[4_294_967_295.0 - k as f64, (k % 2) as f64],
            )
            .expect("written");
    }
    // Flushing keeps it open; a count other than the columns' is refused.
    extended.flush().expect("flushed");
    let r = outcome.records[0].as_record();
    assert!(extended.write_with(&r, &[1.0]).is_err());
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
    let options = RunOptions::new(crate::sim::SimConfig::new(
        ModelKind::ELASTIC,
        ControlMode::Ideal,
        1e-3,
    ));
    let traj = hold(Pose::from_array(robot.home), 0.01, options.config.dt);
    let mut outcome = run(&robot, &traj, &options, &mut |_| {}).expect("runs");
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
    match step_budget(&jump, &options) {
        Err(RunError::TooManySteps { steps, .. }) => assert_eq!(steps, 1e12),
        other => panic!("{other:?}"),
    }
    let settle = RunOptions {
        settle_time: -1.0,
        ..options.clone()
    };
    assert!(step_budget(&traj, &settle).is_err());
    assert_eq!(step_budget(&traj, &options).expect("short"), 10);

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

/// Every write a [`CsvRecorder`] makes, as it made it.
#[derive(Default)]
struct Writes(Vec<Vec<u8>>);

impl std::io::Write for Writes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.push(buf.to_vec());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_recorder_hands_over_whole_rows_only() {
    // 3 s at 1 ms: some 3000 rows of ~400 bytes, over a megabyte, so many hand-overs.
    let (robot, _, traj, outcome) = silva4_held(3.0);
    let mut rec = CsvRecorder::new(Writes::default(), &robot, &traj);
    for r in &outcome.records {
        rec.write(&r.as_record()).expect("row");
    }
    let writes = rec.finish().expect("finished").0;
    assert!(writes.len() > 10, "{} writes", writes.len());
    for (k, w) in writes.iter().enumerate() {
        assert!(
            w.ends_with(b"\n"),
            "write {k} of {} bytes ends mid-row",
            w.len()
        );
        assert!(
            w.len() <= record::FLUSH_AT + 8192,
            "write {k}: {} bytes",
            w.len()
        );
    }
    let mut whole = Vec::new();
    write_csv(&mut whole, &robot, &traj, &outcome).expect("written");
    assert_eq!(writes.concat(), whole, "the same bytes as one write_csv");
}

/// The CSV gains `winch_tension_i` columns only when the robot's pulleys have friction, and
/// they hold the winch-side tensions (the MCAP's `/run` sample the same numbers).
#[test]
fn winch_side_tension_columns_only_with_pulley_friction() {
    for (name, expected) in [("uvigo8", false), ("uvigo8-pulleys", true)] {
        let robot = crate::fixtures::robot(name);
        let home = Pose::from_array(robot.home);
        let options = RunOptions::new(crate::sim::SimConfig::new(
            ModelKind::ELASTIC,
            ControlMode::Ideal,
            1e-3,
        ));
        let traj = hold(home, 0.01, options.config.dt);
        let outcome = run(&robot, &traj, &options, &mut |_| {}).expect("runs");
        let layout = RecordLayout::new(&robot, Some(&outcome.records[0].as_record()));
        let columns = layout.columns();
        let winch: Vec<&String> = columns
            .iter()
            .filter(|c| c.starts_with("winch_tension_"))
            .collect();
        assert_eq!(layout.winch_side(), expected, "{name}");
        assert_eq!(winch.len(), if expected { 8 } else { 0 }, "{name}");
        let mut csv = Vec::new();
        write_csv(&mut csv, &robot, &traj, &outcome).expect("writes");
        let text = String::from_utf8(csv).expect("utf-8");
        let header: Vec<&str> = text.lines().next().expect("a header").split(',').collect();
        assert_eq!(header.contains(&"winch_tension_8"), expected, "{name}");
        if expected {
            let last = outcome.records.last().expect("records");
            let sample = crate::recording::messages::RunSample::from_record(
                &layout,
                &last.as_record(),
                &[],
                &[],
            );
            assert_eq!(sample.winch_tension, last.state.winch_tensions);
            assert_eq!(sample.numbers().len(), columns.len());
        }
    }
}
