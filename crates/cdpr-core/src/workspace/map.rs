//! A precomputed feasibility grid for fast reachability queries.
//!
//! The exact test (the tension-distribution QP) costs 1.5–4 µs; the surrogate asks it every
//! step, which alone would cap it near 500× real time at 1 ms. The map samples feasibility on
//! the nodes of a regular grid once; a query inside a cell whose eight nodes are all feasible
//! answers "reachable" in a few nanoseconds. Anything else (a cell touching an infeasible
//! node, a point outside the map, a rotation outside the range the map was built for) is
//! left to the exact test by the caller, so the map only ever short-cuts the interior. Its
//! one approximation: a cell with eight feasible corners is taken as feasible throughout,
//! i.e. features of the infeasible set smaller than a cell are missed (the spacing bounds it).

use super::{OrientationRange, parallel_map, pose_feasible};
use crate::robot::{Aabb, Robot, TensionBounds};
use nalgebra::Vector3;

#[derive(Debug, Clone, PartialEq)]
pub struct FeasibilityMap {
    pub region: Aabb,
    /// Nodes per axis (≥ 2).
    pub nodes: [usize; 3],
    pub spacing: Vector3<f64>,
    /// Every |roll|, |pitch|, |yaw| up to this (rad) was required feasible at each node (0:
    /// zero rotation only).
    pub max_angle: f64,
    feasible: Vec<bool>,
}

impl FeasibilityMap {
    /// Samples `region` with nodes at most `spacing` (m) apart, requiring feasibility within
    /// `bounds` for every orientation of `orientation` (zero rotation when None).
    pub fn build(
        robot: &Robot,
        region: &Aabb,
        spacing: f64,
        bounds: TensionBounds,
        orientation: Option<&OrientationRange>,
        progress: &(dyn Fn(f64) + Sync),
    ) -> FeasibilityMap {
        let size = region.size();
        let count = |s: f64| ((s / spacing.max(1e-6)).ceil() as usize).max(1) + 1;
        let nodes = [count(size.x), count(size.y), count(size.z)];
        let spacing = Vector3::new(
            size.x / (nodes[0] - 1) as f64,
            size.y / (nodes[1] - 1) as f64,
            size.z / (nodes[2] - 1) as f64,
        );
        let orientations = OrientationRange::samples(orientation, robot.dof);
        let job = |index: usize| {
            let (i, j, k) = (
                index % nodes[0],
                (index / nodes[0]) % nodes[1],
                index / (nodes[0] * nodes[1]),
            );
            let p = region.min
                + Vector3::new(
                    i as f64 * spacing.x,
                    j as f64 * spacing.y,
                    k as f64 * spacing.z,
                );
            pose_feasible(robot, &p, &orientations, bounds)
        };
        let feasible = parallel_map(nodes.iter().product(), &job, progress);
        FeasibilityMap {
            region: *region,
            nodes,
            spacing,
            max_angle: orientation
                .filter(|_| robot.dof == crate::robot::Dof::Six)
                .map(|o| o.max_angle)
                .unwrap_or(0.0),
            feasible,
        }
    }

    /// Whether the map speaks for this rotation (all angles within its range).
    #[inline]
    pub fn covers_rotation(&self, rpy: &[f64; 3]) -> bool {
        rpy.iter().all(|a| a.abs() <= self.max_angle + 1e-12)
    }

    /// Some(true) when the eight nodes of the cell containing `p` are all feasible, Some(false)
    /// when one is not, None outside the map.
    #[inline]
    pub fn cell_feasible(&self, p: &[f64; 3]) -> Option<bool> {
        let mut base = [0usize; 3];
        for axis in 0..3 {
            let u = (p[axis] - self.region.min[axis]) / self.spacing[axis];
            if !(u >= 0.0 && u <= (self.nodes[axis] - 1) as f64) {
                return None;
            }
            base[axis] = (u as usize).min(self.nodes[axis] - 2);
        }
        let [nx, ny, _] = self.nodes;
        let at = |i: usize, j: usize, k: usize| self.feasible[i + nx * (j + ny * k)];
        let (i, j, k) = (base[0], base[1], base[2]);
        Some(
            at(i, j, k)
                && at(i + 1, j, k)
                && at(i, j + 1, k)
                && at(i + 1, j + 1, k)
                && at(i, j, k + 1)
                && at(i + 1, j, k + 1)
                && at(i, j + 1, k + 1)
                && at(i + 1, j + 1, k + 1),
        )
    }
}
