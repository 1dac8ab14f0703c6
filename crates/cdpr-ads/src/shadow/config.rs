//! How a shadow runs: its physics, its clock, whether it writes, its guards.

use cdpr_core::run::{CommandSource, RunRequest};
use cdpr_core::sim::SimConfig;
use std::time::Duration;

/// Where the controller's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleTiming {
    /// One exchange every `period` of wall-clock time; physics steps to the wall clock, the
    /// commands a curve through the samples on the PLC's time line (their stamps, else the
    /// counter × the PLC's measured period) read two PLC periods and one `period` late, the
    /// PLC's period `plc_period` until measured.
    Free {
        period: Duration,
        plc_period: Duration,
    },
    /// Physics advances (counter delta) × `plc_period`; the counter is polled.
    Lockstep { plc_period: Duration },
}

impl CycleTiming {
    /// The shadow's cycle (free) or the PLC task period (lockstep).
    pub fn period(&self) -> Duration {
        match *self {
            CycleTiming::Free { period, .. } => period,
            CycleTiming::Lockstep { plc_period } => plc_period,
        }
    }

    /// The PLC task period as configured, s.
    pub fn plc_period_s(&self) -> f64 {
        match *self {
            CycleTiming::Free { plc_period, .. } | CycleTiming::Lockstep { plc_period } => {
                plc_period.as_secs_f64()
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ShadowConfig {
    /// Physics: fixed dt, model, winch mode. Default: the run options' defaults as a
    /// controller's commands take them (1 ms, `chain`, `ideal` winches: the NC has shaped the
    /// set points already; see the guide's "Connecting to TwinCAT").
    pub sim: SimConfig,
    pub timing: CycleTiming,
    /// Write pose, lengths, tensions and the cycle echo back every cycle.
    pub write: bool,
    /// Length jump allowed on top of v_max × elapsed time, m.
    pub guard_slack: f64,
    /// Most physics time one cycle may catch up; beyond it steps are skipped (and counted).
    pub max_catch_up: Duration,
    /// Check the pose for interference every exchange ([`cdpr_core::interference`]) at this
    /// clearance, m; None: not checked.
    pub clearance: Option<f64>,
    /// Ask for real-time scheduling of the thread that runs the cycles ([`crate::realtime`]).
    pub realtime: bool,
    /// A PLC lost for longer than this when the run ends is an error
    /// ([`ShadowError::Lost`](super::ShadowError::Lost)): the link's timeout.
    pub lost_after: Duration,
}

impl Default for ShadowConfig {
    fn default() -> ShadowConfig {
        ShadowConfig {
            // The run options' defaults, as a controller's commands take them.
            sim: RunRequest::default().sim_config(CommandSource::Controller, None),
            timing: CycleTiming::Free {
                period: Duration::from_millis(2),
                plc_period: Duration::from_millis(10),
            },
            write: false,
            guard_slack: 1e-3,
            max_catch_up: Duration::from_millis(50),
            clearance: Some(cdpr_core::interference::DEFAULT_CLEARANCE),
            realtime: true,
            lost_after: Duration::from_millis(500),
        }
    }
}
