//! What `cdpr shadow` reports at exit: the cycle statistics, the setup that ran and what the
//! start found, in SI except where the key names the unit (`_mm`). The serde form is
//! `cdpr shadow --json`; the command line only formats it.

use super::{AnchorDifference, AnchorKind, CycleTiming, Shadow, ShadowSetup, StartReport, Summary};
use crate::link::Controller;
use cdpr_core::sim::{ControlMode, ModelKind};
use serde::Serialize;
use std::path::PathBuf;

/// One anchor where the robot file and the controller disagree, in mm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnchorSummary {
    pub cable: usize,
    pub name: String,
    pub anchor: AnchorKind,
    pub file_mm: [f64; 3],
    pub controller_mm: [f64; 3],
    pub distance_mm: f64,
}

impl From<&AnchorDifference> for AnchorSummary {
    fn from(d: &AnchorDifference) -> AnchorSummary {
        AnchorSummary {
            cable: d.cable,
            name: d.name.clone(),
            anchor: d.anchor,
            file_mm: d.file.map(|x| x * 1e3),
            controller_mm: d.controller.map(|x| x * 1e3),
            distance_mm: d.distance * 1e3,
        }
    }
}

/// What the start found (see [`StartReport`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartSummary {
    pub cables: usize,
    pub from_file: bool,
    pub tcp_pose: [f64; 6],
    pub start_pose: [f64; 6],
    pub sag_m: f64,
    pub fk_position_offset_m: Option<f64>,
    pub angle_mismatch_rad: f64,
    pub plc_cycle: u32,
    pub reaction_diagnostic: bool,
}

impl From<&StartReport> for StartSummary {
    fn from(s: &StartReport) -> StartSummary {
        StartSummary {
            cables: s.cables,
            from_file: s.from_file,
            tcp_pose: s.tcp_pose.to_array(),
            start_pose: s.start_pose.to_array(),
            sag_m: s.sag,
            fk_position_offset_m: s.consistency.fk_position_offset,
            angle_mismatch_rad: s.consistency.angle_mismatch,
            plc_cycle: s.plc_cycle,
            reaction_diagnostic: s.reaction_diagnostic,
        }
    }
}

/// A shadow's run summarised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShadowReport {
    #[serde(flatten)]
    pub summary: Summary,
    pub wall_s: f64,
    pub simulated_s: f64,
    pub model: ModelKind,
    pub control: ControlMode,
    pub dt: f64,
    /// `lockstep` or the free-running period, e.g. `2ms`.
    pub cycle: String,
    pub write: bool,
    /// The exchange asked for (`auto` or a forced one); the one in use is `exchange`.
    pub exchange_choice: String,
    /// Secure ADS's mode (`ssc`, `sca`, `psk`); `None`: plain ADS.
    pub secure: Option<&'static str>,
    pub record: Option<PathBuf>,
    pub start: StartSummary,
    pub anchors: Vec<AnchorSummary>,
    /// Why the run ended early (None: it ran its course or was stopped).
    pub error: Option<String>,
    /// The live view's figures (`--foxglove`), set by the face that ran one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_view: Option<crate::live_view::LiveStats>,
}

impl ShadowReport {
    /// The report of `shadow`, run from `setup` for `wall_s` seconds, ended by `error`.
    pub fn new<C: Controller>(
        shadow: &Shadow<C>,
        setup: &ShadowSetup,
        wall_s: f64,
        error: Option<String>,
    ) -> ShadowReport {
        let config = &setup.config;
        let start = shadow.start_report();
        ShadowReport {
            summary: shadow.summary(),
            wall_s,
            simulated_s: shadow.time(),
            model: config.sim.model,
            control: config.sim.control,
            dt: config.sim.dt,
            cycle: match config.timing {
                CycleTiming::Free { period, .. } => format!("{}ms", period.as_secs_f64() * 1e3),
                CycleTiming::Lockstep { .. } => "lockstep".into(),
            },
            write: config.write,
            exchange_choice: setup.exchange.to_string(),
            secure: setup.secure.as_ref().map(|s| s.mode.name()),
            record: setup.record.clone(),
            start: start.into(),
            anchors: start.anchors.iter().map(AnchorSummary::from).collect(),
            error,
            live_view: None,
        }
    }
}
