//! The one recorder every face writes a run with (`cdpr simulate --out`, `cdpr shadow
//! --record`, `cdpr sweep --record-dir`): the file's type is its extension's, `.csv`
//! ([`CsvRecorder`], described by its sidecar) or `.mcap` ([`McapRecorder`], described by
//! its own metadata). Any other extension is refused before anything is written.

use super::mcap::{McapRecordError, McapRecorder, Pace};
use super::messages::ShadowCycle;
use super::sidecar::{self, Sidecar, SidecarError};
use crate::robot::Robot;
use crate::run::{CsvRecorder, Record};
use crate::trajectory::Trajectory;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// A recording's type, by its file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordFormat {
    Csv,
    Mcap,
}

impl RecordFormat {
    /// The extensions recordings may have, as messages name them.
    pub const EXTENSIONS: [&str; 2] = ["csv", "mcap"];

    /// The type of the recording at `path` (extension, any case).
    pub fn of(path: &Path) -> Result<RecordFormat, RecorderError> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("csv") => Ok(RecordFormat::Csv),
            Some("mcap") => Ok(RecordFormat::Mcap),
            _ => Err(RecorderError::Extension {
                file: path.to_path_buf(),
            }),
        }
    }
}

/// Why a run could not be recorded; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error(
        "{}: a recording is a .csv (spreadsheets, pandas) or .mcap file (Foxglove, Lichtblick, PlotJuggler); give the file one of these extensions",
        file.display()
    )]
    Extension { file: PathBuf },
    #[error("{}: {cause}", file.display())]
    Create {
        file: PathBuf,
        cause: std::io::Error,
    },
    #[error("{}: {cause}", file.display())]
    Csv { file: PathBuf, cause: csv::Error },
    #[error("{}: {cause}", file.display())]
    Mcap {
        file: PathBuf,
        cause: McapRecordError,
    },
    #[error(transparent)]
    Sidecar(#[from] SidecarError),
}

/// One per recording: the size difference between the variants does not matter.
#[allow(clippy::large_enum_variant)]
enum Writer {
    Csv(CsvRecorder<BufWriter<File>>),
    Mcap(McapRecorder<BufWriter<File>>),
}

/// A run being written to a `.csv` or `.mcap` file (see the module's documentation), with
/// the methods of [`CsvRecorder`].
pub struct Recorder {
    path: PathBuf,
    writer: Writer,
    /// The CSV's sidecar as written (rewritten when the run ends interrupted).
    meta: Sidecar,
}

/// How a recorded run ended, for [`Recorder::finish_as`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunEnd {
    /// The run was interrupted (Ctrl-C) before its end.
    pub interrupted: bool,
    /// Simulated time of the last record, s.
    pub simulated_s: Option<f64>,
}

impl Recorder {
    /// Creates (or replaces) `path` and records a run of `source` (for its segment names)
    /// on `robot` in it, described by `meta`: a CSV gets `meta` as its sidecar, an MCAP file
    /// as its `cdpr` metadata record.
    pub fn create(
        path: &Path,
        robot: &Robot,
        source: &Trajectory,
        meta: &Sidecar,
    ) -> Result<Recorder, RecorderError> {
        Recorder::create_paced(path, robot, source, meta, Pace::Offline)
    }

    /// [`Recorder::create`] for a recording written at `pace` (the shadow's: [`Pace::Live`];
    /// a CSV is the same at any pace).
    pub fn create_paced(
        path: &Path,
        robot: &Robot,
        source: &Trajectory,
        meta: &Sidecar,
        pace: Pace,
    ) -> Result<Recorder, RecorderError> {
        let format = RecordFormat::of(path)?;
        let file = File::create(path).map_err(|cause| RecorderError::Create {
            file: path.to_path_buf(),
            cause,
        })?;
        let out = BufWriter::new(file);
        let writer = match format {
            RecordFormat::Csv => {
                sidecar::write(path, meta)?;
                Writer::Csv(CsvRecorder::new(out, robot, source))
            }
            RecordFormat::Mcap => {
                let mut recorder =
                    McapRecorder::with_pace(out, robot, source, pace).map_err(|cause| {
                        RecorderError::Mcap {
                            file: path.to_path_buf(),
                            cause,
                        }
                    })?;
                for (key, value) in metadata_of(meta) {
                    recorder = recorder.with_info(&key, &value);
                }
                Writer::Mcap(recorder)
            }
        };
        Ok(Recorder {
            path: path.to_path_buf(),
            writer,
            meta: meta.clone(),
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's type.
    pub fn format(&self) -> RecordFormat {
        match self.writer {
            Writer::Csv(_) => RecordFormat::Csv,
            Writer::Mcap(_) => RecordFormat::Mcap,
        }
    }

    /// The same recorder with columns `names` after the CSV's (`RunSample::extra` in MCAP).
    pub fn with_extra_columns(self, names: &[&str]) -> Recorder {
        let writer = match self.writer {
            Writer::Csv(w) => Writer::Csv(w.with_extra_columns(names)),
            Writer::Mcap(w) => Writer::Mcap(w.with_extra_columns(names)),
        };
        Recorder { writer, ..self }
    }

    /// The same recorder with the simulation step `dt`, s (MCAP metadata; a CSV's times
    /// give it).
    pub fn with_dt(self, dt: f64) -> Recorder {
        let writer = match self.writer {
            Writer::Mcap(w) => Writer::Mcap(w.with_dt(dt)),
            csv => csv,
        };
        Recorder { writer, ..self }
    }

    fn error_csv(&self, cause: csv::Error) -> RecorderError {
        RecorderError::Csv {
            file: self.path.clone(),
            cause,
        }
    }

    fn error_mcap(&self, cause: McapRecordError) -> RecorderError {
        RecorderError::Mcap {
            file: self.path.clone(),
            cause,
        }
    }

    /// Writes one record.
    pub fn write(&mut self, r: &Record<'_>) -> Result<(), RecorderError> {
        self.write_with(r, &[])
    }

    /// Writes one record and the values of the extra columns.
    pub fn write_with(&mut self, r: &Record<'_>, extra: &[f64]) -> Result<(), RecorderError> {
        let written = match &mut self.writer {
            Writer::Csv(w) => w.write_with(r, extra).map_err(Ok),
            Writer::Mcap(w) => w.write_with(r, extra).map_err(Err),
        };
        written.map_err(|e| self.error(e))
    }

    /// The shadow's cycle statistics (`/shadow/cycle` in MCAP; a CSV has no place for them:
    /// the shadow reports them at its end).
    pub fn write_cycle(&mut self, cycle: &ShadowCycle) -> Result<(), RecorderError> {
        let written = match &mut self.writer {
            Writer::Csv(_) => Ok(()),
            Writer::Mcap(w) => w.write_cycle(cycle),
        };
        written.map_err(|e| self.error_mcap(e))
    }

    /// Flushes what was written so far (see [`CsvRecorder::flush`], [`McapRecorder::flush`]).
    pub fn flush(&mut self) -> Result<(), RecorderError> {
        let flushed = match &mut self.writer {
            Writer::Csv(w) => w.flush().map_err(Ok),
            Writer::Mcap(w) => w.flush().map_err(Err),
        };
        flushed.map_err(|e| self.error(e))
    }

    /// Finishes the file (an MCAP file's summary and footer) and closes it.
    pub fn finish(self) -> Result<(), RecorderError> {
        self.finish_as(&RunEnd::default())
    }

    /// [`Recorder::finish`] for a run that ended as `end` says: an interrupted run is marked
    /// so (the CSV's sidecar gets `interrupted` and `ended_s`, the MCAP an
    /// [`super::mcap::END_NAME`] metadata record), and the reader says so.
    pub fn finish_as(self, end: &RunEnd) -> Result<(), RecorderError> {
        let path = self.path;
        match self.writer {
            Writer::Csv(w) => {
                w.finish().map_err(|cause| RecorderError::Csv {
                    file: path.clone(),
                    cause,
                })?;
                if end.interrupted {
                    let meta = Sidecar {
                        interrupted: true,
                        ended_s: end.simulated_s,
                        ..self.meta
                    };
                    sidecar::write(&path, &meta)?;
                }
                Ok(())
            }
            Writer::Mcap(w) => w
                .finish_as(end)
                .map(drop)
                .map_err(|cause| RecorderError::Mcap { file: path, cause }),
        }
    }

    fn error(&self, e: Result<csv::Error, McapRecordError>) -> RecorderError {
        match e {
            Ok(c) => self.error_csv(c),
            Err(m) => self.error_mcap(m),
        }
    }
}

/// The sidecar's fields as metadata entries (strings; absent fields left out), whatever
/// fields it has: a field added to the sidecar reaches MCAP files too.
fn metadata_of(meta: &Sidecar) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(meta) else {
        return Vec::new();
    };
    fields
        .into_iter()
        .filter_map(|(key, value)| match value {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some((key, s)),
            other => Some((key, other.to_string())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_chooses_the_type_and_any_other_is_refused_by_name() {
        assert_eq!(
            RecordFormat::of(Path::new("a/run.csv")).ok(),
            Some(RecordFormat::Csv)
        );
        assert_eq!(
            RecordFormat::of(Path::new("RUN.MCAP")).ok(),
            Some(RecordFormat::Mcap)
        );
        for bad in ["run.txt", "run", "run.csv.gz"] {
            let robot = crate::fixtures::robot("silva4");
            let dir = std::env::temp_dir().join(format!("cdpr-recorder-{}", std::process::id()));
            let path = dir.join(bad);
            let err = Recorder::create(&path, &robot, &Trajectory::default(), &Sidecar::new("x"))
                .err()
                .expect("refused");
            let text = err.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(text.contains(".csv") && text.contains(".mcap"), "{text}");
            assert!(!path.exists(), "nothing created");
        }
    }

    #[test]
    fn both_types_record_the_same_run_and_describe_it() {
        let robot = crate::fixtures::robot("silva4");
        let home = crate::kinematics::Pose::from_array(robot.home);
        let options = crate::run::RunOptions::new(crate::sim::SimConfig::new(
            crate::sim::ModelKind::ELASTIC,
            crate::sim::ControlMode::Ideal,
            1e-3,
        ));
        let traj = crate::run::hold(home, 0.1, 1e-3);
        let outcome = crate::run::run(&robot, &traj, &options, &mut |_| {}).expect("runs");
        let dir = std::env::temp_dir().join(format!("cdpr-recorder-both-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let mut meta = Sidecar::new("silva4 held");
        meta.robot = Some(robot.name.clone());
        for name in ["run.csv", "run.mcap"] {
            let path = dir.join(name);
            let mut rec = Recorder::create(&path, &robot, &traj, &meta)
                .expect("created")
                .with_extra_columns(&["k"])
                .with_dt(1e-3);
            for (k, r) in outcome.records.iter().enumerate() {
                rec.write_with(&r.as_record(), &[k as f64])
                    .expect("written");
            }
            rec.finish().expect("finished");
        }
        let csv = std::fs::read_to_string(dir.join("run.csv")).expect("csv");
        assert_eq!(csv.lines().count(), outcome.records.len() + 1);
        assert_eq!(
            sidecar::read(&dir.join("run.csv"))
                .expect("sidecar")
                .map(|s| s.description),
            Some("silva4 held".to_string())
        );
        let mut file = File::open(dir.join("run.mcap")).expect("mcap");
        let info = super::super::mcap_read::read_info(&mut file).expect("info");
        assert_eq!(info.samples as usize, outcome.records.len());
        assert_eq!(info.metadata["description"], "silva4 held");
        assert_eq!(info.metadata["robot"], "silva4");
        assert_eq!(info.metadata["dt"], "0.001");
        assert_eq!(info.extra_columns, ["k"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
