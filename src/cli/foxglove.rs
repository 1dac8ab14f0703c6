//! `--foxglove [ADDR]`: the live view, one option for `cdpr shadow`, `cdpr plc` and `cdpr
//! view` (its default, rates and address rule are `cdpr_ads::live_view`'s). An address is no
//! run option of core's table (no Python or sweep face takes one), hence a clap struct here,
//! flattened by the three commands, as `LinkArgs` is by `shadow` and `view --plc`.

use super::args::warn;
use anyhow::{Context, Result};
use cdpr_ads::live_view::{self, LiveOptions, LiveStats, LiveView};
use cdpr_core::robot::Robot;
use cdpr_core::run::RunRequest;
use clap::Args;
use std::net::SocketAddr;

#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Live view (Foxglove, Lichtblick)")]
pub struct FoxgloveArgs {
    /// Serve the run live over the Foxglove WebSocket protocol: open `ws://ADDR:PORT` in
    /// Foxglove or Lichtblick (Open connection → Foxglove WebSocket). Topics /scene (the robot,
    /// cables coloured by tension, ≤ 30 Hz), /tf (the platform), /run (poses, lengths,
    /// tensions, ≤ 100 Hz). Never slows the run: snapshots a busy server cannot take are
    /// dropped and counted. Alone: 127.0.0.1:8765 (Foxglove's port); any other address serves
    /// every client that can reach it, without authentication: a warning says so.
    #[arg(long, value_name = "ADDR:PORT", num_args = 0..=1,
          default_missing_value = live_view::DEFAULT_ADDR.to_string())]
    pub foxglove: Option<SocketAddr>,
}

impl FoxgloveArgs {
    /// Starts the live view of `robot` when asked, saying where (`command`: `cdpr shadow`);
    /// `extra` names the face's extra values in each `/run` sample; `cycle_stats`: the face
    /// sends the shadow's cycle statistics.
    pub fn start(
        &self,
        robot: &Robot,
        command: &str,
        extra: &[&str],
        cycle_stats: bool,
    ) -> Result<Option<LiveView>> {
        let Some(addr) = self.foxglove else {
            return Ok(None);
        };
        if let Some(w) = live_view::EXPOSURE.warning(addr) {
            warn(&[w]);
        }
        let view = LiveView::start(
            addr,
            robot,
            LiveOptions {
                name: format!("{command} ({})", robot.name),
                extra: extra.iter().map(|s| s.to_string()).collect(),
                cycle_stats,
            },
        )
        .with_context(|| format!("starting the live view (--foxglove {addr})"))?;
        // One line on stderr that scripts (and the tests) wait for.
        eprintln!(
            "{command}: live view on {} (Foxglove/Lichtblick: Open connection → Foxglove \
             WebSocket)",
            view.url()
        );
        Ok(Some(view))
    }
}

impl FoxgloveArgs {
    /// `cdpr view`'s live view. The viewer sends the robot it draws with its first frame (the
    /// demo's, a replay's, the picker's); until then the request's robot, or the demo's first
    /// (uvigo8).
    #[cfg_attr(not(feature = "viewer"), allow(dead_code))]
    pub fn start_for_view(&self, request: &RunRequest) -> Result<Option<LiveView>> {
        if self.foxglove.is_none() {
            return Ok(None);
        }
        let robot = match &request.robot {
            Some(_) => super::args::load_robot(request)?,
            None => super::args::find_robot("uvigo8")?,
        };
        self.start(&robot, "cdpr view", &[], false)
    }
}

/// "live view 2 clients, 0 dropped" for a status line.
pub fn status(stats: &LiveStats) -> String {
    format!(
        "live view {} client{}, {} dropped",
        stats.clients,
        if stats.clients == 1 { "" } else { "s" },
        stats.dropped
    )
}

/// The live view's figures at exit, one line.
pub fn print_summary(stats: &LiveStats) {
    println!(
        "live view: {} snapshots published ({} scenes), {} dropped (queue full), {} client{} at \
         the end",
        stats.published,
        stats.scenes,
        stats.dropped,
        stats.clients,
        if stats.clients == 1 { "" } else { "s" }
    );
}
