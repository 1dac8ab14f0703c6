//! The winch side of a cable: a set-point shaper that respects the robot's velocity,
//! acceleration and jerk limits (what an NC axis does to a position command), and the PID
//! drive of `length` mode for the platform-only (elastic) model.

use crate::robot::Winch;

/// Shapes a raw length command into a set point with |v| ≤ v_max, |a| ≤ a_max and
/// |da/dt| ≤ j_max, as an NC axis does. A command whose own velocity, acceleration and jerk
/// are within the limits passes through unchanged (the shaper is "locked" to it); when the
/// command violates a limit (a jump, the corner of a trapezoidal profile, a too fast move) the
/// set point follows it with a nested-saturation tracker
///     v_ref = sat(v_c + k1·e), a_ref = sat(a_c + k2·(v_ref − v)), j = sat(k3·(a_ref − a)),
/// with e the command minus the set point predicted one step ahead, k3 = 10·J/A, k2 = k3/4,
/// k1 = k2/4, and locks again once it has caught up. Measured on a 1.5 m/s² trapezoid corner
/// with uvigo8's limits: ≤ 1.2 mm transient lag (close to the a³/J² ≈ 1.4 mm a jerk limit
/// imposes), settled in 0.5 s. (Ruckig's tracking from the `rsruckig` crate was tried and
/// lagged up to 8 mm on the same command: it re-plans to the target's present state.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SetpointShaper {
    pub position: f64,
    pub velocity: f64,
    pub acceleration: f64,
    locked: bool,
    /// The last three commands (newest last), for their derivatives.
    history: [f64; 3],
}

impl SetpointShaper {
    /// A shaper at rest at `position`.
    pub fn at(position: f64) -> SetpointShaper {
        SetpointShaper {
            position,
            velocity: 0.0,
            acceleration: 0.0,
            locked: true,
            history: [position; 3],
        }
    }

    /// Advances one step of `dt` towards `target`; returns the new set point.
    pub fn update(&mut self, target: f64, dt: f64, limits: &Winch) -> f64 {
        let (vmax, amax, jmax) = (
            limits.max_velocity,
            limits.max_acceleration,
            limits.max_jerk,
        );
        let [h0, h1, h2] = self.history;
        self.history = [h1, h2, target];
        // The command's own derivatives (backward differences).
        let v_c = (target - h2) / dt;
        let v_prev = (h2 - h1) / dt;
        let a_c = (v_c - v_prev) / dt;
        let a_prev = (v_prev - (h1 - h0) / dt) / dt;
        let j_c = (a_c - a_prev) / dt;
        let margin = 1.0 + 1e-9;
        let feasible =
            v_c.abs() <= vmax * margin && a_c.abs() <= amax * margin && j_c.abs() <= jmax * margin;
        if self.locked && feasible {
            self.position = target;
            self.velocity = v_c;
            self.acceleration = a_c;
            return target;
        }
        self.locked = false;
        let sat = |x: f64, l: f64| x.clamp(-l, l);
        let k3 = 10.0 * jmax / amax;
        let (k2, k1) = (k3 / 4.0, k3 / 16.0);
        let predicted = self.position + self.velocity * dt + 0.5 * self.acceleration * dt * dt;
        let error = target - predicted;
        let (v_ff, a_ff) = if feasible {
            (v_c, a_c)
        } else {
            (sat(v_c, vmax), 0.0)
        };
        let v_ref = sat(v_ff + k1 * error, vmax);
        let a_ref = sat(a_ff + k2 * (v_ref - self.velocity), amax);
        let jerk = sat(k3 * (a_ref - self.acceleration), jmax);
        let a_next = sat(self.acceleration + jerk * dt, amax);
        let v_next = sat(
            self.velocity + 0.5 * (self.acceleration + a_next) * dt,
            vmax,
        );
        self.position += 0.5 * (self.velocity + v_next) * dt;
        self.velocity = v_next;
        self.acceleration = a_next;
        // Caught up: lock again (the remaining jump is at most 1 µm).
        let caught = (target - self.position).abs() < 1e-6
            && (v_c - self.velocity).abs() < 1e-4
            && (a_c - self.acceleration).abs() < 0.05;
        if feasible && caught {
            self.locked = true;
            self.position = target;
            self.velocity = v_c;
            self.acceleration = a_c;
        }
        self.position
    }
}

/// A winch drive in `length` mode: the reflected mass m of drum and motor, pulled out by the
/// cable tension f and held by a PID force on the position error e = s − s_ref:
///     m s̈ = f − (kp·e + ki·∫e + kd·ė).
/// Integrated by backward Euler together with the cable's own spring and damper (linear in
/// s), which keeps the stiff loop stable at any step size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PidWinch {
    /// Payout s (the cable's rest length between exit point and platform anchor), m.
    pub position: f64,
    pub velocity: f64,
    /// ∫(s − s_ref) dt, m·s.
    pub integral: f64,
}

impl PidWinch {
    pub fn at(position: f64) -> PidWinch {
        PidWinch {
            position,
            velocity: 0.0,
            integral: 0.0,
        }
    }

    /// A drive already holding `tension` at rest: the integral term carries the load.
    pub fn holding(position: f64, tension: f64, gains: &Winch) -> PidWinch {
        let integral = if gains.ki > 0.0 {
            tension / gains.ki
        } else {
            0.0
        };
        PidWinch {
            position,
            velocity: 0.0,
            integral,
        }
    }

    /// One step. `set_point`/`set_rate`: shaped command and its rate; `length`/`length_rate`:
    /// the cable's geometric length and its rate; `stiffness`/`damping`: the cable's k and c
    /// (the cable only pulls when it is taut, `taut`).
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        set_point: f64,
        set_rate: f64,
        length: f64,
        length_rate: f64,
        stiffness: f64,
        damping: f64,
        taut: bool,
        gains: &Winch,
        dt: f64,
    ) {
        let (k, c) = if taut {
            (stiffness, damping)
        } else {
            (0.0, 0.0)
        };
        let (m, kp, ki, kd) = (gains.mass, gains.kp, gains.ki, gains.kd);
        // m(v⁺ − v) = dt[k(L − s − dt v⁺) + c(L̇ − v⁺) − kp(s + dt v⁺ − s_ref) − kd(v⁺ − ṡ_ref) − ki I]
        let rhs = m * self.velocity
            + dt * (k * (length - self.position) + c * length_rate
                - kp * (self.position - set_point)
                + kd * set_rate
                - ki * self.integral);
        let lhs = m + dt * dt * (k + kp) + dt * (c + kd);
        self.velocity = rhs / lhs;
        self.position += dt * self.velocity;
        self.integral += dt * (self.position - set_point);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Winch {
        // Seed 003's actuator limits.
        Winch {
            max_velocity: 3.0,
            max_acceleration: 15.0,
            max_jerk: 22.5,
            mass: 0.2,
            kp: 2e5,
            ki: 2e6,
            kd: 600.0,
        }
    }

    #[test]
    fn shaper_passes_a_smooth_command_through() {
        let w = limits();
        let dt = 1e-3;
        let mut s = SetpointShaper::at(1.0);
        let mut worst: f64 = 0.0;
        for k in 1..=3000 {
            let t = k as f64 * dt;
            // Starts from rest with finite jerk: v ≤ 0.08 m/s, a ≤ 0.08 m/s², j ≤ 0.16 m/s³.
            let target = 1.0 + 0.02 * (2.0 * t - (2.0 * t).sin());
            let out = s.update(target, dt, &w);
            worst = worst.max((out - target).abs());
        }
        assert_eq!(worst, 0.0, "a feasible command must pass through unchanged");
    }

    #[test]
    fn shaper_respects_limits_on_a_step_and_arrives() {
        let w = limits();
        let dt = 1e-3;
        let mut s = SetpointShaper::at(0.0);
        let (mut vmax, mut amax, mut jmax): (f64, f64, f64) = (0.0, 0.0, 0.0);
        let mut prev_a = 0.0;
        for _ in 0..20000 {
            s.update(2.0, dt, &w);
            vmax = vmax.max(s.velocity.abs());
            amax = amax.max(s.acceleration.abs());
            jmax = jmax.max(((s.acceleration - prev_a) / dt).abs());
            prev_a = s.acceleration;
        }
        assert!(
            vmax <= 3.0 + 1e-12 && amax <= 15.0 + 1e-12 && jmax <= 22.5 + 1e-9,
            "{vmax} {amax} {jmax}"
        );
        assert_eq!(s.position, 2.0, "must catch up and lock onto the target");
        assert_eq!(s.velocity, 0.0);
    }

    #[test]
    fn pid_winch_holds_a_load_without_steady_error() {
        // A cable pulling with a constant 50 N (no stretch dependence): the integral term must
        // take the load, leaving zero position error.
        let w = limits();
        let mut winch = PidWinch::at(1.0);
        for _ in 0..20000 {
            // Cable modelled as a pure 50 N pull: k = 0, force via length term equivalent.
            winch.step(
                1.0,
                0.0,
                1.0 + 50.0 / 20000.0,
                0.0,
                20000.0,
                0.0,
                true,
                &w,
                1e-3,
            );
        }
        // At rest: k(L − s) = ki·I with s = 1.0 → tension 50 N carried by the integral.
        assert!((winch.position - 1.0).abs() < 1e-7, "{}", winch.position);
        assert!((w.ki * winch.integral - 50.0).abs() < 1e-3);
    }
}
