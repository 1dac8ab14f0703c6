//! What a CSV is, beside it: the run's description, the robot, the cdpr version and the
//! command, in a small TOML file next to the CSV (`run.csv` → `run.csv.meta.toml`).
//!
//! The CSV itself holds only a header row and numbers, so that the default readers of pandas
//! (`read_csv(path)`), numpy (`genfromtxt(path, delimiter=",", names=True)`), Excel and
//! PlotJuggler read it as it is. A description in a first `# …` comment line (which those
//! readers take as the header) is read too ([`read_description`]), for files written so.
//!
//! The sidecar's name appends `.meta.toml` to the CSV's whole name rather than replacing its
//! extension: every path has exactly one sidecar (`run.csv` and `run.mcap` of the same stem,
//! or a CSV named `out` or `run.txt`, cannot collide), and a directory listing sorts it right
//! after its CSV.

use crate::robot::Robot;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Suffix appended to a CSV's file name to name its sidecar.
pub const SUFFIX: &str = ".meta.toml";

/// Largest sidecar (or old comment line) read, bytes: a sidecar is a few hundred bytes.
const MAX_BYTES: u64 = 64 * 1024;

/// The contents of a sidecar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    /// One line saying what the run is (`cdpr simulate: robot uvigo8, trajectory seed000, …`):
    /// the title `cdpr report` gives it.
    pub description: String,
    /// The robot's name, when the file is a run on a robot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robot: Option<String>,
    /// The robot file the robot was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robot_file: Option<String>,
    /// The cdpr version that wrote the file.
    pub cdpr_version: String,
    /// The command that wrote the file, its words joined by spaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The run was interrupted (Ctrl-C): the CSV ends where it stopped, at `ended_s`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Simulated time of the CSV's last row, s, when the run was interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_s: Option<f64>,
}

impl Sidecar {
    /// A sidecar with `description` (line breaks and other control characters become
    /// spaces), written by this cdpr version and this process's command line (the cdpr
    /// command that writes the file); no robot.
    pub fn new(description: &str) -> Sidecar {
        Sidecar {
            description: one_line(description),
            robot: None,
            robot_file: None,
            cdpr_version: env!("CARGO_PKG_VERSION").to_string(),
            command: None,
            interrupted: false,
            ended_s: None,
        }
        .with_command(std::env::args_os().map(|a| a.to_string_lossy().into_owned()))
    }

    /// The same with the robot's name and the file it was read from.
    pub fn with_robot(mut self, robot: &Robot) -> Sidecar {
        self.robot = Some(robot.name.clone());
        self.robot_file = robot.path.as_ref().map(|p| p.display().to_string());
        self
    }

    /// The same with the command's words (e.g. `std::env::args()`).
    pub fn with_command<I, S>(mut self, words: I) -> Sidecar
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let words: Vec<String> = words.into_iter().map(|w| one_line(w.as_ref())).collect();
        self.command = Some(words.join(" "));
        self
    }
}

fn one_line(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    text.trim().to_string()
}

/// The sidecar's path of the CSV at `csv`: its whole name and [`SUFFIX`].
pub fn path_of(csv: &Path) -> PathBuf {
    let mut name = csv.as_os_str().to_os_string();
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// Errors writing or reading a sidecar.
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    #[error("{file}: {cause}")]
    Io { file: String, cause: std::io::Error },
    #[error("{file}: not a cdpr sidecar: {message}")]
    Invalid { file: String, message: String },
}

/// Writes the sidecar of the CSV at `csv` (creating or replacing it): every CSV cdpr writes
/// gets its sidecar through this function.
pub fn write(csv: &Path, sidecar: &Sidecar) -> Result<PathBuf, SidecarError> {
    let path = path_of(csv);
    let file = path.display().to_string();
    let body = toml::to_string(sidecar).map_err(|e| SidecarError::Invalid {
        file: file.clone(),
        message: e.to_string(),
    })?;
    let name = csv
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = format!(
        "# What {name} holds (written by cdpr; the CSV itself is header and numbers).\n{body}"
    );
    std::fs::write(&path, text).map_err(|cause| SidecarError::Io { file, cause })?;
    Ok(path)
}

/// The sidecar of the CSV at `csv`: `Ok(None)` when there is none.
pub fn read(csv: &Path) -> Result<Option<Sidecar>, SidecarError> {
    let path = path_of(csv);
    let file = path.display().to_string();
    let mut text = String::new();
    match std::fs::File::open(&path) {
        Ok(f) => f
            .take(MAX_BYTES)
            .read_to_string(&mut text)
            .map_err(|cause| SidecarError::Io {
                file: file.clone(),
                cause,
            })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(cause) => return Err(SidecarError::Io { file, cause }),
    };
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| SidecarError::Invalid {
            file,
            message: e.message().to_string(),
        })
}

/// The run's description of the CSV at `csv`: its sidecar's, else (files written before
/// the sidecar) the text of the CSV's first line when it is a comment (`# …`); `None` when
/// neither is there or readable (the CSV's reader reports a file it cannot read).
pub fn read_description(csv: &Path) -> Option<String> {
    if let Ok(Some(s)) = read(csv) {
        return (!s.description.is_empty()).then_some(s.description);
    }
    let mut head = Vec::new();
    std::fs::File::open(csv)
        .ok()?
        .take(MAX_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.split(|&b| b == b'\n').next()?;
    let text = std::str::from_utf8(line.strip_prefix(b"#")?).ok()?.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sidecar_reads_back_and_old_comment_lines_still_describe() {
        let dir = std::env::temp_dir().join(format!("cdpr-sidecar-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let csv = dir.join("run.csv");
        std::fs::write(&csv, "t,x\n0,1\n").expect("csv");
        std::fs::write(
            dir.join("my-robot.toml"),
            crate::fixtures::robot_text("uvigo8"),
        )
        .expect("robot file");
        assert_eq!(read(&csv).expect("none is fine"), None);
        assert_eq!(read_description(&csv), None);
        // A robot read from a file (a shipped one has no file).
        let robot = Robot::from_file(dir.join("my-robot.toml")).expect("parses");
        let s = Sidecar::new("cdpr simulate: robot uvigo8,\ntrajectory \"seed000\"")
            .with_robot(&robot)
            .with_command(["cdpr", "simulate", "--out", "run.csv"]);
        let written = write(&csv, &s).expect("written");
        assert_eq!(written, dir.join("run.csv.meta.toml"));
        let back = read(&csv).expect("reads").expect("there");
        assert_eq!(back, s);
        assert_eq!(back.robot.as_deref(), Some("uvigo8"));
        assert!(
            back.robot_file
                .as_deref()
                .is_some_and(|f| f.ends_with("my-robot.toml")),
            "{back:?}"
        );
        assert_eq!(
            back.description,
            "cdpr simulate: robot uvigo8, trajectory \"seed000\""
        );
        assert_eq!(back.command.as_deref(), Some("cdpr simulate --out run.csv"));
        assert_eq!(back.cdpr_version, env!("CARGO_PKG_VERSION"));
        assert!(!back.interrupted && back.ended_s.is_none());
        let cut = Sidecar {
            interrupted: true,
            ended_s: Some(1.5),
            ..s.clone()
        };
        write(&csv, &cut).expect("rewritten");
        let text = std::fs::read_to_string(path_of(&csv)).expect("text");
        assert!(
            text.contains("interrupted = true") && text.contains("ended_s = 1.5"),
            "{text}"
        );
        assert_eq!(read(&csv).expect("reads"), Some(cut));
        write(&csv, &s).expect("back");
        assert_eq!(
            read_description(&csv).as_deref(),
            Some(back.description.as_str())
        );
        // A file written before the sidecar: its first comment line.
        let old = dir.join("old.csv");
        std::fs::write(&old, "# cdpr simulate: robot uvigo8\nt,x\n0,1\n").expect("old");
        assert_eq!(
            read_description(&old).as_deref(),
            Some("cdpr simulate: robot uvigo8")
        );
        // A broken sidecar is an error that names it, not a silent default.
        std::fs::write(path_of(&old), "description = \n").expect("broken");
        let e = read(&old).expect_err("broken").to_string();
        assert!(e.contains("old.csv.meta.toml"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
