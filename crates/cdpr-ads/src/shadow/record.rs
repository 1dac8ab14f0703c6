//! The record stage: one CSV row per physics step — core's record of a run (the columns of
//! `cdpr simulate --out`, written by `cdpr_core::run::CsvRecorder`, so `cdpr compare`
//! and `cdpr report` read it as they read a simulation) extended with the shadow's own
//! columns: the PLC cycle answered, the motion-enable flag, and the flags `rejected` (the
//! controller's sample was refused and the last good command held) and `gap` (first row after
//! the link was lost, the PLC restarted or the physics was re-settled: the rows before and
//! after are not one continuous motion).
//!
//! The commanded pose — forward kinematics of the commanded lengths for rigid cables,
//! warm-started — is solved here and only here: per recorded step, or, without a record,
//! when asked for (the viewer's ghost), for the command the physics follows.

use super::ShadowError;
use super::ShadowStats;
use crate::live_view::{CYCLE_STATS_EVERY, shadow_cycle};
use cdpr_core::kinematics::{self, FkOptions, Pose};
use cdpr_core::recording::sidecar::Sidecar;
use cdpr_core::recording::{self, RecordFormat, RecorderError};
use cdpr_core::robot::Robot;
use cdpr_core::run::{CsvRecorder, Record, RecordBuf};
use cdpr_core::sim::SimState;
use cdpr_core::trajectory::{Sample, Trajectory};
use std::cell::Cell;
use std::io::Write;

/// The shadow's columns, after `cdpr simulate --out`'s.
pub const COLUMNS: [&str; 4] = ["plc_cycle", "enable", "rejected", "gap"];

/// What a shadow reads of the drives beside its commands (the record's columns after
/// [`COLUMNS`]: `actual_torque_i` N·m, `actual_length_i` m, per cable, the newest sample's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Actuals {
    pub torques: bool,
    pub lengths: bool,
}

impl Actuals {
    /// [`COLUMNS`] and the actual values' columns for `robot`'s cables.
    pub fn columns(self, robot: &Robot) -> Vec<String> {
        let per_cable = |prefix: &str| {
            (1..=robot.cable_count())
                .map(|i| format!("{prefix}_{i}"))
                .collect::<Vec<_>>()
        };
        let mut out: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
        if self.torques {
            out.extend(per_cable("actual_torque"));
        }
        if self.lengths {
            out.extend(per_cable("actual_length"));
        }
        out
    }
}

/// Writes rows to any `Write` (a file, a buffer) through the CSV writer's buffer, or to a
/// `.csv` or `.mcap` file through core's recorder (the shadow's statistics, in MCAP, on
/// `/shadow/cycle` once a second of shadow time); flushed by [`Recorder::finish`] (and,
/// ignoring errors, on drop).
pub struct Recorder {
    out: Out,
    /// The row's shadow columns, reused.
    extra: Vec<f64>,
    /// The drives' actual values it has columns for.
    actuals: Actuals,
    /// Shadow time of the next `/shadow/cycle` message, s.
    next_cycle_t: f64,
}

enum Out {
    Csv(CsvRecorder<Box<dyn Write + Send>>),
    File(Option<recording::Recorder>),
}

/// Why the record could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("writing the record: {0}")]
    Csv(#[from] csv::Error),
    #[error("writing the record: {0}")]
    File(#[from] RecorderError),
}

impl From<std::io::Error> for RecordError {
    fn from(e: std::io::Error) -> RecordError {
        RecordError::Csv(e.into())
    }
}

impl Recorder {
    /// Starts a record of a shadow of `robot` reading `actuals` on `out` (writes the header).
    pub fn new(
        out: Box<dyn Write + Send>,
        robot: &Robot,
        actuals: Actuals,
    ) -> Result<Recorder, RecordError> {
        let columns = actuals.columns(robot);
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let mut csv =
            CsvRecorder::new(out, robot, &Trajectory::default()).with_extra_columns(&names);
        csv.flush()?;
        Ok(Recorder {
            extra: Vec::with_capacity(names.len()),
            actuals,
            out: Out::Csv(csv),
            next_cycle_t: 0.0,
        })
    }

    /// Creates (truncates) `path` and starts a record in it: a `.csv` (its description in
    /// its sidecar, `path.meta.toml`: the CSV is a header and numbers, for any CSV reader) or
    /// a `.mcap` file (its description in its metadata).
    pub fn create(
        path: &std::path::Path,
        robot: &Robot,
        actuals: Actuals,
    ) -> Result<Recorder, RecordError> {
        let columns = actuals.columns(robot);
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let description = format!("cdpr shadow: robot {}", robot.name);
        let meta = Sidecar::new(&description).with_robot(robot);
        // Live: each MCAP chunk is compressed inside the cycle that fills it (lz4, small).
        let mut file = recording::Recorder::create_paced(
            path,
            robot,
            &Trajectory::default(),
            &meta,
            recording::Pace::Live,
        )?
        .with_extra_columns(&names);
        // The CSV's header now (a record cut short still names its columns); an MCAP file
        // takes its columns from the first record.
        if file.format() == RecordFormat::Csv {
            file.flush()?;
        }
        Ok(Recorder {
            extra: Vec::with_capacity(names.len()),
            actuals,
            out: Out::File(Some(file)),
            next_cycle_t: 0.0,
        })
    }

    /// One step: `record` (its state's time is the shadow's), then the shadow's columns and
    /// the `actual` values (the drives' torques, then payouts, as [`Actuals`] named them).
    pub fn write(
        &mut self,
        record: &Record<'_>,
        (plc_cycle, enable): (u32, bool),
        (rejected, gap): (bool, bool),
        actual: &[f64],
    ) -> Result<(), RecordError> {
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let extra = &mut self.extra;
        extra.clear();
        extra.extend([
            f64::from(plc_cycle),
            flag(enable),
            flag(rejected),
            flag(gap),
        ]);
        extra.extend_from_slice(actual);
        match &mut self.out {
            Out::Csv(csv) => csv.write_with(record, extra)?,
            Out::File(Some(file)) => file.write_with(record, extra)?,
            Out::File(None) => {}
        }
        Ok(())
    }

    /// The shadow's cycle statistics at shadow time `t`, at most once per
    /// [`CYCLE_STATS_EVERY`] of shadow time (an MCAP record's `/shadow/cycle`; a CSV has no
    /// place for them). The quantiles are computed only when due.
    pub fn cycle_stats(&mut self, stats: &ShadowStats, t: f64) -> Result<(), RecordError> {
        if t < self.next_cycle_t {
            return Ok(());
        }
        self.next_cycle_t = t + CYCLE_STATS_EVERY.as_secs_f64();
        if let Out::File(Some(file)) = &mut self.out
            && file.format() == RecordFormat::Mcap
        {
            file.write_cycle(&shadow_cycle(stats, t))?;
        }
        Ok(())
    }

    /// Flushes everything written so far; an MCAP file is finished (its summary written).
    pub fn finish(&mut self) -> Result<(), RecordError> {
        match &mut self.out {
            Out::Csv(csv) => csv.flush()?,
            Out::File(file) => match file.take() {
                Some(f) if f.format() == RecordFormat::Mcap => f.finish()?,
                Some(mut f) => {
                    f.flush()?;
                    *file = Some(f);
                }
                None => {}
            },
        }
        Ok(())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// A step waiting for the cycle's write to go out.
struct Pending {
    record: RecordBuf,
    rejected: bool,
    gap: bool,
}

/// The record stage's state.
pub(super) struct Recording {
    recorder: Option<Recorder>,
    /// This cycle's steps: `pending[..used]`, their records reused from cycle to cycle.
    pending: Vec<Pending>,
    used: usize,
    /// The next recorded step is the first after a gap.
    gap_pending: bool,
    /// The commanded pose, and whether the command moved since it was solved.
    commanded_pose: Cell<Pose>,
    stale: Cell<bool>,
    /// Shadow time of the last recorded step, s.
    last_t: f64,
    /// The newest sample's actual torques and payouts, as the record's columns take them.
    actual: Vec<f64>,
}

/// Forward kinematics of `lengths` from `guess`; `None` when it does not converge.
fn commanded_pose(robot: &Robot, lengths: &[f64], guess: Pose) -> Option<Pose> {
    let options = FkOptions {
        guess: Some(guess),
        max_iterations: 20,
        ..FkOptions::default()
    };
    kinematics::forward(robot, lengths, &options)
        .ok()
        .map(|fk| fk.pose)
}

impl Recording {
    /// No record yet; the commanded pose starts at `pose` (the controller's TCP pose).
    pub(super) fn new(pose: Pose) -> Recording {
        Recording {
            recorder: None,
            pending: Vec::new(),
            used: 0,
            gap_pending: false,
            commanded_pose: Cell::new(pose),
            stale: Cell::new(false),
            last_t: 0.0,
            actual: Vec::new(),
        }
    }

    pub(super) fn attach(&mut self, recorder: Recorder) {
        self.recorder = Some(recorder);
    }

    /// The drives' actual values of the newest sample: the record's columns from the next
    /// flush on (the torques, then the payouts; empty ones are not columns).
    pub(super) fn set_actual(&mut self, torques: &[f64], payouts: &[f64]) {
        if let Some(r) = &self.recorder {
            self.actual.clear();
            if r.actuals.torques {
                self.actual.extend_from_slice(torques);
            }
            if r.actuals.lengths {
                self.actual.extend_from_slice(payouts);
            }
        }
    }

    /// The next recorded step carries `gap = 1`.
    pub(super) fn mark_gap(&mut self) {
        self.gap_pending = true;
    }

    /// The command the physics follows moved. With a record its pose is solved with the
    /// recorded steps; without, when asked for.
    pub(super) fn command_moved(&self) {
        if self.recorder.is_none() {
            self.stale.set(true);
        }
    }

    /// A physics step taken at shadow time `t` with `command`: kept for the record stage
    /// (without a record, nothing).
    pub(super) fn step(&mut self, t: f64, command: &[f64], state: &SimState, rejected: bool) {
        if self.recorder.is_none() {
            return;
        }
        let gap = std::mem::take(&mut self.gap_pending);
        if self.used == self.pending.len() {
            self.pending.push(Pending {
                record: RecordBuf {
                    commanded: Sample {
                        t,
                        pose: self.commanded_pose.get(),
                        velocity: [0.0; 6],
                        acceleration: [0.0; 6],
                        segment: None,
                    },
                    length_command: command.to_vec(),
                    tension_command: None,
                    state: state.clone(),
                },
                rejected,
                gap,
            });
        } else {
            let p = &mut self.pending[self.used];
            p.record.commanded.t = t;
            p.record.length_command.clear();
            p.record.length_command.extend_from_slice(command);
            p.record.state.clone_from(state);
            (p.rejected, p.gap) = (rejected, gap);
        }
        // The record's time is the shadow's (wall clock or PLC counter time since the start;
        // it jumps over gaps), not the physics' own step count.
        self.pending[self.used].record.state.time = t;
        self.used += 1;
    }

    /// Writes the cycle's steps, answering PLC cycle `plc_cycle` with the motion-enable flag
    /// `enable` (after the exchange, outside its measured time).
    pub(super) fn flush(
        &mut self,
        robot: &Robot,
        plc_cycle: u32,
        enable: bool,
    ) -> Result<(), ShadowError> {
        let Some(recorder) = &mut self.recorder else {
            return Ok(());
        };
        for p in &mut self.pending[..self.used] {
            let guess = self.commanded_pose.get();
            if let Some(pose) = commanded_pose(robot, &p.record.length_command, guess) {
                self.commanded_pose.set(pose);
            }
            p.record.commanded.pose = self.commanded_pose.get();
            recorder.write(
                &p.record.as_record(),
                (plc_cycle, enable),
                (p.rejected, p.gap),
                &self.actual,
            )?;
            self.last_t = p.record.state.time;
        }
        self.used = 0;
        Ok(())
    }

    /// The shadow's cycle statistics, at the time of the last recorded step (see
    /// [`Recorder::cycle_stats`]).
    pub(super) fn cycle_stats(&mut self, stats: &ShadowStats) -> Result<(), ShadowError> {
        if let Some(r) = &mut self.recorder {
            r.cycle_stats(stats, self.last_t)?;
        }
        Ok(())
    }

    /// Flushes the record.
    pub(super) fn finish(&mut self) -> Result<(), ShadowError> {
        if let Some(r) = &mut self.recorder {
            r.finish()?;
        }
        Ok(())
    }

    /// The pose the commanded lengths define for rigid cables: of the last recorded step, or
    /// solved now for `command` (the command the physics follows) if it moved since. Lengths
    /// forward kinematics cannot match keep the last pose.
    pub(super) fn commanded_pose(&self, robot: &Robot, command: &[f64]) -> Pose {
        if self.stale.replace(false)
            && let Some(pose) = commanded_pose(robot, command, self.commanded_pose.get())
        {
            self.commanded_pose.set(pose);
        }
        self.commanded_pose.get()
    }
}
