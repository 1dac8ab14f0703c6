//! A recorded run read by column name into [`Measured`]: any CSV with a header row — the
//! shadow's record, or a lab's own export — holding
//! - `t` (s);
//! - the measured pose: `actual_x`, `actual_y`, `actual_z`, `actual_roll`, `actual_pitch`,
//!   `actual_yaw` (m, rad: a tracker's), or, in a file that is not a shadow's record, `x` …
//!   `yaw` (a shadow's own `x` … `yaw` are its model's pose, not a measurement: refused);
//! - per cable i = 1 … n `actual_length_i` (m: the payout the drive measures);
//! - per drive `actual_torque_i` (N·m, motor side).
//!
//! Other columns are ignored; an empty cell or `NaN` (a shadow's gap row) is a value the fit
//! skips the windows of. Lines starting with `#` are comments.

use super::Measured;
use crate::csv_input::{BoundedLines, problem};
use crate::robot::Robot;
use std::path::Path;

/// The measured pose's columns, as a tracker's are named.
pub const POSE_COLUMNS: [&str; 6] = [
    "actual_x",
    "actual_y",
    "actual_z",
    "actual_roll",
    "actual_pitch",
    "actual_yaw",
];

/// Largest file read, bytes (an hour at 1 kHz of 8 cables is ~1 GB).
const MAX_FILE_BYTES: u64 = 1 << 34;

/// Why a recording cannot be read for a calibration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InputError {
    #[error("{file}: {message}")]
    Unreadable { file: String, message: String },
    #[error("{file}:{line}: {message}")]
    Line {
        file: String,
        line: u64,
        message: String,
    },
    #[error("{file}: no column `{column}` ({what}); the header has: {header}")]
    MissingColumn {
        file: String,
        column: String,
        what: &'static str,
        header: String,
    },
    #[error(
        "{file}: a shadow's record whose pose columns (x … yaw) are the shadow's own model, \
         not a measurement: calibration needs the tracker's pose as actual_x … actual_yaw \
         (the shadow records them when the robot's [plc] names `actual_pose`)"
    )]
    ShadowPose { file: String },
    #[error("{file}:{line}: `{text}` in column `{column}` is not a number")]
    NotANumber {
        file: String,
        line: u64,
        column: String,
        text: String,
    },
}

/// `path` read for `robot`'s calibration.
pub fn read_csv(path: &Path, robot: &Robot) -> Result<Measured, InputError> {
    let file = path.display().to_string();
    let opened = std::fs::File::open(path).map_err(|e| InputError::Unreadable {
        file: file.clone(),
        message: e.to_string(),
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(BoundedLines::new(
            std::io::BufReader::new(opened),
            1,
            MAX_FILE_BYTES,
            "a recorded run's CSV",
        ));
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| {
            let (line, message) = problem(&e);
            InputError::Line {
                file: file.clone(),
                line,
                message,
            }
        })?
        .iter()
        .map(String::from)
        .collect();
    let find = |name: &str, what: &'static str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| InputError::MissingColumn {
                file: file.clone(),
                column: name.to_string(),
                what,
                header: header.join(","),
            })
    };
    let has = |name: &str| header.iter().any(|h| h == name);
    let time = find("t", "time, s")?;
    let pose_names: Vec<String> = if POSE_COLUMNS.iter().all(|c| has(c)) {
        POSE_COLUMNS.iter().map(|c| c.to_string()).collect()
    } else if has("plc_cycle") {
        return Err(InputError::ShadowPose { file });
    } else {
        ["x", "y", "z", "roll", "pitch", "yaw"]
            .iter()
            .map(|c| c.to_string())
            .collect()
    };
    let pose = pose_names
        .iter()
        .map(|c| find(c, "the measured pose, m and rad"))
        .collect::<Result<Vec<_>, _>>()?;
    let (cables, drives) = (robot.cables.len(), robot.drives.len());
    let payouts = (1..=cables)
        .map(|i| find(&format!("actual_length_{i}"), "a measured payout, m"))
        .collect::<Result<Vec<_>, _>>()?;
    let torques = (1..=drives)
        .map(|i| find(&format!("actual_torque_{i}"), "a drive's torque, N·m"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut measured = Measured {
        cables,
        drives,
        ..Measured::default()
    };
    let mut record = csv::StringRecord::new();
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let (line, message) = problem(&e);
            InputError::Line {
                file: file.clone(),
                line,
                message,
            }
        })?;
        if !more {
            break;
        }
        let line = record.position().map_or(0, |p| p.line());
        let number = |c: usize| -> Result<f64, InputError> {
            let text = record.get(c).unwrap_or("");
            if text.is_empty() {
                return Ok(f64::NAN);
            }
            text.parse().map_err(|_| InputError::NotANumber {
                file: file.clone(),
                line,
                column: header[c].clone(),
                text: text.chars().take(40).collect(),
            })
        };
        measured.times.push(number(time)?);
        let mut p = [0.0; 6];
        for (value, &c) in p.iter_mut().zip(&pose) {
            *value = number(c)?;
        }
        measured.poses.push(p);
        for &c in &payouts {
            measured.payouts.push(number(c)?);
        }
        for &c in &torques {
            measured.torques.push(number(c)?);
        }
    }
    Ok(measured)
}
