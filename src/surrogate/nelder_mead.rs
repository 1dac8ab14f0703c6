//! A compact, bounded Nelder–Mead simplex minimiser (Lagarias et al. 1998's standard
//! coefficients: reflection 1, expansion 2, contraction ½, shrink ½).
//!
//! Why not a crate: the fit minimises over two or three parameters inside a box. `argmin`'s
//! Nelder–Mead has no bounds (one would clamp in the cost anyway) and brings a framework
//! (executor, state, observers, `rand`, `num-complex`) for what is fifty lines here. Bounds
//! are kept by projecting every trial point onto the box, which keeps the simplex feasible
//! and is the usual treatment for a handful of parameters.

/// Minimises `cost` over the box `lo ≤ x ≤ hi` from `start`, with an initial simplex of
/// `step` (per coordinate) and at most `max_evals` evaluations; stops when the simplex's cost
/// spread falls below `tol`. Returns (x, cost(x), evaluations).
pub fn minimize(
    cost: &mut dyn FnMut(&[f64]) -> f64,
    start: &[f64],
    step: &[f64],
    lo: &[f64],
    hi: &[f64],
    tol: f64,
    max_evals: usize,
) -> (Vec<f64>, f64, usize) {
    let n = start.len();
    let clamp = |x: &mut Vec<f64>| {
        for k in 0..n {
            x[k] = x[k].clamp(lo[k], hi[k]);
        }
    };
    let mut evals = 0;
    let mut eval = |x: &[f64], evals: &mut usize| {
        *evals += 1;
        let c = cost(x);
        if c.is_nan() { f64::INFINITY } else { c }
    };
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    let mut x0 = start.to_vec();
    clamp(&mut x0);
    let c0 = eval(&x0, &mut evals);
    simplex.push((x0.clone(), c0));
    for k in 0..n {
        let mut x = x0.clone();
        // Step away from the nearer bound so the vertex is distinct after clamping.
        x[k] += if x[k] + step[k] <= hi[k] { step[k] } else { -step[k] };
        clamp(&mut x);
        let c = eval(&x, &mut evals);
        simplex.push((x, c));
    }
    let point = |centroid: &[f64], worst: &[f64], coef: f64| -> Vec<f64> {
        let mut x: Vec<f64> = (0..n)
            .map(|k| centroid[k] + coef * (centroid[k] - worst[k]))
            .collect();
        clamp(&mut x);
        x
    };
    while evals < max_evals {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        if simplex[n].1 - simplex[0].1 <= tol {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|k| simplex[..n].iter().map(|(x, _)| x[k]).sum::<f64>() / n as f64)
            .collect();
        let worst = simplex[n].0.clone();
        let reflected = point(&centroid, &worst, 1.0);
        let cr = eval(&reflected, &mut evals);
        if cr < simplex[0].1 {
            let expanded = point(&centroid, &worst, 2.0);
            let ce = eval(&expanded, &mut evals);
            simplex[n] = if ce < cr {
                (expanded, ce)
            } else {
                (reflected, cr)
            };
        } else if cr < simplex[n - 1].1 {
            simplex[n] = (reflected, cr);
        } else {
            // Outside contraction if the reflection beat the worst, inside otherwise.
            let coef = if cr < simplex[n].1 { 0.5 } else { -0.5 };
            let contracted = point(&centroid, &worst, coef);
            let cc = eval(&contracted, &mut evals);
            if cc < simplex[n].1.min(cr) {
                simplex[n] = (contracted, cc);
            } else {
                let best = simplex[0].0.clone();
                for vertex in simplex.iter_mut().skip(1) {
                    let mut x: Vec<f64> = (0..n)
                        .map(|k| best[k] + 0.5 * (vertex.0[k] - best[k]))
                        .collect();
                    clamp(&mut x);
                    let c = eval(&x, &mut evals);
                    *vertex = (x, c);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (x, c) = simplex.swap_remove(0);
    (x, c, evals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_rosenbrock_minimum() {
        let mut rosen = |x: &[f64]| (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2);
        let (x, c, _) = minimize(
            &mut rosen,
            &[-1.2, 1.0],
            &[0.5, 0.5],
            &[-5.0, -5.0],
            &[5.0, 5.0],
            1e-14,
            5000,
        );
        assert!((x[0] - 1.0).abs() < 1e-4 && (x[1] - 1.0).abs() < 1e-4, "{x:?}");
        assert!(c < 1e-8);
    }

    #[test]
    fn respects_the_bounds() {
        // Unconstrained minimum at (3, −2); the box stops it at x ≤ 1, y ≥ 0.
        let mut bowl = |x: &[f64]| (x[0] - 3.0).powi(2) + (x[1] + 2.0).powi(2);
        let (x, _, _) = minimize(
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
