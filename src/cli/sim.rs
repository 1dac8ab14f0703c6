//! `simulate`: a trajectory through the physics core, headless.

use super::args::{ModelArgs, RobotArg, count_within, within};
use super::output::{json, progress_bar};
use super::traj::{ShapeArgs, print_comparison};
use anyhow::{Context, Result, bail};
use cdpr_core::robot::Robot;
use cdpr_core::sim::report::{
    self as sim_report, AngleErrors, CsvRecorder, SimulationReport, Tracking, WallSplit,
};
use cdpr_core::sim::run::{self, RunOptions};
use cdpr_core::sim::{ChainConfig, ControlMode, ModelKind, SimConfig};
use cdpr_core::trajectory::{self, Trajectory};
use clap::{Args, ValueEnum as _};
use std::io::{BufWriter, Write as _};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

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
    /// Cruise speed of a built-in trajectory, m/s (0.001 to 10).
    #[arg(long, default_value_t = 0.1, value_name = "M/S", value_parser = within(1e-3, 10.0, "m/s"))]
    pub speed: f64,
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Physics step, s (1e-5 to 0.01; at most 10 million steps per run).
    #[arg(long, default_value_t = 0.001, value_name = "S", value_parser = within(1e-5, 0.01, "s"))]
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
    /// Proportional gain of the tension controller (seed 001: 1500), 1/s² (0 to 1e6).
    #[arg(long, default_value_t = 1500.0, value_name = "1/S²", value_parser = within(0.0, 1e6, "1/s²"),
          allow_negative_numbers = true)]
    pub kp: f64,
    /// Derivative gain of the tension controller (seed 001: 1500), 1/s (0 to 1e5).
    #[arg(long, default_value_t = 1500.0, value_name = "1/S", value_parser = within(0.0, 1e5, "1/s"),
          allow_negative_numbers = true)]
    pub kd: f64,
    /// Keep simulating this long after the trajectory ends, s (0 to 3600).
    #[arg(long, default_value_t = 0.0, value_name = "S", value_parser = within(0.0, 3600.0, "s"),
          allow_negative_numbers = true)]
    pub settle: f64,
    /// Chain model: Rapier solver substeps per step (1 to 100).
    #[arg(long, value_name = "N", default_value_t = ChainConfig::default().solver_iterations,
          value_parser = count_within(1, 100))]
    pub substeps: usize,
    /// Chain model: projected Gauss–Seidel iterations per substep (1 to 100).
    #[arg(long, value_name = "N", default_value_t = ChainConfig::default().pgs_iterations,
          value_parser = count_within(1, 100))]
    pub pgs: usize,
    /// Chain model: mass of each intermediate link, kg (0.001 to 100).
    #[arg(long, value_name = "KG", default_value_t = ChainConfig::default().link_mass,
          value_parser = within(1e-3, 100.0, "kg"))]
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
            .map_err(|e| super::args::naming(e, "loading the trajectory", &self.trajectory))
    }
}

/// The run in words, for the first (comment) line of `--out`: what `report` titles it with.
fn describe(a: &SimulateArgs, robot: &Robot, model: ModelKind, control: ControlMode) -> String {
    let name = |v: &dyn Fn() -> Option<clap::builder::PossibleValue>| {
        v().map_or_else(|| "?".to_string(), |p| p.get_name().to_string())
    };
    format!(
        "cdpr simulate: robot {}, trajectory {}, speed {} m/s, model {}, control {}{}, dt {} s",
        robot.name,
        a.trajectory,
        a.speed,
        name(&|| model.to_possible_value()),
        name(&|| control.to_possible_value()),
        if a.compensate { ", compensated" } else { "" },
        a.dt
    )
}

pub fn simulate(a: SimulateArgs) -> Result<ExitCode> {
    // The wall time reported covers the whole command: loading, physics, writing, metrics.
    let started = Instant::now();
    let model = a.physics.model;
    let robot = a.robot.load()?;
    let surrogate = a.physics.surrogate(Some(&robot.name), !a.no_combine)?;
    let control = a.physics.control(a.control, ControlMode::Length);
    let traj = a.load_trajectory(&robot)?;
    let loaded_s = started.elapsed().as_secs_f64();
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
    // Refuse an over-long run before creating the output file.
    run::step_budget(&traj, &run_options).context("checking the run's length")?;
    if a.compensate && control == ControlMode::Tension {
        eprintln!("warning: --compensate has no effect in tension mode");
    }
    // Rows go to --out as they are computed; the report keeps a few numbers per step.
    let mut writer = match &a.out {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("creating {}", path.display()))?;
            let mut out = BufWriter::new(file);
            // The run describes itself on a first comment line (`report` titles come from it).
            let line = trajectory::csv::description_line(&describe(&a, &robot, model, control));
            out.write_all(line.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            Some(CsvRecorder::new(out, &robot, &traj))
        }
        None => None,
    };
    let mut write_error = None;
    // Time spent writing rows, s (the rest of the stepping loop is the physics).
    let mut output_s = 0.0;
    let bar = progress_bar(&format!(
        "simulating {:.1} s: {{msg}}",
        traj.duration() + a.settle
    ));
    if let Some(b) = &bar {
        b.set_message("physics");
    }
    let mut tick = |fraction: f64| {
        if let Some(b) = &bar {
            b.set_position((fraction * 990.0) as u64);
            // The physics is done: the bar says so while the metrics are computed.
            if fraction >= 1.0 {
                b.set_position(1000);
                b.set_message("metrics");
            }
        }
    };
    let run = sim_report::simulate(&robot, traj, &run_options, !a.no_lag, &mut tick, &mut |r| {
        if let Some(w) = &mut writer {
            let writing = Instant::now();
            let written = w.write(r);
            output_s += writing.elapsed().as_secs_f64();
            if let Err(e) = written {
                write_error = Some(e);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    })
    .context("starting the simulation")?;
    // Write what was computed before reporting anything else, even after a blow-up.
    if let (Some(path), Some(w)) = (&a.out, writer) {
        let flushing = Instant::now();
        let finished = match write_error {
            Some(e) => Err(e),
            None => w.finish().map(|_| ()),
        };
        output_s += flushing.elapsed().as_secs_f64();
        finished.with_context(|| format!("writing {}", path.display()))?;
    }
    let sim_report::SimulatedRun {
        mut report,
        summary,
        metrics_s,
    } = run;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    report.wall_s = started.elapsed().as_secs_f64();
    report.rtf = sim_report::rtf(summary.simulated_s, report.wall_s);
    let physics_s = (summary.wall_s - output_s).max(0.0);
    report.wall_split = Some(WallSplit {
        load_s: loaded_s,
        physics_s,
        output_s,
        metrics_s,
        other_s: (report.wall_s - loaded_s - physics_s - output_s - metrics_s).max(0.0),
    });
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if a.json {
        json(&report)?;
    } else {
        print_report(&a, &robot, &report);
    }
    let kept = |what: &str| -> String {
        format!(
            "{what}; the {} steps before are kept{}",
            summary.records.saturating_sub(1),
            a.out
                .as_ref()
                .map(|p| format!(" in {}", p.display()))
                .unwrap_or_default()
        )
    };
    if let Some(e) = summary.error {
        return Err(anyhow::Error::new(e).context(kept("the run stopped early")));
    }
    if let Some(e) = &report.escape {
        bail!(
            "{}{}",
            format_args!(
                "the platform left the robot's frame at t = {:.3} s (at x {:.3}, y {:.3}, z {:.3} m; \
                 the frame and workspace span x {:.3} … {:.3}, y {:.3} … {:.3}, z {:.3} … {:.3} m with a margin): \
                 the run is not physical (slack cables, an unreachable pose, too heavy a payload?)",
                e.t,
                e.position[0],
                e.position[1],
                e.position[2],
                e.box_min[0],
                e.box_max[0],
                e.box_min[1],
                e.box_max[1],
                e.box_min[2],
                e.box_max[2]
            ),
            a.out
                .as_ref()
                .map(|p| format!("; the whole run is in {}", p.display()))
                .unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
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
    if let Some(w) = &r.wall_split {
        println!(
            "wall time {:.2} s: physics {:.2} s, metrics {:.2} s, output {:.2} s, loading {:.2} s, other {:.2} s",
            r.wall_s, w.physics_s, w.metrics_s, w.output_s, w.load_s, w.other_s
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
