//! The robots with rigid legs: seed 002's linear delta (`robots/keops.toml`) and
//! seed 004's 2-RSSU motion platform (`robots/rssu2.toml`) — their workspace against the
//! papers' numbers, and their Rapier models against their closed-form inverse kinematics.

use cdpr_core::kinematics::Pose;
use cdpr_core::legs::coverage::coverage;
use cdpr_core::legs::design::{DesignGrid, smallest_covering};
use cdpr_core::legs::{LinearDelta, Violation};
use cdpr_core::robot::{Mechanism, Robot};
use cdpr_core::run::{RunOptions, RunOutcome, run};
use cdpr_core::sim::{Command, ControlMode, ModelKind, Sim, SimConfig};
use cdpr_core::trajectory::{self, BuiltinOptions, Trajectory};

fn keops() -> (Robot, LinearDelta, cdpr_core::legs::Cylinder) {
    let robot = Robot::load("keops").expect("keops loads");
    let Mechanism::LinearDelta { delta, cylinder } = robot.mechanism.clone() else {
        panic!("keops is a linear delta");
    };
    (robot, delta, cylinder)
}

fn rssu2() -> (Robot, cdpr_core::legs::Rssu2) {
    let robot = Robot::load("rssu2").expect("rssu2 loads");
    let Mechanism::Rssu2(r) = robot.mechanism.clone() else {
        panic!("rssu2 is a 2-RSSU");
    };
    (robot, r)
}

fn chain(control: ControlMode) -> SimConfig {
    SimConfig::new(ModelKind::CHAIN, control, 1e-3)
}

/// `traj` through the legs' chain model with `control`, run to its end without error.
fn run_chain(robot: &Robot, traj: &Trajectory, control: ControlMode) -> RunOutcome {
    let options = RunOptions::new(chain(control));
    let outcome = run(robot, traj, &options, &mut |_| {}).expect("runs");
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    outcome
}

/// Every `every`-th record: the simulated actuators within `tolerance` of where the closed
/// form `ik` puts them for the simulated pose.
fn assert_actuators_follow(
    outcome: &RunOutcome,
    every: usize,
    tolerance: f64,
    ik: impl Fn(&Pose) -> Vec<f64>,
) {
    for r in outcome.records.iter().step_by(every) {
        let expected = ik(&r.state.pose);
        assert_eq!(expected.len(), r.state.winch.len());
        for (got, want) in r.state.winch.iter().zip(&expected) {
            assert!(
                (got - want).abs() < tolerance,
                "{expected:?} {:?}",
                r.state.winch
            );
        }
    }
}

#[test]
fn keops_covers_seed_002s_cylinder_on_a_10_mm_cloud() {
    let (_, delta, cylinder) = keops();
    // Seed 002, section 5: 150 mm diameter, 220 mm high.
    assert_eq!((cylinder.radius, cylinder.height), (0.075, 0.22));
    let c = coverage(&delta, &cylinder, 0.01);
    // 23 layers 10 mm apart; per layer the grid points of a 75 mm disc: 177.
    assert_eq!(c.points, 23 * 177);
    assert!(c.covered(), "{:?}", c.failures);
    // The joints stay within seed 002's 17° and the arms apart, everywhere in the cylinder.
    let (opening, _) = c.max_opening.expect("reachable points");
    assert!(opening <= 17f64.to_radians() + 1e-12);
    let (gap, _) = c.min_clearance.expect("reachable points");
    assert!(gap >= 2.0 * delta.arm_radius);
}

#[test]
fn a_smaller_keops_fails_and_the_report_names_the_constraint_and_where() {
    let (_, delta, cylinder) = keops();
    // 10 mm less base radius with the same arms: the stroke (carriages kept 80 mm off the
    // axis) ends too early for the bottom of the cylinder.
    let smaller = LinearDelta {
        base_radius: delta.base_radius - 0.01,
        stroke: [
            0.0,
            (delta.base_radius - 0.01 - 0.08) / delta.rail_angle.cos(),
        ],
        ..delta
    };
    let c = coverage(&smaller, &cylinder, 0.01);
    assert!(!c.covered());
    let total: usize = c.failures.iter().map(|f| f.count).sum();
    assert_eq!(total, c.points - c.reachable);
    assert_eq!(total, c.failing.len());
    // Every failing point really fails, with the reported constraint, and the summary's z
    // range holds its points.
    for (p, v) in &c.failing {
        assert_eq!(smaller.inverse(p).err(), Some(*v));
        let f = c
            .failures
            .iter()
            .find(|f| f.violation == *v)
            .expect("summarised");
        assert!(p.z >= f.z_min - 1e-12 && p.z <= f.z_max + 1e-12);
    }
    // A stroke check by hand at the first failing stroke point: some carriage is beyond it.
    if let Some((p, _)) = c.failing.iter().find(|(_, v)| *v == Violation::Stroke) {
        let d = smaller.actuators(p).expect("reaches the rail line");
        assert!(
            d.iter()
                .any(|&x| x > smaller.stroke[1] || x < smaller.stroke[0])
        );
    }
}

#[test]
fn the_design_search_finds_the_shipped_keops_as_the_smallest_on_its_grid() {
    let (_, delta, cylinder) = keops();
    let grid = DesignGrid {
        base_radius: (0.25, 0.32, 0.01),
        arm_length: (0.45, 0.70, 0.01),
        depth: (0.45, 0.65, 0.025),
        cloud_step: 0.025,
    };
    let (found, cyl) = smallest_covering(&delta, &cylinder, 0.08, &grid).expect("a design");
    assert!(
        (found.base_radius - delta.base_radius).abs() < 1e-9,
        "{found:?}"
    );
    assert!(
        (found.arm_length - delta.arm_length).abs() < 1e-9,
        "{found:?}"
    );
    assert!((cyl.z_top - cylinder.z_top).abs() < 1e-9, "{cyl:?}");
    // Found on a 25 mm cloud; it also covers the 10 mm one.
    assert!(coverage(&found, &cyl, 0.01).covered());
}

#[test]
fn rssu2_reproduces_seed_004s_table_1_ranges() {
    let (_, r) = rssu2();
    let [pitch_lo, pitch_hi, roll_lo, roll_hi] = r.ranges().map(f64::to_degrees);
    for (got, paper) in [
        (pitch_lo, -30.27),
        (pitch_hi, 30.27),
        (roll_lo, -26.38),
        (roll_hi, 26.38),
    ] {
        assert!((got - paper).abs() < 0.005, "{got} vs {paper}");
    }
    // The range ends are where a crank meets its stop or the rod stops reaching.
    assert!(r.inverse(0.0, (pitch_hi + 0.01).to_radians()).is_err());
    assert!(r.inverse((roll_hi - 0.01).to_radians(), 0.0).is_ok());
}

/// Largest distance between the simulated and the commanded platform position (m) and the
/// largest angle error (rad), over a run.
fn worst_errors(outcome: &RunOutcome, traj: &Trajectory) -> (f64, f64) {
    let (commanded, actual) = (outcome.commanded(traj), outcome.actual(traj));
    let mut worst = (0.0f64, 0.0f64);
    assert!(!commanded.samples.is_empty());
    assert_eq!(commanded.samples.len(), actual.samples.len());
    for (c, a) in commanded.samples.iter().zip(&actual.samples) {
        worst.0 = worst.0.max((c.pose.position - a.pose.position).norm());
        worst.1 = worst.1.max((c.pose.rpy - a.pose.rpy).amax());
    }
    worst
}

#[test]
fn simulated_keops_lands_where_the_inverse_kinematics_says() {
    let (robot, delta, _) = keops();
    let options = BuiltinOptions {
        speed: 0.1,
        dt: 0.002,
        ..Default::default()
    };
    let traj = trajectory::load("seed000", &robot, &options).expect("a trajectory");
    for (control, bound) in [(ControlMode::Ideal, 0.5e-3), (ControlMode::Length, 8e-3)] {
        let outcome = run_chain(&robot, &traj, control);
        let (position, angle) = worst_errors(&outcome, &traj);
        assert!(position < bound, "{control:?}: {position} m");
        // The parallelograms keep the platform's orientation (to the solver's compliance:
        // measured 1.5 mrad at the corners' accelerations).
        assert!(angle < 5e-3, "{control:?}: {angle} rad");
        // The actuators sit where the closed form puts the carriages for the simulated pose.
        assert_actuators_follow(&outcome, 500, 1e-3, |pose| {
            delta.actuators(&pose.position).expect("in reach").to_vec()
        });
    }
}

#[test]
fn simulated_rssu2_turns_where_the_inverse_kinematics_says() {
    let (robot, r) = rssu2();
    let options = BuiltinOptions {
        speed: 0.5,
        dt: 0.002,
        ..Default::default()
    };
    let traj = trajectory::load("tilt", &robot, &options).expect("tilt");
    // The trajectory goes to 80 % of Table 1's ranges.
    let peak_pitch = traj
        .samples
        .iter()
        .map(|s| s.pose.rpy.y)
        .fold(0.0, f64::max);
    assert!((peak_pitch.to_degrees() - 0.8 * 30.27).abs() < 0.01);
    for (control, bound) in [
        (ControlMode::Ideal, 0.05f64.to_radians()),
        (ControlMode::Length, 0.15f64.to_radians()),
    ] {
        let outcome = run_chain(&robot, &traj, control);
        let (position, angle) = worst_errors(&outcome, &traj);
        assert!(angle < bound, "{control:?}: {} °", angle.to_degrees());
        // The universal joint holds the centre in place and the yaw at zero.
        assert!(position < 1e-3, "{control:?}: {position} m");
        assert_actuators_follow(&outcome, 250, 2e-3, |pose| {
            assert!(pose.rpy.z.abs() < 1e-3);
            r.inverse(pose.rpy.x, pose.rpy.y)
                .expect("in reach")
                .to_vec()
        });
    }
}

#[test]
fn actuator_limits_hold_whatever_is_commanded() {
    let (robot, delta, cylinder) = keops();
    let centre = Pose::from_position(nalgebra::Vector3::new(
        0.0,
        0.0,
        cylinder.z_top - 0.5 * cylinder.height,
    ));
    for control in [ControlMode::Ideal, ControlMode::Length] {
        let mut sim = Sim::at(&robot, chain(control), &centre).expect("keops at rest");
        // Drive every carriage at 0.2 m/s towards a point far beyond the stroke's end: it
        // stops at the end.
        let start = sim.state().winch[0];
        for k in 0..2500 {
            let target = (start + 0.2 * k as f64 * 1e-3).min(delta.stroke[1] + 0.1);
            sim.set_command(&Command::Lengths(vec![target; 3]))
                .expect("a command");
            sim.step().expect("steps");
        }
        for &d in &sim.state().winch[..3] {
            assert!(d <= delta.stroke[1] + 1e-3, "{control:?}: {d}");
        }
        // All three at the stroke's end put the platform on the axis, where the closed form
        // says the carriages are all at the end.
        let p = sim.state().pose.position;
        assert!(p.xy().norm() < 5e-3, "{control:?}: {p:?}");
        let ik = delta.actuators(&p).expect("in reach");
        assert!((ik[0] - delta.stroke[1]).abs() < 2e-3, "{ik:?}");
    }
    let (robot, r) = rssu2();
    for control in [ControlMode::Ideal, ControlMode::Length] {
        let mut sim = Sim::at(&robot, chain(control), &Pose::default()).expect("rssu2 at rest");
        // Both cranks turned at 1 rad/s towards 2 rad, beyond their stop at 60°.
        for k in 0..2500 {
            let target = (k as f64 * 1e-3).min(2.0);
            sim.set_command(&Command::Lengths(vec![target; 2]))
                .expect("a command");
            sim.step().expect("steps");
        }
        for &theta in &sim.state().winch[..2] {
            assert!(theta <= r.crank_limits[1] + 2e-3, "{control:?}: {theta}");
        }
    }
}

#[test]
fn a_translating_trajectory_on_the_rssu2_is_refused_with_the_way_out() {
    let (robot, _) = rssu2();
    let err = trajectory::load("seed000", &robot, &BuiltinOptions::default())
        .expect_err("rssu2 cannot translate");
    let text = err.to_string();
    assert!(text.contains("tilt") && text.contains("rssu2"), "{text}");
    let (keops, _, _) = keops();
    let err = trajectory::load("tilt", &keops, &BuiltinOptions::default())
        .expect_err("keops cannot rotate");
    assert!(err.to_string().contains("keops"), "{err}");
}

#[test]
fn the_legs_drawn_by_the_viewer_follow_the_closed_form() {
    let (robot, delta, cylinder) = keops();
    let p = nalgebra::Vector3::new(0.03, -0.02, cylinder.z_top - 0.1);
    let sim = Sim::at(&robot, chain(ControlMode::Ideal), &Pose::from_position(p)).expect("keops");
    let legs = sim.leg_polylines();
    assert_eq!(legs.len(), 6, "two arms per rail");
    let ik = delta.actuators(&p).expect("in reach");
    for (k, leg) in legs.iter().enumerate() {
        // Rail origin, carriage (spherical joint), platform anchor.
        assert_eq!(leg.len(), 3);
        let i = k / 2;
        let rail = delta.rail_direction(i);
        let along = (leg[1] - leg[0]).dot(&rail);
        assert!((along - ik[i]).abs() < 1e-5, "{along} vs {}", ik[i]);
        assert!(((leg[2] - leg[1]).norm() - delta.arm_length).abs() < 1e-5);
    }
    let (robot, r) = rssu2();
    let sim = Sim::at(
        &robot,
        chain(ControlMode::Ideal),
        &Pose::new(0.0, 0.0, 0.0, 0.1, -0.2, 0.0),
    )
    .expect("rssu2");
    let legs = sim.leg_polylines();
    assert_eq!(legs.len(), 3, "two cranks and the universal joint");
    for leg in &legs[..2] {
        // Pivot, crank end, platform attachment: crank and rod keep their lengths.
        assert!(((leg[1] - leg[0]).norm() - r.crank).abs() < 1e-5);
        assert!(((leg[2] - leg[1]).norm() - r.rod).abs() < 1e-5);
    }
}
