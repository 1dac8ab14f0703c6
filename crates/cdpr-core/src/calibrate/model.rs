//! What the calibration fits, and the model it fits them in: per cable its drive (J, b, τ_c
//! and a torque offset), its stiffness, its frame anchor and the offset of its measured
//! payout; per sample of a recorded run the motor torque each drive needs and the wrench the
//! cables apply, both against what was measured.
//!
//! At a sample with the platform at pose (r, R) moving at (ṙ, ω) and cable i paid out to
//! s = s_measured + δ at ṡ, s̈ (motor θ = s/ρ):
//! - the cable's geometry from the frame anchor a_i (`kinematics::CableGeometry`, pulleys
//!   included): length L, direction d, and L̇ = −d·(ṙ + ω × R b_i);
//! - its tension T = k·(L − s) + c·(L̇ − ṡ), k the stiffness (or EA/s);
//! - the drive's torque τ = J·θ̈ + b·θ̇ + τ_c·tanh(θ̇/ω₀) + τ₀ − ρ·T_w (tanh taken before the
//!   smoothing, as the torque's step at a reversal is), T_w = T times the
//!   pulley's capstan ratio (the motor equation of `robot::drives`, plus the offset a torque
//!   sensor or current measurement carries);
//! - the platform's Newton–Euler: Σ T_i [d_i; R b_i × d_i] + w_g = the inertial wrench of the
//!   measured motion (`statics::inertial_rows`).
//!
//! The residuals are the torque's and the wrench's differences, each divided by its group's
//! scale (the fit's weights).

use crate::kinematics::{CableGeometry, capstan};
use crate::pose::Pose;
use crate::robot::{Cable, Drive, Robot, Stiffness};
use nalgebra::{Matrix3, Vector3};
use serde::Serialize;

/// One quantity of one cable that a calibration may fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    RotorInertia,
    ViscousFriction,
    CoulombFriction,
    TorqueOffset,
    Stiffness,
    AnchorX,
    AnchorY,
    AnchorZ,
    LengthOffset,
}

/// The quantities in the order of a cable's parameter vector.
pub const QUANTITIES: [Quantity; 9] = [
    Quantity::RotorInertia,
    Quantity::ViscousFriction,
    Quantity::CoulombFriction,
    Quantity::TorqueOffset,
    Quantity::Stiffness,
    Quantity::AnchorX,
    Quantity::AnchorY,
    Quantity::AnchorZ,
    Quantity::LengthOffset,
];

/// The groups `--fit` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// J, b, τ_c and the torque offset of each drive.
    Drives,
    /// Each cable's stiffness (k, or EA when the file gives EA).
    Stiffness,
    /// Each frame anchor and the offset of each measured payout (kinematic calibration).
    Geometry,
}

impl Quantity {
    /// Its index in a cable's parameter vector.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The group that fits it.
    pub fn group(self) -> Group {
        use Quantity::*;
        match self {
            RotorInertia | ViscousFriction | CoulombFriction | TorqueOffset => Group::Drives,
            Stiffness => Group::Stiffness,
            AnchorX | AnchorY | AnchorZ | LengthOffset => Group::Geometry,
        }
    }

    /// Its name as a report and a robot file say it.
    pub fn name(self) -> &'static str {
        use Quantity::*;
        match self {
            RotorInertia => "rotor_inertia",
            ViscousFriction => "viscous_friction",
            CoulombFriction => "coulomb_friction",
            TorqueOffset => "torque_offset",
            Stiffness => "stiffness",
            AnchorX => "frame_anchor.x",
            AnchorY => "frame_anchor.y",
            AnchorZ => "frame_anchor.z",
            LengthOffset => "length_offset",
        }
    }

    /// Its SI unit.
    pub fn unit(self, stiffness: &Stiffness) -> &'static str {
        use Quantity::*;
        match self {
            RotorInertia => "kg·m²",
            ViscousFriction => "N·m·s/rad",
            CoulombFriction | TorqueOffset => "N·m",
            Stiffness => match stiffness {
                crate::robot::Stiffness::Constant(_) => "N/m",
                crate::robot::Stiffness::Ea(_) => "N",
            },
            AnchorX | AnchorY | AnchorZ | LengthOffset => "m",
        }
    }

    /// Whether the fit keeps it within ±[`GEOMETRY_BOUND`] of the file's value.
    pub fn bounded(self) -> bool {
        self.group() == Group::Geometry
    }
}

/// How far a fitted anchor or payout offset may move from the file's value, m.
pub const GEOMETRY_BOUND: f64 = 0.05;

/// One cable's values of every [`Quantity`], SI, in [`QUANTITIES`]' order.
pub type CableValues = [f64; 9];

/// The values `robot` gives (torque and payout offsets 0), per cable.
pub fn values_of(robot: &Robot) -> Vec<CableValues> {
    robot
        .cables
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let d = robot.drives.get(i);
            let k = match c.stiffness {
                Stiffness::Constant(k) | Stiffness::Ea(k) => k,
            };
            [
                d.map_or(0.0, |d| d.rotor_inertia),
                d.map_or(0.0, |d| d.viscous_friction),
                d.map_or(0.0, |d| d.coulomb_friction),
                0.0,
                k,
                c.frame_anchor.x,
                c.frame_anchor.y,
                c.frame_anchor.z,
                0.0,
            ]
        })
        .collect()
}

/// A recorded run prepared for the fit: at each kept sample the measured pose with its rates,
/// each cable's measured payout with its rate and acceleration, and each drive's measured
/// torque (all smoothed alike, [`super::signals`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Samples {
    /// s.
    pub times: Vec<f64>,
    pub poses: Vec<Pose>,
    /// d(pose)/dt and d²(pose)/dt² (m/s, rad/s of x, y, z, roll, pitch, yaw).
    pub velocities: Vec<[f64; 6]>,
    pub accelerations: Vec<[f64; 6]>,
    /// Per sample, per cable (row-major): payout s (m), ṡ (m/s), s̈ (m/s²).
    pub payouts: Vec<[f64; 3]>,
    /// Per sample, per drive (row-major), N·m.
    pub torques: Vec<f64>,
    /// Per sample, per drive: tanh(θ̇/ω₀) at every sample of the run, smoothed as the torque
    /// is (the Coulomb friction's regressor).
    pub friction: Vec<f64>,
    /// Cables per sample.
    pub cables: usize,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }
}

/// What the model needs of one sample beyond the parameters: derived once per fit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Moment {
    pub position: Vector3<f64>,
    pub rotation: Matrix3<f64>,
    /// Platform origin's velocity and the angular velocity, world frame.
    pub velocity: Vector3<f64>,
    pub omega: Vector3<f64>,
    /// The wrench the cables must apply: the inertial wrench less gravity's (rows of the
    /// robot's DOF; the rest zero).
    pub needed: [f64; 6],
}

impl Moment {
    pub fn of(robot: &Robot, samples: &Samples, n: usize) -> Moment {
        let pose = &samples.poses[n];
        let rotation = *pose.rotation().matrix();
        let v = &samples.velocities[n];
        let (omega, _) = crate::statics::angular_motion(
            &pose.rpy,
            &Vector3::new(v[3], v[4], v[5]),
            &Vector3::new(
                samples.accelerations[n][3],
                samples.accelerations[n][4],
                samples.accelerations[n][5],
            ),
        );
        let inertial = crate::statics::inertial_rows(robot, pose, v, &samples.accelerations[n]);
        let gravity = robot.gravity_wrench(&rotation);
        let mut needed = [0.0; 6];
        for (k, w) in inertial.iter().enumerate() {
            needed[k] = w - gravity[k];
        }
        Moment {
            position: pose.position,
            rotation,
            velocity: Vector3::new(v[0], v[1], v[2]),
            omega,
            needed,
        }
    }
}

/// One cable at one sample under given values: its drive's torque (N·m), its tension (N) and
/// the wrench it applies to the platform.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CableAt {
    pub torque: f64,
    pub tension: f64,
    pub wrench: [f64; 6],
    /// The torque's partial derivatives in J, b, τ_c, τ₀ (it is linear in them).
    pub drive_terms: [f64; 4],
}

/// [`CableAt`] of `cable` (with `drive`) at moment `m` paid out `payout`, under `values`;
/// `friction` is the sample's smoothed tanh(θ̇/ω₀) ([`Samples::friction`]).
pub(crate) fn cable_at(
    cable: &Cable,
    drive: Option<&Drive>,
    values: &CableValues,
    m: &Moment,
    payout: &[f64; 3],
    friction: f64,
) -> CableAt {
    let mut placed = cable.clone();
    placed.frame_anchor = Vector3::new(values[5], values[6], values[7]);
    let g = CableGeometry::new(&placed, &m.position, &m.rotation);
    let length_rate = -g.direction.dot(&(m.velocity + m.omega.cross(&g.arm)));
    let s = payout[0] + values[8];
    let (rate, acceleration) = (payout[1], payout[2]);
    let k = match cable.stiffness {
        Stiffness::Constant(_) => values[4],
        Stiffness::Ea(_) => values[4] / s.max(1e-9),
    };
    // Not clipped at 0: a run worth calibrating on keeps its cables taut, and a start whose
    // anchors are millimetres off would otherwise see slack cables, whose parameters move
    // nothing, and stay there.
    let tension = k * (g.length - s) + cable.damping * (length_rate - rate);
    let moment = g.arm.cross(&g.direction) * tension;
    let force = g.direction * tension;
    let wrench = [force.x, force.y, force.z, moment.x, moment.y, moment.z];
    let Some(drive) = drive else {
        return CableAt {
            torque: 0.0,
            tension,
            wrench,
            drive_terms: [0.0; 4],
        };
    };
    let ratio = match (&cable.pulley, g.pulley) {
        (Some(p), Some(pg)) => capstan::winch_ratio(p.friction, pg.wrap, rate),
        _ => 1.0,
    };
    let rho = drive.payout_per_radian();
    let (omega, alpha) = (rate / rho, acceleration / rho);
    let drive_terms = [alpha, omega, friction, 1.0];
    let torque = values[0] * drive_terms[0]
        + values[1] * drive_terms[1]
        + values[2] * drive_terms[2]
        + values[3]
        - rho * ratio * tension;
    CableAt {
        torque,
        tension,
        wrench,
        drive_terms,
    }
}

/// `robot` with `values` written into it (drives' J, b, τ_c; stiffness; frame anchors). The
/// torque and payout offsets are the measurement's, not the robot's: the report gives them.
pub fn robot_with(robot: &Robot, values: &[CableValues]) -> Robot {
    let mut fitted = robot.clone();
    for (i, (cable, v)) in fitted.cables.iter_mut().zip(values).enumerate() {
        cable.stiffness = match cable.stiffness {
            Stiffness::Constant(_) => Stiffness::Constant(v[4]),
            Stiffness::Ea(_) => Stiffness::Ea(v[4]),
        };
        cable.frame_anchor = Vector3::new(v[5], v[6], v[7]);
        if let Some(d) = fitted.drives.get_mut(i) {
            d.rotor_inertia = v[0];
            d.viscous_friction = v[1];
            d.coulomb_friction = v[2];
        }
    }
    fitted
}
