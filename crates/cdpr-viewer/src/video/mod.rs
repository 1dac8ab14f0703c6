//! Clips: `cdpr view --video out.gif|out.mp4 [--from S --to S] [--fps N]` renders a run — a
//! simulated one or a replayed record — frame by frame on the run's own clock: frame k shows
//! time `from + k/fps` ([`Playback::advance_to`]), whatever the wall clock does, so a clip
//! made on a software renderer at 3 frames per second plays as smoothly as one from a GPU.
//! Each frame is captured with Bevy's `Screenshot`, and the run moves on to the next frame's
//! time only once that capture has arrived: no frame is skipped or shown twice.
//!
//! GIF is written in pure Rust (the `gif` crate): one palette for the whole clip — 240
//! colours of the first frame by `color_quant`'s NeuQuant and 16 of the tension scale, so
//! cables that tighten later keep their colour — and each frame stored as the rectangle that
//! changed since the one before (the frame and the background do not move: a clip of the
//! robot is a fraction of a full-frame one). MP4 pipes raw frames to `ffmpeg`, which must be
//! on PATH.

mod encode;

pub use encode::{GifClip, shrink};

use super::ViewerError;
use super::playback::Playback;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use encode::Encoder;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Frames per second when `--fps` is not given.
pub const DEFAULT_FPS: u32 = 12;
/// The largest `--fps`.
pub const MAX_FPS: u32 = 120;
/// The most frames a clip may have (about 2 h at 12 fps).
pub const MAX_FRAMES: u32 = 100_000;
/// Frames rendered before the first captured one: the panel lays itself out and the camera
/// frames the robot in the first few.
const WARMUP_FRAMES: u32 = 5;
/// Frames a capture may take to arrive before the clip counts as failed.
const CAPTURE_WATCHDOG: u32 = 300;
/// How often progress is written to stderr.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// What `--video` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct VideoPlan {
    pub path: PathBuf,
    /// Start and end on the run's clock, s (default: where the run stands, and its end).
    pub from: Option<f64>,
    pub to: Option<f64>,
    pub fps: u32,
    /// Each frame shrunk this many times (1: as rendered).
    pub shrink: u32,
}

/// A clip's file type, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VideoFormat {
    Gif,
    Mp4,
}

impl VideoFormat {
    pub fn of(path: &Path) -> Result<VideoFormat, String> {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("gif") => Ok(VideoFormat::Gif),
            Some("mp4") => Ok(VideoFormat::Mp4),
            _ => Err(format!(
                "{}: a clip is written as .gif (built in) or .mp4 (through ffmpeg)",
                path.display()
            )),
        }
    }
}

/// What is said when an MP4 is asked for and ffmpeg is not there.
pub const FFMPEG_MISSING: &str = "writing MP4 needs ffmpeg on PATH, and it is not there: \
install it (Debian/Ubuntu: `sudo apt-get install ffmpeg`, Fedora: `sudo dnf install ffmpeg`, \
macOS: `brew install ffmpeg`), or write a GIF (--video clip.gif), which needs nothing else";

/// `ffmpeg` on PATH, if it is there.
pub fn ffmpeg_on_path() -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join("ffmpeg"))
        .find(|p| p.is_file())
}

/// Refuses a clip this build cannot write (before any window opens): an unknown extension,
/// MP4 without ffmpeg, a folder that does not exist.
pub fn check_video_path(path: &Path) -> Result<VideoFormat, String> {
    let format = VideoFormat::of(path)?;
    if format == VideoFormat::Mp4 && ffmpeg_on_path().is_none() {
        return Err(format!("{}: {FFMPEG_MISSING}", path.display()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(format!(
            "{}: the folder {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    Ok(format)
}

/// The frames of a clip, on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clip {
    pub from: f64,
    pub to: f64,
    pub fps: u32,
    /// `(to − from)·fps`, rounded.
    pub frames: u32,
}

impl Clip {
    pub fn new(from: f64, to: f64, fps: u32) -> Result<Clip, String> {
        if !(from.is_finite() && to.is_finite()) || to <= from {
            return Err(format!(
                "the clip must end after it starts (--from {from} s, --to {to} s)"
            ));
        }
        if !(1..=MAX_FPS).contains(&fps) {
            return Err(format!("--fps {fps}: between 1 and {MAX_FPS}"));
        }
        let frames = ((to - from) * fps as f64).round();
        if frames < 1.0 {
            return Err(format!(
                "a clip from {from} s to {to} s at {fps} fps has no frame"
            ));
        }
        if frames > MAX_FRAMES as f64 {
            return Err(format!(
                "a clip from {from} s to {to} s at {fps} fps has {frames} frames, more than \
                 {MAX_FRAMES}"
            ));
        }
        Ok(Clip {
            from,
            to,
            fps,
            frames: frames as u32,
        })
    }

    /// The run's time frame `k` shows, s.
    pub fn time(&self, k: u32) -> f64 {
        self.from + k as f64 / self.fps as f64
    }

    /// How long frame `k` is shown in a GIF, in its unit of 1/100 s: rounded so that the
    /// frames' delays add up to the clip's duration (12 fps: 8, 9, 8, 8, 9, 8, …).
    pub fn delay_cs(&self, k: u32) -> u16 {
        let at = |k: u32| (100.0 * k as f64 / self.fps as f64).round() as u64;
        (at(k + 1) - at(k)).min(u16::MAX as u64) as u16
    }
}

/// The clip's result, read by [`super::run`] once the window is closed (the winit runner
/// leaves the app's world empty): `Ok` once every frame is written.
#[derive(Debug, Clone, Default)]
pub struct ClipOutcome(pub Arc<Mutex<Option<Result<(), String>>>>);

impl ClipOutcome {
    fn set(&self, result: Result<(), String>) {
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(result);
        }
    }
}

/// The clip being rendered: which frame comes next, and its encoder.
#[derive(Resource)]
pub struct VideoRecorder {
    pub clip: Clip,
    shrink: u32,
    path: PathBuf,
    format: VideoFormat,
    /// Opened with the first frame (it sets the size).
    encoder: Option<Encoder>,
    /// The frame to capture next.
    next: u32,
    /// A capture was asked for and has not arrived: the run does not move.
    waiting: bool,
    waited: u32,
    warmup: u32,
    done: bool,
    started: Instant,
    last_progress: Instant,
    pub outcome: ClipOutcome,
}

impl VideoRecorder {
    /// The clip `plan` asks of `playback`: from where the run stands (or `--from`) to its end
    /// (or `--to`): a trajectory's last sample, a record's last row.
    pub fn new(plan: &VideoPlan, playback: &Playback) -> Result<VideoRecorder, ViewerError> {
        let format = VideoFormat::of(&plan.path).map_err(ViewerError::Options)?;
        let end = match (playback.driver(), playback.replay_source()) {
            (Some(driver), _) => Some(driver.trajectory().duration()),
            (None, Some(replay)) => Some(replay.end()),
            (None, None) => None,
        };
        let Some(end) = end else {
            return Err(ViewerError::Options(
                "a clip is rendered from a simulated or a replayed run, not a live shadow".into(),
            ));
        };
        let from = plan.from.unwrap_or_else(|| playback.run_time());
        let to = plan.to.unwrap_or(end);
        let clip = Clip::new(from, to, plan.fps).map_err(ViewerError::Options)?;
        let now = Instant::now();
        Ok(VideoRecorder {
            clip,
            shrink: plan.shrink.max(1),
            path: plan.path.clone(),
            format,
            encoder: None,
            next: 0,
            waiting: false,
            waited: 0,
            warmup: WARMUP_FRAMES,
            done: false,
            started: now,
            last_progress: now,
            outcome: ClipOutcome::default(),
        })
    }

    /// Virtual time per rendered frame (the camera's and the panel's clock).
    pub fn frame_duration(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.clip.fps as f64)
    }

    fn fail(&mut self, message: String, exit: &mut MessageWriter<AppExit>) {
        self.done = true;
        self.encoder = None;
        self.outcome.set(Err(message));
        exit.write(AppExit::error());
    }

    /// Adds a captured frame (RGB, `width × height`).
    fn push(&mut self, width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
        let delay = self.clip.delay_cs(self.next);
        let encoder = match &mut self.encoder {
            Some(e) => e,
            None => self.encoder.insert(Encoder::create(
                &self.path,
                self.format,
                width,
                height,
                self.clip.fps,
                rgb,
            )?),
        };
        encoder.push(width, height, rgb, delay)
    }

    fn progress(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last_progress) >= PROGRESS_EVERY || self.next == self.clip.frames
        {
            self.last_progress = now;
            eprintln!(
                "cdpr view: clip frame {}/{} (t = {:.3} s), {:.1} s",
                self.next,
                self.clip.frames,
                self.clip.time(self.next.saturating_sub(1)),
                now.duration_since(self.started).as_secs_f64()
            );
        }
    }
}

/// In `Update` (the playback's set): moves the run to the next frame's time and asks for its
/// capture, once the previous capture has arrived; ends the app when the clip is complete.
pub fn video_frame(
    mut commands: Commands,
    mut recorder: ResMut<VideoRecorder>,
    mut playback: ResMut<Playback>,
    mut exit: MessageWriter<AppExit>,
) {
    let recorder = &mut *recorder;
    if recorder.done {
        return;
    }
    if recorder.waiting {
        recorder.waited += 1;
        if recorder.waited > CAPTURE_WATCHDOG {
            let k = recorder.next;
            recorder.fail(format!("the capture of frame {k} never arrived"), &mut exit);
        }
        return;
    }
    if let Some(error) = playback.error.clone() {
        recorder.fail(format!("the run stopped: {error}"), &mut exit);
        return;
    }
    if recorder.next >= recorder.clip.frames {
        recorder.done = true;
        let result = match recorder.encoder.take() {
            Some(encoder) => encoder.finish(),
            None => Err("no frame was captured".into()),
        };
        match result {
            Ok(()) => {
                recorder.outcome.set(Ok(()));
                exit.write(AppExit::Success);
            }
            Err(e) => {
                let e = format!("{}: {e}", recorder.path.display());
                recorder.fail(e, &mut exit);
            }
        }
        return;
    }
    let t = recorder.clip.time(recorder.next);
    if let Err(e) = playback.advance_to(t) {
        recorder.fail(format!("the run stopped at {t} s: {e}"), &mut exit);
        return;
    }
    if recorder.warmup > 0 {
        recorder.warmup -= 1;
        return;
    }
    commands
        .spawn(Screenshot::primary_window())
        .observe(frame_captured);
    recorder.waiting = true;
    recorder.waited = 0;
}

/// The capture of the frame asked for: into the encoder; the run may move on.
fn frame_captured(
    captured: On<ScreenshotCaptured>,
    mut recorder: ResMut<VideoRecorder>,
    mut exit: MessageWriter<AppExit>,
) {
    let recorder = &mut *recorder;
    if recorder.done {
        return;
    }
    // The alpha channel may hold brightness rather than coverage (as Bevy's save_to_disk
    // notes): dropped.
    let pushed = match captured.image.clone().try_into_dynamic() {
        Ok(image) => {
            let rgb = image.to_rgb8();
            let (width, height, rgb) =
                shrink(rgb.width(), rgb.height(), rgb.as_raw(), recorder.shrink);
            recorder.push(width, height, &rgb)
        }
        Err(e) => Err(format!("the captured frame is not an image: {e}")),
    };
    if let Err(e) = pushed {
        let e = format!("{}: {e}", recorder.path.display());
        recorder.fail(e, &mut exit);
        return;
    }
    recorder.next += 1;
    recorder.waiting = false;
    recorder.progress();
}

/// A clip: each frame captured into the recorder, on the playback's fixed clock.
pub struct VideoPlugin(std::sync::Mutex<Option<VideoRecorder>>);

impl VideoPlugin {
    pub fn new(recorder: VideoRecorder) -> VideoPlugin {
        VideoPlugin(std::sync::Mutex::new(Some(recorder)))
    }
}

impl Plugin for VideoPlugin {
    fn build(&self, app: &mut App) {
        // Built once: the recorder moves into the app.
        let recorder = self.0.lock().ok().and_then(|mut r| r.take());
        if let Some(recorder) = recorder {
            app.insert_resource(recorder)
                .add_systems(Update, video_frame.in_set(crate::playback::PlaybackSet));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_times_and_gif_delays_follow_the_clip_clock() {
        let clip = Clip::new(2.0, 3.0, 10).expect("a clip");
        assert_eq!(clip.frames, 10);
        assert_eq!(clip.time(0), 2.0);
        assert_eq!(clip.time(5), 2.5);
        // 12 fps: delays of 8 or 9 hundredths that add up to the duration.
        let clip = Clip::new(0.0, 2.0, 12).expect("a clip");
        assert_eq!(clip.frames, 24);
        let delays: Vec<u16> = (0..clip.frames).map(|k| clip.delay_cs(k)).collect();
        assert_eq!(delays.iter().map(|&d| d as u32).sum::<u32>(), 200);
        assert!(delays.iter().all(|&d| d == 8 || d == 9), "{delays:?}");
        assert!(Clip::new(1.0, 1.0, 10).is_err());
        assert!(Clip::new(0.0, 0.01, 10).is_err());
        assert!(Clip::new(0.0, 1.0, 0).is_err());
    }

    #[test]
    fn unknown_extensions_are_refused_naming_both_formats() {
        let e = check_video_path(Path::new("clip.avi")).expect_err("refused");
        assert!(e.contains(".gif") && e.contains(".mp4"), "{e}");
        let e = check_video_path(Path::new("/no/such/dir/clip.gif")).expect_err("refused");
        assert!(e.contains("/no/such/dir"), "{e}");
    }
}
