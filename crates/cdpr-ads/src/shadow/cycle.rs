//! One cycle of the shadow, in its stages: read → clock → guard → step → write → record.
//!
//! - read: every sample that has come since the last cycle — one sum read when polled, each
//!   notification when they come by notification — of commanded lengths, cycle counter and
//!   enable flag; a lost link sends the shadow offline, a counter that went back (a PLC
//!   restart) re-synchronises it;
//! - clock and guard: each sample placed on the commands' time line at the PLC's time for it
//!   (its stamp, or its counter), admitted or refused (the last good one held); counter values
//!   no sample brought counted as missed; then the time the physics must reach — the wall
//!   clock free-running, the newest sample's in lockstep;
//! - step: the physics stepped at its fixed dt to that time along the line ([`super::step`]);
//! - write: one sum write of pose, lengths, tensions and the echo of the newest counter;
//! - record: the cycle's statistics, then its steps written to the record (outside the
//!   cycle's measured time).

use super::clock::{Brought, Tick, went_back};
use super::{CycleTiming, Shadow, ShadowError};
use crate::link::{Controller, ControllerError, CycleInputs, Sample};
use std::time::{Duration, Instant};

/// What one [`Shadow::cycle`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleStatus {
    /// Read, stepped, written.
    Exchanged,
    /// Lockstep: the counter had not moved; nothing stepped or written.
    Polled,
    /// Lockstep: the sample could not be used (non-finite) and gives no time; nothing done.
    Rejected,
    /// The link is down; the next attempt is due at `retry_at`.
    Offline,
    /// The link is back (or the PLC restarted, or the samples came again after a stall); the
    /// physics was re-settled.
    Resynced,
    /// The link is up but no new sample has come for longer than the stall limit: nothing
    /// stepped, written or recorded.
    Stalled,
    /// A stop was asked for while the link waited (Ctrl-C): nothing more done.
    Interrupted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleReport {
    pub status: CycleStatus,
    pub steps: u64,
    /// This cycle's newest sample was refused and the last good command held.
    pub rejected: bool,
    /// The newest PLC cycle counter, which the outputs answer.
    pub plc_cycle: Option<u32>,
    /// Samples of new counter values this cycle took.
    pub samples: usize,
    pub retry_at: Option<Instant>,
}

impl CycleReport {
    pub(super) fn new(status: CycleStatus) -> CycleReport {
        CycleReport {
            status,
            steps: 0,
            rejected: false,
            plc_cycle: None,
            samples: 0,
            retry_at: None,
        }
    }
}

impl<C: Controller> Shadow<C> {
    /// One exchange now (see [`Shadow::cycle_at`]).
    pub fn cycle(&mut self) -> Result<CycleReport, ShadowError> {
        self.cycle_at(Instant::now())
    }

    /// One exchange at `now` (the wall-clock instant the free-running clock reads; tests and
    /// benches may pass their own): read, step the physics to the controller's time, write,
    /// record. Link trouble is handled here (offline, back-off, resync) and reported in the
    /// status; an `Err` is something retrying cannot fix (a write the allow-list refuses, a
    /// geometry that changed, the record's disk).
    pub fn cycle_at(&mut self, now: Instant) -> Result<CycleReport, ShadowError> {
        if !self.link.is_up() {
            return self.reconnect_at(now);
        }
        let started = Instant::now();
        let read_time = match self.read(now)? {
            Ok(time) => time,
            Err(ended) => return Ok(ended),
        };
        let brought = self.admit(now, read_time);
        if brought.new + brought.unusable > 0 {
            self.fresh_sample(now);
        } else if let Some(held) = self.check_stall(now) {
            return Ok(held);
        }
        let (target, plc_cycle) = match self.clock.tick(now, brought, &mut self.stats) {
            Tick::Due { target, plc_cycle } => (target, plc_cycle),
            Tick::Polled => return Ok(CycleReport::new(CycleStatus::Polled)),
            Tick::Rejected => {
                return Ok(CycleReport {
                    rejected: true,
                    ..CycleReport::new(CycleStatus::Rejected)
                });
            }
        };
        self.stats.samples += brought.new as u64;
        self.stats.most_samples = self.stats.most_samples.max(brought.new as u64);

        let physics_start = Instant::now();
        let steps = self.step_to(now, target)?;
        self.check_interference();
        if brought.new > 0 {
            self.compare_with_drives();
        }
        let physics_time = physics_start.elapsed();

        let write_start = Instant::now();
        if let Some(offline) = self.write(now, plc_cycle, steps)? {
            return Ok(offline);
        }
        let io_time = read_time + write_start.elapsed();

        self.record(plc_cycle, started, io_time, physics_time)?;
        Ok(CycleReport {
            status: CycleStatus::Exchanged,
            steps,
            rejected: self.commands.holding(),
            plc_cycle: Some(plc_cycle),
            samples: brought.new,
            retry_at: None,
        })
    }

    /// Read stage: every sample that has come, into `self.batch`, and how long the read took.
    /// `Err` carries the report of a cycle that ends here: the link lost, or the PLC restarted
    /// (the counter went back) and the physics re-settled.
    fn read(&mut self, now: Instant) -> Result<Result<Duration, CycleReport>, ShadowError> {
        let started = Instant::now();
        self.batch.clear();
        let read = self.controller.read_samples(&mut self.batch);
        let time = started.elapsed();
        // Handles the PLC invalidated (online change) were re-resolved within the read: a gap
        // on this cycle's first step, unless a restart's resync below counts it anyway.
        let repaired = self.take_re_resolves() > 0;
        match read {
            Ok(()) => {}
            Err(ControllerError::Interrupted) => {
                return Ok(Err(CycleReport::new(CycleStatus::Interrupted)));
            }
            Err(e) => {
                self.lose_link(now, &e);
                return Ok(Err(CycleReport::new(CycleStatus::Offline)));
            }
        }
        // A counter that went back, against the one before it (a PLC restart), usable or not:
        // the newest usable sample from there on is where the physics starts again (none: the
        // next read sees the counter back again).
        let mut previous = self.clock.counter();
        let mut restart = None;
        for (k, sample) in self.batch.iter().enumerate() {
            if went_back(previous, sample.cycle()) {
                restart = Some((k, previous));
            }
            previous = sample.cycle();
        }
        let Some((at, from)) = restart else {
            if repaired {
                self.mark_gap();
            }
            // Samples again after a stall: the newest usable one of a new counter value is
            // where the physics starts again.
            if self.link.stalled() {
                let counter = self.clock.counter();
                let newest = self
                    .batch
                    .iter()
                    .rev()
                    .filter(|s| s.cycle() != counter)
                    .find_map(Sample::usable)
                    .cloned();
                if let Some(inputs) = newest {
                    self.end_stall(now, inputs)?;
                    return Ok(Err(CycleReport::new(CycleStatus::Resynced)));
                }
            }
            return Ok(Ok(time));
        };
        let to = previous;
        self.warnings.restarted.warn(now, || {
            format!(
                "the PLC's cycle counter went back from {from} to {to}: it restarted; \
                 re-synchronising"
            )
        });
        let newest = self.batch[at..]
            .iter()
            .rev()
            .find_map(Sample::usable)
            .cloned();
        match self.controller.read_geometry() {
            Ok(geometry) => self.check_geometry(&geometry)?,
            Err(e) => {
                self.lose_link(now, &e);
                return Ok(Err(CycleReport::new(CycleStatus::Offline)));
            }
        }
        if let Some(inputs) = newest {
            self.resync(now, inputs, Duration::ZERO)?;
        }
        Ok(Err(CycleReport::new(CycleStatus::Resynced)))
    }

    /// Clock and guard stages for the samples read in `read_time`, oldest first: each of a new
    /// counter value is placed on the time line, observed (the PLC's period, its reaction
    /// figure) and admitted if no cable jumped beyond the winches' reach since the last good
    /// one, its knot then on the line; refused, the last good one holds. Free-running, the read
    /// clock learns when each came.
    fn admit(&mut self, now: Instant, read_time: Duration) -> Brought {
        let mut brought = Brought {
            new: 0,
            unusable: 0,
        };
        let (configured, period) = match self.config.timing {
            CycleTiming::Free { plc_period, period } => (plc_period, period),
            CycleTiming::Lockstep { plc_period } => (plc_period, plc_period),
        };
        let arrival = self.clock.arrival(now);
        // The buffer goes back after, its capacity kept.
        let mut batch = std::mem::take(&mut self.batch);
        for sample in batch.drain(..) {
            let i = match sample {
                Sample::Usable(i) => i,
                Sample::Unusable {
                    cycle,
                    plc_time,
                    error,
                } => {
                    // Its cycle was sent, not missed: the counter moves on without a knot.
                    self.clock
                        .place(cycle, plc_time, (arrival, configured), &mut self.stats);
                    brought.unusable += 1;
                    self.commands.refuse_unusable();
                    self.reject(now, || match error {
                        ControllerError::NotFinite {
                            symbol,
                            element,
                            value,
                        } => format!("{symbol}[{element}] = {value}: not a finite number"),
                        other => other.to_string(),
                    });
                    continue;
                }
            };
            let previous = self.clock.counter();
            let Some(line) =
                self.clock
                    .place(i.cycle, i.plc_time, (arrival, configured), &mut self.stats)
            else {
                self.same_counter(&i);
                continue;
            };
            brought.new += 1;
            self.clock
                .observe(now, i.cycle, i.plc_time, &mut self.stats);
            let taken = i
                .reaction_cycles
                .and_then(|r| self.echoes.taken(previous, i.cycle, r));
            if let Some(r) = taken {
                self.stats.add_reaction(r);
            }
            self.guard(now, i, (arrival, line), read_time, (configured, period));
        }
        self.batch = batch;
        brought
    }

    /// A sample of the counter read before (a poll within the PLC's cycle): the same sample,
    /// unless the commands changed without the counter — then whatever writes them runs in
    /// another task than the one that counts, and their motion between counts is not seen.
    /// Said once.
    fn same_counter(&mut self, i: &CycleInputs) {
        let before = self.commands.last_read();
        let moved = before.cycle == i.cycle
            && before
                .commanded_lengths
                .iter()
                .zip(&i.commanded_lengths)
                .any(|(a, b)| (a - b).abs() > 1e-9);
        if moved && !self.warnings.commands_between_counts {
            self.warnings.commands_between_counts = true;
            tracing::warn!(
                "the commanded lengths changed while the PLC's cycle counter stood at {}: they \
                 are written by another task than the one that counts; the shadow places \
                 each sample by its counter, so their motion between two counts is not seen \
                 (count in the task that writes them: assets/twincat/README.md)",
                i.cycle
            );
        }
    }

    /// Guard stage for one sample placed at `line` and read at shadow time `arrival`: admitted
    /// if no cable moved further than the winches can in the time since the last good one —
    /// the PLC's (its line), or the counter's advance × the configured period, or the shadow's
    /// own since that one was read, whichever is longest, plus a cycle and the read's own time
    /// (a slow read delays a sample without the PLC having moved further). An admitted sample
    /// goes on the time line.
    fn guard(
        &mut self,
        now: Instant,
        i: CycleInputs,
        (arrival, line): (f64, f64),
        read_time: Duration,
        (configured, period): (Duration, Duration),
    ) {
        let advanced = f64::from(i.cycle.wrapping_sub(self.commands.good().cycle).min(1000));
        let allowed_dt = (line - self.commands.good_line())
            .max(advanced * configured.as_secs_f64())
            .max(arrival - self.commands.good_time())
            + period.as_secs_f64()
            + read_time.as_secs_f64();
        let cycle = i.cycle;
        match self.commands.admit(i, allowed_dt, (arrival, line)) {
            Ok(good) => {
                self.timeline.push(line, &good.commanded_lengths);
                if let CycleTiming::Free { .. } = self.config.timing {
                    let latency = self.command_latency();
                    self.read_clock.observe(arrival, line, latency);
                }
            }
            Err(r) => {
                self.reject(now, || format!("sample of PLC cycle {cycle}: {r}"));
            }
        }
    }

    fn reject(&mut self, now: Instant, what: impl FnOnce() -> String) {
        self.stats.rejected += 1;
        self.warnings.rejected.warn(now, || {
            format!("rejected {}; holding the last good command", what())
        });
    }

    /// Write stage (with `config.write`): the state answering PLC cycle `plc_cycle`. A write
    /// the link lost ends the cycle offline (`Some`), its steps recorded before the gap.
    fn write(
        &mut self,
        now: Instant,
        plc_cycle: u32,
        steps: u64,
    ) -> Result<Option<CycleReport>, ShadowError> {
        // Nothing new to say: no step taken, the same counter answered already.
        if !self.config.write || (steps == 0 && self.echoes.last() == Some(plc_cycle)) {
            return Ok(None);
        }
        match self.write_outputs(plc_cycle) {
            Ok(()) => Ok(None),
            Err(ShadowError::Controller(ControllerError::Interrupted)) => {
                let (counter, enable) = (self.clock.counter(), self.enable());
                self.recording.flush(&self.robot, counter, enable)?;
                Ok(Some(CycleReport::new(CycleStatus::Interrupted)))
            }
            Err(ShadowError::Controller(e)) if !fatal_write(&e) => {
                // The steps happened: they stay in the record, before the gap.
                let (counter, enable) = (self.clock.counter(), self.enable());
                self.recording.flush(&self.robot, counter, enable)?;
                self.lose_link(now, &e);
                Ok(Some(CycleReport::new(CycleStatus::Offline)))
            }
            Err(e) => Err(e),
        }
    }

    /// The physics state, answering PLC cycle `plc_cycle`, through the controller (which
    /// refuses symbols off the allow-list before a byte goes out). The outputs' buffer is
    /// reused from cycle to cycle.
    pub(super) fn write_outputs(&mut self, plc_cycle: u32) -> Result<(), ShadowError> {
        let s = self.sim.state();
        let out = &mut self.outputs;
        out.pose = s.pose;
        out.lengths.clone_from(&s.lengths);
        out.tensions.clone_from(&s.tensions);
        if !s.motor_torques.is_empty() {
            // The feed-forward: each torque carried on one PLC cycle along its rate since the
            // last write (the torques written then are still in `out.torques`).
            let since = match self.echoes.last() {
                Some(c) if c != plc_cycle && out.torques.len() == s.motor_torques.len() => {
                    f64::from(plc_cycle.wrapping_sub(c).clamp(1, 1000))
                }
                _ => f64::INFINITY,
            };
            out.feedforward_torques.clear();
            out.feedforward_torques.extend(
                s.motor_torques
                    .iter()
                    .zip(out.torques.iter().chain(std::iter::repeat(&0.0)))
                    .map(|(&now, &before)| now + (now - before) / since),
            );
            out.torques.clone_from(&s.motor_torques);
            out.payouts.clone_from(&s.winch);
        }
        out.cycle = plc_cycle;
        self.controller.write_cycle(out)?;
        self.echoes.wrote(plc_cycle);
        Ok(())
    }

    /// The interference check at the physics' pose (part of the physics' time): the flag the
    /// outputs carry, the count of cycles with one.
    fn check_interference(&mut self) {
        let Some(clearance) = self.config.clearance else {
            return;
        };
        let report = cdpr_core::interference::check(&self.robot, &self.sim.state().pose, clearance);
        let flagged = !report.is_clear();
        self.stats.interference_cycles += u64::from(flagged);
        if flagged && self.stats.first_interference.is_none() {
            let what = report.violations().map(|p| p.to_string()).collect();
            self.stats.first_interference = Some((self.clock.time(), what));
        }
        self.outputs.interference = flagged;
        self.interference = Some(report);
    }

    /// The drives' actual values of the newest sample against the physics' (torques,
    /// payouts), when the controller gives them; the record's columns follow them.
    fn compare_with_drives(&mut self) {
        let i = self.commands.last_read();
        if i.actual_torques.is_empty() && i.actual_lengths.is_empty() {
            return;
        }
        let s = self.sim.state();
        self.stats
            .torque_prediction
            .push(&s.motor_torques, &i.actual_torques);
        self.stats
            .length_prediction
            .push(&s.winch, &i.actual_lengths);
        self.recording
            .set_actual(&i.actual_torques, &i.actual_lengths);
    }

    /// The motion-enable flag of the last sample read.
    fn enable(&self) -> bool {
        self.commands.last_read().motion_enable
    }

    /// Record stage: the exchange is done — its counter kept, its times counted — and the
    /// cycle's steps are written (after the measured time).
    fn record(
        &mut self,
        plc_cycle: u32,
        started: Instant,
        io_time: Duration,
        physics_time: Duration,
    ) -> Result<(), ShadowError> {
        if self.take_re_resolves() > 0 {
            self.mark_gap();
        }
        self.stats.cycles += 1;
        self.stats.cycle.add(started.elapsed().as_secs_f64());
        self.stats.io.add(io_time.as_secs_f64());
        self.stats.physics.add(physics_time.as_secs_f64());
        let enable = self.enable();
        self.recording.flush(&self.robot, plc_cycle, enable)?;
        self.recording.cycle_stats(&self.stats)
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
