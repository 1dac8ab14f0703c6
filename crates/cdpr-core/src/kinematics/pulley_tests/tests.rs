//! Swivel pulleys checked against numbers the closed form in [`super::pulley`] does not
//! produce: a second, numerical construction of the taut cable, central finite differences,
//! the point-exit limit, forward kinematics and statics built from the tangent points.

use super::super::*;
use crate::fixtures::{Splitmix, robot, robot_text};
use crate::robot::{Pulley, parse_robot};
use nalgebra::{DVector, Vector3};
use std::f64::consts::{PI, TAU};

/// Random poses, axes and anchors from the shared deterministic generator.
struct Rng(Splitmix);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0.uniform()
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    fn unit(&mut self) -> Vector3<f64> {
        loop {
            let v = Vector3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            let n = v.norm();
            if n > 0.2 && n <= 1.0 {
                return v / n;
            }
        }
    }

    /// A position uniform in `robot`'s workspace box.
    fn position_in(&mut self, robot: &Robot) -> Vector3<f64> {
        let (lo, hi) = (robot.workspace.min, robot.workspace.max);
        Vector3::new(
            self.range(lo.x, hi.x),
            self.range(lo.y, hi.y),
            self.range(lo.z, hi.z),
        )
    }

    /// A pose: the position as [`Rng::position_in`], roll, pitch, yaw uniform in ±`tilt`.
    fn pose_in(&mut self, robot: &Robot, tilt: [f64; 3]) -> Pose {
        let p = self.position_in(robot);
        let [r, q, y] = tilt.map(|t| self.range(-t, t));
        Pose::new(p.x, p.y, p.z, r, q, y)
    }
}

/// The swivel reference directions as the robot-file page documents them, written out again
/// here: e_x = world X made perpendicular to the axis (world Y when the axis is near X).
fn documented_reference(z: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let pick = if z.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let e_x = (pick - z * z.dot(&pick)).normalize();
    (e_x, z.cross(&e_x))
}

/// Golden-section search for the maximum of `f` on [lo, hi].
fn golden_max(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..200 {
        if f1 < f2 {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = f(x2);
        } else {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = f(x1);
        }
    }
    0.5 * (lo + hi)
}

/// The taut cable found numerically: (γ, β, tangent point, length).
///
/// γ: the swivel angle maximises (p − a)·e(γ), the reach of the platform anchor along the
/// wheel's radial direction e(γ) = cos γ e_x + sin γ e_y (the wheel's plane then holds p),
/// found by dense sampling, golden-section refinement and bisection on the slope.
///
/// β: in that plane the wheel's rim is c(φ) = m + r (cos φ u + sin φ z), m = a + r u, and
/// the cable arrives at the swivel point a = c(π) travelling along −z, i.e. towards
/// increasing φ. A cable leaving at φ has length L(φ) = r (φ − π) + |p − c(φ)|. Its free
/// segment must not cut into the wheel: (p − c)·(c − m) ≥ 0. L never decreases in φ
/// (dL/dφ = r (1 − cos ∠(t, p − c)) ≥ 0), so the taut cable is the feasible φ of least
/// length, which sampling of [π, 3π) brackets and bisection on the clearance refines.
fn taut_cable(
    pulley: &Pulley,
    a: &Vector3<f64>,
    p: &Vector3<f64>,
) -> (f64, f64, Vector3<f64>, f64) {
    let z = pulley.axis;
    let r = pulley.radius;
    let (e_x, e_y) = documented_reference(&z);
    let radial = |g: f64| e_x * g.cos() + e_y * g.sin();
    let reach = |g: f64| (p - a).dot(&radial(g));
    let n = 720;
    let best = (0..n)
        .map(|k| -PI + TAU * k as f64 / n as f64)
        .max_by(|x, y| reach(*x).total_cmp(&reach(*y)))
        .unwrap_or(0.0);
    let step = TAU / n as f64;
    let coarse = golden_max(reach, best - step, best + step);
    // The maximum is flat, so golden section pins it to √ε only; the slope
    // (p − a)·(−sin γ e_x + cos γ e_y) falls through zero there and bisection on it does better.
    let slope = |g: f64| (p - a).dot(&(e_y * g.cos() - e_x * g.sin()));
    let (mut lo, mut hi) = (coarse - 1e-4, coarse + 1e-4);
    assert!(slope(lo) > 0.0 && slope(hi) < 0.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if slope(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let gamma = (0.5 * (lo + hi) + PI).rem_euclid(TAU) - PI;
    let u = radial(gamma);
    let m = a + u * r;
    let rim = |phi: f64| m + (u * phi.cos() + z * phi.sin()) * r;
    let clearance = |phi: f64| {
        let c = rim(phi);
        (p - c).dot(&(c - m)) / r
    };
    let length = |phi: f64| r * (phi - PI) + (p - rim(phi)).norm();
    let samples = 20_000;
    let phis: Vec<f64> = (0..samples)
        .map(|k| PI + TAU * k as f64 / samples as f64)
        .collect();
    let first = phis
        .iter()
        .position(|&phi| clearance(phi) >= 0.0)
        .expect("some exit clears the wheel");
    assert!(first > 0, "the cable cannot leave at the swivel point");
    // Among the feasible samples, the first is the shortest (the claim above, checked).
    let shortest = phis
        .iter()
        .filter(|&&phi| clearance(phi) >= 0.0)
        .map(|&phi| length(phi))
        .fold(f64::INFINITY, f64::min);
    assert!(length(phis[first]) <= shortest + 1e-12);
    let (mut lo, mut hi) = (phis[first - 1], phis[first]);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if clearance(mid) >= 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (gamma, hi - PI, rim(hi), length(hi))
}

#[test]
fn pulley_geometry_matches_a_numerical_taut_cable_for_random_axes_and_anchors() {
    let mut rng = Rng(Splitmix(25));
    let mut checked = 0;
    while checked < 300 {
        let axis = if checked < 30 {
            -Vector3::z()
        } else {
            rng.unit()
        };
        let pulley = Pulley {
            radius: rng.range(0.005, 0.2),
            axis,
            friction: 0.0,
            max_wrap: PI,
            swivel_range: None,
        };
        let a = Vector3::new(
            rng.range(-2.0, 2.0),
            rng.range(-2.0, 2.0),
            rng.range(0.0, 3.0),
        );
        let p = a + rng.unit() * rng.range(0.3, 3.0);
        // Keep clear of the two degenerate places: on the swivel axis (γ free) and on or
        // inside the wheel.
        let v = p - a;
        let perp = (v - axis * v.dot(&axis)).norm();
        let in_plane = (p - (a + (v - axis * v.dot(&axis)) / perp * pulley.radius)).norm();
        if perp < 0.05 || in_plane < 2.0 * pulley.radius {
            continue;
        }
        let g = pulley::wrap(&pulley, &a, &p);
        let (gamma, beta, tangent, length) = taut_cable(&pulley, &a, &p);
        let dg = (g.swivel - gamma + PI).rem_euclid(TAU) - PI;
        assert!(dg.abs() < 1e-12, "γ {} vs {gamma}", g.swivel);
        assert!((g.wrap - beta).abs() < 1e-9, "β {} vs {beta}", g.wrap);
        assert!((g.tangent - tangent).norm() < 1e-9, "{checked}: tangent");
        assert!(
            (g.wrapped_length + g.free_length - length).abs() < 1e-9,
            "length {} vs {length}",
            g.wrapped_length + g.free_length
        );
        // The plane of the wheel holds the platform anchor, on the wheel's side.
        let normal = axis.cross(&g.radial);
        assert!(v.dot(&normal).abs() < 1e-12 * (1.0 + v.norm()));
        assert!(v.dot(&g.radial) > 0.0);
        checked += 1;
    }
}

/// uvigo8-pulleys with its swivel axes turned to random directions (the cable then comes
/// at its pillar from all sides), kept clear of axes pointing at the workspace.
fn rotated_axes_robot(seed: u64) -> Robot {
    let mut robot = robot("uvigo8-pulleys");
    let mut rng = Rng(Splitmix(seed));
    let centre = robot.workspace.center();
    for c in &mut robot.cables {
        let towards = (centre - c.frame_anchor).normalize();
        let axis = loop {
            let axis = rng.unit();
            if axis.dot(&towards).abs() < 0.8 {
                break axis;
            }
        };
        if let Some(p) = &mut c.pulley {
            p.axis = axis;
            p.radius = rng.range(0.01, 0.08);
        }
    }
    robot
}

fn central_differences(robot: &Robot, pose: &Pose, h: f64) -> DMatrix<f64> {
    let n = robot.dof.count();
    let mut j = DMatrix::zeros(robot.cable_count(), n);
    for k in 0..n {
        let (mut plus, mut minus) = (pose.to_array(), pose.to_array());
        plus[k] += h;
        minus[k] -= h;
        let lp = lengths(robot, &Pose::from_array(plus));
        let lm = lengths(robot, &Pose::from_array(minus));
        for i in 0..robot.cable_count() {
            j[(i, k)] = (lp[i] - lm[i]) / (2.0 * h);
        }
    }
    j
}

#[test]
fn pulley_jacobians_match_central_differences_of_the_length() {
    let mut rng = Rng(Splitmix(7));
    let mut robots = vec![robot("uvigo8-pulleys"), robot("caroca-pulleys")];
    robots.extend((1..=4).map(rotated_axes_robot));
    for robot in &robots {
        for _ in 0..8 {
            let pose = rng.pose_in(robot, [0.2, 0.2, 0.3]);
            let ik = inverse(robot, &pose);
            assert!(ik.cables.iter().all(|c| c.pulley.is_some()));
            // Lengths are smooth to ~1e-16 relative: h = 1e-6 leaves truncation ~1e-12 and
            // rounding ~1e-10.
            let numeric = central_differences(robot, &ik.pose, 1e-6);
            let analytic = ik.pose_jacobian();
            let err = (&analytic - &numeric).amax();
            assert!(err < 1e-8, "{}: {err:e}\n{analytic}\n{numeric}", robot.name);
            // The structure matrix: J = −Wᵀ against the length change along a small twist.
            let w = ik.wrench_matrix();
            let twist = [0.3, -0.2, 0.1, 0.4, -0.5, 0.2];
            let dt = 1e-6;
            let iso = ik.pose.world_from_platform();
            let omega = Vector3::new(twist[3], twist[4], twist[5]);
            let moved = nalgebra::Isometry3::from_parts(
                nalgebra::Translation3::from(
                    iso.translation.vector + Vector3::new(twist[0], twist[1], twist[2]) * dt,
                ),
                nalgebra::UnitQuaternion::from_scaled_axis(omega * dt) * iso.rotation,
            );
            let back = nalgebra::Isometry3::from_parts(
                nalgebra::Translation3::from(
                    iso.translation.vector - Vector3::new(twist[0], twist[1], twist[2]) * dt,
                ),
                nalgebra::UnitQuaternion::from_scaled_axis(-omega * dt) * iso.rotation,
            );
            let l1 = lengths(robot, &Pose::from_isometry(&moved));
            let l0 = lengths(robot, &Pose::from_isometry(&back));
            let predicted = -w.transpose() * DVector::from_column_slice(&twist);
            for i in 0..robot.cable_count() {
                let rate = (l1[i] - l0[i]) / (2.0 * dt);
                assert!(
                    (rate - predicted[i]).abs() < 1e-7,
                    "{} cable {i}: {rate} vs {}",
                    robot.name,
                    predicted[i]
                );
            }
        }
    }
}

/// uvigo8-pulleys' file with another `pulley_radius` and no cable mass.
fn with_radius(radius: &str) -> Robot {
    let text = robot_text("uvigo8-pulleys")
        .replace(
            "pulley_radius = 0.025           # m, every pulley",
            &format!("pulley_radius = {radius}"),
        )
        .replace("cable_mass_per_length = 0.0025  # kg/m, 2 mm Dyneema", "");
    assert!(text.contains(&format!("pulley_radius = {radius}")));
    parse_robot(&text, "uvigo8-pulleys").expect("parses")
}

#[test]
fn zero_radius_is_bit_for_bit_the_point_exit_and_a_tiny_one_converges_to_it() {
    let zero = with_radius("0.0");
    let point = robot("uvigo8");
    assert!(zero.cables.iter().all(|c| c.pulley.is_none()));
    let tiny = with_radius("1e-9");
    assert!(tiny.cables.iter().all(|c| c.pulley.is_some()));
    let mut rng = Rng(Splitmix(3));
    for _ in 0..20 {
        let pose = rng.pose_in(&point, [0.2, 0.2, 0.2]);
        let (a, b) = (inverse(&zero, &pose), inverse(&point, &pose));
        assert_eq!(a.cables, b.cables);
        assert_eq!(a.pose_jacobian(), b.pose_jacobian());
        assert_eq!(a.wrench_matrix(), b.wrench_matrix());
        let bounds = point.tension;
        assert_eq!(
            crate::statics::tension_distribution(&zero, &pose, bounds),
            crate::statics::tension_distribution(&point, &pose, bounds)
        );
        // r = 1 nm: lengths within r β + O(r) ≤ 1e-8 m, directions within O(r / L).
        let t = inverse(&tiny, &pose);
        for (c, c0) in t.cables.iter().zip(&b.cables) {
            assert!((c.length - c0.length).abs() < 1e-8);
            assert!((c.direction - c0.direction).norm() < 1e-8);
        }
        assert!((t.pose_jacobian() - b.pose_jacobian()).amax() < 1e-8);
    }
}

#[test]
fn forward_kinematics_inverts_pulley_lengths() {
    let mut rng = Rng(Splitmix(11));
    for robot in [
        robot("uvigo8-pulleys"),
        robot("caroca-pulleys"),
        rotated_axes_robot(5),
    ] {
        for _ in 0..12 {
            let pose = rng.pose_in(&robot, [0.15, 0.15, 0.15]);
            let l = lengths(&robot, &pose);
            for sol in [
                forward(&robot, &l, &FkOptions::default()).expect("converges"),
                forward_lm(&robot, &l, &FkOptions::default()).expect("converges"),
            ] {
                let (dp, dr) = sol.pose.distance(&pose);
                assert!(dp < 1e-9 && dr < 1e-9, "{}: {dp:e} {dr:e}", robot.name);
                assert!(sol.residual < 1e-10);
            }
        }
    }
}

#[test]
fn the_sphere_method_refines_its_point_exit_guess_on_pulley_robots() {
    // silva4 (3 DOF, 4 cables) with 60 mm pulleys whose axes point down the frame's pillars.
    let mut robot = robot("silva4");
    for c in &mut robot.cables {
        c.pulley = Some(Pulley {
            radius: 0.06,
            axis: -Vector3::z(),
            friction: 0.0,
            max_wrap: PI,
            swivel_range: None,
        });
    }
    let mut rng = Rng(Splitmix(13));
    for _ in 0..20 {
        let position = rng.position_in(&robot);
        let l = lengths(&robot, &Pose::from_position(position));
        let sol = forward_sphere(&robot, &l, &FkOptions::default()).expect("sphere");
        assert_eq!(sol.method, FkMethod::Sphere);
        // The spheres of radius l_i about a_i − b_i ignore the wrap, so the closed form alone
        // is off by millimetres and least squares must have run.
        assert!(sol.iterations > 0);
        assert!((sol.pose.position - position).amax() < 1e-9);
        assert!(sol.residual < 1e-10);
    }
}

#[test]
fn pulley_statics_balance_the_load_along_the_free_segments() {
    // W is built here from the numerical taut cable's tangent points, not from CableGeometry.
    let robot = robot("uvigo8-pulleys");
    let mut rng = Rng(Splitmix(17));
    let mut feasible = 0;
    for _ in 0..20 {
        let pose = rng.pose_in(&robot, [0.1, 0.1, 0.1]);
        let d = crate::statics::tension_distribution(&robot, &pose, robot.tension);
        if !d.feasible {
            continue;
        }
        feasible += 1;
        let rotation = pose.rotation();
        let mut w = DMatrix::zeros(6, robot.cable_count());
        for (i, c) in robot.cables.iter().enumerate() {
            let arm = rotation * c.platform_anchor;
            let anchor = pose.position + arm;
            let pulley = c.pulley.as_ref().expect("pulley");
            let (_, _, tangent, _) = taut_cable(pulley, &c.frame_anchor, &anchor);
            let dir = (tangent - anchor).normalize();
            let m = arm.cross(&dir);
            w.column_mut(i)
                .copy_from_slice(&[dir.x, dir.y, dir.z, m.x, m.y, m.z]);
        }
        let weight = Vector3::new(0.0, 0.0, -robot.platform.mass * crate::robot::GRAVITY);
        let moment = (rotation * robot.platform.com).cross(&weight);
        let wg = DVector::from_column_slice(&[
            weight.x, weight.y, weight.z, moment.x, moment.y, moment.z,
        ]);
        let total = &w * DVector::from_column_slice(&d.tensions) + &wg;
        assert!(total.amax() < 1e-6, "{total}");
        // The point-exit directions do not balance these tensions: the pulleys matter.
        let point = inverse(&crate::fixtures::uvigo8(), &pose).wrench_matrix();
        let off = &point * DVector::from_column_slice(&d.tensions) + &wg;
        assert!(off.amax() > 1e-3, "{off}");
    }
    assert!(feasible >= 10, "only {feasible} feasible poses");
    // The workspace check runs on the pulley robot and agrees with the distribution.
    let home = Pose::from_array(robot.home);
    assert!(crate::workspace::feasible_at(&robot, &home, robot.tension));
}
