//! `sweep`: a spec's runs in parallel, one CSV row each, resumable and shardable. The logic
//! is in `cdpr_core::sweep`; this is the command line around it.

use super::options::RequestArgs;
use super::output::progress_bar;
use anyhow::{Context, Result, bail};
use cdpr_core::run::request;
use cdpr_core::sweep::{self, Spec, SweepRequest, SweepRun};
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
    #[command(flatten)]
    pub sweep: RequestArgs<SweepRequest>,
}

pub fn run(a: SweepArgs) -> Result<ExitCode> {
    let spec = Spec::from_file(&a.spec).context("reading the sweep spec")?;
    super::args::warn(&spec.warnings);
    let request = &a.sweep.request;
    if request.dry_run {
        let columns = spec.columns();
        let p = spec.parameters.len();
        println!("{}", columns[..5 + p].join(","));
        for plan in spec.runs()? {
            if !request.selects(plan.index) {
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
    let sweep = SweepRun::open(&spec, request, Some(out))?;
    if sweep.dropped_partial {
        eprintln!(
            "note: {}: a partial last row (a run being written when the sweep stopped) was cut off",
            out.display()
        );
    }
    let bar = progress_bar("sweep {pos}/{len} runs, {msg}");
    if let Some(b) = &bar {
        b.set_length(sweep.todo);
        b.set_message("0 failed");
    }
    let mut failed = 0u64;
    let summary = sweep.run(|row| {
        if let Some(b) = &bar {
            b.inc(1);
            failed += u64::from(!row.ok);
            b.set_message(format!("{failed} failed"));
        }
        ControlFlow::Continue(())
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let s = summary?;
    println!(
        "{} runs{}: {} done ({} failed), {} skipped (already in {}), {:.2} s wall, {:.2} runs/s",
        s.selected,
        request
            .shard
            .map(|shard| format!(" in shard {shard} of {}", s.total))
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
