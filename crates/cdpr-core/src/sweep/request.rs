//! A sweep's own options (threads, shard, recordings, resume) as one request, and the one way
//! every face (`cdpr sweep`, Python's `SweepSpec.execute`) runs a sweep to its CSV.

use super::csv::{self, Output};
use super::exec::{ExecuteOptions, Summary, execute};
use super::plan::Row;
use super::{Spec, SweepError};
use crate::options::{Group, Kind, OptionSpec, flag, whole};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// The most shards a sweep is split into.
pub const MAX_SHARDS: u64 = 10_000;

/// The runs whose index is `index` modulo `count`: `count` processes (a job array), each with
/// its own `index`, do a sweep between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Whether run `index` is in this shard.
    pub fn holds(&self, index: u64) -> bool {
        index % self.count == self.index
    }

    /// `(i, n)`, as the runner and the output's sidecar take it.
    pub fn pair(&self) -> (u64, u64) {
        (self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `I/N` with 0 ≤ I < N ≤ [`MAX_SHARDS`].
    fn from_str(text: &str) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("expected I/N (e.g. 0/4), got {text}"))?;
        let number = |s: &str, what: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("{what} `{s}` is not a whole number (expected I/N, e.g. 0/4)"))
        };
        let (index, count) = (number(i, "I")?, number(n, "N")?);
        if !(1..=MAX_SHARDS).contains(&count) {
            return Err(format!("N must be from 1 to {MAX_SHARDS}, got {count}"));
        }
        if index >= count {
            return Err(format!(
                "I must be from 0 to N − 1 = {}, got {index}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

crate::text_value!(Shard);

crate::request! {
    /// How a sweep runs: on how many threads, which shard of it, with or without recordings,
    /// resumed or started over (`cdpr sweep`, Python's `SweepSpec.execute`).
    #[derive(Debug, Clone, PartialEq)]
    pub struct SweepRequest, table OPTIONS;
    /// Runs at a time (None: one per core).
    jobs: Option<usize> = None,
        whole(Group::Command, 1, 1024, "runs at a time").default_text("one per core").short('j');
    /// Only this shard's runs (None: every run).
    shard: Option<Shard> = None,
        OptionSpec::new(Group::Command, Kind::Name, "I/N",
            "only the runs whose index is I modulo N (0 ≤ I < N ≤ 10000): N processes, each with \
             its own I (and its own output), do the sweep between them");
    /// Where each run's steps are recorded (None: not recorded).
    record_dir: Option<PathBuf> = None,
        OptionSpec::new(Group::Command, Kind::File, "DIR",
            "also record every run's steps in its own MCAP file in DIR (created if missing), \
             `run-NNNNNN.mcap` by the run's index: pose, scene and the numbers of `simulate \
             --out`, for Foxglove, Lichtblick, PlotJuggler or `cdpr view --replay`");
    /// Overwrite the output rather than resume it.
    force: bool = false,
        flag(Group::Command, "overwrite the output instead of resuming it").alias("no-resume");
    /// List the runs and stop.
    dry_run: bool = false, flag(Group::Command, "list the runs (of the shard) and exit");
}

impl SweepRequest {
    /// Whether run `index` is among those asked for.
    pub fn selects(&self, index: u64) -> bool {
        self.shard.is_none_or(|s| s.holds(index))
    }
}

/// A sweep ready to run: its output opened (resumed unless `force`), its recording directory
/// made, the runs still to do counted.
pub struct SweepRun<'a> {
    spec: &'a Spec,
    output: Option<Output>,
    options: ExecuteOptions,
    /// The runs this call will do (selected, less those already in the output).
    pub todo: u64,
    /// The output's partial last row (a run being written when a sweep stopped) was cut off.
    pub dropped_partial: bool,
}

impl<'a> SweepRun<'a> {
    /// Opens `out` (when given) for `spec`'s rows and makes `request`'s recording directory.
    pub fn open(
        spec: &'a Spec,
        request: &SweepRequest,
        out: Option<&Path>,
    ) -> Result<SweepRun<'a>, SweepError> {
        let shard = request.shard.map(|s| s.pair());
        let (output, resumed) = match out {
            Some(path) => {
                let (o, r) = csv::open_for(path, spec, shard, !request.force)?;
                (Some(o), r)
            }
            None => (None, csv::Resumed::default()),
        };
        if let Some(dir) = &request.record_dir {
            std::fs::create_dir_all(dir).map_err(|error| SweepError::Io {
                file: format!("the record directory {}", dir.display()),
                error,
            })?;
        }
        let todo = (0..spec.count()?)
            .filter(|&k| request.selects(k) && !resumed.done.contains(&k))
            .count() as u64;
        Ok(SweepRun {
            spec,
            output,
            options: ExecuteOptions {
                shard,
                jobs: request.jobs.unwrap_or(0),
                resume_skip: resumed.done,
                record_dir: request.record_dir.clone(),
            },
            todo,
            dropped_partial: resumed.dropped_partial,
        })
    }

    /// Runs it: each row appended to the output (flushed), then handed to `on_row`, which may
    /// stop the sweep. A row that cannot be written stops it and is the error.
    pub fn run(
        mut self,
        mut on_row: impl FnMut(Row) -> ControlFlow<()>,
    ) -> Result<Summary, SweepError> {
        let mut write_error = None;
        let output = &mut self.output;
        let summary = execute(self.spec, &self.options, |row| {
            if let Some(o) = output
                && let Err(e) = o.write(&row)
            {
                write_error = Some(e);
                return ControlFlow::Break(());
            }
            on_row(row)
        })?;
        match write_error {
            Some(e) => Err(e),
            None => Ok(summary),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Request, Value};

    #[test]
    fn a_shard_is_i_of_n_and_holds_every_nth_run() {
        let s: Shard = "1/3".parse().expect("a shard");
        assert_eq!(s.pair(), (1, 3));
        assert_eq!((0..7).filter(|&k| s.holds(k)).collect::<Vec<_>>(), [1, 4]);
        assert_eq!(s.to_string(), "1/3");
        for bad in ["3/3", "0/0", "1", "a/2", "0/10001"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let mut r = SweepRequest::default();
        r.set("shard", Value::Text("2/4".into())).expect("set");
        assert_eq!(r.shard, Some(Shard { index: 2, count: 4 }));
        let e = r
            .set("shard", Value::Text("4/4".into()))
            .expect_err("I < N");
        assert!(
            e.to_string().contains("I must be from 0 to N − 1 = 3"),
            "{e}"
        );
        assert_eq!(SweepRequest::spec("jobs").and_then(|s| s.short), Some('j'));
    }
}
