//! A dynamic model for the controller (seed 000's next step): per drive the torque a
//! trajectory needs — the platform's Newton–Euler equations with the tension distribution,
//! the pulleys' capstan friction, and each drive's inertia and friction —, to feed forward;
//! and the controllers of the modes that drive the motors: `velocity` (the controller's
//! position loop, as an NC axis closes it, on the drives' velocity loops) and `torque` (the
//! feed-forward plus a weak feedback).
//!
//! Per drive, with s the commanded payout (the compensated rest length the length mode
//! would command), ρ the payout per motor radian and T_w the winch-side tension,
//!     τ = J·s̈/ρ + b·ṡ/ρ + τ_c·tanh(ṡ/(ρ·ω₀)) − ρ·T_w,
//! ṡ and s̈ by central differences of s over ±h along the trajectory.

use super::controllers::{FeedbackLinearization, LengthController};
use super::digest::{DriveLoad, DriveTally};
use crate::kinematics::{self, Pose};
use crate::options::{Group, flag, number};
use crate::robot::Robot;
use crate::sim::capstan;
use crate::trajectory::{Sample, Trajectory};
use std::io::Write;

/// The step of the central differences of the payouts when a caller gives none, s.
pub const DIFFERENCE_STEP: f64 = 1e-3;

crate::request! {
    /// What `cdpr feedforward` (and Python's `cdpr.feedforward`) is asked beyond the robot
    /// and the trajectory.
    #[derive(Debug, Clone, PartialEq)]
    pub struct FeedforwardRequest, table OPTIONS;
    /// Central-difference step of the payouts' rates and accelerations, s.
    difference_step: f64 = DIFFERENCE_STEP,
        number(Group::Command, "s", 1e-5, 0.1, "S",
            "step of the central differences that give each payout's rate and acceleration");
    /// Payouts of the plain inverse kinematics (no pre-stretch subtracted).
    plain_lengths: bool = false,
        flag(Group::Command, "feed forward the payouts of the plain inverse kinematics, without \
                              the pre-stretch f*/k the length mode's compensation subtracts");
}

/// Why a feed-forward cannot be computed.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FeedforwardError {
    #[error(
        "{0} describes no drives: a torque feed-forward needs [winch]'s drum_radius, \
         gear_ratio, rotor_inertia, torque_limit and rated_torque (see the drives page)"
    )]
    NoDrives(String),
    #[error("the trajectory is empty")]
    Empty,
}

/// The feed-forward of a whole trajectory, at its own samples.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedforwardTable {
    pub t: Vec<f64>,
    pub demands: Vec<DriveDemand>,
    /// Per drive its peak and RMS torque and the time at its limit.
    pub loads: Vec<DriveLoad>,
}

/// The feed-forward of `trajectory` on `robot` at every sample of the trajectory.
pub fn table(
    robot: &Robot,
    trajectory: &Trajectory,
    request: &FeedforwardRequest,
) -> Result<FeedforwardTable, FeedforwardError> {
    if !robot.has_drives() {
        return Err(FeedforwardError::NoDrives(robot.name.clone()));
    }
    if trajectory.samples.is_empty() {
        return Err(FeedforwardError::Empty);
    }
    let ff = TorqueFeedforward {
        h: request.difference_step,
        ..TorqueFeedforward::new(robot, !request.plain_lengths)
    };
    let dt = trajectory.duration() / (trajectory.samples.len().max(2) - 1) as f64;
    let mut tally = DriveTally::new(robot, dt);
    let mut t = Vec::with_capacity(trajectory.samples.len());
    let mut demands = Vec::with_capacity(trajectory.samples.len());
    for sample in &trajectory.samples {
        let demand = ff.demand(robot, trajectory, sample);
        tally.push(sample.t, &demand.torques);
        t.push(sample.t);
        demands.push(demand);
    }
    Ok(FeedforwardTable {
        t,
        demands,
        loads: tally.loads(),
    })
}

impl FeedforwardTable {
    /// The CSV's columns: `t`, then per drive `torque_i` (N·m), `payout_i` (m),
    /// `payout_rate_i` (m/s), `payout_acceleration_i` (m/s²), `winch_tension_i` (N).
    pub fn columns(&self) -> Vec<String> {
        let drives = self.demands.first().map_or(0, |d| d.torques.len());
        let mut columns = vec!["t".to_string()];
        for i in 1..=drives {
            columns.extend(
                [
                    "torque",
                    "payout",
                    "payout_rate",
                    "payout_acceleration",
                    "winch_tension",
                ]
                .map(|c| format!("{c}_{i}")),
            );
        }
        columns
    }

    /// The table as CSV ([`FeedforwardTable::columns`]), numbers in their shortest round-trip
    /// form.
    pub fn write_csv<W: Write>(&self, out: W) -> Result<(), csv::Error> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record(self.columns())?;
        let mut row: Vec<String> = Vec::new();
        for (t, d) in self.t.iter().zip(&self.demands) {
            row.clear();
            row.push(t.to_string());
            for i in 0..d.torques.len() {
                for v in [
                    d.torques[i],
                    d.payouts[i],
                    d.rates[i],
                    d.accelerations[i],
                    d.winch_tensions[i],
                ] {
                    row.push(v.to_string());
                }
            }
            w.write_record(&row)?;
        }
        w.flush()?;
        Ok(())
    }
}

/// What a drive needs at one instant of a trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveDemand {
    /// Commanded payouts s (m), their rates ṡ (m/s) and accelerations s̈ (m/s²).
    pub payouts: Vec<f64>,
    pub rates: Vec<f64>,
    pub accelerations: Vec<f64>,
    /// Platform-side and winch-side tensions, N.
    pub tensions: Vec<f64>,
    pub winch_tensions: Vec<f64>,
    /// The motor torques, N·m.
    pub torques: Vec<f64>,
}

/// The torque feed-forward of a robot with drives.
#[derive(Debug, Clone, Copy)]
pub struct TorqueFeedforward {
    lengths: LengthController,
    dynamics: FeedbackLinearization,
    /// Central-difference step, s.
    pub h: f64,
}

impl TorqueFeedforward {
    /// For `robot` (its drives are read at each call), the payouts compensated as the length
    /// mode's are when `compensate`.
    pub fn new(robot: &Robot, compensate: bool) -> TorqueFeedforward {
        TorqueFeedforward {
            lengths: LengthController::new(robot, compensate),
            dynamics: FeedbackLinearization {
                kp: 0.0,
                kd: 0.0,
                bounds: robot.tension,
            },
            h: DIFFERENCE_STEP,
        }
    }

    /// The demand at `sample` (a sample of `trajectory`, whose neighbours at ±h give the
    /// payouts' derivatives). A robot without drives gets empty torques.
    pub fn demand(&self, robot: &Robot, trajectory: &Trajectory, sample: &Sample) -> DriveDemand {
        let h = self.h;
        let at = |t: f64| {
            trajectory
                .sample_at(t)
                .map(|s| kinematics::effective_pose(robot, &s.pose))
                .unwrap_or(sample.pose)
        };
        let pose = kinematics::effective_pose(robot, &sample.pose);
        let (before, now, after) = (
            self.payouts(robot, &at(sample.t - h)),
            self.payouts(robot, &pose),
            self.payouts(robot, &at(sample.t + h)),
        );
        let rates: Vec<f64> = (0..now.len())
            .map(|k| (after[k] - before[k]) / (2.0 * h))
            .collect();
        let accelerations: Vec<f64> = (0..now.len())
            .map(|k| (after[k] - 2.0 * now[k] + before[k]) / (h * h))
            .collect();
        let twist = twist_of(&pose, sample);
        let tensions = self.dynamics.tensions(robot, sample, &pose, &twist);
        let geometry = kinematics::InverseKinematics::at_actual_pose(robot, &pose).cables;
        let mut winch_tensions = vec![0.0; tensions.len()];
        capstan::winch_tensions(robot, &geometry, &tensions, &rates, &mut winch_tensions);
        let torques = robot
            .drives
            .iter()
            .enumerate()
            .map(|(k, d)| {
                let rho = d.payout_per_radian();
                d.torque_for(rates[k] / rho, accelerations[k] / rho, winch_tensions[k])
            })
            .collect();
        DriveDemand {
            payouts: now,
            rates,
            accelerations,
            tensions,
            winch_tensions,
            torques,
        }
    }

    /// The commanded payouts at `pose` (compensated as the length mode's).
    pub fn payouts(&self, robot: &Robot, pose: &Pose) -> Vec<f64> {
        self.lengths.lengths(robot, pose).0
    }
}

/// The twist (origin velocity, world angular velocity) of a sample at `pose`.
pub fn twist_of(pose: &Pose, sample: &Sample) -> [f64; 6] {
    let v = &sample.velocity;
    let w = pose.angular_rate_matrix() * nalgebra::Vector3::new(v[3], v[4], v[5]);
    [v[0], v[1], v[2], w.x, w.y, w.z]
}

/// The weak feedback the torque mode adds to the feed-forward: the drive's own cascade at a
/// tenth of its gains (position Kv/10, velocity Kp/10, no integral), on the commanded payout
/// and rate against the measured ones. Weak on purpose: what tracks is the feed-forward.
pub fn weak_feedback(
    drive: &crate::robot::Drive,
    set_point: f64,
    rate: f64,
    payout: f64,
    payout_rate: f64,
) -> f64 {
    let rho = drive.payout_per_radian();
    let velocity_error = (drive.position_gain / 10.0) * (set_point - payout) + (rate - payout_rate);
    (drive.velocity_gain / 10.0) * velocity_error / rho
}

/// The velocity mode's command: the controller's position loop (as an NC axis closes it,
/// with the drive's own Kv) on the commanded payout, plus its rate as feed-forward, m/s.
pub fn velocity_command(
    drive: &crate::robot::Drive,
    set_point: f64,
    rate: f64,
    payout: f64,
) -> f64 {
    rate + drive.position_gain * (set_point - payout)
}
