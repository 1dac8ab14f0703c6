//! `cdpr view`'s own options as one typed request (core's [`cdpr_core::request!`]): the
//! camera, the clock, the window, the screenshot and the clip. The command line's flags are
//! made from this table; the run itself is core's [`cdpr_core::run::RunRequest`].

use crate::camera::{Antialiasing, CameraView};
use crate::video::{DEFAULT_FPS, MAX_FPS};
use cdpr_core::options::{
    Group, Kind, OptionError, OptionSpec, OptionValue, Problem, Value, YEAR_S, choice, choices,
    number, whole,
};

cdpr_core::choice_value!(CameraView);
cdpr_core::choice_value!(Antialiasing);

/// The clips' heading in the help.
pub const CLIPS: &str = "Replay and clips";

/// A window's size in pixels, `WIDTHxHEIGHT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSize(pub u32, pub u32);

/// The smallest and largest side of a window, pixels.
pub const WINDOW_SIDE: (u32, u32) = (64, 8192);

impl OptionValue for WindowSize {
    fn from_value(spec: &'static OptionSpec, value: Value) -> Result<Self, OptionError> {
        let text = String::from_value(spec, value)?;
        let bad = || {
            spec.error(Problem::WrongType {
                expected: "WIDTHxHEIGHT, each from 64 to 8192 pixels",
                given: text.clone(),
            })
        };
        let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
        let side = |s: &str| {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|v| (WINDOW_SIDE.0..=WINDOW_SIDE.1).contains(v))
        };
        match (side(w), side(h)) {
            (Some(w), Some(h)) => Ok(WindowSize(w, h)),
            _ => Err(bad()),
        }
    }
    fn to_value(&self) -> Value {
        Value::Text(format!("{}x{}", self.0, self.1))
    }
}

cdpr_core::request! {
    /// What `cdpr view` shows and how, beyond the run.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ViewRequest, table OPTIONS;
    /// What the camera frames at the start.
    camera: CameraView = CameraView::Path,
        choice(Group::Command, choices::<CameraView>, "VIEW",
            "what the camera frames at the start (F cycles frame → path → platform)");
    /// Multisampling of the 3D view.
    msaa: Antialiasing = Antialiasing::Auto,
        choice(Group::Command, choices::<Antialiasing>, "auto|on|off",
            "4× multisampling of the 3D view: `auto` leaves it out on a software renderer \
             (lavapipe), which spends nearly half a frame on it");
    /// Simulated seconds per wall-clock second.
    time_scale: f64 = 1.0,
        number(Group::Command, "", 1e-3, 100.0, "X", "simulated seconds per wall-clock second");
    /// Start this many simulated seconds into the run.
    seek: f64 = 0.0,
        number(Group::Command, "s", 0.0, 3600.0, "S",
            "start this many simulated seconds into the run (fills the trails)");
    /// The frame at which the screenshot is taken.
    frames: u32 = 5,
        whole(Group::Command, 1, 100_000, "frame at which the screenshot is taken").requires("screenshot");
    /// The window's size.
    size: WindowSize = WindowSize(1280, 720),
        OptionSpec::new(Group::Command, Kind::Name, "WxH", "window size, pixels");
    /// Exit after this many frames.
    max_frames: Option<u32> = None,
        whole(Group::Command, 1, 100_000_000, "exit after this many frames (measurements)");
    /// Exit after this many wall-clock seconds.
    duration: Option<f64> = None,
        number(Group::Command, "s", 1e-3, YEAR_S, "S",
            "exit after this many wall-clock seconds (measurements)");
    /// The clip's start on the run's clock.
    from: Option<f64> = None,
        number(Group::Command, "s", 0.0, YEAR_S, "S", "the clip's start on the run's clock")
            .default_text("where the run starts, or --seek").heading(CLIPS).requires("video");
    /// The clip's end on the run's clock.
    to: Option<f64> = None,
        number(Group::Command, "s", 0.0, YEAR_S, "S", "the clip's end on the run's clock")
            .default_text("the trajectory's or the record's end").heading(CLIPS).requires("video");
    /// The clip's frames per second.
    fps: u32 = DEFAULT_FPS,
        whole(Group::Command, 1, MAX_FPS as u64, "the clip's frames per second")
            .heading(CLIPS).requires("video");
    /// Shrink each frame of the clip N times.
    shrink: u32 = 1,
        whole(Group::Command, 1, 8, "shrink each frame of the clip N times (the mean of N×N \
            pixels): rendered at --size 960x600, --shrink 2 makes a 480x300 clip with smooth \
            edges and small text")
            .heading(CLIPS).requires("video");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_within_their_range() {
        let mut r = ViewRequest::default();
        r.set("size", Value::Text("960X600".into()))
            .expect("a size");
        assert_eq!(r.size, WindowSize(960, 600));
        for bad in ["960", "10x600", "960x9000", "axb"] {
            assert!(r.set("size", Value::Text(bad.into())).is_err(), "{bad}");
        }
        assert_eq!(r.get("size"), Some(Value::Text("960x600".into())));
    }
}
