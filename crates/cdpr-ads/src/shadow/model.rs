//! The model the shadow runs, built from the controller's geometry (seed 000 §4.2–4.3, paraphrased: the
//! script reads the anchors, lengths, cable angles and TCP pose and generates the scene).
//!
//! The anchors always come from the controller: the shadow mirrors the machine the controller
//! drives. Everything the controller does not hold — mass, inertia, stiffness, damping, tension
//! bounds, winch limits — comes from a robot file when one is given, else from
//! [`default_robot`]'s template. With a robot file the two geometries are compared anchor by
//! anchor ([`compare_anchors`]).

use crate::link::ControllerGeometry;
use cdpr_core::kinematics::{self, FkOptions, Pose};
use cdpr_core::robot::{
    Aabb, Cable, Dof, GeometryError, Platform, PlcSection, Robot, Stiffness, TensionBounds, Winch,
};
use nalgebra::Vector3;
use serde::Serialize;

/// Seed 000's template (§4.3, step 1): the platform is "a cuboid with dynamic behaviour and a
/// mass of 1 kg" spanning the platform anchors.
pub const TEMPLATE_MASS: f64 = 1.0;
/// Cable stiffness of the template, N/m (uvigo8's, seed 000's robot).
pub const TEMPLATE_STIFFNESS: f64 = 20_000.0;
/// Cable damping of the template, N·s/m (uvigo8's).
pub const TEMPLATE_DAMPING: f64 = 50.0;
/// Tension bounds of the template, N (uvigo8's).
pub const TEMPLATE_TENSION: TensionBounds = TensionBounds {
    min: 1.0,
    max: 100.0,
};
/// Smallest edge of the template's cuboid, m (coplanar anchors would give a flat box).
pub const TEMPLATE_MIN_EDGE: f64 = 0.02;

/// Anchors closer than this are the same anchor, m: 0.01 mm, above what a REAL (f32) array
/// in mm can represent near 1.5 m (1.2·10⁻⁴ mm) and far below any mounting difference.
pub const ANCHOR_TOLERANCE: f64 = 1e-5;

/// The template's winch: seed 003's published actuator limits (3 m/s, 15 m/s², 22.5 m/s³),
/// the only ones either controller paper gives. The velocity is what the command guard checks
/// jumps against; the default `ideal` winches use nothing else.
pub fn template_winch() -> Winch {
    Winch {
        max_velocity: 3.0,
        max_acceleration: 15.0,
        max_jerk: 22.5,
        mass: cdpr_core::robot::DEFAULT_WINCH_MASS,
        kp: cdpr_core::robot::DEFAULT_WINCH_KP,
        ki: cdpr_core::robot::DEFAULT_WINCH_KI,
        kd: cdpr_core::robot::DEFAULT_WINCH_KD,
    }
}

/// The robot the shadow builds when no robot file is given: the controller's anchors, a 1 kg
/// uniform cuboid over the platform anchors' bounding box (each edge at least 2 cm), cables of
/// k = 20 000 N/m and c = 50 N·s/m, tensions 1…100 N, [`template_winch`], 6 DOF with six or
/// more cables (3 DOF, orientation held, below), home at the controller's TCP pose, the
/// default symbol names (informational: the shadow talks through its controller).
pub fn default_robot(geometry: &ControllerGeometry) -> Result<Robot, GeometryError> {
    let m = geometry.frame_anchors.len();
    let bbox = |points: &[Vector3<f64>]| {
        let first = points.first().copied().unwrap_or_else(Vector3::zeros);
        points.iter().fold(
            Aabb {
                min: first,
                max: first,
            },
            |b, p| Aabb {
                min: b.min.inf(p),
                max: b.max.sup(p),
            },
        )
    };
    let anchors = bbox(&geometry.platform_anchors);
    let size = anchors.size().map(|e| e.max(TEMPLATE_MIN_EDGE));
    let center = anchors.center();
    let frame = bbox(&geometry.frame_anchors);
    let template = Robot {
        name: "controller".into(),
        description: format!(
            "{m}-cable CDPR built from the controller's geometry (seed 000's automatic generation)"
        ),
        source: "ADS: the controller's anchors; the shadow's default template for the rest".into(),
        path: None,
        dof: if m >= 6 { Dof::Six } else { Dof::Three },
        cables: (1..=m)
            .map(|k| Cable {
                name: format!("cable{k}"),
                frame_anchor: Vector3::zeros(),
                platform_anchor: Vector3::zeros(),
                stiffness: Stiffness::Constant(TEMPLATE_STIFFNESS),
                damping: TEMPLATE_DAMPING,
                pulley: None,
                mass_per_length: 0.0,
            })
            .collect(),
        platform: Platform {
            mass: TEMPLATE_MASS,
            com: center,
            inertia: Platform::uniform_box_inertia(TEMPLATE_MASS, &size),
            size,
            box_center: center,
            payload_options: Vec::new(),
        },
        tension: TEMPLATE_TENSION,
        winch: template_winch(),
        drives: Vec::new(),
        workspace: frame,
        frame,
        home: geometry.tcp_pose.to_array(),
        plc: PlcSection::default(),
        obstacles: Vec::new(),
        mechanism: cdpr_core::robot::Mechanism::Cables,
    };
    with_controller_geometry(&template, geometry)
}

/// `robot` with the controller's anchors and, when the controller publishes them, its swivel
/// pulleys (without them the robot's own pulleys are kept: a robot file's, or none).
pub fn with_controller_geometry(
    robot: &Robot,
    geometry: &ControllerGeometry,
) -> Result<Robot, GeometryError> {
    let robot = robot.with_geometry(&geometry.frame_anchors, &geometry.platform_anchors)?;
    match &geometry.pulleys {
        Some(p) => robot.with_pulleys(&p.radii, &p.axes),
        None => Ok(robot),
    }
}

/// Which anchor of a cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorKind {
    /// a_i, world frame.
    Frame,
    /// b_i, platform frame.
    Platform,
}

/// One anchor where the robot file and the controller disagree (SI; the CLI prints mm).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnchorDifference {
    /// 1-based.
    pub cable: usize,
    pub name: String,
    pub anchor: AnchorKind,
    /// m.
    pub file: [f64; 3],
    /// m.
    pub controller: [f64; 3],
    /// |controller − file|, m.
    pub distance: f64,
}

/// Every anchor of `file` that lies more than `tolerance` (m) from the controller's.
pub fn compare_anchors(
    file: &Robot,
    geometry: &ControllerGeometry,
    tolerance: f64,
) -> Vec<AnchorDifference> {
    let mut out = Vec::new();
    for (k, cable) in file.cables.iter().enumerate() {
        let pairs = [
            (
                AnchorKind::Frame,
                cable.frame_anchor,
                geometry.frame_anchors.get(k),
            ),
            (
                AnchorKind::Platform,
                cable.platform_anchor,
                geometry.platform_anchors.get(k),
            ),
        ];
        for (anchor, ours, theirs) in pairs {
            let Some(theirs) = theirs else { continue };
            let distance = (theirs - ours).norm();
            if distance > tolerance {
                out.push(AnchorDifference {
                    cable: k + 1,
                    name: cable.name.clone(),
                    anchor,
                    file: [ours.x, ours.y, ours.z],
                    controller: [theirs.x, theirs.y, theirs.z],
                    distance,
                });
            }
        }
    }
    out
}

/// Largest anchor displacement between two readings of a controller's geometry, m (and the
/// 1-based cable), or `None` if the cable counts differ.
pub fn geometry_change(a: &ControllerGeometry, b: &ControllerGeometry) -> Option<(usize, f64)> {
    if a.frame_anchors.len() != b.frame_anchors.len()
        || a.platform_anchors.len() != b.platform_anchors.len()
    {
        return None;
    }
    let pairs = a
        .frame_anchors
        .iter()
        .zip(&b.frame_anchors)
        .chain(a.platform_anchors.iter().zip(&b.platform_anchors));
    let m = a.frame_anchors.len().max(1);
    let mut worst = (1, 0.0);
    for (k, (p, q)) in pairs.enumerate() {
        let d = (p - q).norm();
        if d > worst.1 {
            worst = (k % m + 1, d);
        }
    }
    Some(worst)
}

/// How the controller's own numbers agree with the model built from them, checked once at
/// start (a wrong unit, sign or angle convention shows here first; seed 000 needed eq. 5's
/// c_dir/c_off correction for exactly this).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Consistency {
    /// Forward kinematics of the controller's commanded lengths, from its TCP pose (None if it
    /// does not converge). Seed 000's TCP pose is "the last pose used for the inverse
    /// kinematics", so the commanded lengths — not the actual ones, which trail them by the
    /// drives' following error — must give it back.
    pub fk_of_lengths: Option<Pose>,
    /// Largest position difference between that pose and the TCP pose, m.
    pub fk_position_offset: Option<f64>,
    /// Largest difference between the controller's cable angles θz, θx and the model's at
    /// the TCP pose, rad.
    pub angle_mismatch: f64,
}

pub fn consistency(
    robot: &Robot,
    geometry: &ControllerGeometry,
    commanded_lengths: &[f64],
) -> Consistency {
    let tcp = kinematics::effective_pose(robot, &geometry.tcp_pose);
    let options = FkOptions {
        guess: Some(tcp),
        ..FkOptions::default()
    };
    let fk = kinematics::forward(robot, commanded_lengths, &options)
        .ok()
        .map(|s| s.pose);
    let angles = kinematics::inverse(robot, &tcp).angles();
    let angle_mismatch = angles
        .iter()
        .zip(&geometry.cable_angles)
        .flat_map(|(ours, theirs)| {
            [
                kinematics::wrap_angle(ours.theta_z - theirs[0]).abs(),
                kinematics::wrap_angle(ours.theta_x - theirs[1]).abs(),
            ]
        })
        .fold(0.0, f64::max);
    Consistency {
        fk_position_offset: fk.map(|p| p.distance(&tcp).0),
        fk_of_lengths: fk,
        angle_mismatch,
    }
}
