//! `cdpr.SweepSpec`: `cdpr sweep`'s specs, run by run or on a thread pool.

use crate::convert::{cdpr_err, warn, whole};
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

    /// Runs the sweep on `jobs` threads (0: every core), only shard `(i, n)` if given, the
    /// rows appended to `out` (a CSV, resumed unless `resume` is false) when given; returns
    /// (the rows done now, the summary).
    #[pyo3(signature = (out = None, jobs = 0, shard = None, resume = true))]
    fn execute<'py>(
        &self,
        py: Python<'py>,
        out: Option<PathBuf>,
        jobs: i64,
        shard: Option<(u64, u64)>,
        resume: bool,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
        // 0: one run per core (as `cdpr sweep` without --jobs); else within `jobs`' range.
        let jobs = if jobs == 0 {
            0
        } else {
            whole(&sweep::JOBS, jobs)?
        };
        let spec = &self.inner;
        let outcome = py.detach(|| -> Result<_, sweep::SweepError> {
            let (mut output, resumed) = match &out {
                Some(path) => {
                    let (o, r) = sweep::csv::open_for(path, spec, shard, resume)?;
                    (Some(o), r)
                }
                None => (None, sweep::csv::Resumed::default()),
            };
            let options = sweep::ExecuteOptions {
                shard,
                jobs,
                resume_skip: resumed.done,
                record_dir: None,
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
