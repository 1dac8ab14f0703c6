//! One cycle of the shadow, in its stages: read → clock → guard → step → write → record.
//!
//! - read: one sum read of commanded lengths, cycle counter and enable flag; a lost link
//!   sends the shadow offline, a counter that went back (a PLC restart) re-synchronises it;
//! - clock: the time the physics must reach — the wall clock free-running, the counter's
//!   advance in lockstep (which is why the clock follows the read);
//! - guard: the sample admitted, or refused and the last good one held;
//! - step: the physics stepped at its fixed dt to that time ([`super::step`]);
//! - write: one sum write of pose, lengths, tensions and the counter echo;
//! - record: the cycle's statistics, then its steps written to the record (outside the
//!   cycle's measured time).

use super::clock::{Tick, went_back};
use super::{CycleTiming, Shadow, ShadowError};
use crate::link::{Controller, ControllerError, CycleInputs};
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
    /// The link is back (or the PLC restarted); the physics was re-settled.
    Resynced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleReport {
    pub status: CycleStatus,
    pub steps: u64,
    /// This cycle's sample was refused and the last good command held.
    pub rejected: bool,
    pub plc_cycle: Option<u32>,
    pub retry_at: Option<Instant>,
}

impl CycleReport {
    pub(super) fn new(status: CycleStatus) -> CycleReport {
        CycleReport {
            status,
            steps: 0,
            rejected: false,
            plc_cycle: None,
            retry_at: None,
        }
    }
}

/// What the read stage got: a sample (`None`: one with a non-finite value, refused), and how
/// long the read took.
struct Read {
    inputs: Option<CycleInputs>,
    time: Duration,
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
        let read = match self.read(now)? {
            Ok(read) => read,
            Err(ended) => return Ok(ended),
        };
        let counter = read.inputs.as_ref().map(|i| i.cycle);
        let (target, plc_cycle) = match self.clock.tick(now, counter, &mut self.stats) {
            Tick::Due { target, plc_cycle } => (target, plc_cycle),
            Tick::Polled => return Ok(CycleReport::new(CycleStatus::Polled)),
            Tick::Rejected => {
                return Ok(CycleReport {
                    rejected: true,
                    ..CycleReport::new(CycleStatus::Rejected)
                });
            }
        };
        let rejected = self.guard(now, read.inputs, target, read.time);

        let physics_start = Instant::now();
        let steps = self.step_to(now, target, rejected)?;
        self.check_interference();
        let physics_time = physics_start.elapsed();

        let write_start = Instant::now();
        if let Some(offline) = self.write(now, plc_cycle)? {
            return Ok(offline);
        }
        let io_time = read.time + write_start.elapsed();

        self.record(plc_cycle, started, io_time, physics_time)?;
        Ok(CycleReport {
            status: CycleStatus::Exchanged,
            steps,
            rejected,
            plc_cycle: Some(plc_cycle),
            retry_at: None,
        })
    }

    /// Read stage: one sample. `Err` carries the report of a cycle that ends here: the link
    /// lost, or the PLC restarted (the counter went back) and the physics re-settled.
    fn read(&mut self, now: Instant) -> Result<Result<Read, CycleReport>, ShadowError> {
        let started = Instant::now();
        let read = self.controller.read_cycle();
        let time = started.elapsed();
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
                return Ok(Err(CycleReport::new(CycleStatus::Offline)));
            }
        };
        if let Some(i) = inputs {
            if !went_back(self.clock.counter(), i.cycle) {
                if repaired {
                    self.mark_gap();
                }
                return Ok(Ok(Read {
                    inputs: Some(i),
                    time,
                }));
            }
            let (from, to) = (self.clock.counter(), i.cycle);
            self.warnings.restarted.warn(now, || {
                format!(
                    "the PLC's cycle counter went back from {from} to {to}: it restarted; \
                     re-synchronising"
                )
            });
            match self.controller.read_geometry() {
                Ok(geometry) => self.check_geometry(&geometry)?,
                Err(e) => {
                    self.lose_link(now, &e);
                    return Ok(Err(CycleReport::new(CycleStatus::Offline)));
                }
            }
            self.resync(now, i, Duration::ZERO)?;
            return Ok(Err(CycleReport::new(CycleStatus::Resynced)));
        }
        if repaired {
            self.mark_gap();
        }
        Ok(Ok(Read { inputs: None, time }))
    }

    /// Guard stage: `inputs`, read in `read_time` for shadow time `target`, admitted if no
    /// cable jumped beyond the winches' reach (NaN was refused by the read); free-running, an
    /// admitted sample goes on the PLC's time line. Returns whether the cycle holds the last
    /// good command instead.
    fn guard(
        &mut self,
        now: Instant,
        inputs: Option<CycleInputs>,
        target: f64,
        read_time: Duration,
    ) -> bool {
        let Some(i) = inputs else {
            return true;
        };
        self.clock.observe(now, &i, &mut self.stats);
        // The read's own time counts: a slow read (a re-resolve inside it) delays the
        // sample without the PLC having moved any further per unit of time. And the PLC's own
        // time since the last good sample: free-running, a new counter is seen one shadow
        // cycle after the last (unchanged) sample, but carries a whole PLC period of motion.
        let plc_period = match self.config.timing {
            CycleTiming::Free { plc_period, .. } | CycleTiming::Lockstep { plc_period } => {
                plc_period.as_secs_f64()
            }
        };
        let advanced = f64::from(i.cycle.wrapping_sub(self.commands.good().cycle).min(1000));
        let allowed_dt = (target - self.commands.good_time()).max(advanced * plc_period)
            + self.config.timing.period().as_secs_f64()
            + read_time.as_secs_f64();
        let cycle = i.cycle;
        match self.commands.admit(i, allowed_dt, target) {
            Ok(good) => {
                if let CycleTiming::Free { period, plc_period } = self.config.timing {
                    let plc = self.clock.plc_period_s(plc_period);
                    self.timeline.observe(
                        (good.cycle, good.plc_time),
                        &good.commanded_lengths,
                        target,
                        plc,
                        period.as_secs_f64(),
                    );
                }
                false
            }
            Err(r) => {
                self.reject(now, || format!("sample of PLC cycle {cycle}: {r}"));
                true
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
    fn write(&mut self, now: Instant, plc_cycle: u32) -> Result<Option<CycleReport>, ShadowError> {
        if !self.config.write {
            return Ok(None);
        }
        match self.write_outputs(plc_cycle) {
            Ok(()) => Ok(None),
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
        out.cycle = plc_cycle;
        Ok(self.controller.write_cycle(out)?)
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
        self.outputs.interference = flagged;
        self.interference = Some(report);
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
        self.clock.exchanged(plc_cycle);
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
