use super::*;

/// A command of constant acceleration, per cable: c(t) = c0 + v t + a t²/2.
fn quadratic(t: f64) -> [f64; 2] {
    [1.2 + 0.3 * t - 1.5 * t * t, 0.9 - 0.1 * t + 2.0 * t * t]
}

fn dquadratic(t: f64) -> [f64; 2] {
    [0.3 - 3.0 * t, -0.1 + 4.0 * t]
}

const PAST: Past = Past {
    horizon: 0.02,
    brake: 0.0,
    hold: false,
};

fn read_with(line: &Timeline, t: f64, rule: Slopes) -> (Vec<f64>, Vec<f64>, Reading) {
    let (mut p, mut v) = (Vec::new(), Vec::new());
    let r = line.read(t, (None, rule), PAST, &mut p, &mut v);
    (p, v, r)
}

fn read(line: &Timeline, t: f64) -> (Vec<f64>, Vec<f64>, Reading) {
    read_with(line, t, Slopes::Centred)
}

#[test]
fn the_curve_is_exact_for_constant_acceleration_on_even_and_uneven_knots() {
    // Knots 10 ms apart with one cycle missed (20 ms) and one stamp 3 ms late: from the third
    // knot on, the slopes are the parabola's, so value and rate are the command's exactly.
    let times = [0.0, 0.010, 0.020, 0.040, 0.050, 0.063, 0.070, 0.080];
    let mut line = Timeline::default();
    for &t in &times {
        assert!(line.push(t, &quadratic(t)));
    }
    for rule in [Slopes::Centred, Slopes::Trailing] {
        for j in 0..=600 {
            let t = 0.020 + 0.0001 * f64::from(j);
            let (p, v, r) = read_with(&line, t, rule);
            assert_eq!(r, Reading::Known);
            for k in 0..2 {
                assert!(
                    (p[k] - quadratic(t)[k]).abs() < 1e-12,
                    "{rule:?} t {t}: {p:?}"
                );
                assert!(
                    (v[k] - dquadratic(t)[k]).abs() < 1e-9,
                    "{rule:?} t {t}: {v:?}"
                );
            }
        }
    }
    assert!(
        !line.push(0.080, &[0.0, 0.0]),
        "not after the newest: no new knot"
    );
}

#[test]
fn value_and_rate_are_continuous_at_every_knot_of_any_command() {
    // A command with jerk and an acceleration step (a trapezoid's corner): the left and right
    // limits at each knot agree in value and in rate (C¹: no velocity step for the cables).
    let c = |t: f64| {
        let a = if t < 0.043 { 3.0 } else { -1.0 };
        [0.5 * a * t * t + 4.0 * t * t * t, (17.0 * t).sin()]
    };
    let mut line = Timeline::default();
    for n in 0..12 {
        let t = 0.01 * f64::from(n);
        line.push(t, &c(t));
    }
    for rule in [Slopes::Centred, Slopes::Trailing] {
        for n in 1..11 {
            let t = 0.01 * f64::from(n);
            let (pl, vl, _) = read_with(&line, t - 1e-10, rule);
            let (pr, vr, _) = read_with(&line, t + 1e-10, rule);
            for k in 0..2 {
                assert!((pl[k] - pr[k]).abs() < 1e-7, "{rule:?}: value at knot {n}");
                assert!(
                    (vl[k] - vr[k]).abs() < 1e-6,
                    "{rule:?}: rate at knot {n}: {vl:?} {vr:?}"
                );
            }
            let (p, _, _) = read_with(&line, t, rule);
            assert!((p[0] - c(t)[0]).abs() < 1e-15, "through the knot");
        }
    }
}

/// The largest |acceleration| of the curve through knots 10 ms apart of a command whose
/// acceleration steps from −3 to +3 m/s² (a trapezoid's corner, the rate through zero) at each
/// of ten phases within a cycle, and the largest change of it within 1 ms, both from second
/// differences of the curve read every 1 ms.
fn corner(rule: Slopes) -> (f64, f64) {
    let (mut most, mut change) = (0.0f64, 0.0f64);
    for phase in 0..10 {
        let corner = 0.0005 + 0.001 * f64::from(phase);
        let c = |t: f64| {
            let d = t - corner;
            [if d < 0.0 { -1.5 * d * d } else { 1.5 * d * d }]
        };
        let mut line = Timeline::default();
        for n in -6..8 {
            let t = 0.01 * f64::from(n);
            line.push(t, &c(t));
        }
        let p: Vec<f64> = (-30..50)
            .map(|j| read_with(&line, 0.001 * f64::from(j), rule).0[0])
            .collect();
        let a: Vec<f64> = p
            .windows(3)
            .map(|w| (w[2] - 2.0 * w[1] + w[0]) / 1e-6)
            .collect();
        most = a.iter().fold(most, |m, x| m.max(x.abs()));
        change = a.windows(2).fold(change, |m, w| m.max((w[1] - w[0]).abs()));
    }
    (most, change)
}

#[test]
fn at_an_acceleration_step_centred_slopes_overshoot_less_than_trailing_ones() {
    // The command itself: |a| = 3 m/s², and a change of 6 m/s² within the millisecond of the
    // step. Centred: within 2× the acceleration, and a change below the step's; trailing (known
    // a cycle earlier): up to 3.4× the acceleration.
    let (centred, centred_change) = corner(Slopes::Centred);
    let (trailing, trailing_change) = corner(Slopes::Trailing);
    eprintln!(
        "corner: centred |a| ≤ {centred:.2}, Δa ≤ {centred_change:.2} per ms; trailing |a| ≤ \
         {trailing:.2}, Δa ≤ {trailing_change:.2} per ms"
    );
    assert!(
        centred < 6.0 && centred_change < 6.0,
        "{centred} {centred_change}"
    );
    assert!(trailing > 9.0 && trailing < 10.5, "{trailing}");
}

#[test]
fn past_the_newest_knot_the_slope_goes_on_for_the_horizon_then_brakes() {
    let mut line = Timeline::default();
    for n in 0..4 {
        let t = 0.01 * f64::from(n);
        line.push(t, &quadratic(t));
    }
    let (c, m) = (quadratic(0.03), dquadratic(0.03));
    let (p, v, r) = read(&line, 0.035);
    assert_eq!(r, Reading::Beyond(0.035 - 0.03));
    assert!((p[0] - (c[0] + m[0] * 0.005)).abs() < 1e-12 && (v[0] - m[0]).abs() < 1e-9);
    // Beyond the 20 ms horizon: where the horizon ended, still.
    let (p, v, _) = read(&line, 0.2);
    assert!((p[1] - (c[1] + m[1] * 0.02)).abs() < 1e-12 && v[1] == 0.0);
    // Held: the newest knot, still.
    let (mut ph, mut vh) = (Vec::new(), Vec::new());
    let held = Past { hold: true, ..PAST };
    line.read(0.035, (None, Slopes::Centred), held, &mut ph, &mut vh);
    assert_eq!((ph[0], vh[0]), (c[0], 0.0));
    // Within the horizon with bends allowed (up to 5 m/s²), the command goes on as the
    // quadratic it is, exactly; past it, the time along that slows down, the fastest cable
    // (at the horizon 0.21 - 3 × 0.02 = 0.15 m/s) at 5 m/s², every cable in proportion, to a
    // stop after 0.15 / 5 = 30 ms.
    let braking = Past { brake: 5.0, ..PAST };
    for j in 0..40 {
        let t = 0.03 + 0.0005 * f64::from(j);
        line.read(t, (None, Slopes::Centred), braking, &mut ph, &mut vh);
        for k in 0..2 {
            assert!((ph[k] - quadratic(t)[k]).abs() < 1e-12, "{t} {k}");
            assert!((vh[k] - dquadratic(t)[k]).abs() < 1e-9, "{t} {k}");
        }
    }
    let stop = 0.15 / 5.0;
    let (seq, _) = line.newest().expect("knots");
    for j in 0..120 {
        let d = 0.0005 * f64::from(j);
        line.read(0.05 + d, (None, Slopes::Centred), braking, &mut ph, &mut vh);
        let dd = d.min(stop);
        let rate = (1.0 - d / stop).max(0.0);
        let along = 0.02 + dd - 0.5 * dd * dd / stop;
        for k in 0..2 {
            let t = 0.03 + along;
            assert!((ph[k] - quadratic(t)[k]).abs() < 1e-12, "{d} {k}");
            assert!((vh[k] - dquadratic(t)[k] * rate).abs() < 1e-9, "{d} {k}");
        }
        assert!((line.warped(seq, 0.02 + d, braking) - along).abs() < 1e-12);
    }
    // A bend that brakes a cable stops it where its rate reaches zero: it does not turn back.
    let mut slowing = Timeline::default();
    for n in 0..4 {
        let t = 0.01 * f64::from(n);
        slowing.push(t, &[0.1 * t - t * t]);
    }
    let long = Past {
        horizon: 1.0,
        ..braking
    };
    slowing.read(0.5, (None, Slopes::Centred), long, &mut ph, &mut vh);
    let top = 0.1 * 0.05 - 0.05 * 0.05;
    assert!((ph[0] - top).abs() < 1e-12 && vh[0] == 0.0, "{ph:?} {vh:?}");
    // Read as it was before the last knot came: extrapolated from the one before.
    let (seq, _) = line.newest().expect("knots");
    line.read(
        0.035,
        (Some(seq - 1), Slopes::Centred),
        PAST,
        &mut ph,
        &mut vh,
    );
    let (c2, m2) = (quadratic(0.02), dquadratic(0.02));
    assert!((ph[0] - (c2[0] + m2[0] * 0.015)).abs() < 1e-12);
    // Before the first knot the first holds; an empty line reads nothing.
    assert_eq!(read(&line, -1.0).0, quadratic(0.0).to_vec());
    assert_eq!(read(&Timeline::default(), 0.0).2, Reading::Empty);
}

#[test]
fn a_blend_starts_where_the_command_was_and_ends_on_the_new_line_flat() {
    let mut blend = Blend::default();
    let (was, was_rate) = ([1.0, -2.0], [0.5, 0.0]);
    let (now, now_rate) = ([1.3, -2.1], [0.1, 0.2]);
    blend.restart(2.0, 0.01, (&was, &was_rate), (&now, &now_rate));
    let at_with = |blend: &Blend, t: f64| {
        // The new line, straight on from `now`, plus the correction.
        let mut p = [
            now[0] + now_rate[0] * (t - 2.0),
            now[1] + now_rate[1] * (t - 2.0),
        ];
        let mut v = now_rate;
        blend.apply(t, &mut p, &mut v);
        (p, v)
    };
    let at = |t: f64| at_with(&blend, t);
    let (p, v) = at(2.0);
    assert!((p[0] - was[0]).abs() < 1e-15 && (p[1] - was[1]).abs() < 1e-15);
    assert!((v[0] - was_rate[0]).abs() < 1e-12 && (v[1] - was_rate[1]).abs() < 1e-12);
    // Its rate is the derivative of its value (differenced), all the way.
    for j in 1..100 {
        let t = 2.0 + 1e-4 * f64::from(j);
        let ((p0, _), (p1, _), (_, v)) = (at(t - 1e-7), at(t + 1e-7), at(t));
        assert!(((p1[0] - p0[0]) / 2e-7 - v[0]).abs() < 1e-5, "t {t}");
    }
    let (p, v) = at(2.01);
    assert!((p[0] - (now[0] + now_rate[0] * 0.01)).abs() < 1e-12);
    assert!((v[0] - now_rate[0]).abs() < 1e-9 && (v[1] - now_rate[1]).abs() < 1e-9);
    blend.clear();
    assert_eq!(at_with(&blend, 2.005).1, now_rate);
}

fn measured(p: f64) -> Period {
    Period {
        measured: Some(p),
        configured: 0.010,
    }
}

#[test]
fn samples_are_placed_by_the_plcs_stamps_else_by_counter_and_period() {
    let mut place = Placement::default();
    let t0 = 133_000_000_000_000_000u64;
    let period = measured(0.012);
    assert_eq!(place.place(7, Some(t0), 0.0, period), Some(0.0));
    // The stamps say 10 ms (100 000 ticks) whatever the period believed or the arrival.
    assert_eq!(
        place.place(8, Some(t0 + 100_000), 0.001, period),
        Some(0.01)
    );
    assert_eq!(
        place.place(8, Some(t0 + 100_000), 0.002, period),
        None,
        "the same sample"
    );
    // A PLC that stalled 300 ms: its stamps and the arrival say so alike.
    assert_eq!(
        place.place(9, Some(t0 + 3_100_000), 0.301, period),
        Some(0.31)
    );
    // A PLC clock set 2 s ahead between two samples that came 10 ms apart: one count of the
    // period, not 2 s; the stamps after it count again.
    let stepped = place.place(10, Some(t0 + 23_100_000), 0.311, period);
    assert!(
        (stepped.expect("placed") - 0.322).abs() < 1e-12,
        "{stepped:?}"
    );
    let after = place.place(11, Some(t0 + 23_200_000), 0.321, period);
    assert!((after.expect("placed") - 0.332).abs() < 1e-12, "{after:?}");
    // Set back 9.9 ms: a stamp 0.1 ms on for a count of 12 ms is the clock, not the PLC.
    let back = place.place(12, Some(t0 + 23_201_000), 0.331, period);
    assert!((back.expect("placed") - 0.344).abs() < 1e-12, "{back:?}");
    // Polled: three counts of the period; through the counter's wrap too.
    let polled = place.place(15, None, 0.4, measured(0.002));
    assert!((polled.expect("placed") - 0.35).abs() < 1e-12, "{polled:?}");
    place.reset();
    place.place(u32::MAX, None, 0.0, measured(0.001));
    assert_eq!(place.place(1, None, 0.5, measured(0.001)), Some(0.002));
    assert_eq!(
        place.place(0, None, 0.6, measured(0.001)),
        None,
        "back: not after the last"
    );
}

#[test]
fn before_the_period_is_measured_the_configured_one_places_only_while_arrivals_agree() {
    let polled = |configured: f64, task: f64, jitter: f64| {
        let mut place = Placement::default();
        let period = Period {
            measured: None,
            configured,
        };
        (0..100u32)
            .map(|k| {
                let late = jitter * f64::from((k * 7919) % 100) / 100.0;
                let arrival = 0.5 + f64::from(k) * task + late;
                place
                    .place(1000 + k, None, arrival, period)
                    .expect("placed")
            })
            .collect::<Vec<f64>>()
    };
    // A 10 ms task polled up to 1.5 ms late, 10 ms configured: the counter × 10 ms, exactly.
    let agreed = polled(0.010, 0.010, 0.0015);
    for (k, t) in agreed.iter().enumerate() {
        assert!((t - k as f64 * 0.010).abs() < 1e-12, "{k}: {t}");
    }
    // A 1 ms task, 10 ms configured: placed at 10 ms a count, 100 samples would run 0.9 s
    // ahead of the PLC's 0.1 s; spaced as they came, they do not.
    let contradicted = polled(0.010, 0.001, 0.0);
    assert!(
        (contradicted[99] - 0.099).abs() < 1e-9,
        "{}",
        contradicted[99]
    );
    // Once measured, the counter × the period.
    let mut place = Placement::default();
    let unknown = Period {
        measured: None,
        configured: 0.010,
    };
    place.place(1, None, 0.0, unknown);
    place.place(2, None, 0.001, unknown);
    let next = place
        .place(4, None, 0.0035, measured(1e-3))
        .expect("placed");
    assert!((next - 0.003).abs() < 1e-12, "{next}");
}

#[test]
fn the_read_clock_keeps_the_least_delay_and_moves_it_without_jumps() {
    let mut clock = ReadClock::default();
    // Samples 10 ms apart arrive 1–3 ms after their PLC time: the floor is the 1 ms.
    for (n, late) in [3.0, 1.0, 2.5, 1.8].iter().enumerate() {
        let plc = 0.01 * n as f64;
        clock.observe(plc + late * 1e-3, plc, 0.012);
    }
    assert!((clock.wanted - 0.013).abs() < 1e-12, "{}", clock.wanted);
    // The delay started at the first sample's (3 ms + 12 ms); it moves at most 1 % of the
    // clock, the rate changing by at most 0.1 % a 1 ms step.
    assert!((clock.delay - 0.015).abs() < 1e-12);
    let mut t = 0.04;
    let mut last = clock.at(t, 0.001, false);
    let mut last_rate: Option<f64> = None;
    for _ in 0..3000 {
        t += 0.001;
        let now = clock.at(t, 0.001, false);
        let rate = (now - last) / 0.001;
        assert!(
            (0.99 - 1e-9..=1.01 + 1e-9).contains(&rate),
            "read time at {rate} × the clock"
        );
        if let Some(before) = last_rate {
            assert!(
                (rate - before).abs() <= 1e-3 + 1e-9,
                "{rate} after {before}"
            );
        }
        (last, last_rate) = (now, Some(rate));
    }
    assert!((clock.delay - clock.wanted).abs() < 1e-6, "reached");
    // A wanted delay that moves less than the dead band leaves the read time alone; while the
    // commands stand still, the delay goes to the wanted one at once.
    clock.wanted = clock.delay + 0.3e-3;
    let before = clock.at(t + 0.001, 0.001, false);
    assert!((clock.at(t + 0.002, 0.001, false) - before - 0.001).abs() < 1e-12);
    clock.wanted += 5e-3;
    assert!((clock.at(t + 0.003, 0.001, true) - (t + 0.003 - clock.wanted)).abs() < 1e-12);
    // The floor is the least of the last 64 samples, of the last 1 s: an early one 10 ms
    // ahead of the others leaves it after 64 more, or after 1 s of 0.1 s samples.
    for (period, leaves) in [(0.001, 64), (0.010, 64), (0.1, 10)] {
        let mut clock = ReadClock::default();
        clock.observe(0.0, 0.010, 0.0);
        for n in 1..=64 {
            let plc = 0.010 + period * f64::from(n);
            clock.observe(plc + 0.002, plc, 0.0);
            let expect = if n < leaves { -0.010 } else { 0.002 };
            assert!(
                (clock.wanted - expect).abs() < 1e-12,
                "{period} s, sample {n}: {}",
                clock.wanted
            );
        }
    }
}

#[test]
fn a_line_of_equal_knots_is_still() {
    let mut line = Timeline::default();
    assert!(line.still());
    line.push(0.0, &[1.0, 2.0]);
    line.push(0.01, &[1.0, 2.0 + 1e-10]);
    assert!(line.still());
    line.push(0.02, &[1.0, 2.001]);
    assert!(!line.still());
}

#[test]
fn pruning_keeps_the_knot_the_read_point_needs_and_a_full_line_drops_its_oldest() {
    let mut line = Timeline::default();
    for n in 0..10 {
        line.push(f64::from(n), &[f64::from(n)]);
    }
    line.prune(5.5);
    assert_eq!(line.knots.front().map(|k| k.time), Some(5.0));
    assert_eq!(read(&line, 5.5).0, vec![5.5]);
    for n in 10..(MAX_KNOTS as u32 + 50) {
        line.push(f64::from(n), &[f64::from(n)]);
    }
    assert_eq!(line.knots.len(), MAX_KNOTS);
}
