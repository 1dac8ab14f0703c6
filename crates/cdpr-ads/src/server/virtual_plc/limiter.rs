//! The NC's winch limiter: set points within the velocity and acceleration limits.

/// Per-cable rate limiter: set points within the winch's velocity and acceleration limits.
///
/// It follows a target that respects the limits exactly (velocity feed-forward), and brakes
/// towards one that jumps as fast as the limits allow: the speed relative to the target is
/// capped at √(2·a·|e|), the speed from which the winch can still stop within the error e.
#[derive(Debug, Clone)]
pub struct WinchLimiter {
    pub positions: Vec<f64>,
    pub velocities: Vec<f64>,
    previous_targets: Vec<f64>,
    max_velocity: f64,
    max_acceleration: f64,
}

impl WinchLimiter {
    pub fn new(start: &[f64], max_velocity: f64, max_acceleration: f64) -> WinchLimiter {
        WinchLimiter {
            positions: start.to_vec(),
            velocities: vec![0.0; start.len()],
            previous_targets: start.to_vec(),
            max_velocity,
            max_acceleration,
        }
    }

    /// Advances by `dt` towards `targets` (m).
    pub fn step(&mut self, targets: &[f64], dt: f64) {
        let (vmax, amax) = (self.max_velocity, self.max_acceleration);
        for (k, &target) in targets.iter().enumerate().take(self.positions.len()) {
            let target_velocity = (target - self.previous_targets[k]) / dt;
            let pos = self.positions[k];
            // Error left if the winch moved with the target this tick.
            let e = target - (pos + target_velocity * dt);
            // Braking speed in discrete time: decelerating by a·dt per tick from v covers
            // v²/(2a) + v·dt/2, so v = (−a·dt + √(a²dt² + 8·a·|e|))/2 stops within |e|.
            let brake = (-amax * dt + (amax * amax * dt * dt + 8.0 * amax * e.abs()).sqrt()) / 2.0;
            let correction = e.signum() * (e.abs() / dt).min(brake);
            let wanted = target_velocity + correction;
            let v_prev = self.velocities[k];
            let v = wanted
                .clamp(v_prev - amax * dt, v_prev + amax * dt)
                .clamp(-vmax, vmax);
            self.velocities[k] = v;
            self.positions[k] = pos + v * dt;
            self.previous_targets[k] = target;
        }
    }
}
