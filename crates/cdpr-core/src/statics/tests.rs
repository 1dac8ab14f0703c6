use super::*;
use crate::fixtures::{edited, robot, robot_text, uvigo8};
use crate::kinematics::{self, Pose};
use crate::robot::Robot;
use approx::assert_relative_eq;
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

/// Checks the KKT conditions of min ½‖f‖² s.t. A f = b, lo ≤ f ≤ hi at `sol`.
fn assert_kkt(
    a: &DMatrix<f64>,
    b: &DVector<f64>,
    lo: &DVector<f64>,
    hi: &DVector<f64>,
    sol: &QpSolution,
) {
    let f = &sol.x;
    let scale = 1.0 + f.amax();
    // Primal feasibility.
    assert!(
        (a * f - b).amax() < 1e-9 * scale,
        "A f ≠ b: {}",
        (a * f - b).amax()
    );
    for i in 0..f.len() {
        assert!(
            f[i] >= lo[i] - 1e-9 * scale && f[i] <= hi[i] + 1e-9 * scale,
            "bound {i}: {}",
            f[i]
        );
    }
    // Stationarity: f = Aᵀν + μ_lo − μ_hi.
    let grad =
        a.transpose() * &sol.eq_multipliers + &sol.lower_multipliers - &sol.upper_multipliers;
    let off = (f - grad).amax();
    assert!(off < 1e-8 * scale, "stationarity off by {off}");
    // Dual feasibility and complementary slackness.
    for i in 0..f.len() {
        assert!(sol.lower_multipliers[i] >= -1e-12 && sol.upper_multipliers[i] >= -1e-12);
        assert!(sol.lower_multipliers[i] * (f[i] - lo[i]) < 1e-8 * scale * scale);
        assert!(sol.upper_multipliers[i] * (hi[i] - f[i]) < 1e-8 * scale * scale);
    }
}

fn random_pose(robot: &Robot, u: [f64; 6]) -> Pose {
    let (lo, hi) = (robot.workspace.min, robot.workspace.max);
    let p = |k: usize| lo[k] + (hi[k] - lo[k]) * u[k];
    let angle = |x: f64| (x - 0.5) * 0.2;
    kinematics::effective_pose(
        robot,
        &Pose::new(p(0), p(1), p(2), angle(u[3]), angle(u[4]), angle(u[5])),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn distribution_satisfies_kkt_and_agrees_with_clarabel(
        u in proptest::array::uniform6(0.0f64..1.0),
        which in 0usize..4,
        f_min in 0.0f64..8.0,
    ) {
        let (name, mass) = [("uvigo8", 1.0), ("silva4", 0.602), ("caroca", 1.0), ("caroca", 15.0)][which];
        let robot = robot(name).with_mass(mass);
        let pose = random_pose(&robot, u);
        let ik = kinematics::inverse(&robot, &pose);
        let w = ik.wrench_matrix();
        let b = -gravity_rows(&robot, &ik);
        let m = robot.cable_count();
        let lo = DVector::from_element(m, f_min);
        let hi = DVector::from_element(m, robot.tension.max);
        match min_norm_qp(&w, &b, &lo, &hi) {
            Ok(sol) => {
                assert_kkt(&w, &b, &lo, &hi, &sol);
                let reference = min_norm_qp_clarabel(&w, &b, &lo, &hi).expect("clarabel solves it too");
                // Clarabel stops at a relative gap of 1e-10 on ½‖f‖²; the objective is strongly
                // convex (Hessian I), so a point whose objective is within ε of the optimum lies
                // within √(2ε) of it: near an active bound the interior-point answer is that far
                // off, not closer (CI: 9e-6 N on caroca with f_min on one cable). Ours is checked
                // exactly by the KKT conditions above.
                let objective = 0.5 * sol.x.norm_squared();
                let tolerance = (2.0 * 1e-9 * (1.0 + objective)).sqrt();
                prop_assert!(
                    (&sol.x - &reference).amax() < tolerance,
                    "{} apart, tolerance {}", (&sol.x - &reference).amax(), tolerance
                );
            }
            Err(QpInfeasible) => {
                // Then no feasible point may exist: the LP's best minimum is below f_min.
                let best = largest_min_tension(&w, &b, robot.tension.max);
                prop_assert!(best.map(|(t, _)| t < f_min + 1e-7).unwrap_or(true));
            }
        }
    }
}

#[test]
fn active_bounds_are_handled_exactly() {
    // min ½‖f‖² s.t. f1 + f2 + f3 = 3, f ≥ (2, 0, 0): f = (2, 0.5, 0.5), μ_lo1 = 1.5, ν = 0.5.
    let a = DMatrix::from_row_slice(1, 3, &[1.0, 1.0, 1.0]);
    let b = DVector::from_column_slice(&[3.0]);
    let lo = DVector::from_column_slice(&[2.0, 0.0, 0.0]);
    let hi = DVector::from_element(3, 10.0);
    let sol = min_norm_qp(&a, &b, &lo, &hi).expect("feasible");
    assert_relative_eq!(
        sol.x,
        DVector::from_column_slice(&[2.0, 0.5, 0.5]),
        epsilon = 1e-12
    );
    assert_relative_eq!(sol.eq_multipliers[0], 0.5, epsilon = 1e-12);
    assert_relative_eq!(sol.lower_multipliers[0], 1.5, epsilon = 1e-12);
    assert_kkt(&a, &b, &lo, &hi, &sol);
    // Upper bound active: f ≤ (10, 0.2, 10) with f1 + f2 + f3 = 3 → f = (1.4, 0.2, 1.4).
    let hi = DVector::from_column_slice(&[10.0, 0.2, 10.0]);
    let lo = DVector::zeros(3);
    let sol = min_norm_qp(&a, &b, &lo, &hi).expect("feasible");
    assert_relative_eq!(
        sol.x,
        DVector::from_column_slice(&[1.4, 0.2, 1.4]),
        epsilon = 1e-12
    );
    assert_kkt(&a, &b, &lo, &hi, &sol);
    // Infeasible: the sum cannot reach 3 with f ≤ 0.5.
    let hi = DVector::from_element(3, 0.5);
    assert_eq!(min_norm_qp(&a, &b, &lo, &hi), Err(QpInfeasible));
}

#[test]
fn infeasible_distribution_reports_the_largest_minimum_tension() {
    // At the bottom of uvigo8's test volume every cable is shallow: 5 N each is too much.
    let robot = uvigo8();
    let pose = Pose::new(0.0, 0.0, 0.05, 0.0, 0.0, 0.0);
    let bounds = crate::robot::TensionBounds {
        min: 5.0,
        max: 100.0,
    };
    let d = tension_distribution(&robot, &pose, bounds);
    assert!(!d.feasible);
    let best = d
        .largest_min_tension
        .expect("the load can be held with lower tensions");
    assert!(best < 5.0 && best > 4.0, "{best}");
    // The tensions shown reach it and balance the load.
    let min = d.tensions.iter().copied().fold(f64::INFINITY, f64::min);
    assert_relative_eq!(min, best, epsilon = 1e-6);
    assert!(d.residual < 1e-6);
    // With f_min at that value the QP becomes feasible (just).
    let bounds = crate::robot::TensionBounds {
        min: best - 1e-6,
        max: 100.0,
    };
    assert!(tension_distribution(&robot, &pose, bounds).feasible);
}

#[test]
fn unreachable_wrench_is_infeasible_without_a_best_minimum() {
    // Above the frame anchors no tension can hold the platform up.
    let robot = robot("silva4");
    let d = tension_distribution(
        &robot,
        &Pose::new(0.0, 0.0, 2.0, 0.0, 0.0, 0.0),
        robot.tension,
    );
    assert!(!d.feasible);
    assert!(d.largest_min_tension.is_none());
    assert!(
        d.residual > 1.0,
        "must not pretend to balance: {}",
        d.residual
    );
}

#[test]
fn sag_matches_the_measured_note_and_balances() {
    // shared/notes/rapier-cable-models.md: rest lengths = IK at (0, 0, 0.05) give the exact
    // equilibrium z = 0.0490666 m, yaw = −0.00048021 rad, tensions 4.65–4.89 N.
    let robot = uvigo8();
    let target = Pose::new(0.0, 0.0, 0.05, 0.0, 0.0, 0.0);
    let rest = kinematics::lengths(&robot, &target);
    let options = EquilibriumOptions {
        guess: Some(target),
        ..Default::default()
    };
    let eq = elastic_equilibrium(&robot, &rest, &options).expect("equilibrium");
    assert_relative_eq!(eq.pose.position.z, 0.0490666, epsilon = 1e-7);
    assert_relative_eq!(eq.pose.rpy.z, -0.00048021, epsilon = 1e-8);
    let (lo, hi) = eq
        .tensions
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &f| (a.min(f), b.max(f)));
    assert!(
        (lo - 4.65).abs() < 0.01 && (hi - 4.89).abs() < 0.01,
        "{lo} {hi}"
    );
    // Independent check: the wrench balance at the returned pose.
    let residual = wrench_residual(&robot, &eq.pose, &eq.tensions);
    assert!(residual.amax() < 1e-9, "{residual}");
    // And the tensions are k·stretch of the cables at that pose.
    let l = kinematics::lengths(&robot, &eq.pose);
    assert_eq!((eq.tensions.len(), l.len()), (rest.len(), rest.len()));
    for ((f, l), l0) in eq.tensions.iter().zip(&l).zip(&rest) {
        assert_relative_eq!(*f, 20000.0 * (l - l0), epsilon = 1e-9);
    }
}

#[test]
fn sag_across_uvigo8_workspace_is_in_the_stated_range() {
    // The issue: sag without compensation is 0.9–2.8 mm for uvigo8 with k = 20 000 N/m.
    let robot = uvigo8();
    let mut sags = Vec::new();
    for x in [-0.1, 0.0, 0.1] {
        for y in [-0.1, 0.0, 0.1] {
            for z in [0.05, 0.15, 0.25] {
                let target = Pose::new(x, y, z, 0.0, 0.0, 0.0);
                let rest = kinematics::lengths(&robot, &target);
                let eq = elastic_equilibrium(
                    &robot,
                    &rest,
                    &EquilibriumOptions {
                        guess: Some(target),
                        ..Default::default()
                    },
                )
                .expect("equilibrium");
                sags.push((eq.pose.position - target.position).norm());
            }
        }
    }
    let (lo, hi) = sags
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &s| (a.min(s), b.max(s)));
    assert!(
        lo > 0.85e-3 && hi < 2.9e-3 && hi > 2.0e-3,
        "sag range {lo} … {hi} m"
    );
}

#[test]
fn pretension_lands_exactly_on_the_pose() {
    for (name, pose) in [
        ("uvigo8", Pose::new(0.05, -0.08, 0.2, 0.02, -0.03, 0.1)),
        ("caroca", Pose::new(0.5, -0.3, 1.2, 0.0, 0.0, 0.0)),
        ("silva4", Pose::new(-0.1, 0.18488, 0.47162, 0.0, 0.0, 0.0)),
    ] {
        let robot = robot(name);
        let (rest, dist) =
            pretensioned_rest_lengths(&robot, &pose, robot.tension).expect("feasible");
        let eq = elastic_equilibrium(&robot, &rest, &EquilibriumOptions::default())
            .expect("equilibrium");
        let (dp, dr) = eq.pose.distance(&pose);
        assert!(dp < 1e-9 && dr < 1e-9, "{name}: off by {dp} m, {dr} rad");
        assert_eq!(eq.tensions.len(), dist.tensions.len());
        for (f, fstar) in eq.tensions.iter().zip(&dist.tensions) {
            assert_relative_eq!(*f, *fstar, epsilon = 1e-6);
        }
    }
}

#[test]
fn slack_cables_carry_nothing_and_loose_cables_find_no_equilibrium() {
    let robot = uvigo8();
    let target = Pose::new(0.0, 0.0, 0.15, 0.0, 0.0, 0.0);
    let mut rest = kinematics::lengths(&robot, &target);
    // One cable 5 cm too long: it goes slack, the others hold the platform.
    rest[0] += 0.05;
    let eq = elastic_equilibrium(
        &robot,
        &rest,
        &EquilibriumOptions {
            guess: Some(target),
            ..Default::default()
        },
    )
    .expect("equilibrium");
    assert_eq!(eq.tensions[0], 0.0);
    let l = kinematics::lengths(&robot, &eq.pose);
    assert!(l[0] < rest[0]);
    assert!(wrench_residual(&robot, &eq.pose, &eq.tensions).amax() < 1e-9);
    // All cables 2 m too long: the platform hangs 2 m lower (below the floor), still balanced.
    let rest: Vec<f64> = kinematics::lengths(&robot, &target)
        .iter()
        .map(|l| l + 2.0)
        .collect();
    let eq = elastic_equilibrium(
        &robot,
        &rest,
        &EquilibriumOptions {
            guess: Some(target),
            ..Default::default()
        },
    )
    .expect("equilibrium");
    assert!(
        eq.pose.position.z < target.position.z - 1.5,
        "{:?}",
        eq.pose
    );
    assert!(wrench_residual(&robot, &eq.pose, &eq.tensions).amax() < 1e-9);
}

#[test]
fn bad_rest_lengths_are_named() {
    let robot = uvigo8();
    let err = elastic_equilibrium(&robot, &[1.0; 3], &EquilibriumOptions::default()).unwrap_err();
    assert_eq!(
        err,
        StaticsError::RestLengthCount {
            expected: 8,
            got: 3
        }
    );
    let mut rest = vec![1.8; 8];
    rest[4] = -1.0;
    let err = elastic_equilibrium(&robot, &rest, &EquilibriumOptions::default()).unwrap_err();
    assert!(err.to_string().contains("cable 5 (lower0)"), "{err}");
}

#[test]
fn ea_cables_pretension_exactly_too() {
    let text = edited(robot_text("silva4"), "stiffness = 20000.0", "ea = 30000.0");
    let robot = crate::robot::parse_robot(&text, "silva4-ea").expect("valid");
    let pose = Pose::new(0.1, -0.2, 0.6, 0.0, 0.0, 0.0);
    let (rest, dist) = pretensioned_rest_lengths(&robot, &pose, robot.tension).expect("feasible");
    let eq =
        elastic_equilibrium(&robot, &rest, &EquilibriumOptions::default()).expect("equilibrium");
    assert!((eq.pose.position - pose.position).amax() < 1e-9);
    assert_eq!(eq.tensions.len(), dist.tensions.len());
    for (f, fstar) in eq.tensions.iter().zip(&dist.tensions) {
        assert_relative_eq!(*f, *fstar, epsilon = 1e-6);
    }
}

#[test]
fn interior_solutions_take_the_fast_path() {
    let robot = uvigo8();
    let pose = Pose::new(0.05, -0.03, 0.18, 0.01, -0.02, 0.03);
    let ik = kinematics::inverse(&robot, &pose);
    let w = ik.wrench_matrix();
    let b = -gravity_rows(&robot, &ik);
    let lo = DVector::from_element(8, robot.tension.min);
    let hi = DVector::from_element(8, robot.tension.max);
    let sol = min_norm_qp(&w, &b, &lo, &hi).expect("feasible");
    eprintln!("{:?} it {}", sol.x.as_slice(), sol.iterations);
    assert_eq!(
        sol.iterations,
        0,
        "no bound is active here: {:?}",
        sol.x.as_slice()
    );
    assert_kkt(&w, &b, &lo, &hi, &sol);
}

#[test]
fn the_sparse_solver_for_many_cables_agrees_with_the_active_set_solver() {
    // 40 cables around a platform, tensions with active bounds: both methods, same optimum.
    let m = 40;
    let w = DMatrix::from_fn(6, m, |k, j| {
        let t = std::f64::consts::TAU * j as f64 / m as f64;
        match k {
            0 => t.cos(),
            1 => t.sin(),
            2 => 0.5 + 0.3 * (j % 3) as f64,
            3 => 0.1 * (t + 0.3).sin(),
            4 => -0.1 * (2.0 * t).cos(),
            _ => 0.05 * (3.0 * t).sin(),
        }
    });
    let bounds = TensionBounds { min: 1.2, max: 3.0 };
    // A wrench some tensions within the bounds produce: feasible by construction.
    let f0 = DVector::from_fn(m, |j, _| 1.2 + 1.8 * (j % 5) as f64 / 4.0);
    let wrench = &w * f0;
    let lo = DVector::from_element(m, bounds.min);
    let hi = DVector::from_element(m, bounds.max);
    let exact = min_norm_qp(&w, &wrench, &lo, &hi).expect("feasible");
    assert!(
        exact.iterations > 0,
        "bounds must be active for the test to mean something"
    );
    let sparse = super::min_norm_sparse(&w, &wrench, bounds).expect("feasible");
    assert!(
        (&exact.x - &sparse).amax() < 1e-5,
        "{}",
        (&exact.x - &sparse).amax()
    );
    // distribute_wrench takes the sparse path above ACTIVE_SET_MAX_CABLES.
    assert!(m > super::ACTIVE_SET_MAX_CABLES);
    let d = distribute_wrench(&w, &wrench, bounds);
    assert!(d.feasible);
    assert!((DVector::from_column_slice(&d.tensions) - &exact.x).amax() < 1e-5);
}

/// A pose moving with constant second derivative: η(t) = η0 + η̇ t + ½ η̈ t².
fn pose_at(p0: &[f64; 6], v: &[f64; 6], a: &[f64; 6], t: f64) -> Pose {
    let x: Vec<f64> = (0..6)
        .map(|k| p0[k] + v[k] * t + 0.5 * a[k] * t * t)
        .collect();
    Pose::new(x[0], x[1], x[2], x[3], x[4], x[5])
}

/// ω from central differences of R(t): skew(ω) ≈ Ṙ Rᵀ.
fn omega_fd(p0: &[f64; 6], v: &[f64; 6], a: &[f64; 6], t: f64, h: f64) -> nalgebra::Vector3<f64> {
    let r = |t| *pose_at(p0, v, a, t).rotation().matrix();
    let d = (r(t + h) - r(t - h)) / (2.0 * h) * r(t).transpose();
    nalgebra::Vector3::new(
        d[(2, 1)] - d[(1, 2)],
        d[(0, 2)] - d[(2, 0)],
        d[(1, 0)] - d[(0, 1)],
    ) * 0.5
}

#[test]
fn angular_velocity_and_acceleration_match_differences_of_the_rotation() {
    let p0 = [0.0, 0.0, 0.0, 0.3, -0.4, 1.1];
    let v = [0.0, 0.0, 0.0, 0.7, -0.5, 0.9];
    let a = [0.0, 0.0, 0.0, -1.3, 2.1, 0.6];
    for t in [0.0, 0.2, 0.5] {
        let pose = pose_at(&p0, &v, &a, t);
        let rates: Vec<f64> = (3..6).map(|k| v[k] + a[k] * t).collect();
        let (omega, alpha) = angular_motion(
            &pose.rpy,
            &nalgebra::Vector3::from_column_slice(&rates),
            &nalgebra::Vector3::new(a[3], a[4], a[5]),
        );
        let h = 1e-5;
        let w_fd = omega_fd(&p0, &v, &a, t, h);
        assert!((omega - w_fd).norm() < 1e-8, "t {t}: ω {omega} vs {w_fd}");
        let h2 = 1e-4;
        let a_fd = (omega_fd(&p0, &v, &a, t + h2, 1e-6) - omega_fd(&p0, &v, &a, t - h2, 1e-6))
            / (2.0 * h2);
        assert!((alpha - a_fd).norm() < 1e-5, "t {t}: α {alpha} vs {a_fd}");
    }
}

#[test]
fn the_inertial_wrench_is_the_rate_of_change_of_momentum() {
    // Newton–Euler against differences of the momenta themselves: F = d(m v_c)/dt, and about
    // the platform origin M = r_c × F + dH_c/dt with H_c = R I_c Rᵀ ω (ω from differences of R).
    let mut robot = crate::fixtures::uvigo8();
    robot.platform.com = nalgebra::Vector3::new(0.02, -0.01, 0.04);
    robot.platform.inertia = nalgebra::Matrix3::new(
        0.010, 0.001, -0.002, 0.001, 0.020, 0.0015, -0.002, 0.0015, 0.015,
    );
    let m = robot.platform.mass;
    let p0 = [0.05, -0.02, 0.2, 0.1, -0.2, 0.4];
    let v = [0.3, -0.1, 0.2, 0.8, -0.6, 1.2];
    let a = [1.5, 0.7, -2.0, -1.0, 1.8, 0.5];
    let t = 0.3;
    let pose = pose_at(&p0, &v, &a, t);
    let vel: Vec<f64> = (0..6).map(|k| v[k] + a[k] * t).collect();
    let vel: [f64; 6] = vel.try_into().expect("6");
    let got = inertial_rows(&robot, &pose, &vel, &a);
    let com = |t: f64| {
        let p = pose_at(&p0, &v, &a, t);
        p.position + p.rotation() * robot.platform.com
    };
    let h = 1e-4;
    let a_c = (com(t + h) - 2.0 * com(t) + com(t - h)) / (h * h);
    let force = a_c * m;
    let momentum = |t: f64| {
        let r = *pose_at(&p0, &v, &a, t).rotation().matrix();
        r * robot.platform.inertia * r.transpose() * omega_fd(&p0, &v, &a, t, 1e-6)
    };
    let dh = (momentum(t + h) - momentum(t - h)) / (2.0 * h);
    let r_c = pose.rotation() * robot.platform.com;
    let moment = r_c.cross(&force) + dh;
    for k in 0..3 {
        assert!(
            (got[k] - force[k]).abs() < 1e-5 * m,
            "F{k}: {} vs {}",
            got[k],
            force[k]
        );
        assert!(
            (got[3 + k] - moment[k]).abs() < 1e-6,
            "M{k}: {} vs {}",
            got[3 + k],
            moment[k]
        );
    }
    // A 3-DOF robot holds its orientation: the force rows only, from the linear acceleration.
    let silva4 = crate::fixtures::robot("silva4");
    let rows = inertial_rows(&silva4, &Pose::from_position(pose.position), &vel, &a);
    assert_eq!(rows.len(), 3);
    let want = nalgebra::Vector3::new(a[0], a[1], a[2]) * silva4.platform.mass;
    for k in 0..3 {
        assert!((rows[k] - want[k]).abs() < 1e-12, "{}", rows[k]);
    }
}

/// Checks a largest-minimum-tension answer against clarabel's interior point and the LP's
/// constraints: the same t (to clarabel's tolerance), W f = wrench, t ≤ f ≤ f_max.
fn assert_largest_min_tension(w: &DMatrix<f64>, wrench: &DVector<f64>, f_max: f64, at: &str) {
    let ours = largest_min_tension(w, wrench, f_max);
    let reference = largest_min_tension_clarabel(w, wrench, f_max);
    match (&ours, &reference) {
        (Some((t, f)), Some((t_ref, _))) => {
            let scale = 1.0 + t_ref.abs();
            assert!(
                (t - t_ref).abs() < 1e-6 * scale,
                "{at}: t {t} against {t_ref}"
            );
            let residual = (w * DVector::from_column_slice(f) - wrench).amax();
            assert!(
                residual < 1e-8 * (1.0 + f_max),
                "{at}: W f − wrench {residual}"
            );
            let lowest = f.iter().copied().fold(f64::INFINITY, f64::min);
            assert!(
                (lowest - t).abs() < 1e-9 * scale,
                "{at}: min f {lowest}, t {t}"
            );
            assert!(
                f.iter().all(|x| *x <= f_max + 1e-9 * (1.0 + f_max)),
                "{at}: {f:?}"
            );
        }
        (None, None) => {}
        _ => panic!("{at}: ours {ours:?}, clarabel's {reference:?}"),
    }
}

#[test]
fn largest_min_tension_is_clarabels_along_a_path_in_and_out_of_the_workspace() {
    // A line from below the workspace box's corner to beyond the frame's opposite corner, with
    // a slow roll: the optimal basis changes along it, and outside the frame nothing holds.
    for name in ["uvigo8", "caroca", "silva4", "keops"] {
        let robot = robot(name);
        let (lo, hi) = (robot.frame.min, robot.frame.max);
        let steps = 400;
        for k in 0..=steps {
            let s = k as f64 / steps as f64;
            let p = lo + (hi - lo) * (1.3 * s - 0.15);
            let pose =
                kinematics::effective_pose(&robot, &Pose::new(p.x, p.y, p.z, 0.1 * s, 0.0, 0.0));
            let ik = kinematics::inverse(&robot, &pose);
            let target = -gravity_rows(&robot, &ik);
            assert_largest_min_tension(
                &ik.wrench_matrix(),
                &target,
                robot.tension.max,
                &format!("{name} at s = {s}"),
            );
        }
    }
}

#[test]
fn largest_min_tension_by_hand() {
    // f1 + f2 + f3 = 3.3: all three equal, t = 1.1; then 3.6 from the same basis: 1.2.
    let w = DMatrix::from_row_slice(1, 3, &[1.0, 1.0, 1.0]);
    for (sum, t) in [(3.3, 1.1), (3.6, 1.2)] {
        let (got, f) =
            largest_min_tension(&w, &DVector::from_element(1, sum), 10.0).expect("feasible");
        assert_relative_eq!(got, t, epsilon = 1e-12);
        assert_relative_eq!(
            DVector::from_vec(f),
            DVector::from_element(3, t),
            epsilon = 1e-12
        );
    }
    // f1 + f2 + f3 = 3 and f3 = 2: f1 = f2 = 0.5 at the minimum; f3 = 2.5: 0.25.
    let w = DMatrix::from_row_slice(2, 3, &[1.0, 1.0, 1.0, 0.0, 0.0, 1.0]);
    for (f3, t) in [(2.0, 0.5), (2.5, 0.25)] {
        let wrench = DVector::from_column_slice(&[3.0, f3]);
        let (got, f) = largest_min_tension(&w, &wrench, 10.0).expect("feasible");
        assert_relative_eq!(got, t, epsilon = 1e-12);
        assert_relative_eq!(
            DVector::from_vec(f),
            DVector::from_column_slice(&[t, t, f3]),
            epsilon = 1e-12
        );
    }
    // f3 = 2.5 beyond f_max = 2: nothing holds it.
    let wrench = DVector::from_column_slice(&[3.0, 2.5]);
    assert_eq!(largest_min_tension(&w, &wrench, 2.0), None);
    // f1 − f2 = 5 with f1 ≤ 3 needs f2 = −2: a cable would push.
    let w = DMatrix::from_row_slice(1, 2, &[1.0, -1.0]);
    let wrench = DVector::from_element(1, 5.0);
    assert_eq!(largest_min_tension(&w, &wrench, 3.0), None);
    assert_eq!(largest_min_tension_clarabel(&w, &wrench, 3.0), None);
    // f1 − f2 = 1 with f ≤ 3: f = (3, 2), t = 2, with f1 at f_max.
    let (t, f) = largest_min_tension(&w, &DVector::from_element(1, 1.0), 3.0).expect("feasible");
    assert_relative_eq!(t, 2.0, epsilon = 1e-12);
    assert_relative_eq!(
        DVector::from_vec(f),
        DVector::from_column_slice(&[3.0, 2.0]),
        epsilon = 1e-12
    );
}
