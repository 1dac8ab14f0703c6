//! The one way to run a trajectory headless and report it: a [`Job`] (a request prepared:
//! robot, trajectory, options) run into a [`Sink`] (a file, a function, nothing) gives the
//! finished [`SimulationReport`], its timing included. `cdpr simulate`, sweeps and Python's
//! `cdpr.simulate` all call [`Job::run`]; none of them times, digests or records a run itself.
//!
//! A file is written on a second thread: the physics hands each record over (a copy, in
//! batches) and goes on, so formatting a CSV's numbers or compressing an MCAP chunk costs the
//! run only what the writer cannot keep up with. The channel between them is bounded, so
//! memory stays bounded however slow the disk.
//!
//! An interrupted run (`interrupt` set, e.g. by Ctrl-C) stops at its next step, finishes its
//! file as far as it got, marks it interrupted (the CSV's sidecar, the MCAP's metadata:
//! [`crate::recording::RunFile::interrupted`] reads it back) and reports it
//! ([`SimulationReport::interrupted`]).

use crate::recording::sidecar::Sidecar;
use crate::recording::{Recorder, RecorderError, RunEnd};
use crate::robot::Robot;
use crate::run::{
    LoadError, Prepared, Record, RecordBuf, RunDigest, RunError, RunRequest, RunSummary,
    SimulationReport, WallSplit, rtf, run_with,
};
use crate::trajectory::Trajectory;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// Records handed to the writer thread at once: few enough that the writer starts early,
/// enough that the hand-over costs nothing per record.
const BATCH: usize = 256;
/// Batches in flight between the physics and the writer at most (bounded memory: ~3 MB for
/// an 8-cable robot).
const BATCHES_IN_FLIGHT: usize = 16;

/// Where a job's records go.
pub enum Sink<'a> {
    /// Nowhere: the report only.
    None,
    /// A `.csv` (described by its sidecar, `meta`) or `.mcap` file (described in its
    /// metadata), written on a thread of its own.
    File { path: &'a Path, meta: Sidecar },
    /// Each record to a function, on the physics' thread (Python's arrays).
    Each(&'a mut dyn FnMut(&Record<'_>)),
}

/// What a job tells while it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Progress {
    /// The physics, this fraction done.
    Physics(f64),
    /// The physics is done; the metrics are being computed.
    Metrics,
}

/// Why a job could not run or its file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("starting the simulation")]
    Start(#[source] RunError),
    #[error("recording the run")]
    Record(#[source] RecorderError),
}

/// A run ready to go: the request prepared, the time its preparation took.
#[derive(Debug)]
pub struct Job {
    prepared: Prepared,
    remove_lag: bool,
    started: Instant,
    load_s: f64,
}

impl Job {
    /// The job of `request`: its robot and trajectory loaded, its options resolved, its length
    /// checked against the step budget. Its wall time starts here.
    pub fn new(request: &RunRequest) -> Result<Job, LoadError> {
        let started = Instant::now();
        let prepared = request.prepare()?;
        Ok(Job::timed(prepared, request, started))
    }

    /// The job of `request` on a robot and trajectory the caller already has (a sweep's
    /// robot with its parameters, Python's arrays).
    pub fn with(
        request: &RunRequest,
        robot: Robot,
        trajectory: Trajectory,
    ) -> Result<Job, LoadError> {
        let started = Instant::now();
        let prepared = request.prepare_with(robot, trajectory)?;
        Ok(Job::timed(prepared, request, started))
    }

    fn timed(prepared: Prepared, request: &RunRequest, started: Instant) -> Job {
        Job {
            prepared,
            remove_lag: request.remove_lag,
            started,
            load_s: started.elapsed().as_secs_f64(),
        }
    }

    /// The run as prepared (robot with its payload, trajectory at dt, options, warnings).
    pub fn prepared(&self) -> &Prepared {
        &self.prepared
    }

    /// Runs the job into `sink` and reports it. `progress` is told how far it is; `interrupt`,
    /// when set (from another thread or a signal handler), stops it at the next step: the
    /// file is finished as far as it got and marked interrupted, and so is the report. A
    /// run that stops early on a blow-up is reported (its `error`), its file finished.
    pub fn run(
        self,
        sink: Sink<'_>,
        progress: &mut dyn FnMut(Progress),
        interrupt: Option<&AtomicBool>,
    ) -> Result<SimulationReport, JobError> {
        let Job {
            prepared,
            remove_lag,
            started,
            load_s,
        } = self;
        let Prepared {
            robot,
            trajectory,
            options,
            ..
        } = prepared;
        let interrupted = || interrupt.is_some_and(|flag| flag.load(Ordering::Relaxed));
        let mut digest = RunDigest::new(&robot, &trajectory, &options);
        let mut tick = |fraction: f64| progress(Progress::Physics(fraction));
        let (summary, waited) = match sink {
            Sink::None | Sink::Each(_) => {
                let mut each = match sink {
                    Sink::Each(f) => Some(f),
                    _ => None,
                };
                let summary = run_with(&robot, trajectory, &options, &mut tick, &mut |r| {
                    digest.push(r);
                    if let Some(f) = each.as_mut() {
                        f(r);
                    }
                    if interrupted() {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                })
                .map_err(JobError::Start)?;
                (summary, Waited::default())
            }
            Sink::File { path, meta } => {
                let recorder = Recorder::create(path, &robot, &trajectory, &meta)
                    .map_err(JobError::Record)?
                    .with_dt(options.config.dt);
                let run = |on_record: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>| {
                    run_with(&robot, trajectory, &options, &mut tick, &mut |r| {
                        digest.push(r);
                        if on_record(r).is_break() || interrupted() {
                            ControlFlow::Break(())
                        } else {
                            ControlFlow::Continue(())
                        }
                    })
                };
                let (summary, written) = write_behind(recorder, run, &|summary| RunEnd {
                    interrupted: interrupted(),
                    simulated_s: summary.simulated_s,
                });
                let summary = summary.map_err(JobError::Start)?;
                let waited = written.map_err(JobError::Record)?;
                (summary, waited)
            }
        };
        progress(Progress::Metrics);
        let measuring = Instant::now();
        let mut report = digest.report(&summary, remove_lag);
        let metrics_s = measuring.elapsed().as_secs_f64();
        report.interrupted = interrupted() && summary.stopped;
        report.records = summary.records;
        report.wall_s = started.elapsed().as_secs_f64();
        report.rtf = rtf(summary.simulated_s, report.wall_s);
        // The physics is the stepping loop less its waits for the writer; the output, those
        // waits and the file's end (the writer's own work overlaps the physics).
        let physics_s = (summary.wall_s - waited.in_loop).max(0.0);
        let output_s = waited.in_loop + waited.after;
        report.wall_split = Some(WallSplit {
            load_s,
            physics_s,
            output_s,
            metrics_s,
            other_s: (report.wall_s - load_s - physics_s - output_s - metrics_s).max(0.0),
        });
        Ok(report)
    }
}

/// How a run went and what was written, as [`write_behind`] returns them: the run's summary
/// (or why it could not start) and the seconds the run waited for the writer (or why the
/// file could not be written).
type Written = (Result<RunSummary, RunError>, Result<Waited, RecorderError>);

/// Seconds the run waited for its writer: inside the stepping loop (a full channel), and
/// after it (the last records, the file's end).
#[derive(Debug, Clone, Copy, Default)]
struct Waited {
    in_loop: f64,
    after: f64,
}

/// Runs `run` with its records written to `recorder` on a second thread, then finishes the
/// file with the end `end` makes of the summary. A write error stops the run at its next
/// record and is returned (the file is left as the error left it).
fn write_behind(
    recorder: Recorder,
    run: impl FnOnce(&mut dyn FnMut(&Record<'_>) -> ControlFlow<()>) -> Result<RunSummary, RunError>,
    end: &dyn Fn(&RunSummary) -> RunEnd,
) -> Written {
    let (to_writer, batches) = mpsc::sync_channel::<Vec<RecordBuf>>(BATCHES_IN_FLIGHT);
    let failed = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let failed = &failed;
        let writer = scope.spawn(move || -> Result<Recorder, RecorderError> {
            let mut recorder = recorder;
            for batch in batches {
                for r in &batch {
                    if let Err(e) = recorder.write(&r.as_record()) {
                        failed.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
            Ok(recorder)
        });
        let mut waited = 0.0;
        let mut batch = Vec::with_capacity(BATCH);
        let hand_over = |batch: &mut Vec<RecordBuf>, waited: &mut f64| {
            let full = std::mem::replace(batch, Vec::with_capacity(BATCH));
            let sending = Instant::now();
            // A writer that has stopped (its error is returned below) takes no more.
            let _ = to_writer.send(full);
            *waited += sending.elapsed().as_secs_f64();
        };
        let summary = run(&mut |r| {
            batch.push(r.to_buf());
            if batch.len() == BATCH {
                hand_over(&mut batch, &mut waited);
            }
            if failed.load(Ordering::Relaxed) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        if !batch.is_empty() {
            hand_over(&mut batch, &mut waited);
        }
        drop(to_writer);
        let in_loop = waited;
        let finishing = Instant::now();
        let written = match writer.join() {
            Ok(Ok(recorder)) => {
                let end = match &summary {
                    Ok(s) => end(s),
                    Err(_) => RunEnd::default(),
                };
                recorder.finish_as(&end)
            }
            Ok(Err(e)) => Err(e),
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let after = finishing.elapsed().as_secs_f64();
        (summary, written.map(|()| Waited { in_loop, after }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinematics::Pose;
    use crate::recording::{RunFile, sidecar};
    use crate::sim::{ControlMode, ModelKind};

    /// silva4 held at home for 2 s at 1 ms, elastic, ideal winches.
    fn job() -> Job {
        let robot = crate::fixtures::robot("silva4");
        let traj = crate::run::hold(Pose::from_array(robot.home), 2.0, 1e-3);
        let request = RunRequest {
            model: ModelKind::ELASTIC,
            control: Some(ControlMode::Ideal),
            ..RunRequest::default()
        };
        Job::with(&request, robot, traj).expect("prepares")
    }

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("cdpr-job-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    #[test]
    fn a_run_reports_the_same_whatever_its_sink_and_its_file_holds_every_record() {
        let bare = job().run(Sink::None, &mut |_| {}, None).expect("runs");
        let mut seen = 0u64;
        let each = job()
            .run(Sink::Each(&mut |_| seen += 1), &mut |_| {}, None)
            .expect("runs");
        let path = dir().join("whole.csv");
        let meta = Sidecar::new("whole");
        let filed = job()
            .run(Sink::File { path: &path, meta }, &mut |_| {}, None)
            .expect("runs");
        for r in [&bare, &each, &filed] {
            assert_eq!(r.steps, 2000);
            assert_eq!(r.records, 2001);
            assert!(!r.interrupted);
            let split = r.wall_split.expect("timed");
            let sum = split.load_s + split.physics_s + split.output_s + split.metrics_s;
            assert!(sum <= r.wall_s + 1e-9 && split.other_s >= 0.0, "{split:?}");
        }
        assert_eq!(seen, 2001);
        assert_eq!(
            serde_json::to_value(&bare.tracking).expect("json"),
            serde_json::to_value(&filed.tracking).expect("json")
        );
        assert_eq!(bare.tension_max, filed.tension_max);
        let file = RunFile::open(&path).expect("reads");
        assert_eq!(file.len(), 2001);
        assert!(!file.interrupted());
        assert!(
            !sidecar::read(&path)
                .expect("reads")
                .expect("there")
                .interrupted
        );
    }

    #[test]
    fn an_interrupted_run_finishes_its_file_where_it_stopped_and_says_so() {
        for name in ["cut.csv", "cut.mcap"] {
            let path = dir().join(name);
            let flag = AtomicBool::new(false);
            let mut progress = |p: Progress| {
                if matches!(p, Progress::Physics(f) if f >= 0.25) {
                    flag.store(true, Ordering::Relaxed);
                }
            };
            let meta = Sidecar::new("cut");
            let report = job()
                .run(Sink::File { path: &path, meta }, &mut progress, Some(&flag))
                .expect("runs");
            assert!(report.interrupted, "{name}");
            let ended = report.simulated_s.expect("some steps");
            assert!((0.4..1.0).contains(&ended), "{name}: {ended}");
            assert!(report.records < 1001, "{name}: {}", report.records);
            let file = RunFile::open(&path).expect("reads");
            assert!(file.interrupted(), "{name}");
            assert_eq!(file.len() as u64, report.records, "{name}");
            assert_eq!(file.time(file.len() - 1), ended, "{name}");
            if name.ends_with(".csv") {
                let meta = sidecar::read(&path).expect("reads").expect("there");
                assert!(meta.interrupted && meta.ended_s == Some(ended), "{meta:?}");
            }
        }
    }
}
