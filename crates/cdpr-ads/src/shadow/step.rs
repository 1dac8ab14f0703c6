//! The step stage: the physics stepped at its fixed dt up to the controller's time, each
//! step's command on the way to the last good sample — ramped in lockstep, read off the PLC's
//! time line when free-running. The shadow never re-implements physics: it only hands
//! `Sim::set_command_lengths` a buffer it fills in place and calls `Sim::step`.

use super::timeline::Timeline;
use super::{CycleTiming, Shadow, ShadowError};
use crate::link::Controller;
use cdpr_core::sim::{Command, SimError};
use std::time::Instant;

/// How a cycle's steps move the command.
enum Plan<'a> {
    /// Lockstep: linearly from the last cycle's command to the new sample over the steps.
    Ramp,
    /// Free-running: the commands on the PLC's time line, `delay` s late.
    Timeline { line: &'a Timeline, delay: f64 },
}

/// The command the physics follows, and the buffers its steps are computed in.
pub(super) struct Drive {
    /// The command the physics ended the last cycle on, m.
    command: Vec<f64>,
    /// Where this cycle's ramp starts: `command` as the cycle began, m.
    from: Vec<f64>,
    /// This step's command, m.
    step: Vec<f64>,
}

impl Drive {
    pub(super) fn new(command: &[f64]) -> Drive {
        Drive {
            command: command.to_vec(),
            from: command.to_vec(),
            step: command.to_vec(),
        }
    }

    /// The command the physics ended the last cycle on, m.
    pub(super) fn command(&self) -> &[f64] {
        &self.command
    }

    /// The physics was put at rest where `command` holds it.
    pub(super) fn reset(&mut self, command: &[f64]) {
        self.command.clear();
        self.command.extend_from_slice(command);
    }

    /// A cycle towards `goal` begins: the ramp starts at the command the last one ended on,
    /// and the command is the goal until a step says otherwise.
    fn begin(&mut self, goal: &[f64]) {
        std::mem::swap(&mut self.from, &mut self.command);
        self.command.clear();
        self.command.extend_from_slice(goal);
    }

    /// Fills the command of step `k` of `steps` (1-based) on `plan`; `t` is the time at the
    /// end of the step.
    fn fill(&mut self, plan: &Plan, k: u64, steps: u64, t: f64, goal: &[f64]) {
        match plan {
            Plan::Ramp => {
                let w = k as f64 / steps as f64;
                self.step.clear();
                self.step
                    .extend(self.from.iter().zip(goal).map(|(a, b)| a + (b - a) * w));
            }
            // The command at the end of this step, on the PLC's time line.
            Plan::Timeline { line, delay } => {
                if !line.fill(t - delay, &mut self.step) {
                    self.step.clear();
                    self.step.extend_from_slice(goal);
                }
            }
        }
    }
}

impl<C: Controller> Shadow<C> {
    /// Steps the physics from its time to `target`, the command following the plan towards
    /// the last good sample. Returns the steps taken.
    pub(super) fn step_to(
        &mut self,
        now: Instant,
        target: f64,
        rejected: bool,
    ) -> Result<u64, ShadowError> {
        let dt = self.config.sim.dt;
        let due = ((target - self.clock.time()) / dt + 1e-9).floor().max(0.0) as u64;
        let cap = (self.config.max_catch_up.as_secs_f64() / dt)
            .ceil()
            .max(1.0) as u64;
        if due > cap {
            let skipped = due - cap;
            self.stats.skipped_steps += skipped;
            self.clock.set_time(self.clock.time() + skipped as f64 * dt);
            self.warnings.behind.warn(now, || {
                format!(
                    "the physics fell {:.1} ms behind the controller; {skipped} steps skipped",
                    skipped as f64 * dt * 1e3
                )
            });
        }
        let steps = due.min(cap);
        let plan = match self.config.timing {
            CycleTiming::Free { period, plc_period } => Plan::Timeline {
                line: &self.timeline,
                delay: self.clock.plc_period_s(plc_period) + period.as_secs_f64(),
            },
            CycleTiming::Lockstep { .. } => Plan::Ramp,
        };
        let goal = &self.commands.good().commanded_lengths;
        let drive = &mut self.drive;
        drive.begin(goal);
        if steps > 0 {
            self.recording.command_moved();
        }
        for k in 1..=steps {
            drive.fill(&plan, k, steps, self.clock.time() + dt, goal);
            if k == steps {
                drive.command.clone_from(&drive.step);
            }
            self.sim.set_command_lengths(&drive.step)?;
            if let Err(e) = self.sim.step() {
                let SimError::BlowUp { .. } = e else {
                    return Err(e.into());
                };
                tracing::warn!("{e}; re-settling the platform at the current command");
                self.sim.settle(&Command::Lengths(goal.clone()))?;
                self.stats.physics_resets += 1;
                self.stats.gaps += 1;
                self.recording.mark_gap();
                self.clock.set_time(target);
                return Ok(k - 1);
            }
            self.clock.stepped();
            self.stats.steps += 1;
            self.recording
                .step(self.clock.time(), &drive.step, self.sim.state(), rejected);
        }
        Ok(steps)
    }
}
