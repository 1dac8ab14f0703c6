//! Same inputs, same trajectory: the viewer's app, run headless (MinimalPlugins, one manual
//! `update()` per frame with a fixed virtual time), steps the physics core exactly as
//! `cdpr simulate` does — bit for bit, at every frame — however long its frames are.

use crate::common;

use crate::common::*;
use cdpr_core::run::{self, RunOptions};
use cdpr_core::sim::{ControlMode, ModelKind, SimConfig};
use cdpr_viewer::{Playback, Scenario, headless_app};
use std::time::Duration;

/// `cdpr simulate --out` rows: (t, actual pose, per cable length and tension), parsed exactly
/// (the CSV holds shortest round-trip numbers).
fn simulate_csv(args: &[&str]) -> Vec<Vec<f64>> {
    let dir = scratch(&format!("viewer-headless-{}", args.join("-")));
    let out = dir.join("run.csv");
    let out_s = out.to_string_lossy().into_owned();
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    all.extend(["--out", &out_s]);
    let o = cdpr(&all);
    assert!(o.status.success(), "cdpr {all:?}: {}", stderr(&o));
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_path(&out)
        .expect("csv");
    reader
        .records()
        .map(|r| {
            let r = r.expect("row");
            // Every column but the last (the segment name) is a number.
            (0..r.len() - 1)
                .map(|k| r[k].parse::<f64>().expect("number"))
                .collect()
        })
        .collect()
}

/// The viewer's state at its current step as a `cdpr simulate` CSV row.
fn row_of(playback: &Playback) -> Vec<f64> {
    let s = playback.state();
    let mut row = vec![s.time];
    row.extend(playback.commanded().to_array());
    row.extend(s.pose.to_array());
    let command = playback.driver().expect("a run").record().length_command;
    assert_eq!(command.len(), s.lengths.len());
    assert_eq!(command.len(), s.tensions.len());
    for ((length_cmd, length), tension) in command.iter().zip(&s.lengths).zip(&s.tensions) {
        row.extend([*length_cmd, *length, *tension]);
    }
    row
}

/// Plays `scenario` headless with the given frame durations; at every frame compares the state
/// with the CSV row of the same step.
fn check_against_simulate(scenario: &Scenario, frames: &[Duration], csv_rows: &[Vec<f64>]) -> u64 {
    let mut playback = Playback::new(scenario.clone()).expect("scenario builds");
    playback.looping = false; // the CSV ends with the trajectory
    // Determinism, not speed, is checked here: a loaded debug build must not drop steps.
    playback.step_budget = Duration::from_secs(3600);
    let mut app = headless_app(playback, frames[0]);
    let mut expected_time = 0.0;
    for (index, frame) in frames.iter().enumerate() {
        app.insert_resource(cdpr_viewer::bevy::time::TimeUpdateStrategy::ManualDuration(
            *frame,
        ));
        app.update();
        if index > 0 {
            expected_time += frame.as_secs_f64(); // Bevy's first update has a zero delta
        }
        let playback = app.world().resource::<Playback>();
        let steps = playback.driver().expect("a run").steps();
        // The physics rate does not depend on the frame rate: time owed / dt steps, exactly.
        assert_eq!(
            steps,
            (expected_time / 1e-3 + 1e-9).floor() as u64,
            "frame {index}"
        );
        let Some(want) = csv_rows.get(steps as usize) else {
            break; // past the end of `cdpr simulate`'s run
        };
        let row = row_of(playback);
        assert_eq!(row.len(), want.len());
        for (k, (a, b)) in row.iter().zip(want).enumerate() {
            assert!(
                a.to_bits() == b.to_bits(),
                "frame {index}, step {steps}, column {k}: viewer {a} vs cdpr simulate {b}"
            );
        }
    }
    app.world()
        .resource::<Playback>()
        .driver()
        .expect("a run")
        .steps()
}

#[test]
fn the_viewer_steps_the_core_exactly_as_cdpr_simulate_at_60_fps() {
    // uvigo8, seed 000's trajectory, chain model, PID winches: `cdpr simulate`'s defaults.
    let rows = simulate_csv(&["-r", "uvigo8", "-t", "seed000", "--speed", "0.1"]);
    let scenario = Scenario::for_robot("uvigo8");
    let frames = vec![Duration::from_nanos(16_666_667); 240];
    let steps = check_against_simulate(&scenario, &frames, &rows);
    assert_eq!(steps, 3983, "239 frames of 1/60 s at 1 kHz");
}

#[test]
fn slow_and_irregular_frames_change_nothing_but_the_steps_per_frame() {
    // A software renderer's 50–400 ms frames: the same states at the same steps.
    let rows = simulate_csv(&common::words(
        "-r silva4 -t pickplace --speed 0.5 --model elastic --control tension",
    ));
    let scenario = Scenario::for_robot("silva4").with(|r| {
        r.speed = 0.5;
        r.model = ModelKind::ELASTIC;
        r.control = Some(ControlMode::Tension);
    });
    let mut x: u64 = 12345;
    let frames: Vec<Duration> = (0..40)
        .map(|_| {
            // A fixed pseudo-random sequence (LCG), reproducible run to run.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Duration::from_micros(50_000 + (x >> 33) % 350_000)
        })
        .collect();
    let steps = check_against_simulate(&scenario, &frames, &rows);
    // The frames (40, 50–400 ms) outlast the run: every row of `cdpr simulate` was compared.
    assert!(
        steps as usize >= rows.len() - 1,
        "{steps} steps, {} rows",
        rows.len()
    );
}

#[test]
fn the_library_run_and_the_viewer_agree_on_every_record() {
    // In-process cross-check without the binary: the viewer's driver against run::run.
    let scenario = Scenario::for_robot("caroca").with(|r| {
        r.model = ModelKind::ELASTIC;
        r.control = Some(ControlMode::Ideal);
        r.compensate = true;
    });
    let robot = scenario.load_robot().expect("robot");
    let traj = scenario
        .request()
        .load_trajectory(&robot)
        .expect("trajectory");
    let options = RunOptions {
        compensate: true,
        ..RunOptions::new(SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, 1e-3))
    };
    let outcome = run::run(&robot, &traj, &options, &mut |_| {}).expect("runs");
    let mut app = headless_app(
        Playback::new(scenario).expect("builds"),
        Duration::from_millis(20),
    );
    for _ in 0..101 {
        app.update();
    }
    let playback = app.world().resource::<Playback>();
    assert_eq!(playback.driver().expect("a run").steps(), 2000);
    assert_eq!(
        playback.driver().expect("a run").record(),
        outcome.records[2000].as_record()
    );
}

/// The viewer's loading errors say their cause once (in the message, not again as
/// the error's source, which an error chain would print a second time).
#[test]
fn the_viewers_loading_errors_say_their_cause_once() {
    let scenario =
        Scenario::for_robot("uvigo8").with(|r| r.robot = Some("/nonexistent/robot.toml".into()));
    let Err(e) = scenario.build() else {
        panic!("a robot file that does not exist is refused");
    };
    let chain = format!("{:#}", anyhow::Error::new(e));
    assert_eq!(chain.matches("file not found").count(), 1, "{chain}");
    assert_eq!(
        chain.matches("/nonexistent/robot.toml").count(),
        1,
        "{chain}"
    );
    let scenario =
        Scenario::for_robot("uvigo8").with(|r| r.trajectory = Some("/nonexistent/run.csv".into()));
    let Err(e) = scenario.build() else {
        panic!("a trajectory file that does not exist is refused");
    };
    let chain = format!("{:#}", anyhow::Error::new(e));
    assert_eq!(
        chain.matches("/nonexistent/run.csv").count(),
        1,
        "the file named once: {chain}"
    );
    assert_eq!(chain.matches("/nonexistent/robot.toml").count(), 0);
}
