//! CSV import/export of trajectories.
//!
//! A header row names the columns, in any order: `t` (s) and `x,y,z` (m) are required;
//! `roll,pitch,yaw` (rad) are optional and zero when missing; `segment` (a name) is optional.
//! Velocity columns `vx,vy,vz,vroll,vpitch,vyaw` and acceleration columns `ax,…,ayaw` are used
//! when present; a missing one is estimated by second-order finite differences of its pose
//! channel (exact for quadratics, also on non-uniform time grids). Other columns are ignored,
//! so the simulator's output (`t,x_cmd,…,x,…,length_1,…,segment`) can be read; with
//! [`CsvOptions::suffix`] `_cmd` the pose (and derivative) columns are read as `x_cmd`, ….
//!
//! Writing produces all 20 columns with numbers in Rust's shortest round-trip form, so
//! write∘read is the identity.
//!
//! Lines starting with `#` are comments, skipped wherever they are. cdpr no longer writes
//! any: a run's description lives in a sidecar next to the CSV
//! ([`crate::recording::sidecar`]), so that pandas, numpy and PlotJuggler read the file with
//! their defaults; files written before that start with a `# cdpr …` line, still read.

use super::{Sample, Trajectory, TrajectoryError};
use crate::kinematics::Pose;
use std::io::{Read, Write};
use std::path::Path;

/// Pose columns, in `Pose::to_array` order.
pub const POSE_COLUMNS: [&str; 6] = ["x", "y", "z", "roll", "pitch", "yaw"];
const VELOCITY_COLUMNS: [&str; 6] = ["vx", "vy", "vz", "vroll", "vpitch", "vyaw"];
const ACCELERATION_COLUMNS: [&str; 6] = ["ax", "ay", "az", "aroll", "apitch", "ayaw"];

/// How to read a CSV file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsvOptions {
    /// Appended to the pose and derivative column names (`_cmd` reads `x_cmd`, `vx_cmd`, …);
    /// `t` and `segment` are never suffixed.
    pub suffix: String,
}

/// Reads a trajectory from a CSV file.
pub fn read(path: impl AsRef<Path>) -> Result<Trajectory, TrajectoryError> {
    read_with(path, &CsvOptions::default())
}

/// Reads a trajectory from a CSV file, with options (column suffix).
pub fn read_with(
    path: impl AsRef<Path>,
    options: &CsvOptions,
) -> Result<Trajectory, TrajectoryError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let reader = std::fs::File::open(path).map_err(|cause| TrajectoryError::Io {
        file: file.clone(),
        cause,
    })?;
    from_reader(reader, &file, options)
}

fn csv_error(file: &str, line: u64, message: impl Into<String>) -> TrajectoryError {
    TrajectoryError::Csv {
        file: file.to_string(),
        line,
        message: message.into(),
    }
}

fn from_csv_crate(file: &str, error: ::csv::Error) -> TrajectoryError {
    let line = error.position().map(|p| p.line()).unwrap_or(0);
    let message = match error.kind() {
        ::csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("this row has {len} fields but the header has {expected_len}"),
        ::csv::ErrorKind::Utf8 { .. } => "not valid UTF-8 text".to_string(),
        _ => error.to_string(),
    };
    match error.kind() {
        // The bounds of `Bounded`, not a failure of the file system.
        ::csv::ErrorKind::Io(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            TrajectoryError::TooLarge {
                file: file.to_string(),
                message: e.to_string(),
            }
        }
        ::csv::ErrorKind::Io(e) => TrajectoryError::Io {
            file: file.to_string(),
            cause: std::io::Error::new(e.kind(), e.to_string()),
        },
        _ => csv_error(file, line, message),
    }
}

/// Longest line a trajectory CSV may have, bytes (a row of 1000 numbers is ~25 kB).
pub const MAX_LINE_BYTES: u64 = 1 << 20;
/// Largest trajectory CSV read, bytes.
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// A reader that fails (instead of growing a buffer without end) on a line longer than
/// [`MAX_LINE_BYTES`] or an input longer than [`MAX_FILE_BYTES`]: `/dev/zero` or a binary
/// file given as a CSV.
struct Bounded<R> {
    inner: R,
    total: u64,
    line: u64,
    line_bytes: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let chunk = &buf[..n];
        // Lines that end inside one read are shorter than the read's buffer (kilobytes); only
        // the line carried across reads can grow long.
        let longest = match (
            chunk.iter().position(|&b| b == b'\n'),
            chunk.iter().rposition(|&b| b == b'\n'),
        ) {
            (Some(first), Some(last)) => {
                let longest = self.line_bytes + first as u64;
                self.line += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
                self.line_bytes = (n - last - 1) as u64;
                longest.max(self.line_bytes)
            }
            _ => {
                self.line_bytes += n as u64;
                self.line_bytes
            }
        };
        if longest > MAX_LINE_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "line {} is longer than {} MiB: not a CSV trajectory",
                    self.line + 1,
                    MAX_LINE_BYTES >> 20
                ),
            ));
        }
        self.total += n as u64;
        if self.total > MAX_FILE_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "larger than {} GiB: too large for a trajectory",
                    MAX_FILE_BYTES >> 30
                ),
            ));
        }
        Ok(n)
    }
}

/// Reads a trajectory from any reader; `file` names it in error messages. At most
/// [`MAX_SAMPLES`](super::MAX_SAMPLES) data rows, lines of at most [`MAX_LINE_BYTES`].
pub fn from_reader<R: Read>(
    reader: R,
    file: &str,
    options: &CsvOptions,
) -> Result<Trajectory, TrajectoryError> {
    let reader = Bounded {
        inner: reader,
        total: 0,
        line: 0,
        line_bytes: 0,
    };
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(::csv::Trim::All)
        .flexible(false)
        .comment(Some(b'#'))
        .from_reader(reader);
    let header = rdr.headers().map_err(|e| from_csv_crate(file, e))?.clone();
    // The header's line, after any comment lines: the reader now stands past its newline. (A
    // record's own position is where reading it began: before the comments it skipped.)
    let header_line = rdr.position().line().saturating_sub(1).max(1);
    if header.is_empty() || header.iter().all(str::is_empty) {
        return Err(csv_error(
            file,
            header_line,
            "no header row: the first line must name the columns (t,x,y,z,…)",
        ));
    }
    let find = |name: &str| -> Result<Option<usize>, TrajectoryError> {
        let mut hits = header.iter().enumerate().filter(|(_, h)| *h == name);
        let first = hits.next().map(|(k, _)| k);
        if hits.next().is_some() {
            return Err(csv_error(
                file,
                header_line,
                format!("the column `{name}` appears more than once"),
            ));
        }
        Ok(first)
    };
    let suffixed = |name: &str| format!("{name}{}", options.suffix);
    let required = |name: String| -> Result<usize, TrajectoryError> {
        find(&name)?.ok_or_else(|| {
            csv_error(
                file,
                header_line,
                format!(
                    "missing column `{name}` (the header has: {})",
                    header.iter().collect::<Vec<_>>().join(", ")
                ),
            )
        })
    };
    let t_col = required("t".into())?;
    let mut pose_cols = [None; 6];
    let mut vel_cols = [None; 6];
    let mut acc_cols = [None; 6];
    for k in 0..6 {
        pose_cols[k] = if k < 3 {
            Some(required(suffixed(POSE_COLUMNS[k]))?)
        } else {
            find(&suffixed(POSE_COLUMNS[k]))?
        };
        vel_cols[k] = find(&suffixed(VELOCITY_COLUMNS[k]))?;
        acc_cols[k] = find(&suffixed(ACCELERATION_COLUMNS[k]))?;
    }
    let segment_col = find("segment")?;
    let column_name = |c: usize| header.get(c).unwrap_or("?").to_string();

    let mut samples: Vec<Sample> = Vec::new();
    let mut segment_names: Vec<String> = Vec::new();
    let mut record = ::csv::StringRecord::new();
    loop {
        match rdr.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(from_csv_crate(file, e)),
        }
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        if samples.len() >= super::MAX_SAMPLES {
            return Err(csv_error(
                file,
                line,
                format!(
                    "more than {:.1e} data rows: at most {:.1e} samples fit in a trajectory",
                    super::MAX_SAMPLES as f64,
                    super::MAX_SAMPLES as f64
                ),
            ));
        }
        let number = |c: usize| -> Result<f64, TrajectoryError> {
            let text = record.get(c).unwrap_or("");
            let name = column_name(c);
            if text.is_empty() {
                return Err(csv_error(file, line, format!("column `{name}` is empty")));
            }
            let value: f64 = text.parse().map_err(|_| {
                csv_error(
                    file,
                    line,
                    format!("column `{name}`: `{text}` is not a number"),
                )
            })?;
            if !value.is_finite() {
                return Err(csv_error(
                    file,
                    line,
                    format!("column `{name}`: `{text}` is not a finite number"),
                ));
            }
            Ok(value)
        };
        let time = number(t_col)?;
        if let Some(previous) = samples.last().map(|s| s.t)
            && time <= previous
        {
            return Err(csv_error(
                file,
                line,
                format!(
                    "t = {time} s does not increase (the previous row has t = {previous} s); time must increase strictly"
                ),
            ));
        }
        let mut values = [[0.0; 6]; 3]; // pose, velocity, acceleration
        for (k, cols) in [pose_cols, vel_cols, acc_cols].iter().enumerate() {
            for c in 0..6 {
                if let Some(col) = cols[c] {
                    values[k][c] = number(col)?;
                }
            }
        }
        let segment = segment_col
            .and_then(|c| record.get(c))
            .filter(|s| !s.is_empty())
            .map(|name| match segment_names.iter().position(|n| n == name) {
                Some(k) => k,
                None => {
                    segment_names.push(name.to_string());
                    segment_names.len() - 1
                }
            });
        samples.push(Sample {
            t: time,
            pose: Pose::from_array(values[0]),
            velocity: values[1],
            acceleration: values[2],
            segment,
        });
    }
    if samples.is_empty() {
        return Err(csv_error(
            file,
            header_line,
            "no data rows after the header: a trajectory needs at least one sample",
        ));
    }
    if (0..6).any(|c| vel_cols[c].is_none() || acc_cols[c].is_none()) {
        // Missing derivatives, one channel at a time (two extra numbers per sample).
        let t: Vec<f64> = samples.iter().map(|s| s.t).collect();
        for c in 0..6 {
            if vel_cols[c].is_none() || acc_cols[c].is_none() {
                let x: Vec<f64> = samples.iter().map(|s| s.pose.to_array()[c]).collect();
                let (v, a) = differentiate(&t, &x);
                for (k, s) in samples.iter_mut().enumerate() {
                    if vel_cols[c].is_none() {
                        s.velocity[c] = v[k];
                    }
                    if acc_cols[c].is_none() {
                        s.acceleration[c] = a[k];
                    }
                }
            }
        }
    }
    Ok(Trajectory {
        samples,
        segments: segment_names,
    })
}

/// First and second time derivatives of a sampled channel: three-point formulas on the
/// (possibly non-uniform) grid, exact for quadratics; the ends take one-sided differences
/// (velocity) or their neighbour's value (acceleration).
pub fn differentiate(t: &[f64], x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = t.len();
    let mut v = vec![0.0; n];
    let mut a = vec![0.0; n];
    if n < 2 {
        return (v, a);
    }
    for i in 1..n - 1 {
        let (h1, h2) = (t[i] - t[i - 1], t[i + 1] - t[i]);
        let denominator = h1 * h2 * (h1 + h2);
        v[i] = (h1 * h1 * x[i + 1] - h2 * h2 * x[i - 1] + (h2 * h2 - h1 * h1) * x[i]) / denominator;
        a[i] = 2.0 * (h1 * x[i + 1] - (h1 + h2) * x[i] + h2 * x[i - 1]) / denominator;
    }
    v[0] = (x[1] - x[0]) / (t[1] - t[0]);
    v[n - 1] = (x[n - 1] - x[n - 2]) / (t[n - 1] - t[n - 2]);
    if n > 2 {
        a[0] = a[1];
        a[n - 1] = a[n - 2];
    }
    (v, a)
}

/// Writes a trajectory to a CSV file (creating or replacing it): a header row and numbers
/// (the run's description goes to its sidecar, [`crate::recording::sidecar::write`]).
pub fn write(path: impl AsRef<Path>, trajectory: &Trajectory) -> Result<(), TrajectoryError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let io = |cause| TrajectoryError::Io {
        file: file.clone(),
        cause,
    };
    let out = std::fs::File::create(path).map_err(io)?;
    let mut buffered = std::io::BufWriter::new(out);
    write_to(&mut buffered, trajectory, &file)?;
    buffered.flush().map_err(io)
}

/// Writes a trajectory as CSV to any writer.
pub fn to_writer<W: Write>(writer: W, trajectory: &Trajectory) -> Result<(), TrajectoryError> {
    write_to(writer, trajectory, "CSV output")
}

/// Shortest text that parses back to exactly `x`; exponent form for very small or large values.
fn number(x: f64) -> String {
    let magnitude = x.abs();
    if x == 0.0 || (1e-4..1e15).contains(&magnitude) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

fn write_to<W: Write>(
    writer: W,
    trajectory: &Trajectory,
    file: &str,
) -> Result<(), TrajectoryError> {
    let mut w = ::csv::Writer::from_writer(writer);
    let header: Vec<&str> = std::iter::once("t")
        .chain(POSE_COLUMNS)
        .chain(VELOCITY_COLUMNS)
        .chain(ACCELERATION_COLUMNS)
        .chain(std::iter::once("segment"))
        .collect();
    let err = |e: ::csv::Error| from_csv_crate(file, e);
    w.write_record(&header).map_err(err)?;
    let mut row: Vec<String> = Vec::with_capacity(header.len());
    for s in &trajectory.samples {
        row.clear();
        row.push(number(s.t));
        row.extend(s.pose.to_array().iter().map(|&x| number(x)));
        row.extend(s.velocity.iter().map(|&x| number(x)));
        row.extend(s.acceleration.iter().map(|&x| number(x)));
        row.push(trajectory.segment_name(s).unwrap_or("").to_string());
        w.write_record(&row).map_err(err)?;
    }
    w.flush().map_err(|cause| TrajectoryError::Io {
        file: file.to_string(),
        cause,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_lines_are_skipped_wherever_they_are() {
        let dir = std::env::temp_dir().join(format!("cdpr-csv-comment-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("run.csv");
        let text = "# cdpr simulate: robot uvigo8, trajectory seed000\n\
                    t,x,y,z\n0,1,2,3\n# a note between rows\n0.5,1.5,2,3\n";
        std::fs::write(&path, text).expect("written");
        let t = read(&path).expect("a commented CSV reads");
        assert_eq!(t.samples.len(), 2);
        assert_eq!(t.samples[1].t, 0.5);
        assert_eq!(t.samples[1].pose.position.x, 1.5);
        // Errors name the file's own line numbers, comments counted.
        std::fs::write(&path, "# note\nt,x,y\n0,1,2\n").expect("written");
        let e = read(&path).expect_err("no z").to_string();
        assert!(e.contains("run.csv:2: missing column `z`"), "{e}");
        std::fs::write(&path, "# note\nt,x,y,z\n0,1,2,3\n0.5,x,2,3\n").expect("written");
        let e = read(&path).expect_err("not a number").to_string();
        assert!(e.contains("run.csv:4: column `x`"), "{e}");
        // Written back: a header row first, no comment, read back identical.
        let mut plain = t.clone();
        plain.segments.clear();
        write(&path, &plain).expect("written");
        let back = std::fs::read_to_string(&path).expect("read");
        assert!(back.starts_with("t,x,y,z,roll,"), "{back}");
        assert_eq!(read(&path).expect("reads").samples, plain.samples);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
