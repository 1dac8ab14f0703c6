//! Replay: the viewer draws a recorded run (`cdpr view --replay run.csv|run.mcap`) instead of
//! stepping one. A [`Replay`] is a [`Playback`](super::Playback) source like the live feed:
//! the slider's time `t` selects the record's row [`RunFile::index_at`]`(t)` (the last row at
//! or before `t`) and the scene is that row, copied value for value — nothing is interpolated
//! or recomputed, so what is drawn at `t` is what the run wrote at `t`, bit for bit.
//!
//! A second record (`--compare`) is a [`Track`] of its own, shown at the same slider time as
//! a ghost: the shadow against `cdpr simulate` of the same commands, or two models.
//!
//! Records are read through core's one reader ([`RunFile`]), whatever their type; the whole
//! run is never loaded: the plots come from its overview (min/max bins), the trails from a few
//! thousand rows read once, the scene from one row at a time.

use super::ViewerError;
use cdpr_core::kinematics::Pose;
use cdpr_core::recording::{RunFile, RunRow};
use cdpr_core::robot::Robot;
use cdpr_core::sim::SimState;
use std::path::{Path, PathBuf};

/// Rows read at open for the trails (the whole run's commanded and actual paths).
pub const TRAIL_ROWS: usize = 2000;

/// One recorded run and the row it shows.
pub struct Track {
    pub path: PathBuf,
    file: RunFile,
    pub robot: Robot,
    /// Where the robot came from (the record's own robot file, its name, or --robot).
    pub robot_source: String,
    index: usize,
    row: RunRow,
    state: SimState,
}

impl Track {
    /// Opens `path` and the robot to draw it with: the record's own robot file when it carries
    /// one, else the robot it names, else `robot` (`--robot`); none of them is an error.
    pub fn open(path: &Path, robot: Option<&str>) -> Result<Track, ViewerError> {
        let mut file = RunFile::open(path).map_err(|e| ViewerError::Record(Box::new(e)))?;
        if file.is_empty() {
            return Err(ViewerError::Options(format!(
                "{}: the record has no rows",
                path.display()
            )));
        }
        let (robot, robot_source) = robot_of(path, &file, robot)?;
        if robot.cable_count() != file.cables() {
            return Err(ViewerError::Options(format!(
                "{}: the record has {} cables, robot `{}` ({robot_source}) has {}",
                path.display(),
                file.cables(),
                robot.name,
                robot.cable_count()
            )));
        }
        // The panel shows them too; logged for a replay rendered without one (`--video`).
        for note in notes_of(&file) {
            tracing::warn!("{}: {note}", path.display());
        }
        let row = file.row(0).map_err(|e| ViewerError::Record(Box::new(e)))?;
        let state = state_of(&row, 0);
        Ok(Track {
            path: path.to_path_buf(),
            file,
            robot,
            robot_source,
            index: 0,
            row,
            state,
        })
    }

    /// Shows row `index` (clamped to the record).
    fn show(&mut self, index: usize) -> Result<(), ViewerError> {
        let index = index.min(self.file.len() - 1);
        if index != self.index {
            self.row = self
                .file
                .row(index)
                .map_err(|e| ViewerError::Record(Box::new(e)))?;
            self.state = state_of(&self.row, index);
            self.index = index;
        }
        Ok(())
    }

    /// Shows the row at slider time `t`: the last at or before `t` (the first before it).
    fn show_time(&mut self, t: f64) -> Result<(), ViewerError> {
        let index = self.file.index_at(t);
        self.show(index)
    }

    pub fn file(&self) -> &RunFile {
        &self.file
    }

    /// What a face says of the record beside its rows: that the run was interrupted, or that
    /// the file was never finished.
    pub fn notes(&self) -> Vec<String> {
        notes_of(&self.file)
    }

    /// The row shown, exactly as recorded.
    pub fn row(&self) -> &RunRow {
        &self.row
    }

    /// Its index in the record.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The row as the scene draws it.
    pub fn state(&self) -> &SimState {
        &self.state
    }

    pub fn commanded(&self) -> &Pose {
        &self.row.commanded
    }

    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into(),
        )
    }
}

/// See [`Track::notes`].
fn notes_of(file: &RunFile) -> Vec<String> {
    if file.interrupted() && !file.is_empty() {
        vec![format!(
            "interrupted at t = {:.3} s: the run ends before its trajectory did",
            file.time(file.len() - 1)
        )]
    } else if file.unfinished() {
        vec![cdpr_core::recording::UNFINISHED_NOTE.to_string()]
    } else {
        Vec::new()
    }
}

/// The robot a record is drawn with, and where it came from.
fn robot_of(
    path: &Path,
    file: &RunFile,
    fallback: Option<&str>,
) -> Result<(Robot, String), ViewerError> {
    if let Some(text) = file.robot_text() {
        let name = file.robot_name().unwrap_or("robot");
        let origin = PathBuf::from(format!("{} (the robot file recorded with it)", name));
        let robot = Robot::from_text(text, &origin).map_err(|e| {
            ViewerError::Options(format!(
                "{}: the robot file recorded with the run does not load: {e}",
                path.display()
            ))
        })?;
        return Ok((robot, "recorded with the run".into()));
    }
    if let Some(name) = file.robot_name() {
        match (Robot::load(name), fallback) {
            (Ok(robot), _) => return Ok((robot, format!("`{name}`, named by the record"))),
            // A robot file of the recording machine's: --robot says where it is here.
            (Err(_), Some(_)) => {}
            (Err(e), None) => {
                return Err(ViewerError::Options(format!(
                    "{}: the record names robot `{name}`, which does not load here ({e}); \
                     give its file with --robot",
                    path.display()
                )));
            }
        }
    }
    match fallback {
        Some(spec) => {
            let robot = Robot::load(spec)
                .map_err(|e| ViewerError::Options(format!("--robot {spec}: {e}")))?;
            Ok((robot, format!("--robot {spec}")))
        }
        None => Err(ViewerError::Options(format!(
            "{}: the record does not say which robot ran it; name it with --robot",
            path.display()
        ))),
    }
}

/// A row as the scene's state: pose, lengths and tensions as recorded (the commanded payouts
/// stand for the winches; velocities and residuals are not recorded).
pub fn state_of(row: &RunRow, index: usize) -> SimState {
    SimState {
        time: row.time,
        step: index as u64,
        pose: row.pose,
        twist: [0.0; 6],
        winch: row.length_command.clone(),
        lengths: row.lengths.clone(),
        tensions: row.tensions.clone(),
        winch_tensions: row.tensions.clone(),
        tensions_constraint: row.tensions.clone(),
        wrench_residual: 0.0,
        ..SimState::default()
    }
}

/// What `cdpr view --replay` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRequest {
    pub path: PathBuf,
    /// A second record drawn as a ghost (`--compare`).
    pub compare: Option<PathBuf>,
    /// The robot when a record does not say (`--robot`).
    pub robot: Option<String>,
}

impl ReplayRequest {
    pub fn open(&self) -> Result<Replay, ViewerError> {
        Replay::open(&self.path, self.compare.as_deref(), self.robot.as_deref())
    }
}

/// A run's path: the commanded and the actual platform positions, world frame, m.
pub struct Paths {
    pub commanded: Vec<[f64; 3]>,
    pub actual: Vec<[f64; 3]>,
}

/// A recorded run (and maybe a second one to compare) at a slider time.
pub struct Replay {
    pub main: Track,
    pub compare: Option<Track>,
    /// The slider's time, s (the record's own clock).
    time: f64,
}

impl Replay {
    /// Opens `path` (and `compare`), showing their first rows. The robot of each: see
    /// [`Track::open`] (`robot` is the `--robot` fallback for both).
    pub fn open(
        path: &Path,
        compare: Option<&Path>,
        robot: Option<&str>,
    ) -> Result<Replay, ViewerError> {
        let main = Track::open(path, robot)?;
        let compare = compare.map(|p| Track::open(p, robot)).transpose()?;
        let mut replay = Replay {
            time: main.file.time(0),
            main,
            compare,
        };
        replay.seek(replay.start())?;
        Ok(replay)
    }

    /// The record's first and last times, s: the slider's range.
    pub fn start(&self) -> f64 {
        self.main.file.time(0)
    }

    pub fn end(&self) -> f64 {
        self.main.file.time(self.main.file.len() - 1)
    }

    /// The slider's time, s.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Moves the slider to `t` (clamped to the record): both runs show their row at `t`.
    pub fn seek(&mut self, t: f64) -> Result<(), ViewerError> {
        let (start, end) = (self.start(), self.end());
        // Core's reader refuses times that go back or are not finite; were one to get through,
        // the slider stays at the start rather than panic in `clamp`.
        let ordered = start <= end; // false when either is NaN
        let t = if t.is_nan() || !ordered {
            start
        } else {
            t.clamp(start, end)
        };
        self.time = t;
        self.main.show_time(t)?;
        if let Some(compare) = &mut self.compare {
            compare.show_time(t)?;
        }
        Ok(())
    }

    /// Shows the main record's row `index` (clamped to the record); the slider lands on its
    /// time and the compared run shows its row at that time. By row, not by time: among rows
    /// of one time (the shadow may record two), a time would always pick the last.
    pub fn show_row(&mut self, index: usize) -> Result<(), ViewerError> {
        self.main.show(index)?;
        let t = self.main.file.time(self.main.index);
        self.time = t;
        if let Some(compare) = &mut self.compare {
            compare.show_time(t)?;
        }
        Ok(())
    }

    /// One sample forward (`+1`) or back (`-1`) in the main record (see [`Replay::show_row`]).
    pub fn step(&mut self, by: isize) -> Result<(), ViewerError> {
        self.show_row(self.main.index.saturating_add_signed(by))
    }

    /// The mean time between rows, s (what "one sample" is worth on the clock).
    pub fn sample_period(&self) -> f64 {
        let rows = self.main.file.len();
        if rows < 2 {
            return 1e-3;
        }
        let span = self.end() - self.start();
        if span > 0.0 {
            span / (rows - 1) as f64
        } else {
            1e-3
        }
    }

    /// (commanded, actual) positions of up to [`TRAIL_ROWS`] rows evenly spread over the
    /// main run: its whole path.
    pub fn paths(&mut self) -> Result<Paths, ViewerError> {
        let rows = self.main.file.len();
        let picks = rows.min(TRAIL_ROWS);
        let mut commanded = Vec::with_capacity(picks);
        let mut actual = Vec::with_capacity(picks);
        for k in 0..picks {
            let index = if picks < 2 {
                0
            } else {
                k * (rows - 1) / (picks - 1)
            };
            let row = self
                .main
                .file
                .row(index)
                .map_err(|e| ViewerError::Record(Box::new(e)))?;
            let (c, p) = (row.commanded.position, row.pose.position);
            commanded.push([c.x, c.y, c.z]);
            actual.push([p.x, p.y, p.z]);
        }
        Ok(Paths { commanded, actual })
    }
}
