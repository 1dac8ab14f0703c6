//! A cable with mass as N point masses (`--cable-nodes N`, the elastic model): the standard
//! lumped-mass discretisation of a cable (e.g. Buckham et al.; MoorDyn).
//!
//! Lumping: the cable of unstretched length L0 and density ρ is cut into N + 1 equal segments
//! of rest length L0/(N + 1); node j (1..N) sits at the end of segment j − 1 and carries the
//! mass of one segment, ρ·L0/(N + 1); the two half segments at the ends go to the supports
//! (the frame's half is lost in the frame, the platform's is a weight at its anchor, applied
//! by the model). Each segment is the cable's spring-damper scaled to its length: stiffness
//! (N + 1)·k (for k = EA/L0: EA over the segment's rest length), damping (N + 1)·c, unilateral
//! (a slack segment carries nothing). The winch pays out or hauls in every segment alike (the
//! rest length rate splits evenly). Over a pulley, segment 0 runs from the tangent point and
//! its length counts the wrapped r·β.
//!
//! Integration: the platform's scheme — Störmer–Verlet (half kick, drift, half kick) with the
//! dampers implicit (a block-tridiagonal solve along the cable, 3×3 blocks, in O(N)) and the
//! springs explicit. The explicit springs need ω_max·h ≤ 1 with ω_max = 2√(k_seg/m) (the
//! chain's highest mode, half the leapfrog's limit of 2): [`LumpedCable::max_step`]; the model
//! substeps nodes and platform together at that step (uvigo8-pulleys, cables of ≈ 0.35 m:
//! 50 substeps of a 1 ms step at N = 4, 90 at N = 8, 169 at N = 16). A mass-proportional drag `drag` (1/s) damps the transverse motion, which the
//! axial dampers cannot.

use crate::robot::GRAVITY;
use nalgebra::{Matrix3, Vector3};

/// The axial properties of one segment this step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Axial {
    /// Stiffness and damping of one segment, N/m and N·s/m.
    pub k: f64,
    pub c: f64,
    /// Rest length of one segment, m, and its rate, m/s.
    pub rest: f64,
    pub rest_rate: f64,
    /// Mass-proportional drag on the nodes, 1/s.
    pub drag: f64,
}

/// Where the cable's ends are during a substep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ends {
    /// Where segment 0 leaves the frame (the pulley's tangent point, or the frame anchor), m.
    pub exit: Vector3<f64>,
    /// The length wrapped on the pulley r·β, counted in segment 0, m.
    pub wrapped: f64,
    /// The platform anchor and its velocity (world), m and m/s.
    pub anchor: Vector3<f64>,
    pub anchor_velocity: Vector3<f64>,
}

/// The nodes of one cable and the state of its segments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LumpedCable {
    /// Node positions and velocities (world), winch side first.
    pub position: Vec<Vector3<f64>>,
    pub velocity: Vec<Vector3<f64>>,
    /// Mass of each node, kg.
    pub mass: f64,
    /// Per segment (N + 1): unit direction from its winch-side end to its platform-side end,
    /// length (segment 0 with the wrap) and tension of the last kick, N.
    direction: Vec<Vector3<f64>>,
    length: Vec<f64>,
    pub tension: Vec<f64>,
}

impl LumpedCable {
    /// `nodes` nodes of a cable of density `density` (kg/m) and unstretched length `rest`
    /// (m), evenly on the straight line from `exit` to `anchor`, at rest.
    pub fn straight(
        nodes: usize,
        density: f64,
        rest: f64,
        exit: &Vector3<f64>,
        anchor: &Vector3<f64>,
    ) -> LumpedCable {
        let segments = nodes + 1;
        let position = (1..=nodes)
            .map(|j| exit + (anchor - exit) * (j as f64 / segments as f64))
            .collect();
        LumpedCable {
            position,
            velocity: vec![Vector3::zeros(); nodes],
            mass: density * rest / segments as f64,
            direction: vec![Vector3::zeros(); segments],
            length: vec![0.0; segments],
            tension: vec![0.0; segments],
        }
    }

    pub fn nodes(&self) -> usize {
        self.position.len()
    }

    /// The largest stable substep: ω_max·h = 1 with ω_max = 2√(k/m) (see the module).
    pub fn max_step(&self, axial: &Axial) -> f64 {
        if axial.k <= 0.0 || self.mass <= 0.0 {
            return f64::INFINITY;
        }
        0.5 * (self.mass / axial.k).sqrt()
    }

    /// The end of segment s at the winch side (s = 0: the exit point).
    fn start(&self, s: usize, ends: &Ends) -> Vector3<f64> {
        if s == 0 {
            ends.exit
        } else {
            self.position[s - 1]
        }
    }

    /// The end of segment s at the platform side (s = N: the anchor).
    fn end(&self, s: usize, ends: &Ends) -> Vector3<f64> {
        if s == self.nodes() {
            ends.anchor
        } else {
            self.position[s]
        }
    }

    fn end_velocity(&self, s: usize, ends: &Ends) -> Vector3<f64> {
        if s == self.nodes() {
            ends.anchor_velocity
        } else {
            self.velocity[s]
        }
    }

    fn start_velocity(&self, s: usize) -> Vector3<f64> {
        if s == 0 {
            Vector3::zeros()
        } else {
            self.velocity[s - 1]
        }
    }

    /// Segment lengths and directions at the current positions.
    fn observe(&mut self, ends: &Ends) {
        for s in 0..=self.nodes() {
            let v = self.end(s, ends) - self.start(s, ends);
            let l = v.norm();
            self.direction[s] = if l > 1e-12 { v / l } else { Vector3::zeros() };
            self.length[s] = l + if s == 0 { ends.wrapped } else { 0.0 };
        }
    }

    /// The tension of segment s at the current positions and velocities (≥ 0).
    fn segment_tension(&self, s: usize, ends: &Ends, axial: &Axial) -> f64 {
        let stretch = self.length[s] - axial.rest;
        if stretch <= 0.0 {
            return 0.0;
        }
        let rate = self.direction[s].dot(&(self.end_velocity(s, ends) - self.start_velocity(s)));
        (axial.k * stretch + axial.c * (rate - axial.rest_rate)).max(0.0)
    }

    /// Changes the node velocities by the segment forces, gravity and drag over `h`, the
    /// dampers and the drag implicit: (M + h·C) v⁺ = M v + h·F with C block-tridiagonal.
    fn kick(&mut self, ends: &Ends, axial: &Axial, h: f64) {
        let n = self.nodes();
        let m = self.mass;
        // Per node: diagonal block, right-hand side; per inner segment: the off-diagonal block.
        let mut diag = vec![Matrix3::identity() * (m * (1.0 + h * axial.drag)); n];
        let mut rhs: Vec<Vector3<f64>> = self
            .velocity
            .iter()
            .map(|v| v * m + Vector3::new(0.0, 0.0, -m * GRAVITY * h))
            .collect();
        let mut off = vec![Matrix3::zeros(); n.saturating_sub(1)];
        for s in 0..=n {
            let stretch = self.length[s] - axial.rest;
            if stretch <= 0.0 {
                continue;
            }
            let u = self.direction[s];
            // Spring and the damper's rest-rate part explicit; the damper's velocity part
            // implicit (its ends that are nodes), or explicit at a known end velocity.
            let mut explicit = axial.k * stretch - axial.c * axial.rest_rate;
            let block = u * u.transpose() * (axial.c * h);
            // Lower node: s − 1 (none for s = 0); upper node: s (none for s = n).
            let lower = s.checked_sub(1);
            let upper = (s < n).then_some(s);
            if upper.is_none() {
                explicit += axial.c * u.dot(&ends.anchor_velocity);
            }
            let f = u * (explicit * h);
            if let Some(j) = lower {
                rhs[j] += f;
                diag[j] += block;
            }
            if let Some(j) = upper {
                rhs[j] -= f;
                diag[j] += block;
            }
            if let (Some(a), Some(_)) = (lower, upper) {
                off[a] -= block;
            }
        }
        // Block Thomas: forward elimination, back substitution (M + hC is symmetric positive
        // definite, so every pivot block is invertible).
        for j in 1..n {
            let Some(inv) = diag[j - 1].try_inverse() else {
                return;
            };
            let l = off[j - 1].transpose() * inv;
            diag[j] -= l * off[j - 1];
            let carried = l * rhs[j - 1];
            rhs[j] -= carried;
        }
        for j in (0..n).rev() {
            let mut r = rhs[j];
            if j + 1 < n {
                r -= off[j] * self.velocity[j + 1];
            }
            if let Some(inv) = diag[j].try_inverse() {
                self.velocity[j] = inv * r;
            }
        }
    }

    /// One Störmer–Verlet substep of `h`: the ends at the start (`before`) and at the end
    /// (`after`) of the substep.
    pub fn substep(&mut self, before: &Ends, after: &Ends, axial: &Axial, h: f64) {
        self.observe(before);
        self.kick(before, axial, 0.5 * h);
        for (x, v) in self.position.iter_mut().zip(&self.velocity) {
            *x += v * h;
        }
        self.observe(after);
        self.kick(after, axial, 0.5 * h);
        for s in 0..=self.nodes() {
            self.tension[s] = self.segment_tension(s, after, axial);
        }
    }

    /// The tension where the cable leaves its pulley (N): segment 0's, plus the weight of the
    /// half segment between its middle and the exit point along it (the half segment the
    /// lumping gives the frame).
    pub fn exit_tension(&self) -> f64 {
        self.tension[0] - 0.5 * self.mass * GRAVITY * self.direction[0].z
    }

    /// The tension at the platform anchor (N): segment N's, less the weight of the half segment
    /// hanging from the anchor along it (applied to the platform by the model).
    pub fn anchor_tension(&self) -> f64 {
        let n = self.nodes();
        self.tension[n] + 0.5 * self.mass * GRAVITY * self.direction[n].z
    }

    /// Segment 0's length including the wrap and its rate, m and m/s.
    pub fn first_segment(&self, ends: &Ends) -> (f64, f64) {
        let v = self.position.first().copied().unwrap_or(ends.anchor) - ends.exit;
        let l = v.norm();
        let u = if l > 1e-12 { v / l } else { Vector3::zeros() };
        let vel = self
            .velocity
            .first()
            .copied()
            .unwrap_or(ends.anchor_velocity);
        (l + ends.wrapped, u.dot(&vel))
    }

    /// Settles the nodes with both ends held (the platform at rest): Verlet substeps with a
    /// drag near critical for the slowest transverse mode, until the nodes move slower than
    /// 1 nm/s or after `max_substeps`.
    pub fn relax(&mut self, ends: &Ends, axial: &Axial, max_substeps: usize) {
        let h = self.max_step(axial).min(1e-3);
        let span = (ends.anchor - ends.exit).norm().max(1e-3);
        let density = self.mass / axial.rest.max(1e-9);
        let stretch = (span + ends.wrapped - axial.rest * (self.nodes() + 1) as f64).max(0.0);
        let tension = (axial.k / (self.nodes() + 1) as f64 * stretch).max(1.0);
        let wave = (tension / density.max(1e-9)).sqrt();
        let relaxing = Axial {
            drag: axial.drag.max(2.0 * std::f64::consts::PI * wave / span),
            ..*axial
        };
        for k in 0..max_substeps {
            self.substep(ends, ends, &relaxing, h);
            if k % 64 == 63 && self.velocity.iter().all(|v| v.norm() < 1e-9) {
                break;
            }
        }
        self.velocity.iter_mut().for_each(|v| *v = Vector3::zeros());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Irvine's elastic catenary (Irvine, *Cable Structures*, 1981, §2.2) from an end at the
    /// origin to (l, h), unstretched length L0, axial stiffness EA, weight w per unstretched
    /// length: H the horizontal tension, V the upward force of the support at the origin end
    /// (the tension's vertical component at s is w s − V); the point at Lagrangian coordinate s:
    ///   x(s) = H s/EA + (H/w)[asinh(V/H) − asinh((V − w s)/H)],
    ///   z(s) = (w s²/2 − V s)/EA + (H/w)[√(1 + ((V − w s)/H)²) − √(1 + (V/H)²)].
    /// (x(L0), z(L0)) = (l, h) is solved for (H, V) by Newton's method on a finite-difference
    /// Jacobian.
    struct Catenary {
        h: f64,
        v: f64,
        ea: f64,
        w: f64,
    }

    impl Catenary {
        fn at(&self, s: f64) -> (f64, f64) {
            let (h, v, ea, w) = (self.h, self.v, self.ea, self.w);
            let x = h * s / ea + h / w * ((v / h).asinh() - ((v - w * s) / h).asinh());
            let z = (0.5 * w * s * s - v * s) / ea
                + h / w
                    * ((1.0 + ((v - w * s) / h).powi(2)).sqrt() - (1.0 + (v / h).powi(2)).sqrt());
            (x, z)
        }

        fn solve(span: f64, rise: f64, l0: f64, ea: f64, w: f64) -> Catenary {
            let mut c = Catenary {
                h: 0.5 * w * l0,
                v: 0.5 * w * l0,
                ea,
                w,
            };
            for _ in 0..100 {
                let (x, z) = c.at(l0);
                let r = [x - span, z - rise];
                if r[0].abs().max(r[1].abs()) < 1e-14 {
                    break;
                }
                let d = 1e-7 * c.h.max(1.0);
                let jac = |dh: f64, dv: f64| {
                    let p = Catenary {
                        h: c.h + dh,
                        v: c.v + dv,
                        ..c
                    };
                    let (xp, zp) = p.at(l0);
                    [(xp - x) / d, (zp - z) / d]
                };
                let (a, b) = (jac(d, 0.0), jac(0.0, d));
                let det = a[0] * b[1] - b[0] * a[1];
                let dh = (r[0] * b[1] - b[0] * r[1]) / det;
                let dv = (a[0] * r[1] - r[0] * a[1]) / det;
                c.h = (c.h - dh).max(1e-3 * c.h);
                c.v -= dv;
            }
            c
        }
    }

    /// Vertical distance below the chord at the horizontal mid-span of the polyline
    /// `points` (x increasing), linearly interpolated.
    fn polyline_sag(points: &[(f64, f64)], span: f64, rise: f64) -> f64 {
        let xm = 0.5 * span;
        for w in points.windows(2) {
            let ((x0, z0), (x1, z1)) = (w[0], w[1]);
            if x0 <= xm && xm <= x1 {
                let z = z0 + (z1 - z0) * (xm - x0) / (x1 - x0);
                return 0.5 * rise - z;
            }
        }
        f64::NAN
    }

    /// The lumped cable's static sag at mid-span (after settling with drag) converges to
    /// Irvine's elastic catenary as N grows, at second order.
    #[test]
    fn static_sag_converges_to_the_elastic_catenary() {
        // A 2.1 m cable of 0.1 kg/m and EA = 2000 N between (0, 0, 0) and (2, 0, 0.5).
        let (span, rise, l0, ea, rho) = (2.0, 0.5, 2.1, 2000.0, 0.1);
        let w = rho * GRAVITY;
        let cat = Catenary::solve(span, rise, l0, ea, w);
        let (xe, ze) = cat.at(l0);
        assert!((xe - span).abs() < 1e-12 && (ze - rise).abs() < 1e-12);
        // The catenary's sag at x = span/2: find s there by bisection.
        let (mut lo, mut hi) = (0.0, l0);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if cat.at(mid).0 < 0.5 * span {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let exact = 0.5 * rise - cat.at(0.5 * (lo + hi)).1;
        assert!(exact > 0.05, "a real sag: {exact}");
        let exit = Vector3::zeros();
        let anchor = Vector3::new(span, 0.0, rise);
        let ends = Ends {
            exit,
            wrapped: 0.0,
            anchor,
            anchor_velocity: Vector3::zeros(),
        };
        let mut errors = Vec::new();
        for n in [2usize, 4, 8, 16, 32] {
            let segments = (n + 1) as f64;
            let axial = Axial {
                k: ea / (l0 / segments),
                c: 0.5 * segments,
                rest: l0 / segments,
                rest_rate: 0.0,
                drag: 0.0,
            };
            let mut cable = LumpedCable::straight(n, rho, l0, &exit, &anchor);
            cable.relax(&ends, &axial, 2_000_000);
            assert!(cable.velocity.iter().all(|v| v.norm() == 0.0));
            // The nodes stay in the vertical plane of the span.
            assert!(cable.position.iter().all(|p| p.y.abs() < 1e-12));
            // Each node against the catenary's point at its Lagrangian coordinate j·L0/(N + 1).
            let error = cable
                .position
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    let (x, z) = cat.at((j + 1) as f64 * l0 / segments);
                    ((p.x - x).powi(2) + (p.z - z).powi(2)).sqrt()
                })
                .fold(0.0, f64::max);
            let mut points = vec![(0.0, 0.0)];
            points.extend(cable.position.iter().map(|p| (p.x, p.z)));
            points.push((span, rise));
            let sag = polyline_sag(&points, span, rise);
            eprintln!(
                "N = {n:2}: mid-span sag {sag:.6} m (catenary {exact:.6} m), largest node \
                 error {error:.3e} m"
            );
            errors.push(error);
        }
        // Decreasing, and at second order in the segment length L0/(N + 1): the observed
        // order log(e_a/e_b)/log((N_b + 1)/(N_a + 1)) is 2 within 0.1 (measured: 1.99, 2.005,
        // 2.006, 2.004). The mid-span sag itself (printed) converges too.
        let ns = [2.0f64, 4.0, 8.0, 16.0, 32.0];
        for k in 0..errors.len() - 1 {
            assert!(errors[k + 1] < errors[k], "error must decrease: {errors:?}");
            let order = (errors[k] / errors[k + 1]).ln() / ((ns[k + 1] + 1.0) / (ns[k] + 1.0)).ln();
            eprintln!("order N = {} → {}: {order:.3}", ns[k], ns[k + 1]);
            assert!((1.9..2.1).contains(&order), "order {order} in {errors:?}");
        }
        assert!(errors[errors.len() - 1] < 1e-3 * exact, "{errors:?}");
    }
}
