//! Fixtures shared by the workspace's tests and benches: the shipped robots and where the
//! workspace lives. Compiled for this crate's own tests and, with the `fixtures` feature, for
//! the other crates' (a dev-dependency feature: never in a build of the binary).
#![allow(clippy::expect_used)]

pub mod calibration;

use crate::robot::{BUILTIN_ROBOTS, Robot};
use std::path::PathBuf;

/// A shipped robot (`robots/NAME.toml`), parsed. Panics on an unknown name: a test's typo.
pub fn robot(name: &str) -> Robot {
    Robot::builtin(name)
        .unwrap_or_else(|| panic!("`{name}` is not a shipped robot"))
        .expect("the shipped robot files parse")
}

/// Seed 000's 8-cable robot, the workhorse of the tests.
pub fn uvigo8() -> Robot {
    robot("uvigo8")
}

/// The text of a shipped robot file, for tests that edit it.
pub fn robot_text(name: &str) -> &'static str {
    BUILTIN_ROBOTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("`{name}` is not a shipped robot"))
}

/// The workspace root (where `robots/`, `assets/` and the top-level `Cargo.toml` are).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `text` with every `from` replaced by `to`, for tests that edit a robot (or parameter) file.
/// Panics when `from` does not occur: an edit that silently did nothing would leave the test
/// checking the unedited file.
#[track_caller]
pub fn edited(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "the text to edit has no `{}`",
        from.escape_debug()
    );
    text.replace(from, to)
}

/// Header and rows (as text) of a CSV, e.g. a run's record.
pub fn csv_rows(source: impl std::io::Read) -> (Vec<String>, Vec<Vec<String>>) {
    // `#` lines: the run's description `simulate`/`trajectory` write first.
    let mut r = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(source);
    let header = r
        .headers()
        .expect("a CSV header")
        .iter()
        .map(String::from)
        .collect();
    let rows = r
        .records()
        .map(|row| row.expect("a CSV row").iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// The index of the column `name` (panics when absent: the test's record lacks it).
pub fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
}

/// Cell `k` of `row` as a number.
pub fn num(row: &[String], k: usize) -> f64 {
    row[k]
        .parse()
        .unwrap_or_else(|_| panic!("cell {k} `{}` is not a number", row[k]))
}

/// Hostile values, as text, for every test that throws bad numbers at an input (a command
/// line option, a robot file's field): zeros of both signs, a negative, the tiny and the huge,
/// NaN and the infinities (in TOML's and Rust's spellings), integers beyond i64 and u64,
/// malformed numbers, durations with units, and values of the wrong type. One list, so that a
/// value found to break one input is tried on all of them.
pub const HOSTILE_VALUES: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1e-300",
    "1e9",
    "1e300",
    "-1e300",
    "1e308",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "99999999999999999999",
    "9223372036854775807",
    "18446744073709551616",
    "1e",
    "",
    "1e300ms",
    "-1ms",
    "[]",
    "\"x\"",
];

/// A small deterministic generator of test numbers (splitmix64): the same sequence on every
/// machine, for random poses, anchors and measurement noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Splitmix(pub u64);

impl Splitmix {
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Normal of mean 0 and standard deviation `sigma` (Box–Muller).
    pub fn normal(&mut self, sigma: f64) -> f64 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        sigma * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}
