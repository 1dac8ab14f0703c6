//! The selected runs on a pool of threads, rows handed to the caller as they finish.

use super::SweepError;
use super::plan::{Row, run_one_recorded};
use super::spec::Spec;
use rayon::prelude::*;
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// Which runs to do, and on how many threads.
#[derive(Debug, Clone, Default)]
pub struct ExecuteOptions {
    /// `Some((i, n))`: only the runs whose index is i modulo n (0 ≤ i < n), so that n
    /// independent processes (a job array) split the sweep between them.
    pub shard: Option<(u64, u64)>,
    /// Worker threads; 0: one per core.
    pub jobs: usize,
    /// Indices already done (read from the output by [`super::csv`]): skipped.
    pub resume_skip: HashSet<u64>,
    /// Record each run's steps in its own MCAP file in this directory
    /// ([`super::plan::record_path`]); None: no recording.
    pub record_dir: Option<std::path::PathBuf>,
}

/// What [`execute`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Runs in the spec.
    pub total: u64,
    /// Runs of this shard.
    pub selected: u64,
    /// Runs of this shard skipped as already done.
    pub skipped: u64,
    /// Runs done now, and how many of them failed.
    pub done: u64,
    pub failed: u64,
    /// The caller asked to stop (its `on_row` returned `Break`): runs not started are left.
    pub stopped: bool,
    /// Wall-clock time, s.
    pub wall_s: f64,
}

impl Summary {
    /// Runs done per wall-clock second.
    pub fn runs_per_s(&self) -> f64 {
        if self.wall_s > 0.0 {
            self.done as f64 / self.wall_s
        } else {
            0.0
        }
    }
}

/// Runs the spec's runs of `options.shard` not in `options.resume_skip`, `options.jobs` at a
/// time, and hands each [`Row`] to `on_row` on the calling thread as it finishes (in
/// completion order, not index order; writing stays single-threaded). `on_row` returning
/// [`ControlFlow::Break`] stops the sweep: runs in flight finish (their rows are dropped),
/// no new one starts.
pub fn execute(
    spec: &Spec,
    options: &ExecuteOptions,
    mut on_row: impl FnMut(Row) -> ControlFlow<()>,
) -> Result<Summary, SweepError> {
    let started = Instant::now();
    let total = spec.count()?;
    if let Some((i, n)) = options.shard
        && !(n >= 1 && i < n)
    {
        return Err(SweepError::Invalid {
            file: spec.origin.clone(),
            line: 0,
            field: "shard".into(),
            message: format!("shard {i}/{n}: needs 0 ≤ i < N"),
        });
    }
    let in_shard = |index: u64| options.shard.is_none_or(|(i, n)| index % n == i);
    let selected: Vec<u64> = (0..total).filter(|&k| in_shard(k)).collect();
    let todo: Vec<u64> = selected
        .iter()
        .copied()
        .filter(|k| !options.resume_skip.contains(k))
        .collect();
    let mut summary = Summary {
        total,
        selected: selected.len() as u64,
        skipped: (selected.len() - todo.len()) as u64,
        done: 0,
        failed: 0,
        stopped: false,
        wall_s: 0.0,
    };
    let jobs = if options.jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        options.jobs
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|k| format!("cdpr-sweep-{k}"))
        .build()
        .map_err(|e| SweepError::Pool {
            jobs,
            message: e.to_string(),
        })?;
    let cancel = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Row>();
    std::thread::scope(|scope| {
        let (cancel, todo) = (&cancel, &todo);
        scope.spawn(move || {
            pool.install(|| {
                todo.par_iter()
                    .with_max_len(1)
                    .for_each_with(tx, |tx, &index| {
                        if cancel.load(Ordering::Relaxed) {
                            return;
                        }
                        let row = run_one_recorded(
                            spec,
                            &spec.plan(index),
                            options.record_dir.as_deref(),
                        );
                        // The receiver is gone only when the caller stopped.
                        let _ = tx.send(row);
                    });
            });
        });
        for row in rx.iter() {
            if summary.stopped {
                continue;
            }
            summary.done += 1;
            summary.failed += u64::from(!row.ok);
            if on_row(row).is_break() {
                summary.stopped = true;
                cancel.store(true, Ordering::Relaxed);
            }
        }
    });
    summary.wall_s = started.elapsed().as_secs_f64();
    Ok(summary)
}
