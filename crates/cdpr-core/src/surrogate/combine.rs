//! Seed 004's combination step (CombinacionGdL): before filtering, the demanded DOFs are
//! scaled proportionally towards rest, by bisection, until the robot can reach them.
//!
//! The paper's pseudo-code bisects every DOF between 0 (rest) and its demand with the same
//! midpoint rule, so the DOFs stay proportional: it is a bisection on one scale λ ∈ [0, 1]
//! of (demand − rest), stopped when every DOF's bracket is below its tolerance. One change:
//! the pseudo-code returns the last midpoint, which is unreachable whenever the last test
//! failed; this returns the lower end of the bracket, which is always reachable (rest is
//! assumed reachable; if it is not, rest is returned and flagged).
//!
//! What "reachable" means is the robot's business, behind [`Reachability`]:
//! - CDPRs ([`CdprReachability`]): the tension distribution is feasible within the robot's
//!   bounds at that pose (the wrench-feasible workspace of [`crate::workspace`]), with an
//!   optional precomputed [`FeasibilityMap`] answering the interior in nanoseconds;
//! - other parallel robots: an implementation wrapping their inverse kinematics' validity
//!   (seed 004's 2-RSSU returns `valid = yes/no`; the `rssu2` robot kind provides it).

use crate::kinematics::{Pose, effective_pose};
use crate::robot::{Robot, TensionBounds};
use crate::workspace::FeasibilityMap;

/// What the combination step asks of a robot: can it take this pose?
/// (x, y, z, roll, pitch, yaw; m and rad; R = Rz(yaw)·Ry(pitch)·Rx(roll).)
pub trait Reachability {
    fn reachable(&self, pose: &[f64; 6]) -> bool;
}

/// Any predicate on poses is a reachability (tests, simple robots).
impl<F: Fn(&[f64; 6]) -> bool> Reachability for F {
    fn reachable(&self, pose: &[f64; 6]) -> bool {
        self(pose)
    }
}

/// The pose handed to the filters, and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Combined {
    pub pose: [f64; 6],
    /// λ: pose = rest + λ (demand − rest); 1 when the demand was reachable.
    pub scale: f64,
    /// True when the demand was scaled down.
    pub limited: bool,
    /// True when even rest was unreachable (then `pose` is rest).
    pub rest_unreachable: bool,
    /// Reachability tests made.
    pub checks: u32,
}

/// Default tolerances: 0.1 mm and 0.01° per DOF.
pub const DEFAULT_TOLERANCES: [f64; 6] = [1e-4, 1e-4, 1e-4, 1.745e-4, 1.745e-4, 1.745e-4];

/// CombinacionGdL (see the module comment).
pub fn combine(
    reach: &dyn Reachability,
    rest: &[f64; 6],
    demand: &[f64; 6],
    tolerances: &[f64; 6],
) -> Combined {
    if reach.reachable(demand) {
        return Combined {
            pose: *demand,
            scale: 1.0,
            limited: false,
            rest_unreachable: false,
            checks: 1,
        };
    }
    let at = |lambda: f64| -> [f64; 6] {
        std::array::from_fn(|k| rest[k] + lambda * (demand[k] - rest[k]))
    };
    let mut checks = 1;
    if !reach.reachable(rest) {
        return Combined {
            pose: *rest,
            scale: 0.0,
            limited: true,
            rest_unreachable: true,
            checks: 2,
        };
    }
    checks += 1;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    // Stop when every DOF's bracket (hi − lo)·|demand − rest| is within its tolerance; the
    // 60-step cap only guards against zero tolerances.
    let done = |lo: f64, hi: f64| {
        (0..6).all(|k| (hi - lo) * (demand[k] - rest[k]).abs() <= tolerances[k].max(0.0))
    };
    while !done(lo, hi) && checks < 62 {
        let mid = 0.5 * (lo + hi);
        checks += 1;
        if reach.reachable(&at(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Combined {
        pose: at(lo),
        scale: lo,
        limited: true,
        rest_unreachable: false,
        checks,
    }
}

/// A CDPR's reachability: the tension distribution is feasible within `bounds` (the exact
/// QP), short-cut by a [`FeasibilityMap`] inside cells it knows to be feasible.
#[derive(Debug, Clone)]
pub struct CdprReachability {
    pub robot: Robot,
    pub bounds: TensionBounds,
    pub map: Option<FeasibilityMap>,
}

impl CdprReachability {
    /// The exact test only, within the robot's own tension bounds.
    pub fn exact(robot: &Robot) -> CdprReachability {
        CdprReachability {
            robot: robot.clone(),
            bounds: robot.tension,
            map: None,
        }
    }

    /// With a map over the robot's `[workspace]` box grown by half its size on every side,
    /// nodes `spacing` m apart, at zero rotation (rotated poses use the exact test).
    pub fn with_map(robot: &Robot, spacing: f64) -> CdprReachability {
        let ws = robot.workspace;
        let grow = ws.size() * 0.5;
        let region = crate::robot::Aabb {
            min: ws.min - grow,
            max: ws.max + grow,
        };
        let map = FeasibilityMap::build(robot, &region, spacing, robot.tension, None, &|_| {});
        CdprReachability {
            robot: robot.clone(),
            bounds: robot.tension,
            map: Some(map),
        }
    }
}

impl Reachability for CdprReachability {
    #[inline]
    fn reachable(&self, pose: &[f64; 6]) -> bool {
        // Map first, straight from the array (a 3-DOF robot holds zero rotation).
        let rpy = match self.robot.dof {
            crate::robot::Dof::Six => [pose[3], pose[4], pose[5]],
            crate::robot::Dof::Three => [0.0; 3],
        };
        if let Some(map) = &self.map
            && map.covers_rotation(&rpy)
            && map.cell_feasible(&[pose[0], pose[1], pose[2]]) == Some(true)
        {
            return true;
        }
        let pose = effective_pose(&self.robot, &Pose::from_array(*pose));
        crate::workspace::feasible_at(&self.robot, &pose, self.bounds)
    }
}
