//! A robot file as written: serde structures that keep each value's byte range
//! (`Spanned`), so that every error can name its line. Checked and compiled by [`super::file`]
//! (cable robots) and [`super::mechanism`] (robots with legs), through [`super::fields`].

use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRobot {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) source: String,
    /// `cdpr` (default), `linear_delta` or `rssu2`.
    #[serde(default)]
    pub(super) kind: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) dof: Option<Spanned<i64>>,
    pub(super) platform: RawPlatform,
    #[serde(default)]
    pub(super) cables: Option<RawCables>,
    #[serde(default)]
    pub(super) tension: Option<RawTension>,
    #[serde(default)]
    pub(super) winch: Option<RawWinch>,
    /// Actuator limits and drive gains of a robot with legs (the `winch` of a CDPR).
    #[serde(default)]
    pub(super) actuators: Option<RawWinch>,
    #[serde(default)]
    pub(super) linear_delta: Option<RawLinearDelta>,
    #[serde(default)]
    pub(super) rssu2: Option<RawRssu2>,
    #[serde(default)]
    pub(super) workspace: Option<RawBox>,
    #[serde(default)]
    pub(super) frame: Option<RawBox>,
    #[serde(default)]
    pub(super) home: Option<Spanned<Vec<f64>>>,
    /// Kept as written: the controller boundary's (see [`PlcSection`]).
    #[serde(default)]
    pub(super) plc: Option<toml::Table>,
    #[serde(default)]
    pub(super) obstacles: Option<Vec<RawObstacle>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlatform {
    pub(super) mass: Spanned<f64>,
    pub(super) com: Spanned<Vec<f64>>,
    pub(super) inertia: Spanned<RawInertia>,
    pub(super) size: Spanned<Vec<f64>>,
    #[serde(default)]
    pub(super) box_center: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    pub(super) payload_options: Option<Spanned<Vec<f64>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawInertia {
    Named(String),
    Diagonal(Vec<f64>),
    Full(Vec<Vec<f64>>),
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum ScalarOrList {
    Scalar(f64),
    List(Vec<f64>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCables {
    #[serde(default)]
    pub(super) names: Option<Spanned<Vec<String>>>,
    pub(super) frame_anchors: Spanned<Vec<Spanned<Vec<f64>>>>,
    pub(super) platform_anchors: Spanned<Vec<Spanned<Vec<f64>>>>,
    #[serde(default)]
    pub(super) stiffness: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) ea: Option<Spanned<ScalarOrList>>,
    pub(super) damping: Spanned<ScalarOrList>,
    /// Swivel pulleys: radius (m), one for all cables or one per cable (0 = a point exit).
    #[serde(default)]
    pub(super) pulley_radius: Option<Spanned<ScalarOrList>>,
    /// Swivel axis per cable (unit vectors, world frame); the cable arrives along −axis.
    #[serde(default)]
    pub(super) pulley_axis: Option<Spanned<Vec<Spanned<Vec<f64>>>>>,
    /// Capstan friction coefficient μ of each pulley (tension ratio e^{μβ} across the wrap).
    #[serde(default)]
    pub(super) pulley_friction: Option<Spanned<ScalarOrList>>,
    /// Largest wrap angle β a pulley allows, rad.
    #[serde(default)]
    pub(super) pulley_max_wrap: Option<Spanned<ScalarOrList>>,
    /// Allowed swivel angle range γ ∈ [min, max], rad, for every pulley.
    #[serde(default)]
    pub(super) pulley_swivel_range: Option<Spanned<Vec<f64>>>,
    /// Linear density of each cable, kg/m (0 = massless).
    #[serde(default)]
    pub(super) cable_mass_per_length: Option<Spanned<ScalarOrList>>,
}

/// `[[obstacles]]`: a named solid the cables and the platform must keep clear of.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawObstacle {
    pub(super) name: Spanned<String>,
    /// `box`, `cylinder`, `sphere` or `plane`.
    pub(super) shape: Spanned<String>,
    /// box: corners, m.
    #[serde(default)]
    pub(super) min: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    pub(super) max: Option<Spanned<Vec<f64>>>,
    /// sphere: centre; cylinder: centre of its base disc, m.
    #[serde(default)]
    pub(super) center: Option<Spanned<Vec<f64>>>,
    /// sphere, cylinder: m.
    #[serde(default)]
    pub(super) radius: Option<Spanned<f64>>,
    /// cylinder: unit axis from the base disc to the top disc.
    #[serde(default)]
    pub(super) axis: Option<Spanned<Vec<f64>>>,
    /// cylinder: m.
    #[serde(default)]
    pub(super) height: Option<Spanned<f64>>,
    /// plane: a point on it, m.
    #[serde(default)]
    pub(super) point: Option<Spanned<Vec<f64>>>,
    /// plane: unit normal pointing out of the solid (the free side).
    #[serde(default)]
    pub(super) normal: Option<Spanned<Vec<f64>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTension {
    pub(super) min: Spanned<f64>,
    pub(super) max: Spanned<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWinch {
    pub(super) max_velocity: Spanned<f64>,
    pub(super) max_acceleration: Spanned<f64>,
    pub(super) max_jerk: Spanned<f64>,
    #[serde(default)]
    pub(super) mass: Option<Spanned<f64>>,
    #[serde(default)]
    pub(super) kp: Option<Spanned<f64>>,
    #[serde(default)]
    pub(super) ki: Option<Spanned<f64>>,
    #[serde(default)]
    pub(super) kd: Option<Spanned<f64>>,
    // The drive as built (motor, gearbox, drum), each one value for every cable or one per
    // cable: see [`super::drives`]. (Not a flattened struct: it would lose the spans.)
    #[serde(default)]
    pub(super) drum_radius: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) drum_pitch: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) gear_ratio: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) rotor_inertia: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) viscous_friction: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) coulomb_friction: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) torque_limit: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) rated_torque: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) encoder_increments: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) position_gain: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) velocity_gain: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) integral_time: Option<Spanned<ScalarOrList>>,
    #[serde(default)]
    pub(super) velocity_bandwidth: Option<Spanned<ScalarOrList>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBox {
    pub(super) min: Spanned<Vec<f64>>,
    pub(super) max: Spanned<Vec<f64>>,
}

/// `[linear_delta]`: seed 002's Keops-type linear delta.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLinearDelta {
    pub(super) rail_angle: Spanned<f64>,
    pub(super) base_radius: Spanned<f64>,
    pub(super) platform_radius: Spanned<f64>,
    pub(super) arm_length: Spanned<f64>,
    pub(super) arm_spacing: Spanned<f64>,
    pub(super) arm_radius: Spanned<f64>,
    pub(super) stroke: Spanned<Vec<f64>>,
    pub(super) spherical_limit: Spanned<f64>,
    pub(super) cylinder: RawCylinder,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCylinder {
    pub(super) radius: Spanned<f64>,
    pub(super) height: Spanned<f64>,
    pub(super) z_top: Spanned<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRssu2 {
    pub(super) half_width: Spanned<f64>,
    pub(super) forward: Spanned<f64>,
    pub(super) crank: Spanned<f64>,
    pub(super) rod: Spanned<f64>,
    pub(super) crank_limits: Spanned<Vec<f64>>,
}
