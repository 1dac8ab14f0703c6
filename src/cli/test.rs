//! `cdpr test`: a suite of scenarios run against the shadow as the PLC's plant, with a verdict
//! per expectation, a JUnit file for CI and a Markdown report with plots.

use super::options::RequestArgs;
use super::output::{StatusLine, Table, json};
use super::preflight::VIOLATED;
use anyhow::{Context, Result};
use cdpr_ads::link::Interrupt;
use cdpr_ads::requests::TestRequest;
use cdpr_ads::suite::run::{Observer, Tally};
use cdpr_ads::suite::{self, RunSettings, ScenarioResult, Suite, SuiteReport};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Args, Debug)]
#[command(
    after_help = "A suite (TOML) holds [[scenario]]s; keys at its top are every \
scenario's defaults. A scenario takes `name`, `plc` (`virtual`, the default: the virtual PLC \
in-process playing `trajectory`; or a PLC's HOST[:PORT], with `ams_net_id`), `duration` (s; the \
virtual PLC's default: hold + trajectory + 0.5 s), `write` (the shadow writes its outputs back: \
the virtual PLC's default), any option of `cdpr simulate` (robot, trajectory, speed, model, dt, …), \
of the shadow's link (cycle, plc_period, clearance, timeout, …) and of the virtual PLC (task, nc, \
hold), times with their unit (\"2ms\").\n\n\
[scenario.expect]: tracking_rms, tracking_max (m), tension_min, tension_max (N), no_slack, \
no_interference, reaction_p99, reaction_max (PLC cycles), missed_plc_cycles, gaps, preflight.\n\
[[scenario.symbol]]: symbol = \"GVL.bDone\", is = \"==\" (!=, <, <=, >, >=, reaches), value = \
true or a number, and `within = 12` (met at some sample by 12 s) or `after = 3` (held at every \
sample from 3 s); neither: at every sample (reaches: at some). Each symbol's type is checked \
against the PLC's symbol table; a missing one is refused at its line.\n\n\
Virtual-PLC scenarios run in lockstep with the shadow, in parallel, as fast as the physics: the \
same verdicts on every run. A PLC at an address is run in real time, one scenario at a time.\n\n\
Exit status: 0 when every expectation holds; 3 when one is violated; 1 when a scenario could \
not run or stopped early (the PLC lost, Ctrl-C), or the suite is refused (file:line: field).\n\n\
Examples:\n  \
cdpr test robots/suites/shipped.toml\n  \
cdpr test robots/suites/shipped.toml --junit results.xml --report report/\n  \
cdpr test lab.toml --filter pick --jobs 2"
)]
pub struct TestArgs {
    /// The suite file (TOML).
    #[arg(value_name = "SUITE.toml")]
    pub suite: PathBuf,
    /// Outputs and how the suite runs (cdpr-ads' test request).
    #[command(flatten)]
    pub options: RequestArgs<TestRequest>,
    /// Print the results as one JSON object (per scenario: its verdicts with what was
    /// measured, the bound and when, its record, the shadow's statistics) instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// What the run says on stderr: a line per scenario as it ends (out of order when they run in
/// parallel), and a status line while a real PLC's scenario runs.
struct Progress {
    total: usize,
    finished: AtomicUsize,
    status: Mutex<StatusLine>,
}

impl Observer for Progress {
    fn finished(&self, r: &ScenarioResult) {
        let done = self.finished.fetch_add(1, Ordering::Relaxed) + 1;
        if let Ok(status) = self.status.lock() {
            status.clear();
        }
        if !super::output::is_quiet() {
            progress(r, done, self.total);
        }
    }

    fn running(&self, scenario: &str, time: f64, duration: f64) {
        if let Ok(mut status) = self.status.lock() {
            status.update(|| format!("{scenario}: {time:.1} of {duration:.1} s"));
        }
    }
}

/// One line for a scenario that ended.
fn progress(r: &ScenarioResult, done: usize, of: usize) {
    let (word, wall) = match (&r.run, r.error(), r.passed()) {
        (Err(_), _, _) | (_, Some(_), _) => ("ERROR ", None),
        (Ok(run), None, true) => ("passed", Some(run.wall)),
        (Ok(run), None, false) => ("FAILED", Some(run.wall)),
    };
    let wall = wall.map_or(String::new(), |w| format!(", {w:.2} s"));
    eprintln!("[{done}/{of}] {word} {}{wall}", r.name);
}

pub fn run(a: TestArgs) -> Result<ExitCode> {
    let request = &a.options.request;
    let suite = Suite::from_file(&a.suite)?.select(request.filter.as_deref())?;
    suite.check()?;
    let interrupt = Interrupt::new();
    {
        let interrupt = interrupt.clone();
        if let Err(e) = ctrlc::set_handler(move || interrupt.raise()) {
            eprintln!("warning: Ctrl-C will not stop the suite cleanly: {e}");
        }
    }
    let settings = RunSettings {
        records: request.records_dir(),
        jobs: request.jobs(),
    };
    let observer = Progress {
        total: suite.scenarios.len(),
        finished: AtomicUsize::new(0),
        status: Mutex::new(StatusLine::new()),
    };
    let results = suite::run_suite(&suite, &settings, &interrupt, &observer)?;
    if a.json {
        json(&SuiteReport::new(&a.suite, &results))?;
    } else {
        print_results(&results);
    }
    // With --json, stdout is the one JSON object; the lines for people go to stderr.
    let say = |line: &str| {
        if a.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    let name = a
        .suite
        .file_stem()
        .map_or_else(|| "suite".into(), |s| s.to_string_lossy().into_owned());
    if let Some(path) = &request.junit {
        suite::junit::write(path, &name, &results)
            .with_context(|| format!("writing the JUnit file {}", path.display()))?;
        say(&format!("wrote {}", path.display()));
    }
    if let Some(dir) = &request.report {
        let path = suite::report::write(dir, &a.suite, &results)?;
        say(&format!("wrote {}", path.display()));
    }
    let tally = Tally::of(&results);
    say(&format!(
        "{tally} (records in {})",
        settings.records.display()
    ));
    Ok(if tally.errors > 0 {
        ExitCode::FAILURE
    } else if tally.failed > 0 {
        ExitCode::from(VIOLATED)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_results(results: &[ScenarioResult]) {
    let mut t = Table::new(&[
        "scenario",
        "expectation",
        "verdict",
        "measured",
        "bound",
        "at [s]",
    ])
    .left(&[0, 1, 2, 3, 4]);
    for r in results {
        if let Some(e) = r.error() {
            t.row(vec![
                r.name.clone(),
                "run".into(),
                "ERROR".into(),
                e.to_string(),
                "ran to its end".into(),
                "-".into(),
            ]);
        }
        for v in &r.verdicts {
            t.row(vec![
                r.name.clone(),
                v.name.clone(),
                if v.passed { "held" } else { "VIOLATED" }.into(),
                v.measured.clone(),
                v.bound.clone(),
                v.at.map_or("-".into(), |t| format!("{t:.3}")),
            ]);
        }
    }
    t.print();
}
