//! A spec's text and its errors located as `file:line: field: message`; the spec's run
//! options (every top-level key that is not the sweep's own) read as `cdpr simulate` reads
//! them, through core's run-option table.

use super::SweepError;
use crate::options::{SetError, Value};
use crate::run::request::RunRequest;
use crate::toml_location::{self, line_of};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// Longest list of values (robots, trajectories, speeds, a parameter's list).
pub(super) const MAX_LIST: usize = 10_000;

/// The keys a spec takes besides the run options.
pub(super) const SWEEP_KEYS: [&str; 7] = [
    "robots",
    "trajectories",
    "speeds",
    "mode",
    "samples",
    "seed",
    "parameters",
];

/// Run options a sweep does not take at the top level: what is swept, or has a sweep
/// parameter of its own.
const NOT_RUN_KEYS: [(&str, &str); 4] = [
    ("robot", "list them in `robots`"),
    ("trajectory", "list them in `trajectories`"),
    ("speed", "list them in `speeds`"),
    (
        "payload",
        "a sweep adds mass: `[parameters] payload` (kg added to the robot file's)",
    ),
];

/// The run options a spec takes at its top level ([`RunRequest`]'s, less those a sweep sets
/// itself), in the table's order.
pub fn run_option_keys() -> Vec<&'static str> {
    crate::run::OPTIONS
        .iter()
        .map(|s| s.name)
        .filter(|n| !NOT_RUN_KEYS.iter().any(|(k, _)| k == n))
        .collect()
}

/// Errors located in one text.
pub(super) struct Locator<'a> {
    pub(super) text: &'a str,
    pub(super) origin: &'a str,
}

impl Locator<'_> {
    pub(super) fn at(
        &self,
        span: Range<usize>,
        field: &str,
        message: impl Into<String>,
    ) -> SweepError {
        SweepError::Invalid {
            file: self.origin.to_string(),
            line: line_of(self.text, span.start),
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub(super) fn top(&self, field: &str, message: impl Into<String>) -> SweepError {
        let line = toml_location::key_span(self.text, "", field)
            .map(|s| line_of(self.text, s.start))
            .unwrap_or(0);
        SweepError::Invalid {
            file: self.origin.to_string(),
            line,
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// `value` checked as the run option `name` (its range, its names), located at `span`
    /// and reported as `field`.
    pub(super) fn option(
        &self,
        span: Range<usize>,
        field: &str,
        name: &str,
        value: Value,
    ) -> Result<(), SweepError> {
        RunRequest::default()
            .set(name, value)
            .map_err(|e| self.at(span, field, e.as_file_message()))
    }

    pub(super) fn list<T>(&self, v: &Spanned<Vec<T>>, field: &str) -> Result<(), SweepError> {
        if v.get_ref().is_empty() {
            return Err(self.at(
                v.span(),
                field,
                "the list is empty: give at least one value",
            ));
        }
        if v.get_ref().len() > MAX_LIST {
            return Err(self.at(
                v.span(),
                field,
                format!("{} values; at most {MAX_LIST}", v.get_ref().len()),
            ));
        }
        Ok(())
    }
}

/// The spec's top-level keys other than the sweep's own: run options, each checked as
/// `cdpr simulate` checks it; `no_lag` is the old spelling of `remove_lag = false`.
pub(super) fn run_options(loc: &Locator) -> Result<(RunRequest, Vec<String>), SweepError> {
    let table: BTreeMap<String, Spanned<toml::Value>> = toml::from_str(loc.text).map_err(|e| {
        let l = toml_location::locate(loc.text, &e);
        SweepError::Invalid {
            file: loc.origin.to_string(),
            line: l.line,
            field: l.field,
            message: l.message,
        }
    })?;
    let mut run = RunRequest::default();
    let mut warnings = Vec::new();
    for (key, value) in &table {
        if SWEEP_KEYS.contains(&key.as_str()) {
            continue;
        }
        let span = value.span();
        if let Some((_, why)) = NOT_RUN_KEYS.iter().find(|(k, _)| k == key) {
            return Err(loc.at(span, key, format!("is not a run option of a sweep: {why}")));
        }
        let (name, v) = match (key.as_str(), value.get_ref()) {
            ("no_lag", toml::Value::Boolean(b)) => {
                warnings.push(format!(
                    "{}: `no_lag = {b}` is deprecated: write `remove_lag = {}`",
                    loc.origin, !b
                ));
                ("remove_lag", Value::Flag(!b))
            }
            (k, v) => (k, Value::from(v)),
        };
        run.set(name, v).map_err(|e| {
            let message = match e {
                // Suggest among what a spec takes, not among every run option.
                SetError::Unknown(_) => crate::options::unknown(
                    key,
                    SWEEP_KEYS.iter().copied().chain(run_option_keys()),
                )
                .as_file_key(),
                e => e.as_file_message(),
            };
            loc.at(span.clone(), key, message)
        })?;
    }
    if let Some(why) = run.model.entry().not_swept {
        let span = table.get("model").map(|v| v.span()).unwrap_or(0..0);
        return Err(loc.at(
            span,
            "model",
            format!(
                "{why}: {}",
                crate::choice::or_list(
                    &crate::sim::MODELS
                        .iter()
                        .filter(|m| m.not_swept.is_none())
                        .map(|m| m.name)
                        .collect::<Vec<_>>(),
                )
            ),
        ));
    }
    Ok((run, warnings))
}
