//! Robot description: the immutable model a robot file compiles into.
//!
//! A robot file (`robots/*.toml`, see [`file`]) is parsed, validated and turned into a
//! [`Robot`]. Everything downstream (kinematics, statics, simulation, the ADS shadow, the
//! viewer) reads this struct and never the file. All quantities are SI (m, kg, s, N).

mod bounds;
pub mod drives;
mod error;
mod fields;
mod file;
pub mod lookup;
mod mechanism;
pub mod obstacles;
mod pulleys;
mod raw;
mod scale;
mod twins;

use nalgebra::{Matrix3, Vector3};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub use scale::{FAR_FRAME_SIZES, FarAway, MIN_FRAME_SIZE_M};

pub use drives::Drive;
pub use error::{
    INERTIA_RANGE, MASS_RANGE, MAX_CABLES, MAX_COORDINATE, MAX_FILE_BYTES, MAX_HOME_ANGLE,
    MAX_TENSION, MIN_CABLE_LENGTH, RobotFileError,
};
pub use fields::{DEFAULT_WINCH_KD, DEFAULT_WINCH_KI, DEFAULT_WINCH_KP, DEFAULT_WINCH_MASS};
pub use file::parse_robot;
pub use obstacles::{Obstacle, Shape};
pub use pulleys::{DEFAULT_MAX_WRAP, MAX_PULLEY_FRICTION, MAX_PULLEY_RADIUS, UNIT_AXIS_TOLERANCE};

/// Degrees of freedom the controller commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Dof {
    /// Translation only; the orientation is held at zero (e.g. seed 003's 4-cable robot).
    Three,
    /// Full pose (x, y, z, roll, pitch, yaw).
    Six,
}

impl Dof {
    /// Number of pose coordinates the robot controls (3 or 6).
    pub fn count(self) -> usize {
        match self {
            Dof::Three => 3,
            Dof::Six => 6,
        }
    }
}

/// How a cable's axial stiffness is given.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Stiffness {
    /// Constant stiffness k in N/m, independent of the free length.
    Constant(f64),
    /// Axial rigidity EA in N: k = EA / L0 with L0 the unstretched (rest) length.
    Ea(f64),
}

/// One cable: a frame anchor (exit point) and a platform anchor, plus its elasticity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cable {
    pub name: String,
    /// a_i: exit point on the frame, world frame, m.
    pub frame_anchor: Vector3<f64>,
    /// b_i: attachment point on the platform, platform frame, m.
    pub platform_anchor: Vector3<f64>,
    pub stiffness: Stiffness,
    /// Axial damping c in N·s/m (force = c · rate of stretch).
    pub damping: f64,
    /// The swivel pulley the cable leaves the frame over; `None` for a point exit (no
    /// pulley keys, or a radius of 0: then every result is today's, bit for bit).
    pub pulley: Option<Pulley>,
    /// Linear density of the cable, kg/m (0: massless and straight).
    pub mass_per_length: f64,
}

/// A swivel pulley (Pott, *Cable-Driven Parallel Robots*, 2018, §2.6): the frame anchor a_i
/// is the swivel point; the cable arrives from the winch along the swivel axis (travelling
/// along −axis), the pulley turns about that axis (swivel angle γ) and the cable wraps over
/// its wheel by β before it leaves tangentially towards the platform anchor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pulley {
    /// Wheel radius r, m (> 0).
    pub radius: f64,
    /// Unit swivel axis, world frame.
    pub axis: Vector3<f64>,
    /// Capstan friction coefficient μ (0: frictionless): the tension ratio across the wrap is
    /// e^{μβ}, the larger side being the one the cable is pulled towards.
    pub friction: f64,
    /// Largest wrap β the pulley allows, rad.
    pub max_wrap: f64,
    /// Allowed swivel angles γ ∈ [min, max], rad, when the file limits them.
    pub swivel_range: Option<[f64; 2]>,
}

impl Cable {
    /// Axial stiffness in N/m for a cable of rest length `rest_length` (m).
    pub fn stiffness_at(&self, rest_length: f64) -> f64 {
        match self.stiffness {
            Stiffness::Constant(k) => k,
            Stiffness::Ea(ea) => ea / rest_length.max(1e-9),
        }
    }

    /// Rest length that makes this cable carry `tension` (N) when stretched to `length` (m).
    ///
    /// Constant k: L0 = L − f/k. EA: f = EA (L − L0)/L0, so L0 = L · EA / (EA + f).
    pub fn rest_length_for(&self, length: f64, tension: f64) -> f64 {
        match self.stiffness {
            Stiffness::Constant(k) => length - tension / k,
            Stiffness::Ea(ea) => length * ea / (ea + tension),
        }
    }
}

/// The moving platform's rigid-body data, in the platform frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Platform {
    /// Total moving mass carried by the cables, kg.
    pub mass: f64,
    /// Centre of mass in the platform frame, m.
    pub com: Vector3<f64>,
    /// Inertia tensor about the centre of mass, platform axes, kg·m².
    pub inertia: Matrix3<f64>,
    /// Box drawn for the platform (edge lengths), m.
    pub size: Vector3<f64>,
    /// Centre of that box in the platform frame, m.
    pub box_center: Vector3<f64>,
    /// Masses offered as payload choices (e.g. seed 001's 1 kg and 15 kg), kg.
    pub payload_options: Vec<f64>,
}

impl Platform {
    /// Inertia of a uniform box of `size` and `mass` about its centre.
    pub fn uniform_box_inertia(mass: f64, size: &Vector3<f64>) -> Matrix3<f64> {
        let (x2, y2, z2) = (size.x * size.x, size.y * size.y, size.z * size.z);
        Matrix3::from_diagonal(&Vector3::new(y2 + z2, x2 + z2, x2 + y2)) * (mass / 12.0)
    }
}

/// Inclusive tension bounds used by the tension distribution, N.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TensionBounds {
    pub min: f64,
    pub max: f64,
}

/// Winch (actuated prismatic) limits and the gains of the simulated drive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Winch {
    /// m/s
    pub max_velocity: f64,
    /// m/s²
    pub max_acceleration: f64,
    /// m/s³
    pub max_jerk: f64,
    /// Reflected mass of drum and motor (J/r²) moved by the simulated drive, kg.
    pub mass: f64,
    /// PID of the simulated drive (force = kp·e + ki·∫e + kd·ė), N/m, N/(m·s), N·s/m.
    pub kp: f64,
    pub ki: f64,
    pub kd: f64,
}

/// An axis-aligned box, m.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Aabb {
    pub min: Vector3<f64>,
    pub max: Vector3<f64>,
}

impl Aabb {
    pub fn contains(&self, p: &Vector3<f64>) -> bool {
        (0..3).all(|k| p[k] >= self.min[k] - 1e-12 && p[k] <= self.max[k] + 1e-12)
    }
    pub fn center(&self) -> Vector3<f64> {
        (self.min + self.max) * 0.5
    }
    pub fn size(&self) -> Vector3<f64> {
        self.max - self.min
    }
}

/// The robot file's `[plc]` section, kept as written: the names of the controller's symbols
/// belong to the controller boundary (`cdpr-ads` parses and validates them into its
/// `PlcSymbols`); the core does not interpret them. The file's name and text come along so
/// that errors about the section are located as all robot-file errors are
/// (`file:line: plc.<key>: …`).
#[derive(Debug, Clone, Default)]
pub struct PlcSection {
    /// The file as named in messages (see [`RobotFileError`]).
    pub file: String,
    /// The text of the robot file the section was read from (empty for a robot made in code).
    pub text: std::sync::Arc<str>,
    /// The section's keys and values as written; `None` when the file has no `[plc]`.
    pub table: Option<toml::Table>,
}

/// Two sections are equal when they say the same: where they were read from does not count.
impl PartialEq for PlcSection {
    fn eq(&self, other: &PlcSection) -> bool {
        self.table == other.table
    }
}

/// What closes the loop between the frame and the platform.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// A cable-driven parallel robot: `Robot::cables`.
    Cables,
    /// Seed 002's linear delta (Keops) and the cylinder it must cover.
    LinearDelta {
        delta: crate::legs::LinearDelta,
        cylinder: crate::legs::Cylinder,
    },
    /// Seed 004's 2-RSSU motion platform (pitch and roll).
    Rssu2(crate::legs::Rssu2),
}

impl Mechanism {
    /// The robot file's `kind`: `cdpr`, `linear_delta` or `rssu2`.
    pub fn kind(&self) -> &'static str {
        match self {
            Mechanism::Cables => "cdpr",
            Mechanism::LinearDelta { .. } => "linear_delta",
            Mechanism::Rssu2(_) => "rssu2",
        }
    }
}

/// A compiled, validated robot. Immutable: simulation state lives elsewhere.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Robot {
    /// Cables (a CDPR) or rigid legs (linear delta, 2-RSSU). For legs `cables` is empty,
    /// `tension` unused and `winch` holds the actuator limits and drive gains.
    pub mechanism: Mechanism,
    pub name: String,
    pub description: String,
    /// Where the description comes from (paper, controller, ...).
    pub source: String,
    /// File it was read from, if any.
    #[serde(skip)]
    pub path: Option<PathBuf>,
    pub dof: Dof,
    pub cables: Vec<Cable>,
    pub platform: Platform,
    pub tension: TensionBounds,
    pub winch: Winch,
    /// The drives as built (motor, gearbox, drum), one per cable; empty when the file does
    /// not describe them (the winches are then `winch`'s PID drives on the payout).
    pub drives: Vec<Drive>,
    /// Region the trajectories are meant to stay in.
    pub workspace: Aabb,
    /// Frame box for drawing (defaults to the anchors' bounding box).
    pub frame: Aabb,
    /// Pose the platform starts at when nothing else is said (x, y, z, roll, pitch, yaw).
    pub home: [f64; 6],
    /// The `[plc]` section, uninterpreted (the ADS crate reads it).
    #[serde(skip)]
    pub plc: PlcSection,
    /// Solids the cables and the platform must keep clear of (`[[obstacles]]`).
    pub obstacles: Vec<Obstacle>,
}

impl Robot {
    /// Reads and validates a robot file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Robot, RobotFileError> {
        let path = path.as_ref();
        let text = Robot::read_file_text(path)?;
        Robot::from_text(&text, path)
    }

    /// The text of a robot file, refused past [`MAX_FILE_BYTES`] (a robot file is a
    /// few kB: `/dev/zero` or a video is not read to the end).
    pub fn read_file_text(path: &Path) -> Result<String, RobotFileError> {
        let file = path.display().to_string();
        crate::toml_location::read_capped(path, MAX_FILE_BYTES).map_err(|e| match e {
            None => RobotFileError::TooLarge {
                file,
                max: MAX_FILE_BYTES,
            },
            Some(error) => RobotFileError::Io { file, error },
        })
    }

    /// Parses and validates `text`, read from `path` (named in the errors, kept as the
    /// robot's `path`).
    pub fn from_text(text: &str, path: &Path) -> Result<Robot, RobotFileError> {
        let mut robot = parse_robot(text, &path.display().to_string())?;
        robot.path = Some(path.to_path_buf());
        Ok(robot)
    }

    /// A robot shipped with the project (`robots/NAME.toml`, compiled into the binary).
    pub fn builtin(name: &str) -> Option<Result<Robot, RobotFileError>> {
        BUILTIN_ROBOTS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| parse_robot(text, &format!("robots/{n}.toml (built in)")))
    }

    /// Names of the robots compiled into the binary.
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTIN_ROBOTS.iter().map(|(n, _)| *n)
    }

    /// Loads `spec`, a robot file's path or a robot's name, by the one lookup rule of
    /// [`lookup`]: a path (it has a separator or ends in `.toml`) must exist; a name is the
    /// shipped robot, else `robots/NAME.toml`, else `NAME.toml`. [`lookup::find`] also says
    /// where the robot came from and which files of the same name it shadows.
    pub fn load(spec: &str) -> Result<Robot, RobotFileError> {
        lookup::find(spec).map(|found| found.robot)
    }

    pub fn cable_count(&self) -> usize {
        self.cables.len()
    }

    /// What a user should know about the platform's orientation: when every platform anchor
    /// is at one point, the cables pass no moment to the platform and nothing holds its
    /// orientation. `dof = 3` does not hold it either: it only makes the kinematics and
    /// statics (ik, fk, tensions, workspace, preflight, the built-in trajectories) treat the
    /// orientation as zero; the simulation moves the platform as a free rigid body.
    pub fn orientation_warning(&self) -> Option<String> {
        let first = self.cables.first()?.platform_anchor;
        let at_one_point = self
            .cables
            .iter()
            .all(|c| (c.platform_anchor - first).norm() <= 1e-9);
        if !self.is_cable_robot() || !at_one_point {
            return None;
        }
        let above = (self.platform.com - first).z;
        let fate = if above > 1e-9 {
            format!(
                "which here tips over (its centre of mass is {} m above that point)",
                crate::text::short(above)
            )
        } else {
            "held only by gravity: it swings".to_string()
        };
        let what_dof_does = match self.dof {
            Dof::Three => {
                "`dof = 3` does not hold it either: it makes ik, fk, tensions, equilibrium, \
                 workspace, preflight and the built-in trajectories treat the orientation as \
                 zero, while"
            }
            Dof::Six => {
                "with `dof = 6` the wrench matrix's moment rows are zero (tensions, workspace and \
                 preflight find no orientation held), and"
            }
        };
        Some(format!(
            "all {} platform anchors are at one point ({}) m: the cables pass no moment to the \
             platform and nothing holds its orientation. {what_dof_does} simulate, view and \
             shadow move the platform as a free rigid body, {fate}. Spread the platform \
             anchors, or put the centre of mass at or below that point",
            self.cables.len(),
            first
                .iter()
                .map(|x| crate::text::short(*x))
                .collect::<Vec<_>>()
                .join(", "),
        ))
    }

    /// True for a cable-driven robot (the cable kinematics, statics and models apply).
    pub fn is_cable_robot(&self) -> bool {
        self.mechanism == Mechanism::Cables
    }

    /// True when any cable leaves its frame over a swivel pulley.
    pub fn has_pulleys(&self) -> bool {
        self.cables.iter().any(|c| c.pulley.is_some())
    }

    /// True when any cable has mass.
    pub fn has_cable_mass(&self) -> bool {
        self.cables.iter().any(|c| c.mass_per_length > 0.0)
    }

    /// The same robot carrying a different total moving mass (inertia scaled with it).
    pub fn with_mass(&self, mass: f64) -> Robot {
        let mut robot = self.clone();
        let scale = mass / self.platform.mass;
        robot.platform.mass = mass;
        robot.platform.inertia *= scale;
        robot
    }

    /// The same robot with other anchors — e.g. the ones a controller holds (seed 000's
    /// automatic generation reads them over ADS). Everything else is kept: names, mass,
    /// inertia, stiffness, damping, limits, `[plc]`; the frame box grows to hold the new
    /// frame anchors. Errors name the cable.
    pub fn with_geometry(
        &self,
        frame_anchors: &[Vector3<f64>],
        platform_anchors: &[Vector3<f64>],
    ) -> Result<Robot, GeometryError> {
        let expected = self.cable_count();
        if frame_anchors.len() != expected || platform_anchors.len() != expected {
            return Err(GeometryError::CableCount {
                expected,
                frame: frame_anchors.len(),
                platform: platform_anchors.len(),
            });
        }
        let mut robot = self.clone();
        let mut twins = twins::Twins::with_capacity(frame_anchors.len());
        for (k, (a, b)) in frame_anchors.iter().zip(platform_anchors).enumerate() {
            let name = &self.cables[k].name;
            for (which, v) in [("frame", a), ("platform", b)] {
                if v.iter().any(|x| !x.is_finite()) {
                    return Err(GeometryError::NotFinite {
                        cable: k + 1,
                        name: name.clone(),
                        which,
                        value: [v.x, v.y, v.z],
                    });
                }
            }
            if let Some(j) = twins.add(*a, *b) {
                return Err(GeometryError::Coincident {
                    cable: k + 1,
                    name: name.clone(),
                    other: j + 1,
                    other_name: self.cables[j].name.clone(),
                });
            }
            robot.cables[k].frame_anchor = *a;
            robot.cables[k].platform_anchor = *b;
            robot.frame.min = robot.frame.min.inf(a);
            robot.frame.max = robot.frame.max.sup(a);
        }
        Ok(robot)
    }

    /// Gravity wrench about the platform origin, world axes: [F; M] with F = (0, 0, −m g).
    pub fn gravity_wrench(&self, world_from_platform_rotation: &Matrix3<f64>) -> [f64; 6] {
        let force = Vector3::new(0.0, 0.0, -self.platform.mass * GRAVITY);
        let moment = (world_from_platform_rotation * self.platform.com).cross(&force);
        [force.x, force.y, force.z, moment.x, moment.y, moment.z]
    }
}

/// Why anchors or pulleys do not fit a robot ([`Robot::with_geometry`],
/// [`Robot::with_pulleys`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GeometryError {
    #[error(
        "the robot has {expected} cables but the geometry gives {radii} pulley radii and {axes} pulley axes"
    )]
    PulleyCount {
        expected: usize,
        radii: usize,
        axes: usize,
    },
    #[error(
        "pulley radius of cable {cable} ({name}) must be in [0, {}] m (0 = no pulley), got {value}",
        pulleys::MAX_PULLEY_RADIUS
    )]
    PulleyRadius {
        cable: usize,
        name: String,
        value: f64,
    },
    #[error(
        "pulley axis of cable {cable} ({name}) must be a finite unit vector, got {value:?} (length {length})"
    )]
    PulleyAxis {
        cable: usize,
        name: String,
        value: [f64; 3],
        length: f64,
    },
    #[error(
        "the robot has {expected} cables but the geometry gives {frame} frame and {platform} platform anchors"
    )]
    CableCount {
        expected: usize,
        frame: usize,
        platform: usize,
    },
    #[error("{which} anchor of cable {cable} ({name}) is not finite: {value:?}")]
    NotFinite {
        cable: usize,
        name: String,
        which: &'static str,
        value: [f64; 3],
    },
    #[error(
        "cable {cable} ({name}) coincides with cable {other} ({other_name}): same frame and platform anchors"
    )]
    Coincident {
        cable: usize,
        name: String,
        other: usize,
        other_name: String,
    },
}

impl Robot {
    /// The same robot with the swivel pulleys a controller holds: per cable a wheel radius
    /// (m, 0 = the cable leaves at its frame anchor) and a unit swivel axis (world frame; any
    /// vector for a radius of 0). Friction, largest wrap and swivel range are kept from this
    /// robot's pulley of that cable, else frictionless, half a turn and unlimited. Errors name
    /// the cable.
    pub fn with_pulleys(
        &self,
        radii: &[f64],
        axes: &[Vector3<f64>],
    ) -> Result<Robot, GeometryError> {
        let expected = self.cable_count();
        if radii.len() != expected || axes.len() != expected {
            return Err(GeometryError::PulleyCount {
                expected,
                radii: radii.len(),
                axes: axes.len(),
            });
        }
        let mut robot = self.clone();
        for (k, (&radius, axis)) in radii.iter().zip(axes).enumerate() {
            let name = &self.cables[k].name;
            if !(radius.is_finite() && (0.0..=pulleys::MAX_PULLEY_RADIUS).contains(&radius)) {
                return Err(GeometryError::PulleyRadius {
                    cable: k + 1,
                    name: name.clone(),
                    value: radius,
                });
            }
            if radius == 0.0 {
                robot.cables[k].pulley = None;
                continue;
            }
            let length = axis.norm();
            if !(length.is_finite() && (length - 1.0).abs() <= pulleys::UNIT_AXIS_TOLERANCE) {
                return Err(GeometryError::PulleyAxis {
                    cable: k + 1,
                    name: name.clone(),
                    value: [axis.x, axis.y, axis.z],
                    length,
                });
            }
            let kept = self.cables[k].pulley;
            robot.cables[k].pulley = Some(Pulley {
                radius,
                axis: axis / length,
                friction: kept.map_or(0.0, |p| p.friction),
                max_wrap: kept.map_or(pulleys::DEFAULT_MAX_WRAP, |p| p.max_wrap),
                swivel_range: kept.and_then(|p| p.swivel_range),
            });
        }
        Ok(robot)
    }
}

/// Standard gravity, m/s², along −z.
pub const GRAVITY: f64 = 9.81;

/// Robot files shipped in `robots/`, compiled in so that the binary works from any directory.
pub const BUILTIN_ROBOTS: &[(&str, &str)] = &[
    ("uvigo8", include_str!("../../../../robots/uvigo8.toml")),
    ("silva4", include_str!("../../../../robots/silva4.toml")),
    ("caroca", include_str!("../../../../robots/caroca.toml")),
    ("keops", include_str!("../../../../robots/keops.toml")),
    ("rssu2", include_str!("../../../../robots/rssu2.toml")),
    (
        "uvigo8-pulleys",
        include_str!("../../../../robots/uvigo8-pulleys.toml"),
    ),
    (
        "caroca-pulleys",
        include_str!("../../../../robots/caroca-pulleys.toml"),
    ),
    (
        "silva4-obstacle",
        include_str!("../../../../robots/silva4-obstacle.toml"),
    ),
    (
        "uvigo8-drives",
        include_str!("../../../../robots/uvigo8-drives.toml"),
    ),
];

#[cfg(test)]
mod tests;
