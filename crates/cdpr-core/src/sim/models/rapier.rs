//! What the two Rapier models (the cable chains and the rigid legs) share: the world and its
//! free platform body, the read-outs of that body, the drives of multibody joints (kinematic
//! or an implicit PID spring) and the closure gap. Rapier is f32 with glam types; everything
//! outside this module and its two users is f64 nalgebra.

use crate::kinematics::Pose;
use crate::robot::{GRAVITY, Robot, Winch};
use crate::sim::{SimConfig, SimError};
use nalgebra::{Isometry3, UnitQuaternion, Vector3, Vector6};
use rapier3d::prelude::*;

/// Constraint drift (closure gap) beyond which a run is stopped, m.
pub(crate) const MAX_DRIFT: f64 = 0.005;

pub(crate) fn v3(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x as f32, v.y as f32, v.z as f32)
}

pub(crate) fn d3(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x as f64, v.y as f64, v.z as f64)
}

pub(crate) fn quat(q: &UnitQuaternion<f64>) -> Rotation {
    Rotation::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32).normalize()
}

/// An f64 isometry in Rapier's f32 pose type.
pub(crate) fn pose3(iso: &Isometry3<f64>) -> Pose3 {
    Pose3::from_parts(v3(&iso.translation.vector), quat(&iso.rotation))
}

fn dquat(q: Rotation) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
        q.w as f64, q.x as f64, q.y as f64, q.z as f64,
    ))
}

/// A Rapier world holding the platform as a free body (its frame is the platform frame, its
/// mass properties the robot file's) and whatever a model hangs on it.
pub(crate) struct PlatformWorld {
    pub world: PhysicsWorld,
    pub platform: RigidBodyHandle,
    /// dt / substeps: closure impulses divided by it are forces.
    pub dt_sub: f64,
}

impl PlatformWorld {
    /// An empty world (gravity along −z, the config's step and iterations, no colliders and
    /// so no continuous collision detection) with the platform at rest at `pose`.
    pub fn new(robot: &Robot, pose: &Pose, config: &SimConfig) -> Result<PlatformWorld, SimError> {
        let chain = config.chain;
        if !(chain.link_mass > 0.0 && chain.solver_iterations >= 1) {
            return Err(SimError::Start(
                "chain link mass must be positive and solver iterations ≥ 1".into(),
            ));
        }
        let mut world = PhysicsWorld::new();
        world.gravity = Vector::new(0.0, 0.0, -GRAVITY as f32);
        world.integration_parameters.dt = config.dt as f32;
        world.integration_parameters.num_solver_iterations = chain.solver_iterations;
        world.integration_parameters.num_internal_pgs_iterations = chain.pgs_iterations.max(1);
        // No colliders: continuous collision detection has nothing to sweep against, yet Rapier
        // tests every dynamic body for fast motion each step unless it is switched off.
        world.integration_parameters.max_ccd_substeps = 0;

        let iso = pose.world_from_platform();
        let p = &robot.platform;
        let i = p.inertia.map(|x| x as f32);
        let inertia = Matrix::from_cols(
            Vector::new(i[(0, 0)], i[(1, 0)], i[(2, 0)]),
            Vector::new(i[(0, 1)], i[(1, 1)], i[(2, 1)]),
            Vector::new(i[(0, 2)], i[(1, 2)], i[(2, 2)]),
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
        Ok(PlatformWorld {
            world,
            platform,
            dt_sub: config.dt / chain.solver_iterations as f64,
        })
    }

    fn platform_body(&self) -> Option<&RigidBody> {
        self.world.bodies.get(self.platform)
    }

    /// World from platform, in Rapier's f32.
    pub fn platform_pose(&self) -> Option<Pose3> {
        self.platform_body().map(|b| *b.position())
    }

    pub fn orientation(&self) -> UnitQuaternion<f64> {
        self.platform_body()
            .map(|b| dquat(*b.rotation()))
            .unwrap_or_default()
    }

    /// The platform frame's origin and orientation as a pose.
    pub fn pose(&self) -> Pose {
        self.platform_body()
            .map(|b| {
                Pose::from_rotation(
                    d3(b.translation()),
                    &dquat(*b.rotation()).to_rotation_matrix(),
                )
            })
            .unwrap_or_default()
    }

    /// Velocity of the platform frame's origin and angular velocity (world).
    pub fn twist(&self) -> [f64; 6] {
        self.platform_body()
            .map(|b| {
                let w = d3(b.angvel());
                let v = d3(b.linvel()) + w.cross(&(d3(b.translation()) - d3(b.center_of_mass())));
                [v.x, v.y, v.z, w.x, w.y, w.z]
            })
            .unwrap_or([0.0; 6])
    }

    /// Velocity of the platform's centre of mass and angular velocity (world).
    pub fn com_velocity(&self) -> Vector6<f64> {
        self.platform_body()
            .map(|b| {
                let (v, w) = (d3(b.linvel()), d3(b.angvel()));
                Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z)
            })
            .unwrap_or_else(Vector6::zeros)
    }

    /// Where closure `joint` meets the platform (world, m).
    pub fn closure_point(&self, joint: ImpulseJointHandle) -> Option<Vector3<f64>> {
        let platform = self.platform_pose()?;
        let j = self.world.impulse_joints.get(joint)?;
        Some(d3(platform.transform_point(j.data.local_anchor2())))
    }

    /// The force a closure transmits: its impulse over one substep, N.
    pub fn closure_force(&self, joint: ImpulseJointHandle) -> f64 {
        match self.world.impulse_joints.get(joint) {
            Some(j) => {
                let i = j.impulses;
                (i[0] as f64).hypot(i[1] as f64).hypot(i[2] as f64) / self.dt_sub
            }
            None => 0.0,
        }
    }

    /// The force a closure transmits in its first body's joint frame (for a cable's chain: X
    /// along the free segment), N.
    #[cfg(test)]
    pub fn closure_force_local(&self, joint: ImpulseJointHandle) -> Vector3<f64> {
        match self.world.impulse_joints.get(joint) {
            Some(j) => {
                let i = j.impulses;
                Vector3::new(i[0] as f64, i[1] as f64, i[2] as f64) / self.dt_sub
            }
            None => Vector3::zeros(),
        }
    }

    /// The largest gap between a chain's last link and the platform, over `closures` (each
    /// the closing joint and the link it starts from), with its index.
    pub fn worst_gap(
        &self,
        closures: impl Iterator<Item = (ImpulseJointHandle, RigidBodyHandle)>,
    ) -> Option<(usize, f64)> {
        let platform = self.platform_pose()?;
        let mut worst: Option<(usize, f64)> = None;
        for (k, (closure, last)) in closures.enumerate() {
            let joint = self.world.impulse_joints.get(closure)?;
            let end = self
                .world
                .bodies
                .get(last)?
                .position()
                .transform_point(joint.data.local_anchor1());
            let gap = (end - platform.transform_point(joint.data.local_anchor2())).length() as f64;
            if worst.is_none_or(|(_, w)| gap > w) {
                worst = Some((k, gap));
            }
        }
        worst
    }

    /// A multibody joint's coordinate along spatial `axis` (0–2 linear, 3–5 angular) and its
    /// generalised velocity.
    pub fn joint_state(&self, joint: MultibodyJointHandle, axis: usize) -> (f64, f64) {
        let Some((mb, id)) = self.world.multibody_joints.get(joint) else {
            return (0.0, 0.0);
        };
        let Some(link) = mb.link(id) else {
            return (0.0, 0.0);
        };
        let q = link.joint.coords()[axis] as f64;
        let v = mb
            .generalized_velocity()
            .get(link.assembly_id())
            .copied()
            .unwrap_or(0.0) as f64;
        (q, v)
    }

    /// Makes a multibody joint kinematic, moving at `velocity` this step.
    pub fn set_kinematic(&mut self, joint: MultibodyJointHandle, velocity: f64) {
        if let Some((mb, id)) = self.world.multibody_joints.get_mut(joint) {
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

    /// The joint's implicit spring along `axis` (stiffness, rest coordinate) and the
    /// multibody's implicit damping of that DOF.
    pub fn set_spring(
        &mut self,
        joint: MultibodyJointHandle,
        axis: usize,
        stiffness: f64,
        rest: f64,
        damping: f64,
    ) {
        if let Some((mb, id)) = self.world.multibody_joints.get_mut(joint) {
            let dof = mb.link(id).map(|l| l.assembly_id());
            if let Some(link) = mb.link_mut(id) {
                link.joint.set_spring(axis, stiffness as f32, rest as f32);
            }
            if let Some(dof) = dof
                && let Some(d) = mb.damping_mut().get_mut(dof)
            {
                *d = damping as f32;
            }
        }
    }

    /// `length` mode's drive on a multibody joint: the implicit spring with stiffness kp and
    /// damping kd, its rest shifted by (kd/kp)·ṡ_ref − (ki/kp)·∫e, so that the joint force is
    /// kp·e + kd·ė + ki·∫e integrated implicitly (Rapier's motors are PD and explicit; the
    /// integral lives in `integral`, advanced when `integrate`). `offset` is the actuator
    /// value at joint coordinate 0.
    #[allow(clippy::too_many_arguments)]
    pub fn servo(
        &mut self,
        joint: MultibodyJointHandle,
        axis: usize,
        offset: f64,
        integral: &mut f64,
        integrate: bool,
        set_point: f64,
        rate: f64,
        gains: &Winch,
        dt: f64,
    ) {
        let (q, _) = self.joint_state(joint, axis);
        if integrate {
            *integral += (offset + q - set_point) * dt;
        }
        let kp = gains.kp.max(1e-9);
        // −kp(q − rest) − kd·q̇ = kp(s_ref − s) + kd(ṡ_ref − ṡ) − ki∫e
        let rest = set_point - offset + (gains.kd / kp) * rate - (gains.ki / kp) * *integral;
        self.set_spring(joint, axis, gains.kp, rest, gains.kd);
    }

    /// `ideal` mode's drive: the joint velocity that lands its actuator value on `target`.
    pub fn follow(
        &mut self,
        joint: MultibodyJointHandle,
        axis: usize,
        offset: f64,
        target: f64,
        dt: f64,
    ) {
        let (q, _) = self.joint_state(joint, axis);
        self.set_kinematic(joint, (target - offset - q) / dt);
    }
}
