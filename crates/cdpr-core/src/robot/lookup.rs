//! How a robot is found from what a user typed: one rule, followed by every face (`--robot`,
//! `cdpr check`, `cdpr robots`, the viewer, sweeps, Python).
//!
//! - Something that looks like a path (it holds a path separator, or ends in `.toml`) is a
//!   file, and it must exist: `/no/such/uvigo8.toml` is an error, never the shipped `uvigo8`.
//! - A name is looked up in [`name_places`] order: the shipped robot of that name, then
//!   `robots/NAME.toml`, then `NAME.toml` (both relative to the working directory), then a file
//!   called exactly NAME. The first that exists is taken. A robot file further down the list
//!   with other content is *shadowed*: [`Found::shadowed`] names it, so that a face can say
//!   which one was taken (the shipped robots come first so that `uvigo8` means the same robot
//!   in every directory; a local file is always reachable by its path).
//! - [`listing`] walks the same places, so that what `cdpr robots` lists is what `--robot`
//!   finds, under the name (or path) it shows.

use super::{BUILTIN_ROBOTS, Robot, RobotFileError, parse_robot};
use std::path::{Path, PathBuf};

/// Directories whose `*.toml` robot files are found by name, relative to the working
/// directory, in lookup order (after the shipped robots).
pub const NAME_DIRS: [&str; 2] = ["robots", "."];

/// Where a robot came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotSource {
    /// Compiled into the binary (`robots/NAME.toml` of the repository).
    Shipped(&'static str),
    /// A robot file.
    File(PathBuf),
}

impl std::fmt::Display for RobotSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RobotSource::Shipped(name) => write!(f, "the shipped robot `{name}`"),
            RobotSource::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A robot found from a name or a path.
#[derive(Debug, Clone)]
pub struct Found {
    pub robot: Robot,
    pub source: RobotSource,
    /// Robot files the name also matches, further down the lookup order, with other content:
    /// not used.
    pub shadowed: Vec<PathBuf>,
}

impl Found {
    /// What a user should be told about the choice (None: the name was unambiguous).
    pub fn note(&self, spec: &str) -> Option<String> {
        let first = self.shadowed.first()?;
        Some(format!(
            "`{spec}` is {}; {} (a different robot file) is not used: give its path to use it",
            self.source,
            first.display()
        ))
    }
}

/// True when `spec` names a file rather than a robot: it holds a path separator or ends in
/// `.toml`.
pub fn looks_like_path(spec: &str) -> bool {
    spec.contains('/')
        || spec.contains(std::path::MAIN_SEPARATOR)
        || Path::new(spec)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// Where `name` is looked up, in order, relative to `dir`: the shipped robot (if there is one
/// of that name), `robots/NAME.toml`, `NAME.toml`, then `NAME` itself.
pub fn name_places(dir: &Path, name: &str) -> Vec<RobotSource> {
    let shipped = BUILTIN_ROBOTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, _)| RobotSource::Shipped(n));
    let files = NAME_DIRS
        .iter()
        .map(|d| file_in(dir, d, &format!("{name}.toml")))
        .chain(std::iter::once(file_in(dir, ".", name)));
    shipped
        .into_iter()
        .chain(files.map(RobotSource::File))
        .collect()
}

/// `dir/sub/file`, written without `./` when `dir` is the working directory.
fn file_in(dir: &Path, sub: &str, file: &str) -> PathBuf {
    let sub = if sub == "." {
        dir.to_path_buf()
    } else {
        dir.join(sub)
    };
    sub.join(file)
}

/// Finds `spec` (a path, or a name looked up in [`name_places`]) relative to the working
/// directory.
pub fn find(spec: &str) -> Result<Found, RobotFileError> {
    find_in(Path::new(""), spec)
}

/// [`find`] with names and relative paths taken relative to `dir`.
pub fn find_in(dir: &Path, spec: &str) -> Result<Found, RobotFileError> {
    if looks_like_path(spec) {
        let path = dir.join(spec);
        if !path.exists() {
            let stem = Path::new(spec)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            return Err(RobotFileError::FileNotFound {
                path: path.display().to_string(),
                shipped: Robot::builtin_names()
                    .find(|n| *n == stem)
                    .map(str::to_string),
            });
        }
        return Ok(Found {
            robot: Robot::from_file(&path)?,
            source: RobotSource::File(path),
            shadowed: Vec::new(),
        });
    }
    let places = name_places(dir, spec);
    let mut taken: Option<(RobotSource, String)> = None;
    let mut shadowed = Vec::new();
    for place in &places {
        let text = match place {
            RobotSource::Shipped(name) => BUILTIN_ROBOTS
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.to_string()),
            RobotSource::File(path) if path.is_file() => match &taken {
                // The file taken is read (and its errors reported) below.
                None => Some(Robot::read_file_text(path)?),
                // A file further down only matters if it is a robot file of its own.
                Some(_) => Robot::read_file_text(path)
                    .ok()
                    .filter(|t| looks_like_robot(t)),
            },
            RobotSource::File(_) => None,
        };
        match (text, &taken) {
            (Some(text), None) => taken = Some((place.clone(), text)),
            (Some(text), Some((_, first))) if text != *first => {
                if let RobotSource::File(path) = place {
                    shadowed.push(path.clone());
                }
            }
            _ => {}
        }
    }
    let Some((source, text)) = taken else {
        return Err(RobotFileError::NotFound {
            spec: spec.to_string(),
            builtin: Robot::builtin_names().collect::<Vec<_>>().join(", "),
            nearest: crate::options::unknown(spec, Robot::builtin_names()).nearest,
            searched: places
                .iter()
                .filter_map(|p| match p {
                    RobotSource::File(path) => Some(path.display().to_string()),
                    RobotSource::Shipped(_) => None,
                })
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let robot = match &source {
        RobotSource::Shipped(name) => {
            parse_robot(&text, &format!("robots/{name}.toml (built in)"))?
        }
        RobotSource::File(path) => Robot::from_text(&text, path)?,
    };
    Ok(Found {
        robot,
        source,
        shadowed,
    })
}

/// A robot file's text at least looks like one (a `[platform]` or `[[cables]]`): Cargo.toml,
/// rustfmt.toml or a surrogate's parameter file are not robots.
pub fn looks_like_robot(text: &str) -> bool {
    text.contains("[platform]") || text.contains("[[cables]]")
}

/// One robot as [`listing`] shows it.
#[derive(Debug)]
pub struct Listed {
    /// What to give `--robot` (or `Robot::load`) for this robot: its name when the lookup finds
    /// it by name, else its path.
    pub spec: String,
    pub source: RobotSource,
    /// The robot, or why the file is not a valid robot file.
    pub robot: Result<Robot, RobotFileError>,
}

/// Every robot that can be given by name or path from `dir`: the shipped robots, the robot
/// files of [`NAME_DIRS`] and of `extra` directories (these by path only), each once (a file
/// identical to a shipped robot is that robot; a file reached twice is listed once).
pub fn listing(dir: &Path, extra: &[PathBuf]) -> Vec<Listed> {
    let mut out: Vec<Listed> = BUILTIN_ROBOTS
        .iter()
        .map(|(name, text)| Listed {
            spec: name.to_string(),
            source: RobotSource::Shipped(name),
            robot: parse_robot(text, &format!("robots/{name}.toml (built in)")),
        })
        .collect();
    let dirs = NAME_DIRS
        .iter()
        .map(|d| file_in(dir, d, ""))
        .chain(extra.iter().map(|d| dir.join(d)));
    let mut seen = std::collections::BTreeSet::new();
    for folder in dirs {
        for (file, text) in robot_files(&folder) {
            let key = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
            let shipped = BUILTIN_ROBOTS.iter().any(|(_, t)| *t == text);
            if shipped || !seen.insert(key) {
                continue;
            }
            // The name finds this file when the lookup of its stem lands on it.
            let stem = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let by_name = !looks_like_path(stem)
                && matches!(
                    find_in(dir, stem),
                    Ok(Found { source: RobotSource::File(ref p), .. }) if same_file(p, &file)
                );
            let spec = if by_name {
                stem.to_string()
            } else {
                file.display().to_string()
            };
            out.push(Listed {
                spec,
                robot: Robot::from_text(&text, &file),
                source: RobotSource::File(file),
            });
        }
    }
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// `*.toml` in `dir` that look like robot files ([`looks_like_robot`]), with their text, read
/// once (capped like every robot file), sorted by path; unreadable directories and files are
/// skipped.
fn robot_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return Vec::new();
    };
    let mut files: Vec<(PathBuf, String)> = entries
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .map(|name| dir.join(name))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .filter_map(|p| Robot::read_file_text(&p).ok().map(|text| (p, text)))
        .filter(|(_, text)| looks_like_robot(text))
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory with `files` (path, text) written into it.
    fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cdpr-lookup-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        std::fs::create_dir_all(&dir).expect("mkdir");
        dir
    }

    /// uvigo8's file under another name and description.
    fn renamed(name: &str) -> String {
        crate::fixtures::robot_text("uvigo8")
            .replacen("name = \"uvigo8\"", &format!("name = \"{name}\""), 1)
            .replacen("description = \"", "description = \"local copy: ", 1)
    }

    #[test]
    fn a_missing_path_is_file_not_found_not_the_shipped_robot() {
        let dir = scratch("missing", &[]);
        for spec in [
            "/nonexistent/dir/uvigo8.toml",
            "uvigo8.toml",
            "robots/uvigo8.toml",
        ] {
            let e = find_in(&dir, spec).expect_err(spec).to_string();
            assert!(e.starts_with("file not found: ") && e.contains(spec), "{e}");
            assert!(e.contains("`uvigo8` alone names the shipped robot"), "{e}");
        }
        let e = find_in(&dir, "no/such/robot.toml").unwrap_err().to_string();
        assert!(
            e.contains("file not found: ") && e.contains("no/such/robot.toml"),
            "{e}"
        );
        assert!(!e.contains("alone names"), "{e}");
        // A name is not a path: the shipped robot.
        let found = find_in(&dir, "uvigo8").expect("uvigo8");
        assert_eq!(found.source, RobotSource::Shipped("uvigo8"));
        assert!(found.shadowed.is_empty() && found.note("uvigo8").is_none());
    }

    #[test]
    fn names_follow_shipped_then_robots_dir_then_here() {
        let dir = scratch(
            "order",
            &[
                ("robots/mine.toml", &renamed("mine")),
                ("mine.toml", &renamed("mine_here")),
                ("here.toml", &renamed("here")),
                ("uvigo8.toml", &renamed("uvigo8_local")),
                ("robots/caroca.toml", crate::fixtures::robot_text("caroca")),
            ],
        );
        let places = name_places(&dir, "mine");
        assert_eq!(
            places,
            vec![
                RobotSource::File(dir.join("robots/mine.toml")),
                RobotSource::File(dir.join("mine.toml")),
                RobotSource::File(dir.join("mine")),
            ]
        );
        assert_eq!(
            name_places(&dir, "uvigo8")[0],
            RobotSource::Shipped("uvigo8")
        );

        let mine = find_in(&dir, "mine").expect("mine");
        assert_eq!(mine.robot.name, "mine");
        assert_eq!(mine.source, RobotSource::File(dir.join("robots/mine.toml")));
        assert_eq!(mine.shadowed, vec![dir.join("mine.toml")]);
        let note = mine.note("mine").expect("a note");
        assert!(
            note.contains("robots/mine.toml") && note.contains("mine.toml (a different"),
            "{note}"
        );

        assert_eq!(find_in(&dir, "here").expect("here").robot.name, "here");
        // The shipped robot wins, and the local file of that name is reported.
        let u = find_in(&dir, "uvigo8").expect("uvigo8");
        assert_eq!(
            (u.robot.name.as_str(), &u.source),
            ("uvigo8", &RobotSource::Shipped("uvigo8"))
        );
        assert_eq!(u.shadowed, vec![dir.join("uvigo8.toml")]);
        // A copy of the shipped file shadows nothing.
        assert!(find_in(&dir, "caroca").expect("caroca").shadowed.is_empty());
        // The path reaches the local file.
        assert_eq!(
            find_in(&dir, "uvigo8.toml").expect("path").robot.name,
            "uvigo8_local"
        );

        let e = find_in(&dir, "nobody").unwrap_err().to_string();
        assert!(
            e.contains("no robot `nobody`") && e.contains("robots/nobody.toml"),
            "{e}"
        );
    }

    #[test]
    fn the_listing_shows_what_the_lookup_finds() {
        let dir = scratch(
            "listing",
            &[
                ("robots/mine.toml", &renamed("mine")),
                ("mine.toml", &renamed("mine_here")),
                ("here.toml", &renamed("here")),
                ("uvigo8.toml", &renamed("uvigo8_local")),
                ("robots/caroca.toml", crate::fixtures::robot_text("caroca")),
                ("Cargo.toml", "[package]\nname = \"x\"\n"),
                ("extra/far.toml", &renamed("far")),
            ],
        );
        let listed = listing(&dir, &[PathBuf::from("extra")]);
        let specs: Vec<&str> = listed.iter().map(|l| l.spec.as_str()).collect();
        let shipped: Vec<&str> = Robot::builtin_names().collect();
        assert_eq!(&specs[..shipped.len()], &shipped[..]);
        let local = dir.display().to_string();
        assert_eq!(
            &specs[shipped.len()..],
            &[
                "mine".to_string(),
                "here".to_string(),
                format!("{local}/mine.toml"),
                format!("{local}/uvigo8.toml"),
                format!("{local}/extra/far.toml"),
            ]
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()[..]
        );
        // Every spec listed finds the robot listed.
        for l in &listed {
            let found = find_in(&dir, &l.spec).expect(&l.spec);
            assert_eq!(found.source, l.source, "{}", l.spec);
        }
    }
}
