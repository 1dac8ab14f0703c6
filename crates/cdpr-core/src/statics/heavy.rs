//! Statics of cables with mass: every cable with a linear density hangs as an elastic
//! catenary ([`super::catenary`]), so the direction of its pull on the platform is the
//! catenary's tangent at the anchor, not the chord, and the tension at the exit point
//! (pulley side) exceeds the one at the platform by about w·(vertical rise).
//!
//! The tension distribution becomes a fixed point: directions → minimum-norm tensions →
//! catenaries for those platform-end tensions → directions, until no direction moves by more
//! than [`DIRECTION_TOLERANCE`]. Massless cables keep their straight geometry.

use super::catenary::CableCatenary;
use super::{Distribution, EquilibriumOptions, StaticsError, distribute_wrench, gravity_rows};
use crate::kinematics::{self, CableGeometry, InverseKinematics, Pose};
use crate::robot::{Dof, Robot, TensionBounds};
use nalgebra::{DMatrix, DVector, Vector3};

/// The fixed point stops when no cable's unit direction moves by more than this.
pub const DIRECTION_TOLERANCE: f64 = 1e-12;
/// At most this many rounds of the fixed point.
pub const MAX_ROUNDS: usize = 400;

/// The tension distribution of a robot whose cables have mass.
#[derive(Debug, Clone, PartialEq)]
pub struct HeavyDistribution {
    /// The distribution; its `tensions` are the platform-end tensions, N.
    pub distribution: Distribution,
    /// Tension at each cable's exit point (pulley or frame side), N.
    pub exit_tensions: Vec<f64>,
    /// Unstretched length of each cable from its swivel point (frame anchor) that holds the
    /// platform here with these tensions, m.
    pub rest_lengths: Vec<f64>,
    /// Sag of each cable below its chord, m (0 for massless cables).
    pub sags: Vec<f64>,
    /// Unit direction of each cable's pull on the platform.
    pub directions: Vec<Vector3<f64>>,
    /// Each cable's catenary (None for a massless cable or where none was found, e.g. at zero
    /// tension: then the straight cable stands in).
    pub catenaries: Vec<Option<CableCatenary>>,
    /// Rounds of the fixed point.
    pub rounds: usize,
    /// True when the directions settled within [`DIRECTION_TOLERANCE`].
    pub converged: bool,
}

/// The wrench matrix over the controlled rows with the given unit pull directions.
pub fn wrench_matrix_with(ik: &InverseKinematics, directions: &[Vector3<f64>]) -> DMatrix<f64> {
    let n = ik.dof.count();
    let mut w = DMatrix::zeros(n, ik.cables.len());
    for (i, (c, d)) in ik.cables.iter().zip(directions).enumerate() {
        let m = c.arm.cross(d);
        let col = [d.x, d.y, d.z, m.x, m.y, m.z];
        for k in 0..n {
            w[(k, i)] = col[k];
        }
    }
    w
}

fn anchor_of(ik: &InverseKinematics, g: &CableGeometry) -> Vector3<f64> {
    ik.pose.position + g.arm
}

/// The smallest platform-end tension the distribution gives a cable with mass: its own
/// weight over its free length, w·|l_i|. Below about that a catenary sags by a large fraction
/// of its span, and below a minimum (≈ 0.75 w x for a horizontal span x) no catenary reaches
/// the platform at all. Massless cables: 0.
pub fn weight_floor(cable: &crate::robot::Cable, geometry: &CableGeometry) -> f64 {
    super::catenary::weight_per_length(cable) * geometry.free_length()
}

/// Minimum-norm tensions with per-cable lower bounds `lo` (≥ the common bounds' min).
fn distribute_with_floors(
    w: &DMatrix<f64>,
    target: &DVector<f64>,
    bounds: TensionBounds,
    lo: &[f64],
) -> Distribution {
    let m = w.ncols();
    let floor = lo.iter().copied().fold(bounds.min, f64::max);
    if m == 0 || m > super::ACTIVE_SET_MAX_CABLES || floor >= bounds.max {
        // Many cables: the common lower bound raised to the largest floor (conservative).
        let raised = TensionBounds {
            min: floor.min(bounds.max),
            max: bounds.max,
        };
        let mut d = distribute_wrench(w, target, raised);
        d.bounds = bounds;
        return d;
    }
    let lo = DVector::from_column_slice(lo);
    let hi = DVector::from_element(m, bounds.max);
    match super::min_norm_qp(w, target, &lo, &hi) {
        Ok(sol) => Distribution {
            residual: (w * &sol.x - target).norm(),
            tensions: sol.x.iter().copied().collect(),
            feasible: true,
            largest_min_tension: None,
            bounds,
        },
        Err(_) => {
            let mut d = distribute_wrench(w, target, bounds);
            d.feasible = false;
            d
        }
    }
}

/// Minimum-norm platform-end tensions within `bounds` holding the platform at `pose`, the
/// cables hanging as catenaries (see the module's doc). A cable with mass is kept at least at
/// [`weight_floor`]. The fixed point is under-relaxed (d ← d + α (d_catenary − d),
/// normalised; α halved when a round shrinks the change by less than 10 %, grown back when
/// it halves it).
pub fn heavy_tension_distribution(
    robot: &Robot,
    pose: &Pose,
    bounds: TensionBounds,
) -> HeavyDistribution {
    let ik = kinematics::inverse(robot, pose);
    let target = -gravity_rows(robot, &ik);
    let mut directions = ik.directions();
    let lo: Vec<f64> = robot
        .cables
        .iter()
        .zip(&ik.cables)
        .map(|(c, g)| bounds.min.max(weight_floor(c, g)))
        .collect();
    let mut rounds = 0;
    let mut converged = false;
    let mut catenaries: Vec<Option<CableCatenary>> = vec![None; robot.cable_count()];
    let distribute = |directions: &[Vector3<f64>]| {
        let w = wrench_matrix_with(&ik, directions);
        if robot.has_cable_mass() {
            distribute_with_floors(&w, &target, bounds, &lo)
        } else {
            distribute_wrench(&w, &target, bounds)
        }
    };
    let mut distribution = distribute(&directions);
    let mut alpha: f64 = 1.0;
    let mut last_change = f64::INFINITY;
    while rounds < MAX_ROUNDS {
        rounds += 1;
        let mut change: f64 = 0.0;
        let mut next = directions.clone();
        for (i, (cable, g)) in robot.cables.iter().zip(&ik.cables).enumerate() {
            let f = distribution.tensions[i];
            catenaries[i] = if cable.mass_per_length > 0.0 && f > 0.0 {
                CableCatenary::for_tension(cable, g, &anchor_of(&ik, g), f).ok()
            } else {
                None
            };
            // A cable with mass whose catenary is not found keeps its last direction.
            let d = match &catenaries[i] {
                Some(c) => c.direction(),
                None if cable.mass_per_length > 0.0 => directions[i],
                None => g.direction,
            };
            change = change.max((d - directions[i]).norm());
            next[i] = d;
        }
        if change <= DIRECTION_TOLERANCE {
            converged = true;
            break;
        }
        if change > 0.9 * last_change {
            alpha = (alpha * 0.5).max(1.0 / 64.0);
        } else if change < 0.5 * last_change {
            alpha = (alpha * 1.5).min(1.0);
        }
        last_change = change;
        for (d, n) in directions.iter_mut().zip(&next) {
            let blended = *d + (n - *d) * alpha;
            *d = blended.try_normalize(0.0).unwrap_or(*n);
        }
        distribution = distribute(&directions);
    }
    let mut exit_tensions = Vec::with_capacity(robot.cable_count());
    let mut rest_lengths = Vec::with_capacity(robot.cable_count());
    let mut sags = Vec::with_capacity(robot.cable_count());
    for (i, (cable, g)) in robot.cables.iter().zip(&ik.cables).enumerate() {
        let f = distribution.tensions[i];
        match &catenaries[i] {
            Some(c) => {
                exit_tensions.push(c.tension_exit());
                rest_lengths.push(c.rest_length());
                sags.push(c.sag());
            }
            None => {
                exit_tensions.push(f);
                rest_lengths.push(cable.rest_length_for(g.length, f));
                sags.push(0.0);
            }
        }
    }
    let w = wrench_matrix_with(&ik, &directions);
    distribution.residual =
        (&w * DVector::from_column_slice(&distribution.tensions) - &target).norm();
    HeavyDistribution {
        distribution,
        exit_tensions,
        rest_lengths,
        sags,
        directions,
        catenaries,
        rounds,
        converged,
    }
}

/// The unstretched lengths that put the platform on `pose` with cables that sag (`ik
/// --catenary`, and the compensation of a robot with cable mass), with the distribution
/// behind them. Errors when the distribution is infeasible or the fixed point does not settle.
pub fn catenary_rest_lengths(
    robot: &Robot,
    pose: &Pose,
    bounds: TensionBounds,
) -> Result<HeavyDistribution, StaticsError> {
    let h = heavy_tension_distribution(robot, pose, bounds);
    if !h.distribution.feasible {
        return Err(StaticsError::Infeasible {
            min: bounds.min,
            max: bounds.max,
            best: h
                .distribution
                .largest_min_tension
                .map(|t| format!("{t:.3} N"))
                .unwrap_or_else(|| "none: the load cannot be held".into()),
        });
    }
    if !h.converged {
        return Err(StaticsError::NoEquilibrium {
            reason: format!(
                "the catenary tension distribution did not settle in {MAX_ROUNDS} rounds"
            ),
        });
    }
    Ok(h)
}

/// Each cable's pull on the platform (force, world, N) and its catenary, for unstretched
/// lengths `rest` at the actual pose `pose`. A cable whose catenary cannot be found (slack
/// and hanging straight down) pulls with nothing.
pub fn cable_forces(
    robot: &Robot,
    rest: &[f64],
    pose: &Pose,
) -> Vec<(Vector3<f64>, Option<CableCatenary>)> {
    let rotation = pose.rotation();
    robot
        .cables
        .iter()
        .zip(rest)
        .map(|(cable, &l0)| {
            let g = CableGeometry::new(cable, &pose.position, rotation.matrix());
            let anchor = pose.position + g.arm;
            if cable.mass_per_length > 0.0 {
                match CableCatenary::for_rest_length(cable, &g, &anchor, l0) {
                    Ok(c) => (c.direction() * c.tension_platform(), Some(c)),
                    Err(_) => (Vector3::zeros(), None),
                }
            } else {
                let stretch = (g.length - l0).max(0.0);
                (g.direction * (cable.stiffness_at(l0) * stretch), None)
            }
        })
        .collect()
}

fn pose_of(q: &DVector<f64>, dof: Dof) -> Pose {
    match dof {
        Dof::Six => Pose::new(q[0], q[1], q[2], q[3], q[4], q[5]),
        Dof::Three => Pose::new(q[0], q[1], q[2], 0.0, 0.0, 0.0),
    }
}

/// Generalised force on the platform (the negative energy gradient of the straight model).
fn generalised(robot: &Robot, rest: &[f64], q: &DVector<f64>) -> DVector<f64> {
    let pose = pose_of(q, robot.dof);
    let rotation = pose.rotation();
    let mut force = Vector3::zeros();
    let mut moment = Vector3::zeros();
    for ((f, _), cable) in cable_forces(robot, rest, &pose).iter().zip(&robot.cables) {
        force += f;
        moment += (rotation * cable.platform_anchor).cross(f);
    }
    let weight = robot.platform.mass * crate::robot::GRAVITY;
    let com = rotation * robot.platform.com;
    force.z -= weight;
    moment += com.cross(&Vector3::new(0.0, 0.0, -weight));
    let n = robot.dof.count();
    let mut g = DVector::zeros(n);
    for k in 0..3 {
        g[k] = force[k];
    }
    if n == 6 {
        let m = pose.angular_rate_matrix().transpose() * moment;
        for k in 0..3 {
            g[3 + k] = m[k];
        }
    }
    g
}

/// An elastic equilibrium with cables that hang as catenaries.
#[derive(Debug, Clone, PartialEq)]
pub struct HeavyEquilibrium {
    pub pose: Pose,
    /// Platform-end tensions, N.
    pub tensions: Vec<f64>,
    /// Exit-end (pulley side) tensions, N.
    pub exit_tensions: Vec<f64>,
    /// Sag of each cable below its chord, m.
    pub sags: Vec<f64>,
    /// The generalised force left over, N (and N·m·rad⁻¹ for the angles).
    pub residual: f64,
    pub iterations: usize,
}

/// Where cables of unstretched lengths `rest` (m), each hanging as its catenary, hold the
/// platform: Newton's method on the force and moment balance (finite-difference Jacobian,
/// backtracking on its norm), started from `options.guess` or the straight-cable equilibrium.
pub fn heavy_equilibrium(
    robot: &Robot,
    rest: &[f64],
    options: &EquilibriumOptions,
) -> Result<HeavyEquilibrium, StaticsError> {
    let straight = super::elastic_equilibrium(robot, rest, options)?;
    let n = robot.dof.count();
    let start = straight.pose.to_array();
    let mut q = DVector::from_column_slice(&start[..n]);
    let weight = (robot.platform.mass * crate::robot::GRAVITY).max(1e-6);
    // The catenary solves are exact to ~1e-12 of the span: forces to about EA·1e-12 each.
    let rounding: f64 = robot
        .cables
        .iter()
        .zip(rest)
        .map(|(c, &l0)| super::catenary::axial_rigidity(c, l0))
        .sum::<f64>()
        * 1e-11;
    let tol = (options.tolerance * weight).max(rounding);
    let mut g = generalised(robot, rest, &q);
    let mut iterations = 0;
    while g.amax() > tol {
        if iterations >= options.max_iterations {
            return Err(StaticsError::NotConverged {
                iterations,
                residual: g.amax(),
            });
        }
        iterations += 1;
        let jac = super::equilibrium::central_jacobian(&q, |q| generalised(robot, rest, q));
        let Some(dq) = jac.lu().solve(&(-&g)) else {
            return Err(StaticsError::NotConverged {
                iterations,
                residual: g.amax(),
            });
        };
        let mut alpha = 1.0;
        let mut accepted = false;
        for _ in 0..40 {
            let candidate = &q + &dq * alpha;
            let trial = generalised(robot, rest, &candidate);
            if trial.norm() < g.norm() {
                q = candidate;
                g = trial;
                accepted = true;
                break;
            }
            alpha *= 0.5;
        }
        if !accepted {
            // No decrease at working precision: accept if balanced to rounding.
            if g.amax() < (1e-7 * weight).max(10.0 * rounding) {
                break;
            }
            return Err(StaticsError::NotConverged {
                iterations,
                residual: g.amax(),
            });
        }
    }
    let pose = pose_of(&q, robot.dof);
    let forces = cable_forces(robot, rest, &pose);
    let tensions = forces.iter().map(|(f, _)| f.norm()).collect();
    let exit_tensions = forces
        .iter()
        .map(|(f, c)| c.map_or(f.norm(), |c| c.tension_exit()))
        .collect();
    let sags = forces
        .iter()
        .map(|(_, c)| c.map_or(0.0, |c| c.sag()))
        .collect();
    Ok(HeavyEquilibrium {
        pose,
        tensions,
        exit_tensions,
        sags,
        residual: g.norm(),
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::GRAVITY;

    fn home(robot: &Robot) -> Pose {
        Pose::from_array(robot.home)
    }

    #[test]
    fn massless_cables_give_todays_distribution_bit_for_bit() {
        let robot = crate::fixtures::uvigo8();
        let pose = home(&robot);
        let h = heavy_tension_distribution(&robot, &pose, robot.tension);
        let d = super::super::tension_distribution(&robot, &pose, robot.tension);
        assert_eq!(h.distribution.tensions, d.tensions);
        assert_eq!(h.exit_tensions, d.tensions);
        assert_eq!(
            h.directions,
            kinematics::inverse(&robot, &pose).directions()
        );
        assert!(h.converged && h.rounds == 1);
    }

    #[test]
    fn the_catenary_forces_hold_the_platform_and_the_rest_lengths_reproduce_them() {
        // caroca-pulleys with the paper's light 1 kg platform: its heavy cables stay at about
        // their own weight, with deep sags.
        let light_caroca = crate::fixtures::robot("caroca-pulleys").with_mass(1.0);
        let robots = [
            ("uvigo8-pulleys", crate::fixtures::robot("uvigo8-pulleys")),
            ("caroca-pulleys", crate::fixtures::robot("caroca-pulleys")),
            ("caroca-pulleys at 1 kg", light_caroca),
        ];
        for (name, robot) in robots {
            let pose = home(&robot);
            let h = catenary_rest_lengths(&robot, &pose, robot.tension).expect("feasible");
            // Independently: the catenary of each rest length at this pose (a solve from the
            // spans, not from the tension), its platform-end forces summed with the weight.
            let forces = cable_forces(&robot, &h.rest_lengths, &pose);
            let mut total = Vector3::new(0.0, 0.0, -robot.platform.mass * GRAVITY);
            let mut moment = Vector3::zeros();
            let rotation = pose.rotation();
            for ((i, (f, c)), cable) in forces.iter().enumerate().zip(&robot.cables) {
                total += f;
                moment += (rotation * cable.platform_anchor).cross(f);
                let c = c.expect("every cable has mass");
                let t = h.distribution.tensions[i];
                assert!((c.tension_platform() - t).abs() < 1e-6 * t, "{name} {i}");
                assert!((c.tension_exit() - h.exit_tensions[i]).abs() < 1e-6 * t);
                // T_exit − T_platform = w·(rise) up to the elastic part (T/EA ≪ 1).
                let w = super::super::catenary::weight_per_length(cable);
                let rise = c.exit.z - c.anchor.z;
                let d = h.exit_tensions[i] - t;
                assert!(
                    (d - w * rise).abs() < 1e-3 * w * rise.abs(),
                    "{name} {i}: {d}"
                );
                assert!(d > 0.0, "the pulley side carries the cable's weight");
            }
            let weight = robot.platform.mass * GRAVITY;
            assert!(total.norm() < 1e-6 * weight, "{name}: force {total}");
            if robot.dof == Dof::Six {
                assert!(moment.norm() < 1e-6 * weight, "{name}: moment {moment}");
            }
            // Sag is real, and a fraction of the span.
            let ik = kinematics::inverse(&robot, &pose);
            for (s, g) in h.sags.iter().zip(&ik.cables) {
                assert!(
                    *s > 0.0 && *s < 0.25 * g.free_length(),
                    "{name}: {:?}",
                    h.sags
                );
            }
        }
    }

    #[test]
    fn light_cables_approach_the_massless_results() {
        let robot = crate::fixtures::robot("caroca-pulleys");
        let pose = home(&robot);
        let mut massless = robot.clone();
        let mut light = robot.clone();
        for c in &mut massless.cables {
            c.mass_per_length = 0.0;
        }
        for c in &mut light.cables {
            c.mass_per_length = 1e-9;
        }
        let a = heavy_tension_distribution(&massless, &pose, robot.tension);
        let b = heavy_tension_distribution(&light, &pose, robot.tension);
        for (x, y) in a.distribution.tensions.iter().zip(&b.distribution.tensions) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
        for (x, y) in a.rest_lengths.iter().zip(&b.rest_lengths) {
            assert!((x - y).abs() < 1e-9, "{x} vs {y}");
        }
        // And the real density changes the tensions measurably.
        let c = heavy_tension_distribution(&robot, &pose, robot.tension);
        let diff = a
            .distribution
            .tensions
            .iter()
            .zip(&c.distribution.tensions)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(diff > 1e-3, "{diff}");
    }

    #[test]
    fn the_catenary_rest_lengths_hold_the_platform_on_target() {
        let robot = crate::fixtures::robot("uvigo8-pulleys");
        let home = home(&robot);
        let target = Pose::new(
            home.position.x + 0.05,
            home.position.y - 0.03,
            home.position.z + 0.02,
            0.0,
            0.0,
            0.02,
        );
        let h = catenary_rest_lengths(&robot, &target, robot.tension).expect("feasible");
        let eq = heavy_equilibrium(
            &robot,
            &h.rest_lengths,
            &EquilibriumOptions {
                guess: Some(target),
                ..EquilibriumOptions::default()
            },
        )
        .expect("an equilibrium");
        let (p, q) = (eq.pose.to_array(), target.to_array());
        for k in 0..6 {
            assert!((p[k] - q[k]).abs() < 1e-7, "{k}: {} vs {}", p[k], q[k]);
        }
        for (a, b) in eq.tensions.iter().zip(&h.distribution.tensions) {
            assert!((a - b).abs() < 1e-4 * b, "{a} vs {b}");
        }
        // The straight-cable rest lengths (which ignore the sag) land it elsewhere.
        let (straight, _) =
            super::super::pretensioned_rest_lengths(&robot, &target, robot.tension).expect("ok");
        let eq2 = heavy_equilibrium(&robot, &straight, &EquilibriumOptions::default())
            .expect("an equilibrium");
        let off = (eq2.pose.position - target.position).norm();
        assert!(off > 1e-6, "{off}");
    }
}
