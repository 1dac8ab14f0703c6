//! `workspace`: the wrench-feasible workspace of a cable robot.

use super::args::{Numbers, RobotArg, number_list};
use super::options::{help_of, number_of, whole_of};
use super::output::{json, progress_bar};
use anyhow::{Result, bail};
use cdpr_core::interference::{CLEARANCE, Kind};
use cdpr_core::robot::{Aabb, Mechanism, Robot};
use cdpr_core::workspace::legs::STEP;
use cdpr_core::workspace::survey::{
    GRID, LEVELS, MIN_TENSION, ORIENTATION, WorkspaceRequest, workspace_report,
};
use clap::Args;
use nalgebra::Vector3;
use std::path::{Path, PathBuf};
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
    #[arg(long, default_value_t = GRID.default_whole(), hide_default_value = true, value_name = "N", value_parser = whole_of(&GRID), help = help_of(&GRID))]
    pub grid: usize,
    /// Region to grid: xmin,ymin,zmin,xmax,ymax,zmax in m (default: the robot's frame box).
    #[arg(long, value_parser = number_list, value_name = "BOX")]
    pub region: Option<Numbers>,
    #[arg(long, value_name = "DEG", value_parser = number_of(&ORIENTATION), allow_hyphen_values = true,
          help = help_of(&ORIENTATION))]
    pub orientation: Option<f64>,
    #[arg(long, default_value_t = LEVELS.default_whole(), hide_default_value = true, value_name = "N", value_parser = whole_of(&LEVELS), help = help_of(&LEVELS))]
    pub levels: usize,
    #[command(flatten)]
    pub bounds: super::kin::BoundsArg,
    #[arg(long, default_value_t = MIN_TENSION.default_number(), hide_default_value = true, value_name = "N", value_parser = number_of(&MIN_TENSION),
          allow_hyphen_values = true, help = help_of(&MIN_TENSION))]
    pub min_tension: f64,
    /// Plot file (`.png`; an `.svg` is written next to it) or a directory
    /// (default: ./workspace-<robot>.png).
    #[arg(long, value_name = "PNG|DIR")]
    pub plot: Option<PathBuf>,
    /// Do not draw the plot.
    #[arg(long)]
    pub no_plot: bool,
    #[arg(long, default_value_t = STEP.default_number(), hide_default_value = true, value_name = "M", value_parser = number_of(&STEP),
          allow_hyphen_values = true, help = help_of(&STEP))]
    pub step: f64,
    /// Remove the positions where something interferes (cables, platform, frame, the robot's
    /// [[obstacles]]) from the workspace and mark them in the plot.
    #[arg(long)]
    pub interference: bool,
    #[arg(long, default_value_t = CLEARANCE.default_number(), hide_default_value = true, value_name = "M", value_parser = number_of(&CLEARANCE),
          help = help_of(&CLEARANCE))]
    pub clearance: f64,
    /// Print one JSON object instead of a report.
    #[arg(long)]
    pub json: bool,
}

fn plot_target(a: &WorkspaceArgs, robot: &Robot) -> (PathBuf, String) {
    let default_stem = format!("workspace-{}", robot.name);
    match &a.plot {
        None => (PathBuf::from("."), default_stem),
        Some(p) if p.is_dir() || p.extension().is_none() => (p.clone(), default_stem),
        Some(p) => {
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or(default_stem);
            (dir.to_path_buf(), stem)
        }
    }
}

pub fn run(a: WorkspaceArgs) -> Result<ExitCode> {
    let robot = a.robot.load()?;
    match &robot.mechanism {
        Mechanism::Cables => {}
        Mechanism::LinearDelta { .. } => {
            let plot = (!a.no_plot)
                .then(|| cdpr_core::workspace::legs::plot_path(&robot, a.plot.as_deref()));
            return super::legs::workspace(&robot, a.step, plot.as_deref(), a.json);
        }
        Mechanism::Rssu2(_) => return super::legs::rssu2_reach(&robot, a.json),
    }
    let region = match &a.region {
        None => None,
        Some(v) if v.len() == 6 => Some(Aabb {
            min: Vector3::new(v[0], v[1], v[2]),
            max: Vector3::new(v[3], v[4], v[5]),
        }),
        Some(v) => bail!(
            "--region needs 6 numbers (xmin,ymin,zmin,xmax,ymax,zmax), got {}",
            v.len()
        ),
    };
    let request = WorkspaceRequest {
        region,
        grid: a.grid,
        f_min: a.bounds.f_min,
        f_max: a.bounds.f_max,
        orientation_deg: a.orientation,
        levels: a.levels,
        min_tension: a.min_tension,
        plot: (!a.no_plot).then(|| plot_target(&a, &robot)),
        interference: a.interference.then_some(a.clearance),
    };
    // One bar over the whole job: the volume, the box and tension checks, the plotted slices.
    let progress = progress_bar(&format!(
        "workspace: {}³ cells{}",
        a.grid,
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
    let r = workspace_report(&robot, &request, &tick)?;
    if let Some(b) = progress {
        b.finish_and_clear();
    }
    let (region, bounds, ws) = (r.region, r.bounds, robot.workspace);
    let (box_check, reach) = (&r.workspace_box, &r.min_tension);
    if a.json {
        json(&r)?;
    } else {
        println!(
            "{}: tensions {} … {} N, {} grid {}³ over [{:.3}, {:.3}, {:.3}] … [{:.3}, {:.3}, {:.3}] m",
            robot.name,
            bounds.min,
            bounds.max,
            a.orientation
                .map(|d| format!(
                    "all orientations within ±{d}° ({} samples),",
                    r.orientations
                ))
                .unwrap_or_else(|| "zero rotation,".into()),
            a.grid,
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
            a.min_tension,
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
    Ok(if box_check.contained {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
