//! `cdpr._cdpr`: the native half of the `cdpr` Python package (python/cdpr/__init__.py is the
//! other half). A face of cdpr-core like the command line: it calls the core's reports and its
//! physics and never re-implements them, so a result here equals the CLI's bit for bit.
//!
//! Results are handed over as the CLI's `--json` objects (the same serde structs, parsed by
//! Python's `json`) and, for runs, as one contiguous float64 array that numpy views without a
//! copy. Long computations release the GIL. Errors are `cdpr.CdprError` with the CLI's message
//! (the context and the cause chain joined by ": ", as `cdpr` prints after `error: `); a bad
//! argument is a `ValueError` worded as the core words it (`dt: must be between …`), an
//! unknown keyword a `TypeError`. The run options are core's table (`cdpr.options()`): keyword
//! arguments of `simulate`, `Sim` and `trajectory` are checked against it, so a new option
//! needs no change here.
//!
//! - errors, values and poses in [`convert`];
//! - `Robot` and the commands on one robot (ik, fk, tensions, equilibrium, workspace) in
//!   [`robot`];
//! - trajectories, runs, comparisons and the option and model tables in [`run`];
//! - `Sim`, the physics stepped by hand, in [`sim`];
//! - `SweepSpec` in [`sweep`].
#![deny(clippy::unwrap_used)]

mod convert;
mod robot;
mod run;
mod sim;
mod sweep;

use pyo3::prelude::*;

#[pymodule]
fn _cdpr(m: &Bound<'_, PyModule>) -> PyResult<()> {
    cdpr_core::options::spell_names_with(convert::keyword);
    m.add("CdprError", m.py().get_type::<convert::CdprError>())?;
    m.add_class::<robot::Robot>()?;
    m.add_class::<sim::Sim>()?;
    m.add_class::<sweep::SweepSpec>()?;
    m.add_function(wrap_pyfunction!(robot::robot_names, m)?)?;
    m.add_function(wrap_pyfunction!(run::load_trajectory, m)?)?;
    m.add_function(wrap_pyfunction!(run::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(run::compare, m)?)?;
    m.add_function(wrap_pyfunction!(run::preflight, m)?)?;
    m.add_function(wrap_pyfunction!(run::feedforward, m)?)?;
    m.add_function(wrap_pyfunction!(run::prediction, m)?)?;
    m.add_function(wrap_pyfunction!(run::option_table, m)?)?;
    m.add_function(wrap_pyfunction!(run::model_table, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
