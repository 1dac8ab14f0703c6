//! The start: the controller's geometry and first sample read, the model built from them,
//! the platform put at rest where the commanded lengths hold it.

use super::CycleTiming;
use super::clock::Clock;
use super::commands::Commands;
use super::reaction::Echoes;
use super::reconnect::LinkState;
use super::record::Recording;
use super::step::Drive;
use super::timeline::{ReadClock, Timeline};
use super::warnings::Warnings;
use super::{AnchorDifference, Consistency};
use super::{Shadow, ShadowConfig, ShadowError, ShadowStats, model};
use crate::link::{Controller, CycleInputs, ShadowOutputs};
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::run::prediction::PredictionTally;
use cdpr_core::sim::{Command, Sim};
use serde::Serialize;
use std::time::{Duration, Instant};

/// What [`Shadow::new`] found and did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartReport {
    pub cables: usize,
    /// Mass, stiffness and limits came from a robot file (else from the default template).
    pub from_file: bool,
    /// The controller's TCP pose (orientation zeroed for a 3-DOF robot).
    pub tcp_pose: Pose,
    /// Where the platform rests: the elastic equilibrium of the commanded lengths, searched
    /// from the TCP pose.
    pub start_pose: Pose,
    /// |start − TCP| position, m: the sag of elastic cables under uncompensated lengths.
    pub sag: f64,
    pub consistency: Consistency,
    /// With a robot file: every anchor further than [`model::ANCHOR_TOLERANCE`] from the
    /// controller's (the model uses the controller's).
    pub anchors: Vec<AnchorDifference>,
    /// The controller's commanded lengths at start (the platform rests where they hold it), m.
    pub commanded_lengths: Vec<f64>,
    /// The PLC cycle counter at start.
    pub plc_cycle: u32,
    /// The PLC publishes its reaction-time diagnostic.
    pub reaction_diagnostic: bool,
}

impl<C: Controller> Shadow<C> {
    /// Reads the controller's geometry and first sample, builds the model (anchors from the
    /// controller; the rest from `file`, else [`model::default_robot`]), settles the platform
    /// where the commanded lengths hold it and — with `config.write` — writes that state once.
    pub fn new(
        mut controller: C,
        file: Option<Robot>,
        config: ShadowConfig,
    ) -> Result<Shadow<C>, ShadowError> {
        let period = config.timing.period();
        if period.is_zero() || period > Duration::from_secs(10) {
            return Err(ShadowError::Config(format!(
                "the cycle period must lie in (0, 10] s, got {period:?}"
            )));
        }
        if !(config.guard_slack.is_finite() && config.guard_slack >= 0.0) {
            return Err(ShadowError::Config(format!(
                "the guard slack must be ≥ 0 m, got {}",
                config.guard_slack
            )));
        }
        let geometry = controller.read_geometry()?;
        let (robot, anchors, from_file) = match &file {
            Some(f) => (
                model::with_controller_geometry(f, &geometry)?,
                model::compare_anchors(f, &geometry, model::ANCHOR_TOLERANCE),
                true,
            ),
            None => (model::default_robot(&geometry)?, Vec::new(), false),
        };
        let inputs = controller.read_cycle()?;
        let consistency = model::consistency(&robot, &geometry, &inputs.commanded_lengths);
        let tcp_pose = kinematics::effective_pose(&robot, &geometry.tcp_pose);
        let mut sim = Sim::at(&robot, config.sim.clone(), &tcp_pose)?;
        sim.settle(&Command::Lengths(inputs.commanded_lengths.clone()))?;
        let start_pose = sim.state().pose;
        let start = StartReport {
            cables: robot.cable_count(),
            from_file,
            tcp_pose,
            start_pose,
            sag: (start_pose.position - tcp_pose.position).norm(),
            consistency,
            anchors,
            commanded_lengths: inputs.commanded_lengths.clone(),
            plc_cycle: inputs.cycle,
            reaction_diagnostic: inputs.reaction_cycles.is_some(),
        };
        warn_inconsistent(&start);
        let now = Instant::now();
        let mut shadow = Shadow {
            link: LinkState::up(controller.re_resolves(), now),
            controller,
            clock: Clock::new(config.timing, config.sim.dt, now, inputs.cycle),
            drive: Drive::new(&inputs.commanded_lengths),
            timeline: Timeline::default(),
            read_clock: ReadClock::default(),
            batch: Vec::new(),
            echoes: Echoes::default(),
            // The first sample has nothing to jump from: the guard's baseline (placed below).
            commands: Commands::new(&robot.winch, config.guard_slack, inputs.clone(), 0.0, 0.0),
            outputs: ShadowOutputs {
                pose: start_pose,
                lengths: Vec::new(),
                tensions: Vec::new(),
                cycle: 0,
                interference: false,
                torques: Vec::new(),
                feedforward_torques: Vec::new(),
                payouts: Vec::new(),
            },
            recording: Recording::new(tcp_pose),
            stats: ShadowStats {
                drives: cdpr_core::run::digest::DriveTally::new(&robot, config.sim.dt),
                torque_prediction: match inputs.actual_torques.is_empty() {
                    true => PredictionTally::default(),
                    false => PredictionTally::torques(&robot, config.timing.plc_period_s()),
                },
                length_prediction: match inputs.actual_lengths.is_empty() {
                    true => PredictionTally::default(),
                    false => PredictionTally::lengths(&robot, config.timing.plc_period_s()),
                },
                ..ShadowStats::default()
            },
            warnings: Warnings::default(),
            interference: None,
            scheduling: None,
            config,
            robot,
            sim,
            geometry,
            start,
        };
        let line = shadow.start_line(&inputs, 0.0);
        shadow.commands = Commands::new(
            &shadow.robot.winch,
            shadow.config.guard_slack,
            inputs,
            0.0,
            line,
        );
        if shadow.config.write {
            let cycle = shadow.commands.good().cycle;
            shadow.write_outputs(cycle)?;
        }
        Ok(shadow)
    }

    /// The commands' time line starts again at `inputs` (the start, a resync), read at shadow
    /// time `arrival`: its first knot, the read clock's first delay; nothing left of the echoes
    /// written before. Returns the knot's place on the line.
    pub(super) fn start_line(&mut self, inputs: &CycleInputs, arrival: f64) -> f64 {
        self.timeline.reset();
        self.read_clock.reset();
        self.echoes.clear();
        let line = self
            .clock
            .start_line(inputs.cycle, inputs.plc_time, arrival);
        self.timeline.push(line, &inputs.commanded_lengths);
        if let CycleTiming::Free { .. } = self.config.timing {
            let latency = self.command_latency();
            self.read_clock.observe(arrival, line, latency);
        }
        line
    }
}

fn warn_inconsistent(start: &StartReport) {
    let c = &start.consistency;
    match c.fk_position_offset {
        Some(d) if d > 1e-3 => tracing::warn!(
            "the controller's TCP pose and its commanded lengths disagree by {:.2} mm (forward kinematics of the lengths): check units and anchors",
            d * 1e3
        ),
        None => tracing::warn!(
            "forward kinematics of the controller's commanded lengths does not converge from its TCP pose: check units and anchors"
        ),
        _ => {}
    }
    if c.angle_mismatch > 0.5f64.to_radians() {
        tracing::warn!(
            "the controller's cable angles differ from the model's by up to {:.2}° (seed 000 eqs. 2–3 conventions?)",
            c.angle_mismatch.to_degrees()
        );
    }
}
