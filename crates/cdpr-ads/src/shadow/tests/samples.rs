//! Every sample taken, the echo of the newest, whatever the ratio of the PLC's period to the
//! shadow's cycle; a PLC that runs late and makes its cycles up: no command that holds and then
//! jumps. In-process, by notification (a sample per PLC cycle, stamped with its time), stepped
//! by hand: the figures are exact.

use super::*;
use cdpr_core::sim::ModelKind;

/// A PLC of `task` ms (its NC at `nc` ms) playing seed000 at 0.4 m/s after a 20 ms hold, and a
/// free-running shadow of it whose inputs come by notification, cycling every `cycle` ms,
/// recording.
fn notified(
    robot: &Robot,
    (task, nc): (u64, u64),
    cycle: u64,
) -> (PlcCore, Shadow<InProcessController>, Buffer) {
    let memory = PlcMemory::new(SymbolTable::from_robot(robot).expect("table"));
    let timing = Timing {
        task: Duration::from_millis(task),
        nc: Duration::from_millis(nc),
        hold: Duration::from_millis(20),
    };
    let mut core = PlcCore::new(robot, seed000(robot, 0.4), memory, timing).expect("core");
    let link = ShadowLink::connect(
        InProcessTransport::notified(&mut core),
        &PlcSymbols::of(robot).expect("[plc]"),
        WritePolicy::AllowListed,
    )
    .expect("connects");
    let timing = CycleTiming::Free {
        period: Duration::from_millis(cycle),
        plc_period: Duration::from_millis(10),
    };
    let mut s = Shadow::new(link, Some(robot.clone()), config(timing, ModelKind::CHAIN))
        .expect("shadow starts");
    let buffer = Buffer::default();
    s.record_to(
        Recorder::new(Box::new(buffer.clone()), robot, Actuals::default()).expect("record"),
    );
    (core, s, buffer)
}

/// Runs `ms` milliseconds: the PLC ticks on its NC period, the shadow cycles every `cycle` ms;
/// `stalled(ms)`: the PLC does not tick at that millisecond (its thread descheduled), and then
/// makes the ticks up at once, as the virtual PLC does.
fn play(
    core: &mut PlcCore,
    s: &mut Shadow<InProcessController>,
    (nc, cycle, ms): (u64, u64, u64),
    stalled: impl Fn(u64) -> bool,
) -> Vec<CycleReport> {
    let origin = s.clock_origin();
    let mut ticked = 0u64;
    let mut reports = Vec::new();
    for now in 1..=ms {
        if !stalled(now) {
            while (ticked + 1) * nc <= now {
                core.tick();
                ticked += 1;
            }
        }
        if now.is_multiple_of(cycle) {
            let r = s
                .cycle_at(origin + Duration::from_millis(now))
                .expect("cycle");
            reports.push(r);
        }
    }
    s.finish().expect("flush");
    reports
}

#[test]
fn a_1ms_plc_under_a_2ms_shadow_has_every_sample_taken_and_the_newest_answered() {
    let robot = uvigo8();
    let (mut core, mut s, _) = notified(&robot, (1, 1), 2);
    let reports = play(&mut core, &mut s, (1, 2, 3000), |_| false);
    // Two PLC cycles a shadow cycle, both taken, the newest echoed: the PLC takes the echo at
    // its next cycle, one after the cycle it answers.
    assert!(
        reports.iter().skip(1).all(|r| r.samples == 2),
        "two a cycle"
    );
    let sum = s.summary();
    assert_eq!(
        (sum.samples, sum.samples_per_cycle_max),
        (3000, 2),
        "3 s of 1 ms"
    );
    assert_eq!((sum.missed_plc_cycles, sum.late_samples), (0, 0));
    let stats = core.stats();
    assert_eq!(stats.reaction.max, Some(1), "every echo one cycle after");
    // The echo changes every other PLC cycle; the PLC has not read the last one yet.
    assert_eq!(stats.reaction.samples(), 1499);
    // The shadow counts the PLC's figure once per echo it took, as the PLC does.
    assert_eq!(sum.reaction_samples, stats.reaction.samples());
    assert_eq!(
        (sum.reaction_cycles, sum.reaction_max_cycles),
        (Some(1), Some(1))
    );
    // The stamps gave the PLC's period at once; the commands lag it two periods and a cycle.
    assert_eq!(sum.plc_period_estimate_s, Some(1e-3));
    assert!((sum.command_latency_s - 0.004).abs() < 1e-12);
}

#[test]
fn a_10ms_plc_under_a_1ms_shadow_is_answered_in_one_cycle_and_missed_nowhere() {
    let robot = uvigo8();
    let (mut core, mut s, _) = notified(&robot, (10, 2), 1);
    let reports = play(&mut core, &mut s, (2, 1, 3000), |_| false);
    let with_sample = reports.iter().filter(|r| r.samples == 1).count();
    assert_eq!(with_sample, 300, "a sample every tenth cycle");
    assert!(reports.iter().all(|r| r.samples <= 1));
    let sum = s.summary();
    assert_eq!((sum.missed_plc_cycles, sum.late_samples), (0, 0));
    let stats = core.stats();
    assert_eq!(
        (stats.reaction.samples(), stats.reaction.max),
        (299, Some(1))
    );
    assert_eq!(sum.reaction_samples, 299);
}

/// The largest |second difference| of a command column per step, and the largest per-step
/// tension change, over the record from `from` s on.
fn roughness_from(buffer: &Buffer, from: f64) -> (f64, f64) {
    let (header, rows) = parse(buffer);
    let t = column(&header, "t");
    let rows: Vec<&Vec<String>> = rows.iter().filter(|r| num(r, t) >= from).collect();
    let (mut command, mut tension) = (0.0f64, 0.0f64);
    for k in 1..=8 {
        let c = column(&header, &format!("length_cmd_{k}"));
        let v: Vec<f64> = rows.iter().map(|r| num(r, c)).collect();
        command = v
            .windows(3)
            .fold(command, |m, w| m.max((w[2] - 2.0 * w[1] + w[0]).abs()));
        let c = column(&header, &format!("tension_{k}"));
        let v: Vec<f64> = rows.iter().map(|r| num(r, c)).collect();
        tension = v
            .windows(2)
            .fold(tension, |m, w| m.max((w[1] - w[0]).abs()));
    }
    (command, tension)
}

#[test]
fn a_plc_that_stalls_and_makes_its_cycles_up_leaves_no_step_in_the_commands() {
    // A 2 ms PLC task whose thread stalls for 30 ms twice, in the middle of seed000's motion,
    // then runs the cycles it owes back to back (the virtual PLC's way on a busy desktop): its
    // samples come late, in a burst. The shadow's commands go on as they went, brake past the
    // 50 ms horizon never (30 ms), and take the late samples in with a blend: the commands'
    // roughness stays within twice, the tensions' steps within 1.5× those of the same run
    // without the stalls.
    let robot = uvigo8();
    let stalls = |ms: u64| (1200..1230).contains(&ms) || (2500..2530).contains(&ms);
    let (mut core, mut s, buffer) = notified(&robot, (2, 1), 1);
    play(&mut core, &mut s, (1, 1, 4000), stalls);
    let late = s.summary();
    let (mut core, mut s, smooth) = notified(&robot, (2, 1), 1);
    play(&mut core, &mut s, (1, 1, 4000), |_| false);
    let (command, tension) = roughness_from(&buffer, 0.3);
    let (command_0, tension_0) = roughness_from(&smooth, 0.3);
    eprintln!(
        "stalled: command roughness {:.2} µm, tension step {:.3} N ({} late samples, at most \
         {:.1} ms ahead); steady: {:.2} µm, {:.3} N",
        command * 1e6,
        tension,
        late.late_samples,
        late.late_max_s * 1e3,
        command_0 * 1e6,
        tension_0
    );
    assert!(late.late_samples >= 2, "{} late", late.late_samples);
    assert!(late.late_max_s > 0.020, "{} s ahead", late.late_max_s);
    assert_eq!(late.missed_plc_cycles, 0, "late is not missed");
    assert!(command <= 2.0 * command_0, "{command} against {command_0}");
    assert!(tension <= 1.5 * tension_0, "{tension} against {tension_0}");
}

#[test]
fn a_1ms_plc_polled_from_mid_motion_is_followed_at_its_latency_not_its_configured_period() {
    // The shadow connects to a 1 ms task a second into its motion and polls it every 1 ms,
    // `--plc-period` left at 10 ms: until the counter's rate is measured (0.1 s) the samples
    // are spaced as they came. Counted at 10 ms a count, those 100 samples would put the line
    // 0.9 s ahead of the PLC, a lag the read clock takes 90 s to slew out.
    let robot = uvigo8();
    let memory = PlcMemory::new(SymbolTable::from_robot(&robot).expect("table"));
    let timing = Timing {
        task: Duration::from_millis(1),
        nc: Duration::from_millis(1),
        hold: Duration::ZERO,
    };
    let mut core = PlcCore::new(&robot, seed000(&robot, 0.4), memory, timing).expect("core");
    (0..1000).for_each(|_| core.tick());
    let free = CycleTiming::Free {
        period: Duration::from_millis(1),
        plc_period: Duration::from_millis(10),
    };
    let mut s = shadow(&core, Some(robot.clone()), config(free, ModelKind::CHAIN));
    let buffer = Buffer::default();
    s.record_to(
        Recorder::new(Box::new(buffer.clone()), &robot, Actuals::default()).expect("record"),
    );
    play(&mut core, &mut s, (1, 1, 3000), |_| false);
    let sum = s.summary();
    let period = sum.plc_period_estimate_s.expect("measured");
    assert!((period - 1e-3).abs() < 1e-5, "{period}");
    assert!((sum.command_latency_s - 0.004).abs() < 1e-4);
    // The command the physics ended on against the PLC's now: the commands' latency (4 ms) at
    // a cable's 0.4 m/s at most is 1.6 mm.
    let (header, rows) = parse(&buffer);
    let last = rows.last().expect("rows");
    let plc = reals(&core, "GVL_Shadow.aCmdLengths");
    for (k, mm) in plc.iter().enumerate() {
        let ours = num(last, column(&header, &format!("length_cmd_{}", k + 1)));
        let off = (ours - mm * 1e-3).abs();
        assert!(
            off < 3e-3,
            "cable {}: {:.1} mm behind the PLC",
            k + 1,
            off * 1e3
        );
    }
}
