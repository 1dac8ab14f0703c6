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
//! A cable over a swivel pulley (seed 003 modelled each pulley in CoppeliaSim as a passive
//! revolute joint with a rigid body) gets the same chain with its first two joints moved onto
//! the pulley: a passive swivel revolute about the pulley axis at the swivel point a_i (its
//! link is the pulley), then a revolute about the wheel's axle through the wheel's centre m_i
//! whose link carries the tangent point c_i (the arm's angle is the wrap β), then the two
//! prismatic joints along the free segment from c_i. The wrap is part of the active length:
//! the winch payout is measured from the swivel point, s = r·β + the free segment's unstretched
//! part, so the winch joint is driven to s − r·β, and the cable's tension acts on the arm with
//! the torque −T·r about the axle (the virtual work of T on r·δβ), which the free segment's
//! offset from the axle would otherwise leave unbalanced (the pull on the platform would then
//! tilt off the free segment by ~r/|p − m|, 1° on uvigo8-pulleys). Without a pulley the chain is
//! exactly the construction above.
//!
//! Measured choices (shared/notes/rapier-cable-models.md and benches/sim.rs):
//! - The cable spring is the multibody joint's implicit spring (`set_spring`) with the cable
//!   damper in the multibody's implicit damping; both are switched off while the cable is
//!   slack (unilateral: a cable never pushes). A joint *motor* used as the spring blows up
//!   (explicit) or acts rigid.
//! - The winch of `length` mode is the same implicit spring on the winch axis with stiffness
//!   kp, multibody damping kd, and the rest position shifted by (kd/kp)·ṡ_ref + (ki/kp)·∫e:
//!   force = kp·e + kd·ė + ki·∫e, a PID integrated implicitly (Rapier's motors are PD and
//!   explicit; the integral lives here; [`PlatformWorld::servo`]). In `ideal` mode the winch
//!   joint is kinematic: its velocity is set so that the payout lands exactly on the command
//!   each step.
//! - Intermediate links need mass for the solver: closure error grows like (dt/it)²/m. Their
//!   gravity is off (cables are massless in seeds 000/001); see `ChainConfig::link_mass`.

use super::rapier::{PlatformWorld, pose3, v3};
use super::{Actuation, Built, ModelEntry, PhysicalModel};
use crate::kinematics::{self, CableGeometry, Pose, PulleyGeometry, pulley};
use crate::robot::{Cable, GRAVITY, Pulley, Robot};
use crate::sim::motor::{DriveCommand, DriveLaw, DriveParams, ServoDrive};
use crate::sim::{ControlMode, SimConfig, SimError, SimState};
use nalgebra::{Isometry3, Matrix3, Rotation3, Translation3, UnitQuaternion, Vector3, Vector6};
use rapier3d::prelude::*;
#[cfg(test)]
use std::f64::consts::{PI, TAU};

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

impl ChainConfig {
    /// One substep with 10 PGS iterations: the cheapest setting that keeps the static error
    /// under 1 µm (see `pgs_iterations`); links of 0.2 kg.
    pub const DEFAULT: ChainConfig = ChainConfig {
        link_mass: 0.2,
        solver_iterations: 1,
        pgs_iterations: 10,
    };
}

impl Default for ChainConfig {
    fn default() -> Self {
        ChainConfig::DEFAULT
    }
}

/// The `chain` model in the [`MODELS`](super::MODELS) table.
pub(crate) const ENTRY: ModelEntry = ModelEntry {
    name: "chain",
    help: "seed 000's per-cable joint chain in Rapier: universal joint at the exit point, active \
           prismatic winch, passive prismatic spring-damper, spherical joint closing the loop on \
           the platform (robots with legs: the same construction leg by leg)",
    controls: &[
        ControlMode::Length,
        ControlMode::Ideal,
        ControlMode::Tension,
        ControlMode::Velocity,
        ControlMode::Torque,
    ],
    default_control: None,
    legs: true,
    needs_surrogate: false,
    not_swept: None,
    build,
};

fn build(robot: &Robot, config: &SimConfig, pose: &Pose) -> Result<Built, SimError> {
    if robot.is_cable_robot() {
        let model = ChainModel::new(robot, pose, config)?;
        Ok(Built::cables(Box::new(model), robot, config, pose))
    } else {
        super::legs::build(robot, config, pose)
    }
}

/// Handles of one cable's chain, as Rapier's idiom wants (one small struct per cable).
#[derive(Debug, Clone, Copy)]
struct CableChain {
    winch: MultibodyJointHandle,
    /// The winch joint's link: it carries the drive's reflected inertia and force (robots
    /// with drives).
    winch_link: RigidBodyHandle,
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
    /// The cable's swivel pulley, when it has one.
    wheel: Option<Wheel>,
}

/// The joints of a cable's swivel pulley (see the module doc). The swivel's handle and the
/// start angles are read by [`ChainModel::wheel_angles`], for the tests only so far.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(test), allow(dead_code))]
struct Wheel {
    /// The passive revolute about the swivel axis at a_i; coordinate γ − γ₀.
    swivel: MultibodyJointHandle,
    /// The passive revolute about the wheel's axle through m_i; coordinate β − β₀.
    arm: MultibodyJointHandle,
    /// The arm's link: the tangent point, X along the free segment, Y the axle.
    arm_link: RigidBodyHandle,
    pulley: Pulley,
    /// γ₀ and β₀ at the build pose, rad.
    swivel0: f64,
    wrap0: f64,
}

/// A revolute joint's angle is its coordinate along spatial axis 3 (about its frame's X).
const ANGLE: usize = 3;

/// The angles of a cable's swivel pulley in the chain, rad.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WheelAngles {
    /// γ in (−π, π]: the swivel joint's angle.
    pub swivel: f64,
    /// β: the arm joint's angle.
    pub wrap: f64,
}

/// Prismatic joints move along their X axis: spatial axis 0.
const AXIS: usize = 0;

pub(crate) struct ChainModel {
    scene: PlatformWorld,
    chains: Vec<CableChain>,
    stiffness: Vec<f64>,
    damping: Vec<f64>,
    config: SimConfig,
    /// Tension mode: the pulls applied in the last step, N.
    pulls: Vec<f64>,
    tension_mode: bool,
    /// The platform's centre-of-mass velocity after the previous step (for the residual).
    previous_velocity: Vector6<f64>,
    /// Whether any cable runs over a pulley.
    wheels: bool,
    /// Robots with drives: each winch's drive train and servo drive, the law of the step
    /// under way (applied as the winch link's force and its joint's implicit damping).
    drive_trains: Vec<DriveParams>,
    motors: Vec<ServoDrive>,
    laws: Vec<Option<(DriveCommand, DriveLaw)>>,
}

impl ChainModel {
    pub fn new(robot: &Robot, pose: &Pose, config: &SimConfig) -> Result<ChainModel, SimError> {
        let rest = kinematics::lengths(robot, pose);
        Self::build(robot, pose, &rest, config)
    }

    fn build(
        robot: &Robot,
        pose: &Pose,
        rest: &[f64],
        config: &SimConfig,
    ) -> Result<ChainModel, SimError> {
        let mut scene = PlatformWorld::new(robot, pose, config)?;
        let world = &mut scene.world;
        let platform = scene.platform;
        let link_mass = config.chain.link_mass as f32;
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
            if let (Some(pulley), Some(pg)) = (cable.pulley, g.pulley) {
                let chain = pulley_chain(
                    world,
                    &link,
                    platform,
                    (k, cable),
                    pulley,
                    &pg,
                    &g,
                    rest[k],
                    link_mass,
                    link_inertia,
                )?;
                stiffness.push(cable.stiffness_at(rest[k]));
                damping.push(cable.damping);
                chains.push(chain);
                continue;
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
            let link_az = link(world, a, r_az);
            let link_el = link(world, a, r_el);
            let payout0 = rest[k];
            let stretch0 = length - payout0;
            // The prismatic links' bodies sit at the exit point (their coordinates start at 0
            // there): their mass then moves with the payout and the cable's axial motion only,
            // not with the platform's transverse motion, so it barely loads the platform.
            let winch_link = link(world, a, r_el);
            let end_link = link(world, a, r_el);
            lighten(world, end_link, link_mass, link_inertia);

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
                winch_link,
                spring,
                end_link,
                closure,
                payout0,
                stretch0,
                integral: 0.0,
                frame_anchor: cable.frame_anchor,
                wheel: None,
            });
        }
        let wheels = chains.iter().any(|c| c.wheel.is_some());
        let mut model = ChainModel {
            scene,
            chains,
            stiffness,
            damping,
            config: config.clone(),
            pulls: vec![0.0; robot.cable_count()],
            tension_mode: false,
            previous_velocity: Vector6::zeros(),
            wheels,
            drive_trains: robot.drives.iter().map(DriveParams::of).collect(),
            motors: Vec::new(),
            laws: vec![None; robot.drives.len()],
        };
        // The drive's inertia J/ρ² moves with the payout: the winch link's mass.
        for (c, d) in model.chains.iter().zip(&robot.drives) {
            if let Some(body) = model.scene.world.bodies.get_mut(c.winch_link) {
                let mass = d.reflected_mass() as f32;
                body.set_additional_mass_properties(
                    MassProperties::new(
                        Vector::ZERO,
                        mass,
                        Vector::splat(0.4 * mass * 0.02 * 0.02),
                    ),
                    false,
                );
            }
        }
        model.update_springs();
        Ok(model)
    }

    /// Unilateral cable springs: stiffness and damping only while the cable is stretched and
    /// the spring-damper force is pulling.
    fn update_springs(&mut self) {
        for k in 0..self.chains.len() {
            let c = self.chains[k];
            let (q, v) = self.scene.joint_state(c.spring, AXIS);
            let stretch = c.stretch0 + q;
            let pulling = stretch > 0.0 && self.stiffness[k] * stretch + self.damping[k] * v > 0.0;
            let (kk, cc) = if pulling {
                (self.stiffness[k], self.damping[k])
            } else {
                (0.0, 0.0)
            };
            // Zero force at zero stretch: rest coordinate −stretch0.
            self.scene.set_spring(c.spring, AXIS, kk, -c.stretch0, cc);
        }
    }

    /// A servo drive's winch over the step: its law at the step's start, the force part on
    /// the winch link along the cable and the rate part as the joint's implicit damping (Rapier
    /// solves the step, so a drive saturated at the start rate gives its limit for the step).
    fn drive_winch(&mut self, k: usize, actuation: &Actuation, offset: f64, dt: f64) {
        let Some(command) = actuation.drive_command(k) else {
            return;
        };
        let c = self.chains[k];
        let (q, v) = self.scene.joint_state(c.winch, AXIS);
        let law = self.motors[k].law(&self.drive_trains[k], command, offset + q, v, dt);
        let (force, damping) = if law.saturated_at(v) {
            (law.force_at(v) + law.friction_force, law.friction_damping)
        } else {
            (
                law.motor_force + law.friction_force,
                law.motor_damping + law.friction_damping,
            )
        };
        self.scene.set_spring(c.winch, AXIS, 0.0, 0.0, damping);
        if let Some(body) = self.scene.world.bodies.get_mut(c.winch_link) {
            let towards_platform = body.rotation() * Vector::X;
            body.reset_forces(false);
            body.add_force(towards_platform * force as f32, true);
        }
        self.laws[k] = Some((command, law));
    }

    /// The payout at winch coordinate 0 now, m: `payout0`, plus r·(β − β₀) over a pulley (the
    /// payout counts from the swivel point, the winch joint holds the free segment's part).
    fn winch_offset(&self, c: &CableChain) -> f64 {
        match c.wheel {
            Some(w) => c.payout0 + w.pulley.radius * self.scene.joint_state(w.arm, ANGLE).0,
            None => c.payout0,
        }
    }

    /// The winches' payouts now, m.
    fn payouts(&self) -> Vec<f64> {
        self.chains
            .iter()
            .map(|c| self.winch_offset(c) + self.scene.joint_state(c.winch, AXIS).0)
            .collect()
    }

    /// Cable k's tension now: the pull in tension mode, else its spring-damper's (≥ 0), N.
    fn tension(&self, k: usize) -> f64 {
        let c = &self.chains[k];
        if self.tension_mode {
            return self.pulls[k];
        }
        let (qs, vs) = self.scene.joint_state(c.spring, AXIS);
        let stretch = c.stretch0 + qs;
        if stretch > 0.0 {
            (self.stiffness[k] * stretch + self.damping[k] * vs).max(0.0)
        } else {
            0.0
        }
    }

    /// The wrap's share of the cable's pull: the torque −T·r about each pulley arm's axle
    /// (set before each step; it stays on the arm's link until replaced).
    fn wheel_torques(&mut self) {
        for k in 0..self.chains.len() {
            let Some(w) = self.chains[k].wheel else {
                continue;
            };
            // Tension mode's pull acts on the last link and reaches the platform without
            // loading the arm; the springs' and winches' forces go through the arm.
            let torque = if self.tension_mode {
                0.0
            } else {
                self.tension(k) * w.pulley.radius
            };
            if let Some(body) = self.scene.world.bodies.get_mut(w.arm_link) {
                let axle = body.rotation() * Vector::Y;
                body.reset_torques(false);
                body.add_torque(-axle * torque as f32, true);
            }
        }
    }

    /// Per cable the swivel γ and wrap β of its pulley in the chain (None: a point exit).
    #[cfg(test)]
    pub(crate) fn wheel_angles(&self) -> Vec<Option<WheelAngles>> {
        self.chains
            .iter()
            .map(|c| {
                c.wheel.map(|w| {
                    let swivel = w.swivel0 + self.scene.joint_state(w.swivel, ANGLE).0;
                    WheelAngles {
                        swivel: (swivel + PI).rem_euclid(TAU) - PI,
                        wrap: w.wrap0 + self.scene.joint_state(w.arm, ANGLE).0,
                    }
                })
            })
            .collect()
    }
}

/// The last link of a cable's chain at a tenth of a link's mass and inertia: it carries the
/// pull of tension mode straight to the platform, so its axial inertia stays small next to a
/// light platform (silva4: 0.6 kg). The same for a point exit and over a pulley.
fn lighten(world: &mut PhysicsWorld, end_link: RigidBodyHandle, link_mass: f32, link_inertia: f32) {
    if let Some(body) = world.bodies.get_mut(end_link) {
        body.set_additional_mass_properties(
            MassProperties::new(
                Vector::ZERO,
                link_mass * 0.1,
                Vector::splat(link_inertia * 0.1),
            ),
            false,
        );
    }
}

/// A cable's chain over its swivel pulley (module doc): fixed root at a_i → swivel revolute
/// (the pulley) → arm revolute about the axle through m_i (the tangent point) → prismatic
/// winch → prismatic spring-damper → end link, closed on the platform at b_i.
#[allow(clippy::too_many_arguments)]
fn pulley_chain(
    world: &mut PhysicsWorld,
    link: &dyn Fn(&mut PhysicsWorld, Vector, Rotation) -> RigidBodyHandle,
    platform: RigidBodyHandle,
    (k, cable): (usize, &Cable),
    pulley: Pulley,
    pg: &PulleyGeometry,
    g: &CableGeometry,
    payout0: f64,
    link_mass: f32,
    link_inertia: f32,
) -> Result<CableChain, SimError> {
    let a = cable.frame_anchor;
    let z = pulley.axis;
    let radial = pg.radial;
    let along = -g.direction; // the free segment, from the tangent point to the platform anchor
    let axle = radial.cross(&z); // turning the arm about it by +δ adds δ to the wrap
    // A frame at `at` with X along `x` and Y along `y` (orthonormal).
    let frame = |at: Vector3<f64>, x: Vector3<f64>, y: Vector3<f64>| {
        let r = Rotation3::from_matrix_unchecked(Matrix3::from_columns(&[x, y, x.cross(&y)]));
        Isometry3::from_parts(
            Translation3::from(at),
            UnitQuaternion::from_rotation_matrix(&r),
        )
    };
    let root_pose = Isometry3::translation(a.x, a.y, a.z);
    let pulley_pose = frame(a, radial, z.cross(&radial)); // Z along the swivel axis
    let arm_pose = frame(pg.tangent, along, axle); // Z along the wheel's radius at c_i
    let place = |world: &mut PhysicsWorld, at: &Isometry3<f64>| {
        let p = pose3(at);
        link(world, p.translation, p.rotation)
    };
    let root = world
        .bodies
        .insert(RigidBodyBuilder::fixed().pose(pose3(&root_pose)));
    let pulley_link = place(world, &pulley_pose);
    let arm_link = place(world, &arm_pose);
    let winch_link = place(world, &arm_pose);
    let end_link = place(world, &arm_pose);
    lighten(world, end_link, link_mass, link_inertia);
    // A joint whose frame is `joint` (world; it moves along or about its X axis) between
    // bodies posed at `b1` and `b2` (coordinates start at 0 in this configuration).
    let joint =
        |mask: JointAxesMask, b1: &Isometry3<f64>, b2: &Isometry3<f64>, joint: &Isometry3<f64>| {
            GenericJointBuilder::new(mask)
                .local_frame1(pose3(&(b1.inverse() * joint)))
                .local_frame2(pose3(&(b2.inverse() * joint)))
                .build()
        };
    let swivel_joint = joint(
        JointAxesMask::LOCKED_REVOLUTE_AXES,
        &root_pose,
        &pulley_pose,
        &frame(a, z, radial),
    );
    let arm_joint = joint(
        JointAxesMask::LOCKED_REVOLUTE_AXES,
        &pulley_pose,
        &arm_pose,
        &frame(pg.center, axle, along),
    );
    let prismatic = joint(
        JointAxesMask::LOCKED_PRISMATIC_AXES,
        &arm_pose,
        &arm_pose,
        &arm_pose,
    );
    let mb = &mut world.multibody_joints;
    let err = |what: &str| {
        SimError::Start(format!(
            "cable {} ({}): cannot insert the {what} joint",
            k + 1,
            cable.name
        ))
    };
    let swivel = mb
        .insert(root, pulley_link, swivel_joint, true)
        .ok_or_else(|| err("swivel"))?;
    let arm = mb
        .insert(pulley_link, arm_link, arm_joint, true)
        .ok_or_else(|| err("pulley arm"))?;
    let winch = mb
        .insert(arm_link, winch_link, prismatic, true)
        .ok_or_else(|| err("winch"))?;
    let spring = mb
        .insert(winch_link, end_link, prismatic, true)
        .ok_or_else(|| err("spring"))?;
    if let Some((multibody, _)) = mb.get_mut(winch) {
        multibody.damping_mut().fill(0.0);
    }
    let closure = world.impulse_joints.insert(
        end_link,
        platform,
        SphericalJointBuilder::new()
            .local_anchor1(Vector::new(pg.free_length as f32, 0.0, 0.0))
            .local_anchor2(v3(&cable.platform_anchor)),
        true,
    );
    Ok(CableChain {
        winch,
        winch_link,
        spring,
        end_link,
        closure,
        payout0,
        stretch0: g.length - payout0,
        integral: 0.0,
        frame_anchor: a,
        wheel: Some(Wheel {
            swivel,
            arm,
            arm_link,
            pulley,
            swivel0: pg.swivel,
            wrap0: pg.wrap,
        }),
    })
}

impl PhysicalModel for ChainModel {
    fn place(
        &mut self,
        robot: &Robot,
        pose: &Pose,
        actuators: &[f64],
        _hold: &Actuation,
    ) -> Result<(), SimError> {
        let config = self.config.clone();
        *self = Self::build(robot, pose, actuators, &config)?;
        // The drives start holding their cables' static tensions.
        self.motors = (0..self.drive_trains.len())
            .map(|k| ServoDrive::holding(&self.drive_trains[k].drive, self.tension(k)))
            .collect();
        Ok(())
    }

    fn move_platform(&mut self, robot: &Robot, pose: &Pose) -> Result<(), SimError> {
        let payouts = self.payouts();
        let config = self.config.clone();
        let motors = std::mem::take(&mut self.motors);
        *self = Self::build(robot, pose, &payouts, &config)?;
        self.motors = motors;
        Ok(())
    }

    fn step(&mut self, robot: &Robot, actuation: &Actuation, _demand: Option<&Pose>, dt: f64) {
        self.tension_mode = matches!(actuation, Actuation::Pull(_));
        if !self.tension_mode {
            self.update_springs();
        }
        for k in 0..self.chains.len() {
            let c = self.chains[k];
            let offset = self.winch_offset(&c);
            match *actuation {
                Actuation::Follow { positions, .. } => {
                    self.scene.follow(c.winch, AXIS, offset, positions[k], dt);
                }
                Actuation::Servo { .. } | Actuation::Rate(_) | Actuation::Torque(_)
                    if !self.motors.is_empty() =>
                {
                    self.drive_winch(k, actuation, offset, dt);
                }
                // Refused without drives when the model is built.
                Actuation::Rate(_) | Actuation::Torque(_) => {}
                Actuation::Servo { set_points, rates } => {
                    let integral = &mut self.chains[k].integral;
                    self.scene.servo(
                        c.winch,
                        AXIS,
                        offset,
                        integral,
                        true,
                        set_points[k],
                        rates[k],
                        &robot.winch,
                        dt,
                    );
                }
                Actuation::Pull(tensions) => {
                    // Seed 001's actuated prismatic: the commanded pull acts on the cable's
                    // last link, along the cable towards a_i; the winch is held and the cable
                    // spring is out of the loop (a torque-controlled drive holds the tension
                    // whatever the stretch).
                    self.scene.set_kinematic(c.winch, 0.0);
                    self.scene.set_spring(c.spring, AXIS, 0.0, 0.0, 0.0);
                    let pull = tensions[k].max(0.0);
                    self.pulls[k] = pull;
                    if let Some(body) = self.scene.world.bodies.get_mut(c.end_link) {
                        let towards_platform = body.rotation() * Vector::X;
                        body.reset_forces(false);
                        body.add_force(-towards_platform * pull as f32, true);
                    }
                }
            }
        }
        if self.wheels {
            self.wheel_torques();
        }
        self.scene.world.step();
    }

    fn write_back(&mut self, robot: &Robot, s: &mut SimState, stepped: Option<f64>) {
        let before = s.pose;
        s.pose = self.scene.pose();
        s.twist = self.scene.twist();
        for (k, c) in self.chains.iter().enumerate() {
            let (qw, vw) = self.scene.joint_state(c.winch, AXIS);
            s.winch[k] = self.winch_offset(c) + qw;
            // After a step: the servo drive's loops from the payout and rate its winch reached.
            if let Some((command, law)) = self.laws.get_mut(k).and_then(Option::take) {
                self.motors[k].finish(&self.drive_trains[k], &law, command, s.winch[k], vw);
            }
            s.tensions[k] = self.tension(k);
            if let Some(anchor) = self.scene.closure_point(c.closure) {
                // The geometric length at the reached platform anchor (over a pulley r·β + the
                // free segment, as the inverse kinematics has it).
                s.lengths[k] = match &c.wheel {
                    Some(w) => {
                        let g = pulley::wrap(&w.pulley, &c.frame_anchor, &anchor);
                        g.wrapped_length + g.free_length
                    }
                    None => (c.frame_anchor - anchor).norm(),
                };
            }
            s.tensions_constraint[k] = self.scene.closure_force(c.closure);
        }
        for (k, m) in self.motors.iter().enumerate() {
            s.motor_torques[k] = m.torque;
            s.motor_velocities[k] = m.velocity;
            s.following_errors[k] = m.following_error;
        }
        let velocity = self.scene.com_velocity();
        s.wrench_residual = match stepped {
            Some(dt) => newton_euler_residual(
                robot,
                &before,
                &s.tensions,
                &self.previous_velocity,
                &velocity,
                self.scene.orientation(),
                dt,
            ),
            None => 0.0,
        };
        self.previous_velocity = velocity;
    }

    fn worst_gap(&self) -> Option<(usize, f64)> {
        self.scene
            .worst_gap(self.chains.iter().map(|c| (c.closure, c.end_link)))
    }
}

/// Newton–Euler residual about the centre of mass for the tensions of the last step.
fn newton_euler_residual(
    robot: &Robot,
    pose: &Pose,
    tensions: &[f64],
    v0: &Vector6<f64>,
    v1: &Vector6<f64>,
    orientation: UnitQuaternion<f64>,
    dt: f64,
) -> f64 {
    let ik = kinematics::inverse(robot, pose);
    let com_arm = pose.rotation() * robot.platform.com;
    let mut force = Vector3::new(0.0, 0.0, -robot.platform.mass * GRAVITY);
    let mut torque = Vector3::zeros();
    for (g, f) in ik.cables.iter().zip(tensions) {
        force += g.direction * *f;
        torque += (g.arm - com_arm).cross(&g.direction) * *f;
    }
    let rot = orientation.to_rotation_matrix();
    let inertia = rot.matrix() * robot.platform.inertia * rot.matrix().transpose();
    let a = (v1.fixed_rows::<3>(0) - v0.fixed_rows::<3>(0)) / dt;
    let w0 = v0.fixed_rows::<3>(3).into_owned();
    let w1 = v1.fixed_rows::<3>(3).into_owned();
    let alpha = (w1 - w0) / dt;
    let lin = force - a * robot.platform.mass;
    let ang = torque - inertia * alpha - w1.cross(&(inertia * w1));
    (lin.norm_squared() + ang.norm_squared()).sqrt()
}

#[cfg(test)]
mod tests;
