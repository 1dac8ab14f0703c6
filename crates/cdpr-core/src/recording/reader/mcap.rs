//! The MCAP backend: the `/run` samples of a recording `McapRecorder` wrote, chunk by
//! chunk (`recording::mcap_read`); a row is found again through its chunk (about two
//! seconds of a 1 kHz run), read and decompressed on demand.

use super::scan::{Scan, tracking_error};
use super::{Backend, RunFile, RunRow};
use crate::pose::Pose;
use crate::recording::error::RecordingError;
use crate::recording::mcap::keys;
use crate::recording::mcap_read::{McapInfo, McapReadError, chunk_samples, read_info};
use crate::recording::messages::RunSample;
use std::collections::VecDeque;
use std::path::Path;

/// Chunks kept in memory after reading.
const CACHED_CHUNKS: usize = 3;

#[derive(Debug)]
pub(super) struct McapBackend {
    info: McapInfo,
    /// First row of each chunk of `info.chunks`, then the row count.
    pub(super) chunk_rows: Vec<usize>,
    /// Chunks read, most recently used first.
    cache: VecDeque<(usize, Vec<RunSample>)>,
}

fn mcap_error(path: &Path, e: McapReadError) -> RecordingError {
    match e {
        McapReadError::Io(cause) => RecordingError::Io {
            file: path.display().to_string(),
            cause,
        },
        other => RecordingError::Mcap {
            file: path.display().to_string(),
            message: other.to_string(),
        },
    }
}

fn open_file(path: &Path) -> Result<std::fs::File, RecordingError> {
    std::fs::File::open(path).map_err(|cause| RecordingError::Io {
        file: path.display().to_string(),
        cause,
    })
}

/// A sample as a row: a robot with legs gives its actuator and leg values as extra columns,
/// in the CSV's order (per actuator command and position, per leg length and force), before
/// the face's own.
fn row_of(s: &RunSample) -> RunRow {
    let mut extra =
        Vec::with_capacity(2 * s.actuator.len() + 2 * s.leg_force.len() + s.extra.len());
    for (c, a) in s.actuator_cmd.iter().zip(&s.actuator) {
        extra.extend([*c, *a]);
    }
    for (l, f) in s.leg_length.iter().zip(&s.leg_force) {
        extra.extend([*l, *f]);
    }
    extra.extend_from_slice(&s.extra);
    RunRow {
        time: s.t,
        commanded: Pose::from_array(s.pose_cmd),
        pose: Pose::from_array(s.pose),
        length_command: s.length_cmd.clone(),
        lengths: s.length.clone(),
        tensions: s.tension.clone(),
        segment: s.segment.clone(),
        extra,
    }
}

/// Opens the MCAP recording at `path`: its summary, then every `/run` sample once, one chunk
/// at a time.
pub(super) fn open(path: &Path) -> Result<RunFile, RecordingError> {
    let mut file = open_file(path)?;
    let info = read_info(&mut file).map_err(|e| mcap_error(path, e))?;
    let cables = info.cables;
    // The actuator and leg columns (as in a CSV, among the extra columns), then the face's.
    // `read_info` checked the columns against the counts: the slice is within them.
    let mut extra_columns: Vec<String> = info
        .columns
        .get(13 + 3 * cables..)
        .unwrap_or_default()
        .to_vec();
    let own = extra_columns.len();
    extra_columns.extend(info.extra_columns.iter().cloned());
    let gap = info.extra_columns.iter().position(|c| c == "gap");
    let mut scan = Scan::new(cables, gap.is_some());
    let mut chunk_rows = Vec::with_capacity(info.chunks.len() + 1);
    for k in 0..info.chunks.len() {
        chunk_rows.push(scan.len());
        let samples = chunk_samples(&mut file, &info, k).map_err(|e| mcap_error(path, e))?;
        for (_, s) in &samples {
            if s.tension.len() != cables || s.extra.len() + own != extra_columns.len() {
                return Err(RecordingError::Mcap {
                    file: path.display().to_string(),
                    message: format!(
                        "the sample at t = {} s has {} tensions and {} extra values; the \
                         metadata says {cables} and {}",
                        s.t,
                        s.tension.len(),
                        s.extra.len(),
                        info.extra_columns.len()
                    ),
                });
            }
            let row = scan.len();
            scan.check_time(s.t, &path.display().to_string(), || format!("row {row}"))?;
            let error = tracking_error(&s.pose, &s.pose_cmd);
            scan.push(s.t, &s.tension, error, gap.map(|g| s.extra[g]));
        }
    }
    chunk_rows.push(scan.len());
    let (times, overview, events) = scan.finish();
    let text = |key: &str| info.metadata.get(key).filter(|v| !v.is_empty()).cloned();
    Ok(RunFile {
        path: path.to_path_buf(),
        description: text(keys::DESCRIPTION),
        robot_name: text(keys::ROBOT),
        robot_text: info.robot_toml.clone(),
        cables,
        extra_columns,
        times,
        overview,
        events,
        backend: Backend::Mcap(McapBackend {
            info,
            chunk_rows,
            cache: VecDeque::with_capacity(CACHED_CHUNKS),
        }),
    })
}

impl McapBackend {
    /// The file had no summary: its writer was killed (see `McapInfo::unfinished`).
    pub(super) fn unfinished(&self) -> bool {
        self.info.unfinished
    }

    /// The run was interrupted (its `cdpr_end` metadata record says so).
    pub(super) fn interrupted(&self) -> bool {
        self.info.interrupted
    }

    pub(super) fn row(&mut self, path: &Path, k: usize) -> Result<RunRow, RecordingError> {
        // The chunk holding row k: the last whose first row is at most k.
        let chunk = self.chunk_rows.partition_point(|&first| first <= k) - 1;
        let at = match self.cache.iter().position(|(c, _)| *c == chunk) {
            Some(at) => at,
            None => {
                let mut file = open_file(path)?;
                let samples =
                    chunk_samples(&mut file, &self.info, chunk).map_err(|e| mcap_error(path, e))?;
                let want = self.chunk_rows[chunk + 1] - self.chunk_rows[chunk];
                if samples.len() != want {
                    return Err(RecordingError::Changed {
                        file: path.display().to_string(),
                        message: format!(
                            "chunk {chunk} holds {} samples, {want} when opened",
                            samples.len()
                        ),
                    });
                }
                if self.cache.len() == CACHED_CHUNKS {
                    self.cache.pop_back();
                }
                self.cache
                    .push_front((chunk, samples.into_iter().map(|(_, s)| s).collect()));
                0
            }
        };
        if at != 0
            && let Some(entry) = self.cache.remove(at)
        {
            self.cache.push_front(entry);
        }
        Ok(row_of(&self.cache[0].1[k - self.chunk_rows[chunk]]))
    }
}
