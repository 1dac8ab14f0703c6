//! `cdpr view`: the 3D viewer (and, with no arguments at all, its demo).

use super::foxglove::FoxgloveArgs;
use super::options::{RequestArgs, RunArgs, View};
use super::shadow::{self, LinkArgs};
use anyhow::{Context, Result, bail};
use cdpr_ads::shadow::CycleTiming;
use cdpr_core::run::{CommandSource, OPTIONS};
use cdpr_viewer::live::LiveOutcome;
use cdpr_viewer::replay::ReplayRequest;
use cdpr_viewer::request::ViewRequest;
use cdpr_viewer::video::VideoPlan;
use cdpr_viewer::{self as viewer, Executor, LiveInfo, Scenario, ViewerOptions};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
#[command(
    after_help = "Keys: Space pause/run, R reset, S one step, F next view, H help, Esc quit. \
--help says more: the demo, live mode (and its link, Secure ADS and live view options), replay, \
clips, examples.\n\n\
Examples:\n  \
cdpr view\n  \
cdpr view --robot silva4 --trajectory pickplace --speed 0.5 --model elastic\n  \
cdpr view --replay shadow.csv --compare sim.csv",
    after_long_help = "Without --robot and --trajectory the demo plays: uvigo8 on seed 000's test, \
then every other robot of the picker (the shipped ones, then ./robots/*.toml) on its own \
paper's trajectory, round and round.\n\n\
Keys: Space pause/run, R reset, S one step, F next view (frame, path, platform: --camera picks the first), H help, Esc quit. Mouse: left-drag \
orbit, right-drag pan, wheel zoom.\n\n\
Live mode (--plc): the ADS shadow of a controller, exactly as `cdpr shadow` runs it (same cycle, \
physics and write allow-list) on a thread of its own, drawn at the screen's rate; the panel shows \
the link (connected / offline / stopped), the PLC cycle and the exchange figures, the ghost box is \
the controller's commanded pose. Space freezes the view only; closing the window stops the shadow \
and flushes --record.\n\n\
Replay (--replay): a recorded run (`cdpr simulate --out`, `cdpr shadow --record`; CSV or MCAP) with \
a time slider, play/pause, speed, one-sample steps (← →) and jumps to the largest tension, the \
largest tracking error, the first slack cable and the first gap; --compare draws a second record \
as a ghost at the same time. Clips (--video): the run rendered frame by frame on its own clock, \
each frame exactly 1/fps s later, into a GIF or (with ffmpeg) an MP4.\n\n\
Examples:\n  \
cdpr view\n  \
cdpr plc --robot uvigo8 --trajectory seed000 &  cdpr view --plc 127.0.0.1 --robot uvigo8 --write\n  \
cdpr view --robot silva4 --trajectory pickplace --speed 0.5 --model elastic --control tension\n  \
cdpr view --replay shadow.csv --compare sim.csv\n  \
xvfb-run -a -s \"-screen 0 1280x720x24\" cdpr view --replay run.mcap --video run.gif --from 2 --to 6\n  \
xvfb-run -a -s \"-screen 0 1280x720x24\" cdpr view --robot caroca --screenshot caroca.png --seek 5"
)]
pub struct ViewArgs {
    /// The run, as `cdpr simulate` takes it: alone, --robot plays the robot's own trajectory
    /// (seed000, pickplace, poly5 or tilt); neither --robot nor --trajectory: the demo.
    #[command(flatten)]
    pub run: RunArgs<View>,
    /// The camera, the clock, the window and the clip (the viewer's request).
    #[command(flatten)]
    pub view: RequestArgs<ViewRequest>,
    /// Render, save the window as this PNG after --frames frames, and exit. Each frame then
    /// advances the simulation by exactly 1/60 s, so the picture depends only on the arguments.
    #[arg(long, value_name = "PNG", value_parser = screenshot_path)]
    pub screenshot: Option<PathBuf>,
    /// ECS executor of the main schedules (the guide's viewer page has the measurement).
    #[arg(long, value_enum, default_value = "single", hide = true)]
    pub executor: ExecutorArg,
    /// Print the frame-time and physics-rate summary at exit.
    #[arg(long)]
    pub stats: bool,
    /// Live mode: draw the ADS shadow of the controller (or of `cdpr plc`) at this address,
    /// HOST or HOST:PORT. The model comes from the controller's geometry; --robot adds mass,
    /// stiffness and limits (as `cdpr shadow`).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub plc: Option<String>,
    #[command(flatten)]
    pub link: LinkArgs,
    /// Replay a recorded run (CSV or MCAP, as `cdpr simulate --out` and `cdpr shadow --record`
    /// write them) instead of simulating one. The robot is the record's own; --robot names it
    /// for a record that does not say.
    #[arg(
        long,
        help_heading = "Replay and clips",
        value_name = "RUN",
        conflicts_with = "plc"
    )]
    pub replay: Option<PathBuf>,
    /// Replay: draw this second record as a ghost at the same time (e.g. the shadow against
    /// `cdpr simulate` of the same commands, or two models).
    #[arg(
        long,
        help_heading = "Replay and clips",
        value_name = "RUN",
        requires = "replay"
    )]
    pub compare: Option<PathBuf>,
    /// Render the run (simulated or replayed) frame by frame into this clip and exit: .gif
    /// (built in) or .mp4 (through ffmpeg). Each frame advances the run by exactly 1/fps s,
    /// whatever the renderer's speed.
    #[arg(long, help_heading = "Replay and clips", value_name = "GIF|MP4", conflicts_with_all = ["screenshot", "plc"],
          value_parser = video_path)]
    pub video: Option<PathBuf>,
    /// Leave the side panel out (a clip of the 3D view alone).
    #[arg(long, help_heading = "Replay and clips")]
    pub no_panel: bool,
    // Last: its help heading would carry over to the options after it.
    #[command(flatten)]
    pub foxglove: FoxgloveArgs,
}

/// `cdpr view -h`: live mode's link and Secure ADS options, and the live view's, only in
/// `--help` (`cdpr shadow -h` lists them too).
pub fn shorten(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| match a.get_help_heading() {
        Some(h)
            if h.starts_with("Controller link")
                || h.starts_with("Secure ADS")
                || h.starts_with("Live view") =>
        {
            a.hide_short_help(true)
        }
        _ => a,
    })
}

#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub enum ExecutorArg {
    #[default]
    Single,
    Multi,
}

/// A screenshot path with an extension this build can write (refused before any window opens).
fn screenshot_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    viewer::capture::check_screenshot_path(&path)?;
    Ok(path)
}

/// "wrote PATH" once the screenshot is there and not empty; an error otherwise.
fn wrote_screenshot(path: &std::path::Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() > 0 => {
            println!("wrote {}", path.display());
            Ok(())
        }
        Ok(_) => bail!("the screenshot {} is empty: not written", path.display()),
        Err(e) => bail!("the screenshot {} was not written: {e}", path.display()),
    }
}

/// A clip path this build can write (refused before any window opens).
fn video_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    viewer::video::VideoFormat::of(&path)?;
    Ok(path)
}

pub fn view(a: ViewArgs, started: Instant) -> Result<ExitCode> {
    let v = &a.view.request;
    // In range by its spec (at most a year).
    let duration = v.duration.map(Duration::from_secs_f64);
    let options = ViewerOptions {
        scenario: None,
        time_scale: v.time_scale,
        seek: v.seek,
        screenshot: a.screenshot.clone(),
        frames: v.frames,
        max_frames: v.max_frames,
        duration,
        size: (v.size.0, v.size.1),
        executor: match a.executor {
            ExecutorArg::Single => Executor::Single,
            ExecutorArg::Multi => Executor::Multi,
        },
        started,
        video: a.video.as_ref().map(|path| VideoPlan {
            path: path.clone(),
            from: v.from,
            to: v.to,
            fps: v.fps,
            shrink: v.shrink,
        }),
        panel: !a.no_panel,
        clearance: a.link.options.request.clearance,
        camera: v.camera,
        msaa: v.msaa,
        ..ViewerOptions::default()
    };
    // Serves until the window closes (dropped when this returns).
    let live_view = a.foxglove.start_for_view(&a.run.request)?;
    let options = ViewerOptions {
        live_view: live_view
            .as_ref()
            .map(cdpr_ads::live_view::LiveView::sender),
        ..options
    };
    if let Some(plc) = &a.plc {
        return live(&a, plc, options);
    }
    let request = &a.run.request;
    let options = match &a.replay {
        Some(path) => {
            // The record holds the run: only --robot (for a record that names none) applies.
            if let Some(name) = a.run.given.iter().find(|name| **name != "robot") {
                let flag = OPTIONS
                    .iter()
                    .find(|spec| spec.name == *name)
                    .map_or_else(|| name.to_string(), |spec| spec.cli_flag());
                bail!("--{flag} does not apply to a replay: the record holds the run");
            }
            ViewerOptions {
                replay: Some(ReplayRequest {
                    path: path.clone(),
                    compare: a.compare.clone(),
                    robot: request.robot.clone(),
                }),
                ..options
            }
        }
        None => ViewerOptions {
            scenario: match (&request.robot, &request.trajectory) {
                (None, None) => None,
                _ => Some(Scenario::new(request.clone())),
            },
            ..options
        },
    };
    let summary = viewer::run(options).context("cdpr view")?;
    if a.stats {
        eprintln!("{}", summary.line());
    }
    if let Some(path) = &a.screenshot {
        wrote_screenshot(path)?;
    }
    if let Some(path) = &a.video {
        let bytes = std::fs::metadata(path)
            .with_context(|| format!("the clip {} was not written", path.display()))?
            .len();
        println!("wrote {} ({:.1} kB)", path.display(), bytes as f64 / 1e3);
    }
    Ok(ExitCode::SUCCESS)
}

/// `cdpr view --plc`: connects and starts the shadow as `cdpr shadow` does, runs it on its own
/// thread while the window draws it, then stops it (flushing the record) and prints its
/// statistics as `cdpr shadow` does.
fn live(a: &ViewArgs, plc: &str, options: ViewerOptions) -> Result<ExitCode> {
    let request = &a.run.request;
    let not_live = [
        (request.trajectory.is_some(), "--trajectory"),
        (a.view.given.contains(&"seek"), "--seek"),
        (a.view.given.contains(&"time_scale"), "--time-scale"),
        (request.compensate, "--compensate"),
    ];
    if let Some((_, flag)) = not_live.iter().find(|(given, _)| *given) {
        bail!(
            "{flag} does not apply to live mode: the controller commands the motion (drop --plc \
             to play a trajectory)"
        );
    }
    let setup = a.link.setup(plc, request)?;
    let opened = cdpr_ads::shadow::connect(&setup)?;
    for n in &opened.notes {
        eprintln!("cdpr view: {n}");
    }
    eprintln!("cdpr view: live shadow: {}", opened.banner);
    shadow::print_start(opened.shadow.start_report());
    let mut lines = vec![
        ("AMS target".to_string(), opened.target.to_string()),
        (
            "model".to_string(),
            format!(
                "{} / {}",
                request.model.name(),
                request.control_mode(CommandSource::Controller).name()
            ),
        ),
        (
            "cycle".to_string(),
            match setup.config.timing {
                CycleTiming::Free { period, .. } => format!("every {period:?}"),
                CycleTiming::Lockstep { plc_period } => format!("lockstep, {plc_period:?}"),
            },
        ),
        (
            "ADS exchange".to_string(),
            opened.exchange.map_or_else(
                || a.link.options.request.exchange.to_string(),
                |e| e.to_string(),
            ),
        ),
        (
            "writes".to_string(),
            if a.link.write {
                "allow-listed symbols".to_string()
            } else {
                "none (read-only)".to_string()
            },
        ),
    ];
    if let Some(path) = &a.link.record {
        lines.push(("record".to_string(), path.display().to_string()));
    }
    let info = LiveInfo {
        address: opened.endpoint.clone(),
        lines,
    };
    let (feed, handle) = viewer::live::spawn(opened.shadow, info, None, setup.interrupt.clone())
        .context("starting the shadow's thread")?;
    let started = Instant::now();
    let shown = viewer::run_live(options, feed);
    let wall = started.elapsed().as_secs_f64();
    // The shadow stops (and flushes its record) whatever became of the window.
    let outcome = handle.finish();
    if let Some(outcome) = &outcome {
        shadow::print_summary(&outcome.summary, wall, outcome.simulated);
        if let Some(path) = &a.link.record {
            println!("wrote {}", path.display());
        }
    }
    let summary = shown.context("cdpr view")?;
    if a.stats {
        eprintln!("{}", summary.line());
    }
    if let Some(path) = &a.screenshot {
        wrote_screenshot(path)?;
    }
    match outcome {
        Some(LiveOutcome { result, .. }) => result.context("the shadow stopped")?,
        None => bail!("the shadow's thread panicked (see the message above)"),
    }
    Ok(ExitCode::SUCCESS)
}
