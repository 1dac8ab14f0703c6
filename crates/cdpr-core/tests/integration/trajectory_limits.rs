//! Cable-space rates against hand derivations, the winch-limit check (seed 003's 3 m/s,
//! 15 m/s², 22.5 m/s³ on silva4) and uniform time scaling.

use cdpr_core::fixtures::robot;
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::trajectory::limits::{self, CableLimits};
use cdpr_core::trajectory::{
    self, BuiltinOptions, Profile, ProfileKind, ProfileLimits, Sample, Trajectory, Transition,
};
use nalgebra::Vector3;

#[test]
fn cable_rates_of_a_translation_match_the_closed_form() {
    // l = a − r − b, ℓ̇ = −d·ṙ, ℓ̈ = −d·r̈ + (|ṙ|² − (d·ṙ)²)/ℓ (no rotation).
    let silva4 = robot("silva4");
    let options = BuiltinOptions {
        speed: 0.5,
        transition: Some(Transition::Continuous),
        ..BuiltinOptions::default()
    };
    let t = trajectory::builtin(&silva4, "pickplace", &options).unwrap();
    let rates = limits::cable_rates(&silva4, &t);
    for (k, s) in t.samples.iter().enumerate().step_by(7) {
        let v = Vector3::new(s.velocity[0], s.velocity[1], s.velocity[2]);
        let a = Vector3::new(s.acceleration[0], s.acceleration[1], s.acceleration[2]);
        for (c, cable) in silva4.cables.iter().enumerate() {
            let l = cable.frame_anchor - s.pose.position - cable.platform_anchor;
            let (len, d) = (l.norm(), l.normalize());
            let ldot = -d.dot(&v);
            let lddot = -d.dot(&a) + (v.norm_squared() - d.dot(&v).powi(2)) / len;
            assert!((rates.length[k][c] - len).abs() < 1e-12);
            assert!((rates.velocity[k][c] - ldot).abs() < 1e-12);
            assert!(
                (rates.acceleration[k][c] - lddot).abs() < 1e-7,
                "{} vs {lddot}",
                rates.acceleration[k][c]
            );
        }
    }
}

#[test]
fn cable_rates_with_rotation_match_finite_differences_of_the_ik() {
    // q(t) = (0.02 sin t, −0.01 t², 0.15, 0.1 sin 2t, 0.05 t, −0.03 cos t) on uvigo8.
    let q = |t: f64| {
        [
            0.02 * t.sin(),
            -0.01 * t * t,
            0.15,
            0.1 * (2.0 * t).sin(),
            0.05 * t,
            -0.03 * t.cos(),
        ]
    };
    let qd = |t: f64| {
        [
            0.02 * t.cos(),
            -0.02 * t,
            0.0,
            0.2 * (2.0 * t).cos(),
            0.05,
            0.03 * t.sin(),
        ]
    };
    let qdd = |t: f64| {
        [
            -0.02 * t.sin(),
            -0.02,
            0.0,
            -0.4 * (2.0 * t).sin(),
            0.0,
            0.03 * t.cos(),
        ]
    };
    let times = [0.3, 0.9, 1.7];
    let traj = Trajectory {
        samples: times
            .iter()
            .map(|&t| Sample {
                t,
                pose: Pose::from_array(q(t)),
                velocity: qd(t),
                acceleration: qdd(t),
                segment: None,
            })
            .collect(),
        segments: vec![],
    };
    let uvigo8 = robot("uvigo8");
    let rates = limits::cable_rates(&uvigo8, &traj);
    let h = 1e-4;
    let len = |t: f64| kinematics::lengths(&uvigo8, &Pose::from_array(q(t)));
    for (k, &t) in times.iter().enumerate() {
        let (a, b, c) = (len(t - h), len(t), len(t + h));
        for cable in 0..8 {
            let v = (c[cable] - a[cable]) / (2.0 * h);
            let acc = (c[cable] - 2.0 * b[cable] + a[cable]) / (h * h);
            assert!((rates.velocity[k][cable] - v).abs() < 1e-8);
            assert!(
                (rates.acceleration[k][cable] - acc).abs() < 1e-5,
                "cable {cable}: {} vs {acc}",
                rates.acceleration[k][cable]
            );
        }
    }
}

#[test]
fn a_too_fast_move_violates_silva4s_limits_and_time_scaling_fixes_it() {
    let silva4 = robot("silva4");
    let limits = CableLimits::of(&silva4);
    let options = BuiltinOptions {
        speed: 4.0,
        ..BuiltinOptions::default()
    };
    let fast = trajectory::builtin(&silva4, "poly5", &options).unwrap();
    let check = limits::check(&silva4, &fast, &limits).unwrap();
    assert!(!check.ok);
    assert!(check.velocity.ratio > 1.0 && check.velocity.violations > 0);
    assert!(check.velocity.first_violation_t.is_some());
    assert!(check.cable_names_ok(&silva4));
    // A quintic is smooth: the jerk limit dominates and one cube-root step suffices.
    let scaled = limits::time_scale(&silva4, &fast, &limits, 0.002).unwrap();
    assert!(scaled.check.ok, "{:?}", scaled.check);
    let expected = check
        .velocity
        .ratio
        .max(check.acceleration.ratio.sqrt())
        .max(check.jerk.ratio.cbrt())
        * 1.0001;
    assert!(
        (scaled.factor - expected).abs() < 1e-12,
        "{}",
        scaled.factor
    );
    assert!((scaled.trajectory.duration() - fast.duration() * scaled.factor).abs() <= 0.002);
}

trait CableNames {
    fn cable_names_ok(&self, robot: &Robot) -> bool;
}

impl CableNames for limits::LimitCheck {
    fn cable_names_ok(&self, robot: &Robot) -> bool {
        [&self.velocity, &self.acceleration, &self.jerk]
            .iter()
            .all(|p| robot.cables.iter().any(|c| c.name == p.cable))
    }
}

#[test]
fn velocity_limited_scaling_divides_the_peak_by_the_factor() {
    // caroca's long quintic at 3 m/s: only the 2 m/s winch speed is exceeded.
    let caroca = robot("caroca");
    let limits = CableLimits::of(&caroca);
    let options = BuiltinOptions {
        speed: 3.0,
        ..BuiltinOptions::default()
    };
    let fast = trajectory::builtin(&caroca, "poly5", &options).unwrap();
    let before = limits::check(&caroca, &fast, &limits).unwrap();
    assert!(before.velocity.ratio > 1.0);
    assert!(before.acceleration.ratio < 1.0 && before.jerk.ratio < 1.0);
    let scaled = limits::time_scale(&caroca, &fast, &limits, 0.002).unwrap();
    assert!((scaled.factor - before.velocity.ratio * 1.0001).abs() < 1e-12);
    let after = &scaled.check;
    assert!((after.velocity.value - before.velocity.value / scaled.factor).abs() < 1e-6);
}

#[test]
fn stretching_maps_time_and_scales_the_derivatives() {
    let uvigo8 = robot("uvigo8");
    let t = trajectory::builtin(&uvigo8, "poly5", &BuiltinOptions::default()).unwrap();
    let slow = limits::stretch(&t, 2.0, 0.002).expect("within the budget");
    assert!((slow.duration() - 2.0 * t.duration()).abs() <= 0.002);
    // Independent: the quintic itself, from (−0.05, −0.05, 0.1) to (0.05, 0.05, 0.2) m.
    let (a, b) = (
        Vector3::new(-0.05, -0.05, 0.1),
        Vector3::new(0.05, 0.05, 0.2),
    );
    let d = (b - a).norm();
    let limits = ProfileLimits {
        speed: 0.1,
        accel: f64::INFINITY,
        jerk: f64::INFINITY,
    };
    let profile = Profile::new(ProfileKind::Poly5, d, &limits).unwrap();
    for s in slow.samples.iter().step_by(37) {
        let st = profile.at(s.t / 2.0);
        let u = (b - a) / d;
        assert!((s.pose.position - (a + u * st.s)).norm() < 1e-10);
        for c in 0..3 {
            assert!((s.velocity[c] - u[c] * st.v / 2.0).abs() < 1e-6);
            assert!((s.acceleration[c] - u[c] * st.a / 4.0).abs() < 1e-5);
        }
    }
}

#[test]
fn a_non_positive_limit_is_named() {
    let silva4 = robot("silva4");
    let t = trajectory::builtin(&silva4, "poly5", &BuiltinOptions::default()).unwrap();
    let limits = CableLimits {
        max_jerk: 0.0,
        ..CableLimits::of(&silva4)
    };
    let e = limits::check(&silva4, &t, &limits).unwrap_err();
    assert!(e.to_string().starts_with("max_jerk = 0"), "{e}");
}
