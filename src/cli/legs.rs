//! `check` and `ik` for the robots with legs (linear delta, 2-RSSU).

use super::args::AngleArg;
use super::output::{Table, json};
use anyhow::{Result, bail};
use cdpr_core::kinematics::Pose;
use cdpr_core::kinematics::legs::legs_ik;
use cdpr_core::legs::coverage;
use cdpr_core::robot::{Mechanism, Robot};
use cdpr_core::workspace::legs::{self as legs_workspace, delta_workspace};
use std::path::Path;
use std::process::ExitCode;

pub fn check(robot: &Robot) -> Result<ExitCode> {
    super::args::print_ok(robot);
    if !robot.source.is_empty() {
        println!("source: {}", robot.source);
    }
    let w = &robot.winch;
    match &robot.mechanism {
        Mechanism::LinearDelta { delta, cylinder } => {
            println!(
                "linear delta: rails at {:.2}°, base radius {} m, platform radius {} m, arms {} m (pairs {} m apart), stroke [{}, {:.4}] m, spherical joints ≤ {:.1}°",
                delta.rail_angle.to_degrees(),
                delta.base_radius,
                delta.platform_radius,
                delta.arm_length,
                delta.arm_spacing,
                delta.stroke[0],
                delta.stroke[1],
                delta.spherical_limit.to_degrees()
            );
            let c = coverage::coverage(delta, cylinder, 0.01);
            println!(
                "required cylinder ⌀{} × {} m, top at z = {} m: {} of {} points (10 mm grid) reachable{}",
                2.0 * cylinder.radius,
                cylinder.height,
                cylinder.z_top,
                c.reachable,
                c.points,
                if c.covered() {
                    ""
                } else {
                    " (details: cdpr workspace --robot …)"
                }
            );
            println!(
                "actuators ≤ {} m/s, {} m/s², {} m/s³",
                w.max_velocity, w.max_acceleration, w.max_jerk
            );
        }
        Mechanism::Rssu2(r) => {
            let ranges = r.ranges().map(f64::to_degrees);
            println!(
                "2-RSSU: attachments {} m forward, ±{} m sideways; cranks {} m, rods {} m, crank travel [{:.2}°, {:.2}°]",
                r.forward,
                r.half_width,
                r.crank,
                r.rod,
                r.crank_limits[0].to_degrees(),
                r.crank_limits[1].to_degrees()
            );
            println!(
                "reach: pitch [{:.2}°, {:.2}°], roll [{:.2}°, {:.2}°] (seed 004, Table 1: ±30.27°, ±26.38°)",
                ranges[0], ranges[1], ranges[2], ranges[3]
            );
            println!(
                "actuators ≤ {} rad/s, {} rad/s², {} rad/s³",
                w.max_velocity, w.max_acceleration, w.max_jerk
            );
        }
        Mechanism::Cables => {}
    }
    println!("platform {} kg", robot.platform.mass);
    Ok(ExitCode::SUCCESS)
}

pub fn ik(robot: &Robot, pose: &Pose, as_json: bool, angles: &AngleArg) -> Result<ExitCode> {
    let r = legs_ik(robot, pose, angles.unit());
    if as_json {
        json(&r)?;
    } else {
        let mut t = Table::new(&[
            "actuator".to_string(),
            format!("position [{}]", r.actuator_unit),
        ]);
        for (k, v) in r.actuators.iter().flatten().enumerate() {
            t.row(vec![format!("{}", k + 1), format!("{v:.6}")]);
        }
        t.print();
        match &r.violation {
            None => println!("reachable"),
            Some(v) => println!("NOT reachable: {v}"),
        }
    }
    Ok(if r.reachable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// `workspace` for a linear delta: seed 002's point-cloud check of the required cylinder, which
/// constraint fails where, and a plot (top and side views).
pub fn workspace(robot: &Robot, step: f64, plot: Option<&Path>, as_json: bool) -> Result<ExitCode> {
    let r = delta_workspace(robot, step, plot)?;
    let Mechanism::LinearDelta { delta, cylinder } = &robot.mechanism else {
        bail!("{} is not a linear delta", robot.name);
    };
    let c = &r.coverage;
    if as_json {
        json(&r)?;
    } else {
        println!(
            "{}: required cylinder ⌀{:.0} × {:.0} mm, top at z = {:.0} mm; cloud every {:.1} mm: {} of {} points reachable",
            robot.name,
            2e3 * cylinder.radius,
            1e3 * cylinder.height,
            1e3 * cylinder.z_top,
            1e3 * step,
            c.reachable,
            c.points
        );
        if !c.failures.is_empty() {
            let mut t = Table::new(&[
                "constraint",
                "points",
                "z from [mm]",
                "z to [mm]",
                "max r [mm]",
            ]);
            for f in &c.failures {
                t.row(vec![
                    f.violation.to_string(),
                    f.count.to_string(),
                    format!("{:.0}", 1e3 * f.z_min),
                    format!("{:.0}", 1e3 * f.z_max),
                    format!("{:.0}", 1e3 * f.r_max),
                ]);
            }
            t.print();
        }
        if let Some((m, p)) = c.min_clearance {
            println!(
                "smallest arm-to-arm gap {:.1} mm (surfaces; limit 0) at ({:.0}, {:.0}, {:.0}) mm",
                1e3 * (m - 2.0 * delta.arm_radius),
                1e3 * p[0],
                1e3 * p[1],
                1e3 * p[2]
            );
        }
        if let Some((a, p)) = c.max_opening {
            println!(
                "largest spherical-joint opening {:.1}° (limit {:.1}°) at ({:.0}, {:.0}, {:.0}) mm",
                a.to_degrees(),
                delta.spherical_limit.to_degrees(),
                1e3 * p[0],
                1e3 * p[1],
                1e3 * p[2]
            );
        }
        if let Some(path) = plot {
            println!("wrote {}", path.display());
        }
    }
    Ok(if r.covered {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// `workspace` for the 2-RSSU: its reach in (roll, pitch) — Table 1's axis ranges and the
/// coupled reach along the diagonals, where seed 004's combination step pulls demands back.
pub fn rssu2_reach(robot: &Robot, as_json: bool) -> Result<ExitCode> {
    let r = legs_workspace::rssu2_reach(robot)?;
    if as_json {
        json(&r)?;
    } else {
        println!(
            "{}: pitch [{:.2}°, {:.2}°], roll [{:.2}°, {:.2}°] (seed 004, Table 1: ±30.27°, ±26.38°)",
            robot.name, r.pitch_deg[0], r.pitch_deg[1], r.roll_deg[0], r.roll_deg[1]
        );
        println!(
            "reach boundary (a crank at its stop or a rod out of reach) along directions in (roll, pitch):"
        );
        let mut t = Table::new(&["direction [°]", "roll [°]", "pitch [°]"]);
        for b in &r.boundary_deg {
            t.row(vec![
                format!("{:.1}", b.direction),
                format!("{:.2}", b.roll),
                format!("{:.2}", b.pitch),
            ]);
        }
        t.print();
    }
    Ok(ExitCode::SUCCESS)
}
