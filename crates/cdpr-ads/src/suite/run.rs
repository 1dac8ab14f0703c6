//! Running a suite: each scenario's shadow against its PLC, recorded, its conditions'
//! symbols watched in every sample, then judged ([`super::verdict`]).
//!
//! Scenarios on the virtual PLC run in-process and hand-stepped: the PLC's NC and PLC tasks
//! tick on a clock of their own and the shadow cycles on the same clock, with no socket and no
//! sleep. A run is as fast as its physics and gives the same record, bit for bit, on every
//! run (whatever the machine's load), so their verdicts never flake; they run side by side on
//! [`RunSettings::jobs`] threads. Scenarios against a PLC at an address run one at a time, in
//! real time, through the same connection `cdpr shadow` makes.

use super::spec::{Condition, PlcTarget, Scenario, Suite, SuiteError};
use super::verdict::{self, Verdict};
use super::watch::{self, Watch};
use crate::PlcSymbols;
use crate::link::{InProcessTransport, Interrupt, ShadowLink, WritePolicy};
use crate::requests::PlcRequest;
use crate::server::{PlcCore, PlcMemory, SymbolTable, Timing};
use crate::shadow::{self, CycleStatus, CycleTiming, Recorder, Shadow, ShadowSetup, Summary};
use crate::wire::IecType;
use cdpr_core::preflight::{self, PreflightReport, PreflightRequest};
use cdpr_core::robot::Robot;
use cdpr_core::text::error_chain;
use cdpr_core::trajectory::{self, BuiltinOptions, Trajectory};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the virtual PLC's run lasts past its trajectory by default, s: the platform settles.
pub const SETTLE_S: f64 = 0.5;

/// How a suite is run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Where each scenario's record is written (`NNN-name.csv`).
    pub records: PathBuf,
    /// Virtual-PLC scenarios run at once.
    pub jobs: usize,
}

/// A scenario's run: its record, the shadow's statistics, what each condition saw.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    pub record: PathBuf,
    pub summary: Summary,
    /// Shadow time at the end, s.
    pub simulated: f64,
    /// Wall-clock time the run took, s.
    pub wall: f64,
    /// Per condition, in the scenario's order.
    pub watches: Vec<Watch>,
    /// The trajectory's pre-flight, when the scenario expects it.
    pub preflight: Option<PreflightReport>,
    /// Why the shadow stopped before the end (the PLC lost, Ctrl-C): the record and the
    /// figures up to then are kept, and the scenario is an error whatever its verdicts.
    pub stopped: Option<String>,
}

/// One scenario's result.
#[derive(Debug, Clone)]
pub struct ScenarioResult {
    pub name: String,
    /// Its `[[scenario]]` line.
    pub line: usize,
    /// Its run, or why it could not run.
    pub run: Result<ScenarioRun, String>,
    /// One per expectation and condition, in the suite's order (none when it could not run).
    pub verdicts: Vec<Verdict>,
}

impl ScenarioResult {
    /// Whether it ran to its end and every expectation held.
    pub fn passed(&self) -> bool {
        self.error().is_none() && self.verdicts.iter().all(|v| v.passed)
    }

    /// Why the scenario is an error rather than a verdict: it could not run, or stopped early.
    pub fn error(&self) -> Option<&str> {
        match &self.run {
            Err(e) => Some(e),
            Ok(run) => run.stopped.as_deref(),
        }
    }

    pub fn failures(&self) -> usize {
        self.verdicts.iter().filter(|v| !v.passed).count()
    }
}

/// What a suite's run tells its face as it goes.
pub trait Observer: Sync {
    /// A scenario ended (called from the thread that ran it).
    fn finished(&self, result: &ScenarioResult);
    /// A scenario against a PLC at an address runs (they run one at a time, in real time):
    /// its shadow time and its duration, s; after each exchange.
    fn running(&self, _scenario: &str, _time: f64, _duration: f64) {}
}

/// A function of each result is an observer that hears of the ends only.
impl<F: Fn(&ScenarioResult) + Sync> Observer for F {
    fn finished(&self, result: &ScenarioResult) {
        self(result)
    }
}

/// The symbols a scenario's conditions read, each once, and where each condition's is.
fn watched(conditions: &[Condition]) -> (Vec<String>, Vec<usize>) {
    let mut names: Vec<String> = Vec::new();
    let at = conditions
        .iter()
        .map(
            |c| match names.iter().position(|n| n.eq_ignore_ascii_case(&c.symbol)) {
                Some(k) => k,
                None => {
                    names.push(c.symbol.clone());
                    names.len() - 1
                }
            },
        )
        .collect();
    (names, at)
}

/// The refusal of condition `c`, at its line.
fn refuse(file: &Path, c: &Condition, message: String) -> SuiteError {
    SuiteError::Invalid {
        file: file.display().to_string(),
        line: c.line,
        field: format!("{}.symbol", c.field),
        message,
    }
}

/// Checks every condition's symbol against the types the PLC declares (`types`, in the order
/// of `names`).
fn check_types<'a>(
    file: &Path,
    conditions: &[Condition],
    at: &[usize],
    types: impl Fn(usize) -> Option<&'a IecType>,
) -> Result<(), SuiteError> {
    for (c, &k) in conditions.iter().zip(at) {
        if let Some(ty) = types(k) {
            watch::check_type(c, ty).map_err(|m| refuse(file, c, m))?;
        }
    }
    Ok(())
}

/// The robot and the trajectory a virtual-PLC scenario plays, the trajectory sampled at the NC
/// task's period (as `cdpr plc` samples it).
fn robot_and_trajectory(s: &Scenario, plc: &PlcRequest) -> Result<(Robot, Trajectory), String> {
    let robot = s.run.load_robot().map_err(|e| error_chain(&e))?;
    let spec = s.run.trajectory_spec().map_err(|e| e.to_string())?;
    let options = BuiltinOptions {
        dt: plc.nc.as_secs_f64(),
        ..s.run.builtin_options()
    };
    let trajectory = trajectory::load(spec, &robot, &options)
        .map_err(|e| format!("loading the trajectory `{spec}`: {}", error_chain(&e)))?;
    Ok((robot, trajectory))
}

impl Suite {
    /// The suite's scenarios whose names contain `filter` (all without one); none is an error
    /// that lists the names.
    pub fn select(mut self, filter: Option<&str>) -> Result<Suite, SuiteError> {
        let Some(filter) = filter else {
            return Ok(self);
        };
        let names: Vec<String> = self.scenarios.iter().map(|s| s.name.clone()).collect();
        self.scenarios.retain(|s| s.name.contains(filter));
        if self.scenarios.is_empty() {
            return Err(SuiteError::File {
                file: self.file.display().to_string(),
                message: format!(
                    "no scenario's name contains `{filter}`; its scenarios: {}",
                    names.join(", ")
                ),
            });
        }
        Ok(self)
    }

    /// Checks what can be checked before anything runs: each virtual-PLC scenario's robot
    /// and trajectory load, and its conditions' symbols exist in the virtual PLC's table with
    /// a type that fits (a real PLC's are checked when its scenario connects).
    pub fn check(&self) -> Result<(), SuiteError> {
        let file = self.file.as_path();
        for s in &self.scenarios {
            let PlcTarget::Virtual(plc) = &s.plc else {
                continue;
            };
            let at_scenario = |message: String| SuiteError::Invalid {
                file: file.display().to_string(),
                line: s.line,
                field: format!("scenario \"{}\"", s.name),
                message,
            };
            let (robot, _) = robot_and_trajectory(s, plc).map_err(at_scenario)?;
            let table = SymbolTable::from_robot(&robot).map_err(|e| at_scenario(e.to_string()))?;
            let (names, at) = watched(&s.conditions);
            let types: Vec<Option<IecType>> = names
                .iter()
                .map(|n| table.lookup_str(n).map(|r| r.ty))
                .collect();
            for (c, &k) in s.conditions.iter().zip(&at) {
                if types[k].is_none() {
                    return Err(refuse(
                        file,
                        c,
                        format!(
                            "the virtual PLC has no symbol `{}` (it holds the shadow's GVL: {})",
                            c.symbol,
                            table
                                .symbols()
                                .iter()
                                .map(|s| s.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
            check_types(file, &s.conditions, &at, |k| types[k].as_ref())?;
        }
        Ok(())
    }
}

/// The record of scenario `index` in `dir`: `NNN-name.csv`, the name kept to letters, digits,
/// `-` and `_`.
pub fn record_path(dir: &Path, index: usize, name: &str) -> PathBuf {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    dir.join(format!("{:03}-{slug}.csv", index + 1))
}

/// Runs every scenario of `suite` (virtual ones in parallel, then the others one at a time),
/// telling `observer` as they go; `stop` (Ctrl-C) ends the running ones early, as errors, and
/// starts no more. Results come back in the suite's order.
pub fn run_suite(
    suite: &Suite,
    settings: &RunSettings,
    stop: &Interrupt,
    observer: &dyn Observer,
) -> Result<Vec<ScenarioResult>, SuiteError> {
    std::fs::create_dir_all(&settings.records).map_err(|e| SuiteError::File {
        file: settings.records.display().to_string(),
        message: format!("creating the records' directory: {e}"),
    })?;
    let n = suite.scenarios.len();
    let results: Mutex<Vec<Option<ScenarioResult>>> = Mutex::new(vec![None; n]);
    let store = |k: usize, r: ScenarioResult| {
        observer.finished(&r);
        if let Ok(mut all) = results.lock() {
            all[k] = Some(r);
        }
    };
    let virtual_ones: Vec<usize> = (0..n)
        .filter(|&k| matches!(suite.scenarios[k].plc, PlcTarget::Virtual(_)))
        .collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..settings.jobs.clamp(1, virtual_ones.len().max(1)) {
            scope.spawn(|| {
                while let Some(&k) = virtual_ones.get(next.fetch_add(1, Ordering::Relaxed)) {
                    store(k, run_scenario(suite, k, settings, stop, observer));
                }
            });
        }
    });
    for k in (0..n).filter(|k| !virtual_ones.contains(k)) {
        store(k, run_scenario(suite, k, settings, stop, observer));
    }
    let all = results.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(all.into_iter().flatten().collect())
}

/// Runs scenario `k` and judges it.
pub fn run_scenario(
    suite: &Suite,
    k: usize,
    settings: &RunSettings,
    stop: &Interrupt,
    observer: &dyn Observer,
) -> ScenarioResult {
    let s = &suite.scenarios[k];
    let record = record_path(&settings.records, k, &s.name);
    let started = Instant::now();
    let run = if stop.raised() {
        Err("not run: the suite was interrupted".to_string())
    } else {
        match &s.plc {
            PlcTarget::Virtual(plc) => run_virtual(s, plc, &record, stop),
            PlcTarget::Address {
                plc,
                ams_net_id,
                secure,
            } => {
                let target = Target {
                    plc,
                    ams_net_id: *ams_net_id,
                    secure,
                };
                run_address(suite, s, &target, &record, stop, observer)
            }
        }
    };
    let run = run.map(|mut r| {
        r.wall = started.elapsed().as_secs_f64();
        r
    });
    let verdicts = match &run {
        Ok(r) => verdict::judge(s, r).unwrap_or_else(|e| {
            vec![Verdict::broken(
                "record",
                format!("reading {}: {}", r.record.display(), error_chain(&e)),
            )]
        }),
        Err(_) => Vec::new(),
    };
    ScenarioResult {
        name: s.name.clone(),
        line: s.line,
        run,
        verdicts,
    }
}

/// The pre-flight of `trajectory`, when the scenario expects it.
fn preflight_of(
    s: &Scenario,
    robot: &Robot,
    trajectory: &Trajectory,
) -> Result<Option<PreflightReport>, String> {
    if !s.expect.preflight {
        return Ok(None);
    }
    let options = PreflightRequest::default()
        .options(robot)
        .map_err(|e| format!("pre-flight: {}", error_chain(&e)))?;
    preflight::run(robot, trajectory, &options)
        .map(Some)
        .map_err(|e| format!("pre-flight: {}", error_chain(&e)))
}

/// Takes the watched values of an exchange at shadow time `t`.
fn observe(watches: &mut [Watch], conditions: &[Condition], at: &[usize], t: f64, values: &[f64]) {
    for ((w, c), &k) in watches.iter_mut().zip(conditions).zip(at) {
        if let Some(&v) = values.get(k) {
            w.observe(c, t, v);
        }
    }
}

/// A scenario on the virtual PLC, in-process and hand-stepped (see the module's docs).
fn run_virtual(
    s: &Scenario,
    plc: &PlcRequest,
    record: &Path,
    stop: &Interrupt,
) -> Result<ScenarioRun, String> {
    let (robot, trajectory) = robot_and_trajectory(s, plc)?;
    let preflight = preflight_of(s, &robot, &trajectory)?;
    let fail = |what: &str, e: &dyn std::error::Error| format!("{what}: {e}");
    let table = SymbolTable::from_robot(&robot).map_err(|e| fail("the PLC's symbols", &e))?;
    let timing = Timing {
        task: plc.task,
        nc: plc.nc,
        hold: plc.hold,
    };
    let duration = s
        .duration
        .unwrap_or(plc.hold.as_secs_f64() + trajectory.duration() + SETTLE_S);
    let mut core = PlcCore::new(&robot, trajectory, PlcMemory::new(table), timing)
        .map_err(|e| fail("the virtual PLC", &e))?;
    let (names, at) = watched(&s.conditions);
    let symbols = PlcSymbols {
        watched: names,
        ..PlcSymbols::of(&robot).map_err(|e| fail("the robot's [plc] symbols", &e))?
    };
    let policy = if s.write {
        WritePolicy::AllowListed
    } else {
        WritePolicy::ReadOnly
    };
    let link = ShadowLink::connect(
        InProcessTransport::new(Arc::clone(core.memory())),
        &symbols,
        policy,
    )
    .map_err(|e| fail("linking to the virtual PLC", &e))?;
    let (surrogate, _) = s
        .run
        .load_surrogate(Some(&robot))
        .map_err(|e| error_chain(&e))?;
    let setup = ShadowSetup::from_requests("virtual", None, &s.link, &s.run, None, surrogate);
    let mut config = setup.config;
    config.write = s.write;
    config.realtime = false;
    let mut shadow = Shadow::new(link, Some(robot), config).map_err(|e| error_chain(&e))?;
    let recorder = Recorder::create(record, shadow.robot(), shadow.actuals()).map_err(|e| {
        format!(
            "creating the record {}: {}",
            record.display(),
            error_chain(&e)
        )
    })?;
    shadow.record_to(recorder);
    let mut watches = vec![Watch::default(); s.conditions.len()];
    let nc = plc.nc;
    let ticks = (duration / nc.as_secs_f64()).ceil() as u64;
    let free_period = match shadow.config().timing {
        CycleTiming::Free { period, .. } => Some(period),
        CycleTiming::Lockstep { .. } => None,
    };
    let origin = Instant::now();
    let mut next_cycle = free_period.unwrap_or(nc);
    let mut stopped = None;
    let mut outcome = Ok(());
    'ticks: for tick in 1..=ticks {
        if stop.raised() {
            stopped = Some("interrupted (Ctrl-C) before its end".to_string());
            break;
        }
        core.tick();
        let now = nc * u32::try_from(tick).unwrap_or(u32::MAX);
        // Lockstep polls after every NC tick; free-running cycles on its own period.
        let period = free_period.unwrap_or(nc);
        while next_cycle <= now {
            match shadow.cycle_at(origin + next_cycle) {
                Ok(report) if report.status == CycleStatus::Exchanged => {
                    let t = shadow.time();
                    observe(
                        &mut watches,
                        &s.conditions,
                        &at,
                        t,
                        &shadow.last_inputs().watched,
                    );
                }
                Ok(_) => {}
                Err(e) => {
                    outcome = Err(e);
                    break 'ticks;
                }
            }
            next_cycle += period;
        }
    }
    let end = origin + nc * u32::try_from(ticks).unwrap_or(u32::MAX);
    let ended = outcome.and_then(|()| shadow.end_at(end, shadow.config().lost_after));
    let finished = shadow.finish();
    if let Err(e) = ended.and(finished) {
        stopped.get_or_insert(error_chain(&e));
    }
    Ok(ScenarioRun {
        record: record.to_path_buf(),
        summary: shadow.summary(),
        simulated: shadow.time(),
        wall: 0.0,
        watches,
        preflight,
        stopped,
    })
}

/// The PLC a scenario runs against, at an address.
struct Target<'a> {
    plc: &'a str,
    ams_net_id: Option<crate::wire::AmsNetId>,
    secure: &'a crate::secure::SecureOptions,
}

/// A scenario against the PLC at an address, in real time, as `cdpr shadow` runs.
fn run_address(
    suite: &Suite,
    s: &Scenario,
    target: &Target,
    record: &Path,
    stop: &Interrupt,
    observer: &dyn Observer,
) -> Result<ScenarioRun, String> {
    let (address, ams_net_id) = (target.plc, target.ams_net_id);
    let secure = target.secure.client(None).map_err(|e| e.to_string())?;
    let robot = s.run.load_robot().map_err(|e| error_chain(&e))?;
    let (surrogate, _) = s
        .run
        .load_surrogate(Some(&robot))
        .map_err(|e| error_chain(&e))?;
    let (names, at) = watched(&s.conditions);
    let mut setup =
        ShadowSetup::from_requests(address, ams_net_id, &s.link, &s.run, Some(robot), surrogate);
    setup.config.write = s.write;
    setup.record = Some(record.to_path_buf());
    setup.watched = names;
    setup.secure = secure;
    // The scenario's own stop: raised by the suite's (Ctrl-C) or at the scenario's end, so
    // that a request blocked then (a stalled PLC) does not hold the run past it.
    let interrupt = Interrupt::new();
    setup.interrupt = interrupt.clone();
    let duration = Duration::from_secs_f64(s.duration.unwrap_or(1.0));
    let ends = Instant::now() + duration;
    let guard = {
        let (stop, interrupt) = (stop.clone(), interrupt.clone());
        std::thread::spawn(move || {
            while Instant::now() < ends && !stop.raised() && !interrupt.raised() {
                std::thread::sleep(Duration::from_millis(20));
            }
            interrupt.raise();
        })
    };
    let result = run_connected(suite, s, &setup, &at, duration, stop, observer);
    interrupt.raise();
    let _ = guard.join();
    result
}

fn run_connected(
    suite: &Suite,
    s: &Scenario,
    setup: &ShadowSetup,
    at: &[usize],
    duration: Duration,
    stop: &Interrupt,
    observer: &dyn Observer,
) -> Result<ScenarioRun, String> {
    let mut shadow = match shadow::connect(setup) {
        Ok(c) => c.shadow,
        Err(e) => {
            let text = error_chain(&e);
            // A symbol the PLC lacks, at the line of the condition that reads it.
            let lower = text.to_ascii_lowercase();
            return Err(
                match s
                    .conditions
                    .iter()
                    .find(|c| lower.contains(&c.symbol.to_ascii_lowercase()))
                {
                    Some(c) => refuse(&suite.file, c, text).to_string(),
                    None => text,
                },
            );
        }
    };
    let types: Vec<IecType> = shadow
        .controller()
        .watched()
        .map(|(_, t)| t.clone())
        .collect();
    check_types(&suite.file, &s.conditions, at, |k| types.get(k)).map_err(|e| e.to_string())?;
    let mut watches = vec![Watch::default(); s.conditions.len()];
    let outcome = shadow::run_with(
        &mut shadow,
        Some(duration),
        setup.interrupt.flag(),
        |shadow, report| {
            if report.status == CycleStatus::Exchanged {
                let t = shadow.time();
                observe(
                    &mut watches,
                    &s.conditions,
                    at,
                    t,
                    &shadow.last_inputs().watched,
                );
                observer.running(&s.name, t, duration.as_secs_f64());
            }
        },
    );
    let stopped = match outcome {
        Err(e) => Some(error_chain(&e)),
        Ok(()) if stop.raised() => Some("interrupted (Ctrl-C) before its end".to_string()),
        Ok(()) => None,
    };
    Ok(ScenarioRun {
        record: setup.record.clone().unwrap_or_default(),
        summary: shadow.summary(),
        simulated: shadow.time(),
        wall: 0.0,
        watches,
        preflight: None,
        stopped,
    })
}

/// How a suite's scenarios ended: passed (ran to the end, every expectation held), failed (an
/// expectation violated), errors (could not run or stopped early).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
}

impl Tally {
    pub fn of(results: &[ScenarioResult]) -> Tally {
        let errors = results.iter().filter(|r| r.error().is_some()).count();
        let passed = results.iter().filter(|r| r.passed()).count();
        Tally {
            passed,
            failed: results.len() - passed - errors,
            errors,
        }
    }
}

/// `4 scenarios: 3 passed, 1 failed, 0 errors`.
impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.passed + self.failed + self.errors;
        write!(
            f,
            "{n} scenario{}: {} passed, {} failed, {} errors",
            if n == 1 { "" } else { "s" },
            self.passed,
            self.failed,
            self.errors
        )
    }
}

/// One verdict as `cdpr test --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VerdictReport {
    pub name: String,
    pub passed: bool,
    pub measured: String,
    pub bound: String,
    /// s of shadow time.
    pub at: Option<f64>,
}

/// One scenario as `cdpr test --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScenarioReport {
    pub name: String,
    pub line: usize,
    pub passed: bool,
    /// Why it could not run or stopped early.
    pub error: Option<String>,
    pub record: Option<PathBuf>,
    pub simulated_s: Option<f64>,
    pub wall_s: Option<f64>,
    pub verdicts: Vec<VerdictReport>,
    /// The shadow's statistics (`cdpr shadow --json`'s).
    pub shadow: Option<Summary>,
}

/// The suite's results as `cdpr test --json` prints them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SuiteReport {
    pub suite: PathBuf,
    #[serde(flatten)]
    pub tally: Tally,
    pub scenarios: Vec<ScenarioReport>,
}

impl SuiteReport {
    pub fn new(suite: &Path, results: &[ScenarioResult]) -> SuiteReport {
        SuiteReport {
            suite: suite.to_path_buf(),
            tally: Tally::of(results),
            scenarios: results
                .iter()
                .map(|r| {
                    let run = r.run.as_ref().ok();
                    ScenarioReport {
                        name: r.name.clone(),
                        line: r.line,
                        passed: r.passed(),
                        error: r.error().map(str::to_string),
                        record: run.map(|x| x.record.clone()),
                        simulated_s: run.map(|x| x.simulated),
                        wall_s: run.map(|x| x.wall),
                        verdicts: r
                            .verdicts
                            .iter()
                            .map(|v| VerdictReport {
                                name: v.name.clone(),
                                passed: v.passed,
                                measured: v.measured.clone(),
                                bound: v.bound.clone(),
                                at: v.at,
                            })
                            .collect(),
                        shadow: run.map(|x| x.summary.clone()),
                    }
                })
                .collect(),
        }
    }
}
