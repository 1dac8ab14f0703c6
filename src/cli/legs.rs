//! `check` and `ik` for the robots with legs (linear delta, 2-RSSU).

use super::args::AngleArg;
use super::output::{Table, json};
use anyhow::Result;
use cdpr_core::kinematics::Pose;
use cdpr_core::legs::coverage;
use cdpr_core::robot::{Mechanism, Robot};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

pub fn check(robot: &Robot) -> Result<ExitCode> {
    println!("{}: OK — {}", robot.name, robot.description);
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
    let (actuators, violation, unit): (Option<Vec<f64>>, Option<String>, &str) =
        match &robot.mechanism {
            Mechanism::LinearDelta { delta, .. } => match delta.inverse(&pose.position) {
                Ok(ik) => (Some(ik.actuators.to_vec()), None, "m"),
                Err(v) => (
                    delta.actuators(&pose.position).map(|d| d.to_vec()),
                    Some(format!("{v:?}")),
                    "m",
                ),
            },
            Mechanism::Rssu2(r) => match r.inverse(pose.rpy.x, pose.rpy.y) {
                Ok(a) => (
                    Some(a.iter().map(|x| angles.unit().from_rad(*x)).collect()),
                    None,
                    angles.unit().name(),
                ),
                Err(v) => (None, Some(format!("{v:?}")), angles.unit().name()),
            },
            Mechanism::Cables => (None, None, ""),
        };
    if as_json {
        json(&json!({
            "robot": robot.name,
            "pose": angles.unit().pose(pose),
            "actuators": actuators,
            "actuator_unit": unit,
            "reachable": violation.is_none(),
            "violation": violation,
        }))?;
    } else {
        let mut t = Table::new(&["actuator".to_string(), format!("position [{unit}]")]);
        for (k, v) in actuators.iter().flatten().enumerate() {
            t.row(vec![format!("{}", k + 1), format!("{v:.6}")]);
        }
        t.print();
        match &violation {
            None => println!("reachable"),
            Some(v) => println!("NOT reachable: {v}"),
        }
    }
    Ok(if violation.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// `workspace` for a linear delta: seed 002's point-cloud check of the required cylinder, which
/// constraint fails where, and a plot (top and side views).
pub fn workspace(robot: &Robot, step: f64, plot: Option<&Path>, as_json: bool) -> Result<ExitCode> {
    let Mechanism::LinearDelta { delta, cylinder } = &robot.mechanism else {
        anyhow::bail!("{} is not a linear delta", robot.name);
    };
    if !(step.is_finite() && step > 0.0 && step <= cylinder.radius) {
        anyhow::bail!(
            "--step {step}: the cloud spacing must be positive and at most the cylinder's radius ({} m)",
            cylinder.radius
        );
    }
    let c = coverage::coverage(delta, cylinder, step);
    if let Some(path) = plot {
        coverage::plot(&c, &robot.name, path)
            .map_err(|e| anyhow::anyhow!("writing the plot {e}"))?;
    }
    if as_json {
        json(
            &json!({ "robot": robot.name, "coverage": c, "covered": c.covered(),
                      "plot": plot.map(|p| p.display().to_string()) }),
        )?;
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
            let mut t = Table::new(
                &[
                    "constraint",
                    "points",
                    "z from [mm]",
                    "z to [mm]",
                    "max r [mm]",
                ]
                .map(String::from),
            );
            for f in &c.failures {
                t.row(vec![
                    format!("{:?}", f.violation),
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
    Ok(if c.covered() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// `workspace` for the 2-RSSU: its reach in (roll, pitch) — Table 1's axis ranges and the
/// coupled reach along the diagonals, where seed 004's combination step pulls demands back.
pub fn rssu2_reach(robot: &Robot, as_json: bool) -> Result<ExitCode> {
    let Mechanism::Rssu2(r) = &robot.mechanism else {
        anyhow::bail!("{} is not a 2-RSSU", robot.name);
    };
    let ranges = r.ranges().map(f64::to_degrees);
    // Reach along 16 directions in the (roll, pitch) plane.
    let directions: Vec<(f64, f64, f64)> = (0..16)
        .map(|k| {
            let a = k as f64 * std::f64::consts::TAU / 16.0;
            let reach = r.reach(a.cos(), a.sin());
            (
                a.to_degrees(),
                (reach * a.cos()).to_degrees(),
                (reach * a.sin()).to_degrees(),
            )
        })
        .collect();
    if as_json {
        json(&json!({
            "robot": robot.name,
            "pitch_deg": [ranges[0], ranges[1]],
            "roll_deg": [ranges[2], ranges[3]],
            "boundary_deg": directions.iter().map(|d| json!({"direction": d.0, "roll": d.1, "pitch": d.2})).collect::<Vec<_>>(),
        }))?;
    } else {
        println!(
            "{}: pitch [{:.2}°, {:.2}°], roll [{:.2}°, {:.2}°] (seed 004, Table 1: ±30.27°, ±26.38°)",
            robot.name, ranges[0], ranges[1], ranges[2], ranges[3]
        );
        println!(
            "reach boundary (a crank at its stop or a rod out of reach) along directions in (roll, pitch):"
        );
        let mut t = Table::new(&["direction [°]", "roll [°]", "pitch [°]"]);
        for (a, roll, pitch) in &directions {
            t.row(vec![
                format!("{a:.1}"),
                format!("{roll:.2}"),
                format!("{pitch:.2}"),
            ]);
        }
        t.print();
    }
    Ok(ExitCode::SUCCESS)
}
