//! A TwinCAT stand-in: an NC task (2 ms) that interpolates a trajectory, runs it through the
//! inverse kinematics and hands each winch a set point within its velocity and acceleration
//! limits, and a PLC task (10 ms) that counts cycles, raises the motion-enable flag and reads
//! back what the shadow writes (seed 003, section 3.4: "the default cycle times for the PLC
//! and NC tasks were 10 ms and 2 ms").
//!
//! Both tasks run on one thread, the PLC task on every k-th NC tick: on a TwinCAT core the NC
//! task has the higher priority and the PLC cycle is a multiple of it, so this is the same
//! interleaving, and it is deterministic. The NC task moves the axes' set points; the PLC task
//! copies them into the GVL with its cycle counter, in one go (the MAIN of
//! `assets/twincat/README.md`: `aCmdLengths[i] := aAxes[i].NcToPlc.SetPos` beside
//! `nCycle := nCycle + 1`), so that the commands a client reads always belong to the counter
//! beside them, whenever it reads. [`PlcCore`] is the state machine (steppable from
//! tests, no clock); [`VirtualPlc`] runs it against the wall clock.
//!
//! Reaction time, in PLC cycles (seed 003, section 4.2, measured 11–18 through pyads and
//! CoppeliaSim, 2 on the real drives): the PLC publishes its cycle counter at the end of cycle
//! n; the shadow copies the counter it acted on into `shadow_cycle`; when the PLC task reads an
//! echo e at the start of cycle c, the reaction is c − e. One cycle is the least possible:
//! inputs are read at the start of a cycle, outputs published at its end. A second figure
//! follows seed 003 literally: PLC cycles from the first commanded length change to the first
//! change of the lengths the shadow writes back.
//!
//! Time: the PLC's time is its NC ticks × the NC period from its start (FILETIME
//! [`PlcCore::plc_filetime`]), whatever the wall clock does: every PLC cycle carries exactly
//! task ÷ NC ticks. [`VirtualPlc`] keeps an absolute schedule; a PLC cycle that starts more
//! than one task period late is counted ([`PlcStats::late_cycles`]) and run late, never
//! skipped (the cycles behind run back to back until the schedule is met again). After each
//! PLC cycle a hook ([`PlcCore::set_cycle_hook`]) lets the ADS server sample its
//! notifications with that cycle's outputs and time stamp.

use super::memory::{self, PlcMemory};
use super::symbols::SymbolRef;
use crate::units::{pose_to_plc, to_mm};
use crate::wire::{self, ads_state};
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::trajectory::Trajectory;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub mod drives;
mod limiter;
mod stats;

pub use limiter::WinchLimiter;
pub use stats::{PlcStats, ReactionStats};

/// Task periods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// PLC task period (seed 003: 10 ms).
    pub task: Duration,
    /// NC task period (seed 003: 2 ms); the task period must be a whole multiple of it.
    pub nc: Duration,
    /// Time the axes hold the start pose, motion disabled, before the trajectory starts.
    pub hold: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            task: Duration::from_millis(10),
            nc: Duration::from_millis(2),
            hold: Duration::from_millis(200),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PlcError {
    #[error("the PLC task period {task:?} must be a whole multiple (≥ 1) of the NC period {nc:?}")]
    Timing { task: Duration, nc: Duration },
    #[error("symbol `{0}` is missing from the symbol table")]
    MissingSymbol(String),
    #[error("{0}")]
    Symbols(#[from] super::symbols::SymbolError),
    #[error(transparent)]
    Names(#[from] cdpr_core::robot::RobotFileError),
    /// The drives cannot be emulated (no drives, another cable count, a bad window).
    #[error("{0}")]
    Drives(String),
    /// The error's text is the message: it is not also its source (a chain would print it
    /// twice).
    #[error("cannot start the PLC: {0}")]
    Io(std::io::Error),
}

impl From<std::io::Error> for PlcError {
    fn from(e: std::io::Error) -> PlcError {
        PlcError::Io(e)
    }
}

struct Refs {
    frame_anchors: SymbolRef,
    platform_anchors: SymbolRef,
    lengths: SymbolRef,
    cable_angles: SymbolRef,
    tcp_pose: SymbolRef,
    commanded: SymbolRef,
    cycle: SymbolRef,
    enable: SymbolRef,
    shadow_lengths: SymbolRef,
    shadow_cycle: SymbolRef,
    reaction: SymbolRef,
    /// Radii and axes, served when the robot has swivel pulleys.
    pulleys: Option<(SymbolRef, SymbolRef)>,
}

/// Threshold for "a length changed", m (0.01 mm: far below a step of any motion, far above
/// rounding).
const MOVED: f64 = 1e-5;

/// What the PLC task calls after each cycle: (cycle, the PLC's time at its end as FILETIME).
pub type CycleFn = Box<dyn FnMut(u32, u64) + Send>;
/// What holds the trajectory's start (`--wait-for-client`): true once it may start.
pub type StartGate = Box<dyn Fn() -> bool + Send>;

/// The controller's state machine. Stepped by [`PlcCore::tick`], one NC period per call.
pub struct PlcCore {
    robot: Robot,
    trajectory: Trajectory,
    memory: Arc<PlcMemory>,
    refs: Refs,
    nc_dt: f64,
    ticks_per_task: u64,
    hold_ticks: u64,
    limiter: WinchLimiter,
    start_lengths: Vec<f64>,
    last_echo: u32,
    command_moved_at: Option<u32>,
    shadow_baseline: Option<Vec<f64>>,
    stats: PlcStats,
    /// The wall clock at the PLC's start, FILETIME: its time zero.
    start_filetime: u64,
    nc_ns: u64,
    cycle_hook: Option<CycleFn>,
    start_gate: Option<StartGate>,
    /// The NC tick after which the trajectory's time runs (its hold first): 0, or the tick
    /// the start gate opened at; `None` while the gate is shut.
    motion_from: Option<u64>,
    /// The NC's set pose and motion enable after its last tick (the PLC task publishes them).
    nc_pose: Pose,
    nc_enable: bool,
    /// The set points before the NC's last tick: the ideal drives' actual positions, one NC
    /// tick behind.
    actual: Vec<f64>,
    /// A robot with drives: the drives as built and the axes the shadow may feed.
    drives: Option<drives::DriveEmulation>,
}

impl PlcCore {
    /// A PLC for `robot` that will play `trajectory`, publishing into `memory` (whose table
    /// must come from the same robot's `[plc]` names).
    pub fn new(
        robot: &Robot,
        trajectory: Trajectory,
        memory: Arc<PlcMemory>,
        timing: Timing,
    ) -> Result<PlcCore, PlcError> {
        let nc = timing.nc.as_nanos();
        if nc == 0 || !timing.task.as_nanos().is_multiple_of(nc) || timing.task < timing.nc {
            return Err(PlcError::Timing {
                task: timing.task,
                nc: timing.nc,
            });
        }
        let find = |name: &str| {
            memory
                .table()
                .lookup_str(name)
                .ok_or_else(|| PlcError::MissingSymbol(name.to_string()))
        };
        let p = &crate::plc_symbols::PlcSymbols::of(robot)?;
        let refs = Refs {
            frame_anchors: find(&p.frame_anchors)?,
            platform_anchors: find(&p.platform_anchors)?,
            lengths: find(&p.lengths)?,
            cable_angles: find(&p.cable_angles)?,
            tcp_pose: find(&p.tcp_pose)?,
            commanded: find(&p.commanded_lengths)?,
            cycle: find(&p.cycle_counter)?,
            enable: find(&p.motion_enable)?,
            shadow_lengths: find(&p.shadow_lengths)?,
            shadow_cycle: find(&p.shadow_cycle)?,
            reaction: find(&p.reaction())?,
            pulleys: if robot.cables.iter().any(|c| c.pulley.is_some()) {
                Some((find(&p.pulley_radii)?, find(&p.pulley_axes)?))
            } else {
                None
            },
        };
        let start_pose = trajectory
            .samples
            .first()
            .map(|s| s.pose)
            .unwrap_or_else(|| Pose::from_array(robot.home));
        let start_lengths = kinematics::lengths(robot, &start_pose);
        let limiter = WinchLimiter::new(
            &start_lengths,
            robot.winch.max_velocity,
            robot.winch.max_acceleration,
        );
        let core = PlcCore {
            robot: robot.clone(),
            trajectory,
            memory,
            refs,
            nc_dt: timing.nc.as_secs_f64(),
            ticks_per_task: (timing.task.as_nanos() / nc) as u64,
            hold_ticks: (timing.hold.as_nanos() / nc) as u64,
            limiter,
            start_lengths: start_lengths.clone(),
            last_echo: 0,
            command_moved_at: None,
            shadow_baseline: None,
            stats: PlcStats::default(),
            start_filetime: wire::filetime(std::time::SystemTime::now()),
            nc_ns: u64::try_from(nc).unwrap_or(u64::MAX),
            cycle_hook: None,
            start_gate: None,
            motion_from: Some(0),
            nc_pose: start_pose,
            nc_enable: false,
            actual: start_lengths,
            drives: None,
        };
        let mut core = core;
        core.publish_geometry();
        core.memory.with_image(|img| core.publish_axes(img));
        // A robot with drives: its drives as built, until another robot is asked for.
        if robot.has_drives() {
            core.simulate_drives(None, drives::DEFAULT_WINDOW)?;
        }
        Ok(core)
    }

    pub fn memory(&self) -> &Arc<PlcMemory> {
        &self.memory
    }

    /// Simulates the drives as built (of `actual`, a robot file standing for the real robot,
    /// or of the PLC's own robot) and serves their actual torques and positions; monitors
    /// the axes the shadow may feed with a following-error `window`, m
    /// ([`drives::DriveEmulation`]).
    pub fn simulate_drives(&mut self, actual: Option<&Robot>, window: f64) -> Result<(), PlcError> {
        let pose = self.start_pose();
        let emulation = drives::DriveEmulation::new(
            &self.robot,
            actual.unwrap_or(&self.robot),
            (&pose, &self.limiter.positions),
            self.nc_dt,
            &self.memory,
            window,
        )?;
        self.drives = Some(emulation);
        Ok(())
    }

    /// What the emulated axes' monitor saw (a PLC simulating drives).
    pub fn axis_monitor(&self) -> Option<&drives::AxisMonitor> {
        self.drives.as_ref().map(drives::DriveEmulation::monitor)
    }

    pub fn stats(&self) -> &PlcStats {
        &self.stats
    }

    /// Calls `hook` after each PLC cycle with the cycle and the PLC's time at its end.
    pub fn set_cycle_hook(&mut self, hook: CycleFn) {
        self.cycle_hook = Some(hook);
    }

    /// Also calls `hook` after each PLC cycle, after the hooks set before (the server's
    /// notifications first, then e.g. the live view's).
    pub fn add_cycle_hook(&mut self, mut hook: CycleFn) {
        self.cycle_hook = Some(match self.cycle_hook.take() {
            None => hook,
            Some(mut first) => Box::new(move |cycle, stamp| {
                first(cycle, stamp);
                hook(cycle, stamp);
            }),
        });
    }

    /// Holds the trajectory (the start pose, motion disabled) until `gate` says it may start;
    /// the hold of [`Timing::hold`] then runs from that moment. The tasks run meanwhile.
    pub fn set_start_gate(&mut self, gate: StartGate) {
        if self.stats.nc_ticks == 0 {
            self.motion_from = None;
        }
        self.start_gate = Some(gate);
    }

    /// The PLC's time now (after the ticks so far), FILETIME: its start + ticks × NC period.
    pub fn plc_filetime(&self) -> u64 {
        let ns = u128::from(self.stats.nc_ticks) * u128::from(self.nc_ns);
        self.start_filetime
            .saturating_add(u64::try_from(ns / 100).unwrap_or(u64::MAX))
    }

    /// Period of one NC tick, s.
    pub fn nc_dt(&self) -> f64 {
        self.nc_dt
    }

    /// NC ticks per PLC cycle.
    pub fn ticks_per_task(&self) -> u64 {
        self.ticks_per_task
    }

    fn publish_geometry(&self) {
        let r = &self.refs;
        let a: Vec<f64> = to_mm(
            self.robot
                .cables
                .iter()
                .flat_map(|c| c.frame_anchor.iter().copied()),
        );
        let b: Vec<f64> = to_mm(
            self.robot
                .cables
                .iter()
                .flat_map(|c| c.platform_anchor.iter().copied()),
        );
        // Pulleys: radius in mm (0 without one) and unit axis (zeros without one).
        let radii: Vec<f64> = to_mm(
            self.robot
                .cables
                .iter()
                .map(|c| c.pulley.map_or(0.0, |p| p.radius)),
        );
        let axes: Vec<f64> = self
            .robot
            .cables
            .iter()
            .flat_map(|c| {
                c.pulley
                    .map_or([0.0; 3], |p| [p.axis.x, p.axis.y, p.axis.z])
            })
            .collect();
        self.memory.with_image(|img| {
            memory::put_reals(img, &r.frame_anchors, &a);
            memory::put_reals(img, &r.platform_anchors, &b);
            if let Some((radius_ref, axis_ref)) = &r.pulleys {
                memory::put_reals(img, radius_ref, &radii);
                memory::put_reals(img, axis_ref, &axes);
            }
        });
    }

    /// Publishes the axes' state into `img`: commanded lengths, reported lengths (ideal drives
    /// one NC tick behind), the set pose and the cable angles at it, the motion enable.
    fn publish_axes(&self, img: &mut [u8]) {
        let r = &self.refs;
        let ik = kinematics::inverse(&self.robot, &self.nc_pose);
        let angles: Vec<f64> = ik
            .angles()
            .iter()
            .flat_map(|a| [a.theta_z.to_degrees(), a.theta_x.to_degrees()])
            .collect();
        memory::put_reals(img, &r.lengths, &to_mm(self.actual.iter().copied()));
        memory::put_reals(
            img,
            &r.commanded,
            &to_mm(self.limiter.positions.iter().copied()),
        );
        memory::put_reals(img, &r.tcp_pose, &pose_to_plc(&self.nc_pose));
        memory::put_reals(img, &r.cable_angles, &angles);
        memory::put_u32(img, &r.enable, u32::from(self.nc_enable));
    }

    /// One NC period; every `ticks_per_task`-th call also runs the PLC task. A PLC stopped
    /// over ADS (WriteControl STOP) holds everything.
    pub fn tick(&mut self) {
        if self.memory.ads_state() == ads_state::STOP {
            return;
        }
        if self.motion_from.is_none() && self.start_gate.as_ref().is_none_or(|g| g()) {
            self.motion_from = Some(self.stats.nc_ticks);
        }
        self.stats.nc_ticks += 1;
        let since = self
            .motion_from
            .and_then(|t0| self.stats.nc_ticks.checked_sub(t0));
        let (pose, enable) = match since.and_then(|k| k.checked_sub(self.hold_ticks)) {
            Some(k) if !self.trajectory.samples.is_empty() => {
                let t = k as f64 * self.nc_dt;
                // Half a tick of tolerance: k·dt lands on the end time only up to rounding.
                let moving = t <= self.trajectory.duration() + 0.5 * self.nc_dt;
                if !moving {
                    self.stats.finished = true;
                }
                let sample = self.trajectory.sample_at(self.trajectory.start_time() + t);
                (sample.map(|s| s.pose), moving)
            }
            _ => (None, false),
        };
        let pose = pose.unwrap_or_else(|| self.start_pose());
        let targets = kinematics::lengths(&self.robot, &pose);
        self.actual.clone_from(&self.limiter.positions);
        self.limiter.step(&targets, self.nc_dt);
        if let Some(d) = self.drives.as_mut() {
            d.tick(&self.limiter.positions);
        }
        (self.nc_pose, self.nc_enable) = (pose, enable);
        if self.stats.nc_ticks.is_multiple_of(self.ticks_per_task) {
            self.plc_task();
            let (cycle, stamp) = (self.stats.plc_cycles, self.plc_filetime());
            if let Some(hook) = self.cycle_hook.as_mut() {
                hook(cycle, stamp);
            }
        }
    }

    /// Whether the next [`PlcCore::tick`] runs the PLC task.
    fn next_tick_runs_plc(&self) -> bool {
        (self.stats.nc_ticks + 1).is_multiple_of(self.ticks_per_task)
    }

    fn start_pose(&self) -> Pose {
        self.trajectory
            .samples
            .first()
            .map(|s| s.pose)
            .unwrap_or_else(|| Pose::from_array(self.robot.home))
    }

    /// The PLC task: read inputs (the shadow's echo and lengths), count the cycle, publish.
    fn plc_task(&mut self) {
        let r = &self.refs;
        let (echo, shadow_lengths) = self.memory.with_image(|img| {
            (
                memory::get_u32(img, &r.shadow_cycle).unwrap_or(0),
                memory::get_reals(img, &r.shadow_lengths).unwrap_or_default(),
            )
        });
        let cycle = self.stats.plc_cycles.wrapping_add(1);
        self.stats.plc_cycles = cycle;
        if echo != self.last_echo && echo != 0 {
            // An echo of a cycle the PLC has not run yet is no reaction (a client that writes
            // ahead): counted apart, as the unsigned difference would wrap to ~4.29e9.
            // Signed difference: half the counter's range back is behind, the rest ahead.
            let behind = cycle.wrapping_sub(echo);
            if behind < 1 << 31 {
                self.stats.reaction.record(behind);
            } else {
                self.stats.reaction.ahead += 1;
            }
            self.last_echo = echo;
        }
        self.motion_delay(cycle, echo, &shadow_lengths);
        let last = self.stats.reaction.last.unwrap_or(0);
        // The axes and the counter under one lock: a read sees both of this cycle, or neither.
        let task = self.nc_dt * self.ticks_per_task as f64;
        let memory = Arc::clone(&self.memory);
        let mut drives = self.drives.take();
        memory.with_image(|img| {
            self.publish_axes(img);
            if let Some(d) = drives.as_mut() {
                d.plc_task(
                    img,
                    &self.limiter.positions,
                    (cycle, task),
                    self.last_echo != 0,
                );
            }
            memory::put_u32(img, &self.refs.cycle, cycle);
            memory::put_u32(img, &self.refs.reaction, last);
        });
        if let Some(d) = &drives {
            self.stats
                .axes
                .get_or_insert_with(Default::default)
                .clone_from(d.monitor());
        }
        self.drives = drives;
    }

    fn motion_delay(&mut self, cycle: u32, echo: u32, shadow_mm: &[f64]) {
        let moved = |a: &[f64], b: &[f64]| a.iter().zip(b).any(|(x, y)| (x - y).abs() > MOVED);
        let shadow: Vec<f64> = shadow_mm.iter().map(|v| v / 1000.0).collect();
        if self.command_moved_at.is_none() && moved(&self.limiter.positions, &self.start_lengths) {
            self.command_moved_at = Some(cycle);
            // Only a shadow that is already answering gives a baseline to move from.
            self.shadow_baseline = (echo != 0).then(|| shadow.clone());
        }
        if let (Some(start), Some(base), None) = (
            self.command_moved_at,
            &self.shadow_baseline,
            self.stats.motion_delay_cycles,
        ) && moved(&shadow, base)
        {
            self.stats.motion_delay_cycles = Some(cycle.wrapping_sub(start));
        }
    }
}

/// A [`PlcCore`] running against the wall clock on its own thread.
pub struct VirtualPlc {
    core: Arc<Mutex<PlcCore>>,
    memory: Arc<PlcMemory>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl VirtualPlc {
    /// Starts the tasks. Deadlines are absolute (no drift, no skipping): an NC tick more than
    /// one NC period late counts as an overrun, a PLC cycle more than one task period late as
    /// a late cycle, and ticks behind their deadline run at once, one after the other, until
    /// the schedule is met again — the PLC's time stays ticks × period.
    pub fn start(core: PlcCore) -> Result<VirtualPlc, PlcError> {
        VirtualPlc::start_scheduled(core, true)
    }

    /// [`VirtualPlc::start`], the tasks' thread under real-time scheduling where the system
    /// allows it and `realtime` asks for it ([`crate::realtime`]): a TwinCAT runs its tasks on
    /// a real-time core, and a PLC whose cycles a busy desktop delays runs them late.
    pub fn start_scheduled(core: PlcCore, realtime: bool) -> Result<VirtualPlc, PlcError> {
        let memory = Arc::clone(core.memory());
        let period = Duration::from_nanos(core.nc_ns);
        let task = period * u32::try_from(core.ticks_per_task).unwrap_or(u32::MAX);
        let core = Arc::new(Mutex::new(core));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (core, stop) = (Arc::clone(&core), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("plc-tasks".into())
                .spawn(move || {
                    let scheduling = crate::realtime::prefer_current_thread(
                        realtime,
                        crate::realtime::Role::PlcTask,
                    );
                    tracing::info!("PLC tasks: {scheduling}");
                    let mut next = Instant::now() + period;
                    while !stop.load(Ordering::Relaxed) {
                        let now = Instant::now();
                        if next > now {
                            std::thread::sleep(next - now);
                        }
                        let late = Instant::now().saturating_duration_since(next);
                        let mut c = core.lock().unwrap_or_else(|e| e.into_inner());
                        if late > period {
                            c.stats.overruns += 1;
                        }
                        if late > task && c.next_tick_runs_plc() {
                            c.stats.late_cycles += 1;
                        }
                        c.tick();
                        drop(c);
                        next += period;
                    }
                })?
        };
        Ok(VirtualPlc {
            core,
            memory,
            stop,
            thread: Some(thread),
        })
    }

    pub fn memory(&self) -> &Arc<PlcMemory> {
        &self.memory
    }

    /// [`PlcCore::add_cycle_hook`] on the running tasks (from the next cycle on).
    pub fn add_cycle_hook(&self, hook: CycleFn) {
        self.core
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add_cycle_hook(hook);
    }

    pub fn stats(&self) -> PlcStats {
        self.core
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .stats()
            .clone()
    }

    /// Stops the tasks and returns the final statistics.
    pub fn stop(mut self) -> PlcStats {
        self.halt();
        self.stats()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for VirtualPlc {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests;
