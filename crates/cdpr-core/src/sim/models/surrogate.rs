//! Seed 004's surrogate as the physics core's fourth model (`model = surrogate`): the
//! demanded pose through the combination step and the per-DOF filters, stepped by
//! [`Sim`](crate::sim::Sim) like the chain, elastic and leg models, so that `cdpr simulate`,
//! the ADS shadow and the viewer run it the same way.
//!
//! The filters take poses, not actuator values: each step's demand is the pose the command
//! was computed for when the caller gives it (a trajectory sample) and otherwise the forward
//! kinematics of the commanded cable lengths (a controller's commands). The filters include
//! the drives' dynamics, so the actuators follow the command exactly (`ideal`). What the
//! surrogate does not model is derived at its pose: each cable's length by the inverse
//! kinematics, its tension by the minimum-norm distribution (the closest tensions where it
//! is infeasible).

use super::{Actuation, Built, ModelEntry, PhysicalModel};
use crate::kinematics::{self, FkOptions, Pose};
use crate::robot::{Mechanism, Robot};
use crate::sim::{Command, ControlMode, SimConfig, SimError, SimState};
use crate::statics;
use crate::surrogate::combine::{CdprReachability, DEFAULT_TOLERANCES, Reachability, combine};
use crate::surrogate::params::SurrogateParams;
use crate::surrogate::{Surrogate, SurrogateState};
use std::sync::Arc;

/// The `surrogate` model in the [`MODELS`](super::MODELS) table.
pub(crate) const ENTRY: ModelEntry = ModelEntry {
    name: "surrogate",
    help: "seed 004's digital filters per DOF (a delay and a 2nd-order low-pass, fitted by \
           `cdpr surrogate fit`); its filters include the drives",
    controls: &[ControlMode::Ideal],
    default_control: Some(ControlMode::Ideal),
    legs: true,
    needs_surrogate: true,
    not_swept: Some("the surrogate is not swept (it has no robot parameters)"),
    build,
};

fn build(robot: &Robot, config: &SimConfig, pose: &Pose) -> Result<Built, SimError> {
    let setup = config
        .surrogate
        .as_ref()
        .ok_or_else(|| SimError::Start("the surrogate model needs its parameters".into()))?;
    let travel = super::legs::LegModel::travel(robot);
    let actuators = if robot.is_cable_robot() {
        robot.cable_count()
    } else {
        travel.len()
    };
    let start = Command::Lengths(kinematics::actuator_positions(robot, pose).0);
    let model = SurrogateModel::new(robot, setup, config.dt, pose, actuators);
    Ok(Built {
        model: Box::new(model),
        pose: *pose,
        start,
        actuators,
        channels: robot.cable_count(),
        travel,
    })
}

/// What `model = surrogate` needs beyond the robot: the fitted parameters, and whether seed
/// 004's combination step pulls unreachable demands back (on by default).
#[derive(Debug, Clone, PartialEq)]
pub struct SurrogateSetup {
    pub params: Arc<SurrogateParams>,
    pub combine: bool,
}

impl SurrogateSetup {
    pub fn new(params: SurrogateParams) -> SurrogateSetup {
        SurrogateSetup {
            params: Arc::new(params),
            combine: true,
        }
    }
}

/// Seed 004's combination step asks the robot whether it can take a pose: a CDPR by its
/// tension distribution (with a precomputed map), a robot with legs by its inverse kinematics.
pub fn reachability(robot: &Robot) -> Box<dyn Reachability + Send + Sync> {
    match robot.mechanism.clone() {
        Mechanism::Cables => Box::new(CdprReachability::with_map(robot, 0.01)),
        Mechanism::Rssu2(r) => Box::new(move |pose: &[f64; 6]| r.reachable(pose[3], pose[4])),
        Mechanism::LinearDelta { delta, .. } => Box::new(move |pose: &[f64; 6]| {
            delta
                .inverse(&nalgebra::Vector3::new(pose[0], pose[1], pose[2]))
                .is_ok()
        }),
    }
}

pub(crate) struct SurrogateModel {
    surrogate: Surrogate,
    state: SurrogateState,
    reach: Option<Box<dyn Reachability + Send + Sync>>,
    /// The filters' output of the last step and of the one before (for the twist).
    output: [f64; 6],
    previous: Option<[f64; 6]>,
    /// The last demand (warm start of the forward kinematics).
    demand: Pose,
    /// The actuators: they follow the command.
    positions: Vec<f64>,
    limited: u64,
}

impl SurrogateModel {
    pub fn new(
        robot: &Robot,
        setup: &SurrogateSetup,
        dt: f64,
        pose: &Pose,
        actuators: usize,
    ) -> SurrogateModel {
        let surrogate = Surrogate::new(&setup.params, dt);
        let state = surrogate.start(&pose.to_array());
        SurrogateModel {
            surrogate,
            state,
            reach: setup.combine.then(|| reachability(robot)),
            output: pose.to_array(),
            previous: None,
            demand: *pose,
            positions: vec![0.0; actuators],
            limited: 0,
        }
    }

    /// The demand through the combination step (counted when `count`).
    fn combined(&mut self, demand: &[f64; 6], count: bool) -> [f64; 6] {
        match &self.reach {
            None => *demand,
            Some(reach) => {
                let c = combine(
                    reach.as_ref(),
                    &self.surrogate.rest,
                    demand,
                    &DEFAULT_TOLERANCES,
                );
                if count {
                    self.limited += c.limited as u64;
                }
                c.pose
            }
        }
    }

    /// This step's demanded pose: given, or the forward kinematics of the commanded cable
    /// lengths from the last demand (a robot with legs keeps its last demand).
    fn demand_for(&self, robot: &Robot, positions: &[f64], demand: Option<&Pose>) -> Pose {
        if let Some(pose) = demand {
            return *pose;
        }
        if !robot.is_cable_robot() {
            return self.demand;
        }
        let options = FkOptions {
            guess: Some(self.demand),
            ..FkOptions::default()
        };
        kinematics::forward(robot, positions, &options)
            .map(|s| kinematics::effective_pose(robot, &s.pose))
            .unwrap_or(self.demand)
    }
}

impl PhysicalModel for SurrogateModel {
    /// The surrogate rests where it is asked to: the demand, or the forward kinematics of the
    /// commanded lengths.
    fn rest_pose(
        &self,
        robot: &Robot,
        command: &Command,
        _guess: &Pose,
        demand: Option<&Pose>,
    ) -> Result<Pose, SimError> {
        match command {
            Command::Lengths(lengths) => Ok(self.demand_for(robot, lengths, demand)),
            other => Err(SimError::Start(format!(
                "the surrogate takes poses or lengths, not {}",
                other.kind()
            ))),
        }
    }

    /// At rest with the demand held: the filters' steady state, then one step of it (the
    /// first recorded sample is the filters' answer to the first demand).
    fn place(
        &mut self,
        _robot: &Robot,
        pose: &Pose,
        actuators: &[f64],
        _hold: &Actuation,
    ) -> Result<(), SimError> {
        let demand = pose.to_array();
        self.limited = 0;
        let start = self.combined(&demand, false);
        self.state = self.surrogate.start(&start);
        let input = self.combined(&demand, true);
        self.output = self.surrogate.step(&mut self.state, &input);
        self.previous = None;
        self.demand = *pose;
        self.positions.copy_from_slice(actuators);
        Ok(())
    }

    fn move_platform(&mut self, robot: &Robot, pose: &Pose) -> Result<(), SimError> {
        let actuators = self.positions.clone();
        self.place(robot, pose, &actuators, &Actuation::Pull(&[]))
    }

    fn step(&mut self, robot: &Robot, actuation: &Actuation, demand: Option<&Pose>, _dt: f64) {
        let positions = match *actuation {
            Actuation::Follow { positions, .. }
            | Actuation::Servo {
                set_points: positions,
                ..
            } => positions,
            Actuation::Pull(_) | Actuation::Rate(_) | Actuation::Torque(_) => &[],
        };
        if positions.len() == self.positions.len() {
            self.positions.copy_from_slice(positions);
        }
        self.demand = self.demand_for(robot, &self.positions, demand);
        let input = self.combined(&self.demand.to_array(), true);
        self.previous = Some(self.output);
        self.output = self.surrogate.step(&mut self.state, &input);
    }

    fn write_back(&mut self, robot: &Robot, s: &mut SimState, stepped: Option<f64>) {
        let pose = kinematics::effective_pose(robot, &Pose::from_array(self.output));
        s.pose = pose;
        s.twist = match (self.previous, stepped) {
            (Some(p), Some(dt)) => std::array::from_fn(|k| (self.output[k] - p[k]) / dt),
            _ => [0.0; 6],
        };
        s.winch.copy_from_slice(&self.positions);
        if robot.is_cable_robot() {
            s.lengths = kinematics::lengths(robot, &pose);
            s.tensions = statics::tension_distribution(robot, &pose, robot.tension).tensions;
            s.tensions_constraint.copy_from_slice(&s.tensions);
        }
        s.wrench_residual = 0.0;
    }

    fn limited_steps(&self) -> u64 {
        self.limited
    }
}
