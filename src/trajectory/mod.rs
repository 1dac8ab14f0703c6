//! Trajectories: time-sampled platform poses with velocity, acceleration and segment tags.
//!
//! Pure maths (no physics). Generators, CSV import/export and the winch-limit checks live in
//! submodules; this file holds the data type every other layer (simulation, ADS virtual PLC,
//! viewer, metrics) consumes.

use crate::kinematics::Pose;
use serde::Serialize;

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
        // First sample with time > t; the one before it is at or before t.
        let k = self.samples.partition_point(|s| s.t <= t);
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
