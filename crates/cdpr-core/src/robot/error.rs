//! What can go wrong reading a robot file, and the physical ranges a file's values must lie
//! in.

/// What can go wrong reading a robot file.
#[derive(Debug, thiserror::Error)]
pub enum RobotFileError {
    /// The OS error is part of the message (not a `source`), so that a `{:#}` chain prints
    /// it once.
    #[error("{file}: cannot read the robot file: {error}")]
    Io { file: String, error: std::io::Error },
    #[error("{file}: is larger than {max} bytes: not a robot file")]
    TooLarge { file: String, max: u64 },
    #[error(
        "no robot `{spec}`: not a shipped robot ({builtin}) and none of {searched} exists{}",
        crate::options::did_you_mean(*nearest)
    )]
    NotFound {
        spec: String,
        builtin: String,
        /// The shipped robot whose name is nearest, if one is close.
        nearest: Option<&'static str>,
        /// The files looked for, in lookup order.
        searched: String,
    },
    /// A path (it has a separator or ends in `.toml`) that does not exist; `shipped` is the
    /// shipped robot its stem names, if any.
    #[error("file not found: {path}{}", match shipped {
        Some(name) => format!(" (`{name}` alone names the shipped robot {name})"),
        None => String::new(),
    })]
    FileNotFound {
        path: String,
        shipped: Option<String>,
    },
    /// A section the robot needs is not in the file (no line to point at).
    #[error("{file}: missing section [{section}] ({why})")]
    MissingSection {
        file: String,
        section: String,
        why: String,
    },
    /// A list of one value per cable (`cables.frame_anchors`, …) longer than [`MAX_CABLES`],
    /// found before the file is parsed.
    #[error(
        "{file}{}: {field}: {count} cables, more than the {max} a robot file may have (no cable \
         robot comes near: this is not a robot file, or a generated one gone wrong)",
        line_suffix(*.line)
    )]
    TooManyCables {
        file: String,
        /// 1-based line where the list starts, 0 when unknown.
        line: usize,
        field: String,
        count: usize,
        max: usize,
    },
    /// Any other list (or array of tables) longer than [`MAX_CABLES`]: no list of a robot
    /// file needs as many values as that.
    #[error(
        "{file}{}: {field}: {count} values, more than the {max} any list of a robot file may \
         hold",
        line_suffix(*.line)
    )]
    TooManyValues {
        file: String,
        /// 1-based line where the list starts, 0 when unknown.
        line: usize,
        field: String,
        count: usize,
        max: usize,
    },
    /// `file:line: field: message`, or `file: field: message` when the line is unknown.
    #[error("{file}{}: {field}: {message}", line_suffix(*.line))]
    Invalid {
        file: String,
        /// 1-based line, 0 when unknown.
        line: usize,
        field: String,
        message: String,
    },
}

impl RobotFileError {
    /// The dotted field path the error is about (e.g. `cables.frame_anchors[2]`).
    pub fn field(&self) -> Option<&str> {
        match self {
            RobotFileError::Invalid { field, .. }
            | RobotFileError::TooManyCables { field, .. }
            | RobotFileError::TooManyValues { field, .. } => Some(field),
            RobotFileError::MissingSection { section, .. } => Some(section),
            _ => None,
        }
    }
}

fn line_suffix(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

// ---------------------------------------------------------------------------------------
// Physical ranges. Values beyond them are typos or hostile input: the kinematics, statics and
// simulator downstream are not meant for them (1e300 m overflows a squared length).

/// Largest coordinate of any point (anchors, boxes, home), m.
pub const MAX_COORDINATE: f64 = 1.0e3;
/// Platform mass range, kg.
pub const MASS_RANGE: (f64, f64) = (1.0e-6, 1.0e6);
/// Range of the platform's principal moments of inertia, kg·m².
pub const INERTIA_RANGE: (f64, f64) = (1.0e-15, 1.0e6);
/// Largest angle of the home pose, rad (one turn).
pub const MAX_HOME_ANGLE: f64 = 2.0 * std::f64::consts::PI;
/// Shortest cable at the home pose, m: a cable needs a length (and a direction).
pub const MIN_CABLE_LENGTH: f64 = 1.0e-6;
/// Most cables a robot file may have, and most values in any of its lists: far above any
/// cable robot (a handful of cables to a few dozen), checked on the file's tokens before it
/// is parsed, so that no file under [`MAX_FILE_BYTES`] costs more than its own text to refuse.
pub const MAX_CABLES: usize = 1024;
/// Largest file read as a robot file, bytes.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Largest tension (and tension bound), N, and largest value of any other quantity a robot
/// file gives.
pub const MAX_TENSION: f64 = 1.0e12;

/// The largest positive value accepted for a quantity in `unit`.
pub(super) fn max_for(unit: &str) -> f64 {
    match unit {
        "m" => MAX_COORDINATE,
        "kg" => MASS_RANGE.1,
        "kg·m²" => INERTIA_RANGE.1,
        _ => MAX_TENSION,
    }
}
