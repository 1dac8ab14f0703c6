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
    #[error("{file}: changed since it was opened ({message})")]
    Changed { file: String, message: String },
    #[error("{file}: {message}")]
    Mcap { file: String, message: String },
    #[error(transparent)]
    Sidecar(#[from] super::sidecar::SidecarError),
}
