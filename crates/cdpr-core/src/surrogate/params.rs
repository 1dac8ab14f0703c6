//! The surrogate's parameter file (TOML): what `cdpr surrogate fit` writes and
//! `cdpr simulate --model surrogate --surrogate FILE` reads.
//!
//! ```toml
//! robot = "uvigo8"
//! dt = 0.001                      # s, the sampling period the fit ran at
//! rest = [0.0, 0.0, 0.15, 0.0, 0.0, 0.0]   # pose the filters act about (m, rad)
//! method = "nelder-mead"          # optional, informational
//! references = ["steps on uvigo8 (elastic, length winches)"]   # optional, informational
//!
//! [x]                             # one table per fitted DOF: x y z roll pitch yaw
//! delay_s = 0.004
//! gain = 1.0
//! natural_frequency_hz = 2.6
//! damping = 1.1
//! nrmse = 0.991                   # optional: what the fit achieved
//! ```
//!
//! A DOF without a table passes its input through unchanged. Errors name the file, the line
//! and the field, like robot files'.

use super::DOF_NAMES;
use super::filter::DofParams;
use crate::toml_location::{self, Located, line_of};
use serde::{Deserialize, Serialize};
use std::path::Path;
use toml::Spanned;

#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    #[error("{file}: {cause}")]
    Io {
        file: String,
        /// In the message, not also a `source`: an error chain prints each cause once.
        cause: std::io::Error,
    },
    #[error("{file}:{line}: {field}: {message}")]
    Invalid {
        file: String,
        /// 1-based, 0 when unknown.
        line: usize,
        field: String,
        message: String,
    },
}

/// One DOF's parameters and the NRMSE the fit reached.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DofEntry {
    pub delay_s: f64,
    pub gain: f64,
    pub natural_frequency_hz: f64,
    pub damping: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nrmse: Option<f64>,
}

impl DofEntry {
    pub fn params(&self) -> DofParams {
        DofParams {
            delay_s: self.delay_s,
            gain: self.gain,
            natural_frequency_hz: self.natural_frequency_hz,
            damping: self.damping,
        }
    }
    pub fn from_params(p: &DofParams, nrmse: Option<f64>) -> DofEntry {
        DofEntry {
            delay_s: p.delay_s,
            gain: p.gain,
            natural_frequency_hz: p.natural_frequency_hz,
            damping: p.damping,
            nrmse,
        }
    }
}

/// A whole parameter file. Field order is the file's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SurrogateParams {
    pub robot: String,
    pub dt: f64,
    pub rest: [f64; 6],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<DofEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<DofEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub z: Option<DofEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roll: Option<DofEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pitch: Option<DofEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yaw: Option<DofEntry>,
}

impl SurrogateParams {
    /// No DOF fitted yet.
    pub fn empty(robot: &str, dt: f64, rest: [f64; 6]) -> SurrogateParams {
        SurrogateParams {
            robot: robot.to_string(),
            dt,
            rest,
            method: None,
            references: Vec::new(),
            x: None,
            y: None,
            z: None,
            roll: None,
            pitch: None,
            yaw: None,
        }
    }

    fn slot(&mut self, k: usize) -> &mut Option<DofEntry> {
        match k {
            0 => &mut self.x,
            1 => &mut self.y,
            2 => &mut self.z,
            3 => &mut self.roll,
            4 => &mut self.pitch,
            _ => &mut self.yaw,
        }
    }

    /// DOF `k` (0 = x … 5 = yaw), if fitted.
    pub fn dof(&self, k: usize) -> Option<&DofEntry> {
        [
            &self.x,
            &self.y,
            &self.z,
            &self.roll,
            &self.pitch,
            &self.yaw,
        ]
        .get(k)
        .and_then(|e| e.as_ref())
    }

    pub fn set_dof(&mut self, k: usize, entry: DofEntry) {
        *self.slot(k) = Some(entry);
    }

    /// The file's text.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        format!(
            "# cdpr surrogate parameters (seed 004): per DOF a pure delay and a second-order\n\
             # low-pass K·ωn²/(s² + 2ζωn s + ωn²), discretised with Tustin's method at dt.\n{body}"
        )
    }

    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ParamsError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_toml()).map_err(|cause| ParamsError::Io {
            file: path.display().to_string(),
            cause,
        })
    }

    pub fn read(path: impl AsRef<Path>) -> Result<SurrogateParams, ParamsError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|cause| ParamsError::Io {
            file: file.clone(),
            cause,
        })?;
        SurrogateParams::parse(&text, &file)
    }

    /// Parses and validates the text of a params file; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Result<SurrogateParams, ParamsError> {
        let err = |span: Option<std::ops::Range<usize>>, field: &str, message: String| {
            ParamsError::Invalid {
                file: file.to_string(),
                line: span.map(|s| line_of(text, s.start)).unwrap_or(0),
                field: field.to_string(),
                message,
            }
        };
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let Located {
                line,
                field,
                message,
            } = toml_location::locate(text, &e);
            ParamsError::Invalid {
                file: file.to_string(),
                line,
                field,
                message,
            }
        })?;
        let dt = *raw.dt.get_ref();
        if !(dt.is_finite() && dt > 0.0) {
            return Err(err(
                Some(raw.dt.span()),
                "dt",
                format!("must be a positive period in s, got {dt}"),
            ));
        }
        let rest = *raw.rest.get_ref();
        if rest.iter().any(|v| !v.is_finite()) {
            return Err(err(
                Some(raw.rest.span()),
                "rest",
                "must be 6 finite numbers".into(),
            ));
        }
        let mut params = SurrogateParams::empty(&raw.robot, dt, rest);
        params.method = raw.method;
        params.references = raw.references;
        let dofs = [raw.x, raw.y, raw.z, raw.roll, raw.pitch, raw.yaw];
        for (k, dof) in dofs.into_iter().enumerate() {
            let Some(spanned) = dof else { continue };
            let span = spanned.span();
            let entry = spanned.into_inner().into_entry();
            if let Err(message) = entry.params().check() {
                // Point at the offending key inside the table when it is written there.
                let key = message.split_whitespace().next().unwrap_or("");
                let name = DOF_NAMES[k];
                let span = toml_location::key_span(text, name, key).unwrap_or(span);
                let field = if DOF_KEYS.contains(&key) {
                    format!("{name}.{key}")
                } else {
                    name.to_string()
                };
                return Err(err(Some(span), &field, message));
            }
            params.set_dof(k, entry);
        }
        Ok(params)
    }
}

/// The keys of a DOF table.
const DOF_KEYS: [&str; 5] = [
    "delay_s",
    "gain",
    "natural_frequency_hz",
    "damping",
    "nrmse",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    robot: String,
    dt: Spanned<f64>,
    rest: Spanned<[f64; 6]>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    references: Vec<String>,
    #[serde(default)]
    x: Option<Spanned<DofEntryRaw>>,
    #[serde(default)]
    y: Option<Spanned<DofEntryRaw>>,
    #[serde(default)]
    z: Option<Spanned<DofEntryRaw>>,
    #[serde(default)]
    roll: Option<Spanned<DofEntryRaw>>,
    #[serde(default)]
    pitch: Option<Spanned<DofEntryRaw>>,
    #[serde(default)]
    yaw: Option<Spanned<DofEntryRaw>>,
}

/// A DOF table as written (unknown keys refused).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DofEntryRaw {
    delay_s: f64,
    gain: f64,
    natural_frequency_hz: f64,
    damping: f64,
    #[serde(default)]
    nrmse: Option<f64>,
}

impl DofEntryRaw {
    fn into_entry(self) -> DofEntry {
        DofEntry {
            delay_s: self.delay_s,
            gain: self.gain,
            natural_frequency_hz: self.natural_frequency_hz,
            damping: self.damping,
            nrmse: self.nrmse,
        }
    }
}
