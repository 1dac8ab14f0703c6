//! The shadow against the virtual PLC in-process, stepped by hand (no sockets, no clock):
//! deterministic, so the figures are exact.

use super::*;
use crate::PlcSymbols;
use crate::fixtures::Buffer;
use crate::link::ControllerError;
use crate::link::{InProcessController, InProcessTransport, ShadowLink, WritePolicy};
use crate::server::memory::{self, PlcMemory};
use crate::server::{PlcCore, SymbolTable, Timing};
use cdpr_core::fixtures::{column, csv_rows, num, uvigo8};
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::run::{self as sim_run, RunOptions};
use cdpr_core::sim::{Command, ModelKind};
use cdpr_core::trajectory::{self, BuiltinOptions, Trajectory};
use nalgebra::Vector3;
use std::sync::Arc;
use std::time::Duration;

fn seed000(robot: &Robot, speed: f64) -> Trajectory {
    let options = BuiltinOptions {
        speed,
        dt: 0.002,
        ..BuiltinOptions::default()
    };
    trajectory::builtin(robot, "seed000", &options).expect("seed000")
}

fn plc(robot: &Robot, trajectory: Trajectory, hold_ms: u64) -> PlcCore {
    let memory = PlcMemory::new(SymbolTable::from_robot(robot).expect("table"));
    let timing = Timing {
        hold: Duration::from_millis(hold_ms),
        ..Timing::default()
    };
    PlcCore::new(robot, trajectory, memory, timing).expect("core")
}

fn link(core: &PlcCore, symbols: &PlcSymbols, policy: WritePolicy) -> InProcessController {
    ShadowLink::connect(
        InProcessTransport::new(Arc::clone(core.memory())),
        symbols,
        policy,
    )
    .expect("connects")
}

fn config(timing: CycleTiming, model: ModelKind) -> ShadowConfig {
    let mut c = ShadowConfig {
        timing,
        write: true,
        ..ShadowConfig::default()
    };
    c.sim.model = model;
    c
}

const FREE_2MS: CycleTiming = CycleTiming::Free {
    period: Duration::from_millis(2),
    plc_period: Duration::from_millis(10),
};
const LOCKSTEP_10MS: CycleTiming = CycleTiming::Lockstep {
    plc_period: Duration::from_millis(10),
};

fn shadow(core: &PlcCore, file: Option<Robot>, c: ShadowConfig) -> Shadow<InProcessController> {
    let policy = if c.write {
        WritePolicy::AllowListed
    } else {
        WritePolicy::ReadOnly
    };
    let symbols = file
        .as_ref()
        .map_or_else(PlcSymbols::defaults, |r| PlcSymbols::of(r).expect("[plc]"));
    Shadow::new(link(core, &symbols, policy), file, c).expect("shadow starts")
}

/// A PLC playing seed000 at 0.4 m/s after a 20 ms hold, and a shadow of it with uvigo8's
/// file, `timing` and `model`, recording into the returned buffer.
fn seed000_recorded(
    robot: &Robot,
    timing: CycleTiming,
    model: ModelKind,
) -> (PlcCore, Shadow<InProcessController>, Buffer) {
    let core = plc(robot, seed000(robot, 0.4), 20);
    let mut s = shadow(&core, Some(robot.clone()), config(timing, model));
    let buffer = Buffer::default();
    s.record_to(
        Recorder::new(Box::new(buffer.clone()), robot, Actuals::default()).expect("record"),
    );
    (core, s, buffer)
}

/// Header and rows of a record.
fn parse(buffer: &Buffer) -> (Vec<String>, Vec<Vec<String>>) {
    let bytes = buffer.0.lock().expect("buffer").clone();
    csv_rows(bytes.as_slice())
}

fn external_writes(core: &PlcCore) -> u64 {
    let m = core.memory();
    (0..m.table().symbols().len())
        .map(|k| m.external_writes(k))
        .sum()
}

fn reals(core: &PlcCore, name: &str) -> Vec<f64> {
    let r = core.memory().table().lookup_str(name).expect(name);
    core.memory()
        .with_image(|img| memory::get_reals(img, &r))
        .expect("reals")
}

#[test]
fn the_template_model_comes_from_the_controllers_geometry_and_rests_in_equilibrium() {
    let robot = uvigo8();
    let core = plc(&robot, Trajectory::default(), 200);
    let s = shadow(&core, None, config(FREE_2MS, ModelKind::ELASTIC));
    let model = s.robot();
    assert_eq!(model.cables.len(), robot.cables.len());
    for (ours, theirs) in model.cables.iter().zip(&robot.cables) {
        assert!((ours.frame_anchor - theirs.frame_anchor).norm() < 1e-12);
        assert!((ours.platform_anchor - theirs.platform_anchor).norm() < 1e-12);
        assert_eq!(
            ours.stiffness,
            cdpr_core::robot::Stiffness::Constant(20_000.0)
        );
        assert_eq!(ours.damping, 50.0);
    }
    // Seed 000's cuboid: 1 kg over the platform anchors (0.2 × 0.2 m, z from 0.175 to 0.330).
    assert_eq!(model.platform.mass, 1.0);
    assert!((model.platform.size - Vector3::new(0.2, 0.2, 0.155)).norm() < 1e-12);
    assert!((model.platform.com - Vector3::new(0.0, 0.0, 0.2525)).norm() < 1e-12);
    assert_eq!(model.dof, cdpr_core::robot::Dof::Six);
    let start = s.start_report();
    assert!(!start.from_file && start.anchors.is_empty());
    assert!(start.consistency.fk_position_offset.expect("fk") < 1e-9);
    assert!(start.consistency.angle_mismatch < 1e-9);
    // Independent check of the start: elastic tensions k·max(0, L − L0) at the start pose
    // balance gravity (statics, not the simulator).
    let ik = kinematics::inverse(model, &start.start_pose);
    let mut wrench =
        nalgebra::Vector6::<f64>::from(model.gravity_wrench(start.start_pose.rotation().matrix()));
    assert_eq!(ik.cables.len(), model.cables.len());
    assert_eq!(start.commanded_lengths.len(), model.cables.len());
    for ((g, l0), c) in ik
        .cables
        .iter()
        .zip(&start.commanded_lengths)
        .zip(&model.cables)
    {
        let f = c.stiffness_at(*l0) * (g.length - l0).max(0.0);
        let m = g.moment_arm();
        wrench +=
            nalgebra::Vector6::new(g.direction.x, g.direction.y, g.direction.z, m.x, m.y, m.z) * f;
    }
    assert!(wrench.norm() < 1e-6, "residual wrench {wrench}");
    // It sags below the controller's pose (uncompensated lengths), by about a millimetre.
    assert!(start.start_pose.position.z < start.tcp_pose.position.z);
    assert!((1e-4..5e-3).contains(&start.sag), "sag {}", start.sag);
}

#[test]
fn a_robot_file_is_compared_anchor_by_anchor_and_the_controller_wins() {
    let robot = uvigo8();
    let core = plc(&robot, Trajectory::default(), 200);
    let mut file = robot.clone();
    file.cables[2].frame_anchor.x += 0.005;
    file.cables[6].platform_anchor.z -= 0.002;
    let s = shadow(&core, Some(file), config(FREE_2MS, ModelKind::ELASTIC));
    let d = &s.start_report().anchors;
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!((d[0].cable, d[0].anchor), (3, AnchorKind::Frame));
    assert_eq!(d[0].name, "upper2");
    assert!((d[0].distance - 0.005).abs() < 1e-12);
    assert_eq!((d[1].cable, d[1].anchor), (7, AnchorKind::Platform));
    assert!((d[1].distance - 0.002).abs() < 1e-12);
    assert_eq!(
        s.robot().cables[2].frame_anchor,
        robot.cables[2].frame_anchor
    );
    assert!(s.start_report().from_file);

    let silva4 = cdpr_core::fixtures::robot("silva4");
    let e = Shadow::new(
        link(&core, &PlcSymbols::defaults(), WritePolicy::ReadOnly),
        Some(silva4),
        config(FREE_2MS, ModelKind::ELASTIC),
    )
    .err()
    .expect("4-cable file, 8-cable controller");
    assert!(
        e.to_string().contains("4 cables") && e.to_string().contains("8 frame"),
        "{e}"
    );
}

#[test]
fn lockstep_shadow_answers_every_plc_cycle_in_one_cycle() {
    // Seed 003's reaction time, through the real shadow loop: the PLC (10 ms task, 2 ms NC)
    // plays seed000 at 0.4 m/s; the shadow steps 10 ms of physics per counter change.
    let robot = uvigo8();
    let mut core = plc(&robot, seed000(&robot, 0.4), 200);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(LOCKSTEP_10MS, ModelKind::CHAIN),
    );
    let t0 = Instant::now();
    for tick in 1..=1000u32 {
        core.tick();
        let report = s
            .cycle_at(t0 + Duration::from_millis(2 * u64::from(tick)))
            .expect("cycle");
        let expect = if tick % 5 == 0 {
            CycleStatus::Exchanged
        } else {
            CycleStatus::Polled
        };
        assert_eq!(report.status, expect, "tick {tick}");
    }
    let stats = core.stats();
    assert_eq!(stats.plc_cycles, 200);
    assert_eq!(stats.reaction.samples(), 199);
    assert_eq!(stats.reaction.max, Some(1), "every echo one cycle after");
    // Seed 003's literal figure: command starts moving → shadow's lengths move.
    assert_eq!(stats.motion_delay_cycles, Some(1));
    let sum = s.summary();
    assert_eq!((sum.cycles, sum.polls, sum.steps), (200, 800, 2000));
    assert!((s.time() - 2.0).abs() < 1e-9);
    assert_eq!(sum.reaction_cycles, Some(1), "the PLC's own diagnostic");
    assert_eq!(sum.reaction_max_cycles, Some(1));
    assert_eq!((sum.rejected, sum.gaps, sum.missed_plc_cycles), (0, 0, 0));
    // Each cycle's physics ends on the newest sample: none comes after the read passed it.
    assert_eq!((sum.late_samples, sum.late_max_s), (0, 0.0));
    // What the PLC holds is the shadow's state, in mm and degrees.
    let pose = reals(&core, "GVL_Shadow.aShadowPose");
    let ours = s.state().pose.to_array();
    for k in 0..3 {
        assert!((pose[k] - ours[k] * 1e3).abs() < 1e-9);
        assert!((pose[k + 3] - ours[k + 3].to_degrees()).abs() < 1e-9);
    }
    let lengths = reals(&core, "GVL_Shadow.aShadowLengths");
    assert_eq!(lengths.len(), s.state().lengths.len());
    for (mm, m) in lengths.iter().zip(&s.state().lengths) {
        assert!((mm - m * 1e3).abs() < 1e-9);
    }
}

#[test]
fn free_running_shadow_matches_a_simulation_of_the_same_trajectory() {
    // The fair comparison: same robot, model, winches, dt and start. The shadow reads the
    // PLC's NC set point (IK of the trajectory through the limiter, which passes them
    // unchanged within uvigo8's limits) at each new value of the 10 ms cycle counter, places
    // it on the PLC's time line and reads the curve through those samples two PLC periods and
    // one 2 ms poll late (the command latency); `sim::run` takes IK of the trajectory at every
    // 1 ms step. So the shadow at t is `sim::run` at t − hold − 22 ms, the commands differing
    // by the curve's error between 10 ms knots only — none where the acceleration is
    // constant, at a trapezoid's corner |Δl̈|·P²/8 ≤ 6 m/s² · (10 ms)²/8 = 75 µm on one
    // segment, which the platform's motion averages down: 50 µm is the bound asserted.
    let robot = uvigo8();
    let trajectory = seed000(&robot, 0.4);
    let hold_ms = 20;
    let mut core = plc(&robot, trajectory.clone(), hold_ms);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(FREE_2MS, ModelKind::CHAIN),
    );
    let delay_ms = (s.command_latency() * 1e3).round() as i64;
    assert_eq!(delay_ms, 22, "two 10 ms periods and the 2 ms cycle");
    let buffer = Buffer::default();
    s.record_to(
        Recorder::new(Box::new(buffer.clone()), &robot, Actuals::default()).expect("record"),
    );
    let origin = s.clock_origin();
    let ticks = ((trajectory.duration() * 1e3) as u64 + hold_ms) / 2 + 50;
    for tick in 1..=ticks {
        core.tick();
        let r = s
            .cycle_at(origin + Duration::from_millis(2 * tick))
            .expect("cycle");
        assert_eq!(
            (r.status, r.steps, r.rejected),
            (CycleStatus::Exchanged, 2, false),
            "tick {tick}, time {}",
            s.time()
        );
    }
    s.finish().expect("flush");
    let options = RunOptions::new(s.config().sim.clone());
    let sim = sim_run::run(&robot, &trajectory, &options, &mut |_| {}).expect("runs");
    let (header, rows) = parse(&buffer);
    let (t, x) = (column(&header, "t"), column(&header, "x"));
    let mut worst: f64 = 0.0;
    let mut compared = 0;
    for row in &rows {
        let step = (num(row, t) * 1e3).round() as i64 - hold_ms as i64 - delay_ms;
        let Some(rec) = usize::try_from(step).ok().and_then(|j| sim.records.get(j)) else {
            continue;
        };
        let ours = Vector3::new(num(row, x), num(row, x + 1), num(row, x + 2));
        worst = worst.max((ours - rec.state.pose.position).norm());
        compared += 1;
    }
    assert!(compared > 9000, "{compared} steps compared");
    eprintln!(
        "shadow vs sim::run over {compared} steps: max 3D {:.2} µm",
        worst * 1e6
    );
    assert!(worst < 5e-5, "max 3D difference {:.2} µm", worst * 1e6);

    // And the record replays exactly: the same commands through `Sim` give the same poses.
    let mut replay = Sim::at(
        s.robot(),
        s.config().sim.clone(),
        &s.start_report().tcp_pose,
    )
    .expect("sim");
    replay
        .settle(&Command::Lengths(
            s.start_report().commanded_lengths.clone(),
        ))
        .expect("settles");
    let cmd = column(&header, "length_cmd_1");
    for row in &rows {
        let command: Vec<f64> = (0..8).map(|k| num(row, cmd + 3 * k)).collect();
        replay
            .set_command(&Command::Lengths(command))
            .expect("command");
        replay.step().expect("steps");
        let p = replay.state().pose.position;
        assert_eq!(
            [p.x, p.y, p.z],
            [num(row, x), num(row, x + 1), num(row, x + 2)]
        );
    }
}

/// Roughness of a recorded column over the moving part: the largest |second difference| per
/// physics step (a staircase has one per step of the stair; a smooth ramp none).
fn roughness(header: &[String], rows: &[Vec<String>], name: &str) -> f64 {
    let c = column(header, name);
    let v: Vec<f64> = rows.iter().skip(100).map(|r| num(r, c)).collect();
    v.windows(3)
        .map(|w| (w[2] - 2.0 * w[1] + w[0]).abs())
        .fold(0.0, f64::max)
}

#[test]
fn free_running_commands_are_as_smooth_as_lockstep_under_poll_jitter() {
    // Issue 14: a free-running shadow sampled the commands on its own clock, so its physics
    // saw a staircase whenever the PLC published less often than it polled, and the tensions
    // rippled. The PLC (2 ms NC, 10 ms counter) plays seed000 at 0.4 m/s for 3 s; one shadow
    // in lockstep, one free-running whose 2 ms polls come up to 1.5 ms late (a desktop
    // scheduler). On the PLC's time line the free shadow's commands must be as smooth as
    // lockstep's: roughness (largest per-step second difference of a cable's command, and of
    // its tension) within a factor 1.5 — a staircase is hundreds of times rougher.
    let robot = uvigo8();
    let run = |timing: CycleTiming, jitter: bool| {
        let (mut core, mut s, buffer) = seed000_recorded(&robot, timing, ModelKind::CHAIN);
        let origin = s.clock_origin();
        let mut ticked = 0u64;
        for k in 1..=1500u64 {
            let late_us = if jitter { (k * 7919) % 1500 } else { 0 };
            let at = Duration::from_micros(2000 * k + late_us);
            while Duration::from_millis(2 * (ticked + 1)) <= at {
                core.tick();
                ticked += 1;
            }
            s.cycle_at(origin + at).expect("cycle");
        }
        s.finish().expect("flush");
        parse(&buffer)
    };
    let (lh, lr) = run(LOCKSTEP_10MS, false);
    let (fh, fr) = run(FREE_2MS, true);
    for k in [1, 5] {
        let name = format!("length_cmd_{k}");
        let (lock, free) = (roughness(&lh, &lr, &name), roughness(&fh, &fr, &name));
        let tension = format!("tension_{k}");
        eprintln!(
            "cable {k}: command roughness lockstep {:.3} µm, free {:.3} µm; tension roughness lockstep {:.3} N, free {:.3} N",
            lock * 1e6,
            free * 1e6,
            roughness(&lh, &lr, &tension),
            roughness(&fh, &fr, &tension)
        );
        assert!(lock > 0.0, "the commands move");
        assert!(
            free <= 1.5 * lock,
            "cable {k}: free {free:e} vs lockstep {lock:e}"
        );
        let (lock, free) = (roughness(&lh, &lr, &tension), roughness(&fh, &fr, &tension));
        assert!(
            free <= 1.5 * lock,
            "cable {k} tension: free {free} N vs lockstep {lock} N"
        );
    }
}

mod drives;
mod faults;
mod samples;
mod stalls;

/// uvigo8 with `[plc] interference` named (on the allow-list when `allowed`) and a ball on
/// cable upper0's free segment at the middle of seed000.
fn uvigo8_with_ball(allowed: bool) -> (Robot, Trajectory) {
    use cdpr_core::interference::segments;
    let robot = uvigo8();
    let trajectory = seed000(&robot, 0.4);
    let middle = trajectory.samples[trajectory.samples.len() / 2].pose;
    let (exit, anchor) = segments(&robot, &middle)[0];
    let centre = anchor + (exit - anchor) * 0.3;
    let mut text = cdpr_core::fixtures::robot_text("uvigo8").replace(
        "shadow_cycle = \"GVL_Shadow.nShadowCycle\"",
        "shadow_cycle = \"GVL_Shadow.nShadowCycle\"\ninterference = \"GVL_Shadow.bInterference\"",
    );
    if allowed {
        text = text.replace(
            "\"GVL_Shadow.nShadowCycle\"]",
            "\"GVL_Shadow.nShadowCycle\", \"GVL_Shadow.bInterference\"]",
        );
    }
    text.push_str(&format!(
        "\n[[obstacles]]\nname = \"ball\"\nshape = \"sphere\"\ncenter = [{}, {}, {}]\nradius = 0.02\n",
        centre.x, centre.y, centre.z
    ));
    let robot = cdpr_core::robot::parse_robot(&text, "uvigo8-ball.toml").expect("parses");
    (robot, trajectory)
}

#[test]
fn the_interference_flag_goes_true_while_a_cable_passes_the_ball_and_the_plc_reads_it() {
    let (robot, trajectory) = uvigo8_with_ball(true);
    let start = trajectory.samples[0].pose;
    assert!(cdpr_core::interference::check(&robot, &start, 0.01).is_clear());
    let mut core = plc(&robot, trajectory, 200);
    // Symbols watched beside the inputs (a test suite's conditions) come after the flag among
    // the link's symbols: the flag is still written where it belongs, and they read back what
    // was written.
    let symbols = PlcSymbols {
        watched: vec![
            "GVL_Shadow.bInterference".into(),
            "GVL_Shadow.nCycle".into(),
            "GVL_Shadow.aShadowTensions[1]".into(),
        ],
        ..PlcSymbols::of(&robot).expect("[plc]")
    };
    let mut s = Shadow::new(
        link(&core, &symbols, WritePolicy::AllowListed),
        Some(robot.clone()),
        config(LOCKSTEP_10MS, ModelKind::CHAIN),
    )
    .expect("shadow starts");
    let mut written: Option<(bool, f64)> = None;
    let flag = core
        .memory()
        .table()
        .lookup_str("GVL_Shadow.bInterference")
        .expect("declared");
    let read_flag = |core: &PlcCore| {
        core.memory()
            .read(flag.offset, 1)
            .map(|b| b[0] != 0)
            .expect("reads")
    };
    let t0 = Instant::now();
    let (mut seen_true, mut first_false) = (false, None);
    let (mut named, mut first_at) = (Vec::new(), None);
    for tick in 1..=4000u32 {
        core.tick();
        let report = s
            .cycle_at(t0 + Duration::from_millis(2 * u64::from(tick)))
            .expect("cycle");
        if report.status != CycleStatus::Exchanged {
            continue;
        }
        let on_plc = read_flag(&core);
        let watched = &s.last_inputs().watched;
        assert_eq!(watched[1], f64::from(s.last_inputs().cycle), "tick {tick}");
        if let Some((flag, tension)) = written {
            // Read at this cycle's start: what the exchange before wrote.
            assert_eq!(watched[0], f64::from(u8::from(flag)), "tick {tick}");
            assert_eq!(watched[2], tension, "tick {tick}");
        }
        written = Some((on_plc, reals(&core, "GVL_Shadow.aShadowTensions")[0]));
        let checked = s.interference().expect("checked every exchange");
        // The PLC holds what the shadow found at its pose this cycle.
        assert_eq!(on_plc, !checked.is_clear(), "tick {tick}");
        first_false.get_or_insert(!on_plc);
        if on_plc && !seen_true {
            seen_true = true;
            named = s.summary().interference;
            first_at = Some(s.time());
        }
    }
    assert_eq!(first_false, Some(true), "clear at the start");
    assert!(seen_true, "the flag went true");
    assert!(
        named
            .iter()
            .any(|n| n.starts_with("cable upper0 – obstacle ball")),
        "{named:?}"
    );
    assert!(s.stats().interference_cycles > 0);
    // The first exchange that interfered, as the PLC saw its flag go up, and what it was.
    let summary = s.summary();
    assert_eq!(summary.first_interference_s, first_at);
    assert_eq!(summary.first_interference, named);
}

#[test]
fn an_interference_flag_off_the_allow_list_is_refused() {
    let (robot, trajectory) = uvigo8_with_ball(false);
    let core = plc(&robot, trajectory, 200);
    let symbols = PlcSymbols::of(&robot).expect("[plc]");
    assert_eq!(
        symbols.interference.as_deref(),
        Some("GVL_Shadow.bInterference")
    );
    let e = Shadow::new(
        link(&core, &symbols, WritePolicy::AllowListed),
        Some(robot),
        config(LOCKSTEP_10MS, ModelKind::CHAIN),
    )
    .err()
    .expect("refused");
    assert!(e.to_string().contains("GVL_Shadow.bInterference"), "{e}");
}

#[test]
fn the_summary_gives_each_drive_its_peak_and_rms_torque_of_the_physics() {
    let robot = cdpr_core::fixtures::robot("uvigo8-drives");
    let mut core = plc(&robot, seed000(&robot, 0.4), 20);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(LOCKSTEP_10MS, ModelKind::ELASTIC),
    );
    let t0 = Instant::now();
    // By hand from the shadow's state after each exchange (lockstep: one exchange, its steps).
    let mut seen: Vec<Vec<f64>> = vec![Vec::new(); 8];
    for tick in 1..=300u32 {
        core.tick();
        let report = s
            .cycle_at(t0 + Duration::from_millis(10 * u64::from(tick)))
            .expect("cycle");
        if report.status == CycleStatus::Exchanged {
            for (k, tau) in s.state().motor_torques.iter().enumerate() {
                seen[k].push(*tau);
            }
        }
    }
    let summary = s.summary();
    assert_eq!(summary.drives.len(), 8);
    for (d, taus) in summary.drives.iter().zip(&seen) {
        let largest = taus.iter().fold(0.0_f64, |m, t| m.max(t.abs()));
        let smallest = taus.iter().fold(f64::INFINITY, |m, t| m.min(t.abs()));
        // Every step's torque counts, the exchanges' are a sample of them.
        assert!(d.peak_torque >= largest, "{d:?} vs {largest}");
        assert!(
            d.rms_torque >= smallest && d.rms_torque <= d.peak_torque,
            "{d:?}"
        );
        assert!((d.peak_percent - 100.0 * d.peak_torque / 0.5).abs() < 1e-9);
        assert_eq!(d.at_limit_s, 0.0);
    }
    // Without drives, no figures.
    let plain = uvigo8();
    let core = plc(&plain, seed000(&plain, 0.4), 20);
    let s = shadow(
        &core,
        Some(plain),
        config(LOCKSTEP_10MS, ModelKind::ELASTIC),
    );
    assert!(s.summary().drives.is_empty());
}
