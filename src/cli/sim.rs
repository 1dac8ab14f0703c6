//! `simulate`: a trajectory through the physics core, headless.

use super::args::RobotArg;
use super::output::json;
use super::traj::{ShapeArgs, print_comparison};
use anyhow::{Context, Result, bail};
use cdpr_core::metrics::{self, CompareOptions};
use cdpr_core::sim::run::{self, RunOptions, RunOutcome};
use cdpr_core::sim::{ChainConfig, ControlMode, ModelKind, SimConfig, SurrogateSetup};
use cdpr_core::trajectory::{self, Trajectory};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
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
    /// Model: the physics core's `chain` or `elastic`, or seed 004's `surrogate` filters.
    #[arg(long, value_enum, default_value = "chain")]
    pub model: ModelKind,
    /// Surrogate parameter file (from `cdpr surrogate fit`), with --model surrogate.
    #[arg(long, value_name = "TOML")]
    pub surrogate: Option<PathBuf>,
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
    /// Chain model: Rapier solver substeps per step.
    #[arg(long, value_name = "N", default_value_t = ChainConfig::default().solver_iterations)]
    pub substeps: usize,
    /// Chain model: projected Gauss–Seidel iterations per substep.
    #[arg(long, value_name = "N", default_value_t = ChainConfig::default().pgs_iterations)]
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
    pub(super) fn load_trajectory(&self, robot: &cdpr_core::robot::Robot) -> Result<Trajectory> {
        let options = self.shape.options(self.speed, self.dt);
        trajectory::load(&self.trajectory, robot, &options)
            .with_context(|| format!("loading trajectory `{}`", self.trajectory))
    }
}

pub fn simulate(a: SimulateArgs) -> Result<ExitCode> {
    let model = a.model;
    let robot = a.robot.load()?;
    let surrogate = match (model, &a.surrogate) {
        (ModelKind::Surrogate, Some(path)) => Some(SurrogateSetup {
            params: std::sync::Arc::new(super::surrogate::load_params(path, &robot)?),
            combine: !a.no_combine,
        }),
        (ModelKind::Surrogate, None) => bail!(
            "--model surrogate needs --surrogate PARAMS.toml (write one with `cdpr surrogate fit`)"
        ),
        _ => None,
    };
    let control = a.control.unwrap_or(if model == ModelKind::Surrogate {
        ControlMode::Ideal
    } else {
        ControlMode::Length
    });
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
    let bar = progress_bar(traj.duration() + a.settle);
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
    if outcome.uncompensated_steps > 0 {
        eprintln!(
            "warning: the command was adjusted on {} steps (tension distribution infeasible: plain IK lengths; or the pose out of the robot's reach: pulled back)",
            outcome.uncompensated_steps
        );
    }
    let reference = outcome.commanded(&traj);
    let actual = outcome.actual(&traj);
    let compare_options = CompareOptions {
        remove_lag: !a.no_lag,
        ..CompareOptions::default()
    };
    let comparison = metrics::compare(&reference, &actual, &compare_options);
    let tensions = tension_range(&outcome);
    if a.json {
        let mut value = match &comparison {
            _ if turns_only(&robot) => json!({ "angles": angle_errors(&reference, &actual) }),
            Ok(c) => serde_json::to_value(c)?,
            Err(e) => json!({ "metrics_error": e.to_string() }),
        };
        if let Some(map) = value.as_object_mut() {
            map.insert("rtf".into(), json!(outcome.rtf()));
            map.insert("steps".into(), json!(outcome.steps));
            map.insert("wall_s".into(), json!(outcome.wall_s));
            map.insert(
                "simulated_s".into(),
                json!(outcome.records.last().map(|r| r.state.time)),
            );
            map.insert("model".into(), json!(model));
            map.insert("control".into(), json!(control));
            map.insert("limited_steps".into(), json!(outcome.limited_steps));
            map.insert("compensate".into(), json!(a.compensate));
            map.insert("dt".into(), json!(a.dt));
            map.insert("tension_min".into(), json!(tensions.0));
            map.insert("tension_max".into(), json!(tensions.1));
            map.insert(
                "error".into(),
                json!(outcome.error.as_ref().map(|e| e.to_string())),
            );
        }
        json(&value)?;
    } else {
        println!(
            "{} on {}: {} model, {} winches{}, dt {} ms, {} steps in {:.2} s wall ({:.0}× real time)",
            a.trajectory,
            robot.name,
            model.name(),
            control.name(),
            if a.compensate { ", compensated" } else { "" },
            a.dt * 1e3,
            outcome.steps,
            outcome.wall_s,
            outcome.rtf()
        );
        let forces = if robot.is_cable_robot() {
            "tensions"
        } else {
            "leg forces"
        };
        println!("{forces} {:.2} … {:.2} N", tensions.0, tensions.1);
        if turns_only(&robot) {
            print_angle_errors(&angle_errors(&reference, &actual));
        } else {
            match &comparison {
                Ok(c) => print_comparison(c),
                Err(e) => eprintln!("warning: no tracking metrics: {e}"),
            }
        }
        if outcome.limited_steps > 0 {
            println!(
                "combination step: {} demands scaled back into the robot's reach",
                outcome.limited_steps
            );
        }
        if let Some(path) = &a.out {
            println!("wrote {}", path.display());
        }
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

/// A platform that only turns (the 2-RSSU): its tracking is judged in angles.
pub(super) fn turns_only(robot: &cdpr_core::robot::Robot) -> bool {
    matches!(robot.mechanism, cdpr_core::robot::Mechanism::Rssu2(_))
}

/// Tracking of one segment (or the total) in angles: RMS and largest error of roll and pitch
/// (degrees) and seed 004's NRMSE (None for a constant reference).
#[derive(serde::Serialize)]
pub(super) struct AngleErrors {
    segment: String,
    rms_roll_deg: f64,
    max_roll_deg: f64,
    rms_pitch_deg: f64,
    max_pitch_deg: f64,
    nrmse_roll: Option<f64>,
    nrmse_pitch: Option<f64>,
}

/// Commanded against simulated at the same instants (no lag removed), per segment then total.
pub(super) fn angle_errors(reference: &Trajectory, actual: &Trajectory) -> Vec<AngleErrors> {
    let mut names: Vec<String> = reference.segments.clone();
    names.push("TOTAL".into());
    let mut out = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let total = k == reference.segments.len();
        let pairs: Vec<_> = reference
            .samples
            .iter()
            .zip(&actual.samples)
            .filter(|(r, _)| total || r.segment == Some(k))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let stats = |dof: usize| {
            let n = pairs.len() as f64;
            let mut err2 = 0.0;
            let mut max = 0.0f64;
            let mean = pairs
                .iter()
                .map(|(r, _)| r.pose.to_array()[dof])
                .sum::<f64>()
                / n;
            let mut spread = 0.0;
            for (r, a) in &pairs {
                let (x, y) = (r.pose.to_array()[dof], a.pose.to_array()[dof]);
                err2 += (x - y).powi(2);
                max = max.max((x - y).abs());
                spread += (x - mean).powi(2);
            }
            let nrmse = (spread > 1e-12 * n).then(|| 1.0 - (err2 / spread).sqrt());
            ((err2 / n).sqrt().to_degrees(), max.to_degrees(), nrmse)
        };
        let (roll, pitch) = (stats(3), stats(4));
        out.push(AngleErrors {
            segment: name.clone(),
            rms_roll_deg: roll.0,
            max_roll_deg: roll.1,
            rms_pitch_deg: pitch.0,
            max_pitch_deg: pitch.1,
            nrmse_roll: roll.2,
            nrmse_pitch: pitch.2,
        });
    }
    out
}

pub(super) fn print_angle_errors(errors: &[AngleErrors]) {
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

pub(super) fn tension_range(outcome: &RunOutcome) -> (f64, f64) {
    outcome
        .records
        .iter()
        .flat_map(|r| r.state.tensions.iter())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &f| {
            (lo.min(f), hi.max(f))
        })
}

pub(super) fn progress_bar(seconds: f64) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(1000);
    if let Ok(style) = ProgressStyle::with_template(&format!(
        "simulating {seconds:.1} s [{{bar:40}}] {{percent}}% (eta {{eta}})"
    )) {
        bar.set_style(style.progress_chars("=> "));
    }
    Some(bar)
}

/// The run as CSV: `t,x_cmd,…,yaw_cmd,x,…,yaw`, per cable `length_cmd_i,length_i,tension_i`,
/// then `segment`.
pub(super) fn write_csv(
    path: &PathBuf,
    robot: &cdpr_core::robot::Robot,
    traj: &Trajectory,
    outcome: &RunOutcome,
) -> Result<()> {
    let file = std::fs::File::create(path)?;
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(file));
    // Cable robots: per cable commanded payout, length, tension. Robots with legs: per
    // actuator its commanded and actual position (m or rad), then per leg its length between
    // the joints at its ends and its axial force (N).
    let (actuators, legs) = match outcome.records.first() {
        Some(r) if !robot.is_cable_robot() => (r.length_command.len(), r.state.lengths.len()),
        _ => (0, 0),
    };
    let mut header = cdpr_core::sim::run::csv_columns(robot.cable_count());
    for i in 1..=actuators {
        header.extend([format!("actuator_cmd_{i}"), format!("actuator_{i}")]);
    }
    for i in 1..=legs {
        header.extend([format!("leg_length_{i}"), format!("leg_force_{i}")]);
    }
    header.push("segment".into());
    w.write_record(&header)?;
    let mut row: Vec<String> = Vec::with_capacity(header.len());
    for r in &outcome.records {
        row.clear();
        row.push(format!("{}", r.state.time));
        row.extend(r.commanded.pose.to_array().iter().map(|v| format!("{v}")));
        row.extend(r.state.pose.to_array().iter().map(|v| format!("{v}")));
        for i in 0..robot.cable_count() {
            row.push(format!("{}", r.length_command[i]));
            row.push(format!("{}", r.state.lengths[i]));
            row.push(format!("{}", r.state.tensions[i]));
        }
        for i in 0..actuators {
            row.push(format!("{}", r.length_command[i]));
            row.push(format!("{}", r.state.winch[i]));
        }
        for i in 0..legs {
            row.push(format!("{}", r.state.lengths[i]));
            row.push(format!("{}", r.state.tensions[i]));
        }
        row.push(traj.segment_name(&r.commanded).unwrap_or("").to_string());
        w.write_record(&row)?;
    }
    w.flush()?;
    let mut inner = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    inner.flush()?;
    Ok(())
}
