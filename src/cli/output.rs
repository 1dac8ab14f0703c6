//! Printing: plain tables for people, one JSON object for scripts.

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::IsTerminal;

/// Prints `value` as one JSON object on stdout.
pub fn json<T: Serialize>(value: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// A plain text table with a header row; numbers right-aligned.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Columns of text, aligned left (the first always is).
    left: Vec<usize>,
}

impl Table {
    pub fn new<S: AsRef<str>>(header: &[S]) -> Table {
        Table {
            header: header.iter().map(|s| s.as_ref().to_string()).collect(),
            rows: Vec::new(),
            left: vec![0],
        }
    }

    /// Aligns these columns (of text, not numbers) left.
    pub fn left(mut self, columns: &[usize]) -> Table {
        self.left.extend_from_slice(columns);
        self
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn print(&self) {
        let cols = self.header.len();
        let mut width = vec![0; cols];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (k, cell) in row.iter().enumerate().take(cols) {
                width[k] = width[k].max(cell.chars().count());
            }
        }
        let line = |row: &[String]| {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let pad = width[k] - c.chars().count();
                    if self.left.contains(&k) {
                        format!("{c}{}", " ".repeat(pad))
                    } else {
                        format!("{}{c}", " ".repeat(pad))
                    }
                })
                .collect();
            println!("{}", cells.join("  ").trim_end());
        };
        line(&self.header);
        println!(
            "{}",
            width
                .iter()
                .map(|w| "-".repeat(*w))
                .collect::<Vec<_>>()
                .join("  ")
        );
        for row in &self.rows {
            line(row);
        }
    }
}

/// A number with a fixed number of decimals.
pub fn num(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}")
}

/// `x` with `digits` significant digits: plain for 1e-4 ≤ |x| < 1e6 (0.013542, not
/// 1.3542e-2), scientific outside (1.2346e-5).
pub fn sig(x: f64, digits: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if (-4..6).contains(&magnitude) {
        let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.prec$e}", prec = digits.saturating_sub(1))
    }
}

/// Comma-joined numbers.
pub fn list(values: &[f64], decimals: usize) -> String {
    values
        .iter()
        .map(|v| num(*v, decimals))
        .collect::<Vec<_>>()
        .join(", ")
}

static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--quiet`: no progress bars or status lines (errors and warnings still go to stderr).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn is_quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether progress may be drawn on stderr: a terminal, and not `--quiet`.
pub fn show_progress() -> bool {
    !is_quiet() && std::io::stderr().is_terminal()
}

/// A progress bar on stderr for a long job, counting to 1000 (None when stderr is not a
/// terminal or with `--quiet`).
pub fn progress_bar(label: &str) -> Option<ProgressBar> {
    if !show_progress() {
        return None;
    }
    let bar = ProgressBar::new(1000);
    if let Ok(style) =
        ProgressStyle::with_template(&format!("{label} [{{bar:40}}] {{percent}}% (eta {{eta}})"))
    {
        bar.set_style(style.progress_chars("=> "));
    }
    Some(bar)
}

/// A one-line live status on stderr for a run without a known end (`cdpr plc`, `cdpr shadow`):
/// a spinner and a message, redrawn at most every `STATUS_EVERY`. Drawn only where a progress
/// bar would be ([`show_progress`]); `update` is cheap to call every cycle.
pub struct StatusLine {
    bar: Option<ProgressBar>,
    next: std::time::Instant,
}

/// How often a status line is refreshed.
const STATUS_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

impl StatusLine {
    pub fn new() -> StatusLine {
        let bar = show_progress().then(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
                bar.set_style(style);
            }
            bar
        });
        StatusLine {
            bar,
            next: std::time::Instant::now(),
        }
    }

    /// Redraws with `message()` when due.
    pub fn update(&mut self, message: impl FnOnce() -> String) {
        let Some(bar) = &self.bar else { return };
        let now = std::time::Instant::now();
        if now >= self.next {
            self.next = now + STATUS_EVERY;
            bar.set_message(message());
            bar.tick();
        }
    }

    /// Removes the line (before the final statistics are printed).
    pub fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sig;

    #[test]
    fn significant_digits_in_plain_notation_where_people_read_it() {
        assert_eq!(sig(1.3542e-2, 5), "0.013542");
        assert_eq!(sig(6.66667e-3, 5), "0.0066667");
        assert_eq!(sig(9.607, 4), "9.607");
        assert_eq!(sig(40.0, 3), "40.0");
        assert_eq!(sig(-123456.7, 3), "-123457");
        assert_eq!(sig(1.23456e-5, 5), "1.2346e-5");
        assert_eq!(sig(0.0, 5), "0");
    }
}
