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
use crate::csv_input::BoundedLines;
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
    let (line, message) = crate::csv_input::problem(&error);
    match error.kind() {
        // The bounds of `BoundedLines`, not a failure of the file system.
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

pub use crate::csv_input::MAX_LINE_BYTES;
/// Largest trajectory CSV read, bytes.
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// Reads a trajectory from any reader; `file` names it in error messages. At most
/// [`MAX_SAMPLES`](super::MAX_SAMPLES) data rows, lines of at most [`MAX_LINE_BYTES`].
pub fn from_reader<R: Read>(
    reader: R,
    file: &str,
    options: &CsvOptions,
) -> Result<Trajectory, TrajectoryError> {
    let reader = BoundedLines::new(reader, 1, MAX_FILE_BYTES, "a CSV trajectory");
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
    let columns = Columns::find(&header, options, |message| {
        csv_error(file, header_line, message)
    })?;
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
        let row = Row {
            record: &record,
            header: &header,
            error: |message: String| csv_error(file, line, message),
        };
        let sample = columns.sample(&row, samples.last().map(|s| s.t), &mut segment_names)?;
        samples.push(sample);
    }
    if samples.is_empty() {
        return Err(csv_error(
            file,
            header_line,
            "no data rows after the header: a trajectory needs at least one sample",
        ));
    }
    columns.differentiate_missing(&mut samples);
    Ok(Trajectory {
        samples,
        segments: segment_names,
    })
}

/// Where a trajectory's columns are in its header: time, the pose (x, y, z required, the
/// angles optional), velocities and accelerations when given, the segment.
struct Columns {
    t: usize,
    pose: [Option<usize>; 6],
    velocity: [Option<usize>; 6],
    acceleration: [Option<usize>; 6],
    segment: Option<usize>,
}

/// One data row being read, with what its errors need.
struct Row<'a, E: Fn(String) -> TrajectoryError> {
    record: &'a ::csv::StringRecord,
    header: &'a ::csv::StringRecord,
    /// An error at this row's line.
    error: E,
}

impl<E: Fn(String) -> TrajectoryError> Row<'_, E> {
    /// Column `c`'s number: present, a number, finite.
    fn number(&self, c: usize) -> Result<f64, TrajectoryError> {
        let text = self.record.get(c).unwrap_or("");
        let name = self.header.get(c).unwrap_or("?");
        if text.is_empty() {
            return Err((self.error)(format!("column `{name}` is empty")));
        }
        let value: f64 = text
            .parse()
            .map_err(|_| (self.error)(format!("column `{name}`: `{text}` is not a number")))?;
        if !value.is_finite() {
            return Err((self.error)(format!(
                "column `{name}`: `{text}` is not a finite number"
            )));
        }
        Ok(value)
    }
}

impl Columns {
    /// The columns of `header` (pose columns with the options' suffix); `error` words a
    /// problem of the header.
    fn find(
        header: &::csv::StringRecord,
        options: &CsvOptions,
        error: impl Fn(String) -> TrajectoryError,
    ) -> Result<Columns, TrajectoryError> {
        if header.is_empty() || header.iter().all(str::is_empty) {
            return Err(error(
                "no header row: the first line must name the columns (t,x,y,z,…)".into(),
            ));
        }
        let find = |name: &str| -> Result<Option<usize>, TrajectoryError> {
            let mut hits = header.iter().enumerate().filter(|(_, h)| *h == name);
            let first = hits.next().map(|(k, _)| k);
            if hits.next().is_some() {
                return Err(error(format!("the column `{name}` appears more than once")));
            }
            Ok(first)
        };
        let suffixed = |name: &str| format!("{name}{}", options.suffix);
        let required = |name: String| -> Result<usize, TrajectoryError> {
            find(&name)?.ok_or_else(|| {
                error(format!(
                    "missing column `{name}` (the header has: {})",
                    header.iter().collect::<Vec<_>>().join(", ")
                ))
            })
        };
        let mut columns = Columns {
            t: required("t".into())?,
            pose: [None; 6],
            velocity: [None; 6],
            acceleration: [None; 6],
            segment: None,
        };
        for k in 0..6 {
            columns.pose[k] = if k < 3 {
                Some(required(suffixed(POSE_COLUMNS[k]))?)
            } else {
                find(&suffixed(POSE_COLUMNS[k]))?
            };
            columns.velocity[k] = find(&suffixed(VELOCITY_COLUMNS[k]))?;
            columns.acceleration[k] = find(&suffixed(ACCELERATION_COLUMNS[k]))?;
        }
        columns.segment = find("segment")?;
        Ok(columns)
    }

    /// The sample of a row: its time after `previous`, its pose and derivatives, its segment
    /// (an index into `segment_names`, a new name appended).
    fn sample<E: Fn(String) -> TrajectoryError>(
        &self,
        row: &Row<'_, E>,
        previous: Option<f64>,
        segment_names: &mut Vec<String>,
    ) -> Result<Sample, TrajectoryError> {
        let time = row.number(self.t)?;
        if let Some(previous) = previous
            && time <= previous
        {
            return Err((row.error)(format!(
                "t = {time} s does not increase (the previous row has t = {previous} s); time must increase strictly"
            )));
        }
        let mut values = [[0.0; 6]; 3]; // pose, velocity, acceleration
        for (k, cols) in [self.pose, self.velocity, self.acceleration]
            .iter()
            .enumerate()
        {
            for c in 0..6 {
                if let Some(col) = cols[c] {
                    values[k][c] = row.number(col)?;
                }
            }
        }
        let segment = self
            .segment
            .and_then(|c| row.record.get(c))
            .filter(|s| !s.is_empty())
            .map(|name| match segment_names.iter().position(|n| n == name) {
                Some(k) => k,
                None => {
                    segment_names.push(name.to_string());
                    segment_names.len() - 1
                }
            });
        Ok(Sample {
            t: time,
            pose: Pose::from_array(values[0]),
            velocity: values[1],
            acceleration: values[2],
            segment,
        })
    }

    /// The velocities and accelerations the file does not give, by finite differences, one
    /// channel at a time (two extra numbers per sample).
    fn differentiate_missing(&self, samples: &mut [Sample]) {
        let missing = |c: usize| self.velocity[c].is_none() || self.acceleration[c].is_none();
        if !(0..6).any(missing) {
            return;
        }
        let t: Vec<f64> = samples.iter().map(|s| s.t).collect();
        for c in (0..6).filter(|&c| missing(c)) {
            let x: Vec<f64> = samples.iter().map(|s| s.pose.to_array()[c]).collect();
            let (v, a) = differentiate(&t, &x);
            for (k, s) in samples.iter_mut().enumerate() {
                if self.velocity[c].is_none() {
                    s.velocity[c] = v[k];
                }
                if self.acceleration[c].is_none() {
                    s.acceleration[c] = a[k];
                }
            }
        }
    }
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
