//! Failure paths: absurd samples, the allow-list, a PLC restart, a changed geometry, a shadow
//! that falls behind, a controller whose numbers disagree.

use super::*;
use cdpr_core::sim::ModelKind;

#[test]
fn absurd_samples_are_rejected_held_and_flagged() {
    let robot = uvigo8();
    let mut core = plc(&robot, Trajectory::default(), 200);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(FREE_2MS, ModelKind::ELASTIC),
    );
    let buffer = Buffer::default();
    s.record_to(
        Recorder::new(Box::new(buffer.clone()), &robot, Actuals::default()).expect("record"),
    );
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
            // The PLC copies its axes once a cycle (every 5 ticks): the good value back.
            7 => poke(&core, 3, held[3] * 1e3),
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
    // The NaN and the infinity (read at ticks 5 and 6, the PLC's cycle 1) are refused, and the
    // last good sample holds until the next cycle brings a new one: the same counter read
    // again is the same sample (on a TwinCAT the values change only with it). That next one
    // (cycle 2, tick 10) jumps: refused too, held until cycle 3 (tick 15). Cycle 1 was sent,
    // unusable: not missed.
    let expect: Vec<bool> = (1..=20).map(|t| (5..15).contains(&t)).collect();
    assert_eq!(rejected, expect);
    assert_eq!(s.stats().rejected, 3);
    assert_eq!(s.stats().missed_plc_cycles, 0);
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
    let text = cdpr_core::fixtures::edited(
        cdpr_core::fixtures::robot_text("uvigo8"),
        "shadow_pose = \"GVL_Shadow.aShadowPose\"",
        "shadow_pose = \"GVL_Shadow.aTcpPose\"",
    );
    let file = cdpr_core::robot::parse_robot(&text, "uvigo8.toml").expect("parses");
    let names = PlcSymbols::of(&file).expect("[plc]");
    assert_eq!(names.shadow_pose, "GVL_Shadow.aTcpPose");
    let c = config(FREE_2MS, ModelKind::ELASTIC);
    let e = Shadow::new(
        link(&core, &names, WritePolicy::AllowListed),
        Some(file.clone()),
        c.clone(),
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
    let e = Shadow::new(
        link(&core, &PlcSymbols::defaults(), WritePolicy::ReadOnly),
        None,
        c.clone(),
    )
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
    let (mut core, mut s, buffer) = seed000_recorded(&robot, FREE_2MS, ModelKind::ELASTIC);
    let origin = s.clock_origin();
    let mut tick = 0u64;
    // `n` cycles, `poke` between the first PLC tick and the shadow's first read.
    let mut run = |core: &mut PlcCore,
                   s: &mut Shadow<InProcessController>,
                   n: u64,
                   poke: &dyn Fn(&PlcCore)| {
        let mut statuses = Vec::new();
        for k in 0..n {
            tick += 1;
            core.tick();
            if k == 0 {
                poke(core);
            }
            let r = s
                .cycle_at(origin + Duration::from_millis(2 * tick))
                .expect("cycle");
            statuses.push(r.status);
        }
        statuses
    };
    run(&mut core, &mut s, 200, &|_| {});
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
    let statuses = run(&mut core, &mut s, 20, &|_| {});
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

    // Restarted again, its first sample unusable (a NaN): still a restart, not four billion
    // cycles missed and every later sample taken for the same one.
    let mut core = restart(&core, &robot, seed000(&robot, 0.4));
    let cmd = core
        .memory()
        .table()
        .lookup_str("GVL_Shadow.aCmdLengths")
        .expect("cmd");
    let nan = |core: &PlcCore| {
        core.memory().with_image(|img| {
            let o = cmd.offset as usize;
            img[o..o + 8].copy_from_slice(&f64::NAN.to_le_bytes());
        })
    };
    let statuses = run(&mut core, &mut s, 20, &nan);
    // The NaN's cycle says the PLC restarted; its first usable sample is where it starts.
    let resynced = statuses
        .iter()
        .position(|&st| st == CycleStatus::Exchanged)
        .expect("exchanging again");
    assert!(resynced <= 6, "{statuses:?}");
    assert!(
        statuses[resynced..]
            .iter()
            .all(|&st| st == CycleStatus::Exchanged)
    );
    assert_eq!(s.stats().gaps, 2);
    assert!(
        s.stats().missed_plc_cycles < 10,
        "{} missed",
        s.stats().missed_plc_cycles
    );

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
        config(FREE_2MS, ModelKind::ELASTIC),
    );
    let origin = s.clock_origin();
    core.tick();
    s.cycle_at(origin + Duration::from_millis(2))
        .expect("cycle");
    // 200 ms without a cycle: 50 ms are caught up, 150 steps skipped, one overrun. The PLC
    // ran a task cycle meanwhile (five NC ticks), so the shadow is late, not the PLC stalled.
    for _ in 0..5 {
        core.tick();
    }
    let r = s
        .cycle_at(origin + Duration::from_millis(202))
        .expect("cycle");
    assert_eq!(r.steps, 50);
    let st = s.stats();
    assert_eq!((st.skipped_steps, st.overruns, st.steps), (150, 1, 52));
    assert!((s.time() - 0.202).abs() < 1e-9);
}

#[test]
fn a_controller_whose_numbers_disagree_is_caught_at_start() {
    // The TCP pose 5 mm off its own commanded lengths, and cable 2's θx mirrored (seed 000's
    // eq. 5 sign convention): both show in the start report.
    let robot = uvigo8();
    let core = plc(&robot, Trajectory::default(), 200);
    let m = core.memory();
    let tcp = m.table().lookup_str("GVL_Shadow.aTcpPose").expect("tcp");
    let angles = m
        .table()
        .lookup_str("GVL_Shadow.aCableAngles")
        .expect("angles");
    m.with_image(|img| {
        let mut pose = memory::get_reals(img, &tcp).expect("pose");
        pose[0] += 5.0;
        memory::put_reals(img, &tcp, &pose);
        let mut a = memory::get_reals(img, &angles).expect("angles");
        a[3] = 180.0 - a[3];
        memory::put_reals(img, &angles, &a);
    });
    let s = shadow(
        &core,
        Some(robot.clone()),
        config(FREE_2MS, ModelKind::ELASTIC),
    );
    let c = &s.start_report().consistency;
    let offset = c.fk_position_offset.expect("converges");
    assert!((offset - 0.005).abs() < 1e-6, "{offset}");
    // Expected: the published angles (at the true pose, cable 2's θx mirrored) against the
    // model's at the (wrong) TCP pose.
    let home = Pose::from_array(robot.home);
    let published = kinematics::inverse(&robot, &home).angles();
    let mut shifted = home;
    shifted.position.x += 0.005;
    let ours = kinematics::inverse(&robot, &shifted).angles();
    let mut expected: f64 = 0.0;
    for (k, (p, o)) in published.iter().zip(&ours).enumerate() {
        let theta_x = if k == 1 {
            std::f64::consts::PI - p.theta_x
        } else {
            p.theta_x
        };
        expected = expected
            .max((o.theta_z - p.theta_z).abs())
            .max((o.theta_x - theta_x).abs());
    }
    assert!(expected > 0.5, "the mirrored angle dominates");
    assert!((c.angle_mismatch - expected).abs() < 1e-9);
    // The platform still rests where the commanded lengths hold it, not at the bad TCP pose.
    assert!(s.start_report().sag > 0.004);
}

#[test]
fn an_online_change_mid_run_is_a_gap_on_the_live_link_not_a_reconnect() {
    let robot = uvigo8();
    let (mut core, mut s, buffer) = seed000_recorded(&robot, FREE_2MS, ModelKind::ELASTIC);
    let origin = s.clock_origin();
    let mut statuses = Vec::new();
    for tick in 1..=300u64 {
        core.tick();
        if tick == 150 {
            core.memory().online_change();
        }
        let r = s
            .cycle_at(origin + Duration::from_millis(2 * tick))
            .expect("cycle");
        statuses.push(r.status);
    }
    assert!(
        statuses.iter().all(|&st| st == CycleStatus::Exchanged),
        "never offline"
    );
    let st = s.stats();
    assert_eq!(
        (st.re_resolves, st.gaps, st.reconnects, st.cycles),
        (1, 1, 0, 300)
    );
    assert_eq!(s.summary().re_resolves, 1);
    // The PLC saw the shadow's echo all along: its reaction stays one cycle.
    assert_eq!(core.stats().reaction.max, Some(1));
    s.finish().expect("flush");
    let (header, rows) = parse(&buffer);
    let gap = column(&header, "gap");
    let flagged: Vec<usize> = (0..rows.len()).filter(|&k| rows[k][gap] == "1").collect();
    // Two 1 ms steps per 2 ms cycle: the first row of cycle 150, whose read met the stale
    // handles and re-resolved them.
    assert_eq!(flagged, vec![2 * 149]);
}

#[test]
fn a_plc_serving_absurd_pulleys_is_refused_naming_the_cable() {
    // A controller whose pulley arrays are wrong (a negative radius, a zero or NaN axis): the
    // shadow does not start, and says which cable and what it read.
    let robot = cdpr_core::fixtures::robot("uvigo8-pulleys");
    let symbols = PlcSymbols::of(&robot).expect("[plc]");
    let start = |poke: &dyn Fn(&PlcCore)| {
        let core = plc(&robot, Trajectory::default(), 20);
        poke(&core);
        let link = link(&core, &symbols, WritePolicy::ReadOnly);
        match Shadow::new(
            link,
            Some(robot.clone()),
            config(FREE_2MS, ModelKind::ELASTIC),
        ) {
            Ok(_) => panic!("the shadow started on absurd pulleys"),
            Err(e) => e.to_string(),
        }
    };
    let write = |core: &PlcCore, name: &str, at: usize, values: &[f64]| {
        let symbol = core.memory().table().lookup_str(name).expect(name);
        core.memory().with_image(|img| {
            for (k, v) in values.iter().enumerate() {
                let o = symbol.offset as usize + 8 * (at + k);
                img[o..o + 8].copy_from_slice(&v.to_le_bytes());
            }
        })
    };
    let radius = start(&|core| write(core, "GVL_Shadow.aPulleyRadii", 3, &[-25.0]));
    assert!(
        radius.contains("pulley radius of cable 4 (upper3)") && radius.contains("-0.025"),
        "{radius}"
    );
    let zero = start(&|core| write(core, "GVL_Shadow.aPulleyAxes", 3 * 2, &[0.0, 0.0, 0.0]));
    assert!(
        zero.contains("pulley axis of cable 3 (upper2)") && zero.contains("length 0"),
        "{zero}"
    );
    let nan = start(&|core| write(core, "GVL_Shadow.aPulleyAxes", 3 * 7, &[f64::NAN]));
    // A NaN is caught where it is read, naming the symbol and the element.
    assert!(
        nan.contains("`GVL_Shadow.aPulleyAxes` element 22") && nan.contains("NaN"),
        "{nan}"
    );
}

#[test]
fn a_refused_sample_in_lockstep_slows_the_command_down_rather_than_stopping_it_dead() {
    // Lockstep ends each cycle on the newest sample; a refused one then holds the command
    // there. Held at once, the command's rate would drop from the cable's speed to zero in one
    // step; blended into the hold (a cubic over at least 10 ms: its rate falls by 4·dt/10 ms,
    // 0.4 of the speed, in the first 1 ms step), it slows down.
    let robot = uvigo8();
    let (mut core, mut s, buffer) = seed000_recorded(&robot, LOCKSTEP_10MS, ModelKind::CHAIN);
    let cmd = core
        .memory()
        .table()
        .lookup_str("GVL_Shadow.aCmdLengths")
        .expect("cmd");
    let t0 = Instant::now();
    for tick in 1..=700u64 {
        core.tick();
        // 1.2 s on, moving: the PLC's cycle of this tick publishes 100 mm too much on cable 1.
        if tick == 600 {
            core.memory().with_image(|img| {
                let o = cmd.offset as usize;
                let mm = f64::from_le_bytes(img[o..o + 8].try_into().expect("8 bytes"));
                img[o..o + 8].copy_from_slice(&(mm + 100.0).to_le_bytes());
            });
        }
        s.cycle_at(t0 + Duration::from_millis(2 * tick))
            .expect("cycle");
    }
    s.finish().expect("flush");
    assert_eq!(s.stats().rejected, 1);
    assert_eq!(
        s.stats().late_samples,
        0,
        "the sample after the refused one is not late"
    );
    let (header, rows) = parse(&buffer);
    let (c1, flag) = (column(&header, "length_cmd_1"), column(&header, "rejected"));
    let first = rows
        .iter()
        .position(|r| r[flag] == "1")
        .expect("a held step");
    let v: Vec<f64> = rows[first - 3..first + 3]
        .iter()
        .map(|r| num(r, c1))
        .collect();
    let speed = (v[2] - v[1]).abs();
    assert!(speed > 1e-5, "moving: {speed} m a step");
    for w in v.windows(3) {
        let change = (w[2] - 2.0 * w[1] + w[0]).abs();
        assert!(
            change < 0.5 * speed,
            "the rate changed by {change:e} m a step in one step, moving {speed:e}"
        );
    }
}
