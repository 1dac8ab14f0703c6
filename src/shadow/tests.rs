//! The shadow against the virtual PLC in-process, stepped by hand (no sockets, no clock):
//! deterministic, so the figures are exact.

use super::*;
use crate::plc::memory::{self, PlcMemory};
use crate::plc::{
    InProcessController, InProcessTransport, PlcCore, ShadowLink, SymbolTable, Timing, WritePolicy,
};
use crate::robot::PlcSymbols;
use crate::sim::run::{self as sim_run, RunOptions};
use crate::trajectory::{self, BuiltinOptions, Trajectory};
use nalgebra::Vector3;
use std::io::Write;
use std::sync::{Arc, Mutex};

fn uvigo8() -> Robot {
    Robot::builtin("uvigo8").expect("shipped").expect("parses")
}

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
        .map_or_else(PlcSymbols::defaults, |r| r.plc.clone());
    Shadow::new(link(core, &symbols, policy), file, c).expect("shadow starts")
}

/// A record kept in memory.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("buffer").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Header and rows of a record.
fn parse(buffer: &Buffer) -> (Vec<String>, Vec<Vec<String>>) {
    let bytes = buffer.0.lock().expect("buffer").clone();
    let mut r = csv::Reader::from_reader(bytes.as_slice());
    let header = r
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let rows = r
        .records()
        .map(|row| row.expect("row").iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn column(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).expect(name)
}

fn num(row: &[String], k: usize) -> f64 {
    row[k].parse().expect("number")
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
    let s = shadow(&core, None, config(FREE_2MS, ModelKind::Elastic));
    let model = s.robot();
    for (ours, theirs) in model.cables.iter().zip(&robot.cables) {
        assert!((ours.frame_anchor - theirs.frame_anchor).norm() < 1e-12);
        assert!((ours.platform_anchor - theirs.platform_anchor).norm() < 1e-12);
        assert_eq!(ours.stiffness, crate::robot::Stiffness::Constant(20_000.0));
        assert_eq!(ours.damping, 50.0);
    }
    // Seed 000's cuboid: 1 kg over the platform anchors (0.2 × 0.2 m, z from 0.175 to 0.330).
    assert_eq!(model.platform.mass, 1.0);
    assert!((model.platform.size - Vector3::new(0.2, 0.2, 0.155)).norm() < 1e-12);
    assert!((model.platform.com - Vector3::new(0.0, 0.0, 0.2525)).norm() < 1e-12);
    assert_eq!(model.dof, crate::robot::Dof::Six);
    let start = s.start_report();
    assert!(!start.from_file && start.anchors.is_empty());
    assert!(start.consistency.fk_position_offset.expect("fk") < 1e-9);
    assert!(start.consistency.angle_mismatch < 1e-9);
    // Independent check of the start: elastic tensions k·max(0, L − L0) at the start pose
    // balance gravity (statics, not the simulator).
    let ik = kinematics::inverse(model, &start.start_pose);
    let mut wrench =
        nalgebra::Vector6::<f64>::from(model.gravity_wrench(start.start_pose.rotation().matrix()));
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
    let s = shadow(&core, Some(file), config(FREE_2MS, ModelKind::Elastic));
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

    let silva4 = Robot::builtin("silva4").expect("shipped").expect("parses");
    let e = Shadow::new(
        link(&core, &robot.plc, WritePolicy::ReadOnly),
        Some(silva4),
        config(FREE_2MS, ModelKind::Elastic),
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
        config(LOCKSTEP_10MS, ModelKind::Chain),
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
    // What the PLC holds is the shadow's state, in mm and degrees.
    let pose = reals(&core, "GVL_Shadow.aShadowPose");
    let ours = s.state().pose.to_array();
    for k in 0..3 {
        assert!((pose[k] - ours[k] * 1e3).abs() < 1e-9);
        assert!((pose[k + 3] - ours[k + 3].to_degrees()).abs() < 1e-9);
    }
    let lengths = reals(&core, "GVL_Shadow.aShadowLengths");
    for (mm, m) in lengths.iter().zip(&s.state().lengths) {
        assert!((mm - m * 1e3).abs() < 1e-9);
    }
}

#[test]
fn free_running_shadow_matches_a_simulation_of_the_same_trajectory() {
    // The fair comparison: same robot, model, winches, dt and start. The shadow sees the PLC's
    // NC set points every 2 ms (IK of the trajectory through the limiter, which passes them
    // unchanged within uvigo8's limits) and interpolates them linearly over its two 1 ms
    // steps; `sim::run` takes IK of the trajectory at every 1 ms step. The commands differ by
    // the interpolation error only, |l̈|·T²/8 ≤ 3 m/s² · (2 ms)²/8 = 1.5 µm, so the poses
    // must agree to a few µm; 10 µm is the bound asserted. The PLC's 20 ms hold is the offset
    // between the two clocks.
    let robot = uvigo8();
    let trajectory = seed000(&robot, 0.4);
    let hold_ms = 20;
    let mut core = plc(&robot, trajectory.clone(), hold_ms);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(FREE_2MS, ModelKind::Chain),
    );
    let buffer = Buffer::default();
    s.record_to(Recorder::new(Box::new(buffer.clone()), 8).expect("record"));
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
    let options = RunOptions {
        config: s.config().sim,
        ..RunOptions::default()
    };
    let sim = sim_run::run(&robot, &trajectory, &options, &mut |_| {}).expect("runs");
    let (header, rows) = parse(&buffer);
    let (t, x) = (column(&header, "t"), column(&header, "x"));
    let mut worst: f64 = 0.0;
    let mut compared = 0;
    for row in &rows {
        let step = (num(row, t) * 1e3).round() as i64 - hold_ms as i64;
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
    assert!(worst < 1e-5, "max 3D difference {:.2} µm", worst * 1e6);

    // And the record replays exactly: the same commands through `Sim` give the same poses.
    let mut replay = Sim::at(s.robot(), s.config().sim, &s.start_report().tcp_pose).expect("sim");
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

#[test]
fn absurd_samples_are_rejected_held_and_flagged() {
    let robot = uvigo8();
    let mut core = plc(&robot, Trajectory::default(), 200);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(FREE_2MS, ModelKind::Elastic),
    );
    let buffer = Buffer::default();
    s.record_to(Recorder::new(Box::new(buffer.clone()), 8).expect("record"));
    let origin = s.clock_origin();
    let cmd = core
        .memory()
        .table()
        .lookup_str("GVL_Shadow.aCmdLengths")
        .expect("cmd");
    let held = s.start_report().commanded_lengths.clone();
    let poke = |core: &PlcCore, cable: usize, value: f64| {
        core.memory().with_image(|img| {
            let o = cmd.offset as usize + 8 * cable;
            img[o..o + 8].copy_from_slice(&value.to_le_bytes());
        })
    };
    let mut rejected = Vec::new();
    for tick in 1..=20u64 {
        core.tick();
        match tick {
            5 => poke(&core, 3, f64::NAN),
            6 => poke(&core, 3, f64::INFINITY),
            // 100 mm in 2 ms: 50 m/s against uvigo8's 0.5 m/s.
            10 => poke(&core, 0, held[0] * 1e3 + 100.0),
            _ => {}
        }
        let r = s
            .cycle_at(origin + Duration::from_millis(2 * tick))
            .expect("cycle");
        assert_eq!(r.status, CycleStatus::Exchanged);
        rejected.push(r.rejected);
    }
    let expect: Vec<bool> = (1..=20).map(|t| [5, 6, 10].contains(&t)).collect();
    assert_eq!(rejected, expect);
    assert_eq!(s.stats().rejected, 3);
    // The last good command (the held pose's lengths) was used throughout.
    s.finish().expect("flush");
    let (header, rows) = parse(&buffer);
    let (c1, flag) = (column(&header, "length_cmd_1"), column(&header, "rejected"));
    assert_eq!(rows.len(), 40);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(num(row, c1), held[0], "row {k}");
        let tick = k / 2 + 1;
        assert_eq!(
            row[flag],
            if expect[tick - 1] { "1" } else { "0" },
            "row {k}"
        );
    }
}

#[test]
fn the_allow_list_stops_the_shadow_before_anything_is_written() {
    let robot = uvigo8();
    let core = plc(&robot, Trajectory::default(), 200);
    // A robot file that sends the shadow's pose to the controller's TCP pose — an input,
    // not on its plc.writable list.
    let mut file = robot.clone();
    file.plc.shadow_pose = "GVL_Shadow.aTcpPose".into();
    let c = config(FREE_2MS, ModelKind::Elastic);
    let e = Shadow::new(
        link(&core, &file.plc, WritePolicy::AllowListed),
        Some(file.clone()),
        c,
    )
    .err()
    .expect("refused");
    match e {
        ShadowError::Controller(ControllerError::NotWritable { symbol }) => {
            assert_eq!(symbol, "GVL_Shadow.aTcpPose")
        }
        other => panic!("expected NotWritable, got {other}"),
    }
    assert_eq!(external_writes(&core), 0);
    // Asking to write over a read-only link is refused the same way.
    let e = Shadow::new(link(&core, &robot.plc, WritePolicy::ReadOnly), None, c)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("--write"), "{e}");
    // A read-only shadow runs and never writes.
    let mut s = shadow(&core, Some(file), ShadowConfig { write: false, ..c });
    let origin = s.clock_origin();
    for tick in 1..=50 {
        s.cycle_at(origin + Duration::from_millis(2 * tick))
            .expect("cycle");
    }
    assert_eq!(s.stats().cycles, 50);
    assert_eq!(external_writes(&core), 0);
}

#[test]
fn a_plc_restart_is_a_gap_and_a_changed_geometry_stops_the_shadow() {
    let robot = uvigo8();
    let mut core = plc(&robot, seed000(&robot, 0.4), 20);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(FREE_2MS, ModelKind::Elastic),
    );
    let buffer = Buffer::default();
    s.record_to(Recorder::new(Box::new(buffer.clone()), 8).expect("record"));
    let origin = s.clock_origin();
    let mut tick = 0u64;
    let mut run = |core: &mut PlcCore, s: &mut Shadow<InProcessController>, n: u64| {
        let mut statuses = Vec::new();
        for _ in 0..n {
            tick += 1;
            core.tick();
            let r = s
                .cycle_at(origin + Duration::from_millis(2 * tick))
                .expect("cycle");
            statuses.push(r.status);
        }
        statuses
    };
    run(&mut core, &mut s, 200);
    // The PLC restarts on the same memory (a fresh PLC's counter reads 0) and holds the start
    // pose again.
    let restart = |core: &PlcCore, robot: &Robot, trajectory: Trajectory| {
        let memory = Arc::clone(core.memory());
        let counter = memory
            .table()
            .lookup_str("GVL_Shadow.nCycle")
            .expect("counter");
        memory.with_image(|img| memory::put_u32(img, &counter, 0));
        PlcCore::new(robot, trajectory, memory, Timing::default()).expect("restarted")
    };
    let mut core = restart(&core, &robot, seed000(&robot, 0.4));
    let statuses = run(&mut core, &mut s, 20);
    assert_eq!(statuses[0], CycleStatus::Resynced);
    assert!(statuses[1..].iter().all(|&st| st == CycleStatus::Exchanged));
    assert_eq!(s.stats().gaps, 1);
    assert_eq!(
        s.stats().rejected,
        0,
        "the jump back to the start was no sample to refuse"
    );
    let (dp, _) = s.state().pose.distance(&s.start_report().start_pose);
    assert!(dp < 1e-4, "back at rest at the start: {dp}");
    s.finish().expect("flush");
    let (header, rows) = parse(&buffer);
    let gap = column(&header, "gap");
    assert_eq!(rows.iter().filter(|r| r[gap] == "1").count(), 1);

    // A PLC restarted with other anchors drives another robot: the shadow refuses to go on.
    let mut moved = robot.clone();
    moved.cables[4].frame_anchor.y += 0.01;
    let mut core = restart(&core, &moved, Trajectory::default());
    core.tick();
    // The counter reads 0 again, below the 4 cycles it had reached: a restart.
    match s.cycle_at(origin + Duration::from_millis(2 * (tick + 1))) {
        Err(ShadowError::GeometryChanged { cable, moved_mm }) => {
            assert_eq!(cable, 5);
            assert!((moved_mm - 10.0).abs() < 1e-6);
        }
        other => panic!("expected GeometryChanged, got {other:?}"),
    }
}

#[test]
fn a_lagging_shadow_skips_and_counts_rather_than_falling_behind_silently() {
    let robot = uvigo8();
    let mut core = plc(&robot, Trajectory::default(), 200);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(FREE_2MS, ModelKind::Elastic),
    );
    let origin = s.clock_origin();
    core.tick();
    s.cycle_at(origin + Duration::from_millis(2))
        .expect("cycle");
    // 200 ms without a cycle: 50 ms are caught up, 150 steps skipped, one overrun.
    core.tick();
    let r = s
        .cycle_at(origin + Duration::from_millis(202))
        .expect("cycle");
    assert_eq!(r.steps, 50);
    let st = s.stats();
    assert_eq!((st.skipped_steps, st.overruns, st.steps), (150, 1, 52));
    assert!((s.time() - 0.202).abs() < 1e-9);
}
