//! The distances behind [`super::check`], in closed form or by a golden-section search on a
//! convex function, all in f64: signed distance functions (negative inside) of the solids,
//! segment–segment distance, and a segment's or a box's smallest signed distance to a solid.

use crate::robot::obstacles::Shape;
use nalgebra::{Matrix3, Vector3};

/// Golden-section steps on a segment's parameter: 0.618^60 ≈ 3e-13 of its length.
const GOLDEN_STEPS: usize = 60;

/// Points sampled on a cylinder's rim before the golden-section refinement.
const RIM_SAMPLES: usize = 72;

/// An oriented box: centre, rotation (columns are its axes, world frame) and half extents, m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrientedBox {
    pub center: Vector3<f64>,
    pub rotation: Matrix3<f64>,
    pub half: Vector3<f64>,
}

impl OrientedBox {
    /// An axis-aligned box from its corners.
    pub fn aligned(min: &Vector3<f64>, max: &Vector3<f64>) -> OrientedBox {
        OrientedBox {
            center: (min + max) * 0.5,
            rotation: Matrix3::identity(),
            half: (max - min) * 0.5,
        }
    }

    /// Signed distance of `p` to the box (negative inside), m.
    pub fn signed_distance(&self, p: &Vector3<f64>) -> f64 {
        let local = self.rotation.transpose() * (p - self.center);
        box_sdf(&local, &self.half)
    }

    /// The eight corners, world frame.
    pub fn corners(&self) -> [Vector3<f64>; 8] {
        let mut out = [Vector3::zeros(); 8];
        for (k, c) in out.iter_mut().enumerate() {
            let s = Vector3::new(
                if k & 1 == 0 { -1.0 } else { 1.0 },
                if k & 2 == 0 { -1.0 } else { 1.0 },
                if k & 4 == 0 { -1.0 } else { 1.0 },
            );
            *c = self.center + self.rotation * self.half.component_mul(&s);
        }
        out
    }

    /// The twelve edges, world frame.
    pub fn edges(&self) -> [(Vector3<f64>, Vector3<f64>); 12] {
        let c = self.corners();
        let mut out = [(Vector3::zeros(), Vector3::zeros()); 12];
        let mut n = 0;
        for a in 0..8usize {
            for bit in [1usize, 2, 4] {
                if a & bit == 0 {
                    out[n] = (c[a], c[a | bit]);
                    n += 1;
                }
            }
        }
        out
    }
}

/// Signed distance to the box |x| ≤ half centred on the origin.
fn box_sdf(p: &Vector3<f64>, half: &Vector3<f64>) -> f64 {
    let q = p.abs() - half;
    let outside = q.map(|v| v.max(0.0)).norm();
    outside + q.max().min(0.0)
}

/// Signed distance of `p` to an obstacle's solid (negative inside), m.
pub fn shape_signed_distance(shape: &Shape, p: &Vector3<f64>) -> f64 {
    shape.signed_distance(p)
}

/// The smallest value of a convex function of t ∈ [lo, hi] and where it is, by golden section.
fn golden_min(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> (f64, f64) {
    const R: f64 = 0.618_033_988_749_894_9;
    let (mut a, mut b) = (lo, hi);
    let mut c = b - R * (b - a);
    let mut d = a + R * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..GOLDEN_STEPS {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - R * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + R * (b - a);
            fd = f(d);
        }
    }
    // The ends too: a minimum at an end is approached but never sampled by the search.
    [(fc, c), (fd, d), (f(lo), lo), (f(hi), hi)]
        .into_iter()
        .fold(
            (f64::INFINITY, lo),
            |best, x| if x.0 < best.0 { x } else { best },
        )
}

/// The smallest signed distance of the segment p0–p1 to a solid, and the segment's point
/// that has it, m. Exact up to ~1e-12 of the length: the signed distance of a convex solid is
/// convex along a segment (a plane's is linear, a sphere's is taken in closed form).
pub fn segment_shape(shape: &Shape, p0: &Vector3<f64>, p1: &Vector3<f64>) -> (f64, Vector3<f64>) {
    match *shape {
        Shape::Sphere { center, radius } => {
            let q = closest_on_segment(p0, p1, &center);
            ((q - center).norm() - radius, q)
        }
        Shape::Plane { .. } => {
            let (d0, d1) = (
                shape_signed_distance(shape, p0),
                shape_signed_distance(shape, p1),
            );
            if d0 <= d1 { (d0, *p0) } else { (d1, *p1) }
        }
        _ => segment_min(|p| shape_signed_distance(shape, p), p0, p1, 0.0),
    }
}

/// The smallest value of a convex function of the point on p0–p1 beyond a fraction `from` of
/// its length from p0, and that point.
pub fn segment_min(
    f: impl Fn(&Vector3<f64>) -> f64,
    p0: &Vector3<f64>,
    p1: &Vector3<f64>,
    from: f64,
) -> (f64, Vector3<f64>) {
    let at = |t: f64| p0 + (p1 - p0) * t;
    let (d, t) = golden_min(|t| f(&at(t)), from, 1.0);
    (d, at(t))
}

/// The point of segment a–b closest to p.
pub fn closest_on_segment(a: &Vector3<f64>, b: &Vector3<f64>, p: &Vector3<f64>) -> Vector3<f64> {
    let ab = b - a;
    let len2 = ab.norm_squared();
    if len2 <= 0.0 {
        return *a;
    }
    a + ab * ((p - a).dot(&ab) / len2).clamp(0.0, 1.0)
}

/// The distance between segments p1–q1 and p2–q2 and the closest points on each (Ericson,
/// Real-Time Collision Detection, 5.1.9).
pub fn segment_segment(
    p1: &Vector3<f64>,
    q1: &Vector3<f64>,
    p2: &Vector3<f64>,
    q2: &Vector3<f64>,
) -> (f64, Vector3<f64>, Vector3<f64>) {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.norm_squared(), d2.norm_squared(), d2.dot(&r));
    let tiny = 1e-24;
    let (s, t) = if a <= tiny && e <= tiny {
        (0.0, 0.0)
    } else if a <= tiny {
        (0.0, (f / e).clamp(0.0, 1.0))
    } else {
        let c = d1.dot(&r);
        if e <= tiny {
            ((-c / a).clamp(0.0, 1.0), 0.0)
        } else {
            let b = d1.dot(&d2);
            let denom = a * e - b * b;
            let mut s = if denom > tiny * (a * e).max(1.0) {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mut t = (b * s + f) / e;
            if t < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            }
            (s, t)
        }
    };
    let (c1, c2) = (p1 + d1 * s, p2 + d2 * t);
    ((c1 - c2).norm(), c1, c2)
}

/// The smallest signed distance between an oriented box and an obstacle, and a point of the
/// box that has it, m. Exact when they are apart (plane: the corners; sphere: its centre's
/// distance to the box; box: the closest pair of two convex polyhedra lies on an edge of one
/// of them; cylinder: the box's edges and the cylinder's rims, the rims sampled then
/// refined); when they overlap, a negative number whose size grows with the overlap.
pub fn box_shape(body: &OrientedBox, shape: &Shape) -> (f64, Vector3<f64>) {
    let mut best = (f64::INFINITY, body.center);
    let mut take = |d: f64, p: Vector3<f64>| {
        if d < best.0 {
            best = (d, p);
        }
    };
    match *shape {
        Shape::Plane { .. } => {
            for c in body.corners() {
                take(shape_signed_distance(shape, &c), c);
            }
        }
        Shape::Sphere { center, radius } => {
            let local = body.rotation.transpose() * (center - body.center);
            let clamped = local.zip_map(&body.half, |x, h| x.clamp(-h, h));
            take(
                body.signed_distance(&center) - radius,
                body.center + body.rotation * clamped,
            );
        }
        Shape::Box { min, max } => {
            for (a, b) in body.edges() {
                let (d, p) = segment_shape(shape, &a, &b);
                take(d, p);
            }
            let other = OrientedBox::aligned(&min, &max);
            for (a, b) in other.edges() {
                let (d, p) = segment_min(|p| body.signed_distance(p), &a, &b, 0.0);
                take(d, p);
            }
        }
        Shape::Cylinder {
            base,
            axis,
            radius,
            height,
        } => {
            for (a, b) in body.edges() {
                let (d, p) = segment_shape(shape, &a, &b);
                take(d, p);
            }
            let (u, v) = crate::kinematics::pulley::reference_axes(&axis);
            for rim in [base, base + axis * height] {
                let at = |phi: f64| rim + (u * phi.cos() + v * phi.sin()) * radius;
                let step = std::f64::consts::TAU / RIM_SAMPLES as f64;
                let (k, _) = (0..RIM_SAMPLES)
                    .map(|k| (k, body.signed_distance(&at(k as f64 * step))))
                    .fold((0, f64::INFINITY), |b, x| if x.1 < b.1 { x } else { b });
                let phi0 = k as f64 * step;
                let (d, phi) = golden_min(
                    |phi| body.signed_distance(&at(phi)),
                    phi0 - step,
                    phi0 + step,
                );
                take(d, at(phi));
            }
            // A cylinder through the box that touches neither its edges nor its rims: its axis
            // enters the box (only then, as the capsule's distance would under-estimate).
            let top = base + axis * height;
            let (d, p) = segment_min(|p| body.signed_distance(p), &base, &top, 0.0);
            if d < 0.0 {
                take(d - radius, p);
            }
        }
    }
    best
}
