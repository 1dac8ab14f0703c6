//! What `cdpr workspace` computes for the robots with legs: seed 002's coverage of the
//! required cylinder by a linear delta's point cloud (with its plot), and the 2-RSSU's reach
//! in roll and pitch (seed 004's Table 1); serialisable structs (the `--json`).

use crate::legs::coverage::{self, Coverage};
use crate::options::{DefaultValue, Group, Name, OptionSpec, number};
use crate::robot::{Mechanism, Robot};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LegsWorkspaceError {
    #[error("{robot} is not a {expected}")]
    Mechanism {
        robot: String,
        expected: &'static str,
    },
    #[error(
        "{} {step} m: the cloud spacing must be positive and at most the cylinder's radius ({radius} m)",
        Name("step")
    )]
    Step { step: f64, radius: f64 },
    #[error(
        "{} {step} m: the cloud over the cylinder (radius {radius} m, height {height} m) would hold {points:.1e} points; at most {MAX_CLOUD_POINTS:.0e} — raise {}",
        Name("step"),
        Name("step")
    )]
    Budget {
        step: f64,
        radius: f64,
        height: f64,
        points: f64,
    },
    #[error("writing the plot {0}")]
    Plot(String),
}

/// `step`: the spacing of seed 002's point cloud in a linear delta's required cylinder, m.
pub const STEP: OptionSpec = OptionSpec {
    name: "step",
    ..number(
        Group::Command,
        "m",
        1e-4,
        1.0,
        "M",
        "linear delta: spacing of seed 002's point cloud in the required cylinder (at most 2e6 points)",
    )
    .default(DefaultValue::Number(0.01))
};

/// Largest point cloud `cdpr workspace` checks for a linear delta (a few seconds).
pub const MAX_CLOUD_POINTS: f64 = 2e6;

/// Seed 002's check of a linear delta: its point cloud over the required cylinder.
#[derive(Debug, Clone, Serialize)]
pub struct DeltaWorkspace {
    pub robot: String,
    pub coverage: Coverage,
    pub covered: bool,
    pub plot: Option<String>,
}

/// The cloud every `step` m through the delta's constraints, plotted to `plot` if given.
pub fn delta_workspace(
    robot: &Robot,
    step: f64,
    plot: Option<&Path>,
) -> Result<DeltaWorkspace, LegsWorkspaceError> {
    let Mechanism::LinearDelta { delta, cylinder } = &robot.mechanism else {
        return Err(LegsWorkspaceError::Mechanism {
            robot: robot.name.clone(),
            expected: "linear delta",
        });
    };
    if !(step.is_finite() && step > 0.0 && step <= cylinder.radius) {
        return Err(LegsWorkspaceError::Step {
            step,
            radius: cylinder.radius,
        });
    }
    // The cloud's size before it is built: (2 n_r + 1)² columns (a bound) × (n_z + 1) layers.
    let columns = 2.0 * (cylinder.radius / step).floor() + 1.0;
    let points = columns * columns * ((cylinder.height / step).round().max(1.0) + 1.0);
    if points > MAX_CLOUD_POINTS {
        return Err(LegsWorkspaceError::Budget {
            step,
            radius: cylinder.radius,
            height: cylinder.height,
            points,
        });
    }
    let c = coverage::coverage(delta, cylinder, step);
    if let Some(path) = plot {
        coverage::plot(&c, &robot.name, path).map_err(LegsWorkspaceError::Plot)?;
    }
    Ok(DeltaWorkspace {
        robot: robot.name.clone(),
        covered: c.covered(),
        coverage: c,
        plot: plot.map(|p| p.display().to_string()),
    })
}

/// A point of the 2-RSSU's reach boundary, degrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BoundaryPoint {
    /// Direction in the (roll, pitch) plane.
    pub direction: f64,
    pub roll: f64,
    pub pitch: f64,
}

/// The 2-RSSU's reach in roll and pitch (seed 004's Table 1 and the coupled boundary).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rssu2Reach {
    pub robot: String,
    pub pitch_deg: [f64; 2],
    pub roll_deg: [f64; 2],
    /// Along 16 directions in the (roll, pitch) plane.
    pub boundary_deg: Vec<BoundaryPoint>,
}

pub fn rssu2_reach(robot: &Robot) -> Result<Rssu2Reach, LegsWorkspaceError> {
    let Mechanism::Rssu2(r) = &robot.mechanism else {
        return Err(LegsWorkspaceError::Mechanism {
            robot: robot.name.clone(),
            expected: "2-RSSU",
        });
    };
    let ranges = r.ranges().map(f64::to_degrees);
    let boundary_deg = (0..16)
        .map(|k| {
            let a = k as f64 * std::f64::consts::TAU / 16.0;
            let reach = r.reach(a.cos(), a.sin());
            BoundaryPoint {
                direction: a.to_degrees(),
                roll: (reach * a.cos()).to_degrees(),
                pitch: (reach * a.sin()).to_degrees(),
            }
        })
        .collect();
    Ok(Rssu2Reach {
        robot: robot.name.clone(),
        pitch_deg: [ranges[0], ranges[1]],
        roll_deg: [ranges[2], ranges[3]],
        boundary_deg,
    })
}

/// The default plot file of a robot's workspace check: `workspace-<robot>.png` in the current
/// directory or in `asked` when that is a directory, else `asked` itself.
pub fn plot_path(robot: &Robot, asked: Option<&Path>) -> PathBuf {
    let default = format!("workspace-{}.png", robot.name);
    match asked {
        Some(p) if p.is_dir() => p.join(default),
        Some(p) => p.to_path_buf(),
        None => PathBuf::from(default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rssu2_boundary_meets_table_1_on_the_axes() {
        let robot = crate::fixtures::robot("rssu2");
        let r = rssu2_reach(&robot).expect("a 2-RSSU");
        assert_eq!(r.boundary_deg.len(), 16);
        // Direction 0 is pure roll, 90° pure pitch: the boundary there is the axis range.
        let roll = r.boundary_deg[0];
        assert!((roll.roll - r.roll_deg[1]).abs() < 1e-6 && roll.pitch.abs() < 1e-9);
        let pitch = r.boundary_deg[4];
        assert!((pitch.pitch - r.pitch_deg[1]).abs() < 1e-6 && pitch.roll.abs() < 1e-6);
        // Seed 004's Table 1: ±30.27° pitch, ±26.38° roll (to its two decimals).
        assert!((r.pitch_deg[1] - 30.27).abs() < 0.01, "{:?}", r.pitch_deg);
        assert!((r.roll_deg[1] - 26.38).abs() < 0.01, "{:?}", r.roll_deg);
        let cables = crate::fixtures::uvigo8();
        assert!(rssu2_reach(&cables).is_err());
        assert!(delta_workspace(&cables, 0.01, None).is_err());
    }
}
