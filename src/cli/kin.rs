//! `check`, `ik`, `fk`, `tensions`, `equilibrium`.

use super::args::{AngleArg, Numbers, RobotArg, number_list, pose_list, warn};
use super::output::{Table, json, list, num, sig};
use anyhow::{Context, Result, bail};
use cdpr_ads::PlcSymbols;
use cdpr_core::kinematics::{self, FkMethod, FkOptions};
use cdpr_core::robot::{Robot, Stiffness, TensionBounds};
use cdpr_core::statics::{self, RestLengths};
use clap::{ArgGroup, Args};
use serde::Serialize;
use std::process::ExitCode;

// ------------------------------------------------------------------------------- check

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Robot file to validate (or a shipped robot's name).
    #[arg(value_name = "ROBOT")]
    pub robot: String,
    /// Print the compiled robot as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `check --json`: the compiled robot, then the symbol names of its `[plc]` section.
#[derive(Serialize)]
struct CheckedRobot<'a> {
    #[serde(flatten)]
    robot: &'a Robot,
    plc: PlcSymbols,
}

pub fn check(a: CheckArgs) -> Result<ExitCode> {
    // Every robot-file error names the file (or the name looked for): no context to add.
    let robot = super::args::find_robot(&a.robot)?;
    // The [plc] section belongs to the controller boundary: checked as `cdpr shadow` and
    // `cdpr plc` read it.
    let plc = PlcSymbols::of(&robot)?;
    if a.json {
        json(&CheckedRobot { robot: &robot, plc })?;
        return Ok(ExitCode::SUCCESS);
    }
    if !robot.is_cable_robot() {
        return super::legs::check(&robot);
    }
    super::args::print_ok(&robot);
    if let Some(w) = robot.orientation_warning() {
        eprintln!("warning: {w}");
    }
    if !robot.source.is_empty() {
        println!("source: {}", robot.source);
    }
    print_robot_summary(&robot);
    let home = statics::home_report(&robot);
    print_cable_table(&robot, &home);
    if robot.cables.iter().any(|c| c.pulley.is_some()) {
        print_pulley_table(&robot);
    }
    if !robot.obstacles.is_empty() {
        let names: Vec<String> = robot
            .obstacles
            .iter()
            .map(|o| format!("{} ({})", o.name, o.shape.kind()))
            .collect();
        println!("obstacles: {}", names.join(", "));
    }
    let home_pose = format!(
        "x,y,z {} m, roll,pitch,yaw {} rad",
        list(&robot.home[..3], 4),
        list(&robot.home[3..], 4)
    );
    if let Some(tensions) = &home.tensions {
        println!("home pose {home_pose}: tensions {} N", list(tensions, 3));
    } else {
        println!("warning: the tension distribution is infeasible at the home pose {home_pose}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `check`'s summary lines: cable count and DOF, platform, inertia, tension and winch limits,
/// workspace.
fn print_robot_summary(robot: &Robot) {
    let p = &robot.platform;
    println!(
        "{} cables, {} DOF; platform {} kg, COM ({}) m, box {} m",
        robot.cable_count(),
        robot.dof.count(),
        p.mass,
        list(p.com.as_slice(), 4),
        list(p.size.as_slice(), 3)
    );
    let i = p.inertia;
    println!(
        "inertia diag ({}, {}, {}) kg·m²",
        sig(i[(0, 0)], 5),
        sig(i[(1, 1)], 5),
        sig(i[(2, 2)], 5)
    );
    println!(
        "tension {}…{} N; winch ≤ {} m/s, {} m/s², {} m/s³; PID kp {} N/m, ki {} N/(m·s), kd {} N·s/m",
        robot.tension.min,
        robot.tension.max,
        robot.winch.max_velocity,
        robot.winch.max_acceleration,
        robot.winch.max_jerk,
        robot.winch.kp,
        robot.winch.ki,
        robot.winch.kd
    );
    let (lo, hi) = (robot.workspace.min, robot.workspace.max);
    println!(
        "workspace x∈[{}, {}] y∈[{}, {}] z∈[{}, {}] m",
        lo.x, hi.x, lo.y, hi.y, lo.z, hi.z
    );
}

/// `check`'s cable table: anchors, stiffness, damping and length at the home pose.
fn print_cable_table(robot: &Robot, home: &statics::HomeReport) {
    let mut t = Table::new(&[
        "cable",
        "frame anchor a [m]",
        "platform anchor b [m]",
        "stiffness",
        "damping [N·s/m]",
        "length at home [m]",
    ]);
    for (c, length) in robot.cables.iter().zip(&home.lengths) {
        let k = match c.stiffness {
            Stiffness::Constant(k) => format!("{k} N/m"),
            Stiffness::Ea(ea) => format!("EA {ea} N"),
        };
        t.row(vec![
            c.name.clone(),
            list(c.frame_anchor.as_slice(), 5),
            list(c.platform_anchor.as_slice(), 5),
            k,
            num(c.damping, 1),
            num(*length, 6),
        ]);
    }
    t.print();
}

/// `check`'s pulley table, for a robot with swivel pulleys: per cable its wheel (or a point
/// exit) and the cable's mass per length.
fn print_pulley_table(robot: &Robot) {
    let mut t = Table::new(&[
        "cable",
        "pulley radius [m]",
        "swivel axis",
        "friction μ",
        "max wrap [rad]",
        "cable mass [kg/m]",
    ]);
    for c in &robot.cables {
        let mass = num(c.mass_per_length, 4);
        t.row(match &c.pulley {
            Some(p) => vec![
                c.name.clone(),
                num(p.radius, 4),
                list(p.axis.as_slice(), 4),
                num(p.friction, 3),
                num(p.max_wrap, 4),
                mass,
            ],
            None => vec![
                c.name.clone(),
                "(point exit)".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                mass,
            ],
        });
    }
    t.print();
}

// ---------------------------------------------------------------------------------- ik

#[derive(Args, Debug)]
pub struct IkArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Platform pose x,y,z[,roll,pitch,yaw] (m, rad unless --degrees; positions within
    /// ±1000 m, angles within ±360).
    #[arg(long, value_name = "POSE", value_parser = pose_list, allow_hyphen_values = true)]
    pub pose: Numbers,
    #[command(flatten)]
    pub angles: AngleArg,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also give the unstretched lengths that put the platform on target with every cable
    /// sagging as its elastic catenary under the minimum-norm tensions within the robot
    /// file's bounds (a robot without cable mass: the pre-tensioned straight rest lengths).
    /// JSON key `catenary`: rest_lengths, length_change (= rest − IK), tensions (platform
    /// end), exit_tensions (pulley side), sags (m), rounds.
    #[arg(long)]
    pub catenary: bool,
}

/// The `catenary` object `ik --catenary` adds to the report (JSON) or prints after the table.
fn ik_catenary(robot: &Robot, pose: &kinematics::Pose) -> Result<statics::CatenaryIk> {
    statics::catenary_ik(robot, pose, robot.tension).context("ik --catenary")
}

fn print_ik_catenary(robot: &Robot, c: &statics::CatenaryIk) {
    let mut t = Table::new(&[
        "cable",
        "rest length [m]",
        "rest − IK [mm]",
        "tension at platform [N]",
        "at exit/pulley [N]",
        "sag [mm]",
    ]);
    for (k, cable) in robot.cables.iter().enumerate() {
        t.row(vec![
            cable.name.clone(),
            num(c.rest_lengths[k], 7),
            num(c.length_change[k] * 1e3, 4),
            num(c.tensions[k], 4),
            num(c.exit_tensions[k], 4),
            num(c.sags[k] * 1e3, 3),
        ]);
    }
    println!("catenary (cables with mass, unstretched lengths on target):");
    t.print();
}

#[derive(Serialize)]
struct IkWithCatenary<'a> {
    #[serde(flatten)]
    report: &'a kinematics::IkReport,
    catenary: &'a statics::CatenaryIk,
}

pub fn ik(a: IkArgs) -> Result<ExitCode> {
    let robot = a.robot.load()?;
    let pose = a.angles.pose_on(&robot, &a.pose, "--pose")?;
    if !robot.is_cable_robot() {
        return super::legs::ik(&robot, &pose, a.json, &a.angles);
    }
    let r = kinematics::ik_report(&robot, &pose, a.angles.unit());
    warn(&r.warnings);
    let catenary = if a.catenary {
        Some(ik_catenary(&robot, &pose)?)
    } else {
        None
    };
    if a.json {
        match &catenary {
            Some(c) => json(&IkWithCatenary {
                report: &r,
                catenary: c,
            })?,
            None => json(&r)?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let u = r.angle_unit.name();
    println!(
        "{} at x,y,z {} m, roll,pitch,yaw {} {u}",
        robot.name,
        list(&r.pose[..3], 6),
        list(&r.pose[3..], 6)
    );
    let mut header = vec![
        "cable".to_string(),
        "length [m]".into(),
        "direction d".into(),
        format!("θz [{u}]"),
        format!("θx [{u}]"),
        format!("θy [{u}]"),
    ];
    let pulleys = r
        .swivel_angles
        .as_ref()
        .zip(r.wrap_angles.as_ref())
        .zip(r.tangent_points.as_ref());
    if pulleys.is_some() {
        header.extend([
            format!("swivel γ [{u}]"),
            format!("wrap β [{u}]"),
            "leaves wheel at [m]".into(),
        ]);
    }
    let mut t = Table::new(&header);
    for (k, c) in robot.cables.iter().enumerate() {
        let mut row = vec![
            c.name.clone(),
            num(r.lengths[k], 6),
            list(&r.directions[k], 4),
            num(r.theta_z[k], 4),
            num(r.theta_x[k], 4),
            num(r.theta_y[k], 4),
        ];
        if let Some(((swivel, wrap), tangent)) = pulleys {
            match (swivel[k], wrap[k], tangent[k]) {
                (Some(g), Some(b), Some(p)) => row.extend([num(g, 4), num(b, 4), list(&p, 4)]),
                _ => row.extend(["-".to_string(), "-".into(), "(point exit)".into()]),
            }
        }
        t.row(row);
    }
    t.print();
    if pulleys.is_some() {
        println!(
            "over swivel pulleys: lengths run from the swivel point (wrap included), directions \
             and θ along the free segment from where the cable leaves the wheel"
        );
    }
    if let Some(c) = &catenary {
        print_ik_catenary(&robot, c);
    }
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------------- fk

/// Cable lengths from `option`, checked against `robot` by core's rule.
fn check_lengths(values: &[f64], option: &str, robot: &Robot) -> Result<()> {
    kinematics::check_lengths(robot, values).map_err(|e| anyhow::anyhow!("{option}: {e}"))
}

#[derive(Args, Debug)]
pub struct FkArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Measured cable lengths l1,…,lm in m, in the robot file's cable order.
    #[arg(long, value_name = "L1,…,LM", value_parser = number_list, allow_hyphen_values = true)]
    pub lengths: Numbers,
    /// Starting pose for the least-squares method (default: the robot's home pose).
    #[arg(long, value_name = "POSE", value_parser = pose_list, allow_hyphen_values = true)]
    pub guess: Option<Numbers>,
    /// The solver and its tolerance (core's forward-kinematics request).
    #[command(flatten)]
    pub solver: super::options::RequestArgs<cdpr_core::kinematics::FkRequest>,
    #[command(flatten)]
    pub angles: AngleArg,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn fk(a: FkArgs) -> Result<ExitCode> {
    let robot = a.robot.load_cable_robot("fk")?;
    check_lengths(&a.lengths, "--lengths", &robot)?;
    let options = FkOptions {
        guess: a
            .guess
            .as_ref()
            .map(|g| a.angles.pose_on(&robot, g, "--guess"))
            .transpose()?,
        max_residual: a.solver.request.max_residual,
        ..FkOptions::default()
    };
    let r = kinematics::fk_report(
        &robot,
        &a.lengths,
        a.solver.request.method,
        &options,
        a.angles.unit(),
    )
    .with_context(|| format!("forward kinematics of {}", robot.name))?;
    warn(&r.warnings);
    if a.json {
        json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (p, u) = (r.pose, r.angle_unit.name());
    println!("pose      x {:.6} y {:.6} z {:.6} m", p[0], p[1], p[2]);
    println!(
        "          roll {:.6} pitch {:.6} yaw {:.6} {u}",
        p[3], p[4], p[5]
    );
    println!("residual  {:.3e} m (max length error)", r.residual);
    let method = match r.method {
        FkMethod::Lm => "lm (Levenberg–Marquardt on all lengths)",
        FkMethod::Sphere => "sphere (seed 003's three spheres, refined on all lengths)",
    };
    println!("method    {method}, {} iterations", r.iterations);
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------- tensions

use super::options::{help_of, number_of};
use cdpr_core::statics::solutions::{F_MAX, F_MIN};

#[derive(Args, Debug, Clone, Copy)]
pub struct BoundsArg {
    #[arg(long, value_name = "N", value_parser = number_of(&F_MIN), allow_negative_numbers = true,
          help = help_of(&F_MIN))]
    pub f_min: Option<f64>,
    #[arg(long, value_name = "N", value_parser = number_of(&F_MAX), allow_negative_numbers = true,
          help = help_of(&F_MAX))]
    pub f_max: Option<f64>,
}

impl BoundsArg {
    pub fn bounds(&self, robot: &Robot) -> Result<TensionBounds> {
        Ok(statics::tension_bounds(robot, self.f_min, self.f_max)?)
    }
}

#[derive(Args, Debug)]
pub struct TensionsArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Platform pose x,y,z[,roll,pitch,yaw] (m, rad; positions within ±1000 m, angles
    /// within ±360).
    #[arg(long, value_name = "POSE", value_parser = pose_list, allow_hyphen_values = true)]
    pub pose: Numbers,
    #[command(flatten)]
    pub bounds: BoundsArg,
    #[command(flatten)]
    pub angles: AngleArg,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn tensions(a: TensionsArgs) -> Result<ExitCode> {
    let robot = a.robot.load_cable_robot("tensions")?;
    let bounds = a.bounds.bounds(&robot)?;
    let pose = a.angles.pose_on(&robot, &a.pose, "--pose")?;
    let r = statics::tensions_report(&robot, &pose, bounds, a.angles.unit());
    warn(&r.warnings);
    if a.json {
        json(&r)?;
    } else {
        match (&r.exit_tensions, &r.sags) {
            (Some(exit), Some(sags)) => {
                // Cables with mass: platform-end and exit-end (pulley side) tensions, sag.
                let mut t = Table::new(&[
                    "cable",
                    "tension at platform [N]",
                    "at exit/pulley [N]",
                    "sag [mm]",
                ]);
                for (k, c) in robot.cables.iter().enumerate() {
                    t.row(vec![
                        c.name.clone(),
                        num(r.tensions[k], 4),
                        num(exit[k], 4),
                        num(sags[k] * 1e3, 3),
                    ]);
                }
                t.print();
            }
            _ => {
                let mut t = Table::new(&["cable", "tension [N]"]);
                for (c, f) in robot.cables.iter().zip(&r.tensions) {
                    t.row(vec![c.name.clone(), num(*f, 4)]);
                }
                t.print();
            }
        }
        println!(
            "bounds [{}, {}] N, mass {} kg, ‖W f + w_g‖ = {}",
            r.f_min,
            r.f_max,
            r.mass,
            statics::residual_text(r.residual_force, r.residual_moment)
        );
    }
    match r.verdict() {
        None => Ok(ExitCode::SUCCESS),
        Some(verdict) => {
            eprintln!("{verdict}");
            Ok(ExitCode::from(2))
        }
    }
}

// ------------------------------------------------------------------------- equilibrium

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("rest").required(true).args(["rest_lengths", "sag_at", "pretensioned_at"])))]
pub struct EquilibriumArgs {
    #[command(flatten)]
    pub robot: RobotArg,
    /// Rest (unstretched) lengths L0 in m, one per cable.
    #[arg(long, value_name = "L1,…,LM", value_parser = number_list, allow_hyphen_values = true)]
    pub rest_lengths: Option<Numbers>,
    /// Rest lengths equal to the IK lengths at POSE: shows how far the platform sags.
    #[arg(long, value_name = "POSE", value_parser = pose_list, allow_hyphen_values = true)]
    pub sag_at: Option<Numbers>,
    /// Rest lengths L0 = IK(POSE) − f*/k with f* the tension distribution at POSE: the
    /// platform settles exactly on POSE.
    #[arg(long, value_name = "POSE", value_parser = pose_list, allow_hyphen_values = true)]
    pub pretensioned_at: Option<Numbers>,
    /// Starting pose of the search (default: where the unstretched cables reach).
    #[arg(long, value_name = "POSE", value_parser = pose_list, allow_hyphen_values = true)]
    pub guess: Option<Numbers>,
    #[command(flatten)]
    pub bounds: BoundsArg,
    #[command(flatten)]
    pub angles: AngleArg,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn equilibrium(a: EquilibriumArgs) -> Result<ExitCode> {
    let robot = a.robot.load_cable_robot("equilibrium")?;
    let rest = if let Some(l0) = &a.rest_lengths {
        check_lengths(l0, "--rest-lengths", &robot)?;
        RestLengths::Given(l0.0.clone())
    } else if let Some(p) = &a.sag_at {
        RestLengths::SagAt(a.angles.pose_on(&robot, p, "--sag-at")?)
    } else if let Some(p) = &a.pretensioned_at {
        RestLengths::PretensionedAt(
            a.angles.pose_on(&robot, p, "--pretensioned-at")?,
            a.bounds.bounds(&robot)?,
        )
    } else {
        bail!("one of --rest-lengths, --sag-at, --pretensioned-at is needed")
    };
    let guess = a
        .guess
        .as_ref()
        .map(|g| a.angles.pose_on(&robot, g, "--guess"))
        .transpose()?;
    let r = statics::equilibrium_report(&robot, &rest, guess, a.angles.unit())
        .with_context(|| format!("elastic equilibrium of {}", robot.name))?;
    warn(&r.warnings);
    if a.json {
        json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (p, u) = (r.pose, a.angles.unit().name());
    println!(
        "equilibrium x {:.7} y {:.7} z {:.7} m, roll {:.6} pitch {:.6} yaw {:.6} {u}",
        p[0], p[1], p[2], p[3], p[4], p[5]
    );
    if let Some(d) = r.displacement {
        println!(
            "from target dx {:+.4} dy {:+.4} dz {:+.4} mm, |d| {:.4} mm",
            d[0] * 1e3,
            d[1] * 1e3,
            d[2] * 1e3,
            (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() * 1e3
        );
    }
    if let (Some(exit), Some(sags)) = (&r.exit_tensions, &r.sags) {
        let mut t = Table::new(&[
            "cable",
            "rest length [m]",
            "tension at platform [N]",
            "at exit/pulley [N]",
            "sag [mm]",
        ]);
        for (k, c) in robot.cables.iter().enumerate() {
            t.row(vec![
                c.name.clone(),
                num(r.rest_lengths[k], 7),
                num(r.tensions[k], 4),
                num(exit[k], 4),
                num(sags[k] * 1e3, 3),
            ]);
        }
        t.print();
    } else {
        let mut t = Table::new(&["cable", "rest length [m]", "tension [N]"]);
        for ((c, l0), f) in robot.cables.iter().zip(&r.rest_lengths).zip(&r.tensions) {
            t.row(vec![c.name.clone(), num(*l0, 7), num(*f, 4)]);
        }
        t.print();
    }
    println!(
        "‖W f + w_g‖ = {}; {} Newton iterations",
        statics::residual_text(r.residual_force, r.residual_moment),
        r.iterations
    );
    Ok(ExitCode::SUCCESS)
}
