//! The sweep's output: one CSV row per run, resumable.
//!
//! [`open`] reads an existing output (unless told to start over): its header must be the
//! spec's columns, its rows give the indices already done (failed runs included: they would
//! fail again), and a last line without its newline — a run being written when the sweep was
//! killed — is cut off. New rows are appended, each flushed as it is written, so a killed
//! sweep loses at most the runs in flight. Rows are in completion order; sort by `index`.

use super::plan::Row;
use super::{Spec, SweepError};
use crate::options::Name;
use crate::recording::sidecar::{self, Sidecar};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::Path;

/// The output file, open for appending rows.
pub struct Output {
    writer: csv::Writer<File>,
    file: String,
}

/// What was found in an existing output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resumed {
    /// Indices of the rows already there.
    pub done: HashSet<u64>,
    /// A partial last line was cut off.
    pub dropped_partial: bool,
}

/// Opens `path` for `spec`'s rows (shard `(i, n)` if given) as [`open`] does, and writes its
/// sidecar (`path.meta.toml`) naming the spec and shard: every face's sweep output says what
/// made it.
pub fn open_for(
    path: &Path,
    spec: &Spec,
    shard: Option<(u64, u64)>,
    resume: bool,
) -> Result<(Output, Resumed), SweepError> {
    let opened = open(path, &spec.columns(), resume)?;
    sidecar::write(path, &Sidecar::new(&description(spec, shard)))?;
    Ok(opened)
}

/// The description in a sweep output's sidecar: `cdpr sweep: spec SPEC[, shard i/n]`.
pub fn description(spec: &Spec, shard: Option<(u64, u64)>) -> String {
    let shard = shard
        .map(|(i, n)| format!(", shard {i}/{n}"))
        .unwrap_or_default();
    format!("cdpr sweep: spec {}{shard}", spec.origin)
}

/// Opens `path` for the rows of a spec with `columns`: a new file (header written) when it
/// does not exist, is empty or `resume` is false (then it is overwritten); else the existing
/// file, checked and resumed.
pub fn open(
    path: &Path,
    columns: &[String],
    resume: bool,
) -> Result<(Output, Resumed), SweepError> {
    let file = path.display().to_string();
    let io = |error| SweepError::Io {
        file: file.clone(),
        error,
    };
    let header = columns.join(",");
    let mut resumed = Resumed::default();
    let mut fresh = true;
    if resume && path.exists() {
        let mut bytes = Vec::new();
        File::open(path)
            .map_err(io)?
            .read_to_end(&mut bytes)
            .map_err(io)?;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let header_written = bytes.starts_with(format!("{header}\n").as_bytes());
        if complete == 0 && header.as_bytes().starts_with(&bytes) {
            // Empty, or killed while writing the header: start over.
        } else if !header_written {
            let found = String::from_utf8_lossy(&bytes[..complete.max(1) - 1]);
            let found = found.lines().next().unwrap_or("");
            return Err(SweepError::Output {
                file,
                message: format!(
                    "was written by a different spec (its columns: {found}; this spec's: \
                     {header}): write to another file, or start it over ({})",
                    Name("force")
                ),
            });
        } else {
            fresh = false;
            resumed.done = done_indices(&bytes[..complete], columns.len(), &file)?;
            if complete < bytes.len() {
                resumed.dropped_partial = true;
                let f = OpenOptions::new().write(true).open(path).map_err(io)?;
                f.set_len(complete as u64).map_err(io)?;
            }
        }
    }
    let handle = if fresh {
        File::create(path).map_err(io)?
    } else {
        OpenOptions::new().append(true).open(path).map_err(io)?
    };
    let writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(handle);
    let mut out = Output {
        writer,
        file: file.clone(),
    };
    if fresh {
        out.write_fields(columns)?;
    }
    Ok((out, resumed))
}

/// The indices of the rows of `complete` (whole lines, the header first).
fn done_indices(complete: &[u8], width: usize, file: &str) -> Result<HashSet<u64>, SweepError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(complete);
    let mut done = HashSet::new();
    for (k, record) in reader.records().enumerate() {
        let line = k + 2;
        let bad = |message: String| SweepError::Output {
            file: file.to_string(),
            message: format!(
                "line {line}: {message}: not a row of this sweep (fix or remove it, or {} to start over)",
                Name("force")
            ),
        };
        let record = record.map_err(|e| bad(e.to_string()))?;
        if record.len() != width {
            return Err(bad(format!("{} fields, expected {width}", record.len())));
        }
        let index = record
            .get(0)
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| {
                bad(format!(
                    "index `{}` is not a run number",
                    record.get(0).unwrap_or("")
                ))
            })?;
        done.insert(index);
    }
    Ok(done)
}

impl Output {
    /// Appends `row` and flushes it to the file.
    pub fn write(&mut self, row: &Row) -> Result<(), SweepError> {
        self.write_fields(&row.to_strings())
    }

    fn write_fields(&mut self, fields: &[String]) -> Result<(), SweepError> {
        let file = &self.file;
        let io = |error: std::io::Error| SweepError::Io {
            file: file.clone(),
            error,
        };
        self.writer
            .write_record(fields)
            .map_err(|e| io(std::io::Error::other(e.to_string())))?;
        self.writer.flush().map_err(io)
    }
}
