use super::*;
use crate::fixtures::{edited, robot, robot_text, uvigo8};
use crate::robot::Robot;
use crate::statics::{EquilibriumOptions, elastic_equilibrium, pretensioned_rest_lengths};

fn sim(robot: &Robot, model: ModelKind, control: ControlMode, pose: &Pose) -> Sim {
    let config = SimConfig::new(model, control, 1e-3);
    match Sim::at(robot, config, pose) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn run_for(sim: &mut Sim, seconds: f64) {
    let steps = (seconds / sim.config().dt).round() as usize;
    for _ in 0..steps {
        if let Err(e) = sim.step() {
            panic!("{e}");
        }
    }
}

/// Both models, released 2 mm away from the static equilibrium, settle onto the
/// foundation's elastic equilibrium: sag (L0 = IK lengths) and pre-stretched (L0 = L − f*/k).
#[test]
fn both_models_settle_on_the_static_equilibrium() {
    let robot = uvigo8();
    let poses = [
        Pose::new(0.0, 0.0, 0.05, 0.0, 0.0, 0.0),
        Pose::new(0.1, -0.1, 0.25, 0.0, 0.0, 0.0),
        Pose::new(-0.1, 0.05, 0.15, 0.0, 0.0, 0.0),
    ];
    for model in [ModelKind::ELASTIC, ModelKind::CHAIN] {
        for target in &poses {
            for compensated in [false, true] {
                let rest = if compensated {
                    pretensioned_rest_lengths(&robot, target, robot.tension)
                        .expect("feasible")
                        .0
                } else {
                    crate::kinematics::lengths(&robot, target)
                };
                let eq = elastic_equilibrium(
                    &robot,
                    &rest,
                    &EquilibriumOptions {
                        guess: Some(*target),
                        ..Default::default()
                    },
                )
                .expect("equilibrium");
                let mut s = sim(&robot, model, ControlMode::Ideal, target);
                s.settle(&Command::Lengths(rest.clone())).expect("settles");
                let mut off = eq.pose;
                off.position.x += 0.002;
                off.position.z += 0.001;
                s.place(&off).expect("placed");
                run_for(&mut s, 2.0);
                let st = s.state();
                let dp = (st.pose.position - eq.pose.position).amax();
                assert!(
                    dp < 1e-5,
                    "{model:?} at {target:?} (compensated {compensated}): {:.4} mm off",
                    dp * 1e3
                );
                assert_eq!(st.tensions.len(), eq.tensions.len());
                for (k, (f, fe)) in st.tensions.iter().zip(&eq.tensions).enumerate() {
                    assert!(
                        (f - fe).abs() < 0.01 * fe,
                        "{model:?} cable {k}: {f} vs {fe}"
                    );
                }
                if model == ModelKind::CHAIN {
                    assert_eq!(st.tensions.len(), st.tensions_constraint.len());
                    for (k, (f, fc)) in st.tensions.iter().zip(&st.tensions_constraint).enumerate()
                    {
                        assert!(
                            (f - fc).abs() < 0.03 * f,
                            "chain cable {k}: spring {f} vs impulse {fc}"
                        );
                    }
                }
            }
        }
    }
}

/// Largest energy error (relative to the oscillation energy) of the undamped elastic model
/// released off its equilibrium, over `seconds`.
fn energy_error(dt: f64, seconds: f64) -> f64 {
    let text = edited(robot_text("uvigo8"), "damping = 50.0", "damping = 0.0");
    let robot = crate::robot::parse_robot(&text, "uvigo8-undamped").expect("valid");
    let target = Pose::new(0.02, -0.03, 0.15, 0.0, 0.0, 0.0);
    let config = SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, dt);
    let mut s = Sim::at(&robot, config, &target).expect("starts");
    let e_eq = s.energy().expect("elastic");
    let mut off = s.state().pose;
    off.position.x += 0.003;
    off.position.z -= 0.002;
    off.rpy.z += 0.01;
    s.place(&off).expect("placed");
    let e0 = s.energy().expect("elastic");
    let mut worst: f64 = 0.0;
    for _ in 0..(seconds / dt).round() as usize {
        s.step().expect("steps");
        worst = worst.max((s.energy().expect("elastic") - e0).abs());
    }
    worst / (e0 - e_eq)
}

#[test]
fn undamped_elastic_model_conserves_energy() {
    // Stated tolerance: at dt = 0.1 ms the total energy stays within 0.5 % of the oscillation
    // energy over 2 s (uvigo8's stiffest mode is 670 rad/s: ω·dt = 0.067).
    let fine = energy_error(1e-4, 2.0);
    assert!(fine < 0.005, "energy error {:.3} %", fine * 100.0);
    // And the error is of second order in dt (Störmer–Verlet): halving dt divides it by ~4.
    let (coarse, half) = (energy_error(5e-4, 2.0), energy_error(2.5e-4, 2.0));
    let ratio = half / coarse;
    assert!(
        (0.12..0.45).contains(&ratio),
        "error ratio {ratio:.3} ({coarse:.4} → {half:.4})"
    );
}

#[test]
fn lifted_platform_has_slack_cables() {
    let robot = uvigo8();
    let pose = Pose::new(0.0, 0.0, 0.15, 0.0, 0.0, 0.0);
    for model in [ModelKind::ELASTIC, ModelKind::CHAIN] {
        let mut s = sim(&robot, model, ControlMode::Ideal, &pose);
        assert!(s.state().tensions.iter().all(|&f| f > 1.0));
        let mut up = pose;
        up.position.z += 0.05; // 5 cm up: every cable shorter than its rest length
        s.place(&up).expect("placed");
        s.step().expect("steps");
        let st = s.state();
        assert!(
            st.tensions.iter().all(|&f| f == 0.0),
            "{model:?}: {:?}",
            st.tensions
        );
        // Free fall for the first step: the platform accelerates down at g.
        assert!(
            st.twist[2] < -0.9 * 9.81 * 1e-3,
            "{model:?}: vz {}",
            st.twist[2]
        );
    }
}

#[test]
fn negative_tension_commands_apply_nothing() {
    let robot = robot("caroca");
    let pose = Pose::new(0.0, 0.0, 1.5, 0.0, 0.0, 0.0);
    for model in [ModelKind::ELASTIC, ModelKind::CHAIN] {
        let mut a = sim(&robot, model, ControlMode::Tension, &pose);
        let mut b = sim(&robot, model, ControlMode::Tension, &pose);
        let mut tensions = vec![20.0; 8];
        tensions[2] = -50.0;
        a.set_command(&Command::Tensions(tensions.clone()))
            .expect("valid");
        tensions[2] = 0.0;
        b.set_command(&Command::Tensions(tensions)).expect("valid");
        for _ in 0..50 {
            a.step().expect("steps");
            b.step().expect("steps");
        }
        // A negative pull is clamped to zero: the run is the zero-pull run, bit for bit.
        assert_eq!(a.state().pose, b.state().pose, "{model:?}");
        // Both models report the tension they apply in tension mode (the elastic model the
        // imposed tension, the chain the pull on its last link), never the command: the
        // clamped cable reports exactly 0 N and the others exactly their 20 N.
        for (k, &f) in a.state().tensions.iter().enumerate() {
            let want = if k == 2 { 0.0 } else { 20.0 };
            assert_eq!(f, want, "{model:?} cable {k}");
        }
        // The comparison above is not vacuous: cable 2's pull moves the platform (a +50 N pull
        // in place of none gives another pose after the same 50 steps).
        let mut c = sim(&robot, model, ControlMode::Tension, &pose);
        let mut tensions = vec![20.0; 8];
        tensions[2] = 50.0;
        c.set_command(&Command::Tensions(tensions)).expect("valid");
        for _ in 0..50 {
            c.step().expect("steps");
        }
        let (dp, _) = c.state().pose.distance(&b.state().pose);
        assert!(
            dp > 1e-6,
            "{model:?}: cable 2's pull moved nothing ({dp} m)"
        );
    }
}

#[test]
fn reruns_are_bit_identical() {
    let robot = uvigo8();
    for model in [ModelKind::ELASTIC, ModelKind::CHAIN] {
        let go = || {
            let mut s = sim(
                &robot,
                model,
                ControlMode::Length,
                &Pose::new(0.0, 0.0, 0.1, 0.0, 0.0, 0.0),
            );
            let target =
                crate::kinematics::lengths(&robot, &Pose::new(0.05, 0.0, 0.12, 0.0, 0.0, 0.0));
            s.set_command(&Command::Lengths(target)).expect("valid");
            run_for(&mut s, 0.3);
            s.state().clone()
        };
        assert_eq!(go(), go(), "{model:?}");
    }
}

#[test]
fn bad_commands_are_named() {
    let robot = uvigo8();
    let mut s = sim(
        &robot,
        ModelKind::ELASTIC,
        ControlMode::Ideal,
        &Pose::new(0.0, 0.0, 0.1, 0.0, 0.0, 0.0),
    );
    assert_eq!(
        s.set_command(&Command::Lengths(vec![1.0; 3])),
        Err(SimError::CommandCount {
            expected: 8,
            got: 3
        })
    );
    let mut l = vec![1.8; 8];
    l[5] = f64::NAN;
    let err = s.set_command(&Command::Lengths(l)).unwrap_err();
    assert!(err.to_string().contains("cable 6 (lower1)"), "{err}");
    let err = s.set_command(&Command::Tensions(vec![1.0; 8])).unwrap_err();
    assert!(matches!(err, SimError::WrongCommand { .. }));
}

#[test]
fn blow_up_is_caught_with_step_and_nothing_non_finite_is_recorded() {
    // Absurdly stiff cables at a coarse step: explicit springs must blow up, and be caught.
    let text = edited(
        robot_text("uvigo8"),
        "stiffness = 20000.0",
        "stiffness = 2.0e9",
    );
    let robot = crate::robot::parse_robot(&text, "uvigo8-stiff").expect("valid");
    let pose = Pose::new(0.0, 0.0, 0.1, 0.0, 0.0, 0.0);
    let traj = crate::run::hold(pose, 1.0, 0.002);
    let options = crate::run::RunOptions::new(SimConfig::new(
        ModelKind::ELASTIC,
        ControlMode::Ideal,
        0.005,
    ));
    let mut off = |_: f64| {};
    let outcome = crate::run::run(&robot, &traj, &options, &mut off).expect("starts");
    let err = outcome.error.expect("must blow up");
    assert!(
        matches!(err, SimError::BlowUp { step, .. } if step > 0),
        "{err}"
    );
    assert!(err.to_string().contains("at step"), "{err}");
    for r in &outcome.records {
        assert!(
            r.state
                .pose
                .to_array()
                .iter()
                .chain(&r.state.tensions)
                .all(|x| x.is_finite())
        );
    }
}

/// `set_command_lengths` is `set_command(Command::Lengths(..))` without the vector: the same
/// steps bit for bit, the same refusals.
#[test]
fn borrowed_lengths_command_the_same_as_a_command() {
    let robot = uvigo8();
    let home = Pose::from_array(robot.home);
    let mut owned = sim(&robot, ModelKind::ELASTIC, ControlMode::Ideal, &home);
    let mut borrowed = sim(&robot, ModelKind::ELASTIC, ControlMode::Ideal, &home);
    let mut lengths = kinematics::lengths(&robot, &home);
    for step in 0..50 {
        lengths
            .iter_mut()
            .for_each(|l| *l += 1e-5 * f64::from(step % 7));
        owned
            .set_command(&Command::Lengths(lengths.clone()))
            .expect("lengths");
        borrowed.set_command_lengths(&lengths).expect("lengths");
        owned.step().expect("steps");
        borrowed.step().expect("steps");
        assert_eq!(owned.state(), borrowed.state(), "step {step}");
    }
    let bad = |e: SimError| e.to_string();
    let mut nan = lengths.clone();
    nan[2] = f64::NAN;
    assert_eq!(
        bad(borrowed.set_command_lengths(&nan).expect_err("NaN")),
        bad(owned
            .set_command(&Command::Lengths(nan.clone()))
            .expect_err("NaN"))
    );
    assert!(matches!(
        borrowed.set_command_lengths(&lengths[..7]),
        Err(SimError::CommandCount {
            expected: 8,
            got: 7
        })
    ));
    let mut tension = sim(&robot, ModelKind::ELASTIC, ControlMode::Tension, &home);
    assert!(matches!(
        tension.set_command_lengths(&lengths),
        Err(SimError::WrongCommand {
            given: "lengths",
            ..
        })
    ));
}

/// uvigo8-pulleys with its pulley friction set to `mu` (and its cables massless unless
/// `mass`).
fn pulley_robot(mu: f64, mass: bool) -> Robot {
    let mut r = robot("uvigo8-pulleys");
    for c in &mut r.cables {
        if let Some(p) = &mut c.pulley {
            p.friction = mu;
        }
        if !mass {
            c.mass_per_length = 0.0;
        }
    }
    r
}

/// The elastic model over frictionless pulleys settles on the foundation's elastic
/// equilibrium, whose cable lengths count the wrap r·β: the wrap stretches the cable.
#[test]
fn elastic_model_over_pulleys_settles_on_the_static_equilibrium() {
    let robot = pulley_robot(0.0, false);
    let target = Pose::new(0.1, -0.1, 0.25, 0.0, 0.0, 0.0);
    let rest = pretensioned_rest_lengths(&robot, &target, robot.tension)
        .expect("feasible")
        .0;
    let eq = elastic_equilibrium(
        &robot,
        &rest,
        &EquilibriumOptions {
            guess: Some(target),
            ..Default::default()
        },
    )
    .expect("equilibrium");
    let mut s = sim(&robot, ModelKind::ELASTIC, ControlMode::Ideal, &target);
    s.settle(&Command::Lengths(rest.clone())).expect("settles");
    let mut off = eq.pose;
    off.position.x += 0.002;
    off.position.z -= 0.001;
    s.place(&off).expect("placed");
    run_for(&mut s, 2.0);
    let st = s.state();
    let dp = (st.pose.position - eq.pose.position).amax();
    assert!(dp < 2e-6, "{dp}");
    // The lengths reported are the pulley lengths r·β + free length at that pose.
    let ik = crate::kinematics::inverse(&robot, &st.pose);
    for (k, g) in ik.cables.iter().enumerate() {
        assert!((st.lengths[k] - g.length).abs() < 1e-12);
        assert!(g.pulley.expect("a pulley").wrap > 0.1);
        // No friction, no mass: both sides carry the same tension.
        assert_eq!(st.winch_tensions[k], st.tensions[k]);
    }
}

/// Capstan friction in a quasi-static haul: the platform rises, then sinks, at 50 mm/s (all
/// uvigo8's pulleys are above it: the cables haul in, then pay out at ≥ 10 v₀); winch side / platform side is e^{+μβ}
/// hauling in and e^{−μβ} paying out, β from the inverse kinematics at the pose — in ideal
/// mode and with the PID drives.
#[test]
fn capstan_ratio_in_a_slow_haul_is_euler_eytelwein() {
    let mu = 0.3;
    let robot = pulley_robot(mu, false);
    for control in [ControlMode::Ideal, ControlMode::Length] {
        let (mut hauls, mut pays) = (0, 0);
        for speed in [0.05, -0.05] {
            let start = Pose::new(0.0, 0.0, 0.15, 0.0, 0.0, 0.0);
            let mut s = sim(&robot, ModelKind::ELASTIC, control, &start);
            let dt = s.config().dt;
            for k in 1..=2000 {
                let mut pose = start;
                pose.position.z += speed * k as f64 * dt;
                let rest = pretensioned_rest_lengths(&robot, &pose, robot.tension)
                    .expect("feasible")
                    .0;
                let before = s.state().winch.clone();
                s.set_command(&Command::Lengths(rest)).expect("command");
                s.step().expect("steps");
                if k < 1000 {
                    continue;
                }
                let st = s.state();
                let ik = crate::kinematics::inverse(&robot, &st.pose);
                for (c, was) in before.iter().enumerate() {
                    let rate = (st.winch[c] - was) / dt;
                    if rate.abs() < 10.0 * capstan::SLIP_SPEED {
                        continue;
                    }
                    let beta = ik.cables[c].pulley.expect("a pulley").wrap;
                    let expected = if rate < 0.0 {
                        hauls += 1;
                        (mu * beta).exp()
                    } else {
                        pays += 1;
                        (-mu * beta).exp()
                    };
                    let ratio = st.winch_tensions[c] / st.tensions[c];
                    assert!(
                        (ratio - expected).abs() < 1e-6 * expected,
                        "{control:?} cable {c}: {ratio} vs e^(±μβ) = {expected} (β = {beta})"
                    );
                }
            }
        }
        assert!(hauls > 1000 && pays > 1000, "{control:?}: {hauls} {pays}");
    }
}

/// Hauling in needs more winch force than paying out: the PID drive of `length` mode carries
/// the winch-side tension as its load, so holding the same slow haul in takes a larger
/// integral term than paying out (and than a frictionless pulley).
#[test]
fn hauling_in_loads_the_drive_more_than_paying_out() {
    let robot = pulley_robot(0.3, false);
    let start = Pose::new(0.0, 0.0, 0.2, 0.0, 0.0, 0.0);
    let mut loads = Vec::new();
    for speed in [-0.01, 0.01] {
        let mut s = sim(&robot, ModelKind::ELASTIC, ControlMode::Length, &start);
        // Cable 1 alone moves: hauling in (speed < 0) or paying out, 1 mm over 0.1 s.
        let rest0 = s.state().winch.clone();
        for k in 1..=100 {
            let mut rest = rest0.clone();
            rest[0] += speed * k as f64 * 1e-3;
            s.set_command(&Command::Lengths(rest)).expect("command");
            s.step().expect("steps");
        }
        let st = s.state();
        loads.push((st.winch_tensions[0], st.tensions[0]));
    }
    let ((haul_w, haul_p), (pay_w, pay_p)) = (loads[0], loads[1]);
    assert!(haul_w > haul_p && pay_w < pay_p, "{loads:?}");
    assert!(haul_w > pay_w, "{loads:?}");
}

/// Cables with mass as point masses (`cable_nodes`): a hold at dt = 1 ms stays put and
/// stable, and the tension where each cable leaves its pulley exceeds the one at the
/// platform by the weight of the cable's height, w·Δz (the elastic catenary's dT = w dz).
#[test]
fn cable_nodes_hold_stably_and_carry_their_weight() {
    let robot = pulley_robot(0.0, true);
    let pose = Pose::new(0.05, 0.0, 0.15, 0.0, 0.0, 0.0);
    let mut config = SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, 1e-3);
    config.cable_nodes = 4;
    let mut s = Sim::at(&robot, config.clone(), &pose).expect("builds");
    let start = s.state().pose;
    run_for(&mut s, 1.0);
    let st = s.state().clone();
    let moved = (st.pose.position - start.position).amax();
    assert!(moved < 1e-3, "{moved}");
    let ik = crate::kinematics::inverse(&robot, &st.pose);
    for (k, c) in robot.cables.iter().enumerate() {
        let g = ik.cables[k].pulley.expect("a pulley");
        let anchor = st.pose.position + ik.cables[k].arm;
        let dz = g.tangent.z - anchor.z;
        let expected = c.mass_per_length * crate::robot::GRAVITY * dz;
        let got = st.winch_tensions[k] - st.tensions[k];
        assert!(
            (got - expected).abs() < 0.05 * expected.abs() + 1e-3,
            "cable {k}: {got} N vs w·Δz = {expected} N"
        );
    }
    // Other models, and tension mode, refuse nodes.
    config.model = ModelKind::CHAIN;
    assert!(Sim::at(&robot, config.clone(), &pose).is_err());
    config.model = ModelKind::ELASTIC;
    config.control = ControlMode::Tension;
    assert!(Sim::at(&robot, config, &pose).is_err());
}
