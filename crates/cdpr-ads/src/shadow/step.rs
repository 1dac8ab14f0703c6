//! The step stage: the physics stepped at its fixed dt up to the controller's time, each step's
//! command read off the commands' time line ([`super::timeline`]) — at the physics' own time in
//! lockstep, a constant delay behind it free-running. The shadow never re-implements physics:
//! it only hands `Sim::set_command_lengths` a buffer it fills in place and calls `Sim::step`.

use super::timeline::{Blend, Past, Reading, Slopes, Timeline};
use super::{CycleTiming, Shadow, ShadowError};
use crate::link::Controller;
use cdpr_core::sim::{Command, SimError};
use std::time::Instant;

/// How a read of the line goes on past its newest knot, and how long a blend lasts at least.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reach {
    pub past: Past,
    /// The slopes at the knots: centred free-running (read behind the newest), trailing in
    /// lockstep (read up to it).
    pub slopes: Slopes,
    /// A late knot's difference is blended out over this long, or over as long as the read
    /// had gone past the knot before it if longer, s.
    pub blend: f64,
}

/// The shortest the command goes on past the newest knot before it brakes, s: a PLC on a
/// desktop scheduler runs late by tens of milliseconds and then makes its cycles up back to
/// back, its commands going on as they went all along.
const MIN_HORIZON: f64 = 0.050;

/// The shortest blend, s: what a late knot corrects is spread over at least this (a 4 ms
/// extrapolation of 3 m/s² is off by 24 µm: 2.4 mm/s over 10 ms, 0.1 N of uvigo8's damping).
const MIN_BLEND: f64 = 0.010;

/// What the last step read: the newest knot there was (sequence, PLC time), up to which PLC
/// time the line was final, the PLC time read, whether it held.
#[derive(Debug, Clone, Copy)]
struct LastRead {
    seq: u64,
    newest: f64,
    settled: f64,
    read: f64,
    held: bool,
}

/// Reads within this fraction of their time (and a nanosecond) of the line's final part are in
/// it: a lockstep step that ends on the newest knot reaches it up to rounding, the physics'
/// time and the knot's each counted from their base.
const SAME_TIME: f64 = 1e-12;

/// The command the physics follows, and the buffers its steps are computed in.
pub(super) struct Drive {
    /// The command the physics ended the last cycle on, m.
    command: Vec<f64>,
    /// This step's command and its rate, m and m/s.
    step: Vec<f64>,
    rate: Vec<f64>,
    /// What the command would have been on the line as it was, for a blend.
    was: (Vec<f64>, Vec<f64>),
    /// The last step's command and rate, and its shadow time.
    previous: (Vec<f64>, Vec<f64>),
    previous_t: f64,
    blend: Blend,
    last: Option<LastRead>,
}

impl Drive {
    pub(super) fn new(command: &[f64]) -> Drive {
        Drive {
            command: command.to_vec(),
            step: command.to_vec(),
            rate: vec![0.0; command.len()],
            was: (Vec::new(), Vec::new()),
            previous: (Vec::new(), Vec::new()),
            previous_t: 0.0,
            blend: Blend::default(),
            last: None,
        }
    }

    /// The command the physics ended the last cycle on, m.
    pub(super) fn command(&self) -> &[f64] {
        &self.command
    }

    /// The physics was put at rest where `command` holds it: no blend, nothing read yet.
    pub(super) fn reset(&mut self, command: &[f64]) {
        self.command.clear();
        self.command.extend_from_slice(command);
        self.blend.clear();
        self.last = None;
    }

    /// When knots came since the last step and the read is past the newest knot it had: that
    /// knot's sequence number, and how far past it the read is.
    fn past_newest(&self, line: &Timeline, read: f64) -> Option<(u64, f64)> {
        let last = self.last?;
        let (seq, _) = line.newest()?;
        (seq != last.seq && read > last.newest).then_some((last.seq, read - last.newest))
    }

    /// Fills the command of the step ending at shadow time `t`, reading the line at its time
    /// `read`; `goal` when the line is empty. Knots that came after the last step had read past
    /// the line's final part (or a hold that began or ended there) change the line under the
    /// read point: what the command would have been — the line as it was, read at `was_at` (the
    /// read point before any hold-back); the last step's command carried on along its rate
    /// where the knots it was read from are gone (a burst longer than the line keeps) — is
    /// blended into the new line, value and rate. Returns how far past the final part the
    /// last step had read when such a late knot came, s.
    fn fill(
        &mut self,
        line: &Timeline,
        t: f64,
        (was_at, read): (f64, f64),
        (reach, still): (Reach, bool),
        goal: &[f64],
    ) -> Option<f64> {
        // The last step's command, for a blend from it when its knots are gone.
        let (previous, previous_rate) = &mut self.previous;
        previous.clone_from(&self.step);
        previous_rate.clone_from(&self.rate);
        let reading = line.read(
            read,
            (None, reach.slopes),
            reach.past,
            &mut self.step,
            &mut self.rate,
        );
        if reading == Reading::Empty {
            self.step.clear();
            self.step.extend_from_slice(goal);
            self.rate.clear();
            self.rate.resize(goal.len(), 0.0);
            return None;
        }
        let newest = line.newest();
        let mut late = None;
        // Knots that came after the last step had read past the final part; a hold that began
        // or ended where the read is past it.
        let (came, changed) = match (self.last, newest) {
            (Some(last), Some((seq, _))) => {
                let rounding = SAME_TIME * last.settled.abs() + 1e-9;
                let came = seq != last.seq && last.read > last.settled + rounding;
                let held = reach.past.hold != last.held && was_at > last.settled;
                (came, came || held)
            }
            _ => (false, false),
        };
        if let Some(last) = self.last.filter(|_| changed) {
            let (was, was_rate) = &mut self.was;
            let then = Past {
                hold: last.held,
                ..reach.past
            };
            let gone = line.read(was_at, (Some(last.seq), reach.slopes), then, was, was_rate)
                == Reading::Empty
                || line.oldest().is_some_and(|oldest| was_at < oldest);
            if gone {
                // Along the last step's rate for a step's time, not across steps skipped.
                let since = (t - self.previous_t).min(reach.past.horizon);
                was.clear();
                was.extend(
                    previous
                        .iter()
                        .zip(&*previous_rate)
                        .map(|(c, v)| c + v * since),
                );
                was_rate.clone_from(previous_rate);
            } else {
                self.blend.apply(t, was, was_rate);
            }
            let ahead = last.read - last.settled;
            let length = reach.blend.max(was_at - last.settled).max(MIN_BLEND);
            self.blend
                .restart(t, length, (was, was_rate), (&self.step, &self.rate));
            // While the commands stand still, nothing the read went ahead to was missed; a
            // knot that ends a hold came after a refused one, not late.
            late = (came && !still && !last.held).then_some(ahead);
        }
        self.last = newest.map(|(seq, newest)| LastRead {
            seq,
            newest,
            settled: line.settled(reach.slopes).unwrap_or(newest),
            read,
            held: reach.past.hold,
        });
        self.previous_t = t;
        self.blend.apply(t, &mut self.step, &mut self.rate);
        late
    }
}

impl<C: Controller> Shadow<C> {
    /// Steps the physics from its time to `target`, each step's command read off the line.
    /// Returns the steps taken.
    pub(super) fn step_to(&mut self, now: Instant, target: f64) -> Result<u64, ShadowError> {
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
        let plc_period = self.plc_period();
        let reach = Reach {
            past: Past {
                horizon: (2.0 * plc_period + self.config.timing.period().as_secs_f64())
                    .max(MIN_HORIZON),
                brake: self.robot.winch.max_acceleration,
                hold: self.commands.holding(),
            },
            slopes: match self.config.timing {
                CycleTiming::Free { .. } => Slopes::Centred,
                CycleTiming::Lockstep { .. } => Slopes::Trailing,
            },
            blend: plc_period,
        };
        let rejected = reach.past.hold;
        if steps > 0 {
            self.recording.command_moved();
        }
        let mut read = None;
        let still = self.timeline.still();
        for k in 1..=steps {
            let t = self.clock.time() + dt;
            let at = match self.config.timing {
                CycleTiming::Lockstep { .. } => t,
                CycleTiming::Free { .. } => self.read_clock.at(t, dt, still),
            };
            // Knots that come after the read went past the horizon (a PLC that stalled, then
            // ran its cycles back to back): the command had slowed down along its slopes; the
            // read point goes back to the time it had got to along them, and the read clock
            // makes the rest up at its slew rate, rather than the command covering the
            // distance the PLC covered meanwhile at once.
            let free = matches!(self.config.timing, CycleTiming::Free { .. });
            let was_at = at;
            let at = match self.drive.past_newest(&self.timeline, at) {
                Some((seq, late)) if free && late > reach.past.horizon => {
                    let back = late - self.timeline.warped(seq, late, reach.past);
                    self.read_clock.hold_back(back);
                    at - back
                }
                _ => at,
            };
            read = Some(at);
            let goal = &self.commands.good().commanded_lengths;
            let fill = self
                .drive
                .fill(&self.timeline, t, (was_at, at), (reach, still), goal);
            if let Some(late) = fill {
                self.stats.late_samples += 1;
                self.stats.late_max_s = self.stats.late_max_s.max(late);
            }
            if k == steps {
                self.drive.command.clone_from(&self.drive.step);
            }
            self.sim.set_command_lengths(&self.drive.step)?;
            if let Err(e) = self.sim.step() {
                let SimError::BlowUp { .. } = e else {
                    return Err(e.into());
                };
                tracing::warn!("{e}; re-settling the platform at the current command");
                let goal = self.commands.good().commanded_lengths.clone();
                self.sim.settle(&Command::Lengths(goal))?;
                self.stats.physics_resets += 1;
                self.stats.gaps += 1;
                self.recording.mark_gap();
                self.clock.set_time(target);
                return Ok(k - 1);
            }
            self.clock.stepped();
            self.stats.steps += 1;
            self.stats
                .drives
                .push(self.clock.time(), &self.sim.state().motor_torques);
            self.recording.step(
                self.clock.time(),
                &self.drive.step,
                self.sim.state(),
                rejected,
            );
        }
        if let Some(read) = read {
            self.timeline.prune(read);
        }
        Ok(steps)
    }

    /// The PLC's period as measured (stamps or the counter's rate), else as configured, s.
    pub(super) fn plc_period(&self) -> f64 {
        match self.config.timing {
            CycleTiming::Free { plc_period, .. } => self.clock.plc_period_s(plc_period),
            CycleTiming::Lockstep { plc_period } => plc_period.as_secs_f64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PLC that stalled while the read went on past its newest knot, then sent more samples
    /// at once than the line keeps: the knots the command was read from are gone, and the
    /// command goes on from the last step's value and rate into the new line — no jump.
    #[test]
    fn a_burst_longer_than_the_line_keeps_is_blended_from_the_last_step() {
        let speed = 0.1;
        let at = |t: f64| [speed * t];
        let reach = Reach {
            past: Past {
                horizon: 0.05,
                brake: 3.0,
                hold: false,
            },
            slopes: Slopes::Centred,
            blend: 1e-3,
        };
        let (dt, delay) = (1e-3, 4e-3);
        let mut line = Timeline::default();
        for k in 0..=100 {
            let time = f64::from(k) * 1e-3;
            line.push(time, &at(time));
        }
        let mut drive = Drive::new(&at(0.0));
        let mut last = (0.0, 0.0);
        // Up to 36 ms past the newest knot: within the horizon, still moving.
        for k in 1..=140 {
            let t = f64::from(k) * dt;
            let read = t - delay;
            let late = drive.fill(&line, t, (read, read), (reach, false), &at(0.0));
            assert_eq!(late, None, "no knot came");
            last = (drive.step[0], drive.rate[0]);
        }
        assert!(
            (last.1 - speed).abs() < 1e-9,
            "going on as it went: {last:?}"
        );
        // Two seconds of a 1 ms task at once: only the last 1024 are kept.
        for k in 101..=2100 {
            let time = f64::from(k) * 1e-3;
            line.push(time, &at(time));
        }
        let t = 0.141;
        let late = drive.fill(&line, t, (t - delay, t - delay), (reach, false), &at(0.0));
        assert!(late.is_some(), "a late knot");
        let continued = last.0 + last.1 * dt;
        assert!(
            (drive.step[0] - continued).abs() < 1e-9,
            "{} against {continued}: the new line's 0.1077 m blended in, not jumped to",
            drive.step[0]
        );
        assert!(
            (drive.rate[0] - last.1).abs() < 1e-9,
            "{} {}",
            drive.rate[0],
            last.1
        );
    }
}
