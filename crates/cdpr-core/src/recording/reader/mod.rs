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
use super::sidecar;
use crate::colors::is_slack;
use crate::pose::Pose;
use crate::run::csv_columns;
use std::collections::VecDeque;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Rows per block: what [`RunFile::row`] reads from disk at once (~300 kB of numbers for a
/// shadow of 8 cables), and how often the block index keeps a row's byte offset.
pub const BLOCK_ROWS: usize = 1024;
/// Blocks kept in memory after reading.
const CACHED_BLOCKS: usize = 4;
/// Most bins an [`Overview`] has (between half of it and it, for a run longer than it).
pub const MAX_BINS: usize = 2000;
/// A time step larger than this many median steps is a gap (records without a `gap` column).
pub const GAP_STEPS: f64 = 1.5;

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
        (self.pose.position - self.commanded.position).norm()
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
    Csv(CsvBackend),
}

impl RunFile {
    /// Opens the run at `path`, by its extension: `.csv` or `.mcap`.
    pub fn open(path: &Path) -> Result<RunFile, RecordingError> {
        let file = path.display().to_string();
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("csv") => open_csv(path),
            Some("mcap") => Err(RecordingError::Mcap {
                file,
                message: "reading MCAP runs is not there yet".into(),
            }),
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
        }
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

/// Where each value of a row is among the numeric columns.
#[derive(Debug, Clone)]
struct Columns {
    /// Numeric columns (all but `segment`).
    count: usize,
    time: usize,
    commanded: [usize; 6],
    pose: [usize; 6],
    /// Per cable: commanded payout, length, tension.
    cables: Vec<[usize; 3]>,
    extra: Vec<usize>,
    /// `gap` among the extra columns.
    gap: Option<usize>,
}

impl Columns {
    fn pose(numbers: &[f64], at: &[usize; 6]) -> Pose {
        Pose::new(
            numbers[at[0]],
            numbers[at[1]],
            numbers[at[2]],
            numbers[at[3]],
            numbers[at[4]],
            numbers[at[5]],
        )
    }

    fn row(&self, numbers: &[f64], segment: &str) -> RunRow {
        RunRow {
            time: numbers[self.time],
            commanded: Columns::pose(numbers, &self.commanded),
            pose: Columns::pose(numbers, &self.pose),
            length_command: self.cables.iter().map(|c| numbers[c[0]]).collect(),
            lengths: self.cables.iter().map(|c| numbers[c[1]]).collect(),
            tensions: self.cables.iter().map(|c| numbers[c[2]]).collect(),
            segment: segment.to_string(),
            extra: self.extra.iter().map(|&c| numbers[c]).collect(),
        }
    }

    fn tracking_error(&self, numbers: &[f64]) -> f64 {
        let d = |k: usize| numbers[self.pose[k]] - numbers[self.commanded[k]];
        (d(0) * d(0) + d(1) * d(1) + d(2) * d(2)).sqrt()
    }
}

/// The CSV's header → where each value is; the names of the numeric columns.
fn csv_layout(
    file: &str,
    header: &csv::ByteRecord,
) -> Result<(Columns, Vec<String>, Option<usize>), RecordingError> {
    let names: Vec<String> = header
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    let segment_field = names.iter().position(|n| n == "segment");
    let numeric: Vec<&String> = names
        .iter()
        .enumerate()
        .filter(|(f, _)| Some(*f) != segment_field)
        .map(|(_, n)| n)
        .collect();
    let find = |name: &str| -> Result<usize, RecordingError> {
        numeric
            .iter()
            .position(|n| n.as_str() == name)
            .ok_or_else(|| RecordingError::MissingColumn {
                file: file.to_string(),
                column: name.to_string(),
            })
    };
    let mut cables = 0;
    while numeric
        .iter()
        .any(|n| **n == format!("length_cmd_{}", cables + 1))
    {
        cables += 1;
    }
    let own = csv_columns(cables);
    let at: Vec<usize> = own.iter().map(|n| find(n)).collect::<Result<_, _>>()?;
    let six = |from: usize| -> [usize; 6] { std::array::from_fn(|k| at[from + k]) };
    let extra: Vec<usize> = (0..numeric.len()).filter(|c| !at.contains(c)).collect();
    let columns = Columns {
        count: numeric.len(),
        time: at[0],
        commanded: six(1),
        pose: six(7),
        cables: (0..cables)
            .map(|i| [at[13 + 3 * i], at[14 + 3 * i], at[15 + 3 * i]])
            .collect(),
        gap: extra.iter().position(|&c| numeric[c] == "gap"),
        extra,
    };
    let extra_names = columns.extra.iter().map(|&c| numeric[c].clone()).collect();
    Ok((columns, extra_names, segment_field))
}

/// A CSV row's fields → numbers (in `numbers`) and segment; errors name the line and the
/// column (1-based, as in a spreadsheet).
struct RowParser<'a> {
    file: &'a str,
    names: &'a [String],
    fields: usize,
    segment_field: Option<usize>,
}

impl RowParser<'_> {
    fn parse<'r>(
        &self,
        record: &'r csv::ByteRecord,
        line: u64,
        numbers: &mut Vec<f64>,
    ) -> Result<&'r [u8], RecordingError> {
        if record.len() != self.fields {
            return Err(RecordingError::Malformed {
                file: self.file.to_string(),
                line,
                message: format!(
                    "this row has {} fields but the header has {}",
                    record.len(),
                    self.fields
                ),
            });
        }
        numbers.clear();
        let mut segment: &[u8] = b"";
        for (f, field) in record.iter().enumerate() {
            if Some(f) == self.segment_field {
                segment = field;
                continue;
            }
            let text = field.trim_ascii();
            let value = std::str::from_utf8(text)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| RecordingError::BadNumber {
                    file: self.file.to_string(),
                    line,
                    index: f + 1,
                    column: self.names[f].clone(),
                    text: String::from_utf8_lossy(field).into_owned(),
                })?;
            numbers.push(value);
        }
        Ok(segment)
    }
}

fn csv_error(file: &str, e: csv::Error) -> RecordingError {
    let line = e.position().map(|p| p.line()).unwrap_or(0);
    match e.into_kind() {
        csv::ErrorKind::Io(cause) => RecordingError::Io {
            file: file.to_string(),
            cause,
        },
        csv::ErrorKind::Utf8 { .. } => RecordingError::Malformed {
            file: file.to_string(),
            line,
            message: "not valid UTF-8 text".into(),
        },
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => RecordingError::Malformed {
            file: file.to_string(),
            line,
            message: format!("this row has {len} fields but the header has {expected_len}"),
        },
        other => RecordingError::Malformed {
            file: file.to_string(),
            line,
            message: format!("{other:?}"),
        },
    }
}

fn csv_reader<R: std::io::Read>(inner: R, headers: bool) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .has_headers(headers)
        // Files written before the sidecar start with a `# …` description.
        .comment(Some(b'#'))
        // Row lengths are checked by `RowParser`, whose message names the line.
        .flexible(true)
        .buffer_capacity(1 << 16)
        .from_reader(inner)
}

/// Where a block starts in the file.
#[derive(Debug, Clone, Copy)]
struct BlockStart {
    byte: u64,
    line: u64,
}

/// Rows read back: their numbers (row-major) and segments (indices into `names`).
#[derive(Debug)]
struct Block {
    index: usize,
    numbers: Vec<f64>,
    segments: Vec<u32>,
    names: Vec<String>,
}

#[derive(Debug)]
struct CsvBackend {
    columns: Columns,
    header_names: Vec<String>,
    segment_field: Option<usize>,
    fields: usize,
    starts: Vec<BlockStart>,
    rows: usize,
    cache: VecDeque<Block>,
}

impl CsvBackend {
    fn row(&mut self, path: &Path, k: usize) -> Result<RunRow, RecordingError> {
        let b = k / BLOCK_ROWS;
        let at = match self.cache.iter().position(|blk| blk.index == b) {
            Some(at) => at,
            None => {
                let block = self.read_block(path, b)?;
                if self.cache.len() == CACHED_BLOCKS {
                    self.cache.pop_back();
                }
                self.cache.push_front(block);
                0
            }
        };
        // Most recently used first.
        if at != 0
            && let Some(block) = self.cache.remove(at)
        {
            self.cache.push_front(block);
        }
        let block = &self.cache[0];
        let r = k - b * BLOCK_ROWS;
        let n = self.columns.count;
        let name = &block.names[block.segments[r] as usize];
        Ok(self.columns.row(&block.numbers[r * n..(r + 1) * n], name))
    }

    fn read_block(&self, path: &Path, b: usize) -> Result<Block, RecordingError> {
        let file = path.display().to_string();
        let io = |cause| RecordingError::Io {
            file: file.clone(),
            cause,
        };
        let start = self.starts[b];
        let want = BLOCK_ROWS.min(self.rows - b * BLOCK_ROWS);
        let mut f = std::fs::File::open(path).map_err(io)?;
        f.seek(SeekFrom::Start(start.byte)).map_err(io)?;
        let mut rdr = csv_reader(f, false);
        let parser = RowParser {
            file: &file,
            names: &self.header_names,
            fields: self.fields,
            segment_field: self.segment_field,
        };
        let mut block = Block {
            index: b,
            numbers: Vec::with_capacity(want * self.columns.count),
            segments: Vec::with_capacity(want),
            names: Vec::new(),
        };
        let mut record = csv::ByteRecord::new();
        let mut numbers = Vec::with_capacity(self.columns.count);
        for _ in 0..want {
            let more = rdr
                .read_byte_record(&mut record)
                .map_err(|e| csv_error(&file, e))?;
            let line = start.line + record.position().map(|p| p.line()).unwrap_or(1) - 1;
            if !more {
                return Err(RecordingError::Changed {
                    file,
                    message: format!("it ends before line {line}"),
                });
            }
            let segment = parser.parse(&record, line, &mut numbers)?;
            block.numbers.extend_from_slice(&numbers);
            let name = match block.names.iter().position(|n| n.as_bytes() == segment) {
                Some(i) => i,
                None => {
                    block
                        .names
                        .push(String::from_utf8_lossy(segment).into_owned());
                    block.names.len() - 1
                }
            };
            block.segments.push(name as u32);
        }
        Ok(block)
    }
}

/// Builds the overview bin by bin, row by row: bins of `rows_per_bin` rows; when
/// [`MAX_BINS`] are full, pairs merge and bins hold twice as many rows.
struct OverviewBuilder {
    overview: Overview,
    cables: usize,
}

impl OverviewBuilder {
    fn new(cables: usize) -> OverviewBuilder {
        OverviewBuilder {
            overview: Overview {
                rows_per_bin: 1,
                bins: Vec::new(),
            },
            cables,
        }
    }

    fn push(&mut self, row: usize, t: f64, tensions: impl Iterator<Item = f64>, error: f64) {
        let full = self
            .overview
            .bins
            .last()
            .is_none_or(|b| b.rows == self.overview.rows_per_bin);
        if full {
            if self.overview.bins.len() == MAX_BINS {
                self.merge_pairs();
            }
            self.overview.bins.push(Bin {
                first: row,
                rows: 0,
                t_first: t,
                t_last: t,
                tension_min: vec![f64::NAN; self.cables],
                tension_max: vec![f64::NAN; self.cables],
                error_min: f64::NAN,
                error_max: f64::NAN,
            });
        }
        let Some(bin) = self.overview.bins.last_mut() else {
            return;
        };
        bin.rows += 1;
        bin.t_last = t;
        // f64::min/max skip a NaN: a bin is NaN only when all its values are.
        for (cable, v) in tensions.enumerate() {
            bin.tension_min[cable] = bin.tension_min[cable].min(v);
            bin.tension_max[cable] = bin.tension_max[cable].max(v);
        }
        bin.error_min = bin.error_min.min(error);
        bin.error_max = bin.error_max.max(error);
    }

    fn merge_pairs(&mut self) {
        let bins = std::mem::take(&mut self.overview.bins);
        let mut it = bins.into_iter();
        while let Some(mut a) = it.next() {
            if let Some(b) = it.next() {
                a.rows += b.rows;
                a.t_last = b.t_last;
                for c in 0..self.cables {
                    a.tension_min[c] = a.tension_min[c].min(b.tension_min[c]);
                    a.tension_max[c] = a.tension_max[c].max(b.tension_max[c]);
                }
                a.error_min = a.error_min.min(b.error_min);
                a.error_max = a.error_max.max(b.error_max);
            }
            self.overview.bins.push(a);
        }
        self.overview.rows_per_bin *= 2;
    }
}

/// Finds the events row by row (the time-step gap at the end, from all the times).
#[derive(Default)]
struct EventFinder {
    events: Events,
}

impl EventFinder {
    fn push(&mut self, row: usize, t: f64, tensions: &[f64], error: f64, gap: Option<f64>) {
        let e = &mut self.events;
        for (cable, &v) in tensions.iter().enumerate() {
            if !v.is_nan() && e.largest_tension.is_none_or(|m| v > m.value) {
                e.largest_tension = Some(Event {
                    row,
                    time: t,
                    value: v,
                    cable: Some(cable),
                });
            }
            if e.first_slack.is_none() && is_slack(v) {
                e.first_slack = Some(Event {
                    row,
                    time: t,
                    value: v,
                    cable: Some(cable),
                });
            }
        }
        if !error.is_nan() && e.largest_error.is_none_or(|m| error > m.value) {
            e.largest_error = Some(Event {
                row,
                time: t,
                value: error,
                cable: None,
            });
        }
        if let Some(flag) = gap
            && e.first_gap.is_none()
            && flag != 0.0
            && !flag.is_nan()
        {
            e.first_gap = Some(Event {
                row,
                time: t,
                value: flag,
                cable: None,
            });
        }
    }

    /// The first step longer than [`GAP_STEPS`] median steps.
    fn gap_from_steps(&mut self, times: &[f64]) {
        let mut steps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        if steps.is_empty() {
            return;
        }
        let mid = steps.len() / 2;
        let (_, median, _) = steps.select_nth_unstable_by(mid, f64::total_cmp);
        let limit = *median * GAP_STEPS;
        self.events.first_gap = times
            .windows(2)
            .position(|w| w[1] - w[0] > limit)
            .map(|k| Event {
                row: k + 1,
                time: times[k + 1],
                value: times[k + 1] - times[k],
                cable: None,
            });
    }
}

fn open_csv(path: &Path) -> Result<RunFile, RecordingError> {
    let file = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|cause| RecordingError::Io {
        file: file.clone(),
        cause,
    })?;
    let mut rdr = csv_reader(f, true);
    let header = rdr.byte_headers().map_err(|e| csv_error(&file, e))?.clone();
    let header_names: Vec<String> = header
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    let (columns, extra_columns, segment_field) = csv_layout(&file, &header)?;
    let parser = RowParser {
        file: &file,
        names: &header_names,
        fields: header.len(),
        segment_field,
    };
    let cables = columns.cables.len();
    let mut times = Vec::new();
    let mut starts = Vec::new();
    let mut overview = OverviewBuilder::new(cables);
    let mut events = EventFinder::default();
    let mut record = csv::ByteRecord::new();
    let mut numbers = Vec::with_capacity(columns.count);
    let mut tensions = vec![0.0; cables];
    let gap = columns.gap.map(|g| columns.extra[g]);
    while rdr
        .read_byte_record(&mut record)
        .map_err(|e| csv_error(&file, e))?
    {
        let position = record
            .position()
            .cloned()
            .unwrap_or_else(csv::Position::new);
        let k = times.len();
        if k % BLOCK_ROWS == 0 {
            starts.push(BlockStart {
                byte: position.byte(),
                line: position.line(),
            });
        }
        parser.parse(&record, position.line(), &mut numbers)?;
        let t = numbers[columns.time];
        times.push(t);
        for (cable, at) in columns.cables.iter().enumerate() {
            tensions[cable] = numbers[at[2]];
        }
        let error = columns.tracking_error(&numbers);
        overview.push(k, t, tensions.iter().copied(), error);
        events.push(k, t, &tensions, error, gap.map(|g| numbers[g]));
    }
    if gap.is_none() {
        events.gap_from_steps(&times);
    }
    let meta = sidecar::read(path)?;
    let description = match &meta {
        Some(m) => Some(m.description.clone()).filter(|d| !d.is_empty()),
        None => sidecar::read_description(path),
    };
    Ok(RunFile {
        path: path.to_path_buf(),
        description,
        robot_name: meta.and_then(|m| m.robot),
        robot_text: None,
        cables,
        extra_columns,
        overview: overview.overview,
        events: events.events,
        backend: Backend::Csv(CsvBackend {
            fields: header.len(),
            header_names,
            segment_field,
            rows: times.len(),
            starts,
            cache: VecDeque::with_capacity(CACHED_BLOCKS),
            columns,
        }),
        times,
    })
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
