//! Argument types shared by the subcommands: robots, poses, number lists.

use anyhow::{Context, Result, bail};
use cdpr_core::kinematics::{AngleUnit, Pose};
use cdpr_core::robot::Robot;
use clap::Args;

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

/// Parses "x,y,z" or "x,y,z,roll,pitch,yaw".
pub fn pose_list(text: &str) -> Result<Numbers, String> {
    let values = number_vec(text)?;
    if values.len() != 3 && values.len() != 6 {
        return Err(format!(
            "expected 3 (x,y,z) or 6 (x,y,z,roll,pitch,yaw) comma-separated numbers, got {}",
            values.len()
        ));
    }
    Ok(Numbers(values))
}

/// The robot to work on.
#[derive(Args, Debug, Clone)]
pub struct RobotArg {
    /// Robot file (TOML), or the name of a shipped robot: uvigo8, silva4, caroca.
    #[arg(long, short = 'r', value_name = "ROBOT")]
    pub robot: String,
    /// Total moving mass in kg, replacing the file's (inertia scales with it); e.g. caroca's
    /// 1 kg and 15 kg cases of seed 001.
    #[arg(long, value_name = "KG")]
    pub payload: Option<f64>,
}

impl RobotArg {
    pub fn load(&self) -> Result<Robot> {
        let robot =
            Robot::load(&self.robot).with_context(|| format!("loading robot `{}`", self.robot))?;
        self.with_payload(robot)
    }

    /// Loads a robot for a command that only makes sense for cable robots.
    pub fn load_cable_robot(&self, command: &str) -> Result<Robot> {
        let robot = self.load()?;
        if !robot.is_cable_robot() {
            bail!(
                "`cdpr {command}` is for cable-driven robots; {} is a {} (its inverse kinematics: `cdpr ik`)",
                robot.name,
                kind_name(&robot)
            );
        }
        Ok(robot)
    }

    fn with_payload(&self, robot: Robot) -> Result<Robot> {
        match self.payload {
            None => Ok(robot),
            Some(m) if m.is_finite() && m > 0.0 => Ok(robot.with_mass(m)),
            Some(m) => bail!("--payload must be a positive mass in kg, got {m}"),
        }
    }
}

/// The robot file's `kind`.
pub fn kind_name(robot: &Robot) -> &'static str {
    match robot.mechanism {
        cdpr_core::robot::Mechanism::Cables => "cdpr",
        cdpr_core::robot::Mechanism::LinearDelta { .. } => "linear_delta",
        cdpr_core::robot::Mechanism::Rssu2(_) => "rssu2",
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
    /// A pose from 3 or 6 numbers given on the command line.
    pub fn pose(&self, values: &[f64]) -> Pose {
        let mut a = [0.0; 6];
        a[..values.len()].copy_from_slice(values);
        let unit = self.unit();
        Pose::new(
            a[0],
            a[1],
            a[2],
            unit.to_rad(a[3]),
            unit.to_rad(a[4]),
            unit.to_rad(a[5]),
        )
    }
}

/// Prints the warnings of a report on stderr.
pub fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
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
    }
}
