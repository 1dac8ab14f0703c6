//! `simulate`: a trajectory through the physics core, headless.

use super::args::warn;
use super::options::{RunArgs, Simulate};
use super::output::{json, progress_bar};
use super::traj::print_comparison;
use anyhow::{Result, bail};
use cdpr_core::choice::Choice;
use cdpr_core::job::{Job, Progress, Sink};
use cdpr_core::recording::sidecar::Sidecar;
use cdpr_core::robot::Robot;
use cdpr_core::run::{AngleErrors, Prepared, SimulationReport, Tracking};
use cdpr_core::sim::{ControlMode, MODELS};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The models and winch modes in words, from core's tables.
pub fn models_help() -> String {
    let models: Vec<String> = MODELS
        .iter()
        .map(|m| format!("`{}`: {}", m.name, m.help))
        .collect();
    let controls: Vec<String> = ControlMode::all()
        .into_iter()
        .map(|c| format!("`{}`: {}", c.name(), c.help()))
        .collect();
    format!(
        "Models — {}.\nWinch modes — {}.",
        models.join("; "),
        controls.join("; ")
    )
}

#[derive(Args, Debug)]
#[command(
    after_help = "Example: cdpr simulate --robot robots/uvigo8.toml --trajectory seed000 --speed 0.1 --compensate"
)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub run: RunArgs<Simulate>,
    /// Write every step to this file: `.csv` (t, commanded and actual pose, per cable
    /// length_cmd_i, length_i, tension_i, segment; described in FILE.meta.toml) or `.mcap`
    /// (the same numbers on /run, the pose on /tf, the 3D scene on /scene: opens in Foxglove,
    /// Lichtblick, PlotJuggler).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one JSON object (metrics, rtf, steps, wall_s) instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn simulate(a: SimulateArgs) -> Result<ExitCode> {
    let request = &a.run.request;
    // Refuses an over-long run before the output file is created.
    let job = Job::new(request)?;
    let Prepared {
        robot,
        trajectory: traj,
        options,
        warnings,
    } = job.prepared();
    warn(warnings);
    let robot = robot.clone();
    let duration = traj.duration() + request.settle;
    // The run describes itself: a CSV in a sidecar (`report` titles come from it; the CSV is a
    // header and numbers, which every CSV reader takes with its defaults), an MCAP file in
    // its metadata.
    let sink = match &a.out {
        Some(path) => Sink::File {
            path,
            meta: Sidecar::new(&request.describe(&robot, options.config.control))
                .with_robot(&robot),
        },
        None => Sink::None,
    };
    // Ctrl-C stops the run at its next step: the file is finished as far as it got.
    let interrupt = Arc::new(AtomicBool::new(false));
    {
        let interrupt = Arc::clone(&interrupt);
        if let Err(e) = ctrlc::set_handler(move || interrupt.store(true, Ordering::Relaxed)) {
            eprintln!("warning: Ctrl-C will not finish the file ({e})");
        }
    }
    let bar = progress_bar(&format!("simulating {duration:.1} s: {{msg}}"));
    if let Some(b) = &bar {
        b.set_message("physics");
    }
    let mut tick = |p: Progress| {
        if let Some(b) = &bar {
            match p {
                Progress::Physics(fraction) => b.set_position((fraction * 990.0) as u64),
                Progress::Metrics => {
                    b.set_position(1000);
                    b.set_message("metrics");
                }
            }
        }
    };
    let report = job.run(sink, &mut tick, Some(&interrupt))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    warn(&report.warnings);
    if a.json {
        json(&report)?;
    } else {
        print_report(&a, &robot, &report);
    }
    let kept = |what: &str| -> String {
        format!(
            "{what}; the {} steps before are kept{}",
            report.records.saturating_sub(1),
            a.out
                .as_ref()
                .map(|p| format!(" in {}", p.display()))
                .unwrap_or_default()
        )
    };
    if report.interrupted {
        eprintln!(
            "{}{}",
            kept(&format!(
                "interrupted at t = {:.3} s of {duration:.3} s",
                report.simulated_s.unwrap_or(0.0)
            )),
            if a.out.is_some() {
                ", marked interrupted"
            } else {
                ""
            }
        );
        return Ok(ExitCode::from(130));
    }
    if let Some(e) = &report.error {
        bail!("{}: {e}", kept("the run stopped early"));
    }
    if let Some(e) = &report.escape {
        bail!(
            "{}{}",
            e.message(),
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
        a.run.request.trajectory.as_deref().unwrap_or("?"),
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
    for line in cdpr_core::run::digest::drive_table(&r.drives) {
        println!("{line}");
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
