//! Headless runs: a trajectory through a controller into the simulation, recorded.

use super::driver::Driver;
use super::{SimConfig, SimError, SimState};
use crate::kinematics::Pose;
use crate::robot::Robot;
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

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            config: SimConfig::default(),
            compensate: false,
            kp: 1500.0,
            kd: 1500.0,
            settle_time: 0.0,
        }
    }
}

/// One recorded step.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub commanded: Sample,
    /// Commanded winch payouts (length and ideal modes), or the IK lengths of the commanded
    /// pose (tension mode), m.
    pub length_command: Vec<f64>,
    /// Commanded tensions (tension mode), N.
    pub tension_command: Option<Vec<f64>>,
    pub state: SimState,
}

/// What a run produced. On a blow-up the records up to the last good step are kept and the
/// error is returned alongside (nothing recorded is lost, nothing non-finite is recorded).
#[derive(Debug)]
pub struct RunOutcome {
    pub records: Vec<Record>,
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
        let mut prev: Option<&Record> = None;
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
pub fn step_budget(trajectory: &Trajectory, options: &RunOptions) -> Result<u64, SimError> {
    let dt = options.config.dt;
    if !(dt.is_finite() && dt > 0.0) {
        return Err(SimError::BadStep(dt));
    }
    let settle = options.settle_time;
    if !(settle.is_finite() && settle >= 0.0) {
        return Err(SimError::BadSettle(settle));
    }
    let duration = trajectory.duration();
    let steps = ((duration + settle) / dt).round();
    if steps.is_finite() && steps <= MAX_STEPS as f64 {
        Ok(steps as u64)
    } else {
        Err(SimError::TooManySteps {
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
/// per-step logic is [`Driver`]'s, which the viewer shares. `progress` is called with the
/// fraction done from time to time. Every record is kept (see [`run_with`] to stream them).
pub fn run(
    robot: &Robot,
    trajectory: &Trajectory,
    options: &RunOptions,
    progress: &mut dyn FnMut(f64),
) -> Result<RunOutcome, SimError> {
    let mut records = Vec::new();
    let summary = run_with(robot, trajectory.clone(), options, progress, &mut |r| {
        records.push(r.clone());
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
    on_record: &mut dyn FnMut(&Record) -> ControlFlow<()>,
) -> Result<RunSummary, SimError> {
    let steps = step_budget(&trajectory, options)?;
    let mut driver = Driver::new(robot, trajectory, options)?;
    let started = Instant::now();
    let mut handed = 1;
    let mut last = driver.record();
    let mut stopped = on_record(&last).is_break();
    let mut error = None;
    let report_every = (steps / 200).max(1);
    if !stopped {
        for step in 1..=steps {
            driver.command_next_step()?;
            if let Err(e) = driver.step_physics() {
                error = Some(e);
                break;
            }
            last = driver.record();
            handed += 1;
            if on_record(&last).is_break() {
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
        steps: driver.state().step,
        records: handed,
        simulated_s: Some(last.state.time),
        wall_s: started.elapsed().as_secs_f64(),
        error,
        stopped,
        uncompensated_steps: driver.uncompensated_steps(),
        limited_steps: driver.sim().limited_steps(),
    })
}

/// The leading columns of a run's CSV (`cdpr simulate --out`, and the shadow's record): time,
/// commanded pose, actual pose, then per cable its commanded payout, length and tension.
pub fn csv_columns(cables: usize) -> Vec<String> {
    let mut h: Vec<String> = [
        "t",
        "x_cmd",
        "y_cmd",
        "z_cmd",
        "roll_cmd",
        "pitch_cmd",
        "yaw_cmd",
        "x",
        "y",
        "z",
        "roll",
        "pitch",
        "yaw",
    ]
    .map(String::from)
    .to_vec();
    for i in 1..=cables {
        h.extend([
            format!("length_cmd_{i}"),
            format!("length_{i}"),
            format!("tension_{i}"),
        ]);
    }
    h
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
