//! One exchange of the shadow, and what happens when the link or the PLC goes away.

use super::record::Row;
use super::{CycleReport, CycleStatus, CycleTiming, Link, PendingRow, Shadow, ShadowError, model};
use crate::link::{Backoff, CommandGuard, Controller, ControllerError, CycleInputs, ShadowOutputs};
use cdpr_core::kinematics::{self, FkOptions};
use cdpr_core::sim::{Command, SimError};
use std::time::{Duration, Instant};

/// How a cycle's steps move the command.
enum Plan<'a> {
    /// Lockstep: linearly from the last cycle's command to the new sample over the steps.
    Ramp,
    /// Free-running: the commands on the PLC's time line, `delay` s late.
    Timeline {
        line: &'a super::timeline::Timeline,
        delay: f64,
    },
}

/// Whether the counter went back (a PLC restart), not forward through a wrap.
fn went_back(previous: u32, now: u32) -> bool {
    (now.wrapping_sub(previous) as i32) < 0
}

impl<C: Controller> Shadow<C> {
    /// One exchange at `now` (the wall-clock instant the free-running clock reads; tests and
    /// benches may pass their own): read, step the physics to the controller's time, write,
    /// record. Link trouble is handled here (offline, back-off, resync) and reported in the
    /// status; an `Err` is something retrying cannot fix (a write the allow-list refuses, a
    /// geometry that changed, the record's disk).
    pub fn cycle_at(&mut self, now: Instant) -> Result<CycleReport, ShadowError> {
        if !self.is_linked() {
            return self.reconnect_at(now);
        }
        let started = Instant::now();
        let read = self.controller.read_cycle();
        let read_time = started.elapsed();
        // Handles the PLC invalidated (online change) were re-resolved within the read: a gap
        // on this cycle's first step, unless a restart's resync below counts it anyway.
        let repaired = self.take_re_resolves() > 0;
        let inputs = match read {
            Ok(inputs) => Some(inputs),
            Err(ControllerError::NotFinite {
                symbol,
                element,
                value,
            }) => {
                self.reject(now, || {
                    format!("{symbol}[{element}] = {value}: not a finite number")
                });
                None
            }
            Err(e) => {
                self.lose_link(now, &e);
                return Ok(CycleReport::new(CycleStatus::Offline));
            }
        };
        if let Some(i) = &inputs
            && went_back(self.counter, i.cycle)
        {
            tracing::warn!(
                "the PLC's cycle counter went back from {} to {}: it restarted; re-synchronising",
                self.counter,
                i.cycle
            );
            match self.controller.read_geometry() {
                Ok(geometry) => self.check_geometry(&geometry)?,
                Err(e) => {
                    self.lose_link(now, &e);
                    return Ok(CycleReport::new(CycleStatus::Offline));
                }
            }
            self.resync(now, i.clone(), Duration::ZERO)?;
            return Ok(CycleReport::new(CycleStatus::Resynced));
        }
        if repaired {
            self.mark_gap();
        }
        let (target, plc_cycle) = match (self.config.timing, &inputs) {
            (CycleTiming::Lockstep { .. }, None) => {
                return Ok(CycleReport {
                    rejected: true,
                    ..CycleReport::new(CycleStatus::Rejected)
                });
            }
            (CycleTiming::Lockstep { plc_period }, Some(i)) => {
                let delta = i.cycle.wrapping_sub(self.counter);
                if delta == 0 {
                    self.stats.polls += 1;
                    return Ok(CycleReport::new(CycleStatus::Polled));
                }
                self.stats.missed_plc_cycles += u64::from(delta - 1);
                self.lock.periods += u64::from(delta);
                let target = self.lock.time(plc_period.as_secs_f64());
                (target, i.cycle)
            }
            (CycleTiming::Free { period, .. }, _) => {
                if let Some(previous) = self.last_call
                    && now.saturating_duration_since(previous) > period + period / 2
                {
                    self.stats.overruns += 1;
                }
                let cycle = inputs.as_ref().map_or(self.counter, |i| i.cycle);
                (self.origin.time_at(now), cycle)
            }
        };
        self.last_call = Some(now);

        // The guard: NaN already refused above; now jumps beyond the winches' reach.
        let mut rejected = inputs.is_none();
        if let Some(i) = inputs {
            self.observe_counter(now, &i);
            // The read's own time counts: a slow read (a re-resolve inside it) delays the
            // sample without the PLC having moved any further per unit of time.
            let allowed_dt = target - self.good_time
                + self.config.timing.period().as_secs_f64()
                + read_time.as_secs_f64();
            match self.guard.check(i.clone(), allowed_dt) {
                Ok(_) => {
                    self.good_time = target;
                    if let CycleTiming::Free { period, plc_period } = self.config.timing {
                        let plc = self.plc_period_s(plc_period);
                        self.timeline.observe(
                            i.cycle,
                            &i.commanded_lengths,
                            target,
                            plc,
                            period.as_secs_f64(),
                        );
                    }
                }
                Err(r) => {
                    self.reject(now, || format!("sample of PLC cycle {}: {r}", i.cycle));
                    rejected = true;
                }
            }
            self.last_inputs = i;
        }
        let goal = self
            .guard
            .last_good()
            .map_or_else(|| self.command.clone(), |g| g.commanded_lengths.clone());

        let physics_start = Instant::now();
        let timeline = std::mem::take(&mut self.timeline);
        let plan = match self.config.timing {
            CycleTiming::Free { period, plc_period } => Plan::Timeline {
                line: &timeline,
                delay: self.plc_period_s(plc_period) + period.as_secs_f64(),
            },
            CycleTiming::Lockstep { .. } => Plan::Ramp,
        };
        let steps = self.step_to(now, target, &goal, &plan, rejected);
        self.timeline = timeline;
        let steps = steps?;
        let physics_time = physics_start.elapsed();

        let write_start = Instant::now();
        if self.config.write
            && let Err(e) = self.write_outputs(plc_cycle)
        {
            return match e {
                ShadowError::Controller(e) if !fatal_write(&e) => {
                    // The steps happened: they stay in the record, before the gap.
                    self.flush_rows()?;
                    self.lose_link(now, &e);
                    Ok(CycleReport::new(CycleStatus::Offline))
                }
                e => Err(e),
            };
        }
        let write_time = write_start.elapsed();
        if self.take_re_resolves() > 0 {
            self.mark_gap();
        }
        self.counter = plc_cycle;
        self.stats.cycles += 1;
        self.stats.cycle.add(started.elapsed().as_secs_f64());
        self.stats.io.add((read_time + write_time).as_secs_f64());
        self.stats.physics.add(physics_time.as_secs_f64());
        self.flush_rows()?;
        Ok(CycleReport {
            status: CycleStatus::Exchanged,
            steps,
            rejected,
            plc_cycle: Some(plc_cycle),
            retry_at: None,
        })
    }

    /// Steps the physics from its time to `target`, the command following `plan` towards
    /// `goal` (the last good sample).
    fn step_to(
        &mut self,
        now: Instant,
        target: f64,
        goal: &[f64],
        plan: &Plan,
        rejected: bool,
    ) -> Result<u64, ShadowError> {
        let dt = self.config.sim.dt;
        let due = ((target - self.time()) / dt + 1e-9).floor().max(0.0) as u64;
        let cap = (self.config.max_catch_up.as_secs_f64() / dt)
            .ceil()
            .max(1.0) as u64;
        if due > cap {
            let skipped = due - cap;
            self.stats.skipped_steps += skipped;
            self.set_time(self.time() + skipped as f64 * dt);
            self.warn_behind.warn(now, || {
                format!(
                    "the physics fell {:.1} ms behind the controller; {skipped} steps skipped",
                    skipped as f64 * dt * 1e3
                )
            });
        }
        let steps = due.min(cap);
        let from = std::mem::replace(&mut self.command, goal.to_vec());
        for k in 1..=steps {
            let lengths = match plan {
                Plan::Ramp => {
                    let w = k as f64 / steps as f64;
                    from.iter()
                        .zip(goal)
                        .map(|(a, b)| a + (b - a) * w)
                        .collect()
                }
                // The command at the end of this step, on the PLC's time line.
                Plan::Timeline { line, delay } => line
                    .at(self.time() + dt - delay)
                    .unwrap_or_else(|| goal.to_vec()),
            };
            if k == steps {
                self.command.clone_from(&lengths);
            }
            let command = Command::Lengths(lengths);
            self.sim.set_command(&command)?;
            if let Err(e) = self.sim.step() {
                let SimError::BlowUp { .. } = e else {
                    return Err(e.into());
                };
                tracing::warn!("{e}; re-settling the platform at the current command");
                self.sim.settle(&Command::Lengths(goal.to_vec()))?;
                self.stats.physics_resets += 1;
                self.mark_gap();
                self.set_time(target);
                return Ok(k - 1);
            }
            self.clock.periods += 1;
            self.stats.steps += 1;
            if let (Some(_), Command::Lengths(command)) = (&self.recorder, command) {
                self.pending.push(PendingRow {
                    t: self.time(),
                    command,
                    state: self.sim.state().clone(),
                    rejected,
                    gap: std::mem::take(&mut self.gap_pending),
                });
            }
        }
        Ok(steps)
    }

    /// The PLC's period, s: the counter's measured rate once known, else `configured`.
    fn plc_period_s(&self, configured: Duration) -> f64 {
        self.stats
            .plc_period_estimate
            .unwrap_or(configured.as_secs_f64())
    }

    /// The PLC's reaction diagnostic (once per PLC cycle) and the period estimate.
    fn observe_counter(&mut self, now: Instant, inputs: &CycleInputs) {
        if inputs.cycle == self.counter {
            return;
        }
        if let Some(r) = inputs.reaction_cycles.filter(|&r| r > 0) {
            self.stats.add_reaction(r);
        }
        let probe = *self.period_probe.get_or_insert(super::PeriodProbe {
            since: now,
            counter: inputs.cycle,
        });
        let elapsed = now.saturating_duration_since(probe.since).as_secs_f64();
        let counted = inputs.cycle.wrapping_sub(probe.counter);
        if elapsed >= 1.0 && counted > 0 {
            let estimate = elapsed / f64::from(counted);
            self.stats.plc_period_estimate = Some(estimate);
            if let CycleTiming::Lockstep { plc_period } = self.config.timing {
                let given = plc_period.as_secs_f64();
                if elapsed >= 2.0 && !self.period_warned && (estimate / given - 1.0).abs() > 0.25 {
                    self.period_warned = true;
                    tracing::warn!(
                        "the PLC's counter advances every {:.2} ms but the PLC period is set to {:.2} ms: the shadow runs at the wrong speed (--plc-period)",
                        estimate * 1e3,
                        given * 1e3
                    );
                }
            }
        }
    }

    fn reject(&mut self, now: Instant, what: impl FnOnce() -> String) {
        self.stats.rejected += 1;
        self.warn_rejected.warn(now, || {
            format!("rejected {}; holding the last good command", what())
        });
    }

    pub(super) fn write_outputs(&mut self, plc_cycle: u32) -> Result<(), ShadowError> {
        let s = self.sim.state();
        let outputs = ShadowOutputs {
            pose: s.pose,
            lengths: s.lengths.clone(),
            tensions: s.tensions.clone(),
            cycle: plc_cycle,
        };
        Ok(self.controller.write_cycle(&outputs)?)
    }

    fn lose_link(&mut self, now: Instant, e: &ControllerError) {
        let mut backoff = Backoff::default();
        let next_attempt = now + backoff.next_delay();
        tracing::warn!("link to the PLC lost ({e}); reconnecting with back-off");
        self.link = Link::Down {
            since: now,
            next_attempt,
            backoff,
        };
    }

    /// Offline: one reconnect attempt when due; on success the geometry is checked and the
    /// physics re-synchronised.
    fn reconnect_at(&mut self, now: Instant) -> Result<CycleReport, ShadowError> {
        let (since, due) = match &self.link {
            Link::Down {
                since,
                next_attempt,
                ..
            } => (*since, *next_attempt),
            Link::Up => return Ok(CycleReport::new(CycleStatus::Exchanged)),
        };
        let offline = |retry: Instant| CycleReport {
            retry_at: Some(retry),
            ..CycleReport::new(CycleStatus::Offline)
        };
        if now < due {
            return Ok(offline(due));
        }
        let attempt = self.controller.reconnect().and_then(|()| {
            let geometry = self.controller.read_geometry()?;
            let inputs = self.controller.read_cycle()?;
            Ok((geometry, inputs))
        });
        let (geometry, inputs) = match attempt {
            Ok(v) => v,
            Err(e) => {
                let (retry, delay) = match &mut self.link {
                    Link::Down {
                        next_attempt,
                        backoff,
                        ..
                    } => {
                        let delay = backoff.next_delay();
                        *next_attempt = now + delay;
                        (*next_attempt, delay)
                    }
                    Link::Up => (now, Duration::ZERO),
                };
                self.warn_offline.warn(now, || {
                    format!(
                        "PLC still unreachable ({e}); next attempt in {} ms",
                        delay.as_millis()
                    )
                });
                return Ok(offline(retry));
            }
        };
        self.check_geometry(&geometry)?;
        let gap = now.saturating_duration_since(since);
        self.stats.reconnects += 1;
        tracing::warn!(
            "reconnected to the PLC after {:.0} ms; re-synchronised at its commanded lengths",
            gap.as_secs_f64() * 1e3
        );
        self.link = Link::Up;
        self.resync(now, inputs, gap)?;
        Ok(CycleReport::new(CycleStatus::Resynced))
    }

    /// Refuses a controller whose anchors moved since the start: the model would be wrong.
    fn check_geometry(
        &self,
        geometry: &crate::link::ControllerGeometry,
    ) -> Result<(), ShadowError> {
        match model::geometry_change(&self.geometry, geometry) {
            None => Err(ShadowError::CableCountChanged {
                before: self.geometry.frame_anchors.len(),
                now: geometry.frame_anchors.len(),
            }),
            Some((cable, moved)) if moved > model::ANCHOR_TOLERANCE => {
                Err(ShadowError::GeometryChanged {
                    cable,
                    moved_mm: moved * 1e3,
                })
            }
            Some(_) => Ok(()),
        }
    }

    /// Puts the platform at rest where `inputs` hold it, re-bases the clocks, and marks a gap
    /// of `gap` (lockstep: added to the shadow time; free-running: the wall clock has it).
    fn resync(
        &mut self,
        now: Instant,
        inputs: CycleInputs,
        gap: Duration,
    ) -> Result<(), ShadowError> {
        self.sim
            .settle(&Command::Lengths(inputs.commanded_lengths.clone()))?;
        let time = match self.config.timing {
            CycleTiming::Free { .. } => self.origin.time_at(now).max(self.time()),
            CycleTiming::Lockstep { .. } => self.time() + gap.as_secs_f64(),
        };
        self.set_time(time);
        self.good_time = time;
        self.counter = inputs.cycle;
        self.lock = super::Counted::at(time);
        self.period_probe = None;
        self.guard = CommandGuard::new(&self.robot.winch, self.config.guard_slack);
        let _ = self.guard.check(inputs.clone(), 0.0);
        self.command = inputs.commanded_lengths.clone();
        self.timeline.reset();
        self.last_inputs = inputs;
        self.last_call = None;
        self.mark_gap();
        Ok(())
    }

    /// Writes the cycle's rows (after the exchange, outside its measured time).
    fn flush_rows(&mut self) -> Result<(), ShadowError> {
        let Some(recorder) = &mut self.recorder else {
            return Ok(());
        };
        let enable = self.last_inputs.motion_enable;
        let plc_cycle = self.counter;
        for row in self.pending.drain(..) {
            // The pose the commanded lengths define for rigid cables, warm-started.
            let options = FkOptions {
                guess: Some(self.commanded_pose),
                max_iterations: 20,
                ..FkOptions::default()
            };
            if let Ok(fk) = kinematics::forward(&self.robot, &row.command, &options) {
                self.commanded_pose = fk.pose;
            }
            recorder.write(&Row {
                t: row.t,
                commanded_pose: &self.commanded_pose,
                commanded: &row.command,
                state: &row.state,
                plc_cycle,
                enable,
                rejected: row.rejected,
                gap: row.gap,
            })?;
        }
        Ok(())
    }
}

/// Write errors no reconnect can fix.
fn fatal_write(e: &ControllerError) -> bool {
    matches!(
        e,
        ControllerError::WriteDisabled
            | ControllerError::NotWritable { .. }
            | ControllerError::NotFinite { .. }
    )
}
