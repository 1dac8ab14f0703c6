//! `cdpr.SweepSpec`: `cdpr sweep`'s specs, run by run or on a thread pool.

use crate::convert::{cdpr_err, set_option, warn};
use cdpr_core::options::Value;
use cdpr_core::sweep;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::ops::ControlFlow;
use std::path::PathBuf;

/// A sweep's spec (`cdpr sweep SPEC.toml`): its runs, one at a time (for Dask, Ray, Slurm)
/// or all on a thread pool.
#[pyclass(module = "cdpr._cdpr", frozen)]
pub struct SweepSpec {
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
        let inner = loaded.map_err(|e| cdpr_err(None, &e))?;
        warn(py, &inner.warnings)?;
        Ok(SweepSpec { inner })
    }

    /// Parses a spec's text; `origin` names it in messages (and resolves relative paths).
    #[staticmethod]
    #[pyo3(signature = (text, origin = "<string>"))]
    fn from_toml(py: Python<'_>, text: &str, origin: &str) -> PyResult<SweepSpec> {
        let parsed = py.detach(|| sweep::Spec::from_text(text, origin));
        let inner = parsed.map_err(|e| cdpr_err(None, &e))?;
        warn(py, &inner.warnings)?;
        Ok(SweepSpec { inner })
    }

    /// Number of runs.
    fn count(&self) -> PyResult<u64> {
        self.inner.count().map_err(|e| cdpr_err(None, &e))
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

    /// Runs the sweep (`cdpr sweep`'s options, core's table): on `jobs` threads (0 or None:
    /// every core), only shard `(i, n)` (or "i/n") if given, each run recorded in `record_dir`
    /// when given, the rows appended to `out` (a CSV, resumed unless `force`, or `resume`
    /// False) when given; returns (the rows done now, the summary).
    #[pyo3(signature = (out = None, jobs = None, shard = None, resume = None, *, record_dir = None, force = false))]
    #[allow(clippy::too_many_arguments)]
    fn execute<'py>(
        &self,
        py: Python<'py>,
        out: Option<PathBuf>,
        jobs: Option<i64>,
        shard: Option<Bound<'py, PyAny>>,
        resume: Option<bool>,
        record_dir: Option<PathBuf>,
        force: bool,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
        let request = sweep_request(jobs, shard, record_dir, force || resume == Some(false))?;
        let spec = &self.inner;
        let outcome = py.detach(|| -> Result<_, sweep::SweepError> {
            let mut rows = Vec::new();
            let summary = sweep::SweepRun::open(spec, &request, out.as_deref())?.run(|r| {
                rows.push(r);
                ControlFlow::Continue(())
            })?;
            rows.sort_by_key(|r| r.index);
            Ok((rows, summary))
        });
        let (rows, summary) = outcome.map_err(|e| cdpr_err(None, &e))?;
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

/// The sweep's request from `execute`'s arguments, each checked by its row of core's table:
/// `jobs` 0 is every core (as None), a shard `(i, n)` is "i/n".
fn sweep_request(
    jobs: Option<i64>,
    shard: Option<Bound<'_, PyAny>>,
    record_dir: Option<PathBuf>,
    force: bool,
) -> PyResult<sweep::SweepRequest> {
    let mut request = sweep::SweepRequest::default();
    let mut set = |name: &str, value: Value| set_option(&mut request, name, value);
    if let Some(n) = jobs.filter(|&n| n != 0) {
        set("jobs", Value::Whole(n))?;
    }
    if let Some(shard) = shard {
        let text = match shard.extract::<(i64, i64)>() {
            Ok((i, n)) => format!("{i}/{n}"),
            Err(_) => shard.extract::<String>()?,
        };
        set("shard", Value::Text(text))?;
    }
    if let Some(dir) = record_dir {
        set("record_dir", Value::Text(dir.display().to_string()))?;
    }
    set("force", Value::Flag(force))?;
    Ok(request)
}
