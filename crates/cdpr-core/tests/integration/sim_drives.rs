//! The drives as built (uvigo8-drives): the torques on a held pose against the statics by
//! hand, the two models against each other, and the modes that drive the motors — torque
//! mode on the torque feed-forward alone (with a weak feedback) and velocity mode — tracking
//! seed 000's trajectory.

use cdpr_core::fixtures::robot;
use cdpr_core::kinematics::Pose;
use cdpr_core::robot::Robot;
use cdpr_core::run::{RunOptions, RunOutcome, run};
use cdpr_core::sim::{ControlMode, ModelKind, Sim, SimConfig};
use cdpr_core::statics;
use cdpr_core::trajectory::{self, BuiltinOptions, Trajectory};

fn seed000(robot: &Robot) -> Trajectory {
    let options = BuiltinOptions {
        speed: 0.1,
        dt: 0.001,
        ..Default::default()
    };
    trajectory::builtin(robot, "seed000", &options).expect("seed000")
}

fn simulate(
    robot: &Robot,
    traj: &Trajectory,
    model: ModelKind,
    control: ControlMode,
) -> RunOutcome {
    let options = RunOptions {
        compensate: true,
        ..RunOptions::new(SimConfig::new(model, control, 1e-3))
    };
    let outcome = run(robot, traj, &options, &mut |_| {}).expect("runs");
    assert!(
        outcome.error.is_none(),
        "{control:?} on {model:?}: {:?}",
        outcome.error
    );
    outcome
}

/// RMS and max distance between the reached and the commanded position, m.
fn tracking(outcome: &RunOutcome) -> (f64, f64) {
    let errors: Vec<f64> = outcome
        .records
        .iter()
        .map(|r| (r.state.pose.position - r.commanded.pose.position).norm())
        .collect();
    let rms = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
    (rms, errors.iter().copied().fold(0.0, f64::max))
}

#[test]
fn a_held_pose_takes_minus_rho_times_the_statics_tension() {
    let r = robot("uvigo8-drives");
    let home = Pose::from_array(r.home);
    // By hand: the tensions that hold the platform at home (the pre-tensioned distribution),
    // each drive's torque −ρ·T (no pulley: T_w = T; at rest no friction).
    let (_, tensions) = statics::pretensioned_rest_lengths(&r, &home, r.tension).expect("holds");
    for model in [ModelKind::ELASTIC, ModelKind::CHAIN] {
        let mut sim = Sim::new(&r, SimConfig::new(model, ControlMode::Length, 1e-3)).expect("sim");
        for _ in 0..1000 {
            sim.step().expect("step");
        }
        let s = sim.state();
        let tolerance = if model == ModelKind::ELASTIC {
            1e-6
        } else {
            0.02
        };
        for (k, d) in r.drives.iter().enumerate() {
            let expected = -d.payout_per_radian() * tensions.tensions[k];
            let got = s.motor_torques[k];
            assert!(
                (got - expected).abs() <= tolerance * expected.abs(),
                "{model:?} cable {}: {got} N·m vs {expected} N·m",
                k + 1
            );
            assert!(
                s.following_errors[k].abs() < 1e-5,
                "{}",
                s.following_errors[k]
            );
        }
    }
}

#[test]
fn the_chain_and_the_elastic_model_agree_on_the_torques_along_a_move() {
    let r = robot("uvigo8-drives");
    let traj = seed000(&r);
    let elastic = simulate(&r, &traj, ModelKind::ELASTIC, ControlMode::Length);
    let chain = simulate(&r, &traj, ModelKind::CHAIN, ControlMode::Length);
    let rated = r.drives[0].rated_torque;
    let (mut sum, mut n) = (0.0, 0);
    for (a, b) in elastic.records.iter().zip(&chain.records) {
        for (ta, tb) in a.state.motor_torques.iter().zip(&b.state.motor_torques) {
            sum += (ta - tb).powi(2);
            n += 1;
        }
    }
    let rms = (sum / n as f64).sqrt();
    eprintln!(
        "elastic vs chain torques: RMS difference {:.2} % of rated",
        100.0 * rms / rated
    );
    // Two integrators of the same drive (the chain: Rapier's multibody in f32) within 1 % of
    // rated torque in RMS (0.54 % measured; the corners of the trapezoids, where the length
    // mode's shaper lets cables go slack in both, differ most).
    assert!(rms < 0.01 * rated, "RMS difference {rms} N·m");
}

/// Torque mode with the weak feedback alone (no feed-forward), stepped by hand: what the
/// feed-forward adds.
fn feedback_only(robot: &Robot, traj: &Trajectory) -> (f64, f64) {
    use cdpr_core::run::feedforward::{TorqueFeedforward, weak_feedback};
    use cdpr_core::sim::Command;
    let config = SimConfig::new(ModelKind::ELASTIC, ControlMode::Torque, 1e-3);
    let ff = TorqueFeedforward::new(robot, true);
    let first = traj.samples[0];
    let mut sim = Sim::holding(
        robot,
        config,
        &first.pose,
        Some(&Command::Lengths(ff.payouts(robot, &first.pose))),
    )
    .expect("sim");
    let holding = sim.state().motor_torques.clone();
    let (mut sum, mut worst, mut n) = (0.0, 0.0_f64, 0);
    for sample in &traj.samples[1..] {
        let demand = ff.demand(robot, traj, sample);
        let state = sim.state();
        let torques = robot
            .drives
            .iter()
            .enumerate()
            .map(|(k, d)| {
                // The holding torques of the start stand in for the load (no dynamics).
                holding[k]
                    + weak_feedback(
                        d,
                        demand.payouts[k],
                        demand.rates[k],
                        state.winch[k],
                        state.motor_velocities[k] * d.payout_per_radian(),
                    )
            })
            .collect();
        sim.set_command(&Command::Torques(torques))
            .expect("command");
        sim.step().expect("step");
        let e = (sim.state().pose.position - sample.pose.position).norm();
        sum += e * e;
        worst = worst.max(e);
        n += 1;
    }
    ((sum / n as f64).sqrt(), worst)
}

#[test]
fn torque_mode_on_the_feed_forward_tracks_and_velocity_mode_too() {
    let r = robot("uvigo8-drives");
    let traj = seed000(&r);
    let (torque_rms, torque_max) = tracking(&simulate(
        &r,
        &traj,
        ModelKind::ELASTIC,
        ControlMode::Torque,
    ));
    let (alone_rms, alone_max) = feedback_only(&r, &traj);
    let (velocity_rms, velocity_max) = tracking(&simulate(
        &r,
        &traj,
        ModelKind::ELASTIC,
        ControlMode::Velocity,
    ));
    eprintln!(
        "seed000 on uvigo8-drives, tracking RMS (max): torque mode {:.3} mm ({:.3}), its weak \
         feedback alone {:.3} mm ({:.3}), velocity mode {:.3} mm ({:.3})",
        torque_rms * 1e3,
        torque_max * 1e3,
        alone_rms * 1e3,
        alone_max * 1e3,
        velocity_rms * 1e3,
        velocity_max * 1e3
    );
    assert!(
        torque_rms < 2e-3 && torque_max < 3e-3,
        "torque mode: {torque_rms} m"
    );
    // The feed-forward is what tracks: the feedback alone is five times worse and more.
    assert!(
        alone_rms > 5.0 * torque_rms,
        "feedback alone: {alone_rms} m"
    );
    assert!(velocity_rms < 0.5e-3, "velocity mode: {velocity_rms} m");
}
