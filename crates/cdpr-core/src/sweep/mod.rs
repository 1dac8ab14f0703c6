//! Parameter sweeps (`cdpr sweep SPEC.toml`): a grid or a random sample of robots,
//! trajectories, speeds and robot parameters, each run simulated headless and summarised in
//! one row of metrics.
//!
//! The API, in the order a caller uses it (the command line and the Python binding both):
//! - [`Spec::from_file`] / [`Spec::from_text`]: read and check a spec (strict: unknown keys
//!   and bad values are refused as `file:line: field: message`);
//! - [`Spec::runs`]: the runs it asks for, each a [`RunPlan`] with a stable `index` and a
//!   seed derived only from the spec's `seed` and that index ([`run_seed`]), so that a run's
//!   result does not depend on the number of threads, the shard or a resume;
//! - [`Spec::columns`]: the columns of a row; [`run_one`]: one run → one [`Row`] (a failed
//!   run is a row with status `error`, never a panic or an abort of the sweep);
//! - [`SweepRun`]: a [`SweepRequest`] (threads, shard, recordings, resume) run to its CSV,
//!   what every face calls; [`execute`]: the selected runs (a shard, minus those already
//!   done) on a pool of threads, rows handed to the caller's thread as they finish;
//! - [`csv`]: the output file, resumable (a header check, the done indices, appending with a
//!   flush per row, a partial last line dropped).
//!
//! # The spec file
//!
//! ```toml
//! robots = ["uvigo8"]            # shipped robot names or robot files (relative to the spec)
//! trajectories = ["seed000"]     # built-in trajectories or CSV files (relative to the spec)
//! speeds = [0.05, 0.1]           # cruise speeds, m/s (0.001 to 10) [default: [0.1]]
//! model = "elastic"              # any run option of `cdpr simulate` (crate::run::OPTIONS, less
//! dt = 0.001                     # robot, trajectory, speed, payload): same names, ranges, defaults
//! remove_lag = true              # (`no_lag = true`, the old spelling, still reads, with a warning)
//! mode = "grid"                  # grid (every combination) | random (`samples` draws)
//! samples = 100                  # random mode only: number of runs (1 to 1e6)
//! seed = 0                       # mixes into every run's seed [default: 0]
//!
//! [parameters]                   # a list of values (grid or random), or {min, max} (random)
//! stiffness_scale = [0.5, 1.0]   # × every cable's stiffness (k or EA) (0.001 to 1000)
//! damping_scale = [1.0]          # × every cable's damping (0 to 1000)
//! payload = [0.0, 0.5]           # kg added to the moving mass, inertia scaled (0 to 1e4)
//! anchor_offset = [0.0, 0.002]   # m: std-dev of a random offset (per run, seeded) of every
//!                                # frame anchor coordinate (0 to 0.1)
//! winch_speed_scale = [1.0]      # × the winches' velocity limit (0.01 to 100)
//! winch_accel_scale = [1.0]      # × the winches' acceleration and jerk limits (0.01 to 100)
//! kp = [1500.0]                  # tension controller's Kp, 1/s² (0 to 1e6), as --kp
//! kd = { min = 500.0, max = 3000.0 }  # its Kd, 1/s (0 to 1e5), as --kd
//! ```
//!
//! Grid runs are numbered robots (slowest), trajectories, speeds, then the parameters in the
//! order above (fastest). Random runs draw each item uniformly: one value of each list, a
//! uniform number in each `{min, max}`, from the run's seed. A run's robot is the robot file
//! with the parameters applied; everything else is `cdpr simulate`'s (same defaults, same
//! metrics).

pub mod csv;
mod exec;
mod locate;
pub mod parameters;
mod plan;
mod request;
mod spec;

pub use exec::{ExecuteOptions, Summary, execute};
pub use locate::run_option_keys;
pub use parameters::{ParamValues, Parameter, parameters};
pub use plan::{
    Cell, METRIC_COLUMNS, Row, RunPlan, SplitMix64, record_path, run_one, run_one_recorded,
    run_seed,
};
pub use request::{MAX_SHARDS, OPTIONS, Shard, SweepRequest, SweepRun};
pub use spec::{MAX_RUNS, Mode, Spec};

/// Why a sweep cannot start or go on (a failed run is not one: it is a row).
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The OS error is in the message (not a `source`): an error chain prints it once.
    #[error("{file}: {error}")]
    Io { file: String, error: std::io::Error },
    /// `file:line: field: message`, or `file: field: message` when the line is unknown.
    #[error("{file}{}: {field}: {message}", if *.line == 0 { String::new() } else { format!(":{line}") })]
    Invalid {
        file: String,
        /// 1-based line, 0 when unknown.
        line: usize,
        field: String,
        message: String,
    },
    /// More runs than [`MAX_RUNS`].
    #[error("{runs:.3e} runs ({detail}); at most {max:.1e}: shorten a list, or use mode = \"random\" with fewer samples", max = MAX_RUNS as f64)]
    TooManyRuns { runs: f64, detail: String },
    /// The output file cannot be resumed (or read).
    #[error("{file}: {message}")]
    Output { file: String, message: String },
    #[error("cannot start {jobs} worker threads: {message}")]
    Pool { jobs: usize, message: String },
    /// The output's sidecar (its description) cannot be written.
    #[error(transparent)]
    Sidecar(#[from] crate::recording::sidecar::SidecarError),
}

#[cfg(test)]
mod tests;
