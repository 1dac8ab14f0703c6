//! The controller's commands on the PLC's time line, and the command the physics reads off it.
//!
//! Every sample the PLC sent is a knot at its PLC time: in lockstep the counter's advance × the
//! PLC period (the physics' own time); free-running the PLC's time stamps when the samples come
//! by notification, else the counter × the PLC's period ([`Placement`]: measured, or the
//! configured one while the arrivals agree with it). Never the time the shadow happened to
//! read it (only a configured period the arrivals contradict, before the period is measured,
//! leaves the arrivals to space the samples): a sample read late is still placed where the PLC
//! put it.
//!
//! Between knots the command is a cubic Hermite curve: C¹ (no velocity step at a knot, so no
//! damping-force step in the cables) and exact for a command of constant acceleration, with one
//! of two rules for its slope at a knot ([`Slopes`]): that of the parabola through the knot and
//! its neighbours — settled once the knot after it has come, and the smoothest where the
//! acceleration steps (a trapezoid's corner: the curve's acceleration stays within 2× the
//! command's, its change within a millisecond below the step's itself) — or, where the command
//! must be known as soon as the knot ending the segment has come (lockstep), that of the
//! parabola through it and the two knots before (up to 3.4× the acceleration at a corner). Past the newest knot the command
//! goes on as it went — its slope and the change of slope from the knot before — for a horizon
//! (a late sample, a PLC that ran late), then brakes to a stop at the winches' acceleration (a
//! PLC that stopped; [`Past`]); when the next knot comes, the difference between what was
//! extrapolated and the curve through the new knot is blended out, value and slope ([`Blend`]):
//! the command never holds and then jumps.
//!
//! Free-running, the physics reads the line a constant delay behind the wall clock
//! ([`ReadClock`]): the least delay any sample has come with (the transport's floor), plus two
//! PLC periods and one shadow cycle (counted as at least 2 ms): a segment is final once the knot after its
//! end has come (that end's centred slope), and by then it normally has. In lockstep the physics' time is the PLC's and the newest knot is where the
//! cycle ends: no delay, nothing extrapolated.

use std::collections::VecDeque;

/// One sample on the line.
#[derive(Debug, Clone, PartialEq)]
struct Knot {
    /// Its place in the order of arrival (never reused, so that it survives pruning).
    seq: u64,
    /// PLC time, s.
    time: f64,
    commands: Vec<f64>,
    /// dc/dt at the knot, per cable: from the knot and the two before it...
    slopes: Vec<f64>,
    /// ...and from the knot and its neighbours, once the knot after it has come (until then
    /// the same as `slopes`).
    centred: Vec<f64>,
    /// d²c/dt² as the slopes changed from the knot before (0 at the first).
    bends: Vec<f64>,
}

impl Knot {
    /// Position and rate `along` s of time along the extrapolation past the knot, `rate` its
    /// time's rate: the knot's slope and bend (capped at `most` m/s²), a cable whose bend brakes
    /// it stopping where its rate reaches zero rather than turning back.
    fn extrapolate(&self, k: usize, along: f64, rate: f64, most: f64) -> (f64, f64) {
        let (c, m) = (self.commands[k], self.slopes[k]);
        let a = if most > 0.0 {
            self.bends[k].clamp(-most, most)
        } else {
            0.0
        };
        let (eff, moving) = if m * a < 0.0 && along > -m / a {
            (-m / a, false)
        } else {
            (along, true)
        };
        let speed = if moving { (m + a * eff) * rate } else { 0.0 };
        (c + m * eff + 0.5 * a * eff * eff, speed)
    }

    /// The fastest cable's rate `along` s past the knot, m/s.
    fn fastest(&self, along: f64, most: f64) -> f64 {
        (0..self.slopes.len()).fold(0.0, |f, k| {
            f.max(self.extrapolate(k, along, 1.0, most).1.abs())
        })
    }
}

/// The samples on the PLC's time line (see the module docs).
#[derive(Debug, Clone, Default)]
pub(super) struct Timeline {
    knots: VecDeque<Knot>,
    next_seq: u64,
}

/// Knots kept at most, whatever the reader does: a minute of a 1 ms task's samples would be
/// 60 000; the line needs the few around its read point.
const MAX_KNOTS: usize = 1024;

/// How a reading past the newest knot goes on: as the command went, for a horizon, then
/// slowing down to a stop — the time along the extrapolation slows (all cables together, so
/// that the platform brakes along its path), the fastest cable at the winches' acceleration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Past {
    /// The command goes on as it went this long past the newest knot, s...
    pub horizon: f64,
    /// ...then brakes to a stop, the fastest cable at this deceleration, m/s² (0: stops at
    /// once); the extrapolation's bends are capped at it too.
    pub brake: f64,
    /// Held at the newest knot at once (the last sample was refused).
    pub hold: bool,
}

impl Past {
    /// The time along the extrapolation `ahead` s past a knot whose fastest cable moves at
    /// `fastest` m/s at the horizon, and its rate (1 up to the horizon, falling to 0 while
    /// braking).
    pub fn warp(&self, ahead: f64, fastest: f64) -> (f64, f64) {
        if self.hold {
            return (0.0, 0.0);
        }
        if ahead <= self.horizon {
            return (ahead, 1.0);
        }
        let stop = if self.brake > 0.0 {
            fastest / self.brake
        } else {
            0.0
        };
        let braking = (ahead - self.horizon).min(stop);
        if braking >= stop {
            return (self.horizon + 0.5 * stop, 0.0);
        }
        (
            self.horizon + braking - 0.5 * braking * braking / stop,
            1.0 - braking / stop,
        )
    }
}

/// Which slope the curve takes at a knot (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slopes {
    /// The parabola through the knot and its neighbours: settled one knot later.
    Centred,
    /// The parabola through the knot and the two before: known at once.
    Trailing,
}

/// Where a reading of the line fell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Reading {
    /// Before any knot: nothing to read.
    Empty,
    /// Before the first knot or between two: the first held, or the curve.
    Known,
    /// Past the newest knot by this many seconds: extrapolated (see [`Past`]).
    Beyond(f64),
}

impl Timeline {
    /// Forgets every knot (a resync: the platform re-settled).
    pub fn reset(&mut self) {
        self.knots.clear();
    }

    /// The PLC time of the oldest knot kept.
    pub fn oldest(&self) -> Option<f64> {
        self.knots.front().map(|k| k.time)
    }

    /// The newest knot: its sequence number and PLC time.
    pub fn newest(&self) -> Option<(u64, f64)> {
        self.knots.back().map(|k| (k.seq, k.time))
    }

    /// The PLC time up to which the line is final under `rule`, the knots as they are: the
    /// newest knot with trailing slopes, the one before it with centred ones (the newest's
    /// slope settles with the next knot).
    pub fn settled(&self, rule: Slopes) -> Option<f64> {
        let back = match rule {
            Slopes::Trailing => 1,
            Slopes::Centred => 2.min(self.knots.len()),
        };
        self.knots
            .len()
            .checked_sub(back)
            .map(|i| self.knots[i].time)
    }

    /// The time along the slopes of the knot `seq` that a read `ahead` s past it gets (see
    /// [`Past::warp`]); `ahead` itself for a knot no longer kept.
    pub fn warped(&self, seq: u64, ahead: f64, past: Past) -> f64 {
        match self.knots.iter().rev().find(|k| k.seq == seq) {
            Some(k) => past.warp(ahead, k.fastest(past.horizon, past.brake)).0,
            None => ahead,
        }
    }

    /// A sample at PLC time `time`: its knot, the slope there from the knots before (none: 0;
    /// one: the chord; else the parabola through the last three, at the new one). A time not
    /// after the newest knot's is no new sample (false).
    pub fn push(&mut self, time: f64, commands: &[f64]) -> bool {
        if self.knots.back().is_some_and(|k| time <= k.time) || !time.is_finite() {
            return false;
        }
        let n = self.knots.len();
        let slopes: Vec<f64> = match (
            n.checked_sub(2).and_then(|i| self.knots.get(i)),
            self.knots.back(),
        ) {
            (_, None) => vec![0.0; commands.len()],
            (None, Some(b)) => {
                let h = time - b.time;
                commands
                    .iter()
                    .zip(&b.commands)
                    .map(|(c, cb)| (c - cb) / h)
                    .collect()
            }
            (Some(a), Some(b)) => {
                // The derivative at the right end of the parabola through (a, b, new), for
                // uneven spacing (a missed cycle, jittery stamps).
                let (h1, h2) = (b.time - a.time, time - b.time);
                let wa = h2 / (h1 * (h1 + h2));
                let wb = -(h1 + h2) / (h1 * h2);
                let wc = (h1 + 2.0 * h2) / (h2 * (h1 + h2));
                commands
                    .iter()
                    .zip(b.commands.iter().zip(&a.commands))
                    .map(|(c, (cb, ca))| wa * ca + wb * cb + wc * c)
                    .collect()
            }
        };
        let bends = match self.knots.back() {
            Some(b) => slopes
                .iter()
                .zip(&b.slopes)
                .map(|(m, mb)| (m - mb) / (time - b.time))
                .collect(),
            None => vec![0.0; commands.len()],
        };
        // The knot before settles its centred slope: the parabola through it, the one before
        // and the new one, at it (uneven spacing allowed).
        if let (Some(a), Some(b)) = (
            n.checked_sub(2).and_then(|i| self.knots.get(i)),
            n.checked_sub(1),
        ) {
            let (ta, ca) = (a.time, a.commands.clone());
            let before = &mut self.knots[b];
            let (h1, h2) = (before.time - ta, time - before.time);
            let wa = -h2 / (h1 * (h1 + h2));
            let wb = (h2 - h1) / (h1 * h2);
            let wc = h1 / (h2 * (h1 + h2));
            for (k, m) in before.centred.iter_mut().enumerate() {
                *m = wa * ca[k] + wb * before.commands[k] + wc * commands[k];
            }
        }
        if self.knots.len() == MAX_KNOTS {
            self.knots.pop_front();
        }
        self.knots.push_back(Knot {
            seq: self.next_seq,
            time,
            commands: commands.to_vec(),
            centred: slopes.clone(),
            slopes,
            bends,
        });
        self.next_seq += 1;
        true
    }

    /// Whether every knot holds the same commands (to a nanometre): the line is flat, reading
    /// it anywhere gives the same.
    pub fn still(&self) -> bool {
        let Some(newest) = self.knots.back() else {
            return true;
        };
        self.knots.iter().all(|k| {
            k.commands
                .iter()
                .zip(&newest.commands)
                .all(|(a, b)| (a - b).abs() <= 1e-9)
        })
    }

    /// Drops the knots no reading at or after PLC time `time` needs: all but the last one at or
    /// before it.
    pub fn prune(&mut self, time: f64) {
        while self.knots.len() > 3 && self.knots.get(1).is_some_and(|k| k.time <= time) {
            self.knots.pop_front();
        }
    }

    /// The command and its rate at PLC time `t` into `position` and `velocity` (their lengths
    /// become the commands'), from the knots up to sequence number `upto` (all: `None`): the
    /// first knot held before it, the Hermite curve between knots, past the newest as `past`
    /// says.
    pub fn read(
        &self,
        t: f64,
        (upto, rule): (Option<u64>, Slopes),
        past: Past,
        position: &mut Vec<f64>,
        velocity: &mut Vec<f64>,
    ) -> Reading {
        let last = match upto {
            Some(seq) => self.knots.iter().rposition(|k| k.seq <= seq),
            None => self.knots.len().checked_sub(1),
        };
        let Some(last) = last else {
            return Reading::Empty;
        };
        position.clear();
        velocity.clear();
        let newest = &self.knots[last];
        if t >= newest.time {
            let ahead = t - newest.time;
            let fastest = newest.fastest(past.horizon, past.brake);
            let (along, rate) = past.warp(ahead, fastest);
            for k in 0..newest.commands.len() {
                let (p, v) = newest.extrapolate(k, along, rate, past.brake);
                position.push(p);
                velocity.push(v);
            }
            return if ahead > 0.0 {
                Reading::Beyond(ahead)
            } else {
                Reading::Known
            };
        }
        let after = (0..=last).find(|&i| self.knots[i].time > t).unwrap_or(last);
        if after == 0 {
            let first = &self.knots[0];
            position.extend_from_slice(&first.commands);
            velocity.resize(first.commands.len(), 0.0);
            return Reading::Known;
        }
        let (a, b) = (&self.knots[after - 1], &self.knots[after]);
        // A knot read as the newest (`upto` before the one after it came) has no settled slope.
        let settled = |k: &Knot| rule == Slopes::Centred && (k.seq < self.knots[last].seq);
        let (sa, sb) = (
            if settled(a) { &a.centred } else { &a.slopes },
            if settled(b) { &b.centred } else { &b.slopes },
        );
        let h = b.time - a.time;
        let s = (t - a.time) / h;
        let (s2, s3) = (s * s, s * s * s);
        // The Hermite basis with h00 = 1 − h01 taken out: a segment between equal knots with
        // flat slopes reads its knot's value exactly.
        let (h10, h01, h11) = (s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2);
        let (d10, d01, d11) = (
            3.0 * s2 - 4.0 * s + 1.0,
            -6.0 * s2 + 6.0 * s,
            3.0 * s2 - 2.0 * s,
        );
        for k in 0..a.commands.len() {
            let (ca, ma, cb, mb) = (a.commands[k], sa[k], b.commands[k], sb[k]);
            position.push(ca + h01 * (cb - ca) + h * (h10 * ma + h11 * mb));
            velocity.push(d01 * (cb - ca) / h + d10 * ma + d11 * mb);
        }
        Reading::Known
    }
}

/// A correction added to the command that brings it, value and rate, from what it was to a
/// new line over `length` s (a cubic Hermite blend: the correction's value and slope at the
/// start, zero and flat at the end).
#[derive(Debug, Clone, Default)]
pub(super) struct Blend {
    /// Shadow time the blend starts, s.
    start: f64,
    length: f64,
    offset: Vec<f64>,
    rate: Vec<f64>,
}

impl Blend {
    /// Ends any blend.
    pub fn clear(&mut self) {
        self.offset.clear();
        self.rate.clear();
    }

    /// Adds the correction at shadow time `t` to `position` and `velocity`.
    pub fn apply(&self, t: f64, position: &mut [f64], velocity: &mut [f64]) {
        if self.offset.is_empty() || self.offset.len() != position.len() {
            return;
        }
        let s = (t - self.start) / self.length;
        if !(0.0..1.0).contains(&s) {
            return;
        }
        let (s2, s3) = (s * s, s * s * s);
        let (h00, h10) = (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s);
        let (d00, d10) = (6.0 * s2 - 6.0 * s, 3.0 * s2 - 4.0 * s + 1.0);
        for k in 0..position.len() {
            position[k] += h00 * self.offset[k] + h10 * self.length * self.rate[k];
            velocity[k] += d00 * self.offset[k] / self.length + d10 * self.rate[k];
        }
    }

    /// From shadow time `t` on, over `length` s: from `was` (what the command would have been,
    /// this blend included) to `now` (the new line), value and rate.
    pub fn restart(
        &mut self,
        t: f64,
        length: f64,
        (was, was_rate): (&[f64], &[f64]),
        (now, now_rate): (&[f64], &[f64]),
    ) {
        self.start = t;
        self.length = length.max(1e-6);
        self.offset.clear();
        self.offset.extend(was.iter().zip(now).map(|(a, b)| a - b));
        self.rate.clear();
        self.rate
            .extend(was_rate.iter().zip(now_rate).map(|(a, b)| a - b));
    }
}

/// Free-running: samples' PLC times from their stamps or their counter (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Placement {
    /// The first sample placed since the line started: its counter and arrival (shadow time).
    first: Option<(u32, f64)>,
    /// The last sample placed: its counter, stamp, arrival and PLC time.
    last: Option<(u32, Option<u64>, f64, f64)>,
}

/// The PLC's period as the shadow knows it when it places a sample, s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Period {
    /// From the stamps or the counter's rate, once measured.
    pub measured: Option<f64>,
    /// `--plc-period`.
    pub configured: f64,
}

impl Placement {
    /// How much more PLC time two stamps may span than their arrivals and counters account
    /// for, s: more is the PLC's clock stepped (set, synchronised), not time that passed.
    const CLOCK_STEP: f64 = 0.050;
    /// Until the period is measured, the configured one places samples while the arrivals
    /// since the first agree with it within this fraction of the time counted, and...
    const AGREE: f64 = 0.25;
    /// ...this much more, s (polls come late by up to a poll).
    const AGREE_SLACK: f64 = 0.002;
    /// The least PLC time a counter step is given, s: the shortest PLC period taken.
    const SHORTEST: f64 = 1e-4;

    pub fn reset(&mut self) {
        *self = Placement::default();
    }

    /// The PLC time of the sample of `counter` that arrived at shadow time `arrival` (`stamp`:
    /// the PLC's FILETIME when it came by notification), s from the first sample placed: by
    /// the stamps' difference where both samples have one and it agrees with the counter (at
    /// least half its advance × the period; no more than the arrivals' difference and that
    /// advance allow — more is the PLC's clock set, not time that passed), else by the
    /// counter's advance × the PLC's period — measured, or the configured one while the
    /// arrivals agree with it —, else by the arrivals' difference (a configured period that
    /// the arrivals say is wrong would stretch the line by the ratio of the two). `None`: not
    /// a counter after the last one (the same sample again).
    pub fn place(
        &mut self,
        counter: u32,
        stamp: Option<u64>,
        arrival: f64,
        period: Period,
    ) -> Option<f64> {
        let time = match self.last {
            None => 0.0,
            Some((last, last_stamp, last_arrival, time)) => {
                let advanced = counter.wrapping_sub(last) as i32;
                if advanced <= 0 {
                    return None;
                }
                let steps = f64::from(advanced);
                let arrived = (arrival - last_arrival).max(0.0);
                let by_counter = period
                    .measured
                    .or_else(|| self.agrees(counter, arrival, period.configured))
                    .map(|p| steps * p);
                let stamped = match (last_stamp, stamp) {
                    (Some(a), Some(b)) if b > a => Some((b - a) as f64 * 1e-7),
                    _ => None,
                };
                let fits = |s: f64| match by_counter {
                    Some(c) => s >= 0.5 * c && s <= arrived + c + Self::CLOCK_STEP,
                    None => s <= arrived + Self::CLOCK_STEP,
                };
                time + match (stamped, by_counter) {
                    (Some(s), _) if fits(s) => s,
                    (_, Some(c)) => c,
                    (_, None) => arrived.max(steps * Self::SHORTEST),
                }
            }
        };
        self.first.get_or_insert((counter, arrival));
        self.last = Some((counter, stamp, arrival, time));
        Some(time)
    }

    /// `configured` when the arrivals since the first sample agree with it for `counter`
    /// arrived at `arrival`.
    fn agrees(&self, counter: u32, arrival: f64, configured: f64) -> Option<f64> {
        let (first, first_arrival) = self.first?;
        let counted = f64::from(counter.wrapping_sub(first)) * configured;
        ((arrival - first_arrival - counted).abs() <= Self::AGREE * counted + Self::AGREE_SLACK)
            .then_some(configured)
    }
}

/// Free-running: the PLC time the physics reads at a shadow time (see the module docs).
#[derive(Debug, Clone, Default)]
pub(super) struct ReadClock {
    /// Arrival and arrival − PLC time of the samples of the last [`ReadClock::WINDOW`] s (at
    /// most [`ReadClock::KEEP`]): their least lag is the transport's floor (a window, not all
    /// time: the PLC's clock drifts against this machine's, and a period estimated from the
    /// counter's rate is a little off at first, which shows as a drift).
    lags: VecDeque<(f64, f64)>,
    /// The delay in use (shadow time − PLC time read), s.
    delay: f64,
    /// The floor plus the latency: where `delay` goes.
    wanted: f64,
    /// The delay is moving towards `wanted`, at `rate` s per s.
    moving: bool,
    rate: f64,
}

impl ReadClock {
    /// How far back the floor looks, s: long enough for many samples of a 10 ms task, short
    /// enough that the PLC's clock drifts a few µs in it...
    const WINDOW: f64 = 1.0;
    /// ...and at most this many samples (a 1 ms task: 64 ms).
    const KEEP: usize = 64;
    /// How much faster or slower than the shadow's clock the read time runs at most while the
    /// delay changes: a latency or a floor that moves shifts the read point without a jump,
    /// the commands' rates 1 % off at most meanwhile (a cable at 0.4 m/s: 4 mm/s, 0.2 N of
    /// uvigo8's damping)...
    const SLEW: f64 = 0.01;
    /// ...reached and left gradually, by at most 1 % in 10 ms (the commands' rates change by a
    /// thousandth a millisecond: no step in them)...
    const RAMP: f64 = 1.0;
    /// ...and the delay approaches the wanted one with this time constant, s.
    const SETTLE: f64 = 0.2;
    /// Changes of the wanted delay within this are let be: the floor's wander (polls see a
    /// sample up to a poll late) would otherwise keep the read clock slewing.
    const DEAD_BAND: f64 = 0.5e-3;

    pub fn reset(&mut self) {
        *self = ReadClock::default();
    }

    /// A sample of PLC time `plc_time` that arrived at shadow time `arrival`; the physics is
    /// to read `latency` s behind the least delay seen.
    pub fn observe(&mut self, arrival: f64, plc_time: f64, latency: f64) {
        let first = self.lags.is_empty();
        while self.lags.len() >= Self::KEEP
            || self
                .lags
                .front()
                .is_some_and(|&(a, _)| a < arrival - Self::WINDOW)
        {
            self.lags.pop_front();
        }
        self.lags.push_back((arrival, arrival - plc_time));
        let floor = self
            .lags
            .iter()
            .fold(f64::INFINITY, |f, &(_, lag)| f.min(lag));
        self.wanted = floor + latency;
        if first {
            self.delay = self.wanted;
        }
    }

    /// The read point goes back by `by` s (the delay grows by it); the delay then moves back
    /// to the wanted one at the slew rate.
    pub fn hold_back(&mut self, by: f64) {
        self.delay += by;
        self.moving = true;
    }

    /// The PLC time to read at shadow time `t`, one step of `dt` after the last call: once the
    /// wanted delay is more than [`ReadClock::DEAD_BAND`] away, the delay moves to it at a rate
    /// of at most [`ReadClock::SLEW`], ramped by [`ReadClock::RAMP`] — at once while the
    /// commands stand `still` (nothing moves when the read point does: the start, a PLC
    /// holding its axes).
    pub fn at(&mut self, t: f64, dt: f64, still: bool) -> f64 {
        if still {
            self.delay = self.wanted;
            (self.moving, self.rate) = (false, 0.0);
            return t - self.delay;
        }
        let off = self.wanted - self.delay;
        if off.abs() > Self::DEAD_BAND {
            self.moving = true;
        }
        let desired = if self.moving {
            (off / Self::SETTLE).clamp(-Self::SLEW, Self::SLEW)
        } else {
            0.0
        };
        let ramp = Self::RAMP * dt;
        self.rate += (desired - self.rate).clamp(-ramp, ramp);
        self.delay += self.rate * dt;
        if self.moving && off.abs() < 1e-6 && self.rate.abs() <= ramp {
            (self.moving, self.rate) = (false, 0.0);
        }
        t - self.delay
    }
}

#[cfg(test)]
mod tests;
