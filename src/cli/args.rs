//! Argument types shared by the subcommands: robots, poses, number lists.

use super::options::{RobotOnly, RunArgs, Selection};
use anyhow::{Context, Result, bail};
use cdpr_core::kinematics::{AngleUnit, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::surrogate::SurrogateParams;
use clap::Args;
use std::path::Path;

/// A comma-separated list of numbers from the command line (a newtype so that clap treats
/// it as one value).
#[derive(Debug, Clone, PartialEq)]
pub struct Numbers(pub Vec<f64>);

impl std::ops::Deref for Numbers {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        &self.0
    }
}

/// Parses "a,b,c" into numbers, naming the offending item.
pub fn number_list(text: &str) -> Result<Numbers, String> {
    number_vec(text).map(Numbers)
}

fn number_vec(text: &str) -> Result<Vec<f64>, String> {
    text.split(',')
        .enumerate()
        .map(|(k, item)| {
            let item = item.trim();
            let value: f64 = item
                .parse()
                .map_err(|_| format!("item {} `{item}` is not a number", k + 1))?;
            if value.is_finite() {
                Ok(value)
            } else {
                Err(format!("item {} `{item}` is not a finite number", k + 1))
            }
        })
        .collect()
}

/// Wraps `error` in "`what` `name`" context, or just "`what`" when its message already names
/// `name` (a file or a robot): every name and cause is printed once ("loading robot:
/// no robot file `x.toml` …", not "loading robot `x.toml`: no robot file `x.toml` …").
pub fn naming<E>(error: E, what: &str, name: &str) -> anyhow::Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    let names_it = {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&error);
        let mut found = false;
        while let Some(e) = cause {
            found |= e.to_string().contains(name);
            cause = e.source();
        }
        found
    };
    let e = anyhow::Error::new(error);
    if names_it {
        e.context(what.to_string())
    } else {
        e.context(format!("{what} `{name}`"))
    }
}

/// Parses "x,y,z" or "x,y,z,roll,pitch,yaw", naming the offending item; the pose's rules
/// (how many numbers, their ranges) are core's ([`Pose::from_user`]).
pub fn pose_list(text: &str) -> Result<Numbers, String> {
    let values = number_vec(text)?;
    Pose::from_user(&values, false).map_err(|e| e.to_string())?;
    Ok(Numbers(values))
}

/// Finds a robot by the one lookup rule (`cdpr_core::robot::lookup`), warning when the name
/// also matches another robot file that is not used.
pub fn find_robot(spec: &str) -> Result<Robot, cdpr_core::robot::RobotFileError> {
    let found = cdpr_core::robot::lookup::find(spec)?;
    say_lookup_note(found.note(spec));
    Ok(found.robot)
}

/// The robot a run request names, with its payload, warning as [`find_robot`] does.
pub fn load_robot(request: &cdpr_core::run::RunRequest) -> Result<Robot> {
    let (robot, note) = request.load_robot_noted()?;
    say_lookup_note(note);
    Ok(robot)
}

/// The lookup's note (a robot file of the same name left out), as a warning.
fn say_lookup_note(note: Option<String>) {
    if let Some(note) = note {
        eprintln!("warning: {note}");
    }
}

/// The robot to work on (`--robot`, `--payload`: core's run options).
pub type RobotArg = RunArgs<RobotOnly>;

impl<S: Selection> RunArgs<S> {
    /// The robot asked for, with its payload.
    pub fn load(&self) -> Result<Robot> {
        load_robot(&self.request)
    }

    /// Loads a robot for a command that only makes sense for cable robots.
    pub fn load_cable_robot(&self, command: &str) -> Result<Robot> {
        let robot = self.load()?;
        if !robot.is_cable_robot() {
            bail!(
                "`cdpr {command}` is for cable-driven robots; {} is a {} (its inverse kinematics: `cdpr ik`)",
                robot.name,
                robot.mechanism.kind()
            );
        }
        Ok(robot)
    }
}

/// Angle unit switch.
#[derive(Args, Debug, Clone, Copy)]
pub struct AngleArg {
    /// Read and print angles in degrees instead of radians.
    #[arg(long)]
    pub degrees: bool,
}

impl AngleArg {
    /// The unit angles are read and printed in.
    pub fn unit(&self) -> AngleUnit {
        if self.degrees {
            AngleUnit::Deg
        } else {
            AngleUnit::Rad
        }
    }
    /// A pose from 3 or 6 numbers given on the command line: every pose a command reads goes
    /// through here. Angles beyond a turn in radians get a hint (once per run).
    pub fn pose(&self, values: &[f64]) -> Pose {
        static HINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !self.degrees
            && let Some(hint) = cdpr_core::kinematics::radians_beyond_a_turn(values, "--degrees")
            && !HINTED.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            eprintln!("warning: {hint}");
        }
        self.unit().pose_from(values)
    }

    /// [`AngleArg::pose`] for `robot`, refused when it lies far outside the robot's frame (a
    /// pose in millimetres: `Robot::far_away`); `option` names it in the message.
    pub fn pose_on(&self, robot: &Robot, values: &[f64], option: &str) -> Result<Pose> {
        let pose = self.pose(values);
        if let Some(far) = robot.far_away(&pose.position) {
            let given: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            bail!("{option} {} is {far}", given.join(","));
        }
        Ok(pose)
    }
}

/// Prints the warnings of a report on stderr.
pub fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

/// A surrogate parameter file, with a warning when it was fitted on another robot than
/// `robot` (None: not known here).
pub fn load_params(path: &Path, robot: Option<&str>) -> Result<SurrogateParams> {
    let params = SurrogateParams::read(path).context("reading the surrogate parameters")?;
    if let Some(robot) = robot
        && params.robot != robot
    {
        eprintln!(
            "warning: {} was fitted on robot `{}`, used here on `{robot}`",
            path.display(),
            params.robot,
        );
    }
    Ok(params)
}

/// `check`'s first line: the robot's name, OK, and its description when it has one.
pub fn print_ok(robot: &cdpr_core::robot::Robot) {
    match robot.description.trim() {
        "" => println!("{}: OK", robot.name),
        description => println!("{}: OK — {description}", robot.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pose_list_names_the_bad_item() {
        assert_eq!(pose_list("0,0.1,2").unwrap().0, vec![0.0, 0.1, 2.0]);
        assert!(pose_list("0,x,2").unwrap_err().contains("item 2 `x`"));
        assert!(pose_list("0,1").unwrap_err().contains("got 2"));
        assert!(pose_list("0,1,nan").unwrap_err().contains("not a finite"));
        // Out-of-range poses are refused with the coordinate and its range.
        let e = pose_list("1e300,0,1").unwrap_err();
        assert!(
            e.contains("x must be between -1000 and 1000 m, got 1e300"),
            "{e}"
        );
        let e = pose_list("0,0,1,0,0,-1e9").unwrap_err();
        assert!(e.contains("yaw must be between -360 and 360"), "{e}");
        assert!(pose_list("-999,0,1,0,0,359").is_ok());
    }
}
