//! Trajectories and runs: `cdpr.trajectory`, `cdpr.simulate`, `cdpr.compare`, and the
//! tables every face reads (`cdpr.options()`, `cdpr.models()`). A run's options are core's
//! run request, filled from keyword arguments; results are the CLI's `--json` objects and
//! one float64 array for the steps.

use crate::convert::{
    array, cdpr_err, names_in, names_of, number, request_from, request_of, split_off, to_py, warn,
};
use crate::robot::Robot;
use cdpr_core::job::{Job, Sink};
use cdpr_core::metrics::{self, CompareRequest};
use cdpr_core::options::{Group, Kind, OptionSpec, Request, Value};
use cdpr_core::run::request::SAMPLE_DT;
use cdpr_core::run::{self, OPTIONS, Record, RecordLayout, RunRequest};
use cdpr_core::sim::MODELS;
use cdpr_core::trajectory::csv::CsvOptions;
use cdpr_core::trajectory::{self, BuiltinOptions, Trajectory};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

// ---------------------------------------------------------------------------- the tables

/// One option as a dict: name, group, kind, unit, min, max, default, help, choices.
fn option_dict<'py>(
    py: Python<'py>,
    spec: &OptionSpec,
    default: Option<Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", spec.name)?;
    d.set_item("group", format!("{:?}", spec.group).to_lowercase())?;
    let (kind, unit, min, max, choices) = match spec.kind {
        Kind::Number { unit, min, max } => ("number", Some(unit), Some(min), Some(max), None),
        Kind::Whole { min, max } => ("whole", None, Some(min as f64), Some(max as f64), None),
        Kind::Numbers { unit, limit, .. } => {
            ("numbers", Some(unit), Some(-limit), Some(limit), None)
        }
        Kind::Flag => ("flag", None, None, None, None),
        Kind::Choice(names) => (
            "choice",
            None,
            None,
            None,
            Some(names().into_iter().map(|(n, _)| n).collect::<Vec<_>>()),
        ),
        Kind::Name => ("name", None, None, None, None),
        Kind::File => ("file", None, None, None, None),
    };
    d.set_item("kind", kind)?;
    d.set_item("unit", unit)?;
    d.set_item("min", min)?;
    d.set_item("max", max)?;
    d.set_item("choices", choices)?;
    match default.unwrap_or(Value::Unset) {
        Value::Number(x) => d.set_item("default", x)?,
        Value::Whole(n) => d.set_item("default", n)?,
        Value::Flag(b) => d.set_item("default", b)?,
        Value::Text(t) => d.set_item("default", t)?,
        Value::Numbers(v) => d.set_item("default", v)?,
        Value::Unset => d.set_item("default", spec.default_text)?,
    }
    d.set_item("help", spec.help)?;
    Ok(d)
}

/// The options of a request, each as a dict.
fn table<'py, R: Request>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let items: PyResult<Vec<_>> = R::OPTIONS
        .iter()
        .map(|s| option_dict(py, s, R::default_value(s.name)))
        .collect();
    PyList::new(py, items?)
}

/// A table of options, with each one's unit, range, default and help: without `command`
/// the run options (what `simulate`, `Sim` and `trajectory` take as keyword arguments);
/// `"workspace"`, `"preflight"`, `"compare"` or `"fk"` the keyword arguments of
/// `Robot.workspace`, `preflight`, `compare` and `Robot.fk`.
#[pyfunction]
#[pyo3(name = "options", signature = (command = None))]
pub fn option_table<'py>(py: Python<'py>, command: Option<&str>) -> PyResult<Bound<'py, PyList>> {
    use cdpr_core::kinematics::FkRequest;
    use cdpr_core::preflight::PreflightRequest;
    use cdpr_core::workspace::survey::WorkspaceRequest;
    match command {
        None | Some("simulate") => table::<RunRequest>(py),
        Some("workspace") => table::<WorkspaceRequest>(py),
        Some("preflight") => table::<PreflightRequest>(py),
        Some("compare") => table::<CompareRequest>(py),
        Some("fk") => table::<FkRequest>(py),
        Some("sweep") => table::<cdpr_core::sweep::SweepRequest>(py),
        Some("feedforward") => table::<cdpr_core::run::feedforward::FeedforwardRequest>(py),
        Some(other) => Err(PyValueError::new_err(format!(
            "no options table `{other}`: simulate, workspace, preflight, feedforward, compare, fk or sweep"
        ))),
    }
}

/// Every physical model (core's table): name, help, winch modes, whether it models robots
/// with legs and whether it needs the surrogate's parameters.
#[pyfunction]
#[pyo3(name = "models")]
pub fn model_table<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let items: PyResult<Vec<_>> = MODELS
        .iter()
        .map(|m| {
            let d = PyDict::new(py);
            d.set_item("name", m.name)?;
            d.set_item("help", m.help)?;
            d.set_item(
                "controls",
                m.controls.iter().map(|c| c.name()).collect::<Vec<_>>(),
            )?;
            d.set_item("legs", m.legs)?;
            d.set_item("needs_surrogate", m.needs_surrogate)?;
            d.set_item("swept", m.not_swept.is_none())?;
            Ok(d)
        })
        .collect();
    PyList::new(py, items?)
}

// ---------------------------------------------------------------------- trajectories

/// A trajectory from an (n, k) array whose columns are named by `columns` (`t`, `x`, `y`,
/// `z` required; `roll`, `pitch`, `yaw`, velocities… optional): read through the CSV reader,
/// so it is checked exactly as a CSV file is (times increasing, numbers finite, …).
/// Without `columns`: t, x, y, z, roll, pitch, yaw, as many as the array has.
fn trajectory_from_array(
    values: &PyReadonlyArray2<'_, f64>,
    columns: Option<Vec<String>>,
) -> PyResult<Trajectory> {
    let view = values.as_array();
    let columns = columns.unwrap_or_else(|| {
        let all = ["t", "x", "y", "z", "roll", "pitch", "yaw"];
        all[..view.ncols().min(all.len())]
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    if view.ncols() != columns.len() {
        return Err(PyValueError::new_err(format!(
            "trajectory: the array has {} columns but {} names were given ({})",
            view.ncols(),
            columns.len(),
            columns.join(",")
        )));
    }
    let mut text = columns.join(",");
    text.push('\n');
    for row in view.rows() {
        let cells: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    trajectory::csv::from_reader(text.as_bytes(), "<array>", &CsvOptions::default()).map_err(
        |source| {
            let e = run::LoadError::Trajectory {
                spec: "<array>".into(),
                source,
            };
            cdpr_err(None, &e)
        },
    )
}

/// Where a trajectory comes from: a built-in's or CSV file's name, or an array.
#[derive(FromPyObject)]
pub enum TrajectorySource<'py> {
    Name(String),
    Array(PyReadonlyArray2<'py, f64>),
}

impl TrajectorySource<'_> {
    /// The trajectory on `robot` (a name: sampled and shaped as `request` says).
    fn load(
        self,
        py: Python<'_>,
        robot: &cdpr_core::robot::Robot,
        request: &RunRequest,
        columns: Option<Vec<String>>,
    ) -> PyResult<Trajectory> {
        match self {
            TrajectorySource::Name(spec) => {
                let request = RunRequest {
                    trajectory: Some(spec),
                    ..request.clone()
                };
                let loaded = py.detach(|| request.load_trajectory(robot));
                loaded.map_err(|e| cdpr_err(None, &e))
            }
            TrajectorySource::Array(a) => trajectory_from_array(&a, columns),
        }
    }
}

/// The trajectory's samples: (time (n,), pose (n, 6), segment index (n,; −1 untagged),
/// segment names).
type Samples<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyAny>,
    Bound<'py, PyArray1<i64>>,
    Vec<String>,
);

fn samples<'py>(py: Python<'py>, traj: &Trajectory) -> PyResult<Samples<'py>> {
    let t: Vec<f64> = traj.samples.iter().map(|s| s.t).collect();
    let pose: Vec<f64> = traj
        .samples
        .iter()
        .flat_map(|s| s.pose.to_array())
        .collect();
    let seg: Vec<i64> = traj
        .samples
        .iter()
        .map(|s| s.segment.map_or(-1, |k| k as i64))
        .collect();
    let n = t.len();
    Ok((
        array(py, t),
        array(py, pose).reshape([n, 6])?.into_any(),
        PyArray1::from_vec(py, seg),
        traj.segments.clone(),
    ))
}

/// A trajectory as `cdpr trajectory` generates it (a built-in sampled every `dt`, shaped by
/// the run options `speed`, `profile`, `accel`, `jerk`, `transition`) or reads it (a CSV
/// path): `(t, pose, segment, segment_names)`.
#[pyfunction]
#[pyo3(name = "trajectory", signature = (robot, name, dt = None, **options))]
pub fn load_trajectory<'py>(
    py: Python<'py>,
    robot: &Robot,
    name: String,
    dt: Option<f64>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Samples<'py>> {
    let request = request_from("trajectory", options, &names_in(&[Group::Trajectory]))?;
    let dt = match dt {
        None => BuiltinOptions::default().dt,
        Some(dt) => number(&SAMPLE_DT, dt)?,
    };
    let builtin = BuiltinOptions {
        dt,
        ..request.builtin_options()
    };
    let loaded = py.detach(|| trajectory::load(&name, &robot.inner, &builtin));
    let traj = loaded.map_err(|source| {
        let e = run::LoadError::Trajectory {
            spec: name.clone(),
            source,
        };
        cdpr_err(None, &e)
    })?;
    samples(py, &traj)
}

// -------------------------------------------------------------------------- simulation

/// What a headless run hands back: the `cdpr simulate --json` object, the numeric column
/// names of `--out`'s CSV, its numbers as one (n, k) array, and each row's segment name.
type RunResult<'py> = (
    Bound<'py, PyAny>,
    Vec<String>,
    Bound<'py, PyAny>,
    Bound<'py, PyList>,
);

/// The run options `simulate` takes: all but the robot and the trajectory (its arguments).
fn simulate_options() -> Vec<&'static str> {
    OPTIONS
        .iter()
        .map(|s| s.name)
        .filter(|n| !matches!(*n, "robot" | "trajectory"))
        .collect()
}

/// Runs a trajectory through the physics core as `cdpr simulate` does (same options, same
/// defaults, same checks, same numbers); the GIL is released while it runs.
#[pyfunction]
#[pyo3(signature = (robot, trajectory, columns = None, **options))]
pub fn simulate<'py>(
    py: Python<'py>,
    robot: &Robot,
    trajectory: TrajectorySource<'py>,
    columns: Option<Vec<String>>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<RunResult<'py>> {
    let request = request_from("simulate", options, &simulate_options())?;
    let robot = request.with_payload(robot.inner.clone());
    let traj = trajectory.load(py, &robot, &request, columns)?;
    let job = Job::with(&request, robot, traj).map_err(|e| cdpr_err(None, &e))?;
    warn(py, &job.prepared().warnings)?;
    let segment_names = job.prepared().trajectory.segments.clone();
    let robot = job.prepared().robot.clone();
    let outcome = py.detach(|| {
        let mut layout: Option<RecordLayout> = None;
        let mut data: Vec<f64> = Vec::new();
        let mut segment: Vec<Option<usize>> = Vec::new();
        let mut keep = |r: &Record<'_>| {
            let l = *layout.get_or_insert_with(|| RecordLayout::new(&robot, Some(r)));
            let _ = l.numbers(r, &mut |v| -> Result<(), ()> {
                data.push(v);
                Ok(())
            });
            segment.push(r.commanded.segment);
        };
        let report = job.run(Sink::Each(&mut keep), &mut |_| {}, None);
        report.map(|report| (report, layout, data, segment))
    });
    let (report, layout, data, segment) = outcome.map_err(|e| cdpr_err(None, &e))?;
    let robot = &robot;
    let layout = layout.unwrap_or_else(|| RecordLayout::new(robot, None));
    let columns = layout.columns();
    let rows = segment.len();
    let table = array(py, data).reshape([rows, columns.len()])?.into_any();
    let names = PyList::new(
        py,
        segment.iter().map(|s| {
            s.and_then(|k| segment_names.get(k))
                .map_or("", String::as_str)
        }),
    )?;
    let report_py = to_py(py, &report)?;
    if let Some(e) = &report.escape {
        // As the CLI: the run is kept (in the report's `escape`), the caller warned.
        if let Ok(d) = report_py.cast::<PyDict>() {
            d.set_item("escape_message", e.message())?;
        }
    }
    Ok((report_py, columns, table, names))
}

/// Seed 000's metrics between two trajectories (`cdpr compare --json`'s object): each a CSV
/// path (with `*_suffix` `_cmd` to read a run's commanded pose) or an (n, k) array with
/// column names.
#[pyfunction]
#[pyo3(signature = (reference, actual, reference_columns = None, actual_columns = None, **options))]
pub fn compare<'py>(
    py: Python<'py>,
    reference: TrajectorySource<'py>,
    actual: TrajectorySource<'py>,
    reference_columns: Option<Vec<String>>,
    actual_columns: Option<Vec<String>>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let request: CompareRequest = request_of("compare", options, &names_of::<CompareRequest>())?;
    let read = |source: TrajectorySource<'py>,
                columns: Option<Vec<String>>,
                suffix: &str,
                what: &str|
     -> PyResult<Trajectory> {
        match source {
            TrajectorySource::Name(path) => trajectory::csv::read_with(
                &path,
                &CsvOptions {
                    suffix: suffix.to_string(),
                },
            )
            .map_err(|e| cdpr_err(Some(&format!("reading the {what} trajectory")), &e)),
            TrajectorySource::Array(a) => trajectory_from_array(&a, columns),
        }
    };
    let reference = read(
        reference,
        reference_columns,
        &request.reference_suffix,
        "reference",
    )?;
    let actual = read(actual, actual_columns, &request.actual_suffix, "actual")?;
    let options = request.options();
    let c = py.detach(|| metrics::compare(&reference, &actual, &options));
    let c = c.map_err(|e| cdpr_err(Some("comparing the trajectories"), &e))?;
    to_py(py, &c)
}

// ---------------------------------------------------------------------------- feed-forward

/// `cdpr feedforward`'s table for a trajectory on a robot with drives: `columns` (`t`, then
/// per drive `torque_i`, `payout_i`, `payout_rate_i`, `payout_acceleration_i`,
/// `winch_tension_i`), `values` (one row per trajectory sample) and `drives` (per drive its
/// peak and RMS torque and the time at its limit). `options`: `difference_step`,
/// `plain_lengths` (`cdpr.options("feedforward")`) and the robot and trajectory run options.
#[pyfunction]
#[pyo3(signature = (robot, trajectory, columns = None, **options))]
pub fn feedforward<'py>(
    py: Python<'py>,
    robot: &Robot,
    trajectory: TrajectorySource<'py>,
    columns: Option<Vec<String>>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    use cdpr_core::run::feedforward::{self, FeedforwardRequest};
    let (own, options) = split_off::<FeedforwardRequest>(py, options)?;
    let own: FeedforwardRequest =
        request_of("feedforward", Some(&own), &names_of::<FeedforwardRequest>())?;
    let allowed: Vec<&'static str> = names_in(&[Group::Robot, Group::Trajectory])
        .into_iter()
        .filter(|n| !matches!(*n, "robot" | "trajectory"))
        .collect();
    let request = request_from("feedforward", Some(&options), &allowed)?;
    let robot = request.with_payload(robot.inner.clone());
    let traj = trajectory.load(py, &robot, &request, columns)?;
    let table = py.detach(|| feedforward::table(&robot, &traj, &own));
    let table = table.map_err(|e| cdpr_err(Some("feed-forward"), &e))?;
    let names = table.columns();
    let mut data = Vec::with_capacity(names.len() * table.t.len());
    for (t, d) in table.t.iter().zip(&table.demands) {
        data.push(*t);
        for i in 0..d.torques.len() {
            data.extend([
                d.torques[i],
                d.payouts[i],
                d.rates[i],
                d.accelerations[i],
                d.winch_tensions[i],
            ]);
        }
    }
    let out = PyDict::new(py);
    out.set_item("columns", PyList::new(py, &names)?)?;
    out.set_item(
        "values",
        array(py, data).reshape([table.t.len(), names.len()])?,
    )?;
    out.set_item("drives", to_py(py, &table.loads)?)?;
    Ok(out)
}

// ---------------------------------------------------------------------------- pre-flight

/// `cdpr preflight --json`'s object for a trajectory (a built-in's name, a CSV path or an
/// (n, k) array with `columns`) on `robot`: every check per segment and the first violation.
/// `options` are the robot and trajectory run options (`payload`, `speed`, `profile`, …) and
/// the pre-flight's own (`step`, `angle_step`, `time_step`, `clearance`, `f_min`, `f_max`:
/// `cdpr.options("preflight")`).
#[pyfunction]
#[pyo3(signature = (robot, trajectory, columns = None, **options))]
pub fn preflight<'py>(
    py: Python<'py>,
    robot: &Robot,
    trajectory: TrajectorySource<'py>,
    columns: Option<Vec<String>>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    use cdpr_core::preflight::{self, PreflightRequest};
    let (checks, options) = split_off::<PreflightRequest>(py, options)?;
    let checks: PreflightRequest =
        request_of("preflight", Some(&checks), &names_of::<PreflightRequest>())?;
    let allowed: Vec<&'static str> = names_in(&[Group::Robot, Group::Trajectory])
        .into_iter()
        .filter(|n| !matches!(*n, "robot" | "trajectory"))
        .collect();
    let request = request_from("preflight", Some(&options), &allowed)?;
    let robot = request.with_payload(robot.inner.clone());
    let traj = trajectory.load(py, &robot, &request, columns)?;
    let options = checks.options(&robot).map_err(|e| cdpr_err(None, &e))?;
    let report = py.detach(|| preflight::run(&robot, &traj, &options));
    let report = report.map_err(|e| cdpr_err(Some("pre-flight"), &e))?;
    to_py(py, &report)
}

/// How well a model predicts a robot's drives (`cdpr shadow`'s torque prediction, on any two
/// series): `predicted` and `measured` are arrays of one row per sample (taken every `period`
/// s) and one column per drive; per drive the RMS and largest measured − predicted (N·m and,
/// with `percent`, % of the robot's rated torques) and the lag that aligns them best.
#[pyfunction]
#[pyo3(signature = (robot, predicted, measured, period, percent = true))]
pub fn prediction<'py>(
    py: Python<'py>,
    robot: &Robot,
    predicted: PyReadonlyArray2<'py, f64>,
    measured: PyReadonlyArray2<'py, f64>,
    period: f64,
    percent: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use cdpr_core::run::prediction::PredictionTally;
    let (p, m) = (predicted.as_array(), measured.as_array());
    let cables = robot.inner.cable_count();
    if p.shape() != m.shape() || p.ncols() != cables {
        return Err(PyValueError::new_err(format!(
            "predicted is {:?} and measured {:?}: both need one row per sample and one column \
             per drive ({cables} for {})",
            p.shape(),
            m.shape(),
            robot.inner.name
        )));
    }
    if !(period.is_finite() && period > 0.0) {
        return Err(PyValueError::new_err(format!(
            "period must be > 0 s, got {period}"
        )));
    }
    if percent && !robot.inner.has_drives() {
        return Err(PyValueError::new_err(format!(
            "{} describes no drives: no rated torque for percentages (percent=False for \
             other series, lengths in m)",
            robot.inner.name
        )));
    }
    let mut tally = match percent {
        true => PredictionTally::torques(&robot.inner, period),
        false => PredictionTally::lengths(&robot.inner, period),
    };
    let (mut a, mut b) = (vec![0.0; cables], vec![0.0; cables]);
    for (row, (rp, rm)) in p.rows().into_iter().zip(m.rows()).enumerate() {
        let bad = rp.iter().chain(rm.iter()).position(|v| !v.is_finite());
        if let Some(k) = bad {
            let (which, col) = if k < cables {
                ("predicted", k)
            } else {
                ("measured", k - cables)
            };
            return Err(PyValueError::new_err(format!(
                "{which}[{row}, {col}] is not a finite number"
            )));
        }
        a.iter_mut().zip(rp).for_each(|(x, v)| *x = *v);
        b.iter_mut().zip(rm).for_each(|(x, v)| *x = *v);
        tally.push(&a, &b);
    }
    to_py(py, &tally.errors())
}
