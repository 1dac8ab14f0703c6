//! Command-line faces of the library. Each subcommand parses, calls the library crates (`cdpr_core`, `cdpr_ads`, `cdpr_viewer`), and prints a
//! table (default) or exactly one JSON object on stdout (`--json`). Errors go to stderr with
//! context and exit status 1; a computed "no" (infeasible tensions) exits with status 2.

mod args;
mod catalogue;
mod export;
mod feedforward;
mod foxglove;
mod kin;
mod legs;
mod net;
mod options;
mod output;
mod plc;
mod preflight;
mod proxy;
mod secure;
mod shadow;
mod sim;
mod surrogate;
mod sweep;
mod test;
mod traj;
#[cfg(feature = "viewer")]
mod view;
mod workspace;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Digital shadow for cable-driven parallel robots (CDPRs).
///
/// Robots are TOML files (see robots/); the shipped ones, and the files in ./robots and
/// here, can also be named directly (`cdpr robots` lists them). All quantities are SI:
/// metres, radians, kilograms, newtons.
/// Poses are x,y,z[,roll,pitch,yaw] with R = Rz(yaw)·Ry(pitch)·Rx(roll).
#[derive(Parser, Debug)]
#[command(name = "cdpr", version, propagate_version = true, max_term_width = 100)]
#[command(after_help = "Examples:\n  \
    cdpr check robots/uvigo8.toml\n  \
    cdpr ik --robot uvigo8 --pose 0,0,0.15\n  \
    cdpr fk --robot silva4 --lengths 1.36206030,1.42183276,1.22378845,1.15380164 --method sphere\n  \
    cdpr tensions --robot caroca --pose 0,0,1.5 --payload 15\n  \
    cdpr equilibrium --robot uvigo8 --sag-at 0,0,0.05\n  \
    cdpr trajectory --robot uvigo8 --name seed000 --speed 0.1 --out seed000.csv\n  \
    cdpr compare --reference seed000.csv --actual shadow.csv\n  \
    cdpr export --robot uvigo8 --mjcf uvigo8.xml\n  \
    cdpr report --reference seed000.csv --actual shadow.csv --out report/\n  \
    cdpr preflight --robot uvigo8 --trajectory seed000 --profile scurve\n  \
    cdpr plc --robot uvigo8 --trajectory seed000\n  \
    cdpr discover\n  \
    cdpr route add --plc 192.168.1.10 --password 1\n  \
    cdpr route add --plc 192.168.1.10 --secure ssc --password 1\n  \
    cdpr shadow --plc 127.0.0.1 --ams-net-id 127.0.0.1.1.1 --robot uvigo8 --write --record run.csv\n  \
    cdpr proxy --listen 127.0.0.1:48900 --to 127.0.0.1 --delay 5ms --jitter 3ms\n  \
    cdpr test robots/suites/shipped.toml --junit results.xml --report report/")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// No progress bars or status lines on stderr (they are off anyway when stderr is not a
    /// terminal); errors and warnings are still printed.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Validate a robot file and print a summary of it.
    Check(kin::CheckArgs),
    /// Inverse kinematics: cable lengths, directions and seed 000's cable angles at a pose.
    Ik(kin::IkArgs),
    /// Forward kinematics: the pose that gives measured cable lengths.
    Fk(kin::FkArgs),
    /// Tension distribution: minimum-norm tensions within bounds that hold the platform.
    Tensions(kin::TensionsArgs),
    /// Elastic statics: where elastic cables of given rest lengths hold the platform.
    Equilibrium(kin::EquilibriumArgs),
    /// Generate a trajectory (seed000, pickplace, poly5) or load a CSV; check it against the
    /// winch limits, time-scale it, perturb it, write it as CSV.
    #[command(after_help = "Examples:\n  \
        cdpr trajectory --robot uvigo8 --name seed000 --speed 0.1 --out seed000.csv\n  \
        cdpr trajectory --robot silva4 --name pickplace --speed 0.5 --check\n  \
        cdpr trajectory --robot caroca --name poly5 --speed 0.5 --time-scale --out p5.csv\n  \
        cdpr trajectory --robot uvigo8 --name seed000.csv --delay 0.07 --lowpass 3 --resample 0.05 --out shadow.csv")]
    Trajectory(traj::TrajectoryArgs),
    /// Tracking metrics of an actual trajectory against a reference: lag, RMS, Fréchet, NRMSE,
    /// per segment (seed 000's Table 1).
    #[command(after_help = "Examples:\n  \
        cdpr compare --reference seed000.csv --actual shadow.csv\n  \
        cdpr compare --reference run.csv --reference-columns _cmd --actual run.csv --json")]
    Compare(traj::CompareArgs),
    /// Write a report: metrics.json, a Markdown table like seed 000's Table 1, and plots.
    #[command(after_help = "Example:\n  \
        cdpr report --reference seed000.csv --actual shadow.csv --out report/")]
    Report(traj::ReportArgs),
    /// Simulate a trajectory headless (chain or elastic model; length, ideal or tension
    /// winches), print seed-000-style tracking metrics and the real-time factor.
    Simulate(sim::SimulateArgs),
    /// Export the robot as a MuJoCo model (MJCF: cables as spatial tendons with the file's
    /// stiffness, damping and one-sided springs), to cross-check it in MuJoCo.
    Export(export::ExportArgs),
    /// Pre-flight: check a whole trajectory before it goes to the real robot — workspace box,
    /// tensions, slack, winch velocity/acceleration/jerk, pulley wrap and swivel, obstacles —
    /// per segment, with the first violation; exit status 3 on a violation.
    Preflight(preflight::PreflightArgs),
    /// Torque feed-forward: per drive the torque a trajectory needs (platform Newton–Euler,
    /// tension distribution, capstan, the drive's inertia and friction), as CSV for the
    /// controller; robots whose file describes its drives.
    Feedforward(feedforward::FeedforwardArgs),
    /// Virtual PLC: a TwinCAT stand-in serving the robot's ADS symbols on loopback while its
    /// NC task plays a trajectory.
    Plc(plc::PlcArgs),
    /// Live shadow of a TwinCAT controller (or `cdpr plc`) over ADS: the model built from the
    /// controller's geometry, stepped with its commanded lengths, its state written back.
    Shadow(shadow::ShadowArgs),
    /// A plant network rehearsed between a shadow and its PLC: plain AMS/TCP forwarded frame
    /// by frame with delay, jitter and spikes, stalls, TCP resets or a black hole.
    Proxy(proxy::ProxyArgs),
    /// Find TwinCAT systems (and `cdpr plc`) over the ADS UDP service (port 48899): their
    /// address, AMS NetId, host name and versions.
    Discover(net::DiscoverArgs),
    /// Routes on a TwinCAT PLC: `route add` lets this machine talk ADS to it.
    Route(net::RouteArgs),
    /// Seed 004's digital-filter surrogate: fit it to reference runs, validate it.
    Surrogate(surrogate::SurrogateArgs),
    /// Parameter sweep: a grid or random sample of robots, trajectories, speeds and robot
    /// parameters (stiffness, payload, anchor offsets, winch limits, gains), simulated in
    /// parallel, one CSV row of metrics per run; resumable, shardable (--shard I/N).
    Sweep(sweep::SweepArgs),
    /// PLC code under test: a suite of scenarios (robot, PLC, physics, expectations on the
    /// shadow and on the PLC's symbols) run against the shadow as the plant; a verdict per
    /// expectation, JUnit XML for CI, a Markdown report with plots; exit status 3 on a
    /// violation.
    Test(test::TestArgs),
    /// Wrench-feasible workspace: volume, containment of the robot's `[workspace]` box, where
    /// a minimum tension stops being reachable, and a plot of slices.
    Workspace(workspace::WorkspaceArgs),
    /// The 3D viewer: the physics core's state drawn live (frame, platform, cables coloured
    /// by tension, paths), an egui panel to pick robot, trajectory and model; --screenshot
    /// renders one picture and exits. Without arguments: the demo.
    #[cfg(feature = "viewer")]
    View(view::ViewArgs),
    /// The 3D viewer — not in this build (it was built without the `viewer` feature).
    #[cfg(not(feature = "viewer"))]
    #[command(disable_help_flag = true)]
    View(NoViewer),
    /// List the shipped robots and the robot files in ./robots, the current directory and
    /// --dir.
    Robots(catalogue::RobotsArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(catalogue::CompletionsArgs),
}

/// `cdpr view …` in a build without the viewer: whatever follows, one message saying how to
/// get it.
#[cfg(not(feature = "viewer"))]
#[derive(clap::Args, Debug)]
pub struct NoViewer {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

/// `cdpr … | head` closes our standard output early; Rust's `println!` then panics. What was
/// asked for has been read, so end quietly as a SIGPIPE-terminated Unix tool would (141).
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info)
    }));
}

pub fn main() -> ExitCode {
    let started = std::time::Instant::now();
    // Core's messages name options (`dt`); here they are this command line's flags (`--dt`).
    cdpr_core::options::spell_names_with(options::flag_spelling);
    quiet_on_broken_pipe();
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    output::set_quiet(cli.quiet);
    init_tracing();
    let command = match cli.command {
        Some(command) => command,
        None => match no_command() {
            Some(command) => command,
            None => return ExitCode::SUCCESS,
        },
    };
    match run(command, started) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(1)
        }
    }
}

/// The command line, with the shipped robots, trajectories and signals listed in the help of
/// the commands that take them.
fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let cmd = Cli::command();
    #[cfg(feature = "viewer")]
    let cmd = cmd.mut_subcommand("view", view::shorten);
    // The lists load every shipped robot: only a help shows them.
    let cmd = if catalogue::help_asked(std::env::args_os().skip(1)) {
        catalogue::with_catalogue(cmd)
    } else {
        cmd
    };
    let matches = cmd.try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

fn init_tracing() {
    use tracing_subscriber::filter::FilterExt;
    use tracing_subscriber::prelude::*;
    let filter = tracing_subscriber::EnvFilter::try_from_env("CDPR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // No colour codes in a log file or a pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    // The level first, so that only lines that would be shown count as held back.
    let _ = tracing_subscriber::registry()
        .with(fmt.with_filter(filter.and(CrateLog)))
        .try_init();
}

/// The foxglove crate's lines, one a second (it logs one per message it fails to send: 24 691
/// in 0.2 s when 100 viewers that had stopped reading closed); the live view says how many
/// were held back (`cdpr_ads::live_view::crate_log`).
struct CrateLog;

impl<S> tracing_subscriber::layer::Filter<S> for CrateLog {
    fn enabled(
        &self,
        meta: &tracing::Metadata<'_>,
        _: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        !meta.is_event() || cdpr_ads::live_view::crate_log::admit(meta.target())
    }

    fn callsite_enabled(
        &self,
        meta: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        // The crate's events are asked about one by one, never cached as always.
        if cdpr_ads::live_view::crate_log::is_crates(meta.target()) {
            tracing::subscriber::Interest::sometimes()
        } else {
            tracing::subscriber::Interest::always()
        }
    }
}

/// `cdpr` alone: the viewer's demo when the viewer is built in (`cargo run --release` opens
/// it), the command overview otherwise.
#[cfg(feature = "viewer")]
fn no_command() -> Option<Command> {
    Cli::try_parse_from(["cdpr", "view"])
        .ok()
        .and_then(|cli| cli.command)
}

#[cfg(not(feature = "viewer"))]
fn no_command() -> Option<Command> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let _ = cmd.print_help();
    None
}

fn run(command: Command, started: std::time::Instant) -> Result<ExitCode> {
    #[cfg(not(feature = "viewer"))]
    let _ = started; // only the viewer reports the time to its first frame
    match command {
        Command::Check(a) => kin::check(a),
        Command::Ik(a) => kin::ik(a),
        Command::Fk(a) => kin::fk(a),
        Command::Tensions(a) => kin::tensions(a),
        Command::Equilibrium(a) => kin::equilibrium(a),
        Command::Trajectory(a) => traj::trajectory(a),
        Command::Compare(a) => traj::compare(a),
        Command::Report(a) => traj::report(a),
        Command::Simulate(a) => sim::simulate(a),
        Command::Export(a) => export::run(a),
        Command::Plc(a) => plc::run(a),
        Command::Preflight(a) => preflight::run(a),
        Command::Feedforward(a) => feedforward::run(a),
        Command::Shadow(a) => shadow::run(a),
        Command::Proxy(a) => proxy::run(a),
        Command::Discover(a) => net::discover(a),
        Command::Route(a) => net::route(a),
        Command::Surrogate(a) => surrogate::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Test(a) => test::run(a),
        Command::Workspace(a) => workspace::run(a),
        #[cfg(feature = "viewer")]
        Command::View(a) => view::view(a, started),
        #[cfg(not(feature = "viewer"))]
        Command::View(_) => anyhow::bail!(
            "this cdpr was built without the 3D viewer (the `viewer` cargo feature, on by \
             default): `cargo run --release -- view …` in the repository builds it, or \
             `cargo install --path . --features viewer`; headless, `cdpr simulate` runs the same \
             physics"
        ),
        Command::Robots(a) => catalogue::robots(a),
        Command::Completions(a) => {
            use clap::CommandFactory;
            catalogue::completions(a, catalogue::with_catalogue(Cli::command()))
        }
    }
}
