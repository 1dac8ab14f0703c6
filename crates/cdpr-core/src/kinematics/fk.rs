//! Forward kinematics: damped least squares over all cables (seed 000 eq. 4, solved here by
//! Levenberg–Marquardt with the analytic Jacobian) and seed 003's closed-form three-sphere
//! intersection for 4-cable robots (section 2.1.2.1), refined by the least-squares method.

use super::{CableGeometry, Pose};
use crate::options::{Group, choice, choices, number};
use crate::robot::{Dof, Robot};
use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};
use serde::Serialize;

/// Which method produced a solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FkMethod {
    /// Levenberg–Marquardt least squares on all cable lengths (any robot).
    Lm,
    /// Seed 003's three-sphere intersection on cables 1–3, refined on all (3-DOF robots).
    Sphere,
}

crate::named_choice!(FkMethod, "method", {
    Lm => "lm", "Levenberg–Marquardt least squares on all cable lengths (any robot)";
    Sphere => "sphere", "seed 003's three-sphere intersection on cables 1–3, refined on all (3-DOF robots)";
});

crate::choice_value!(FkMethod);

crate::request! {
    /// How `cdpr fk` (and Python's `Robot.fk`) solves, beyond the lengths and the guess.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct FkRequest, table OPTIONS;
    /// The solver.
    method: FkMethod = FkMethod::Lm,
        choice(Group::Command, choices::<FkMethod>, "METHOD",
            "solver: `lm`, Levenberg–Marquardt from the guess (any robot), or `sphere`, seed \
             003's three spheres refined on all lengths (3-DOF robots)");
    /// The largest length error a solution may leave, m.
    max_residual: f64 = 1e-3,
        number(Group::Command, "m", 1e-12, 10.0, "M",
            "fail when the best fit leaves a length error above this");
}

#[derive(Debug, Clone, Copy)]
pub struct FkOptions {
    /// Starting pose (default: the robot's home pose).
    pub guess: Option<Pose>,
    pub max_iterations: usize,
    /// Converged when every length matches within this, m.
    pub tolerance: f64,
    /// Lengths that cannot be matched better than this (m) are reported as inconsistent.
    pub max_residual: f64,
}

impl Default for FkOptions {
    fn default() -> Self {
        FkOptions {
            guess: None,
            max_iterations: 100,
            tolerance: 1e-11,
            max_residual: FkRequest::default().max_residual,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FkSolution {
    pub pose: Pose,
    /// max_i |L_i(pose) − l_i|, m.
    pub residual: f64,
    /// Jacobian evaluations of the least-squares method (0 for a pure closed form).
    pub iterations: usize,
    pub method: FkMethod,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum FkError {
    #[error("{got} lengths given but the robot has {expected} cables")]
    LengthCount { expected: usize, got: usize },
    #[error("length of cable {cable} ({name}) must be a positive finite number, got {value}")]
    BadLength {
        cable: usize,
        name: String,
        value: f64,
    },
    #[error(
        "forward kinematics did not converge in {iterations} iterations (residual {residual:.3e} m); give a {} closer to the pose",
        crate::options::Name("guess")
    )]
    NotConverged { iterations: usize, residual: f64 },
    #[error(
        "the lengths are inconsistent with the geometry: best fit leaves {residual:.3e} m on cable {cable} ({name}), more than {limit:.1e} m"
    )]
    Inconsistent {
        residual: f64,
        cable: usize,
        name: String,
        limit: f64,
    },
    #[error(
        "the sphere method needs a 3-DOF robot with at least 3 cables (this one: {dof} DOF, {cables} cables)"
    )]
    SphereNotApplicable { dof: usize, cables: usize },
    #[error("the sphere method cannot work: the centres of spheres 1–3 are collinear")]
    CollinearSpheres,
}

fn check_lengths(robot: &Robot, lengths: &[f64]) -> Result<(), FkError> {
    if lengths.len() != robot.cable_count() {
        return Err(FkError::LengthCount {
            expected: robot.cable_count(),
            got: lengths.len(),
        });
    }
    for (i, (&l, c)) in lengths.iter().zip(&robot.cables).enumerate() {
        if !(l.is_finite() && l > 0.0) {
            return Err(FkError::BadLength {
                cable: i + 1,
                name: c.name.clone(),
                value: l,
            });
        }
    }
    Ok(())
}

/// Residuals and normal equations at q, without allocation.
struct Normal {
    jtj: Matrix6<f64>,
    jtr: Vector6<f64>,
    cost: f64,
    worst: (usize, f64),
}

fn pose_of(q: &Vector6<f64>, dof: Dof) -> Pose {
    match dof {
        Dof::Six => Pose::new(q[0], q[1], q[2], q[3], q[4], q[5]),
        Dof::Three => Pose::new(q[0], q[1], q[2], 0.0, 0.0, 0.0),
    }
}

fn residuals(robot: &Robot, q: &Vector6<f64>, lengths: &[f64], with_jacobian: bool) -> Normal {
    let pose = pose_of(q, robot.dof);
    let rotation = pose.rotation();
    let rate = pose.angular_rate_matrix();
    let mut n = Normal {
        jtj: Matrix6::zeros(),
        jtr: Vector6::zeros(),
        cost: 0.0,
        worst: (0, 0.0),
    };
    for (i, (cable, &l)) in robot.cables.iter().zip(lengths).enumerate() {
        let g = CableGeometry::new(cable, &pose.position, rotation.matrix());
        let r = g.length - l;
        n.cost += 0.5 * r * r;
        if r.abs() > n.worst.1 {
            n.worst = (i, r.abs());
        }
        if with_jacobian {
            let row = Vector6::from(g.pose_gradient(&rate));
            n.jtj += row * row.transpose();
            n.jtr += row * r;
        }
    }
    n
}

/// Forward kinematics by the default method: least squares from `options.guess`
/// (or the home pose, then the workspace centre).
pub fn forward(robot: &Robot, lengths: &[f64], options: &FkOptions) -> Result<FkSolution, FkError> {
    forward_lm(robot, lengths, options)
}

/// Levenberg–Marquardt on ½ Σ (L_i(q) − l_i)², q = pose (position only for 3 DOF).
pub fn forward_lm(
    robot: &Robot,
    lengths: &[f64],
    options: &FkOptions,
) -> Result<FkSolution, FkError> {
    check_lengths(robot, lengths)?;
    match options.guess {
        Some(guess) => lm(robot, lengths, &guess, options),
        None => {
            let home = Pose::from_array(robot.home);
            lm(robot, lengths, &home, options).or_else(|first| {
                let centre = Pose::from_position(robot.workspace.center());
                lm(robot, lengths, &centre, options).map_err(|_| first)
            })
        }
    }
}

fn lm(
    robot: &Robot,
    lengths: &[f64],
    guess: &Pose,
    options: &FkOptions,
) -> Result<FkSolution, FkError> {
    let n = robot.dof.count();
    let g = guess.to_array();
    let mut q = Vector6::from_column_slice(&g);
    if n == 3 {
        q.fixed_rows_mut::<3>(3).fill(0.0);
    }
    let mut lambda = 1e-6;
    let mut iterations = 0;
    let mut current = residuals(robot, &q, lengths, true);
    loop {
        if current.worst.1 <= options.tolerance {
            break;
        }
        if iterations >= options.max_iterations {
            return Err(FkError::NotConverged {
                iterations,
                residual: current.worst.1,
            });
        }
        iterations += 1;
        // Solve (JᵀJ + λ diag(JᵀJ)) δ = −Jᵀr on the controlled coordinates.
        let mut a = current.jtj;
        for k in 0..6 {
            a[(k, k)] += lambda * a[(k, k)].max(1e-12);
        }
        let step = if n == 6 {
            a.cholesky().map(|c| -c.solve(&current.jtr))
        } else {
            let a3: Matrix3<f64> = a.fixed_view::<3, 3>(0, 0).into_owned();
            let b3: Vector3<f64> = current.jtr.fixed_rows::<3>(0).into_owned();
            a3.cholesky().map(|c| {
                let s = -c.solve(&b3);
                Vector6::new(s.x, s.y, s.z, 0.0, 0.0, 0.0)
            })
        };
        let Some(step) = step else {
            lambda = (lambda * 10.0).max(1e-6);
            continue;
        };
        let candidate = q + step;
        let trial = residuals(robot, &candidate, lengths, true);
        if trial.cost <= current.cost {
            q = candidate;
            let stalled =
                step.norm() <= 1e-14 * (1.0 + q.norm()) || current.cost - trial.cost <= 1e-30;
            current = trial;
            lambda = (lambda / 10.0).max(1e-15);
            if stalled {
                break; // least-squares minimum with a non-zero residual
            }
        } else {
            lambda *= 10.0;
            if lambda > 1e12 {
                break; // no descent direction left: at the minimum to working precision
            }
        }
    }
    finish(robot, q, current.worst, iterations, FkMethod::Lm, options)
}

fn finish(
    robot: &Robot,
    q: Vector6<f64>,
    worst: (usize, f64),
    iterations: usize,
    method: FkMethod,
    options: &FkOptions,
) -> Result<FkSolution, FkError> {
    if worst.1 > options.max_residual {
        return Err(FkError::Inconsistent {
            residual: worst.1,
            cable: worst.0 + 1,
            name: robot.cables[worst.0].name.clone(),
            limit: options.max_residual,
        });
    }
    let mut pose = pose_of(&q, robot.dof);
    pose.rpy = pose.rpy.map(super::wrap_angle);
    Ok(FkSolution {
        pose,
        residual: worst.1,
        iterations,
        method,
    })
}

/// Seed 003's closed form: the platform origin lies on the spheres centred at a_i − b_i with
/// radii l_i (i = 1, 2, 3; orientation zero). Subtracting sphere 1 from spheres 2 and 3 gives
/// two planes (eqs. 10–11); their line p0 + t·v (eq. 7, p0 and v from eqs. 12–13) meets sphere 1 in two points
/// (eq. 14), of which the lower one is the robot's. The paper fixes z to find p0; here the
/// coordinate with the largest |v| component is fixed, which is the same when the line is
/// vertical and stays well conditioned otherwise. With more than 3 cables (or when the
/// spheres miss each other by rounding) the result is refined by least squares on all cables.
/// Over swivel pulleys the spheres ignore the wrap (a few millimetres), so the closed form is
/// only the starting point and the refinement, which uses the pulleys, always runs.
pub fn forward_sphere(
    robot: &Robot,
    lengths: &[f64],
    options: &FkOptions,
) -> Result<FkSolution, FkError> {
    check_lengths(robot, lengths)?;
    if robot.dof != Dof::Three || robot.cable_count() < 3 {
        return Err(FkError::SphereNotApplicable {
            dof: robot.dof.count(),
            cables: robot.cable_count(),
        });
    }
    let centre = |i: usize| robot.cables[i].frame_anchor - robot.cables[i].platform_anchor;
    let (c1, c2, c3) = (centre(0), centre(1), centre(2));
    let (r1, r2, r3) = (lengths[0], lengths[1], lengths[2]);
    // Sphere i: |x|² + A_i x + B_i y + C_i z + D_i = 0 with (A, B, C) = −2 c_i, D = |c_i|² − r_i².
    let abc = |c: Vector3<f64>| -2.0 * c;
    let d = |c: Vector3<f64>, r: f64| c.norm_squared() - r * r;
    // Planes n_k · x + h_k = 0 (eq. 11: E = A1 − A2, ..., H = D1 − D2).
    let n1 = abc(c1) - abc(c2);
    let h1 = d(c1, r1) - d(c2, r2);
    let n2 = abc(c1) - abc(c3);
    let h2 = d(c1, r1) - d(c3, r3);
    let v = n1.cross(&n2);
    if v.norm() < 1e-12 * n1.norm() * n2.norm() {
        return Err(FkError::CollinearSpheres);
    }
    // p0: fix the coordinate along which v is largest at 0 and solve the 2×2 system.
    let k = v.iamax();
    let (i, j) = ((k + 1) % 3, (k + 2) % 3);
    let det = n1[i] * n2[j] - n1[j] * n2[i];
    let mut p0 = Vector3::zeros();
    p0[i] = (-h1 * n2[j] + h2 * n1[j]) / det;
    p0[j] = (-h2 * n1[i] + h1 * n2[i]) / det;
    // |p0 + t v − c1|² = r1²  →  a t² + b t + c = 0 (eq. 14).
    let w = p0 - c1;
    let a = v.norm_squared();
    let b = 2.0 * v.dot(&w);
    let c = w.norm_squared() - r1 * r1;
    let disc = b * b - 4.0 * a * c;
    let point = if disc >= 0.0 {
        let s = disc.sqrt();
        let (pa, pb) = (
            p0 + v * ((-b + s) / (2.0 * a)),
            p0 + v * ((-b - s) / (2.0 * a)),
        );
        if pa.z <= pb.z { pa } else { pb }
    } else {
        // The spheres just miss (inconsistent lengths): closest point of the line.
        p0 + v * (-b / (2.0 * a))
    };
    let q = Vector6::new(point.x, point.y, point.z, 0.0, 0.0, 0.0);
    let closed = residuals(robot, &q, lengths, false);
    if closed.worst.1 <= options.tolerance {
        return finish(robot, q, closed.worst, 0, FkMethod::Sphere, options);
    }
    let mut sol = lm(robot, lengths, &pose_of(&q, Dof::Three), options)?;
    sol.method = FkMethod::Sphere;
    Ok(sol)
}
