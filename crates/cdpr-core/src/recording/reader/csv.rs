//! The CSV backend: a header row (`crate::run::csv_columns`, `segment`, a face's extra
//! columns, in any order), then one row per step; rows are found again through the byte
//! offset of every [`BLOCK_ROWS`]th row.

use super::scan::{Scan, tracking_error};
use super::{BLOCK_ROWS, Backend, RunFile, RunRow};
use crate::csv_input::BoundedLines;
use crate::pose::Pose;
use crate::recording::error::RecordingError;
use crate::recording::sidecar;
use crate::run::csv_columns;
use std::collections::VecDeque;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Blocks kept in memory after reading.
const CACHED_BLOCKS: usize = 4;

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
        let at = |p: &[usize; 6]| [numbers[p[0]], numbers[p[1]], numbers[p[2]]];
        tracking_error(&at(&self.pose), &at(&self.commanded))
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
    let (line, message) = crate::csv_input::problem(&e);
    match e.into_kind() {
        csv::ErrorKind::Io(cause) => RecordingError::Io {
            file: file.to_string(),
            cause,
        },
        _ => RecordingError::Malformed {
            file: file.to_string(),
            line,
            message,
        },
    }
}

/// A CSV reader of `inner`, whose first line is line `line` of the file.
fn csv_reader<R: Read>(inner: R, headers: bool, line: u64) -> csv::Reader<BoundedLines<R>> {
    csv::ReaderBuilder::new()
        .has_headers(headers)
        // Files written before the sidecar start with a `# …` description.
        .comment(Some(b'#'))
        // Row lengths are checked by `RowParser`, whose message names the line.
        .flexible(true)
        .buffer_capacity(1 << 16)
        .from_reader(BoundedLines::new(
            inner,
            line,
            MAX_FILE_BYTES,
            "a run's CSV",
        ))
}

/// Largest run CSV read, bytes (a day of a 1 ms shadow of 8 cables is ~30 GB).
const MAX_FILE_BYTES: u64 = 1 << 40;

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
pub(super) struct CsvBackend {
    columns: Columns,
    header_names: Vec<String>,
    segment_field: Option<usize>,
    fields: usize,
    starts: Vec<BlockStart>,
    rows: usize,
    /// The sidecar says the run was interrupted.
    pub(super) interrupted: bool,
    cache: VecDeque<Block>,
}

impl CsvBackend {
    pub(super) fn row(&mut self, path: &Path, k: usize) -> Result<RunRow, RecordingError> {
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
        let mut rdr = csv_reader(f, false, start.line);
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

/// Opens the CSV at `path`: one streaming pass (see the module's documentation).
pub(super) fn open(path: &Path) -> Result<RunFile, RecordingError> {
    let file = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|cause| RecordingError::Io {
        file: file.clone(),
        cause,
    })?;
    let mut rdr = csv_reader(f, true, 1);
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
    let mut starts = Vec::new();
    let mut record = csv::ByteRecord::new();
    let mut numbers = Vec::with_capacity(columns.count);
    let mut tensions = vec![0.0; cables];
    let gap = columns.gap.map(|g| columns.extra[g]);
    let mut scan = Scan::new(cables, gap.is_some());
    while rdr
        .read_byte_record(&mut record)
        .map_err(|e| csv_error(&file, e))?
    {
        let position = record
            .position()
            .cloned()
            .unwrap_or_else(csv::Position::new);
        if scan.len().is_multiple_of(BLOCK_ROWS) {
            starts.push(BlockStart {
                byte: position.byte(),
                line: position.line(),
            });
        }
        parser.parse(&record, position.line(), &mut numbers)?;
        for (cable, at) in columns.cables.iter().enumerate() {
            tensions[cable] = numbers[at[2]];
        }
        scan.check_time(numbers[columns.time], &file, || {
            format!("line {}", position.line())
        })?;
        let error = columns.tracking_error(&numbers);
        scan.push(
            numbers[columns.time],
            &tensions,
            error,
            gap.map(|g| numbers[g]),
        );
    }
    let (times, overview, events) = scan.finish();
    let meta = sidecar::read(path)?;
    let meta_interrupted = meta.as_ref().is_some_and(|m| m.interrupted);
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
        overview,
        events,
        backend: Backend::Csv(CsvBackend {
            fields: header.len(),
            header_names,
            segment_field,
            rows: times.len(),
            interrupted: meta_interrupted,
            starts,
            cache: VecDeque::with_capacity(CACHED_BLOCKS),
            columns,
        }),
        times,
    })
}
