//! Tension mode (seed 001's feedback-linearising controller): silva4's pick & place and
//! CAROCA's point-to-point move with 1 kg and 15 kg converge, with tensions within bounds.

use cdpr_core::fixtures::robot;
use cdpr_core::robot::Robot;
use cdpr_core::run::{RunOptions, run};
use cdpr_core::sim::{ControlMode, ModelKind, SimConfig};
use cdpr_core::trajectory::{self, BuiltinOptions};

/// Runs `name` in tension mode with `settle` seconds after the end; returns the final
/// position error (m) and the commanded tension range (N).
fn final_error(
    robot: &Robot,
    name: &str,
    speed: f64,
    model: ModelKind,
    settle: f64,
) -> (f64, f64, f64) {
    let traj = trajectory::builtin(
        robot,
        name,
        &BuiltinOptions {
            speed,
            dt: 0.001,
            ..Default::default()
        },
    )
    .expect("built-in trajectory");
    let options = RunOptions {
        settle_time: settle,
        ..RunOptions::new(SimConfig::new(model, ControlMode::Tension, 1e-3))
    };
    let outcome = run(robot, &traj, &options, &mut |_| {}).expect("runs");
    assert!(
        outcome.error.is_none(),
        "{name} on {}: {:?}",
        robot.name,
        outcome.error
    );
    let last = outcome.records.last().expect("records");
    let target = traj.samples.last().expect("samples").pose.position;
    let error = (last.state.pose.position - target).norm();
    let (lo, hi) = outcome
        .records
        .iter()
        .skip(1)
        .flat_map(|r| r.tension_command.as_ref().expect("tension mode").iter())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &f| {
            (lo.min(f), hi.max(f))
        });
    (error, lo, hi)
}

#[test]
fn silva4_pick_and_place_converges_in_tension_mode() {
    let r = robot("silva4");
    for model in [ModelKind::ELASTIC, ModelKind::CHAIN] {
        let (error, lo, hi) = final_error(&r, "pickplace", 0.1, model, 5.0);
        // Seed 001's gains Kp = Kd = 1500 leave a slow pole at −1 rad/s: after 5 s the
        // remaining error is well below 0.1 mm.
        assert!(error < 1e-4, "{model:?}: final error {:.4} mm", error * 1e3);
        assert!(
            lo >= r.tension.min - 1e-6 && hi <= r.tension.max + 1e-6,
            "{model:?}: tensions {lo}…{hi} N"
        );
    }
}

#[test]
fn caroca_point_to_point_converges_with_1_and_15_kg() {
    let base = robot("caroca");
    for mass in [1.0, 15.0] {
        let r = base.with_mass(mass);
        for model in [ModelKind::ELASTIC, ModelKind::CHAIN] {
            let (error, lo, hi) = final_error(&r, "poly5", 0.5, model, 3.0);
            assert!(
                error < 1e-4,
                "{mass} kg, {model:?}: final error {:.4} mm",
                error * 1e3
            );
            assert!(
                lo >= 1.0 - 1e-6 && hi <= 6500.0 + 1e-6,
                "{mass} kg, {model:?}: tensions {lo}…{hi} N"
            );
            if mass == 15.0 {
                // Heavier payload, higher tensions (seed 001, Figs. 2–3).
                assert!(hi > 40.0, "{model:?}: 15 kg peak tension only {hi} N");
            }
        }
    }
}
