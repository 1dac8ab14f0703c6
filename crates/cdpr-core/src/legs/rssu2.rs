//! The 2-DOF 2-RSSU motion platform of seed 004: two actuated cranks (R), each driving a rod
//! with spherical joints at both ends (S-S) up to the moving base, which turns about a
//! universal joint (U) at the origin; pitch and roll only.
//!
//! Geometry (our frame: x forward, y left, z up; seed 004 §3.1 calls the same motions
//! pitch and roll about its X and Y axes, drawn in its Fig. 2): the platform's rod attachments sit at
//! P_i = (b, ±a, 0) in the platform frame (i = 0: left, 1: right); the crank axes run along x
//! through M_i = (b, ±(a + c), −r) with c the crank and r the rod length, so that at rest
//! (platform level, cranks horizontal, as in seed 004's appendix) each rod hangs vertically
//! under its attachment. Crank i ends at C_i = M_i + c·(0, ∓cos θ_i, sin θ_i).
//! The platform's orientation is R = Ry(pitch)·Rx(roll) (yaw held at zero by the U joint).

use nalgebra::{Rotation3, Vector3};
use serde::Serialize;

/// Dimensions of a 2-RSSU platform (SI: m, rad).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rssu2 {
    /// a: lateral half-distance between the two rod attachments.
    pub half_width: f64,
    /// b: forward distance of the attachments from the universal joint.
    pub forward: f64,
    /// c: crank ("biela") length.
    pub crank: f64,
    /// r: rod ("pistón") length.
    pub rod: f64,
    /// Crank angle limits [θ_min, θ_max] from the horizontal, positive lifting the rod.
    pub crank_limits: [f64; 2],
}

/// Why an orientation cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rssu2Violation {
    /// The rod cannot reach the crank circle (seed 004 appendix: complex root).
    Unreachable,
    /// The crank angle is outside its limits.
    CrankLimit,
}

impl std::fmt::Display for Rssu2Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Rssu2Violation::Unreachable => "a rod cannot reach its crank circle",
            Rssu2Violation::CrankLimit => "a crank angle beyond its limits",
        })
    }
}

impl Rssu2 {
    fn side(i: usize) -> f64 {
        if i == 0 { 1.0 } else { -1.0 }
    }

    /// Rod attachment P_i in the platform frame.
    pub fn attachment(&self, i: usize) -> Vector3<f64> {
        Vector3::new(self.forward, Self::side(i) * self.half_width, 0.0)
    }

    /// Crank pivot M_i (world).
    pub fn pivot(&self, i: usize) -> Vector3<f64> {
        Vector3::new(
            self.forward,
            Self::side(i) * (self.half_width + self.crank),
            -self.rod,
        )
    }

    /// Crank end C_i for crank angle θ (world).
    pub fn crank_end(&self, i: usize, theta: f64) -> Vector3<f64> {
        self.pivot(i) + Vector3::new(0.0, -Self::side(i) * theta.cos(), theta.sin()) * self.crank
    }

    pub fn rotation(roll: f64, pitch: f64) -> Rotation3<f64> {
        Rotation3::from_euler_angles(roll, pitch, 0.0)
    }

    /// Crank angles for an orientation (seed 004, appendix A: the sphere of radius r about
    /// the attachment meets the crank's circle). Of the two intersections the one nearer the
    /// horizontal rest angle is taken; it is then checked against the crank limits.
    pub fn inverse(&self, roll: f64, pitch: f64) -> Result<[f64; 2], Rssu2Violation> {
        let rot = Self::rotation(roll, pitch);
        let mut angles = [0.0; 2];
        for (i, angle) in angles.iter_mut().enumerate() {
            let d = rot * self.attachment(i) - self.pivot(i);
            // |d − c(0, −s cos θ, s... )|² = r²  ⇔  A cos θ + B sin θ = C.
            let s = Self::side(i);
            let a = -2.0 * self.crank * s * d.y;
            let b = 2.0 * self.crank * d.z;
            let c = d.norm_squared() + self.crank * self.crank - self.rod * self.rod;
            let radius = (a * a + b * b).sqrt();
            if radius < 1e-15 || c.abs() > radius {
                return Err(Rssu2Violation::Unreachable);
            }
            let phi = b.atan2(a);
            let delta = (c / radius).acos();
            let wrap = |x: f64| {
                (x + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
            };
            let (t1, t2) = (wrap(phi + delta), wrap(phi - delta));
            let theta = if t1.abs() <= t2.abs() { t1 } else { t2 };
            if theta < self.crank_limits[0] - 1e-12 || theta > self.crank_limits[1] + 1e-12 {
                return Err(Rssu2Violation::CrankLimit);
            }
            *angle = theta;
        }
        Ok(angles)
    }

    pub fn reachable(&self, roll: f64, pitch: f64) -> bool {
        self.inverse(roll, pitch).is_ok()
    }

    /// Largest reachable angle along the direction (roll, pitch) = t·(u_roll, u_pitch), t ≥ 0,
    /// by bisection on the inverse kinematics (the reachable set is star-shaped about rest).
    pub fn reach(&self, u_roll: f64, u_pitch: f64) -> f64 {
        let (mut lo, mut hi) = (0.0, 1.5);
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if self.reachable(mid * u_roll, mid * u_pitch) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Excursion ranges as in seed 004's Table 1: [pitch−, pitch+, roll−, roll+], rad.
    pub fn ranges(&self) -> [f64; 4] {
        [
            -self.reach(0.0, -1.0),
            self.reach(0.0, 1.0),
            -self.reach(-1.0, 0.0),
            self.reach(1.0, 0.0),
        ]
    }

    /// Seed 004's DOF combination (its CombinacionGdL): when the requested (roll, pitch) is out
    /// of reach, scale it down proportionally, by bisection, to the largest reachable fraction.
    pub fn combine(&self, roll: f64, pitch: f64, tolerance: f64) -> (f64, f64) {
        if self.reachable(roll, pitch) {
            return (roll, pitch);
        }
        let (mut lo, mut hi) = (0.0, 1.0);
        while (hi - lo) * roll.abs().max(pitch.abs()) > tolerance {
            let mid = 0.5 * (lo + hi);
            if self.reachable(mid * roll, mid * pitch) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo * roll, lo * pitch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dimensions shipped in robots/rssu2.toml.
    pub(crate) fn platform() -> Rssu2 {
        Rssu2 {
            half_width: 0.177103277,
            forward: 0.161845503,
            crank: 0.1,
            rod: 0.3,
            crank_limits: [-0.900479572, std::f64::consts::FRAC_PI_3],
        }
    }

    #[test]
    fn rest_is_level_with_horizontal_cranks() {
        let p = platform();
        let [a, b] = p.inverse(0.0, 0.0).expect("rest is reachable");
        assert!(a.abs() < 1e-12 && b.abs() < 1e-12);
    }

    #[test]
    fn rods_keep_their_length() {
        let p = platform();
        for (roll, pitch) in [(0.2, -0.1), (-0.2, 0.15), (0.05, 0.4)] {
            let angles = p.inverse(roll, pitch).expect("reachable");
            let rot = Rssu2::rotation(roll, pitch);
            for (i, theta) in angles.iter().enumerate() {
                let rod = rot * p.attachment(i) - p.crank_end(i, *theta);
                assert!(
                    (rod.norm() - p.rod).abs() < 1e-12,
                    "rod {i}: {}",
                    rod.norm()
                );
            }
        }
    }

    #[test]
    fn ranges_reproduce_seed_004_table_1() {
        // Table 1: pitch [−30.27°, 30.27°], roll [−26.38°, 26.38°].
        let r = platform().ranges().map(f64::to_degrees);
        let expected = [-30.27, 30.27, -26.38, 26.38];
        for (got, want) in r.iter().zip(expected) {
            assert!((got - want).abs() < 0.01, "{r:?}");
        }
    }

    #[test]
    fn combination_scales_proportionally_to_the_boundary() {
        let p = platform();
        let (roll, pitch) = p.combine(0.6, 0.6, 1e-9);
        assert!((roll - pitch).abs() < 1e-12, "proportions kept");
        assert!(p.reachable(roll, pitch) && !p.reachable(roll * 1.001, pitch * 1.001));
        // Maximum pitch is not reached together with maximum roll (seed 004, section 3.1).
        assert!(roll < 26.38f64.to_radians() && pitch < 30.27f64.to_radians());
        assert_eq!(p.combine(0.1, -0.05, 1e-9), (0.1, -0.05));
    }
}
