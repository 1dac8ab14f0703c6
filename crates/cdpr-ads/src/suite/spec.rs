//! A suite file (TOML): top-level keys are defaults for every `[[scenario]]`, each scenario a
//! table of its own keys (`name`, `plc`, `ams_net_id`, `write`, `duration`), any run option
//! of `cdpr simulate` (core's [`RunRequest`] table), any option of the shadow's link
//! ([`LinkRequest`]), the virtual PLC's `task`, `nc` and `hold` ([`PlcRequest`]), an
//! `[scenario.expect]` table ([`Expectations`]) and `[[scenario.symbol]]` conditions. Every
//! value is checked by its table's own `set`; every error names the file, the line and the
//! field.

use super::expect::Expectations;
use crate::requests::{LinkRequest, PlcRequest};
use crate::secure::SecureOptions;
use crate::wire::AmsNetId;
use cdpr_core::options::{Request, SetError, Value};
use cdpr_core::run::RunRequest;
use cdpr_core::toml_location::{self, line_of};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Most scenarios in a suite.
pub const MAX_SCENARIOS: usize = 1000;
/// Most symbol conditions in a scenario.
pub const MAX_CONDITIONS: usize = 100;
/// Longest suite file, bytes.
pub const MAX_FILE: u64 = 4 << 20;

/// A scenario's own keys (the rest are options of the tables named in the module docs).
pub const SCENARIO_KEYS: [&str; 7] = [
    "name",
    "plc",
    "ams_net_id",
    "write",
    "duration",
    "expect",
    "symbol",
];

/// The Secure ADS keys a scenario against a PLC at an address takes ([`SecureOptions`]'s
/// fields; the PSK password only from `$CDPR_PSK_PASSWORD`, never from the file).
pub const SECURE_KEYS: [&str; 9] = [
    "secure",
    "secure_dir",
    "cert",
    "key",
    "ca",
    "psk_identity",
    "secure_host_name",
    "accept_fingerprint",
    "plc_cn",
];

/// Where a PSK password comes from for a suite.
pub const PSK_PASSWORD_ENV: &str = "CDPR_PSK_PASSWORD";

/// The virtual PLC's options a scenario takes (its identity and routes are the server's).
pub const PLC_KEYS: [&str; 3] = ["task", "nc", "hold"];

/// Why a suite was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SuiteError {
    #[error("{file}:{line}: {field}: {message}")]
    Invalid {
        file: String,
        line: usize,
        field: String,
        message: String,
    },
    #[error("{file}: {message}")]
    File { file: String, message: String },
}

/// Which PLC a scenario runs against.
#[derive(Debug, Clone, PartialEq)]
pub enum PlcTarget {
    /// The virtual PLC, in-process, playing the scenario's trajectory.
    Virtual(PlcRequest),
    /// A PLC at HOST[:PORT] (a TwinCAT runtime, or `cdpr plc`), over plain or Secure ADS.
    Address {
        plc: String,
        ams_net_id: Option<AmsNetId>,
        secure: SecureOptions,
    },
}

/// How a condition's value is compared with its symbol's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// At least the value at some moment (a state machine's step reached).
    Reaches,
}

impl Op {
    const NAMES: [(&'static str, Op); 7] = [
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<", Op::Lt),
        ("<=", Op::Le),
        (">", Op::Gt),
        (">=", Op::Ge),
        ("reaches", Op::Reaches),
    ];

    pub fn name(self) -> &'static str {
        Op::NAMES
            .iter()
            .find(|(_, op)| *op == self)
            .map_or("?", |(n, _)| n)
    }

    /// Whether `value` satisfies the condition against `target`.
    pub fn holds(self, value: f64, target: f64) -> bool {
        match self {
            Op::Eq => value == target,
            Op::Ne => value != target,
            Op::Lt => value < target,
            Op::Le => value <= target,
            Op::Gt => value > target,
            Op::Ge | Op::Reaches => value >= target,
        }
    }
}

/// When a condition must hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    /// At every sample of the run (`reaches`: at some sample).
    Always,
    /// At some sample no later than this many seconds into the run.
    Within(f64),
    /// At every sample from this many seconds into the run on.
    After(f64),
}

/// A condition on a PLC symbol: `GVL.bDone == true within 12 s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub symbol: String,
    pub op: Op,
    /// The value compared with (a BOOL's `true` is 1).
    pub value: f64,
    /// Whether the value was written as `true`/`false` (the symbol must be a BOOL).
    pub boolean: bool,
    pub when: When,
    /// Where it is written: line, and the field as messages name it.
    pub line: usize,
    pub field: String,
}

/// One scenario of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    /// The line of its `[[scenario]]` header.
    pub line: usize,
    pub run: RunRequest,
    pub link: LinkRequest,
    pub plc: PlcTarget,
    /// Write the shadow's outputs to the PLC (only the robot file's writable symbols). The
    /// virtual PLC: by default; a real one: only when the scenario says so.
    pub write: bool,
    /// How long the run lasts, s (None: the virtual PLC's hold and trajectory, then 0.5 s).
    pub duration: Option<f64>,
    pub expect: Expectations,
    pub conditions: Vec<Condition>,
}

/// A suite read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub file: PathBuf,
    pub scenarios: Vec<Scenario>,
}

type Keys = BTreeMap<String, Spanned<toml::Value>>;

/// The nested tables, read in a second pass over the same text so that their keys keep
/// their spans (serde's `flatten` would lose them).
#[derive(Deserialize)]
struct Nested {
    #[serde(default)]
    scenario: Vec<NestedScenario>,
}

#[derive(Deserialize)]
struct NestedScenario {
    #[serde(default)]
    expect: Option<Keys>,
    #[serde(default)]
    symbol: Vec<Spanned<Keys>>,
}

#[derive(Deserialize)]
struct Top {
    #[serde(default)]
    scenario: Vec<Spanned<Keys>>,
}

struct Locator<'a> {
    text: &'a str,
    file: &'a str,
}

impl Locator<'_> {
    fn at(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> SuiteError {
        SuiteError::Invalid {
            file: self.file.to_string(),
            line: line_of(self.text, span.start),
            field: field.to_string(),
            message: message.into(),
        }
    }
}

impl Suite {
    /// Reads and checks the suite at `path` (robot, trajectory and surrogate files in it are
    /// relative to its directory when they exist there).
    pub fn from_file(path: &Path) -> Result<Suite, SuiteError> {
        let file = path.display().to_string();
        let refuse = |message: String| SuiteError::File {
            file: file.clone(),
            message,
        };
        let text = toml_location::read_capped(path, MAX_FILE).map_err(|e| match e {
            Some(e) => refuse(e.to_string()),
            None => refuse(format!("larger than {} MiB: not a suite", MAX_FILE >> 20)),
        })?;
        Suite::parse(&text, &file, path.parent())
    }

    /// Reads and checks a suite's `text`, named `file` in messages, paths relative to `dir`.
    pub fn parse(text: &str, file: &str, dir: Option<&Path>) -> Result<Suite, SuiteError> {
        let loc = Locator { text, file };
        let syntax = |e: toml::de::Error| {
            let l = toml_location::locate(text, &e);
            SuiteError::Invalid {
                file: file.to_string(),
                line: l.line,
                field: l.field,
                message: l.message,
            }
        };
        let defaults: Keys = toml::from_str(text).map_err(syntax)?;
        let top: Top = toml::from_str(text).map_err(syntax)?;
        let nested: Nested = toml::from_str(text).map_err(syntax)?;
        if top.scenario.is_empty() {
            return Err(SuiteError::File {
                file: file.to_string(),
                message: "no [[scenario]]: a suite holds at least one".into(),
            });
        }
        if top.scenario.len() > MAX_SCENARIOS {
            return Err(SuiteError::File {
                file: file.to_string(),
                message: format!(
                    "{} scenarios; a suite holds at most {MAX_SCENARIOS}",
                    top.scenario.len()
                ),
            });
        }
        for (key, value) in &defaults {
            if key != "scenario" && ["name", "expect", "symbol"].contains(&key.as_str()) {
                return Err(loc.at(
                    value.span(),
                    key,
                    "belongs to a [[scenario]], not to the suite's defaults",
                ));
            }
        }
        let mut scenarios: Vec<Scenario> = Vec::new();
        for (k, (table, nested)) in top.scenario.iter().zip(&nested.scenario).enumerate() {
            let scenario = scenario(&loc, dir, k, table, nested, &defaults)?;
            if let Some(other) = scenarios.iter().find(|s| s.name == scenario.name) {
                return Err(loc.at(
                    table
                        .get_ref()
                        .get("name")
                        .map_or(table.span(), |v| v.span()),
                    "scenario.name",
                    format!(
                        "`{}` is the name of the scenario on line {} too: names tell the \
                         scenarios apart in the reports",
                        scenario.name, other.line
                    ),
                ));
            }
            scenarios.push(scenario);
        }
        Ok(Suite {
            file: PathBuf::from(file),
            scenarios,
        })
    }
}

/// Every key a scenario takes, for the nearest-name suggestion.
fn known_keys() -> impl Iterator<Item = &'static str> {
    SCENARIO_KEYS
        .into_iter()
        .chain(cdpr_core::run::OPTIONS.iter().map(|s| s.name))
        .chain(crate::requests::LINK_OPTIONS.iter().map(|s| s.name))
        .chain(PLC_KEYS)
        .chain(SECURE_KEYS)
}

/// A robot, trajectory or surrogate file of the suite: relative to its directory when it
/// exists there, else as written (a shipped name, a built-in trajectory).
fn resolve(dir: Option<&Path>, key: &str, value: Value) -> Value {
    match (dir, key, value) {
        (Some(dir), "robot" | "trajectory" | "surrogate", Value::Text(name))
            if !Path::new(&name).is_absolute() && dir.join(&name).exists() =>
        {
            Value::Text(dir.join(name).display().to_string())
        }
        (_, _, v) => v,
    }
}

/// A file a suite names: relative to its directory.
fn resolve_path(dir: Option<&Path>, name: &str) -> PathBuf {
    match dir {
        Some(dir) if !Path::new(name).is_absolute() => dir.join(name),
        _ => PathBuf::from(name),
    }
}

/// A TOML value as option `name` of `R` takes it: text read as the command line reads it (a
/// time with its unit, `2ms`), else as it is (and refused by the request's `set`, naming it).
fn value_for<R: Request>(name: &str, v: &toml::Value) -> Value {
    match (v, R::spec(name)) {
        (toml::Value::String(text), Some(spec)) => {
            spec.parse(text).unwrap_or_else(|_| Value::from(v))
        }
        _ => Value::from(v),
    }
}

fn scenario(
    loc: &Locator,
    dir: Option<&Path>,
    index: usize,
    table: &Spanned<Keys>,
    nested: &NestedScenario,
    defaults: &Keys,
) -> Result<Scenario, SuiteError> {
    let keys = table.get_ref();
    let header = line_of(loc.text, table.span().start);
    let name = match keys.get("name") {
        Some(v) => match v.get_ref() {
            toml::Value::String(s) if !s.trim().is_empty() && s.len() <= 200 => s.clone(),
            _ => {
                return Err(loc.at(v.span(), "scenario.name", "a name of 1 to 200 characters"));
            }
        },
        None => {
            return Err(loc.at(
                table.span(),
                "scenario.name",
                format!("scenario {} has no name", index + 1),
            ));
        }
    };
    let field = |key: &str| format!("scenario \"{name}\".{key}");
    let mut run = RunRequest::default();
    let mut link = LinkRequest::default();
    let mut plc = PlcRequest::default();
    let (mut target, mut net_id, mut write, mut duration) = (None, None, None, None);
    let mut secure = SecureOptions::default();
    // Where each Secure ADS key is written, for a virtual PLC's refusal and the rules'.
    let mut secure_at: Vec<(String, Range<usize>)> = Vec::new();
    // The suite's defaults first, then the scenario's own keys over them.
    let all = defaults
        .iter()
        .filter(|(k, _)| k.as_str() != "scenario")
        .chain(keys.iter());
    for (key, value) in all {
        let span = value.span();
        let v = value.get_ref();
        let at = |message: String| loc.at(span.clone(), &field(key), message);
        match key.as_str() {
            "name" | "expect" | "symbol" => {}
            "plc" => match v {
                toml::Value::String(s) if !s.trim().is_empty() => {
                    target = Some(s.trim().to_string())
                }
                _ => return Err(at("`virtual` or a PLC's HOST[:PORT]".into())),
            },
            "ams_net_id" => match v.as_str().map(str::parse::<AmsNetId>) {
                Some(Ok(id)) => net_id = Some(id),
                Some(Err(why)) => return Err(at(why)),
                None => return Err(at("an AMS NetId, e.g. \"192.168.1.10.1.1\"".into())),
            },
            "write" => match v {
                toml::Value::Boolean(b) => write = Some(*b),
                _ => return Err(at("true or false".into())),
            },
            "duration" => match v.as_float().or(v.as_integer().map(|i| i as f64)) {
                Some(d) if d > 0.0 && d <= cdpr_core::options::YEAR_S => duration = Some(d),
                _ => {
                    return Err(at(
                        "a time in seconds, more than 0 and at most a year".into()
                    ));
                }
            },
            "psk_password" => {
                return Err(at(format!(
                    "a password is not kept in a suite file: give it in ${PSK_PASSWORD_ENV}"
                )));
            }
            k if SECURE_KEYS.contains(&k) => {
                let text = match v {
                    toml::Value::String(t) if !t.trim().is_empty() => t.trim().to_string(),
                    _ => return Err(at("a string".into())),
                };
                match k {
                    "secure" => secure.secure = Some(text.parse().map_err(at)?),
                    "secure_dir" => secure.secure_dir = Some(resolve_path(dir, &text)),
                    "cert" => secure.cert = Some(resolve_path(dir, &text)),
                    "key" => secure.key = Some(resolve_path(dir, &text)),
                    "ca" => secure.ca = Some(resolve_path(dir, &text)),
                    "psk_identity" => secure.psk_identity = Some(text),
                    "secure_host_name" => secure.secure_host_name = Some(text),
                    "accept_fingerprint" => secure.accept_fingerprint = Some(text),
                    _ => secure.plc_cn = Some(text),
                }
                secure_at.push((k.to_string(), span.clone()));
            }
            k if PLC_KEYS.contains(&k) => plc
                .set(k, value_for::<PlcRequest>(k, v))
                .map_err(|e| at(e.as_file_message()))?,
            k if LinkRequest::spec(k).is_some() => link
                .set(k, value_for::<LinkRequest>(k, v))
                .map_err(|e| at(e.as_file_message()))?,
            k => run
                .set(k, resolve(dir, k, value_for::<RunRequest>(k, v)))
                .map_err(|e| match e {
                    SetError::Unknown(_) => {
                        at(cdpr_core::options::unknown(k, known_keys()).as_file_key())
                    }
                    e => at(e.as_file_message()),
                })?,
        }
    }
    if run.robot.is_none() {
        return Err(loc.at(
            table.span(),
            &field("robot"),
            "no robot: give `robot` (a shipped name or a robot file) in the scenario or at the \
             top of the suite",
        ));
    }
    let plc = match target.as_deref() {
        None | Some("virtual") => {
            if run.trajectory.is_none() {
                return Err(loc.at(
                    table.span(),
                    &field("trajectory"),
                    "the virtual PLC plays a trajectory: give `trajectory`",
                ));
            }
            if let Some((key, span)) = secure_at.first() {
                return Err(loc.at(
                    span.clone(),
                    &field(key),
                    "is Secure ADS's; the virtual PLC runs in-process (no network, no TLS)",
                ));
            }
            if let Some(id) = net_id {
                return Err(loc.at(
                    keys.get("ams_net_id").map_or(table.span(), |v| v.span()),
                    &field("ams_net_id"),
                    format!("{id} names a PLC at an address; the virtual PLC runs in-process"),
                ));
            }
            plc.check().map_err(|e| {
                loc.at(
                    keys.get("task").map_or(table.span(), |v| v.span()),
                    &field("task"),
                    e.problem.to_string(),
                )
            })?;
            // The shadow's PLC period is the virtual PLC's task, unless the suite says both.
            if keys.get("plc_period").is_none() && defaults.get("plc_period").is_none() {
                link.plc_period = plc.task;
            }
            PlcTarget::Virtual(plc)
        }
        Some(address) => {
            if let Some(k) = PLC_KEYS
                .iter()
                .find(|k| keys.contains_key(**k) || defaults.contains_key(**k))
            {
                let span = keys.get(*k).or(defaults.get(*k)).map_or(0..0, |v| v.span());
                return Err(loc.at(
                    span,
                    &field(k),
                    format!("is the virtual PLC's; the PLC at {address} has its own tasks"),
                ));
            }
            if duration.is_none() {
                return Err(loc.at(
                    table.span(),
                    &field("duration"),
                    format!("a run against the PLC at {address} needs a `duration` (s)"),
                ));
            }
            if secure.secure == Some(crate::secure::Mode::Psk) {
                secure.psk_password = std::env::var(PSK_PASSWORD_ENV).ok();
            }
            if let Err(e) = secure.client(None) {
                // At the option the rule is about: one of another mode's, the identity, else
                // the mode.
                let about: &[&str] = match &e {
                    crate::secure::SecureOptionError::OtherMode { options, .. } => options,
                    crate::secure::SecureOptionError::PskNotAscii => &["psk_identity"],
                    _ => &["secure"],
                };
                let (key, span) = secure_at
                    .iter()
                    .find(|(k, _)| about.contains(&k.as_str()))
                    .or(secure_at.first())
                    .cloned()
                    .unwrap_or(("secure".into(), table.span()));
                return Err(loc.at(span, &field(&key), e.to_string()));
            }
            PlcTarget::Address {
                plc: address.to_string(),
                ams_net_id: net_id,
                secure,
            }
        }
    };
    let virtual_plc = matches!(plc, PlcTarget::Virtual(_));
    let mut expect = Expectations::default();
    for (key, value) in nested.expect.iter().flatten() {
        let f = format!("scenario \"{name}\".expect.{key}");
        expect
            .set(key, value_for::<Expectations>(key, value.get_ref()))
            .map_err(|e| loc.at(value.span(), &f, e.as_file_message()))?;
        if key == "preflight" && expect.preflight && !virtual_plc {
            return Err(loc.at(
                value.span(),
                &f,
                "pre-flight checks the virtual PLC's trajectory; a real PLC's is its own",
            ));
        }
    }
    if nested.symbol.len() > MAX_CONDITIONS {
        return Err(loc.at(
            table.span(),
            &field("symbol"),
            format!(
                "{} conditions; a scenario holds at most {MAX_CONDITIONS}",
                nested.symbol.len()
            ),
        ));
    }
    let conditions = nested
        .symbol
        .iter()
        .enumerate()
        .map(|(k, c)| condition(loc, &name, k, c))
        .collect::<Result<_, _>>()?;
    Ok(Scenario {
        name,
        line: header,
        run,
        link,
        plc,
        write: write.unwrap_or(virtual_plc),
        duration,
        expect,
        conditions,
    })
}

fn condition(
    loc: &Locator,
    scenario: &str,
    index: usize,
    table: &Spanned<Keys>,
) -> Result<Condition, SuiteError> {
    let keys = table.get_ref();
    let field = format!("scenario \"{scenario}\".symbol[{}]", index + 1);
    let at = |key: &str, message: String| {
        let span = keys.get(key).map_or(table.span(), |v| v.span());
        loc.at(span, &format!("{field}.{key}"), message)
    };
    let known = ["symbol", "is", "value", "within", "after"];
    for key in keys.keys() {
        if !known.contains(&key.as_str()) {
            return Err(at(
                key,
                cdpr_core::options::unknown(key, known).as_file_key(),
            ));
        }
    }
    let symbol = match keys.get("symbol").map(|v| v.get_ref()) {
        Some(toml::Value::String(s)) if !s.trim().is_empty() && s.len() <= 255 => {
            s.trim().to_string()
        }
        Some(_) => {
            return Err(at(
                "symbol",
                "a PLC symbol's name, e.g. \"GVL.bDone\"".into(),
            ));
        }
        None => {
            return Err(at(
                "symbol",
                "missing: the PLC symbol the condition reads".into(),
            ));
        }
    };
    let names = Op::NAMES.map(|(n, _)| n).join(", ");
    let op =
        match keys.get("is").map(|v| v.get_ref()) {
            Some(toml::Value::String(s)) => Op::NAMES
                .iter()
                .find(|(n, _)| n == s)
                .map(|(_, op)| *op)
                .ok_or_else(|| at("is", format!("`{s}` is not one of {names}")))?,
            Some(_) => return Err(at("is", format!("one of {names}"))),
            None => return Err(at("is", format!("missing: the comparison, one of {names}"))),
        };
    let (value, boolean) = match keys.get("value").map(|v| v.get_ref()) {
        Some(toml::Value::Boolean(b)) => (f64::from(u8::from(*b)), true),
        Some(toml::Value::Integer(i)) => (*i as f64, false),
        Some(toml::Value::Float(x)) if x.is_finite() => (*x, false),
        Some(_) => return Err(at("value", "true, false or a number".into())),
        None => {
            return Err(at(
                "value",
                "missing: what the symbol is compared with".into(),
            ));
        }
    };
    if boolean && !matches!(op, Op::Eq | Op::Ne) {
        return Err(at(
            "is",
            format!(
                "`{}` compares numbers; a BOOL is == or != true/false",
                op.name()
            ),
        ));
    }
    let time = |key: &str| -> Result<Option<f64>, SuiteError> {
        match keys.get(key).map(|v| v.get_ref()) {
            None => Ok(None),
            Some(v) => match v.as_float().or(v.as_integer().map(|i| i as f64)) {
                Some(t) if (0.0..=cdpr_core::options::YEAR_S).contains(&t) => Ok(Some(t)),
                _ => Err(at(
                    key,
                    "a time in seconds from the run's start, 0 or more".into(),
                )),
            },
        }
    };
    let when = match (time("within")?, time("after")?) {
        (Some(_), Some(_)) => {
            return Err(at(
                "after",
                "`within` (true at some moment by then) or `after` (true from then on), not both"
                    .into(),
            ));
        }
        (Some(t), None) => When::Within(t),
        (None, Some(t)) => When::After(t),
        (None, None) => When::Always,
    };
    if op == Op::Reaches && matches!(when, When::After(_)) {
        return Err(at(
            "after",
            "`reaches` is met at one moment: give `within`, or compare with >= `after`".into(),
        ));
    }
    Ok(Condition {
        symbol,
        op,
        value,
        boolean,
        when,
        line: line_of(loc.text, table.span().start),
        field,
    })
}

#[cfg(test)]
mod tests;
