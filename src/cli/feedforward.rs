//! `feedforward`: per drive the torque a trajectory needs, to feed forward in the controller
//! (seed 000's next step: a dynamic model in the controller supported by the shadow).

use super::options::{Preflight, RequestArgs, RunArgs};
use anyhow::{Context, Result};
use cdpr_core::run::digest::drive_table;
use cdpr_core::run::feedforward::{self, FeedforwardRequest};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    after_help = "Per drive, at every sample of the trajectory: the platform's \
Newton–Euler equations with the tension distribution give the cable tensions, the pulleys' \
capstan friction the winch-side tensions T_w, and each drive's motor equation the torque\n  \
τ = J·s̈/ρ + b·ṡ/ρ + τ_c·tanh(ṡ/(ρ·ω₀)) − ρ·T_w\n\
with s the commanded payout (compensated as `cdpr simulate --compensate` commands it), ρ the \
payout per motor radian. Negative torques haul in (θ grows as the cable pays out). The robot \
file must describe its drives ([winch] drum_radius, gear_ratio, rotor_inertia, torque_limit, \
rated_torque).\n\n\
Output (--out FILE.csv): t, then per drive torque_i (N·m), payout_i (m), payout_rate_i (m/s), \
payout_acceleration_i (m/s²), winch_tension_i (N).\n\n\
Examples:\n  \
cdpr feedforward --robot uvigo8-drives --trajectory seed000 --speed 0.1 --out ff.csv\n  \
cdpr simulate --robot uvigo8-drives --trajectory seed000 --speed 0.1 --control torque"
)]
pub struct FeedforwardArgs {
    /// Robot, payload, trajectory and its shape (as `cdpr simulate` takes them).
    #[command(flatten)]
    pub run: RunArgs<Preflight>,
    /// How the payouts are differentiated and compensated.
    #[command(flatten)]
    pub feedforward: RequestArgs<FeedforwardRequest>,
    /// Write the feed-forward as CSV (columns in the help's Output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(a: FeedforwardArgs) -> Result<ExitCode> {
    let robot = a.run.load_cable_robot("feedforward")?;
    let traj = a.run.request.load_trajectory(&robot)?;
    let table = feedforward::table(&robot, &traj, &a.feedforward.request)?;
    println!(
        "torque feed-forward of {} on {}: {:.3} s, {} samples",
        a.run.request.trajectory.as_deref().unwrap_or(""),
        robot.name,
        traj.duration(),
        table.t.len()
    );
    for line in drive_table(&table.loads) {
        println!("{line}");
    }
    if let Some(path) = &a.out {
        let file = std::fs::File::create(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        table
            .write_csv(std::io::BufWriter::new(file))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
