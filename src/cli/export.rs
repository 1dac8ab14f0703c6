//! `export`: the robot as a model for another simulator (MuJoCo's MJCF), to cross-check ours.

use super::args::{RobotArg, naming};
use super::options::RequestArgs;
use anyhow::{Context, Result};
use cdpr_core::export::{self, MjcfOptions};
use clap::Args;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    after_help = "The MJCF document: the frame anchors as world sites, the platform as a \
body on a free joint at the robot's home pose with the file's mass, centre of mass and inertia, and \
each cable as a spatial tendon (frame site → platform site) with the file's stiffness and damping and \
a one-sided spring (springlength=\"0 L0\": no force while the cable is shorter than its rest length). \
The rest lengths are the pre-tensioned ones of `cdpr equilibrium --pretensioned-at HOME`, so the \
model hangs at home; comments in the file say where each number comes from. Robots with rigid legs \
(keops, rssu2) have no cables and are refused.\n\n\
Example: cdpr export --robot uvigo8 --mjcf uvigo8.xml\n\
Open it: python -m mujoco.viewer --mjcf=uvigo8.xml  (pip install mujoco)"
)]
pub struct ExportArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Write the robot as a MuJoCo MJCF document to this file (`-`: standard output).
    #[arg(long, value_name = "XML")]
    pub mjcf: PathBuf,
    /// The model's settings (core's export request).
    #[command(flatten)]
    pub options: RequestArgs<MjcfOptions>,
}

pub fn run(a: ExportArgs) -> Result<ExitCode> {
    let robot = a.robot.load()?;
    let options = a.options.request;
    let doc = export::mjcf(&robot, &options).map_err(|e| {
        naming(
            e,
            "exporting robot",
            a.robot.request.robot.as_deref().unwrap_or(&robot.name),
        )
    })?;
    if a.mjcf.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(doc.as_bytes())
            .and_then(|()| out.flush())
            .context("writing the MJCF document to standard output")?;
        return Ok(ExitCode::SUCCESS);
    }
    let path = &a.mjcf;
    std::fs::write(path, &doc).with_context(|| format!("writing {}", path.display()))?;
    println!(
        "wrote {}: {} as a MuJoCo model, {} cables as spatial tendons, timestep {} s, {}",
        path.display(),
        robot.name,
        robot.cable_count(),
        options.dt,
        options.integrator.mjcf_name()
    );
    println!("open it: python -m mujoco.viewer --mjcf={}", path.display());
    Ok(ExitCode::SUCCESS)
}
