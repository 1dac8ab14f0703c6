//! A winch's drive as built — motor, gearbox, drum ([`Drive`]) — and its servo drive, one
//! module for every model. In payout coordinates (s = ρ·θ, ρ = r_eff/N) the motor equation
//! J·θ̈ = τ + ρ·T_w − b·θ̇ − τ_c·tanh(θ̇/ω₀) is a mass m = J/ρ² pulled by the cable, pushed by
//! the drive's force τ/ρ and held back by friction. The models integrate it implicitly: over
//! a step of h every force is affine in the payout rate v⁺ at its end ([`DriveLaw`]), the
//! model adds the cable's own affine pull and solves for v⁺ (the elastic model in closed
//! form, the chain in Rapier's multibody with the law's rate term as its implicit damping),
//! and the drive then updates its loops from the v⁺ reached ([`ServoDrive::finish`]).
//!
//! The drive's modes, as a servo drive offers them:
//! - position: a cascade — position P (Kv) with velocity feed-forward from the set point,
//!   velocity PI (Kp, Tn), the torque saturated at the limit with the integral held while it
//!   is (conditional integration, the usual anti-windup);
//! - velocity: the velocity PI on a commanded payout rate;
//! - torque: the commanded torque, saturated.
//!
//! The friction's tanh is linearised about the velocity at the start of the step (one Newton
//! step of the implicit equation), which keeps a reversal smooth at any step.

use crate::robot::Drive;
use crate::robot::drives::FRICTION_SMOOTHING;

/// 1/ω₀, s/rad: a step multiplies by it rather than dividing.
const INV_FRICTION_SMOOTHING: f64 = 1.0 / FRICTION_SMOOTHING;

/// What a drive is asked to do over a step (payout units: m, m/s; torque N·m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DriveCommand {
    /// Follow the payout set point s_ref moving at ṡ_ref.
    Position { set_point: f64, rate: f64 },
    /// Pay out at this rate.
    Velocity(f64),
    /// Give this torque.
    Torque(f64),
}

/// The forces on the payout over one step of `h`, affine in the payout rate v⁺ at its end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriveLaw {
    /// m = J/ρ², kg.
    pub mass: f64,
    /// The drive's force before saturation, f₀ − d·v⁺ (N, N·s/m) …
    pub motor_force: f64,
    pub motor_damping: f64,
    /// … within ±this, N (τ_limit/ρ).
    pub max_force: f64,
    /// Friction g₀ − e·v⁺, N and N·s/m.
    pub friction_force: f64,
    pub friction_damping: f64,
    /// The velocity error of the loop, a − b·v⁺ (rad/s, rad/m): what the integral gathers.
    error_offset: f64,
    error_slope: f64,
    h: f64,
}

impl DriveLaw {
    /// v⁺ of m(v⁺ − v) = h·[F_m(v⁺) + F_f(v⁺) + p₀ − c·v⁺], the drive's force F_m
    /// saturated: `pull` p₀ and `pull_damping` c are the cable's affine pull on the payout
    /// over the step (winch side), v the rate at its start.
    pub fn solve(&self, v: f64, pull: f64, pull_damping: f64) -> f64 {
        let (m, h) = (self.mass, self.h);
        let rest = self.friction_force + pull;
        let damping = self.friction_damping + pull_damping;
        let free =
            (m * v + h * (self.motor_force + rest)) / (m + h * (self.motor_damping + damping));
        let force = self.motor_force - self.motor_damping * free;
        if force.abs() <= self.max_force {
            return free;
        }
        // Saturated: the drive's force is the limit, the rest stays implicit. (The limit
        // lowers |F|, which moves v⁺ so that the unsaturated law asks even more: consistent.)
        let limited = self.max_force.copysign(force);
        (m * v + h * (limited + rest)) / (m + h * damping)
    }

    /// The drive's force at a payout rate v⁺, saturated, N.
    pub fn force_at(&self, v: f64) -> f64 {
        (self.motor_force - self.motor_damping * v).clamp(-self.max_force, self.max_force)
    }

    /// Whether the drive's force at v⁺ is at its limit.
    pub fn saturated_at(&self, v: f64) -> bool {
        (self.motor_force - self.motor_damping * v).abs() > self.max_force
    }
}

/// A drive's numbers as a step uses them, derived once from its [`Drive`] (ρ, J/ρ², Ki, the
/// force limit): a step of eight drives is a few hundred flops, and the roots and divisions
/// of these would be most of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriveParams {
    pub drive: Drive,
    /// ρ, m/rad, and 1/ρ.
    rho: f64,
    inv_rho: f64,
    /// J/ρ², kg.
    mass: f64,
    /// Kp/Tn, N·m/rad.
    ki: f64,
    /// τ_limit/ρ, N.
    max_force: f64,
    /// Half the fastest loop's rate, 1/s ([`DriveParams::substeps`]).
    half_fastest: f64,
}

impl DriveParams {
    pub fn of(drive: &Drive) -> DriveParams {
        let rho = drive.payout_per_radian();
        DriveParams {
            drive: *drive,
            rho,
            inv_rho: 1.0 / rho,
            mass: drive.reflected_mass(),
            ki: drive.integral_gain(),
            max_force: drive.torque_limit / rho,
            half_fastest: drive.fastest_loop() / 2.0,
        }
    }

    /// How many substeps a step of `dt` takes so that each spans at most two time constants
    /// of the drive's fastest loop (the implicit step is stable at any length; beyond two its
    /// lag grows: at 1 ms a 200 Hz velocity loop, 1.26 time constants, is one step and agrees
    /// with RK4 at 1 µs to 20 µm, `motor::tests`): ⌈dt·ω/2⌉ within 1..=64, the usual single
    /// substep found without a division or a call to `ceil`.
    pub fn substeps(&self, dt: f64) -> usize {
        let spans = dt * self.half_fastest;
        if spans <= 1.0 {
            1
        } else {
            (spans.ceil() as usize).clamp(1, 64)
        }
    }
}

/// The changing state of one servo drive: the velocity loop's integral and what the last
/// step reported.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ServoDrive {
    /// ∫(ω_ref − ω) dt, rad.
    integral: f64,
    /// The last step's torque (N·m), motor velocity (rad/s) and following error (m: set
    /// point minus payout; 0 outside position mode).
    pub torque: f64,
    pub velocity: f64,
    pub following_error: f64,
    /// Whether the last step's torque was at the limit.
    pub at_limit: bool,
}

impl ServoDrive {
    /// A drive at rest holding the winch-side tension `tension` at its set point: the
    /// integral carries the holding torque −ρ·T_w (without an integral the position loop
    /// carries it, off its set point by the stretch the caller settles).
    pub fn holding(drive: &Drive, tension: f64) -> ServoDrive {
        let torque = -drive.payout_per_radian() * tension;
        let ki = drive.integral_gain();
        ServoDrive {
            integral: if ki > 0.0 { torque / ki } else { 0.0 },
            torque,
            velocity: 0.0,
            following_error: 0.0,
            at_limit: false,
        }
    }

    /// The law over a step of `h` from payout `s` moving at `v` under `command`.
    pub fn law(&self, p: &DriveParams, command: DriveCommand, s: f64, v: f64, h: f64) -> DriveLaw {
        let drive = &p.drive;
        let inv_rho = p.inv_rho;
        let omega = v * inv_rho;
        // Velocity error ω_ref − ω⁺ = a − b·v⁺ (rad/s).
        let (a, b) = match command {
            DriveCommand::Position { set_point, rate } => (
                (drive.position_gain * (set_point - s) + rate) * inv_rho,
                (1.0 + drive.position_gain * h) * inv_rho,
            ),
            DriveCommand::Velocity(rate) => (rate * inv_rho, inv_rho),
            DriveCommand::Torque(_) => (0.0, 0.0),
        };
        let (torque0, torque_slope) = match command {
            DriveCommand::Torque(t) => (t, 0.0),
            _ => {
                let gain = drive.velocity_gain + p.ki * h;
                (gain * a + p.ki * self.integral, gain * b)
            }
        };
        // τ_f = −b·ω⁺ − τ_c·[t₀ + t₁(ω⁺ − ω)], tanh linearised at ω (none without friction;
        // beyond |ω/ω₀| = 20 tanh is ±1 to the last bit, and the call is spared).
        let tc = drive.coulomb_friction;
        let x = omega * INV_FRICTION_SMOOTHING;
        let (t0, t1) = if tc == 0.0 {
            (0.0, 0.0)
        } else if x.abs() > 20.0 {
            (1.0f64.copysign(x), 0.0)
        } else {
            let t0 = x.tanh();
            (t0, (1.0 - t0 * t0) * INV_FRICTION_SMOOTHING)
        };
        DriveLaw {
            mass: p.mass,
            motor_force: torque0 * inv_rho,
            motor_damping: torque_slope * inv_rho,
            max_force: p.max_force,
            friction_force: -tc * (t0 - t1 * omega) * inv_rho,
            friction_damping: (drive.viscous_friction + tc * t1) * inv_rho * inv_rho,
            error_offset: a,
            error_slope: b,
            h,
        }
    }

    /// After the step: the payout reached `s` moving at `v`; the torque, the integral (held
    /// while saturated) and the following error follow from the law.
    pub fn finish(
        &mut self,
        p: &DriveParams,
        law: &DriveLaw,
        command: DriveCommand,
        s: f64,
        v: f64,
    ) {
        self.at_limit = law.saturated_at(v);
        self.torque = law.force_at(v) * p.rho;
        self.velocity = v * p.inv_rho;
        if !self.at_limit {
            self.integral += law.h * (law.error_offset - law.error_slope * v);
        }
        self.following_error = match command {
            DriveCommand::Position { set_point, .. } => set_point - s,
            _ => 0.0,
        };
    }
}

#[cfg(test)]
mod tests;
