//! `cdpr.Robot`: a robot and what the commands compute for it (`cdpr ik`, `fk`, `tensions`,
//! `equilibrium`, `workspace`), each the same core call and the same `--json` object.

use crate::convert::{
    CdprError, array, cdpr_err, names_of, number, pose_of, request_of, set_option, to_py,
};
use cdpr_core::kinematics::{self, AngleUnit, FkOptions, FkRequest};
use cdpr_core::options::Value;
use cdpr_core::robot::{Cable, Robot as CoreRobot, TensionBounds};
use cdpr_core::run::{LoadError, RunRequest};
use cdpr_core::statics::solutions::{F_MAX, F_MIN};
use cdpr_core::statics::{self, RestLengths};
use cdpr_core::workspace::survey::{WorkspaceRequest, plot_target, workspace_report};
use nalgebra::Vector3;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

pub fn unit(degrees: bool) -> AngleUnit {
    if degrees {
        AngleUnit::Deg
    } else {
        AngleUnit::Rad
    }
}

/// Cable lengths given as `argument`, checked against `robot` by core's rule.
fn check_lengths(argument: &str, values: &[f64], robot: &CoreRobot) -> PyResult<()> {
    kinematics::check_lengths(robot, values)
        .map_err(|e| PyValueError::new_err(format!("{argument}: {e}")))
}

/// A robot: a shipped one by name (`uvigo8`, `silva4`, `caroca`, `keops`, `rssu2`) or a robot
/// file (TOML), validated as `cdpr check` does.
#[pyclass(module = "cdpr._cdpr", frozen)]
#[derive(Clone)]
pub struct Robot {
    pub inner: CoreRobot,
}

/// Names of the shipped robots.
#[pyfunction]
pub fn robot_names() -> Vec<&'static str> {
    CoreRobot::builtin_names().collect()
}

impl Robot {
    /// One anchor per cable as an (m, 3) array.
    fn anchors<'py>(
        &self,
        py: Python<'py>,
        anchor: impl Fn(&Cable) -> Vector3<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let v: Vec<f64> = self
            .inner
            .cables
            .iter()
            .flat_map(|c| anchor(c).iter().copied().collect::<Vec<_>>())
            .collect();
        Ok(array(py, v)
            .reshape([self.inner.cables.len(), 3])?
            .into_any())
    }

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
        let f_min = f_min.map(|v| number(&F_MIN, v)).transpose()?;
        let f_max = f_max.map(|v| number(&F_MAX, v)).transpose()?;
        statics::tension_bounds(&self.inner, f_min, f_max).map_err(|e| cdpr_err(None, &e))
    }
}

#[pymethods]
impl Robot {
    /// Loads a robot: a file path, or the name of a shipped robot.
    #[staticmethod]
    fn load(py: Python<'_>, name_or_path: &str) -> PyResult<Robot> {
        let spec = name_or_path.to_string();
        let request = RunRequest {
            robot: Some(spec),
            ..RunRequest::default()
        };
        let loaded = py.detach(|| request.load_robot());
        loaded
            .map(|inner| Robot { inner })
            .map_err(|e| cdpr_err(None, &e))
    }

    /// Parses a robot file's text; `origin` names it in error messages.
    #[staticmethod]
    #[pyo3(signature = (text, origin = "<string>"))]
    fn from_toml(text: &str, origin: &str) -> PyResult<Robot> {
        CoreRobot::from_text(text, std::path::Path::new(origin))
            .map(|inner| Robot { inner })
            .map_err(|source| {
                let e = LoadError::Robot {
                    spec: origin.to_string(),
                    source,
                };
                cdpr_err(None, &e)
            })
    }

    /// The same robot with a total moving mass of `mass` kg (inertia scaled), like
    /// `--payload`.
    fn with_payload(&self, mass: f64) -> PyResult<Robot> {
        let mut request = RunRequest::default();
        request
            .set("payload", Value::Number(mass))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Robot {
            inner: request.with_payload(self.inner.clone()),
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
        self.anchors(py, |c| c.frame_anchor)
    }

    /// Platform anchors b_i (platform frame, m), one row per cable.
    #[getter]
    fn platform_anchors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.anchors(py, |c| c.platform_anchor)
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
                &cdpr_core::kinematics::legs::legs_ik(&self.inner, &pose, unit(degrees)),
            )
        }
    }

    /// Forward kinematics from cable lengths (m): `cdpr fk --json`'s object (pose, residual,
    /// iterations). `method` "lm" (Levenberg–Marquardt) or "sphere" (seed 003, 3-DOF) and
    /// `max_residual` are `cdpr fk`'s options (`cdpr.options("fk")`; None: the table's default).
    #[pyo3(signature = (lengths, guess = None, method = None, max_residual = None, degrees = false))]
    fn fk<'py>(
        &self,
        py: Python<'py>,
        lengths: Vec<f64>,
        guess: Option<Vec<f64>>,
        method: Option<String>,
        max_residual: Option<f64>,
        degrees: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let robot = self.cable_robot("fk")?;
        let mut request = FkRequest::default();
        if let Some(m) = method {
            set_option(&mut request, "method", Value::Text(m))?;
        }
        if let Some(r) = max_residual {
            set_option(&mut request, "max_residual", Value::Number(r))?;
        }
        let FkRequest {
            method,
            max_residual,
        } = request;
        check_lengths("lengths", &lengths, robot)?;
        let options = FkOptions {
            guess: guess.map(|g| pose_of("guess", &g, degrees)).transpose()?,
            max_residual,
            ..FkOptions::default()
        };
        let r =
            py.detach(|| kinematics::fk_report(robot, &lengths, method, &options, unit(degrees)));
        let r =
            r.map_err(|e| cdpr_err(Some(&format!("forward kinematics of {}", robot.name)), &e))?;
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
        let r =
            r.map_err(|e| cdpr_err(Some(&format!("elastic equilibrium of {}", robot.name)), &e))?;
        to_py(py, &r)
    }

    /// The interference check at `pose` (x,y,z[,roll,pitch,yaw]) with `clearance` (m, the
    /// CLI's --clearance default when left out): every pair (cable–cable, cable–platform,
    /// cable–frame, platform–frame, cable and platform against each obstacle), its distance
    /// and the limit it is held to, as `{"clearance", "pairs": [...], "violations": [...]}`.
    #[pyo3(signature = (pose, clearance = None, degrees = false))]
    fn interference<'py>(
        &self,
        py: Python<'py>,
        pose: Vec<f64>,
        clearance: Option<f64>,
        degrees: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        use cdpr_core::interference::{self, CLEARANCE, DEFAULT_CLEARANCE};
        let robot = self.cable_robot("interference")?;
        let pose = pose_of("pose", &pose, degrees)?;
        let clearance = number(&CLEARANCE, clearance.unwrap_or(DEFAULT_CLEARANCE))?;
        let report = interference::check(robot, &pose, clearance);
        let violations: Vec<_> = report.violations().cloned().collect();
        to_py(
            py,
            &serde_json::json!({
                "clearance": report.clearance,
                "pairs": report.pairs,
                "violations": violations,
            }),
        )
    }

    /// The wrench-feasible workspace: `cdpr workspace --json --no-plot`'s object (volume, the
    /// workspace box check, minimum-tension heights); `plot` a PNG path to draw it too. The
    /// keywords are `cdpr workspace`'s options (`cdpr.options("workspace")` lists them with
    /// their units, ranges and defaults): `grid`, `region` (xmin,ymin,zmin,xmax,ymax,zmax,
    /// default the frame box), `orientation`, `levels`, `f_min`, `f_max`, `min_tension`,
    /// `interference` (True, or the clearance in m) and `clearance`.
    #[pyo3(signature = (plot = None, **options))]
    fn workspace<'py>(
        &self,
        py: Python<'py>,
        plot: Option<PathBuf>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let robot = self.cable_robot("workspace")?;
        // `interference=0.02` is the check at that clearance (`interference=True`: the
        // default clearance).
        if let Some(o) = options
            && let Some(v) = o.get_item("interference")?
            && !v.is_instance_of::<pyo3::types::PyBool>()
            && !v.is_none()
        {
            o.set_item("clearance", v)?;
            o.set_item("interference", true)?;
        }
        let mut names = names_of::<WorkspaceRequest>();
        names.retain(|n| *n != "step");
        let request: WorkspaceRequest = request_of("workspace", options, &names)?;
        let plot = plot.map(|p| plot_target(Some(&p), &robot.name));
        let r = py.detach(|| workspace_report(robot, &request, plot.as_ref(), &|_| {}));
        let r = r.map_err(|e| cdpr_err(None, &e))?;
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
