//! Tracking of seed 000's test trajectory on uvigo8 (issue 5's figures, as assertions).

use cdpr_core::metrics::{self, CompareOptions};
use cdpr_core::robot::Robot;
use cdpr_core::sim::run::{RunOptions, RunOutcome, run};
use cdpr_core::sim::{ControlMode, ModelKind, SimConfig};
use cdpr_core::trajectory::{self, BuiltinOptions, ProfileKind, Trajectory};

fn setup(profile: Option<ProfileKind>) -> (Robot, Trajectory) {
    let robot = Robot::builtin("uvigo8").expect("shipped").expect("parses");
    let options = BuiltinOptions {
        speed: 0.1,
        dt: 0.001,
        profile,
        ..Default::default()
    };
    let traj = trajectory::builtin(&robot, "seed000", &options).expect("seed000");
    (robot, traj)
}

fn simulate(
    robot: &Robot,
    traj: &Trajectory,
    model: ModelKind,
    control: ControlMode,
    compensate: bool,
) -> RunOutcome {
    let options = RunOptions {
        config: SimConfig {
            model,
            control,
            ..Default::default()
        },
        compensate,
        ..Default::default()
    };
    let outcome = run(robot, traj, &options, &mut |_| {}).expect("runs");
    assert!(
        outcome.error.is_none(),
        "{model:?}/{control:?}: {:?}",
        outcome.error
    );
    outcome
}

fn rms_3d(reference: &Trajectory, actual: &Trajectory) -> f64 {
    metrics::compare(reference, actual, &CompareOptions::default())
        .expect("comparable")
        .total
        .rms_3d
}

#[test]
fn compensated_elastic_cables_track_seed000_like_the_exact_answer() {
    let (robot, traj) = setup(None);
    let elastic = simulate(&robot, &traj, ModelKind::Elastic, ControlMode::Ideal, true);
    let chain = simulate(&robot, &traj, ModelKind::Chain, ControlMode::Ideal, true);
    let reference = elastic.commanded(&traj);
    let (e, c) = (
        rms_3d(&reference, &elastic.actual(&traj)),
        rms_3d(&reference, &chain.actual(&traj)),
    );
    // Issue 5: the exact elastic-cable answer is about 0.17 mm RMS at 100 mm/s (CoppeliaSim:
    // 0.866 mm); the default trapezoid (3 m/s², stop at corners) gives 0.14 mm here.
    assert!(
        (0.10e-3..0.25e-3).contains(&e),
        "elastic RMS 3D {:.3} mm",
        e * 1e3
    );
    assert!(
        (0.08e-3..0.25e-3).contains(&c),
        "chain RMS 3D {:.3} mm",
        c * 1e3
    );
    // The two models of the same cables agree with each other better than either with the
    // command (measured 0.057 mm RMS between their paths: the chain's solver damps the
    // oscillations after each corner a little more).
    let between = rms_3d(&elastic.actual(&traj), &chain.actual(&traj));
    assert!(
        between < 0.08e-3 && between < 0.6 * e,
        "chain vs elastic {:.4} mm",
        between * 1e3
    );
}

#[test]
fn without_compensation_the_platform_sags_by_millimetres() {
    let (robot, traj) = setup(None);
    let plain = simulate(&robot, &traj, ModelKind::Elastic, ControlMode::Ideal, false);
    let e = rms_3d(&plain.commanded(&traj), &plain.actual(&traj));
    // The static sag alone is 0.9–2.8 mm over the test volume (statics tests).
    assert!(
        e > 0.8e-3 && e < 3.0e-3,
        "uncompensated RMS 3D {:.3} mm",
        e * 1e3
    );
}

#[test]
fn pid_winches_match_ideal_ones_on_a_trajectory_within_the_limits() {
    // The S-curve version of seed000 respects uvigo8's winch limits, so the set-point shaper
    // passes it through and the PID drive adds little.
    let (robot, traj) = setup(Some(ProfileKind::Scurve));
    let ideal = simulate(&robot, &traj, ModelKind::Elastic, ControlMode::Ideal, true);
    let pid = simulate(&robot, &traj, ModelKind::Elastic, ControlMode::Length, true);
    let reference = ideal.commanded(&traj);
    let (a, b) = (
        rms_3d(&reference, &ideal.actual(&traj)),
        rms_3d(&reference, &pid.actual(&traj)),
    );
    assert!(
        (b - a).abs() < 0.01e-3,
        "ideal {:.4} mm vs PID {:.4} mm",
        a * 1e3,
        b * 1e3
    );
    let between = rms_3d(&ideal.actual(&traj), &pid.actual(&traj));
    assert!(
        between < 0.01e-3,
        "PID vs ideal paths differ by {:.4} mm",
        between * 1e3
    );
}
