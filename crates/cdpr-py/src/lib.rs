//! `cdpr._cdpr`: the native half of the `cdpr` Python package (python/cdpr/__init__.py is the
//! other half). A face of cdpr-core like the command line: it calls the core's reports and its
//! physics and never re-implements them, so a result here equals the CLI's bit for bit.
//!
//! Results are handed over as the CLI's `--json` objects (the same serde structs, parsed by
//! Python's `json`) and, for runs, as one contiguous float64 array that numpy views without a
//! copy. Long computations release the GIL. Errors are `cdpr.CdprError` with the CLI's message
//! (the context and the cause chain joined by ": ", as `cdpr` prints after `error: `);
//! out-of-range arguments are `ValueError`s worded like the CLI's.
#![deny(clippy::unwrap_used)]

use cdpr_core::kinematics::{self, AngleUnit, FkMethod, FkOptions, Pose};
use cdpr_core::metrics::{self, CompareOptions};
use cdpr_core::robot::{Aabb, MASS_RANGE, Robot as CoreRobot, TensionBounds};
use cdpr_core::sim::report::{RecordLayout, RunDigest, SimulationReport};
use cdpr_core::sim::run::{self, Record, RunOptions};
use cdpr_core::sim::{ChainConfig, Command, ControlMode, ModelKind, Sim as CoreSim, SimConfig};
use cdpr_core::statics::{self, RestLengths};
use cdpr_core::sweep;
use cdpr_core::trajectory::csv::CsvOptions;
use cdpr_core::trajectory::{self, BuiltinOptions, ProfileKind, Trajectory, Transition};
use cdpr_core::workspace::report::{WorkspaceRequest, workspace_report};
use clap::ValueEnum;
use nalgebra::Vector3;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray2};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::ops::ControlFlow;
use std::path::PathBuf;

create_exception!(
    _cdpr,
    CdprError,
    PyException,
    "An error of the cdpr core, with the message the `cdpr` command prints after `error: `."
);

// ------------------------------------------------------------------------------ errors

/// `what: cause: cause …`, as anyhow's `{:#}` prints a context over an error chain.
fn chain(what: Option<&str>, error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = what.map(str::to_string).into_iter().collect();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        parts.push(e.to_string());
        cause = e.source();
    }
    parts.join(": ")
}

/// The error as `cdpr.CdprError`, with a context line.
fn cdpr_err(what: &str, error: &(dyn std::error::Error + 'static)) -> PyErr {
    CdprError::new_err(chain(Some(what), error))
}

/// Like the CLI's `args::naming`: "what `name`: cause", or "what: cause" when the cause
/// already names it.
fn naming(what: &str, name: &str, error: &(dyn std::error::Error + 'static)) -> PyErr {
    let bare = chain(None, error);
    if bare.contains(name) {
        CdprError::new_err(format!("{what}: {bare}"))
    } else {
        CdprError::new_err(format!("{what} `{name}`: {bare}"))
    }
}

/// A number as the CLI writes range ends: Rust's shortest form.
fn short(v: f64) -> String {
    let plain = format!("{v}");
    let sci = format!("{v:e}");
    if sci.len() < plain.len() { sci } else { plain }
}

/// A finite number in [min, max] (the CLI's `within`, message and all).
fn within(option: &str, value: f64, min: f64, max: f64, unit: &str) -> PyResult<f64> {
    if value.is_finite() && (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(PyValueError::new_err(format!(
            "{option}: must be between {} and {}{}, got {value}",
            short(min),
            short(max),
            if unit.is_empty() {
                String::new()
            } else {
                format!(" {unit}")
            }
        )))
    }
}

fn whole_within(option: &str, value: usize, min: usize, max: usize) -> PyResult<usize> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(PyValueError::new_err(format!(
            "{option}: must be a whole number from {min} to {max}, got {value}"
        )))
    }
}

/// A value of one of the CLI's enums by its command-line name.
fn choice<T: ValueEnum>(option: &str, name: &str) -> PyResult<T> {
    T::from_str(name, true).map_err(|_| {
        let known: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        PyValueError::new_err(format!(
            "{option}: `{name}` is not one of {}",
            known.join(", ")
        ))
    })
}

/// Largest |x|, |y|, |z| of a pose (the CLI's limit), m; angles within ±360.
const POSE_POSITION_LIMIT_M: f64 = 1e3;
const POSE_ANGLE_LIMIT: f64 = 360.0;

/// A pose from 3 (position) or 6 numbers (and roll, pitch, yaw in rad, or degrees).
fn pose_of(option: &str, values: &[f64], degrees: bool) -> PyResult<Pose> {
    if values.len() != 3 && values.len() != 6 {
        return Err(PyValueError::new_err(format!(
            "{option}: a pose is x,y,z or x,y,z,roll,pitch,yaw, got {} numbers",
            values.len()
        )));
    }
    const NAMES: [&str; 6] = ["x", "y", "z", "roll", "pitch", "yaw"];
    let mut a = [0.0; 6];
    for (k, v) in values.iter().enumerate() {
        let (limit, unit) = if k < 3 {
            (POSE_POSITION_LIMIT_M, " m")
        } else {
            (POSE_ANGLE_LIMIT, "")
        };
        if !(v.is_finite() && v.abs() <= limit) {
            return Err(PyValueError::new_err(format!(
                "{option}: {} must be between {} and {}{unit}, got {v}",
                NAMES[k],
                short(-limit),
                short(limit)
            )));
        }
        a[k] = if k >= 3 && degrees {
            v.to_radians()
        } else {
            *v
        };
    }
    // As the CLI: an angle beyond a turn in radians was probably meant in degrees.
    if !degrees && let Some(hint) = kinematics::radians_beyond_a_turn(values, "degrees=True") {
        Python::attach(|py| {
            let message = std::ffi::CString::new(format!("{option}: {hint}"))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
            PyErr::warn(py, category.as_any(), &message, 1)
        })?;
    }
    Ok(Pose::from_array(a))
}

fn unit(degrees: bool) -> AngleUnit {
    if degrees {
        AngleUnit::Deg
    } else {
        AngleUnit::Rad
    }
}

/// A serde value as a Python object (through `json`, so numbers round-trip exactly).
fn to_py<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| CdprError::new_err(format!("serialising the result: {e}")))?;
    py.import("json")?.call_method1("loads", (text,))
}

fn array<'py>(py: Python<'py>, values: Vec<f64>) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_vec(py, values)
}

// ------------------------------------------------------------------------------ robots

/// A robot: a shipped one by name (`uvigo8`, `silva4`, `caroca`, `keops`, `rssu2`) or a robot
/// file (TOML), validated as `cdpr check` does.
#[pyclass(module = "cdpr._cdpr", frozen)]
#[derive(Clone)]
struct Robot {
    inner: CoreRobot,
}

/// Names of the shipped robots.
#[pyfunction]
fn robot_names() -> Vec<&'static str> {
    CoreRobot::builtin_names().collect()
}

impl Robot {
    fn cable_robot(&self, what: &str) -> PyResult<&CoreRobot> {
        if self.inner.is_cable_robot() {
            Ok(&self.inner)
        } else {
            Err(CdprError::new_err(format!(
                "`{what}` is for cable-driven robots; {} is a {}",
                self.inner.name,
                self.inner.mechanism.kind()
            )))
        }
    }

    fn bounds(&self, f_min: Option<f64>, f_max: Option<f64>) -> PyResult<TensionBounds> {
        for (name, v) in [("f_min", f_min), ("f_max", f_max)] {
            if let Some(v) = v {
                within(name, v, 0.0, 1e12, "N")?;
            }
        }
        statics::tension_bounds(&self.inner, f_min, f_max)
            .map_err(|e| CdprError::new_err(chain(None, &e)))
    }
}

#[pymethods]
impl Robot {
    /// Loads a robot: a file path, or the name of a shipped robot.
    #[staticmethod]
    fn load(py: Python<'_>, name_or_path: &str) -> PyResult<Robot> {
        let spec = name_or_path.to_string();
        let loaded = py.detach(|| CoreRobot::load(&spec));
        loaded
            .map(|inner| Robot { inner })
            .map_err(|e| naming("loading robot", name_or_path, &e))
    }

    /// Parses a robot file's text; `origin` names it in error messages.
    #[staticmethod]
    #[pyo3(signature = (text, origin = "<string>"))]
    fn from_toml(text: &str, origin: &str) -> PyResult<Robot> {
        CoreRobot::from_text(text, std::path::Path::new(origin))
            .map(|inner| Robot { inner })
            .map_err(|e| naming("loading robot", origin, &e))
    }

    /// The same robot with a total moving mass of `mass` kg (inertia scaled), like
    /// `--payload`.
    fn with_payload(&self, mass: f64) -> PyResult<Robot> {
        within("payload", mass, MASS_RANGE.0, MASS_RANGE.1, "kg")?;
        Ok(Robot {
            inner: self.inner.with_mass(mass),
        })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    #[getter]
    fn description(&self) -> &str {
        &self.inner.description
    }

    /// "cables", "linear delta" or "2-RSSU".
    #[getter]
    fn kind(&self) -> String {
        self.inner.mechanism.kind().to_string()
    }

    #[getter]
    fn is_cable_robot(&self) -> bool {
        self.inner.is_cable_robot()
    }

    /// Platform mass, kg.
    #[getter]
    fn mass(&self) -> f64 {
        self.inner.platform.mass
    }

    #[getter]
    fn cable_names(&self) -> Vec<String> {
        self.inner.cables.iter().map(|c| c.name.clone()).collect()
    }

    /// Frame anchors a_i (world, m), one row per cable.
    #[getter]
    fn frame_anchors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v: Vec<f64> = self
            .inner
            .cables
            .iter()
            .flat_map(|c| c.frame_anchor.iter().copied().collect::<Vec<_>>())
            .collect();
        Ok(array(py, v)
            .reshape([self.inner.cables.len(), 3])?
            .into_any())
    }

    /// Platform anchors b_i (platform frame, m), one row per cable.
    #[getter]
    fn platform_anchors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v: Vec<f64> = self
            .inner
            .cables
            .iter()
            .flat_map(|c| c.platform_anchor.iter().copied().collect::<Vec<_>>())
            .collect();
        Ok(array(py, v)
            .reshape([self.inner.cables.len(), 3])?
            .into_any())
    }

    /// Home pose (x, y, z, roll, pitch, yaw).
    #[getter]
    fn home<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array(py, self.inner.home.to_vec())
    }

    /// The robot as `cdpr check --json` prints it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner)
    }

    /// Inverse kinematics at `pose` (x,y,z[,roll,pitch,yaw]): `cdpr ik --json`'s object
    /// (cable robots: lengths, directions, seed 000's angles; legs: actuator positions).
    #[pyo3(signature = (pose, degrees = false))]
    fn ik<'py>(
        &self,
        py: Python<'py>,
        pose: Vec<f64>,
        degrees: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pose = pose_of("pose", &pose, degrees)?;
        if self.inner.is_cable_robot() {
            to_py(
                py,
                &kinematics::ik_report(&self.inner, &pose, unit(degrees)),
            )
        } else {
            to_py(
                py,
                &cdpr_core::legs::report::legs_ik(&self.inner, &pose, unit(degrees)),
            )
        }
    }

    /// Forward kinematics from cable lengths (m): `cdpr fk --json`'s object (pose, residual,
    /// iterations). `method` "lm" (Levenberg–Marquardt) or "sphere" (seed 003, 3-DOF).
    #[pyo3(signature = (lengths, guess = None, method = "lm", max_residual = 1e-3, degrees = false))]
    fn fk<'py>(
        &self,
        py: Python<'py>,
        lengths: Vec<f64>,
        guess: Option<Vec<f64>>,
        method: &str,
        max_residual: f64,
        degrees: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let robot = self.cable_robot("fk")?;
        let method: FkMethod = choice("method", method)?;
        within("max_residual", max_residual, 1e-12, 10.0, "m")?;
        check_lengths("lengths", &lengths, robot)?;
        let options = FkOptions {
            guess: guess.map(|g| pose_of("guess", &g, degrees)).transpose()?,
            max_residual,
            ..FkOptions::default()
        };
        let r =
            py.detach(|| kinematics::fk_report(robot, &lengths, method, &options, unit(degrees)));
        let r = r.map_err(|e| cdpr_err(&format!("forward kinematics of {}", robot.name), &e))?;
        to_py(py, &r)
    }

    /// Minimum-2-norm tensions f_min ≤ f ≤ f_max with W f + w_g = 0 at `pose`: `cdpr tensions
    /// --json`'s object (its `feasible` says whether the bounds hold).
    #[pyo3(signature = (pose, f_min = None, f_max = None, degrees = false))]
    fn tensions<'py>(
        &self,
        py: Python<'py>,
        pose: Vec<f64>,
        f_min: Option<f64>,
        f_max: Option<f64>,
        degrees: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let robot = self.cable_robot("tensions")?;
        let bounds = self.bounds(f_min, f_max)?;
        let pose = pose_of("pose", &pose, degrees)?;
        to_py(
            py,
            &statics::tensions_report(robot, &pose, bounds, unit(degrees)),
        )
    }

    /// Where elastic unilateral cables hold the platform: exactly one of `rest_lengths`
    /// (m), `sag_at` (L0 = IK(pose)) or `pretensioned_at` (L0 = IK(pose) − f*/k).
    /// `cdpr equilibrium --json`'s object.
    #[pyo3(signature = (rest_lengths = None, sag_at = None, pretensioned_at = None, guess = None,
                        f_min = None, f_max = None, degrees = false))]
    #[allow(clippy::too_many_arguments)]
    fn equilibrium<'py>(
        &self,
        py: Python<'py>,
        rest_lengths: Option<Vec<f64>>,
        sag_at: Option<Vec<f64>>,
        pretensioned_at: Option<Vec<f64>>,
        guess: Option<Vec<f64>>,
        f_min: Option<f64>,
        f_max: Option<f64>,
        degrees: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let robot = self.cable_robot("equilibrium")?;
        let rest = match (rest_lengths, sag_at, pretensioned_at) {
            (Some(l0), None, None) => {
                check_lengths("rest_lengths", &l0, robot)?;
                RestLengths::Given(l0)
            }
            (None, Some(p), None) => RestLengths::SagAt(pose_of("sag_at", &p, degrees)?),
            (None, None, Some(p)) => RestLengths::PretensionedAt(
                pose_of("pretensioned_at", &p, degrees)?,
                self.bounds(f_min, f_max)?,
            ),
            _ => {
                return Err(PyValueError::new_err(
                    "exactly one of rest_lengths, sag_at, pretensioned_at is needed",
                ));
            }
        };
        let guess = guess.map(|g| pose_of("guess", &g, degrees)).transpose()?;
        let r = py.detach(|| statics::equilibrium_report(robot, &rest, guess, unit(degrees)));
        let r = r.map_err(|e| cdpr_err(&format!("elastic equilibrium of {}", robot.name), &e))?;
        to_py(py, &r)
    }

    /// The wrench-feasible workspace on a grid³ over `region` (xmin,ymin,zmin,xmax,ymax,zmax;
    /// default the frame box): `cdpr workspace --json --no-plot`'s object (volume, the
    /// workspace box check, minimum-tension heights); `plot` a PNG path to draw it too.
    #[pyo3(signature = (grid = 30, region = None, orientation = None, levels = 3, f_min = None,
                        f_max = None, min_tension = 5.0, plot = None))]
    #[allow(clippy::too_many_arguments)]
    fn workspace<'py>(
        &self,
        py: Python<'py>,
        grid: usize,
        region: Option<Vec<f64>>,
        orientation: Option<f64>,
        levels: usize,
        f_min: Option<f64>,
        f_max: Option<f64>,
        min_tension: f64,
        plot: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let robot = self.cable_robot("workspace")?;
        whole_within("grid", grid, 2, 400)?;
        whole_within("levels", levels, 2, 21)?;
        within("min_tension", min_tension, 0.0, 1e6, "N")?;
        if let Some(d) = orientation {
            within("orientation", d, 0.0, 89.0, "degrees")?;
        }
        let region = match region {
            None => None,
            Some(v) if v.len() == 6 => Some(Aabb {
                min: Vector3::new(v[0], v[1], v[2]),
                max: Vector3::new(v[3], v[4], v[5]),
            }),
            Some(v) => {
                return Err(PyValueError::new_err(format!(
                    "region needs 6 numbers (xmin,ymin,zmin,xmax,ymax,zmax), got {}",
                    v.len()
                )));
            }
        };
        let plot = plot.map(|p| {
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map(|d| d.to_path_buf())
                .unwrap_or_else(|| PathBuf::from("."));
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("workspace-{}", robot.name));
            (dir, stem)
        });
        let request = WorkspaceRequest {
            region,
            grid,
            f_min,
            f_max,
            orientation_deg: orientation,
            levels,
            min_tension,
            plot,
        };
        let r = py.detach(|| workspace_report(robot, &request, &|_| {}));
        let r = r.map_err(|e| CdprError::new_err(chain(None, &e)))?;
        to_py(py, &r)
    }

    fn __repr__(&self) -> String {
        format!(
            "Robot('{}': {}, {} cables, {} kg)",
            self.inner.name,
            self.inner.mechanism.kind(),
            self.inner.cables.len(),
            self.inner.platform.mass
        )
    }
}

/// Longest cable length accepted (the CLI's), m.
const MAX_LENGTH: f64 = 1.0e4;

fn check_lengths(option: &str, values: &[f64], robot: &CoreRobot) -> PyResult<()> {
    if values.len() != robot.cables.len() {
        return Err(PyValueError::new_err(format!(
            "{option}: {} lengths given but the robot has {} cables",
            values.len(),
            robot.cables.len()
        )));
    }
    if let Some((k, v)) = values
        .iter()
        .enumerate()
        .find(|(_, v)| !(**v > 0.0 && **v <= MAX_LENGTH))
    {
        return Err(PyValueError::new_err(format!(
            "{option}: item {} must be a length in (0, {}] m, got {v}",
            k + 1,
            short(MAX_LENGTH)
        )));
    }
    Ok(())
}

// ------------------------------------------------------------------------ trajectories

/// A trajectory from an (n, k) array whose columns are named by `columns` (`t`, `x`, `y`,
/// `z` required; `roll`, `pitch`, `yaw`, velocities… optional): read through the CSV reader,
/// so it is checked exactly as a CSV file is (times increasing, numbers finite, …).
fn trajectory_from_array(
    values: &PyReadonlyArray2<'_, f64>,
    columns: &[String],
) -> PyResult<Trajectory> {
    let view = values.as_array();
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
    trajectory::csv::from_reader(text.as_bytes(), "<array>", &CsvOptions::default())
        .map_err(|e| naming("loading the trajectory", "<array>", &e))
}

/// Where a trajectory comes from: a built-in's or CSV file's name, or an array.
#[derive(FromPyObject)]
enum TrajectorySource<'py> {
    Name(String),
    Array(PyReadonlyArray2<'py, f64>),
}

/// How a built-in trajectory is shaped, as `cdpr simulate`'s options.
struct Shape {
    speed: f64,
    dt: f64,
    profile: Option<ProfileKind>,
    accel: Option<f64>,
    jerk: Option<f64>,
    transition: Option<Transition>,
}

impl Shape {
    #[allow(clippy::too_many_arguments)]
    fn new(
        speed: f64,
        dt: f64,
        max_dt: f64,
        profile: Option<&str>,
        accel: Option<f64>,
        jerk: Option<f64>,
        transition: Option<&str>,
    ) -> PyResult<Shape> {
        Ok(Shape {
            speed: within("speed", speed, 1e-3, 10.0, "m/s")?,
            dt: within("dt", dt, 1e-5, max_dt, "s")?,
            profile: profile.map(|p| choice("profile", p)).transpose()?,
            accel: accel
                .map(|a| within("accel", a, 1e-2, 1e3, "m/s²"))
                .transpose()?,
            jerk: jerk
                .map(|j| within("jerk", j, 1e-2, 1e5, "m/s³"))
                .transpose()?,
            transition: transition.map(|t| choice("transition", t)).transpose()?,
        })
    }

    fn options(&self) -> BuiltinOptions {
        BuiltinOptions {
            speed: self.speed,
            dt: self.dt,
            profile: self.profile,
            accel: self.accel,
            jerk: self.jerk,
            transition: self.transition,
        }
    }

    fn load(
        &self,
        py: Python<'_>,
        robot: &CoreRobot,
        source: TrajectorySource<'_>,
        columns: Option<Vec<String>>,
    ) -> PyResult<Trajectory> {
        match source {
            TrajectorySource::Name(spec) => {
                let options = self.options();
                let loaded = py.detach(|| trajectory::load(&spec, robot, &options));
                loaded.map_err(|e| naming("loading the trajectory", &spec, &e))
            }
            TrajectorySource::Array(a) => {
                let columns = columns.unwrap_or_else(|| {
                    let all = ["t", "x", "y", "z", "roll", "pitch", "yaw"];
                    let n = a.as_array().ncols().min(all.len());
                    all[..n].iter().map(|s| s.to_string()).collect()
                });
                trajectory_from_array(&a, &columns)
            }
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

/// A trajectory as `cdpr trajectory` generates it (a built-in at `speed`, sampled every
/// `dt`) or reads it (a CSV path): `(t, pose, segment, segment_names)`.
#[pyfunction]
#[pyo3(name = "trajectory", signature = (robot, name, speed = 0.1, dt = 0.001, profile = None,
                    accel = None, jerk = None, transition = None))]
#[allow(clippy::too_many_arguments)]
fn load_trajectory<'py>(
    py: Python<'py>,
    robot: &Robot,
    name: String,
    speed: f64,
    dt: f64,
    profile: Option<&str>,
    accel: Option<f64>,
    jerk: Option<f64>,
    transition: Option<&str>,
) -> PyResult<Samples<'py>> {
    let shape = Shape::new(speed, dt, 1.0, profile, accel, jerk, transition)?;
    let traj = shape.load(py, &robot.inner, TrajectorySource::Name(name), None)?;
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

/// Runs a trajectory through the physics core as `cdpr simulate` does (same defaults, same
/// checks, same numbers); the GIL is released while it runs.
#[pyfunction]
#[pyo3(signature = (robot, trajectory, columns = None, speed = 0.1, dt = 0.001, model = "chain",
                    control = None, compensate = false, kp = 1500.0, kd = 1500.0, settle = 0.0,
                    substeps = None, pgs = None, link_mass = None, profile = None, accel = None,
                    jerk = None, transition = None, remove_lag = true, surrogate = None,
                    combine = true))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    robot: &Robot,
    trajectory: TrajectorySource<'py>,
    columns: Option<Vec<String>>,
    speed: f64,
    dt: f64,
    model: &str,
    control: Option<&str>,
    compensate: bool,
    kp: f64,
    kd: f64,
    settle: f64,
    substeps: Option<usize>,
    pgs: Option<usize>,
    link_mass: Option<f64>,
    profile: Option<&str>,
    accel: Option<f64>,
    jerk: Option<f64>,
    transition: Option<&str>,
    remove_lag: bool,
    surrogate: Option<PathBuf>,
    combine: bool,
) -> PyResult<RunResult<'py>> {
    let robot = &robot.inner;
    let shape = Shape::new(speed, dt, 0.01, profile, accel, jerk, transition)?;
    let model: ModelKind = choice("model", model)?;
    let control = match control {
        Some(c) => choice("control", c)?,
        None if model == ModelKind::Surrogate => ControlMode::Ideal,
        None => ControlMode::Length,
    };
    let defaults = ChainConfig::default();
    let chain = ChainConfig {
        link_mass: within(
            "link_mass",
            link_mass.unwrap_or(defaults.link_mass),
            1e-3,
            100.0,
            "kg",
        )?,
        solver_iterations: whole_within(
            "substeps",
            substeps.unwrap_or(defaults.solver_iterations),
            1,
            100,
        )?,
        pgs_iterations: whole_within("pgs", pgs.unwrap_or(defaults.pgs_iterations), 1, 100)?,
    };
    let surrogate = match surrogate {
        Some(path) => {
            let params = cdpr_core::surrogate::SurrogateParams::read(&path)
                .map_err(|e| cdpr_err("reading the surrogate parameters", &e))?;
            let mut setup = cdpr_core::sim::SurrogateSetup::new(params);
            setup.combine = combine;
            Some(setup)
        }
        None if model == ModelKind::Surrogate => {
            return Err(CdprError::new_err(
                "model 'surrogate' needs surrogate=PARAMS.toml (write one with `cdpr surrogate fit`)",
            ));
        }
        None => None,
    };
    let options = RunOptions {
        config: SimConfig {
            dt: shape.dt,
            model,
            control,
            chain,
            surrogate,
        },
        compensate,
        kp: within("kp", kp, 0.0, 1e6, "1/s²")?,
        kd: within("kd", kd, 0.0, 1e5, "1/s")?,
        settle_time: within("settle", settle, 0.0, 3600.0, "s")?,
    };
    let traj = shape.load(py, robot, trajectory, columns)?;
    run::step_budget(&traj, &options).map_err(|e| cdpr_err("checking the run's length", &e))?;

    let segment_names = traj.segments.clone();
    let outcome = py.detach(move || {
        let mut digest = RunDigest::new(robot, &traj, &options);
        let mut layout: Option<RecordLayout> = None;
        let mut data: Vec<f64> = Vec::new();
        let mut segment: Vec<Option<usize>> = Vec::new();
        let summary = run::run_with(robot, traj, &options, &mut |_| {}, &mut |r: &Record| {
            digest.push(r);
            let l = *layout.get_or_insert_with(|| RecordLayout::new(robot, Some(r)));
            let _ = l.numbers(r, &mut |v| -> Result<(), ()> {
                data.push(v);
                Ok(())
            });
            segment.push(r.commanded.segment);
            ControlFlow::Continue(())
        });
        summary.map(|summary| {
            let report = digest.report(&summary, remove_lag);
            let escape = digest.escape().cloned();
            (summary, report, layout, data, segment, escape)
        })
    });
    let (summary, mut report, layout, data, segment, escape) =
        outcome.map_err(|e| cdpr_err("starting the simulation", &e))?;
    finish_report(&mut report, &summary);
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
    if let Some(e) = escape {
        // As the CLI: the run is kept (in the report's `escape`), the caller warned.
        let message = format!(
            "the platform left the robot's frame at t = {:.3} s (at x {:.3}, y {:.3}, z {:.3} m; \
             the frame and workspace span x {:.3} … {:.3}, y {:.3} … {:.3}, z {:.3} … {:.3} m with a margin): \
             the run is not physical (slack cables, an unreachable pose, too heavy a payload?)",
            e.t,
            e.position[0],
            e.position[1],
            e.position[2],
            e.box_min[0],
            e.box_max[0],
            e.box_min[1],
            e.box_max[1],
            e.box_min[2],
            e.box_max[2]
        );
        if let Ok(d) = report_py.cast::<PyDict>() {
            d.set_item("escape_message", message)?;
        }
    }
    Ok((report_py, columns, table, names))
}

/// The report's run-level numbers the CLI fills in after the run.
fn finish_report(report: &mut SimulationReport, summary: &run::RunSummary) {
    report.wall_s = summary.wall_s;
    report.rtf = cdpr_core::sim::report::rtf(summary.simulated_s, summary.wall_s);
}

/// Seed 000's metrics between two trajectories (`cdpr compare --json`'s object): each a CSV
/// path (with `*_columns` suffix `_cmd` to read a run's commanded pose) or an (n, k) array
/// with column names.
#[pyfunction]
#[pyo3(signature = (reference, actual, reference_columns = None, actual_columns = None,
                    reference_suffix = "", actual_suffix = "", remove_lag = true, max_lag = 1.0))]
#[allow(clippy::too_many_arguments)]
fn compare<'py>(
    py: Python<'py>,
    reference: TrajectorySource<'py>,
    actual: TrajectorySource<'py>,
    reference_columns: Option<Vec<String>>,
    actual_columns: Option<Vec<String>>,
    reference_suffix: &str,
    actual_suffix: &str,
    remove_lag: bool,
    max_lag: f64,
) -> PyResult<Bound<'py, PyAny>> {
    within("max_lag", max_lag, 0.0, 3600.0, "s")?;
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
            .map_err(|e| cdpr_err(&format!("reading the {what} trajectory"), &e)),
            TrajectorySource::Array(a) => {
                let columns = columns.unwrap_or_else(|| {
                    let all = ["t", "x", "y", "z", "roll", "pitch", "yaw"];
                    let n = a.as_array().ncols().min(all.len());
                    all[..n].iter().map(|s| s.to_string()).collect()
                });
                trajectory_from_array(&a, &columns)
            }
        }
    };
    let reference = read(reference, reference_columns, reference_suffix, "reference")?;
    let actual = read(actual, actual_columns, actual_suffix, "actual")?;
    let options = CompareOptions {
        remove_lag,
        max_lag_s: max_lag,
    };
    let c = py.detach(|| metrics::compare(&reference, &actual, &options));
    let c = c.map_err(|e| cdpr_err("comparing the trajectories", &e))?;
    to_py(py, &c)
}

// ------------------------------------------------------------------------ stepping by hand

/// The physics core stepped by hand: `set_command` then `step(n)`; `state` after each.
#[pyclass(module = "cdpr._cdpr")]
struct Sim {
    inner: CoreSim,
}

#[pymethods]
impl Sim {
    /// A simulation of `robot` at rest at `pose` (default home): model "chain", "elastic"
    /// (or "surrogate"), winches "length" (PID), "ideal" or "tension"; fixed step `dt`.
    #[new]
    #[pyo3(signature = (robot, model = "chain", control = "length", dt = 0.001, pose = None,
                        degrees = false))]
    fn new(
        py: Python<'_>,
        robot: &Robot,
        model: &str,
        control: &str,
        dt: f64,
        pose: Option<Vec<f64>>,
        degrees: bool,
    ) -> PyResult<Sim> {
        let config = SimConfig {
            dt: within("dt", dt, 1e-5, 0.01, "s")?,
            model: choice("model", model)?,
            control: choice("control", control)?,
            ..SimConfig::default()
        };
        let pose = match pose {
            Some(p) => pose_of("pose", &p, degrees)?,
            None => Pose::from_array(robot.inner.home),
        };
        let robot = &robot.inner;
        let sim = py.detach(|| CoreSim::at(robot, config, &pose));
        sim.map(|inner| Sim { inner })
            .map_err(|e| cdpr_err("starting the simulation", &e))
    }

    /// Commands the winches: payouts (m, control "length"/"ideal") or tensions (N, control
    /// "tension"), one per cable.
    fn set_command(&mut self, values: Vec<f64>) -> PyResult<()> {
        let command = match self.inner.config().control {
            ControlMode::Tension => Command::Tensions(values),
            _ => Command::Lengths(values),
        };
        self.inner
            .set_command(&command)
            .map_err(|e| cdpr_err("setting the command", &e))
    }

    /// Advances `n` fixed steps (GIL released); stops at the first failed step.
    #[pyo3(signature = (n = 1))]
    fn step(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        if n > run::MAX_STEPS {
            return Err(PyValueError::new_err(format!(
                "n: at most {} steps per call, got {n}",
                run::MAX_STEPS
            )));
        }
        let sim = &mut self.inner;
        let stepped = py.detach(|| (0..n).try_for_each(|_| sim.step()));
        stepped.map_err(|e| cdpr_err("stepping the simulation", &e))
    }

    /// Time, s.
    #[getter]
    fn time(&self) -> f64 {
        self.inner.state().time
    }

    /// The state after the last step: time, step, pose (6), twist (6), winch, lengths,
    /// tensions (per cable), wrench_residual.
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.state();
        let d = PyDict::new(py);
        d.set_item("time", s.time)?;
        d.set_item("step", s.step)?;
        d.set_item("pose", array(py, s.pose.to_array().to_vec()))?;
        d.set_item("twist", array(py, s.twist.to_vec()))?;
        d.set_item("winch", array(py, s.winch.clone()))?;
        d.set_item("lengths", array(py, s.lengths.clone()))?;
        d.set_item("tensions", array(py, s.tensions.clone()))?;
        d.set_item("wrench_residual", s.wrench_residual)?;
        Ok(d)
    }
}

// ------------------------------------------------------------------------------ sweeps

/// A sweep's spec (`cdpr sweep SPEC.toml`): its runs, one at a time (for Dask, Ray, Slurm)
/// or all on a thread pool.
#[pyclass(module = "cdpr._cdpr", frozen)]
struct SweepSpec {
    inner: sweep::Spec,
}

fn cell<'py>(py: Python<'py>, c: &sweep::Cell) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        sweep::Cell::Int(i) => i.into_pyobject(py)?.into_any(),
        sweep::Cell::Num(x) => x.into_pyobject(py)?.into_any(),
        sweep::Cell::Text(t) => t.into_pyobject(py)?.into_any(),
        sweep::Cell::Empty => py.None().into_bound(py),
    })
}

fn row<'py>(py: Python<'py>, r: &sweep::Row) -> PyResult<Bound<'py, PyList>> {
    let cells: PyResult<Vec<_>> = r.cells.iter().map(|c| cell(py, c)).collect();
    PyList::new(py, cells?)
}

#[pymethods]
impl SweepSpec {
    /// Reads a spec file (TOML), checked as `cdpr sweep` does.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<SweepSpec> {
        let loaded = py.detach(|| sweep::Spec::from_file(&path));
        loaded
            .map(|inner| SweepSpec { inner })
            .map_err(|e| CdprError::new_err(chain(None, &e)))
    }

    /// Parses a spec's text; `origin` names it in messages (and resolves relative paths).
    #[staticmethod]
    #[pyo3(signature = (text, origin = "<string>"))]
    fn from_toml(py: Python<'_>, text: &str, origin: &str) -> PyResult<SweepSpec> {
        let parsed = py.detach(|| sweep::Spec::from_text(text, origin));
        parsed
            .map(|inner| SweepSpec { inner })
            .map_err(|e| CdprError::new_err(chain(None, &e)))
    }

    /// Number of runs.
    fn count(&self) -> PyResult<u64> {
        self.inner
            .count()
            .map_err(|e| CdprError::new_err(chain(None, &e)))
    }

    /// The row's column names (the CSV header of `cdpr sweep`).
    fn columns(&self) -> Vec<String> {
        self.inner.columns()
    }

    /// Run `index`: its row, as `cdpr sweep` writes it (a failed run is a row with status
    /// "error", not an exception). The GIL is released while it runs.
    fn run<'py>(&self, py: Python<'py>, index: u64) -> PyResult<Bound<'py, PyList>> {
        let total = self.count()?;
        if index >= total {
            return Err(PyValueError::new_err(format!(
                "index: the spec has {total} runs (0 … {}), got {index}",
                total.saturating_sub(1)
            )));
        }
        let spec = &self.inner;
        let r = py.detach(|| sweep::run_one(spec, &spec.plan(index)));
        row(py, &r)
    }

    /// Runs the sweep on `jobs` threads (0: every core), only shard `(i, n)` if given, the
    /// rows appended to `out` (a CSV, resumed unless `resume` is false) when given; returns
    /// (the rows done now, the summary).
    #[pyo3(signature = (out = None, jobs = 0, shard = None, resume = true))]
    fn execute<'py>(
        &self,
        py: Python<'py>,
        out: Option<PathBuf>,
        jobs: usize,
        shard: Option<(u64, u64)>,
        resume: bool,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
        whole_within("jobs", jobs, 0, 4096)?;
        let spec = &self.inner;
        let outcome = py.detach(|| -> Result<_, sweep::SweepError> {
            let (mut output, resumed) = match &out {
                Some(path) => {
                    let (o, r) = sweep::csv::open(path, &spec.columns(), resume)?;
                    (Some(o), r)
                }
                None => (None, sweep::csv::Resumed::default()),
            };
            let options = sweep::ExecuteOptions {
                shard,
                jobs,
                resume_skip: resumed.done,
            };
            let mut rows = Vec::new();
            let mut failure = None;
            let summary = sweep::execute(spec, &options, |r| {
                if let Some(o) = &mut output
                    && let Err(e) = o.write(&r)
                {
                    failure = Some(e);
                    return ControlFlow::Break(());
                }
                rows.push(r);
                ControlFlow::Continue(())
            })?;
            if let Some(e) = failure {
                return Err(e);
            }
            rows.sort_by_key(|r| r.index);
            Ok((rows, summary))
        });
        let (rows, summary) = outcome.map_err(|e| CdprError::new_err(chain(None, &e)))?;
        let list = PyList::empty(py);
        for r in &rows {
            list.append(row(py, r)?)?;
        }
        let d = PyDict::new(py);
        d.set_item("total", summary.total)?;
        d.set_item("selected", summary.selected)?;
        d.set_item("skipped", summary.skipped)?;
        d.set_item("done", summary.done)?;
        d.set_item("failed", summary.failed)?;
        d.set_item("wall_s", summary.wall_s)?;
        d.set_item("runs_per_s", summary.runs_per_s())?;
        Ok((list, d))
    }
}

#[pymodule]
fn _cdpr(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CdprError", m.py().get_type::<CdprError>())?;
    m.add_class::<Robot>()?;
    m.add_class::<Sim>()?;
    m.add_class::<SweepSpec>()?;
    m.add_function(wrap_pyfunction!(robot_names, m)?)?;
    m.add_function(wrap_pyfunction!(load_trajectory, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
