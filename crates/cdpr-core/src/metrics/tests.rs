//! The pruned, two-row Fréchet against the textbook recursion; helpers against hand values.

use super::frechet::frechet_reference;
use super::*;
use proptest::prelude::*;

fn points(max: usize) -> impl Strategy<Value = Vec<Point>> {
    prop::collection::vec(prop::array::uniform3(-1.0f64..1.0), 1..max)
}

proptest! {
    #[test]
    fn pruned_frechet_equals_the_full_recursion(p in points(40), q in points(40)) {
        let exact = frechet_reference(&p, &q);
        prop_assert_eq!(frechet(&p, &q), exact);
        prop_assert_eq!(frechet(&q, &p), exact);
    }

    #[test]
    fn pruned_frechet_is_exact_for_nearby_noisy_paths(
        noise in prop::collection::vec(prop::array::uniform3(-0.02f64..0.02), 60),
        shift in 0usize..5,
    ) {
        // A zig-zag that revisits places (where a band would fail) and a noisy, shifted copy.
        let p: Vec<Point> = (0..60).map(|k| {
            let s = k as f64 / 10.0;
            [s.sin(), (2.0 * s).cos(), (k % 7) as f64 * 0.01]
        }).collect();
        let q: Vec<Point> = (0..60usize).map(|k| {
            let src = p[k.saturating_sub(shift)];
            [src[0] + noise[k][0], src[1] + noise[k][1], src[2] + noise[k][2]]
        }).collect();
        prop_assert_eq!(frechet(&p, &q), frechet_reference(&p, &q));
    }
}

/// A dense wandering path (a random walk of small steps) and a noisy, lagging copy: what a
/// slow run and its tracking look like.
fn dense_pair(steps: &[Point], noise: &[Point], lag: usize) -> (Vec<Point>, Vec<Point>) {
    let mut p = vec![[0.0; 3]];
    for s in steps {
        let last = p[p.len() - 1];
        p.push([last[0] + s[0], last[1] + s[1], last[2] + s[2]]);
    }
    let q = (0..p.len())
        .map(|k| {
            let src = p[k.saturating_sub(lag)];
            let e = noise[k % noise.len()];
            [src[0] + e[0], src[1] + e[1], src[2] + e[2]]
        })
        .collect();
    (p, q)
}

proptest! {
    /// The thinned estimate brackets the exact distance: |estimate − exact| ≤ tolerance
    /// (the bound proved in `frechet_within`'s doc), and the budget is what forces it.
    #[test]
    fn thinned_frechet_brackets_the_exact_one(
        steps in prop::collection::vec(prop::array::uniform3(-0.01f64..0.01), 50..400),
        noise in prop::collection::vec(prop::array::uniform3(-0.03f64..0.03), 1..50),
        lag in 0usize..20,
        budget in 50usize..2000,
    ) {
        let (p, q) = dense_pair(&steps, &noise, lag);
        let exact = frechet_reference(&p, &q);
        let est = frechet_within(&p, &q, budget);
        prop_assert!(
            (est.distance - exact).abs() <= est.tolerance + 1e-12,
            "estimate {} ± {} vs exact {}", est.distance, est.tolerance, exact
        );
        // With room for the whole programme: exact, bit for bit.
        let full = frechet_within(&p, &q, usize::MAX);
        prop_assert_eq!((full.distance, full.tolerance), (exact, 0.0));
    }
}

proptest! {
    /// Held points (a reference standing still for thousands of samples) are collapsed
    /// before the programme: the distance is that of the paths with every repeat.
    #[test]
    fn repeated_points_leave_the_distance_unchanged(
        p in points(20), q in points(20),
        repeats in prop::collection::vec(0usize..6, 20),
    ) {
        let hold = |x: &[Point]| -> Vec<Point> {
            x.iter().zip(repeats.iter().cycle()).flat_map(|(v, r)| std::iter::repeat_n(*v, r + 1)).collect()
        };
        let (hp, hq) = (hold(&p), hold(&q));
        prop_assert_eq!(frechet(&hp, &hq), frechet_reference(&hp, &hq));
        prop_assert_eq!(frechet(&hp, &q), frechet_reference(&hp, &q));
    }
}

/// Issue 15: a slow run (600 s, a point every 5 µm of path, 3 mm of error) made the Fréchet
/// programme cost several times the physics. Within a budget it thins the paths; the
/// tolerance it reports is small against the distance, and honest (checked against the exact
/// programme on a shorter piece of the same kind of path below and by the property above).
#[test]
fn a_dense_slow_path_is_thinned_to_its_budget_with_a_small_tolerance() {
    // 60 000 samples along a helix, 5 µm apart, the copy 3 mm off and lagging 200 samples.
    let n: usize = 60_000;
    let p: Vec<Point> = (0..n)
        .map(|k| {
            let s = k as f64 * 5e-6;
            [0.2 * (s / 0.2).cos(), 0.2 * (s / 0.2).sin(), 0.01 * s]
        })
        .collect();
    let q: Vec<Point> = (0..n)
        .map(|k| {
            let src = p[k.saturating_sub(200)];
            [
                src[0] + 0.003 * (k as f64 / 900.0).sin(),
                src[1],
                src[2] + 0.001,
            ]
        })
        .collect();
    let budget = 200 * n;
    let est = frechet_within(&p, &q, budget);
    assert!(est.tolerance > 0.0, "thinned: {est:?}");
    assert!(est.tolerance < 0.02 * est.distance, "{est:?}");
    let exact = frechet(&p, &q);
    assert!(
        (est.distance - exact).abs() <= est.tolerance,
        "{est:?} vs {exact}"
    );
}

#[test]
fn resample_interpolates_linearly_and_holds_outside() {
    let t_src = [0.0, 1.0, 3.0];
    let x_src = [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [3.0, 2.0, 1.0]];
    let out = resample(&t_src, &x_src, &[-1.0, 0.5, 2.0, 3.0, 9.0]);
    assert_eq!(out[0], [0.0, 0.0, 0.0]);
    assert_eq!(out[1], [0.5, 1.0, 1.5]);
    assert_eq!(out[2], [2.0, 2.0, 2.0]);
    assert_eq!(out[3], [3.0, 2.0, 1.0]);
    assert_eq!(out[4], [3.0, 2.0, 1.0]);
}

#[test]
fn nrmse_is_null_for_a_constant_reference_channel() {
    let r: Vec<Point> = (0..10).map(|k| [k as f64, 0.5, 0.0]).collect();
    let a: Vec<Point> = r.iter().map(|p| [p[0] + 0.1, p[1] + 0.1, 0.0]).collect();
    let s = error_stats(&r, &a);
    assert!(s.nrmse[0].is_some());
    assert_eq!(s.nrmse[1], None);
    assert_eq!(s.nrmse[2], None);
}

/// A channel that stands still (rssu2's x, y, z) once made every cell of the dynamic
/// programme reachable: 80 000 samples took a minute. A held point now shrinks to one and the
/// bounds end the search: the work, counted in cells, is linear in the samples — the exact
/// answer comes within a budget of two cells a sample, where a quadratic programme (4 × 10¹⁰
/// cells here) would overrun it at its first check and come back thinned, with a tolerance.
/// (Its time: `benches/metrics.rs`, `frechet_200000_still_vs_wobble`.)
#[test]
fn frechet_of_paths_that_stand_still_is_exact_within_linear_work() {
    let n = 200_000;
    let budget = 2 * n;
    let exact = |p: &[Point], q: &[Point]| {
        let e = frechet_within(p, q, budget);
        assert_eq!(
            (e.tolerance, e.spacing),
            (0.0, 0.0),
            "not exact within {budget} cells: {e:?}"
        );
        e.distance
    };
    let still: Vec<Point> = vec![[0.1, -0.2, 1.5]; n];
    assert_eq!(exact(&still, &still), 0.0);
    // A held reference against a follower that wobbles: every follower point is coupled to
    // the one reference point, so F is the follower's largest excursion.
    let wobble: Vec<Point> = (0..n)
        .map(|k| {
            let s = k as f64 * 1e-3;
            [0.1 + 1e-4 * s.sin(), -0.2, 1.5 + 2e-4 * (3.0 * s).cos()]
        })
        .collect();
    let largest = wobble
        .iter()
        .map(|q| {
            let d = [q[0] - 0.1, q[1] + 0.2, q[2] - 1.5];
            (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
        })
        .fold(0.0, f64::max);
    assert_eq!(exact(&still, &wobble), largest);
    assert_eq!(exact(&wobble, &still), largest);
    let (a, b) = (&wobble[..500], &still[..3]);
    assert!((frechet(a, b) - frechet_reference(a, b)).abs() <= 1e-9);
}

proptest! {
    /// Issue 15: the tiled cross-correlation sums are the textbook ones bit for bit (same
    /// terms added in the same order), so the lag found is the same, whatever the lengths
    /// (tile edges, the four-lag groups and their tails).
    #[test]
    fn tiled_lag_sums_equal_the_straight_loop_bit_for_bit(
        r in prop::collection::vec(prop::array::uniform3(-1.0f64..1.0), 3..5000),
        shift in 0usize..40,
        lags in 0usize..60,
    ) {
        let n = r.len();
        let a: Vec<Point> = (0..n).map(|k| {
            let p = r[k.saturating_sub(shift)];
            [p[0] * 0.9 + 0.01, p[1] - 0.02, p[2] * 1.1]
        }).collect();
        let lags = lags.min(n - 2);
        let fast = signal::tiled_dots(&r, &a, lags);
        let slow = signal::straight_dots(&r, &a, lags);
        prop_assert_eq!(fast.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        slow.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(lag(&r, &a, lags), signal::lag_reference(&r, &a, lags));
    }
}

/// Long inputs cross many tiles: the same sums, and the lag of a delayed copy found.
#[test]
fn tiled_lag_on_a_long_delayed_copy_matches_the_straight_loop() {
    let n: usize = 20_000;
    let r: Vec<Point> = (0..n)
        .map(|k| {
            let s = k as f64 * 1e-3;
            [s.sin(), (0.7 * s).cos(), 0.3 * (2.1 * s).sin()]
        })
        .collect();
    let a: Vec<Point> = (0..n).map(|k| r[k.saturating_sub(35)]).collect();
    let fast = signal::tiled_dots(&r, &a, 100);
    let slow = signal::straight_dots(&r, &a, 100);
    assert!(
        fast.iter()
            .zip(&slow)
            .all(|(x, y)| x.to_bits() == y.to_bits())
    );
    assert_eq!(lag(&r, &a, 100), 35);
    assert_eq!(signal::lag_reference(&r, &a, 100), 35);
}

proptest! {
    /// Issue 15: the blocked row of the Fréchet programme (four cells per step of the
    /// left-to-right chain) gives the cell-by-cell values bit for bit, blocked cells (+∞) and
    /// unreachable predecessors included.
    #[test]
    fn blocked_frechet_row_equals_the_cell_by_cell_row(
        q in prop::collection::vec(prop::array::uniform3(-1.0f64..1.0), 2..40),
        prev_raw in prop::collection::vec(prop::option::weighted(0.8, 0.0f64..4.0), 40),
        pi in prop::array::uniform3(-1.0f64..1.0),
        bound in 0.1f64..4.0,
        left in prop::option::weighted(0.7, 0.0f64..4.0),
        lo_frac in 0.0f64..1.0,
    ) {
        let m = q.len();
        let prev: Vec<f64> = (0..m).map(|j| prev_raw[j].unwrap_or(f64::INFINITY)).collect();
        let lo = ((m - 1) as f64 * lo_frac * 0.5) as usize;
        let hi = m - 1;
        let left = left.unwrap_or(f64::INFINITY);
        let (mut fast, mut slow) = (vec![f64::NAN; m], vec![f64::NAN; m]);
        let lf = frechet::row_span_fast(&pi, &q, &prev, &mut fast, (lo, hi), bound, left);
        let ls = frechet::row_span_reference(&pi, &q, &prev, &mut slow, lo, hi, bound, left);
        prop_assert_eq!(lf.to_bits(), ls.to_bits());
        for j in lo + 1..=hi {
            prop_assert_eq!(fast[j].to_bits(), slow[j].to_bits(), "cell {}", j);
        }
    }
}

/// The textbook recursion in two rows (for paths too long for the full table).
fn frechet_two_rows(p: &[Point], q: &[Point]) -> f64 {
    let d = |a: &Point, b: &Point| {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    let mut prev: Vec<f64> = Vec::with_capacity(q.len());
    for (i, pi) in p.iter().enumerate() {
        let mut cur = Vec::with_capacity(q.len());
        for (j, qj) in q.iter().enumerate() {
            let best = match (i, j) {
                (0, 0) => 0.0,
                (0, _) => cur[j - 1],
                (_, 0) => prev[0],
                _ => f64::min(f64::min(prev[j - 1], prev[j]), cur[j - 1]),
            };
            cur.push(d(pi, qj).max(best));
        }
        prev = cur;
    }
    prev[q.len() - 1]
}

#[test]
fn long_paths_first_guessed_thinned_are_still_exact() {
    // Above the length where the thinned guess is taken: a tracking run's shape (a lagging,
    // noisy copy of a winding path), and one whose error peaks late.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut noise = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let p: Vec<Point> = (0..4500)
        .map(|k| {
            let s = k as f64 * 1e-3;
            [0.1 * (3.0 * s).sin(), 0.1 * (2.0 * s).cos(), 0.02 * s]
        })
        .collect();
    let q: Vec<Point> = (0..4500usize)
        .map(|k| {
            let src = p[k.saturating_sub(12)];
            let bump = if k > 4000 { 2e-3 } else { 0.0 };
            [
                src[0] + 1e-4 * noise() + bump,
                src[1] + 1e-4 * noise(),
                src[2] + 1e-4 * noise(),
            ]
        })
        .collect();
    assert_eq!(frechet(&p, &q), frechet_two_rows(&p, &q));
    assert_eq!(frechet(&q, &p), frechet_two_rows(&p, &q));
}
