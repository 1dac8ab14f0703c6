//! What a sweep varies besides robots, trajectories and speeds: robot parameters (stiffness,
//! damping, payload, anchor offsets, winch limits) and the tension controller's gains — each
//! an option spec (name, unit, range, help) as every other option, the gains the run
//! options' own — and the values a spec gives them (a list, or `{min, max}` in random mode).

use super::SweepError;
use super::locate::{Locator, MAX_LIST};
use crate::options::{self, DefaultValue, Group, OptionSpec, number};
use crate::run::request;
use toml::Spanned;

/// A sweepable robot or run parameter: its spec (name in the spec and the columns, unit,
/// range, help).
pub type Parameter = &'static OptionSpec;

const fn scale(name: &'static str, min: f64, max: f64, help: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        ..number(Group::Command, "", min, max, "X", help).default(DefaultValue::Number(1.0))
    }
}

pub static STIFFNESS_SCALE: OptionSpec = scale(
    "stiffness_scale",
    1e-3,
    1e3,
    "multiplies every cable's stiffness (k or EA)",
);
pub static DAMPING_SCALE: OptionSpec = scale(
    "damping_scale",
    0.0,
    1e3,
    "multiplies every cable's damping",
);
pub static PAYLOAD: OptionSpec = OptionSpec {
    name: "payload",
    ..number(
        Group::Command,
        "kg",
        0.0,
        1e4,
        "KG",
        "kg added to the moving mass (inertia scaled with the mass)",
    )
    .default(DefaultValue::Number(0.0))
};
pub static ANCHOR_OFFSET: OptionSpec = OptionSpec {
    name: "anchor_offset",
    ..number(
        Group::Command,
        "m",
        0.0,
        0.1,
        "M",
        "std-dev of a random offset (seeded per run) of every frame anchor coordinate",
    )
    .default(DefaultValue::Number(0.0))
};
pub static WINCH_SPEED_SCALE: OptionSpec = scale(
    "winch_speed_scale",
    1e-2,
    1e2,
    "multiplies the winches' velocity limit",
);
pub static WINCH_ACCEL_SCALE: OptionSpec = scale(
    "winch_accel_scale",
    1e-2,
    1e2,
    "multiplies the winches' acceleration and jerk limits",
);

/// The parameters a spec may sweep, in column (and grid) order: the robot's, then the run
/// options `kp` and `kd` (their specs are the run options' own).
pub fn parameters() -> Vec<Parameter> {
    let mut all = vec![
        &STIFFNESS_SCALE,
        &DAMPING_SCALE,
        &PAYLOAD,
        &ANCHOR_OFFSET,
        &WINCH_SPEED_SCALE,
        &WINCH_ACCEL_SCALE,
    ];
    all.extend(["kp", "kd"].iter().filter_map(|n| request::option(n)));
    all
}

/// The values a parameter takes.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValues {
    /// Every value (grid), or one drawn uniformly (random).
    List(Vec<f64>),
    /// A uniform draw in [min, max] (random mode only).
    Uniform { min: f64, max: f64 },
}

impl ParamValues {
    pub(super) fn len(&self) -> usize {
        match self {
            ParamValues::List(v) => v.len(),
            ParamValues::Uniform { .. } => 1,
        }
    }
}

/// The `[parameters]` table as written: each parameter's value, by name.
pub(super) type RawParameters = std::collections::BTreeMap<String, Spanned<toml::Value>>;

/// The parameters a spec sets, in [`parameters`] order; an unknown name is refused with the
/// nearest known one.
pub(super) fn parse_parameters(
    loc: &Locator,
    raw: &RawParameters,
    random: bool,
) -> Result<Vec<(Parameter, ParamValues)>, SweepError> {
    let known = parameters();
    if let Some((name, value)) = raw
        .iter()
        .find(|(n, _)| !known.iter().any(|p| p.name == n.as_str()))
    {
        let unknown = options::unknown(name, known.iter().map(|p| p.name));
        return Err(loc.at(
            value.span(),
            &format!("parameters.{name}"),
            unknown.as_file_key(),
        ));
    }
    let mut out = Vec::new();
    for param in known {
        let Some(value) = raw.get(param.name) else {
            continue;
        };
        let field = format!("parameters.{}", param.name);
        let values = parameter_values(loc, param, &field, value)?;
        if let (ParamValues::Uniform { .. }, false) = (&values, random) {
            return Err(loc.at(
                value.span(),
                &field,
                "{min, max} is for mode = \"random\"; a grid needs a list of values",
            ));
        }
        out.push((param, values));
    }
    Ok(out)
}

/// A parameter's list or `{min, max}`, every number within the parameter's range.
fn parameter_values(
    loc: &Locator,
    param: Parameter,
    field: &str,
    value: &Spanned<toml::Value>,
) -> Result<ParamValues, SweepError> {
    let err = |message: String| loc.at(value.span(), field, message);
    let number = |v: &toml::Value| -> Result<f64, SweepError> {
        let x = match v {
            toml::Value::Float(x) => *x,
            toml::Value::Integer(i) => *i as f64,
            other => {
                return Err(err(format!(
                    "expected numbers, got {} `{other}`",
                    other.type_str()
                )));
            }
        };
        options::checked_number(param, x).map_err(|e| err(e.problem.to_string()))
    };
    match value.get_ref() {
        toml::Value::Array(items) => {
            if items.is_empty() {
                return Err(err("the list is empty: give at least one value".into()));
            }
            if items.len() > MAX_LIST {
                return Err(err(format!("{} values; at most {MAX_LIST}", items.len())));
            }
            Ok(ParamValues::List(
                items.iter().map(number).collect::<Result<_, _>>()?,
            ))
        }
        toml::Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| *k != "min" && *k != "max") {
                return Err(err(format!(
                    "unknown key `{k}`: expected {{min = …, max = …}}"
                )));
            }
            let get = |k: &str| {
                t.get(k)
                    .ok_or_else(|| err(format!("missing `{k}`: expected {{min = …, max = …}}")))
                    .and_then(number)
            };
            let (min, max) = (get("min")?, get("max")?);
            if min > max {
                return Err(err(format!("min {min} is above max {max}")));
            }
            Ok(ParamValues::Uniform { min, max })
        }
        other => Err(err(format!(
            "expected a list of numbers or {{min = …, max = …}}, got {} `{other}`",
            other.type_str()
        ))),
    }
}
