//! Speed profiles against closed forms: trapezoid timing, S-curve bounds and timing, quintic
//! boundary conditions.

use cdpr_core::trajectory::{Profile, ProfileKind, ProfileLimits};

fn limits(speed: f64, accel: f64, jerk: f64) -> ProfileLimits {
    ProfileLimits { speed, accel, jerk }
}

/// States every `dt` over the profile, end included.
fn states(p: &Profile, dt: f64) -> Vec<(f64, cdpr_core::trajectory::profile::PathState)> {
    let n = (p.duration / dt).ceil() as usize;
    (0..=n)
        .map(|k| {
            let t = (k as f64 * dt).min(p.duration);
            (t, p.at(t))
        })
        .collect()
}

#[test]
fn trapezoid_duration_is_distance_over_speed_plus_ramp() {
    // Reaches the speed: T = D/v + v/a (a seed000 side at 100 mm/s, 3 m/s²).
    let p = Profile::new(ProfileKind::Trapezoid, 0.2, &limits(0.1, 3.0, 8.0)).unwrap();
    assert!((p.duration - (0.2 / 0.1 + 0.1 / 3.0)).abs() < 1e-12);
    assert!((p.ramp_time - 0.1 / 3.0).abs() < 1e-15);
    assert!((p.peak_speed() - 0.1).abs() < 1e-12);
    // Too short to reach it: a triangle, T = 2√(D/a), peak √(aD).
    let d = 0.001;
    let p = Profile::new(ProfileKind::Trapezoid, d, &limits(0.1, 3.0, 8.0)).unwrap();
    assert!((p.duration - 2.0 * (d / 3.0).sqrt()).abs() < 1e-12);
    assert!((p.peak_speed() - (3.0 * d).sqrt()).abs() < 1e-9);
}

#[test]
fn trapezoid_acceleration_is_plus_zero_minus_a() {
    let p = Profile::new(ProfileKind::Trapezoid, 0.2, &limits(0.1, 3.0, 8.0)).unwrap();
    for (t, s) in states(&p, 1e-3) {
        if t < p.duration {
            assert!(
                [3.0, 0.0, -3.0].iter().any(|a| (s.a - a).abs() < 1e-12),
                "a = {} at {t}",
                s.a
            );
            assert!(s.v >= -1e-12 && s.v <= 0.1 + 1e-12);
        }
    }
}

#[test]
fn scurve_durations_match_the_closed_forms() {
    // Acceleration limit reached (v·j ≥ a²): T = D/v + v/a + a/j.
    let p = Profile::new(ProfileKind::Scurve, 1.0, &limits(0.5, 1.0, 8.0)).unwrap();
    assert!(
        (p.duration - (2.0 + 0.5 + 0.125)).abs() < 1e-12,
        "{}",
        p.duration
    );
    // Not reached (seed 003's 3 m/s², 8 m/s³ at 500 mm/s): T = D/v + 2√(v/j).
    let p = Profile::new(ProfileKind::Scurve, 1.0, &limits(0.5, 3.0, 8.0)).unwrap();
    assert!((p.duration - (2.0 + 2.0 * (0.5f64 / 8.0).sqrt())).abs() < 1e-12);
    // Too short for the speed: four jerk phases of (D/(2j))^(1/3).
    let d = 0.001;
    let p = Profile::new(ProfileKind::Scurve, d, &limits(0.5, 3.0, 8.0)).unwrap();
    assert!((p.duration - 4.0 * (d / 16.0).cbrt()).abs() < 1e-12);
    // Short, but long enough to reach the acceleration: v'²/a + v'a/j = D.
    let (d, a, j) = (0.05, 1.0, 100.0);
    let p = Profile::new(ProfileKind::Scurve, d, &limits(2.0, a, j)).unwrap();
    let v = p.peak_speed();
    assert!((v * v / a + v * a / j - d).abs() < 1e-12, "v' = {v}");
}

#[test]
fn scurve_respects_speed_acceleration_and_jerk() {
    for (d, v, a, j) in [
        (0.2, 0.1, 3.0, 8.0),
        (1.06, 0.5, 3.0, 8.0),
        (2.0, 1.0, 1.0, 5.0),
        (0.003, 0.5, 3.0, 8.0),
    ] {
        let p = Profile::new(ProfileKind::Scurve, d, &limits(v, a, j)).unwrap();
        let dt = p.duration / 20_000.0;
        let st = states(&p, dt);
        for w in st.windows(2) {
            let ((t0, s0), (t1, s1)) = (w[0], w[1]);
            let h = t1 - t0;
            if h <= 0.0 {
                continue;
            }
            // Jerk estimated independently from the sampled acceleration.
            assert!(
                ((s1.a - s0.a) / h).abs() <= j * (1.0 + 1e-6),
                "jerk {} > {j} at {t0} (D={d})",
                (s1.a - s0.a) / h
            );
            assert!(s0.a.abs() <= a * (1.0 + 1e-9));
            assert!(s0.v <= v * (1.0 + 1e-9) && s0.v >= -1e-12);
            // Velocity consistent with the position (midpoint rule, O(h²)).
            let fd = (s1.s - s0.s) / h;
            assert!((fd - (s0.v + s1.v) / 2.0).abs() < 1e-6 * v.max(1e-3));
        }
        let end = p.at(p.duration);
        assert_eq!((end.s, end.v, end.a), (d, 0.0, 0.0));
    }
}

#[test]
fn poly5_boundary_conditions_and_peak_speed() {
    let (d, v) = (2.449, 0.5);
    let p = Profile::new(ProfileKind::Poly5, d, &limits(v, f64::INFINITY, 0.0)).unwrap();
    // Duration from the peak speed 15D/(8T) = v.
    assert!((p.duration - 15.0 / 8.0 * d / v).abs() < 1e-12);
    let start = p.at(0.0);
    assert_eq!((start.s, start.v, start.a), (0.0, 0.0, 0.0));
    let near_end = p.at(p.duration * (1.0 - 1e-9));
    assert!((near_end.s - d).abs() < 1e-12);
    assert!(near_end.v.abs() < 1e-12 && near_end.a.abs() < 1e-7);
    assert!((p.at(p.duration / 2.0).v - v).abs() < 1e-12);
    // Derivatives consistent with s(t) by central differences.
    let h = 1e-5;
    for u in [0.1, 0.3, 0.5, 0.8] {
        let t = u * p.duration;
        let (a, b, c) = (p.at(t - h), p.at(t), p.at(t + h));
        assert!(((c.s - a.s) / (2.0 * h) - b.v).abs() < 1e-8);
        assert!(((c.v - a.v) / (2.0 * h) - b.a).abs() < 1e-7);
    }
    // With an acceleration limit the duration is at least √(10D/(√3 a)).
    let q = Profile::new(ProfileKind::Poly5, d, &limits(10.0, 1.0, 0.0)).unwrap();
    assert!((q.duration - (10.0 / 3f64.sqrt() * d).sqrt()).abs() < 1e-12);
    let peak_a = (0..=1000)
        .map(|k| q.at(q.duration * k as f64 / 1000.0).a.abs())
        .fold(0.0, f64::max);
    assert!(peak_a <= 1.0 + 1e-9 && peak_a > 0.999, "{peak_a}");
}

#[test]
fn constant_profile_steps_the_velocity() {
    let p = Profile::new(ProfileKind::Constant, 0.2, &limits(0.1, 0.0, 0.0)).unwrap();
    assert!((p.duration - 2.0).abs() < 1e-15);
    assert_eq!(p.at(0.0).v, 0.1);
    assert_eq!(p.at(1.999).v, 0.1);
    assert_eq!(p.at(2.0).v, 0.0);
    assert_eq!(p.at(-1e-9).v, 0.0);
}
