//! Swivel-pulley inverse kinematics (Pott, *Cable-Driven Parallel Robots*, Springer 2018,
//! §2.6; WireX `doInverseKinematicsPulley`).
//!
//! The frame anchor a is the swivel point. The cable arrives from the winch along the unit
//! swivel axis z (travelling along −z) and meets the wheel at a. The pulley turns about z so
//! that the wheel's plane holds the platform anchor p: with v = p − a and v⊥ = v − (v·z) z,
//! the swivel angle γ is the azimuth of v⊥ about z (measured from [`reference_axes`]'s
//! e_x towards e_y) and u = v⊥/|v⊥| the wheel's radial direction. The wheel's centre is
//! m = a + r u. In the wheel's plane, with coordinates (along u, along z) about m, the
//! cable comes in at angle π (the point a), runs counter-clockwise round the wheel and
//! leaves at the tangent point c at angle φ_c = φ_p − arccos(r/|p − m|), where φ_p is the
//! angle of p. The wrap is β = φ_c − π (taken in [0, 2π)), the free segment runs from c to
//! p, |c − p| = √(|p − m|² − r²), and the cable's length is r β + |c − p|.
//!
//! The derivative of that length with respect to p is −(c − p)/|c − p|: the wrapped
//! length and the moving tangent point cancel to first order, so the structure matrix keeps
//! its form with the free segment's direction (checked against finite differences in the
//! tests).

use crate::robot::Pulley;
use nalgebra::Vector3;
use std::f64::consts::{PI, TAU};

/// A pulley's state at one platform anchor position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PulleyGeometry {
    /// γ, rad in (−π, π]: azimuth of the wheel's plane about the swivel axis.
    pub swivel: f64,
    /// β, rad in [0, 2π): how far the cable wraps round the wheel.
    pub wrap: f64,
    /// c: where the cable leaves the wheel, world frame, m.
    pub tangent: Vector3<f64>,
    /// m: the wheel's centre, world frame, m.
    pub center: Vector3<f64>,
    /// u: the wheel's radial direction from the swivel axis towards the platform anchor.
    pub radial: Vector3<f64>,
    /// r β, m.
    pub wrapped_length: f64,
    /// |c − p|, m.
    pub free_length: f64,
}

/// The reference directions (e_x, e_y) of the swivel angle about `axis`: e_x is world X
/// made perpendicular to the axis (world Y when the axis is along X), e_y = axis × e_x.
pub fn reference_axes(axis: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let pick = if axis.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let e_x = (pick - axis * axis.dot(&pick)).normalize();
    (e_x, axis.cross(&e_x))
}

/// The pulley of a cable whose swivel point is `swivel_point`, at platform anchor `anchor`
/// (both world frame, m).
pub fn wrap(pulley: &Pulley, swivel_point: &Vector3<f64>, anchor: &Vector3<f64>) -> PulleyGeometry {
    let z = pulley.axis;
    let r = pulley.radius;
    let v = anchor - swivel_point;
    let along = v.dot(&z);
    let perp = v - z * along;
    let (e_x, e_y) = reference_axes(&z);
    let perp_norm = perp.norm();
    // A platform anchor on the swivel axis leaves the swivel angle free: take γ = 0.
    let radial = if perp_norm > 1e-12 {
        perp / perp_norm
    } else {
        e_x
    };
    let swivel = radial.dot(&e_y).atan2(radial.dot(&e_x));
    let center = swivel_point + radial * r;
    // The anchor in the wheel's plane, about its centre.
    let (pu, pz) = (perp_norm - r, along);
    let distance = (pu * pu + pz * pz).sqrt();
    let phi_p = pz.atan2(pu);
    let phi_c = phi_p - (r / distance).min(1.0).acos();
    let wrap = (phi_c - PI).rem_euclid(TAU);
    let tangent = center + (radial * phi_c.cos() + z * phi_c.sin()) * r;
    let free_length = (distance * distance - r * r).max(0.0).sqrt();
    PulleyGeometry {
        swivel,
        wrap,
        tangent,
        center,
        radial,
        wrapped_length: r * wrap,
        free_length,
    }
}
