//! One step of a run as it is handed out ([`Record`], borrowed from the player: nothing is
//! cloned per step), kept ([`RecordBuf`]) or written: the numeric columns ([`RecordLayout`],
//! shared by the CSV writer and the faces that hand a run over as arrays) and the CSV
//! ([`CsvRecorder`], which the ADS shadow extends with its own columns).

use super::RunOutcome;
use crate::robot::Robot;
use crate::sim::SimState;
use crate::trajectory::{Sample, Trajectory};
use std::io::Write;

/// One recorded step, borrowed from whoever computed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Record<'a> {
    pub commanded: &'a Sample,
    /// Commanded winch payouts (length and ideal modes), or the IK lengths of the commanded
    /// pose (tension mode), m.
    pub length_command: &'a [f64],
    /// Commanded tensions (tension mode), N.
    pub tension_command: Option<&'a [f64]>,
    pub state: &'a SimState,
}

impl Record<'_> {
    /// A copy to keep.
    pub fn to_buf(&self) -> RecordBuf {
        RecordBuf {
            commanded: *self.commanded,
            length_command: self.length_command.to_vec(),
            tension_command: self.tension_command.map(<[f64]>::to_vec),
            state: self.state.clone(),
        }
    }
}

/// A recorded step kept (see [`Record`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordBuf {
    pub commanded: Sample,
    pub length_command: Vec<f64>,
    pub tension_command: Option<Vec<f64>>,
    pub state: SimState,
}

impl RecordBuf {
    pub fn as_record(&self) -> Record<'_> {
        Record {
            commanded: &self.commanded,
            length_command: &self.length_command,
            tension_command: self.tension_command.as_deref(),
            state: &self.state,
        }
    }
}

/// The leading columns of a run's CSV (`cdpr simulate --out`, and the shadow's record): time,
/// commanded pose, actual pose, then per cable its commanded payout, length and tension.
pub fn csv_columns(cables: usize) -> Vec<String> {
    let mut h: Vec<String> = [
        "t",
        "x_cmd",
        "y_cmd",
        "z_cmd",
        "roll_cmd",
        "pitch_cmd",
        "yaw_cmd",
        "x",
        "y",
        "z",
        "roll",
        "pitch",
        "yaw",
    ]
    .map(String::from)
    .to_vec();
    for i in 1..=cables {
        h.extend([
            format!("length_cmd_{i}"),
            format!("length_{i}"),
            format!("tension_{i}"),
        ]);
    }
    h
}

/// The numeric columns of a run's record, in the CSV's order (see [`write_csv`]): shared by
/// the CSV writer and the faces that hand a run over as arrays (the Python package), so both
/// give the same columns with the same numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLayout {
    cable_robot: bool,
    cables: usize,
    actuators: usize,
    legs: usize,
    /// The robot's pulleys have friction: per cable a `winch_tension_i` column.
    winch_side: bool,
    /// Robots with drives: per drive `motor_torque_i`, `motor_velocity_i` and
    /// `following_error_i` columns.
    drives: usize,
}

impl RecordLayout {
    /// The layout of a run on `robot` whose first record is `first` (robots with legs take
    /// their actuator and leg counts from it; None: no record, no such columns).
    pub fn new(robot: &Robot, first: Option<&Record<'_>>) -> RecordLayout {
        let cable_robot = robot.is_cable_robot();
        let (actuators, legs) = match first {
            Some(r) if !cable_robot => (r.length_command.len(), r.state.lengths.len()),
            _ => (0, 0),
        };
        RecordLayout {
            cable_robot,
            cables: robot.cable_count(),
            actuators,
            legs,
            winch_side: cable_robot && crate::sim::capstan::has_friction(robot),
            drives: robot.drives.len(),
        }
    }

    /// Names of the numeric columns (the CSV's header without the trailing `segment`).
    pub fn columns(&self) -> Vec<String> {
        let mut header = csv_columns(self.cables);
        for i in 1..=self.actuators {
            header.extend([format!("actuator_cmd_{i}"), format!("actuator_{i}")]);
        }
        for i in 1..=self.legs {
            header.extend([format!("leg_length_{i}"), format!("leg_force_{i}")]);
        }
        if self.winch_side {
            header.extend((1..=self.cables).map(|i| format!("winch_tension_{i}")));
        }
        for i in 1..=self.drives {
            header.extend([
                format!("motor_torque_{i}"),
                format!("motor_velocity_{i}"),
                format!("following_error_{i}"),
            ]);
        }
        header
    }

    /// Hands the numbers of `r` to `field`, in [`columns`](Self::columns)' order; stops at
    /// the first error `field` returns.
    pub fn numbers<E>(
        &self,
        r: &Record<'_>,
        field: &mut impl FnMut(f64) -> Result<(), E>,
    ) -> Result<(), E> {
        field(r.state.time)?;
        for v in r.commanded.pose.to_array() {
            field(v)?;
        }
        for v in r.state.pose.to_array() {
            field(v)?;
        }
        for i in 0..self.cables {
            field(r.length_command[i])?;
            field(r.state.lengths[i])?;
            field(r.state.tensions[i])?;
        }
        for i in 0..self.actuators {
            field(r.length_command[i])?;
            field(r.state.winch[i])?;
        }
        for i in 0..self.legs {
            field(r.state.lengths[i])?;
            field(r.state.tensions[i])?;
        }
        if self.winch_side {
            for i in 0..self.cables {
                field(r.state.winch_tensions[i])?;
            }
        }
        for i in 0..self.drives {
            field(r.state.motor_torques[i])?;
            field(r.state.motor_velocities[i])?;
            field(r.state.following_errors[i])?;
        }
        Ok(())
    }

    /// Whether the robot has cables (else legs).
    pub fn cable_robot(&self) -> bool {
        self.cable_robot
    }

    /// Cables: each has `length_cmd_i`, `length_i`, `tension_i` columns.
    pub fn cables(&self) -> usize {
        self.cables
    }

    /// Actuators of a robot with legs: each has `actuator_cmd_i`, `actuator_i` columns.
    pub fn actuators(&self) -> usize {
        self.actuators
    }

    /// Legs of a robot with legs: each has `leg_length_i`, `leg_force_i` columns.
    pub fn legs(&self) -> usize {
        self.legs
    }

    /// Whether each cable has a `winch_tension_i` column (the tension on the winch side of
    /// its pulley; only robots whose pulleys have friction, so other records keep their
    /// columns).
    pub fn winch_side(&self) -> bool {
        self.winch_side
    }

    /// Drives with `motor_torque_i`, `motor_velocity_i`, `following_error_i` columns (robots
    /// whose file describes its drives).
    pub fn drives(&self) -> usize {
        self.drives
    }
}

/// Writes a run as CSV record by record (see [`write_csv`] for the columns): memory does not
/// grow with the run. The header is written with the first record (whose sizes it takes).
/// A face with columns of its own (the ADS shadow's PLC cycle and flags) names them with
/// [`CsvRecorder::with_extra_columns`] and gives their values to [`CsvRecorder::write_with`].
///
/// Rows reach `out` whole: they are formatted into a buffer of their own and handed over in
/// one `write_all` of complete rows once [`FLUSH_AT`] bytes have gathered (and on
/// [`CsvRecorder::flush`]), so that a process ended between two writes — a signal, an
/// abort — leaves a file that ends with a complete row.
pub struct CsvRecorder<W: Write> {
    w: csv::Writer<Rows>,
    /// What `w` wrote: complete rows once `w` is flushed after a record.
    rows: Rows,
    out: W,
    robot: Robot,
    layout: Option<RecordLayout>,
    segment_names: Vec<String>,
    /// Columns after `segment`, written by the caller.
    extra: Vec<String>,
    buf: Vec<u8>,
}

impl<W: Write> CsvRecorder<W> {
    /// A recorder of a run of `source` (for its segment names) on `robot`.
    pub fn new(out: W, robot: &Robot, source: &Trajectory) -> CsvRecorder<W> {
        let rows = Rows::default();
        CsvRecorder {
            w: csv::Writer::from_writer(rows.clone()),
            rows,
            out,
            robot: robot.clone(),
            layout: None,
            segment_names: source.segments.clone(),
            extra: Vec::new(),
            buf: Vec::with_capacity(32),
        }
    }

    /// The same recorder with columns `names` after `segment`, whose values each row gives
    /// to [`CsvRecorder::write_with`].
    pub fn with_extra_columns(mut self, names: &[&str]) -> CsvRecorder<W> {
        self.extra = names.iter().map(|n| n.to_string()).collect();
        self
    }

    fn header(&mut self, first: Option<&Record<'_>>) -> Result<RecordLayout, csv::Error> {
        let layout = RecordLayout::new(&self.robot, first);
        let mut header = layout.columns();
        header.push("segment".into());
        header.extend(self.extra.iter().cloned());
        self.w.write_record(&header)?;
        self.layout = Some(layout);
        Ok(layout)
    }

    /// Writes one record (the header first, on the first call). Each number is formatted
    /// into one reused buffer and handed to the CSV writer as a field: no allocation per
    /// number (the bytes are those of `format!("{v}")`: [`crate::text::push_display_f64`]).
    pub fn write(&mut self, r: &Record<'_>) -> Result<(), csv::Error> {
        self.write_with(r, &[])
    }

    /// [`CsvRecorder::write`], then `extra`: the values of the extra columns, formatted as
    /// the others (an integer as such: `7`, not `7.0`). A count other than the columns'
    /// is refused by the CSV writer.
    pub fn write_with(&mut self, r: &Record<'_>, extra: &[f64]) -> Result<(), csv::Error> {
        let layout = match &self.layout {
            Some(l) => *l,
            None => self.header(Some(r))?,
        };
        let (w, buf) = (&mut self.w, &mut self.buf);
        layout.numbers(r, &mut |v: f64| -> Result<(), csv::Error> {
            buf.clear();
            crate::text::push_display_f64(buf, v);
            w.write_field(&buf[..])
        })?;
        let segment = r
            .commanded
            .segment
            .and_then(|k| self.segment_names.get(k))
            .map(String::as_str)
            .unwrap_or("");
        self.w.write_field(segment)?;
        for v in extra {
            self.buf.clear();
            crate::text::push_display_f64(&mut self.buf, *v);
            self.w.write_field(&self.buf[..])?;
        }
        self.w.write_record(None::<&[u8]>)?;
        if self.rows.len() >= FLUSH_AT {
            self.hand_over()?;
        }
        Ok(())
    }

    /// The complete rows gathered so far, to `out` in one write.
    fn hand_over(&mut self) -> Result<(), csv::Error> {
        // The CSV writer's own buffer into the rows' (a record ends on a row boundary).
        self.w.flush()?;
        let mut rows = self.rows.lock();
        self.out.write_all(&rows)?;
        rows.clear();
        Ok(())
    }

    /// Writes the header if no record came yet and flushes what was written; the recorder
    /// stays open (a long run flushes now and then, and at its end).
    pub fn flush(&mut self) -> Result<(), csv::Error> {
        if self.layout.is_none() {
            self.header(None)?;
        }
        self.hand_over()?;
        self.out.flush()?;
        Ok(())
    }

    /// Flushes (writing the header if no record came) and returns the writer.
    pub fn finish(mut self) -> Result<W, csv::Error> {
        self.flush()?;
        Ok(self.out)
    }
}

/// The bytes a [`CsvRecorder`]'s CSV writer writes, shared with the recorder, which hands
/// them over whole rows at a time.
#[derive(Clone, Default)]
struct Rows(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Rows {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        // Only this recorder's thread ever holds it: a poisoned lock still holds whole rows.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn len(&self) -> usize {
        self.lock().len()
    }
}

impl Write for Rows {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.lock().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes of complete rows a [`CsvRecorder`] gathers before it writes them out.
pub const FLUSH_AT: usize = 64 * 1024;

/// The run as CSV: `t,x_cmd,…,yaw_cmd,x,…,yaw`, per cable `length_cmd_i,length_i,tension_i`
/// (`tension_i` at the platform); robots with legs: per actuator `actuator_cmd_i,actuator_i`
/// (m or rad), per leg `leg_length_i,leg_force_i`; robots with pulley friction: per cable
/// `winch_tension_i` (the winch side of the pulley, N); robots with drives: per drive
/// `motor_torque_i` (N·m), `motor_velocity_i` (rad/s), `following_error_i` (m); then `segment`. Every number in Rust's shortest round-trip
/// form (reading the file back gives the recorded values bit for bit).
pub fn write_csv<W: Write>(
    out: W,
    robot: &Robot,
    source: &Trajectory,
    outcome: &RunOutcome,
) -> Result<(), csv::Error> {
    let mut recorder = CsvRecorder::new(out, robot, source);
    for r in &outcome.records {
        recorder.write(&r.as_record())?;
    }
    recorder.finish()?;
    Ok(())
}
