//! What is there to use: the shipped robots, built-in trajectories and signals (listed in the
//! help of every command that takes them, from the library's own lists so that they cannot
//! drift), `cdpr robots`, and shell completions.

use super::output::{Table, json};
use anyhow::Result;
use cdpr_core::robot::Robot;
use cdpr_core::robot::lookup::{self, Listed, NAME_DIRS, RobotSource};
use cdpr_core::trajectory::{BUILTINS, signals::SIGNALS};
use clap::{Args, Command, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// How `--robot` finds a robot: the rule of `cdpr_core::robot::lookup`, in words.
pub fn lookup_rule() -> String {
    let files: Vec<String> = NAME_DIRS
        .iter()
        .map(|d| {
            if *d == "." {
                "./NAME.toml".to_string()
            } else {
                format!("./{d}/NAME.toml")
            }
        })
        .collect();
    format!(
        "--robot NAME is the shipped robot NAME, else {} (the first found; a warning names a \
         file of that name it leaves out); --robot PATH (with a / or ending in .toml) is that \
         file, which must exist. `cdpr robots` lists them all, `cdpr check ROBOT` explains one.",
        files.join(", else ")
    )
}

/// Whether the command line `args` asks for a help (`-h`, `--help`, a short-flag cluster with
/// `h`, `help`), the only output that shows the lists [`with_catalogue`] adds.
pub fn help_asked(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    args.into_iter().any(|a| {
        let a = a.to_string_lossy();
        a == "--help"
            || a == "help"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('h'))
    })
}

/// The shipped robots, one per line: name, kind and the file's description; after the rule
/// that finds robots by name. Loaded once per process (every command taking a robot lists them).
pub fn robots_help() -> String {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(robots_text).clone()
}

fn robots_text() -> String {
    let mut text = format!(
        "Robots: {}
Shipped robots:",
        lookup_rule()
    );
    for name in Robot::builtin_names() {
        let line = match Robot::builtin(name) {
            Some(Ok(r)) => format!("{name:<8} {}", r.description),
            Some(Err(e)) => format!("{name:<8} (does not load: {e})"),
            None => format!("{name:<8}"),
        };
        text.push_str("\n  ");
        text.push_str(&line);
    }
    text
}

/// The built-in trajectories and identification signals, one per line.
pub fn trajectories_help() -> String {
    let mut text =
        String::from("Built-in trajectories (or a CSV file t,x,y,z[,roll,pitch,yaw][,segment]):");
    let tilt = (
        "tilt",
        "roll and pitch moves for the 2-RSSU platform (--speed in rad/s)",
    );
    for (name, what) in BUILTINS.iter().chain(std::iter::once(&tilt)) {
        text.push_str(&format!("\n  {name:<9} {what}"));
    }
    text.push_str("\nSignals (seed 004, one DOF at a time unless said):");
    for (name, what) in SIGNALS {
        text.push_str(&format!("\n  {name:<9} {what}"));
    }
    text
}

/// Adds the lists to the help of every command that takes a robot or a trajectory.
pub fn with_catalogue(cmd: Command) -> Command {
    let takes = |c: &Command, id: &str| c.get_arguments().any(|a| a.get_id() == id);
    let mut extra = Vec::new();
    if takes(&cmd, "robot") || cmd.get_name() == "robots" {
        extra.push(robots_help());
    }
    if takes(&cmd, "trajectory") || (cmd.get_name() == "trajectory" && takes(&cmd, "name")) {
        extra.push(trajectories_help());
    }
    if takes(&cmd, "model") {
        extra.push(super::sim::models_help());
    }
    if cmd.get_name() == "sweep" && takes(&cmd, "spec") {
        extra.push(super::sweep::run_keys_help());
    }
    let cmd = if extra.is_empty() {
        cmd
    } else {
        let with_extra = |text: Option<&clap::builder::StyledStr>| {
            let before = text.map(|h| format!("{h}\n\n")).unwrap_or_default();
            format!("{before}{}", extra.join("\n"))
        };
        let long = cmd.get_after_long_help().map(|h| with_extra(Some(h)));
        let short = with_extra(cmd.get_after_help());
        let cmd = cmd.after_help(short);
        match long {
            Some(long) => cmd.after_long_help(long),
            None => cmd,
        }
    };
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names
        .iter()
        .fold(cmd, |cmd, name| cmd.mut_subcommand(name, with_catalogue))
}

/// `cdpr robots`: the shipped robots and the robot files here.
#[derive(Args, Debug)]
#[command(
    after_help = "Lists the shipped robots, then the robot files (*.toml) in ./robots and the \
current directory and in each --dir, each under what --robot takes for it (its name when the \
name finds it, else its path); a file that is not a valid robot file is listed with the reason.\n\n\
Examples:\n  cdpr robots\n  cdpr robots --dir ~/my-robots --json"
)]
pub struct RobotsArgs {
    /// Also list the robot files in this directory (repeatable).
    #[arg(long, value_name = "DIR")]
    pub dir: Vec<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Entry {
    name: String,
    /// What `--robot` takes for it: the name when the lookup finds this robot by name, else
    /// the file's path.
    robot_arg: String,
    /// "shipped" or the file's path.
    source: String,
    kind: Option<String>,
    /// Cables (None for a robot with legs).
    cables: Option<usize>,
    mass_kg: Option<f64>,
    description: String,
    error: Option<String>,
}

impl Entry {
    fn of(listed: Listed) -> Entry {
        let (source, stem) = match &listed.source {
            RobotSource::Shipped(name) => ("shipped".to_string(), name.to_string()),
            RobotSource::File(path) => (
                path.display().to_string(),
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
        };
        match listed.robot {
            Ok(r) => Entry {
                name: r.name.clone(),
                robot_arg: listed.spec,
                source,
                kind: Some(r.mechanism.kind().to_string()),
                cables: r.is_cable_robot().then(|| r.cable_count()),
                mass_kg: Some(r.platform.mass),
                description: r.description,
                error: None,
            },
            Err(e) => Entry {
                name: stem,
                robot_arg: listed.spec,
                source,
                kind: None,
                cables: None,
                mass_kg: None,
                description: String::new(),
                error: Some(e.to_string()),
            },
        }
    }
}

pub fn robots(a: RobotsArgs) -> Result<ExitCode> {
    // The listing walks the places `--robot NAME` looks in, so each robot is shown under what
    // finds it.
    let entries: Vec<Entry> = lookup::listing(Path::new(""), &a.dir)
        .into_iter()
        .map(Entry::of)
        .collect();
    if a.json {
        json(&serde_json::json!({ "robots": entries }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new(&[
        "--robot",
        "from",
        "kind",
        "cables",
        "mass [kg]",
        "description",
    ])
    .left(&[1, 2, 5]);
    for e in &entries {
        t.row(vec![
            e.robot_arg.clone(),
            e.source.clone(),
            e.kind.clone().unwrap_or_else(|| "-".into()),
            e.cables.map_or("-".into(), |n| n.to_string()),
            e.mass_kg.map_or("-".into(), |m| format!("{m:.3}")),
            match &e.error {
                Some(err) => format!("not a valid robot file: {err}"),
                None => e.description.clone(),
            },
        ]);
    }
    t.print();
    println!("{}", lookup_rule());
    Ok(ExitCode::SUCCESS)
}

/// Shells `cdpr completions` writes for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

/// `cdpr completions SHELL`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    cdpr completions bash > ~/.local/share/bash-completion/completions/cdpr\n  \
    cdpr completions zsh > ~/.zfunc/_cdpr     # with fpath+=~/.zfunc before compinit\n  \
    cdpr completions fish > ~/.config/fish/completions/cdpr.fish")]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn completions(a: CompletionsArgs, mut cmd: Command) -> Result<ExitCode> {
    use clap_complete::{Shell as S, generate};
    let shell = match a.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Elvish => S::Elvish,
        Shell::Powershell => S::PowerShell,
    };
    generate(shell, &mut cmd, "cdpr", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::help_asked;

    #[test]
    fn only_a_help_loads_the_lists() {
        let asks = |args: &[&str]| help_asked(args.iter().map(|a| a.into()));
        assert!(asks(&["simulate", "-h"]));
        assert!(asks(&["simulate", "--help"]));
        assert!(asks(&["help", "simulate"]));
        assert!(asks(&["simulate", "-qh"]));
        assert!(!asks(&["simulate", "-r", "uvigo8", "--dt=-1e-3"]));
        assert!(!asks(&["shadow", "--headless", "--plc-period", "1ms"]));
    }
}
