//! `workspace`: the wrench-feasible workspace of a cable robot.

use super::args::RobotArg;
use super::options::RequestArgs;
use super::output::{json, progress_bar};
use anyhow::Result;
use cdpr_core::interference::Kind;
use cdpr_core::robot::{Mechanism, Robot};
use cdpr_core::workspace::survey::{
    WorkspaceReport, WorkspaceRequest, plot_target, workspace_report,
};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    after_help = "A position is feasible when tensions within [f_min, f_max] hold the platform \
against gravity (exact QP) at zero rotation and, with --orientation, at every combination of \
roll, pitch, yaw in {−θ, 0, θ} (or --levels values). The volume counts feasible cells of an N³ grid \
over the frame box (± half the boundary band as resolution error). The robot's [workspace] box \
is checked on 5³ points including its corners; exit status 2 when it is not contained.\n\
The minimum-tension report (--min-tension, default 5 N, the project's choice of a taut cable) gives the \
height on the box's vertical axis from which that tension is reachable, and the height above \
which it holds everywhere in the box.\n\
The plot (PNG + SVG) shows horizontal slices at the box's bottom, middle and top and a vertical \
slice through its centre, coloured by the largest reachable minimum tension.\n\
With --interference, positions where a cable comes closer than --clearance to another cable or an \
obstacle, cuts through the platform, or the platform comes that close to an obstacle or the frame \
(at any of the orientations) are removed from the workspace and drawn in magenta; the JSON's \
`interference` counts the cells by kind.\n\n\
Examples:\n  \
cdpr workspace --robot uvigo8\n  \
cdpr workspace --robot uvigo8 --grid 40 --orientation 10 --plot out/uvigo8-ws.png\n  \
cdpr workspace --robot silva4 --json\n  \
cdpr workspace --robot silva4-obstacle --interference --clearance 0.02\n\n\
Robots with legs: for a linear delta (keops) the check is seed 002's: a point cloud every --step \
in the required cylinder through the inverse kinematics and its constraints (reach, stroke, \
spherical-joint opening, arm clearance), which constraint fails where, and a plot; for the \
2-RSSU its reach in roll and pitch (seed 004's Table 1 and the coupled boundary)."
)]
pub struct WorkspaceArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// What to compute (core's workspace request: grid, region, orientations, tensions,
    /// interference).
    #[command(flatten)]
    pub ws: RequestArgs<WorkspaceRequest>,
    /// Plot file (`.png`; an `.svg` is written next to it) or a directory
    /// (default: ./workspace-<robot>.png).
    #[arg(long, value_name = "PNG|DIR")]
    pub plot: Option<PathBuf>,
    /// Do not draw the plot.
    #[arg(long)]
    pub no_plot: bool,
    /// Print one JSON object instead of a report.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: WorkspaceArgs) -> Result<ExitCode> {
    let robot = a.robot.load()?;
    match &robot.mechanism {
        Mechanism::Cables => {}
        Mechanism::LinearDelta { .. } => {
            let plot = (!a.no_plot)
                .then(|| cdpr_core::workspace::legs::plot_path(&robot, a.plot.as_deref()));
            return super::legs::workspace(&robot, a.ws.request.step, plot.as_deref(), a.json);
        }
        Mechanism::Rssu2(_) => return super::legs::rssu2_reach(&robot, a.json),
    }
    let request = &a.ws.request;
    let plot = (!a.no_plot).then(|| plot_target(a.plot.as_deref(), &robot.name));
    // One bar over the whole job: the volume, the box and tension checks, the plotted slices.
    let progress = progress_bar(&format!(
        "workspace: {}³ cells{}",
        request.grid,
        if a.no_plot {
            ""
        } else {
            " and 4 plotted slices"
        }
    ));
    let tick = |f: f64| {
        if let Some(b) = &progress {
            b.set_position((f * 1000.0) as u64);
        }
    };
    let r = workspace_report(&robot, request, plot.as_ref(), &tick)?;
    if let Some(b) = progress {
        b.finish_and_clear();
    }
    if a.json {
        json(&r)?;
    } else {
        print_report(&robot, request, &r);
    }
    Ok(if r.workspace_box.contained {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The analysis as text: the volume, what interference removed, the box check and the
/// minimum-tension heights, the plot files.
fn print_report(robot: &Robot, request: &WorkspaceRequest, r: &WorkspaceReport) {
    let (region, bounds, ws) = (r.region, r.bounds, robot.workspace);
    let (box_check, reach) = (&r.workspace_box, &r.min_tension);
    println!(
        "{}: tensions {} … {} N, {} grid {}³ over [{:.3}, {:.3}, {:.3}] … [{:.3}, {:.3}, {:.3}] m",
        robot.name,
        bounds.min,
        bounds.max,
        request
            .orientation
            .map(|d| format!(
                "all orientations within ±{d}° ({} samples),",
                r.orientations
            ))
            .unwrap_or_else(|| "zero rotation,".into()),
        request.grid,
        region.min.x,
        region.min.y,
        region.min.z,
        region.max.x,
        region.max.y,
        region.max.z
    );
    println!(
        "volume {:.4} ± {:.4} m³ ({} of {} cells feasible, cell {:.3} l)",
        r.volume.volume,
        r.volume.error,
        r.volume.cells_feasible,
        r.volume.cells_total,
        r.volume.cell_volume * 1e3
    );
    if let Some(i) = &r.interference {
        let kinds: Vec<String> = Kind::ALL
            .iter()
            .filter(|&&k| i.cells_by_kind.get(k) > 0)
            .map(|&k| format!("{} {}", k.name(), i.cells_by_kind.get(k)))
            .collect();
        println!(
            "interference at clearance {} mm: {} cells ({}), {} of them feasible and removed (volume before {:.4} m³)",
            cdpr_core::text::short(i.clearance * 1e3),
            i.cells_colliding,
            if kinds.is_empty() {
                "none".to_string()
            } else {
                kinds.join(", ")
            },
            i.cells_removed,
            i.volume_before
        );
    }
    let open: Vec<_> = r.touched_faces.iter().filter(|f| **f != "z_min").collect();
    if !open.is_empty() {
        println!(
            "  feasible cells touch the region's faces {}: the workspace may extend beyond it",
            open.iter()
                .map(|f| f.as_ref())
                .collect::<Vec<&str>>()
                .join(", ")
        );
    }
    println!(
        "[workspace] box [{:.3}, {:.3}, {:.3}] … [{:.3}, {:.3}, {:.3}] m: {} ({} of {} points infeasible; weakest point [{}] m with largest minimum tension {})",
        ws.min.x,
        ws.min.y,
        ws.min.z,
        ws.max.x,
        ws.max.y,
        ws.max.z,
        if box_check.contained {
            "contained"
        } else {
            "NOT contained"
        },
        box_check.infeasible_points,
        box_check.points,
        box_check
            .weakest_point
            .iter()
            .map(|c| format!("{c:.3}"))
            .collect::<Vec<_>>()
            .join(", "),
        box_check
            .weakest_capacity
            .map(|c| format!("{c:.2} N"))
            .unwrap_or("none".into())
    );
    let axis = reach
        .axis_intervals
        .iter()
        .map(|i| format!("{:.4} … {:.4} m", i.from_z, i.to_z))
        .collect::<Vec<_>>();
    println!(
        "{} N minimum tension (zero rotation): on the vertical axis x = {:.3}, y = {:.3} reachable for z in {}",
        request.min_tension,
        reach.axis_xy[0],
        reach.axis_xy[1],
        if axis.is_empty() {
            "nowhere".into()
        } else {
            axis.join(", ")
        }
    );
    match reach.everywhere_above_z {
        Some(z) if z <= ws.min.z + 1e-9 => println!("  it holds everywhere in the box"),
        Some(z) => println!(
            "  in the box it holds everywhere above z = {z:.4} m and stops being reachable below (lowest line: z = {:.4} m); at the box's bottom centre the largest minimum tension is {}",
            reach.lowest_from_z.unwrap_or(z),
            reach
                .capacity_at_box_bottom_center
                .map(|c| format!("{c:.2} N"))
                .unwrap_or("none".into())
        ),
        None => println!("  it is not reachable everywhere even at the box's top"),
    }
    for f in &r.plot {
        println!("wrote {}", f.display());
    }
    println!("({:.1} s)", r.wall_s);
}
