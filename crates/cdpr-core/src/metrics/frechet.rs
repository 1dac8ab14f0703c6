//! Discrete Fréchet distance (Eiter & Mannila 1994) in O(min(n, m)) memory.
//!
//! The dynamic programme c(i, j) = max(d(pᵢ, q_j), min(c(i−1, j), c(i−1, j−1), c(i, j−1)))
//! needs only the previous row. Rows run over the shorter path. Work is pruned with an upper
//! bound U taken from a cheap coupling (greedy walk, or the proportional diagonal): a cell with
//! d > U can lie on no coupling better than U, so it is treated as blocked, and each row is
//! computed only over the span reachable from the previous row. The optimal coupling has every
//! cell ≤ F ≤ U, so it is never pruned: the result is exact. For two paths that follow each
//! other (a trajectory and its tracking) the span is a narrow band and the cost is ~O(n·w);
//! for unrelated paths it degrades gracefully to the full O(n·m). Squared distances are used
//! throughout (max/min commute with the square root).

/// A point in 3D, m.
pub type Point = [f64; 3];

#[inline]
fn dist2(a: &Point, b: &Point) -> f64 {
    let (dx, dy, dz) = (a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    dx * dx + dy * dy + dz * dz
}

/// Largest squared distance along a greedy monotone coupling from (0, 0) to (n−1, m−1).
fn greedy_bound2(p: &[Point], q: &[Point]) -> f64 {
    let (n, m) = (p.len(), q.len());
    let (mut i, mut j) = (0, 0);
    let mut worst = dist2(&p[0], &q[0]);
    while i + 1 < n || j + 1 < m {
        let step = if i + 1 == n {
            (i, j + 1)
        } else if j + 1 == m {
            (i + 1, j)
        } else {
            let candidates = [(i + 1, j + 1), (i + 1, j), (i, j + 1)];
            let mut best = candidates[0];
            let mut best_d = dist2(&p[best.0], &q[best.1]);
            for &(a, b) in &candidates[1..] {
                let d = dist2(&p[a], &q[b]);
                if d < best_d {
                    best = (a, b);
                    best_d = d;
                }
            }
            best
        };
        (i, j) = step;
        worst = worst.max(dist2(&p[i], &q[j]));
    }
    worst
}

/// Largest squared distance along the proportional coupling j = ⌊i (m−1)/(n−1)⌋ (n ≥ m),
/// filled in with horizontal steps so that it is monotone and connected.
fn diagonal_bound2(p: &[Point], q: &[Point]) -> f64 {
    let (n, m) = (p.len(), q.len());
    let mut worst = 0.0f64;
    let mut j_prev = 0;
    for (i, pi) in p.iter().enumerate() {
        let j = if n > 1 { i * (m - 1) / (n - 1) } else { m - 1 };
        for qj in &q[j_prev..=j] {
            worst = worst.max(dist2(pi, qj));
        }
        j_prev = j;
    }
    worst
}

/// A lower bound of the Fréchet distance, squared. The end points are always coupled; and
/// every point of one path is coupled to some point of the other, which lies within the
/// diameter of that other path's bounding box from its first point: so
/// F ≥ max_j |q_j − p_0| − diam(p), and the same with the paths swapped. Tight when one path
/// stands still (a constant channel, a held pose), where the dynamic programme would be at its
/// slowest: every cell is within the upper bound.
fn lower_bound2(p: &[Point], q: &[Point]) -> f64 {
    let diameter = |x: &[Point]| {
        let (mut lo, mut hi) = (x[0], x[0]);
        for v in x {
            for c in 0..3 {
                lo[c] = lo[c].min(v[c]);
                hi[c] = hi[c].max(v[c]);
            }
        }
        dist2(&lo, &hi).sqrt()
    };
    let reach = |from: &Point, x: &[Point]| x.iter().map(|v| dist2(from, v)).fold(0.0, f64::max);
    let ends = dist2(&p[0], &q[0]).max(dist2(&p[p.len() - 1], &q[q.len() - 1]));
    let one = reach(&p[0], q).sqrt() - diameter(p);
    let other = reach(&q[0], p).sqrt() - diameter(q);
    let hull = one.max(other).max(0.0);
    ends.max(hull * hull)
}

/// Cells j ∈ [lo+1, hi] of a row, both of whose upper neighbours are valid: cell j is
/// f_j(left) with f_j(x) = max(a_j, min(b_j, x)), a_j its distance (+∞ when blocked by the
/// bound) and b_j = min(prev[j−1], prev[j]). Done one cell after the other, every cell waits
/// for its left neighbour (a chain of min and max); instead four cells at a time use
/// f_{j+1}∘f_j(x) = max(A, min(B, x)) with A = max(a_{j+1}, min(b_{j+1}, a_j)) and
/// B = min(b_j, b_{j+1}) (min and max distribute over each other), so each cell of a block
/// depends on the block's `left` only. Only min and max of the same numbers: bit for bit the
/// cell-by-cell values. Returns the last cell's value (the new `left`).
#[allow(clippy::too_many_arguments)]
#[inline]
fn row_span(
    pi: &Point,
    q: &[Point],
    prev: &[f64],
    cur: &mut [f64],
    lo: usize,
    hi: usize,
    bound: f64,
    mut left: f64,
) -> f64 {
    // Plain comparisons (one instruction each): no NaN can arise here (finite points, and
    // +∞ only ever meets finite numbers or +∞ in min and max), so f64::min/max's NaN rules,
    // which cost several instructions each, are not needed.
    #[inline(always)]
    fn mn(a: f64, b: f64) -> f64 {
        if a < b { a } else { b }
    }
    #[inline(always)]
    fn mx(a: f64, b: f64) -> f64 {
        if a > b { a } else { b }
    }
    let cell = |j: usize| {
        let d = dist2(pi, &q[j]);
        let a = if d > bound { f64::INFINITY } else { d };
        (a, mn(prev[j - 1], prev[j]))
    };
    let mut j = lo + 1;
    while j + 3 <= hi {
        let (a0, b0) = cell(j);
        let (a1, b1) = cell(j + 1);
        let (a2, b2) = cell(j + 2);
        let (a3, b3) = cell(j + 3);
        // Prefix compositions (A_k, B_k) = f_{j+k}∘…∘f_j, independent of `left`.
        let (c1, e1) = (mx(a1, mn(b1, a0)), mn(b0, b1));
        let (c2, e2) = (mx(a2, mn(b2, c1)), mn(e1, b2));
        let (c3, e3) = (mx(a3, mn(b3, c2)), mn(e2, b3));
        cur[j] = mx(a0, mn(b0, left));
        cur[j + 1] = mx(c1, mn(e1, left));
        cur[j + 2] = mx(c2, mn(e2, left));
        left = mx(c3, mn(e3, left));
        cur[j + 3] = left;
        j += 4;
    }
    while j <= hi {
        let (a, b) = cell(j);
        left = mx(a, mn(b, left));
        cur[j] = left;
        j += 1;
    }
    left
}

/// The hot loop as it was, cell by cell (the oracle of [`row_span`]'s tests).
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn row_span_reference(
    pi: &Point,
    q: &[Point],
    prev: &[f64],
    cur: &mut [f64],
    lo: usize,
    hi: usize,
    bound: f64,
    mut left: f64,
) -> f64 {
    let first = |d: f64, best: f64| {
        if d > bound {
            f64::INFINITY
        } else {
            d.max(best)
        }
    };
    for j in lo + 1..=hi {
        let v = first(dist2(pi, &q[j]), prev[j - 1].min(prev[j]).min(left));
        cur[j] = v;
        left = v;
    }
    left
}

#[cfg(test)]
pub(crate) fn row_span_fast(
    pi: &Point,
    q: &[Point],
    prev: &[f64],
    cur: &mut [f64],
    span: (usize, usize),
    bound: f64,
    left: f64,
) -> f64 {
    row_span(pi, q, prev, cur, span.0, span.1, bound, left)
}

/// Bounds closer than this (m) end the search: the result is then exact to 1 nm.
const RESOLUTION: f64 = 1e-9;

/// Discrete Fréchet distance between two polylines, m (exact, or within 1 nm of it when a
/// cheap lower bound meets the upper one). NaN if either is empty.
pub fn frechet(p: &[Point], q: &[Point]) -> f64 {
    // No budget to exceed: never `Err`.
    pruned(p, q, usize::MAX).unwrap_or(f64::NAN)
}

/// A Fréchet distance computed within a work budget (see [`frechet_within`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrechetEstimate {
    /// m.
    pub distance: f64,
    /// The discrete Fréchet distance of the full paths lies within ±`tolerance` of
    /// `distance`, m (0: exact).
    pub tolerance: f64,
    /// Least spacing of the points kept of each path, m (0: every point kept).
    pub spacing: f64,
}

/// [`frechet`] when its pruned programme fits in `max_cells` cells; otherwise the exact
/// distance of both paths thinned to points at least `spacing` apart (a point is kept when it
/// lies `spacing` or more from the last one kept; the ends are kept), with the spacing chosen
/// so that the programme fits.
///
/// Why the thinned value is within ±(δ_P + δ_Q) of the full one, δ being the largest distance
/// of a dropped point from the kept point before it: map each point to that kept point, its
/// owner. (≤) An optimal coupling of the thinned paths, walked block by block over the points
/// each pair owns, is a coupling of the full paths whose pairs lie within δ_P + δ_Q more.
/// (≥) The owners of an optimal coupling of the full paths form a coupling of the thinned
/// ones, again within δ_P + δ_Q. The tolerance reported is that sum, measured.
///
/// For a trajectory and its tracking the cost is the path's length over the spacing times the
/// band's width (twice the distance over the spacing): a slow 600 s run sampled every 5 µm
/// with a 3 mm error is 7 × 10⁸ cells, where a spacing of 20 µm takes 4 × 10⁷.
pub fn frechet_within(p: &[Point], q: &[Point], max_cells: usize) -> FrechetEstimate {
    let exact = |distance| FrechetEstimate {
        distance,
        tolerance: 0.0,
        spacing: 0.0,
    };
    let projected = match pruned(p, q, max_cells) {
        Ok(d) => return exact(d),
        Err(projected) => projected,
    };
    let step = |x: &[Point]| {
        x.windows(2)
            .map(|w| dist2(&w[0], &w[1]).sqrt())
            .sum::<f64>()
            / x.len() as f64
    };
    // Cells go as 1/spacing² (rows and band both shrink): aim at half the budget.
    let mut spacing =
        step(p).max(step(q)) * (projected as f64 / (max_cells as f64 / 2.0).max(1.0)).sqrt();
    if !(spacing.is_finite() && spacing > 0.0) {
        return exact(frechet(p, q));
    }
    loop {
        let (tp, dp) = thin(p, spacing);
        let (tq, dq) = thin(q, spacing);
        // Two points per path at the least: nothing left to thin, whatever the cost.
        let budget = if tp.len() <= 2 && tq.len() <= 2 {
            usize::MAX
        } else {
            max_cells
        };
        if let Ok(distance) = pruned(&tp, &tq, budget) {
            return FrechetEstimate {
                distance,
                tolerance: dp + dq,
                spacing,
            };
        }
        spacing *= 2.0;
    }
}

/// `x` with a point kept when it lies `spacing` or more from the last kept one (the ends are
/// kept), and the largest distance of a dropped point from the kept point before it.
fn thin(x: &[Point], spacing: f64) -> (Vec<Point>, f64) {
    let s2 = spacing * spacing;
    let mut kept = Vec::with_capacity(x.len().min(1024));
    let mut worst2 = 0.0f64;
    let Some((last, body)) = x.split_last() else {
        return (kept, 0.0);
    };
    for v in body {
        match kept.last() {
            Some(owner) if dist2(owner, v) < s2 => worst2 = worst2.max(dist2(owner, v)),
            _ => kept.push(*v),
        }
    }
    kept.push(*last);
    (kept, worst2.sqrt())
}

/// `x` without consecutive repeats of a point (borrowed when there are none).
fn dedup(x: &[Point]) -> std::borrow::Cow<'_, [Point]> {
    if x.windows(2).all(|w| w[0] != w[1]) {
        return std::borrow::Cow::Borrowed(x);
    }
    let mut out = x.to_vec();
    out.dedup();
    std::borrow::Cow::Owned(out)
}

/// Paths of at least this many points get a thinned guess of their distance first.
const GUESS_FROM: usize = 4096;
/// The thinned guess keeps points this many mean steps apart.
const GUESS_THINNING: f64 = 8.0;

/// Mean distance between consecutive points, m.
fn mean_step(x: &[Point]) -> f64 {
    x.windows(2)
        .map(|w| dist2(&w[0], &w[1]).sqrt())
        .sum::<f64>()
        / x.len().max(1) as f64
}

/// The pruned programme; `Err(projected cells)` as soon as it is seen to need more than
/// `max_cells` cells (checked every 256 rows from the cells done so far).
fn pruned(p: &[Point], q: &[Point], max_cells: usize) -> Result<f64, usize> {
    if p.is_empty() || q.is_empty() {
        return Ok(f64::NAN);
    }
    // A point repeated at once adds nothing (a coupling can stay on it): a held reference,
    // thousands of equal samples, shrinks to one, and its block of cells to a row.
    let (p, q) = (dedup(p), dedup(q));
    // Outer loop over the longer path, rows (the memory) over the shorter one.
    let (p, q) = if p.len() >= q.len() {
        (&p[..], &q[..])
    } else {
        (&q[..], &p[..])
    };
    let upper = greedy_bound2(p, q).min(diagonal_bound2(p, q));
    let lower = lower_bound2(p, q);
    if upper.sqrt() - lower.sqrt() <= RESOLUTION {
        return Ok(upper.sqrt());
    }
    // A long pair of paths: first the distance of both thinned (a hundredth of the cells),
    // F_t with tolerance δ, so F ≤ F_t + δ; the programme pruned there reaches the end at
    // once, with the band of about F instead of the doubling search's two programmes.
    if p.len() >= GUESS_FROM {
        let spacing = GUESS_THINNING * mean_step(p).max(mean_step(q));
        let ((tp, dp), (tq, dq)) = (thin(p, spacing), thin(q, spacing));
        if spacing > 0.0
            && tp.len() < p.len() / 2
            && let Ok(thinned) = pruned(&tp, &tq, max_cells)
        {
            // A relative margin over the rounding of the three sums.
            let guess = (thinned + dp + dq) * (1.0 + 1e-12);
            if let Some(d) = decide(p, q, (guess * guess).min(upper), max_cells)? {
                return Ok(d);
            }
        }
    }
    // Search the pruning bound upwards from well below the coupling's: a programme pruned at
    // ε < F cannot reach the end (so F > ε), and costs only the cells within ε; doubling ε,
    // the whole search costs about twice its last programme, whose band is that of ≤ 2F
    // instead of that of the coupling's bound (which, for a run that follows its reference
    // within tens of µm but is sampled every µm, can be a hundred times wider).
    let mut eps = lower.sqrt().max(upper.sqrt() / 64.0);
    loop {
        let bound = (eps * eps).min(upper);
        match decide(p, q, bound, max_cells)? {
            Some(d) => return Ok(d),
            // Cannot happen at the coupling's own bound (it is reachable); stay safe.
            None if bound >= upper => return Ok(upper.sqrt()),
            None => eps *= 2.0,
        }
    }
}

/// The programme pruned at `bound` (squared): `Some(F)` when the end is reachable through
/// cells within the bound (then exact), `None` when not (then F exceeds it).
fn decide(p: &[Point], q: &[Point], bound: f64, max_cells: usize) -> Result<Option<f64>, usize> {
    let n = p.len();
    let mut cells = 0usize;
    let m = q.len();
    let inf = f64::INFINITY;
    let mut prev = vec![inf; m];
    let mut cur = vec![inf; m];
    // Row 0: only horizontal moves.
    let (mut lo, mut hi) = (0usize, 0usize);
    let mut left = inf;
    for j in 0..m {
        let d = dist2(&p[0], &q[j]);
        let v = if j == 0 { d } else { d.max(left) };
        if v > bound {
            break;
        }
        prev[j] = v;
        left = v;
        hi = j;
    }
    for (row, pi) in p.iter().enumerate().skip(1) {
        if row % 256 == 0 && max_cells != usize::MAX {
            let projected = (cells as f64 * n as f64 / row as f64) as usize;
            if projected > max_cells {
                return Err(projected);
            }
        }
        // Cells j ∈ [lo, hi + 1] can be entered from the previous row; further right only
        // from the left. A blocked cell (d > bound) or an unreachable one holds +∞, which
        // max/min propagate without branches.
        let mut left = inf;
        let first = |d: f64, best: f64| if d > bound { inf } else { d.max(best) };
        cur[lo] = first(dist2(pi, &q[lo]), prev[lo]);
        left = left.min(cur[lo]);
        // Hot loop: both predecessors in the previous row are valid here.
        left = row_span(pi, q, &prev, &mut cur, lo, hi, bound, left);
        // Past the previous row's span: the diagonal from (i−1, hi), then only from the left.
        let mut end = hi;
        if hi + 1 < m {
            let v = first(dist2(pi, &q[hi + 1]), prev[hi].min(left));
            cur[hi + 1] = v;
            left = v;
            end = hi + 1;
            while left < inf && end + 1 < m {
                let v = first(dist2(pi, &q[end + 1]), left);
                if v == inf {
                    break;
                }
                cur[end + 1] = v;
                left = v;
                end += 1;
            }
        }
        // The new span: first and last reachable cells.
        let Some(row_lo) = (lo..=end).find(|&j| cur[j] < inf) else {
            // Nothing reachable in this row: the end is not either.
            return Ok(None);
        };
        let row_hi = (row_lo..=end)
            .rev()
            .find(|&j| cur[j] < inf)
            .unwrap_or(row_lo);
        cells += end - lo + 1;
        std::mem::swap(&mut prev, &mut cur);
        lo = row_lo;
        hi = row_hi;
    }
    Ok((hi == m - 1).then(|| prev[m - 1].sqrt()))
}

/// The textbook O(n·m)-memory recursion, for tests of [`frechet`] on small inputs.
#[cfg(test)]
pub(crate) fn frechet_reference(p: &[Point], q: &[Point]) -> f64 {
    let (n, m) = (p.len(), q.len());
    let mut c = vec![vec![0.0; m]; n];
    for i in 0..n {
        for j in 0..m {
            let d = dist2(&p[i], &q[j]).sqrt();
            c[i][j] = match (i, j) {
                (0, 0) => d,
                (0, _) => d.max(c[0][j - 1]),
                (_, 0) => d.max(c[i - 1][0]),
                _ => d.max(c[i - 1][j].min(c[i - 1][j - 1]).min(c[i][j - 1])),
            };
        }
    }
    c[n - 1][m - 1]
}
