//! `cdpr.Sim`: the physics core stepped by hand, with a run's physics options.

use crate::convert::{array, cdpr_err, names_in, pose_of, request_from, warn};
use crate::robot::Robot;
use cdpr_core::kinematics::Pose;
use cdpr_core::options::Group;
use cdpr_core::run::{CommandSource, MAX_STEPS};
use cdpr_core::sim::{Command, ControlMode, Sim as CoreSim};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The physics core stepped by hand: `set_command` then `step(n)`; `state` after each.
#[pyclass(module = "cdpr._cdpr")]
pub struct Sim {
    inner: CoreSim,
}

#[pymethods]
impl Sim {
    /// A simulation of `robot` at rest at `pose` (default home), with the physics options of
    /// a run (`model`, `control`, `dt`, `substeps`, `pgs`, `link_mass`, `cable_nodes`,
    /// `surrogate`, `combine`: see `cdpr.options()`; `cdpr simulate`'s defaults).
    #[new]
    #[pyo3(signature = (robot, pose = None, degrees = false, **options))]
    fn new(
        py: Python<'_>,
        robot: &Robot,
        pose: Option<Vec<f64>>,
        degrees: bool,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Sim> {
        let request = request_from("Sim", options, &names_in(&[Group::Physics]))?;
        let robot = &robot.inner;
        let (surrogate, warnings) = request
            .load_surrogate(Some(robot))
            .map_err(|e| cdpr_err(None, &e))?;
        warn(py, &warnings)?;
        let config = request.sim_config(CommandSource::Trajectory, surrogate);
        let pose = match pose {
            Some(p) => pose_of("pose", &p, degrees)?,
            None => Pose::from_array(robot.home),
        };
        let sim = py.detach(|| CoreSim::at(robot, config, &pose));
        sim.map(|inner| Sim { inner })
            .map_err(|e| cdpr_err(Some("starting the simulation"), &e))
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
            .map_err(|e| cdpr_err(Some("setting the command"), &e))
    }

    /// Advances `n` fixed steps (GIL released); stops at the first failed step.
    #[pyo3(signature = (n = 1))]
    fn step(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        if n > MAX_STEPS {
            return Err(PyValueError::new_err(format!(
                "n: at most {} steps per call, got {n}",
                MAX_STEPS
            )));
        }
        let sim = &mut self.inner;
        let stepped = py.detach(|| (0..n).try_for_each(|_| sim.step()));
        stepped.map_err(|e| cdpr_err(Some("stepping the simulation"), &e))
    }

    /// Time, s.
    #[getter]
    fn time(&self) -> f64 {
        self.inner.state().time
    }

    /// The state after the last step: time, step, pose (6), twist (6), winch, lengths,
    /// tensions (per cable, at the platform), winch_tensions (per cable, on the winch side of
    /// the pulley: equal to tensions without pulley friction and cable mass),
    /// wrench_residual.
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
        d.set_item("winch_tensions", array(py, s.winch_tensions.clone()))?;
        d.set_item("wrench_residual", s.wrench_residual)?;
        Ok(d)
    }
}
