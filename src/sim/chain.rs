//! The per-cable joint chain in Rapier (`model = chain`): seed 000's construction, section 4.
//!
//! For every cable i a multibody rooted on its own fixed body at the exit point a_i:
//!   revolute about world z (azimuth) → revolute about the horizontal normal (elevation) —
//!   together the universal joint of the U-P-S cable — → prismatic winch (active) → prismatic
//!   spring-damper (passive, the cable's elasticity) → link at the platform anchor,
//! and the loop closed by an impulse spherical joint between that last link and the platform
//! body at b_i. Rapier's multibodies are trees (reduced coordinates) and cannot close loops;
//! an impulse joint can. The platform is a free rigid body, not part of any multibody, so the
//! eight chains stay independent 4-DOF multibodies (tiny mass matrices) and only the eight
//! 3-row closures go through the impulse solver.
//!
//! Measured choices (shared/notes/rapier-cable-models.md and benches/sim.rs):
//! - The cable spring is the multibody joint's implicit spring (`set_spring`) with the cable
//!   damper in the multibody's implicit damping; both are switched off while the cable is
//!   slack (unilateral: a cable never pushes). A joint *motor* used as the spring blows up
//!   (explicit) or acts rigid.
//! - The winch of `length` mode is the same implicit spring on the winch axis with stiffness
//!   kp, multibody damping kd, and the rest position shifted by (kd/kp)·ṡ_ref + (ki/kp)·∫e:
//!   force = kp·e + kd·ė + ki·∫e, a PID integrated implicitly (Rapier's motors are PD and
//!   explicit; the integral lives here). In `ideal` mode the winch joint is kinematic: its
//!   velocity is set so that the payout lands exactly on the command each step.
//! - Intermediate links need mass for the solver: closure error grows like (dt/it)²/m. Their
//!   gravity is off (cables are massless in seeds 000/001); see `ChainConfig::link_mass`.

use super::{SimConfig, SimError};
use crate::kinematics::{CableGeometry, Pose};
use crate::robot::Robot;
use nalgebra::{UnitQuaternion, Vector3, Vector6};
use rapier3d::prelude::*;

/// Constraint drift (closure gap) beyond which a run is stopped, m.
pub(crate) const MAX_DRIFT: f64 = 0.005;

/// Parameters of the chain model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainConfig {
    /// Mass of each intermediate link, kg. The links sit on the exit point, so their mass
    /// moves with the payout (like the winch drum's reflected inertia) and not with the
    /// platform's transverse motion.
    pub link_mass: f64,
    /// Rapier solver iterations (substeps) per step. Each substep re-assembles every
    /// multibody's mass matrix, the dominant cost.
    pub solver_iterations: usize,
    /// Projected Gauss–Seidel iterations per substep: cheap, and they close the loop. Measured
    /// on uvigo8's sag case (exact z = 49.0666 mm), dt = 1 ms: 1 substep × 1 PGS leaves
    /// 38 µm, × 2 → 2.4 µm, × 4 → 4.8 µm, × 10 → 0.9 µm; 2 substeps × 1 → 9 µm, 4 × 1 → 1.4 µm.
    pub pgs_iterations: usize,
}

impl Default for ChainConfig {
    fn default() -> Self {
        ChainConfig {
            link_mass: 0.2,
            solver_iterations: 1,
            pgs_iterations: 10,
        }
    }
}

/// What drives the winch joints this step.
pub(crate) enum ChainDrive<'a> {
    /// Winch payouts follow these lengths exactly (kinematic joint).
    Kinematic(&'a [f64]),
    /// PID towards shaped set points with their rates.
    Pid {
        set_points: &'a [f64],
        rates: &'a [f64],
    },
    /// Tensions pulled by the winch, N (negatives ignored).
    Tension(&'a [f64]),
}

/// Handles of one cable's chain, as Rapier's idiom wants (one small struct per cable).
#[derive(Debug, Clone, Copy)]
struct CableChain {
    winch: MultibodyJointHandle,
    spring: MultibodyJointHandle,
    end_link: RigidBodyHandle,
    closure: ImpulseJointHandle,
    /// Payout at winch coordinate 0, m.
    payout0: f64,
    /// Stretch at spring coordinate 0, m.
    stretch0: f64,
    /// ∫(payout − set point) dt of the PID winch, m·s.
    integral: f64,
    /// a_i, m.
    frame_anchor: Vector3<f64>,
}

pub(crate) struct ChainModel {
    world: PhysicsWorld,
    platform: RigidBodyHandle,
    chains: Vec<CableChain>,
    dt_sub: f64,
    stiffness: Vec<f64>,
    damping: Vec<f64>,
    gains: crate::robot::Winch,
    config: SimConfig,
    /// Tension mode: the pulls applied in the last step, N.
    pulls: Vec<f64>,
    tension_mode: bool,
}

pub(crate) fn v3(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x as f32, v.y as f32, v.z as f32)
}

pub(crate) fn d3(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x as f64, v.y as f64, v.z as f64)
}

fn quat(q: &UnitQuaternion<f64>) -> Rotation {
    Rotation::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32).normalize()
}

pub(crate) fn dquat(q: Rotation) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
        q.w as f64, q.x as f64, q.y as f64, q.z as f64,
    ))
}

/// A body's pose (its frame's origin and orientation) as a platform pose.
pub(crate) fn body_pose(b: &RigidBody) -> Pose {
    Pose::from_rotation(
        d3(b.translation()),
        &dquat(*b.rotation()).to_rotation_matrix(),
    )
}

/// Velocity of a body's frame origin and its angular velocity (world).
pub(crate) fn body_twist(b: &RigidBody) -> [f64; 6] {
    let w = d3(b.angvel());
    let v = d3(b.linvel()) + w.cross(&(d3(b.translation()) - d3(b.center_of_mass())));
    [v.x, v.y, v.z, w.x, w.y, w.z]
}

/// Velocity of a body's centre of mass and its angular velocity (world).
pub(crate) fn body_com_velocity(b: &RigidBody) -> Vector6<f64> {
    let (v, w) = (d3(b.linvel()), d3(b.angvel()));
    Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z)
}

impl ChainModel {
    pub fn new(robot: &Robot, pose: &Pose, config: &SimConfig) -> Result<ChainModel, SimError> {
        let rest = crate::kinematics::lengths(robot, pose);
        Self::build(robot, pose, &rest, config)
    }

    /// Rebuilds the world with the platform at rest at `pose` and payouts `rest`.
    pub fn place(&mut self, pose: &Pose, rest: &[f64], robot: &Robot) -> Result<(), SimError> {
        let config = self.config;
        *self = Self::build(robot, pose, rest, &config)?;
        Ok(())
    }

    fn build(
        robot: &Robot,
        pose: &Pose,
        rest: &[f64],
        config: &SimConfig,
    ) -> Result<ChainModel, SimError> {
        let cfg = config.chain;
        if !(cfg.link_mass > 0.0 && cfg.solver_iterations >= 1) {
            return Err(SimError::Start(
                "chain link mass must be positive and solver iterations ≥ 1".into(),
            ));
        }
        let mut world = PhysicsWorld::new();
        world.gravity = Vector::new(0.0, 0.0, -crate::robot::GRAVITY as f32);
        world.integration_parameters.dt = config.dt as f32;
        world.integration_parameters.num_solver_iterations = cfg.solver_iterations;
        world.integration_parameters.num_internal_pgs_iterations = cfg.pgs_iterations.max(1);
        // No colliders: continuous collision detection has nothing to sweep against, yet Rapier
        // tests every dynamic body for fast motion each step unless it is switched off.
        world.integration_parameters.max_ccd_substeps = 0;

        // The platform: a free body whose frame is the platform frame.
        let iso = pose.world_from_platform();
        let p = &robot.platform;
        let inertia = p.inertia.map(|x| x as f32);
        let inertia = Matrix::from_cols(
            Vector::new(inertia[(0, 0)], inertia[(1, 0)], inertia[(2, 0)]),
            Vector::new(inertia[(0, 1)], inertia[(1, 1)], inertia[(2, 1)]),
            Vector::new(inertia[(0, 2)], inertia[(1, 2)], inertia[(2, 2)]),
        );
        let platform = world.bodies.insert(
            RigidBodyBuilder::dynamic()
                .pose(Pose3::from_parts(
                    v3(&iso.translation.vector),
                    quat(&iso.rotation),
                ))
                .additional_mass_properties(MassProperties::with_inertia_matrix(
                    v3(&p.com),
                    p.mass as f32,
                    inertia,
                ))
                .can_sleep(false),
        );

        let link_mass = cfg.link_mass as f32;
        // Links sit on the joint axes: give them a small isotropic inertia (a 2 cm sphere).
        let link_inertia = 0.4 * link_mass * 0.02 * 0.02;
        let link = |world: &mut PhysicsWorld, at: Vector, rot: Rotation| {
            world.bodies.insert(
                RigidBodyBuilder::dynamic()
                    .pose(Pose3::from_parts(at, rot))
                    .additional_mass_properties(MassProperties::new(
                        Vector::ZERO,
                        link_mass,
                        Vector::splat(link_inertia),
                    ))
                    .gravity_scale(0.0)
                    .can_sleep(false),
            )
        };

        let rotation = pose.rotation();
        let mut chains = Vec::with_capacity(robot.cable_count());
        let mut stiffness = Vec::with_capacity(robot.cable_count());
        let mut damping = Vec::with_capacity(robot.cable_count());
        for (k, cable) in robot.cables.iter().enumerate() {
            let g = CableGeometry::new(cable, &pose.position, rotation.matrix());
            let length = g.length;
            if length < 1e-6 {
                return Err(SimError::Start(format!(
                    "cable {} ({}) has zero length",
                    k + 1,
                    cable.name
                )));
            }
            let u = -g.direction; // from a_i towards the platform anchor
            let azimuth = u.y.atan2(u.x);
            let elevation = (-u.z).atan2((u.x * u.x + u.y * u.y).sqrt()); // > 0: pointing down
            let a = v3(&cable.frame_anchor);
            let r_az = Rotation::from_rotation_z(azimuth as f32);
            let r_el = r_az * Rotation::from_rotation_y(elevation as f32); // its X axis is u
            let x_to_z = Rotation::from_rotation_y(-std::f32::consts::FRAC_PI_2); // maps X onto Z
            let x_to_y = Rotation::from_rotation_z(std::f32::consts::FRAC_PI_2); // maps X onto Y

            let root = world
                .bodies
                .insert(RigidBodyBuilder::fixed().pose(Pose3::from_translation(a)));
            let link_az = link(&mut world, a, r_az);
            let link_el = link(&mut world, a, r_el);
            let payout0 = rest[k];
            let stretch0 = length - payout0;
            // The prismatic links' bodies sit at the exit point (their coordinates start at 0
            // there): their mass then moves with the payout and the cable's axial motion only,
            // not with the platform's transverse motion, so it barely loads the platform.
            let winch_link = link(&mut world, a, r_el);
            let end_link = link(&mut world, a, r_el);
            if let Some(body) = world.bodies.get_mut(end_link) {
                // The last link carries the pull of tension mode straight to the platform; keep
                // its axial inertia small next to a light platform (silva4: 0.6 kg).
                body.set_additional_mass_properties(
                    MassProperties::new(
                        Vector::ZERO,
                        link_mass * 0.1,
                        Vector::splat(link_inertia * 0.1),
                    ),
                    false,
                );
            }

            // Joint frames encode the starting configuration (multibody coordinates start at 0):
            // frame2 = world_from_body2⁻¹ · world_from_body1 · frame1.
            let revolute = |frame1: Pose3, frame2: Pose3| {
                GenericJointBuilder::new(JointAxesMask::LOCKED_REVOLUTE_AXES)
                    .local_frame1(frame1)
                    .local_frame2(frame2)
                    .build()
            };
            let j_az = revolute(
                Pose3::from_rotation(x_to_z),
                Pose3::from_rotation(r_az.inverse() * x_to_z),
            );
            let j_el = revolute(
                Pose3::from_rotation(x_to_y),
                Pose3::from_rotation(r_el.inverse() * r_az * x_to_y),
            );
            let prismatic = |offset: f64| {
                GenericJointBuilder::new(JointAxesMask::LOCKED_PRISMATIC_AXES)
                    .local_frame1(Pose3::IDENTITY)
                    .local_frame2(Pose3::from_translation(Vector::new(
                        -offset as f32,
                        0.0,
                        0.0,
                    )))
                    .build()
            };
            let mb = &mut world.multibody_joints;
            let err = |what: &str| {
                SimError::Start(format!(
                    "cable {} ({}): cannot insert the {what} joint",
                    k + 1,
                    cable.name
                ))
            };
            mb.insert(root, link_az, j_az, true)
                .ok_or_else(|| err("azimuth"))?;
            mb.insert(link_az, link_el, j_el, true)
                .ok_or_else(|| err("elevation"))?;
            let winch = mb
                .insert(link_el, winch_link, prismatic(0.0), true)
                .ok_or_else(|| err("winch"))?;
            let spring = mb
                .insert(winch_link, end_link, prismatic(0.0), true)
                .ok_or_else(|| err("spring"))?;
            // Rapier gives new multibody DOFs a default damping; the chain's passive joints are
            // frictionless (seed 001), so clear it.
            if let Some((multibody, _)) = mb.get_mut(winch) {
                multibody.damping_mut().fill(0.0);
            }

            let closure = world.impulse_joints.insert(
                end_link,
                platform,
                SphericalJointBuilder::new()
                    .local_anchor1(Vector::new(length as f32, 0.0, 0.0))
                    .local_anchor2(v3(&cable.platform_anchor)),
                true,
            );
            stiffness.push(cable.stiffness_at(payout0));
            damping.push(cable.damping);
            chains.push(CableChain {
                winch,
                spring,
                end_link,
                closure,
                payout0,
                stretch0,
                integral: 0.0,
                frame_anchor: cable.frame_anchor,
            });
        }
        let mut model = ChainModel {
            world,
            platform,
            chains,
            dt_sub: config.dt / cfg.solver_iterations as f64,
            stiffness,
            damping,
            gains: robot.winch,
            config: *config,
            pulls: vec![0.0; robot.cable_count()],
            tension_mode: false,
        };
        model.update_springs();
        Ok(model)
    }

    /// Winch payout and spring stretch (coordinates plus offsets), and their rates.
    fn joint_state(&self, handle: MultibodyJointHandle) -> (f64, f64) {
        match self.world.multibody_joints.get(handle) {
            Some((mb, id)) => match mb.link(id) {
                Some(link) => {
                    let q = link.joint.coords()[0] as f64;
                    let v = mb
                        .generalized_velocity()
                        .get(link.assembly_id())
                        .copied()
                        .unwrap_or(0.0) as f64;
                    (q, v)
                }
                None => (0.0, 0.0),
            },
            None => (0.0, 0.0),
        }
    }

    fn set_axis(&mut self, handle: MultibodyJointHandle, stiffness: f64, rest: f64, damping: f64) {
        if let Some((mb, id)) = self.world.multibody_joints.get_mut(handle) {
            let dof = mb.link(id).map(|l| l.assembly_id());
            if let Some(link) = mb.link_mut(id) {
                link.joint.set_spring(0, stiffness as f32, rest as f32);
            }
            if let Some(dof) = dof
                && let Some(d) = mb.damping_mut().get_mut(dof)
            {
                *d = damping as f32;
            }
        }
    }

    /// Unilateral cable springs: stiffness and damping only while the cable is stretched and
    /// the spring-damper force is pulling.
    fn update_springs(&mut self) {
        for k in 0..self.chains.len() {
            let c = self.chains[k];
            let (q, v) = self.joint_state(c.spring);
            let stretch = c.stretch0 + q;
            let pulling = stretch > 0.0 && self.stiffness[k] * stretch + self.damping[k] * v > 0.0;
            let (kk, cc) = if pulling {
                (self.stiffness[k], self.damping[k])
            } else {
                (0.0, 0.0)
            };
            // Zero force at zero stretch: rest coordinate −stretch0.
            self.set_axis(c.spring, kk, -c.stretch0, cc);
        }
    }

    pub fn step(&mut self, drive: &ChainDrive, robot: &Robot, dt: f64) {
        let _ = robot;
        self.tension_mode = matches!(drive, ChainDrive::Tension(_));
        if !self.tension_mode {
            self.update_springs();
        }
        for k in 0..self.chains.len() {
            let c = self.chains[k];
            match drive {
                ChainDrive::Kinematic(target) => {
                    let (q, _) = self.joint_state(c.winch);
                    let velocity = (target[k] - c.payout0 - q) / dt;
                    self.set_kinematic(c.winch, velocity);
                }
                ChainDrive::Pid { set_points, rates } => {
                    let g = self.gains;
                    let (q, _) = self.joint_state(c.winch);
                    let error = (c.payout0 + q) - set_points[k];
                    self.chains[k].integral += error * dt;
                    let kp = g.kp.max(1e-9);
                    // −kp(q − rest) − kd·q̇ = kp(s_ref − s) + kd(ṡ_ref − ṡ) − ki∫e
                    let rest = set_points[k] - c.payout0 + (g.kd / kp) * rates[k]
                        - (g.ki / kp) * self.chains[k].integral;
                    self.set_axis(c.winch, g.kp, rest, g.kd);
                }
                ChainDrive::Tension(tensions) => {
                    // Seed 001's actuated prismatic: the commanded pull acts on the cable's
                    // last link, along the cable towards a_i; the winch is held and the cable
                    // spring is out of the loop (a torque-controlled drive holds the tension
                    // whatever the stretch).
                    self.set_kinematic(c.winch, 0.0);
                    self.set_axis(c.spring, 0.0, 0.0, 0.0);
                    let pull = tensions[k].max(0.0);
                    self.pulls[k] = pull;
                    if let Some(body) = self.world.bodies.get_mut(c.end_link) {
                        let towards_platform = body.rotation() * Vector::X;
                        body.reset_forces(false);
                        body.add_force(-towards_platform * pull as f32, true);
                    }
                }
            }
        }
        self.world.step();
    }

    fn set_kinematic(&mut self, handle: MultibodyJointHandle, velocity: f64) {
        if let Some((mb, id)) = self.world.multibody_joints.get_mut(handle) {
            let dof = mb.link(id).map(|l| l.assembly_id());
            if let Some(link) = mb.link_mut(id) {
                link.joint.kinematic = true;
            }
            if let Some(dof) = dof
                && let Some(v) = mb.generalized_velocity_mut().get_mut(dof)
            {
                *v = velocity as f32;
            }
        }
    }

    fn platform_body(&self) -> Option<&RigidBody> {
        self.world.bodies.get(self.platform)
    }

    pub fn orientation(&self) -> UnitQuaternion<f64> {
        self.platform_body()
            .map(|b| dquat(*b.rotation()))
            .unwrap_or_default()
    }

    pub fn pose(&self) -> Pose {
        self.platform_body().map(body_pose).unwrap_or_default()
    }

    /// Velocity of the platform origin and angular velocity (world).
    pub fn twist(&self) -> [f64; 6] {
        self.platform_body().map(body_twist).unwrap_or([0.0; 6])
    }

    /// Velocity of the centre of mass and angular velocity (world).
    pub fn com_velocity(&self) -> Vector6<f64> {
        self.platform_body()
            .map(body_com_velocity)
            .unwrap_or_else(Vector6::zeros)
    }

    /// Winch payouts, cable lengths (a_i to the platform anchor), spring tensions and
    /// closure-impulse tensions.
    pub fn fill_cables(
        &self,
        winch: &mut [f64],
        lengths: &mut [f64],
        tensions: &mut [f64],
        constraint: &mut [f64],
    ) {
        let Some(platform) = self.platform_body() else {
            return;
        };
        let iso = *platform.position();
        for (k, c) in self.chains.iter().enumerate() {
            let (qw, _) = self.joint_state(c.winch);
            let (qs, vs) = self.joint_state(c.spring);
            winch[k] = c.payout0 + qw;
            let stretch = c.stretch0 + qs;
            tensions[k] = if self.tension_mode {
                self.pulls[k]
            } else if stretch > 0.0 {
                (self.stiffness[k] * stretch + self.damping[k] * vs).max(0.0)
            } else {
                0.0
            };
            let anchor = self
                .world
                .impulse_joints
                .get(c.closure)
                .map(|j| j.data.local_anchor2())
                .unwrap_or(Vector::ZERO);
            let anchor_world = d3(iso.transform_point(anchor));
            lengths[k] = (c.frame_anchor - anchor_world).norm();
            constraint[k] = match self.world.impulse_joints.get(c.closure) {
                Some(j) => {
                    let impulse = Vector3::new(
                        j.impulses[0] as f64,
                        j.impulses[1] as f64,
                        j.impulses[2] as f64,
                    );
                    impulse.norm() / self.dt_sub
                }
                None => 0.0,
            };
        }
    }

    /// Largest closure gap (end link to platform anchor), with its cable.
    pub fn worst_drift(&self) -> Option<(usize, f64)> {
        let platform = self.platform_body()?;
        let iso = *platform.position();
        let mut worst: Option<(usize, f64)> = None;
        for (k, c) in self.chains.iter().enumerate() {
            let joint = self.world.impulse_joints.get(c.closure)?;
            let end = self
                .world
                .bodies
                .get(c.end_link)?
                .position()
                .transform_point(joint.data.local_anchor1());
            let gap = (end - iso.transform_point(joint.data.local_anchor2())).length() as f64;
            if worst.is_none_or(|(_, w)| gap > w) {
                worst = Some((k, gap));
            }
        }
        worst
    }
}
