//! The shadow beside the drives: their actual torques and positions read every cycle and the
//! prediction error against them, and the shadow standing in for them (the axes' encoder and
//! torque written, the virtual PLC's following-error monitor on them).

use super::*;
use crate::server::virtual_plc::drives::FOLLOWING_ERROR_ID;

/// uvigo8-drives (its `[plc]` names the drives' actual values and the shadow's torques) with
/// more `[plc]` lines.
fn with_plc(extra: &str, edits: &[(&str, &str)]) -> Robot {
    let mut text = cdpr_core::fixtures::robot_text("uvigo8-drives").to_string();
    for (from, to) in edits {
        text = cdpr_core::fixtures::edited(&text, from, to);
    }
    let text = text.replacen("[plc]", &format!("[plc]\n{extra}"), 1);
    cdpr_core::robot::parse_robot(&text, "uvigo8-drives.toml").expect("parses")
}

/// `n` PLC cycles of seed000 at 0.4 m/s through a lockstep shadow of `model` of a PLC whose
/// drives are `actual`'s (`None`: the model's); the shadow, the PLC and, per exchange, the
/// shadow's motor velocities.
fn run(
    model: &Robot,
    actual: Option<&Robot>,
    window: f64,
    n: u32,
) -> (Shadow<InProcessController>, PlcCore, Vec<Vec<f64>>) {
    let mut core = plc(model, seed000(model, 0.4), 20);
    core.simulate_drives(actual, window).expect("drives");
    let mut s = shadow(
        &core,
        Some(model.clone()),
        config(LOCKSTEP_10MS, ModelKind::ELASTIC),
    );
    let t0 = Instant::now();
    let mut velocities = Vec::new();
    for tick in 1..=n {
        if plc_cycle(&mut core, &mut s, t0, tick) == CycleStatus::Exchanged {
            velocities.push(s.state().motor_velocities.clone());
        }
    }
    (s, core, velocities)
}

/// PLC cycle `tick` (its NC ticks), then the shadow's cycle at its time after `t0`.
fn plc_cycle(
    core: &mut PlcCore,
    s: &mut Shadow<InProcessController>,
    t0: Instant,
    tick: u32,
) -> CycleStatus {
    for _ in 0..core.ticks_per_task() {
        core.tick();
    }
    s.cycle_at(t0 + Duration::from_millis(10 * u64::from(tick)))
        .expect("cycle")
        .status
}

#[test]
fn the_shadow_predicts_its_own_drives_closely_and_names_the_friction_it_lacks() {
    let model = cdpr_core::fixtures::robot("uvigo8-drives");
    // Seed000 at 0.4 m/s takes about 2.5 s: the whole of it.
    let cycles = 300;
    let (same, _, velocities) = run(&model, None, 0.005, cycles);
    let own = same.summary().torque_prediction;
    assert_eq!(own.len(), 8);
    let peak: f64 = same
        .summary()
        .drives
        .iter()
        .map(|d| d.peak_torque)
        .fold(0.0, f64::max);
    assert!(peak > 0.03, "the motion loads the drives: {peak} N·m");
    for e in &own {
        // The same drives fed the same set points (the PLC's NC ticks, the shadow's time line
        // through the PLC cycles' samples): within 2 % of rated, aligned within a cycle.
        assert!(e.rms_percent.expect("%") < 2.0, "{e:?}");
        assert!(e.best_lag_s.abs() <= 0.010 + 1e-12, "{e:?}");
        assert!(e.rms_at_best_lag <= e.rms);
    }
    let lengths = same.summary().length_prediction;
    assert!(lengths.iter().all(|e| e.rms < 1e-4), "{lengths:?}");

    // The real drives have 0.05 N·m more Coulomb friction than the model, and the same
    // everything else: following the same set points they move alike, and the torque they
    // report is the model's plus Δτ_c·tanh(ω/ω₀) (the friction law). So the error is that
    // term plus the same-robot error: by the triangle inequality its RMS is within the
    // same-robot RMS of the term's, computed here from the motor velocities.
    let mut real = model.clone();
    let extra = 0.05;
    for d in &mut real.drives {
        d.coulomb_friction += extra;
    }
    let (other, _, _) = run(&model, Some(&real), 0.005, cycles);
    let errors = other.summary().torque_prediction;
    let omega0 = cdpr_core::robot::drives::FRICTION_SMOOTHING;
    for (k, (e, mine)) in errors.iter().zip(&own).enumerate() {
        let term = (velocities
            .iter()
            .map(|w| (extra * (w[k] / omega0).tanh()).powi(2))
            .sum::<f64>()
            / velocities.len() as f64)
            .sqrt();
        assert!(
            term > 0.5 * extra,
            "the drives move most of the run: {term}"
        );
        // 5 % of the term for the velocities' own difference at the reversals.
        assert!(
            (e.rms - term).abs() <= mine.rms + 0.05 * term,
            "drive {}: RMS {} against {term} ± {}",
            k + 1,
            e.rms,
            mine.rms
        );
        assert!(e.rms > 3.0 * mine.rms, "{e:?} against {mine:?}");
        assert!(
            (e.max_percent.expect("%") - 100.0 * e.max / 0.5).abs() < 1e-9,
            "% of the 0.5 N·m rated"
        );
    }
}

#[test]
fn the_shadow_standing_in_for_the_drives_feeds_the_axes_within_the_following_error_window() {
    let robot = with_plc(
        "axis_positions = \"GVL_Shadow.aAxisPositions\"\naxis_torques = \"GVL_Shadow.aAxisTorques\"",
        &[(
            "\"GVL_Shadow.aFeedforwardTorques\"]",
            "\"GVL_Shadow.aFeedforwardTorques\", \"GVL_Shadow.aAxisPositions\", \"GVL_Shadow.aAxisTorques\"]",
        )],
    );
    let (s, core, _) = run(&robot, None, 0.005, 300);
    let monitor = core.axis_monitor().expect("the PLC has drives").clone();
    assert!(monitor.monitored_cycles > 250, "{monitor:?}");
    assert_eq!(monitor.error, None, "{monitor:?}");
    let worst = monitor
        .max_following_error
        .iter()
        .copied()
        .fold(0.0, f64::max);
    // The shadow answers the cycle it read: its payouts follow the set points by its drives'
    // own following error and one PLC cycle of motion at most (0.4 m/s · 10 ms = 4 mm).
    assert!(worst > 1e-5 && worst < 0.005, "{worst} m");
    // What the axes read is the shadow's payout in encoder increments (by hand from the
    // drive's scaling), and its torque in ‰ of rated.
    let table = core.memory().table();
    let served = PlcSymbols::of(&robot).expect("[plc]").served_drives();
    let (positions, torques, error) = core.memory().with_image(|img| {
        let at = |name: &str| table.lookup_str(name).expect("served");
        (
            memory::get_numbers(img, &at(&served.axis_positions)).expect("DINT"),
            memory::get_numbers(img, &at(&served.axis_torques)).expect("INT"),
            memory::get_u32(img, &at(&served.axis_error_id)).expect("UDINT"),
        )
    });
    let state = s.state();
    for k in 0..8 {
        let d = &robot.drives[k];
        let turns = state.winch[k] / (2.0 * std::f64::consts::PI * d.payout_per_radian());
        assert!(
            (positions[k] - turns * d.encoder_increments).abs() <= 0.5,
            "axis {k}: {} increments for {} m",
            positions[k],
            state.winch[k]
        );
        let permille = 1000.0 * state.motor_torques[k] / d.rated_torque;
        assert!((torques[k] - permille).abs() <= 0.5, "axis {k}");
    }
    assert_eq!(error, 0);

    // A window narrower than what the exchange adds: the NC's monitor stops the axes.
    let (_, core, _) = run(&robot, None, 1e-5, 300);
    let monitor = core.axis_monitor().expect("drives");
    let (axis, cycle) = monitor.error.expect("following error");
    assert!((1..=8).contains(&axis) && cycle > 0, "{monitor:?}");
    let error = core.memory().with_image(|img| {
        memory::get_u32(img, &table.lookup_str(&served.axis_error_id).expect("id"))
    });
    assert_eq!(error, Some(FOLLOWING_ERROR_ID));
}

#[test]
fn the_record_carries_the_drives_actual_values_beside_the_shadows() {
    let robot = cdpr_core::fixtures::robot("uvigo8-drives");
    let mut core = plc(&robot, seed000(&robot, 0.4), 20);
    let mut s = shadow(
        &core,
        Some(robot.clone()),
        config(LOCKSTEP_10MS, ModelKind::ELASTIC),
    );
    assert_eq!(
        s.actuals(),
        Actuals {
            torques: true,
            lengths: true
        }
    );
    let buffer = Buffer::default();
    s.record_to(Recorder::new(Box::new(buffer.clone()), &robot, s.actuals()).expect("record"));
    let t0 = Instant::now();
    for tick in 1..=60u32 {
        plc_cycle(&mut core, &mut s, t0, tick);
    }
    s.finish().expect("flush");
    let bytes = buffer.0.lock().expect("buffer").clone();
    let (header, rows) = csv_rows(bytes.as_slice());
    let (torque, predicted, length, command) = (
        column(&header, "actual_torque_3"),
        column(&header, "motor_torque_3"),
        column(&header, "actual_length_3"),
        column(&header, "length_cmd_3"),
    );
    assert!(rows.len() > 100);
    // The newest sample's values, held between samples, beside the shadow's own: the same
    // drives, within 2 % of rated; the payout within a few mm of the command.
    for row in &rows[rows.len() / 2..] {
        assert!(
            (num(row, torque) - num(row, predicted)).abs() < 0.02,
            "{row:?}"
        );
        assert!(
            (num(row, length) - num(row, command)).abs() < 0.005,
            "{row:?}"
        );
    }
    // A recorder made without the drives' columns gets none (and no ragged rows).
    let mut plain = shadow(
        &core,
        Some(robot.clone()),
        config(LOCKSTEP_10MS, ModelKind::ELASTIC),
    );
    let buffer = Buffer::default();
    plain.record_to(
        Recorder::new(Box::new(buffer.clone()), &robot, Actuals::default()).expect("record"),
    );
    for tick in 61..=70u32 {
        plc_cycle(&mut core, &mut plain, t0, tick);
    }
    plain.finish().expect("flush");
    let bytes = buffer.0.lock().expect("buffer").clone();
    let (header, rows) = csv_rows(bytes.as_slice());
    assert!(!header.iter().any(|h| h.starts_with("actual_")));
    assert!(!rows.is_empty());
}
