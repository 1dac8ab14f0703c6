//! The virtual PLC's drives: what a lab's real drives report, so that the shadow's torque
//! prediction and its standing in for the drives run and are tested here.
//!
//! - **The drives as built**: the physics core (elastic model) of a robot file — the PLC's
//!   own, or another one standing for the real robot (`cdpr plc --actual-robot`) — follows
//!   the NC's set points NC tick by NC tick, as servo drives in cyclic synchronous position
//!   mode do: exactly (the `ideal` winch mode; a tuned drive's own following error is a
//!   fraction of a millimetre), each motor's torque what the motion takes, J·θ̈ + b·θ̇ +
//!   τ_c·tanh(θ̇/ω₀) − ρ·T_w with the file's inertia, friction and platform. The PLC task
//!   publishes those torques and payouts as the drives' actual values (`[plc]
//!   actual_torques`, `actual_lengths` or `actual_motor_positions`), in the file's units.
//! - **Axes fed by the shadow**: each PLC cycle the axes' actual positions the shadow writes
//!   (`[plc] axis_positions`, encoder increments, scaled by the PLC robot's drives as an NC
//!   axis's encoder is) are compared with the set points: the following error, and its
//!   monitor as TwinCAT's NC has it — an error (0x4550) once |error| has stayed above the
//!   window for longer than the filter time, latched until the PLC restarts. The monitor
//!   waits for the shadow's first echo and its first positions: until then nothing feeds
//!   the axes.

use super::PlcError;
use crate::plc_symbols::{PlcSymbols, PositionUnit, TorqueUnit};
use crate::server::memory::{self, PlcMemory};
use crate::server::symbols::SymbolRef;
use crate::units::to_mm;
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::{Drive, Robot};
use cdpr_core::sim::{Command, ControlMode, ModelKind, Sim, SimConfig};

/// TwinCAT NC's error code for "following error monitoring, position" (0x4550).
pub const FOLLOWING_ERROR_ID: u32 = 0x4550;

/// TwinCAT NC's default position-lag monitoring: 5 mm for longer than 0.02 s.
pub const DEFAULT_WINDOW: f64 = 0.005;
pub const FILTER_TIME: f64 = 0.02;

/// The longest physics step of the drives' simulation, s: the shadow's default step. A longer
/// NC tick is split into steps no longer, the set point carried along the parabola through
/// the last three set points (the NC's own acceleration over the tick: a set point held
/// over the steps, or a straight ramp, would give the motors' inertia torque spikes of
/// J·Δv/dt at the ticks).
const MAX_STEP: f64 = 1e-3;

struct Refs {
    actual_torques: SymbolRef,
    actual_positions: SymbolRef,
    axis_positions: SymbolRef,
    following_errors: SymbolRef,
    axis_error: SymbolRef,
    axis_error_id: SymbolRef,
}

/// What the axes' monitor saw.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AxisMonitor {
    /// Per axis: the largest |following error| while monitored, m.
    pub max_following_error: Vec<f64>,
    /// The first axis (1-based) and PLC cycle of an error, if one came.
    pub error: Option<(usize, u32)>,
    /// The window and filter time of the monitor, m and s.
    pub window: f64,
    pub filter_time: f64,
    /// PLC cycles the axes were monitored (the shadow had answered).
    pub monitored_cycles: u64,
}

/// The drives of the virtual PLC (see the module's documentation).
pub struct DriveEmulation {
    /// The "real" robot: whose drives the physics simulates.
    sim: Sim,
    steps_per_tick: u32,
    /// The PLC robot's drives: the axes' encoder scaling.
    axes: Vec<Drive>,
    /// The real robot's drives: the served units' rated torques and encoder.
    actual: Vec<Drive>,
    torque_unit: TorqueUnit,
    position_unit: PositionUnit,
    refs: Refs,
    window: f64,
    /// Per axis: how long |error| has been above the window, s.
    over: Vec<f64>,
    monitor: AxisMonitor,
    /// The physics failed (said once): the last values stay published.
    failed: bool,
    /// The set points of the last two NC ticks (the older first), and this step's, m.
    last_set_points: [Vec<f64>; 2],
    step_set_points: Vec<f64>,
    /// The shadow has written the axes' positions.
    fed: bool,
}

impl DriveEmulation {
    /// The drives of `actual` (the PLC's `robot` itself, or a robot file standing for the real
    /// one: the same cables, with drives) at rest at `pose` on `lengths`, stepped every
    /// `nc_dt`, publishing into `memory` (whose table comes from `robot`); the axes' monitor
    /// with a following-error `window`, m.
    pub fn new(
        robot: &Robot,
        actual: &Robot,
        (pose, lengths): (&Pose, &[f64]),
        nc_dt: f64,
        memory: &PlcMemory,
        window: f64,
    ) -> Result<DriveEmulation, PlcError> {
        let problem = if !robot.has_drives() {
            Some(format!(
                "robot {} has no drives: the PLC serves drives' values only for a robot \
                 with drives ([winch] drum_radius, gear_ratio, …; docs/src/drives.md)",
                robot.name
            ))
        } else if !actual.has_drives() {
            Some(format!(
                "the actual robot {} has no drives to simulate",
                actual.name
            ))
        } else if actual.cable_count() != robot.cable_count() {
            Some(format!(
                "the actual robot {} has {} cables, the PLC's robot {} has {}",
                actual.name,
                actual.cable_count(),
                robot.name,
                robot.cable_count()
            ))
        } else if !(window.is_finite() && window > 0.0) {
            Some(format!(
                "the following-error window must be > 0 m, got {window}"
            ))
        } else {
            None
        };
        if let Some(p) = problem {
            return Err(PlcError::Drives(p));
        }
        let served = PlcSymbols::of(robot)?.served_drives();
        let find = |name: &str| {
            memory
                .table()
                .lookup_str(name)
                .ok_or_else(|| PlcError::MissingSymbol(name.to_string()))
        };
        let refs = Refs {
            actual_torques: find(&served.actual_torques)?,
            actual_positions: find(&served.actual_positions)?,
            axis_positions: find(&served.axis_positions)?,
            following_errors: find(&served.following_errors)?,
            axis_error: find(&served.axis_error)?,
            axis_error_id: find(&served.axis_error_id)?,
        };
        let steps = (nc_dt / MAX_STEP).ceil().max(1.0);
        let config = SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, nc_dt / steps);
        let start = kinematics::effective_pose(actual, pose);
        let mut sim = Sim::at(actual, config, &start).map_err(drive_error)?;
        sim.settle(&Command::Lengths(lengths.to_vec()))
            .map_err(drive_error)?;
        let m = robot.cable_count();
        let emulation = DriveEmulation {
            sim,
            steps_per_tick: steps as u32,
            axes: robot.drives.clone(),
            actual: actual.drives.clone(),
            torque_unit: served.actual_torque_unit,
            position_unit: served.actual_position_unit,
            refs,
            window,
            over: vec![0.0; m],
            monitor: AxisMonitor {
                max_following_error: vec![0.0; m],
                window,
                filter_time: FILTER_TIME,
                ..AxisMonitor::default()
            },
            failed: false,
            fed: false,
            last_set_points: [lengths.to_vec(), lengths.to_vec()],
            step_set_points: lengths.to_vec(),
        };
        memory.with_image(|img| emulation.publish(img));
        Ok(emulation)
    }

    /// What the axes' monitor saw so far.
    pub fn monitor(&self) -> &AxisMonitor {
        &self.monitor
    }

    /// One NC tick: the drives follow the set points `lengths`, m.
    pub fn tick(&mut self, lengths: &[f64]) {
        if self.failed {
            return;
        }
        let n = self.steps_per_tick;
        let [before, last] = &self.last_set_points;
        let (sim, step) = (&mut self.sim, &mut self.step_set_points);
        let stepped = (1..=n).try_for_each(|j| {
            // p(u) through (−1, s₀), (0, s₁), (1, s₂), at u = j/n of this tick.
            let u = f64::from(j) / f64::from(n);
            for (k, s) in step.iter_mut().enumerate() {
                let (s0, s1, s2) = (before[k], last[k], lengths[k]);
                *s = s1 + 0.5 * u * (s2 - s0) + 0.5 * u * u * (s2 - 2.0 * s1 + s0);
            }
            sim.set_command_lengths(step)?;
            sim.step()
        });
        let [before, last] = &mut self.last_set_points;
        std::mem::swap(before, last);
        last.clone_from_slice(lengths);
        if let Err(e) = stepped {
            self.failed = true;
            tracing::warn!(
                "the PLC's simulated drives stopped ({e}): their last values stay published"
            );
        }
    }

    /// The PLC task's part, in its image `img`: the drives' actual values published, the
    /// axes the shadow feeds monitored against the set points `set_points` (m) over the PLC
    /// cycle `cycle` of `task` s, once the shadow has answered (`echoed`).
    pub fn plc_task(
        &mut self,
        img: &mut [u8],
        set_points: &[f64],
        (cycle, task): (u32, f64),
        echoed: bool,
    ) {
        self.publish(img);
        let increments = memory::get_numbers(img, &self.refs.axis_positions).unwrap_or_default();
        // Axes nothing feeds read zero: monitored once the shadow has written positions.
        self.fed |= increments.iter().any(|&n| n != 0.0);
        if !echoed || !self.fed || increments.len() != set_points.len() {
            return;
        }
        self.monitor.monitored_cycles += 1;
        let errors: Vec<f64> = set_points
            .iter()
            .zip(&increments)
            .zip(&self.axes)
            .map(|((&set, &n), d)| set - d.payout_at(n))
            .collect();
        for (k, &e) in errors.iter().enumerate() {
            let max = &mut self.monitor.max_following_error[k];
            *max = max.max(e.abs());
            self.over[k] = if e.abs() > self.window {
                self.over[k] + task
            } else {
                0.0
            };
            if self.over[k] > FILTER_TIME && self.monitor.error.is_none() {
                self.monitor.error = Some((k + 1, cycle));
                tracing::warn!(
                    "emulated axis {}: following error {:.3} mm beyond the {:.3} mm window for \
                     longer than {} s (NC error 0x{FOLLOWING_ERROR_ID:x})",
                    k + 1,
                    e * 1e3,
                    self.window * 1e3,
                    FILTER_TIME
                );
            }
        }
        memory::put_reals(img, &self.refs.following_errors, &to_mm(errors));
        let failed = self.monitor.error.is_some();
        memory::put_u32(img, &self.refs.axis_error, u32::from(failed));
        memory::put_u32(
            img,
            &self.refs.axis_error_id,
            if failed { FOLLOWING_ERROR_ID } else { 0 },
        );
    }

    /// The drives' actual torques and positions, in the served units.
    fn publish(&self, img: &mut [u8]) {
        let s = self.sim.state();
        let torques: Vec<f64> = s
            .motor_torques
            .iter()
            .zip(&self.actual)
            .map(|(&t, d)| match self.torque_unit {
                TorqueUnit::NewtonMetre => t,
                TorqueUnit::Percent => d.percent_of_rated(t),
                TorqueUnit::Permille => 10.0 * d.percent_of_rated(t),
            })
            .collect();
        let positions: Vec<f64> = match self.position_unit {
            PositionUnit::Millimetres => to_mm(s.winch.iter().copied()),
            PositionUnit::Increments => s
                .winch
                .iter()
                .zip(&self.actual)
                .map(|(&l, d)| d.increments_at(l))
                .collect(),
        };
        memory::put_numbers(img, &self.refs.actual_torques, &torques);
        memory::put_numbers(img, &self.refs.actual_positions, &positions);
    }
}

fn drive_error(e: cdpr_core::sim::SimError) -> PlcError {
    PlcError::Drives(format!("the PLC's drives cannot be simulated: {e}"))
}
