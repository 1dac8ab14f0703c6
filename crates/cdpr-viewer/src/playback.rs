//! The viewer's hold on the physics core: a [`Playback`] resource owns the [`Player`] (the
//! same per-step logic `cdpr simulate` runs) and advances it from the frame's time.
//!
//! Each frame adds `delta × time_scale` to the simulated time owed and takes
//! `floor(owed / dt) − steps done` fixed steps of 1 ms, so the physics rate is independent of
//! the frame rate: at 60 fps a frame takes ~17 steps, under a 300 ms software-rendered frame
//! ~300. Deriving the count from the total (not from a running remainder) keeps it exact over
//! thousands of frames. Should the physics itself be slower than real time, a frame stops
//! stepping after [`STEP_BUDGET`] of wall time and drops the rest of its backlog (counted,
//! and visible as a real-time factor below the time scale), rather than spiralling.
//!
//! In live mode (`cdpr view --plc`) the source is a [`LiveFeed`] instead: the ADS shadow runs
//! on its own thread and each frame takes its newest state and the samples since the last
//! frame; the viewer steps nothing itself.
//!
//! In replay (`cdpr view --replay`) the source is a [`Replay`]: a recorded run shown at a
//! slider time, one recorded row at a time; nothing is stepped either.
//!
//! [`PlaybackPlugin`] needs only `MinimalPlugins`: the headless test steps an app with it and
//! compares the states with `run::run`.

use super::ViewerError;
use super::live::LiveFeed;
use super::replay::Replay;
use super::scenario::{DemoEntry, Scenario};
use bevy::prelude::*;
use cdpr_core::kinematics::Pose;
use cdpr_core::robot::Robot;
use cdpr_core::run::Player;
use cdpr_core::sim::SimState;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub use super::sampling::{PLOT_SAMPLES, SAMPLE_EVERY, TRAIL_SAMPLES};

/// Wall time a frame may spend stepping before it drops its backlog.
pub const STEP_BUDGET: Duration = Duration::from_millis(200);
/// Pause at the end of a trajectory before it plays again, s of simulated time.
pub const END_HOLD: f64 = 1.0;

/// What the panel's plots and the trails draw, sampled every [`SAMPLE_EVERY`] steps.
#[derive(Debug, Default, Clone)]
pub struct History {
    /// Platform origin (the TCP), commanded and actual, world frame, m.
    pub commanded_path: VecDeque<[f64; 3]>,
    pub actual_path: VecDeque<[f64; 3]>,
    /// (simulated time s, tensions N) and (time, |commanded − actual| position m).
    pub tensions: VecDeque<(f64, Vec<f64>)>,
    pub error: VecDeque<(f64, f64)>,
    /// Robots with drives: (time, motor torques N·m).
    pub torques: VecDeque<(f64, Vec<f64>)>,
    /// Largest tension seen since the start (sets the colour scale), N.
    pub peak_tension: f64,
}

impl History {
    fn push(&mut self, state: &SimState, commanded: Option<&Pose>) {
        let p = state.pose.position;
        push_capped(&mut self.actual_path, [p.x, p.y, p.z], TRAIL_SAMPLES);
        if let Some(c) = commanded {
            let q = c.position;
            push_capped(&mut self.commanded_path, [q.x, q.y, q.z], TRAIL_SAMPLES);
            push_capped(&mut self.error, (state.time, (q - p).norm()), PLOT_SAMPLES);
        }
        push_capped(
            &mut self.tensions,
            (state.time, state.tensions.clone()),
            PLOT_SAMPLES,
        );
        if !state.motor_torques.is_empty() {
            push_capped(
                &mut self.torques,
                (state.time, state.motor_torques.clone()),
                PLOT_SAMPLES,
            );
        }
        self.observe_peak(state);
    }

    fn observe_peak(&mut self, state: &SimState) {
        for &f in &state.tensions {
            if f.is_finite() && f > self.peak_tension {
                self.peak_tension = f;
            }
        }
    }
}

fn push_capped<T>(queue: &mut VecDeque<T>, value: T, cap: usize) {
    if queue.len() == cap {
        queue.pop_front();
    }
    queue.push_back(value);
}

/// Real-time factor over the last second or so: simulated seconds per wall second.
#[derive(Debug, Default, Clone)]
pub struct RtfMeter {
    window: VecDeque<(Instant, f64)>,
    pub value: f64,
}

impl RtfMeter {
    fn record(&mut self, now: Instant, simulated: f64) {
        self.window.push_back((now, simulated));
        while self.window.len() > 2
            && self
                .window
                .front()
                .is_some_and(|(t, _)| now.duration_since(*t) > Duration::from_secs(2))
        {
            self.window.pop_front();
        }
        if let (Some((t0, s0)), Some((t1, s1))) = (self.window.front(), self.window.back()) {
            let wall = t1.duration_since(*t0).as_secs_f64();
            if wall > 0.2 {
                self.value = (s1 - s0) / wall;
            }
        }
    }
}

/// Where the demo is in its playlist.
#[derive(Debug, Clone)]
pub struct Demo {
    pub playlist: Vec<DemoEntry>,
    pub entry: usize,
    pub loops_done: u32,
}

/// Where the states come from.
enum Source {
    /// A trajectory run the viewer steps itself.
    Run(Box<Player>),
    /// The live shadow of a controller, stepped on its own thread.
    Live(Box<LiveFeed>),
    /// A recorded run at the slider's time.
    Replay(Box<Replay>),
}

/// The physics the viewer shows: a trajectory run (its own [`Player`]) or, in live mode, the
/// shadow of a controller ([`LiveFeed`]).
#[derive(Resource)]
pub struct Playback {
    /// The run's scenario (in live mode: the robot's own, unused).
    pub scenario: Scenario,
    source: Source,
    pub paused: bool,
    /// Simulated seconds per wall second asked for (the panel's "time scale").
    pub time_scale: f64,
    /// Play the trajectory again after it ends (and [`END_HOLD`]).
    pub looping: bool,
    /// Wall time a frame may spend stepping ([`STEP_BUDGET`] by default; tests that compare
    /// step by step with `cdpr simulate` lift it, so a slow machine cannot drop steps).
    pub step_budget: Duration,
    /// Simulated time owed since the driver started, s.
    owed: f64,
    /// Simulated time dropped because the physics could not keep up, s.
    pub dropped: f64,
    pub history: History,
    pub rtf: RtfMeter,
    /// Total steps taken since the viewer started (all runs), and physics wall time.
    pub total_steps: u64,
    pub physics_wall: Duration,
    pub demo: Option<Demo>,
    /// The last failure (a blow-up, a robot that would not load), shown in the panel.
    pub error: Option<String>,
}

impl Playback {
    pub fn new(scenario: Scenario) -> Result<Playback, ViewerError> {
        let driver = scenario.build()?;
        Ok(Playback::with_source(
            scenario,
            Source::Run(Box::new(driver)),
        ))
    }

    /// Live mode: shows what `feed` publishes.
    pub fn live(feed: LiveFeed) -> Playback {
        let scenario = Scenario::for_robot(&feed.robot.name);
        let mut playback = Playback::with_source(scenario, Source::Live(Box::new(feed)));
        playback.looping = false;
        playback
    }

    /// Replay: plays `replay` from its start, its whole path as the trails and its
    /// largest tension setting the colour scale.
    pub fn replay(mut replay: Replay) -> Result<Playback, ViewerError> {
        let scenario = Scenario::for_robot(&replay.main.robot.name);
        let paths = replay.paths()?;
        let peak = replay
            .main
            .file()
            .events()
            .largest_tension
            .map_or(0.0, |e| e.value);
        let mut playback = Playback::with_source(scenario, Source::Replay(Box::new(replay)));
        playback.looping = false;
        playback.history = History {
            commanded_path: paths.commanded.into(),
            actual_path: paths.actual.into(),
            peak_tension: if peak.is_finite() { peak.max(0.0) } else { 0.0 },
            ..History::default()
        };
        Ok(playback)
    }

    fn with_source(scenario: Scenario, source: Source) -> Playback {
        let mut playback = Playback {
            scenario,
            source,
            paused: false,
            time_scale: 1.0,
            looping: true,
            step_budget: STEP_BUDGET,
            owed: 0.0,
            dropped: 0.0,
            history: History::default(),
            rtf: RtfMeter::default(),
            total_steps: 0,
            physics_wall: Duration::ZERO,
            demo: None,
            error: None,
        };
        playback.sample();
        playback
    }

    /// Starts the demo playlist (hands-off: it advances by itself).
    pub fn demo(playlist: Vec<DemoEntry>) -> Result<Playback, ViewerError> {
        let first = playlist
            .first()
            .ok_or_else(|| ViewerError::Options("the demo playlist is empty".into()))?;
        let mut playback = Playback::new(first.scenario.clone())?;
        playback.demo = Some(Demo {
            playlist,
            entry: 0,
            loops_done: 0,
        });
        Ok(playback)
    }

    /// The trajectory run (`None` in live mode and in replay).
    pub fn driver(&self) -> Option<&Player> {
        match &self.source {
            Source::Run(driver) => Some(driver),
            _ => None,
        }
    }

    /// The live feed (`None` unless in live mode).
    pub fn live_feed(&self) -> Option<&LiveFeed> {
        match &self.source {
            Source::Live(feed) => Some(feed),
            _ => None,
        }
    }

    /// The recorded run(s) (`None` unless in replay).
    pub fn replay_source(&self) -> Option<&Replay> {
        match &self.source {
            Source::Replay(replay) => Some(replay),
            _ => None,
        }
    }

    pub fn is_replay(&self) -> bool {
        matches!(self.source, Source::Replay(_))
    }

    /// Moves the replay's slider to `t`, s (nothing outside replay).
    pub fn seek_replay(&mut self, t: f64) -> Result<(), ViewerError> {
        self.replay_do(|r| r.seek(t))
    }

    /// The main record's row `index` (an event's row; nothing outside replay).
    pub fn show_replay_row(&mut self, index: usize) -> Result<(), ViewerError> {
        self.replay_do(|r| r.show_row(index))
    }

    /// One recorded sample forward or back (nothing outside replay).
    pub fn step_replay(&mut self, by: isize) -> Result<(), ViewerError> {
        self.replay_do(|r| r.step(by))
    }

    fn replay_do(
        &mut self,
        action: impl FnOnce(&mut Replay) -> Result<(), ViewerError>,
    ) -> Result<(), ViewerError> {
        let Source::Replay(replay) = &mut self.source else {
            return Ok(());
        };
        let before = replay.main.index();
        let result = action(replay);
        self.total_steps += replay.main.index().abs_diff(before) as u64;
        result
    }

    /// The compared run's robot and its state at the slider's time (replay with --compare).
    pub fn compare(&self) -> Option<(&Robot, &SimState)> {
        self.replay_source()
            .and_then(|r| r.compare.as_ref())
            .map(|c| (&c.robot, c.state()))
    }

    pub fn is_live(&self) -> bool {
        matches!(self.source, Source::Live(_))
    }

    pub fn robot(&self) -> &Robot {
        match &self.source {
            Source::Run(driver) => driver.robot(),
            Source::Live(feed) => &feed.robot,
            Source::Replay(replay) => &replay.main.robot,
        }
    }

    pub fn state(&self) -> &SimState {
        match &self.source {
            Source::Run(driver) => driver.state(),
            Source::Live(feed) => &feed.latest.state,
            Source::Replay(replay) => replay.main.state(),
        }
    }

    /// The commanded platform pose of the last step (live: the controller's; replay: the
    /// row's).
    pub fn commanded(&self) -> &Pose {
        match &self.source {
            Source::Run(driver) => &driver.commanded().pose,
            Source::Live(feed) => &feed.latest.commanded,
            Source::Replay(replay) => replay.main.commanded(),
        }
    }

    /// The physics step, s (replay: the record's mean sample period).
    pub fn dt(&self) -> f64 {
        match &self.source {
            Source::Run(driver) => driver.options().config.dt,
            Source::Live(feed) => feed.dt,
            Source::Replay(replay) => replay.sample_period(),
        }
    }

    /// Switches to `scenario`; on failure the current run goes on and the error is returned.
    pub fn load(&mut self, scenario: Scenario) -> Result<(), ViewerError> {
        let driver = scenario.build()?;
        self.scenario = scenario;
        self.install(driver);
        Ok(())
    }

    /// Starts the current scenario again from rest (live: clears the trails and plots; the
    /// controller drives the shadow).
    pub fn reset(&mut self) -> Result<(), ViewerError> {
        if let Source::Replay(replay) = &self.source {
            let start = replay.start();
            return self.seek_replay(start);
        }
        if self.is_live() {
            self.history = History::default();
            return Ok(());
        }
        self.load(self.scenario.clone())
    }

    fn install(&mut self, driver: Player) {
        self.source = Source::Run(Box::new(driver));
        self.owed = 0.0;
        self.history = History::default();
        self.error = None;
        self.sample();
    }

    /// Leaves demo mode (any hand on a control does).
    pub fn stop_demo(&mut self) {
        self.demo = None;
    }

    /// Advances by the frame's `delta` of (virtual) time; returns the steps taken (live: the
    /// steps the shadow took since the last frame).
    pub fn advance(&mut self, delta: Duration) -> u64 {
        if self.paused || self.error.is_some() {
            return 0;
        }
        if let Source::Live(feed) = &mut self.source {
            let samples = feed.pull();
            let latest = &feed.latest;
            let taken = latest.steps.saturating_sub(self.total_steps);
            self.total_steps = latest.steps;
            self.dropped = latest.summary.skipped_steps as f64 * feed.dt;
            let time = latest.time;
            for (state, commanded) in &samples {
                self.history.push(state, Some(commanded));
            }
            self.rtf.record(Instant::now(), time);
            return taken;
        }
        if let Source::Replay(replay) = &self.source {
            let (now, end) = (replay.time(), replay.end());
            let next = now + delta.as_secs_f64() * self.time_scale.max(0.0);
            let before = self.total_steps;
            if let Err(e) = self.seek_replay(next.min(end)) {
                self.error = Some(e.to_string());
            }
            // At the end a replay stops (and plays again from the start when asked).
            if next >= end {
                if self.looping {
                    let _ = self.reset();
                } else {
                    self.paused = true;
                }
            }
            self.rtf.record(Instant::now(), self.total_simulated());
            return self.total_steps - before;
        }
        self.owed += delta.as_secs_f64() * self.time_scale.max(0.0);
        let dt = self.dt();
        // 1e-9 absorbs the rounding of a sum of deltas that should land on a whole step.
        let due = ((self.owed / dt) + 1e-9).floor() as u64;
        let started = Instant::now();
        let mut taken = 0;
        while self.run_steps() < due {
            if let Err(e) = self.step_once() {
                self.error = Some(format!("{e}"));
                break;
            }
            taken += 1;
            if taken % 64 == 0 && started.elapsed() > self.step_budget {
                let behind = (due - self.run_steps()) as f64 * dt;
                self.dropped += behind;
                self.owed -= behind;
                break;
            }
        }
        self.physics_wall += started.elapsed();
        self.rtf.record(Instant::now(), self.total_simulated());
        if self.looping && self.finished() {
            self.next_loop();
        }
        taken
    }

    /// Steps of the current run (live: of the shadow).
    fn run_steps(&self) -> u64 {
        match &self.source {
            Source::Run(driver) => driver.steps(),
            Source::Live(feed) => feed.latest.steps,
            Source::Replay(replay) => replay.main.index() as u64,
        }
    }

    /// One step regardless of the clock (the panel's and the keyboard's "step"). Live, the
    /// controller drives the shadow: nothing to step.
    pub fn step_once(&mut self) -> Result<(), ViewerError> {
        if self.is_replay() {
            return self.step_replay(1);
        }
        let Source::Run(driver) = &mut self.source else {
            return Ok(());
        };
        driver.advance_one_step().map_err(ViewerError::Sim)?;
        let steps = driver.steps();
        let dt = driver.options().config.dt;
        self.total_steps += 1;
        self.owed = self.owed.max(steps as f64 * dt);
        if steps.is_multiple_of(SAMPLE_EVERY) {
            self.sample();
        }
        Ok(())
    }

    /// Simulated seconds since the viewer started, over all runs (live: the shadow's time).
    pub fn total_simulated(&self) -> f64 {
        match &self.source {
            Source::Run(_) => self.total_steps as f64 * self.dt(),
            Source::Live(feed) => feed.latest.time,
            Source::Replay(replay) => replay.time(),
        }
    }

    /// The trajectory has played and the end hold is over (never, live).
    pub fn finished(&self) -> bool {
        self.driver()
            .is_some_and(|d| d.elapsed() >= d.trajectory().duration() + END_HOLD)
    }

    fn next_loop(&mut self) {
        let Some(demo) = &mut self.demo else {
            let scenario = self.scenario.clone();
            if let Err(e) = self.load(scenario) {
                self.error = Some(format!("{e}"));
            }
            return;
        };
        demo.loops_done += 1;
        if demo.loops_done >= demo.playlist[demo.entry].loops {
            demo.entry = (demo.entry + 1) % demo.playlist.len();
            demo.loops_done = 0;
        }
        // An entry that does not build (a robot file edited meanwhile) is skipped; the demo
        // stops with the error only when none does.
        let mut last_error = None;
        for _ in 0..demo.playlist.len() {
            let Some(demo) = &mut self.demo else { break };
            let scenario = demo.playlist[demo.entry].scenario.clone();
            match scenario.build() {
                Ok(driver) => {
                    self.scenario = scenario;
                    self.install(driver);
                    return;
                }
                Err(e) => {
                    tracing::warn!("demo: skipping `{}`: {e}", scenario.robot());
                    demo.entry = (demo.entry + 1) % demo.playlist.len();
                    demo.loops_done = 0;
                    last_error = Some(e);
                }
            }
        }
        if let Some(e) = last_error {
            self.error = Some(format!("{e}"));
        }
    }

    fn sample(&mut self) {
        match &self.source {
            Source::Run(driver) => {
                let commanded = driver.commanded().pose;
                self.history.push(driver.state(), Some(&commanded));
            }
            Source::Live(feed) => {
                let commanded = feed.latest.commanded;
                self.history.push(&feed.latest.state, Some(&commanded));
            }
            // The replay's trails are its whole path, set once.
            Source::Replay(_) => {}
        }
    }

    /// Runs `seconds` of simulated time at once (screenshots of a moment mid-trajectory).
    /// Live, there is nothing to run ahead of the controller.
    pub fn seek(&mut self, seconds: f64) -> Result<(), ViewerError> {
        if self.is_live() {
            return Ok(());
        }
        if let Source::Replay(replay) = &self.source {
            let t = replay.time() + seconds.max(0.0);
            return self.seek_replay(t);
        }
        let dt = self.dt();
        let target = self.run_steps() + (seconds.max(0.0) / dt).round() as u64;
        while self.run_steps() < target {
            self.step_once()?;
        }
        self.owed = self.run_steps() as f64 * dt;
        Ok(())
    }
}

impl Playback {
    /// Moves to time `t` of the run, s, whatever the clock: a trajectory run steps forward to
    /// its step nearest `t` (never back), a replay shows its row at `t`; live, nothing. What
    /// `--video` calls once per frame, so that frame k shows time `from + k/fps` exactly.
    pub fn advance_to(&mut self, t: f64) -> Result<(), ViewerError> {
        match &self.source {
            Source::Live(_) => Ok(()),
            Source::Replay(_) => self.seek_replay(t),
            Source::Run(_) => {
                let dt = self.dt();
                let target = (t.max(0.0) / dt).round() as u64;
                while self.run_steps() < target {
                    self.step_once()?;
                }
                self.owed = self.run_steps() as f64 * dt;
                Ok(())
            }
        }
    }

    /// The time of the run shown, s: a trajectory run's elapsed time, a replay's slider, the
    /// shadow's clock.
    pub fn run_time(&self) -> f64 {
        match &self.source {
            Source::Run(driver) => driver.elapsed(),
            Source::Live(feed) => feed.latest.time,
            Source::Replay(replay) => replay.time(),
        }
    }
}

/// Steps the [`Playback`] in `Update`, from `Time` (virtual: wall clock while running
/// normally, a fixed duration per frame in screenshot mode and in tests).
pub struct PlaybackPlugin;

impl Plugin for PlaybackPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Update, advance_playback.in_set(PlaybackSet));
    }
}

/// The set the stepping system runs in; drawing systems run after it.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlaybackSet;

fn advance_playback(
    time: Res<Time>,
    playback: Option<ResMut<Playback>>,
    clip: Option<Res<super::video::VideoRecorder>>,
) {
    // A clip moves the run itself, frame by frame ([`super::video::video_frame`]).
    if clip.is_some() {
        return;
    }
    if let Some(mut playback) = playback {
        playback.advance(time.delta());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdpr_core::sim::{ControlMode, ModelKind};

    fn quick(robot: &str, loops: u32) -> DemoEntry {
        DemoEntry {
            scenario: Scenario::for_robot(robot).with(|r| {
                r.speed = 0.5;
                r.model = ModelKind::ELASTIC;
                r.control = Some(ControlMode::Ideal);
            }),
            loops,
        }
    }

    /// Advances in 50 ms frames until `done` holds; returns the simulated seconds it took.
    fn play_until(playback: &mut Playback, done: impl Fn(&Playback) -> bool) -> f64 {
        let mut simulated = 0.0;
        while !done(playback) {
            playback.advance(Duration::from_millis(50));
            simulated += 0.05;
            assert!(simulated < 600.0, "never happened");
            assert!(playback.error.is_none(), "{:?}", playback.error);
        }
        simulated
    }

    #[test]
    fn the_demo_plays_each_entry_its_loops_then_moves_on_and_wraps() {
        let playlist = vec![quick("caroca", 2), quick("silva4", 1)];
        let caroca = playlist[0].scenario.build().expect("builds");
        let one_loop = caroca.trajectory().duration() + END_HOLD;
        let mut playback = Playback::demo(playlist).expect("demo");
        let robot = |p: &Playback| p.scenario.robot().to_string();
        let took = play_until(&mut playback, |p| robot(p) != "caroca");
        assert_eq!(robot(&playback), "silva4");
        // Two loops of CAROCA's move (each ends after the hold), to within a frame.
        assert!(
            (took - 2.0 * one_loop).abs() <= 0.05 + 1e-9,
            "{took} vs {}",
            2.0 * one_loop
        );
        // A fresh run: history and clock start again.
        assert!(playback.driver().expect("a run").elapsed() < 0.06);
        play_until(&mut playback, |p| robot(p) == "caroca");
        let demo = playback.demo.as_ref().expect("still the demo");
        assert_eq!((demo.entry, demo.loops_done), (0, 0));
    }

    #[test]
    fn the_physics_does_not_advance_while_paused_and_steps_on_request() {
        let mut playback = Playback::new(quick("silva4", 1).scenario).expect("builds");
        playback.paused = true;
        assert_eq!(playback.advance(Duration::from_millis(500)), 0);
        assert_eq!(playback.driver().expect("a run").steps(), 0);
        playback.step_once().expect("steps");
        assert_eq!(playback.driver().expect("a run").steps(), 1);
        // Unpaused, the clock owes the frame's time at the time scale: 0.2 s × 0.5 = 100 steps
        // after the one already taken.
        playback.paused = false;
        playback.time_scale = 0.5;
        assert_eq!(playback.advance(Duration::from_millis(200)), 100);
        assert_eq!(playback.driver().expect("a run").steps(), 101);
    }
}
