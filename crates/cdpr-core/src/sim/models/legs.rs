//! Robots with rigid legs in Rapier (`model = chain` for a linear delta or a 2-RSSU): the same
//! construction as the cable chains — per leg a multibody rooted on a fixed body at the leg's
//! base, a sequence of revolute, prismatic and spherical joints whose frames encode the
//! starting configuration, and an impulse joint closing the loop on the free platform body —
//! built here from a generic leg description ([`LegSpec`]) that each mechanism fills from its
//! inverse kinematics.
//!
//! Active joints follow the actuator command: kinematically (`ideal`: the joint velocity is set
//! so that the coordinate lands on the command each step) or through the same implicit PID as
//! the cable winches (`length`): the multibody joint spring on the axis (stiffness kp, rest
//! shifted by (kd/kp)·rate − (ki/kp)·∫e) plus the multibody damping kd.

// Index loops over the legs read like the paper's equations (i = 1..3).
#![allow(clippy::needless_range_loop)]

use super::rapier::{PlatformWorld, d3, quat, v3};
use super::{Actuation, Built, PhysicalModel};
use crate::kinematics::Pose;
use crate::robot::{Mechanism, Robot};
use crate::sim::{Command, SimConfig, SimError, SimState};
use nalgebra::Vector3;
use rapier3d::prelude::*;

/// One joint of a leg and the link that follows it, at the starting configuration (world).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinkSpec {
    pub joint: JointType,
    /// Joint centre.
    pub at: Vector3<f64>,
    /// Centre of mass of the link after the joint.
    pub body: Vector3<f64>,
    pub mass: f64,
    /// Isotropic inertia of that link, kg·m².
    pub inertia: f64,
    /// The actuator driving this joint, and its coordinate at the start (m or rad).
    pub actuator: Option<(usize, f64)>,
    /// Limits of the joint's actuator coordinate (absolute, m or rad).
    pub limits: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum JointType {
    Revolute(Vector3<f64>),
    Prismatic(Vector3<f64>),
    Spherical,
}

/// How the last link is closed on the platform.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Closure {
    /// A spherical joint at a world point, which is `anchor` in the platform frame.
    Spherical {
        at: Vector3<f64>,
        anchor: Vector3<f64>,
    },
    /// Welded to the platform (the universal joint of a 2-RSSU ends here).
    Fixed { at: Vector3<f64> },
}

#[derive(Debug, Clone)]
pub(crate) struct LegSpec {
    pub name: String,
    pub base: Vector3<f64>,
    pub links: Vec<LinkSpec>,
    pub closure: Closure,
}

/// Handles of one leg.
#[derive(Debug, Clone)]
struct LegHandles {
    actuated: Vec<(MultibodyJointHandle, usize, f64, usize)>, // (joint, actuator, coordinate at 0, spatial axis)
    closure: ImpulseJointHandle,
    last: RigidBodyHandle,
    base: Vector3<f64>,
    /// Each joint's centre as a point of the body after it (for drawing).
    joints: Vec<(RigidBodyHandle, Vector)>,
}

/// The legs of a mechanism at a pose, from its inverse kinematics.
pub(crate) fn legs_of(robot: &Robot, pose: &Pose) -> Result<Vec<LegSpec>, SimError> {
    let actuator_mass = robot.winch.mass;
    match &robot.mechanism {
        Mechanism::LinearDelta { delta, .. } => linear_delta_legs(delta, actuator_mass, pose),
        Mechanism::Rssu2(r) => rssu2_legs(r, actuator_mass, pose),
        Mechanism::Cables => Err(SimError::Start("a cable robot has no rigid legs".into())),
    }
}

/// The six legs of a linear delta: per rail a pair of arms, each a prismatic carriage joint
/// then a spherical joint, closed by a spherical joint on the platform.
fn linear_delta_legs(
    delta: &crate::legs::LinearDelta,
    actuator_mass: f64,
    pose: &Pose,
) -> Result<Vec<LegSpec>, SimError> {
    let p = pose.position;
    let d = delta
        .actuators(&p)
        .ok_or_else(|| SimError::Start(format!("the linear delta cannot reach {p:?}")))?;
    let arm_mass = 0.05;
    let arm_inertia = arm_mass * delta.arm_length * delta.arm_length / 12.0;
    let mut legs = Vec::with_capacity(6);
    for i in 0..3 {
        let rail = delta.rail_direction(i);
        let carriage = delta.rail_origin(i) + rail * d[i];
        for side in [1.0, -1.0] {
            let offset = crate::legs::LinearDelta::pair_axis(i) * (0.5 * delta.arm_spacing * side);
            let c = carriage + offset;
            let q = p + delta.platform_anchor(i) + offset;
            legs.push(LegSpec {
                name: format!("rail{}{}", i + 1, if side > 0.0 { "a" } else { "b" }),
                base: delta.rail_origin(i) + offset,
                links: vec![
                    LinkSpec {
                        joint: JointType::Prismatic(rail),
                        at: delta.rail_origin(i) + offset,
                        body: c,
                        // The two arms of a pair share one carriage: half each.
                        mass: 0.5 * actuator_mass,
                        inertia: 1e-4,
                        actuator: Some((i, d[i])),
                        limits: Some(delta.stroke),
                    },
                    LinkSpec {
                        joint: JointType::Spherical,
                        at: c,
                        body: (c + q) * 0.5,
                        mass: arm_mass,
                        inertia: arm_inertia,
                        actuator: None,
                        limits: None,
                    },
                ],
                closure: Closure::Spherical {
                    at: q,
                    anchor: delta.platform_anchor(i) + offset,
                },
            });
        }
    }
    Ok(legs)
}

/// The three legs of a 2-RSSU: two cranks (revolute drive, spherical rod, spherical on the
/// platform) and the universal joint the platform turns about.
fn rssu2_legs(
    r: &crate::legs::Rssu2,
    actuator_mass: f64,
    pose: &Pose,
) -> Result<Vec<LegSpec>, SimError> {
    let (roll, pitch) = (pose.rpy.x, pose.rpy.y);
    let theta = r.inverse(roll, pitch).map_err(|v| {
        SimError::Start(format!(
            "the 2-RSSU cannot reach roll {roll}, pitch {pitch}: {v:?}"
        ))
    })?;
    let rot = crate::legs::Rssu2::rotation(roll, pitch);
    let crank_mass = 0.5;
    let mut legs = Vec::with_capacity(3);
    for i in 0..2 {
        let m = r.pivot(i);
        let c = r.crank_end(i, theta[i]);
        let p = rot * r.attachment(i);
        legs.push(LegSpec {
            name: format!("crank{}", i + 1),
            base: m,
            links: vec![
                LinkSpec {
                    // θ lifts crank i's end: a turn about −x on the left, +x on the right.
                    joint: JointType::Revolute(Vector3::new(
                        if i == 0 { -1.0 } else { 1.0 },
                        0.0,
                        0.0,
                    )),
                    at: m,
                    body: (m + c) * 0.5,
                    mass: crank_mass,
                    // The drive's reflected inertia sits on the crank axis.
                    inertia: actuator_mass,
                    actuator: Some((i, theta[i])),
                    limits: Some(r.crank_limits),
                },
                LinkSpec {
                    joint: JointType::Spherical,
                    at: c,
                    body: (c + p) * 0.5,
                    mass: 0.3,
                    inertia: 0.3 * r.rod * r.rod / 12.0,
                    actuator: None,
                    limits: None,
                },
            ],
            closure: Closure::Spherical {
                at: p,
                anchor: r.attachment(i),
            },
        });
    }
    legs.push(universal_joint_leg(pitch));
    Ok(legs)
}

/// The 2-RSSU's universal joint at the origin: pitch about the base's y, then roll about the
/// platform's x (R = Ry(pitch)·Rx(roll)), welded to the platform.
fn universal_joint_leg(pitch: f64) -> LegSpec {
    let o = Vector3::zeros();
    LegSpec {
        name: "universal".into(),
        base: o,
        links: vec![
            LinkSpec {
                joint: JointType::Revolute(Vector3::y()),
                at: o,
                body: o,
                mass: 0.5,
                inertia: 1e-3,
                actuator: None,
                limits: None,
            },
            LinkSpec {
                joint: JointType::Revolute(crate::legs::Rssu2::rotation(0.0, pitch) * Vector3::x()),
                at: o,
                body: o,
                mass: 0.5,
                inertia: 1e-3,
                actuator: None,
                limits: None,
            },
        ],
        closure: Closure::Fixed { at: o },
    }
}

/// A robot with legs as the `chain` model builds it: the start pose its mechanism allows,
/// held by the actuator positions there.
pub(super) fn build(robot: &Robot, config: &SimConfig, pose: &Pose) -> Result<Built, SimError> {
    let pose = LegModel::start_pose(robot, pose);
    let model = LegModel::new(robot, &pose, config)?;
    let (actuators, channels) = (model.actuator_count(), model.leg_count());
    let start = Command::Lengths(model.actuator_positions());
    Ok(Built {
        model: Box::new(model),
        pose,
        start,
        actuators,
        channels,
        travel: LegModel::travel(robot),
    })
}

/// The Rapier model of a robot with legs.
pub(crate) struct LegModel {
    scene: PlatformWorld,
    legs: Vec<LegHandles>,
    integrals: Vec<f64>,
    actuators: usize,
    config: SimConfig,
}

impl LegModel {
    /// The pose a robot with legs starts from: a 2-RSSU only turns (no translation, no yaw).
    pub fn start_pose(robot: &Robot, pose: &Pose) -> Pose {
        match &robot.mechanism {
            Mechanism::Rssu2(_) => Pose::new(0.0, 0.0, 0.0, pose.rpy.x, pose.rpy.y, 0.0),
            _ => *pose,
        }
    }

    /// Actuator travel [min, max], per actuator.
    pub fn travel(robot: &Robot) -> Vec<[f64; 2]> {
        match &robot.mechanism {
            Mechanism::LinearDelta { delta, .. } => vec![delta.stroke; 3],
            Mechanism::Rssu2(r) => vec![r.crank_limits; 2],
            Mechanism::Cables => Vec::new(),
        }
    }

    /// The world with the platform at `pose` and every leg of the mechanism closed on it.
    pub fn new(robot: &Robot, pose: &Pose, config: &SimConfig) -> Result<LegModel, SimError> {
        let specs = legs_of(robot, pose)?;
        let mut scene = PlatformWorld::new(robot, pose, config)?;
        let platform = scene.platform;
        let iso = pose.world_from_platform();
        let platform_pose = Pose3::from_parts(v3(&iso.translation.vector), quat(&iso.rotation));
        // `ideal` sets the joint velocities: the actuated joints are then driven kinematically.
        let kinematic = config.control == crate::sim::ControlMode::Ideal;
        let world = &mut scene.world;

        let mut legs = Vec::with_capacity(specs.len());
        let mut actuators = 0;
        for spec in &specs {
            let leg = insert_leg(world, spec, platform, &platform_pose, kinematic)?;
            for &(_, index, _, _) in &leg.actuated {
                actuators = actuators.max(index + 1);
            }
            legs.push(leg);
        }
        Ok(LegModel {
            scene,
            legs,
            integrals: vec![0.0; actuators],
            actuators,
            config: config.clone(),
        })
    }

    pub fn actuator_count(&self) -> usize {
        self.actuators
    }

    pub fn leg_count(&self) -> usize {
        self.legs.len()
    }

    /// The actuator coordinates now (m or rad), one per actuator.
    pub fn actuator_positions(&self) -> Vec<f64> {
        let mut positions = vec![0.0; self.actuators];
        for leg in &self.legs {
            for &(joint, index, start, axis) in &leg.actuated {
                if let Some(a) = positions.get_mut(index) {
                    *a = start + self.scene.joint_state(joint, axis).0;
                }
            }
        }
        positions
    }

    /// Per leg, the points to draw it through (world, m): its base, every joint centre and
    /// the point where it closes on the platform.
    fn polylines(&self) -> Vec<Vec<Vector3<f64>>> {
        let world = &self.scene.world;
        self.legs
            .iter()
            .map(|leg| {
                let mut points = vec![leg.base];
                let ends = leg
                    .joints
                    .iter()
                    .filter_map(|(body, local)| {
                        let b = world.bodies.get(*body)?;
                        Some(d3(b.position().transform_point(*local)))
                    })
                    .chain(self.scene.closure_point(leg.closure));
                // A joint at the previous point (a crank's axis at its base) adds nothing.
                for p in ends {
                    if points
                        .last()
                        .is_none_or(|q: &Vector3<f64>| (p - q).norm() > 1e-6)
                    {
                        points.push(p);
                    }
                }
                points
            })
            .collect()
    }
}

/// Inserts one leg into the world: a fixed root at its base, a multibody link per joint, and
/// the impulse joint closing the loop on the platform.
fn insert_leg(
    world: &mut PhysicsWorld,
    spec: &LegSpec,
    platform: RigidBodyHandle,
    platform_pose: &Pose3,
    kinematic: bool,
) -> Result<LegHandles, SimError> {
    let root = world
        .bodies
        .insert(RigidBodyBuilder::fixed().pose(Pose3::from_translation(v3(&spec.base))));
    let mut parent = root;
    let mut parent_at = spec.base;
    let mut actuated = Vec::new();
    let mut joints = Vec::new();
    for link in &spec.links {
        let body = world.bodies.insert(
            RigidBodyBuilder::dynamic()
                .pose(Pose3::from_translation(v3(&link.body)))
                .additional_mass_properties(MassProperties::new(
                    Vector::ZERO,
                    link.mass as f32,
                    Vector::splat(link.inertia as f32),
                ))
                .can_sleep(false),
        );
        let (joint, spatial_axis) = link_joint(link, parent_at, kinematic);
        let handle = world
            .multibody_joints
            .insert(parent, body, joint, true)
            .ok_or_else(|| SimError::Start(format!("leg {}: cannot insert a joint", spec.name)))?;
        if let Some((multibody, _)) = world.multibody_joints.get_mut(handle) {
            multibody.damping_mut().fill(0.0);
        }
        if let Some((index, start)) = link.actuator {
            actuated.push((handle, index, start, spatial_axis));
        }
        // A prismatic joint's centre slides with its carriage: the leg is drawn from its base
        // straight to the next joint instead.
        if !matches!(link.joint, JointType::Prismatic(_)) {
            joints.push((body, v3(&(link.at - link.body))));
        }
        parent = body;
        parent_at = link.body;
    }
    let closure = close_leg(
        world,
        &spec.closure,
        parent,
        parent_at,
        platform,
        platform_pose,
    );
    Ok(LegHandles {
        actuated,
        closure,
        last: parent,
        base: spec.base,
        joints,
    })
}

/// The multibody joint from the previous link (centre of mass at `parent_at`) to `link`, with
/// the actuator limits unless the joint is driven kinematically, and the spatial axis its
/// coordinate is read on.
fn link_joint(link: &LinkSpec, parent_at: Vector3<f64>, kinematic: bool) -> (GenericJoint, usize) {
    // Joint frames on both bodies at the joint centre, X along the joint axis; the link bodies
    // are not rotated, so only the translation differs.
    let axis = match link.joint {
        JointType::Revolute(u) | JointType::Prismatic(u) => v3(&u).normalize(),
        JointType::Spherical => Vector::X,
    };
    let frame_rot = Rotation::from_rotation_arc(Vector::X, axis);
    let frame1 = Pose3::from_parts(v3(&(link.at - parent_at)), frame_rot);
    let frame2 = Pose3::from_parts(v3(&(link.at - link.body)), frame_rot);
    let (locked, spatial_axis, coord_axis) = match link.joint {
        JointType::Revolute(_) => (JointAxesMask::LOCKED_REVOLUTE_AXES, 3, JointAxis::AngX),
        JointType::Prismatic(_) => (JointAxesMask::LOCKED_PRISMATIC_AXES, 0, JointAxis::LinX),
        JointType::Spherical => (JointAxesMask::LOCKED_SPHERICAL_AXES, 3, JointAxis::AngX),
    };
    let mut builder = GenericJointBuilder::new(locked)
        .local_frame1(frame1)
        .local_frame2(frame2);
    // Rapier's joint-limit constraint cannot act on a kinematic joint (its solve assumes the
    // joint is in the mass matrix): in `ideal` mode the command is clamped to the limits
    // instead (`Sim::set_command`).
    if let (false, Some(limits), Some((_, start))) = (kinematic, link.limits, link.actuator) {
        builder = builder.limits(
            coord_axis,
            [(limits[0] - start) as f32, (limits[1] - start) as f32],
        );
    }
    (builder.build(), spatial_axis)
}

/// The impulse joint closing a leg's last link (centre of mass at `parent_at`) on the platform.
fn close_leg(
    world: &mut PhysicsWorld,
    closure: &Closure,
    parent: RigidBodyHandle,
    parent_at: Vector3<f64>,
    platform: RigidBodyHandle,
    platform_pose: &Pose3,
) -> ImpulseJointHandle {
    match *closure {
        Closure::Spherical { at, anchor } => world.impulse_joints.insert(
            parent,
            platform,
            SphericalJointBuilder::new()
                .local_anchor1(v3(&(at - parent_at)))
                .local_anchor2(v3(&anchor)),
            true,
        ),
        Closure::Fixed { at } => {
            let world_frame = Pose3::from_translation(v3(&at));
            let frame1 = Pose3::from_translation(v3(&(at - parent_at)));
            let frame2 = platform_pose.inverse() * world_frame;
            world.impulse_joints.insert(
                parent,
                platform,
                FixedJointBuilder::new()
                    .local_frame1(frame1)
                    .local_frame2(frame2),
                true,
            )
        }
    }
}

impl PhysicalModel for LegModel {
    /// Rigid legs have no elastic statics: the platform stays where it is.
    fn rest_pose(
        &self,
        _robot: &Robot,
        _command: &Command,
        guess: &Pose,
        _demand: Option<&Pose>,
    ) -> Result<Pose, SimError> {
        Ok(*guess)
    }

    /// The legs rebuilt at `pose` (their actuators where the inverse kinematics puts them).
    fn place(
        &mut self,
        robot: &Robot,
        pose: &Pose,
        _actuators: &[f64],
        _hold: &Actuation,
    ) -> Result<(), SimError> {
        *self = LegModel::new(robot, pose, &self.config)?;
        Ok(())
    }

    fn move_platform(&mut self, robot: &Robot, pose: &Pose) -> Result<(), SimError> {
        *self = LegModel::new(robot, pose, &self.config)?;
        Ok(())
    }

    /// Steps with the actuators following their targets (kinematic) or a PID towards set
    /// points; legs take no pulls.
    fn step(&mut self, robot: &Robot, actuation: &Actuation, _demand: Option<&Pose>, dt: f64) {
        for leg in 0..self.legs.len() {
            for k in 0..self.legs[leg].actuated.len() {
                let (joint, index, start, axis) = self.legs[leg].actuated[k];
                match *actuation {
                    Actuation::Follow { positions, .. } => {
                        self.scene.follow(joint, axis, start, positions[index], dt);
                    }
                    Actuation::Servo { set_points, rates } => {
                        // Each actuator is integrated once per step, by its first joint.
                        let first = self
                            .legs
                            .iter()
                            .flat_map(|l| &l.actuated)
                            .position(|a| a.1 == index)
                            == Some(
                                self.legs[..leg]
                                    .iter()
                                    .map(|l| l.actuated.len())
                                    .sum::<usize>()
                                    + k,
                            );
                        self.scene.servo(
                            joint,
                            axis,
                            start,
                            &mut self.integrals[index],
                            first,
                            set_points[index],
                            rates[index],
                            &robot.winch,
                            dt,
                        );
                    }
                    // Pulls, rates and torques are refused for legs when the model is built.
                    Actuation::Pull(_) | Actuation::Rate(_) | Actuation::Torque(_) => {}
                }
            }
        }
        self.scene.world.step();
    }

    /// Actuator coordinates, leg lengths (base to platform anchor, per leg) and the force each
    /// closure transmits (N, from its impulse); no cable wrench to balance.
    fn write_back(&mut self, _robot: &Robot, s: &mut SimState, _stepped: Option<f64>) {
        s.pose = self.scene.pose();
        s.twist = self.scene.twist();
        for (a, p) in s.winch.iter_mut().zip(self.actuator_positions()) {
            *a = p;
        }
        for (k, leg) in self.legs.iter().enumerate() {
            if let (Some(l), Some(anchor)) =
                (s.lengths.get_mut(k), self.scene.closure_point(leg.closure))
            {
                *l = (anchor - leg.base).norm();
            }
            if let Some(f) = s.tensions.get_mut(k) {
                *f = self.scene.closure_force(leg.closure);
            }
        }
        s.tensions_constraint.copy_from_slice(&s.tensions);
        s.wrench_residual = 0.0;
    }

    fn worst_gap(&self) -> Option<(usize, f64)> {
        self.scene
            .worst_gap(self.legs.iter().map(|l| (l.closure, l.last)))
    }

    fn leg_polylines(&self) -> Vec<Vec<Vector3<f64>>> {
        self.polylines()
    }
}
