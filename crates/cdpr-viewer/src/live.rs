//! Live mode: the viewer draws the ADS shadow of a controller (`cdpr view --plc`).
//!
//! The [`Shadow`] runs on a thread of its own, in [`shadow::run_with`] — the same loop, the
//! same cycle timing and the same physics as headless `cdpr shadow` — and after each cycle
//! publishes what the viewer draws into a shared [`Snapshot`] (a cheap copy under a mutex,
//! outside the cycle's measured time). The viewer's frames only read that snapshot: a slow
//! frame cannot delay an exchange with the PLC, and closing the window cannot lose the record
//! (the thread flushes it when [`LiveHandle::finish`] stops it).
//!
//! The ghost is the controller's commanded pose as the shadow solves it
//! ([`Shadow::commanded_pose`]: forward kinematics of the commanded lengths the physics
//! follows, rigid cables, warm-started — once per recorded step, or once per cycle when asked
//! here), read on the shadow's thread after each cycle. Trail and plot samples are taken every
//! [`SAMPLE_EVERY`] physics steps.

use super::sampling::{SAMPLE_EVERY, TRAIL_SAMPLES};
use cdpr_ads::link::{Controller, Interrupt};
use cdpr_ads::shadow::{self, CycleReport, CycleStatus, Shadow, ShadowError, Summary};
use cdpr_core::kinematics::Pose;
use cdpr_core::robot::Robot;
use cdpr_core::sim::SimState;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the shadow's statistics are summarised for the panel.
const SUMMARY_EVERY: Duration = Duration::from_millis(200);

/// The state of the link as the panel shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkState {
    /// Exchanging with the controller.
    Connected,
    /// The link is down since `since`; the shadow retries with back-off.
    Offline { since: Instant },
    /// The link is up but no new sample has come since `since` (`stopped`: the PLC said it is
    /// in STOP); the shadow holds.
    Stalled { since: Instant, stopped: bool },
    /// The shadow stopped (duration over, stop requested, or `error`).
    Stopped { error: Option<String> },
}

/// What the shadow thread publishes after each cycle.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub state: SimState,
    /// The controller's commanded pose (FK of the commanded lengths the physics follows).
    pub commanded: Pose,
    /// The commanded lengths the physics follows (the ghost's), m.
    pub commanded_lengths: Vec<f64>,
    /// Trail and plot samples since the viewer last took them: (state, commanded pose).
    pub samples: VecDeque<(SimState, Pose)>,
    pub link: LinkState,
    pub plc_cycle: u32,
    pub motion_enable: bool,
    /// Shadow time, s.
    pub time: f64,
    /// Physics steps since the start (resets and skips included).
    pub steps: u64,
    /// The shadow's statistics, refreshed every [`SUMMARY_EVERY`].
    pub summary: Summary,
    /// Samples refused so far (NaN, or a jump beyond the winches' reach).
    pub rejected: u64,
    pub last_status: Option<CycleStatus>,
}

/// Where the viewer is connected and how (the panel's header lines).
#[derive(Debug, Clone, Default)]
pub struct LiveInfo {
    /// The controller's address as the user gave it.
    pub address: String,
    /// Further lines: (name, value), e.g. AMS target, model, write mode, record.
    pub lines: Vec<(String, String)>,
}

/// The viewer's end of the live link: a [`Playback`](super::Playback) source.
pub struct LiveFeed {
    shared: Arc<Mutex<Snapshot>>,
    pub info: LiveInfo,
    pub robot: Robot,
    pub dt: f64,
    /// The last snapshot taken (its `samples` already moved into the history).
    pub latest: Snapshot,
}

impl LiveFeed {
    /// Takes the newest snapshot; returns the samples published since the last call.
    pub fn pull(&mut self) -> VecDeque<(SimState, Pose)> {
        let mut shared = lock(&self.shared);
        let samples = std::mem::take(&mut shared.samples);
        self.latest.clone_from(&shared);
        samples
    }
}

/// The CLI's end: stops the shadow thread and collects its outcome.
pub struct LiveHandle {
    stop: Interrupt,
    thread: Option<JoinHandle<LiveOutcome>>,
}

/// How the shadow thread ended.
pub struct LiveOutcome {
    pub summary: Summary,
    /// Shadow time reached, s.
    pub simulated: f64,
    /// `Err` when the shadow stopped on an error (the record is flushed either way).
    pub result: Result<(), ShadowError>,
}

impl LiveHandle {
    /// Asks the shadow to stop, waits for it (it flushes its record) and returns its outcome;
    /// `None` if the thread panicked.
    pub fn finish(mut self) -> Option<LiveOutcome> {
        self.stop.raise();
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl Drop for LiveHandle {
    fn drop(&mut self) {
        self.stop.raise();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn lock(shared: &Mutex<Snapshot>) -> MutexGuard<'_, Snapshot> {
    // A poisoned lock only means the other side panicked mid-copy: the data is still a
    // snapshot worth drawing.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Starts `shadow` on a thread of its own (until `duration`, or until the handle stops it)
/// and returns the viewer's feed and the handle. `stop` is the link's interrupt (the
/// [`ShadowSetup`](cdpr_ads::shadow::ShadowSetup)'s): the handle raises it, so that closing
/// the window ends a request blocked on a silent PLC at once.
pub fn spawn<C: Controller + Send + 'static>(
    mut shadow: Shadow<C>,
    info: LiveInfo,
    duration: Option<Duration>,
    stop: Interrupt,
) -> std::io::Result<(LiveFeed, LiveHandle)> {
    let robot = shadow.robot().clone();
    let dt = shadow.config().sim.dt;
    let commanded = shadow.start_report().tcp_pose;
    let first = Snapshot {
        state: shadow.state().clone(),
        commanded,
        commanded_lengths: shadow.commanded_lengths().to_vec(),
        // The start state is the playback's first sample already.
        samples: VecDeque::new(),
        link: LinkState::Connected,
        plc_cycle: shadow.last_inputs().cycle,
        motion_enable: shadow.last_inputs().motion_enable,
        time: shadow.time(),
        steps: 0,
        summary: shadow.summary(),
        rejected: 0,
        last_status: None,
    };
    let shared = Arc::new(Mutex::new(first.clone()));
    let thread = {
        let shared = Arc::clone(&shared);
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("cdpr-shadow".into())
            .spawn(move || {
                let mut publisher = Publisher::new(&shadow);
                let result = shadow::run_with(&mut shadow, duration, stop.flag(), |s, report| {
                    publisher.publish(s, report, &shared)
                });
                let summary = shadow.summary();
                let mut snapshot = lock(&shared);
                snapshot.summary = summary.clone();
                snapshot.link = LinkState::Stopped {
                    error: result.as_ref().err().map(|e| e.to_string()),
                };
                drop(snapshot);
                LiveOutcome {
                    summary,
                    simulated: shadow.time(),
                    result,
                }
            })?
    };
    let feed = LiveFeed {
        shared,
        info,
        robot,
        dt,
        latest: first,
    };
    Ok((
        feed,
        LiveHandle {
            stop,
            thread: Some(thread),
        },
    ))
}

/// The shadow thread's side: decides when to sample and what to copy.
struct Publisher {
    next_sample: u64,
    steps: u64,
    last_step: u64,
    last_summary: Instant,
    summary: Summary,
}

impl Publisher {
    fn new<C: Controller>(shadow: &Shadow<C>) -> Publisher {
        Publisher {
            next_sample: SAMPLE_EVERY,
            steps: 0,
            last_step: shadow.state().step,
            last_summary: Instant::now(),
            summary: shadow.summary(),
        }
    }

    fn publish<C: Controller>(
        &mut self,
        shadow: &Shadow<C>,
        report: &CycleReport,
        shared: &Mutex<Snapshot>,
    ) {
        let state = shadow.state();
        // The physics is re-settled after a reconnect or a PLC restart: its step count starts
        // again, ours goes on.
        let advanced = state.step.checked_sub(self.last_step).unwrap_or(state.step);
        self.last_step = state.step;
        self.steps += advanced;
        let sample = self.steps >= self.next_sample;
        if sample {
            self.next_sample = (self.steps / SAMPLE_EVERY + 1) * SAMPLE_EVERY;
        }
        let commanded = shadow.commanded_pose();
        let now = Instant::now();
        if now.duration_since(self.last_summary) >= SUMMARY_EVERY {
            self.summary = shadow.summary();
            self.last_summary = now;
        }
        let link = match (shadow.offline_since(), shadow.stalled_since()) {
            (Some(since), _) => LinkState::Offline { since },
            (None, Some((since, stopped))) => LinkState::Stalled { since, stopped },
            (None, None) => LinkState::Connected,
        };
        let mut snapshot = lock(shared);
        snapshot.state.clone_from(state);
        snapshot.commanded = commanded;
        snapshot.commanded_lengths.clear();
        snapshot
            .commanded_lengths
            .extend_from_slice(shadow.commanded_lengths());
        if sample {
            // An unread backlog (the view paused) keeps the newest trail's worth.
            if snapshot.samples.len() >= TRAIL_SAMPLES {
                snapshot.samples.pop_front();
            }
            snapshot.samples.push_back((state.clone(), commanded));
        }
        snapshot.link = link;
        snapshot.plc_cycle = shadow.last_inputs().cycle;
        snapshot.motion_enable = shadow.last_inputs().motion_enable;
        snapshot.time = shadow.time();
        snapshot.steps = self.steps;
        snapshot.summary.clone_from(&self.summary);
        snapshot.rejected = shadow.stats().rejected;
        snapshot.last_status = Some(report.status);
    }
}
