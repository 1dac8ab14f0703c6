//! Where a minimum tension becomes reachable (5 N by default: the project's choice of a taut
//! cable; seed 000 states no tension bound).
//!
//! The capacity (largest reachable minimum tension, an LP) of a suspended robot grows with
//! height: its cables are steep low down, Σ f_i d_iz = m g then caps min f_i ≤ m g / Σ d_iz,
//! and they flatten higher up. So the question "where does f_min stop being reachable" has a
//! height as its answer. It is answered at zero rotation on vertical lines: on the region's
//! central axis over the whole height (intervals of capacity ≥ f_min, ends refined by
//! bisection on the LP to 10 µm), and on a columns × columns set of vertical lines through a
//! box (the robot's `[workspace]`), giving per line the lowest height from which f_min holds
//! up to the box's top.

use super::{capacity, parallel_map};
use crate::kinematics::Pose;
use crate::robot::{Aabb, Robot};
use nalgebra::Vector3;
use serde::Serialize;

/// A height interval on a vertical line where the minimum tension is reachable, m.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AxisInterval {
    pub from_z: f64,
    pub to_z: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MinTensionReach {
    /// The minimum tension asked for, N.
    pub f_min: f64,
    /// The vertical axis (x, y), m, and the height range scanned on it.
    pub axis_xy: [f64; 2],
    pub axis_z_range: [f64; 2],
    /// Where on the axis capacity ≥ f_min.
    pub axis_intervals: Vec<AxisInterval>,
    /// The box whose vertical lines are examined.
    pub region: Aabb,
    /// Capacity at the bottom centre of the box, N (seed 000's box on uvigo8: 4.71 N).
    pub capacity_at_box_bottom_center: Option<f64>,
    /// Lines per side.
    pub columns: usize,
    /// Per line (x, y): the lowest z in the box from which f_min holds up to the box's top;
    /// None when it does not hold even at the top.
    pub column_from_z: Vec<([f64; 2], Option<f64>)>,
    /// f_min holds everywhere in the box above this height (max over the lines); None when
    /// some line fails at the top.
    pub everywhere_above_z: Option<f64>,
    /// The lowest of the lines' heights: below it f_min holds on none of the lines.
    pub lowest_from_z: Option<f64>,
}

/// Capacity on the vertical line (x, y) at height z, with "no tensions at all" as −∞.
fn cap_at(robot: &Robot, x: f64, y: f64, z: f64, f_max: f64) -> f64 {
    capacity(robot, &Pose::from_position(Vector3::new(x, y, z)), f_max).unwrap_or(f64::NEG_INFINITY)
}

/// Refines a sign change of capacity − f_min between `a` (ok = `ok_a`) and `b` to 10 µm.
fn bisect(f: &dyn Fn(f64) -> bool, mut a: f64, mut b: f64) -> f64 {
    let ok_a = f(a);
    while (b - a).abs() > 1e-5 {
        let m = 0.5 * (a + b);
        if f(m) == ok_a {
            a = m;
        } else {
            b = m;
        }
    }
    0.5 * (a + b)
}

/// Intervals of `ok` over [lo, hi], sampled every `dz` and refined by bisection.
fn intervals(ok: &dyn Fn(f64) -> bool, lo: f64, hi: f64, dz: f64) -> Vec<AxisInterval> {
    let n = (((hi - lo) / dz).ceil() as usize).max(1);
    let z = |k: usize| lo + (hi - lo) * k as f64 / n as f64;
    let flags: Vec<bool> = (0..=n).map(|k| ok(z(k))).collect();
    let mut out = Vec::new();
    let mut start: Option<f64> = flags[0].then_some(lo);
    for k in 1..=n {
        if flags[k] != flags[k - 1] {
            let edge = bisect(ok, z(k - 1), z(k));
            if flags[k] {
                start = Some(edge);
            } else if let Some(s) = start.take() {
                out.push(AxisInterval {
                    from_z: s,
                    to_z: edge,
                });
            }
        }
    }
    if let Some(s) = start {
        out.push(AxisInterval {
            from_z: s,
            to_z: hi,
        });
    }
    out
}

/// See the module comment. `axis_z` is the height range scanned on the central axis of `region`
/// (x, y at its centre); `dz` the scan step before bisection; `progress` gets the fraction done.
// The scan parameters are the analysis's knobs, each named at the one call in report.rs.
#[allow(clippy::too_many_arguments)]
pub fn min_tension_reach(
    robot: &Robot,
    region: &Aabb,
    axis_z: [f64; 2],
    f_min: f64,
    f_max: f64,
    columns: usize,
    dz: f64,
    progress: &(dyn Fn(f64) + Sync),
) -> MinTensionReach {
    let c = region.center();
    let on_axis = |z: f64| cap_at(robot, c.x, c.y, z, f_max) >= f_min;
    let axis_intervals = intervals(&on_axis, axis_z[0], axis_z[1], dz);
    let n = columns.max(2);
    let at = |k: usize, lo: f64, hi: f64| lo + (hi - lo) * k as f64 / (n - 1) as f64;
    let job = |index: usize| {
        let x = at(index % n, region.min.x, region.max.x);
        let y = at(index / n, region.min.y, region.max.y);
        let ok = |z: f64| cap_at(robot, x, y, z, f_max) >= f_min;
        // The last interval, if it reaches the top, starts where f_min holds up to the top.
        let found = intervals(&ok, region.min.z, region.max.z, dz);
        let from = found
            .last()
            .filter(|i| i.to_z >= region.max.z - 1e-12)
            .map(|i| i.from_z);
        ([x, y], from)
    };
    progress(1.0 / (n * n + 1) as f64);
    let column_from_z = parallel_map(n * n, &job, &|f| {
        progress((1.0 + f * (n * n) as f64) / (n * n + 1) as f64)
    });
    let everywhere_above_z = column_from_z
        .iter()
        .map(|(_, z)| *z)
        .try_fold(f64::NEG_INFINITY, |acc, z| z.map(|z| acc.max(z)));
    let lowest_from_z = column_from_z
        .iter()
        .filter_map(|(_, z)| *z)
        .min_by(f64::total_cmp);
    MinTensionReach {
        f_min,
        axis_xy: [c.x, c.y],
        axis_z_range: axis_z,
        axis_intervals,
        region: *region,
        capacity_at_box_bottom_center: capacity(
            robot,
            &Pose::from_position(Vector3::new(c.x, c.y, region.min.z)),
            f_max,
        ),
        columns: n,
        column_from_z,
        everywhere_above_z,
        lowest_from_z,
    }
}
