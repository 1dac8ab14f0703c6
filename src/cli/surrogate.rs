//! `surrogate fit|validate` and `simulate --model surrogate`: seed 004's digital-filter model.

use super::args::{RobotArg, load_params, warn};
use super::options::{Reference, RunArgs};
use super::output::progress_bar;
use super::output::{Table, json};
use anyhow::{Context, Result, bail};
use cdpr_core::choice::Choice;
use cdpr_core::identify::reference::{self, DofReport, ReferenceRun};
use cdpr_core::identify::session::{self, FitReport, PhysicsSetup, Validation};
use cdpr_core::robot::Robot;
use cdpr_core::sim::ModelKind;
use cdpr_core::surrogate::{DOF_NAMES, FitOptions, Reachability, Surrogate, SurrogateParams};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct SurrogateArgs {
    #[command(subcommand)]
    pub command: SurrogateCommand,
}

#[derive(Subcommand, Debug)]
pub enum SurrogateCommand {
    /// Fit per DOF a delay + Tustin second-order low-pass to reference responses and write
    /// the parameter file.
    #[command(
        after_help = "The references are recorded runs (`cdpr simulate --out run.csv`: the \
`_cmd` pose columns are the input, the plain pose columns the response) or, without --reference, \
runs of the physics core on seed 004's identification signals (--signals, one DOF at a time). \
Each DOF is fitted on the references that move it, maximising seed 004's NRMSE \
(1 − ‖y − ŷ‖/‖y − ȳ‖, 1 is perfect). --validate scores the fitted surrogate on other \
trajectories (the physics core is run on them with the same settings) so the NRMSE reported is \
on data the fit never saw.\n\n\
Examples:\n  \
cdpr simulate --robot uvigo8 --trajectory steps --model elastic --out steps.csv\n  \
cdpr surrogate fit --robot uvigo8 --reference steps.csv --out uvigo8-surrogate.toml\n  \
cdpr surrogate fit --robot uvigo8 --signals steps,chirp --model elastic \\\n      \
--validate dsine,dsquare,sines,seed000 --out uvigo8-surrogate.toml"
    )]
    Fit(FitArgs),
    /// Score a parameter file against reference runs (NRMSE per DOF, surrogate vs. no model).
    #[command(after_help = "Example:\n  \
cdpr surrogate validate --robot uvigo8 --surrogate uvigo8-surrogate.toml --reference dsine,seed000")]
    Validate(ValidateArgs),
}

/// How to produce physics reference runs.
#[derive(Args, Debug, Clone)]
pub struct PhysicsArgs {
    /// Physics model for generated reference runs [default: elastic for cable robots, chain
    /// for robots with legs: the cheapest physics of each].
    #[arg(long, value_name = "MODEL", value_parser = model_name)]
    pub model: Option<ModelKind>,
    /// The reference runs' options, as `cdpr simulate` takes them.
    #[command(flatten)]
    pub run: RunArgs<Reference>,
}

/// A model of core's table, by name.
fn model_name(text: &str) -> Result<ModelKind, String> {
    ModelKind::from_name(text).map_err(|e| e.to_string())
}

#[derive(Args, Debug)]
pub struct FitArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Reference runs: CSV files written by `cdpr simulate --out`, or trajectory names (signals
    /// steps, chirp, dsine, dsquare, sines; built-ins seed000, pickplace, poly5) to run through
    /// the physics core. Comma-separated or repeated.
    #[arg(long, value_delimiter = ',', value_name = "CSV|NAME")]
    pub reference: Vec<String>,
    /// Identification signals run one DOF at a time when no --reference is given.
    #[arg(long, value_delimiter = ',', value_name = "NAMES",
          default_value = session::DEFAULT_SIGNALS)]
    pub signals: Vec<String>,
    /// Trajectories to validate on after fitting (CSV or names, as --reference).
    #[arg(long, value_delimiter = ',', value_name = "CSV|NAME")]
    pub validate: Vec<String>,
    /// DOFs to fit (default: all the robot commands).
    #[arg(long, value_delimiter = ',', value_name = "x,y,z,roll,pitch,yaw")]
    pub dofs: Vec<String>,
    /// How to fit (core's fit request).
    #[command(flatten)]
    pub fit: super::options::RequestArgs<session::FitRequest>,
    #[command(flatten)]
    pub physics: PhysicsArgs,
    /// Where to write the parameter file (TOML).
    #[arg(long, short = 'o', value_name = "TOML")]
    pub out: PathBuf,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Parameter file written by `cdpr surrogate fit`.
    #[arg(long, value_name = "TOML")]
    pub surrogate: PathBuf,
    /// Reference runs (CSV or names, as in `fit`). Comma-separated or repeated.
    #[arg(long, value_delimiter = ',', required = true, value_name = "CSV|NAME")]
    pub reference: Vec<String>,
    #[command(flatten)]
    pub physics: PhysicsArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: SurrogateArgs) -> Result<ExitCode> {
    match a.command {
        SurrogateCommand::Fit(f) => fit(f),
        SurrogateCommand::Validate(v) => validate(v),
    }
}

impl PhysicsArgs {
    fn setup(&self) -> PhysicsSetup {
        PhysicsSetup {
            request: self.run.request.clone(),
            model: self.model,
        }
    }
}

/// A reference run, with a progress bar while the physics core produces it.
fn load_reference(robot: &Robot, spec: &str, setup: &PhysicsSetup) -> Result<ReferenceRun> {
    let bar = progress_bar(&format!("running reference `{spec}`"));
    let mut tick = |fraction: f64| {
        if let Some(b) = &bar {
            b.set_position((fraction * 1000.0) as u64);
        }
    };
    let run = session::load_reference(robot, spec, setup, &mut tick);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(run?)
}

/// `surrogate fit`: the reference runs, the fit, the parameter file, then the validation and
/// the report.
fn fit(a: FitArgs) -> Result<ExitCode> {
    let robot = a.robot.load()?;
    let dofs = session::parse_dofs(&robot, &a.dofs)?;
    let setup = a.physics.setup();
    let rest = session::rest_pose(&robot);
    let runs: Vec<ReferenceRun> = if a.reference.is_empty() {
        identification_references(&a, &robot, &dofs, &setup)?
    } else {
        a.reference
            .iter()
            .map(|r| load_reference(&robot, r, &setup))
            .collect::<Result<_>>()?
    };
    let options = session::fit_options(
        a.fit.request.method,
        runs[0].dt,
        a.fit.request.max_delay,
        a.fit.request.fit_gain,
    )?;
    let reach = setup.reachability(&robot);
    let reach_dyn = reach.as_deref().map(|r| r as &dyn Reachability);
    let started = std::time::Instant::now();
    let (mut params, dof_reports) = fit_dofs(&robot, &rest, &runs, &dofs, &options, reach_dyn)?;
    let fit_s = started.elapsed().as_secs_f64();
    let run_names: Vec<String> = runs.iter().map(|r| r.name.clone()).collect();
    let mut warnings: Vec<String> = session::unfitted_warning(&dofs, &dof_reports, &run_names)
        .into_iter()
        .collect();
    warnings.extend(session::bound_warnings(&dof_reports, &options, runs[0].dt));
    warn(&warnings);
    params.method = Some(a.fit.request.method.name().into());
    params.references = runs.iter().map(|r| r.name.clone()).collect();
    params
        .write(&a.out)
        .with_context(|| format!("writing {}", a.out.display()))?;

    let validation = validate_fit(&robot, &params, &a.validate, &setup, reach_dyn)?;
    let report = FitReport {
        params: a.out.clone(),
        fit_s,
        dofs: dof_reports,
        validation,
        warnings,
    };
    if a.json {
        json(&report)?;
    } else {
        print_fit_report(
            &report,
            &robot.name,
            runs.len(),
            a.fit.request.method.name(),
        );
        println!("wrote {}", a.out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs the identification signals through the physics core, one DOF at a time, announcing
/// them first and showing progress (a bar, else a line per run unless `--json`).
fn identification_references(
    a: &FitArgs,
    robot: &Robot,
    dofs: &[usize],
    setup: &PhysicsSetup,
) -> Result<Vec<ReferenceRun>> {
    let kinds = session::parse_signals(&a.signals)?;
    let total = kinds.len() * dofs.len();
    if !a.json {
        eprintln!(
            "running {total} identification runs ({} on {}, {} model) …",
            a.signals.join(", "),
            dofs.iter()
                .map(|&d| DOF_NAMES[d])
                .collect::<Vec<_>>()
                .join(" "),
            setup
                .model(robot)
                .map_or_else(|_| "?".to_string(), |m| m.name().to_string())
        );
    }
    let bar = progress_bar("identification runs");
    let mut progress = |done: usize, total: usize| match &bar {
        Some(b) => b.set_position((1000 * done / total.max(1)) as u64),
        None if !a.json => eprintln!("  identification run {done}/{total} done"),
        None => {}
    };
    let runs = reference::identification_runs(
        robot,
        &kinds,
        dofs,
        &setup.run_options(robot)?,
        &mut progress,
    );
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    runs.context("identification runs")
}

/// Fits the DOFs to the reference runs behind a progress bar.
fn fit_dofs(
    robot: &Robot,
    rest: &[f64; 6],
    runs: &[ReferenceRun],
    dofs: &[usize],
    options: &FitOptions,
    reach: Option<&dyn Reachability>,
) -> Result<(SurrogateParams, Vec<DofReport>)> {
    let bar = progress_bar(&format!("fitting {} DOF(s)", dofs.len()));
    let mut tick = |fraction: f64| {
        if let Some(b) = &bar {
            b.set_position((fraction * 1000.0) as u64);
        }
    };
    let fitted =
        reference::fit_all_with_progress(&robot.name, rest, runs, dofs, options, reach, &mut tick);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    fitted.context("fitting the surrogate")
}

/// Scores the fitted surrogate on trajectories the fit did not see; each must share the fit's
/// sampling period, since the filters are discretised for it.
fn validate_fit(
    robot: &Robot,
    params: &SurrogateParams,
    specs: &[String],
    setup: &PhysicsSetup,
    reach: Option<&dyn Reachability>,
) -> Result<Vec<Validation>> {
    let surrogate = Surrogate::new(params, params.dt);
    let mut validation = Vec::new();
    for spec in specs {
        let run = load_reference(robot, spec, setup)?;
        if (run.dt - params.dt).abs() > 1e-9 {
            bail!(
                "validation run `{spec}` has period {} s, the fit {} s",
                run.dt,
                params.dt
            );
        }
        validation.push(Validation {
            reference: spec.clone(),
            scores: reference::validate(&surrogate, &run, reach),
        });
    }
    Ok(validation)
}

/// The fit's summary line, its per-DOF parameter table and the validation scores.
fn print_fit_report(report: &FitReport, robot: &str, runs: usize, method: &str) {
    println!(
        "fitted {} DOF(s) of {} on {} reference run(s) in {:.1} s ({} method)",
        report.dofs.len(),
        robot,
        runs,
        report.fit_s,
        method
    );
    let mut t = Table::new(&["dof", "delay ms", "f_n Hz", "ζ", "K", "NRMSE (fit)", "runs"]);
    for r in &report.dofs {
        let q = r.fit.params;
        t.row(vec![
            r.dof.into(),
            format!("{:.0}", q.delay_s * 1e3),
            format!("{:.3}", q.natural_frequency_hz),
            format!("{:.3}", q.damping),
            format!("{:.3}", q.gain),
            format!("{:.4}", r.fit.nrmse),
            r.references.len().to_string(),
        ]);
    }
    t.print();
    if !report.validation.is_empty() {
        println!(
            "\nNRMSE on trajectories not used for the fit (surrogate / demand taken as response):"
        );
        print_scores(&report.validation);
    }
}

fn print_scores(validation: &[Validation]) {
    let mut t = Table::new(&["reference", "x", "y", "z", "roll", "pitch", "yaw"]);
    for v in validation {
        let mut row = vec![v.reference.clone()];
        for dof in DOF_NAMES {
            row.push(
                v.scores
                    .iter()
                    .find(|s| s.dof == dof)
                    .map(|s| {
                        let f = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or("–".into());
                        format!("{} / {}", f(s.nrmse), f(s.baseline))
                    })
                    .unwrap_or_else(|| "·".into()),
            );
        }
        t.row(row);
    }
    t.print();
}

fn validate(a: ValidateArgs) -> Result<ExitCode> {
    let robot = a.robot.load()?;
    let params = load_params(&a.surrogate, Some(&robot.name))?;
    let setup = a.physics.setup();
    let reach = setup.reachability(&robot);
    let reach_dyn = reach.as_deref().map(|r| r as &dyn Reachability);
    let mut validation = Vec::new();
    for spec in &a.reference {
        let run = load_reference(&robot, spec, &setup)?;
        let surrogate = Surrogate::new(&params, run.dt);
        validation.push(Validation {
            reference: spec.clone(),
            scores: reference::validate(&surrogate, &run, reach_dyn),
        });
    }
    if a.json {
        json(&validation)?;
    } else {
        println!("NRMSE per DOF (surrogate / demand taken as response; 1 is perfect):");
        print_scores(&validation);
    }
    Ok(ExitCode::SUCCESS)
}
