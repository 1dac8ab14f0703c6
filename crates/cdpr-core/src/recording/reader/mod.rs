//! The one reader of runs: a simulation's `--out`, a shadow's record, as CSV or MCAP. The
//! viewer's replay, its comparison ghost and the reports open a record here and never parse a
//! file of their own.
//!
//! Memory stays bounded whatever the length of the run: [`RunFile::open`] makes one streaming
//! pass over the file that keeps every row's time (8 bytes a row: the slider needs them),
//! an [`Overview`] of at most [`MAX_BINS`] bins for plots of the whole run, the [`Events`]
//! a replay jumps to, and a block index (where every [`BLOCK_ROWS`]th row starts). A row is
//! read back from disk with its block ([`RunFile::row`]); the last few blocks are kept, so
//! a slider dragged through neighbouring rows reads the disk once per block.
//!
//! Numbers come back bit for bit: the CSV holds them in Rust's shortest round-trip form and
//! Rust's parser rounds correctly.

use super::error::RecordingError;
use crate::pose::Pose;
use crate::trajectory::{Sample, Trajectory};
use std::path::{Path, PathBuf};

mod csv;
mod mcap;
mod scan;

/// Rows per block: what [`RunFile::row`] reads from disk at once (~300 kB of numbers for a
/// shadow of 8 cables), and how often the block index keeps a row's byte offset.
pub const BLOCK_ROWS: usize = 1024;
/// Most bins an [`Overview`] has (between half of it and it, for a run longer than it).
pub const MAX_BINS: usize = 2000;
/// A time step larger than this many median steps is a gap (records without a `gap` column).
pub const GAP_STEPS: f64 = 1.5;

/// What a face says of a run whose file was never finished ([`RunFile::unfinished`]).
pub const UNFINISHED_NOTE: &str = "never finished (its writer was killed or the machine lost \
     power): its complete chunks were read, the run may end early";

/// One row of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// s.
    pub time: f64,
    pub commanded: Pose,
    pub pose: Pose,
    /// Per cable: commanded payout, length (m), tension (N).
    pub length_command: Vec<f64>,
    pub lengths: Vec<f64>,
    pub tensions: Vec<f64>,
    /// The trajectory's segment, empty when none.
    pub segment: String,
    /// The values of [`RunFile::extra_columns`], in their order.
    pub extra: Vec<f64>,
}

impl RunRow {
    /// Tracking error: the distance between the platform's and the commanded position, m.
    pub fn tracking_error(&self) -> f64 {
        let (p, c) = (self.pose.position, self.commanded.position);
        scan::tracking_error(&[p.x, p.y, p.z], &[c.x, c.y, c.z])
    }
}

/// One bin of an [`Overview`]: rows `first..first + rows`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bin {
    pub first: usize,
    pub rows: usize,
    /// Times of the first and the last row, s.
    pub t_first: f64,
    pub t_last: f64,
    /// Per cable, smallest and largest tension, N (NaN when every value was NaN).
    pub tension_min: Vec<f64>,
    pub tension_max: Vec<f64>,
    /// Smallest and largest tracking error ([`RunRow::tracking_error`]), m.
    pub error_min: f64,
    pub error_max: f64,
}

/// Per-bin extremes over the whole run, for plots that show every spike of a long run in a
/// few thousand points (a min/max envelope loses no peak, unlike decimation).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Overview {
    /// Rows in each bin (the last may hold fewer).
    pub rows_per_bin: usize,
    pub bins: Vec<Bin>,
}

/// A moment a replay jumps to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    pub row: usize,
    /// s.
    pub time: f64,
    /// What made it the event (a tension in N, an error in m, a time step in s, a flag).
    pub value: f64,
    /// The cable (0-based), for tension events.
    pub cable: Option<usize>,
}

/// The moments of a run worth jumping to; `None` when the run has none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Events {
    /// The largest tension of any cable (first row of a tie).
    pub largest_tension: Option<Event>,
    /// The largest tracking error.
    pub largest_error: Option<Event>,
    /// The first row with a slack cable ([`is_slack`]); the lowest such cable.
    pub first_slack: Option<Event>,
    /// The first row after a gap: flagged in the shadow's `gap` column; in records without
    /// one, a time step longer than [`GAP_STEPS`] median steps (`value` is the step).
    pub first_gap: Option<Event>,
}

/// A run opened for reading (see the module's documentation).
#[derive(Debug)]
pub struct RunFile {
    path: PathBuf,
    description: Option<String>,
    robot_name: Option<String>,
    robot_text: Option<String>,
    cables: usize,
    extra_columns: Vec<String>,
    times: Vec<f64>,
    overview: Overview,
    events: Events,
    backend: Backend,
}

#[derive(Debug)]
enum Backend {
    Csv(csv::CsvBackend),
    Mcap(mcap::McapBackend),
}

impl RunFile {
    /// Opens the run at `path`, by its extension: `.csv` or `.mcap`.
    pub fn open(path: &Path) -> Result<RunFile, RecordingError> {
        let file = path.display().to_string();
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("csv") => csv::open(path),
            Some("mcap") => mcap::open(path),
            _ => Err(RecordingError::UnknownType { file }),
        }
    }

    /// The file opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the run is (`cdpr simulate: robot uvigo8, …`): the CSV's sidecar (or, written
    /// before sidecars, its first comment line), the MCAP's metadata.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The robot's name, when the record says it (CSV sidecar, MCAP metadata).
    pub fn robot_name(&self) -> Option<&str> {
        self.robot_name.as_deref()
    }

    /// The robot file's text, when the record carries it (an MCAP attachment).
    pub fn robot_text(&self) -> Option<&str> {
        self.robot_text.as_deref()
    }

    pub fn cables(&self) -> usize {
        self.cables
    }

    /// Numeric columns beyond the run's own (e.g. the shadow's `plc_cycle`, `enable`,
    /// `rejected`, `gap`; the actuator and leg columns of a robot with legs), in file order.
    pub fn extra_columns(&self) -> &[String] {
        &self.extra_columns
    }

    /// The recording was never finished (an MCAP without summary: its writer was killed or
    /// the machine lost power); its complete chunks were read, the run may end early. A face
    /// says so.
    pub fn unfinished(&self) -> bool {
        match &self.backend {
            Backend::Csv(_) => false,
            Backend::Mcap(b) => b.unfinished(),
        }
    }

    /// The run was interrupted (Ctrl-C) and its file finished where it stopped, as its
    /// sidecar (CSV) or metadata (MCAP) says: it ends before its trajectory did. A face says
    /// so.
    pub fn interrupted(&self) -> bool {
        match &self.backend {
            Backend::Csv(b) => b.interrupted,
            Backend::Mcap(b) => b.interrupted(),
        }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Time of row `k`, s. Panics when `k >= len()`.
    pub fn time(&self, k: usize) -> f64 {
        self.times[k]
    }

    /// Every row's time, s.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// The last row whose time is at most `t` (0 before the first row, and for NaN); times
    /// are taken as non-decreasing, as every record cdpr writes has them.
    pub fn index_at(&self, t: f64) -> usize {
        self.times.partition_point(|&x| x <= t).saturating_sub(1)
    }

    /// Row `k`, bit for bit as recorded: read from disk with its block unless the block is
    /// one of the last few read. An error when `k >= len()` or the file changed since it
    /// was opened.
    pub fn row(&mut self, k: usize) -> Result<RunRow, RecordingError> {
        if k >= self.times.len() {
            return Err(RecordingError::Changed {
                file: self.path.display().to_string(),
                message: format!("row {k} asked of a run of {} rows", self.times.len()),
            });
        }
        match &mut self.backend {
            Backend::Csv(b) => b.row(&self.path, k),
            Backend::Mcap(b) => b.row(&self.path, k),
        }
    }

    /// The run as a trajectory, for a comparison or a report: every row's time and the
    /// platform's pose (`commanded`: the commanded pose), its segment; velocities and
    /// accelerations by finite differences, as for a CSV without them. Reads the file once
    /// more, block by block.
    pub fn trajectory(&mut self, commanded: bool) -> Result<Trajectory, RecordingError> {
        let mut samples = Vec::with_capacity(self.len());
        let mut segments: Vec<String> = Vec::new();
        for k in 0..self.len() {
            let row = self.row(k)?;
            let segment = (!row.segment.is_empty()).then(|| {
                match segments.iter().position(|s| *s == row.segment) {
                    Some(i) => i,
                    None => {
                        segments.push(row.segment.clone());
                        segments.len() - 1
                    }
                }
            });
            samples.push(Sample {
                t: row.time,
                pose: if commanded { row.commanded } else { row.pose },
                velocity: [0.0; 6],
                acceleration: [0.0; 6],
                segment,
            });
        }
        let t: Vec<f64> = samples.iter().map(|s| s.t).collect();
        for c in 0..6 {
            let x: Vec<f64> = samples.iter().map(|s| s.pose.to_array()[c]).collect();
            let (v, a) = crate::trajectory::csv::differentiate(&t, &x);
            for (k, s) in samples.iter_mut().enumerate() {
                s.velocity[c] = v[k];
                s.acceleration[c] = a[k];
            }
        }
        Ok(Trajectory { samples, segments })
    }

    /// Per-bin extremes of the tensions and the tracking error over the whole run.
    pub fn overview(&self) -> &Overview {
        &self.overview
    }

    /// The moments worth jumping to.
    pub fn events(&self) -> &Events {
        &self.events
    }
}

#[cfg(test)]
mod tests;
