//! `tilt`: a rotation-only trajectory for robots whose platform turns about a fixed centre
//! (seed 004's 2-RSSU pitch/roll platform), also usable on 6-DOF cable robots.
//!
//! From the home pose: pitch to +A_p, to −A_p, back to level; roll to +A_r, to −A_r, back;
//! then both together to (+A_r, +A_p) and (−A_r, −A_p) and back — each move a quintic
//! (seed 001's law: zero velocity and acceleration at both ends) in (roll, pitch) angle space,
//! with `speed` read as rad/s. The amplitudes are 80 % of the reach along each axis: for an
//! rssu2 its inverse kinematics' ranges (seed 004's Table 1), for a 6-DOF cable robot 5°.
//! A 2-RSSU cannot combine full roll with full pitch: its diagonal corners are 80 % of its
//! coupled reach along the diagonal (found by seed 004's combination step).

use super::profile::{Profile, ProfileLimits};
use super::{BuiltinOptions, Sample, Trajectory, TrajectoryError};
use crate::kinematics::Pose;
use crate::robot::{Dof, Mechanism, Robot};
use nalgebra::Vector3;

/// Fraction of the reach the moves go to.
pub const TILT_FRACTION: f64 = 0.8;
/// Amplitude on a 6-DOF cable robot, rad.
pub const CABLE_TILT: f64 = 5.0 * std::f64::consts::PI / 180.0;

/// The (roll, pitch) amplitudes of `tilt` for `robot`.
pub fn tilt_amplitudes(robot: &Robot) -> Result<(f64, f64), TrajectoryError> {
    match (&robot.mechanism, robot.dof) {
        (Mechanism::Rssu2(r), _) => {
            let [pitch_lo, pitch_hi, roll_lo, roll_hi] = r.ranges();
            let roll = roll_hi.min(-roll_lo);
            let pitch = pitch_hi.min(-pitch_lo);
            Ok((TILT_FRACTION * roll, TILT_FRACTION * pitch))
        }
        (Mechanism::Cables, Dof::Six) => Ok((CABLE_TILT, CABLE_TILT)),
        _ => Err(TrajectoryError::Geometry(format!(
            "`tilt` rotates the platform, but {} cannot rotate (its orientation is held)",
            robot.name
        ))),
    }
}

/// The `tilt` trajectory (see the module comment).
pub fn tilt(robot: &Robot, options: &BuiltinOptions) -> Result<Trajectory, TrajectoryError> {
    if !(options.dt.is_finite() && options.dt > 0.0) {
        return Err(TrajectoryError::Option {
            name: "dt",
            value: options.dt.to_string(),
            reason: "must be a positive, finite number".into(),
        });
    }
    if !(options.speed.is_finite() && options.speed > 0.0) {
        return Err(TrajectoryError::Option {
            name: "speed",
            value: options.speed.to_string(),
            reason: "must be a positive, finite angular speed (rad/s for `tilt`)".into(),
        });
    }
    let (ar, ap) = tilt_amplitudes(robot)?;
    // The diagonal corners: as far along the diagonal as the axes' amplitudes when that is in
    // reach, else the same fraction of the coupled reach (a 2-RSSU cannot combine its full
    // roll with its full pitch).
    let diagonal = |sign: f64| match &robot.mechanism {
        Mechanism::Rssu2(r) => {
            let (cr, cp) = r.combine(sign * ar / TILT_FRACTION, sign * ap / TILT_FRACTION, 1e-9);
            (TILT_FRACTION * cr, TILT_FRACTION * cp)
        }
        _ => (sign * ar, sign * ap),
    };
    let (up, down) = (diagonal(1.0), diagonal(-1.0));
    let home = Pose::from_array(robot.home);
    let (r0, p0) = (home.rpy.x, home.rpy.y);
    let corners: [(&str, f64, f64); 9] = [
        ("Pitch", 0.0, ap),
        ("Pitch", 0.0, -ap),
        ("Pitch", 0.0, 0.0),
        ("Roll", ar, 0.0),
        ("Roll", -ar, 0.0),
        ("Roll", 0.0, 0.0),
        ("Both", up.0, up.1),
        ("Both", down.0, down.1),
        ("Both", 0.0, 0.0),
    ];
    let limits = ProfileLimits {
        speed: options.speed,
        accel: options.accel.unwrap_or(f64::INFINITY),
        jerk: options.jerk.unwrap_or(f64::INFINITY),
    };
    let segments = vec!["Pitch".to_string(), "Roll".to_string(), "Both".to_string()];
    let mut samples = Vec::new();
    let (mut from_r, mut from_p) = (0.0, 0.0);
    let mut t0 = 0.0;
    for (tag, to_r, to_p) in corners {
        let segment = segments.iter().position(|s| s == tag);
        let delta = Vector3::new(to_r - from_r, to_p - from_p, 0.0);
        let distance = delta.norm();
        let profile = Profile::poly5(distance, &limits);
        let unit = delta / distance.max(f64::MIN_POSITIVE);
        let n = (profile.duration / options.dt).ceil().max(1.0) as usize;
        if n as f64 + samples.len() as f64 >= super::MAX_SAMPLES as f64 {
            return Err(TrajectoryError::TooManySamples {
                samples: (t0 + profile.duration) / options.dt,
                what: "sampling the tilt moves",
                duration: t0 + profile.duration,
                dt: options.dt,
                options: "dt or speed",
            });
        }
        // The first move includes its start sample; later ones start after the previous end.
        let first = usize::from(!samples.is_empty());
        for k in first..=n {
            let t = (k as f64 * options.dt).min(profile.duration);
            let s = profile.at(t);
            let angle = Vector3::new(from_r, from_p, 0.0) + unit * s.s;
            let mut pose = home;
            pose.rpy.x = r0 + angle.x;
            pose.rpy.y = p0 + angle.y;
            let mut velocity = [0.0; 6];
            let mut acceleration = [0.0; 6];
            velocity[3] = unit.x * s.v;
            velocity[4] = unit.y * s.v;
            acceleration[3] = unit.x * s.a;
            acceleration[4] = unit.y * s.a;
            samples.push(Sample {
                t: t0 + t,
                pose,
                velocity,
                acceleration,
                segment,
            });
        }
        t0 += profile.duration;
        (from_r, from_p) = (to_r, to_p);
    }
    Ok(Trajectory { samples, segments })
}
