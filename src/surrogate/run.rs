//! A trajectory through the surrogate, recorded like a physics run ([`RunOutcome`]), so that
//! `cdpr simulate --model surrogate` prints the same metrics and writes the same CSV.
//!
//! The surrogate knows poses only; the per-cable columns are derived: the commanded length is
//! the IK length of the commanded pose (L − f*/k with `compensate`), the length the IK length
//! of the surrogate's pose, the tension the minimum-norm distribution at that pose (the
//! closest tensions where it is infeasible). The stepping itself (combination + filters) is
//! timed separately from this read-out: that is the surrogate's speed.

use super::Surrogate;
use super::combine::{DEFAULT_TOLERANCES, Reachability, combine};
use crate::kinematics::{self, Pose};
use crate::robot::Robot;
use crate::sim::SimState;
use crate::sim::control::LengthController;
use crate::sim::run::{Record, RunOutcome};
use crate::statics;
use crate::trajectory::{Sample, Trajectory};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurrogateRunOptions {
    /// Extra time after the trajectory ends, s.
    pub settle_time: f64,
    /// Commanded lengths minus the pre-stretch f*/k (as the physics runs' `--compensate`).
    pub compensate: bool,
}

/// What the surrogate run adds to a [`RunOutcome`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurrogateRunStats {
    /// Wall time of the combination and the filters alone, s.
    pub stepping_s: f64,
    /// Steps whose demand the combination step scaled down.
    pub limited_steps: u64,
    /// Reachability tests made.
    pub checks: u64,
}

/// The poses the surrogate produces for the demands `input` (combined first when `reach`).
pub fn step_all(
    surrogate: &Surrogate,
    reach: Option<&dyn Reachability>,
    input: &[[f64; 6]],
    out: &mut Vec<[f64; 6]>,
) -> (u64, u64) {
    out.clear();
    let Some(first) = input.first() else {
        return (0, 0);
    };
    let (mut limited, mut checks) = (0u64, 0u64);
    let combined = |demand: &[f64; 6], limited: &mut u64, checks: &mut u64| match reach {
        None => *demand,
        Some(r) => {
            let c = combine(r, &surrogate.rest, demand, &DEFAULT_TOLERANCES);
            *limited += c.limited as u64;
            *checks += c.checks as u64;
            c.pose
        }
    };
    let start = combined(first, &mut 0, &mut 0);
    let mut state = surrogate.start(&start);
    for demand in input {
        let u = combined(demand, &mut limited, &mut checks);
        out.push(surrogate.step(&mut state, &u));
    }
    (limited, checks)
}

/// Runs `trajectory` through the surrogate every `surrogate.dt` and records it.
pub fn run(
    robot: &Robot,
    surrogate: &Surrogate,
    reach: Option<&dyn Reachability>,
    trajectory: &Trajectory,
    options: &SurrogateRunOptions,
) -> (RunOutcome, SurrogateRunStats) {
    let dt = surrogate.dt;
    let t0 = trajectory.start_time();
    let total = trajectory.duration() + options.settle_time.max(0.0);
    let steps = (total / dt).round() as usize;
    let samples: Vec<Sample> = (0..=steps)
        .filter_map(|k| trajectory.sample_at(t0 + k as f64 * dt))
        .map(|s| Sample {
            pose: kinematics::effective_pose(robot, &s.pose),
            ..s
        })
        .collect();
    let input: Vec<[f64; 6]> = samples.iter().map(|s| s.pose.to_array()).collect();
    let mut poses = Vec::with_capacity(input.len());
    let started = Instant::now();
    let (limited, checks) = step_all(surrogate, reach, &input, &mut poses);
    let stepping_s = started.elapsed().as_secs_f64();

    let lengths_ctl = LengthController::new(robot, options.compensate);
    let mut records = Vec::with_capacity(samples.len());
    let mut prev: Option<[f64; 6]> = None;
    for (step, (sample, pose)) in samples.iter().zip(&poses).enumerate() {
        let pose_now = kinematics::effective_pose(robot, &Pose::from_array(*pose));
        let lengths = kinematics::lengths(robot, &pose_now);
        let tensions = statics::tension_distribution(robot, &pose_now, robot.tension).tensions;
        let mut twist = [0.0; 6];
        if let Some(p) = prev {
            for k in 0..6 {
                twist[k] = (pose[k] - p[k]) / dt;
            }
        }
        prev = Some(*pose);
        let (length_command, _) = lengths_ctl.lengths(robot, &sample.pose);
        records.push(Record {
            commanded: *sample,
            length_command: length_command.clone(),
            tension_command: None,
            state: SimState {
                time: step as f64 * dt,
                step: step as u64,
                pose: pose_now,
                twist,
                winch: length_command,
                lengths,
                tensions: tensions.clone(),
                tensions_constraint: tensions,
                wrench_residual: 0.0,
            },
        });
    }
    let outcome = RunOutcome {
        steps: steps as u64,
        records,
        wall_s: started.elapsed().as_secs_f64(),
        error: None,
        uncompensated_steps: 0,
    };
    (
        outcome,
        SurrogateRunStats {
            stepping_s,
            limited_steps: limited,
            checks,
        },
    )
}
