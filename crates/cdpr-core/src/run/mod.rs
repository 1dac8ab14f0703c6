//! Runs: a trajectory played through a controller into the physics core ([`Player`]),
//! stepped headless ([`run`], [`run_with`]), recorded ([`record`]) and digested into what
//! `cdpr simulate` reports ([`digest`]); [`crate::job::Job`] runs a request into a sink and
//! reports it, the one way every face runs a trajectory headless. What a run is asked to do is one
//! [`RunRequest`] ([`request`]: every option's name, range and default, once).
//!
//! The command line, Python, sweeps and the viewer all play trajectories through this module;
//! the ADS shadow drives [`crate::sim::Sim`] with a controller's commands instead, with the
//! same request's physics options.

pub mod controllers;
pub mod digest;
pub mod feedforward;
pub mod player;
pub mod prediction;
pub mod prepare;
pub mod record;
pub mod request;

pub use crate::options::{OptionError, OptionSpec, Value};
pub use digest::{
    AngleErrors, Escape, LowTension, RunDigest, SimulationReport, Tracking, WallSplit,
    angle_errors, rtf, simulation_report, tension_range, turns_only,
};
pub use player::Player;
pub use prepare::{LoadError, Prepared, Resolved};
pub use record::{CsvRecorder, Record, RecordBuf, RecordLayout, csv_columns, write_csv};
pub use request::{CommandSource, OPTIONS, RunRequest};

use crate::kinematics::Pose;
use crate::options::Name;
use crate::robot::Robot;
use crate::sim::{SimConfig, SimError};
use crate::trajectory::{Sample, Trajectory};
use std::ops::ControlFlow;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub config: SimConfig,
    /// Subtract the pre-stretch f*/k from the commanded lengths (length and ideal modes).
    pub compensate: bool,
    /// Gains of the tension-mode controller (seed 001: 1500, 1500).
    pub kp: f64,
    pub kd: f64,
    /// Extra simulated time after the trajectory ends, s (lets the platform settle).
    pub settle_time: f64,
}

impl RunOptions {
    /// `config` with no compensation, seed 001's gains and no settle time.
    pub fn new(config: SimConfig) -> RunOptions {
        RunOptions {
            config,
            compensate: false,
            kp: controllers::FeedbackLinearization::DEFAULT_KP,
            kd: controllers::FeedbackLinearization::DEFAULT_KD,
            settle_time: 0.0,
        }
    }
}

/// Why a run could not start or stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(
        "{name}: must be a non-negative number of seconds, got {0}",
        name = Name("settle")
    )]
    BadSettle(f64),
    #[error("{name}: must be a positive number of seconds, got {0}", name = Name("dt"))]
    BadStep(f64),
    /// A run longer than [`MAX_STEPS`] steps.
    #[error(
        "{steps:.1e} steps (trajectory {duration} s + settle {settle} s, every {dt} s); at most {max:.1e}: change {}, {} or the trajectory",
        Name("dt"),
        Name("settle"),
        max = MAX_STEPS as f64
    )]
    TooManySteps {
        steps: f64,
        duration: f64,
        settle: f64,
        dt: f64,
    },
}

/// What a run produced. On a blow-up the records up to the last good step are kept and the
/// error is returned alongside (nothing recorded is lost, nothing non-finite is recorded).
#[derive(Debug)]
pub struct RunOutcome {
    pub records: Vec<RecordBuf>,
    pub steps: u64,
    pub wall_s: f64,
    pub error: Option<SimError>,
    /// Steps where the compensation was infeasible and plain IK lengths were used.
    pub uncompensated_steps: u64,
    /// Steps whose demand the model pulled back into the robot's reach (the surrogate's
    /// combination step).
    pub limited_steps: u64,
}

impl RunOutcome {
    /// Simulated seconds per wall-clock second.
    pub fn rtf(&self) -> f64 {
        let simulated = self.records.last().map(|r| r.state.time).unwrap_or(0.0);
        if self.wall_s > 0.0 {
            simulated / self.wall_s
        } else {
            f64::INFINITY
        }
    }

    /// The commanded trajectory at the recorded steps (with segment names).
    pub fn commanded(&self, source: &Trajectory) -> Trajectory {
        Trajectory {
            samples: self
                .records
                .iter()
                .map(|r| Sample {
                    t: r.state.time,
                    ..r.commanded
                })
                .collect(),
            segments: source.segments.clone(),
        }
    }

    /// The simulated platform trajectory at the recorded steps.
    pub fn actual(&self, source: &Trajectory) -> Trajectory {
        let mut prev: Option<&RecordBuf> = None;
        let samples = self
            .records
            .iter()
            .map(|r| {
                let mut velocity = [0.0; 6];
                if let Some(p) = prev {
                    let dt = r.state.time - p.state.time;
                    let (a, b) = (p.state.pose.to_array(), r.state.pose.to_array());
                    for k in 0..6 {
                        velocity[k] = (b[k] - a[k]) / dt;
                    }
                }
                prev = Some(r);
                Sample {
                    t: r.state.time,
                    pose: r.state.pose,
                    velocity,
                    acceleration: [0.0; 6],
                    segment: r.commanded.segment,
                }
            })
            .collect();
        Trajectory {
            samples,
            segments: source.segments.clone(),
        }
    }
}

/// Most steps one run may take: 10 million (10 000 s at 1 ms). Every face that runs a
/// trajectory headless shares it ([`step_budget`]).
pub const MAX_STEPS: u64 = 10_000_000;

/// The number of steps a run of `trajectory` with `options` takes: its duration plus the
/// settle time over the step, within [`MAX_STEPS`] (else [`SimError::TooManySteps`], which
/// names the numbers).
pub fn step_budget(trajectory: &Trajectory, options: &RunOptions) -> Result<u64, RunError> {
    let dt = options.config.dt;
    if !(dt.is_finite() && dt > 0.0) {
        return Err(RunError::BadStep(dt));
    }
    let settle = options.settle_time;
    if !(settle.is_finite() && settle >= 0.0) {
        return Err(RunError::BadSettle(settle));
    }
    let duration = trajectory.duration();
    let steps = ((duration + settle) / dt).round();
    if steps.is_finite() && steps <= MAX_STEPS as f64 {
        Ok(steps as u64)
    } else {
        Err(RunError::TooManySteps {
            steps,
            duration,
            settle,
            dt,
        })
    }
}

/// How a run went, without its records (see [`run_with`]).
#[derive(Debug)]
pub struct RunSummary {
    /// Steps taken.
    pub steps: u64,
    /// Records handed out (the start and every good step).
    pub records: u64,
    /// Simulated time of the last record, s.
    pub simulated_s: Option<f64>,
    /// Wall-clock time of the stepping loop (the physics and the record consumer), s.
    pub wall_s: f64,
    /// Why the run stopped early: everything handed out before is good.
    pub error: Option<SimError>,
    /// The record consumer asked to stop.
    pub stopped: bool,
    pub uncompensated_steps: u64,
    pub limited_steps: u64,
}

/// Runs `trajectory` on `robot`: the platform starts at rest where the first command holds
/// it, then every step takes the trajectory sample at the step's time, computes the command
/// (IK lengths, compensated or not, or seed 001's tension controller), and steps — the
/// per-step logic is [`Player`]'s, which the viewer shares. `progress` is called with the
/// fraction done from time to time. Every record is kept (see [`run_with`] to stream them).
pub fn run(
    robot: &Robot,
    trajectory: &Trajectory,
    options: &RunOptions,
    progress: &mut dyn FnMut(f64),
) -> Result<RunOutcome, RunError> {
    let mut records = Vec::new();
    let summary = run_with(robot, trajectory.clone(), options, progress, &mut |r| {
        records.push(r.to_buf());
        ControlFlow::Continue(())
    })?;
    Ok(RunOutcome {
        records,
        steps: summary.steps,
        wall_s: summary.wall_s,
        error: summary.error,
        uncompensated_steps: summary.uncompensated_steps,
        limited_steps: summary.limited_steps,
    })
}

/// [`run`], handing each record (the start, then every good step) to `on_record` as it is
/// computed instead of keeping it: memory does not grow with the run. `on_record` may stop
/// the run ([`ControlFlow::Break`], e.g. on a write error). The number of steps is checked
/// against [`MAX_STEPS`] before anything runs.
pub fn run_with(
    robot: &Robot,
    trajectory: Trajectory,
    options: &RunOptions,
    progress: &mut dyn FnMut(f64),
    on_record: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>,
) -> Result<RunSummary, RunError> {
    let steps = step_budget(&trajectory, options)?;
    let mut player = Player::new(robot, trajectory, options)?;
    let started = Instant::now();
    let mut handed = 1;
    let mut last_time = player.state().time;
    let mut stopped = on_record(&player.record()).is_break();
    let mut error = None;
    let report_every = (steps / 200).max(1);
    if !stopped {
        for step in 1..=steps {
            player.command_next_step()?;
            if let Err(e) = player.step_physics() {
                error = Some(e);
                break;
            }
            handed += 1;
            last_time = player.state().time;
            if on_record(&player.record()).is_break() {
                stopped = true;
                break;
            }
            if step % report_every == 0 {
                progress(step as f64 / steps as f64);
            }
        }
    }
    progress(1.0);
    Ok(RunSummary {
        steps: player.state().step,
        records: handed,
        simulated_s: Some(last_time),
        wall_s: started.elapsed().as_secs_f64(),
        error,
        stopped,
        uncompensated_steps: player.uncompensated_steps(),
        limited_steps: player.sim().limited_steps(),
    })
}

/// A pose held for `duration` seconds, sampled every `dt`: the simplest trajectory.
pub fn hold(pose: Pose, duration: f64, dt: f64) -> Trajectory {
    let n = (duration / dt).round().max(1.0) as usize;
    Trajectory {
        samples: (0..=n)
            .map(|k| Sample {
                t: k as f64 * dt,
                pose,
                velocity: [0.0; 6],
                acceleration: [0.0; 6],
                segment: None,
            })
            .collect(),
        segments: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
