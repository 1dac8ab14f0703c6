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
//!
//! Over a swivel pulley the cable's free segment starts at the pulley's tangent point, which
//! follows the platform every step (`kinematics::pulley::wrap`); the force on the platform acts
//! along it, and the wrapped r·β counts in the stretch: (r·β + free length) − payout. Without a
//! pulley the code path, and the numbers, are a point exit's. In `length` mode each PID drive
//! carries the winch-side tension: the cable's spring and damper times the capstan ratio
//! ([`crate::sim::capstan`]) at the drive's payout rate. With `cable_nodes` > 0 the cables with
//! mass are point masses ([`super::lumped`]), substepped together with the platform.

use super::lumped::{Axial, Ends, LumpedCable};
use super::{Actuation, Built, ModelEntry, PhysicalModel};
use crate::kinematics::{self, Pose, pulley};
use crate::robot::{GRAVITY, Pulley, Robot, Stiffness, Winch};
use crate::sim::capstan;
use crate::sim::motor::{DriveParams, ServoDrive};
use crate::sim::winch::PidWinch;
use crate::sim::{ControlMode, SimConfig, SimError, SimState};
use nalgebra::{Cholesky, Matrix3, Matrix6, Rotation3, U6, UnitQuaternion, Vector3, Vector6};

/// Drag on the nodes of cables with mass, 1/s (mass-proportional, against the world): the
/// air and the cable's internal friction damping its transverse swing, which the axial
/// dampers cannot. Assumed (no measurement): a transverse swing decays by e in 2/γ = 0.4 s.
pub(crate) const NODE_DRAG: f64 = 5.0;

/// What the cables do this step.
enum CableDrive<'a> {
    /// Elastic cables with these rest lengths (m) and their rates (m/s).
    Rest {
        lengths: &'a [f64],
        rates: &'a [f64],
    },
    /// Tensions imposed directly (N); negative values are clipped to zero (seed 001).
    Tension(&'a [f64]),
}

/// One cable: its fixed data, what drives it this step and its geometry at the current state,
/// together so that each pass of a step walks a single array.
#[derive(Debug, Clone)]
struct Cable {
    frame_anchor: Vector3<f64>,
    /// Relative to the centre of mass, platform frame.
    platform_anchor: Vector3<f64>,
    stiffness: Stiffness,
    damping: f64,
    // This step's drive: rest length (m), its rate (m/s) and the spring stiffness there
    // (N/m); or the tension imposed (N, ≥ 0).
    rest: f64,
    rest_rate: f64,
    spring: f64,
    tension: f64,
    // Geometry (filled by `observe`).
    length: f64,
    /// dL/dt, m/s.
    length_rate: f64,
    direction: Vector3<f64>,
    /// arm × direction: the moment of a unit tension about the centre of mass.
    moment: Vector3<f64>,
    /// The platform anchor relative to the centre of mass, world axes (filled by `observe`).
    arm: Vector3<f64>,
    /// The swivel pulley the cable leaves its frame over, and its wrap β at this state
    /// (rad; 0 without a pulley).
    pulley: Option<Pulley>,
    wrap: f64,
    /// Cables with mass and `cable_nodes` > 0: the point masses; the spring-damper above is
    /// then the segment between the last node and the platform anchor (`rest`, `spring`,
    /// `damping` per segment, `rest_rate` with the node's velocity).
    lumped: Option<LumpedCable>,
    /// kg/m, and the number of segments (N + 1; 1 without nodes).
    density: f64,
    segments: usize,
    /// The winch's payout rate per segment (rest_rate without the node's part), m/s.
    segment_rate: f64,
}

impl Cable {
    /// dL/dt = −g·[v; ω] with g = [d; r×d] the cable's unit wrench.
    fn length_rate(&self, velocity: &Vector3<f64>, omega: &Vector3<f64>) -> f64 {
        -(self.direction.dot(velocity) + self.moment.dot(omega))
    }
}

/// The Cholesky factor of M + h·C and what it was built for: the second half kick of a step
/// and the first of the next see the same geometry, so they share it when the half step and
/// the set of damped cables agree.
#[derive(Debug, Clone)]
struct Factor {
    /// Bit k set: cable k's damper entered C.
    damped: u64,
    h: f64,
    cholesky: Cholesky<f64, U6>,
}

/// The `elastic` model in the [`MODELS`](super::MODELS) table.
pub(crate) const ENTRY: ModelEntry = ModelEntry {
    name: "elastic",
    help: "the platform alone, each cable a unilateral spring-damper (fast; exact for massless \
           elastic cables; the chain's cross-check)",
    controls: &[
        ControlMode::Length,
        ControlMode::Ideal,
        ControlMode::Tension,
        ControlMode::Velocity,
        ControlMode::Torque,
    ],
    default_control: None,
    legs: false,
    needs_surrogate: false,
    not_swept: None,
    build,
};

fn build(robot: &Robot, config: &SimConfig, pose: &Pose) -> Result<Built, SimError> {
    if config.cable_nodes > 0 && config.control == ControlMode::Tension {
        return Err(SimError::Start(
            "cable nodes (cable_nodes > 0) need lengths (ideal or length mode): a commanded \
             tension has no segment to act on"
                .into(),
        ));
    }
    let model = ElasticModel::new(robot, pose, config.cable_nodes);
    Ok(Built::cables(Box::new(model), robot, config, pose))
}

#[derive(Debug, Clone)]
pub(crate) struct ElasticModel {
    cables: Vec<Cable>,
    /// This step's drive: cables are springs at rest lengths (`CableDrive::Rest`), else they
    /// pull with imposed tensions.
    elastic: bool,
    mass: f64,
    inertia_body: Matrix3<f64>,
    inverse_inertia_body: Matrix3<f64>,
    com_body: Vector3<f64>,
    // State: centre of mass, its velocity, orientation, angular velocity (world axes).
    pub com: Vector3<f64>,
    pub velocity: Vector3<f64>,
    pub orientation: UnitQuaternion<f64>,
    pub omega: Vector3<f64>,
    /// Tension of each cable over the second half kick of the last step, N.
    pub tensions: Vec<f64>,
    /// |Δ(momentum)/h − applied cable and gravity wrench| over the second half kick of the
    /// last step, whose tensions are the ones reported (N, N·m): rounding only, by
    /// construction of the momentum-form kicks, unless a damper would push.
    pub residual: f64,
    // Cached with the orientation: R and I_w = R I Rᵀ (I_w⁻¹ is applied as R I⁻¹ Rᵀ).
    rotation: Rotation3<f64>,
    inertia_world: Matrix3<f64>,
    /// None when the geometry changed since it was built.
    factor: Option<Factor>,
    /// The winches: payout (the cables' rest lengths), m, and its rate, m/s; in `length` mode
    /// the PID drives that move them, and the winch data they follow.
    rest: Vec<f64>,
    rest_rate: Vec<f64>,
    drives: Vec<PidWinch>,
    winch: Winch,
    /// Robots with drives: each winch's motor, gearbox and drum, and its servo drive (which
    /// then moves the payout in length, velocity and torque mode instead of the PID).
    drive_trains: Vec<DriveParams>,
    motors: Vec<ServoDrive>,
    /// Tension where each cable leaves its pulley (cables with nodes: their first segment's),
    /// N.
    exit: Vec<f64>,
}

impl ElasticModel {
    /// The model of `robot` at rest at `pose`, with `nodes` point masses per cable with mass
    /// (0: massless straight cables).
    pub fn new(robot: &Robot, pose: &Pose, nodes: usize) -> ElasticModel {
        let cables = robot
            .cables
            .iter()
            .map(|c| Cable {
                frame_anchor: c.frame_anchor,
                platform_anchor: c.platform_anchor - robot.platform.com,
                stiffness: c.stiffness,
                damping: c.damping,
                rest: 0.0,
                rest_rate: 0.0,
                spring: 0.0,
                tension: 0.0,
                length: 0.0,
                length_rate: 0.0,
                direction: Vector3::zeros(),
                moment: Vector3::zeros(),
                arm: Vector3::zeros(),
                pulley: c.pulley,
                wrap: 0.0,
                lumped: None,
                density: c.mass_per_length,
                segments: if nodes > 0 && c.mass_per_length > 0.0 {
                    nodes + 1
                } else {
                    1
                },
                segment_rate: 0.0,
            })
            .map(|mut c| {
                // Cables with nodes: the damper of one of the N + 1 segments.
                if c.segments > 1 {
                    c.damping *= c.segments as f64;
                }
                c
            })
            .collect::<Vec<_>>();
        let n = cables.len();
        let inertia_body = robot.platform.inertia;
        // Validated positive definite when the robot file was read.
        let inverse_inertia_body = inertia_body.try_inverse().unwrap_or_else(Matrix3::identity);
        let mut model = ElasticModel {
            cables,
            elastic: true,
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
            rotation: Rotation3::identity(),
            inertia_world: inertia_body,
            factor: None,
            rest: vec![0.0; n],
            rest_rate: vec![0.0; n],
            drives: Vec::new(),
            winch: robot.winch,
            drive_trains: robot.drives.iter().map(DriveParams::of).collect(),
            motors: Vec::new(),
            exit: vec![0.0; n],
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
    }

    fn cache_orientation(&mut self) {
        self.rotation = self.orientation.to_rotation_matrix();
        let r = self.rotation.matrix();
        self.inertia_world = r * self.inertia_body * r.transpose();
    }

    /// I_w⁻¹ x = R I⁻¹ Rᵀ x.
    fn inverse_inertia_world_times(&self, x: &Vector3<f64>) -> Vector3<f64> {
        self.rotation * (self.inverse_inertia_body * self.rotation.inverse_transform_vector(x))
    }

    pub fn pose(&self) -> Pose {
        // The angles from the cached matrix (not from the quaternion, which would convert).
        Pose::from_rotation(self.com - self.rotation * self.com_body, &self.rotation)
    }

    /// Velocity of the platform origin and angular velocity, world axes.
    pub fn twist(&self) -> [f64; 6] {
        let r = self.rotation * self.com_body;
        let v = self.velocity - self.omega.cross(&r);
        [v.x, v.y, v.z, self.omega.x, self.omega.y, self.omega.z]
    }

    /// Recomputes the cable geometry of the current state (the factor of M + h·C no longer
    /// applies).
    pub fn observe(&mut self) {
        for c in &mut self.cables {
            let arm = self.rotation * c.platform_anchor;
            c.arm = arm;
            if let Some(nodes) = &c.lumped {
                // The segment from the platform anchor to the last node.
                let anchor = self.com + arm;
                let (last, speed) = match (nodes.position.last(), nodes.velocity.last()) {
                    (Some(p), Some(v)) => (*p, *v),
                    _ => (c.frame_anchor, Vector3::zeros()),
                };
                let l = last - anchor;
                c.length = l.norm();
                c.direction = if c.length > 1e-12 {
                    l * c.length.recip()
                } else {
                    Vector3::zeros()
                };
                c.rest_rate = c.segment_rate - c.direction.dot(&speed);
            } else if let Some(p) = &c.pulley {
                // Over a swivel pulley: the free segment from the tangent point; the length
                // counts the wrap r·β.
                let g = pulley::wrap(p, &c.frame_anchor, &(self.com + arm));
                let l = g.tangent - (self.com + arm);
                c.wrap = g.wrap;
                c.length = g.wrapped_length + g.free_length;
                c.direction = if g.free_length > 1e-12 {
                    l * g.free_length.recip()
                } else {
                    Vector3::zeros()
                };
            } else {
                let l = c.frame_anchor - (self.com + arm);
                c.length = l.norm();
                c.direction = if c.length > 1e-12 {
                    l * c.length.recip()
                } else {
                    Vector3::zeros()
                };
            }
            c.moment = arm.cross(&c.direction);
            c.length_rate = c.length_rate(&self.velocity, &self.omega);
        }
        self.factor = None;
    }

    /// The ends of cable `k`'s nodes at this state, its platform anchor moved on by `ahead`
    /// seconds at its velocity; sets the cable's wrap (the pulley turns towards the first
    /// node).
    fn ends(&mut self, k: usize, ahead: f64) -> Ends {
        let arm = self.rotation * self.cables[k].platform_anchor;
        let anchor_velocity = self.velocity + self.omega.cross(&arm);
        let anchor = self.com + arm + anchor_velocity * ahead;
        let c = &mut self.cables[k];
        let towards = c
            .lumped
            .as_ref()
            .and_then(|l| l.position.first().copied())
            .unwrap_or(anchor);
        let (exit, wrapped) = match &c.pulley {
            Some(p) => {
                let g = pulley::wrap(p, &c.frame_anchor, &towards);
                c.wrap = g.wrap;
                (g.tangent, g.wrapped_length)
            }
            None => (c.frame_anchor, 0.0),
        };
        Ends {
            exit,
            wrapped,
            anchor,
            anchor_velocity,
        }
    }

    /// The axial data of one segment of cable `k`'s nodes at winch payout `rest` (m) and
    /// rate `rate` (m/s).
    fn axial(&self, k: usize, rest: f64, rate: f64) -> Axial {
        let c = &self.cables[k];
        let segments = c.segments as f64;
        Axial {
            k: stiffness(c.stiffness, rest) * segments,
            c: c.damping,
            rest: rest / segments,
            rest_rate: rate / segments,
            drag: NODE_DRAG,
        }
    }

    /// Builds the nodes of the cables with mass (at rest, settled with both ends held) for
    /// the current pose and winch payouts.
    fn place_nodes(&mut self) {
        for k in 0..self.cables.len() {
            if self.cables[k].segments == 1 {
                continue;
            }
            let ends = self.ends(k, 0.0);
            let axial = self.axial(k, self.rest[k], 0.0);
            let c = &mut self.cables[k];
            let mut nodes = LumpedCable::straight(
                c.segments - 1,
                c.density,
                self.rest[k],
                &ends.exit,
                &ends.anchor,
            );
            c.lumped = None;
            // The pulley turns towards the first node as the cable sags: settle twice.
            nodes.relax(&ends, &axial, 200_000);
            c.lumped = Some(nodes);
            let ends = self.ends(k, 0.0);
            if let Some(nodes) = &mut self.cables[k].lumped {
                nodes.relax(&ends, &axial, 200_000);
            }
        }
        self.observe();
    }

    /// Whether any cable has nodes.
    fn lumped(&self) -> bool {
        self.cables.iter().any(|c| c.lumped.is_some())
    }

    /// One step of `dt` of the cables with nodes and the platform together, in substeps short
    /// enough for the nodes' explicit springs ([`LumpedCable::max_step`]).
    fn step_lumped(&mut self, drive: &CableDrive, dt: f64) {
        // (Cables with nodes take lengths: tension mode is refused when the model is built.)
        let CableDrive::Rest { lengths, rates } = drive else {
            self.step_platform(drive, dt);
            return;
        };
        let mut h_max = dt;
        for k in 0..self.cables.len() {
            if let Some(nodes) = &self.cables[k].lumped {
                h_max = h_max.min(nodes.max_step(&self.axial(k, lengths[k], rates[k])));
            }
        }
        let substeps = (dt / h_max).ceil().max(1.0) as usize;
        let h = dt / substeps as f64;
        for _ in 0..substeps {
            for k in 0..self.cables.len() {
                if self.cables[k].lumped.is_none() {
                    continue;
                }
                let (before, after) = (self.ends(k, 0.0), self.ends(k, h));
                let axial = self.axial(k, lengths[k], rates[k]);
                if let Some(nodes) = &mut self.cables[k].lumped {
                    nodes.substep(&before, &after, &axial, h);
                }
            }
            self.step_platform(drive, h);
        }
    }

    /// Kinetic + elastic + gravitational energy for given rest lengths (J).
    fn energy_at(&self, rest: &[f64]) -> f64 {
        let kinetic = 0.5 * self.mass * self.velocity.norm_squared()
            + 0.5 * self.omega.dot(&(self.inertia_world * self.omega));
        let elastic: f64 = self
            .cables
            .iter()
            .zip(rest)
            .map(|(c, &l0)| {
                let k = stiffness(c.stiffness, l0);
                let e = (c.length - l0).max(0.0);
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
    fn step_drive(&mut self, drive: &CableDrive, dt: f64) {
        if self.lumped() {
            self.step_lumped(drive, dt);
        } else {
            self.step_platform(drive, dt);
        }
    }

    /// [`ElasticModel::step_drive`] of the platform alone (cables with nodes: their last
    /// node held where it is).
    fn step_platform(&mut self, drive: &CableDrive, dt: f64) {
        let h = 0.5 * dt;
        self.load_drive(drive);
        self.kick(h);
        // Drift: translate with v, rotate with ω, keeping L = I_w ω.
        let momentum = self.inertia_world * self.omega;
        self.com += self.velocity * dt;
        self.orientation = UnitQuaternion::from_scaled_axis(self.omega * dt) * self.orientation;
        self.orientation.renormalize_fast();
        self.cache_orientation();
        self.omega = self.inverse_inertia_world_times(&momentum);
        self.observe();
        let (v0, w0) = (self.velocity, self.omega);
        self.kick(h);
        // The tensions over this kick (the dampers at the new velocities), and the wrench they
        // and gravity apply, against the momentum change. (The first kick's tensions would be
        // overwritten: they are not computed.)
        let (force, torque) = self.update_tensions();
        let dp = (self.velocity - v0) * (self.mass / h) - force;
        let dl = (self.inertia_world * (self.omega - w0)) / h - torque;
        self.residual = (dp.norm_squared() + dl.norm_squared()).sqrt();
    }

    fn load_drive(&mut self, drive: &CableDrive) {
        match drive {
            CableDrive::Rest { lengths, rates } => {
                self.elastic = true;
                for ((c, &rest), &rate) in self.cables.iter_mut().zip(*lengths).zip(*rates) {
                    if let Some(nodes) = &c.lumped {
                        // The segment at the platform, moving with the last node.
                        let segments = c.segments as f64;
                        let speed = nodes.velocity.last().copied().unwrap_or_default();
                        c.rest = rest / segments;
                        c.segment_rate = rate / segments;
                        c.rest_rate = c.segment_rate - c.direction.dot(&speed);
                        c.spring = stiffness(c.stiffness, rest) * segments;
                        continue;
                    }
                    c.rest = rest;
                    c.rest_rate = rate;
                    c.spring = stiffness(c.stiffness, rest);
                }
            }
            CableDrive::Tension(tensions) => {
                self.elastic = false;
                for (c, &t) in self.cables.iter_mut().zip(*tensions) {
                    c.tension = t.max(0.0);
                }
            }
        }
    }

    fn weight(&self) -> Vector3<f64> {
        Vector3::new(0.0, 0.0, -self.mass * GRAVITY)
    }

    /// Changes the momenta by the cable and gravity forces over `h`, dampers implicit:
    /// (M + h·C) V⁺ = M V + h·F, C = Σ c_k g_k g_kᵀ over the cables whose damper acts and F
    /// the weight and the other (explicit) cable forces.
    fn kick(&mut self, h: f64) {
        let mut force = self.weight();
        let mut torque = Vector3::zeros();
        // Bit k set: cable k's damper acts (its row enters C).
        let mut damped: u64 = 0;
        for (i, c) in self.cables.iter().enumerate() {
            if c.lumped.is_some() {
                // The platform's half segment of a cable with nodes hangs at its anchor.
                let weight = Vector3::new(0.0, 0.0, -0.5 * c.density * c.rest * GRAVITY);
                force += weight;
                torque += c.arm.cross(&weight);
            }
            let explicit = if self.elastic {
                let stretch = c.length - c.rest;
                let spring = c.spring * stretch;
                // Taut and pulling (a cable cannot push, not even through its damper).
                if stretch <= 0.0 || spring + c.damping * (c.length_rate - c.rest_rate) <= 0.0 {
                    continue;
                }
                if c.damping > 0.0 {
                    damped |= 1 << i.min(63);
                }
                spring - c.damping * c.rest_rate
            } else {
                c.tension
            };
            force += c.direction * explicit;
            torque += c.moment * explicit;
        }
        if damped == 0 {
            self.velocity += force * (h / self.mass);
            self.omega += self.inverse_inertia_world_times(&(torque * h));
            return;
        }
        if !matches!(&self.factor, Some(f) if f.damped == damped && f.h == h) {
            let cholesky = self.system_matrix(damped, h).cholesky();
            self.factor = cholesky.map(|cholesky| Factor {
                damped,
                h,
                cholesky,
            });
        }
        if let Some(factor) = &self.factor {
            let p = self.velocity * self.mass + force * h;
            let l = self.inertia_world * self.omega + torque * h;
            let mut v = Vector6::new(p.x, p.y, p.z, l.x, l.y, l.z);
            factor.cholesky.solve_mut(&mut v);
            self.velocity = v.fixed_rows::<3>(0).into_owned();
            self.omega = v.fixed_rows::<3>(3).into_owned();
        }
    }

    /// M + h·C for the cables of the mask `damped` (lower triangle: Cholesky reads no more).
    fn system_matrix(&self, damped: u64, h: f64) -> Matrix6<f64> {
        let mut lhs = Matrix6::<f64>::zeros();
        for (k, c) in self.cables.iter().enumerate() {
            if damped & (1 << k.min(63)) == 0 {
                continue;
            }
            let (d, m) = (c.direction, c.moment);
            let g = [d.x, d.y, d.z, m.x, m.y, m.z];
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
        lhs
    }

    /// The tensions at the current velocities (the dampers at the new length rates, which
    /// the geometry takes too) into `self.tensions`; returns the wrench they and gravity apply.
    fn update_tensions(&mut self) -> (Vector3<f64>, Vector3<f64>) {
        let mut force = self.weight();
        let mut torque = Vector3::zeros();
        for (c, f) in self.cables.iter_mut().zip(&mut self.tensions) {
            if c.lumped.is_some() {
                let weight = Vector3::new(0.0, 0.0, -0.5 * c.density * c.rest * GRAVITY);
                force += weight;
                torque += c.arm.cross(&weight);
            }
            c.length_rate = c.length_rate(&self.velocity, &self.omega);
            *f = if !self.elastic {
                c.tension
            } else {
                let stretch = c.length - c.rest;
                if stretch > 0.0 {
                    (c.spring * stretch + c.damping * (c.length_rate - c.rest_rate)).max(0.0)
                } else {
                    0.0
                }
            };
            force += c.direction * *f;
            torque += c.moment * *f;
        }
        (force, torque)
    }
}

impl PhysicalModel for ElasticModel {
    fn place(
        &mut self,
        robot: &Robot,
        pose: &Pose,
        actuators: &[f64],
        hold: &Actuation,
    ) -> Result<(), SimError> {
        self.set_pose(pose);
        self.rest.copy_from_slice(actuators);
        self.rest_rate.iter_mut().for_each(|r| *r = 0.0);
        // The drives start holding their load: the integral term carries the static tension.
        let lengths = kinematics::lengths(robot, pose);
        self.drives = robot
            .cables
            .iter()
            .zip(actuators)
            .zip(&lengths)
            .map(|((c, &l0), &l)| {
                let tension = c.stiffness_at(l0) * (l - l0).max(0.0);
                PidWinch::holding(l0, tension, &self.winch)
            })
            .collect();
        self.motors = self
            .drive_trains
            .iter()
            .zip(actuators)
            .zip(&lengths)
            .zip(&robot.cables)
            .map(|(((d, &l0), &l), c)| {
                ServoDrive::holding(&d.drive, c.stiffness_at(l0) * (l - l0).max(0.0))
            })
            .collect();
        if let Actuation::Pull(tensions) = hold {
            self.load_drive(&CableDrive::Tension(tensions));
        } else {
            self.elastic = true;
        }
        if self.cables.iter().any(|c| c.segments > 1) {
            self.place_nodes();
            let (rest, rates) = (self.rest.clone(), self.rest_rate.clone());
            self.load_drive(&CableDrive::Rest {
                lengths: &rest,
                rates: &rates,
            });
        }
        Ok(())
    }

    fn move_platform(&mut self, _robot: &Robot, pose: &Pose) -> Result<(), SimError> {
        self.set_pose(pose);
        Ok(())
    }

    fn step(&mut self, _robot: &Robot, actuation: &Actuation, _demand: Option<&Pose>, dt: f64) {
        match *actuation {
            Actuation::Pull(tensions) => self.step_drive(&CableDrive::Tension(tensions), dt),
            Actuation::Follow { positions, rates } => {
                self.rest.copy_from_slice(positions);
                self.rest_rate.copy_from_slice(rates);
                self.step_elastic(dt);
            }
            Actuation::Servo { .. } | Actuation::Rate(_) | Actuation::Torque(_)
                if !self.motors.is_empty() =>
            {
                self.step_motors(actuation, dt);
                self.step_elastic(dt);
            }
            Actuation::Rate(_) | Actuation::Torque(_) => {
                // Refused without drives when the model is built.
                self.step_elastic(dt);
            }
            Actuation::Servo { set_points, rates } => {
                // The winch PID integrated implicitly with the cable it pulls (backward Euler on
                // the drive, the cable's length and rate of this state).
                // The drive carries the winch-side tension: the cable's at the pulley times the
                // capstan ratio at the drive's payout rate (cables with nodes: their first
                // segment's, as a whole cable's length).
                let winch_side = self.winch_side();
                for (k, (drive, cable)) in self.drives.iter_mut().zip(&self.cables).enumerate() {
                    let before = drive.position;
                    let (length, length_rate, ratio) = winch_side[k];
                    let damping = cable.damping / cable.segments as f64;
                    let (k_cable, c_cable) = if ratio == 1.0 {
                        (stiffness(cable.stiffness, before), damping)
                    } else {
                        (stiffness(cable.stiffness, before) * ratio, damping * ratio)
                    };
                    drive.step(
                        set_points[k],
                        rates[k],
                        length,
                        length_rate,
                        k_cable,
                        c_cable,
                        length > before,
                        &self.winch,
                        dt,
                    );
                    self.rest[k] = drive.position;
                    self.rest_rate[k] = drive.velocity;
                }
                self.step_elastic(dt);
            }
        }
    }

    fn write_back(&mut self, _robot: &Robot, s: &mut SimState, stepped: Option<f64>) {
        s.pose = self.pose();
        s.twist = self.twist();
        for (length, c) in s.lengths.iter_mut().zip(&self.cables) {
            *length = c.length;
        }
        if stepped.is_some() {
            s.tensions.copy_from_slice(&self.tensions);
        } else {
            // Not stepped yet: the static spring tensions (or the pulls) of the current state.
            for (f, (c, &rest)) in s
                .tensions
                .iter_mut()
                .zip(self.cables.iter().zip(&self.rest))
            {
                *f = if c.lumped.is_some() {
                    0.0
                } else if self.elastic {
                    stiffness(c.stiffness, rest) * (c.length - rest).max(0.0)
                } else {
                    c.tension
                };
            }
        }
        for (k, c) in self.cables.iter().enumerate() {
            self.exit[k] = match &c.lumped {
                Some(nodes) => {
                    s.tensions[k] = nodes.anchor_tension();
                    nodes.exit_tension()
                }
                None => s.tensions[k],
            };
        }
        s.tensions_constraint.copy_from_slice(&s.tensions);
        s.winch.copy_from_slice(&self.rest);
        for (m, ((torque, velocity), error)) in self.motors.iter().zip(
            s.motor_torques
                .iter_mut()
                .zip(&mut s.motor_velocities)
                .zip(&mut s.following_errors),
        ) {
            (*torque, *velocity, *error) = (m.torque, m.velocity, m.following_error);
        }
        s.wrench_residual = if stepped.is_some() {
            self.residual
        } else {
            0.0
        };
    }

    fn energy(&self) -> Option<f64> {
        // (The nodes' energy is not counted: none with nodes.)
        (!self.lumped()).then(|| self.energy_at(&self.rest))
    }

    fn exit_tensions(&self) -> Option<&[f64]> {
        self.lumped().then_some(self.exit.as_slice())
    }
}

impl ElasticModel {
    /// Per cable what its winch pulls against over the step: the cable's length and rate
    /// and the capstan ratio at the payout rate (cables with nodes: their first segment's,
    /// as a whole cable's length).
    fn winch_side(&mut self) -> Vec<(f64, f64, f64)> {
        (0..self.cables.len())
            .map(|k| self.winch_side_of(k))
            .collect()
    }

    /// Cable `k`'s length and rate as its winch pulls them, and the capstan ratio.
    #[inline]
    fn winch_side_of(&mut self, k: usize) -> (f64, f64, f64) {
        let rate = match self.motors.is_empty() {
            true => self.drives[k].velocity,
            false => self.rest_rate[k],
        };
        let ratio = self.cables[k].pulley.map_or(1.0, |p| {
            capstan::winch_ratio(p.friction, self.cables[k].wrap, rate)
        });
        if self.cables[k].lumped.is_some() {
            let ends = self.ends(k, 0.0);
            let c = &self.cables[k];
            let segments = c.segments as f64;
            let (l, rate) = c
                .lumped
                .as_ref()
                .map_or((0.0, 0.0), |n| n.first_segment(&ends));
            (l * segments, rate * segments, ratio)
        } else {
            let c = &self.cables[k];
            (c.length, c.length_rate, ratio)
        }
    }

    /// The servo drives' step: each winch's motor equation integrated implicitly with the
    /// cable it pulls (its spring and damper at this state's length and rate, times the
    /// capstan ratio), substepped when the drive's loops are fast for `dt`.
    fn step_motors(&mut self, actuation: &Actuation, dt: f64) {
        for k in 0..self.cables.len() {
            let Some(command) = actuation.drive_command(k) else {
                continue;
            };
            // Before the step's borrows: each drive reads its own cable, before any moves.
            let (length, length_rate, ratio) = self.winch_side_of(k);
            let drive = &self.drive_trains[k];
            let cable = &self.cables[k];
            let (mut s, mut v) = (self.rest[k], self.rest_rate[k]);
            let (k_cable, c_cable) = if length > s {
                (
                    stiffness(cable.stiffness, s) * ratio,
                    cable.damping / cable.segments as f64 * ratio,
                )
            } else {
                (0.0, 0.0)
            };
            let n = drive.substeps(dt);
            let h = if n == 1 { dt } else { dt / n as f64 };
            let servo = &mut self.motors[k];
            for j in 0..n {
                let law = servo.law(drive, command, s, v, h);
                // The cable's pull k(L − s − h·v⁺) + c(L̇ − v⁺), affine in v⁺, with the length
                // carried to the substep's end along its rate (the platform steps after the
                // drives: a length of the step's start would lag the drive's pull by k·L̇·dt,
                // 1.4 N on uvigo8 at 0.1 m/s, which only a stiff position loop rejects).
                let length_then = length + (j + 1) as f64 * h * length_rate;
                let pull = k_cable * (length_then - s) + c_cable * length_rate;
                v = law.solve(v, pull, k_cable * h + c_cable);
                s += h * v;
                servo.finish(drive, &law, command, s, v);
            }
            self.rest[k] = s;
            self.rest_rate[k] = v;
        }
    }

    /// A step with the cables elastic at the current rest lengths and rates.
    fn step_elastic(&mut self, dt: f64) {
        // Moved out and back so that the drive can borrow them while `self` steps.
        let (rest, rates) = (
            std::mem::take(&mut self.rest),
            std::mem::take(&mut self.rest_rate),
        );
        self.step_drive(
            &CableDrive::Rest {
                lengths: &rest,
                rates: &rates,
            },
            dt,
        );
        self.rest = rest;
        self.rest_rate = rates;
    }
}

pub(crate) fn stiffness(s: Stiffness, rest: f64) -> f64 {
    match s {
        Stiffness::Constant(k) => k,
        Stiffness::Ea(ea) => ea / rest.max(1e-9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In `length` mode the PID drive carries the winch-side tension: at a slow steady haul
    /// (10 mm/s = 10 v₀) its force kp·e + ki·∫e + kd·ė balances e^{+μβ} times the platform
    /// side's tension hauling in (β from the inverse kinematics),
    /// less its own inertia; the tension is the cable's as the drive's implicit step sees it.
    #[test]
    fn the_pid_drive_carries_the_winch_side_tension() {
        let mu = 0.3;
        let mut robot = crate::fixtures::robot("uvigo8-pulleys");
        for c in &mut robot.cables {
            if let Some(p) = &mut c.pulley {
                p.friction = mu;
            }
        }
        let pose = Pose::new(0.0, 0.0, 0.2, 0.0, 0.0, 0.0);
        let rest = crate::statics::pretensioned_rest_lengths(&robot, &pose, robot.tension)
            .expect("feasible")
            .0;
        let dt = 1e-3;
        // (Paying out one cable alone slackens it: the pay-out side is checked through the
        // state's winch-side tensions in sim::tests.)
        for speed in [-0.01] {
            let mut model = ElasticModel::new(&robot, &pose, 0);
            let zeros = vec![0.0; rest.len()];
            let hold = Actuation::Follow {
                positions: &rest,
                rates: &zeros,
            };
            model.place(&robot, &pose, &rest, &hold).expect("placed");
            let mut rates = zeros.clone();
            rates[0] = speed;
            let mut set = rest.clone();
            // The cable as the drive saw it in the last step (the state before it).
            let (mut length, mut length_rate, mut before) = (0.0, 0.0, model.drives[0]);
            for _ in 0..300 {
                set[0] += speed * dt;
                let servo = Actuation::Servo {
                    set_points: &set,
                    rates: &rates,
                };
                (length, length_rate, before) = (
                    model.cables[0].length,
                    model.cables[0].length_rate,
                    model.drives[0],
                );
                model.step(&robot, &servo, None, dt);
            }
            let w = &robot.winch;
            let d = model.drives[0];
            let k = stiffness(robot.cables[0].stiffness, before.position);
            // The platform-side tension of that state at the drive's new payout.
            let tension =
                k * (length - d.position) + robot.cables[0].damping * (length_rate - d.velocity);
            // Less the drive's own inertia.
            let inertia = w.mass * (d.velocity - before.velocity) / dt;
            // The integral the step used is the one before its update (I − dt·e).
            let error = d.position - set[0];
            let pid = w.kp * error + w.ki * (d.integral - dt * error) + w.kd * (d.velocity - speed);
            let beta = kinematics::inverse(&robot, &model.pose()).cables[0]
                .pulley
                .expect("a pulley")
                .wrap;
            let expected = (-mu * beta * speed.signum()).exp() * tension - inertia;
            assert!(
                (pid - expected).abs() < 1e-3 * expected,
                "speed {speed}: PID force {pid} N vs e^(∓μβ)·T = {expected} N (T = {tension} N, \
                 β = {beta})"
            );
            // The platform side after the step: the same within the step's length change.
            assert!((model.tensions[0] - tension).abs() < 0.05 * tension);
        }
    }
}
