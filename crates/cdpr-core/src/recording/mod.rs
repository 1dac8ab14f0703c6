//! Runs as files, and back: what a run writes (CSV for spreadsheets and pandas, MCAP for
//! Foxglove, Lichtblick and PlotJuggler) and the one reader every face opens a record with,
//! whatever its type.

pub mod mcap;
mod mcap_read;
pub mod messages;
pub mod recorder;
mod run_sample_protobuf;

mod error;
pub mod reader;
pub mod sidecar;

pub use error::RecordingError;
pub use mcap::Pace;
pub use reader::{RunFile, RunRow, UNFINISHED_NOTE};
pub use recorder::{RecordFormat, Recorder, RecorderError, RunEnd};
