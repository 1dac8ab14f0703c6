//! Bounded Nelder–Mead for the fit, on `argmin`'s [`NelderMead`] (Lagarias et al.'s
//! coefficients) with the `vec` math backend (no second nalgebra in the tree).
//!
//! argmin's simplex is unbounded; the fit's parameters live in a box (f_n, ζ, K ranges). The
//! cost seen by the simplex is the cost at the point projected onto the box plus the distance
//! outside it, so that the box's interior is unchanged, the simplex is pulled back when it
//! strays, and the projected best point is always a valid filter.

use argmin::core::{CostFunction, Error, Executor};
use argmin::solver::neldermead::NelderMead;
use std::cell::RefCell;

/// The cost being minimised (argmin's `CostFunction::cost` takes `&self`, hence the cell).
type Cost<'a> = RefCell<&'a mut dyn FnMut(&[f64]) -> f64>;

struct Boxed<'a> {
    cost: Cost<'a>,
    lo: &'a [f64],
    hi: &'a [f64],
}

fn project(x: &[f64], lo: &[f64], hi: &[f64]) -> (Vec<f64>, f64) {
    let mut outside = 0.0;
    let p = x
        .iter()
        .zip(lo.iter().zip(hi))
        .map(|(&v, (&l, &h))| {
            let c = v.clamp(l, h);
            outside += (v - c).abs();
            c
        })
        .collect();
    (p, outside)
}

impl CostFunction for Boxed<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, x: &Vec<f64>) -> Result<f64, Error> {
        let (p, outside) = project(x, self.lo, self.hi);
        let c = (self.cost.borrow_mut())(&p);
        // NaN would break the simplex's ordering; treat it as the worst possible cost.
        Ok(if c.is_nan() { f64::MAX } else { c + outside })
    }
}

/// Minimises `cost` over the box `lo ≤ x ≤ hi` from `start`, with an initial simplex of
/// `step` per coordinate (stepping away from the nearer bound), for at most `max_iters`
/// simplex iterations or until the costs' standard deviation falls below `tol`.
/// Returns the best point (inside the box) and its cost.
pub fn minimize(
    cost: &mut dyn FnMut(&[f64]) -> f64,
    start: &[f64],
    step: &[f64],
    lo: &[f64],
    hi: &[f64],
    tol: f64,
    max_iters: u64,
) -> (Vec<f64>, f64) {
    let (x0, _) = project(start, lo, hi);
    let mut simplex = vec![x0.clone()];
    for k in 0..x0.len() {
        let mut x = x0.clone();
        x[k] += if x[k] + step[k] <= hi[k] {
            step[k]
        } else {
            -step[k]
        };
        simplex.push(x);
    }
    let problem = Boxed {
        cost: RefCell::new(cost),
        lo,
        hi,
    };
    // The start's cost: the honest answer should argmin refuse to run (it only fails on
    // invalid settings or solver bugs).
    let start_cost = problem.cost(&x0).unwrap_or(f64::MAX);
    let Ok(solver) = NelderMead::new(simplex).with_sd_tolerance(tol.max(0.0)) else {
        return (x0, start_cost);
    };
    let Ok(mut result) = Executor::new(problem, solver)
        .configure(|state| state.max_iters(max_iters))
        .timer(false)
        .run()
    else {
        return (x0, start_cost);
    };
    let best_cost = result.state().get_best_cost();
    let best = result.state.take_best_param().unwrap_or(x0);
    let (p, _) = project(&best, lo, hi);
    (p, best_cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_rosenbrock_minimum() {
        let mut rosen = |x: &[f64]| (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2);
        let (x, c) = minimize(
            &mut rosen,
            &[-1.2, 1.0],
            &[0.5, 0.5],
            &[-5.0, -5.0],
            &[5.0, 5.0],
            1e-14,
            5000,
        );
        assert!(
            (x[0] - 1.0).abs() < 1e-4 && (x[1] - 1.0).abs() < 1e-4,
            "{x:?}"
        );
        assert!(c < 1e-8);
    }

    #[test]
    fn respects_the_bounds() {
        // Unconstrained minimum at (3, −2); the box stops it at x ≤ 1, y ≥ 0.
        let mut bowl = |x: &[f64]| (x[0] - 3.0).powi(2) + (x[1] + 2.0).powi(2);
        let (x, _) = minimize(
            &mut bowl,
            &[0.0, 0.5],
            &[0.2, 0.2],
            &[-1.0, 0.0],
            &[1.0, 1.0],
            1e-14,
            2000,
        );
        assert!((x[0] - 1.0).abs() < 1e-6 && x[1].abs() < 1e-6, "{x:?}");
    }
}
