//! Elastic statics: the pose where unilateral elastic cables f_i = k_i·max(0, |l_i| − L0_i)
//! hold the platform, found as the minimum of the potential energy
//!     U(q) = Σ ½ k_i max(0, L_i(q) − L0_i)² + m g z_com(q)
//! by Newton's method with a line search. By virtual work ∂U/∂q = −[F; Eᵀ M] with [F; M] the
//! total wrench W f + w_g about the platform origin, so a stationary point is an equilibrium.

use super::{Distribution, gravity_rows, tension_distribution};
use crate::kinematics::{self, CableGeometry, FkOptions, Pose};
use crate::robot::{Dof, Robot, TensionBounds};
use nalgebra::{DMatrix, DVector, Vector3};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Equilibrium {
    pub pose: Pose,
    /// N, one per cable (zero for slack cables).
    pub tensions: Vec<f64>,
    /// L0, m.
    pub rest_lengths: Vec<f64>,
    /// ‖W f + w_g‖ over the controlled rows at the equilibrium (N, N·m).
    pub residual: f64,
    pub iterations: usize,
}

#[derive(Debug, Clone, Copy)]
pub struct EquilibriumOptions {
    pub guess: Option<Pose>,
    pub max_iterations: usize,
    /// Converged when every generalised force is below this times m·g.
    pub tolerance: f64,
}

impl Default for EquilibriumOptions {
    fn default() -> Self {
        EquilibriumOptions {
            guess: None,
            max_iterations: 200,
            tolerance: 1e-10,
        }
    }
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum StaticsError {
    #[error("{got} rest lengths given but the robot has {expected} cables")]
    RestLengthCount { expected: usize, got: usize },
    #[error("rest length of cable {cable} ({name}) must be a positive finite number, got {value}")]
    BadRestLength {
        cable: usize,
        name: String,
        value: f64,
    },
    #[error("no equilibrium: {reason}")]
    NoEquilibrium { reason: String },
    #[error(
        "equilibrium search did not converge in {iterations} iterations (force residual {residual:.3e} N); try a {}",
        crate::options::Name("guess")
    )]
    NotConverged { iterations: usize, residual: f64 },
    #[error(
        "the tension distribution is infeasible at this pose within [{min}, {max}] N (largest reachable minimum tension: {best})"
    )]
    Infeasible { min: f64, max: f64, best: String },
    #[error(
        "tension bounds must satisfy 0 ≤ {} < {}, got [{min}, {max}] N",
        crate::options::Name("f_min"),
        crate::options::Name("f_max")
    )]
    BadBounds { min: f64, max: f64 },
}

/// Potential energy, generalised force and tensions at q.
struct Eval {
    energy: f64,
    gradient: DVector<f64>,
    tensions: Vec<f64>,
}

fn pose_of(q: &DVector<f64>, dof: Dof) -> Pose {
    match dof {
        Dof::Six => Pose::new(q[0], q[1], q[2], q[3], q[4], q[5]),
        Dof::Three => Pose::new(q[0], q[1], q[2], 0.0, 0.0, 0.0),
    }
}

fn evaluate(robot: &Robot, rest: &[f64], stiffness: &[f64], q: &DVector<f64>) -> Eval {
    let pose = pose_of(q, robot.dof);
    let rotation = pose.rotation();
    let mut energy = 0.0;
    let mut force = Vector3::zeros();
    let mut moment = Vector3::zeros();
    let mut tensions = Vec::with_capacity(rest.len());
    for ((cable, &l0), &k) in robot.cables.iter().zip(rest).zip(stiffness) {
        let g = CableGeometry::new(cable, &pose.position, rotation.matrix());
        let stretch = (g.length - l0).max(0.0);
        let f = k * stretch;
        energy += 0.5 * k * stretch * stretch;
        force += g.direction * f;
        moment += g.moment_arm() * f;
        tensions.push(f);
    }
    let weight = robot.platform.mass * crate::robot::GRAVITY;
    let com = rotation * robot.platform.com;
    energy += weight * (pose.position.z + com.z);
    force.z -= weight;
    moment += com.cross(&Vector3::new(0.0, 0.0, -weight));
    let n = robot.dof.count();
    let mut gradient = DVector::zeros(n);
    for k in 0..3 {
        gradient[k] = -force[k];
    }
    if n == 6 {
        let generalised = pose.angular_rate_matrix().transpose() * moment;
        for k in 0..3 {
            gradient[3 + k] = -generalised[k];
        }
    }
    Eval {
        energy,
        gradient,
        tensions,
    }
}

/// Equilibrium pose for the rest lengths `rest` (m).
pub fn elastic_equilibrium(
    robot: &Robot,
    rest: &[f64],
    options: &EquilibriumOptions,
) -> Result<Equilibrium, StaticsError> {
    if rest.len() != robot.cable_count() {
        return Err(StaticsError::RestLengthCount {
            expected: robot.cable_count(),
            got: rest.len(),
        });
    }
    for (i, (&l0, c)) in rest.iter().zip(&robot.cables).enumerate() {
        if !(l0.is_finite() && l0 > 0.0) {
            return Err(StaticsError::BadRestLength {
                cable: i + 1,
                name: c.name.clone(),
                value: l0,
            });
        }
    }
    let stiffness: Vec<f64> = robot
        .cables
        .iter()
        .zip(rest)
        .map(|(c, &l0)| c.stiffness_at(l0))
        .collect();
    let guess = match options.guess {
        Some(g) => g,
        None => {
            // Where the unstretched cables would put the platform: a good start.
            let fk = FkOptions {
                max_residual: f64::INFINITY,
                ..FkOptions::default()
            };
            kinematics::forward(robot, rest, &fk)
                .map(|s| s.pose)
                .unwrap_or(Pose::from_array(robot.home))
        }
    };
    let n = robot.dof.count();
    let start = guess.to_array();
    let mut q = DVector::from_column_slice(&start[..n]);
    let weight = robot.platform.mass * crate::robot::GRAVITY;
    // Forces are only known to rounding: k·L·ε per cable, which dominates for stiff cables.
    let rounding: f64 = stiffness.iter().zip(rest).map(|(k, l)| k * l).sum::<f64>() * 1e-14;
    let tol = (options.tolerance * weight.max(1e-6)).max(rounding);
    let reach = 10.0 * (robot.frame.size().norm() + robot.platform.size.norm());

    let mut current = evaluate(robot, rest, &stiffness, &q);
    let mut iterations = 0;
    while current.gradient.amax() > tol {
        if iterations >= options.max_iterations {
            return Err(StaticsError::NotConverged {
                iterations,
                residual: current.gradient.amax(),
            });
        }
        iterations += 1;
        let hessian = hessian_fd(robot, rest, &stiffness, &q);
        let step = newton_step(&hessian, &current.gradient);
        // Backtracking line search on the energy.
        let slope = current.gradient.dot(&step);
        let mut alpha = 1.0;
        let mut accepted = None;
        for _ in 0..60 {
            let candidate = &q + &step * alpha;
            let trial = evaluate(robot, rest, &stiffness, &candidate);
            if trial.energy <= current.energy + 1e-4 * alpha * slope || trial.gradient.amax() < tol
            {
                accepted = Some((candidate, trial));
                break;
            }
            alpha *= 0.5;
        }
        let Some((candidate, trial)) = accepted else {
            // No decrease possible at working precision: accept if balanced enough.
            if current.gradient.amax() < 1e-7 * weight.max(1e-6) {
                break;
            }
            return Err(StaticsError::NotConverged {
                iterations,
                residual: current.gradient.amax(),
            });
        };
        q = candidate;
        current = trial;
        if (q.rows(0, 3).into_owned() - robot.frame.center()).norm() > reach {
            return Err(StaticsError::NoEquilibrium {
                reason: "the platform falls away: the cables are too long (slack) to hold it"
                    .into(),
            });
        }
    }
    if current.tensions.iter().all(|&f| f == 0.0) {
        return Err(StaticsError::NoEquilibrium {
            reason: "every cable is slack".into(),
        });
    }
    let pose = pose_of(&q, robot.dof);
    let ik = kinematics::inverse(robot, &pose);
    let w = ik.wrench_matrix();
    let residual =
        (&w * DVector::from_column_slice(&current.tensions) + gravity_rows(robot, &ik)).norm();
    Ok(Equilibrium {
        pose,
        tensions: current.tensions,
        rest_lengths: rest.to_vec(),
        residual,
        iterations,
    })
}

/// Central differences of the analytic gradient.
fn hessian_fd(robot: &Robot, rest: &[f64], stiffness: &[f64], q: &DVector<f64>) -> DMatrix<f64> {
    let h = central_jacobian(q, |q| evaluate(robot, rest, stiffness, q).gradient);
    (&h + h.transpose()) * 0.5
}

/// The Jacobian of `f` at `q` by central differences (step 1e-7 in every coordinate).
pub(super) fn central_jacobian(
    q: &DVector<f64>,
    f: impl Fn(&DVector<f64>) -> DVector<f64>,
) -> DMatrix<f64> {
    let n = q.len();
    let mut jac = DMatrix::zeros(n, n);
    let step = 1e-7;
    for k in 0..n {
        let mut plus = q.clone();
        plus[k] += step;
        let mut minus = q.clone();
        minus[k] -= step;
        jac.set_column(k, &((f(&plus) - f(&minus)) / (2.0 * step)));
    }
    jac
}

/// Newton direction, regularised until the Hessian is positive definite (then a descent
/// direction for the energy).
fn newton_step(h: &DMatrix<f64>, g: &DVector<f64>) -> DVector<f64> {
    let n = h.nrows();
    let scale = h.diagonal().amax().max(1e-12);
    let mut mu = 0.0;
    for _ in 0..40 {
        let mut a = h.clone();
        for k in 0..n {
            a[(k, k)] += mu;
        }
        if let Some(ch) = a.cholesky() {
            return -ch.solve(g);
        }
        mu = if mu == 0.0 { 1e-10 * scale } else { mu * 10.0 };
    }
    -g / scale
}

/// Rest lengths that make elastic cables land the platform exactly on `pose`:
/// L0 = L − f*/k (k = EA/L0 handled exactly), f* the minimum-norm distribution within `bounds`.
pub fn pretensioned_rest_lengths(
    robot: &Robot,
    pose: &Pose,
    bounds: TensionBounds,
) -> Result<(Vec<f64>, Distribution), StaticsError> {
    let dist = tension_distribution(robot, pose, bounds);
    if !dist.feasible {
        return Err(StaticsError::Infeasible {
            min: bounds.min,
            max: bounds.max,
            best: dist
                .largest_min_tension
                .map(|t| format!("{t:.3} N"))
                .unwrap_or_else(|| "none: the load cannot be held".into()),
        });
    }
    let rest = rest_lengths_for(robot, &kinematics::lengths(robot, pose), &dist.tensions);
    Ok((rest, dist))
}

/// The rest length of each cable that, stretched to `lengths`, pulls with `tensions`.
pub fn rest_lengths_for(robot: &Robot, lengths: &[f64], tensions: &[f64]) -> Vec<f64> {
    robot
        .cables
        .iter()
        .zip(lengths)
        .zip(tensions)
        .map(|((c, &l), &f)| c.rest_length_for(l, f))
        .collect()
}
