//! The 3D viewer (Bevy): draws the physics core's state — frame, pulleys, platform and TCP,
//! cables coloured by tension, commanded and actual paths — at the screen's rate while the core
//! steps at its fixed 1 kHz. It owns a [`Driver`](cdpr_core::run::Player) (the same
//! per-step logic as `cdpr simulate`) in the [`Playback`] resource and never runs a physics of
//! its own: no Bevy physics plugin, no bevy_rapier3d (the core owns its Rapier world; a second
//! one here would be a second physics path).
//!
//! Faces: `cdpr view` (and `cargo run --release` with no arguments: the demo), `cdpr view
//! --screenshot` for CI, [`headless_app`] for tests, and live mode ([`run_live`], `cdpr view
//! --plc`): the ADS shadow runs on its own thread ([`live`]) and the viewer draws it; replay
//! ([`replay`], `cdpr view --replay`): a recorded run at a slider's time; clips
//! ([`video`], `cdpr view --video`): a run rendered frame by frame at its own time.
#![deny(clippy::unwrap_used)]

mod camera;
pub use camera::CameraView;
pub mod capture;
pub mod colors;
pub mod foxglove;
pub mod interference;
pub mod live;
mod overlay;
mod panel;
pub mod playback;
pub mod replay;
mod replay_panel;
pub mod request;
pub mod sampling;
pub mod scenario;
pub mod scene;
pub mod video;

/// The models the panel offers (core's table, less those that need a parameter file).
pub use panel::model_choices;

/// The Bevy the viewer is built with, for tests and embedders (one version in the tree).
pub use bevy;
pub use capture::Summary;
pub use live::{LiveFeed, LiveHandle, LiveInfo};
pub use playback::{Playback, PlaybackPlugin};
pub use scenario::{DemoEntry, Scenario};

use bevy::app::AppExit;
use bevy::ecs::schedule::{ScheduleLabel, SingleThreadedExecutor};
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::time::TimeUpdateStrategy;
use bevy::window::PresentMode;
use bevy::winit::WinitSettings;
use bevy_egui::{EguiGlobalSettings, EguiPlugin};
use bevy_panorbit_camera::PanOrbitCameraPlugin;
use cdpr_core::run::LoadError;
use cdpr_core::sim::SimError;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// The robot, the trajectory or an option of the run, with its causes in the message
    /// (the panel shows the message alone).
    #[error("{}", chain(.0))]
    Load(LoadError),
    #[error("physics: {0}")]
    Sim(#[from] SimError),
    #[error(
        "no display: DISPLAY is not set (the viewer needs an X11 display; headless, run it under \
         `xvfb-run -a -s \"-screen 0 1280x720x24\"` with Mesa's Vulkan driver installed)"
    )]
    NoDisplay,
    #[error("the window or the renderer could not start: {0}")]
    Startup(String),
    #[error("the screenshot was not written to {0}")]
    Screenshot(PathBuf),
    #[error("{0}")]
    Options(String),
    /// A record that does not open or read (the message names the file).
    #[error("{0}")]
    Record(Box<cdpr_core::recording::RecordingError>),
    /// The clip could not be written (the message names the file).
    #[error("{0}")]
    Video(String),
}

impl From<LoadError> for ViewerError {
    fn from(e: LoadError) -> ViewerError {
        ViewerError::Load(e)
    }
}

use cdpr_core::text::error_chain as chain;

/// Which ECS executor runs the main schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Executor {
    /// Bevy's default with the `multi_threaded` feature: systems run in parallel on a pool.
    Multi,
    /// One thread runs every system in order; rendering is still pipelined on its own thread.
    #[default]
    Single,
}

/// Everything `cdpr view` can ask for.
#[derive(Debug, Clone)]
pub struct ViewerOptions {
    /// What to play; `None` plays the demo.
    pub scenario: Option<Scenario>,
    pub time_scale: f64,
    /// Start this many simulated seconds into the run.
    pub seek: f64,
    pub screenshot: Option<PathBuf>,
    /// Screenshot mode: the frame at which the picture is taken.
    pub frames: u32,
    pub max_frames: Option<u32>,
    pub duration: Option<Duration>,
    pub size: (u32, u32),
    pub executor: Executor,
    /// Process start, for the time to the first frame.
    pub started: Instant,
    /// Robot files the picker offers beside the shipped ones (`robots/`).
    pub robots_dir: PathBuf,
    /// Replay a record instead of playing `scenario`.
    pub replay: Option<replay::ReplayRequest>,
    /// Render a clip and exit (instead of opening the window for a person).
    pub video: Option<video::VideoPlan>,
    /// Show the side panel (a clip of the 3D view alone leaves it out).
    pub panel: bool,
    /// `--foxglove`: each frame's state offered to the live view ([`foxglove`]).
    pub live_view: Option<cdpr_ads::live_view::LiveSender>,
    /// `--clearance`, m: how close cables, the platform, the frame and the obstacles may come
    /// before the live interference check flags them ([`interference`]).
    pub clearance: f64,
    /// `--camera`: what the camera frames ([`camera::CameraView`]).
    pub camera: camera::CameraView,
    /// `--msaa`: whether the 3D view is multisampled ([`camera::Antialiasing`]).
    pub msaa: camera::Antialiasing,
}

impl Default for ViewerOptions {
    fn default() -> Self {
        ViewerOptions {
            scenario: None,
            time_scale: 1.0,
            seek: 0.0,
            screenshot: None,
            frames: 5,
            max_frames: None,
            duration: None,
            size: (1280, 720),
            executor: Executor::default(),
            started: Instant::now(),
            robots_dir: PathBuf::from("robots"),
            replay: None,
            video: None,
            panel: true,
            live_view: None,
            clearance: cdpr_core::interference::DEFAULT_CLEARANCE,
            camera: camera::CameraView::default(),
            msaa: camera::Antialiasing::default(),
        }
    }
}

/// Virtual time per frame in screenshot mode: the picture depends on the frame count only.
pub const SCREENSHOT_FRAME: Duration = Duration::from_nanos(16_666_667);

/// Opens the window and runs until it is closed (or the screenshot is written, or the frame or
/// time limit is reached). Returns the figures measured.
pub fn run(options: ViewerOptions) -> Result<Summary, ViewerError> {
    // A clip that cannot be written is refused before anything loads.
    if let Some(plan) = &options.video {
        video::check_video_path(&plan.path).map_err(ViewerError::Options)?;
    }
    let mut playback = match (&options.replay, &options.scenario) {
        (Some(request), _) => Playback::replay(request.open()?)?,
        (None, Some(s)) => Playback::new(s.clone())?,
        (None, None) => Playback::demo(scenario::demo_playlist(&scenario::robot_choices(
            &options.robots_dir,
        )))?,
    };
    playback.time_scale = options.time_scale;
    playback.seek(options.seek)?;
    run_playback(&options, playback)
}

/// Live mode: opens the window on what `feed` publishes (the shadow runs on its own thread;
/// stop it with its [`LiveHandle`] once this returns). `options.scenario`, `time_scale` and
/// `seek` do not apply: the controller drives the motion.
pub fn run_live(options: ViewerOptions, feed: LiveFeed) -> Result<Summary, ViewerError> {
    run_playback(&options, Playback::live(feed))
}

fn run_playback(options: &ViewerOptions, playback: Playback) -> Result<Summary, ViewerError> {
    if let Some(path) = &options.screenshot {
        capture::check_screenshot_path(path).map_err(ViewerError::Options)?;
    }
    let recorder = match &options.video {
        Some(plan) => {
            video::check_video_path(&plan.path).map_err(ViewerError::Options)?;
            Some(video::VideoRecorder::new(plan, &playback)?)
        }
        None => None,
    };
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        return Err(ViewerError::NoDisplay);
    }
    if let Some(path) = &options.screenshot {
        // A stale file must not pass for this run's picture.
        let _ = std::fs::remove_file(path);
    }
    // Bevy reports a display it cannot open or a missing GPU by panicking while the plugins
    // build; that becomes an error here instead of a crash (the panic message is kept).
    let outcome = recorder.as_ref().map(|r| r.outcome.clone());
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        build_app(options, playback, recorder)
    }));
    let mut app = match built {
        Ok(app) => app,
        Err(payload) => return Err(ViewerError::Startup(panic_text(payload.as_ref()))),
    };
    let sink = capture::SummarySink::default();
    app.insert_resource(sink.clone());
    let exit = app.run();
    let summary = sink
        .0
        .lock()
        .ok()
        .and_then(|mut slot| slot.take())
        .ok_or_else(|| ViewerError::Startup("the app ended before its first frame".into()))?;
    // Written and not empty (an encoder that fails leaves an empty file behind).
    if let Some(path) = &options.screenshot
        && !std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
    {
        return Err(ViewerError::Screenshot(path.clone()));
    }
    if let Some(outcome) = outcome {
        let result = outcome.0.lock().ok().and_then(|mut slot| slot.take());
        match result {
            Some(Ok(())) => {}
            Some(Err(message)) => return Err(ViewerError::Video(message)),
            None => {
                return Err(ViewerError::Video(
                    "the window closed before the clip was complete".into(),
                ));
            }
        }
    }
    match exit {
        AppExit::Success => Ok(summary),
        AppExit::Error(code) => Err(ViewerError::Startup(format!(
            "the viewer stopped with code {code}"
        ))),
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// The order of a frame's work in `Update`, once the playback has stepped: input, the robot
/// respawned on a change, the camera reframed, the scene synced, interference checked, the
/// gizmos drawn (cables, then obstacles). Each feature's plugin puts its systems in these sets
/// (the overlays and the panel are egui's, drawn in its pass).
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ViewerSet {
    Input,
    Spawn,
    Frame,
    Sync,
    Check,
    Draw,
    DrawObstacles,
}

/// The viewer's app: Bevy's plugins and one plugin per feature (playback, camera, scene,
/// interference, overlays, panel, capture, live view, video), with the resources the options
/// set.
fn build_app(
    options: &ViewerOptions,
    playback: Playback,
    recorder: Option<video::VideoRecorder>,
) -> App {
    // A screenshot and a clip are rendered on a fixed clock: each frame the same simulated
    // time, whatever the wall clock does.
    let fixed_frame = match &recorder {
        Some(r) => Some(r.frame_duration()),
        None => options.screenshot.is_some().then_some(SCREENSHOT_FRAME),
    };
    let (title, ghost) = title_and_ghost(&playback);
    let mut app = App::new();
    add_bevy_plugins(&mut app, options, title);
    insert_viewer_resources(
        &mut app,
        options,
        playback,
        ghost,
        fixed_frame,
        recorder.is_none(),
    );
    add_feature_plugins(&mut app, options);
    if let Some(recorder) = recorder {
        app.add_plugins(video::VideoPlugin::new(recorder));
    }
    match fixed_frame {
        Some(frame) => {
            app.insert_resource(TimeUpdateStrategy::ManualDuration(frame));
        }
        None => lift_frame_clamp(&mut app),
    }
    if options.executor == Executor::Single {
        run_single_threaded(&mut app);
    }
    app
}

/// The window's title and the legend's line for the ghost box, both naming what is shown: a
/// live shadow, a replay or a run.
fn title_and_ghost(playback: &Playback) -> (String, String) {
    match (playback.live_feed(), playback.replay_source()) {
        (Some(feed), _) => (
            format!("cdpr — live shadow of {}", feed.info.address),
            "controller's commanded pose (ghost box)".to_string(),
        ),
        (None, Some(replay)) => (
            format!("cdpr — replay of {}", replay.main.name()),
            "recorded commanded pose (ghost box)".to_string(),
        ),
        (None, None) => (
            format!("cdpr — {}", playback.robot().name),
            "commanded pose (ghost box)".to_string(),
        ),
    }
}

/// Bevy's own plugins (window, renderer, egui, the orbit camera) and the settings they read.
fn add_bevy_plugins(app: &mut App, options: &ViewerOptions, title: String) {
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title,
                    resolution: options.size.into(),
                    // The physics is paced by the clock, not by vsync: no need to wait for it.
                    present_mode: PresentMode::AutoNoVsync,
                    ..default()
                }),
                ..default()
            })
            // Pipelines compile before the first frame is drawn, so a screenshot of frame N
            // shows the whole scene (asynchronous compilation left the meshes out at frame 5).
            .set(RenderPlugin {
                synchronous_pipeline_compilation: true,
                ..default()
            })
            // The binary has its own tracing subscriber (CDPR_LOG); Bevy's would clash with it.
            .disable::<bevy::log::LogPlugin>(),
    )
    .add_plugins(EguiPlugin::default())
    .add_plugins(PanOrbitCameraPlugin)
    .insert_resource(EguiGlobalSettings {
        auto_create_primary_context: false,
        ..default()
    })
    // Update every frame even without focus (Xvfb has no window manager to give it).
    .insert_resource(WinitSettings::continuous())
    .insert_resource(GlobalAmbientLight {
        brightness: 350.0,
        ..default()
    });
}

/// The resources the options set: the playback, the panel, the overlays' texts, the camera,
/// the capture plan and the interference clearance. The help shows at start unless a clip is
/// recorded (`show_help`); the camera eases only on the wall clock.
fn insert_viewer_resources(
    app: &mut App,
    options: &ViewerOptions,
    playback: Playback,
    ghost: String,
    fixed_frame: Option<Duration>,
    show_help: bool,
) {
    app.insert_resource(playback)
        .insert_resource(panel::PanelState {
            fixed_frame_s: fixed_frame.map(|f| f.as_secs_f64()),
            hidden: !options.panel,
            ..panel::PanelState::new(scenario::robot_choices(&options.robots_dir))
        })
        .insert_resource(overlay::GhostText(ghost))
        .insert_resource(overlay::ShowHelp(show_help))
        .insert_resource(camera::SmoothCamera(fixed_frame.is_none()))
        .insert_resource(options.camera)
        .insert_resource(options.msaa)
        .insert_resource(capture::CapturePlan {
            screenshot: options.screenshot.clone(),
            frames: options.frames,
            max_frames: options.max_frames,
            duration: options.duration,
            started: options.started,
        })
        .insert_resource(interference::InterferenceView::with_clearance(
            options.clearance,
        ));
}

/// The frame's [`ViewerSet`]s in order after the playback's, and one plugin per feature.
fn add_feature_plugins(app: &mut App, options: &ViewerOptions) {
    app.configure_sets(
        Update,
        (
            ViewerSet::Input,
            ViewerSet::Spawn,
            ViewerSet::Frame,
            ViewerSet::Sync,
            ViewerSet::Check,
            ViewerSet::Draw,
            ViewerSet::DrawObstacles,
        )
            .chain()
            .after(playback::PlaybackSet),
    )
    .add_plugins((
        PlaybackPlugin,
        camera::CameraPlugin,
        scene::ScenePlugin,
        interference::InterferencePlugin,
        overlay::OverlayPlugin,
        panel::PanelPlugin,
        capture::CapturePlugin,
        foxglove::LiveViewPlugin(options.live_view.clone()),
    ));
}

/// Runs every main schedule on one thread ([`Executor::Single`]).
fn run_single_threaded(app: &mut App) {
    for label in [
        First.intern(),
        PreUpdate.intern(),
        Update.intern(),
        PostUpdate.intern(),
        Last.intern(),
    ] {
        app.edit_schedule(label, |schedule| {
            schedule.set_executor(SingleThreadedExecutor::new());
        });
    }
}

/// An app with the viewer's stepping and no window or renderer: `MinimalPlugins`, the
/// [`Playback`] and its [`PlaybackPlugin`], each `update()` advancing virtual time by
/// `frame`. What the tests run to show the viewer steps the core exactly as `cdpr simulate`.
pub fn headless_app(playback: Playback, frame: Duration) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(TimeUpdateStrategy::ManualDuration(frame))
        .insert_resource(playback)
        .add_plugins(PlaybackPlugin);
    lift_frame_clamp(&mut app);
    app
}

/// Frames under a software renderer can take longer than Bevy's default 250 ms clamp of
/// virtual time; the physics must still see the whole wall-clock time to keep real time.
fn lift_frame_clamp(app: &mut App) {
    if let Some(mut time) = app.world_mut().get_resource_mut::<Time<Virtual>>() {
        time.set_max_delta(Duration::from_secs(2));
    }
}
