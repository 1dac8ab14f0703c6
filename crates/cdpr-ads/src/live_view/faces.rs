//! What the shadow and the virtual PLC offer the live view: the copies each makes of its
//! state, on its own thread, when the sender is due (the viewer's is in `cdpr-viewer`).

use super::LiveSender;
use crate::link::Controller;
use crate::plc_symbols::PlcSymbols;
use crate::server::memory::{self, PlcMemory};
use crate::server::virtual_plc::{CycleFn, PlcError};
use crate::shadow::{Shadow, ShadowStats};
use crate::units::{from_mm, pose_from_plc};
use cdpr_core::recording::messages::ShadowCycle;
use cdpr_core::robot::Robot;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the shadow's cycle statistics go out (`/shadow/cycle`): their quantiles walk
/// the histograms, a few tens of microseconds.
pub const CYCLE_STATS_EVERY: Duration = Duration::from_secs(1);

/// The names of the shadow's and the PLC's extra values in `/run` samples.
pub const EXTRA: [&str; 2] = ["plc_cycle", "enable"];

/// The shadow's cycle statistics at shadow time `t` as the `/shadow/cycle` message.
pub fn shadow_cycle(stats: &ShadowStats, t: f64) -> ShadowCycle {
    let errors = stats.torque_prediction.errors();
    ShadowCycle {
        t,
        cycles: stats.cycles,
        exchange_p50_s: stats.cycle.quantile(0.5).unwrap_or(f64::NAN),
        exchange_p99_s: stats.cycle.quantile(0.99).unwrap_or(f64::NAN),
        exchange_max_s: stats.cycle.max(),
        missed_plc_cycles: stats.missed_plc_cycles,
        overruns: stats.overruns,
        skipped_steps: stats.skipped_steps,
        rejected: stats.rejected,
        gaps: stats.gaps,
        torque_error_rms_nm: errors.iter().map(|e| e.rms).collect(),
        torque_error_max_nm: errors.iter().map(|e| e.max).collect(),
        torque_error_rms_percent: errors
            .iter()
            .map(|e| e.rms_percent.unwrap_or(f64::NAN))
            .collect(),
        torque_best_lag_s: errors.iter().map(|e| e.best_lag_s).collect(),
    }
}

/// The shadow's side: call [`ShadowFeed::after_cycle`] after each cycle (outside its
/// measured time, as `shadow::run_with` calls its closure).
pub struct ShadowFeed {
    sender: LiveSender,
    next_stats: Instant,
}

impl ShadowFeed {
    pub fn new(sender: LiveSender) -> ShadowFeed {
        ShadowFeed {
            sender,
            next_stats: Instant::now(),
        }
    }

    /// Offers the shadow's state when the sender is due (≤ 100 Hz): only then is the commanded
    /// pose solved (forward kinematics) and the numbers copied.
    pub fn after_cycle<C: Controller>(&mut self, shadow: &Shadow<C>) {
        if !self.sender.due() {
            return;
        }
        let commanded = shadow.commanded_pose();
        let now = Instant::now();
        let stats = (now >= self.next_stats).then(|| {
            self.next_stats = now + CYCLE_STATS_EVERY;
            shadow_cycle(shadow.stats(), shadow.time())
        });
        let state = shadow.state();
        let inputs = shadow.last_inputs();
        self.sender.offer(|s| {
            s.time = shadow.time();
            s.commanded = commanded;
            s.pose = state.pose;
            s.commanded_lengths
                .extend_from_slice(shadow.commanded_lengths());
            s.lengths.extend_from_slice(&state.lengths);
            s.tensions.extend_from_slice(&state.tensions);
            s.extra.extend_from_slice(&[
                f64::from(inputs.cycle),
                f64::from(u8::from(inputs.motion_enable)),
            ]);
            s.cycle = stats;
        });
    }
}

/// The virtual PLC's side, as a cycle hook ([`crate::server::VirtualPlc::add_cycle_hook`]):
/// after each PLC cycle, when due, its set pose (commanded and drawn: the PLC has no physics),
/// its commanded lengths and the lengths its axes report, from its memory. The run's time is
/// the PLC's: cycles × `task`. No tensions (NaN in `/run`, slack-grey cables).
pub fn plc_hook(
    robot: &Robot,
    memory: Arc<PlcMemory>,
    task: Duration,
    sender: LiveSender,
) -> Result<CycleFn, PlcError> {
    let p = PlcSymbols::of(robot)?;
    let table = memory.table();
    let find = |name: &str| {
        table
            .lookup_str(name)
            .ok_or_else(|| PlcError::MissingSymbol(name.to_string()))
    };
    let (pose, commanded, lengths, enable) = (
        find(&p.tcp_pose)?,
        find(&p.commanded_lengths)?,
        find(&p.lengths)?,
        find(&p.motion_enable)?,
    );
    let task_s = task.as_secs_f64();
    Ok(Box::new(move |cycle, _stamp| {
        if !sender.due() {
            return;
        }
        let (set_pose, cmd_mm, len_mm, on) = memory.with_image(|img| {
            (
                memory::get_reals(img, &pose).unwrap_or_default(),
                memory::get_reals(img, &commanded).unwrap_or_default(),
                memory::get_reals(img, &lengths).unwrap_or_default(),
                memory::get_u32(img, &enable).unwrap_or(0),
            )
        });
        let set_pose = pose_from_plc(&set_pose);
        sender.offer(|s| {
            s.time = f64::from(cycle) * task_s;
            s.commanded = set_pose;
            s.pose = set_pose;
            s.commanded_lengths.extend(from_mm(cmd_mm));
            s.lengths.extend(from_mm(len_mm));
            s.extra
                .extend_from_slice(&[f64::from(cycle), f64::from(on)]);
        });
    }))
}
