//! Between Python and the core: errors as `cdpr.CdprError` (the CLI's message) or
//! `ValueError`/`TypeError` (a bad argument, worded as the core words it), Python values as
//! the core's option values, results as Python objects.

use cdpr_core::kinematics::Pose;
use cdpr_core::options::{self, OptionError, OptionSpec, Request, SetError, Value};
use cdpr_core::run::{OPTIONS, RunRequest};
use numpy::PyArray1;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

create_exception!(
    _cdpr,
    CdprError,
    PyException,
    "An error of the cdpr core, with the message the `cdpr` command prints after `error: `."
);

/// `what: cause: cause …`, as anyhow's `{:#}` prints a context over an error chain.
pub fn chain(what: Option<&str>, error: &(dyn std::error::Error + 'static)) -> String {
    let causes = cdpr_core::text::error_chain(error);
    match what {
        Some(what) => format!("{what}: {causes}"),
        None => causes,
    }
}

/// The error as `cdpr.CdprError`, under a context line (None: the error's own chain).
pub fn cdpr_err(what: Option<&str>, error: &(dyn std::error::Error + 'static)) -> PyErr {
    CdprError::new_err(chain(what, error))
}

/// An option core's messages name, as Python spells it: the keyword argument `grid=`.
pub fn keyword(name: &str) -> String {
    format!("{name}=")
}

/// A bad value of a named argument: `ValueError("dt: must be between …")`, the keyword
/// leading its problem.
pub fn value_err(e: OptionError) -> PyErr {
    PyValueError::new_err(format!("{}: {}", e.option, e.problem))
}

/// A value from Python: None, a bool, an int, a float, a str or an `os.PathLike`.
pub fn value_of(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        Ok(Value::Unset)
    } else if obj.is_instance_of::<PyBool>() {
        Ok(Value::Flag(obj.extract()?))
    } else if obj.is_instance_of::<PyInt>() {
        Ok(Value::Whole(obj.extract()?))
    } else if obj.is_instance_of::<PyFloat>() {
        Ok(Value::Number(obj.extract()?))
    } else if obj.is_instance_of::<PyString>() {
        Ok(Value::Text(obj.extract()?))
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        Ok(Value::Numbers(obj.extract()?))
    } else if let Ok(path) = obj.py().import("os")?.call_method1("fspath", (obj,)) {
        Ok(Value::Text(path.extract()?))
    } else {
        // numpy scalars and other numbers
        obj.extract::<f64>().map(Value::Number).map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a number, a name or a flag, got {}",
                obj.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        })
    }
}

/// A run request from keyword arguments: each a run option of core's table that `function`
/// takes (`allowed`), checked against its spec. An unknown name is a `TypeError` (as Python
/// says of any function), a bad value a `ValueError` naming the option.
pub fn request_from(
    function: &str,
    options: Option<&Bound<'_, PyDict>>,
    allowed: &[&'static str],
) -> PyResult<RunRequest> {
    request_of(function, options, allowed)
}

/// A command's request from keyword arguments: each an option of `R`'s table that
/// `function` takes (`allowed`), checked against its spec, the others at their defaults.
pub fn request_of<R: Request>(
    function: &str,
    options: Option<&Bound<'_, PyDict>>,
    allowed: &[&'static str],
) -> PyResult<R> {
    let mut request = R::default();
    let Some(options) = options else {
        return Ok(request);
    };
    for (key, value) in options.iter() {
        let name: String = key.extract()?;
        if !allowed.contains(&name.as_str()) {
            let hint = if R::OPTIONS.iter().any(|s| s.name == name) {
                " (an option of the table, but not one of this function's)".to_string()
            } else {
                match options::unknown(&name, allowed.iter().copied()).nearest {
                    Some(n) if allowed.contains(&n) => format!(" (did you mean '{n}'?)"),
                    _ => String::new(),
                }
            };
            return Err(PyTypeError::new_err(format!(
                "{function}() got an unexpected keyword argument '{name}'{hint}"
            )));
        }
        let value = value_of(&value)?;
        if value == Value::Unset {
            // None: the option's default.
            continue;
        }
        set_option(&mut request, &name, value)?;
    }
    Ok(request)
}

/// Sets option `name` of `request` to `value`, checked by its row of the table: a bad value is
/// a `ValueError` naming the keyword, an unknown name a `TypeError`.
pub fn set_option<R: Request>(request: &mut R, name: &str, value: Value) -> PyResult<()> {
    request.set(name, value).map_err(|e| match e {
        SetError::Value(e) => value_err(e),
        SetError::Unknown(e) => PyTypeError::new_err(e.to_string()),
    })
}

/// The keyword arguments that are options of `R`'s table, and the others.
pub fn split_off<'py, R: Request>(
    py: Python<'py>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let (own, rest) = (PyDict::new(py), PyDict::new(py));
    if let Some(options) = options {
        for (key, value) in options.iter() {
            let name: String = key.extract()?;
            let into = if R::spec(&name).is_some() {
                &own
            } else {
                &rest
            };
            into.set_item(key, value)?;
        }
    }
    Ok((own, rest))
}

/// Every option name of `R`'s table, for [`request_of`].
pub fn names_of<R: Request>() -> Vec<&'static str> {
    R::OPTIONS.iter().map(|s| s.name).collect()
}

/// The names of the run options of `groups`, for [`request_from`].
pub fn names_in(groups: &[options::Group]) -> Vec<&'static str> {
    OPTIONS
        .iter()
        .filter(|s| groups.contains(&s.group))
        .map(|s| s.name)
        .collect()
}

/// `value` checked against a command option's spec in core.
pub fn number(spec: &'static OptionSpec, value: f64) -> PyResult<f64> {
    options::checked_number(spec, value).map_err(value_err)
}

/// A pose from 3 (position) or 6 numbers, by core's rule ([`Pose::from_user`]).
pub fn pose_of(argument: &str, values: &[f64], degrees: bool) -> PyResult<Pose> {
    let pose = Pose::from_user(values, degrees)
        .map_err(|e| PyValueError::new_err(format!("{argument}: {e}")))?;
    // As the CLI: an angle beyond a turn in radians was probably meant in degrees.
    if !degrees
        && let Some(hint) = cdpr_core::kinematics::radians_beyond_a_turn(values, "degrees=True")
    {
        Python::attach(|py| warn(py, &[format!("{argument}: {hint}")]))?;
    }
    Ok(pose)
}

/// A serde value as a Python object (through `json`, so numbers round-trip exactly).
pub fn to_py<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| CdprError::new_err(format!("serialising the result: {e}")))?;
    py.import("json")?.call_method1("loads", (text,))
}

pub fn array<'py>(py: Python<'py>, values: Vec<f64>) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_vec(py, values)
}

/// Warnings of the core as Python `UserWarning`s.
pub fn warn(py: Python<'_>, warnings: &[String]) -> PyResult<()> {
    if warnings.is_empty() {
        return Ok(());
    }
    let module = py.import("warnings")?;
    for w in warnings {
        module.call_method1("warn", (w.as_str(),))?;
    }
    Ok(())
}
