//! Screenshot mode, exit conditions and the figures the viewer reports at exit: frame times,
//! physics steps against wall time (does the physics keep real time while rendering is slow?)
//! and the time from process start to the first rendered frame.

use super::panel::PanelState;
use super::playback::Playback;
use bevy::diagnostic::FrameCount;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// When to stop, and what to capture.
#[derive(Resource, Debug, Clone)]
pub struct CapturePlan {
    pub screenshot: Option<PathBuf>,
    /// Frame at which the screenshot is requested (it arrives a few frames later).
    pub frames: u32,
    pub max_frames: Option<u32>,
    pub duration: Option<Duration>,
    /// Process start, for the time to the first frame.
    pub started: Instant,
}

/// File extensions a screenshot can be written as in this build: Bevy's `save_to_disk` goes
/// through the `image` crate, whose encoders are cargo features (this workspace enables PNG
/// only). Asked of the crate, so that enabling another encoder extends the list.
pub fn screenshot_extensions() -> Vec<&'static str> {
    image::ImageFormat::all()
        .filter(|f| f.writing_enabled())
        .flat_map(|f| f.extensions_str().iter().copied())
        .collect()
}

/// Refuses a screenshot path this build cannot write (before any window opens), naming the
/// formats that work.
pub fn check_screenshot_path(path: &std::path::Path) -> Result<(), String> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let known = screenshot_extensions();
    match extension {
        Some(e) if known.contains(&e.as_str()) => Ok(()),
        _ => Err(format!(
            "{}: a screenshot is written as {} (this build has no other image encoder)",
            path.display(),
            known
                .iter()
                .map(|e| format!(".{e}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Frames the screenshot may take to arrive before the run counts as failed.
const SCREENSHOT_WATCHDOG: u32 = 300;

/// The latest [`Summary`], shared with [`super::run`]: the winit runner leaves the app's
/// world empty when it returns, so the figures are handed out through this.
#[derive(Resource, Debug, Clone, Default)]
pub struct SummarySink(pub std::sync::Arc<std::sync::Mutex<Option<Summary>>>);

/// Set once by the render world when it has finished rendering its first frame.
static FIRST_FRAME_RENDERED: OnceLock<Instant> = OnceLock::new();

/// A render-world system (after its cleanup): marks the first frame as rendered.
pub fn mark_first_render() {
    let _ = FIRST_FRAME_RENDERED.get_or_init(Instant::now);
}

pub fn first_frame_rendered() -> Option<Instant> {
    FIRST_FRAME_RENDERED.get().copied()
}

/// What the run measured; printed at exit.
#[derive(Resource, Debug, Default, Clone)]
pub struct FrameStats {
    last: Option<Instant>,
    first_update: Option<Instant>,
    /// Wall time between consecutive frames, s.
    pub frame_times: Vec<f64>,
    pub steps_per_frame: Vec<u64>,
    steps_before: u64,
    simulated_before: f64,
    dropped_before: f64,
    pub screenshot_saved: bool,
}

/// Once per frame in `Last`: frame time, steps this frame, exit conditions, screenshot.
#[allow(clippy::too_many_arguments)]
pub fn per_frame(
    mut commands: Commands,
    frame: Res<FrameCount>,
    plan: Res<CapturePlan>,
    playback: Res<Playback>,
    mut stats: ResMut<FrameStats>,
    mut panel: ResMut<PanelState>,
    sink: Res<SummarySink>,
    mut requested: Local<Option<u32>>,
    mut exit: MessageWriter<AppExit>,
) {
    let now = Instant::now();
    if let Some(last) = stats.last {
        let dt = now.duration_since(last).as_secs_f64();
        stats.frame_times.push(dt);
        panel.frame_time = if panel.frame_time > 0.0 {
            0.9 * panel.frame_time + 0.1 * dt
        } else {
            dt
        };
    } else {
        stats.first_update = Some(now);
        stats.steps_before = playback.total_steps;
        stats.simulated_before = playback.total_simulated();
        stats.dropped_before = playback.dropped;
    }
    stats.last = Some(now);
    let steps = playback.total_steps;
    let previous: u64 = stats.steps_per_frame.iter().sum::<u64>() + stats.steps_before;
    stats.steps_per_frame.push(steps - previous.min(steps));
    panel.steps_last_frame = stats.steps_per_frame.last().copied().unwrap_or(0);
    // Sorting the frame times each frame costs O(n log n): every frame at first, then every
    // 64th (a long session's summary is then at most 64 frames old).
    if stats.frame_times.len() < 4096 || frame.0.is_multiple_of(64) {
        let summary = Summary::of(&stats, &playback, plan.started);
        if let Ok(mut slot) = sink.0.lock() {
            *slot = Some(summary);
        }
    }

    if let Some(max) = plan.max_frames
        && frame.0 + 1 >= max
    {
        exit.write(AppExit::Success);
    }
    if let (Some(limit), Some(first)) = (plan.duration, stats.first_update)
        && now.duration_since(first) >= limit
    {
        exit.write(AppExit::Success);
    }
    let Some(path) = plan.screenshot.clone() else {
        return;
    };
    match *requested {
        None if frame.0 >= plan.frames => {
            *requested = Some(frame.0);
            commands
                .spawn(Screenshot::primary_window())
                .observe(save_to_disk(path))
                .observe(
                    |_: On<ScreenshotCaptured>,
                     mut stats: ResMut<FrameStats>,
                     mut exit: MessageWriter<AppExit>| {
                        // save_to_disk (observed first) has written the file by now; the exit
                        // is handled after this frame.
                        stats.screenshot_saved = true;
                        exit.write(AppExit::Success);
                    },
                );
        }
        Some(at) if frame.0 > at + SCREENSHOT_WATCHDOG => {
            error!("the screenshot never arrived");
            exit.write(AppExit::error());
        }
        _ => {}
    }
}

/// The summary printed at exit.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub frames: usize,
    pub wall_s: f64,
    pub frame_mean_ms: f64,
    pub frame_p50_ms: f64,
    pub frame_p95_ms: f64,
    pub frame_max_ms: f64,
    pub frame_sd_ms: f64,
    pub steps: u64,
    pub simulated_s: f64,
    pub dropped_s: f64,
    pub first_frame_s: Option<f64>,
}

impl Summary {
    pub fn of(stats: &FrameStats, playback: &Playback, started: Instant) -> Summary {
        // The first two frames carry start-up (pipeline compilation): left out of the figures.
        let times: Vec<f64> = stats.frame_times.iter().skip(2).copied().collect();
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let pick = |q: f64| {
            if sorted.is_empty() {
                0.0
            } else {
                sorted[((sorted.len() - 1) as f64 * q).round() as usize] * 1e3
            }
        };
        let mean = if times.is_empty() {
            0.0
        } else {
            times.iter().sum::<f64>() / times.len() as f64
        };
        let var = if times.len() > 1 {
            times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (times.len() - 1) as f64
        } else {
            0.0
        };
        let wall_s = match (stats.first_update, stats.last) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        Summary {
            frames: stats.frame_times.len() + usize::from(stats.last.is_some()),
            wall_s,
            frame_mean_ms: mean * 1e3,
            frame_p50_ms: pick(0.5),
            frame_p95_ms: pick(0.95),
            frame_max_ms: sorted.last().copied().unwrap_or(0.0) * 1e3,
            frame_sd_ms: var.sqrt() * 1e3,
            steps: playback.total_steps - stats.steps_before,
            simulated_s: playback.total_simulated() - stats.simulated_before,
            dropped_s: playback.dropped - stats.dropped_before,
            first_frame_s: first_frame_rendered().map(|t| t.duration_since(started).as_secs_f64()),
        }
    }

    /// One line for stderr; `tests/viewer_screenshot.rs` parses the `rtf` and `frame` figures.
    pub fn line(&self) -> String {
        let rtf = if self.wall_s > 0.0 {
            self.simulated_s / self.wall_s
        } else {
            0.0
        };
        format!(
            "cdpr view: {} frames in {:.2} s; frame ms mean {:.1} p50 {:.1} p95 {:.1} max {:.1} sd {:.1}; \
             physics {} steps = {:.3} s simulated in {:.3} s wall, rtf {:.3}, dropped {:.3} s; first frame {}",
            self.frames,
            self.wall_s,
            self.frame_mean_ms,
            self.frame_p50_ms,
            self.frame_p95_ms,
            self.frame_max_ms,
            self.frame_sd_ms,
            self.steps,
            self.simulated_s,
            self.wall_s,
            rtf,
            self.dropped_s,
            self.first_frame_s
                .map(|s| format!("{s:.2} s after start"))
                .unwrap_or_else(|| "not rendered".into()),
        )
    }
}

/// Frames counted and timed, the screenshot taken and the exit at --frames, --max-frames or
/// --duration, the first rendered frame marked.
pub struct CapturePlugin;

impl Plugin for CapturePlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(FrameStats::default())
            .add_systems(Last, per_frame);
        if let Some(render_app) = app.get_sub_app_mut(bevy::render::RenderApp) {
            render_app.add_systems(
                bevy::render::Render,
                mark_first_render.in_set(bevy::render::RenderSystems::Cleanup),
            );
        }
    }
}
