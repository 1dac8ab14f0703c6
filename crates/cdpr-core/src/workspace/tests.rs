//! Workspace tests against an independent statics computation: a wrench matrix and gravity
//! wrench built here from the robot's anchors (zero rotation), solved by clarabel's QP rather
//! than the active-set QP the workspace uses; the volume estimate on a sphere; seed 000's box.

use super::*;
use crate::fixtures::{self, uvigo8};
use crate::statics::min_norm_qp_clarabel;

/// W (6×m) and w_g at position p with zero rotation, moments about the platform origin.
fn independent_statics(robot: &Robot, p: &Vector3<f64>) -> (DMatrix<f64>, DVector<f64>) {
    let m = robot.cables.len();
    let mut w = DMatrix::zeros(6, m);
    for (i, c) in robot.cables.iter().enumerate() {
        let attach = p + c.platform_anchor;
        let u = (c.frame_anchor - attach).normalize();
        let moment = c.platform_anchor.cross(&u);
        for r in 0..3 {
            w[(r, i)] = u[r];
            w[(r + 3, i)] = moment[r];
        }
    }
    let g = Vector3::new(0.0, 0.0, -9.81 * robot.platform.mass);
    let tau = robot.platform.com.cross(&g);
    let wg = DVector::from_vec(vec![g.x, g.y, g.z, tau.x, tau.y, tau.z]);
    (w, wg)
}

/// Whether tensions in [lo, hi] hold the platform at p, by clarabel on the independent W.
fn independent_feasible(robot: &Robot, p: &Vector3<f64>, lo: f64, hi: f64) -> bool {
    let (w, wg) = independent_statics(robot, p);
    let m = w.ncols();
    min_norm_qp_clarabel(
        &w,
        &(-wg),
        &DVector::from_element(m, lo),
        &DVector::from_element(m, hi),
    )
    .is_some()
}

#[test]
fn feasibility_agrees_with_an_independent_statics_computation() {
    let robot = uvigo8();
    let zero = [Vector3::zeros()];
    let (mut feasible, mut infeasible) = (0, 0);
    for i in 0..7 {
        for k in 0..7 {
            // A vertical plane through the frame: the feasible region and its boundary.
            let p = Vector3::new(-1.2 + 0.4 * i as f64, 0.2, 0.02 + 0.11 * k as f64);
            let ours = pose_feasible(&robot, &p, &zero, robot.tension);
            let theirs = independent_feasible(&robot, &p, robot.tension.min, robot.tension.max);
            // Right at the boundary the two solvers' tolerances may differ: re-test with a
            // 1 % margin on the lower bound before calling it a disagreement.
            if ours != theirs {
                let loose =
                    independent_feasible(&robot, &p, robot.tension.min * 0.99, robot.tension.max);
                let tight =
                    independent_feasible(&robot, &p, robot.tension.min * 1.01, robot.tension.max);
                assert!(
                    loose && !tight,
                    "disagreement at {p:?}: ours {ours}, clarabel {theirs}"
                );
            }
            if ours {
                feasible += 1;
                // The tensions it found balance the independent wrench within the bounds.
                let d =
                    statics::tension_distribution(&robot, &Pose::from_position(p), robot.tension);
                let (w, wg) = independent_statics(&robot, &p);
                let residual = (&w * DVector::from_vec(d.tensions.clone()) + wg).norm();
                assert!(residual < 1e-6, "residual {residual} at {p:?}");
                assert!(
                    d.tensions
                        .iter()
                        .all(|&f| f >= robot.tension.min - 1e-6 && f <= robot.tension.max + 1e-6)
                );
            } else {
                infeasible += 1;
            }
        }
    }
    assert!(
        feasible > 5 && infeasible > 5,
        "{feasible} feasible, {infeasible} not"
    );
}

#[test]
fn uvigo8_contains_seed000_test_box() {
    let robot = uvigo8();
    let zero = [Vector3::zeros()];
    let check = check_box(&robot, &robot.workspace, robot.tension, &zero, 5, &|_| {});
    assert!(check.contained, "{check:?}");
    assert_eq!(check.points, 125);
    // Independently, on the box's corners.
    let ws = robot.workspace;
    for x in [ws.min.x, ws.max.x] {
        for y in [ws.min.y, ws.max.y] {
            for z in [ws.min.z, ws.max.z] {
                let p = Vector3::new(x, y, z);
                assert!(
                    independent_feasible(&robot, &p, robot.tension.min, robot.tension.max),
                    "{p:?}"
                );
            }
        }
    }
}

#[test]
fn five_newton_threshold_is_where_the_independent_qp_switches() {
    let robot = uvigo8();
    let ws = robot.workspace;
    let reach = min_tension_reach(
        &robot,
        &ws,
        [ws.min.z, robot.frame.max.z],
        5.0,
        robot.tension.max,
        3,
        0.01,
        &|_| {},
    );
    // The box's bottom centre cannot keep 5 N (capacity ≈ 4.7 N), its top can.
    let bottom = reach.capacity_at_box_bottom_center.expect("capacity");
    assert!(bottom < 5.0 && bottom > 1.0, "{bottom}");
    let first = reach
        .axis_intervals
        .first()
        .expect("5 N reachable somewhere on the axis");
    let z5 = first.from_z;
    assert!(z5 > ws.min.z && z5 < ws.max.z, "{reach:?}");
    let c = ws.center();
    let below = Vector3::new(c.x, c.y, z5 - 1e-3);
    let above = Vector3::new(c.x, c.y, z5 + 1e-3);
    assert!(!independent_feasible(
        &robot,
        &below,
        5.0,
        robot.tension.max
    ));
    assert!(independent_feasible(&robot, &above, 5.0, robot.tension.max));
    // The capacity is bounded by m g / Σ u_iz (all tensions ≥ t lift at least t Σ u_iz).
    let (w, _) = independent_statics(&robot, &above);
    let lift: f64 = (0..w.ncols()).map(|i| w[(2, i)]).sum();
    let cap = capacity(&robot, &Pose::from_position(above), robot.tension.max).expect("cap");
    assert!(
        cap <= 9.81 * robot.platform.mass / lift + 1e-9,
        "{cap} vs {}",
        9.81 / lift
    );
    assert!(
        reach
            .everywhere_above_z
            .is_some_and(|z| z >= z5 - 1e-9 && z < ws.max.z)
    );
}

#[test]
fn volume_estimate_of_a_sphere() {
    let region = Aabb {
        min: Vector3::new(-1.0, -1.0, -1.0),
        max: Vector3::new(1.0, 1.0, 1.0),
    };
    let grid = Grid::cubic(region, 40);
    let r = 0.8;
    let feasible = (0..grid.len())
        .map(|index| {
            let (i, j, k) = (index % 40, (index / 40) % 40, index / 1600);
            grid.center(i, j, k).norm() <= r
        })
        .collect();
    let set = FeasibleSet { grid, feasible };
    let v = set.volume();
    let exact = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    assert!((v.volume - exact).abs() <= v.error, "{v:?} vs {exact}");
    // The cell-centre estimate itself is much better than its (conservative) bound.
    assert!((v.volume - exact).abs() < 0.02 * exact, "{v:?} vs {exact}");
    assert!(set.touched_faces().is_empty());
}

#[test]
fn orientation_range_shrinks_the_workspace() {
    let robot = uvigo8();
    let grid = Grid::cubic(robot.frame, 6);
    let zero = OrientationRange::samples(None, robot.dof);
    let range = OrientationRange {
        max_angle: 10f64.to_radians(),
        levels: 3,
    };
    let tilted = OrientationRange::samples(Some(&range), robot.dof);
    assert_eq!(tilted.len(), 27);
    assert_eq!(tilted[0], Vector3::zeros());
    let a = feasible_set(&robot, &grid, robot.tension, &zero, &|_| {});
    let b = feasible_set(&robot, &grid, robot.tension, &tilted, &|_| {});
    assert_eq!(b.feasible.len(), a.feasible.len());
    assert!(
        b.feasible.iter().zip(&a.feasible).all(|(b, a)| !b || *a),
        "tilted ⊆ zero rotation"
    );
    assert!(b.volume().volume <= a.volume().volume);
}

#[test]
fn slice_plot_is_written() {
    let robot = uvigo8();
    let zero = [Vector3::zeros()];
    let s = slice(
        &robot,
        &robot.frame,
        Plane::Xy(0.15),
        12,
        robot.tension,
        &zero,
    );
    assert_eq!(
        s.capacity.len(),
        (s.u_edges.len() - 1) * (s.v_edges.len() - 1)
    );
    let dir = std::env::temp_dir().join(format!("cdpr-ws-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let spec = plot::PlotSpec {
        title: "uvigo8 test",
        f_min: robot.tension.min,
        f_top: 20.0,
        workspace: Some(robot.workspace),
        clearance: None,
    };
    let files = plot::write_slices(&dir, "ws", &[s], &spec).expect("plot");
    for f in &files {
        assert!(std::fs::metadata(f).expect("written").len() > 1000, "{f:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interference_removes_exactly_the_cells_where_check_finds_a_violation() {
    use crate::interference;
    let robot = fixtures::robot("silva4-obstacle");
    let grid = 8;
    let dir = std::env::temp_dir().join(format!("cdpr-ws-interference-{}", std::process::id()));
    let request = survey::WorkspaceRequest {
        grid,
        interference: true,
        clearance: 0.01,
        ..survey::WorkspaceRequest::default()
    };
    let plot = (dir.clone(), "ws".to_string());
    let with = survey::workspace_report(&robot, &request, Some(&plot), &|_| {}).expect("runs");
    let without = survey::workspace_report(
        &robot,
        &survey::WorkspaceRequest {
            grid,
            ..survey::WorkspaceRequest::default()
        },
        None,
        &|_| {},
    )
    .expect("runs");
    let i = with.interference.expect("checked");
    // Cell by cell, the check at the cell's centre (zero rotation: a 3-DOF robot).
    let g = Grid::cubic(robot.frame, grid);
    let (mut colliding, mut crate_cells) = (0, 0);
    for k in 0..grid {
        for j in 0..grid {
            for n in 0..grid {
                let pose = Pose::from_position(g.center(n, j, k));
                let r = interference::check(&robot, &pose, 0.01);
                colliding += usize::from(!r.is_clear());
                crate_cells += usize::from(r.violations().any(|p| {
                    p.name_b == "crate" && p.kind == interference::Kind::PlatformObstacle
                }));
            }
        }
    }
    assert!(colliding > 0 && crate_cells > 0);
    assert_eq!(i.cells_colliding, colliding);
    assert_eq!(i.cells_by_kind.platform_obstacle, crate_cells);
    assert_eq!(i.volume_before, without.volume.volume);
    assert_eq!(
        without.volume.cells_feasible - with.volume.cells_feasible,
        i.cells_removed
    );
    assert!(i.cells_removed > 0);
    assert_eq!(with.plot.len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}
