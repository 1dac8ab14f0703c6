//! `trajectory`, `compare`, `report`.

use super::args::{RobotArg, warn};
use super::options::{RequestArgs, RunArgs, Shape};
use super::output::{Table, json};
use anyhow::{Context, Result};
use cdpr_core::metrics::{self, CompareRequest, Comparison, Metrics};
use cdpr_core::options::Value;
use cdpr_core::recording::RunFile;
use cdpr_core::recording::sidecar::{self, Sidecar};
use cdpr_core::report;
use cdpr_core::robot::Robot;
use cdpr_core::run::request;
use cdpr_core::trajectory::csv::CsvOptions;
use cdpr_core::trajectory::limits::LimitCheck;
use cdpr_core::trajectory::perturb::PerturbRequest;
use cdpr_core::trajectory::prepare::Preparation;
use cdpr_core::trajectory::{self, BuiltinOptions, Trajectory};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

// -------------------------------------------------------------------------- trajectory

#[derive(Args, Debug)]
pub struct TrajectoryArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// A built-in trajectory (seed000, pickplace, poly5, tilt) or a CSV file to check, time-scale or
    /// perturb.
    #[arg(long, value_name = "NAME|CSV")]
    pub name: String,
    /// Sampling period, s (seed 000 logs every 2 ms; 1e-5 to 0.1; at most 5 million samples).
    #[arg(long, default_value_t = BuiltinOptions::default().dt, value_name = "S",
          value_parser = sample_dt)]
    pub dt: f64,
    /// How a built-in trajectory is shaped (as `cdpr simulate` takes it).
    #[command(flatten)]
    pub shape: RunArgs<Shape>,
    /// Write the trajectory to this CSV file.
    #[arg(long, short = 'o', value_name = "CSV")]
    pub out: Option<PathBuf>,
    /// Check the cable velocities, accelerations and jerks against the robot's winch limits;
    /// exit with status 2 if any is exceeded.
    #[arg(long)]
    pub check: bool,
    /// Slow the trajectory down uniformly until it respects the winch limits.
    #[arg(long)]
    pub time_scale: bool,
    /// A perturbed copy (core's perturbation request).
    #[command(flatten)]
    pub perturb: RequestArgs<PerturbRequest>,
    /// Print one JSON object (a summary, not the samples) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The sampling period of a trajectory: core's [`request::SAMPLE_DT`].
fn sample_dt(text: &str) -> Result<f64, String> {
    match request::SAMPLE_DT.parse(text) {
        Ok(Value::Number(x)) => Ok(x),
        Ok(_) => Err(format!("`{text}` is not a number")),
        Err(p) => Err(p.to_string()),
    }
}

impl TrajectoryArgs {
    fn options(&self) -> BuiltinOptions {
        BuiltinOptions {
            dt: self.dt,
            ..self.shape.request.builtin_options()
        }
    }
}

fn print_check(robot: &Robot, check: &LimitCheck) {
    let mut table = Table::new(&[
        "cable quantity",
        "peak",
        "limit",
        "peak/limit",
        "cable",
        "at t [s]",
        "samples over",
    ]);
    for (name, unit, p) in [
        ("velocity", "m/s", &check.velocity),
        ("acceleration", "m/s²", &check.acceleration),
        ("jerk", "m/s³", &check.jerk),
    ] {
        table.row(vec![
            format!("{name} [{unit}]"),
            format!("{:.4}", p.value),
            format!("{:.4}", p.limit),
            format!("{:.3}", p.ratio),
            p.cable.clone(),
            format!("{:.3}", p.t),
            p.violations.to_string(),
        ]);
    }
    table.print();
    if check.ok {
        println!("within {}'s winch limits", robot.name);
    } else {
        println!(
            "EXCEEDS {}'s winch limits (try --time-scale, a lower --speed, or --profile scurve)",
            robot.name
        );
    }
}

pub fn trajectory(a: TrajectoryArgs) -> Result<ExitCode> {
    let robot = a.robot.load()?;
    let preparation = Preparation {
        time_scale: a.time_scale,
        check: a.check,
        perturbation: a.perturb.request.perturbation(),
    };
    let (traj, mut r) = trajectory::prepare::prepare(&robot, &a.name, &a.options(), &preparation)?;
    warn(&r.warnings);
    if let Some(out) = &a.out {
        let description = format!(
            "cdpr trajectory: robot {}, trajectory {}{}{}{}",
            robot.name,
            a.name,
            if std::path::Path::new(&a.name).is_file() {
                String::new()
            } else {
                format!(", speed {} m/s", a.shape.request.speed)
            },
            if r.time_scale_factor.is_some() {
                ", time-scaled"
            } else {
                ""
            },
            if r.perturbed {
                let mut how = Vec::new();
                if let Some(d) = a.perturb.request.delay {
                    how.push(format!("delay {d} s"));
                }
                if let Some(f) = a.perturb.request.lowpass {
                    how.push(format!("low-pass {f} Hz"));
                }
                if let Some(o) = &a.perturb.request.offset {
                    let o: Vec<String> = o.iter().map(|v| v.to_string()).collect();
                    how.push(format!("offset {} m", o.join(",")));
                }
                if let Some(r) = a.perturb.request.resample {
                    how.push(format!("resampled every {r} s"));
                }
                format!(", perturbed copy ({})", how.join(", "))
            } else {
                String::new()
            },
        );
        trajectory::csv::write(out, &traj).context("writing the trajectory")?;
        sidecar::write(out, &Sidecar::new(&description).with_robot(&robot))?;
        r.out = Some(out.clone());
    }
    if a.json {
        json(&r)?;
    } else {
        println!(
            "{} on {}: {} samples over {:.3} s, path {:.4} m, peak speed {:.4} m/s",
            r.name, r.robot, r.samples, r.duration_s, r.path_length, r.peak_speed
        );
        if r.segments.iter().any(|s| !s.name.is_empty()) {
            let mut table = Table::new(&["segment", "from [s]", "to [s]"]);
            for s in &r.segments {
                table.row(vec![
                    s.name.clone(),
                    format!("{:.3}", s.start_s),
                    format!("{:.3}", s.end_s),
                ]);
            }
            table.print();
        }
        if let Some(f) = r.time_scale_factor {
            println!("time-scaled by {f:.4} to respect the winch limits");
        }
        if r.perturbed {
            println!("perturbed copy (delay / low-pass / offset / resampling applied)");
        }
        if let Some(c) = &r.check {
            print_check(&robot, c);
        }
        if let Some(out) = &r.out {
            println!("wrote {}", out.display());
        }
    }
    Ok(if r.within_limits() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

// ----------------------------------------------------------------------------- compare

#[derive(Args, Debug)]
pub struct CompareInputs {
    /// Reference (commanded) trajectory, CSV with columns t,x,y,z[,roll,pitch,yaw][,segment],
    /// or a run recorded as MCAP.
    #[arg(long, value_name = "CSV|MCAP")]
    pub reference: PathBuf,
    /// Actual (measured or simulated) trajectory, CSV or a run recorded as MCAP; may be
    /// sampled at another rate.
    #[arg(long, value_name = "CSV|MCAP")]
    pub actual: PathBuf,
    /// Which columns, and how the lag is treated (core's comparison request).
    #[command(flatten)]
    pub compare: RequestArgs<CompareRequest>,
}

impl CompareInputs {
    /// A warning when the reference and the actual are the same columns of the same file: the
    /// comparison is then zero by construction.
    fn same_input_warning(&self) -> Option<String> {
        let same_file = match (
            std::fs::canonicalize(&self.reference),
            std::fs::canonicalize(&self.actual),
        ) {
            (Ok(a), Ok(b)) => a == b,
            _ => self.reference == self.actual,
        };
        (same_file && self.compare.request.reference_suffix == self.compare.request.actual_suffix)
            .then(|| {
                let (columns, fix) = match self.compare.request.reference_suffix.as_str() {
                    "" => ("x, y, z, …".to_string(), "add --reference-columns _cmd"),
                    s => (
                        format!("x{s}, y{s}, z{s}, …"),
                        "keep --reference-columns _cmd and drop --actual-columns",
                    ),
                };
                format!(
                    "the reference and the actual are the same file ({}) and the same columns \
                 ({columns}): every error below is zero by construction; to compare a run's \
                 platform with its commanded pose, {fix}",
                    self.actual.display()
                )
            })
    }

    fn load(&self) -> Result<(Trajectory, Trajectory)> {
        if let Some(w) = self.same_input_warning() {
            eprintln!("warning: {w}");
        }
        let read = |path: &PathBuf, suffix: &str, what: &str| {
            if is_mcap(path) {
                return run_trajectory(path, suffix)
                    .with_context(|| format!("reading the {what} trajectory"));
            }
            let options = CsvOptions {
                suffix: suffix.to_string(),
            };
            trajectory::csv::read_with(path, &options)
                .with_context(|| format!("reading the {what} trajectory"))
        };
        Ok((
            read(
                &self.reference,
                &self.compare.request.reference_suffix,
                "reference",
            )?,
            read(&self.actual, &self.compare.request.actual_suffix, "actual")?,
        ))
    }

    fn compare(&self, reference: &Trajectory, actual: &Trajectory) -> Result<Comparison> {
        let options = self.compare.request.options();
        metrics::compare(reference, actual, &options).with_context(|| {
            format!(
                "comparing {} with {}",
                self.actual.display(),
                self.reference.display()
            )
        })
    }
}

/// A run recorded as MCAP (`cdpr simulate --out x.mcap`, `cdpr shadow --record x.mcap`): by
/// its extension, as the recording reader opens it.
fn is_mcap(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mcap"))
}

/// The platform's pose of a recorded MCAP run (no column suffix), or its commanded pose
/// (`_cmd`), read by the one recording reader; a file never finished is said so.
fn run_trajectory(path: &std::path::Path, suffix: &str) -> Result<Trajectory> {
    let commanded = match suffix {
        "" => false,
        "_cmd" => true,
        other => anyhow::bail!(
            "{}: an MCAP run holds the platform's pose (no column suffix) and the commanded \
             pose (`_cmd`); `{other}` names neither",
            path.display()
        ),
    };
    let mut run = RunFile::open(path)?;
    if run.unfinished() {
        eprintln!(
            "warning: {}: {}",
            path.display(),
            cdpr_core::recording::UNFINISHED_NOTE
        );
    }
    if run.is_empty() {
        anyhow::bail!("{}: the run has no rows", path.display());
    }
    Ok(run.trajectory(commanded)?)
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub inputs: CompareInputs,
    /// Print one JSON object (SI, metres) instead of the table (mm).
    #[arg(long)]
    pub json: bool,
}

fn metrics_row(name: &str, m: &Metrics) -> Vec<String> {
    let mut row = vec![name.to_string()];
    row.extend(report::metric_cells(m));
    row.push(
        m.nrmse
            .iter()
            .map(|v| v.map_or("–".to_string(), |v| format!("{v:.3}")))
            .collect::<Vec<_>>()
            .join(" "),
    );
    row
}

pub(crate) fn print_comparison(c: &Comparison) {
    println!(
        "lag {} samples ({:.1} ms, searched up to {} s), {}; {} pairs compared",
        c.lag_samples,
        c.lag_s * 1e3,
        c.max_lag_s,
        if c.lag_removed {
            "removed"
        } else {
            "not removed"
        },
        c.total.samples
    );
    let mut table = Table::new(&[
        "segment",
        "RMS X [mm]",
        "RMS Y [mm]",
        "RMS Z [mm]",
        "RMS 3D [mm]",
        "Fréchet [mm]",
        "max 3D [mm]",
        "NRMSE x y z",
    ]);
    for s in &c.segments {
        table.row(metrics_row(&s.name, &s.metrics));
    }
    table.row(metrics_row("TOTAL", &c.total));
    table.print();
    println!(
        "NRMSE = 1 − ‖x_ref − x‖/‖x_ref − mean(x_ref)‖ (seed 004; 1 is perfect, – = constant reference)"
    );
    let thinned = c
        .segments
        .iter()
        .map(|s| &s.metrics)
        .chain([&c.total])
        .map(|m| m.frechet_tolerance)
        .fold(0.0, f64::max);
    if thinned > 0.0 {
        println!(
            "Fréchet within ±{:.3} mm of the full paths' (too many samples for the exact programme: \
             computed on the paths thinned to points a few µm apart)",
            thinned * 1e3
        );
    }
}

pub fn compare(a: CompareArgs) -> Result<ExitCode> {
    // Long CSVs take seconds to read and compare: the bar names the phase.
    let bar = super::output::progress_bar("compare: {msg}");
    let phase = |fraction: f64, what: &'static str| {
        if let Some(b) = &bar {
            b.set_position((fraction * 1000.0) as u64);
            b.set_message(what);
        }
    };
    phase(0.0, "reading");
    let (reference, actual) = a.inputs.load()?;
    phase(0.5, "metrics");
    let c = a.inputs.compare(&reference, &actual);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let c = c?;
    if c.reference_outside_actual > 0 {
        eprintln!(
            "warning: {} reference samples lie outside the actual trajectory's time span and are not compared",
            c.reference_outside_actual
        );
    }
    if a.json {
        json(&c)?;
    } else {
        print_comparison(&c);
    }
    Ok(ExitCode::SUCCESS)
}

// ------------------------------------------------------------------------------ report

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub inputs: CompareInputs,
    /// Directory to write metrics.json, report.md and the plots (PNG and SVG) into.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// Title of the report and its plots [default: "<actual> vs <reference>", each the run's
    /// description from the CSV's first comment line, else the file's stem].
    #[arg(long)]
    pub title: Option<String>,
    /// Print one JSON object (the files written and the metrics) instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn report(a: ReportArgs) -> Result<ExitCode> {
    // Stages of a long report (big CSVs): reading, comparing, drawing.
    let bar = super::output::progress_bar("report");
    let stage = |fraction: f64| {
        if let Some(b) = &bar {
            b.set_position((fraction * 1000.0) as u64);
        }
    };
    let (reference, actual) = a.inputs.load()?;
    stage(0.3);
    let c = a.inputs.compare(&reference, &actual)?;
    stage(0.5);
    // The runs' descriptions (the CSV's sidecar, written by `simulate --out` and
    // `trajectory --out`: "cdpr simulate: robot uvigo8, …"), else the file stems; one run
    // read twice (`--reference-columns _cmd`) is "run: platform vs commanded".
    let name = |p: &PathBuf| {
        sidecar::read_description(p)
            .map(|d| d.strip_prefix("cdpr ").map(str::to_string).unwrap_or(d))
            .or_else(|| p.file_stem().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| p.display().to_string())
    };
    let (r, act) = (&a.inputs.reference, &a.inputs.actual);
    let title = a.title.clone().unwrap_or_else(|| {
        if r == act {
            let role = |suffix: &str| match suffix {
                "" => "platform".to_string(),
                "_cmd" => "commanded".to_string(),
                s => format!("{} columns", s.trim_start_matches('_')),
            };
            format!(
                "{}: {} vs {}",
                name(act),
                role(&a.inputs.compare.request.actual_suffix),
                role(&a.inputs.compare.request.reference_suffix)
            )
        } else {
            format!("{} vs {}", name(act), name(r))
        }
    });
    // Drawing: from 50 % to 100 % as the 6 plot files are written.
    let files = report::write_report_with_progress(&a.out, &reference, &actual, &c, &title, &|f| {
        stage(0.5 + 0.5 * f)
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let files = files.with_context(|| format!("writing the report into {}", a.out.display()))?;
    if a.json {
        json(&json!({ "files": files, "metrics": c }))?;
    } else {
        print_comparison(&c);
        println!("wrote {}", files.markdown.display());
        println!("      {}", files.metrics.display());
        for p in &files.plots {
            println!("      {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
