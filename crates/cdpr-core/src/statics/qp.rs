//! Minimum-norm tensions: min ½‖f‖² subject to A f = b and lo ≤ f ≤ hi.
//!
//! An exact dual active-set method (Goldfarb & Idnani 1983, "A numerically stable dual method
//! for solving strictly convex quadratic programs", Math. Prog. 27) specialised to the identity
//! Hessian: it starts from the unconstrained minimum f = 0, adds the equalities, then the most
//! violated bound at a time, dropping bounds whose multipliers would turn negative. It needs
//! no feasible starting point, ends in a finite number of steps, and proves infeasibility when
//! a violated constraint cannot be added. Projections onto the active set are recomputed by QR
//! every step: with at most a dozen cables that is cheaper than the bookkeeping of updates.

use nalgebra::{DMatrix, DVector};

/// Optimal tensions with the KKT multipliers: f = Aᵀν + μ_lo − μ_hi, μ ≥ 0.
#[derive(Debug, Clone, PartialEq)]
pub struct QpSolution {
    pub x: DVector<f64>,
    /// ν, one per equality row.
    pub eq_multipliers: DVector<f64>,
    /// μ_lo ≥ 0, non-zero only where f_i = lo_i.
    pub lower_multipliers: DVector<f64>,
    /// μ_hi ≥ 0, non-zero only where f_i = hi_i.
    pub upper_multipliers: DVector<f64>,
    /// Active-set changes performed.
    pub iterations: usize,
}

/// The constraints admit no solution.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("no tensions within the bounds produce the required wrench")]
pub struct QpInfeasible;

struct Problem<'a> {
    a: &'a DMatrix<f64>,
    b: &'a DVector<f64>,
    lo: &'a DVector<f64>,
    hi: &'a DVector<f64>,
    /// Orientation of each equality (±1) so that it is approached from the violated side.
    sign: Vec<f64>,
}

impl Problem<'_> {
    fn rows(&self) -> usize {
        self.a.nrows()
    }
    fn n(&self) -> usize {
        self.a.ncols()
    }
    /// Constraint k as n_kᵀ x ≥ c_k: equalities first, then lower bounds, then upper bounds.
    fn normal_into(&self, k: usize, out: &mut DVector<f64>) {
        out.fill(0.0);
        let (r, n) = (self.rows(), self.n());
        if k < r {
            for j in 0..n {
                out[j] = self.sign[k] * self.a[(k, j)];
            }
        } else if k < r + n {
            out[k - r] = 1.0;
        } else {
            out[k - r - n] = -1.0;
        }
    }
    /// s_k(x) = n_kᵀ x − c_k (≥ 0 when satisfied).
    fn slack(&self, k: usize, x: &DVector<f64>) -> f64 {
        let (r, n) = (self.rows(), self.n());
        if k < r {
            self.sign[k] * (self.a.row(k).transpose().dot(x) - self.b[k])
        } else if k < r + n {
            x[k - r] - self.lo[k - r]
        } else {
            self.hi[k - r - n] - x[k - r - n]
        }
    }
}

/// Solves min ½‖x‖² s.t. A x = b, lo ≤ x ≤ hi exactly (to rounding).
pub fn min_norm_qp(
    a: &DMatrix<f64>,
    b: &DVector<f64>,
    lo: &DVector<f64>,
    hi: &DVector<f64>,
) -> Result<QpSolution, QpInfeasible> {
    let (r, n) = (a.nrows(), a.ncols());
    assert!(
        b.len() == r && lo.len() == n && hi.len() == n,
        "min_norm_qp: inconsistent dimensions"
    );
    if (0..n).any(|i| lo[i] > hi[i]) {
        return Err(QpInfeasible);
    }
    if let Some(sol) = equality_only_solution(a, b, lo, hi) {
        return Ok(sol);
    }
    let mut prob = Problem {
        a,
        b,
        lo,
        hi,
        sign: vec![1.0; r],
    };
    let scale = 1.0 + b.amax() + lo.amax().max(hi.amax()).min(1e12);
    let tol = 1e-11 * scale;

    let mut state = ActiveSet::new(r, n);
    while let Some(p) = next_constraint(&mut prob, &state, tol) {
        add_constraint(&prob, &mut state, p, tol)?;
    }
    Ok(state.into_solution(&prob))
}

/// The minimum-norm solution of the equalities alone, x = Aᵀ(AAᵀ)⁻¹b, when it already lies
/// within the bounds: it is then the optimum (no bound active). This is the usual case along a
/// trajectory and costs one small Cholesky instead of the active-set steps.
fn equality_only_solution(
    a: &DMatrix<f64>,
    b: &DVector<f64>,
    lo: &DVector<f64>,
    hi: &DVector<f64>,
) -> Option<QpSolution> {
    let n = a.ncols();
    let nu = (a * a.transpose()).cholesky().map(|c| c.solve(b))?;
    let x = a.transpose() * &nu;
    let slack = 1e-12 * (1.0 + x.amax());
    let inside = (0..n).all(|i| x[i] >= lo[i] - slack && x[i] <= hi[i] + slack);
    if inside && (a * &x - b).amax() <= 1e-9 * (1.0 + b.amax()) {
        return Some(QpSolution {
            x,
            eq_multipliers: nu,
            lower_multipliers: DVector::zeros(n),
            upper_multipliers: DVector::zeros(n),
            iterations: 0,
        });
    }
    None
}

/// The dual method's working state: the iterate, the active constraints with their
/// multipliers, and which equalities have been dealt with.
struct ActiveSet {
    x: DVector<f64>,
    active: Vec<usize>,
    /// Multiplier of each active constraint, in the order of `active`.
    u: Vec<f64>,
    eq_done: Vec<bool>,
    /// Normal of the constraint being added, kept to reuse its allocation.
    np: DVector<f64>,
    iterations: usize,
    /// Bound on active-set changes; exceeding it means cycling on degenerate input.
    max_iterations: usize,
}

impl ActiveSet {
    /// The unconstrained minimum x = 0 with nothing active.
    fn new(r: usize, n: usize) -> Self {
        ActiveSet {
            x: DVector::zeros(n),
            active: Vec::with_capacity(n),
            u: Vec::with_capacity(n),
            eq_done: vec![false; r],
            np: DVector::zeros(n),
            iterations: 0,
            max_iterations: 20 * (r + 2 * n) + 100,
        }
    }

    /// The final iterate with its multipliers sorted into equality, lower and upper ones.
    fn into_solution(self, prob: &Problem) -> QpSolution {
        let (r, n) = (prob.rows(), prob.n());
        let mut sol = QpSolution {
            x: self.x,
            eq_multipliers: DVector::zeros(r),
            lower_multipliers: DVector::zeros(n),
            upper_multipliers: DVector::zeros(n),
            iterations: self.iterations,
        };
        for (&k, &uk) in self.active.iter().zip(&self.u) {
            if k < r {
                sol.eq_multipliers[k] = prob.sign[k] * uk;
            } else if k < r + n {
                sol.lower_multipliers[k - r] = uk;
            } else {
                sol.upper_multipliers[k - r - n] = uk;
            }
        }
        sol
    }
}

/// Step 1: the next constraint to add — equalities first, oriented so that each is approached
/// from its violated side, then the worst violated bound; `None` once everything holds.
fn next_constraint(prob: &mut Problem, state: &ActiveSet, tol: f64) -> Option<usize> {
    match (0..prob.rows()).find(|&k| !state.eq_done[k]) {
        Some(k) => {
            prob.sign[k] = 1.0;
            if prob.slack(k, &state.x) > 0.0 {
                prob.sign[k] = -1.0;
            }
            Some(k)
        }
        None => most_violated_bound(prob, state, tol),
    }
}

/// The inactive bound with the most negative slack below −tol, if any.
fn most_violated_bound(prob: &Problem, state: &ActiveSet, tol: f64) -> Option<usize> {
    let (r, n) = (prob.rows(), prob.n());
    let mut worst = None;
    let mut worst_slack = -tol;
    for k in r..r + 2 * n {
        if state.active.contains(&k) {
            continue;
        }
        let s = prob.slack(k, &state.x);
        if s < worst_slack {
            worst_slack = s;
            worst = Some(k);
        }
    }
    worst
}

/// Step 2: moves towards satisfying constraint p, dropping the bounds that block the step,
/// until p joins the active set (or, for a redundant equality that already holds, is set aside).
fn add_constraint(
    prob: &Problem,
    state: &mut ActiveSet,
    p: usize,
    tol: f64,
) -> Result<(), QpInfeasible> {
    let r = prob.rows();
    prob.normal_into(p, &mut state.np);
    let mut u_plus = 0.0;
    loop {
        state.iterations += 1;
        if state.iterations > state.max_iterations {
            return Err(QpInfeasible); // cycling: only reachable on degenerate input
        }
        let (z, rvec) = project(prob, &state.active, &state.np);
        let (t1, drop) = blocking_step(r, &state.active, &state.u, &rvec);
        let zz = z.norm_squared();
        let sp = prob.slack(p, &state.x);
        let t2 = if zz > 1e-24 { -sp / zz } else { f64::INFINITY };
        if !t2.is_finite() && p < r && sp.abs() <= tol {
            // A redundant equality (rows of A dependent) that already holds.
            state.eq_done[p] = true;
            return Ok(());
        }
        let t = t1.min(t2);
        if !t.is_finite() {
            return Err(QpInfeasible);
        }
        for (uj, rj) in state.u.iter_mut().zip(rvec.iter()) {
            *uj -= t * rj;
        }
        u_plus += t;
        if t2.is_finite() {
            state.x.axpy(t, &z, 1.0);
        }
        if t2 <= t1 {
            state.active.push(p);
            state.u.push(u_plus);
            if p < r {
                state.eq_done[p] = true;
            }
            return Ok(());
        }
        let j = drop.expect("t1 finite implies a blocking constraint");
        state.active.remove(j);
        state.u.remove(j);
    }
}

/// The largest dual step t1 before an active bound's multiplier reaches zero, and the index in
/// the active set of that bound. Equalities never block: their multipliers have no sign.
fn blocking_step(
    r: usize,
    active: &[usize],
    u: &[f64],
    rvec: &DVector<f64>,
) -> (f64, Option<usize>) {
    let mut t1 = f64::INFINITY;
    let mut drop = None;
    for (j, &k) in active.iter().enumerate() {
        if k >= r && rvec[j] > 1e-14 {
            let t = u[j] / rvec[j];
            if t < t1 {
                t1 = t;
                drop = Some(j);
            }
        }
    }
    (t1, drop)
}

/// Projection of n⁺ onto the complement of the active normals N: z = (I − N N⁺) n⁺, and the
/// coefficients r = N⁺ n⁺ (N⁺ the pseudo-inverse), both by a QR factorisation of N.
fn project(prob: &Problem, active: &[usize], np: &DVector<f64>) -> (DVector<f64>, DVector<f64>) {
    let q = active.len();
    if q == 0 {
        return (np.clone(), DVector::zeros(0));
    }
    let n = prob.n();
    let mut nmat = DMatrix::<f64>::zeros(n, q);
    let mut col = DVector::<f64>::zeros(n);
    for (j, &k) in active.iter().enumerate() {
        prob.normal_into(k, &mut col);
        nmat.set_column(j, &col);
    }
    let qr = nmat.qr();
    let qm = qr.q();
    let rm = qr.r();
    let qtn = qm.tr_mul(np);
    let z = np - &qm * &qtn;
    let rvec = rm
        .solve_upper_triangular(&qtn)
        .unwrap_or_else(|| DVector::zeros(q));
    (z, rvec)
}
