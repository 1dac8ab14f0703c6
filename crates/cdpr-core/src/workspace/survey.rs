//! `cdpr workspace` for a cable robot as a library call: the wrench-feasible volume over a
//! grid, the `[workspace]` box's containment, where a minimum tension is reachable, and the
//! plot of slices; summarised in a serialisable [`WorkspaceReport`] (the command's `--json`).

use super::plot::{self, PlotError};
use super::{
    BoxCheck, Grid, MinTensionReach, OrientationRange, Plane, VolumeEstimate, check_box,
    default_region, feasible_set, interference_at, mark_interference, min_tension_reach,
    parallel_map, slice_cells, slice_with_progress,
};
use crate::interference::Counts;
use crate::interference::{CLEARANCE, DEFAULT_CLEARANCE};
use crate::options::{Group, Kind, Name, OptionSpec, flag, number, whole};
use crate::robot::{Aabb, Robot, TensionBounds};
use crate::statics::solutions::{F_MAX, F_MIN};
use crate::statics::{StaticsError, tension_bounds};
use crate::workspace::legs::STEP;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Largest |coordinate| of a region, m (cable robots span metres to hundreds of metres).
pub const REGION_LIMIT_M: f64 = 1e4;

/// Largest number of pose checks (QPs, a plot cell counted as 21 for its LP) one request may
/// ask for: about half a minute on two free cores at 1.5–4 µs a QP (measured on the shared
/// machine under load: 7–16 µs). The guide's `--grid 40 --orientation 10` example is 1.1e7.
pub const MAX_POSE_CHECKS: f64 = 2e7;

crate::request! {
    /// What `cdpr workspace` (and Python's `Robot.workspace`) computes. `None` fields take
    /// the robot file's values.
    #[derive(Debug, Clone, PartialEq)]
    pub struct WorkspaceRequest, table OPTIONS;
    /// Cells per axis of the volume grid.
    grid: usize = 30,
        whole(Group::Command, 2, 400, "cells per axis of the volume grid (N³ QPs)");
    /// Region to grid, xmin,ymin,zmin,xmax,ymax,zmax in m (None: the robot's frame box).
    region: Option<Vec<f64>> = None,
        OptionSpec::new(Group::Command, Kind::Numbers { unit: "m", count: 6, limit: REGION_LIMIT_M },
            "BOX", "region to grid: xmin,ymin,zmin,xmax,ymax,zmax")
            .default_text("the robot's frame box");
    /// ±θ in degrees required on roll, pitch and yaw at each point.
    orientation: Option<f64> = None,
        number(Group::Command, "degrees", 0.0, 89.0, "DEG",
            "orientation range required at each point: ±θ on roll, pitch and yaw")
            .default_text("none: zero rotation");
    /// Samples per angle of the orientation range.
    levels: usize = 3,
        whole(Group::Command, 2, 21, "samples per angle of the orientation range (3: −θ, 0, θ)");
    /// A minimum tension replacing the robot file's, N.
    f_min: Option<f64> = None, F_MIN;
    /// A maximum tension replacing the robot file's, N.
    f_max: Option<f64> = None, F_MAX;
    /// The minimum tension whose reachability is reported, N.
    min_tension: f64 = 5.0,
        number(Group::Command, "N", 0.0, 1e6, "N", "minimum tension whose reachability is reported");
    /// A linear delta's point-cloud spacing, m.
    step: f64 = STEP.default_number(), STEP;
    /// Remove the cells where something interferes ([`crate::interference`]).
    interference: bool = false,
        flag(Group::Command, "remove the positions where something interferes (cables, \
            platform, frame, the robot's [[obstacles]]) from the workspace and mark them in the plot");
    /// The clearance of the interference check, m.
    clearance: f64 = DEFAULT_CLEARANCE, CLEARANCE;
}

impl WorkspaceRequest {
    /// The region asked for, as a box (None: the robot's frame box).
    /// None also for a region of another count than 6 (refused by [`workspace_report`]).
    pub fn region_box(&self) -> Option<Aabb> {
        match self.region.as_deref()? {
            &[x0, y0, z0, x1, y1, z1] => Some(Aabb {
                min: nalgebra::Vector3::new(x0, y0, z0),
                max: nalgebra::Vector3::new(x1, y1, z1),
            }),
            _ => None,
        }
    }

    /// The interference check's clearance, when it is asked for.
    pub fn interference_clearance(&self) -> Option<f64> {
        self.interference.then_some(self.clearance)
    }
}

/// Where a plot goes: directory and file stem, from a file (`dir/name.png`: its directory
/// and stem), a directory, or nothing (`./workspace-<robot>`).
pub fn plot_target(path: Option<&Path>, robot: &str) -> (PathBuf, String) {
    let default_stem = format!("workspace-{robot}");
    match path {
        None => (PathBuf::from("."), default_stem),
        Some(p) if p.is_dir() || p.extension().is_none() => (p.to_path_buf(), default_stem),
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

/// What `interference` removed from the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InterferenceSummary {
    /// m.
    pub clearance: f64,
    /// Grid cells where something interferes (at any of the orientations), feasible or not.
    pub cells_colliding: usize,
    /// Wrench-feasible cells removed from the workspace for it.
    pub cells_removed: usize,
    /// Grid cells where each kind of pair interferes (a cell counts once per kind).
    pub cells_by_kind: Counts,
    /// The wrench-feasible volume before the removal, m³ (`volume` is after it).
    pub volume_before: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("{name} must be between 2 and 400 cells per axis, got {0}", name = Name("grid"))]
    Grid(usize),
    #[error(
        "{}: each min must be at least 1 mm below its max, every coordinate within ±{REGION_LIMIT_M} m, got {min:?} … {max:?}",
        Name("region")
    )]
    Region { min: [f64; 3], max: [f64; 3] },
    #[error(
        "{name} needs 6 numbers (xmin,ymin,zmin,xmax,ymax,zmax), got {0}",
        name = Name("region")
    )]
    RegionCount(usize),
    #[error("{name} must be an angle in [0, 90) degrees, got {0}", name = Name("orientation"))]
    Orientation(f64),
    #[error("{name} must be at least 2 (−θ and θ), got {0}", name = Name("levels"))]
    Levels(usize),
    #[error(
        "{options}: {checks:.1e} pose checks ({cells} grid cells and {plot_cells} plot cells × {orientations} orientations); at most {MAX_POSE_CHECKS:.0e} — {hint}"
    )]
    Budget {
        options: String,
        checks: f64,
        cells: usize,
        plot_cells: usize,
        orientations: usize,
        hint: String,
    },
    #[error(transparent)]
    Bounds(#[from] StaticsError),
    #[error("creating {dir}")]
    PlotDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// Tension bounds as reported.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bounds {
    pub min: f64,
    pub max: f64,
}

/// The whole analysis.
#[derive(Debug, Clone, Serialize)]
pub struct WorkspaceReport {
    pub robot: String,
    pub region: Aabb,
    pub grid: usize,
    pub bounds: Bounds,
    pub orientation_deg: Option<f64>,
    /// Orientations tested at each point.
    pub orientations: usize,
    /// Wrench-feasible and, with `interference`, free of it.
    pub volume: VolumeEstimate,
    /// What the interference check removed (with `interference`).
    pub interference: Option<InterferenceSummary>,
    /// Faces of the region touched by feasible cells (the workspace may extend beyond them).
    pub touched_faces: Vec<&'static str>,
    pub workspace_box: BoxCheck,
    pub min_tension: MinTensionReach,
    pub plot: Vec<PathBuf>,
    pub wall_s: f64,
}

/// Runs the analysis; `progress` gets the fraction of the whole job done (volume, box check,
/// minimum-tension scans, slices and their drawing, weighted by their pose checks).
pub fn workspace_report(
    robot: &Robot,
    request: &WorkspaceRequest,
    plot: Option<&(PathBuf, String)>,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<WorkspaceReport, WorkspaceError> {
    let plan = Plan::of(robot, request, plot.is_some())?;
    let range = request.orientation.map(|deg| OrientationRange {
        max_angle: deg.to_radians(),
        levels: request.levels,
    });
    let orientations = OrientationRange::samples(range.as_ref(), robot.dof);
    let started = Instant::now();
    let grid = Grid::cubic(plan.region, request.grid);
    let stage = |done: f64, work: f64| plan.stage(progress, done, work);
    let (bounds, ws, w) = (plan.bounds, robot.workspace, &plan.work);
    let mut set = feasible_set(robot, &grid, bounds, &orientations, &stage(0.0, w.volume));
    let interference = request
        .interference_clearance()
        .map(|clearance| remove_interference(robot, &grid, &orientations, clearance, &mut set));
    let workspace_box = check_box(
        robot,
        &ws,
        bounds,
        &orientations,
        5,
        &stage(w.volume, w.box_check),
    );
    let min_tension = min_tension_reach(
        robot,
        &ws,
        [plan.region.min.z, plan.region.max.z],
        request.min_tension,
        bounds.max,
        5,
        0.005,
        &stage(w.volume + w.box_check, w.reach),
    );
    let plot_files = match plot {
        Some((dir, stem)) => draw(robot, request, &plan, &orientations, dir, stem, progress)?,
        None => Vec::new(),
    };
    progress(1.0);
    Ok(WorkspaceReport {
        robot: robot.name.clone(),
        region: plan.region,
        grid: request.grid,
        bounds: Bounds {
            min: bounds.min,
            max: bounds.max,
        },
        orientation_deg: request.orientation,
        orientations: orientations.len(),
        volume: set.volume(),
        interference,
        touched_faces: set.touched_faces(),
        workspace_box,
        min_tension,
        plot: plot_files,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// A request checked and sized before any work: its region and tension bounds, the slices it
/// plots, and each stage's share of the whole job.
struct Plan {
    region: Aabb,
    bounds: TensionBounds,
    /// Cells along a slice's first axis.
    n_u: usize,
    planes: [Plane; 4],
    work: Work,
}

/// Each stage's work, in pose checks (a capacity costs ~20 feasibility checks): the volume's
/// cells, the box's 5³ points, the minimum-tension scans (5² columns and the axis, every 5 mm,
/// then a bisection), the slices' cells, drawing.
struct Work {
    volume: f64,
    box_check: f64,
    reach: f64,
    total: f64,
}

/// A capacity's cost in feasibility checks (its LP is mostly proved from the last basis, see
/// `statics::largest_min_tension`).
const CAPACITY: f64 = 1.0;

/// The drawing's cost in feasibility checks.
const DRAWING: f64 = 10_000.0;

impl Plan {
    fn of(
        robot: &Robot,
        request: &WorkspaceRequest,
        plotted: bool,
    ) -> Result<Plan, WorkspaceError> {
        if !(2..=400).contains(&request.grid) {
            return Err(WorkspaceError::Grid(request.grid));
        }
        if let Some(v) = &request.region
            && v.len() != 6
        {
            return Err(WorkspaceError::RegionCount(v.len()));
        }
        let region = request
            .region_box()
            .unwrap_or_else(|| default_region(robot));
        let inside = |v: f64| v.is_finite() && v.abs() <= REGION_LIMIT_M;
        if (0..3).any(|k| {
            !(inside(region.min[k])
                && inside(region.max[k])
                && region.max[k] - region.min[k] >= 1e-3)
        }) {
            return Err(WorkspaceError::Region {
                min: region.min.into(),
                max: region.max.into(),
            });
        }
        let bounds: TensionBounds = tension_bounds(robot, request.f_min, request.f_max)?;
        if let Some(deg) = request.orientation
            && !(deg.is_finite() && (0.0..90.0).contains(&deg))
        {
            return Err(WorkspaceError::Orientation(deg));
        }
        if request.orientation.is_some() && request.levels < 2 {
            return Err(WorkspaceError::Levels(request.levels));
        }
        // The budget before any allocation: levels³ orientations at every cell.
        let n_orient = match request.orientation {
            Some(_) if robot.dof == crate::robot::Dof::Six => (request.levels as f64).powi(3),
            _ => 1.0,
        };
        let cells = request.grid.pow(3);
        let ws = robot.workspace;
        let n_u = (2 * request.grid).clamp(24, 120);
        let c = ws.center();
        let planes = [
            Plane::Xy(ws.min.z),
            Plane::Xy(c.z),
            Plane::Xy(ws.max.z),
            Plane::Xz(c.y),
        ];
        let plot_cells: usize = if plotted {
            planes
                .iter()
                .map(|&p| {
                    let (u, v) = slice_cells(&region, p, n_u);
                    u * v
                })
                .sum()
        } else {
            0
        };
        let checks = n_orient * (cells as f64 + 21.0 * plot_cells as f64);
        if checks > MAX_POSE_CHECKS {
            return Err(budget_error(request, checks, cells, plot_cells, n_orient));
        }
        let scan = |h: f64| (h / 0.005).clamp(1.0, 1e6) + 20.0;
        let volume = cells as f64;
        let box_check = 125.0 * (1.0 + CAPACITY);
        let reach =
            CAPACITY * (25.0 * scan(ws.max.z - ws.min.z) + scan(region.max.z - region.min.z));
        let slices = (1.0 + CAPACITY) * plot_cells as f64;
        let before = volume + box_check + reach + slices;
        // Drawing the PNG and the SVG costs about as much as 10 000 checks, whatever the grid.
        let drawing = (DRAWING + 0.03 * before) * (plot_cells > 0) as u8 as f64;
        Ok(Plan {
            region,
            bounds,
            n_u,
            planes,
            work: Work {
                volume,
                box_check,
                reach,
                total: before + drawing,
            },
        })
    }

    /// `progress` of a stage that starts after `done` and does `work`, as a fraction of the
    /// whole job (below 1 until the job is done).
    fn stage<'a>(
        &'a self,
        progress: &'a (dyn Fn(f64) + Sync),
        done: f64,
        work: f64,
    ) -> impl Fn(f64) + Sync + 'a {
        let total = self.work.total;
        move |f: f64| progress(((done + f.clamp(0.0, 1.0) * work) / total).min(0.999))
    }
}

/// A request over the budget, naming the options to lower.
fn budget_error(
    request: &WorkspaceRequest,
    checks: f64,
    cells: usize,
    plot_cells: usize,
    n_orient: f64,
) -> WorkspaceError {
    WorkspaceError::Budget {
        options: match request.orientation {
            Some(deg) => format!(
                "{} {} with {} {deg} {} {}",
                Name("grid"),
                request.grid,
                Name("orientation"),
                Name("levels"),
                request.levels
            ),
            None => format!("{} {}", Name("grid"), request.grid),
        },
        checks,
        cells,
        plot_cells,
        orientations: n_orient as usize,
        hint: format!(
            "lower {}{}{}",
            Name("grid"),
            if request.orientation.is_some() {
                format!(" or {}", Name("levels"))
            } else {
                String::new()
            },
            if plot_cells > 0 {
                " (or skip the plot)"
            } else {
                ""
            }
        ),
    }
}

/// Removes from `set` the cells where something interferes at `clearance` (at any of the
/// orientations), and says what it removed.
fn remove_interference(
    robot: &Robot,
    grid: &Grid,
    orientations: &[nalgebra::Vector3<f64>],
    clearance: f64,
    set: &mut super::FeasibleSet,
) -> InterferenceSummary {
    let [nx, ny, _] = grid.cells;
    let job = |index: usize| {
        let (i, j, k) = (index % nx, (index / nx) % ny, index / (nx * ny));
        interference_at(robot, &grid.center(i, j, k), orientations, clearance)
    };
    let cells = parallel_map(grid.len(), &job, &|_| {});
    let mut summary = InterferenceSummary {
        clearance,
        cells_colliding: 0,
        cells_removed: 0,
        cells_by_kind: Counts::default(),
        volume_before: set.volume().volume,
    };
    for (index, c) in cells.iter().enumerate() {
        if c.total() == 0 {
            continue;
        }
        summary.cells_colliding += 1;
        summary.cells_removed += usize::from(set.feasible[index]);
        set.feasible[index] = false;
        for kind in crate::interference::Kind::ALL {
            summary.cells_by_kind.add(kind, c.get(kind));
        }
    }
    summary
}

/// The plotted slices, computed and drawn into `dir/stem.{png,svg}`.
fn draw(
    robot: &Robot,
    request: &WorkspaceRequest,
    plan: &Plan,
    orientations: &[nalgebra::Vector3<f64>],
    dir: &Path,
    stem: &str,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Vec<PathBuf>, WorkspaceError> {
    std::fs::create_dir_all(dir).map_err(|source| WorkspaceError::PlotDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let (region, bounds, w) = (&plan.region, plan.bounds, &plan.work);
    let mut done = w.volume + w.box_check + w.reach;
    let mut slices = Vec::with_capacity(plan.planes.len());
    for &plane in &plan.planes {
        let (u, v) = slice_cells(region, plane, plan.n_u);
        let work = (1.0 + CAPACITY) * (u * v) as f64;
        let report = plan.stage(progress, done, work);
        let mut slice = slice_with_progress(
            robot,
            region,
            plane,
            plan.n_u,
            bounds,
            orientations,
            &report,
        );
        if let Some(clearance) = request.interference_clearance() {
            mark_interference(&mut slice, robot, orientations, clearance);
        }
        slices.push(slice);
        done += work;
    }
    let top = slices
        .iter()
        .flat_map(|s| s.capacity.iter().flatten())
        .fold(bounds.min, |m, &c| m.max(c));
    let title = format!(
        "{}: wrench-feasible workspace ({} … {} N{})",
        robot.name,
        bounds.min,
        bounds.max,
        request
            .orientation
            .map(|d| format!(", ±{d}°"))
            .unwrap_or_default()
    );
    let spec = plot::PlotSpec {
        title: &title,
        f_min: bounds.min,
        f_top: top,
        workspace: Some(robot.workspace),
        clearance: request.interference_clearance(),
    };
    Ok(plot::write_slices(dir, stem, &slices, &spec)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_requests_are_refused_before_any_work() {
        let robot = crate::fixtures::uvigo8();
        let run = |request: WorkspaceRequest| {
            workspace_report(&robot, &request, None, &|_| {
                panic!("no work for a bad request")
            })
            .expect_err("refused")
            .to_string()
        };
        let r = |f: fn(&mut WorkspaceRequest)| {
            let mut request = WorkspaceRequest::default();
            f(&mut request);
            run(request)
        };
        assert!(r(|q| q.grid = 1).contains("`grid`"));
        assert!(r(|q| q.grid = 401).contains("`grid`"));
        assert!(r(|q| q.orientation = Some(90.0)).contains("`orientation`"));
        let levels = |q: &mut WorkspaceRequest| {
            q.orientation = Some(10.0);
            q.levels = 0;
        };
        assert!(r(levels).contains("`levels` must be at least 2"));
        let huge = |q: &mut WorkspaceRequest| {
            q.grid = 400;
            q.orientation = Some(10.0);
            q.levels = 21;
        };
        let message = r(huge);
        assert!(
            message.contains("`grid` 400 with `orientation` 10 `levels` 21")
                && message.contains("at most"),
            "{message}"
        );
        assert!(r(|q| q.f_min = Some(-1.0)).contains("`f_min`"));
        let flat = vec![0.0, 0.0, 0.5, 1.0, 1.0, 0.5];
        let message = run(WorkspaceRequest {
            region: Some(flat),
            ..WorkspaceRequest::default()
        });
        assert!(message.contains("`region`"), "{message}");
        let message = run(WorkspaceRequest {
            region: Some(vec![0.0, 0.0, 0.0, 1.0, 1.0]),
            ..WorkspaceRequest::default()
        });
        assert!(message.contains("`region` needs 6 numbers"), "{message}");
        // A region too far out to compute or draw (plotters' ticks never end on it).
        for max in [1e300, f64::INFINITY, 2e4] {
            let far = vec![0.0, 0.0, 0.0, max, 1.0, 1.0];
            let message = run(WorkspaceRequest {
                region: Some(far),
                ..WorkspaceRequest::default()
            });
            assert!(message.contains("`region`"), "{message}");
        }
    }

    #[test]
    fn progress_covers_the_slices_and_the_drawing_not_only_the_volume() {
        let robot = crate::fixtures::uvigo8();
        let dir = std::env::temp_dir().join(format!("cdpr-ws-progress-{}", std::process::id()));
        let reports = std::sync::Mutex::new(Vec::new());
        let started = Instant::now();
        let request = WorkspaceRequest {
            grid: 24,
            ..WorkspaceRequest::default()
        };
        let plot = (dir.clone(), "ws".to_string());
        let r = workspace_report(&robot, &request, Some(&plot), &|f| {
            if let Ok(mut v) = reports.lock() {
                v.push((f, started.elapsed().as_secs_f64()));
            }
        })
        .expect("runs");
        let total = started.elapsed().as_secs_f64();
        assert_eq!(r.plot.len(), 2);
        let reports = reports.into_inner().expect("reports");
        let (last, at) = *reports.last().expect("progress reported");
        assert_eq!(last, 1.0, "ends at 100 %");
        assert!(
            reports[..reports.len() - 1]
                .iter()
                .all(|&(f, _)| (0.0..1.0).contains(&f))
        );
        // 100 % only when all is done: the slices (most of the pose checks at this grid)
        // and the drawing come before it, and move the bar while they run.
        assert!(
            total - at < 0.1 * total + 0.05,
            "100 % at {at:.2} s of {total:.2} s"
        );
        // And the bar moves all along: no stretch of a third of the run without a report.
        let mut previous = 0.0;
        for &(_, at) in &reports {
            assert!(
                at - previous < total / 3.0,
                "no progress from {previous:.2} to {at:.2} s"
            );
            previous = at;
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
