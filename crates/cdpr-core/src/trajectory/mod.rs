//! Trajectories: time-sampled platform poses with velocity, acceleration and segment tags.
//!
//! Pure maths (no physics). Generators, CSV import/export and the winch-limit checks live in
//! submodules; this file holds the data type every other layer (simulation, ADS virtual PLC,
//! viewer, metrics) consumes, the error type and the two entry points [`builtin()`] and [`load()`].
//!
//! - [`profile`]: 1-D speed laws (trapezoid, S-curve, constant, quintic);
//! - [`path`]: lines, arcs, waypoint chains, stopped / blended / continuous timing;
//! - built-ins by name: `seed000`, `pickplace`, `poly5` ([`builtin()`], [`BUILTINS`]);
//! - [`tilt`]: a rotation-only built-in (roll and pitch moves), for the 2-RSSU platform;
//! - [`csv`]: import/export; [`limits`]: winch limits in cable space and time scaling;
//! - [`signals`]: seed 004's identification signals `steps`, `chirp`, `dsine`, `dsquare`,
//!   `sines` (also by name in [`load()`]);
//! - [`perturb`]: a synthetic "tracking response" (delay, low-pass, offset) for examples.

mod builtin;
pub mod csv;
pub mod limits;
pub mod path;
pub mod perturb;
pub mod prepare;
pub mod profile;
pub mod signals;
pub mod tilt;

pub use builtin::{
    BUILTINS, BuiltinOptions, DEFAULT_ACCEL, DEFAULT_JERK, benchmark_box, benchmark_plan, builtin,
    pickplace_plan, poly5_plan,
};
pub use path::{MotionSpec, Piece, Plan, Transition};
pub use profile::{Profile, ProfileKind, ProfileLimits};

use crate::kinematics::Pose;
use serde::Serialize;
use std::path::Path;

/// Why a trajectory could not be built, read or written. Messages name the file, line, column
/// or option at fault.
#[derive(Debug, thiserror::Error)]
pub enum TrajectoryError {
    #[error("{file}: {cause}")]
    Io {
        file: String,
        /// In the message, not also a `source`: an error chain prints each cause once.
        cause: std::io::Error,
    },
    /// A CSV problem at a line (1 = the header row).
    #[error("{file}:{line}: {message}")]
    Csv {
        file: String,
        line: u64,
        message: String,
    },
    #[error("{name} = {value}: {reason}")]
    Option {
        name: &'static str,
        value: String,
        reason: String,
    },
    /// A file too large (or a line too long) to be a trajectory.
    #[error("{file}: {message}")]
    TooLarge { file: String, message: String },
    #[error("{0}")]
    Geometry(String),
    /// A pose far outside the robot's frame: a CSV in millimetres, probably.
    #[error(
        "{file}: the pose at t = {t} s, ({x}, {y}, {z}) m, is {far}",
        x = .far.position[0],
        y = .far.position[1],
        z = .far.position[2]
    )]
    FarAway {
        file: String,
        t: f64,
        /// Where the pose is and how far (boxed: the rare case keeps the error small).
        far: Box<crate::robot::FarAway>,
    },
    #[error(
        "`{spec}` is neither a built-in trajectory ({known}) nor an existing CSV file{}",
        crate::options::did_you_mean(*nearest)
    )]
    UnknownName {
        spec: String,
        known: String,
        /// The built-in whose name is nearest, if one is close.
        nearest: Option<&'static str>,
    },
    /// A sampling that would hold more than [`MAX_SAMPLES`] samples.
    #[error(
        "{samples:.1e} samples ({what}: {duration} s every {dt} s); at most {max:.1e}: change {options}",
        max = MAX_SAMPLES as f64
    )]
    TooManySamples {
        samples: f64,
        what: &'static str,
        duration: f64,
        dt: f64,
        /// The options whose product is too large, as the user names them.
        options: &'static str,
    },
}

/// Most samples one trajectory may hold once built, read, time-scaled, perturbed or
/// resampled: 5 million (5000 s at 1 ms; about 0.8 GB in memory). Every face (CLI, shadow,
/// viewer) shares it.
pub const MAX_SAMPLES: usize = 5_000_000;

/// Number of samples of a grid from 0 to `duration` (inclusive) every `dt` s, when it is
/// within [`MAX_SAMPLES`]; otherwise [`TrajectoryError::TooManySamples`] naming `what` is
/// sampled and the `options` that set the product.
pub fn sample_budget(
    duration: f64,
    dt: f64,
    what: &'static str,
    options: &'static str,
) -> Result<usize, TrajectoryError> {
    let steps = (duration / dt - 1e-9).ceil().max(0.0);
    let samples = steps + 1.0;
    if samples.is_finite() && samples <= MAX_SAMPLES as f64 {
        Ok(samples as usize)
    } else {
        Err(TrajectoryError::TooManySamples {
            samples,
            what,
            duration,
            dt,
            options,
        })
    }
}

/// A built-in trajectory by name (see [`BUILTINS`]), or else a CSV file (see [`csv`]).
pub fn load(
    spec: &str,
    robot: &crate::robot::Robot,
    options: &BuiltinOptions,
) -> Result<Trajectory, TrajectoryError> {
    if spec == "tilt" {
        return tilt::tilt(robot, options);
    }
    if BUILTINS.iter().any(|(name, _)| *name == spec) {
        if let crate::robot::Mechanism::Rssu2(_) = robot.mechanism {
            return Err(TrajectoryError::Geometry(format!(
                "`{spec}` moves the platform's position, but {} only turns about its universal \
                 joint (roll, pitch): use `tilt` or a CSV with roll and pitch columns",
                robot.name
            )));
        }
        return builtin(robot, spec, options);
    }
    if let Some(kind) = signals::SignalKind::from_name(spec) {
        return signals::signal(robot, kind, options.dt);
    }
    if Path::new(spec).is_file() {
        let traj = csv::read(spec)?;
        return match traj.far_away(robot) {
            Some((t, _, far)) => Err(TrajectoryError::FarAway {
                file: spec.to_string(),
                t,
                far: Box::new(far),
            }),
            None => Ok(traj),
        };
    }
    let identification = signals::SIGNALS.iter().map(|(n, _)| *n);
    let names = builtin::BUILTINS
        .iter()
        .map(|(n, _)| *n)
        .chain(["tilt"])
        .chain(identification.clone());
    Err(TrajectoryError::UnknownName {
        spec: spec.to_string(),
        nearest: crate::options::unknown(spec, names).nearest,
        known: std::iter::once(builtin::builtin_names())
            .chain(std::iter::once("tilt".to_string()))
            .chain(identification.map(str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// One sample: pose, its first and second time derivatives (x, y, z, roll, pitch, yaw rates),
/// and the index of its segment in [`Trajectory::segments`] (if tagged).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    pub t: f64,
    pub pose: Pose,
    /// d(pose)/dt: m/s and rad/s of (x, y, z, roll, pitch, yaw).
    pub velocity: [f64; 6],
    /// d²(pose)/dt²: m/s² and rad/s².
    pub acceleration: [f64; 6],
    pub segment: Option<usize>,
}

/// A time-ordered sequence of samples (strictly increasing t).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Trajectory {
    pub samples: Vec<Sample>,
    /// Segment names, indexed by `Sample::segment`.
    pub segments: Vec<String>,
}

impl Trajectory {
    pub fn duration(&self) -> f64 {
        match (self.samples.first(), self.samples.last()) {
            (Some(a), Some(b)) => b.t - a.t,
            _ => 0.0,
        }
    }

    pub fn start_time(&self) -> f64 {
        self.samples.first().map(|s| s.t).unwrap_or(0.0)
    }

    /// The first sample whose position lies far outside `robot`'s frame (see
    /// [`crate::robot::FarAway`]): its time, position and how far away it is.
    pub fn far_away(
        &self,
        robot: &crate::robot::Robot,
    ) -> Option<(f64, [f64; 3], crate::robot::FarAway)> {
        self.samples.iter().find_map(|s| {
            let p = s.pose.position;
            robot.far_away(&p).map(|far| (s.t, [p.x, p.y, p.z], far))
        })
    }

    /// Name of a sample's segment, if any.
    pub fn segment_name(&self, sample: &Sample) -> Option<&str> {
        sample
            .segment
            .and_then(|k| self.segments.get(k))
            .map(String::as_str)
    }

    /// The sample at time `t`, linearly interpolated between the stored samples and held
    /// constant (with zero velocity and acceleration) outside them. The segment is the one of
    /// the sample at or before `t`.
    pub fn sample_at(&self, t: f64) -> Option<Sample> {
        self.sample_from(t, &mut 0)
    }

    /// [`Trajectory::sample_at`] for times that mostly increase (a run's steps): the interval
    /// is looked for from `cursor` on (one or two samples on), and `cursor` is left there for
    /// the next call; an earlier time is found by bisection. The same sample as `sample_at`.
    pub fn sample_from(&self, t: f64, cursor: &mut usize) -> Option<Sample> {
        let first = self.samples.first()?;
        let last = self.samples.last()?;
        if t <= first.t {
            return Some(Sample {
                t,
                velocity: [0.0; 6],
                acceleration: [0.0; 6],
                ..*first
            });
        }
        if t >= last.t {
            return Some(Sample {
                t,
                velocity: [0.0; 6],
                acceleration: [0.0; 6],
                ..*last
            });
        }
        // The first sample with time > t (there is one: t < last.t), after one at or before t
        // (t > first.t): a walk from the cursor when it stands at or before t, else bisection.
        let n = self.samples.len();
        let mut k = (*cursor).clamp(1, n - 1);
        if self.samples[k - 1].t <= t {
            while self.samples[k].t <= t {
                k += 1;
            }
        } else {
            k = self.samples.partition_point(|s| s.t <= t);
        }
        *cursor = k;
        let (a, b) = (&self.samples[k - 1], &self.samples[k]);
        let u = (t - a.t) / (b.t - a.t);
        let lerp6 = |x: &[f64; 6], y: &[f64; 6]| {
            let mut out = [0.0; 6];
            for i in 0..6 {
                out[i] = x[i] + (y[i] - x[i]) * u;
            }
            out
        };
        let pose = Pose::from_array(lerp6(&a.pose.to_array(), &b.pose.to_array()));
        Some(Sample {
            t,
            pose,
            velocity: lerp6(&a.velocity, &b.velocity),
            acceleration: lerp6(&a.acceleration, &b.acceleration),
            segment: a.segment,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_sample_budget_counts_the_grid_and_names_what_is_too_much() {
        assert_eq!(sample_budget(1.0, 0.001, "x", "dt").expect("fits"), 1001);
        assert_eq!(sample_budget(0.0, 0.001, "x", "dt").expect("fits"), 1);
        let e = sample_budget(130.0, 1e-9, "sampling", "dt or speed").expect_err("too many");
        let text = e.to_string();
        assert!(
            text.starts_with("1.3e11 samples (sampling: 130 s every 0.000000001 s)"),
            "{text}"
        );
        assert!(
            text.ends_with("at most 5.0e6: change dt or speed"),
            "{text}"
        );
        assert!(sample_budget(f64::INFINITY, 1.0, "x", "dt").is_err());
        assert!(sample_budget(1.0, 1e-300, "x", "dt").is_err());
    }

    #[test]
    fn csv_reading_is_bounded_in_line_length() {
        let endless = std::io::repeat(0u8).take(3 << 20);
        let e = csv::from_reader(endless, "/dev/zero", &Default::default()).expect_err("refused");
        assert!(
            e.to_string()
                .starts_with("/dev/zero: line 1 is longer than 1 MiB"),
            "{e}"
        );
    }

    #[test]
    fn sample_from_a_cursor_is_sample_at() {
        let samples: Vec<Sample> = (0..50)
            .map(|k| {
                let t = 0.1 * k as f64 + 0.01 * (k % 3) as f64;
                Sample {
                    t,
                    pose: Pose::from_array([t.sin(), t * t, 1.0, 0.0, 0.1 * t, 0.0]),
                    velocity: [t; 6],
                    acceleration: [-t; 6],
                    segment: None,
                }
            })
            .collect();
        let traj = Trajectory {
            samples,
            segments: Vec::new(),
        };
        let mut cursor = 0;
        // Forward in small and large steps, back, onto samples, beyond both ends.
        let times = [
            -1.0, 0.0, 0.003, 0.05, 0.1, 0.1005, 0.37, 2.0, 1.0, 1.0, 4.93, 4.9, 9.0, 0.2,
        ];
        for t in times {
            assert_eq!(
                traj.sample_from(t, &mut cursor),
                traj.sample_at(t),
                "t = {t}"
            );
        }
    }

    #[test]
    fn sample_at_interpolates_and_holds() {
        let s = |t: f64, x: f64| Sample {
            t,
            pose: Pose::new(x, 0.0, 0.0, 0.0, 0.0, 0.0),
            velocity: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            acceleration: [0.0; 6],
            segment: Some(0),
        };
        let traj = Trajectory {
            samples: vec![s(0.0, 0.0), s(1.0, 1.0), s(2.0, 2.0)],
            segments: vec!["a".into()],
        };
        let mid = traj.sample_at(1.25).expect("non-empty");
        assert!((mid.pose.position.x - 1.25).abs() < 1e-15);
        assert_eq!(mid.velocity[0], 1.0);
        let after = traj.sample_at(5.0).expect("non-empty");
        assert_eq!(after.pose.position.x, 2.0);
        assert_eq!(after.velocity, [0.0; 6]);
        assert_eq!(traj.segment_name(&mid), Some("a"));
        assert_eq!(traj.duration(), 2.0);
    }
}
