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
pub const MAX_ROUNDS: usize = 100;

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

/// Minimum-norm platform-end tensions within `bounds` holding the platform at `pose`, the
/// cables hanging as catenaries (see the module's doc).
pub fn heavy_tension_distribution(
    robot: &Robot,
    pose: &Pose,
    bounds: TensionBounds,
) -> HeavyDistribution {
    let ik = kinematics::inverse(robot, pose);
    let target = -gravity_rows(robot, &ik);
    let mut directions = ik.directions();
    let mut rounds = 0;
    let mut converged = false;
    let mut catenaries: Vec<Option<CableCatenary>> = vec![None; robot.cable_count()];
    let mut distribution = distribute_wrench(&wrench_matrix_with(&ik, &directions), &target, bounds);
    while rounds < MAX_ROUNDS {
        rounds += 1;
        let mut change: f64 = 0.0;
        for (i, (cable, g)) in robot.cables.iter().zip(&ik.cables).enumerate() {
            let f = distribution.tensions[i];
            catenaries[i] = if cable.mass_per_length > 0.0 && f > 0.0 {
                CableCatenary::for_tension(cable, g, &anchor_of(&ik, g), f).ok()
            } else {
                None
            };
            let d = catenaries[i].map_or(g.direction, |c| c.direction());
            change = change.max((d - directions[i]).norm());
            directions[i] = d;
        }
        if change <= DIRECTION_TOLERANCE {
            converged = true;
            break;
        }
        distribution = distribute_wrench(&wrench_matrix_with(&ik, &directions), &target, bounds);
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
    distribution.residual = (&w * DVector::from_column_slice(&distribution.tensions) - &target).norm();
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
        let mut jac = DMatrix::zeros(n, n);
        let step = 1e-7;
        for k in 0..n {
            let mut plus = q.clone();
            plus[k] += step;
            let mut minus = q.clone();
            minus[k] -= step;
            let d = (generalised(robot, rest, &plus) - generalised(robot, rest, &minus))
                / (2.0 * step);
            jac.set_column(k, &d);
        }
        let Some(dq) = jac.clone().lu().solve(&(-&g)) else {
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
    let sags = forces.iter().map(|(_, c)| c.map_or(0.0, |c| c.sag())).collect();
    Ok(HeavyEquilibrium {
        pose,
        tensions,
        exit_tensions,
        sags,
        residual: g.norm(),
        iterations,
    })
}
