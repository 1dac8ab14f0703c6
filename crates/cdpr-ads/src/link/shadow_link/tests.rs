use super::*;
use crate::link::in_process::{InProcessController, InProcessTransport};
use crate::link::{Backoff, CommandGuard};
use crate::server::memory::PlcMemory;
use crate::server::symbols::SymbolTable;
use crate::server::virtual_plc::{PlcCore, Timing};
use cdpr_core::fixtures::uvigo8;
use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::trajectory::Trajectory;
use std::sync::Arc;
use std::time::Duration;

fn plc(robot: &Robot) -> PlcCore {
    let memory = PlcMemory::new(SymbolTable::from_robot(robot).expect("table"));
    PlcCore::new(robot, Trajectory::default(), memory, Timing::default()).expect("core")
}

fn link(core: &PlcCore, symbols: &PlcSymbols, policy: WritePolicy) -> InProcessController {
    ShadowLink::connect(
        InProcessTransport::new(Arc::clone(core.memory())),
        symbols,
        policy,
    )
    .expect("connects")
}

fn outputs(robot: &Robot, cycle: u32) -> ShadowOutputs {
    let pose = Pose::new(0.01, -0.02, 0.16, 0.0, 0.0, 0.1);
    ShadowOutputs {
        pose,
        lengths: kinematics::lengths(robot, &pose),
        tensions: vec![5.0; robot.cable_count()],
        cycle,
        interference: false,
        torques: Vec::new(),
        feedforward_torques: Vec::new(),
        payouts: Vec::new(),
    }
}

fn external_writes(core: &PlcCore) -> u64 {
    let m = core.memory();
    (0..m.table().symbols().len())
        .map(|k| m.external_writes(k))
        .sum()
}

#[test]
fn geometry_comes_back_in_si() {
    let robot = uvigo8();
    let core = plc(&robot);
    let mut c = link(
        &core,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::ReadOnly,
    );
    assert_eq!(c.cable_count(), 8);
    let g = c.read_geometry().expect("geometry");
    for (k, cable) in robot.cables.iter().enumerate() {
        assert!((g.frame_anchors[k] - cable.frame_anchor).norm() < 1e-12);
        assert!((g.platform_anchors[k] - cable.platform_anchor).norm() < 1e-12);
    }
    let ik = kinematics::inverse(&robot, &Pose::from_array(robot.home));
    for (k, cg) in ik.cables.iter().enumerate() {
        assert!((g.lengths[k] - cg.length).abs() < 1e-12);
        assert!((g.cable_angles[k][0] - cg.angles().theta_z).abs() < 1e-12);
        assert!((g.cable_angles[k][1] - cg.angles().theta_x).abs() < 1e-12);
    }
    let (dp, da) = g.tcp_pose.distance(&Pose::from_array(robot.home));
    assert!(dp < 1e-12 && da < 1e-12);
    let inputs = c.read_cycle().expect("cycle");
    assert_eq!(inputs.commanded_lengths.len(), 8);
    assert!(!inputs.motion_enable);
    assert_eq!(inputs.cycle, 0);
}

#[test]
fn a_watched_symbol_the_plc_lacks_or_an_array_is_refused_by_name() {
    let robot = uvigo8();
    let core = plc(&robot);
    let connect = |name: &str| {
        let symbols = PlcSymbols {
            watched: vec!["GVL_Shadow.nCycle".into(), name.into()],
            ..PlcSymbols::of(&robot).expect("[plc]")
        };
        ShadowLink::connect(
            InProcessTransport::new(Arc::clone(core.memory())),
            &symbols,
            WritePolicy::ReadOnly,
        )
        .err()
        .expect("refused")
        .to_string()
    };
    let e = connect("GVL.bDone");
    assert!(e.contains("GVL.bDone") && e.contains("0x710"), "{e}");
    let e = connect("GVL_Shadow.aTcpPose");
    assert!(
        e.contains("ARRAY [1..6] OF LREAL") && e.contains("`GVL_Shadow.aTcpPose[1]`"),
        "{e}"
    );
    // An element is one value: the TCP's z, in mm, as the PLC holds it.
    let symbols = PlcSymbols {
        watched: vec!["GVL_Shadow.aTcpPose[3]".into()],
        ..PlcSymbols::of(&robot).expect("[plc]")
    };
    let mut c = link(&core, &symbols, WritePolicy::ReadOnly);
    let inputs = c.read_cycle().expect("cycle");
    assert_eq!(inputs.watched, vec![robot.home[2] * 1e3]);
}

#[test]
fn lockstep_echo_reacts_within_one_plc_cycle() {
    let robot = uvigo8();
    let mut core = plc(&robot);
    let mut c = link(
        &core,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::AllowListed,
    );
    for _ in 0..500 {
        core.tick();
        let inputs = c.read_cycle().expect("read");
        c.write_cycle(&outputs(&robot, inputs.cycle))
            .expect("write");
    }
    let r = &core.stats().reaction;
    assert_eq!(r.samples(), 99);
    assert_eq!(r.max, Some(1));
    // The PLC's own diagnostic comes back in the same sum read.
    assert_eq!(c.reaction_symbol(), Some("GVL_Shadow.nReactionCycles"));
    assert_eq!(c.read_cycle().expect("read").reaction_cycles, Some(1));
    // What the PLC received is what was sent, in mm and degrees.
    let pose = core
        .memory()
        .table()
        .lookup_str(&PlcSymbols::of(&robot).expect("[plc]").shadow_pose)
        .expect("pose");
    let v = core
        .memory()
        .with_image(|img| crate::server::memory::get_reals(img, &pose))
        .expect("reals");
    assert!((v[0] - 10.0).abs() < 1e-12 && (v[2] - 160.0).abs() < 1e-12);
    assert!((v[5] - 0.1f64.to_degrees()).abs() < 1e-12);
}

#[test]
fn nothing_is_written_unless_writing_was_enabled() {
    let robot = uvigo8();
    let core = plc(&robot);
    let mut c = link(
        &core,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::ReadOnly,
    );
    assert_eq!(
        c.write_cycle(&outputs(&robot, 1)),
        Err(ControllerError::WriteDisabled)
    );
    assert_eq!(external_writes(&core), 0);
}

#[test]
fn allow_list_blocks_a_symbol_before_anything_is_written() {
    let robot = uvigo8();
    let core = plc(&robot);
    // A robot file that routes the tensions to the commanded lengths (a read-only input) and
    // does not list it: the write must be refused as a whole.
    let mut symbols = PlcSymbols::of(&robot).expect("[plc]");
    symbols.shadow_tensions = "GVL_Shadow.aCmdLengths".into();
    let mut c = link(&core, &symbols, WritePolicy::AllowListed);
    match c.write_cycle(&outputs(&robot, 1)) {
        Err(ControllerError::NotWritable { symbol }) => {
            assert_eq!(symbol, "GVL_Shadow.aCmdLengths")
        }
        other => panic!("expected NotWritable, got {other:?}"),
    }
    assert_eq!(
        external_writes(&core),
        0,
        "not even the allowed symbols were written"
    );
    // Case does not matter, as in TwinCAT; an allow-listed write goes through.
    let mut symbols = PlcSymbols::of(&robot).expect("[plc]");
    symbols.writable = symbols.writable.iter().map(|n| n.to_uppercase()).collect();
    let mut c = link(&core, &symbols, WritePolicy::AllowListed);
    c.write_cycle(&outputs(&robot, 1)).expect("allowed");
    assert_eq!(external_writes(&core), 4);
    let message = ControllerError::NotWritable { symbol: "X".into() }.to_string();
    assert!(message.contains("plc.writable"), "{message}");
}

#[test]
fn non_finite_values_are_refused_naming_the_symbol() {
    let robot = uvigo8();
    let core = plc(&robot);
    let cmd = core
        .memory()
        .table()
        .lookup_str(&PlcSymbols::of(&robot).expect("[plc]").commanded_lengths)
        .expect("cmd");
    core.memory().with_image(|img| {
        let o = cmd.offset as usize + 2 * 8;
        img[o..o + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    });
    let mut c = link(
        &core,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::AllowListed,
    );
    match c.read_cycle() {
        Err(ControllerError::NotFinite {
            symbol, element, ..
        }) => {
            assert_eq!((symbol.as_str(), element), ("GVL_Shadow.aCmdLengths", 3));
        }
        other => panic!("expected NotFinite, got {other:?}"),
    }
    let mut bad = outputs(&robot, 1);
    bad.tensions[4] = f64::INFINITY;
    match c.write_cycle(&bad) {
        Err(ControllerError::NotFinite {
            symbol, element, ..
        }) => {
            assert_eq!(
                (symbol.as_str(), element),
                ("GVL_Shadow.aShadowTensions", 5)
            );
        }
        other => panic!("expected NotFinite, got {other:?}"),
    }
    assert_eq!(external_writes(&core), 0);
}

#[test]
fn symbols_that_do_not_fit_are_named() {
    let robot = uvigo8();
    let core = plc(&robot);
    let mut symbols = PlcSymbols::of(&robot).expect("[plc]");
    symbols.commanded_lengths = "GVL_Shadow.aTcpPose".into(); // 6 values, not 8
    let e = ShadowLink::connect(
        InProcessTransport::new(Arc::clone(core.memory())),
        &symbols,
        WritePolicy::ReadOnly,
    )
    .err()
    .expect("refused");
    assert!(
        e.to_string().contains("GVL_Shadow.aTcpPose") && e.to_string().contains("8"),
        "{e}"
    );
    let mut symbols = PlcSymbols::of(&robot).expect("[plc]");
    symbols.cycle_counter = "GVL_Shadow.nMissing".into();
    let e = ShadowLink::connect(
        InProcessTransport::new(Arc::clone(core.memory())),
        &symbols,
        WritePolicy::ReadOnly,
    )
    .err()
    .expect("refused");
    assert!(
        e.to_string().contains("GVL_Shadow.nMissing") && e.to_string().contains("0x710"),
        "{e}"
    );
}

#[test]
fn guard_holds_the_last_good_command_on_an_impossible_jump() {
    let robot = uvigo8(); // 0.5 m/s
    let mut g = CommandGuard::new(&robot.winch, 0.001);
    let sample = |l: f64| CycleInputs {
        commanded_lengths: vec![l; 8],
        cycle: 1,
        motion_enable: true,
        reaction_cycles: None,
        plc_time: None,
        watched: Vec::new(),
        actual_torques: Vec::new(),
        actual_lengths: Vec::new(),
    };
    g.check(sample(1.0), 0.002).expect("first");
    g.check(sample(1.0015), 0.002)
        .expect("0.5 m/s·2 ms + 1 mm slack = 2 mm");
    let e = g.check(sample(1.1), 0.002).expect_err("100 mm in 2 ms");
    assert_eq!(e.rejection.cable, 1);
    assert!((e.rejection.allowed_m - 0.002).abs() < 1e-12);
    assert_eq!(*e.sample, sample(1.1), "handed back");
    assert_eq!(g.last_good().map(|s| s.commanded_lengths[0]), Some(1.0015));
    assert_eq!(g.rejected, 1);
}

#[test]
fn backoff_doubles_up_to_its_cap() {
    let mut b = Backoff::default();
    let ms: Vec<u128> = (0..8).map(|_| b.next_delay().as_millis()).collect();
    assert_eq!(ms, vec![50, 100, 200, 400, 800, 1600, 2000, 2000]);
    b.reset();
    assert_eq!(b.next_delay(), Duration::from_millis(50));
}

#[test]
fn a_plc_without_the_reaction_diagnostic_still_connects() {
    let robot = uvigo8();
    let mut c = ShadowLink::connect(
        InProcessTransport::new(memory_without_reaction(&robot)),
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::ReadOnly,
    )
    .expect("connects without the optional symbol");
    assert_eq!(c.reaction_symbol(), None);
    assert_eq!(c.read_cycle().expect("read").reaction_cycles, None);
    c.reconnect().expect("reconnects");
    assert_eq!(c.read_cycle().expect("read").reaction_cycles, None);
}

/// The symbol table of `robot` without the optional reaction diagnostic.
fn memory_without_reaction(robot: &Robot) -> Arc<PlcMemory> {
    let full = SymbolTable::from_robot(robot).expect("table");
    let decls = full
        .symbols()
        .iter()
        .filter(|s| !s.name.ends_with("nReactionCycles"))
        .map(|s| (s.name.clone(), s.ty.clone(), s.comment.clone()))
        .collect();
    PlcMemory::new(SymbolTable::new(decls).expect("table"))
}

/// pyads' test server as a transport: a name it does not know gets no answer at all (its
/// handler raises), which the link sees as a timeout; the connection stays useless until
/// reopened. Counts what happened.
struct Silent {
    inner: InProcessTransport,
    memory: Arc<PlcMemory>,
    dead: bool,
    unanswered: u32,
    reopens: u32,
}

impl Transport for Silent {
    fn resolve(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError> {
        if self.dead {
            return Err(ControllerError::Link("not connected".into()));
        }
        if let Some(unknown) = names
            .iter()
            .find(|n| self.memory.table().lookup_str(n).is_none())
        {
            self.dead = true;
            self.unanswered += 1;
            return Err(ControllerError::Link(format!(
                "`{unknown}`: no reply within 500ms"
            )));
        }
        self.inner.resolve(names)
    }
    fn sum_read(&mut self, symbols: &[usize]) -> Result<Vec<Vec<u8>>, ControllerError> {
        self.inner.sum_read(symbols)
    }
    fn sum_write(&mut self, items: &[(usize, Vec<u8>)]) -> Result<(), ControllerError> {
        self.inner.sum_write(items)
    }
    fn reopen(&mut self) -> Result<(), ControllerError> {
        self.dead = false;
        self.reopens += 1;
        Ok(())
    }
}

#[test]
fn a_plc_that_never_answers_about_the_reaction_symbol_costs_one_timeout() {
    let robot = uvigo8();
    let memory = memory_without_reaction(&robot);
    let silent = Silent {
        inner: InProcessTransport::new(Arc::clone(&memory)),
        memory,
        dead: false,
        unanswered: 0,
        reopens: 0,
    };
    let mut c = ShadowLink::connect(
        silent,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::ReadOnly,
    )
    .expect("connects without the optional symbol");
    let t = c.transport();
    assert_eq!((t.unanswered, t.reopens), (1, 1), "one timeout, one reopen");
    assert_eq!(c.reaction_symbol(), None);
    let g = c.read_geometry().expect("geometry after the reopen");
    assert_eq!(g.frame_anchors.len(), 8);
    // A reconnect does not ask about the symbol again: still one timeout.
    c.reconnect().expect("reconnects");
    assert_eq!(c.read_cycle().expect("read").reaction_cycles, None);
    assert_eq!(c.transport().unanswered, 1);
}

#[test]
fn an_online_change_is_re_resolved_on_the_live_link() {
    let robot = uvigo8();
    let mut core = plc(&robot);
    let mut c = link(
        &core,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::AllowListed,
    );
    core.tick();
    let before = c.read_cycle().expect("read");
    assert_eq!(c.re_resolves(), 0);
    // The handles go stale: the read re-resolves and returns what the PLC holds.
    core.memory().online_change();
    for _ in 0..core.ticks_per_task() {
        core.tick();
    }
    let after = c.read_cycle().expect("read after the online change");
    assert_eq!(c.re_resolves(), 1);
    assert_eq!(
        after.cycle,
        before.cycle + 1,
        "the PLC's counter, read anew"
    );
    assert_eq!(after.reaction_cycles, Some(0), "the diagnostic kept");
    // The same for a write: it lands once, after re-resolving.
    core.memory().online_change();
    let before = external_writes(&core);
    c.write_cycle(&outputs(&robot, 77)).expect("write");
    assert_eq!(c.re_resolves(), 2);
    assert_eq!(
        external_writes(&core) - before,
        4,
        "four symbols, once each"
    );
    let echo = core
        .memory()
        .table()
        .lookup_str("GVL_Shadow.nShadowCycle")
        .expect("echo");
    assert_eq!(
        core.memory().read(echo.offset, 4).expect("read"),
        77u32.to_le_bytes()
    );
    // Without a change, nothing is resolved again.
    c.read_cycle().expect("read");
    assert_eq!(c.re_resolves(), 2);
}

/// Handles that go stale again right after each re-resolution (a PLC caught mid-download).
struct AlwaysStale(InProcessTransport, u32);

impl Transport for AlwaysStale {
    fn resolve(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError> {
        self.1 += 1;
        self.0.resolve(names)
    }
    fn sum_read(&mut self, _: &[usize]) -> Result<Vec<Vec<u8>>, ControllerError> {
        Err(ControllerError::Stale {
            symbol: "GVL_Shadow.aCmdLengths".into(),
            code: 0x710,
            text: "Symbol not found".into(),
        })
    }
    fn sum_write(&mut self, _: &[(usize, Vec<u8>)]) -> Result<(), ControllerError> {
        Ok(())
    }
    fn reopen(&mut self) -> Result<(), ControllerError> {
        Ok(())
    }
}

#[test]
fn handles_stale_again_right_after_re_resolving_give_the_link_up() {
    let robot = uvigo8();
    let core = plc(&robot);
    let t = AlwaysStale(InProcessTransport::new(Arc::clone(core.memory())), 0);
    let mut c = ShadowLink::connect(
        t,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::ReadOnly,
    )
    .expect("connects");
    let resolves = c.transport().1;
    let e = c.read_cycle().expect_err("stale twice");
    assert!(e.is_link(), "{e}");
    assert!(
        e.to_string().contains("0x710") && e.to_string().contains("again right after"),
        "{e}"
    );
    // One re-resolution (the reaction probe, then all symbols) and one retry, no loop.
    assert_eq!(c.transport().1 - resolves, 2);
    assert_eq!(c.re_resolves(), 1);
}

/// The types a PLC of `cables` cables declares (LREAL arrays), in `Slot::REQUIRED` order.
fn declared(cables: usize) -> (Vec<String>, Vec<IecType>) {
    declared_as(Scalar::LReal, cables)
}

/// The same with arrays of `real`.
fn declared_as(real: Scalar, cables: usize) -> (Vec<String>, Vec<IecType>) {
    Slot::REQUIRED
        .iter()
        .map(|&slot| {
            let ty = match slot.expected_reals() {
                Some((per_cable, fixed)) => {
                    IecType::array(real, &[(per_cable * cables + fixed) as u32])
                }
                None => IecType::scalar(slot.scalar()),
            };
            (format!("GVL.{slot:?}"), ty)
        })
        .unzip()
}

#[test]
fn a_robot_too_large_for_one_ads_reply_is_said_so_at_connect() {
    // 72 bytes of geometry per cable and 48 for the pose: 900 cables fit in 64 KiB, 1000 not.
    let (names, types) = declared(900);
    assert_eq!(
        check_types(&Slot::REQUIRED, &names, &types, false, names.len()),
        Ok(900)
    );
    let (names, types) = declared(1000);
    let e = check_types(&Slot::REQUIRED, &names, &types, false, names.len())
        .expect_err("too large")
        .to_string();
    assert!(
        e.contains("1000 cables take 72088 bytes") && e.contains("too large for the shadow"),
        "{e}"
    );
}

#[test]
fn a_plc_declaring_more_cables_than_a_robot_may_have_is_refused_at_connect() {
    // REAL arrays: 1 025 cables' geometry (36 900 bytes) would fit one ADS reply; the robot
    // files' bound refuses it all the same, naming the count and the limit.
    let max = cdpr_core::robot::MAX_CABLES;
    let (names, types) = declared_as(Scalar::Real, max);
    assert_eq!(
        check_types(&Slot::REQUIRED, &names, &types, false, names.len()),
        Ok(max)
    );
    let (names, types) = declared_as(Scalar::Real, max + 1);
    let e = check_types(&Slot::REQUIRED, &names, &types, false, names.len()).expect_err("too many");
    let text = e.to_string();
    assert!(
        text.contains("GVL.FrameAnchors") && text.contains("1025 cables") && text.contains("1024"),
        "{text}"
    );
}

#[test]
fn pulleys_are_read_with_the_geometry_when_the_plc_has_them() {
    // uvigo8's PLC has no pulley arrays: none read, the link as before.
    let point = uvigo8();
    let core = plc(&point);
    let mut c = link(
        &core,
        &PlcSymbols::of(&point).expect("[plc]"),
        WritePolicy::ReadOnly,
    );
    assert_eq!(c.read_geometry().expect("geometry").pulleys, None);
    // uvigo8-pulleys' PLC serves them: radii back in m, axes unit, beside the anchors.
    let robot = cdpr_core::fixtures::robot("uvigo8-pulleys");
    let core = plc(&robot);
    let mut c = link(
        &core,
        &PlcSymbols::of(&robot).expect("[plc]"),
        WritePolicy::ReadOnly,
    );
    let g = c.read_geometry().expect("geometry");
    let p = g.pulleys.expect("pulleys");
    assert_eq!(p.radii, vec![0.025; 8]);
    assert!(p.axes.iter().all(|a| *a == -nalgebra::Vector3::z()));
    for (k, cable) in robot.cables.iter().enumerate() {
        assert!((g.frame_anchors[k] - cable.frame_anchor).norm() < 1e-12);
    }
    // The lengths the PLC publishes are the pulley robot's IK lengths.
    let ik = kinematics::lengths(&robot, &Pose::from_array(robot.home));
    for (got, want) in g.lengths.iter().zip(&ik) {
        assert!((got - want).abs() < 1e-12);
    }
    // And the cycle still reads (the optional symbols sit after the required ones).
    assert_eq!(c.read_cycle().expect("cycle").commanded_lengths.len(), 8);
}
