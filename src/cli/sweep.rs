//! `sweep`: a spec's runs in parallel, one CSV row each, resumable and shardable. The logic
//! is in `cdpr_core::sweep`; this is the command line around it.

use super::output::progress_bar;
use anyhow::{Context, Result, bail};
use cdpr_core::run::request;
use cdpr_core::sweep::{self, ExecuteOptions, Spec};
use clap::Args;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

/// The run options a spec takes at its top level, from core's table.
pub fn run_keys_help() -> String {
    let mut text = String::from("Run options a spec takes (top-level keys, as `cdpr simulate`'s):");
    for name in sweep::run_option_keys() {
        if let Some(spec) = request::option(name) {
            let range = spec
                .range_text()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            text.push_str(&format!("\n  {name:<11} {}{range}", spec.help));
        }
    }
    text
}

#[derive(Args, Debug)]
#[command(after_help = "The spec (TOML; unknown keys are refused):\n\
  robots = [\"uvigo8\"]            # shipped robot names or robot files (relative to the spec)\n\
  trajectories = [\"seed000\"]     # built-in trajectories or CSV files\n\
  speeds = [0.05, 0.1]           # m/s (0.001 to 10) [default: [0.1]]\n\
  model = \"elastic\"              # any run option of `cdpr simulate` (listed below), its name\n\
  dt = 0.001                     # with _ for -, e.g. remove_lag = false for --no-lag\n\
  mode = \"grid\"                  # grid: every combination; random: `samples = N` draws\n\
  seed = 0                       # every run's seed is a function of this seed and its index\n\
  [parameters]                   # each a list (grid, random) or {min = a, max = b} (random)\n\
  stiffness_scale = [0.5, 1.0]   # × every cable's stiffness (0.001 to 1000)\n\
  damping_scale = [1.0]          # × every cable's damping (0 to 1000)\n\
  payload = [0.0, 0.5]           # kg added to the moving mass (0 to 1e4)\n\
  anchor_offset = [0.0, 0.002]   # m, std-dev of a seeded offset of each frame anchor (0 to 0.1)\n\
  winch_speed_scale = [1.0]      # × the winches' velocity limit (0.01 to 100)\n\
  winch_accel_scale = [1.0]      # × their acceleration and jerk limits (0.01 to 100)\n\
  kp = [1500.0]                  # tension controller gains, as --kp (0 to 1e6) and --kd (0 to 1e5)\n\
  kd = {min = 500.0, max = 3000.0}\n\n\
Each row: index, seed, robot, trajectory, speed, the swept parameters, status (ok | error), error, \
steps, simulated_s, wall_s, rms_3d, rms_x, rms_y, rms_z, max_3d, frechet (m), lag_s, tension_min, \
tension_max (N), low_tension_cables, warnings — the numbers of `cdpr simulate --json` for the same run. \
Rows are appended in the order runs finish (sort by index); an existing --out is resumed: the runs \
in it are skipped, a partial last line is cut off. A failed run is a row (status error, the message \
in error), not a failure of the sweep: the exit status is 0 once every run has a row.\n\n\
Example (the 12 runs of the shipped spec, then the same split in three, e.g. a Slurm array's \
--shard $SLURM_ARRAY_TASK_ID/3):\n  \
cdpr sweep robots/sweeps/uvigo8-stiffness.toml --out runs.csv\n  \
cdpr sweep robots/sweeps/uvigo8-stiffness.toml --out part0.csv --shard 0/3")]
pub struct SweepArgs {
    /// The sweep spec (TOML, see below).
    #[arg(value_name = "SPEC.toml")]
    pub spec: PathBuf,
    /// The CSV the rows go to (resumed when it exists).
    #[arg(
        long,
        short = 'o',
        value_name = "CSV",
        required_unless_present = "dry_run"
    )]
    pub out: Option<PathBuf>,
    #[arg(long, short = 'j', value_name = "N", value_parser = super::options::whole_of(&sweep::JOBS),
          help = super::options::help_of(&sweep::JOBS))]
    pub jobs: Option<usize>,
    /// Only the runs whose index is I modulo N (0 ≤ I < N ≤ 10000): N processes, each with its
    /// own I (and its own --out), do the sweep between them.
    #[arg(long, value_name = "I/N", value_parser = shard)]
    pub shard: Option<(u64, u64)>,
    /// Also record every run's steps in its own MCAP file in DIR (created if missing),
    /// `run-NNNNNN.mcap` by the run's index: pose, scene and the numbers of `simulate --out`,
    /// for Foxglove, Lichtblick, PlotJuggler or `cdpr view --replay`.
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<PathBuf>,
    /// Overwrite --out instead of resuming it.
    #[arg(long, alias = "no-resume")]
    pub force: bool,
    /// List the runs (of the shard) and exit.
    #[arg(long)]
    pub dry_run: bool,
}

/// Parses `I/N` with 0 ≤ I < N ≤ 10000.
fn shard(text: &str) -> Result<(u64, u64), String> {
    let (i, n) = text
        .split_once('/')
        .ok_or_else(|| format!("expected I/N (e.g. 0/4), got {text}"))?;
    let number = |s: &str, what: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("{what} `{s}` is not a whole number (expected I/N, e.g. 0/4)"))
    };
    let (i, n) = (number(i, "I")?, number(n, "N")?);
    if !(1..=10_000).contains(&n) {
        return Err(format!("N must be from 1 to 10000, got {n}"));
    }
    if i >= n {
        return Err(format!("I must be from 0 to N − 1 = {}, got {i}", n - 1));
    }
    Ok((i, n))
}

pub fn run(a: SweepArgs) -> Result<ExitCode> {
    let spec = Spec::from_file(&a.spec).context("reading the sweep spec")?;
    super::args::warn(&spec.warnings);
    let in_shard = |index: u64| a.shard.is_none_or(|(i, n)| index % n == i);
    if a.dry_run {
        let columns = spec.columns();
        let p = spec.parameters.len();
        println!("{}", columns[..5 + p].join(","));
        for plan in spec.runs()? {
            if !in_shard(plan.index) {
                continue;
            }
            let mut fields = vec![
                plan.index.to_string(),
                plan.seed.to_string(),
                plan.robot.clone(),
                plan.trajectory.clone(),
                plan.speed.to_string(),
            ];
            fields.extend(plan.parameters.iter().map(|(_, v)| v.to_string()));
            println!("{}", fields.join(","));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(out) = &a.out else {
        bail!("--out CSV is needed (or --dry-run)");
    };
    let (mut output, resumed) = sweep::csv::open_for(out, &spec, a.shard, !a.force)?;
    if resumed.dropped_partial {
        eprintln!(
            "note: {}: a partial last row (a run being written when the sweep stopped) was cut off",
            out.display()
        );
    }
    let options = ExecuteOptions {
        shard: a.shard,
        jobs: a.jobs.unwrap_or(0),
        resume_skip: resumed.done,
        record_dir: a.record_dir.clone(),
    };
    if let Some(dir) = &options.record_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the record directory {}", dir.display()))?;
    }
    let todo = (0..spec.count()?)
        .filter(|&k| in_shard(k) && !options.resume_skip.contains(&k))
        .count();
    let bar = progress_bar("sweep {pos}/{len} runs, {msg}");
    if let Some(b) = &bar {
        b.set_length(todo as u64);
        b.set_message("0 failed");
    }
    let mut write_error = None;
    let mut failed = 0u64;
    let summary = sweep::execute(&spec, &options, |row| {
        if let Some(b) = &bar {
            b.inc(1);
            failed += u64::from(!row.ok);
            b.set_message(format!("{failed} failed"));
        }
        match output.write(&row) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                write_error = Some(e);
                ControlFlow::Break(())
            }
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(e) = write_error {
        return Err(anyhow::Error::new(e).context("writing the sweep's rows"));
    }
    let s = summary?;
    println!(
        "{} runs{}: {} done ({} failed), {} skipped (already in {}), {:.2} s wall, {:.2} runs/s",
        s.selected,
        a.shard
            .map(|(i, n)| format!(" in shard {i}/{n} of {}", s.total))
            .unwrap_or_default(),
        s.done,
        s.failed,
        s.skipped,
        out.display(),
        s.wall_s,
        s.runs_per_s()
    );
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}
