//! The shadow's record: one CSV row per physics step, with the columns of
//! `cdpr simulate --out` (so `cdpr compare` and `cdpr report` read it as they read a
//! simulation) followed by the shadow's own: the PLC cycle answered, the motion-enable flag,
//! and the flags `rejected` (the controller's sample was refused and the last good command
//! held) and `gap` (first row after the link was lost, the PLC restarted or the physics was
//! re-settled: the rows before and after are not one continuous motion).

use cdpr_core::kinematics::Pose;
use cdpr_core::sim::SimState;
use std::io::Write;

/// One recorded physics step.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    /// Shadow time, s (wall clock or PLC counter time since the shadow started; it jumps over
    /// gaps).
    pub t: f64,
    /// The pose the commanded lengths define for rigid cables (forward kinematics).
    pub commanded_pose: &'a Pose,
    /// Commanded lengths applied at this step, m.
    pub commanded: &'a [f64],
    pub state: &'a SimState,
    pub plc_cycle: u32,
    pub enable: bool,
    pub rejected: bool,
    pub gap: bool,
}

/// Writes rows to any `Write` (a file, a buffer) through the CSV writer's buffer; flushed by
/// [`Recorder::finish`] (and, ignoring errors, on drop).
pub struct Recorder {
    out: csv::Writer<Box<dyn Write + Send>>,
    cables: usize,
    fields: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("writing the record: {0}")]
pub struct RecordError(#[from] csv::Error);

impl From<std::io::Error> for RecordError {
    fn from(e: std::io::Error) -> RecordError {
        RecordError(e.into())
    }
}

/// The header for `cables` cables: `cdpr simulate --out`'s columns, then the shadow's.
pub fn header(cables: usize) -> Vec<String> {
    let mut h = cdpr_core::run::csv_columns(cables);
    h.extend(["segment", "plc_cycle", "enable", "rejected", "gap"].map(String::from));
    h
}

impl Recorder {
    /// Starts a record for `cables` cables on `out` (writes the header).
    pub fn new(out: Box<dyn Write + Send>, cables: usize) -> Result<Recorder, RecordError> {
        let mut out = csv::WriterBuilder::new()
            .buffer_capacity(64 * 1024)
            .from_writer(out);
        out.write_record(header(cables))?;
        Ok(Recorder {
            out,
            cables,
            fields: Vec::with_capacity(13 + 3 * cables + 5),
        })
    }

    /// Creates (truncates) `path` and starts a record in it.
    pub fn create(path: &std::path::Path, cables: usize) -> Result<Recorder, RecordError> {
        Recorder::new(Box::new(std::fs::File::create(path)?), cables)
    }

    pub fn write(&mut self, row: &Row) -> Result<(), RecordError> {
        let f = &mut self.fields;
        f.clear();
        f.push(row.t.to_string());
        let pose = |p: &Pose| p.to_array().map(|v| v.to_string());
        f.extend(pose(row.commanded_pose));
        f.extend(pose(&row.state.pose));
        for k in 0..self.cables {
            let value = |v: Option<&f64>| v.map_or_else(String::new, f64::to_string);
            f.push(value(row.commanded.get(k)));
            f.push(value(row.state.lengths.get(k)));
            f.push(value(row.state.tensions.get(k)));
        }
        f.push(String::new());
        f.push(row.plc_cycle.to_string());
        for flag in [row.enable, row.rejected, row.gap] {
            f.push(if flag { "1" } else { "0" }.into());
        }
        self.out.write_record(&*f)?;
        Ok(())
    }

    /// Flushes everything written so far.
    pub fn finish(&mut self) -> Result<(), RecordError> {
        self.out.flush()?;
        Ok(())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}
