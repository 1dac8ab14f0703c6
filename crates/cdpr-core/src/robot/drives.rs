//! `[winch]`'s drive keys: the motor, gearbox and drum of each cable's winch, and the gains of
//! the servo drive's cascade. A file without them has no drive model ([`Robot::drives`] is
//! empty) and runs exactly as before; with any of them, the required ones must all be there.
//!
//! Conventions (the guide's drives page): the motor angle θ grows as the cable pays out; the
//! payout per motor radian is ρ = r_eff/N with r_eff = √(r² + (p/2π)²) (a helical groove of
//! pitch p moves the cable's exit along the drum as it turns); the motor obeys
//!     J·θ̈ = τ + ρ·T_w − b·θ̇ − τ_c·tanh(θ̇/ω₀),
//! T_w the winch-side tension, τ the drive's torque saturated at the limit. Holding a tension
//! therefore takes a negative torque (τ = −ρ·T_w at rest).

use super::Robot;
use super::error::RobotFileError;
use super::fields::Ctx;
use super::pulleys::{Rule, per_cable_within};
use super::raw::{RawWinch, ScalarOrList};
use serde::Serialize;
use std::f64::consts::TAU;
use toml::Spanned;

/// The velocity below which Coulomb friction is smoothed (tanh(ω/ω₀)), rad/s: 0.1 rad/s is
/// 1 rpm of the motor, well under any commanded speed and wide enough for the implicit
/// step to stay smooth through reversals.
pub const FRICTION_SMOOTHING: f64 = 0.1;

/// Default velocity-loop bandwidth when the file gives no gains, Hz: a servo drive's
/// velocity loop typically closes at 100–500 Hz on an unloaded motor with a fine encoder.
pub const DEFAULT_VELOCITY_BANDWIDTH: f64 = 200.0;

/// Default encoder resolution, increments per motor turn (a 20-bit absolute encoder).
pub const DEFAULT_ENCODER_INCREMENTS: f64 = 1_048_576.0;

/// One winch's drive train and servo drive (SI; torques and inertia on the motor side).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Drive {
    /// Drum radius r, m.
    pub drum_radius: f64,
    /// Axial travel of the cable per drum turn p, m (0: a plain drum).
    pub drum_pitch: f64,
    /// Motor turns per drum turn N.
    pub gear_ratio: f64,
    /// J, kg·m²: the rotor with drum and gearbox reflected to the motor.
    pub rotor_inertia: f64,
    /// b, N·m·s/rad.
    pub viscous_friction: f64,
    /// τ_c, N·m.
    pub coulomb_friction: f64,
    /// The largest torque the drive gives, N·m.
    pub torque_limit: f64,
    /// 100 % torque, N·m.
    pub rated_torque: f64,
    /// Increments per motor turn.
    pub encoder_increments: f64,
    /// Position loop Kv, 1/s: velocity set point = Kv·(θ_ref − θ) + θ̇_ref.
    pub position_gain: f64,
    /// Velocity loop Kp, N·m·s/rad.
    pub velocity_gain: f64,
    /// Velocity loop integral time Tn, s (0: no integral).
    pub integral_time: f64,
}

impl Drive {
    /// r_eff = √(r² + (p/2π)²), m.
    pub fn effective_radius(&self) -> f64 {
        self.drum_radius.hypot(self.drum_pitch / TAU)
    }

    /// ρ = r_eff/N: payout per motor radian, m/rad.
    pub fn payout_per_radian(&self) -> f64 {
        self.effective_radius() / self.gear_ratio
    }

    /// J/ρ²: the drive's inertia as a mass on the cable, kg.
    pub fn reflected_mass(&self) -> f64 {
        let rho = self.payout_per_radian();
        self.rotor_inertia / (rho * rho)
    }

    /// The friction torque opposing a motor velocity ω, N·m: b·ω + τ_c·tanh(ω/ω₀).
    pub fn friction_torque(&self, omega: f64) -> f64 {
        self.viscous_friction * omega + self.coulomb_friction * (omega / FRICTION_SMOOTHING).tanh()
    }

    /// The torque that moves the motor at ω with acceleration α against the winch-side
    /// tension T_w: τ = J·α + b·ω + τ_c·tanh(ω/ω₀) − ρ·T_w, N·m (the motor equation solved
    /// for τ).
    pub fn torque_for(&self, omega: f64, alpha: f64, winch_tension: f64) -> f64 {
        self.rotor_inertia * alpha + self.friction_torque(omega)
            - self.payout_per_radian() * winch_tension
    }

    /// The velocity loop's integral gain Kp/Tn, N·m/rad (0 without an integral).
    pub fn integral_gain(&self) -> f64 {
        if self.integral_time > 0.0 {
            self.velocity_gain / self.integral_time
        } else {
            0.0
        }
    }

    /// The fastest of the loops, rad/s: the velocity loop's Kp/J (its bandwidth on the motor
    /// alone) and the position loop's Kv. A step longer than a fraction of its inverse is
    /// substepped.
    pub fn fastest_loop(&self) -> f64 {
        (self.velocity_gain / self.rotor_inertia).max(self.position_gain)
    }

    /// A torque in % of rated.
    pub fn percent_of_rated(&self, torque: f64) -> f64 {
        100.0 * torque / self.rated_torque
    }

    /// Encoder increments at a payout, counted from payout 0.
    pub fn increments_at(&self, payout: f64) -> f64 {
        payout / self.payout_per_radian() / TAU * self.encoder_increments
    }

    /// The payout at an encoder count, m ([`Drive::increments_at`] inverted).
    pub fn payout_at(&self, increments: f64) -> f64 {
        increments / self.encoder_increments * TAU * self.payout_per_radian()
    }
}

impl Robot {
    /// Whether the file describes the drives as built (motor, gearbox, drum).
    pub fn has_drives(&self) -> bool {
        !self.drives.is_empty()
    }
}

/// The keys and what each must be. The first five are required once any drive key is given.
const REQUIRED: [&str; 5] = [
    "drum_radius",
    "gear_ratio",
    "rotor_inertia",
    "torque_limit",
    "rated_torque",
];

/// The drives of `[winch]`, one per cable (`names`), or none when the section gives no
/// drive key.
pub(super) fn build(
    ctx: &Ctx,
    raw: &RawWinch,
    names: &[String],
) -> Result<Vec<Drive>, RobotFileError> {
    let keys = keys(raw);
    let Some((first, _)) = keys.iter().find(|(_, v)| v.is_some()) else {
        return Ok(Vec::new());
    };
    if let Some((missing, _)) = keys[..REQUIRED.len()].iter().find(|(_, v)| v.is_none()) {
        return Err(ctx.err(
            None,
            &format!("winch.{missing}"),
            format!(
                "missing: `winch.{first}` describes the drives, which then need all of {}",
                REQUIRED.map(|k| format!("`{k}`")).join(", ")
            ),
        ));
    }
    let count = names.len();
    let each = |s: &Option<Spanned<ScalarOrList>>, key: &str, rule: Rule, default: f64| match s {
        None => Ok(vec![default; count]),
        Some(s) => per_cable_within(ctx, s, &format!("winch.{key}"), names, rule),
    };
    let at_least_zero = |what| Rule::at_least_zero(what, f64::MAX);
    let bounded = |what, max| Rule {
        what,
        max,
        holds: |x| x > 0.0,
    };
    let radius = each(
        &raw.drum_radius,
        "drum_radius",
        bounded("positive (m)", 1.0),
        0.0,
    )?;
    let pitch = each(
        &raw.drum_pitch,
        "drum_pitch",
        Rule::at_least_zero("≥ 0 m per turn (0 = a plain drum)", 1.0),
        0.0,
    )?;
    let ratio = each(
        &raw.gear_ratio,
        "gear_ratio",
        bounded("positive (motor turns per drum turn)", 1e4),
        1.0,
    )?;
    let inertia = each(
        &raw.rotor_inertia,
        "rotor_inertia",
        bounded("positive (kg·m², motor side)", 100.0),
        0.0,
    )?;
    let viscous = each(
        &raw.viscous_friction,
        "viscous_friction",
        at_least_zero("≥ 0 N·m·s/rad"),
        0.0,
    )?;
    let coulomb = each(
        &raw.coulomb_friction,
        "coulomb_friction",
        at_least_zero("≥ 0 N·m"),
        0.0,
    )?;
    let limit = each(
        &raw.torque_limit,
        "torque_limit",
        bounded("positive (N·m, motor side)", 1e5),
        0.0,
    )?;
    let rated = each(
        &raw.rated_torque,
        "rated_torque",
        bounded("positive (N·m, motor side)", 1e5),
        0.0,
    )?;
    let encoder = each(
        &raw.encoder_increments,
        "encoder_increments",
        Rule {
            what: "at least 1 increment per motor turn",
            max: 2f64.powi(40),
            holds: |x| x >= 1.0,
        },
        DEFAULT_ENCODER_INCREMENTS,
    )?;
    let bandwidth = each(
        &raw.velocity_bandwidth,
        "velocity_bandwidth",
        bounded("positive (Hz)", 1e4),
        DEFAULT_VELOCITY_BANDWIDTH,
    )?;
    // Defaults from J and the velocity loop's bandwidth ω_v = 2π·f_v (the guide's rule):
    // Kp = J·ω_v puts the unloaded loop's crossover at ω_v, Tn = 4/ω_v keeps the PI's zero a
    // factor 4 below it, Kv = ω_v/10 leaves the position loop a decade slower.
    let omega_v: Vec<f64> = bandwidth.iter().map(|f| TAU * f).collect();
    let gain =
        |s: &Option<Spanned<ScalarOrList>>, key: &str, what, rule: fn(f64, f64) -> f64| match s {
            None => Ok((0..count).map(|k| rule(inertia[k], omega_v[k])).collect()),
            Some(_) => each(s, key, at_least_zero(what), 0.0),
        };
    let kv = gain(&raw.position_gain, "position_gain", "≥ 0 1/s", |_, w| {
        w / 10.0
    })?;
    let kp = gain(
        &raw.velocity_gain,
        "velocity_gain",
        "≥ 0 N·m·s/rad",
        |j, w| j * w,
    )?;
    let tn = gain(
        &raw.integral_time,
        "integral_time",
        "≥ 0 s (0 = no integral)",
        |_, w| 4.0 / w,
    )?;
    Ok((0..count)
        .map(|k| Drive {
            drum_radius: radius[k],
            drum_pitch: pitch[k],
            gear_ratio: ratio[k],
            rotor_inertia: inertia[k],
            viscous_friction: viscous[k],
            coulomb_friction: coulomb[k],
            torque_limit: limit[k],
            rated_torque: rated[k],
            encoder_increments: encoder[k],
            position_gain: kv[k],
            velocity_gain: kp[k],
            integral_time: tn[k],
        })
        .collect())
}

/// `[winch]`'s drive keys and their values, the [`REQUIRED`] ones first.
fn keys(raw: &RawWinch) -> [(&'static str, &Option<Spanned<ScalarOrList>>); 13] {
    [
        ("drum_radius", &raw.drum_radius),
        ("gear_ratio", &raw.gear_ratio),
        ("rotor_inertia", &raw.rotor_inertia),
        ("torque_limit", &raw.torque_limit),
        ("rated_torque", &raw.rated_torque),
        ("drum_pitch", &raw.drum_pitch),
        ("viscous_friction", &raw.viscous_friction),
        ("coulomb_friction", &raw.coulomb_friction),
        ("encoder_increments", &raw.encoder_increments),
        ("position_gain", &raw.position_gain),
        ("velocity_gain", &raw.velocity_gain),
        ("integral_time", &raw.integral_time),
        ("velocity_bandwidth", &raw.velocity_bandwidth),
    ]
}

/// The first drive key given in a section that takes none (`[actuators]` of a robot with
/// legs), for the message.
pub(super) fn first_drive_key(raw: &RawWinch) -> Option<(&'static str, std::ops::Range<usize>)> {
    keys(raw)
        .into_iter()
        .find_map(|(k, v)| v.as_ref().map(|s| (k, s.span())))
}
