//! `workspace`: the wrench-feasible workspace of a cable robot.

use super::args::{Numbers, RobotArg, number_list};
use super::output::json;
use anyhow::{Context, Result, bail};
use cdpr_core::robot::{Aabb, Mechanism, Robot, TensionBounds};
use cdpr_core::workspace::{
    self, Grid, OrientationRange, Plane, check_box, feasible_set, min_tension_reach, plot,
};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nalgebra::Vector3;
use serde_json::json;
use std::io::IsTerminal;
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
slice through its centre, coloured by the largest reachable minimum tension.\n\n\
Examples:\n  \
cdpr workspace --robot uvigo8\n  \
cdpr workspace --robot uvigo8 --grid 40 --orientation 10 --plot out/uvigo8-ws.png\n  \
cdpr workspace --robot silva4 --json\n\n\
Robots with legs: for a linear delta (keops) the check is seed 002's: a point cloud every --step \
in the required cylinder through the inverse kinematics and its constraints (reach, stroke, \
spherical-joint opening, arm clearance), which constraint fails where, and a plot; for the \
2-RSSU its reach in roll and pitch (seed 004's Table 1 and the coupled boundary)."
)]
pub struct WorkspaceArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Cells per axis of the volume grid (N³ QPs).
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub grid: usize,
    /// Region to grid: xmin,ymin,zmin,xmax,ymax,zmax in m (default: the robot's frame box).
    #[arg(long, value_parser = number_list, value_name = "BOX")]
    pub region: Option<Numbers>,
    /// Orientation range required at each point: ±θ in degrees on roll, pitch and yaw.
    #[arg(long, value_name = "DEG")]
    pub orientation: Option<f64>,
    /// Samples per angle of the orientation range (3: −θ, 0, θ).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub levels: usize,
    /// Lower tension bound for feasibility, N (default: the robot file's).
    #[arg(long, value_name = "N")]
    pub f_min: Option<f64>,
    /// Upper tension bound, N (default: the robot file's).
    #[arg(long, value_name = "N")]
    pub f_max: Option<f64>,
    /// Minimum tension whose reachability is reported, N.
    #[arg(long, default_value_t = 5.0, value_name = "N")]
    pub min_tension: f64,
    /// Plot file (`.png`; an `.svg` is written next to it) or a directory
    /// (default: ./workspace-<robot>.png).
    #[arg(long, value_name = "PNG|DIR")]
    pub plot: Option<PathBuf>,
    /// Do not draw the plot.
    #[arg(long)]
    pub no_plot: bool,
    /// Linear delta: spacing of seed 002's point cloud in the required cylinder, m.
    #[arg(long, default_value_t = 0.01, value_name = "M")]
    pub step: f64,
    /// Print one JSON object instead of a report.
    #[arg(long)]
    pub json: bool,
}

fn bar(label: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(1000);
    if let Ok(style) =
        ProgressStyle::with_template(&format!("{label} [{{bar:40}}] {{percent}}% (eta {{eta}})"))
    {
        bar.set_style(style.progress_chars("=> "));
    }
    Some(bar)
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
            let plot = (!a.no_plot).then(|| match &a.plot {
                Some(p) if p.is_dir() => p.join(format!("workspace-{}.png", robot.name)),
                Some(p) => p.clone(),
                None => PathBuf::from(format!("workspace-{}.png", robot.name)),
            });
            return super::legs::workspace(&robot, a.step, plot.as_deref(), a.json);
        }
        Mechanism::Rssu2(_) => return super::legs::rssu2_reach(&robot, a.json),
    }
    if !(2..=400).contains(&a.grid) {
        bail!(
            "--grid must be between 2 and 400 cells per axis, got {}",
            a.grid
        );
    }
    let region = match &a.region {
        None => workspace::default_region(&robot),
        Some(v) if v.len() == 6 => {
            let (min, max) = (
                Vector3::new(v[0], v[1], v[2]),
                Vector3::new(v[3], v[4], v[5]),
            );
            if (0..3).any(|k| min[k] >= max[k]) {
                bail!("--region: each min must be below its max, got {:?}", v.0);
            }
            Aabb { min, max }
        }
        Some(v) => bail!(
            "--region needs 6 numbers (xmin,ymin,zmin,xmax,ymax,zmax), got {}",
            v.len()
        ),
    };
    let bounds = TensionBounds {
        min: a.f_min.unwrap_or(robot.tension.min),
        max: a.f_max.unwrap_or(robot.tension.max),
    };
    if !(bounds.min.is_finite()
        && bounds.max.is_finite()
        && 0.0 <= bounds.min
        && bounds.min < bounds.max)
    {
        bail!(
            "tension bounds must satisfy 0 ≤ f_min < f_max, got {} … {} N",
            bounds.min,
            bounds.max
        );
    }
    if let Some(deg) = a.orientation
        && !(deg.is_finite() && (0.0..90.0).contains(&deg))
    {
        bail!("--orientation must be an angle in [0, 90) degrees, got {deg}");
    }
    let range = a.orientation.map(|deg| OrientationRange {
        max_angle: deg.to_radians(),
        levels: a.levels.max(2),
    });
    let orientations = OrientationRange::samples(range.as_ref(), robot.dof);
    let started = std::time::Instant::now();

    let grid = Grid::cubic(region, a.grid);
    let progress = bar(&format!("{} QPs", grid.len() * orientations.len()));
    let tick = |f: f64| {
        if let Some(b) = &progress {
            b.set_position((f * 1000.0) as u64);
        }
    };
    let set = feasible_set(&robot, &grid, bounds, &orientations, &tick);
    if let Some(b) = progress {
        b.finish_and_clear();
    }
    let volume = set.volume();
    let faces = set.touched_faces();
    let ws = robot.workspace;
    let box_check = check_box(&robot, &ws, bounds, &orientations, 5);
    let reach = min_tension_reach(
        &robot,
        &ws,
        [region.min.z, region.max.z],
        a.min_tension,
        bounds.max,
        5,
        0.005,
    );

    let mut plot_files = Vec::new();
    if !a.no_plot {
        let (dir, stem) = plot_target(&a, &robot);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let c = ws.center();
        let n_u = (2 * a.grid).clamp(24, 120);
        let planes = [
            Plane::Xy(ws.min.z),
            Plane::Xy(c.z),
            Plane::Xy(ws.max.z),
            Plane::Xz(c.y),
        ];
        let slices: Vec<_> = planes
            .iter()
            .map(|&plane| workspace::slice(&robot, &region, plane, n_u, bounds, &orientations))
            .collect();
        let top = slices
            .iter()
            .flat_map(|s| s.capacity.iter().flatten())
            .fold(bounds.min, |m, &c| m.max(c));
        let title = format!(
            "{}: wrench-feasible workspace ({} … {} N{})",
            robot.name,
            bounds.min,
            bounds.max,
            a.orientation
                .map(|d| format!(", ±{d}°"))
                .unwrap_or_default()
        );
        let spec = plot::PlotSpec {
            title: &title,
            f_min: bounds.min,
            f_top: top,
            workspace: Some(ws),
        };
        plot_files = plot::write_slices(&dir, &stem, &slices, &spec)?;
    }
    let wall_s = started.elapsed().as_secs_f64();

    if a.json {
        json(&json!({
            "robot": robot.name,
            "region": region,
            "grid": a.grid,
            "bounds": { "min": bounds.min, "max": bounds.max },
            "orientation_deg": a.orientation,
            "orientations": orientations.len(),
            "volume": volume,
            "touched_faces": faces,
            "workspace_box": box_check,
            "min_tension": reach,
            "plot": plot_files,
            "wall_s": wall_s,
        }))?;
    } else {
        println!(
            "{}: tensions {} … {} N, {} grid {}³ over [{:.3}, {:.3}, {:.3}] … [{:.3}, {:.3}, {:.3}] m",
            robot.name,
            bounds.min,
            bounds.max,
            a.orientation
                .map(|d| format!(
                    "all orientations within ±{d}° ({} samples),",
                    orientations.len()
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
            volume.volume,
            volume.error,
            volume.cells_feasible,
            volume.cells_total,
            volume.cell_volume * 1e3
        );
        let open: Vec<_> = faces.iter().filter(|f| **f != "z_min").collect();
        if !open.is_empty() {
            println!(
                "  feasible cells touch the region's faces {open:?}: the workspace may extend beyond it"
            );
        }
        println!(
            "[workspace] box [{:.3}, {:.3}, {:.3}] … [{:.3}, {:.3}, {:.3}] m: {} ({} of {} points infeasible; weakest point {:?} with largest minimum tension {})",
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
            box_check.weakest_point,
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
        for f in &plot_files {
            println!("wrote {}", f.display());
        }
        println!("({wall_s:.1} s)");
    }
    Ok(if box_check.contained {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
