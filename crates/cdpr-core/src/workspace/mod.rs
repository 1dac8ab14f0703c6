//! The wrench-feasible workspace of a CDPR: where the tension distribution can hold the
//! platform against gravity with every tension within the robot's bounds (pure statics).
//!
//! A position is *feasible* when, for every orientation of the chosen set (zero rotation by
//! default; with an [`OrientationRange`] every combination of the sampled roll, pitch and yaw),
//! tensions f_min ≤ f ≤ f_max with W f + w_g = 0 exist. That is decided exactly by the
//! dual active-set QP behind [`statics::tension_distribution`] (it proves infeasibility). The
//! *capacity* of a pose is the largest minimum tension reachable with 0 ≤ f ≤ f_max,
//! [`statics::largest_min_tension`] (an LP): feasible ⇔ capacity ≥ f_min, and it says how far
//! a bound such as the default 5 N is from being met.
//!
//! - [`feasible_set`]: feasibility on an N³ grid of cell centres over a region (by default the
//!   robot's frame box: the platform cannot leave the structure) and the volume with its
//!   resolution error;
//! - [`check_box`]: whether a box (the robot file's `[workspace]`) is contained, on a fine
//!   sampling of it including its faces and corners;
//! - [`min_tension_reach`]: where a minimum tension becomes reachable (thresholds in z);
//! - [`slice`]: capacities on a plane, for the plots ([`plot`]);
//! - [`FeasibilityMap`]: a precomputed node grid for fast reachability queries (the surrogate's
//!   combination step).

pub mod legs;
mod map;
pub mod plot;
mod reach;
pub mod survey;

pub use map::FeasibilityMap;
pub use reach::{AxisInterval, MinTensionReach, min_tension_reach};

use crate::interference;
use crate::kinematics::{self, Pose};
use crate::robot::{Aabb, Dof, Robot, TensionBounds};
use crate::statics;
use nalgebra::{DMatrix, DVector, Vector3};
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Orientations required at every point: all combinations of `levels` evenly spaced values
/// in [−max_angle, max_angle] for roll, pitch and yaw (levels³ orientations; 3 levels give
/// {−θ, 0, θ}³ = 27 combinations, zero included).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OrientationRange {
    /// θ, rad.
    pub max_angle: f64,
    /// Samples per angle, ≥ 2.
    pub levels: usize,
}

impl OrientationRange {
    /// The (roll, pitch, yaw) samples; a 3-DOF robot holds its orientation at zero, so it gets
    /// only the zero rotation.
    pub fn samples(range: Option<&OrientationRange>, dof: Dof) -> Vec<Vector3<f64>> {
        let Some(r) = range.filter(|_| dof == Dof::Six) else {
            return vec![Vector3::zeros()];
        };
        let levels = r.levels.max(2);
        let values: Vec<f64> = (0..levels)
            .map(|k| -r.max_angle + 2.0 * r.max_angle * k as f64 / (levels - 1) as f64)
            .collect();
        let mut out = Vec::with_capacity(levels.pow(3));
        // Zero first when present: it fails first near the boundary, so checks stop early.
        for &roll in &values {
            for &pitch in &values {
                for &yaw in &values {
                    out.push(Vector3::new(roll, pitch, yaw));
                }
            }
        }
        out.sort_by(|a, b| a.norm().total_cmp(&b.norm()));
        out
    }
}

/// Whether tensions within `bounds` hold the platform at `pose`: the exact active-set QP
/// alone ([`statics::tension_distribution`] would also run the LP that explains an infeasible
/// pose, 20× the cost, which a yes/no question does not need).
#[inline]
pub fn feasible_at(robot: &Robot, pose: &Pose, bounds: TensionBounds) -> bool {
    let ik = kinematics::inverse(robot, pose);
    let w = ik.wrench_matrix();
    let target = -statics::gravity_rows(robot, &ik);
    let m = w.ncols();
    statics::min_norm_qp(
        &w,
        &target,
        &DVector::from_element(m, bounds.min),
        &DVector::from_element(m, bounds.max),
    )
    .is_ok()
}

/// Which kinds of interference ([`crate::interference`]) occur at `position` over the
/// orientations, held to `clearance` (m): 1 for each kind seen at any of them, else 0.
pub fn interference_at(
    robot: &Robot,
    position: &Vector3<f64>,
    orientations: &[Vector3<f64>],
    clearance: f64,
) -> interference::Counts {
    let mut seen = interference::Counts::default();
    for rpy in orientations {
        let pose = kinematics::effective_pose(
            robot,
            &Pose {
                position: *position,
                rpy: *rpy,
            },
        );
        let counts = interference::check(robot, &pose, clearance).counts();
        for kind in interference::Kind::ALL {
            if counts.get(kind) > 0 && seen.get(kind) == 0 {
                seen.add(kind, 1);
            }
        }
    }
    seen
}

/// Marks the slice's cells where something interferes (see [`interference_at`]).
pub fn mark_interference(
    slice: &mut Slice,
    robot: &Robot,
    orientations: &[Vector3<f64>],
    clearance: f64,
) {
    let n_u = slice.u_edges.len() - 1;
    let n_v = slice.v_edges.len() - 1;
    let job = |index: usize| {
        let (a, b) = (index % n_u, index / n_u);
        let u = 0.5 * (slice.u_edges[a] + slice.u_edges[a + 1]);
        let v = 0.5 * (slice.v_edges[b] + slice.v_edges[b + 1]);
        let p = match slice.plane {
            Plane::Xy(z) => Vector3::new(u, v, z),
            Plane::Xz(y) => Vector3::new(u, y, v),
        };
        interference_at(robot, &p, orientations, clearance).total() > 0
    };
    slice.colliding = parallel_map(n_u * n_v, &job, &|_| {});
}

/// Whether tensions within `bounds` hold the platform at `position` for every orientation of
/// `orientations` (the exact QP; stops at the first failure).
pub fn pose_feasible(
    robot: &Robot,
    position: &Vector3<f64>,
    orientations: &[Vector3<f64>],
    bounds: TensionBounds,
) -> bool {
    orientations.iter().all(|rpy| {
        let pose = Pose {
            position: *position,
            rpy: *rpy,
        };
        feasible_at(robot, &pose, bounds)
    })
}

/// The largest minimum tension reachable at `pose` with 0 ≤ f ≤ f_max (N), the LP
/// [`statics::largest_min_tension`]; None when no such tensions hold the platform at all.
pub fn capacity(robot: &Robot, pose: &Pose, f_max: f64) -> Option<f64> {
    let ik = kinematics::inverse(robot, pose);
    let w: DMatrix<f64> = ik.wrench_matrix();
    let target: DVector<f64> = -statics::gravity_rows(robot, &ik);
    statics::largest_min_tension(&w, &target, f_max).map(|(t, _)| t)
}

/// The smallest capacity over `orientations` at `position` (None if any orientation has none).
pub fn capacity_over(
    robot: &Robot,
    position: &Vector3<f64>,
    orientations: &[Vector3<f64>],
    f_max: f64,
) -> Option<f64> {
    let mut lowest = f64::INFINITY;
    for rpy in orientations {
        let pose = Pose {
            position: *position,
            rpy: *rpy,
        };
        lowest = lowest.min(capacity(robot, &pose, f_max)?);
    }
    Some(lowest)
}

/// N_x × N_y × N_z cells over a region; samples at the cell centres.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Grid {
    pub region: Aabb,
    pub cells: [usize; 3],
}

impl Grid {
    /// `n` cells along each axis (at least 1).
    pub fn cubic(region: Aabb, n: usize) -> Grid {
        Grid {
            region,
            cells: [n.max(1); 3],
        }
    }
    pub fn cell_size(&self) -> Vector3<f64> {
        let s = self.region.size();
        Vector3::new(
            s.x / self.cells[0] as f64,
            s.y / self.cells[1] as f64,
            s.z / self.cells[2] as f64,
        )
    }
    pub fn cell_volume(&self) -> f64 {
        self.cell_size().product()
    }
    pub fn len(&self) -> usize {
        self.cells.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.cells[0] * (j + self.cells[1] * k)
    }
    pub fn center(&self, i: usize, j: usize, k: usize) -> Vector3<f64> {
        let h = self.cell_size();
        self.region.min
            + Vector3::new(
                (i as f64 + 0.5) * h.x,
                (j as f64 + 0.5) * h.y,
                (k as f64 + 0.5) * h.z,
            )
    }
}

/// The default region: the robot's frame box (the structure the platform moves inside).
pub fn default_region(robot: &Robot) -> Aabb {
    robot.frame
}

/// Feasibility of every grid cell (at its centre).
#[derive(Debug, Clone, PartialEq)]
pub struct FeasibleSet {
    pub grid: Grid,
    /// Indexed by [`Grid::index`].
    pub feasible: Vec<bool>,
}

/// A grid estimate of the feasible volume.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VolumeEstimate {
    /// Feasible cells × cell volume, m³.
    pub volume: f64,
    /// Resolution error, m³: half the volume of the boundary band (cells with a face
    /// neighbour of the other kind), where the cell-centre test can err either way.
    pub error: f64,
    pub cells_feasible: usize,
    pub cells_boundary: usize,
    pub cells_total: usize,
    pub cell_volume: f64,
}

impl FeasibleSet {
    pub fn at(&self, i: usize, j: usize, k: usize) -> bool {
        self.feasible[self.grid.index(i, j, k)]
    }

    pub fn volume(&self) -> VolumeEstimate {
        let [nx, ny, nz] = self.grid.cells;
        let mut feasible = 0;
        let mut boundary = 0;
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let here = self.at(i, j, k);
                    feasible += here as usize;
                    let neighbours = [
                        (i > 0).then(|| (i - 1, j, k)),
                        (i + 1 < nx).then_some((i + 1, j, k)),
                        (j > 0).then(|| (i, j - 1, k)),
                        (j + 1 < ny).then_some((i, j + 1, k)),
                        (k > 0).then(|| (i, j, k - 1)),
                        (k + 1 < nz).then_some((i, j, k + 1)),
                    ];
                    let mixed = neighbours
                        .iter()
                        .flatten()
                        .any(|&(a, b, c)| self.at(a, b, c) != here);
                    boundary += mixed as usize;
                }
            }
        }
        let v = self.grid.cell_volume();
        VolumeEstimate {
            volume: feasible as f64 * v,
            error: 0.5 * boundary as f64 * v,
            cells_feasible: feasible,
            cells_boundary: boundary,
            cells_total: self.grid.len(),
            cell_volume: v,
        }
    }

    /// Faces of the region that feasible cells touch ("x_min", …, "z_max"): there the feasible
    /// set may extend beyond the region and the volume is a lower bound (a suspended robot's
    /// `z_min` is the floor, which is physical).
    pub fn touched_faces(&self) -> Vec<&'static str> {
        let [nx, ny, nz] = self.grid.cells;
        let mut faces = Vec::new();
        // Per face: the axis (0 = x, 1 = y, 2 = z) and the index on it.
        let faces_at = [
            ("x_min", 0, 0),
            ("x_max", 0, nx - 1),
            ("y_min", 1, 0),
            ("y_max", 1, ny - 1),
            ("z_min", 2, 0),
            ("z_max", 2, nz - 1),
        ];
        for (name, axis, at) in faces_at {
            let touched = (0..nz).any(|k| {
                (0..ny).any(|j| (0..nx).any(|i| [i, j, k][axis] == at && self.at(i, j, k)))
            });
            if touched {
                faces.push(name);
            }
        }
        faces
    }
}

/// Runs `job(index)` for 0..count on the available cores (at most 2 are assumed free on the
/// shared machines, more are used if present), reporting progress as a fraction.
pub(crate) fn parallel_map<T: Send>(
    count: usize,
    job: &(dyn Fn(usize) -> T + Sync),
    progress: &(dyn Fn(f64) + Sync),
) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
        .min(count.max(1));
    let done = AtomicUsize::new(0);
    // About 500 reports a job (slices are only hundreds of expensive cells), at most every
    // 256 cells.
    let every = (count / 500).clamp(1, 256);
    let chunk = count.div_ceil(threads).max(1);
    let mut parts: Vec<Vec<T>> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let done = &done;
                scope.spawn(move || {
                    let range = (t * chunk)..((t + 1) * chunk).min(count);
                    let mut out = Vec::with_capacity(range.len());
                    for index in range {
                        out.push(job(index));
                        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if n.is_multiple_of(every) {
                            progress(n as f64 / count as f64);
                        }
                    }
                    out
                })
            })
            .collect();
        for h in handles {
            // A panic in a worker is a bug in this crate, not a user error: propagate it.
            parts.push(h.join().expect("workspace worker panicked"));
        }
    });
    progress(1.0);
    parts.into_iter().flatten().collect()
}

/// Feasibility of every cell centre of `grid` for all `orientations` within `bounds`.
pub fn feasible_set(
    robot: &Robot,
    grid: &Grid,
    bounds: TensionBounds,
    orientations: &[Vector3<f64>],
    progress: &(dyn Fn(f64) + Sync),
) -> FeasibleSet {
    let [nx, ny, _] = grid.cells;
    let job = |index: usize| {
        let (i, j, k) = (index % nx, (index / nx) % ny, index / (nx * ny));
        pose_feasible(robot, &grid.center(i, j, k), orientations, bounds)
    };
    FeasibleSet {
        grid: *grid,
        feasible: parallel_map(grid.len(), &job, progress),
    }
}

/// Whether a box lies in the feasible workspace, judged on `per_axis`³ points spread evenly
/// over it, faces and corners included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoxCheck {
    pub region: Aabb,
    pub points: usize,
    pub infeasible_points: usize,
    pub contained: bool,
    /// The point of lowest capacity (zero rotation) and that capacity, N.
    pub weakest_point: [f64; 3],
    pub weakest_capacity: Option<f64>,
}

pub fn check_box(
    robot: &Robot,
    region: &Aabb,
    bounds: TensionBounds,
    orientations: &[Vector3<f64>],
    per_axis: usize,
    progress: &(dyn Fn(f64) + Sync),
) -> BoxCheck {
    let n = per_axis.max(2);
    let at = |k: usize, lo: f64, hi: f64| lo + (hi - lo) * k as f64 / (n - 1) as f64;
    let point = |index: usize| {
        let (i, j, k) = (index % n, (index / n) % n, index / (n * n));
        Vector3::new(
            at(i, region.min.x, region.max.x),
            at(j, region.min.y, region.max.y),
            at(k, region.min.z, region.max.z),
        )
    };
    let job = |index: usize| {
        let p = point(index);
        let ok = pose_feasible(robot, &p, orientations, bounds);
        let cap = capacity(robot, &Pose::from_position(p), bounds.max);
        (ok, cap)
    };
    let results = parallel_map(n * n * n, &job, progress);
    let infeasible = results.iter().filter(|(ok, _)| !ok).count();
    // The first point in scan order among the weakest: a symmetric robot's corners tie up to
    // rounding, and the report names the same one whatever the rounding.
    let key = |c: &Option<f64>| c.unwrap_or(f64::NEG_INFINITY);
    let lowest = results
        .iter()
        .map(|(_, cap)| key(cap))
        .fold(f64::INFINITY, f64::min);
    let tie = if lowest.is_finite() {
        1e-9 * (1.0 + lowest.abs())
    } else {
        0.0
    };
    let (weakest, cap) = results
        .iter()
        .enumerate()
        .find(|(_, (_, cap))| key(cap) <= lowest + tie)
        .map(|(index, (_, cap))| (point(index), *cap))
        .unwrap_or((region.min, None));
    BoxCheck {
        region: *region,
        points: results.len(),
        infeasible_points: infeasible,
        contained: infeasible == 0,
        weakest_point: [weakest.x, weakest.y, weakest.z],
        weakest_capacity: cap,
    }
}

/// A plane through the region for the plots.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Plane {
    /// Horizontal, at this z (m); axes x, y.
    Xy(f64),
    /// Vertical, at this y (m); axes x, z.
    Xz(f64),
}

/// Capacities (min over the orientations) and feasibility on a plane, at cell centres.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Slice {
    pub plane: Plane,
    /// Cell edges along the plane's two axes, m.
    pub u_edges: Vec<f64>,
    pub v_edges: Vec<f64>,
    /// Row-major (v outer, u inner), N; None where no tensions hold the platform at all.
    pub capacity: Vec<Option<f64>>,
    pub feasible: Vec<bool>,
    /// Row-major like `capacity`: where something interferes; empty when not checked.
    pub colliding: Vec<bool>,
}

/// The (columns, rows) of [`slice`]'s cells for `n_u` asked: `n_u` within 4…1000, rows keeping
/// the cells square, at least 4 and at most 5 `n_u` (a needle of a region would otherwise ask
/// for millions of cells).
pub fn slice_cells(region: &Aabb, plane: Plane, n_u: usize) -> (usize, usize) {
    let u_span = region.max.x - region.min.x;
    let v_span = match plane {
        Plane::Xy(_) => region.max.y - region.min.y,
        Plane::Xz(_) => region.max.z - region.min.z,
    };
    let n_u = n_u.clamp(4, 1000);
    let rows = (v_span / (u_span / n_u as f64)).round();
    let n_v = if rows.is_finite() {
        rows.clamp(4.0, 5.0 * n_u as f64) as usize
    } else {
        4
    };
    (n_u, n_v)
}

/// `n_u` cells along the plane's first axis (4…1000) and as many along the second as keep
/// the cells square (at least 4, at most 5 `n_u`).
pub fn slice(
    robot: &Robot,
    region: &Aabb,
    plane: Plane,
    n_u: usize,
    bounds: TensionBounds,
    orientations: &[Vector3<f64>],
) -> Slice {
    slice_with_progress(robot, region, plane, n_u, bounds, orientations, &|_| {})
}

/// [`slice`], reporting the fraction of its cells done.
pub fn slice_with_progress(
    robot: &Robot,
    region: &Aabb,
    plane: Plane,
    n_u: usize,
    bounds: TensionBounds,
    orientations: &[Vector3<f64>],
    progress: &(dyn Fn(f64) + Sync),
) -> Slice {
    let (u_range, v_range) = match plane {
        Plane::Xy(_) => ((region.min.x, region.max.x), (region.min.y, region.max.y)),
        Plane::Xz(_) => ((region.min.x, region.max.x), (region.min.z, region.max.z)),
    };
    let (n_u, n_v) = slice_cells(region, plane, n_u);
    let edges = |(lo, hi): (f64, f64), n: usize| -> Vec<f64> {
        (0..=n)
            .map(|k| lo + (hi - lo) * k as f64 / n as f64)
            .collect()
    };
    let (u_edges, v_edges) = (edges(u_range, n_u), edges(v_range, n_v));
    let job = |index: usize| {
        let (a, b) = (index % n_u, index / n_u);
        let u = 0.5 * (u_edges[a] + u_edges[a + 1]);
        let v = 0.5 * (v_edges[b] + v_edges[b + 1]);
        let p = match plane {
            Plane::Xy(z) => Vector3::new(u, v, z),
            Plane::Xz(y) => Vector3::new(u, y, v),
        };
        let cap = capacity_over(robot, &p, orientations, bounds.max);
        let ok = pose_feasible(robot, &p, orientations, bounds);
        (cap, ok)
    };
    let results = parallel_map(n_u * n_v, &job, progress);
    Slice {
        plane,
        u_edges,
        v_edges,
        capacity: results.iter().map(|r| r.0).collect(),
        feasible: results.iter().map(|r| r.1).collect(),
        colliding: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
