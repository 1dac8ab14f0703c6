//! Cables that must not touch: at one pose, the smallest distances between the cables' free
//! segments (exit point — the tangent point over a pulley — to platform anchor), the platform's
//! box, the frame's box and the robot's `[[obstacles]]`, each pair named, and which of them
//! come closer than a clearance.
//!
//! The pairs ([`Kind`]):
//! - cable–cable: segment–segment distance (closed form); two cables that share an end (a
//!   common platform anchor or exit point, within [`SHARED_END`]) are left out, as they touch
//!   there by design;
//! - cable–platform: whether a cable cuts through the platform's box (`[platform] size`,
//!   `box_center`, platform frame). Its own anchor lies on that box, so the distance is the
//!   smallest signed distance (negative inside) of the segment to the box, and the pair is in
//!   violation when the cable goes deeper than [`BODY_TOLERANCE`] into it — the clearance
//!   does not apply. A cable anchored inside the box (a point-mass robot) is left out;
//! - cable–frame: the cable's platform end outside the `[frame]` box (deeper than
//!   [`BODY_TOLERANCE`]); the exit point is on the frame, so the segment leaves the box only then;
//! - platform–frame: the platform's box corners' distance inside the frame box;
//! - cable–obstacle, platform–obstacle: signed distances (negative: overlap depth, or an
//!   under-estimate of it) to a box, cylinder, sphere or half-space.
//!
//! A pair is in violation when its distance is below its limit: the clearance for the last
//! three kinds. Everything is f64 closed forms or golden-section searches on convex functions
//! ([`distance`]): parry3d (which rapier3d brings) computes in f32, whose 1e-7 relative
//! precision is 0.1 mm on a 1 km robot and whose cylinders are built around a fixed axis.

pub mod distance;
#[cfg(test)]
mod tests;

use crate::kinematics::InverseKinematics;
use crate::options::{DefaultValue, Group, OptionSpec, number};
use crate::pose::Pose;
use crate::robot::Robot;
use distance::{OrientedBox, box_shape, segment_min, segment_segment, segment_shape};
use nalgebra::Vector3;
use serde::Serialize;

/// `clearance`: the distance cables and the platform keep from each other and from obstacles.
pub const CLEARANCE: OptionSpec = OptionSpec {
    name: "clearance",
    ..number(
        Group::Command,
        "m",
        0.0,
        10.0,
        "M",
        "distance cables and the platform must keep from each other, the frame and the \
         robot's [[obstacles]]; closer is an interference",
    )
    .default(DefaultValue::Number(DEFAULT_CLEARANCE))
};

/// [`CLEARANCE`]'s default, m.
pub const DEFAULT_CLEARANCE: f64 = 0.01;

/// Two cable ends closer than this are one shared end, m.
pub const SHARED_END: f64 = 1e-6;

/// How deep a cable may run into the platform's box, or its platform end out of the frame's
/// box, before it counts, m: rounding and anchors drawn on the box's surface.
pub const BODY_TOLERANCE: f64 = 1e-3;

/// What a pair is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    CableCable,
    CablePlatform,
    CableFrame,
    CableObstacle,
    PlatformFrame,
    PlatformObstacle,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::CableCable,
        Kind::CablePlatform,
        Kind::CableFrame,
        Kind::CableObstacle,
        Kind::PlatformFrame,
        Kind::PlatformObstacle,
    ];

    /// Its name in JSON and text (`cable_obstacle`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::CableCable => "cable_cable",
            Kind::CablePlatform => "cable_platform",
            Kind::CableFrame => "cable_frame",
            Kind::CableObstacle => "cable_obstacle",
            Kind::PlatformFrame => "platform_frame",
            Kind::PlatformObstacle => "platform_obstacle",
        }
    }
}

/// One side of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// A cable, by index in the robot's cables.
    Cable(usize),
    Platform,
    Frame,
    /// An obstacle, by index in the robot's obstacles.
    Obstacle(usize),
}

/// Two things and how close they come at the pose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    pub kind: Kind,
    pub a: Part,
    pub b: Part,
    /// Their names: a cable's or an obstacle's own, else `platform` or `frame`.
    pub name_a: String,
    pub name_b: String,
    /// Smallest signed distance, m (negative: they overlap).
    pub distance: f64,
    /// In violation below this, m: the clearance, or −[`BODY_TOLERANCE`] (see [`Kind`]).
    pub limit: f64,
    /// Where on `a` they come closest, world frame, m.
    pub point: Vector3<f64>,
}

impl Pair {
    pub fn is_violation(&self) -> bool {
        self.distance < self.limit
    }

    /// The cables in the pair.
    pub fn cables(&self) -> impl Iterator<Item = usize> {
        [self.a, self.b].into_iter().filter_map(|p| match p {
            Part::Cable(i) => Some(i),
            _ => None,
        })
    }
}

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |part: Part, name: &str| match part {
            Part::Cable(_) => format!("cable {name}"),
            Part::Obstacle(_) => format!("obstacle {name}"),
            _ => name.to_string(),
        };
        write!(
            f,
            "{} – {}: {:.1} mm",
            side(self.a, &self.name_a),
            side(self.b, &self.name_b),
            self.distance * 1e3
        )
    }
}

/// Every pair at one pose, and the clearance they were held to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// m.
    pub clearance: f64,
    pub pairs: Vec<Pair>,
}

/// How many pairs of each kind are in violation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub cable_cable: usize,
    pub cable_platform: usize,
    pub cable_frame: usize,
    pub cable_obstacle: usize,
    pub platform_frame: usize,
    pub platform_obstacle: usize,
}

impl Counts {
    pub fn add(&mut self, kind: Kind, n: usize) {
        *match kind {
            Kind::CableCable => &mut self.cable_cable,
            Kind::CablePlatform => &mut self.cable_platform,
            Kind::CableFrame => &mut self.cable_frame,
            Kind::CableObstacle => &mut self.cable_obstacle,
            Kind::PlatformFrame => &mut self.platform_frame,
            Kind::PlatformObstacle => &mut self.platform_obstacle,
        } += n;
    }

    pub fn get(&self, kind: Kind) -> usize {
        match kind {
            Kind::CableCable => self.cable_cable,
            Kind::CablePlatform => self.cable_platform,
            Kind::CableFrame => self.cable_frame,
            Kind::CableObstacle => self.cable_obstacle,
            Kind::PlatformFrame => self.platform_frame,
            Kind::PlatformObstacle => self.platform_obstacle,
        }
    }

    pub fn total(&self) -> usize {
        Kind::ALL.iter().map(|&k| self.get(k)).sum()
    }
}

impl Report {
    /// The pairs closer than their limit.
    pub fn violations(&self) -> impl Iterator<Item = &Pair> {
        self.pairs.iter().filter(|p| p.is_violation())
    }

    pub fn is_clear(&self) -> bool {
        self.violations().next().is_none()
    }

    /// The pair with the least margin (distance − limit), violated or not.
    pub fn worst(&self) -> Option<&Pair> {
        self.pairs
            .iter()
            .min_by(|a, b| (a.distance - a.limit).total_cmp(&(b.distance - b.limit)))
    }

    /// Violations by kind.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for p in self.violations() {
            c.add(p.kind, 1);
        }
        c
    }

    /// Per cable: whether it is in a violation.
    pub fn cables_in_violation(&self, cables: usize) -> Vec<bool> {
        let mut out = vec![false; cables];
        for i in self.violations().flat_map(Pair::cables) {
            if let Some(x) = out.get_mut(i) {
                *x = true;
            }
        }
        out
    }
}

/// The platform's box at `pose`, world frame.
pub fn platform_box(robot: &Robot, pose: &Pose) -> OrientedBox {
    let rotation = *pose.rotation().matrix();
    OrientedBox {
        center: pose.position + rotation * robot.platform.box_center,
        rotation,
        half: robot.platform.size * 0.5,
    }
}

/// The cables' free segments at `pose` (taken as given, also for a 3-DOF robot): (exit point,
/// platform anchor), world frame, m.
pub fn segments(robot: &Robot, pose: &Pose) -> Vec<(Vector3<f64>, Vector3<f64>)> {
    let ik = InverseKinematics::at_actual_pose(robot, pose);
    ik.cables
        .iter()
        .map(|g| {
            let anchor = pose.position + g.arm;
            (g.exit_point(&anchor), anchor)
        })
        .collect()
}

/// Every pair of `robot` at `pose` (taken as given), held to `clearance` (m). Only cable
/// robots have cables; a robot with legs is checked for its platform only.
pub fn check(robot: &Robot, pose: &Pose, clearance: f64) -> Report {
    let cables = if robot.is_cable_robot() {
        segments(robot, pose)
    } else {
        Vec::new()
    };
    let body = platform_box(robot, pose);
    let frame = OrientedBox::aligned(&robot.frame.min, &robot.frame.max);
    let cable_name = |i: usize| robot.cables[i].name.clone();
    let mut pairs = Vec::new();
    for i in 0..cables.len() {
        let (e1, a1) = cables[i];
        for (j, &(e2, a2)) in cables.iter().enumerate().skip(i + 1) {
            let shared = [(e1, e2), (a1, a2), (e1, a2), (a1, e2)]
                .iter()
                .any(|(p, q)| (p - q).norm() < SHARED_END);
            if shared {
                continue;
            }
            let (d, p, _) = segment_segment(&a1, &e1, &a2, &e2);
            pairs.push(Pair {
                kind: Kind::CableCable,
                a: Part::Cable(i),
                b: Part::Cable(j),
                name_a: cable_name(i),
                name_b: cable_name(j),
                distance: d,
                limit: clearance,
                point: p,
            });
        }
    }
    for (i, (exit, anchor)) in cables.iter().enumerate() {
        if body.signed_distance(anchor) >= -BODY_TOLERANCE {
            let (d, p) = segment_min(|p| body.signed_distance(p), anchor, exit, 0.0);
            pairs.push(Pair {
                kind: Kind::CablePlatform,
                a: Part::Cable(i),
                b: Part::Platform,
                name_a: cable_name(i),
                name_b: "platform".into(),
                distance: d,
                limit: -BODY_TOLERANCE,
                point: p,
            });
        }
        pairs.push(Pair {
            kind: Kind::CableFrame,
            a: Part::Cable(i),
            b: Part::Frame,
            name_a: cable_name(i),
            name_b: "frame".into(),
            distance: -frame.signed_distance(anchor),
            limit: -BODY_TOLERANCE,
            point: *anchor,
        });
        for (k, o) in robot.obstacles.iter().enumerate() {
            let (d, p) = segment_shape(&o.shape, anchor, exit);
            pairs.push(Pair {
                kind: Kind::CableObstacle,
                a: Part::Cable(i),
                b: Part::Obstacle(k),
                name_a: cable_name(i),
                name_b: o.name.clone(),
                distance: d,
                limit: clearance,
                point: p,
            });
        }
    }
    let (inside, corner) = body
        .corners()
        .into_iter()
        .map(|c| (-frame.signed_distance(&c), c))
        .fold(
            (f64::INFINITY, body.center),
            |b, x| if x.0 < b.0 { x } else { b },
        );
    pairs.push(Pair {
        kind: Kind::PlatformFrame,
        a: Part::Platform,
        b: Part::Frame,
        name_a: "platform".into(),
        name_b: "frame".into(),
        distance: inside,
        limit: clearance,
        point: corner,
    });
    for (k, o) in robot.obstacles.iter().enumerate() {
        let (d, p) = box_shape(&body, &o.shape);
        pairs.push(Pair {
            kind: Kind::PlatformObstacle,
            a: Part::Platform,
            b: Part::Obstacle(k),
            name_a: "platform".into(),
            name_b: o.name.clone(),
            distance: d,
            limit: clearance,
            point: p,
        });
    }
    Report { clearance, pairs }
}
