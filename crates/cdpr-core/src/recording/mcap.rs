//! A run as an MCAP file, which Foxglove, Lichtblick and PlotJuggler open as it is: the
//! platform's pose on `/tf`, the 3D scene on `/scene`, the CSV's numbers typed on `/run`
//! (see [`super::messages`]), the run's description in a metadata record and the robot in
//! attachments. Written record by record, in the same shape as [`crate::run::CsvRecorder`].
//!
//! Written by the foxglove crate's MCAP writer on a context of the recorder's own: channels
//! are per context, so parallel runs of a sweep, each with its recorder, never mix their
//! messages. Every message is stamped with the simulated time (ns), never the wall clock.
//!
//! Memory is bounded whatever the run's length: the writer holds one chunk
//! ([`CHUNK_BYTES`]) and its message index (16 bytes a message) until the chunk is
//! compressed and written, plus a chunk index (~100 bytes) per chunk for the summary — for a
//! 10-minute 1 kHz run a few hundred of them.

use super::messages::{
    self, RUN_TOPIC, RunSample, SCENE_RATE_HZ, SCENE_TOPIC, SHADOW_CYCLE_TOPIC, ShadowCycle,
    TF_TOPIC,
};
use crate::colors;
use crate::robot::Robot;
use crate::run::{Record, RecordLayout};
use crate::trajectory::Trajectory;
use foxglove::messages::{FrameTransform, SceneUpdate};
use foxglove::{Channel, Context, McapAttachment, McapCompression, McapWriteOptions};
use std::collections::BTreeMap;
use std::io::{Seek, Write};
use std::sync::Arc;

/// Name of the metadata record that describes the run.
pub const METADATA_NAME: &str = "cdpr";
/// Name of the metadata record written at the end of a run that did not reach its end
/// (`interrupted = true`, `ended_s`): absent from a run that ended as planned.
pub const END_NAME: &str = "cdpr_end";
/// The robot file's text, as written (when the robot came from a file or is a shipped one).
pub const ROBOT_TOML: &str = "robot.toml";
/// The robot as simulated (after any change made in code: a payload, the controller's
/// anchors), in JSON: exact even when the file is not.
pub const ROBOT_JSON: &str = "robot.json";

/// Metadata keys of the `cdpr` record. The columns are comma-separated (CSV header names,
/// which hold no comma), as the CSV's header would give them.
pub mod keys {
    pub const DESCRIPTION: &str = "description";
    pub const ROBOT: &str = "robot";
    pub const CDPR_VERSION: &str = "cdpr_version";
    /// The numeric columns (`RecordLayout::columns`), in `/run`'s order.
    pub const COLUMNS: &str = "columns";
    /// The names of `RunSample::extra`'s values.
    pub const EXTRA_COLUMNS: &str = "extra_columns";
    /// The simulation step, s (as Rust prints it; absent when unknown).
    pub const DT: &str = "dt";
    /// Counts of the `/run` vectors: cables, actuators, legs.
    pub const CABLES: &str = "cables";
    pub const ACTUATORS: &str = "actuators";
    pub const LEGS: &str = "legs";
}

/// Uncompressed bytes gathered into one chunk before it is compressed and written: about
/// two seconds of a 1 kHz run of an 8-cable robot. The unit of random access (a reader
/// decompresses one chunk to reach a sample) and of what the writer holds in memory; 1 MiB is
/// the MCAP library's default and Foxglove's recommendation.
pub const CHUNK_BYTES: u64 = 1024 * 1024;

/// Chunks of a live recording ([`Pace::Live`]): a quarter of [`CHUNK_BYTES`].
pub const LIVE_CHUNK_BYTES: u64 = 256 * 1024;

/// How a recording is written. Each chunk is compressed on the thread that writes the
/// record that fills it: offline (`simulate`, `sweep`) that costs nothing but time, live (the
/// shadow) it is the shadow's cycle, whose PLC will not wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pace {
    /// zstd in [`CHUNK_BYTES`] chunks: the smallest files (a few ms per chunk).
    #[default]
    Offline,
    /// lz4 in [`LIVE_CHUNK_BYTES`] chunks: larger files, but a chunk costs a fraction of a
    /// millisecond, inside a shadow cycle's budget.
    Live,
}

/// Why a recording could not be written.
#[derive(Debug, thiserror::Error)]
pub enum McapRecordError {
    #[error("writing the MCAP recording: {0}")]
    Write(#[from] foxglove::FoxgloveError),
    #[error("writing the MCAP recording: {0}")]
    Io(#[from] std::io::Error),
    #[error("the MCAP recording is already finished")]
    Finished,
}

/// Writes a run as MCAP record by record (see the module's documentation). Each record
/// goes to `/run` and `/tf`; the scene to `/scene` at most [`SCENE_RATE_HZ`] times a
/// simulated second. The metadata and the robot's attachments are written with the first
/// record (whose sizes the columns take), or on [`McapRecorder::finish`] for an empty run.
pub struct McapRecorder<W: Write + Seek + Send + 'static> {
    /// The recorder's own context (never the default one: see the module's documentation).
    _context: Arc<Context>,
    handle: Option<foxglove::McapWriterHandle<W>>,
    run: Channel<RunSample>,
    tf: Channel<FrameTransform>,
    scene: Channel<SceneUpdate>,
    cycle: Channel<ShadowCycle>,
    robot: Robot,
    layout: Option<RecordLayout>,
    segment_names: Vec<String>,
    extra: Vec<String>,
    info: BTreeMap<String, String>,
    /// The scene slot (index of the 1/[`SCENE_RATE_HZ`] s interval) of the last scene.
    last_scene_slot: Option<u64>,
    /// Largest tension seen so far, N (the colour scale's bound grows with it).
    largest_tension: f64,
}

impl<W: Write + Seek + Send + 'static> McapRecorder<W> {
    /// A recorder of a run of `source` (for its segment names) on `robot`, into `out`.
    pub fn new(
        out: W,
        robot: &Robot,
        source: &Trajectory,
    ) -> Result<McapRecorder<W>, McapRecordError> {
        McapRecorder::with_pace(out, robot, source, Pace::Offline)
    }

    /// [`McapRecorder::new`], compressed for `pace`.
    pub fn with_pace(
        out: W,
        robot: &Robot,
        source: &Trajectory,
        pace: Pace,
    ) -> Result<McapRecorder<W>, McapRecordError> {
        let context = Context::new();
        let (compression, chunk) = match pace {
            Pace::Offline => (McapCompression::Zstd, CHUNK_BYTES),
            Pace::Live => (McapCompression::Lz4, LIVE_CHUNK_BYTES),
        };
        let options = McapWriteOptions::new()
            .compression(Some(compression))
            .chunk_size(Some(chunk))
            // One thread: a sweep runs several recorders at once on all cores already, and
            // the shadow's cycle must not compete with compression workers.
            .compression_threads(0);
        let handle = context.mcap_writer_with_options(options).create(out)?;
        let mut info = BTreeMap::new();
        info.insert(keys::ROBOT.to_string(), robot.name.clone());
        info.insert(
            keys::CDPR_VERSION.to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        );
        Ok(McapRecorder {
            run: context.channel_builder(RUN_TOPIC).build(),
            tf: context.channel_builder(TF_TOPIC).build(),
            scene: context.channel_builder(SCENE_TOPIC).build(),
            cycle: context.channel_builder(SHADOW_CYCLE_TOPIC).build(),
            _context: context,
            handle: Some(handle),
            robot: robot.clone(),
            layout: None,
            segment_names: source.segments.clone(),
            extra: Vec::new(),
            info,
            last_scene_slot: None,
            largest_tension: 0.0,
        })
    }

    /// The same recorder with values `names` after the CSV's columns, given to
    /// [`McapRecorder::write_with`] and recorded in [`RunSample::extra`].
    pub fn with_extra_columns(mut self, names: &[&str]) -> McapRecorder<W> {
        self.extra = names.iter().map(|n| n.to_string()).collect();
        self
    }

    /// The same recorder with the run's one-line description (the CSV sidecar's).
    pub fn with_description(self, description: &str) -> McapRecorder<W> {
        self.with_info(keys::DESCRIPTION, description)
    }

    /// The same recorder with the simulation step `dt`, s.
    pub fn with_dt(self, dt: f64) -> McapRecorder<W> {
        self.with_info(keys::DT, &dt.to_string())
    }

    /// The same recorder with `key = value` in the `cdpr` metadata record (the command, the
    /// robot as given, ...).
    pub fn with_info(mut self, key: &str, value: &str) -> McapRecorder<W> {
        self.info.insert(key.to_string(), value.to_string());
        self
    }

    fn handle(&self) -> Result<&foxglove::McapWriterHandle<W>, McapRecordError> {
        self.handle.as_ref().ok_or(McapRecordError::Finished)
    }

    /// The metadata record and the robot's attachments, with the layout of `first`.
    fn start(&mut self, first: Option<&Record<'_>>) -> Result<RecordLayout, McapRecordError> {
        let layout = RecordLayout::new(&self.robot, first);
        let mut info = self.info.clone();
        info.insert(keys::COLUMNS.into(), layout.columns().join(","));
        info.insert(keys::EXTRA_COLUMNS.into(), self.extra.join(","));
        info.insert(keys::CABLES.into(), layout.cables().to_string());
        info.insert(keys::ACTUATORS.into(), layout.actuators().to_string());
        info.insert(keys::LEGS.into(), layout.legs().to_string());
        let handle = self.handle()?;
        handle.write_metadata(METADATA_NAME, info)?;
        if let Some(text) = robot_file_text(&self.robot) {
            handle.attach(&McapAttachment {
                log_time: 0,
                create_time: 0,
                name: ROBOT_TOML.into(),
                media_type: "application/toml".into(),
                data: text.into_bytes().into(),
            })?;
        }
        // Serialising a robot (numbers, strings, vectors) cannot fail.
        if let Ok(json) = serde_json::to_vec_pretty(&self.robot) {
            handle.attach(&McapAttachment {
                log_time: 0,
                create_time: 0,
                name: ROBOT_JSON.into(),
                media_type: "application/json".into(),
                data: json.into(),
            })?;
        }
        self.layout = Some(layout);
        Ok(layout)
    }

    /// Writes one record (the metadata first, on the first call).
    pub fn write(&mut self, r: &Record<'_>) -> Result<(), McapRecordError> {
        self.write_with(r, &[])
    }

    /// [`McapRecorder::write`] with `extra`: the values of the extra columns.
    pub fn write_with(&mut self, r: &Record<'_>, extra: &[f64]) -> Result<(), McapRecordError> {
        let layout = match self.layout {
            Some(l) => l,
            None => self.start(Some(r))?,
        };
        self.handle()?;
        let t = r.state.time;
        let ns = messages::time_ns(t);
        let sample = RunSample::from_record(&layout, r, &self.segment_names, extra);
        self.run.log_with_time(&sample, ns);
        self.tf
            .log_with_time(&messages::platform_transform(&r.state.pose, t), ns);
        if layout.cable_robot() {
            for &f in &r.state.tensions {
                if f.is_finite() && f > self.largest_tension {
                    self.largest_tension = f;
                }
            }
        }
        let slot = scene_slot(ns);
        if self.last_scene_slot != Some(slot) {
            self.last_scene_slot = Some(slot);
            let bound = colors::nice_ceil(self.largest_tension);
            let scene =
                messages::scene_update(&self.robot, &r.state.pose, &r.state.tensions, bound, t);
            self.scene.log_with_time(&scene, ns);
        }
        Ok(())
    }

    /// The shadow's cycle statistics at `cycle.t` on `/shadow/cycle`.
    pub fn write_cycle(&mut self, cycle: &ShadowCycle) -> Result<(), McapRecordError> {
        if self.layout.is_none() {
            self.start(None)?;
        }
        self.handle()?;
        self.cycle.log_with_time(cycle, messages::time_ns(cycle.t));
        Ok(())
    }

    /// Ends the current chunk and flushes it to the writer: what was written so far can be
    /// read (a long run flushes now and then; each flush ends a chunk early, which costs a
    /// little compression).
    pub fn flush(&mut self) -> Result<(), McapRecordError> {
        if self.layout.is_none() {
            self.start(None)?;
        }
        self.handle()?.flush()?;
        Ok(())
    }

    /// Writes the metadata if no record came, the summary (indexes, statistics) and the
    /// footer; returns the writer.
    pub fn finish(self) -> Result<W, McapRecordError> {
        self.finish_as(&super::RunEnd::default())
    }

    /// [`McapRecorder::finish`], with an [`END_NAME`] metadata record first when the run was
    /// interrupted.
    pub fn finish_as(mut self, end: &super::RunEnd) -> Result<W, McapRecordError> {
        if self.layout.is_none() {
            self.start(None)?;
        }
        if end.interrupted {
            let mut info = BTreeMap::new();
            info.insert("interrupted".to_string(), "true".to_string());
            if let Some(t) = end.simulated_s {
                info.insert("ended_s".to_string(), t.to_string());
            }
            self.handle()?.write_metadata(END_NAME, info)?;
        }
        let handle = self.handle.take().ok_or(McapRecordError::Finished)?;
        let mut out = handle.close()?;
        out.flush()?;
        Ok(out)
    }
}

/// Index of the 1/[`SCENE_RATE_HZ`] s interval of simulated time `ns`: one scene per slot,
/// the first record's of the slot.
pub fn scene_slot(ns: u64) -> u64 {
    (u128::from(ns) * SCENE_RATE_HZ as u128 / 1_000_000_000) as u64
}

/// The text of `robot`'s file: the `[plc]` section's copy, the file it was read from, or the
/// shipped robot of its name (None for a robot made in code).
fn robot_file_text(robot: &Robot) -> Option<String> {
    if !robot.plc.text.is_empty() {
        return Some(robot.plc.text.to_string());
    }
    if let Some(path) = &robot.path {
        return Robot::read_file_text(path).ok();
    }
    crate::robot::BUILTIN_ROBOTS
        .iter()
        .find(|(name, _)| *name == robot.name)
        .map(|(_, text)| text.to_string())
}
