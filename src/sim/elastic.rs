//! The platform-only model (`model = elastic`): one rigid body, each cable a unilateral
//! spring-damper force element between its exit point a_i and the platform anchor, as in
//! CASPR's and MuJoCo's tendon models.
//!
//! Integrated in f64 by a Störmer–Verlet splitting (see [`ElasticModel::step`]) with the
//! cable dampers treated implicitly — as MuJoCo does — so that stiff dampers on a light
//! platform (c·dt·r²/I ≈ 1 on silva4) stay stable. The springs stay explicit and symplectic:
//! the undamped model conserves energy (tested).
//! This model does not go through Rapier: one body needs no constraint solver, and the
//! hand-rolled step costs a fraction of a Rapier step (see benches/sim.rs).

use crate::kinematics::Pose;
use crate::robot::{GRAVITY, Robot, Stiffness};
use nalgebra::{Matrix3, Matrix6, UnitQuaternion, Vector3, Vector6};

/// What the cables do this step.
pub(crate) enum CableDrive<'a> {
    /// Elastic cables with these rest lengths (m) and their rates (m/s).
    Rest {
        lengths: &'a [f64],
        rates: &'a [f64],
    },
    /// Tensions imposed directly (N); negative values are clipped to zero (seed 001).
    Tension(&'a [f64]),
}

#[derive(Debug, Clone)]
struct CableData {
    frame_anchor: Vector3<f64>,
    platform_anchor: Vector3<f64>,
    stiffness: Stiffness,
    damping: f64,
}

/// Geometry of one cable at the current state (filled by `observe`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CableNow {
    pub length: f64,
    /// dL/dt, m/s.
    pub length_rate: f64,
    pub direction: Vector3<f64>,
    /// Anchor relative to the centre of mass, world axes.
    pub arm: Vector3<f64>,
}

#[derive(Debug, Clone)]
pub(crate) struct ElasticModel {
    cables: Vec<CableData>,
    mass: f64,
    inertia_body: Matrix3<f64>,
    com_body: Vector3<f64>,
    // State: centre of mass, its velocity, orientation, angular velocity (world axes).
    pub com: Vector3<f64>,
    pub velocity: Vector3<f64>,
    pub orientation: UnitQuaternion<f64>,
    pub omega: Vector3<f64>,
    /// Tension of each cable during the last step, N.
    pub tensions: Vec<f64>,
    now: Vec<CableNow>,
}

impl ElasticModel {
    pub fn new(robot: &Robot, pose: &Pose) -> ElasticModel {
        let cables = robot
            .cables
            .iter()
            .map(|c| CableData {
                frame_anchor: c.frame_anchor,
                platform_anchor: c.platform_anchor,
                stiffness: c.stiffness,
                damping: c.damping,
            })
            .collect::<Vec<_>>();
        let n = cables.len();
        let mut model = ElasticModel {
            cables,
            mass: robot.platform.mass,
            inertia_body: robot.platform.inertia,
            com_body: robot.platform.com,
            com: Vector3::zeros(),
            velocity: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
            omega: Vector3::zeros(),
            tensions: vec![0.0; n],
            now: vec![CableNow::default(); n],
        };
        model.set_pose(pose);
        model
    }

    pub fn set_pose(&mut self, pose: &Pose) {
        let iso = pose.world_from_platform();
        self.orientation = iso.rotation;
        self.com = (iso * nalgebra::Point3::from(self.com_body)).coords;
        self.velocity = Vector3::zeros();
        self.omega = Vector3::zeros();
        self.observe();
    }

    pub fn pose(&self) -> Pose {
        let r = self.orientation * self.com_body;
        let (roll, pitch, yaw) = self.orientation.euler_angles();
        Pose {
            position: self.com - r,
            rpy: Vector3::new(roll, pitch, yaw),
        }
    }

    /// Velocity of the platform origin and angular velocity, world axes.
    pub fn twist(&self) -> [f64; 6] {
        let r = self.orientation * self.com_body;
        let v = self.velocity - self.omega.cross(&r);
        [v.x, v.y, v.z, self.omega.x, self.omega.y, self.omega.z]
    }

    pub fn cables_now(&self) -> &[CableNow] {
        &self.now
    }

    /// Recomputes the cable geometry of the current state.
    pub fn observe(&mut self) {
        let rot = self.orientation.to_rotation_matrix();
        for (c, now) in self.cables.iter().zip(self.now.iter_mut()) {
            let arm = rot * (c.platform_anchor - self.com_body);
            let l = c.frame_anchor - (self.com + arm);
            let length = l.norm();
            let direction = if length > 1e-12 {
                l / length
            } else {
                Vector3::zeros()
            };
            let anchor_velocity = self.velocity + self.omega.cross(&arm);
            *now = CableNow {
                length,
                length_rate: -direction.dot(&anchor_velocity),
                direction,
                arm,
            };
        }
    }

    fn inertia_world(&self) -> Matrix3<f64> {
        let r = self.orientation.to_rotation_matrix();
        r.matrix() * self.inertia_body * r.matrix().transpose()
    }

    /// Kinetic + elastic + gravitational energy for given rest lengths (J).
    pub fn energy(&self, rest: &[f64]) -> f64 {
        let kinetic = 0.5 * self.mass * self.velocity.norm_squared()
            + 0.5 * self.omega.dot(&(self.inertia_world() * self.omega));
        let elastic: f64 = self
            .cables
            .iter()
            .zip(&self.now)
            .zip(rest)
            .map(|((c, now), &l0)| {
                let k = stiffness(c.stiffness, l0);
                let e = (now.length - l0).max(0.0);
                0.5 * k * e * e
            })
            .sum();
        kinetic + elastic + self.mass * GRAVITY * self.com.z
    }

    /// Advances the platform by `dt` with a Störmer–Verlet (leapfrog) splitting: half kick,
    /// drift, half kick. The kicks are in momentum form (world angular momentum, so no explicit
    /// gyroscopic term) with the cable dampers implicit; the drift keeps the angular momentum.
    /// Second order and symplectic for the undamped system: energy errors of O((ω·dt)²)
    /// without drift, where semi-implicit Euler shows O(ω·dt) and drifts on the rotations.
    pub fn step(&mut self, drive: &CableDrive, dt: f64) {
        self.kick(drive, 0.5 * dt);
        // Drift: translate with v, rotate with ω, keeping L = I_w ω.
        let momentum = self.inertia_world() * self.omega;
        self.com += self.velocity * dt;
        self.orientation = UnitQuaternion::from_scaled_axis(self.omega * dt) * self.orientation;
        self.orientation.renormalize_fast();
        let inertia = self.inertia_world();
        self.omega = inertia
            .cholesky()
            .map(|c| c.solve(&momentum))
            .unwrap_or(self.omega);
        self.observe();
        self.kick(drive, 0.5 * dt);
    }

    /// Changes the momenta by the cable and gravity forces over `h`, dampers implicit:
    /// (M + h·C) V⁺ = M V + h·F. Leaves the tensions of the kick in `self.tensions`.
    fn kick(&mut self, drive: &CableDrive, h: f64) {
        let inertia = self.inertia_world();
        let mut force = Vector3::new(0.0, 0.0, -self.mass * GRAVITY);
        let mut torque = Vector3::zeros();
        let mut damping = Matrix6::<f64>::zeros();
        for (i, (c, now)) in self.cables.iter().zip(&self.now).enumerate() {
            let moment = now.arm.cross(&now.direction);
            // The cable's unit wrench g = [d; r×d]; its length rate is −g·V.
            let (explicit, c_damp) = match drive {
                CableDrive::Tension(t) => (t[i].max(0.0), 0.0),
                CableDrive::Rest { lengths, rates } => {
                    let l0 = lengths[i];
                    let stretch = now.length - l0;
                    let spring = stiffness(c.stiffness, l0) * stretch;
                    // Taut and pulling (a cable cannot push, not even through its damper).
                    if stretch <= 0.0 || spring + c.damping * (now.length_rate - rates[i]) <= 0.0 {
                        (0.0, 0.0)
                    } else {
                        (spring - c.damping * rates[i], c.damping)
                    }
                }
            };
            force += now.direction * explicit;
            torque += moment * explicit;
            if c_damp > 0.0 {
                let g = Vector6::new(
                    now.direction.x,
                    now.direction.y,
                    now.direction.z,
                    moment.x,
                    moment.y,
                    moment.z,
                );
                damping += g * g.transpose() * c_damp;
            }
        }
        let mut m = Matrix6::<f64>::zeros();
        m.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * self.mass));
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&inertia);
        let v = Vector6::new(
            self.velocity.x,
            self.velocity.y,
            self.velocity.z,
            self.omega.x,
            self.omega.y,
            self.omega.z,
        );
        let rhs = m * v + Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z) * h;
        let lhs = m + damping * h;
        let v_next = match lhs.cholesky() {
            Some(ch) => ch.solve(&rhs),
            None => rhs.component_div(&lhs.diagonal()),
        };
        self.velocity = v_next.fixed_rows::<3>(0).into_owned();
        self.omega = v_next.fixed_rows::<3>(3).into_owned();
        // Tensions over the kick, with the damper at the new velocities.
        for (i, (c, now)) in self.cables.iter().zip(self.now.iter_mut()).enumerate() {
            let moment = now.arm.cross(&now.direction);
            now.length_rate = -(now.direction.dot(&self.velocity) + moment.dot(&self.omega));
            self.tensions[i] = match drive {
                CableDrive::Tension(t) => t[i].max(0.0),
                CableDrive::Rest { lengths, rates } => {
                    let l0 = lengths[i];
                    let stretch = now.length - l0;
                    if stretch <= 0.0 {
                        0.0
                    } else {
                        (stiffness(c.stiffness, l0) * stretch
                            + c.damping * (now.length_rate - rates[i]))
                            .max(0.0)
                    }
                }
            };
        }
    }

    pub fn mass(&self) -> f64 {
        self.mass
    }
}

pub(crate) fn stiffness(s: Stiffness, rest: f64) -> f64 {
    match s {
        Stiffness::Constant(k) => k,
        Stiffness::Ea(ea) => ea / rest.max(1e-9),
    }
}
