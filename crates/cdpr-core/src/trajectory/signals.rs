//! Identification and validation signals (seed 004, section 3.2 and Tables 3 and 6) as
//! trajectories: built-ins `steps`, `chirp`, `dsine`, `dsquare` move one DOF at a time about
//! the robot's home pose (x, y, z, then roll, pitch, yaw on 6-DOF robots; segments tagged by
//! the DOF's name, 0.5 s of rest between them); `sines` moves all DOFs at once (seed 004's
//! joint validation, S5–S8).
//!
//! - steps: levels 0, +A, 0, −A, 0, +A/2, −A/2, 0, each held 1.5 s (0.5 s for the first);
//! - chirp (eqs. 1–3): A·sin φ(t), φ(t) = 2π f₀ (rᵗ − 1)/ln r, so the instantaneous frequency
//!   is f₀·rᵗ: 0.1 Hz → 6.6 Hz over 30 s (r = 1.15); the last second fades out (cosine) so the
//!   DOF returns to rest smoothly;
//! - dsine: A·e^(−c t)·sin(2π f t), f = 0.5 Hz, c = 0.1 s⁻¹, 20 s (seed 004's S2: 1 Hz, 0.06);
//! - dsquare: A·e^(−c t)·sgn(sin 2π f t), f = 0.25 Hz, c = 0.06 s⁻¹, 20 s (seed 004's
//!   "entrada 2");
//! - sines: DOF k at f_k ∈ {0.23, 0.31, 0.37, 0.29, 0.41, 0.19} Hz, 20 s, last second faded.
//!
//! Amplitudes A: a quarter of the `[workspace]` box along each translation (less where the
//! home pose sits closer to the box's edge), 5° for rotations; the chirp's amplitude shrinks
//! as its frequency rises to stay within the winch limits ([`chirp_envelope`]).

use super::csv::differentiate;
use super::{Sample, Trajectory, TrajectoryError};
use crate::kinematics::Pose;
use crate::robot::{Dof, Mechanism, Robot};

/// Names and descriptions of the signal built-ins.
pub const SIGNALS: &[(&str, &str)] = &[
    (
        "steps",
        "steps of ±A and ±A/2 on each DOF in turn (identification)",
    ),
    (
        "chirp",
        "seed 004's exponential chirp 0.1 → 6.6 Hz on each DOF in turn (identification)",
    ),
    (
        "dsine",
        "damped sine 0.5 Hz on each DOF in turn (validation)",
    ),
    (
        "dsquare",
        "damped square wave 0.25 Hz on each DOF in turn (validation)",
    ),
    (
        "sines",
        "sines of different frequencies on all DOFs at once (joint validation)",
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SignalKind {
    Steps,
    Chirp,
    Dsine,
    Dsquare,
    Sines,
}

impl SignalKind {
    pub const ALL: [SignalKind; 5] = [
        SignalKind::Steps,
        SignalKind::Chirp,
        SignalKind::Dsine,
        SignalKind::Dsquare,
        SignalKind::Sines,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SignalKind::Steps => "steps",
            SignalKind::Chirp => "chirp",
            SignalKind::Dsine => "dsine",
            SignalKind::Dsquare => "dsquare",
            SignalKind::Sines => "sines",
        }
    }

    pub fn from_name(name: &str) -> Option<SignalKind> {
        SignalKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Duration of one DOF's signal, s.
    pub fn duration(self) -> f64 {
        match self {
            SignalKind::Steps => 11.0,
            SignalKind::Chirp => 30.0,
            SignalKind::Dsine | SignalKind::Dsquare | SignalKind::Sines => 20.0,
        }
    }
}

const CHIRP_F0: f64 = 0.1;
const CHIRP_RATE: f64 = 1.15;
const SINES_HZ: [f64; 6] = [0.23, 0.31, 0.37, 0.29, 0.41, 0.19];
const REST_BETWEEN: f64 = 0.5;
const DOF_NAMES: [&str; 6] = ["x", "y", "z", "roll", "pitch", "yaw"];

/// Seed 004's exponential chirp phase (eq. 2 with zero initial phase), rad.
pub fn chirp_phase(f0: f64, rate: f64, t: f64) -> f64 {
    std::f64::consts::TAU * f0 * (rate.powf(t) - 1.0) / rate.ln()
}

/// 1 over [0, T − 1 s], then a cosine fade to 0 at T.
fn fade_out(t: f64, duration: f64) -> f64 {
    let start = duration - 1.0;
    if t <= start {
        1.0
    } else {
        0.5 * (1.0 + (std::f64::consts::PI * ((t - start) / 1.0).min(1.0)).cos())
    }
}

/// The unit-amplitude signal of `kind` at time t ∈ [0, duration] (DOF k for `sines`).
pub fn unit_value(kind: SignalKind, t: f64, dof: usize) -> f64 {
    let tau = std::f64::consts::TAU;
    match kind {
        SignalKind::Steps => {
            const LEVELS: [f64; 8] = [0.0, 1.0, 0.0, -1.0, 0.0, 0.5, -0.5, 0.0];
            let k = if t < 0.5 {
                0
            } else {
                1 + ((t - 0.5) / 1.5) as usize
            };
            LEVELS[k.min(LEVELS.len() - 1)]
        }
        SignalKind::Chirp => {
            chirp_phase(CHIRP_F0, CHIRP_RATE, t).sin() * fade_out(t, kind.duration())
        }
        SignalKind::Dsine => (-0.1 * t).exp() * (tau * 0.5 * t).sin(),
        SignalKind::Dsquare => {
            let s = (tau * 0.25 * t).sin();
            // Hold the sign through the zero crossings at exact multiples of the half period.
            let sign = if s.abs() < 1e-12 { 1.0 } else { s.signum() };
            let value = (-0.06 * t).exp() * sign;
            if t >= kind.duration() - 1e-9 {
                0.0
            } else {
                value
            }
        }
        SignalKind::Sines => (tau * SINES_HZ[dof % 6] * t).sin() * fade_out(t, kind.duration()),
    }
}

/// The amplitude used for each DOF of `robot` (m, rad; see the module comment).
pub fn amplitudes(robot: &Robot) -> [f64; 6] {
    let ws = robot.workspace;
    let mut a = [5f64.to_radians(); 6];
    if let Mechanism::Rssu2(r) = &robot.mechanism {
        // Seed 004 excites its platform over a large part of its range: 40 % of Table 1's.
        let [pitch_lo, pitch_hi, roll_lo, roll_hi] = r.ranges();
        a[3] = 0.4 * roll_hi.min(-roll_lo);
        a[4] = 0.4 * pitch_hi.min(-pitch_lo);
    }
    for (k, a) in a.iter_mut().enumerate().take(3) {
        let room = (robot.home[k] - ws.min[k]).min(ws.max[k] - robot.home[k]);
        *a = (0.25 * (ws.max[k] - ws.min[k])).min(room).max(0.0);
    }
    a
}

/// The chirp's amplitude limit for DOF `dof` at time t of the sweep: 80 % of what keeps a
/// sine at the instantaneous frequency f₀·rᵗ within the winch's velocity, acceleration and
/// jerk limits (A·ω ≤ v, A·ω² ≤ a, A·ω³ ≤ j; for rotations divided by the platform's largest
/// anchor radius). Beyond those limits the drive's set-point shaper makes the response
/// amplitude-dependent, which no linear filter can represent; below them the sweep identifies
/// the linear dynamics. On uvigo8 this shrinks the 5 cm chirp to ≈ 0.6 mm at 6.6 Hz.
pub fn chirp_envelope(robot: &Robot, dof: usize, t: f64) -> f64 {
    let w = std::f64::consts::TAU * CHIRP_F0 * CHIRP_RATE.powf(t);
    let lever = if dof < 3 {
        1.0
    } else if let Mechanism::Rssu2(r) = &robot.mechanism {
        // Crank turn per platform turn, roughly: attachment radius over crank length.
        r.attachment(0).norm() / r.crank
    } else {
        robot
            .cables
            .iter()
            .map(|c| c.platform_anchor.norm())
            .fold(0.0f64, f64::max)
            .max(1e-3)
    };
    let lim = &robot.winch;
    let amplitude = (lim.max_velocity / w)
        .min(lim.max_acceleration / (w * w))
        .min(lim.max_jerk / (w * w * w));
    0.8 * amplitude / lever
}

/// The DOFs a robot commands (x, y, z and, on 6-DOF robots, roll, pitch, yaw).
pub fn robot_dofs(robot: &Robot) -> Vec<usize> {
    if let Mechanism::Rssu2(_) = robot.mechanism {
        // The 2-RSSU only pitches and rolls (seed 004).
        return vec![3, 4];
    }
    match robot.dof {
        Dof::Three => vec![0, 1, 2],
        Dof::Six => (0..6).collect(),
    }
}

fn rest_pose(robot: &Robot) -> [f64; 6] {
    let mut rest = robot.home;
    if robot.dof == Dof::Three {
        rest[3..].fill(0.0);
    }
    rest
}

/// Builds a trajectory from pose values at t = k·dt, velocities and accelerations by finite
/// differences, with per-sample segment indices.
fn from_values(
    t: Vec<f64>,
    poses: Vec<[f64; 6]>,
    tags: Vec<Option<usize>>,
    segments: Vec<String>,
) -> Trajectory {
    let mut velocity = vec![[0.0; 6]; t.len()];
    let mut acceleration = vec![[0.0; 6]; t.len()];
    for k in 0..6 {
        let channel: Vec<f64> = poses.iter().map(|p| p[k]).collect();
        let (v, a) = differentiate(&t, &channel);
        for (sample, (v, a)) in v.into_iter().zip(a).enumerate() {
            velocity[sample][k] = v;
            acceleration[sample][k] = a;
        }
    }
    let samples = (0..t.len())
        .map(|k| Sample {
            t: t[k],
            pose: Pose::from_array(poses[k]),
            velocity: velocity[k],
            acceleration: acceleration[k],
            segment: tags[k],
        })
        .collect();
    Trajectory { samples, segments }
}

/// One DOF's signal about the robot's home pose, sampled every `dt`, tagged with the DOF's
/// name, with `REST_BETWEEN` s of rest before and after.
pub fn single_dof(
    robot: &Robot,
    kind: SignalKind,
    dof: usize,
    dt: f64,
) -> Result<Trajectory, TrajectoryError> {
    sequence(robot, kind, &[dof], dt)
}

/// The built-in `kind` on `robot`: every DOF in turn (all at once for `sines`).
pub fn signal(robot: &Robot, kind: SignalKind, dt: f64) -> Result<Trajectory, TrajectoryError> {
    sequence(robot, kind, &robot_dofs(robot), dt)
}

fn sequence(
    robot: &Robot,
    kind: SignalKind,
    dofs: &[usize],
    dt: f64,
) -> Result<Trajectory, TrajectoryError> {
    if !(dt.is_finite() && dt > 0.0 && dt <= 0.1) {
        return Err(TrajectoryError::Option {
            name: "dt",
            value: dt.to_string(),
            reason: "must be a period in (0, 0.1] s".into(),
        });
    }
    let rest = rest_pose(robot);
    let amp = amplitudes(robot);
    // Pieces: (start time, DOFs moving); `sines` moves them all in one piece.
    let pieces: Vec<Vec<usize>> = match kind {
        SignalKind::Sines => vec![dofs.to_vec()],
        _ => dofs.iter().map(|&d| vec![d]).collect(),
    };
    let mut segments = Vec::new();
    let piece_len = kind.duration() + REST_BETWEEN;
    let total = REST_BETWEEN + piece_len * pieces.len() as f64;
    super::sample_budget(total, dt, "sampling the identification signal", "dt")?;
    let n = (total / dt).round() as usize;
    let mut t = Vec::with_capacity(n + 1);
    let mut poses = Vec::with_capacity(n + 1);
    let mut tags = Vec::with_capacity(n + 1);
    for piece in &pieces {
        segments.push(if piece.len() == 1 {
            DOF_NAMES[piece[0]].to_string()
        } else {
            "all".to_string()
        });
    }
    for sample in 0..=n {
        let time = sample as f64 * dt;
        let mut pose = rest;
        let mut tag = None;
        let local = time - REST_BETWEEN;
        if local >= 0.0 {
            let index = (local / piece_len) as usize;
            let within = local - index as f64 * piece_len;
            if index < pieces.len() && within <= kind.duration() {
                tag = Some(index);
                for &d in &pieces[index] {
                    let a = match kind {
                        SignalKind::Chirp => amp[d].min(chirp_envelope(robot, d, within)),
                        _ => amp[d],
                    };
                    pose[d] = rest[d] + a * unit_value(kind, within, d);
                }
            }
        }
        t.push(time);
        poses.push(pose);
        tags.push(tag);
    }
    Ok(from_values(t, poses, tags, segments))
}
