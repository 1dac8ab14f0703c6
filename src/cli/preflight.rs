//! `preflight`: a whole trajectory checked before it goes to the real robot.

use super::options::{Preflight, RequestArgs, RunArgs};
use super::output::{Table, json, sig};
use anyhow::{Context, Result};
use cdpr_core::preflight::{self, PreflightRequest, SegmentReport};
use clap::Args;
use std::process::ExitCode;

/// Exit status when a check is violated: neither 1 (bad input: robot, trajectory, file) nor 2
/// (a command line clap refuses), so that CI tells a violation from a broken call.
pub const VIOLATED: u8 = 3;

#[derive(Args, Debug)]
#[command(
    after_help = "Sampling: every sample of the trajectory is checked, and each interval \
between two samples is cut into equal parts so that no part moves the platform more than --step, \
turns an angle more than --angle-step or lasts more than --time-step (linear interpolation \
between samples). A built-in trajectory is sampled every 1 ms.\n\n\
Checks (margin ≥ 0 holds): workspace (inside the robot's [workspace] box; margin = distance to \
the nearest face), tensions (a distribution within [f_min, f_max] holds the platform; margin = \
f_max − largest tension), slack (largest achievable minimum tension − f_min), winch velocity, \
acceleration and jerk (the cable rates of the inverse kinematics against [winch]), pulley wrap \
(≤ max_wrap) and swivel (within swivel_range), interference (cables, platform, frame and \
[[obstacles]] kept --clearance apart), and for a robot whose file describes its drives the motor \
torque (the motor equation at the planned motion: inertia, friction and the winch-side tension \
against torque_limit).\n\n\
Exit status: 0 when every check holds; 3 when one is violated (the first violation is named: \
time, pose, check, cable or obstacle, by how much); bad input: 1 (robot, trajectory or CSV, \
option values core refuses) or 2 (a command line refused by the parser).\n\n\
Examples:\n  \
cdpr preflight --robot uvigo8 --trajectory seed000 --profile scurve\n  \
cdpr preflight --robot uvigo8 --trajectory seed000 --speed 2 --json\n  \
cdpr preflight --robot caroca --trajectory poly5 --payload 15\n  \
cdpr preflight --robot silva4-obstacle --trajectory pickplace --clearance 0.02\n  \
cdpr preflight --robot uvigo8-pulleys --trajectory moves.csv --step 0.0005"
)]
pub struct PreflightArgs {
    /// Robot, payload, trajectory and its shape (as `cdpr simulate` takes them).
    #[command(flatten)]
    pub run: RunArgs<Preflight>,
    /// How finely to check, and against what (core's pre-flight request).
    #[command(flatten)]
    pub checks: RequestArgs<PreflightRequest>,
    /// Print one JSON object (keys documented in the guide's pre-flight page) instead of tables.
    #[arg(long)]
    pub json: bool,
}

fn value(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| sig(v, 4))
}

fn table(segments: &[&SegmentReport]) {
    let mut t = Table::new(&[
        "segment",
        "check",
        "worst",
        "limit",
        "margin",
        "unit",
        "at t [s]",
        "where",
        "violations",
    ])
    .left(&[0, 1, 3, 7]);
    for s in segments {
        for w in s.checks.iter().filter(|w| w.applies) {
            t.row(vec![
                if s.name.is_empty() {
                    "(all)".into()
                } else {
                    s.name.clone()
                },
                w.check.name().into(),
                value(w.value),
                w.limit.clone(),
                value(w.margin),
                w.unit.into(),
                w.t.map_or_else(|| "—".into(), |t| format!("{t:.3}")),
                w.subject.clone().unwrap_or_default(),
                w.violations.to_string(),
            ]);
        }
    }
    t.print();
}

pub fn run(a: PreflightArgs) -> Result<ExitCode> {
    let robot = a.run.load_cable_robot("preflight")?;
    let traj = a.run.request.load_trajectory(&robot)?;
    let options = a.checks.request.options(&robot)?;
    let report = preflight::run(&robot, &traj, &options).context("pre-flight")?;
    if a.json {
        json(&report)?;
    } else {
        println!(
            "pre-flight of {} on {}: {:.3} s, {} samples checked ({} given; step {} m, {} rad, {} s)",
            a.run.request.trajectory.as_deref().unwrap_or(""),
            report.robot,
            report.duration,
            report.checked_samples,
            report.trajectory_samples,
            options.step,
            options.angle_step,
            options.time_step
        );
        let mut rows: Vec<&SegmentReport> = report.segments.iter().collect();
        if rows.len() != 1 || !rows[0].name.is_empty() {
            rows.push(&report.total);
        }
        table(&rows);
        let skipped: Vec<String> = report
            .total
            .checks
            .iter()
            .filter_map(|w| Some(format!("{} ({})", w.check.name(), w.reason.as_ref()?)))
            .collect();
        if !skipped.is_empty() {
            println!("not checked: {}", skipped.join(", "));
        }
        match &report.first_violation {
            None => println!("OK: every check holds"),
            Some(v) => println!(
                "FIRST VIOLATION at t = {:.4} s{}: {} of {} = {} {unit} (limit {}), beyond by {} {unit}; pose x,y,z {}, {}, {} m, roll,pitch,yaw {}, {}, {} rad",
                v.t,
                if v.segment.is_empty() {
                    String::new()
                } else {
                    format!(" (segment {})", v.segment)
                },
                v.check.name(),
                v.subject,
                sig(v.value, 5),
                v.limit,
                sig(v.by, 4),
                sig(v.pose[0], 5),
                sig(v.pose[1], 5),
                sig(v.pose[2], 5),
                sig(v.pose[3], 4),
                sig(v.pose[4], 4),
                sig(v.pose[5], 4),
                unit = v.unit,
            ),
        }
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(VIOLATED)
    })
}
