//! Reading a recording [`super::mcap::McapRecorder`] wrote, for the one reader of runs
//! (`super::reader`): its description and robot ([`read_info`]), its `/run` samples in order
//! ([`RunSamples`], streamed) and the samples of one chunk ([`chunk_samples`], for random
//! access: a slider jumps to a time, only the chunk holding it is read and decompressed).
//!
//! Nothing here holds the whole file: the summary (indexes, a few hundred bytes a chunk),
//! then one chunk at a time. The file is read through `std::fs::File` (no memory map: the
//! workspace forbids `unsafe`, and a map of a file another process truncates is a crash).

use super::mcap::{CHUNK_BYTES, END_NAME, METADATA_NAME, ROBOT_JSON, ROBOT_TOML, keys};
use super::messages::{RUN_TOPIC, RunSample};
use super::run_sample_protobuf::decode_run_sample;
use mcap::records::{Record, op};
use mcap::sans_io::{
    LinearReadEvent, LinearReader, LinearReaderOptions, SummaryReadEvent, SummaryReader,
};
use std::collections::BTreeMap;
#[cfg(test)]
use std::io::BufReader;
use std::io::{Read, Seek, SeekFrom};

/// Largest chunk, uncompressed or compressed, this reader accepts: 64 times what the
/// recorder writes ([`CHUNK_BYTES`]). A chunk claims its sizes itself; a file claiming more is
/// hostile or broken and is refused before anything that size is allocated.
pub(crate) const MAX_CHUNK_BYTES: u64 = 64 * CHUNK_BYTES;

/// Largest other record (metadata, attachment, summary record) this reader accepts: the
/// robot's files are kilobytes, the summary a few hundred bytes a chunk.
pub(crate) const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum McapReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a readable MCAP file: {0}")]
    Mcap(#[from] mcap::McapError),
    #[error("no `{RUN_TOPIC}` channel: not a cdpr recording")]
    NoRunChannel,
    #[error("no `{METADATA_NAME}` metadata record: not a cdpr recording")]
    NoMetadata,
    #[error("metadata `{key}`: {message}")]
    BadMetadata { key: &'static str, message: String },
    #[error("a `{RUN_TOPIC}` message at {log_time} ns does not decode: {message}")]
    BadSample { log_time: u64, message: String },
    #[error("chunk {0} does not exist")]
    NoChunk(usize),
    #[error(
        "the {what} at byte {offset} claims {size} bytes, more than the {cap} this reader \
         accepts (a corrupt or hostile file)"
    )]
    TooLarge {
        what: &'static str,
        offset: u64,
        size: u64,
        cap: u64,
    },
}

/// A chunk holding `/run` samples: the unit of random access.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunChunk {
    /// Log times of its first and last message (any channel), ns.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Where the chunk record starts in the file and its length, prefix included.
    offset: u64,
    length: u64,
}

/// What a recording says about itself, read from its summary without reading its messages
/// (or, for a file whose writer was killed, from one pass over its records).
#[derive(Debug, Clone)]
pub(crate) struct McapInfo {
    /// The `cdpr` metadata record (see [`keys`]).
    pub metadata: BTreeMap<String, String>,
    /// The numeric columns (`RecordLayout::columns`) and the extra ones.
    pub columns: Vec<String>,
    pub extra_columns: Vec<String>,
    pub cables: usize,
    // The layout's other counts, the robot as JSON and the sample count are what the tests
    // check a file against (the reader takes the counts from the columns).
    #[cfg_attr(not(test), allow(dead_code))]
    pub actuators: usize,
    #[cfg_attr(not(test), allow(dead_code))]
    pub legs: usize,
    /// The robot file's text and the robot as simulated (JSON), when attached.
    pub robot_toml: Option<String>,
    #[cfg_attr(not(test), allow(dead_code))]
    pub robot_json: Option<String>,
    /// `/run` messages in the file.
    #[cfg_attr(not(test), allow(dead_code))]
    pub samples: u64,
    /// Chunks holding `/run` samples, in time order.
    pub chunks: Vec<RunChunk>,
    /// The file has no readable summary: its writer was killed (or the machine lost power)
    /// before finishing it. Its complete chunks were found by scanning its records; a chunk
    /// being written then is lost. A reader says so: the run may end early.
    pub unfinished: bool,
    /// The run was interrupted before its end (Ctrl-C) and the file finished where it
    /// stopped.
    pub interrupted: bool,
    /// The `/run` channel's id (what [`chunk_samples`] filters on).
    run_channel: u16,
}

/// Where a recording's parts are: from its summary, or from a scan of its records.
struct Index {
    run_channel: Option<u16>,
    samples: u64,
    /// The `cdpr` metadata record's offset and length.
    metadata: Option<(u64, u64)>,
    /// The run was interrupted: the file has an [`END_NAME`] metadata record.
    interrupted: bool,
    /// Attachments' names, offsets and lengths.
    attachments: Vec<(String, u64, u64)>,
    chunks: Vec<RunChunk>,
}

impl Index {
    fn from_summary(summary: &mcap::Summary) -> Index {
        let run_channel = summary
            .channels
            .values()
            .find(|c| c.topic == RUN_TOPIC)
            .map(|c| c.id);
        let samples = run_channel
            .and_then(|id| {
                let stats = summary.stats.as_ref()?;
                stats.channel_message_counts.get(&id).copied()
            })
            .unwrap_or(0);
        Index {
            run_channel,
            samples,
            metadata: summary
                .metadata_indexes
                .iter()
                .find(|m| m.name == METADATA_NAME)
                .map(|m| (m.offset, m.length)),
            interrupted: summary.metadata_indexes.iter().any(|m| m.name == END_NAME),
            attachments: summary
                .attachment_indexes
                .iter()
                .map(|a| (a.name.clone(), a.offset, a.length))
                .collect(),
            chunks: summary
                .chunk_indexes
                .iter()
                .filter(|c| run_channel.is_some_and(|id| c.message_index_offsets.contains_key(&id)))
                .map(|c| RunChunk {
                    start_ns: c.message_start_time,
                    end_ns: c.message_end_time,
                    offset: c.chunk_start_offset,
                    length: c.chunk_length,
                })
                .collect(),
        }
    }
}

/// `13 + 3 cables + 2 actuators + 2 legs`, the number of numeric columns of a layout, or
/// `None` if it does not fit a `usize` (counts read from a file can be anything).
fn column_count(cables: usize, actuators: usize, legs: usize) -> Option<usize> {
    13usize
        .checked_add(cables.checked_mul(3)?)?
        .checked_add(actuators.checked_mul(2)?)?
        .checked_add(legs.checked_mul(2)?)
}

/// Reads `file`'s summary, its `cdpr` metadata and the robot's attachments. A file without a
/// readable summary (its writer was killed) is scanned record by record instead, and comes
/// back [`McapInfo::unfinished`].
pub(crate) fn read_info<F: Read + Seek>(file: &mut F) -> Result<McapInfo, McapReadError> {
    let (index, unfinished) = match read_summary(file) {
        Ok(Some(summary)) => (Index::from_summary(&summary), false),
        // No summary, or a broken footer or summary: the data section may still be whole.
        // (The scan is bounded as the summary is: a hostile file is refused there too.)
        Ok(None) | Err(McapReadError::Mcap(_)) => (scan(file)?, true),
        Err(e) => return Err(e),
    };
    let run_channel = index.run_channel.ok_or(McapReadError::NoRunChannel)?;
    let (offset, length) = index.metadata.ok_or(McapReadError::NoMetadata)?;
    let metadata = match read_record(file, offset, length, op::METADATA)? {
        Record::Metadata(m) => m.metadata,
        _ => return Err(McapReadError::NoMetadata),
    };
    let list = |key: &'static str| -> Vec<String> {
        metadata
            .get(key)
            .filter(|v| !v.is_empty())
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default()
    };
    let (columns, extra_columns) = (list(keys::COLUMNS), list(keys::EXTRA_COLUMNS));
    // A count is at most the number of columns (each has at least two), which keeps the
    // sum below from overflowing whatever the file says; checked all the same.
    let count = |key: &'static str| -> Result<usize, McapReadError> {
        let text = metadata.get(key).ok_or(McapReadError::BadMetadata {
            key,
            message: "missing".into(),
        })?;
        let n: usize = text.parse().map_err(|_| McapReadError::BadMetadata {
            key,
            message: format!("`{text}` is not a count"),
        })?;
        if n > columns.len() {
            return Err(McapReadError::BadMetadata {
                key,
                message: format!("{n} is more than the {} columns", columns.len()),
            });
        }
        Ok(n)
    };
    let (cables, actuators, legs) = (
        count(keys::CABLES)?,
        count(keys::ACTUATORS)?,
        count(keys::LEGS)?,
    );
    if column_count(cables, actuators, legs) != Some(columns.len()) {
        return Err(McapReadError::BadMetadata {
            key: keys::COLUMNS,
            message: format!(
                "{} columns for {cables} cables, {actuators} actuators and {legs} legs",
                columns.len()
            ),
        });
    }
    let mut attachment = |name: &str| -> Result<Option<String>, McapReadError> {
        let Some((_, offset, length)) = index.attachments.iter().find(|a| a.0 == name) else {
            return Ok(None);
        };
        match read_record(file, *offset, *length, op::ATTACHMENT)? {
            Record::Attachment { data, .. } => Ok(String::from_utf8(data.into_owned()).ok()),
            _ => Ok(None),
        }
    };
    let (robot_toml, robot_json) = (attachment(ROBOT_TOML)?, attachment(ROBOT_JSON)?);
    let mut chunks = index.chunks;
    chunks.sort_by_key(|c| (c.start_ns, c.offset));
    Ok(McapInfo {
        metadata,
        columns,
        extra_columns,
        cables,
        actuators,
        legs,
        robot_toml,
        robot_json,
        samples: index.samples,
        chunks,
        unfinished,
        interrupted: index.interrupted,
        run_channel,
    })
}

/// The summary section (schemas, channels, statistics, indexes) through seeks and reads;
/// `None` if the file has none.
fn read_summary<F: Read + Seek>(file: &mut F) -> Result<Option<mcap::Summary>, McapReadError> {
    let size = file.seek(SeekFrom::End(0))?;
    let mut reader = SummaryReader::new_with_options(
        mcap::sans_io::SummaryReaderOptions::default()
            .with_file_size(size)
            .with_record_length_limit(usize::try_from(MAX_RECORD_BYTES).unwrap_or(usize::MAX)),
    );
    while let Some(event) = reader.next_event() {
        match event? {
            SummaryReadEvent::ReadRequest(n) => {
                let read = file.read(reader.insert(n))?;
                reader.notify_read(read);
            }
            SummaryReadEvent::SeekRequest(to) => {
                let at = file.seek(to)?;
                reader.notify_seeked(at);
            }
        }
    }
    Ok(reader.finish())
}

/// The parts of a file without a summary, from one pass over its records: the header, then
/// metadata, attachments and chunks (whose contents give the channels and the `/run`
/// messages' count and times). The pass stops at the data section's end, at a record that
/// runs past the end of the file (the one being written when the writer died) or at a chunk
/// that does not read and ends the file (the same, its length already patched); what came
/// before is kept. A chunk that does not read with more after it is an error.
fn scan<F: Read + Seek>(file: &mut F) -> Result<Index, McapReadError> {
    let size = file.seek(SeekFrom::End(0))?;
    file.seek(SeekFrom::Start(0))?;
    let mut magic = [0u8; 8];
    file.read_exact(&mut magic)
        .map_err(|_| mcap::McapError::BadMagic)?;
    if magic[..] != *mcap::MAGIC {
        return Err(mcap::McapError::BadMagic.into());
    }
    let mut index = Index {
        run_channel: None,
        samples: 0,
        metadata: None,
        interrupted: false,
        attachments: Vec::new(),
        chunks: Vec::new(),
    };
    let mut at = magic.len() as u64;
    loop {
        let mut prefix = [0u8; 9];
        file.seek(SeekFrom::Start(at))?;
        if file.read_exact(&mut prefix).is_err() {
            break;
        }
        let opcode = prefix[0];
        let mut len = [0u8; 8];
        len.copy_from_slice(&prefix[1..]);
        let Some(length) = u64::from_le_bytes(len)
            .checked_add(9)
            .filter(|l| at.checked_add(*l).is_some_and(|end| end <= size))
        else {
            break; // runs past the end: cut while written
        };
        match opcode {
            op::DATA_END | op::FOOTER => break,
            op::METADATA | op::ATTACHMENT => {
                let record = read_record(file, at, length, opcode)?;
                match record {
                    Record::Metadata(m) if m.name == METADATA_NAME => {
                        index.metadata = Some((at, length));
                    }
                    Record::Metadata(m) if m.name == END_NAME => index.interrupted = true,
                    Record::Attachment { header, .. } => {
                        index.attachments.push((header.name, at, length));
                    }
                    _ => {}
                }
            }
            op::CHUNK => {
                let raw = read_raw(file, at, length, op::CHUNK, "chunk", MAX_CHUNK_BYTES + 4096)?;
                let (mut start, mut end, mut runs) = (u64::MAX, 0, 0u64);
                let mut channels = Vec::new();
                let read = chunk_records(&raw, at, |record| {
                    match record {
                        Record::Channel(c) if c.topic == RUN_TOPIC => channels.push(c.id),
                        Record::Message { header, .. } => {
                            start = start.min(header.log_time);
                            end = end.max(header.log_time);
                            if index.run_channel == Some(header.channel_id)
                                || channels.contains(&header.channel_id)
                            {
                                runs += 1;
                            }
                        }
                        _ => {}
                    }
                    Ok(())
                });
                match read {
                    Ok(()) => {}
                    // The last record, half patched when the writer died: lost, as if cut.
                    Err(_) if at + length == size => break,
                    // A broken chunk with data after it is corruption, not a killed writer.
                    Err(e) => return Err(e),
                }
                if index.run_channel.is_none() {
                    index.run_channel = channels.first().copied();
                }
                if runs > 0 {
                    index.samples += runs;
                    index.chunks.push(RunChunk {
                        start_ns: start,
                        end_ns: end,
                        offset: at,
                        length,
                    });
                }
            }
            op::CHANNEL => {
                let raw = read_raw(file, at, length, op::CHANNEL, "channel", MAX_RECORD_BYTES)?;
                if let Record::Channel(c) = mcap::parse_record(op::CHANNEL, &raw[9..])?
                    && c.topic == RUN_TOPIC
                    && index.run_channel.is_none()
                {
                    index.run_channel = Some(c.id);
                }
            }
            _ => {}
        }
        at += length;
    }
    Ok(index)
}

/// The bytes of the record of `length` bytes (opcode and length prefix included) at
/// `offset`, `what` for errors; refused above `cap` bytes before anything is allocated.
fn read_raw<F: Read + Seek>(
    file: &mut F,
    offset: u64,
    length: u64,
    opcode: u8,
    what: &'static str,
    cap: u64,
) -> Result<Vec<u8>, McapReadError> {
    // A record's 9-byte prefix: opcode, u64 length.
    if length < 9 {
        return Err(mcap::McapError::BadIndex.into());
    }
    if length > cap {
        return Err(McapReadError::TooLarge {
            what,
            offset,
            size: length,
            cap,
        });
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::new();
    file.by_ref().take(length).read_to_end(&mut buf)?;
    if buf.len() as u64 != length || buf[0] != opcode {
        return Err(mcap::McapError::BadIndex.into());
    }
    Ok(buf)
}

/// The record of `length` bytes (opcode and length prefix included) at `offset`.
fn read_record<F: Read + Seek>(
    file: &mut F,
    offset: u64,
    length: u64,
    opcode: u8,
) -> Result<Record<'static>, McapReadError> {
    let what = if opcode == op::ATTACHMENT {
        "attachment"
    } else {
        "metadata record"
    };
    let buf = read_raw(file, offset, length, opcode, what, MAX_RECORD_BYTES)?;
    Ok(mcap::parse_record(opcode, &buf[9..])?.into_owned())
}

/// Calls `each` on the records of the chunk record `raw` (prefix included) found at byte
/// `offset`. The chunk's sizes are checked against [`MAX_CHUNK_BYTES`], and no record inside
/// may claim more than the chunk holds: `mcap::read::ChunkReader` has no such limit, and a
/// message claiming 2^40 bytes made it reserve that much before the chunk's CRC was checked.
/// The CRC is checked before the first record is given.
fn chunk_records(
    raw: &[u8],
    offset: u64,
    mut each: impl FnMut(Record<'_>) -> Result<(), McapReadError>,
) -> Result<(), McapReadError> {
    let header = match mcap::parse_record(op::CHUNK, raw.get(9..).unwrap_or_default())? {
        Record::Chunk { header, .. } => header,
        _ => return Err(mcap::McapError::BadIndex.into()),
    };
    for (what, size) in [
        ("chunk's uncompressed size", header.uncompressed_size),
        ("chunk's compressed size", header.compressed_size),
    ] {
        if size > MAX_CHUNK_BYTES {
            return Err(McapReadError::TooLarge {
                what,
                offset,
                size,
                cap: MAX_CHUNK_BYTES,
            });
        }
    }
    // Both sizes are at most MAX_CHUNK_BYTES: the limit fits a usize. The compressed size
    // counts too: the reader buffers that much compressed input at most.
    let limit =
        usize::try_from(header.uncompressed_size.max(header.compressed_size)).unwrap_or(usize::MAX);
    let mut reader = LinearReader::new_with_options(
        LinearReaderOptions::default()
            .with_skip_start_magic(true)
            .with_skip_end_magic(true)
            .with_prevalidate_chunk_crcs(true)
            .with_record_length_limit(limit),
    );
    let mut rest = raw;
    while let Some(event) = reader.next_event() {
        match event? {
            LinearReadEvent::ReadRequest(n) => {
                let n = n.min(rest.len());
                reader.insert(n).copy_from_slice(&rest[..n]);
                reader.notify_read(n);
                rest = &rest[n..];
            }
            LinearReadEvent::Record { data, opcode } => each(mcap::parse_record(opcode, data)?)?,
        }
    }
    Ok(())
}

/// The `/run` samples of chunk `k` of `info.chunks`, with their log times (ns), in time
/// order: one chunk read and decompressed (about 1 MiB), whatever the file's length.
pub(crate) fn chunk_samples<F: Read + Seek>(
    file: &mut F,
    info: &McapInfo,
    k: usize,
) -> Result<Vec<(u64, RunSample)>, McapReadError> {
    let chunk = info.chunks.get(k).ok_or(McapReadError::NoChunk(k))?;
    // The chunk record: its header (a few dozen bytes) and at most MAX_CHUNK_BYTES of data.
    let raw = read_raw(
        file,
        chunk.offset,
        chunk.length,
        op::CHUNK,
        "chunk",
        MAX_CHUNK_BYTES + 4096,
    )?;
    let mut out = Vec::new();
    chunk_records(&raw, chunk.offset, |record| {
        if let Record::Message { header, data } = record
            && header.channel_id == info.run_channel
        {
            out.push((header.log_time, decode(header.log_time, &data)?));
        }
        Ok(())
    })?;
    // Written in time order by one writer; sorted in case another tool rewrote the file.
    out.sort_by_key(|(t, _)| *t);
    Ok(out)
}

#[cfg(test)]
/// The `/run` samples of a recording in file order, streamed: memory holds one chunk.
pub(crate) struct RunSamples<R: Read> {
    messages: mcap::io::MessageReader<BufReader<R>>,
}

#[cfg(test)]
impl<R: Read> RunSamples<R> {
    pub(crate) fn new(source: R) -> RunSamples<R> {
        RunSamples {
            messages: mcap::io::MessageReader::new(BufReader::new(source)),
        }
    }
}

#[cfg(test)]
impl<R: Read> Iterator for RunSamples<R> {
    /// A sample and its log time, ns.
    type Item = Result<(u64, RunSample), McapReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let message = match self.messages.next()? {
                Ok(m) => m,
                Err(e) => return Some(Err(e.into())),
            };
            if message.channel.topic == RUN_TOPIC {
                let t = message.log_time;
                return Some(decode(t, &message.data).map(|s| (t, s)));
            }
        }
    }
}

/// The sample of a `/run` message logged at `log_time` (ns).
fn decode(log_time: u64, data: &[u8]) -> Result<RunSample, McapReadError> {
    decode_run_sample(data).map_err(|e| McapReadError::BadSample {
        log_time,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::mcap::{McapRecorder, scene_slot};
    use crate::run::{RecordLayout, RunOptions, run};
    use crate::sim::{ControlMode, ModelKind, SimConfig};
    use crate::trajectory::Trajectory;
    use std::io::Cursor;

    /// silva4 held at home for `seconds` at 1 ms, tagged with one segment.
    fn silva4_run(seconds: f64) -> (crate::robot::Robot, Trajectory, crate::run::RunOutcome) {
        let robot = crate::fixtures::robot("silva4");
        let home = crate::kinematics::Pose::from_array(robot.home);
        let options = RunOptions::new(SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, 1e-3));
        let mut traj = crate::run::hold(home, seconds, options.config.dt);
        traj.segments = vec!["hold".into()];
        for s in &mut traj.samples {
            s.segment = Some(0);
        }
        let outcome = run(&robot, &traj, &options, &mut |_| {}).expect("runs");
        (robot, traj, outcome)
    }

    fn record(seconds: f64) -> (crate::robot::Robot, crate::run::RunOutcome, Vec<u8>) {
        let (robot, traj, outcome) = silva4_run(seconds);
        let mut rec = McapRecorder::new(Cursor::new(Vec::new()), &robot, &traj)
            .expect("recorder")
            .with_extra_columns(&["a", "b"])
            .with_description("silva4 held")
            .with_dt(1e-3);
        for (k, r) in outcome.records.iter().enumerate() {
            rec.write_with(&r.as_record(), &[k as f64, -0.0])
                .expect("written");
        }
        let bytes = rec.finish().expect("finished").into_inner();
        (robot, outcome, bytes)
    }

    #[test]
    fn a_recording_reads_back_with_the_records_numbers_bit_for_bit() {
        let (robot, outcome, bytes) = record(3.0);
        let mut file = Cursor::new(&bytes[..]);
        let info = read_info(&mut file).expect("info");
        let layout = RecordLayout::new(&robot, Some(&outcome.records[0].as_record()));
        assert_eq!(info.columns, layout.columns());
        assert_eq!(info.extra_columns, ["a", "b"]);
        assert_eq!((info.cables, info.actuators, info.legs), (4, 0, 0));
        assert_eq!(info.metadata["description"], "silva4 held");
        assert_eq!(info.metadata["robot"], "silva4");
        assert_eq!(info.metadata["dt"], "0.001");
        assert_eq!(
            info.robot_toml.as_deref(),
            Some(crate::fixtures::robot_text("silva4"))
        );
        let json: serde_json::Value =
            serde_json::from_str(info.robot_json.as_deref().expect("json")).expect("parses");
        assert_eq!(json["name"], "silva4");
        assert_eq!(info.samples as usize, outcome.records.len());

        let expected: Vec<RunSample> = outcome
            .records
            .iter()
            .enumerate()
            .map(|(k, r)| {
                RunSample::from_record(&layout, &r.as_record(), &["hold".into()], &[k as f64, -0.0])
            })
            .collect();
        let streamed: Vec<(u64, RunSample)> = RunSamples::new(Cursor::new(&bytes[..]))
            .collect::<Result<_, _>>()
            .expect("streams");
        assert_eq!(streamed.len(), expected.len());
        for ((t, got), want) in streamed.iter().zip(&expected) {
            // Bit for bit, -0.0 included (PartialEq on f64 would let -0.0 equal 0.0).
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got.numbers()), bits(&want.numbers()));
            assert_eq!(bits(&got.extra), bits(&want.extra));
            assert_eq!(got.segment, "hold");
            assert_eq!(*t, crate::recording::messages::time_ns(want.t));
        }
        // The chunks, read one by one, give the same samples: 3 s at 1 kHz spans several.
        assert!(info.chunks.len() >= 2, "{} chunks", info.chunks.len());
        let mut by_chunk = Vec::new();
        for k in 0..info.chunks.len() {
            let samples = chunk_samples(&mut file, &info, k).expect("chunk");
            let first = samples.first().expect("non-empty").0;
            assert!(first >= info.chunks[k].start_ns && first <= info.chunks[k].end_ns);
            by_chunk.extend(samples);
        }
        assert_eq!(by_chunk, streamed);
        assert!(matches!(
            chunk_samples(&mut file, &info, info.chunks.len()),
            Err(McapReadError::NoChunk(_))
        ));
    }

    #[test]
    fn every_step_has_a_transform_and_the_scene_comes_at_30_hz_of_simulated_time() {
        let (_, outcome, bytes) = record(1.0);
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut schemas: BTreeMap<String, String> = BTreeMap::new();
        let mut scene_times = Vec::new();
        for m in mcap::io::MessageReader::new(Cursor::new(&bytes[..])) {
            let m = m.expect("message");
            *counts.entry(m.channel.topic.clone()).or_default() += 1;
            let schema = m
                .channel
                .schema
                .as_ref()
                .map(|s| s.name.clone())
                .unwrap_or_default();
            schemas.insert(m.channel.topic.clone(), schema);
            if m.channel.topic == "/scene" {
                scene_times.push(m.log_time);
            }
        }
        let n = outcome.records.len();
        assert_eq!(counts["/run"], n);
        assert_eq!(counts["/tf"], n);
        // Steps at k ms, k = 0..=1000: one scene per 1/30 s slot, 31 slots (0 to 30).
        let slots: std::collections::BTreeSet<u64> = outcome
            .records
            .iter()
            .map(|r| scene_slot(crate::recording::messages::time_ns(r.state.time)))
            .collect();
        assert_eq!(slots.len(), 31);
        assert_eq!(counts["/scene"], 31);
        assert_eq!(scene_times.len(), 31);
        assert!(scene_times.windows(2).all(|w| w[1] - w[0] >= 33_000_000));
        assert_eq!(schemas["/scene"], "foxglove.SceneUpdate");
        assert_eq!(schemas["/tf"], "foxglove.FrameTransform");
        assert_eq!(schemas["/run"], "runsample.RunSample");
        assert!(!counts.contains_key("/shadow/cycle"), "no cycle written");
    }

    #[test]
    fn a_foreign_file_is_refused_with_a_reason() {
        let err = read_info(&mut Cursor::new(&b"t,x\n0,1\n"[..])).expect_err("csv");
        assert!(
            matches!(err, McapReadError::Mcap(mcap::McapError::BadMagic)),
            "{err}"
        );
        // The magic and nothing else: an MCAP file with no recording in it.
        let err = read_info(&mut Cursor::new(mcap::MAGIC)).expect_err("empty");
        assert!(matches!(err, McapReadError::NoRunChannel), "{err}");
        // A sample cut inside its first double.
        let err = decode(7, &[0x09, 1, 2]).expect_err("truncated");
        assert!(
            matches!(&err, McapReadError::BadSample { log_time: 7, message }
                if message.contains("buffer underflow")),
            "{err}"
        );
    }

    /// A zstd frame holding `content` as one raw block (RFC 8878: magic, a descriptor with
    /// the single-segment flag and a 2-byte content size, a last raw block): what a
    /// compressor may write, built by hand so its content can be anything.
    fn zstd_raw_frame(content: &[u8]) -> Vec<u8> {
        assert!(content.len() >= 256 && content.len() < 65536 + 256);
        let mut f = vec![0x28, 0xB5, 0x2F, 0xFD, 0x60];
        f.extend_from_slice(&((content.len() - 256) as u16).to_le_bytes());
        let block = 1 | ((content.len() as u32) << 3);
        f.extend_from_slice(&block.to_le_bytes()[..3]);
        f.extend_from_slice(content);
        f
    }

    /// A chunk record compressed with zstd holding `content` (no CRC: 0 means none).
    fn zstd_chunk(content: &[u8]) -> Vec<u8> {
        let data = zstd_raw_frame(content);
        let mut body = Vec::new();
        body.extend_from_slice(&0u64.to_le_bytes()); // start time
        body.extend_from_slice(&0u64.to_le_bytes()); // end time
        body.extend_from_slice(&(content.len() as u64).to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes()); // CRC
        body.extend_from_slice(&4u32.to_le_bytes());
        body.extend_from_slice(b"zstd");
        body.extend_from_slice(&(data.len() as u64).to_le_bytes());
        body.extend_from_slice(&data);
        let mut record = vec![op::CHUNK];
        record.extend_from_slice(&(body.len() as u64).to_le_bytes());
        record.extend_from_slice(&body);
        record
    }

    #[test]
    fn a_record_in_a_chunk_claiming_a_terabyte_is_refused_before_anything_is_allocated() {
        // A message record claiming 2^40 bytes, then 300 bytes of anything. Before the fix
        // `ChunkReader` reserved the 2^40 bytes: the test process aborted.
        let mut content = vec![op::MESSAGE];
        content.extend_from_slice(&(1u64 << 40).to_le_bytes());
        content.extend_from_slice(&[7u8; 300]);
        let chunk = zstd_chunk(&content);
        let err = chunk_records(&chunk, 8, |_| Ok(())).expect_err("refused");
        assert!(
            matches!(
                err,
                McapReadError::Mcap(mcap::McapError::RecordTooLarge { opcode: op::MESSAGE, len })
                    if len == 1 << 40
            ),
            "{err}"
        );
        // The same chunk in a file without summary, with a record after it (not the last
        // record, so not taken for the one a killed writer left): the scan refuses it.
        let mut file = mcap::MAGIC.to_vec();
        file.extend_from_slice(&chunk);
        file.push(op::DATA_END);
        file.extend_from_slice(&4u64.to_le_bytes());
        file.extend_from_slice(&0u32.to_le_bytes());
        let err = read_info(&mut Cursor::new(&file[..])).expect_err("refused");
        assert!(
            matches!(
                err,
                McapReadError::Mcap(mcap::McapError::RecordTooLarge { .. })
            ),
            "{err}"
        );
        // A well-formed chunk built the same way reads: the frame is what zstd accepts.
        let mut content = vec![op::MESSAGE];
        let mut message = Vec::new();
        message.extend_from_slice(&3u16.to_le_bytes()); // channel
        message.extend_from_slice(&0u32.to_le_bytes()); // sequence
        message.extend_from_slice(&42u64.to_le_bytes()); // log time
        message.extend_from_slice(&42u64.to_le_bytes()); // publish time
        message.extend_from_slice(&[9u8; 280]);
        content.extend_from_slice(&(message.len() as u64).to_le_bytes());
        content.extend_from_slice(&message);
        let mut seen = Vec::new();
        chunk_records(&zstd_chunk(&content), 8, |r| {
            if let Record::Message { header, data } = r {
                seen.push((header.channel_id, header.log_time, data.len()));
            }
            Ok(())
        })
        .expect("reads");
        assert_eq!(seen, [(3, 42, 280)]);
    }

    /// The byte offset of the chunk record holding chunk `k`'s samples.
    fn chunk_offset(bytes: &[u8], k: usize) -> usize {
        let info = read_info(&mut Cursor::new(bytes)).expect("info");
        info.chunks[k].offset as usize
    }

    #[test]
    fn a_chunk_claiming_more_than_the_cap_is_refused_by_name() {
        let (_, _, bytes) = record(3.0);
        let at = chunk_offset(&bytes, 0);
        // The chunk record: opcode, length, start, end, uncompressed size (at 25), CRC,
        // compression "zstd" (its length at 37), compressed size (at 25 + 8 + 4 + 4 + 4 = 45).
        assert_eq!(&bytes[at + 41..at + 45], b"zstd");
        let patched = |field: usize, claim: u64| -> Result<Vec<(u64, RunSample)>, McapReadError> {
            let mut hostile = bytes.clone();
            hostile[at + field..at + field + 8].copy_from_slice(&claim.to_le_bytes());
            let mut file = Cursor::new(&hostile[..]);
            let info = read_info(&mut file).expect("the summary is intact");
            chunk_samples(&mut file, &info, 0)
        };
        for claim in [MAX_CHUNK_BYTES + 1, 1 << 40, u64::MAX] {
            match patched(25, claim).expect_err("refused") {
                McapReadError::TooLarge {
                    what,
                    offset,
                    size,
                    cap,
                } => assert_eq!(
                    (what, offset, size, cap),
                    (
                        "chunk's uncompressed size",
                        at as u64,
                        claim,
                        MAX_CHUNK_BYTES
                    )
                ),
                other => panic!("{other}"),
            }
            // A compressed size beyond the record (itself at most the cap and a header).
            let err = patched(45, claim).expect_err("refused");
            assert!(
                matches!(
                    err,
                    McapReadError::Mcap(mcap::McapError::BadChunkLength { header, .. })
                        if header == claim
                ),
                "{err}"
            );
        }
        // Sizes within the cap but wrong: an error, never a panic or a wrong sample.
        for claim in [0, 10, MAX_CHUNK_BYTES] {
            let err = patched(25, claim).expect_err("refused");
            assert!(matches!(err, McapReadError::Mcap(_)), "{claim}: {err}");
        }
        // The index claiming a chunk of a terabyte: refused before reading it.
        let mut file = Cursor::new(&bytes[..]);
        let mut info = read_info(&mut file).expect("info");
        info.chunks[0].length = 1 << 40;
        assert!(matches!(
            chunk_samples(&mut file, &info, 0),
            Err(McapReadError::TooLarge { what: "chunk", .. })
        ));
    }

    #[test]
    fn counts_that_overflow_the_column_sum_are_refused() {
        assert_eq!(column_count(4, 0, 0), Some(25));
        assert_eq!(column_count(0, 0, 1 << (usize::BITS - 1)), None);
        assert_eq!(column_count(usize::MAX / 3 + 1, 0, 0), None);
        // A file whose counts wrap the sum to its 13 columns: 2 legs = 2^64 = 0 (mod 2^64).
        let mut out = mcap::Writer::new(Cursor::new(Vec::new())).expect("writer");
        out.add_channel(0, RUN_TOPIC, "protobuf", &BTreeMap::new())
            .expect("channel");
        let columns: Vec<String> = (0..13).map(|k| format!("c{k}")).collect();
        let wrap = (1usize << (usize::BITS - 1)).to_string();
        let mut metadata = BTreeMap::new();
        for (key, value) in [
            (keys::COLUMNS, columns.join(",")),
            (keys::CABLES, "0".to_string()),
            (keys::ACTUATORS, "0".to_string()),
            (keys::LEGS, wrap),
        ] {
            metadata.insert(key.to_string(), value);
        }
        out.write_metadata(&mcap::records::Metadata {
            name: METADATA_NAME.into(),
            metadata,
        })
        .expect("metadata");
        out.finish().expect("finished");
        let bytes = out.into_inner().into_inner();
        let err = read_info(&mut Cursor::new(&bytes[..])).expect_err("refused");
        assert!(
            matches!(err, McapReadError::BadMetadata { key, .. } if key == keys::LEGS),
            "{err}"
        );
    }

    #[test]
    fn a_recording_whose_writer_was_killed_reads_its_complete_chunks_bit_for_bit() {
        // 1 s at 1 kHz, a chunk ended every 150 records: 7 chunks.
        let (robot, traj, outcome) = silva4_run(1.0);
        let mut rec = McapRecorder::new(Cursor::new(Vec::new()), &robot, &traj)
            .expect("recorder")
            .with_extra_columns(&["a"]);
        for (k, r) in outcome.records.iter().enumerate() {
            rec.write_with(&r.as_record(), &[-(k as f64)])
                .expect("written");
            if k % 150 == 149 {
                rec.flush().expect("flushed");
            }
        }
        let bytes = rec.finish().expect("finished").into_inner();
        let info = read_info(&mut Cursor::new(&bytes[..])).expect("info");
        assert!(!info.unfinished);
        assert_eq!(info.chunks.len(), 7);
        let dir = std::env::temp_dir().join(format!("cdpr-mcap-killed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let whole_path = dir.join("whole.mcap");
        std::fs::write(&whole_path, &bytes).expect("written");
        let mut whole = crate::recording::RunFile::open(&whole_path).expect("opens");
        assert!(!whole.unfinished());
        assert_eq!(whole.len(), outcome.records.len());
        let rows = |f: &mut crate::recording::RunFile, n: usize| -> Vec<String> {
            (0..n)
                .map(|k| format!("{:?}", f.row(k).expect("row")))
                .collect()
        };
        let n_all = whole.len();
        let all = rows(&mut whole, n_all);

        let ends: Vec<usize> = info
            .chunks
            .iter()
            .map(|c| (c.offset + c.length) as usize)
            .collect();
        // The footer: opcode, length, two offsets and a CRC (29 bytes), then the magic.
        let footer = bytes.len() - 29 - 8;
        assert_eq!(bytes[footer], op::FOOTER);
        for (cut, complete) in [
            (ends[1], 2),                 // just after chunk 2
            ((ends[1] + ends[2]) / 2, 2), // in chunk 3
            (ends[2] + 5, 3),             // in the prefix of what follows
            (footer, 7),                  // the summary whole, no footer
            (footer + 20, 7),             // half the footer
            (bytes.len() - 1, 7),         // all but the magic's last byte
        ] {
            let path = dir.join(format!("cut-{cut}.mcap"));
            std::fs::write(&path, &bytes[..cut]).expect("written");
            let mut file = crate::recording::RunFile::open(&path)
                .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            assert!(file.unfinished(), "cut at {cut}");
            let n: usize = (0..complete)
                .map(|k| {
                    if k < 6 {
                        150
                    } else {
                        outcome.records.len() - 900
                    }
                })
                .sum();
            assert_eq!(file.len(), n, "cut at {cut}");
            assert_eq!(rows(&mut file, n), all[..n], "cut at {cut}");
            assert_eq!(file.robot_text(), whole.robot_text());
            assert_eq!(file.extra_columns(), whole.extra_columns());
            let info = read_info(&mut std::fs::File::open(&path).expect("opens")).expect("info");
            assert_eq!(info.samples as usize, n);
            assert_eq!(info.chunks.len(), complete);
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
