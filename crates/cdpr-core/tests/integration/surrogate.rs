//! The surrogate against the physics core (elastic model, length winches) on trajectories it
//! was not fitted on (the command-line contract: tests/cli/surrogate.rs at the top level).

use cdpr_core::identify::reference::{ReferenceRun, fit_all, identification_runs, validate};
use cdpr_core::robot::Robot;
use cdpr_core::run::RunOptions;
use cdpr_core::sim::{ControlMode, ModelKind, SimConfig};
use cdpr_core::surrogate::{FitOptions, Surrogate};
use cdpr_core::trajectory::signals::{SignalKind, signal};

fn elastic(dt: f64) -> RunOptions {
    RunOptions {
        compensate: true,
        ..RunOptions::new(SimConfig::new(ModelKind::ELASTIC, ControlMode::Length, dt))
    }
}

/// Fits DOFs x, z, yaw on one identification signal and scores them on another, both run
/// through the elastic model with compensated length winches. Returns (NRMSE, baseline).
fn fit_and_validate(fit_on: SignalKind, check_on: SignalKind) -> Vec<(f64, f64)> {
    let robot = Robot::load("uvigo8").expect("uvigo8");
    let dt = 0.002;
    let options = elastic(dt);
    let dofs = [0, 2, 5];
    let runs = identification_runs(&robot, &[fit_on], &dofs, &options, &mut |_, _| {})
        .expect("identification");
    let (params, reports) = fit_all(
        &robot.name,
        &robot.home,
        &runs,
        &dofs,
        &FitOptions::wide(dt),
        None,
    )
    .expect("fit");
    for r in &reports {
        assert!(r.fit.nrmse > 0.95, "{} fit: {:?}", r.dof, r.fit);
    }
    let traj = signal(&robot, check_on, dt).expect("signal");
    let outcome = cdpr_core::run::run(&robot, &traj, &options, &mut |_| {}).expect("runs");
    assert!(outcome.error.is_none());
    let run = ReferenceRun::from_outcome(check_on.name(), &outcome, dt);
    let surrogate = Surrogate::new(&params, dt);
    validate(&surrogate, &run, None)
        .iter()
        .filter(|s| ["x", "z", "yaw"].contains(&s.dof))
        .map(|s| (s.nrmse.expect("scored"), s.baseline.expect("scored")))
        .collect()
}

#[test]
fn fitted_on_steps_it_predicts_unseen_damped_square_waves() {
    // Large moves are shaped by the winch drive's limits: delay + low-pass capture that, far
    // better than taking the demand as the response.
    let scores = fit_and_validate(SignalKind::Steps, SignalKind::Dsquare);
    assert_eq!(scores.len(), 3);
    for (n, base) in scores {
        assert!(n > 0.85 && n > base + 0.3, "surrogate {n}, demand {base}");
    }
}

#[test]
fn fitted_on_the_limited_chirp_it_predicts_unseen_damped_sines() {
    // Within the winch limits the platform follows the demand (the fit finds no dynamics
    // below 100 Hz); the surrogate must be as good as the demand itself, and good.
    let scores = fit_and_validate(SignalKind::Chirp, SignalKind::Dsine);
    assert_eq!(scores.len(), 3);
    for (n, base) in scores {
        assert!(
            n > 0.95 && n >= base - 0.005,
            "surrogate {n}, demand {base}"
        );
    }
}
