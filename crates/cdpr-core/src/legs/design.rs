//! Dimensioning a linear delta for a required cylinder (seed 002 used a genetic algorithm):
//! for a given rail angle, the smallest base radius a — with the arm length l and the height
//! of the cylinder below the base searched with it — whose robot reaches every point of the
//! cylinder's point cloud. A plain grid search: each candidate is a few hundred closed-form
//! inverse kinematics, so the whole search takes seconds in release builds, and unlike a
//! genetic algorithm it is exhaustive on its grid (the answer is the smallest on the grid).

use super::{Cylinder, LinearDelta};
use nalgebra::Vector3;

/// The search space, in metres (inclusive ranges with their steps).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DesignGrid {
    pub base_radius: (f64, f64, f64),
    pub arm_length: (f64, f64, f64),
    /// Depth of the cylinder's top below the base plane.
    pub depth: (f64, f64, f64),
    /// Point-cloud spacing used while searching.
    pub cloud_step: f64,
}

impl Default for DesignGrid {
    fn default() -> DesignGrid {
        DesignGrid {
            base_radius: (0.10, 0.60, 0.01),
            arm_length: (0.15, 0.80, 0.01),
            depth: (0.20, 0.70, 0.025),
            cloud_step: 0.025,
        }
    }
}

fn values((lo, hi, step): (f64, f64, f64)) -> impl Iterator<Item = f64> {
    let n = ((hi - lo) / step + 1e-9).floor() as usize;
    (0..=n).map(move |k| lo + step * k as f64)
}

/// The smallest-base-radius robot on `grid` that covers `cylinder` (its `z_top` is replaced
/// by the searched depth); `template` gives the other dimensions. The stroke is set as in
/// `robots/keops.toml`: from the base plane to `keep_off_axis` metres from the axis.
/// Returns the robot and the cylinder it covers, or None when nothing on the grid does.
pub fn smallest_covering(
    template: &LinearDelta,
    cylinder: &Cylinder,
    keep_off_axis: f64,
    grid: &DesignGrid,
) -> Option<(LinearDelta, Cylinder)> {
    let mut best: Option<(LinearDelta, Cylinder)> = None;
    for depth in values(grid.depth) {
        let cyl = Cylinder {
            z_top: -depth,
            ..*cylinder
        };
        let cloud = LinearDelta::cloud(&cyl, grid.cloud_step);
        for a in values(grid.base_radius) {
            if best.is_some_and(|(b, _)| a >= b.base_radius - 1e-12) {
                break;
            }
            let covering = values(grid.arm_length).find_map(|l| {
                let robot = LinearDelta {
                    base_radius: a,
                    arm_length: l,
                    stroke: [0.0, (a - keep_off_axis) / template.rail_angle.cos()],
                    neutral: Vector3::new(0.0, 0.0, cyl.z_top - 0.5 * cyl.height),
                    ..*template
                };
                cloud
                    .iter()
                    .all(|p| robot.inverse(p).is_ok())
                    .then_some(robot)
            });
            if let Some(robot) = covering {
                best = Some((robot, cyl));
                break;
            }
        }
    }
    best
}
