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
    /// arm × direction: the moment of a unit tension about the centre of mass.
    pub moment: Vector3<f64>,
}

#[derive(Debug, Clone)]
pub(crate) struct ElasticModel {
    cables: Vec<CableData>,
    mass: f64,
    inertia_body: Matrix3<f64>,
    inverse_inertia_body: Matrix3<f64>,
    com_body: Vector3<f64>,
    // State: centre of mass, its velocity, orientation, angular velocity (world axes).
    pub com: Vector3<f64>,
    pub velocity: Vector3<f64>,
    pub orientation: UnitQuaternion<f64>,
    pub omega: Vector3<f64>,
    /// Tension of each cable during the last step, N.
    pub tensions: Vec<f64>,
    /// |Δ(momentum)/dt − applied cable and gravity wrench| of the last step (N, N·m):
    /// rounding only, by construction of the momentum-form kicks.
    pub residual: f64,
    now: Vec<CableNow>,
    // Cached with the orientation: R, I_w = R I Rᵀ and its inverse.
    rotation: Matrix3<f64>,
    inertia_world: Matrix3<f64>,
    inverse_inertia_world: Matrix3<f64>,
    /// Cholesky factor of M + h·C for the current geometry, step and set of damped cables:
    /// the second half kick of a step and the first of the next share it.
    factor: Option<(u64, f64, nalgebra::Cholesky<f64, nalgebra::U6>)>,
}

impl ElasticModel {
    pub fn new(robot: &Robot, pose: &Pose) -> ElasticModel {
        let cables = robot
            .cables
            .iter()
            .map(|c| CableData {
                frame_anchor: c.frame_anchor,
                platform_anchor: c.platform_anchor - robot.platform.com,
                stiffness: c.stiffness,
                damping: c.damping,
            })
            .collect::<Vec<_>>();
        let n = cables.len();
        let inertia_body = robot.platform.inertia;
        // Validated positive definite when the robot file was read.
        let inverse_inertia_body = inertia_body.try_inverse().unwrap_or_else(Matrix3::identity);
        let mut model = ElasticModel {
            cables,
            mass: robot.platform.mass,
            inertia_body,
            inverse_inertia_body,
            com_body: robot.platform.com,
            com: Vector3::zeros(),
            velocity: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
            omega: Vector3::zeros(),
            tensions: vec![0.0; n],
            residual: 0.0,
            now: vec![CableNow::default(); n],
            rotation: Matrix3::identity(),
            inertia_world: inertia_body,
            inverse_inertia_world: inverse_inertia_body,
            factor: None,
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
        self.cache_orientation();
        self.observe();
        self.factor = None;
    }

    fn cache_orientation(&mut self) {
        let r = *self.orientation.to_rotation_matrix().matrix();
        self.rotation = r;
        self.inertia_world = r * self.inertia_body * r.transpose();
        self.inverse_inertia_world = r * self.inverse_inertia_body * r.transpose();
    }

    pub fn pose(&self) -> Pose {
        let r = self.rotation * self.com_body;
        let (roll, pitch, yaw) = self.orientation.euler_angles();
        Pose {
            position: self.com - r,
            rpy: Vector3::new(roll, pitch, yaw),
        }
    }

    /// Velocity of the platform origin and angular velocity, world axes.
    pub fn twist(&self) -> [f64; 6] {
        let r = self.rotation * self.com_body;
        let v = self.velocity - self.omega.cross(&r);
        [v.x, v.y, v.z, self.omega.x, self.omega.y, self.omega.z]
    }

    pub fn cables_now(&self) -> &[CableNow] {
        &self.now
    }

    /// Recomputes the cable geometry of the current state.
    pub fn observe(&mut self) {
        for (c, now) in self.cables.iter().zip(self.now.iter_mut()) {
            let arm = self.rotation * c.platform_anchor;
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
                moment: arm.cross(&direction),
            };
        }
    }

    /// Kinetic + elastic + gravitational energy for given rest lengths (J).
    pub fn energy(&self, rest: &[f64]) -> f64 {
        let kinetic = 0.5 * self.mass * self.velocity.norm_squared()
            + 0.5 * self.omega.dot(&(self.inertia_world * self.omega));
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
        let first = self.kick(drive, 0.5 * dt);
        // Drift: translate with v, rotate with ω, keeping L = I_w ω.
        let momentum = self.inertia_world * self.omega;
        self.com += self.velocity * dt;
        self.orientation = UnitQuaternion::from_scaled_axis(self.omega * dt) * self.orientation;
        self.orientation.renormalize_fast();
        self.cache_orientation();
        self.omega = self.inverse_inertia_world * momentum;
        self.observe();
        self.factor = None;
        let second = self.kick(drive, 0.5 * dt);
        self.residual = (first + second).sqrt();
    }

    /// Changes the momenta by the cable and gravity forces over `h`, dampers implicit:
    /// (M + h·C) V⁺ = M V + h·F. Leaves the tensions of the kick in `self.tensions` and returns
    /// the squared mismatch between the momentum change and h·(applied wrench).
    fn kick(&mut self, drive: &CableDrive, h: f64) -> f64 {
        let mut force = Vector3::new(0.0, 0.0, -self.mass * GRAVITY);
        let mut torque = Vector3::zeros();
        // Bit k set: cable k's damper acts (its row enters C).
        let mut damped: u64 = 0;
        for (i, (c, now)) in self.cables.iter().zip(&self.now).enumerate() {
            // The cable's unit wrench g = [d; r×d]; its length rate is −g·V.
            let explicit = match drive {
                CableDrive::Tension(t) => t[i].max(0.0),
                CableDrive::Rest { lengths, rates } => {
                    let l0 = lengths[i];
                    let stretch = now.length - l0;
                    let spring = stiffness(c.stiffness, l0) * stretch;
                    // Taut and pulling (a cable cannot push, not even through its damper).
                    if stretch <= 0.0 || spring + c.damping * (now.length_rate - rates[i]) <= 0.0 {
                        0.0
                    } else {
                        if c.damping > 0.0 {
                            damped |= 1 << i.min(63);
                        }
                        spring - c.damping * rates[i]
                    }
                }
            };
            force += now.direction * explicit;
            torque += now.moment * explicit;
        }
        let (v0, w0) = (self.velocity, self.omega);
        if damped != 0 {
            let reuse =
                matches!(&self.factor, Some((mask, step, _)) if *mask == damped && *step == h);
            if !reuse {
                // M + h·C, C = Σ c_k g_k g_kᵀ over the damped cables (lower triangle suffices).
                let mut lhs = Matrix6::<f64>::zeros();
                for (k, (c, now)) in self.cables.iter().zip(&self.now).enumerate() {
                    if damped & (1 << k.min(63)) == 0 {
                        continue;
                    }
                    let g = [
                        now.direction.x,
                        now.direction.y,
                        now.direction.z,
                        now.moment.x,
                        now.moment.y,
                        now.moment.z,
                    ];
                    let ch = c.damping * h;
                    for col in 0..6 {
                        let gc = g[col] * ch;
                        for row in col..6 {
                            lhs[(row, col)] += g[row] * gc;
                        }
                    }
                }
                for k in 0..3 {
                    lhs[(k, k)] += self.mass;
                    for j in 0..=k {
                        lhs[(3 + k, 3 + j)] += self.inertia_world[(k, j)];
                    }
                }
                self.factor = lhs.cholesky().map(|f| (damped, h, f));
            }
            let p = self.velocity * self.mass + force * h;
            let l = self.inertia_world * self.omega + torque * h;
            let rhs = Vector6::new(p.x, p.y, p.z, l.x, l.y, l.z);
            if let Some((_, _, f)) = &self.factor {
                let v = f.solve(&rhs);
                self.velocity = v.fixed_rows::<3>(0).into_owned();
                self.omega = v.fixed_rows::<3>(3).into_owned();
            }
        } else {
            self.velocity += force * (h / self.mass);
            self.omega += self.inverse_inertia_world * (torque * h);
        }
        // Tensions over the kick (the damper at the new velocities), and the wrench they and
        // gravity apply, to check against the momentum change.
        let mut applied_f = Vector3::new(0.0, 0.0, -self.mass * GRAVITY);
        let mut applied_t = Vector3::zeros();
        for (i, (c, now)) in self.cables.iter().zip(self.now.iter_mut()).enumerate() {
            now.length_rate = -(now.direction.dot(&self.velocity) + now.moment.dot(&self.omega));
            let f = match drive {
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
            self.tensions[i] = f;
            applied_f += now.direction * f;
            applied_t += now.moment * f;
        }
        let dp = (self.velocity - v0) * (self.mass / h) - applied_f;
        let dl = (self.inertia_world * (self.omega - w0)) / h - applied_t;
        dp.norm_squared() + dl.norm_squared()
    }
}

pub(crate) fn stiffness(s: Stiffness, rest: f64) -> f64 {
    match s {
        Stiffness::Constant(k) => k,
        Stiffness::Ea(ea) => ea / rest.max(1e-9),
    }
}
