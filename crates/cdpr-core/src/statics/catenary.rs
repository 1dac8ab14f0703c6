//! The elastic catenary (H. M. Irvine, *Cable Structures*, MIT Press 1981, §2.2): a cable of
//! unstretched length L0, axial rigidity EA and weight w per unstretched length (w = ρ g)
//! hanging in the vertical plane through its two ends.
//!
//! Coordinates: the origin at the platform anchor, x horizontal towards the exit point (the
//! tangent point over a pulley, the frame anchor without one), z up; s ∈ [0, L0] the
//! unstretched arc length from the platform end. H (> 0) and V are the horizontal and vertical
//! components of the force the cable pulls the platform with; at s the cable's tension has the
//! components (H, V + w s) and magnitude T(s) = √(H² + (V + w s)²). Then
//!     dx/ds = H/EA + H/T,      dz/ds = (V + w s)/EA + (V + w s)/T,
//! and integrated (Irvine eqs. 2.34–2.35 with the ends swapped):
//!     x(s) = H s/EA + (H/w) [asinh((V + w s)/H) − asinh(V/H)]
//!     z(s) = (V s + w s²/2)/EA + (T(s) − T(0))/w.
//! The tension at the exit end is T(L0); T(L0) − T(0) = w·(z(L0) − (V L0 + w L0²/2)/EA),
//! which is w times the rise for an inextensible cable.
//!
//! The forms below are rearranged so that no difference divided by w loses digits when the
//! cable is light (w → 0 gives the straight elastic cable). Density 0 is not routed here:
//! the statics keeps its straight-cable code for massless cables, bit for bit.

use crate::kinematics::CableGeometry;
use crate::robot::{Cable, GRAVITY, Stiffness};
use nalgebra::Vector3;
use serde::Serialize;

/// Why a catenary could not be found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatenaryError {
    #[error("the catenary needs a positive finite {what}, got {value}")]
    BadInput { what: &'static str, value: f64 },
    #[error(
        "the cable is too long to pull its ends apart: unstretched {rest_length} m for a chord of {chord} m hanging straight down"
    )]
    Slack { rest_length: f64, chord: f64 },
    #[error("the catenary solve did not converge (span residual {residual:.3e} m)")]
    NotConverged { residual: f64 },
}

/// One elastic catenary: unstretched length, rigidity, weight and the platform-end force.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Catenary {
    /// L0, m.
    pub rest_length: f64,
    /// EA, N.
    pub ea: f64,
    /// w = ρ g, N per metre of unstretched cable.
    pub weight: f64,
    /// H: horizontal force on the platform, N (≥ 0).
    pub h: f64,
    /// V: vertical force on the platform (up positive), N.
    pub v: f64,
}

/// asinh(t)/t, accurate near 0.
fn asinhc(t: f64) -> f64 {
    if t.abs() < 1e-4 {
        let t2 = t * t;
        1.0 - t2 / 6.0 + 3.0 * t2 * t2 / 40.0
    } else {
        t.asinh() / t
    }
}

/// The spans (x, z) of the first `s` metres of unstretched cable, and its Jacobian
/// [[∂x/∂H, ∂x/∂V], [∂z/∂H, ∂z/∂V]].
fn spans_and_jacobian(h: f64, v: f64, s: f64, ea: f64, w: f64) -> ([f64; 2], [[f64; 2]; 2]) {
    let (a, b) = (v, v + w * s);
    let (ta, tb) = (h.hypot(a), h.hypot(b));
    // (T(s) − T(0))/w = s (a + b)/(T(0) + T(s)).
    let z_in = if ta + tb > 0.0 {
        s * (a + b) / (ta + tb)
    } else {
        0.0
    };
    let x_in = if h <= 0.0 {
        0.0
    } else if w == 0.0 || s == 0.0 {
        s * h / ta
    } else {
        let (p, q) = (a / h, b / h);
        let (sp, sq) = (1f64.hypot(p), 1f64.hypot(q));
        if p * q > 0.0 {
            // asinh q − asinh p = asinh(arg), arg = (q² − p²)/(q sp + p sq), q − p = w s/H.
            let den = q * sp + p * sq;
            let arg = (q - p) * (q + p) / den;
            s * (q + p) / den * asinhc(arg)
        } else {
            (h / w) * (q * sp - p * sq).asinh()
        }
    };
    let x = h * s / ea + x_in;
    let z = (v * s + 0.5 * w * s * s) / ea + z_in;
    // Cross terms: ∂x/∂V = ∂z/∂H = (H/w)(1/T(s) − 1/T(0)).
    let cross = if ta > 0.0 && tb > 0.0 {
        -h * s * (a + b) / ((ta + tb) * ta * tb)
    } else {
        0.0
    };
    // g = (b/T(s) − a/T(0))/w.
    let g = if ta == 0.0 || tb == 0.0 {
        0.0
    } else if a * b > 0.0 {
        h * h * s * (a + b) / ((b * ta + a * tb) * ta * tb)
    } else if w > 0.0 {
        (b / tb - a / ta) / w
    } else {
        s * h * h / (ta * ta * ta)
    };
    let dxdh = s / ea + if h > 0.0 { x_in / h - g } else { 0.0 };
    let dzdv = s / ea + g;
    ([x, z], [[dxdh, cross], [cross, dzdv]])
}

/// Horizontal and vertical span (m) of `rest_length` of cable pulled at the platform with
/// (H, V) (N), rigidity `ea` (N) and weight `w` (N/m): Irvine's closed form.
pub fn spans(h: f64, v: f64, rest_length: f64, ea: f64, w: f64) -> (f64, f64) {
    let ([x, z], _) = spans_and_jacobian(h, v, rest_length, ea, w);
    (x, z)
}

fn check(what: &'static str, value: f64, zero_ok: bool) -> Result<(), CatenaryError> {
    if value.is_finite() && (value > 0.0 || (zero_ok && value == 0.0)) {
        Ok(())
    } else {
        Err(CatenaryError::BadInput { what, value })
    }
}

/// Relative span tolerance of the Newton solves.
pub const SPAN_TOLERANCE: f64 = 1e-12;

impl Catenary {
    /// The catenary of `rest_length` (m) of cable between ends `x` apart horizontally (≥ 0)
    /// and `z` apart vertically (exit point above the platform anchor: z > 0), m: Newton's
    /// method on (H, V) with a backtracking line search, H kept positive.
    pub fn from_spans(
        x: f64,
        z: f64,
        rest_length: f64,
        ea: f64,
        w: f64,
    ) -> Result<Catenary, CatenaryError> {
        check("unstretched length", rest_length, false)?;
        check("axial rigidity EA", ea, false)?;
        check("weight per length", w, true)?;
        check("horizontal span", x, true)?;
        if !z.is_finite() {
            return Err(CatenaryError::BadInput {
                what: "vertical span",
                value: z,
            });
        }
        let l0 = rest_length;
        let chord = x.hypot(z);
        let scale = chord.max(l0);
        if x <= 1e-12 * scale {
            // Vertical: z = L0 + (V L0 + w L0²/2)/EA.
            let v = (z - l0) * ea / l0 - 0.5 * w * l0;
            if z <= l0 || v < 0.0 {
                return Err(CatenaryError::Slack {
                    rest_length: l0,
                    chord,
                });
            }
            return Ok(Catenary {
                rest_length: l0,
                ea,
                weight: w,
                h: 0.0,
                v,
            });
        }
        // Start: the straight elastic tension when the chord is longer than the cable, else
        // (or when larger) the parabolic estimate H = w x/(2λ) of a hanging cable.
        let taut = ea * (chord - l0).max(0.0) / l0;
        let lambda = {
            let r = (l0 * l0 - z * z) / (x * x) - 1.0;
            if r > 0.0 { (3.0 * r).sqrt() } else { 0.2 }
        };
        let h = (taut * x / chord)
            .max(w * x / (2.0 * lambda))
            .max(1e-9 * ea);
        let v = h * z / x - 0.5 * w * l0;
        let residual = |h: f64, v: f64| {
            let ([sx, sz], j) = spans_and_jacobian(h, v, l0, ea, w);
            ([sx - x, sz - z], j)
        };
        // H stays positive: a step through zero lands at a tenth of the current H.
        let ([h, v], _) = newton_2d(
            [h, v],
            SPAN_TOLERANCE * scale,
            |[h, v]| residual(h, v),
            |[h, _], [nh, nv]| [if nh <= 0.0 { 0.1 * h } else { nh }, nv],
        )?;
        Ok(Catenary {
            rest_length: l0,
            ea,
            weight: w,
            h,
            v,
        })
    }

    /// The catenary whose platform end pulls with `tension` (N) between ends `x`, `z` apart
    /// (m), its unstretched length unknown: Newton's method on (L0, θ) with H = T cos θ,
    /// V = T sin θ. `ea_of` gives EA for a trial L0 (a constant-k cable's EA grows with it).
    pub fn from_tension(
        x: f64,
        z: f64,
        tension: f64,
        ea_of: impl Fn(f64) -> f64,
        w: f64,
    ) -> Result<Catenary, CatenaryError> {
        check("platform-end tension", tension, false)?;
        check("weight per length", w, true)?;
        check("horizontal span", x, true)?;
        let chord = x.hypot(z);
        check("cable chord", chord, false)?;
        let ea0 = ea_of(chord);
        check("axial rigidity EA", ea0, false)?;
        if x <= 1e-12 * chord {
            // Vertical: solve z = L0 (1 + T/EA) + w L0²/(2 EA) by fixed point on L0.
            let mut l0 = chord;
            for _ in 0..100 {
                let ea = ea_of(l0);
                let next = z / (1.0 + (tension + 0.5 * w * l0) / ea);
                let done = (next - l0).abs() <= 1e-15 * chord;
                l0 = next;
                if done {
                    break;
                }
            }
            return Ok(Catenary {
                rest_length: l0,
                ea: ea_of(l0),
                weight: w,
                h: 0.0,
                v: tension,
            });
        }
        let theta = z.atan2(x);
        let l0 = chord * ea0 / (ea0 + tension);
        let half_pi = std::f64::consts::FRAC_PI_2;
        let residual = |l0: f64, theta: f64| {
            let ea = ea_of(l0);
            let (h, v) = (tension * theta.cos(), tension * theta.sin());
            let ([sx, sz], j) = spans_and_jacobian(h, v, l0, ea, w);
            // d/dL0 of the spans: the tangent at the exit end (EA held).
            let b = v + w * l0;
            let k = 1.0 / ea + 1.0 / h.hypot(b);
            let jl = [h * k, b * k];
            let jt = [-v * j[0][0] + h * j[0][1], -v * j[1][0] + h * j[1][1]];
            ([sx - x, sz - z], [[jl[0], jt[0]], [jl[1], jt[1]]])
        };
        // L0 stays above a tenth of the current one, θ inside (−π/2, π/2).
        let ([l0, theta], _) = newton_2d(
            [l0, theta],
            SPAN_TOLERANCE * chord,
            |[l0, theta]| residual(l0, theta),
            |[l0, _], [nl, nt]| [nl.max(0.1 * l0), nt.clamp(-half_pi + 1e-9, half_pi - 1e-9)],
        )?;
        Ok(Catenary {
            rest_length: l0,
            ea: ea_of(l0),
            weight: w,
            h: tension * theta.cos(),
            v: tension * theta.sin(),
        })
    }

    /// (x, z) of the point `s` metres of unstretched cable from the platform end, m.
    pub fn point_at(&self, s: f64) -> (f64, f64) {
        spans(self.h, self.v, s, self.ea, self.weight)
    }

    /// The spans (x, z) of the whole cable, m.
    pub fn spans(&self) -> (f64, f64) {
        self.point_at(self.rest_length)
    }

    /// Tension at the platform end, N.
    pub fn tension_platform(&self) -> f64 {
        self.h.hypot(self.v)
    }

    /// Tension at the exit end (pulley or frame), N.
    pub fn tension_exit(&self) -> f64 {
        self.h.hypot(self.v + self.weight * self.rest_length)
    }

    /// Sag, m: the largest vertical distance of the cable below its chord (where the
    /// cable's slope equals the chord's, (V + w s*)/H = z/x).
    pub fn sag(&self) -> f64 {
        let (x, z) = self.spans();
        if self.weight <= 0.0 || self.h <= 0.0 || x <= 0.0 {
            return 0.0;
        }
        let s = ((self.h * z / x - self.v) / self.weight).clamp(0.0, self.rest_length);
        let (px, pz) = self.point_at(s);
        (z * px / x - pz).max(0.0)
    }

    /// Stretched length of the cable, m: L0 + (1/EA) ∫ T ds.
    pub fn stretched_length(&self) -> f64 {
        let (h, w, l0) = (self.h, self.weight, self.rest_length);
        let (a, b) = (self.v, self.v + w * l0);
        let (ta, tb) = (h.hypot(a), h.hypot(b));
        // ∫ T ds = [u T + H² asinh(u/H)]/(2w) from a to b; for w → 0 it is L0 T.
        let integral = if w == 0.0 || h == 0.0 {
            0.5 * l0 * (ta + tb)
        } else {
            let ([x_in, _], _) = spans_and_jacobian(h, self.v, l0, f64::INFINITY, w);
            // (b T(b) − a T(a))/w = L0 (a + b)(H² + a² + b²)/(b T(b) + a T(a)).
            let den = b * tb + a * ta;
            let diff_over_w = if a * b >= 0.0 && den != 0.0 {
                l0 * (a + b) * (h * h + a * a + b * b) / den
            } else {
                (b * tb - a * ta) / w
            };
            0.5 * diff_over_w + 0.5 * h * x_in
        };
        l0 + integral / self.ea
    }
}

/// EA of `cable` for a total unstretched length `rest_length` (m): Constant(k) → k·L0,
/// Ea(ea) → ea.
pub fn axial_rigidity(cable: &Cable, rest_length: f64) -> f64 {
    match cable.stiffness {
        Stiffness::Constant(k) => k * rest_length,
        Stiffness::Ea(ea) => ea,
    }
}

/// w = ρ g of `cable`, N/m.
pub fn weight_per_length(cable: &Cable) -> f64 {
    cable.mass_per_length * GRAVITY
}

/// Newton's method on a 2×2 system, backtracking (halving the step, at most 60 times) until
/// the residual's norm drops: `residual(u)` gives the residual and its Jacobian, `project(u,
/// trial)` keeps a trial point inside the domain. Stops at `tol`, at a singular Jacobian or when
/// no step helps; an error when the residual is then still above 1000·`tol`.
fn newton_2d(
    mut u: [f64; 2],
    tol: f64,
    residual: impl Fn([f64; 2]) -> ([f64; 2], [[f64; 2]; 2]),
    project: impl Fn([f64; 2], [f64; 2]) -> [f64; 2],
) -> Result<([f64; 2], f64), CatenaryError> {
    let (mut r, mut j) = residual(u);
    let mut norm = r[0].hypot(r[1]);
    for _ in 0..200 {
        if norm <= tol {
            break;
        }
        let det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
        if !(det.is_finite() && det != 0.0) {
            break;
        }
        let du = [
            -(j[1][1] * r[0] - j[0][1] * r[1]) / det,
            -(-j[1][0] * r[0] + j[0][0] * r[1]) / det,
        ];
        let mut alpha = 1.0;
        let mut improved = false;
        for _ in 0..60 {
            let trial = project(u, [u[0] + alpha * du[0], u[1] + alpha * du[1]]);
            let (nr, nj) = residual(trial);
            let nn = nr[0].hypot(nr[1]);
            if nn < norm {
                (u, r, j, norm) = (trial, nr, nj, nn);
                improved = true;
                break;
            }
            alpha *= 0.5;
        }
        if !improved {
            break;
        }
    }
    if norm > 1e3 * tol || !norm.is_finite() {
        return Err(CatenaryError::NotConverged { residual: norm });
    }
    Ok((u, norm))
}

/// A cable at a pose as an elastic catenary in world coordinates: its free segment from the
/// platform anchor to the exit point, plus the unstretched length wrapped over its pulley.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CableCatenary {
    /// The free segment's catenary.
    pub catenary: Catenary,
    /// Platform anchor, world, m.
    pub anchor: Vector3<f64>,
    /// Exit point (tangent point or frame anchor), world, m.
    pub exit: Vector3<f64>,
    /// Unit horizontal direction from the anchor towards the exit point (zero when vertical).
    pub horizontal: Vector3<f64>,
    /// Unstretched length of the part wrapped over the pulley (0 without one), m.
    pub wrapped_rest_length: f64,
}

impl CableCatenary {
    /// The whole cable's unstretched length from the swivel point, m.
    pub fn rest_length(&self) -> f64 {
        self.wrapped_rest_length + self.catenary.rest_length
    }

    /// Unit direction of the cable's pull on the platform (replaces d_i in the wrench matrix).
    pub fn direction(&self) -> Vector3<f64> {
        let c = &self.catenary;
        let t = c.tension_platform();
        if t > 0.0 {
            (self.horizontal * c.h + Vector3::z() * c.v) / t
        } else {
            Vector3::zeros()
        }
    }

    /// Tension at the platform end, N.
    pub fn tension_platform(&self) -> f64 {
        self.catenary.tension_platform()
    }

    /// Tension at the exit end (on the pulley side), N.
    pub fn tension_exit(&self) -> f64 {
        self.catenary.tension_exit()
    }

    /// Sag below the chord, m.
    pub fn sag(&self) -> f64 {
        self.catenary.sag()
    }

    /// `n + 1` points along the free segment from the platform anchor to the exit point
    /// (world, m), evenly spaced in unstretched length.
    pub fn points(&self, n: usize) -> Vec<Vector3<f64>> {
        let n = n.max(1);
        (0..=n)
            .map(|k| {
                let s = self.catenary.rest_length * k as f64 / n as f64;
                let (x, z) = self.catenary.point_at(s);
                self.anchor + self.horizontal * x + Vector3::z() * z
            })
            .collect()
    }

    fn frame(geometry: &CableGeometry, anchor: &Vector3<f64>) -> (Vector3<f64>, f64, f64) {
        let exit = geometry.exit_point(anchor);
        let l = exit - anchor;
        let horizontal = Vector3::new(l.x, l.y, 0.0);
        let x = horizontal.norm();
        let dir = if x > 1e-12 * l.norm() {
            horizontal / x
        } else {
            Vector3::zeros()
        };
        (dir, x, l.z)
    }

    /// The cable of total unstretched length `rest_length` (m, from the swivel point) at the
    /// geometry `geometry` (platform anchor `anchor`, world): the catenary of its free part,
    /// the wrapped part stretched by the exit-end tension (frictionless pulley).
    pub fn for_rest_length(
        cable: &Cable,
        geometry: &CableGeometry,
        anchor: &Vector3<f64>,
        rest_length: f64,
    ) -> Result<CableCatenary, CatenaryError> {
        let ea = axial_rigidity(cable, rest_length);
        let w = weight_per_length(cable);
        let (horizontal, x, z) = Self::frame(geometry, anchor);
        let wrapped = geometry.pulley.map_or(0.0, |p| p.wrapped_length);
        let mut wrapped_rest = wrapped;
        let mut catenary = None;
        for _ in 0..50 {
            let free = rest_length - wrapped_rest;
            let c = Catenary::from_spans(x, z, free, ea, w)?;
            let next = wrapped * ea / (ea + c.tension_exit());
            let done = (next - wrapped_rest).abs() <= 1e-15 * rest_length;
            catenary = Some(c);
            if done {
                break;
            }
            wrapped_rest = next;
        }
        let catenary = catenary.ok_or(CatenaryError::NotConverged { residual: f64::NAN })?;
        Ok(CableCatenary {
            catenary,
            anchor: *anchor,
            exit: geometry.exit_point(anchor),
            horizontal,
            wrapped_rest_length: wrapped_rest,
        })
    }

    /// The cable pulling the platform with `tension` (N) at its anchor: its unstretched
    /// length and shape.
    pub fn for_tension(
        cable: &Cable,
        geometry: &CableGeometry,
        anchor: &Vector3<f64>,
        tension: f64,
    ) -> Result<CableCatenary, CatenaryError> {
        let w = weight_per_length(cable);
        let (horizontal, x, z) = Self::frame(geometry, anchor);
        let wrapped = geometry.pulley.map_or(0.0, |p| p.wrapped_length);
        // The wrapped part's unstretched length depends on EA and the exit tension, EA (for a
        // constant-k cable) on the total: a fixed point, contracting by T/EA.
        let mut wrapped_rest = wrapped;
        let mut last = f64::NAN;
        let mut result = None;
        for _ in 0..50 {
            let c = Catenary::from_tension(
                x,
                z,
                tension,
                |l0| axial_rigidity(cable, l0 + wrapped_rest),
                w,
            )?;
            let ea = c.ea;
            wrapped_rest = wrapped * ea / (ea + c.tension_exit());
            let total = c.rest_length + wrapped_rest;
            let done = (total - last).abs() <= 1e-15 * total;
            last = total;
            result = Some(c);
            if done {
                break;
            }
        }
        let catenary = result.ok_or(CatenaryError::NotConverged { residual: f64::NAN })?;
        Ok(CableCatenary {
            catenary,
            anchor: *anchor,
            exit: geometry.exit_point(anchor),
            horizontal,
            wrapped_rest_length: wrapped_rest,
        })
    }
}

/// World points along a cable from its swivel point (frame anchor), over its pulley (an arc
/// of `arc_points` segments) to the tangent point, then along `catenary` (`curve_points`
/// segments) or straight to the platform anchor `anchor`. For drawing.
pub fn cable_polyline(
    cable: &Cable,
    geometry: &CableGeometry,
    anchor: &Vector3<f64>,
    catenary: Option<&CableCatenary>,
    arc_points: usize,
    curve_points: usize,
) -> Vec<Vector3<f64>> {
    let mut out = Vec::new();
    match (&cable.pulley, &geometry.pulley) {
        (Some(p), Some(g)) => {
            let n = arc_points.max(1);
            // The wheel's plane: angle π is the swivel point, the tangent point at π + β.
            for k in 0..=n {
                let phi = std::f64::consts::PI + g.wrap * k as f64 / n as f64;
                out.push(g.center + (g.radial * phi.cos() + p.axis * phi.sin()) * p.radius);
            }
        }
        _ => out.push(cable.frame_anchor),
    }
    match catenary {
        Some(c) => {
            let mut pts = c.points(curve_points);
            pts.reverse();
            out.extend(pts.into_iter().skip(1));
        }
        None => out.push(*anchor),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test-side independent solution: RK4 on the elastic catenary's ODE in unstretched arc
    /// length, dx/ds = H (1/EA + 1/T), dz/ds = (V + w s)(1/EA + 1/T), plus the stretched
    /// length d ℓ/ds = 1 + T/EA.
    fn integrate(h: f64, v: f64, l0: f64, ea: f64, w: f64, steps: usize) -> (f64, f64, f64) {
        let f = |s: f64| {
            let u = v + w * s;
            let t = h.hypot(u);
            let k = 1.0 / ea + 1.0 / t;
            [h * k, u * k, 1.0 + t / ea]
        };
        let ds = l0 / steps as f64;
        let mut acc = [0.0; 3];
        for i in 0..steps {
            let s = i as f64 * ds;
            let (k1, k2, k4) = (f(s), f(s + 0.5 * ds), f(s + ds));
            for c in 0..3 {
                acc[c] += ds / 6.0 * (k1[c] + 4.0 * k2[c] + k4[c]);
            }
        }
        (acc[0], acc[1], acc[2])
    }

    const CASES: [(f64, f64, f64, f64, f64); 6] = [
        // (H, V, L0, EA, w)
        (100.0, 80.0, 3.0, 2.0e5, 0.64),
        (50.0, -20.0, 4.0, 1.0e5, 5.0), // sags below the platform end first
        (10.0, 0.0, 2.0, 5.0e4, 1.0),
        (300.0, 500.0, 6.0, 1.2e5, 0.0245),
        (5.0, -30.0, 10.0, 1.0e6, 9.0), // deep sag: the curve's low point inside the span
        (200.0, 30.0, 5.0, 1.0e4, 1e-9), // nearly massless
    ];

    #[test]
    fn the_closed_form_spans_match_an_rk4_integration_of_the_ode() {
        for (h, v, l0, ea, w) in CASES {
            let (x, z) = spans(h, v, l0, ea, w);
            let (xi, zi, li) = integrate(h, v, l0, ea, w, 20_000);
            assert!((x - xi).abs() < 1e-10 * l0, "{h} {v}: x {x} vs {xi}");
            assert!((z - zi).abs() < 1e-10 * l0, "{h} {v}: z {z} vs {zi}");
            let c = Catenary {
                rest_length: l0,
                ea,
                weight: w,
                h,
                v,
            };
            let ls = c.stretched_length();
            assert!((ls - li).abs() < 1e-10 * l0, "stretched {ls} vs {li}");
        }
    }

    #[test]
    fn newton_recovers_the_forces_and_the_rest_length_from_the_spans() {
        for (h, v, l0, ea, w) in CASES {
            let (x, z) = spans(h, v, l0, ea, w);
            let c = Catenary::from_spans(x, z, l0, ea, w).expect("solves");
            let t = h.hypot(v);
            assert!((c.h - h).abs() < 1e-7 * t, "H {} vs {h}", c.h);
            assert!((c.v - v).abs() < 1e-7 * t, "V {} vs {v}", c.v);
            let d = Catenary::from_tension(x, z, t, |_| ea, w).expect("solves");
            let (dx, dz) = d.spans();
            assert!((dx - x).abs() < 1e-10 * l0 && (dz - z).abs() < 1e-10 * l0);
            assert!((d.tension_platform() - t).abs() < 1e-9 * t);
            // A deep sag has a second, taut cable with the same end tension; from the straight
            // start Newton finds the taut one. Where the cable rises from the platform
            // (V ≥ 0, every cable robot's case) the answer is unique.
            if v >= 0.0 {
                assert!(
                    (d.rest_length - l0).abs() < 1e-10 * l0,
                    "{} vs {l0}",
                    d.rest_length
                );
                assert!((d.h - h).abs() < 1e-7 * t && (d.v - v).abs() < 1e-7 * t);
            }
        }
    }

    #[test]
    fn the_inextensible_limit_is_the_cosh_catenary() {
        // Ends at equal height, X apart, cable of length L: y = a cosh(x/a) with
        // L = 2 a sinh(X/(2a)); a found here by bisection, independently of the Newton solve.
        let (x, l, w): (f64, f64, f64) = (4.0, 4.6, 2.0);
        let (mut lo, mut hi) = (0.1, 100.0);
        for _ in 0..200 {
            let a = 0.5 * (lo + hi);
            if 2.0 * a * (x / (2.0 * a)).sinh() > l {
                lo = a;
            } else {
                hi = a;
            }
        }
        let a = 0.5 * (lo + hi);
        let c = Catenary::from_spans(x, 0.0, l, 1e15, w).expect("solves");
        assert!((c.h / w - a).abs() < 1e-8 * a, "H/w {} vs a {a}", c.h / w);
        // Symmetry: each end carries half the weight.
        assert!((c.v + 0.5 * w * l).abs() < 1e-8 * w * l, "V {}", c.v);
        let sag = a * ((x / (2.0 * a)).cosh() - 1.0);
        assert!((c.sag() - sag).abs() < 1e-9, "sag {} vs {sag}", c.sag());
        assert!((c.tension_exit() - c.tension_platform()).abs() < 1e-9);
    }

    #[test]
    fn a_taut_horizontal_cable_sags_as_the_parabola_says() {
        // w L²/(8H) for a shallow cable (relative error of order (sag/L)²).
        let (x, ea, w) = (5.0, 1e6, 0.65);
        for l0 in [5.0005, 5.001, 5.002] {
            let c = Catenary::from_spans(x, 0.0, l0, ea, w).expect("solves");
            let parabola = w * x * x / (8.0 * c.h);
            let rel = (c.sag() - parabola).abs() / parabola;
            assert!(rel < 1e-3, "L0 {l0}: sag {} vs {parabola}", c.sag());
            assert!(c.sag() > 1e-4, "a real sag");
        }
    }

    #[test]
    fn top_minus_bottom_tension_is_the_weight_of_the_rise() {
        for (h, v, l0, ea, w) in CASES {
            let c = Catenary {
                rest_length: l0,
                ea,
                weight: w,
                h,
                v,
            };
            let (_, z) = c.spans();
            // Exact: T_top − T_bot = w·(z − elastic part of z).
            let inextensible_rise = z - (v * l0 + 0.5 * w * l0 * l0) / ea;
            let d = c.tension_exit() - c.tension_platform();
            assert!(
                (d - w * inextensible_rise).abs() < 1e-9 * (1.0 + d.abs()),
                "{d}"
            );
        }
        // Nearly inextensible: T_top − T_bot = w Δz.
        let c = Catenary::from_spans(3.0, 2.0, 3.7, 1e14, 4.0).expect("solves");
        let d = c.tension_exit() - c.tension_platform();
        assert!((d - 4.0 * 2.0).abs() < 1e-9, "{d}");
    }

    #[test]
    fn a_light_cable_is_the_straight_elastic_cable() {
        let (x, z, ea) = (3.0, 4.0, 1e5);
        let l0 = 4.99;
        let c = Catenary::from_spans(x, z, l0, ea, 1e-10).expect("solves");
        let t = ea * (5.0 - l0) / l0;
        assert!(
            (c.tension_platform() - t).abs() < 1e-6 * t,
            "{}",
            c.tension_platform()
        );
        assert!((c.h / c.tension_platform() - 0.6).abs() < 1e-10);
        assert!(c.sag() < 1e-9);
        // Straight down: vertical cables have a closed form too.
        let c = Catenary::from_spans(0.0, 5.0, 4.99, ea, 2.0).expect("solves");
        assert_eq!(c.h, 0.0);
        let (_, z) = c.spans();
        assert!((z - 5.0).abs() < 1e-12);
    }

    #[test]
    fn bad_inputs_and_slack_vertical_cables_are_refused() {
        assert!(Catenary::from_spans(1.0, 1.0, -1.0, 1e5, 1.0).is_err());
        assert!(Catenary::from_spans(1.0, 1.0, 1.0, 0.0, 1.0).is_err());
        assert!(Catenary::from_spans(1.0, f64::NAN, 1.0, 1e5, 1.0).is_err());
        assert!(matches!(
            Catenary::from_spans(0.0, 1.0, 2.0, 1e5, 1.0),
            Err(CatenaryError::Slack { .. })
        ));
        assert!(Catenary::from_tension(1.0, 1.0, 0.0, |_| 1e5, 1.0).is_err());
    }

    #[test]
    fn the_drawn_polyline_runs_swivel_point_arc_tangent_point_catenary_anchor() {
        // caroca-pulleys (r = 50 mm, steel cables with mass) at its home pose, each cable at
        // 200 N: what the viewer draws.
        let robot = crate::fixtures::robot("caroca-pulleys");
        let pose = crate::kinematics::Pose::from_array(robot.home);
        let rotation = pose.rotation();
        let world_from_platform = pose.world_from_platform();
        for (k, cable) in robot.cables.iter().enumerate() {
            let p = cable.pulley.expect("a pulley");
            let g = CableGeometry::new(cable, &pose.position, rotation.matrix());
            let anchor =
                (world_from_platform * nalgebra::Point3::from(cable.platform_anchor)).coords;
            let c = CableCatenary::for_tension(cable, &g, &anchor, 200.0).expect("catenary");
            let pts = cable_polyline(cable, &g, &anchor, Some(&c), 12, 40);
            assert_eq!(pts.len(), 13 + 40, "cable {k}");
            let pg = g.pulley.expect("pulley geometry");
            // Starts at the swivel point, the arc on the wheel (radius r about its centre, in
            // the plane of the swivel axis and the radial direction), ends at the tangent point.
            assert!((pts[0] - cable.frame_anchor).norm() < 1e-12, "cable {k}");
            for q in &pts[..=12] {
                let rel = q - pg.center;
                assert!((rel.norm() - p.radius).abs() < 1e-12);
                assert!(rel.dot(&pg.radial.cross(&p.axis)).abs() < 1e-12);
            }
            assert!((pts[12] - pg.tangent).norm() < 1e-12, "cable {k}");
            // The arc's length is r·β (chords of a circle: within r β (δ²/24) of it).
            let arc: f64 = pts[..=12].windows(2).map(|w| (w[1] - w[0]).norm()).sum();
            let delta = pg.wrap / 12.0;
            assert!((arc - p.radius * pg.wrap).abs() <= p.radius * pg.wrap * delta * delta / 20.0);
            // Then the catenary, ending at the platform anchor and hanging below the chord by
            // the catenary's sag (the densest sampling brackets it from below).
            assert!((pts[pts.len() - 1] - anchor).norm() < 1e-9, "cable {k}");
            // Vertical drop under the chord at the same horizontal place, from the anchor.
            let span = pts[12] - anchor;
            let x_span = span.dot(&c.horizontal);
            let below = pts[12..]
                .iter()
                .map(|q| {
                    let x = (q - anchor).dot(&c.horizontal);
                    span.z * x / x_span - (q.z - anchor.z)
                })
                .fold(0.0_f64, f64::max);
            assert!(c.sag() > 1e-3, "cable {k}: steel sags, {} m", c.sag());
            assert!(
                below > 0.9 * c.sag() && below <= c.sag() * (1.0 + 1e-9) + 1e-12,
                "cable {k}: drawn {below} m, sag {} m",
                c.sag()
            );
        }
        // No pulley and no mass: the straight cable, frame anchor to platform anchor.
        let point = crate::fixtures::uvigo8();
        let cable = &point.cables[0];
        let pose = crate::kinematics::Pose::from_array(point.home);
        let g = CableGeometry::new(cable, &pose.position, pose.rotation().matrix());
        let anchor = cable.frame_anchor - g.vector;
        let pts = cable_polyline(cable, &g, &anchor, None, 12, 40);
        assert_eq!(pts, vec![cable.frame_anchor, anchor]);
    }
}
