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
