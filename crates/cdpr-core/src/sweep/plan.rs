//! The runs of a spec, their seeds, and one run → one row.

use super::SweepError;
use super::parameters::ParamValues;
use super::spec::{Mode, Spec};
use crate::job::{Job, Sink};
use crate::recording::sidecar::Sidecar;
use crate::robot::{Robot, Stiffness};
use crate::run::{RunRequest, SimulationReport, Tracking};
use crate::trajectory;
use nalgebra::Vector3;
use std::time::Instant;

/// splitmix64 (Steele, Lea, Flood 2014; Vigna's reference code): a 64-bit state stepped by
/// the golden gamma and mixed. Small, fast, and good enough to seed draws per run.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) (53 bits).
    pub fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n (n ≥ 1).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n.saturating_sub(1))
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// The seed of run `index` of a sweep seeded `seed`: a function of these two numbers only.
pub fn run_seed(seed: u64, index: u64) -> u64 {
    let mut m = SplitMix64(seed);
    let mixed = m.next();
    SplitMix64(mixed ^ index.wrapping_mul(0xd6e8_feb8_6659_fd93)).next()
}

/// One run of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    /// Its number: the same whatever the shard, the threads or a resume.
    pub index: u64,
    /// Its seed ([`run_seed`] of the spec's seed and `index`).
    pub seed: u64,
    /// The robot and trajectory as written in the spec.
    pub robot: String,
    pub trajectory: String,
    /// Cruise speed, m/s.
    pub speed: f64,
    /// The swept parameters' values, in the spec's column order.
    pub parameters: Vec<(String, f64)>,
}

impl Spec {
    /// Every run the spec asks for, in index order (see the module's docs for the order).
    pub fn runs(&self) -> Result<Vec<RunPlan>, SweepError> {
        let count = self.count()?;
        (0..count).map(|index| Ok(self.plan(index))).collect()
    }

    /// Run `index` (< [`Spec::count`]).
    pub fn plan(&self, index: u64) -> RunPlan {
        let seed = run_seed(self.seed, index);
        match self.mode {
            Mode::Grid => {
                // Mixed radix, the last dimension fastest.
                let dims = self.dimensions();
                let mut digits = vec![0usize; dims.len()];
                let mut rest = index;
                for (k, (_, n)) in dims.iter().enumerate().rev() {
                    let n = (*n).max(1) as u64;
                    digits[k] = (rest % n) as usize;
                    rest /= n;
                }
                let parameters = self
                    .parameters
                    .iter()
                    .zip(&digits[3..])
                    .map(|((p, values), &d)| {
                        let v = match values {
                            ParamValues::List(v) => v.get(d).copied().unwrap_or(f64::NAN),
                            ParamValues::Uniform { min, .. } => *min,
                        };
                        (p.name.to_string(), v)
                    })
                    .collect();
                RunPlan {
                    index,
                    seed,
                    robot: self.robots[digits[0]].0.clone(),
                    trajectory: self.trajectories[digits[1]].0.clone(),
                    speed: self.speeds[digits[2]],
                    parameters,
                }
            }
            Mode::Random { .. } => {
                let mut rng = SplitMix64(seed);
                let robot = self.robots[rng.below(self.robots.len())].0.clone();
                let trajectory = self.trajectories[rng.below(self.trajectories.len())]
                    .0
                    .clone();
                let speed = self.speeds[rng.below(self.speeds.len())];
                let parameters = self
                    .parameters
                    .iter()
                    .map(|(p, values)| {
                        let v = match values {
                            ParamValues::List(v) => v[rng.below(v.len())],
                            ParamValues::Uniform { min, max } => {
                                (min + (max - min) * rng.uniform()).min(*max)
                            }
                        };
                        (p.name.to_string(), v)
                    })
                    .collect();
                RunPlan {
                    index,
                    seed,
                    robot,
                    trajectory,
                    speed,
                    parameters,
                }
            }
        }
    }
}

/// The metric columns of a row, after `status` and `error`. Distances in m, times in s,
/// tensions in N; the values of `cdpr simulate --json` of the same run (`rms_x` is its
/// `rms[0]`, …; empty for a platform judged in angles).
pub const METRIC_COLUMNS: [&str; 14] = [
    "steps",
    "simulated_s",
    "wall_s",
    "rms_3d",
    "rms_x",
    "rms_y",
    "rms_z",
    "max_3d",
    "frechet",
    "lag_s",
    "tension_min",
    "tension_max",
    "low_tension_cables",
    "warnings",
];

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Int(u64),
    Num(f64),
    Text(String),
    /// No value (a metric a failed or angle-judged run does not have).
    Empty,
}

impl std::fmt::Display for Cell {
    /// Numbers in Rust's shortest round-trip form (read back bit for bit); text on one line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Int(i) => write!(f, "{i}"),
            Cell::Num(x) => write!(f, "{x}"),
            Cell::Text(s) => f.write_str(&s.replace(['\n', '\r'], " ")),
            Cell::Empty => Ok(()),
        }
    }
}

/// The result of one run: cells in [`Spec::columns`] order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub index: u64,
    pub ok: bool,
    pub cells: Vec<Cell>,
}

impl Row {
    /// The cells as text, as written in the CSV.
    pub fn to_strings(&self) -> Vec<String> {
        self.cells.iter().map(|c| c.to_string()).collect()
    }
}

/// The robot of `plan`: the spec's with the plan's parameters applied.
fn robot_for(spec: &Spec, plan: &RunPlan) -> Result<Robot, String> {
    let base = spec
        .robots
        .iter()
        .find(|(n, _)| *n == plan.robot)
        .map(|(_, r)| r)
        .ok_or_else(|| format!("robot `{}` is not in the spec", plan.robot))?;
    let mut robot = base.clone();
    for (name, v) in &plan.parameters {
        let v = *v;
        match name.as_str() {
            "stiffness_scale" => {
                for c in &mut robot.cables {
                    c.stiffness = match c.stiffness {
                        Stiffness::Constant(k) => Stiffness::Constant(k * v),
                        Stiffness::Ea(ea) => Stiffness::Ea(ea * v),
                    };
                }
            }
            "damping_scale" => robot.cables.iter_mut().for_each(|c| c.damping *= v),
            "payload" => {
                if v != 0.0 {
                    robot = robot.with_mass(robot.platform.mass + v);
                }
            }
            "winch_speed_scale" => robot.winch.max_velocity *= v,
            "winch_accel_scale" => {
                robot.winch.max_acceleration *= v;
                robot.winch.max_jerk *= v;
            }
            // Applied below (after every other change) or to the run options.
            "anchor_offset" | "kp" | "kd" => {}
            other => return Err(format!("unknown parameter `{other}`")),
        }
    }
    if let Some(sigma) = param(plan, "anchor_offset")
        && sigma > 0.0
    {
        // Its own stream, so that the offsets do not depend on the random mode's draws.
        let mut rng = SplitMix64(plan.seed ^ 0x5851_f42d_4c95_7f2d);
        let frame: Vec<Vector3<f64>> = robot
            .cables
            .iter()
            .map(|c| c.frame_anchor + Vector3::from_fn(|_, _| sigma * rng.normal()))
            .collect();
        let platform: Vec<Vector3<f64>> = robot.cables.iter().map(|c| c.platform_anchor).collect();
        robot = robot
            .with_geometry(&frame, &platform)
            .map_err(|e| format!("offset anchors: {e}"))?;
    }
    Ok(robot)
}

fn param(plan: &RunPlan, name: &str) -> Option<f64> {
    plan.parameters
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| *v)
}

/// The request of `plan`: the spec's run options at the plan's speed, its gains if swept.
fn request(spec: &Spec, plan: &RunPlan) -> RunRequest {
    RunRequest {
        speed: plan.speed,
        kp: param(plan, "kp").unwrap_or(spec.run.kp),
        kd: param(plan, "kd").unwrap_or(spec.run.kd),
        ..spec.run.clone()
    }
}

/// The outcome of a run in numbers: the report and why it failed (None: it did not).
/// The file a run's steps are recorded in under `dir` (`cdpr sweep --record-dir`): named by
/// the run's index, which is the same whatever the shard, the threads or a resume.
pub fn record_path(dir: &std::path::Path, plan: &RunPlan) -> std::path::PathBuf {
    dir.join(format!("run-{:06}.mcap", plan.index))
}

fn simulate(
    spec: &Spec,
    plan: &RunPlan,
    record_dir: Option<&std::path::Path>,
) -> Result<(SimulationReport, Option<String>), String> {
    let robot = robot_for(spec, plan)?;
    let source = spec
        .trajectories
        .iter()
        .find(|(n, _)| *n == plan.trajectory)
        .map(|(_, resolved)| resolved.as_str())
        .ok_or_else(|| format!("trajectory `{}` is not in the spec", plan.trajectory))?;
    let request = request(spec, plan);
    let traj = trajectory::load(source, &robot, &request.builtin_options())
        .map_err(|e| format!("loading the trajectory: {e}"))?;
    let job = Job::with(&request, robot, traj).map_err(|e| crate::text::error_chain(&e))?;
    // Its own file per run (a recorder per run, on its own thread: runs never mix).
    let path = record_dir.map(|dir| record_path(dir, plan));
    let sink = match &path {
        Some(path) => {
            let mut description = format!(
                "cdpr sweep: spec {}, run {}: robot {}, trajectory {}, speed {}",
                spec.origin, plan.index, plan.robot, plan.trajectory, plan.speed
            );
            for (name, value) in &plan.parameters {
                description.push_str(&format!(", {name} {value}"));
            }
            Sink::File {
                path,
                meta: Sidecar::new(&description),
            }
        }
        None => Sink::None,
    };
    let r = job
        .run(sink, &mut |_| {}, None)
        .map_err(|e| crate::text::error_chain(&e))?;
    let failure = if let Some(e) = &r.error {
        Some(format!("the run stopped early: {e}"))
    } else {
        r.escape.as_ref().map(|e| e.message())
    };
    Ok((r, failure))
}

/// Runs `plan` and summarises it as a row. Never panics: whatever goes wrong (a robot the
/// parameters make invalid, a blow-up, a panic in the physics) is a row with status
/// `error` and the message, the metrics of what ran where there are some.
pub fn run_one(spec: &Spec, plan: &RunPlan) -> Row {
    run_one_recorded(spec, plan, None)
}

/// [`run_one`], its steps recorded in [`record_path`] under `record_dir` when given (a
/// recording that cannot be written fails the run, with the reason).
pub fn run_one_recorded(spec: &Spec, plan: &RunPlan, record_dir: Option<&std::path::Path>) -> Row {
    let started = Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        simulate(spec, plan, record_dir)
    }))
    .unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("(no message)");
        Err(format!("the run panicked: {message}"))
    });
    let wall_s = started.elapsed().as_secs_f64();

    let mut cells = vec![
        Cell::Int(plan.index),
        Cell::Int(plan.seed),
        Cell::Text(plan.robot.clone()),
        Cell::Text(plan.trajectory.clone()),
        Cell::Num(plan.speed),
    ];
    cells.extend(plan.parameters.iter().map(|(_, v)| Cell::Num(*v)));
    let (report, failure) = match outcome {
        Ok((r, failure)) => (Some(r), failure),
        Err(e) => (None, Some(e)),
    };
    let ok = failure.is_none();
    cells.push(Cell::Text(if ok { "ok" } else { "error" }.into()));
    cells.push(Cell::Text(failure.unwrap_or_default()));
    let num = |x: Option<f64>| x.map_or(Cell::Empty, Cell::Num);
    match report {
        None => {
            cells.extend([Cell::Empty, Cell::Empty, Cell::Num(wall_s)]);
            cells.extend((3..METRIC_COLUMNS.len()).map(|_| Cell::Empty));
        }
        Some(r) => {
            let m = match &r.tracking {
                Tracking::Metrics(c) => Some((&c.total, c.lag_s)),
                _ => None,
            };
            cells.extend([
                Cell::Int(r.steps),
                num(r.simulated_s),
                Cell::Num(wall_s),
                num(m.map(|m| m.0.rms_3d)),
                num(m.map(|m| m.0.rms[0])),
                num(m.map(|m| m.0.rms[1])),
                num(m.map(|m| m.0.rms[2])),
                num(m.map(|m| m.0.max_3d)),
                num(m.map(|m| m.0.frechet)),
                num(m.map(|m| m.1)),
                num(r.tension_min),
                num(r.tension_max),
                Cell::Int(r.low_tension.len() as u64),
                Cell::Text(r.warnings.join(" | ")),
            ]);
        }
    }
    Row {
        index: plan.index,
        ok,
        cells,
    }
}
