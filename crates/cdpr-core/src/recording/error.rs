//! Errors writing and reading recordings; each names the file and what is wrong in it.

/// An error writing or reading a recording.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("{file}: {cause}")]
    Io { file: String, cause: std::io::Error },
    #[error("{file}: not a recording cdpr reads (a .csv or .mcap file)")]
    UnknownType { file: String },
    #[error("{file}: missing column `{column}`")]
    MissingColumn { file: String, column: String },
    #[error("{file}:{line}: column {index} (`{column}`): `{text}` is not a number")]
    BadNumber {
        file: String,
        line: u64,
        /// 1-based, as spreadsheets count.
        index: usize,
        column: String,
        text: String,
    },
    #[error("{file}:{line}: {message}")]
    Malformed {
        file: String,
        line: u64,
        message: String,
    },
    /// A row's time is not finite, or earlier than the row before: the replay's clock and
    /// its time-to-row search need times that never go back (equal times are kept: the shadow
    /// may record two steps at one time).
    #[error("{file}: {at}: time {time} s {}", time_fault(*.previous))]
    BadTime {
        file: String,
        /// Where: `line N` in a CSV, `row N` (0-based) in an MCAP record.
        at: String,
        time: f64,
        /// The row before's time, s, when the time goes back (None: it is not finite).
        previous: Option<f64>,
    },
    #[error("{file}: changed since it was opened ({message})")]
    Changed { file: String, message: String },
    #[error("{file}: {message}")]
    Mcap { file: String, message: String },
    #[error(transparent)]
    Sidecar(#[from] super::sidecar::SidecarError),
}

fn time_fault(previous: Option<f64>) -> String {
    match previous {
        Some(p) => format!("is before the previous row's {p} s (a record's times never go back)"),
        None => "is not a finite number".into(),
    }
}
