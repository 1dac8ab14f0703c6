//! Statics: tension distribution (seed 001 eq. 8) and elastic equilibrium.
//!
//! Statics is W f + w_g = 0 with moments about the platform origin; for a 3-DOF robot only
//! the three force rows count (the orientation is held).

pub mod catenary;
mod equilibrium;
pub mod heavy;
mod lp_basis;
mod qp;
pub mod solutions;

pub use equilibrium::{
    Equilibrium, EquilibriumOptions, StaticsError, elastic_equilibrium, pretensioned_rest_lengths,
    rest_lengths_for,
};
pub use qp::{QpInfeasible, QpSolution, min_norm_qp};
pub use solutions::{
    CatenaryIk, EquilibriumReport, HomeReport, RestLengths, TensionsReport, catenary_ik,
    equilibrium_report, home_report, residual_parts, residual_text, tension_bounds,
    tensions_report,
};

use crate::kinematics::{self, InverseKinematics, Pose};
use crate::robot::{Robot, TensionBounds};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus,
    SupportedConeT, ZeroConeT,
};
use nalgebra::{DMatrix, DVector, Vector3};
use serde::Serialize;

/// Result of the tension distribution at a pose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    /// N, one per cable. When infeasible: the tensions that come closest (see `feasible`).
    pub tensions: Vec<f64>,
    /// True when f_min ≤ f ≤ f_max and W f + w_g = 0 hold.
    pub feasible: bool,
    /// ‖W f + w_g‖ over the controlled rows (N, N·m).
    pub residual: f64,
    /// When infeasible: the largest minimum tension reachable with f ≤ f_max and
    /// W f + w_g = 0 (None when no tensions ≤ f_max balance the load at all).
    pub largest_min_tension: Option<f64>,
    pub bounds: TensionBounds,
}

/// The gravity wrench restricted to the controlled rows.
pub fn gravity_rows(robot: &Robot, ik: &InverseKinematics) -> DVector<f64> {
    let wg = robot.gravity_wrench(ik.pose.rotation().matrix());
    DVector::from_column_slice(&wg[..robot.dof.count()])
}

/// Angular velocity and acceleration (world frame, rad/s and rad/s²) of a platform whose
/// (roll, pitch, yaw) = (φ, θ, ψ), R = Rz(ψ)·Ry(θ)·Rx(φ), change at `rates` and
/// `accelerations` (rad/s, rad/s²): ω = ψ̇ e_z + θ̇ u_y + φ̇ u_x with u_y = Rz e_y,
/// u_x = Rz Ry e_x, and α = dω/dt (u_y turns with ψ̇ e_z, u_x with ψ̇ e_z + θ̇ u_y).
pub fn angular_motion(
    rpy: &Vector3<f64>,
    rates: &Vector3<f64>,
    accelerations: &Vector3<f64>,
) -> (Vector3<f64>, Vector3<f64>) {
    let (pitch, yaw) = (rpy.y, rpy.z);
    let uz = Vector3::z();
    let uy = Vector3::new(-yaw.sin(), yaw.cos(), 0.0);
    let ux = Vector3::new(
        yaw.cos() * pitch.cos(),
        yaw.sin() * pitch.cos(),
        -pitch.sin(),
    );
    let (dphi, dtheta, dpsi) = (rates.x, rates.y, rates.z);
    let omega = uz * dpsi + uy * dtheta + ux * dphi;
    let alpha = uz * accelerations.z
        + uy * accelerations.y
        + ux * accelerations.x
        + (uz * dpsi).cross(&uy) * dtheta
        + (uz * dpsi + uy * dtheta).cross(&ux) * dphi;
    (omega, alpha)
}

/// The wrench the cables must supply, beyond holding gravity, to move the platform along its
/// path (Newton–Euler about the platform origin): [m a_c; r_c × m a_c + I ω̇ + ω × I ω], with
/// r_c = R c the centre of mass, a_c = a + ω̇ × r_c + ω × (ω × r_c) its acceleration and
/// I = R I_c Rᵀ; `velocity` and `acceleration` are d(pose)/dt and d²(pose)/dt² (m/s, rad/s of
/// x, y, z, roll, pitch, yaw), as a trajectory's samples carry them. The cables then hold
/// W f = −w_g + this; restricted to the controlled rows (a 3-DOF robot's orientation is held:
/// its angular terms are zero).
pub fn inertial_rows(
    robot: &Robot,
    pose: &Pose,
    velocity: &[f64; 6],
    acceleration: &[f64; 6],
) -> DVector<f64> {
    let rows = robot.dof.count();
    let (omega, alpha) = if rows == 6 {
        angular_motion(
            &pose.rpy,
            &Vector3::new(velocity[3], velocity[4], velocity[5]),
            &Vector3::new(acceleration[3], acceleration[4], acceleration[5]),
        )
    } else {
        (Vector3::zeros(), Vector3::zeros())
    };
    let rotation = pose.rotation();
    let r_c = rotation * robot.platform.com;
    let a = Vector3::new(acceleration[0], acceleration[1], acceleration[2]);
    let a_c = a + alpha.cross(&r_c) + omega.cross(&omega.cross(&r_c));
    let force = a_c * robot.platform.mass;
    let inertia = rotation.matrix() * robot.platform.inertia * rotation.matrix().transpose();
    let moment = r_c.cross(&force) + inertia * alpha + omega.cross(&(inertia * omega));
    let w = [force.x, force.y, force.z, moment.x, moment.y, moment.z];
    DVector::from_column_slice(&w[..rows])
}

/// Minimum-2-norm tensions within `bounds` balancing gravity at `pose` (seed 001 eq. 8).
pub fn tension_distribution(robot: &Robot, pose: &Pose, bounds: TensionBounds) -> Distribution {
    let ik = kinematics::inverse(robot, pose);
    let w = ik.wrench_matrix();
    let target = -gravity_rows(robot, &ik);
    distribute_wrench(&w, &target, bounds)
}

/// Minimum-norm tensions with W f = `wrench` and bounds, with the infeasible case explained.
pub fn distribute_wrench(
    w: &DMatrix<f64>,
    wrench: &DVector<f64>,
    bounds: TensionBounds,
) -> Distribution {
    let m = w.ncols();
    if m == 0 {
        // No cables (a robot with legs): nothing can hold the load.
        return Distribution {
            tensions: Vec::new(),
            feasible: false,
            residual: wrench.norm(),
            largest_min_tension: None,
            bounds,
        };
    }
    let lo = DVector::from_element(m, bounds.min);
    let hi = DVector::from_element(m, bounds.max);
    // The exact active-set solver re-factorises its active set at every step: fine for the
    // dozen cables of a real robot, quartic in the cable count beyond (500 cables took
    // seconds). Many cables go to clarabel's sparse interior-point method instead.
    let solution = if m <= ACTIVE_SET_MAX_CABLES {
        min_norm_qp(w, wrench, &lo, &hi).map(|sol| sol.x)
    } else {
        min_norm_sparse(w, wrench, bounds).ok_or(QpInfeasible)
    };
    match solution {
        Ok(x) => {
            let residual = (w * &x - wrench).norm();
            Distribution {
                tensions: x.iter().copied().collect(),
                feasible: true,
                residual,
                largest_min_tension: None,
                bounds,
            }
        }
        Err(QpInfeasible) => {
            let best = largest_min_tension(w, wrench, bounds.max);
            let tensions = match &best {
                Some((_, f)) => f.clone(),
                None => closest_tensions(w, wrench, bounds.max),
            };
            let f = DVector::from_column_slice(&tensions);
            Distribution {
                residual: (w * f - wrench).norm(),
                tensions,
                feasible: false,
                largest_min_tension: best.map(|(t, _)| t),
                bounds,
            }
        }
    }
}

/// Above this many cables the tension distribution uses [`min_norm_sparse`].
pub const ACTIVE_SET_MAX_CABLES: usize = 32;

/// The constraint matrix [W; per-cable rows] in CSC form, built column by column: `per_cable`
/// gives, for cable j, its (row offset within the block of cable j, value) entries; each
/// cable's block has `block` rows after the r rows of W. Dense rows would take
/// O(cables²) memory.
fn sparse_constraints(
    w: &DMatrix<f64>,
    extra_cols: usize,
    block: usize,
    per_cable: &[(usize, f64)],
) -> CscMatrix<f64> {
    let (r, m) = (w.nrows(), w.ncols());
    let rows = r + block * m;
    let mut colptr = Vec::with_capacity(m + extra_cols + 1);
    let mut rowval = Vec::with_capacity(m * (r + per_cable.len()));
    let mut nzval = Vec::with_capacity(m * (r + per_cable.len()));
    colptr.push(0);
    for j in 0..m {
        for k in 0..r {
            if w[(k, j)] != 0.0 {
                rowval.push(k);
                nzval.push(w[(k, j)]);
            }
        }
        for &(offset, value) in per_cable {
            rowval.push(r + block * j + offset);
            nzval.push(value);
        }
        colptr.push(rowval.len());
    }
    for _ in 0..extra_cols {
        colptr.push(rowval.len());
    }
    CscMatrix::new(rows, m + extra_cols, colptr, rowval, nzval)
}

/// min ½‖f‖² s.t. W f = wrench, f_min ≤ f ≤ f_max by clarabel, with sparse matrices (for
/// robots with many cables). None when infeasible or not solved.
fn min_norm_sparse(
    w: &DMatrix<f64>,
    wrench: &DVector<f64>,
    bounds: TensionBounds,
) -> Option<DVector<f64>> {
    let (r, m) = (w.nrows(), w.ncols());
    let p = CscMatrix::identity(m);
    let q = vec![0.0; m];
    // Per cable: −f ≤ −f_min, f ≤ f_max.
    let a = sparse_constraints(w, 0, 2, &[(0, -1.0), (1, 1.0)]);
    let mut b: Vec<f64> = wrench.iter().copied().collect();
    for _ in 0..m {
        b.push(-bounds.min);
        b.push(bounds.max);
    }
    let cones = [ZeroConeT(r), NonnegativeConeT(2 * m)];
    let mut solver = quiet_solver(&p, &q, &a, &b, &cones)?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {
            // Interior-point solutions sit a hair inside or outside the bounds: clamp.
            let x = DVector::from_iterator(
                m,
                solver
                    .solution
                    .x
                    .iter()
                    .map(|f| f.clamp(bounds.min, bounds.max)),
            );
            let scale = 1.0 + wrench.amax();
            ((w * &x - wrench).amax() <= 1e-6 * scale).then_some(x)
        }
        _ => None,
    }
}

fn quiet_solver(
    p: &CscMatrix<f64>,
    q: &[f64],
    a: &CscMatrix<f64>,
    b: &[f64],
    cones: &[SupportedConeT<f64>],
) -> Option<DefaultSolver<f64>> {
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .build()
        .ok()?;
    DefaultSolver::new(p, q, a, b, cones, settings).ok()
}

/// LP: max t s.t. W f = wrench, f_i ≥ t, 0 ≤ f_i ≤ f_max. Returns t and f; None when no
/// non-negative tensions up to f_max produce the wrench.
///
/// Up to [`ACTIVE_SET_MAX_CABLES`] cables the answer is the optimal vertex, proved by its KKT
/// conditions: this thread's last optimal basis when it still holds, else the basis clarabel's
/// interior-point optimum names (see `lp_basis`); clarabel's own answer only where no basis
/// proves it (degenerate vertices). Among equally optimal tensions the vertex found first is
/// kept.
pub fn largest_min_tension(
    w: &DMatrix<f64>,
    wrench: &DVector<f64>,
    f_max: f64,
) -> Option<(f64, Vec<f64>)> {
    if w.ncols() > ACTIVE_SET_MAX_CABLES {
        return largest_min_tension_sparse(w, wrench, f_max).map(|(t, f, _)| (t, f));
    }
    if let Some(verdict) = lp_basis::try_last(w, wrench, f_max) {
        return verdict.into_tensions();
    }
    match largest_min_tension_interior(w, wrench, f_max, Pushing::Allowed) {
        Ok((.., z)) => {
            if let Some(verdict) = lp_basis::adopt(w, wrench, f_max, &z) {
                return verdict.into_tensions();
            }
        }
        // Even pushing cables cannot hold the load, so pulling ones cannot either.
        Err(Some(SolverStatus::PrimalInfeasible)) => return None,
        Err(_) => {}
    }
    largest_min_tension_clarabel(w, wrench, f_max)
}

/// The LP of [`largest_min_tension`] solved by clarabel's interior-point method alone (no
/// basis): an independent second solver for tests and benchmarks.
pub fn largest_min_tension_clarabel(
    w: &DMatrix<f64>,
    wrench: &DVector<f64>,
    f_max: f64,
) -> Option<(f64, Vec<f64>)> {
    largest_min_tension_interior(w, wrench, f_max, Pushing::Refused)
        .ok()
        .map(|(t, f, _)| (t, f))
}

/// Whether the LP keeps f ≥ 0 (see `lp_basis` for the LP without it).
#[derive(Clone, Copy, PartialEq)]
enum Pushing {
    Refused,
    Allowed,
}

/// clarabel on the dense LP: t, f and the rows' multipliers (per cable: t − f_i ≤ 0,
/// f_i ≤ f_max, and −f_i ≤ 0 unless pushing is allowed).
fn largest_min_tension_interior(
    w: &DMatrix<f64>,
    wrench: &DVector<f64>,
    f_max: f64,
    pushing: Pushing,
) -> Result<(f64, Vec<f64>, Vec<f64>), Option<SolverStatus>> {
    let (r, m) = (w.nrows(), w.ncols());
    // Variables (f_1..f_m, t); constraints A x + s = b.
    let mut rows: Vec<Vec<f64>> = Vec::with_capacity(r + 3 * m);
    let mut b = Vec::with_capacity(r + 3 * m);
    for k in 0..r {
        let mut row: Vec<f64> = w.row(k).iter().copied().collect();
        row.push(0.0);
        rows.push(row);
        b.push(wrench[k]);
    }
    for i in 0..m {
        let mut row = vec![0.0; m + 1];
        row[i] = -1.0;
        row[m] = 1.0; // t − f_i ≤ 0
        rows.push(row);
        b.push(0.0);
        let mut row = vec![0.0; m + 1];
        row[i] = 1.0; // f_i ≤ f_max
        rows.push(row);
        b.push(f_max);
        if pushing == Pushing::Refused {
            let mut row = vec![0.0; m + 1];
            row[i] = -1.0; // f_i ≥ 0: cables cannot push
            rows.push(row);
            b.push(0.0);
        }
    }
    let a = CscMatrix::from(&rows);
    maximise_t(&a, &b, r, m)
}

/// Solves the largest-minimum-tension LP over x = (f_1..f_m, t): maximise t subject to
/// A x + s = b with the first `r` rows equalities (the wrench) and the others s ≥ 0.
/// Returns t, f and the rows' multipliers, or clarabel's status when it did not solve (None:
/// it could not start).
fn maximise_t(
    a: &CscMatrix<f64>,
    b: &[f64],
    r: usize,
    m: usize,
) -> Result<(f64, Vec<f64>, Vec<f64>), Option<SolverStatus>> {
    let p = CscMatrix::zeros((m + 1, m + 1));
    let mut q = vec![0.0; m + 1];
    q[m] = -1.0;
    let cones = [ZeroConeT(r), NonnegativeConeT(a.m - r)];
    let mut solver = quiet_solver(&p, &q, a, b, &cones).ok_or(None)?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {
            let x = &solver.solution.x;
            Ok((x[m], x[..m].to_vec(), solver.solution.z.clone()))
        }
        status => Err(Some(status)),
    }
}

/// [`largest_min_tension`] with sparse matrices (the same LP, same constraint order).
fn largest_min_tension_sparse(
    w: &DMatrix<f64>,
    wrench: &DVector<f64>,
    f_max: f64,
) -> Option<(f64, Vec<f64>, Vec<f64>)> {
    let (r, m) = (w.nrows(), w.ncols());
    // Per cable j (rows r + 3j ..): t − f_j ≤ 0, f_j ≤ f_max, −f_j ≤ 0; the column of t
    // holds a 1 in the first row of every block.
    let mut a = sparse_constraints(w, 0, 3, &[(0, -1.0), (1, 1.0), (2, -1.0)]);
    a.n = m + 1;
    for j in 0..m {
        a.rowval.push(r + 3 * j);
        a.nzval.push(1.0);
    }
    a.colptr.push(a.rowval.len());
    let mut b: Vec<f64> = wrench.iter().copied().collect();
    for _ in 0..m {
        b.extend([0.0, f_max, 0.0]);
    }
    maximise_t(&a, &b, r, m).ok()
}

/// min ‖W f − wrench‖² with 0 ≤ f ≤ f_max (clarabel): the best a robot can do when it cannot
/// hold the load at all.
fn closest_tensions(w: &DMatrix<f64>, wrench: &DVector<f64>, f_max: f64) -> Vec<f64> {
    let m = w.ncols();
    if m > ACTIVE_SET_MAX_CABLES {
        return closest_tensions_sparse(w, wrench, f_max);
    }
    let wtw = w.transpose() * w;
    let upper: Vec<Vec<f64>> = (0..m)
        .map(|i| {
            (0..m)
                .map(|j| if j >= i { wtw[(i, j)] } else { 0.0 })
                .collect()
        })
        .collect();
    let p = CscMatrix::from(&upper);
    let q: Vec<f64> = (-(w.transpose() * wrench)).iter().copied().collect();
    let mut rows = Vec::with_capacity(2 * m);
    let mut b = Vec::with_capacity(2 * m);
    for i in 0..m {
        let mut row = vec![0.0; m];
        row[i] = -1.0;
        rows.push(row);
        b.push(0.0);
        let mut row = vec![0.0; m];
        row[i] = 1.0;
        rows.push(row);
        b.push(f_max);
    }
    let a = CscMatrix::from(&rows);
    let cones = [NonnegativeConeT(2 * m)];
    match quiet_solver(&p, &q, &a, &b, &cones) {
        Some(mut solver) => {
            solver.solve();
            solver.solution.x.clone()
        }
        None => vec![0.0; m],
    }
}

/// [`closest_tensions`] with sparse matrices: min ½‖y‖² over (f, y) with W f − y = wrench,
/// 0 ≤ f ≤ f_max (WᵀW would be a dense cables × cables matrix).
fn closest_tensions_sparse(w: &DMatrix<f64>, wrench: &DVector<f64>, f_max: f64) -> Vec<f64> {
    let (r, m) = (w.nrows(), w.ncols());
    let mut a = sparse_constraints(w, 0, 2, &[(0, -1.0), (1, 1.0)]);
    a.n = m + r;
    for k in 0..r {
        a.rowval.push(k);
        a.nzval.push(-1.0);
        a.colptr.push(a.rowval.len());
    }
    let mut b: Vec<f64> = wrench.iter().copied().collect();
    for _ in 0..m {
        b.extend([0.0, f_max]);
    }
    let mut colptr = vec![0; m + 1];
    colptr.extend(1..=r);
    let p = CscMatrix::new(m + r, m + r, colptr, (m..m + r).collect(), vec![1.0; r]);
    let q = vec![0.0; m + r];
    let cones = [ZeroConeT(r), NonnegativeConeT(2 * m)];
    match quiet_solver(&p, &q, &a, &b, &cones) {
        Some(mut solver) => {
            solver.solve();
            solver.solution.x[..m].to_vec()
        }
        None => vec![0.0; m],
    }
}

/// Tensions for an under-constrained robot (fewer cables than wrench components): the force
/// rows exactly, the moment rows as closely as possible,
///     min  weight·‖W_M f − moment‖² + ε‖f‖²   s.t.  W_F f = force,  f_min ≤ f ≤ f_max,
/// solved by clarabel (a general QP; the active-set solver handles only ‖f‖²). None when the
/// force rows cannot be met within the bounds.
pub fn distribute_force_first(
    w_force: &DMatrix<f64>,
    force: &DVector<f64>,
    w_moment: &DMatrix<f64>,
    moment: &DVector<f64>,
    bounds: TensionBounds,
    weight: f64,
) -> Option<Vec<f64>> {
    let m = w_force.ncols();
    let eps = 1e-6;
    let g = w_moment.transpose() * w_moment * weight + DMatrix::identity(m, m) * eps;
    let upper: Vec<Vec<f64>> = (0..m)
        .map(|i| {
            (0..m)
                .map(|j| if j >= i { g[(i, j)] } else { 0.0 })
                .collect()
        })
        .collect();
    let p = CscMatrix::from(&upper);
    let q: Vec<f64> = (-(w_moment.transpose() * moment) * weight)
        .iter()
        .copied()
        .collect();
    let r = w_force.nrows();
    let mut rows: Vec<Vec<f64>> = (0..r)
        .map(|k| w_force.row(k).iter().copied().collect())
        .collect();
    let mut rhs: Vec<f64> = force.iter().copied().collect();
    for i in 0..m {
        let mut row = vec![0.0; m];
        row[i] = -1.0;
        rows.push(row);
        rhs.push(-bounds.min);
        let mut row = vec![0.0; m];
        row[i] = 1.0;
        rows.push(row);
        rhs.push(bounds.max);
    }
    let a = CscMatrix::from(&rows);
    let cones = [ZeroConeT(r), NonnegativeConeT(2 * m)];
    let mut solver = quiet_solver(&p, &q, &a, &rhs, &cones)?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => Some(solver.solution.x.clone()),
        _ => None,
    }
}

/// The same QP as [`min_norm_qp`] solved by clarabel's interior-point method: an independent
/// second solver for tests and benchmarks. None when clarabel reports anything but solved.
pub fn min_norm_qp_clarabel(
    a: &DMatrix<f64>,
    b: &DVector<f64>,
    lo: &DVector<f64>,
    hi: &DVector<f64>,
) -> Option<DVector<f64>> {
    let (r, m) = (a.nrows(), a.ncols());
    let p = CscMatrix::identity(m);
    let q = vec![0.0; m];
    let mut rows: Vec<Vec<f64>> = (0..r).map(|k| a.row(k).iter().copied().collect()).collect();
    let mut rhs: Vec<f64> = b.iter().copied().collect();
    for i in 0..m {
        let mut row = vec![0.0; m];
        row[i] = -1.0;
        rows.push(row);
        rhs.push(-lo[i]);
        let mut row = vec![0.0; m];
        row[i] = 1.0;
        rows.push(row);
        rhs.push(hi[i]);
    }
    let amat = CscMatrix::from(&rows);
    let cones = [ZeroConeT(r), NonnegativeConeT(2 * m)];
    let mut solver = quiet_solver(&p, &q, &amat, &rhs, &cones)?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved => Some(DVector::from_column_slice(&solver.solution.x)),
        _ => None,
    }
}

/// Total wrench on the platform (W f + w_g) over the controlled rows, for given tensions.
pub fn wrench_residual(robot: &Robot, pose: &Pose, tensions: &[f64]) -> DVector<f64> {
    let ik = kinematics::inverse(robot, pose);
    let w = ik.wrench_matrix();
    &w * DVector::from_column_slice(tensions) + gravity_rows(robot, &ik)
}

/// Force of gravity as a vector (N).
pub fn weight(robot: &Robot) -> Vector3<f64> {
    Vector3::new(0.0, 0.0, -robot.platform.mass * crate::robot::GRAVITY)
}

#[cfg(test)]
mod tests;
