//! The drive against hand calculations of its motor equation, and its implicit step against
//! an independent explicit integration of the same equations at a fine step.

use super::*;

/// uvigo8-drives' drive (robots/uvigo8-drives.toml), its gains from the default rule.
fn drive() -> Drive {
    let robot = crate::fixtures::robot("uvigo8-drives");
    robot.drives[0]
}

/// A drive alone on a cable pulling with a constant winch-side tension `pull`: steps of `dt`
/// under `command(t)`; returns (t, s, v, torque) after each step.
fn run(
    drive: &Drive,
    pull: f64,
    dt: f64,
    steps: usize,
    command: impl Fn(f64) -> DriveCommand,
) -> Vec<(f64, f64, f64, f64)> {
    let mut servo = ServoDrive::holding(drive, pull);
    let params = DriveParams::of(drive);
    let (mut s, mut v) = (1.0, 0.0);
    let mut out = Vec::with_capacity(steps);
    for k in 1..=steps {
        let t = k as f64 * dt;
        let c = command(t);
        let law = servo.law(&params, c, s, v, dt);
        v = law.solve(v, pull, 0.0);
        s += dt * v;
        servo.finish(&params, &law, c, s, v);
        out.push((t, s, v, servo.torque));
    }
    out
}

#[test]
fn holding_a_tension_takes_minus_rho_times_it() {
    let d = drive();
    let pull = 40.0;
    let out = run(&d, pull, 1e-3, 2000, |_| DriveCommand::Position {
        set_point: 1.0,
        rate: 0.0,
    });
    let &(_, s, v, torque) = out.last().unwrap();
    // At rest the motor equation leaves τ = −ρ·T_w (friction is zero at ω = 0).
    let expected = -d.payout_per_radian() * pull;
    assert!(
        (torque - expected).abs() < 1e-9 * expected.abs(),
        "{torque} vs {expected}"
    );
    assert!(
        (s - 1.0).abs() < 1e-12 && v.abs() < 1e-12,
        "held: s {s}, v {v}"
    );
}

#[test]
fn a_constant_acceleration_takes_j_alpha_plus_friction_minus_rho_t() {
    let d = drive();
    let pull = 30.0;
    let accel = 0.5; // m/s² of payout
    let out = run(&d, pull, 1e-4, 12_000, |t| DriveCommand::Position {
        set_point: 1.0 + 0.5 * accel * t * t,
        rate: accel * t,
    });
    let rho = d.payout_per_radian();
    // After the loops' transient (the PI's integral time is 8 ms) the torque is the motor
    // equation's at the commanded motion: τ = J·a/ρ + b·ω + τ_c·tanh(ω/ω₀) − ρ·T.
    for &(t, s, _, torque) in out.iter().filter(|(t, ..)| *t > 0.4) {
        let omega = accel * t / rho;
        let expected = d.rotor_inertia * accel / rho
            + d.viscous_friction * omega
            + d.coulomb_friction * (omega / FRICTION_SMOOTHING).tanh()
            - rho * pull;
        assert!(
            (torque - expected).abs() < 2e-3 * expected.abs(),
            "t = {t}: {torque} vs {expected}"
        );
        let set_point = 1.0 + 0.5 * accel * t * t;
        assert!(
            (s - set_point).abs() < 1e-4,
            "t = {t}: lag {}",
            set_point - s
        );
    }
}

#[test]
fn a_saturated_drive_accelerates_at_its_limit_and_does_not_wind_up() {
    let d = drive();
    let pull = 20.0;
    let dt = 1e-4;
    // A set point far ahead: the drive pays out at its torque limit.
    let out = run(&d, pull, dt, 500, |_| DriveCommand::Position {
        set_point: 3.0,
        rate: 0.0,
    });
    let rho = d.payout_per_radian();
    for w in out[100..].windows(2) {
        let ((_, _, v0, t0), (_, _, v1, _)) = (w[0], w[1]);
        assert!((t0 - d.torque_limit).abs() < 1e-12, "torque {t0}");
        // J·dω/dt = τ_lim + ρT − friction(ω): the payout's acceleration, finite difference.
        let omega = 0.5 * (v0 + v1) / rho;
        let expected =
            (d.torque_limit + rho * pull - d.friction_torque(omega)) / d.rotor_inertia * rho;
        let got = (v1 - v0) / dt;
        assert!(
            (got - expected).abs() < 2e-3 * expected,
            "{got} vs {expected}"
        );
    }
}

/// The same drive and constant pull integrated by classical RK4 at 1 µs (the cascade's
/// integral as a state, its saturation and the exact tanh), a fully independent reference.
fn rk4_reference(
    d: &Drive,
    pull: f64,
    t_end: f64,
    set_point: impl Fn(f64) -> (f64, f64),
) -> (f64, f64) {
    let rho = d.payout_per_radian();
    let (kp, ki, kv) = (d.velocity_gain, d.integral_gain(), d.position_gain);
    let torque_at = |t: f64, theta: f64, omega: f64, integral: f64| {
        let (s_ref, rate) = set_point(t);
        let e = kv * (s_ref / rho - theta) + rate / rho - omega;
        (kp * e + ki * integral).clamp(-d.torque_limit, d.torque_limit)
    };
    let f = |t: f64, y: [f64; 3]| {
        let [theta, omega, integral] = y;
        let (s_ref, rate) = set_point(t);
        let e = kv * (s_ref / rho - theta) + rate / rho - omega;
        let tau = torque_at(t, theta, omega, integral);
        let alpha = (tau + rho * pull - d.friction_torque(omega)) / d.rotor_inertia;
        [omega, alpha, e]
    };
    let h = 1e-6;
    let mut y = [1.0 / rho, 0.0, -rho * pull / ki];
    let steps = (t_end / h).round() as usize;
    for k in 0..steps {
        let t = k as f64 * h;
        let add =
            |y: [f64; 3], k: [f64; 3], c: f64| [y[0] + c * k[0], y[1] + c * k[1], y[2] + c * k[2]];
        let k1 = f(t, y);
        let k2 = f(t + h / 2.0, add(y, k1, h / 2.0));
        let k3 = f(t + h / 2.0, add(y, k2, h / 2.0));
        let k4 = f(t + h, add(y, k3, h));
        for i in 0..3 {
            y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    (y[0] * rho, torque_at(t_end, y[0], y[1], y[2]))
}

#[test]
fn the_implicit_step_at_1_ms_agrees_with_rk4_at_1_us() {
    let d = drive();
    let pull = 25.0;
    // A smooth move of 20 mm in 0.5 s, unsaturated.
    let path = |t: f64| {
        let u = (t / 0.5).min(1.0);
        let shape = u * u * u * (10.0 - 15.0 * u + 6.0 * u * u);
        let rate = if t < 0.5 {
            30.0 * u * u * (1.0 - u) * (1.0 - u) / 0.5
        } else {
            0.0
        };
        (1.0 + 0.02 * shape, 0.02 * rate)
    };
    let dt = 1e-3;
    let out = run(&d, pull, dt, 300, |t| {
        let (set_point, rate) = path(t);
        DriveCommand::Position { set_point, rate }
    });
    let &(t, s, _, torque) = out.last().unwrap();
    let (s_ref, torque_ref) = rk4_reference(&d, pull, t, path);
    assert!((s - s_ref).abs() < 2e-5, "payout {s} vs {s_ref}");
    assert!(
        (torque - torque_ref).abs() < 0.02 * torque_ref.abs(),
        "torque {torque} vs {torque_ref}"
    );
}
