//! Seed 004's digital-filter surrogate: the fastest model of a parallel robot.
//!
//! Seed 004 (Casas et al. 2017) replaces the dynamics of a motion platform by one SISO
//! channel per degree of freedom — a pure delay and a second-order low-pass discretised with
//! Tustin's method ([`filter`]) — after a static *combination step* that scales the demanded
//! DOFs proportionally, by bisection against the inverse kinematics, until the robot can
//! reach them ([`combine`], the paper's CombinacionGdL). The parameters are fitted per DOF by
//! maximising the NRMSE against a reference response ([`fit`]); the references — runs of the
//! physics core or a recorded CSV — and the fit/validate sessions are one layer up, in
//! [`crate::identify`], since they run the physics; the identification signals are
//! trajectories (`steps`, `chirp`, … in [`crate::trajectory::signals`]). As a physical model
//! the surrogate is [`crate::sim::models`]' `surrogate`.
//!
//! Model vs. state as in the physics core: [`Surrogate`] is immutable (filters at one
//! sampling period), [`SurrogateState`] holds the delay lines and filter memories, and
//! [`Surrogate::step`] advances one sample. The filters act on deviations from a rest pose
//! (seed 004: "not the absolute position but the displacement relative to rest"), so that a
//! gain K ≠ 1 scales motion, not the absolute coordinates.

pub mod combine;
pub mod filter;
pub mod fit;
mod optimize;
pub mod params;

pub use combine::{CdprReachability, Combined, DEFAULT_TOLERANCES, Reachability, combine};
pub use filter::{DofFilter, DofParams, DofState};
pub use fit::{DofFit, FitError, FitMethod, FitOptions, Series, fit_dof, nrmse};
pub use params::{DofEntry, ParamsError, SurrogateParams};

/// The pose coordinates in `Pose::to_array` order, as named in params files and options.
pub const DOF_NAMES: [&str; 6] = ["x", "y", "z", "roll", "pitch", "yaw"];

/// Index of a DOF name ("x" … "yaw").
pub fn dof_index(name: &str) -> Option<usize> {
    DOF_NAMES.iter().position(|n| *n == name)
}

/// The compiled surrogate: one filter per DOF at one sampling period (None: that DOF
/// passes its input through unchanged).
#[derive(Debug, Clone, PartialEq)]
pub struct Surrogate {
    pub dt: f64,
    /// The pose the filters act about (the robot's home), SI.
    pub rest: [f64; 6],
    pub filters: [Option<DofFilter>; 6],
}

/// The changing part: per DOF the delay line and the filter memory, and the last output.
#[derive(Debug, Clone, PartialEq)]
pub struct SurrogateState {
    dofs: [Option<DofState>; 6],
    pub output: [f64; 6],
}

impl Surrogate {
    /// Discretises `params` at `dt` (s). The delays round to whole samples of `dt`.
    pub fn new(params: &SurrogateParams, dt: f64) -> Surrogate {
        let filters = std::array::from_fn(|k| {
            params
                .dof(k)
                .map(|entry| DofFilter::new(&entry.params(), dt))
        });
        Surrogate {
            dt,
            rest: params.rest,
            filters,
        }
    }

    /// At rest with `input` held forever (output = rest + K·(input − rest) per filtered DOF).
    pub fn start(&self, input: &[f64; 6]) -> SurrogateState {
        let mut output = *input;
        let dofs = std::array::from_fn(|k| {
            self.filters[k].as_ref().map(|f| {
                let u = input[k] - self.rest[k];
                output[k] = self.rest[k] + f.gain * u;
                DofState::at_rest(f, u)
            })
        });
        SurrogateState { dofs, output }
    }

    /// One sample: the (already combined) demanded pose in, the simulated pose out.
    #[inline]
    pub fn step(&self, state: &mut SurrogateState, input: &[f64; 6]) -> [f64; 6] {
        for (k, (&u, out)) in input.iter().zip(state.output.iter_mut()).enumerate() {
            *out = match (&self.filters[k], &mut state.dofs[k]) {
                (Some(f), Some(s)) => self.rest[k] + s.step(f, u - self.rest[k]),
                _ => u,
            };
        }
        state.output
    }
}

/// The poses the surrogate produces for the demands `input` (combined first when `reach`), as
/// one batch: the filters' own speed (benches/surrogate.rs). Returns the demands the
/// combination step scaled down and the reachability tests it made.
pub fn step_all(
    surrogate: &Surrogate,
    reach: Option<&dyn Reachability>,
    input: &[[f64; 6]],
    out: &mut Vec<[f64; 6]>,
) -> (u64, u64) {
    out.clear();
    let Some(first) = input.first() else {
        return (0, 0);
    };
    let (mut limited, mut checks) = (0u64, 0u64);
    let combined = |demand: &[f64; 6], limited: &mut u64, checks: &mut u64| match reach {
        None => *demand,
        Some(r) => {
            let c = combine(r, &surrogate.rest, demand, &DEFAULT_TOLERANCES);
            *limited += c.limited as u64;
            *checks += c.checks as u64;
            c.pose
        }
    };
    let start = combined(first, &mut 0, &mut 0);
    let mut state = surrogate.start(&start);
    for demand in input {
        let u = combined(demand, &mut limited, &mut checks);
        out.push(surrogate.step(&mut state, &u));
    }
    (limited, checks)
}

#[cfg(test)]
mod tests;
