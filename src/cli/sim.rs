//! `simulate`: a trajectory through the physics core, headless.

use super::args::warn;
use super::options::{RunArgs, Simulate};
use super::output::{json, progress_bar};
use super::traj::print_comparison;
use anyhow::{Context, Result, bail};
use cdpr_core::choice::Choice;
use cdpr_core::recording::Recorder;
use cdpr_core::recording::sidecar::Sidecar;
use cdpr_core::robot::Robot;
use cdpr_core::run::{self, AngleErrors, Prepared, SimulationReport, Tracking, WallSplit};
use cdpr_core::sim::{ControlMode, MODELS};
use clap::Args;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

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
    // The wall time reported covers the whole command: loading, physics, writing, metrics.
    let started = Instant::now();
    let request = &a.run.request;
    // Refuses an over-long run before the output file is created.
    let Prepared {
        robot,
        trajectory: traj,
        options: run_options,
        warnings,
    } = request.prepare()?;
    warn(&warnings);
    let control = run_options.config.control;
    let loaded_s = started.elapsed().as_secs_f64();
    // Rows go to --out as they are computed; the report keeps a few numbers per step.
    let mut writer = match &a.out {
        Some(path) => {
            // The run describes itself: a CSV in a sidecar (`report` titles come from it; the
            // CSV is a header and numbers, which every CSV reader takes with its defaults),
            // an MCAP file in its metadata.
            let meta = Sidecar::new(&request.describe(&robot, control)).with_robot(&robot);
            Some(Recorder::create(path, &robot, &traj, &meta)?.with_dt(run_options.config.dt))
        }
        None => None,
    };
    let mut write_error = None;
    // Time spent writing rows, s (the rest of the stepping loop is the physics).
    let mut output_s = 0.0;
    let bar = progress_bar(&format!(
        "simulating {:.1} s: {{msg}}",
        traj.duration() + request.settle
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
    let run = run::simulate(
        &robot,
        traj,
        &run_options,
        request.remove_lag,
        &mut tick,
        &mut |r| {
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
        },
    )
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
    let run::SimulatedRun {
        mut report,
        summary,
        metrics_s,
    } = run;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    report.wall_s = started.elapsed().as_secs_f64();
    report.rtf = run::rtf(summary.simulated_s, report.wall_s);
    let physics_s = (summary.wall_s - output_s).max(0.0);
    report.wall_split = Some(WallSplit {
        load_s: loaded_s,
        physics_s,
        output_s,
        metrics_s,
        other_s: (report.wall_s - loaded_s - physics_s - output_s - metrics_s).max(0.0),
    });
    warn(&report.warnings);
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
