//! Reading a recording [`super::mcap::McapRecorder`] wrote, for the one reader of runs
//! (`super::reader`): its description and robot ([`read_info`]), its `/run` samples in order
//! ([`RunSamples`], streamed) and the samples of one chunk ([`chunk_samples`], for random
//! access: a slider jumps to a time, only the chunk holding it is read and decompressed).
//!
//! Nothing here holds the whole file: the summary (indexes, a few hundred bytes a chunk),
//! then one chunk at a time. The file is read through `std::fs::File` (no memory map: the
//! workspace forbids `unsafe`, and a map of a file another process truncates is a crash).

use super::mcap::{METADATA_NAME, ROBOT_JSON, ROBOT_TOML, keys};
use super::messages::{RUN_TOPIC, RunSample};
use mcap::records::{self, Record, op};
use mcap::sans_io::{SummaryReadEvent, SummaryReader};
use std::collections::BTreeMap;
#[cfg(test)]
use std::io::BufReader;
use std::io::{Read, Seek, SeekFrom};

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum McapReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a readable MCAP file: {0}")]
    Mcap(#[from] mcap::McapError),
    #[error("no summary section (the recording was not finished: the writer was killed?)")]
    NoSummary,
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
}

/// A chunk holding `/run` samples: the unit of random access.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunChunk {
    /// Log times of its first and last message (any channel), ns.
    pub start_ns: u64,
    pub end_ns: u64,
    index: records::ChunkIndex,
}

/// What a recording says about itself, read from its summary without reading its messages.
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
    /// The `/run` channel's id (what [`chunk_samples`] filters on).
    run_channel: u16,
}

/// Reads `file`'s summary, its `cdpr` metadata and the robot's attachments.
pub(crate) fn read_info<F: Read + Seek>(file: &mut F) -> Result<McapInfo, McapReadError> {
    let summary = read_summary(file)?;
    let run_channel = summary
        .channels
        .values()
        .find(|c| c.topic == RUN_TOPIC)
        .map(|c| c.id)
        .ok_or(McapReadError::NoRunChannel)?;
    let samples = summary
        .stats
        .as_ref()
        .and_then(|s| s.channel_message_counts.get(&run_channel).copied())
        .unwrap_or(0);
    let index = summary
        .metadata_indexes
        .iter()
        .find(|m| m.name == METADATA_NAME)
        .ok_or(McapReadError::NoMetadata)?;
    let metadata = match read_record(file, index.offset, index.length, op::METADATA)? {
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
    let count = |key: &'static str| -> Result<usize, McapReadError> {
        let text = metadata.get(key).ok_or(McapReadError::BadMetadata {
            key,
            message: "missing".into(),
        })?;
        text.parse().map_err(|_| McapReadError::BadMetadata {
            key,
            message: format!("`{text}` is not a count"),
        })
    };
    let (columns, extra_columns) = (list(keys::COLUMNS), list(keys::EXTRA_COLUMNS));
    let (cables, actuators, legs) = (
        count(keys::CABLES)?,
        count(keys::ACTUATORS)?,
        count(keys::LEGS)?,
    );
    if columns.len() != 13 + 3 * cables + 2 * actuators + 2 * legs {
        return Err(McapReadError::BadMetadata {
            key: keys::COLUMNS,
            message: format!(
                "{} columns for {cables} cables, {actuators} actuators and {legs} legs",
                columns.len()
            ),
        });
    }
    let mut attachment = |name: &str| -> Result<Option<String>, McapReadError> {
        let Some(index) = summary.attachment_indexes.iter().find(|a| a.name == name) else {
            return Ok(None);
        };
        match read_record(file, index.offset, index.length, op::ATTACHMENT)? {
            Record::Attachment { data, .. } => Ok(String::from_utf8(data.into_owned()).ok()),
            _ => Ok(None),
        }
    };
    let (robot_toml, robot_json) = (attachment(ROBOT_TOML)?, attachment(ROBOT_JSON)?);
    let mut chunks: Vec<RunChunk> = summary
        .chunk_indexes
        .iter()
        .filter(|c| c.message_index_offsets.contains_key(&run_channel))
        .map(|c| RunChunk {
            start_ns: c.message_start_time,
            end_ns: c.message_end_time,
            index: c.clone(),
        })
        .collect();
    chunks.sort_by_key(|c| (c.start_ns, c.index.chunk_start_offset));
    Ok(McapInfo {
        metadata,
        columns,
        extra_columns,
        cables,
        actuators,
        legs,
        robot_toml,
        robot_json,
        samples,
        chunks,
        run_channel,
    })
}

/// The summary section (schemas, channels, statistics, indexes) through seeks and reads.
fn read_summary<F: Read + Seek>(file: &mut F) -> Result<mcap::Summary, McapReadError> {
    let size = file.seek(SeekFrom::End(0))?;
    let mut reader = SummaryReader::new_with_options(
        mcap::sans_io::SummaryReaderOptions::default().with_file_size(size),
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
    reader.finish().ok_or(McapReadError::NoSummary)
}

/// The record of `length` bytes (opcode and length prefix included) at `offset`.
fn read_record<F: Read + Seek>(
    file: &mut F,
    offset: u64,
    length: u64,
    opcode: u8,
) -> Result<Record<'static>, McapReadError> {
    // A record's 9-byte prefix: opcode, u64 length.
    if length < 9 {
        return Err(mcap::McapError::BadIndex.into());
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::new();
    file.by_ref().take(length).read_to_end(&mut buf)?;
    if buf.len() as u64 != length || buf[0] != opcode {
        return Err(mcap::McapError::BadIndex.into());
    }
    Ok(mcap::parse_record(opcode, &buf[9..])?.into_owned())
}

/// The `/run` samples of chunk `k` of `info.chunks`, with their log times (ns), in time
/// order: one chunk read and decompressed (about 1 MiB), whatever the file's length.
pub(crate) fn chunk_samples<F: Read + Seek>(
    file: &mut F,
    info: &McapInfo,
    k: usize,
) -> Result<Vec<(u64, RunSample)>, McapReadError> {
    let chunk = info.chunks.get(k).ok_or(McapReadError::NoChunk(k))?;
    let index = &chunk.index;
    let (header, data) = match read_record(
        file,
        index.chunk_start_offset,
        index.chunk_length,
        op::CHUNK,
    )? {
        Record::Chunk { header, data } => (header, data),
        _ => return Err(mcap::McapError::BadIndex.into()),
    };
    let mut out = Vec::new();
    for record in mcap::read::ChunkReader::new(header, &data)? {
        if let Record::Message { header, data } = record?
            && header.channel_id == info.run_channel
        {
            out.push((header.log_time, decode(header.log_time, &data)?));
        }
    }
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

fn decode(log_time: u64, data: &[u8]) -> Result<RunSample, McapReadError> {
    decode_run_sample(data).map_err(|message| McapReadError::BadSample {
        log_time,
        message: message.to_string(),
    })
}

/// A [`RunSample`] from its protobuf bytes (as the `Encode` derive writes them: fields
/// numbered in declaration order, repeated doubles one tagged value each; packed ones are
/// read too). Written out rather than generated: the schema is twelve fields.
pub(crate) fn decode_run_sample(mut data: &[u8]) -> Result<RunSample, &'static str> {
    let mut s = RunSample::default();
    let (mut pose_cmd, mut pose) = (Vec::with_capacity(6), Vec::with_capacity(6));
    while !data.is_empty() {
        let key = varint(&mut data)?;
        let (field, wire) = (key >> 3, key & 7);
        let target: Option<&mut Vec<f64>> = match field {
            2 => Some(&mut pose_cmd),
            3 => Some(&mut pose),
            4 => Some(&mut s.length_cmd),
            5 => Some(&mut s.length),
            6 => Some(&mut s.tension),
            7 => Some(&mut s.actuator_cmd),
            8 => Some(&mut s.actuator),
            9 => Some(&mut s.leg_length),
            10 => Some(&mut s.leg_force),
            12 => Some(&mut s.extra),
            _ => None,
        };
        match (field, wire, target) {
            (1, 1, _) => s.t = double(&mut data)?,
            (_, 1, Some(v)) => v.push(double(&mut data)?),
            (_, 2, Some(v)) => {
                let mut packed = bytes(&mut data)?;
                if packed.len() % 8 != 0 {
                    return Err("packed doubles of a length not a multiple of 8");
                }
                while !packed.is_empty() {
                    v.push(double(&mut packed)?);
                }
            }
            (11, 2, None) => {
                s.segment = std::str::from_utf8(bytes(&mut data)?)
                    .map_err(|_| "segment is not UTF-8")?
                    .to_string();
            }
            // Fields of a later version: skipped.
            (_, 0, None) => {
                varint(&mut data)?;
            }
            (_, 1, None) => {
                double(&mut data)?;
            }
            (_, 2, None) => {
                bytes(&mut data)?;
            }
            (_, 5, None) => {
                take(&mut data, 4)?;
            }
            _ => return Err("unexpected field type"),
        }
    }
    s.pose_cmd = pose_cmd
        .try_into()
        .map_err(|_| "pose_cmd has not 6 values")?;
    s.pose = pose.try_into().map_err(|_| "pose has not 6 values")?;
    Ok(s)
}

fn take<'a>(data: &mut &'a [u8], n: usize) -> Result<&'a [u8], &'static str> {
    if data.len() < n {
        return Err("truncated");
    }
    let (head, tail) = data.split_at(n);
    *data = tail;
    Ok(head)
}

fn varint(data: &mut &[u8]) -> Result<u64, &'static str> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = take(data, 1)?[0];
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("varint longer than 10 bytes")
}

fn double(data: &mut &[u8]) -> Result<f64, &'static str> {
    let b = take(data, 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(f64::from_le_bytes(a))
}

fn bytes<'a>(data: &mut &'a [u8]) -> Result<&'a [u8], &'static str> {
    let n = usize::try_from(varint(data)?).map_err(|_| "length out of range")?;
    take(data, n)
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
    fn an_unfinished_or_foreign_file_is_refused_with_a_reason() {
        let (_, _, bytes) = record(0.2);
        let cut = &bytes[..bytes.len() / 2];
        let err = read_info(&mut Cursor::new(cut)).expect_err("cut");
        assert!(
            matches!(err, McapReadError::NoSummary | McapReadError::Mcap(_)),
            "{err}"
        );
        let err = read_info(&mut Cursor::new(&b"t,x\n0,1\n"[..])).expect_err("csv");
        assert!(!err.to_string().is_empty());
        assert_eq!(decode_run_sample(&[0x09, 1, 2]), Err("truncated"));
    }
}
