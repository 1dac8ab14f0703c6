//! Tracking of seed 000's test trajectory on uvigo8: the elastic cables' error against the exact
//! answer, the sag without compensation, PID winches against ideal ones.

use cdpr_core::metrics::{self, CompareOptions};
use cdpr_core::robot::{GRAVITY, Robot};
use cdpr_core::run::{RunOptions, RunOutcome, run};
use cdpr_core::sim::{ControlMode, ModelKind, SimConfig};
use cdpr_core::trajectory::{self, BuiltinOptions, ProfileKind, Trajectory};
use nalgebra::{Matrix3, Matrix6, Matrix6x3, Vector3, Vector6};

/// The path acceleration limit of seed 000's built-in profiles (`BuiltinOptions::accel`'s
/// default, 3 m/s²): no sample of the command accelerates harder.
const PATH_ACCEL: f64 = 3.0;

/// The platform's linearised elastic compliance, by hand from the robot file (not through the
/// simulator or the statics module): at `pose`, the 6×6 stiffness about the platform origin is
/// Σ kᵢ jᵢ jᵢᵀ with jᵢ = [uᵢ; rᵢ × uᵢ] (uᵢ the unit vector from the platform anchor to the frame
/// anchor, rᵢ the rotated platform anchor). The tension ("geometric") stiffness T/L, a few N/m
/// beside k = 20 000 N/m, is left out. Returns the 3×3 map from a force applied at the centre
/// of mass to the displacement of the platform origin (the point the RMS figures compare).
fn compliance_at_com(robot: &Robot, pose: &cdpr_core::kinematics::Pose) -> Matrix3<f64> {
    let rotation = pose.rotation();
    let mut k = Matrix6::<f64>::zeros();
    for cable in &robot.cables {
        let r = rotation * cable.platform_anchor;
        let d = cable.frame_anchor - (pose.position + r);
        let u = d / d.norm();
        let j = Vector6::from_iterator(u.iter().copied().chain(r.cross(&u).iter().copied()));
        k += cable.stiffness_at(d.norm()) * j * j.transpose();
    }
    let c = rotation * robot.platform.com;
    // A force F at the centre of mass is the wrench [F; c × F] about the origin.
    let mut wrench_of_force = Matrix6x3::<f64>::zeros();
    wrench_of_force
        .fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&Matrix3::identity());
    wrench_of_force
        .fixed_view_mut::<3, 3>(3, 0)
        .copy_from(&c.cross_matrix());
    let displacement =
        k.try_inverse().expect("the cables span all six directions") * wrench_of_force;
    displacement.fixed_view::<3, 3>(0, 0).into_owned()
}

/// Largest origin displacement the inertial load −m·a of the command's own accelerations can
/// cause statically along `traj` (a by central differences of the commanded positions,
/// checked against the path's limit `accel`), m.
fn worst_inertial_deflection(robot: &Robot, traj: &Trajectory, accel: f64) -> f64 {
    traj.samples
        .windows(3)
        .map(|w| {
            let h = w[1].t - w[0].t;
            let a = (w[2].pose.position - 2.0 * w[1].pose.position + w[0].pose.position) / (h * h);
            // The trapezoid's acceleration steps between samples: a difference across a step
            // lands between its two sides, never beyond (1 % for rounding).
            assert!(a.norm() <= 1.01 * accel, "|a| = {} m/s²", a.norm());
            (compliance_at_com(robot, &w[1].pose) * (-robot.platform.mass * a)).norm()
        })
        .fold(0.0, f64::max)
}

fn setup(profile: Option<ProfileKind>) -> (Robot, Trajectory) {
    let robot = cdpr_core::fixtures::uvigo8();
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
        compensate,
        ..RunOptions::new(SimConfig::new(model, control, 1e-3))
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

/// (RMS, largest) 3D error of `actual` against `reference`, m.
fn rms_and_max_3d(reference: &Trajectory, actual: &Trajectory) -> (f64, f64) {
    let total = metrics::compare(reference, actual, &CompareOptions::default())
        .expect("comparable")
        .total;
    (total.rms_3d, total.max_3d)
}

#[test]
fn compensated_elastic_cables_track_seed000_like_the_exact_answer() {
    let (robot, traj) = setup(None);
    let elastic = simulate(&robot, &traj, ModelKind::ELASTIC, ControlMode::Ideal, true);
    let chain = simulate(&robot, &traj, ModelKind::CHAIN, ControlMode::Ideal, true);
    let reference = elastic.commanded(&traj);
    let ((e, e_max), (c, c_max)) = (
        rms_and_max_3d(&reference, &elastic.actual(&traj)),
        rms_and_max_3d(&reference, &chain.actual(&traj)),
    );
    // With the pretension compensated the static sag is gone; what is left is the cables'
    // stretch under the platform's inertia. The command's accelerations (|a| ≤ 3 m/s² on the
    // trapezoid) load the platform with −m·a, which moves it statically by C·(−m·a) (C the
    // elastic compliance, by hand above); applied suddenly (the trapezoid's acceleration steps
    // at every corner) an undamped oscillator overshoots to twice its static deflection, so
    // the largest error stays below twice the largest such deflection along the path.
    // (The exact elastic-cable answer is about 0.17 mm RMS at 100 mm/s; CoppeliaSim
    // 0.866 mm.)
    let bound = 2.0 * worst_inertial_deflection(&robot, &traj, PATH_ACCEL);
    eprintln!(
        "3D error elastic RMS {:.4} / max {:.4} mm, chain RMS {:.4} / max {:.4} mm, \
         inertial bound {:.4} mm",
        e * 1e3,
        e_max * 1e3,
        c * 1e3,
        c_max * 1e3,
        bound * 1e3
    );
    for (name, rms, max) in [("elastic", e, e_max), ("chain", c, c_max)] {
        assert!(
            max < bound,
            "{name} largest 3D error {:.4} mm above the inertial bound {:.4} mm",
            max * 1e3,
            bound * 1e3
        );
        // Not a rigid follower: the cables do stretch under the accelerations (a simulator
        // that returned the command would pass the bound above).
        assert!(rms > 0.01 * bound, "{name} RMS 3D {:.5} mm", rms * 1e3);
    }
    // The two models of the same cables share that error (the same stretch under the same
    // loads), so their paths differ from each other by less than either differs from the
    // command; a model that got the stretch wrong would not.
    let between = rms_3d(&elastic.actual(&traj), &chain.actual(&traj));
    assert!(
        between < e.min(c),
        "chain vs elastic {:.4} mm, against the command {:.4} / {:.4} mm",
        between * 1e3,
        e * 1e3,
        c * 1e3
    );
}

#[test]
fn without_compensation_the_platform_sags_by_millimetres() {
    let (robot, traj) = setup(None);
    let plain = simulate(&robot, &traj, ModelKind::ELASTIC, ControlMode::Ideal, false);
    let commanded = plain.commanded(&traj);
    let e = rms_3d(&commanded, &plain.actual(&traj));
    // With rest lengths equal to the commanded lengths the cables carry nothing at the
    // commanded pose: the platform sinks until their stretch carries its weight, by C·(m g)
    // to first order (C the compliance by hand above; the cables' angles change by under 1 %
    // over a few millimetres of sag). RMS of that sag over the commanded path:
    let weight = Vector3::new(0.0, 0.0, -robot.platform.mass * GRAVITY);
    let sags: Vec<f64> = commanded
        .samples
        .iter()
        .step_by(10)
        .map(|s| (compliance_at_com(&robot, &s.pose) * weight).norm())
        .collect();
    let sag = (sags.iter().map(|x| x * x).sum::<f64>() / sags.len() as f64).sqrt();
    // The run's error is that sag plus the dynamic error of the same run with the sag
    // compensated (the cables are the same springs: the two superpose to first order), and
    // the RMS obeys the triangle inequality; give or take 5 % of the sag for the
    // linearisation.
    let compensated = simulate(&robot, &traj, ModelKind::ELASTIC, ControlMode::Ideal, true);
    let dynamic = rms_3d(&compensated.commanded(&traj), &compensated.actual(&traj));
    eprintln!(
        "uncompensated RMS 3D {:.3} mm; linear sag {:.3} mm ± dynamic {:.3} mm",
        e * 1e3,
        sag * 1e3,
        dynamic * 1e3
    );
    assert!(
        (e - sag).abs() < dynamic + 0.05 * sag,
        "uncompensated RMS 3D {:.3} mm vs sag {:.3} mm (± {:.3} mm)",
        e * 1e3,
        sag * 1e3,
        (dynamic + 0.05 * sag) * 1e3
    );
}

#[test]
fn pid_winches_match_ideal_ones_on_a_trajectory_within_the_limits() {
    // The S-curve version of seed000 respects uvigo8's winch limits, so the set-point shaper
    // passes it through and the PID drive adds little.
    let (robot, traj) = setup(Some(ProfileKind::Scurve));
    let ideal = simulate(&robot, &traj, ModelKind::ELASTIC, ControlMode::Ideal, true);
    let pid = simulate(&robot, &traj, ModelKind::ELASTIC, ControlMode::Length, true);
    let reference = ideal.commanded(&traj);
    let (a, b) = (
        rms_3d(&reference, &ideal.actual(&traj)),
        rms_3d(&reference, &pid.actual(&traj)),
    );
    // The drive's position loop (kp = 2·10⁵ N/m) is a spring in series with the cable's
    // (k = 2·10⁴ N/m) for loads faster than its integral corner ki/kp = 10 rad/s (slower ones
    // the integral takes up): the platform sees cables of stiffness k·kp/(k + kp) instead of
    // k, so its deflections under the same loads grow by (k + kp)/kp, and the PID path departs
    // from the ideal-winch one by at most k/kp of the ideal path's own error.
    let k = robot.cables[0].stiffness_at(1.0);
    let ratio = k / robot.winch.kp;
    let between = rms_3d(&ideal.actual(&traj), &pid.actual(&traj));
    eprintln!(
        "ideal {:.5} mm, PID {:.5} mm, between {:.5} mm, bound {:.5} mm",
        a * 1e3,
        b * 1e3,
        between * 1e3,
        ratio * a * 1e3
    );
    assert!(
        between <= ratio * a,
        "PID vs ideal paths differ by {:.5} mm, more than k/kp = {ratio} of {:.4} mm",
        between * 1e3,
        a * 1e3
    );
}
