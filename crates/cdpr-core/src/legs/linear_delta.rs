//! The linear delta robot of Keops type (seed 002): three actuated prismatic rails 120° apart,
//! inclined at α to the base plane, each carriage carrying a parallelogram of two rigid arms
//! with spherical joints at both ends; the platform keeps its orientation.
//!
//! Frame (seed 002, Fig. 3): O at the centre of the base plane, z up; rail i meets the base
//! plane at A_i = a·(cos β_i, sin β_i, 0), β_i = 0°, 120°, 240°, and runs inwards and down
//! along d_i0 = (−cos α cos β_i, −cos α sin β_i, −sin α). The carriage sits at C_i = A_i + d_i·d_i0
//! (d_i the actuator coordinate), the platform anchor at Q_i = p + b·(cos β_i, sin β_i, 0).

// Index loops over the legs read like the paper's equations (i = 1..3).
#![allow(clippy::needless_range_loop)]

use nalgebra::Vector3;
use serde::Serialize;

/// Dimensions of a linear delta (SI: m, rad).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinearDelta {
    /// α: inclination of the rails to the base plane (seed 002: 45°, modifiable).
    pub rail_angle: f64,
    /// a: radius of the circle where the rails cross the base plane.
    pub base_radius: f64,
    /// b: radius of the platform anchors (mid-points of the arm pairs).
    pub platform_radius: f64,
    /// l: arm length between the spherical joint centres.
    pub arm_length: f64,
    /// Distance between the two arms of a parallelogram.
    pub arm_spacing: f64,
    /// Radius of an arm, for the clearance check.
    pub arm_radius: f64,
    /// Actuator stroke [d_min, d_max] along the rail.
    pub stroke: [f64; 2],
    /// Largest opening of a spherical joint from its central axis (seed 002: 17°).
    pub spherical_limit: f64,
    /// Central axis of every spherical joint: the arm direction at this platform position.
    pub neutral: Vector3<f64>,
}

/// The cylinder the robot must cover (seed 002: 150 mm diameter, 220 mm high).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cylinder {
    pub radius: f64,
    pub height: f64,
    /// z of the top face; the axis is the z axis.
    pub z_top: f64,
}

/// Why a platform position is out of reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Violation {
    /// The arm cannot reach the rail (no real root of seed 002 eq. 14).
    Unreachable,
    /// The actuator coordinate is outside the stroke.
    Stroke,
    /// A spherical joint would open beyond its limit.
    SphericalJoint,
    /// Arms of different legs come closer than two arm radii.
    Clearance,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Violation::Unreachable => "an arm cannot reach its rail",
            Violation::Stroke => "a carriage outside its stroke",
            Violation::SphericalJoint => "a spherical joint beyond its limit",
            Violation::Clearance => "arms of two legs too close",
        })
    }
}

/// Inverse kinematics of one position: actuator coordinates, carriage points and arm
/// directions, or the first violated constraint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeltaIk {
    pub actuators: [f64; 3],
    pub carriages: [Vector3<f64>; 3],
    /// Unit arm directions, carriage → platform.
    pub arms: [Vector3<f64>; 3],
}

impl LinearDelta {
    fn beta(i: usize) -> f64 {
        i as f64 * 2.0 * std::f64::consts::PI / 3.0
    }

    /// A_i: where rail i crosses the base plane.
    pub fn rail_origin(&self, i: usize) -> Vector3<f64> {
        let b = Self::beta(i);
        Vector3::new(self.base_radius * b.cos(), self.base_radius * b.sin(), 0.0)
    }

    /// d_i0: unit vector of rail i, inwards and down.
    pub fn rail_direction(&self, i: usize) -> Vector3<f64> {
        let (b, a) = (Self::beta(i), self.rail_angle);
        Vector3::new(-a.cos() * b.cos(), -a.cos() * b.sin(), -a.sin())
    }

    /// Platform anchor of leg i (mid-point of its arm pair) in the platform frame.
    pub fn platform_anchor(&self, i: usize) -> Vector3<f64> {
        let b = Self::beta(i);
        Vector3::new(
            self.platform_radius * b.cos(),
            self.platform_radius * b.sin(),
            0.0,
        )
    }

    /// Unit vector along which the two arms of leg i are spaced (tangential).
    pub fn pair_axis(i: usize) -> Vector3<f64> {
        let b = Self::beta(i);
        Vector3::new(-b.sin(), b.cos(), 0.0)
    }

    /// Seed 002 eqs. 10–15: with L_i = p + b_i − a_i, the actuator coordinate solves
    /// d² − 2d (L·d0) + |L|² − l² = 0, so d = L·d0 ± √((L·d0)² − |L|² + l²); the smaller root
    /// (carriage nearer the base) is taken, as the paper does. Returns the coordinates without
    /// checking any limit; None when the arm cannot reach the rail.
    pub fn actuators(&self, p: &Vector3<f64>) -> Option<[f64; 3]> {
        let mut d = [0.0; 3];
        for (i, di) in d.iter_mut().enumerate() {
            let l = p + self.platform_anchor(i) - self.rail_origin(i);
            let ld = l.dot(&self.rail_direction(i));
            let disc = ld * ld - l.norm_squared() + self.arm_length * self.arm_length;
            if disc < 0.0 {
                return None;
            }
            *di = ld - disc.sqrt();
        }
        Some(d)
    }

    /// Full inverse kinematics with every constraint of seed 002's workspace check.
    pub fn inverse(&self, p: &Vector3<f64>) -> Result<DeltaIk, Violation> {
        let d = self.actuators(p).ok_or(Violation::Unreachable)?;
        let mut carriages = [Vector3::zeros(); 3];
        let mut arms = [Vector3::zeros(); 3];
        for i in 0..3 {
            if d[i] < self.stroke[0] - 1e-12 || d[i] > self.stroke[1] + 1e-12 {
                return Err(Violation::Stroke);
            }
            carriages[i] = self.rail_origin(i) + self.rail_direction(i) * d[i];
            arms[i] = (p + self.platform_anchor(i) - carriages[i]) / self.arm_length;
        }
        let ik = DeltaIk {
            actuators: d,
            carriages,
            arms,
        };
        for i in 0..3 {
            let neutral = self.neutral_direction(i);
            if arms[i].dot(&neutral).clamp(-1.0, 1.0).acos() > self.spherical_limit {
                return Err(Violation::SphericalJoint);
            }
        }
        if self.min_clearance(p, &ik) < 2.0 * self.arm_radius {
            return Err(Violation::Clearance);
        }
        Ok(ik)
    }

    /// The arm direction of leg i at the neutral position (the joints' central axis).
    pub fn neutral_direction(&self, i: usize) -> Vector3<f64> {
        match self.actuators(&self.neutral) {
            Some(d) => {
                let c = self.rail_origin(i) + self.rail_direction(i) * d[i];
                (self.neutral + self.platform_anchor(i) - c).normalize()
            }
            None => Vector3::z(),
        }
    }

    /// The six arm segments (two per leg) at a position.
    pub fn arm_segments(
        &self,
        p: &Vector3<f64>,
        ik: &DeltaIk,
    ) -> [(Vector3<f64>, Vector3<f64>); 6] {
        let mut segments = [(Vector3::zeros(), Vector3::zeros()); 6];
        for i in 0..3 {
            let offset = Self::pair_axis(i) * (0.5 * self.arm_spacing);
            let q = p + self.platform_anchor(i);
            segments[2 * i] = (ik.carriages[i] + offset, q + offset);
            segments[2 * i + 1] = (ik.carriages[i] - offset, q - offset);
        }
        segments
    }

    /// Smallest distance between arms of different legs.
    pub fn min_clearance(&self, p: &Vector3<f64>, ik: &DeltaIk) -> f64 {
        let segments = self.arm_segments(p, ik);
        let mut best = f64::INFINITY;
        for i in 0..6 {
            for j in (i + 1)..6 {
                if i / 2 != j / 2 {
                    best = best.min(segment_distance(segments[i], segments[j]));
                }
            }
        }
        best
    }

    /// Evenly spaced points inside a cylinder (spacing `step`), as seed 002's point cloud.
    pub fn cloud(cylinder: &Cylinder, step: f64) -> Vec<Vector3<f64>> {
        let mut points = Vec::new();
        let n_r = (cylinder.radius / step).floor() as i64;
        let n_z = (cylinder.height / step).round().max(1.0) as i64;
        for kz in 0..=n_z {
            let z = cylinder.z_top - cylinder.height * kz as f64 / n_z as f64;
            for kx in -n_r..=n_r {
                for ky in -n_r..=n_r {
                    let (x, y) = (kx as f64 * step, ky as f64 * step);
                    if x * x + y * y <= cylinder.radius * cylinder.radius + 1e-12 {
                        points.push(Vector3::new(x, y, z));
                    }
                }
            }
        }
        points
    }

    /// Checks every point of the cloud; returns the failing points with their violation.
    pub fn check_cloud(&self, points: &[Vector3<f64>]) -> Vec<(Vector3<f64>, Violation)> {
        points
            .iter()
            .filter_map(|p| self.inverse(p).err().map(|v| (*p, v)))
            .collect()
    }
}

/// Distance between two segments (closed-form closest points, clamped).
pub fn segment_distance(s1: (Vector3<f64>, Vector3<f64>), s2: (Vector3<f64>, Vector3<f64>)) -> f64 {
    let (p1, q1) = s1;
    let (p2, q2) = s2;
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let (a, e, f) = (d1.dot(&d1), d2.dot(&d2), d2.dot(&r));
    let (mut s, mut t);
    if a <= 1e-18 && e <= 1e-18 {
        return r.norm();
    }
    if a <= 1e-18 {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(&r);
        if e <= 1e-18 {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(&d2);
            let denom = a * e - b * b;
            s = if denom > 1e-18 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            t = (b * s + f) / e;
            if t < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            }
        }
    }
    ((p1 + d1 * s) - (p2 + d2 * t)).norm()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keops() -> LinearDelta {
        LinearDelta {
            rail_angle: 45f64.to_radians(),
            base_radius: 0.35,
            platform_radius: 0.05,
            arm_length: 0.4,
            arm_spacing: 0.06,
            arm_radius: 0.006,
            stroke: [0.0, 0.6],
            spherical_limit: 17f64.to_radians(),
            neutral: Vector3::new(0.0, 0.0, -0.45),
        }
    }

    #[test]
    fn inverse_kinematics_places_arms_at_their_length() {
        let r = keops();
        for p in [
            Vector3::new(0.0, 0.0, -0.45),
            Vector3::new(0.05, -0.03, -0.5),
            Vector3::new(-0.07, 0.02, -0.38),
        ] {
            let d = r.actuators(&p).expect("reachable");
            for i in 0..3 {
                let c = r.rail_origin(i) + r.rail_direction(i) * d[i];
                let arm = p + r.platform_anchor(i) - c;
                assert!(
                    (arm.norm() - r.arm_length).abs() < 1e-12,
                    "leg {i}: {}",
                    arm.norm()
                );
            }
        }
    }

    #[test]
    fn the_other_root_also_closes_the_loop_and_the_smaller_is_taken() {
        // Seed 002 eq. 15 has two roots; both put the arm at length l, the paper keeps the
        // smaller one (carriage nearer the base).
        let r = keops();
        let p = Vector3::new(0.02, 0.01, -0.42);
        let d = r.actuators(&p).expect("reachable");
        for i in 0..3 {
            let l = p + r.platform_anchor(i) - r.rail_origin(i);
            let ld = l.dot(&r.rail_direction(i));
            let other = 2.0 * ld - d[i];
            assert!(other > d[i]);
            let c = r.rail_origin(i) + r.rail_direction(i) * other;
            assert!(((p + r.platform_anchor(i) - c).norm() - r.arm_length).abs() < 1e-12);
        }
    }

    #[test]
    fn segment_distance_closed_forms() {
        let z = Vector3::zeros();
        let x = Vector3::x();
        // Parallel segments 1 apart; crossing segments; disjoint end points.
        assert!((segment_distance((z, x), (Vector3::y(), Vector3::y() + x)) - 1.0).abs() < 1e-15);
        let s = (Vector3::new(0.5, -1.0, 2.0), Vector3::new(0.5, 1.0, 2.0));
        assert!((segment_distance((z, x), s) - 2.0).abs() < 1e-15);
        let far = (Vector3::new(3.0, 4.0, 0.0), Vector3::new(3.0, 5.0, 0.0));
        assert!((segment_distance((z, x), far) - (4.0f64 + 16.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn constraints_are_reported() {
        let r = keops();
        assert_eq!(
            r.inverse(&Vector3::new(0.0, 0.0, -5.0)).err(),
            Some(Violation::Unreachable)
        );
        let mut short = r;
        short.stroke = [0.0, 0.05];
        assert_eq!(
            short.inverse(&Vector3::new(0.0, 0.0, -0.45)).err(),
            Some(Violation::Stroke)
        );
        // Far to the side: the joints open beyond 17°.
        assert_eq!(
            r.inverse(&Vector3::new(0.2, 0.0, -0.45)).err(),
            Some(Violation::SphericalJoint)
        );
        assert!(r.inverse(&r.neutral).is_ok());
    }
}
