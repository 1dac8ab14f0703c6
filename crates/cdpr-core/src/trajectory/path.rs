//! Geometric paths (straight lines, circular arcs) and their timing into a sampled trajectory.
//!
//! A [`Plan`] is a start pose and a chain of tagged pieces. [`sample`] times it in one of three
//! ways ([`Transition`]):
//! - `Stop`: every piece has its own speed profile and the platform stops at every waypoint;
//! - `Blend`: the same profiles, but each piece starts while the previous one decelerates
//!   (overlap = the shorter of the two ramps) and the displacements are superposed — the
//!   classic velocity blending of industrial path planners: velocity stays continuous, corners
//!   are rounded inside the convex hull of the waypoints, waypoints themselves are not reached;
//! - `Continuous`: one profile over the whole chain's arc length, exact path (right for
//!   tangent-continuous chains such as pick & place; at a sharp corner the velocity turns
//!   instantly, like a PLC streaming positions without blending).
//!
//! Orientation (roll, pitch, yaw) is interpolated linearly along each piece.

use super::profile::{Profile, ProfileKind, ProfileLimits};
use super::{Sample, Trajectory, TrajectoryError};
use crate::kinematics::Pose;
use nalgebra::Vector3;
use serde::Serialize;

/// How consecutive pieces are joined in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transition {
    /// Stop at every waypoint (each move has its own profile).
    Stop,
    /// Round the corners: each move starts while the previous one decelerates.
    Blend,
    /// One profile over the whole path (exact path; for tangent-continuous chains).
    Continuous,
}

crate::named_choice!(Transition, "transition", {
    Stop => "stop", "stop at every waypoint (each move has its own profile)";
    Blend => "blend", "round the corners: each move starts while the previous one decelerates";
    Continuous => "continuous", "one profile over the whole path (exact path; for tangent-continuous chains)";
});

/// Speed law and limits for a whole plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MotionSpec {
    pub profile: ProfileKind,
    pub limits: ProfileLimits,
    pub transition: Transition,
}

/// One geometric piece, parameterised by arc length s ∈ [0, length] of its position.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Line {
        from: [f64; 6],
        to: [f64; 6],
        length: f64,
    },
    Arc {
        center: Vector3<f64>,
        radius: f64,
        /// Unit vector from the centre to the start point.
        e1: Vector3<f64>,
        /// Unit vector in the arc's plane, perpendicular to e1, in the direction of motion.
        e2: Vector3<f64>,
        /// Swept angle, rad (0, 2π).
        sweep: f64,
        rpy_from: [f64; 3],
        rpy_to: [f64; 3],
    },
}

/// Pose and its first and second derivatives with respect to arc length.
type Eval = ([f64; 6], [f64; 6], [f64; 6]);

impl Piece {
    /// A straight move; positions must differ (pure rotations have no arc length to time).
    pub fn line(from: &Pose, to: &Pose) -> Result<Piece, TrajectoryError> {
        let length = (to.position - from.position).norm();
        if length.is_nan() || length <= 1e-12 {
            return Err(TrajectoryError::Geometry(format!(
                "a straight move needs two different positions, got {:?} twice",
                from.position.as_slice()
            )));
        }
        Ok(Piece::Line {
            from: from.to_array(),
            to: to.to_array(),
            length,
        })
    }

    /// The circular arc from `from` through `via` to `to` (positions; the orientation goes
    /// linearly from `from`'s to `to`'s).
    pub fn arc_through(
        from: &Pose,
        via: &Vector3<f64>,
        to: &Pose,
    ) -> Result<Piece, TrajectoryError> {
        let p0 = from.position;
        let (u, w) = (via - p0, to.position - p0);
        let n = u.cross(&w);
        let n2 = n.norm_squared();
        // Relative test: sin(angle between u and w) must not vanish.
        if n2.is_nan() || n2.sqrt() <= 1e-9 * u.norm() * w.norm() {
            return Err(TrajectoryError::Geometry(format!(
                "an arc needs three points not on one line, got {:?}, {:?}, {:?}",
                p0.as_slice(),
                via.as_slice(),
                to.position.as_slice()
            )));
        }
        // Circumcentre: p0 + (|u|² w − |w|² u) × n / (2|n|²).
        let center = p0 + (u.norm_squared() * w - w.norm_squared() * u).cross(&n) / (2.0 * n2);
        let radius = (p0 - center).norm();
        let e1 = (p0 - center) / radius;
        let mut normal = n / n2.sqrt();
        let angle = |e2: &Vector3<f64>, q: &Vector3<f64>| {
            let r = q - center;
            r.dot(e2)
                .atan2(r.dot(&e1))
                .rem_euclid(std::f64::consts::TAU)
        };
        let mut e2 = normal.cross(&e1);
        if angle(&e2, via) > angle(&e2, &to.position) {
            normal = -normal;
            e2 = normal.cross(&e1);
        }
        let sweep = angle(&e2, &to.position);
        let rpy = |p: &Pose| [p.rpy.x, p.rpy.y, p.rpy.z];
        Ok(Piece::Arc {
            center,
            radius,
            e1,
            e2,
            sweep,
            rpy_from: rpy(from),
            rpy_to: rpy(to),
        })
    }

    pub fn length(&self) -> f64 {
        match self {
            Piece::Line { length, .. } => *length,
            Piece::Arc { radius, sweep, .. } => radius * sweep,
        }
    }

    pub fn start(&self) -> [f64; 6] {
        self.eval(0.0).0
    }

    pub fn end(&self) -> [f64; 6] {
        match self {
            Piece::Line { to, .. } => *to,
            Piece::Arc { .. } => self.eval(self.length()).0,
        }
    }

    /// Pose, d(pose)/ds and d²(pose)/ds² at arc length `s`.
    pub fn eval(&self, s: f64) -> Eval {
        match self {
            Piece::Line { from, to, length } => {
                let u = s / length;
                let mut p = [0.0; 6];
                let mut d = [0.0; 6];
                for k in 0..6 {
                    p[k] = from[k] + (to[k] - from[k]) * u;
                    d[k] = (to[k] - from[k]) / length;
                }
                (p, d, [0.0; 6])
            }
            Piece::Arc {
                center,
                radius,
                e1,
                e2,
                rpy_from,
                rpy_to,
                ..
            } => {
                let theta = s / radius;
                let (sin, cos) = theta.sin_cos();
                let radial = e1 * cos + e2 * sin;
                let pos = center + radial * *radius;
                let tangent = e2 * cos - e1 * sin;
                let curvature = -radial / *radius;
                let length = self.length();
                let mut p = [pos.x, pos.y, pos.z, 0.0, 0.0, 0.0];
                let mut d = [tangent.x, tangent.y, tangent.z, 0.0, 0.0, 0.0];
                let dd = [curvature.x, curvature.y, curvature.z, 0.0, 0.0, 0.0];
                for k in 0..3 {
                    p[3 + k] = rpy_from[k] + (rpy_to[k] - rpy_from[k]) * s / length;
                    d[3 + k] = (rpy_to[k] - rpy_from[k]) / length;
                }
                (p, d, dd)
            }
        }
    }
}

/// A start pose and a chain of tagged pieces, each starting where the previous one ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub start: Pose,
    pub pieces: Vec<(Piece, String)>,
}

impl Plan {
    pub fn new(start: Pose) -> Plan {
        Plan {
            start,
            pieces: Vec::new(),
        }
    }

    /// Where the chain currently ends.
    pub fn end(&self) -> Pose {
        self.pieces
            .last()
            .map(|(p, _)| Pose::from_array(p.end()))
            .unwrap_or(self.start)
    }

    /// Appends a straight move to `to`.
    pub fn line_to(&mut self, to: Pose, tag: &str) -> Result<&mut Plan, TrajectoryError> {
        let piece = Piece::line(&self.end(), &to)?;
        self.pieces.push((piece, tag.to_string()));
        Ok(self)
    }

    /// Appends a circular arc through `via` to `to`.
    pub fn arc_to(
        &mut self,
        via: Vector3<f64>,
        to: Pose,
        tag: &str,
    ) -> Result<&mut Plan, TrajectoryError> {
        let piece = Piece::arc_through(&self.end(), &via, &to)?;
        self.pieces.push((piece, tag.to_string()));
        Ok(self)
    }

    pub fn length(&self) -> f64 {
        self.pieces.iter().map(|(p, _)| p.length()).sum()
    }
}

/// Segment names in order of first appearance, and each piece's index into them.
fn intern(plan: &Plan) -> (Vec<String>, Vec<usize>) {
    let mut names: Vec<String> = Vec::new();
    let index = plan
        .pieces
        .iter()
        .map(|(_, tag)| match names.iter().position(|n| n == tag) {
            Some(k) => k,
            None => {
                names.push(tag.clone());
                names.len() - 1
            }
        })
        .collect();
    (names, index)
}

/// Adds `scale ×` (piece state − piece start) to the pose, velocity and acceleration sums.
fn accumulate(piece: &Piece, state: (f64, f64, f64), out: &mut [[f64; 6]; 3]) {
    let (s, v, a) = state;
    let start = piece.start();
    let (p, d, dd) = piece.eval(s);
    for k in 0..6 {
        out[0][k] += p[k] - start[k];
        out[1][k] += d[k] * v;
        out[2][k] += dd[k] * v * v + d[k] * a;
    }
}

fn check_dt(dt: f64) -> Result<(), TrajectoryError> {
    if dt.is_finite() && dt > 0.0 {
        Ok(())
    } else {
        Err(TrajectoryError::Option {
            name: "dt",
            value: dt.to_string(),
            reason: "the sampling period must be a positive number of seconds".into(),
        })
    }
}

/// Samples of `plan` timed by `spec`, every `dt` seconds from t = 0; the last sample is the
/// first grid instant at or after the end of the motion (so the end pose is always included).
pub fn sample(plan: &Plan, spec: &MotionSpec, dt: f64) -> Result<Trajectory, TrajectoryError> {
    check_dt(dt)?;
    if plan.pieces.is_empty() {
        return Err(TrajectoryError::Geometry(
            "a plan needs at least one move".into(),
        ));
    }
    let (segments, tags) = intern(plan);
    let samples = match spec.transition {
        Transition::Continuous => sample_continuous(plan, spec, dt, &tags)?,
        Transition::Stop | Transition::Blend => sample_superposed(plan, spec, dt, &tags)?,
    };
    Ok(Trajectory { samples, segments })
}

fn grid(duration: f64, dt: f64) -> Result<impl Iterator<Item = f64>, TrajectoryError> {
    let samples = super::sample_budget(
        duration,
        dt,
        "sampling the motion",
        "dt, speed, accel or jerk",
    )?;
    Ok((0..samples).map(move |k| k as f64 * dt))
}

fn sample_continuous(
    plan: &Plan,
    spec: &MotionSpec,
    dt: f64,
    tags: &[usize],
) -> Result<Vec<Sample>, TrajectoryError> {
    let profile = Profile::new(spec.profile, plan.length(), &spec.limits)?;
    // Cumulative arc length at the start of each piece.
    let mut starts = Vec::with_capacity(plan.pieces.len());
    let mut total = 0.0;
    for (piece, _) in &plan.pieces {
        starts.push(total);
        total += piece.length();
    }
    let last = plan.pieces.len() - 1;
    Ok(grid(profile.duration, dt)?
        .map(|t| {
            let st = profile.at(t);
            let k = starts.partition_point(|&s0| s0 <= st.s).saturating_sub(1);
            let k = if t >= profile.duration { last } else { k };
            let piece = &plan.pieces[k].0;
            let local = (st.s - starts[k]).clamp(0.0, piece.length());
            let (p, d, dd) = if t >= profile.duration {
                (piece.end(), [0.0; 6], [0.0; 6])
            } else {
                piece.eval(local)
            };
            let mut velocity = [0.0; 6];
            let mut acceleration = [0.0; 6];
            for c in 0..6 {
                velocity[c] = d[c] * st.v;
                acceleration[c] = dd[c] * st.v * st.v + d[c] * st.a;
            }
            Sample {
                t,
                pose: Pose::from_array(p),
                velocity,
                acceleration,
                segment: Some(tags[k]),
            }
        })
        .collect())
}

fn sample_superposed(
    plan: &Plan,
    spec: &MotionSpec,
    dt: f64,
    tags: &[usize],
) -> Result<Vec<Sample>, TrajectoryError> {
    let profiles = plan
        .pieces
        .iter()
        .map(|(piece, _)| Profile::new(spec.profile, piece.length(), &spec.limits))
        .collect::<Result<Vec<_>, _>>()?;
    // Start time of each piece.
    let mut starts = Vec::with_capacity(profiles.len());
    let mut t0 = 0.0;
    for (k, profile) in profiles.iter().enumerate() {
        starts.push(t0);
        let overlap = match (spec.transition, profiles.get(k + 1)) {
            (Transition::Blend, Some(next)) => profile.ramp_time.min(next.ramp_time),
            _ => 0.0,
        };
        t0 += profile.duration - overlap;
    }
    let ends: Vec<f64> = starts
        .iter()
        .zip(&profiles)
        .map(|(s, p)| s + p.duration)
        .collect();
    let duration = ends.iter().cloned().fold(0.0, f64::max);
    let start_pose = plan.start.to_array();
    let mut done = 0; // pieces finished: ends are increasing (overlaps never exceed a ramp)
    Ok(grid(duration, dt)?
        .map(|t| {
            while done < ends.len() && t >= ends[done] {
                done += 1;
            }
            // Base: the exact waypoint reached last, so that stops land exactly on it.
            let base = if done == 0 {
                start_pose
            } else {
                plan.pieces[done - 1].0.end()
            };
            let mut sums = [[0.0; 6]; 3];
            let mut segment = tags[done.saturating_sub(1).min(tags.len() - 1)];
            for k in done..profiles.len() {
                if starts[k] > t {
                    break;
                }
                let st = profiles[k].at(t - starts[k]);
                accumulate(&plan.pieces[k].0, (st.s, st.v, st.a), &mut sums);
                segment = tags[k];
            }
            let mut pose = base;
            for c in 0..6 {
                pose[c] += sums[0][c];
            }
            Sample {
                t,
                pose: Pose::from_array(pose),
                velocity: sums[1],
                acceleration: sums[2],
                segment: Some(segment),
            }
        })
        .collect())
}
