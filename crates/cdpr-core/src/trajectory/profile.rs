//! One-dimensional speed profiles s(t) along a path of length D: trapezoidal, jerk-limited
//! S-curve (seven phases), constant speed (velocity steps) and seed 001's 5th-order polynomial.
//!
//! All start and end at rest except `Constant`, which jumps to the cruise speed at t = 0 and back
//! to zero at the end, like a PLC that streams positions at a fixed feed without ramps.
//! Piecewise profiles are stored as phases of constant jerk, integrated exactly, so that the
//! sampled position, velocity and acceleration are mutually consistent to rounding.

use super::TrajectoryError;
use serde::Serialize;

/// Which speed law a move follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileKind {
    /// Constant-acceleration ramps to the cruise speed and back (acceleration steps: unbounded
    /// jerk at the four switching instants).
    Trapezoid,
    /// Jerk-limited S-curve (seven phases): acceleration ramps at ±jerk.
    Scurve,
    /// Cruise speed throughout: velocity steps at every corner, like a PLC streaming positions
    /// without blending.
    Constant,
    /// 5th-order polynomial per move, s = D (10τ³ − 15τ⁴ + 6τ⁵): zero velocity and
    /// acceleration at both ends (seed 001's "5th order polynomial").
    Poly5,
}

crate::named_choice!(ProfileKind, "speed profile", {
    Trapezoid => "trapezoid", "constant-acceleration ramps to the cruise speed and back (unbounded jerk at the switching instants)";
    Scurve => "scurve", "jerk-limited S-curve (seven phases): acceleration ramps at ±jerk";
    Constant => "constant", "cruise speed throughout: velocity steps at every corner, like a PLC streaming positions without ramps";
    Poly5 => "poly5", "5th-order polynomial per move: zero velocity and acceleration at both ends (seed 001)";
});

/// Limits a profile respects along the path: speed (m/s), acceleration (m/s²), jerk (m/s³).
/// Which ones matter depends on the kind (the trapezoid ignores the jerk, `Constant` both).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProfileLimits {
    pub speed: f64,
    pub accel: f64,
    pub jerk: f64,
}

/// Position, velocity, acceleration and jerk along the path at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PathState {
    pub s: f64,
    pub v: f64,
    pub a: f64,
    pub j: f64,
}

/// A phase of constant jerk starting at `t0` from the state (s0, v0, a0).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Phase {
    t0: f64,
    duration: f64,
    s0: f64,
    v0: f64,
    a0: f64,
    jerk: f64,
}

#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Piecewise(Vec<Phase>),
    Quintic,
}

/// A speed profile covering `distance` in `duration`.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub kind: ProfileKind,
    pub distance: f64,
    pub duration: f64,
    /// Time spent accelerating at the start (= decelerating at the end; all profiles are
    /// symmetric). Blending overlaps a move's deceleration with the next one's acceleration.
    pub ramp_time: f64,
    shape: Shape,
}

fn check_positive(name: &'static str, value: f64) -> Result<(), TrajectoryError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(TrajectoryError::Option {
            name,
            value: value.to_string(),
            reason: "must be a positive, finite number".into(),
        })
    }
}

impl Profile {
    /// The profile of `kind` for a move of `distance` metres under `limits`.
    pub fn new(
        kind: ProfileKind,
        distance: f64,
        limits: &ProfileLimits,
    ) -> Result<Profile, TrajectoryError> {
        if !(distance.is_finite() && distance >= 0.0) {
            return Err(TrajectoryError::Option {
                name: "distance",
                value: distance.to_string(),
                reason: "must be a non-negative, finite length".into(),
            });
        }
        check_positive("speed", limits.speed)?;
        match kind {
            ProfileKind::Trapezoid => {
                check_positive("accel", limits.accel)?;
                Ok(Profile::trapezoid(distance, limits.speed, limits.accel))
            }
            ProfileKind::Scurve => {
                check_positive("accel", limits.accel)?;
                check_positive("jerk", limits.jerk)?;
                Ok(Profile::scurve(
                    distance,
                    limits.speed,
                    limits.accel,
                    limits.jerk,
                ))
            }
            ProfileKind::Constant => Ok(Profile::constant(distance, limits.speed)),
            ProfileKind::Poly5 => Ok(Profile::poly5(distance, limits)),
        }
    }

    fn piecewise(
        kind: ProfileKind,
        distance: f64,
        v_start: f64,
        ramp_time: f64,
        spec: &[(f64, Option<f64>, f64)],
    ) -> Profile {
        // spec: (duration, acceleration set at the phase start or None = continuous, jerk).
        let (mut t, mut s, mut v, mut a) = (0.0, 0.0, v_start, 0.0);
        let mut phases = Vec::with_capacity(spec.len());
        for &(duration, a_set, jerk) in spec {
            if duration <= 0.0 {
                continue;
            }
            if let Some(a_new) = a_set {
                a = a_new;
            }
            phases.push(Phase {
                t0: t,
                duration,
                s0: s,
                v0: v,
                a0: a,
                jerk,
            });
            let d = duration;
            s += v * d + a * d * d / 2.0 + jerk * d * d * d / 6.0;
            v += a * d + jerk * d * d / 2.0;
            a += jerk * d;
            t += d;
        }
        Profile {
            kind,
            distance,
            duration: t,
            ramp_time,
            shape: Shape::Piecewise(phases),
        }
    }

    /// Trapezoid: ramps of v/a, cruise D/v − v/a, duration D/v + v/a; a triangle (peak speed
    /// √(aD), duration 2√(D/a)) when the move is too short to reach v.
    pub fn trapezoid(distance: f64, speed: f64, accel: f64) -> Profile {
        let (ramp, cruise) = if distance >= speed * speed / accel {
            (speed / accel, distance / speed - speed / accel)
        } else {
            ((distance / accel).sqrt(), 0.0)
        };
        Profile::piecewise(
            ProfileKind::Trapezoid,
            distance,
            0.0,
            ramp,
            &[
                (ramp, Some(accel), 0.0),
                (cruise, Some(0.0), 0.0),
                (ramp, Some(-accel), 0.0),
            ],
        )
    }

    /// Jerk-limited S-curve from rest to rest. The ramp to speed v takes T_a = v/a + a/j when
    /// v ≥ a²/j (jerk phases of a/j around a constant-acceleration phase), else 2√(v/j) with
    /// peak acceleration √(vj); it covers v·T_a/2. If the two ramps are longer than the move,
    /// the cruise speed is lowered to the v' with v'·T_a(v') = D (closed forms for both cases).
    pub fn scurve(distance: f64, speed: f64, accel: f64, jerk: f64) -> Profile {
        let ramp_of = |v: f64| {
            if v * jerk >= accel * accel {
                (v / accel + accel / jerk, accel / jerk)
            } else {
                let tj = (v / jerk).sqrt();
                (2.0 * tj, tj)
            }
        };
        let mut v = speed;
        if v * ramp_of(v).0 > distance {
            // Case "a reached": v'²/a + v' a/j − D = 0.
            let a2j = accel * accel / jerk;
            let reached = (-a2j + (a2j * a2j + 4.0 * distance * accel).sqrt()) / 2.0;
            v = if reached >= a2j {
                reached
            } else {
                // Case "a not reached": 2 v'^{3/2}/√j = D.
                (distance * distance * jerk / 4.0).cbrt()
            };
        }
        let (ramp, tj) = ramp_of(v);
        let constant_accel = ramp - 2.0 * tj;
        let cruise = if v > 0.0 {
            ((distance - v * ramp) / v).max(0.0)
        } else {
            0.0
        };
        Profile::piecewise(
            ProfileKind::Scurve,
            distance,
            0.0,
            ramp,
            &[
                (tj, Some(0.0), jerk),
                (constant_accel, None, 0.0),
                (tj, None, -jerk),
                (cruise, Some(0.0), 0.0),
                (tj, Some(0.0), -jerk),
                (constant_accel, None, 0.0),
                (tj, None, jerk),
            ],
        )
    }

    /// Constant speed over the whole move: velocity steps at both ends.
    pub fn constant(distance: f64, speed: f64) -> Profile {
        Profile::piecewise(
            ProfileKind::Constant,
            distance,
            speed,
            0.0,
            &[(distance / speed, Some(0.0), 0.0)],
        )
    }

    /// The quintic s = D(10τ³ − 15τ⁴ + 6τ⁵) (seed 001's "5th order polynomial" with zero end
    /// velocity and acceleration), τ = t/T, with the shortest T that keeps
    /// the peak speed 15D/(8T), peak acceleration 10D/(√3 T²) and peak jerk 60D/T³ within the
    /// limits (a limit that is not finite or not positive is ignored, except the speed).
    pub fn poly5(distance: f64, limits: &ProfileLimits) -> Profile {
        let mut duration = 15.0 / 8.0 * distance / limits.speed;
        if limits.accel.is_finite() && limits.accel > 0.0 {
            duration = duration.max((10.0 / 3f64.sqrt() * distance / limits.accel).sqrt());
        }
        if limits.jerk.is_finite() && limits.jerk > 0.0 {
            duration = duration.max((60.0 * distance / limits.jerk).cbrt());
        }
        Profile {
            kind: ProfileKind::Poly5,
            distance,
            duration,
            ramp_time: duration / 2.0,
            shape: Shape::Quintic,
        }
    }

    /// State at time `t` after the start; at rest at 0 before and at `distance` after the move.
    /// Right-continuous: at a switching instant the new phase's values apply (so `Constant` has
    /// its cruise speed at t = 0).
    pub fn at(&self, t: f64) -> PathState {
        if t < 0.0 {
            return PathState::default();
        }
        if t >= self.duration {
            return PathState {
                s: self.distance,
                ..PathState::default()
            };
        }
        match &self.shape {
            Shape::Quintic => {
                let big_t = self.duration;
                let u = t / big_t;
                let d = self.distance;
                let (u2, u3) = (u * u, u * u * u);
                PathState {
                    s: d * u3 * (10.0 - 15.0 * u + 6.0 * u2),
                    v: d / big_t * 30.0 * u2 * (1.0 - u) * (1.0 - u),
                    a: d / (big_t * big_t) * 60.0 * u * (1.0 - 3.0 * u + 2.0 * u2),
                    j: d / (big_t * big_t * big_t) * 60.0 * (1.0 - 6.0 * u + 6.0 * u2),
                }
            }
            Shape::Piecewise(phases) => {
                let k = phases.partition_point(|p| p.t0 <= t).saturating_sub(1);
                let p = &phases[k];
                let tau = t - p.t0;
                PathState {
                    s: (p.s0
                        + p.v0 * tau
                        + p.a0 * tau * tau / 2.0
                        + p.jerk * tau * tau * tau / 6.0)
                        .min(self.distance),
                    v: p.v0 + p.a0 * tau + p.jerk * tau * tau / 2.0,
                    a: p.a0 + p.jerk * tau,
                    j: p.jerk,
                }
            }
        }
    }

    /// Largest speed reached (m/s).
    pub fn peak_speed(&self) -> f64 {
        self.at(self.duration / 2.0).v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(speed: f64, accel: f64, jerk: f64) -> ProfileLimits {
        ProfileLimits { speed, accel, jerk }
    }

    #[test]
    fn phases_end_exactly_at_the_distance() {
        for kind in [
            ProfileKind::Trapezoid,
            ProfileKind::Scurve,
            ProfileKind::Constant,
            ProfileKind::Poly5,
        ] {
            for d in [1e-4, 0.01, 0.2, 3.0] {
                let p = Profile::new(kind, d, &limits(0.4, 3.0, 8.0)).unwrap();
                let just_before = p.at(p.duration * (1.0 - 1e-12));
                assert!(
                    (just_before.s - d).abs() < 1e-9 * d.max(1.0),
                    "{kind:?} {d}"
                );
                assert_eq!(p.at(p.duration).s, d);
            }
        }
    }

    #[test]
    fn non_positive_limits_are_rejected_by_name() {
        let e = Profile::new(ProfileKind::Scurve, 1.0, &limits(0.1, 1.0, 0.0)).unwrap_err();
        assert!(e.to_string().contains("jerk"), "{e}");
        let e = Profile::new(ProfileKind::Trapezoid, 1.0, &limits(-0.1, 1.0, 1.0)).unwrap_err();
        assert!(e.to_string().contains("speed"), "{e}");
    }
}
