//! `simulate`: a trajectory through the physics core, headless.

use super::args::{ModelArgs, RobotArg, count_within};
use super::output::{json, progress_bar};
use super::traj::{ShapeArgs, print_comparison};
use anyhow::{Context, Result};
use cdpr_core::robot::Robot;
use cdpr_core::sim::report::{self, AngleErrors, SimulationReport, Tracking, simulation_report};
use cdpr_core::sim::run::{self, RunOptions, RunOutcome};
use cdpr_core::sim::{ChainConfig, ControlMode, SimConfig};
use cdpr_core::trajectory::{self, Trajectory};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    after_help = "Models: `chain` is seed 000's per-cable joint chain in Rapier (universal joint at the exit \
point, active prismatic winch, passive prismatic spring-damper, spherical joint closing the loop on the \
platform); `elastic` is the platform alone with each cable a unilateral spring-damper (fast, exact for \
massless elastic cables).\n\
Winch modes: `length` tracks the commanded lengths with a PID drive within the winch limits (like the \
real axes); `ideal` makes the payout follow the command exactly (isolates cable elasticity); \
`tension` applies commanded tensions from seed 001's feedback-linearising controller (Kp = Kd = 1500 \
by default), negative values ignored.\n\n\
Example: cdpr simulate --robot robots/uvigo8.toml --trajectory seed000 --speed 0.1"
)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// A built-in trajectory (seed000, pickplace, poly5; tilt: roll and pitch moves, --speed in
    /// rad/s) or a CSV file (t,x,y,z[,roll,pitch,yaw][,segment]).
    #[arg(long, short = 't', value_name = "NAME|CSV")]
    pub trajectory: String,
    /// Cruise speed of a built-in trajectory, m/s.
    #[arg(long, default_value_t = 0.1, value_name = "M/S")]
    pub speed: f64,
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Physics step, s.
    #[arg(long, default_value_t = 0.001, value_name = "S")]
    pub dt: f64,
    #[command(flatten)]
    pub physics: ModelArgs,
    /// Surrogate: skip seed 004's combination step (scaling unreachable demands back into
    /// the wrench-feasible workspace).
    #[arg(long)]
    pub no_combine: bool,
    /// How the winches are driven [default: length; ideal with --model surrogate, whose
    /// filters include the drives].
    #[arg(long, value_enum)]
    pub control: Option<ControlMode>,
    /// Subtract the pre-stretch f*/k (tension distribution at each commanded pose) from the
    /// commanded lengths, so that elastic cables land the platform on target.
    #[arg(long)]
    pub compensate: bool,
    /// Proportional gain of the tension controller (seed 001: 1500), 1/s².
    #[arg(long, default_value_t = 1500.0, value_name = "1/S²")]
    pub kp: f64,
    /// Derivative gain of the tension controller (seed 001: 1500), 1/s.
    #[arg(long, default_value_t = 1500.0, value_name = "1/S")]
    pub kd: f64,
    /// Keep simulating this long after the trajectory ends, s.
    #[arg(long, default_value_t = 0.0, value_name = "S")]
    pub settle: f64,
    /// Chain model: Rapier solver substeps per step (1 to 100).
    #[arg(long, value_name = "N", default_value_t = ChainConfig::default().solver_iterations,
          value_parser = count_within(1, 100))]
    pub substeps: usize,
    /// Chain model: projected Gauss–Seidel iterations per substep (1 to 100).
    #[arg(long, value_name = "N", default_value_t = ChainConfig::default().pgs_iterations,
          value_parser = count_within(1, 100))]
    pub pgs: usize,
    /// Chain model: mass of each intermediate link, kg.
    #[arg(long, value_name = "KG", default_value_t = ChainConfig::default().link_mass)]
    pub link_mass: f64,
    /// Write every step to this CSV (t, commanded and actual pose, per cable length_cmd_i,
    /// length_i, tension_i, segment).
    #[arg(long, short = 'o', value_name = "CSV")]
    pub out: Option<PathBuf>,
    /// Compute the metrics without removing the lag.
    #[arg(long)]
    pub no_lag: bool,
    /// Print one JSON object (metrics, rtf, steps, wall_s) instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl SimulateArgs {
    /// The trajectory asked for, sampled at the physics step with the built-in's options.
    pub(super) fn load_trajectory(&self, robot: &Robot) -> Result<Trajectory> {
        let options = self.shape.options(self.speed, self.dt);
        trajectory::load(&self.trajectory, robot, &options)
            .with_context(|| format!("loading trajectory `{}`", self.trajectory))
    }
}

pub fn simulate(a: SimulateArgs) -> Result<ExitCode> {
    let model = a.physics.model;
    let robot = a.robot.load()?;
    let surrogate = a.physics.surrogate(Some(&robot.name), !a.no_combine)?;
    let control = a.physics.control(a.control, ControlMode::Length);
    let traj = a.load_trajectory(&robot)?;
    let run_options = RunOptions {
        config: SimConfig {
            dt: a.dt,
            model,
            control,
            chain: ChainConfig {
                link_mass: a.link_mass,
                solver_iterations: a.substeps,
                pgs_iterations: a.pgs,
            },
            surrogate,
        },
        compensate: a.compensate,
        kp: a.kp,
        kd: a.kd,
        settle_time: a.settle,
    };
    if a.compensate && control == ControlMode::Tension {
        eprintln!("warning: --compensate has no effect in tension mode");
    }
    let bar = progress_bar(&format!("simulating {:.1} s", traj.duration() + a.settle));
    let mut tick = |fraction: f64| {
        if let Some(b) = &bar {
            b.set_position((fraction * 1000.0) as u64);
        }
    };
    let outcome =
        run::run(&robot, &traj, &run_options, &mut tick).context("starting the simulation")?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // Write what was computed before reporting anything else, even after a blow-up.
    if let Some(path) = &a.out {
        write_csv(path, &robot, &traj, &outcome)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let report = simulation_report(&robot, &outcome, &traj, &run_options, !a.no_lag);
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if a.json {
        json(&report)?;
    } else {
        print_report(&a, &robot, &report);
    }
    match outcome.error {
        Some(e) => Err(anyhow::Error::new(e).context(format!(
            "the run stopped early; the {} steps before are kept{}",
            outcome.records.len().saturating_sub(1),
            a.out
                .as_ref()
                .map(|p| format!(" in {}", p.display()))
                .unwrap_or_default()
        ))),
        None => Ok(ExitCode::SUCCESS),
    }
}

fn print_report(a: &SimulateArgs, robot: &Robot, r: &SimulationReport) {
    println!(
        "{} on {}: {} model, {} winches{}, dt {} ms, {} steps in {:.2} s wall ({:.0}× real time)",
        a.trajectory,
        robot.name,
        r.model.name(),
        r.control.name(),
        if r.compensate { ", compensated" } else { "" },
        r.dt * 1e3,
        r.steps,
        r.wall_s,
        r.rtf
    );
    let forces = if robot.is_cable_robot() {
        "tensions"
    } else {
        "leg forces"
    };
    match (r.tension_min, r.tension_max) {
        (Some(lo), Some(hi)) => println!("{forces} {lo:.2} … {hi:.2} N"),
        _ => println!("{forces}: not modelled"),
    }
    match &r.tracking {
        Tracking::Angles { angles } => print_angle_errors(angles),
        Tracking::Metrics(c) => print_comparison(c),
        Tracking::MetricsError { metrics_error } => {
            eprintln!("warning: no tracking metrics: {metrics_error}")
        }
    }
    if r.limited_steps > 0 {
        println!(
            "combination step: {} demands scaled back into the robot's reach",
            r.limited_steps
        );
    }
    if let Some(path) = &a.out {
        println!("wrote {}", path.display());
    }
}

fn print_angle_errors(errors: &[AngleErrors]) {
    println!(
        "{:<8} {:>14} {:>14} {:>14} {:>14} {:>14}",
        "segment", "RMS roll [°]", "max roll [°]", "RMS pitch [°]", "max pitch [°]", "NRMSE r p"
    );
    let show = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{v:.3}"));
    for e in errors {
        println!(
            "{:<8} {:>14.3} {:>14.3} {:>14.3} {:>14.3} {:>14}",
            e.segment,
            e.rms_roll_deg,
            e.max_roll_deg,
            e.rms_pitch_deg,
            e.max_pitch_deg,
            format!("{} {}", show(e.nrmse_roll), show(e.nrmse_pitch))
        );
    }
    println!(
        "NRMSE = 1 − ‖x_ref − x‖/‖x_ref − mean(x_ref)‖ (seed 004; 1 is perfect); no lag removed"
    );
}

/// The run as CSV ([`cdpr_core::sim::report::write_csv`]) in a new file.
fn write_csv(path: &Path, robot: &Robot, traj: &Trajectory, outcome: &RunOutcome) -> Result<()> {
    let file = std::fs::File::create(path)?;
    let mut out = std::io::BufWriter::new(file);
    report::write_csv(&mut out, robot, traj, outcome)?;
    out.flush()?;
    Ok(())
}
