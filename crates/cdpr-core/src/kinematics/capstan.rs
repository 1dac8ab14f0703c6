//! Capstan friction on a swivel pulley (seed 000's "effects of friction … over the pulleys"),
//! one rule for every model.
//!
//! A cable wrapped by β round a pulley of friction coefficient μ that slides over it carries
//! tensions whose ratio across the wrap is e^{μβ} (Euler–Eytelwein), the larger on the side the
//! cable is pulled towards: paying out (the cable moves towards the platform, payout rate
//! v > 0) the platform side carries more; hauling in (v < 0) the winch side carries more, so
//! hauling in needs more winch force than paying out. Through v = 0 the sign of the exponent
//! turns smoothly:
//!
//! ```text
//! T_winch = T_platform · e^{−μβ·tanh(v / v₀)},   v₀ = SLIP_SPEED,
//! ```
//!
//! which is e^{∓μβ} within 10⁻⁸ once |v| > 10 v₀, and 1 at rest (the static friction, which
//! could hold any ratio up to e^{±μβ}, is taken as balanced).

use crate::kinematics::CableGeometry;
use crate::robot::Robot;

/// v₀, m/s: the payout speed over which the capstan ratio turns from e^{+μβ} (hauling in) to
/// e^{−μβ} (paying out), tanh(v/v₀). 1 mm/s: slower than any move a trajectory makes
/// (seed 000's cruise is 100 mm/s), faster than the creep of a holding PID drive.
pub const SLIP_SPEED: f64 = 1e-3;

/// T_winch / T_platform across a wrap of β (rad) on a pulley of friction μ at payout rate
/// `payout_rate` (m/s, > 0 paying out): e^{−μβ·tanh(v/v₀)}. Exactly 1 without friction.
pub fn winch_ratio(friction: f64, wrap: f64, payout_rate: f64) -> f64 {
    if friction == 0.0 || wrap == 0.0 {
        return 1.0;
    }
    (-friction * wrap * (payout_rate / SLIP_SPEED).tanh()).exp()
}

/// Whether any of `robot`'s pulleys has friction (then the winch-side tensions differ from
/// the platform-side ones and the records carry both).
pub fn has_friction(robot: &Robot) -> bool {
    robot
        .cables
        .iter()
        .any(|c| c.pulley.is_some_and(|p| p.friction > 0.0))
}

/// The winch-side tensions of `robot`'s cables at `geometry` (each cable's, at the platform's
/// pose) from the tensions where the cables leave their pulleys towards the platform
/// (`exit`) and the winches' payout rates (m/s), into `out`. Cables without a pulley or
/// without friction copy their tension.
pub fn winch_tensions(
    robot: &Robot,
    geometry: &[CableGeometry],
    exit: &[f64],
    payout_rates: &[f64],
    out: &mut [f64],
) {
    for (k, (cable, o)) in robot.cables.iter().zip(out.iter_mut()).enumerate() {
        let t = exit.get(k).copied().unwrap_or(0.0);
        let ratio = match (&cable.pulley, geometry.get(k).and_then(|g| g.pulley)) {
            (Some(p), Some(g)) => winch_ratio(
                p.friction,
                g.wrap,
                payout_rates.get(k).copied().unwrap_or(0.0),
            ),
            _ => 1.0,
        };
        *o = t * ratio;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_euler_eytelwein_away_from_rest_and_one_at_rest() {
        let (mu, beta) = (0.1, 2.0);
        // Hauling in (v < 0) the winch side carries e^{μβ} times the platform side.
        let haul = winch_ratio(mu, beta, -20.0 * SLIP_SPEED);
        assert!((haul - (0.2f64).exp()).abs() < 1e-12, "{haul}");
        let pay = winch_ratio(mu, beta, 20.0 * SLIP_SPEED);
        assert!((pay - (-0.2f64).exp()).abs() < 1e-12, "{pay}");
        assert_eq!(winch_ratio(mu, beta, 0.0), 1.0);
        assert_eq!(winch_ratio(0.0, beta, -1.0), 1.0);
        // Smooth and monotonic through zero: hauling in always needs more winch force.
        let mut last = f64::INFINITY;
        for k in -50..=50 {
            let r = winch_ratio(mu, beta, k as f64 * 0.1 * SLIP_SPEED);
            assert!(r < last, "not decreasing at {k}");
            last = r;
        }
        // The slope at rest is the linearisation −μβ/v₀ (finite differences).
        let h = 1e-9;
        let slope = (winch_ratio(mu, beta, h) - winch_ratio(mu, beta, -h)) / (2.0 * h);
        assert!(
            (slope + mu * beta / SLIP_SPEED).abs() < 1e-3 * mu * beta / SLIP_SPEED,
            "{slope}"
        );
    }
}
