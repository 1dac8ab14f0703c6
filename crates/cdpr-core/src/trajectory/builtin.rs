//! Built-in trajectories, selectable by name: `seed000`, `pickplace`, `poly5`.
//!
//! The papers give speeds but not always coordinates or ramps; the choices made here:
//! - `seed000` (seed 000, section 5): squares in the XY plane (z = 50 mm), the XZ plane
//!   (y = −100 mm) and the YZ plane (x = −100 mm) over x, y ∈ [−100, 100] mm, z ∈ [50, 250] mm,
//!   then the diagonal (−100, −100, 50) → (100, 100, 250) mm and back. All three squares start
//!   and end at the corner (−100, −100, 50) mm, where the diagonal starts, so no connecting moves
//!   are needed. Tags XY, XZ, YZ, Up, Down. The paper gives no ramps; the default is a trapezoid
//!   with seed 003's 3 m/s² (same lab, same TwinCAT NC), stopping at each corner as a PLC's
//!   `MC_MoveLinear` sequence does: 15 699 samples at 100 mm/s and 2 ms. On a robot whose
//!   workspace does not contain the paper's box, the 0.2 m cube is centred in the workspace
//!   (shrunk if the workspace is smaller).
//! - `pickplace` (seed 003, section 4, Fig. 6): up / arc / down. Seed 003 gives speeds (100, 500 mm/s),
//!   acceleration 3000 mm/s² and jerk 8000 mm/s³ but no coordinates; on silva4 the pick point
//!   is seed 003's Table 2 point in x, y (−100, 184.88) mm at z = 350 mm, so that the published
//!   point (z = 471.6 mm) lies on the up stroke; 200 mm up, then a half circle in the vertical
//!   plane through both tops (radius 210 mm, 3D: x, y and z all change), then 200 mm down at
//!   (100, −184.88) mm. The chain is tangent-continuous, but its curvature jumps from 0 to 1/r
//!   at the junctions: at constant speed the centripetal acceleration v²/r would switch on in
//!   one sample (on silva4 at 500 mm/s a cable jerk of ~450 m/s³ against seed 003's 22.5). So
//!   the default is one S-curve per piece, blended (each piece starts while the previous one
//!   decelerates, as TwinCAT's blending does): speed stays continuous and the cable jerk stays
//!   within seed 003's limits at 100 and 500 mm/s. `--transition continuous` gives the exact
//!   path at constant speed (and the jerk spikes). Other robots get these points mapped into
//!   their workspace by a uniform scale about the workspace centres (arcs stay circles).
//! - `poly5` (seed 001, section 4.2): one point-to-point quintic between the points a quarter of
//!   the workspace size below and above its centre (on caroca (−1, −0.5, 1) → (1, 0.5, 2) m),
//!   zero velocity and acceleration at both ends, duration from the peak speed 15D/(8T).
//!
//! Orientation is held at the robot's home orientation (zero on 3-DOF robots).

use super::path::{self, MotionSpec, Plan, Transition};
use super::profile::{ProfileKind, ProfileLimits};
use super::{Trajectory, TrajectoryError};
use crate::kinematics::Pose;
use crate::robot::{Aabb, Dof, Robot};
use nalgebra::Vector3;

/// Names and one-line descriptions of the built-in trajectories.
pub const BUILTINS: &[(&str, &str)] = &[
    (
        "seed000",
        "seed 000's test: squares in XY, XZ, YZ, diagonal up and down (tags XY/XZ/YZ/Up/Down)",
    ),
    (
        "pickplace",
        "seed 003's pick & place: up, arc, down, blended S-curves (tags Up/Arc/Down)",
    ),
    (
        "poly5",
        "seed 001's point-to-point 5th-order polynomial move (tag Move)",
    ),
];

/// Default ramps: seed 003's TwinCAT NC values, used for all built-ins.
pub const DEFAULT_ACCEL: f64 = 3.0;
/// m/s³
pub const DEFAULT_JERK: f64 = 8.0;

/// Options of the built-in trajectories. `None` means the built-in's own default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuiltinOptions {
    /// Cruise speed along the path, m/s (seed 000: 0.1 and 0.4; seed 003: 0.1 and 0.5).
    pub speed: f64,
    /// Sampling period, s (seed 000 logs every 2 ms).
    pub dt: f64,
    /// Speed profile (default: trapezoid for seed000, S-curve for pickplace, poly5 for poly5).
    pub profile: Option<ProfileKind>,
    /// Path acceleration limit, m/s² (default 3; none for the quintic).
    pub accel: Option<f64>,
    /// Path jerk limit, m/s³ (default 8, used by the S-curve; none for the quintic).
    pub jerk: Option<f64>,
    /// Stop at corners, blend them, or one profile over the whole path (default: stop for
    /// seed000, blend for pickplace, continuous for poly5).
    pub transition: Option<Transition>,
}

impl Default for BuiltinOptions {
    fn default() -> BuiltinOptions {
        BuiltinOptions {
            speed: 0.1,
            dt: 0.002,
            profile: None,
            accel: None,
            jerk: None,
            transition: None,
        }
    }
}

impl BuiltinOptions {
    fn spec(&self, profile: ProfileKind, transition: Transition) -> MotionSpec {
        let profile = self.profile.unwrap_or(profile);
        // The quintic's duration follows from the speed alone (seed 001 gives no ramps) unless
        // an acceleration or jerk limit is asked for; the ramped profiles need both.
        let default = |value: f64| match profile {
            ProfileKind::Poly5 => f64::INFINITY,
            _ => value,
        };
        MotionSpec {
            profile,
            limits: ProfileLimits {
                speed: self.speed,
                accel: self.accel.unwrap_or(default(DEFAULT_ACCEL)),
                jerk: self.jerk.unwrap_or(default(DEFAULT_JERK)),
            },
            transition: self.transition.unwrap_or(transition),
        }
    }
}

/// The built-in trajectory `name` for `robot`.
pub fn builtin(
    robot: &Robot,
    name: &str,
    options: &BuiltinOptions,
) -> Result<Trajectory, TrajectoryError> {
    let (plan, spec) = match name {
        "seed000" => (
            benchmark_plan(robot)?,
            options.spec(ProfileKind::Trapezoid, Transition::Stop),
        ),
        "pickplace" => (
            pickplace_plan(robot)?,
            options.spec(ProfileKind::Scurve, Transition::Blend),
        ),
        "poly5" => (
            poly5_plan(robot)?,
            options.spec(ProfileKind::Poly5, Transition::Continuous),
        ),
        _ => {
            return Err(TrajectoryError::UnknownName {
                spec: name.to_string(),
                known: builtin_names(),
                nearest: crate::options::unknown(name, BUILTINS.iter().map(|(n, _)| *n)).nearest,
            });
        }
    };
    path::sample(&plan, &spec, options.dt)
}

pub(super) fn builtin_names() -> String {
    BUILTINS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn held_orientation(robot: &Robot) -> Vector3<f64> {
    match robot.dof {
        Dof::Six => Vector3::new(robot.home[3], robot.home[4], robot.home[5]),
        Dof::Three => Vector3::zeros(),
    }
}

fn pose(p: Vector3<f64>, rpy: Vector3<f64>) -> Pose {
    Pose { position: p, rpy }
}

/// The box of seed 000's benchmark trajectory (§5): the paper's if it fits the workspace,
/// else a cube centred in it.
pub fn benchmark_box(robot: &Robot) -> Aabb {
    let paper = Aabb {
        min: Vector3::new(-0.1, -0.1, 0.05),
        max: Vector3::new(0.1, 0.1, 0.25),
    };
    let ws = robot.workspace;
    if ws.contains(&paper.min) && ws.contains(&paper.max) {
        return paper;
    }
    let side = ws.size().min().min(0.2);
    let half = Vector3::repeat(side / 2.0);
    Aabb {
        min: ws.center() - half,
        max: ws.center() + half,
    }
}

/// Seed 000's benchmark (§5): squares and diagonals (see the module comment).
pub fn benchmark_plan(robot: &Robot) -> Result<Plan, TrajectoryError> {
    let b = benchmark_box(robot);
    let rpy = held_orientation(robot);
    let (lo, hi) = (b.min, b.max);
    let at = |x: f64, y: f64, z: f64| pose(Vector3::new(x, y, z), rpy);
    let corner = at(lo.x, lo.y, lo.z);
    let mut plan = Plan::new(corner);
    let squares = [
        (
            "XY",
            [
                at(hi.x, lo.y, lo.z),
                at(hi.x, hi.y, lo.z),
                at(lo.x, hi.y, lo.z),
            ],
        ),
        (
            "XZ",
            [
                at(hi.x, lo.y, lo.z),
                at(hi.x, lo.y, hi.z),
                at(lo.x, lo.y, hi.z),
            ],
        ),
        (
            "YZ",
            [
                at(lo.x, hi.y, lo.z),
                at(lo.x, hi.y, hi.z),
                at(lo.x, lo.y, hi.z),
            ],
        ),
    ];
    for (tag, corners) in squares {
        for c in corners {
            plan.line_to(c, tag)?;
        }
        plan.line_to(corner, tag)?;
    }
    plan.line_to(at(hi.x, hi.y, hi.z), "Up")?;
    plan.line_to(corner, "Down")?;
    Ok(plan)
}

/// Maps a point given in silva4's workspace into `robot`'s (uniform scale, centres matched).
fn from_silva4(robot: &Robot, p: Vector3<f64>) -> Vector3<f64> {
    let silva4 = Aabb {
        min: Vector3::new(-0.3, -0.5, 0.2),
        max: Vector3::new(0.3, 0.5, 1.0),
    };
    let ws = robot.workspace;
    let scale = ws.size().component_div(&silva4.size()).min();
    ws.center() + (p - silva4.center()) * scale
}

/// Seed 003's pick & place (see the module comment).
pub fn pickplace_plan(robot: &Robot) -> Result<Plan, TrajectoryError> {
    let rpy = held_orientation(robot);
    let (x, y) = (0.1, 0.18488);
    let (z_low, z_top) = (0.35, 0.55);
    let pick = Vector3::new(-x, y, z_low);
    let pick_top = Vector3::new(-x, y, z_top);
    let place_top = Vector3::new(x, -y, z_top);
    let place = Vector3::new(x, -y, z_low);
    let radius = (place_top - pick_top).norm() / 2.0;
    let apex = (pick_top + place_top) / 2.0 + Vector3::new(0.0, 0.0, radius);
    let map = |p| pose(from_silva4(robot, p), rpy);
    let mut plan = Plan::new(map(pick));
    plan.line_to(map(pick_top), "Up")?;
    plan.arc_to(from_silva4(robot, apex), map(place_top), "Arc")?;
    plan.line_to(map(place), "Down")?;
    Ok(plan)
}

/// Seed 001's point-to-point move (see the module comment).
pub fn poly5_plan(robot: &Robot) -> Result<Plan, TrajectoryError> {
    let rpy = held_orientation(robot);
    let ws = robot.workspace;
    let quarter = ws.size() / 4.0;
    let mut plan = Plan::new(pose(ws.center() - quarter, rpy));
    plan.line_to(pose(ws.center() + quarter, rpy), "Move")?;
    Ok(plan)
}
