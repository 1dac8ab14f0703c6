//! The largest-minimum-tension LP from an optimal basis: a vertex named by which cables sit at
//! the minimum t and which at f_max.
//!
//! Along a trajectory or a grid scan the optimum moves but its basis rarely changes, so each
//! thread keeps the last optimal basis and tries it first. Solving the basis's square system
//! gives a vertex; when the vertex is feasible and its multipliers have the right signs it is
//! optimal (the LP's KKT conditions), proved by two (m+1)-square LU solves instead of an
//! interior-point solve (a microsecond against 130 µs for eight cables). The interior-point
//! answer names the next basis when the last one no longer holds.
//!
//! The LP here leaves out f ≥ 0: its optimum t' is the full LP's when t' ≥ 0 (then every f_i ≥
//! t' ≥ 0), and t' < 0 proves that no non-negative tensions hold the load.

use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;

/// Where a cable sits at a vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// f_i = t: the row t − f_i ≤ 0 is active.
    AtMinimum,
    /// f_i = f_max.
    AtMaximum,
}

/// A vertex's active inequalities, one (cable, bound) each, beside the r rows of W f = wrench.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Basis {
    rows: usize,
    cables: usize,
    active: Vec<(usize, Bound)>,
}

/// What a basis says about the LP.
pub(super) enum Verdict {
    /// Optimal with t ≥ 0: (t, f).
    Optimal(f64, Vec<f64>),
    /// Optimal for the LP without f ≥ 0 with t < 0: no non-negative tensions hold the load.
    Infeasible,
}

impl Verdict {
    /// As [`super::largest_min_tension`] answers: (t, f), None when nothing holds the load.
    pub(super) fn into_tensions(self) -> Option<(f64, Vec<f64>)> {
        match self {
            Verdict::Optimal(t, f) => Some((t, f)),
            Verdict::Infeasible => None,
        }
    }
}

thread_local! {
    static LAST: RefCell<Option<Basis>> = const { RefCell::new(None) };
}

/// The optimum from this thread's last optimal basis or one of its neighbours (one active
/// inequality swapped for another: one simplex pivot, which is how far the optimum moves
/// between nearby samples, and how a degenerate optimum passes from one vertex to the next).
pub(super) fn try_last(w: &DMatrix<f64>, wrench: &DVector<f64>, f_max: f64) -> Option<Verdict> {
    let last = LAST.with(|last| last.borrow().clone())?;
    if last.rows != w.nrows() || last.cables != w.ncols() {
        return None;
    }
    prove_near(last, w, wrench, f_max)
}

/// The basis of an interior-point optimum of the LP without f ≥ 0, named by the multipliers
/// `z` of its rows (W f = wrench, then per cable t − f_i ≤ 0 and f_i ≤ f_max), or one of its
/// neighbours when a multiplier of nearly 0 (a degenerate optimum) named a wrong row; kept for
/// the next LP. Its vertex is the answer (the interior point is only within tolerance of it).
pub(super) fn adopt(
    w: &DMatrix<f64>,
    wrench: &DVector<f64>,
    f_max: f64,
    z: &[f64],
) -> Option<Verdict> {
    let (r, m) = (w.nrows(), w.ncols());
    let wanted = (m + 1).checked_sub(r).filter(|&k| k >= 1)?;
    if z.len() != r + 2 * m {
        return None;
    }
    // The rows with the largest multipliers are the active ones.
    let mut candidates: Vec<(f64, usize, Bound)> = (0..m)
        .flat_map(|i| {
            let row = r + 2 * i;
            [
                (z[row], i, Bound::AtMinimum),
                (z[row + 1], i, Bound::AtMaximum),
            ]
        })
        .collect();
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut active: Vec<(usize, Bound)> = Vec::with_capacity(wanted);
    for (_, i, bound) in candidates {
        if active.len() == wanted {
            break;
        }
        if active.iter().all(|(j, _)| *j != i) {
            active.push((i, bound));
        }
    }
    let basis = Basis {
        rows: r,
        cables: m,
        active,
    };
    prove_near(basis, w, wrench, f_max)
}

/// The verdict of `basis` or, failing it, of the first of its neighbours that proves the
/// optimum; the basis that did is kept as this thread's last.
fn prove_near(
    basis: Basis,
    w: &DMatrix<f64>,
    wrench: &DVector<f64>,
    f_max: f64,
) -> Option<Verdict> {
    let proved = basis
        .verdict(w, wrench, f_max)
        .map(|verdict| (verdict, basis.clone()))
        .or_else(|| {
            basis.neighbours().find_map(|near| {
                let verdict = near.verdict(w, wrench, f_max)?;
                Some((verdict, near))
            })
        });
    let (verdict, basis) = proved?;
    LAST.with(|last| *last.borrow_mut() = Some(basis));
    Some(verdict)
}

impl Basis {
    /// The bases one pivot away: one active (cable, bound) replaced by another cable's bound
    /// or by the other bound of the same cable.
    fn neighbours(&self) -> impl Iterator<Item = Basis> + '_ {
        (0..self.active.len()).flat_map(move |k| {
            (0..self.cables)
                .flat_map(|i| [(i, Bound::AtMinimum), (i, Bound::AtMaximum)])
                .filter(move |&(i, bound)| {
                    let taken = self
                        .active
                        .iter()
                        .enumerate()
                        .any(|(j, (c, _))| j != k && *c == i);
                    !taken && (i, bound) != self.active[k]
                })
                .map(move |entering| {
                    let mut active = self.active.clone();
                    active[k] = entering;
                    Basis {
                        active,
                        ..self.clone()
                    }
                })
        })
    }

    /// The vertex of this basis and whether it is optimal; None when the basis is singular,
    /// its vertex infeasible, a multiplier has the wrong sign, or t is too close to 0 to say.
    fn verdict(&self, w: &DMatrix<f64>, wrench: &DVector<f64>, f_max: f64) -> Option<Verdict> {
        let (r, m) = (self.rows, self.cables);
        let n = m + 1;
        if r + self.active.len() != n || !f_max.is_finite() {
            return None;
        }
        // Rows: W f = wrench, then each active inequality as a·x ≤ b holding with equality.
        let mut a = DMatrix::zeros(n, n);
        let mut b = DVector::zeros(n);
        a.view_mut((0, 0), (r, m)).copy_from(w);
        b.rows_mut(0, r).copy_from(wrench);
        for (k, &(i, bound)) in self.active.iter().enumerate() {
            match bound {
                Bound::AtMinimum => {
                    a[(r + k, i)] = -1.0;
                    a[(r + k, m)] = 1.0;
                }
                Bound::AtMaximum => {
                    a[(r + k, i)] = 1.0;
                    b[r + k] = f_max;
                }
            }
        }
        let x = a.clone().lu().solve(&b)?;
        if !x.iter().all(|v| v.is_finite()) {
            return None;
        }
        let t = x[m];
        let tolerance = 1e-9 * (1.0 + x.amax());
        let feasible = (0..m).all(|i| x[i] - t >= -tolerance && x[i] <= f_max + tolerance);
        if !feasible || (&a * &x - &b).amax() > tolerance {
            return None;
        }
        let mut objective = DVector::zeros(n);
        objective[m] = 1.0;
        let multipliers = a.transpose().lu().solve(&objective)?;
        if !multipliers.iter().all(|v| v.is_finite()) {
            return None;
        }
        let dual_tolerance = 1e-9 * (1.0 + multipliers.amax());
        if multipliers
            .rows(r, n - r)
            .iter()
            .any(|&y| y < -dual_tolerance)
        {
            return None;
        }
        if t < -tolerance {
            return Some(Verdict::Infeasible);
        }
        if t <= tolerance {
            return None;
        }
        let mut f: Vec<f64> = x.iter().take(m).copied().collect();
        for &(i, bound) in &self.active {
            f[i] = match bound {
                Bound::AtMinimum => t,
                Bound::AtMaximum => f_max,
            };
        }
        Some(Verdict::Optimal(t, f))
    }
}
