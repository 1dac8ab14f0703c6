//! Unit tests of the surrogate against independent numbers: the continuous second-order step
//! response in closed form, Tustin's frequency warping, a fit recovering known parameters
//! from a response built from that closed form, the combination step on a known boundary.

use super::fit::{FitMethod, FitOptions, Series, fit_dof, nrmse};
use super::*;
use crate::fixtures::edited;
use std::f64::consts::TAU;

/// Unit step response of K ω²/(s² + 2ζω s + ω²) at t ≥ 0 (closed form, all three regimes).
fn step_closed_form(k: f64, f_hz: f64, zeta: f64, t: f64) -> f64 {
    if t <= 0.0 {
        return 0.0;
    }
    let w = TAU * f_hz;
    let y = if (zeta - 1.0).abs() < 1e-9 {
        1.0 - (1.0 + w * t) * (-w * t).exp()
    } else if zeta < 1.0 {
        let wd = w * (1.0 - zeta * zeta).sqrt();
        1.0 - (-zeta * w * t).exp()
            * ((wd * t).cos() + zeta / (1.0 - zeta * zeta).sqrt() * (wd * t).sin())
    } else {
        let r = (zeta * zeta - 1.0).sqrt();
        let (s1, s2) = (w * (-zeta + r), w * (-zeta - r));
        1.0 - (s2 * (s1 * t).exp() - s1 * (s2 * t).exp()) / (s2 - s1)
    };
    k * y
}

fn params(delay: f64, k: f64, f: f64, zeta: f64) -> DofParams {
    DofParams {
        delay_s: delay,
        gain: k,
        natural_frequency_hz: f,
        damping: zeta,
    }
}

#[test]
fn tustin_step_response_matches_the_continuous_closed_form() {
    let dt = 1e-3;
    for (f, zeta) in [(2.8, 1.5), (2.0, 1.0), (5.0, 0.3), (1.0, 0.7)] {
        let p = params(0.0, 1.0, f, zeta);
        let filter = DofFilter::new(&p, dt);
        let mut state = DofState::at_rest(&filter, 0.0);
        let mut worst: f64 = 0.0;
        // The trapezoidal rule sees the input samples 0, 1, 1, … as a step at −T/2, so
        // y_n ≈ y((n + ½)T); what remains is Tustin's O((ωT)²) error.
        for n in 0..3000 {
            let y = state.step(&filter, 1.0);
            let t = (n as f64 + 0.5) * dt;
            worst = worst.max((y - step_closed_form(1.0, f, zeta, t)).abs());
        }
        let wt = TAU * f * dt;
        assert!(worst < wt * wt, "f {f} ζ {zeta}: {worst} (ωT = {wt})");
    }
}

#[test]
fn delay_is_whole_samples_and_gain_is_k() {
    let dt = 0.01;
    let filter = DofFilter::new(&params(0.083, 0.9, 2.0, 1.2), dt);
    assert_eq!(filter.delay_samples, 8);
    let mut state = DofState::at_rest(&filter, 0.0);
    let out: Vec<f64> = (0..2000).map(|_| state.step(&filter, 2.0)).collect();
    assert!(out[..8].iter().all(|&y| y == 0.0), "{:?}", &out[..10]);
    assert!(out[8] > 0.0);
    assert!((out[1999] - 1.8).abs() < 1e-9, "{}", out[1999]);
    // DC gain of the difference equation: b·4 / (1 + a1 + a2) = K.
    assert!((4.0 * filter.b / (1.0 + filter.a1 + filter.a2) - 0.9).abs() < 1e-12);
}

#[test]
fn tustin_warps_frequency_as_predicted() {
    // |H_d(e^{jωT})| = |H_c(j (2/T) tan(ωT/2))| exactly.
    let dt = 0.02;
    let (f_n, zeta) = (2.8, 0.4);
    let filter = DofFilter::new(&params(0.0, 1.0, f_n, zeta), dt);
    let w_n = TAU * f_n;
    for f in [0.5, 2.0, 2.8, 6.0, 12.0] {
        let (mag, _) = filter.response(f, dt);
        let wa = 2.0 / dt * (TAU * f * dt / 2.0).tan();
        let continuous =
            w_n * w_n / ((w_n * w_n - wa * wa).powi(2) + (2.0 * zeta * w_n * wa).powi(2)).sqrt();
        assert!(
            (mag - continuous).abs() < 1e-9 * continuous.max(1.0),
            "f {f}: {mag} vs {continuous}"
        );
    }
}

#[test]
fn stable_at_any_sampling_period() {
    for dt in [1e-4, 1e-2, 0.5, 5.0] {
        let filter = DofFilter::new(&params(0.0, 1.0, 50.0, 0.05), dt);
        // Poles of z² + a1 z + a2: inside the unit circle iff |a2| < 1 and |a1| < 1 + a2.
        assert!(
            filter.a2.abs() < 1.0 && filter.a1.abs() < 1.0 + filter.a2,
            "dt {dt}: {filter:?}"
        );
    }
}

/// A response built by superposing delayed closed-form step responses (independent of the
/// discrete filter): input levels change at the given times.
fn synthetic(levels: &[(f64, f64)], dt: f64, n: usize, truth: &DofParams) -> Series {
    let input: Vec<f64> = (0..n)
        .map(|k| {
            let t = k as f64 * dt;
            levels
                .iter()
                .filter(|(at, _)| *at <= t)
                .map(|(_, d)| d)
                .sum()
        })
        .collect();
    let output: Vec<f64> = (0..n)
        .map(|k| {
            let t = k as f64 * dt;
            levels
                .iter()
                .map(|(at, d)| {
                    d * step_closed_form(
                        truth.gain,
                        truth.natural_frequency_hz,
                        truth.damping,
                        t - at - truth.delay_s,
                    )
                })
                .sum()
        })
        .collect();
    Series { input, output }
}

#[test]
fn fit_recovers_known_delay_frequency_and_damping() {
    let dt = 0.005;
    let truth = params(0.06, 1.0, 2.2, 0.8);
    let steps = [
        (0.2, 0.05),
        (1.7, -0.05),
        (3.2, -0.05),
        (4.7, 0.075),
        (6.2, -0.075),
    ];
    let series = synthetic(&steps, dt, 1600, &truth);
    let fit = fit_dof(&[series], dt, &FitOptions::wide(dt)).expect("fit");
    let p = fit.params;
    assert!((p.delay_s - truth.delay_s).abs() <= dt + 1e-12, "{p:?}");
    assert!(
        (p.natural_frequency_hz / truth.natural_frequency_hz - 1.0).abs() < 0.03,
        "{p:?}"
    );
    assert!((p.damping - truth.damping).abs() < 0.03, "{p:?}");
    assert!(fit.nrmse > 0.98, "{}", fit.nrmse);
}

#[test]
fn seed004_grid_fit_finds_the_papers_pitch_filter() {
    // Seed 004 Table 4: τ = 0.08 s, ζ = 1.5, f_n = 2.8 Hz on its 0.05 grid, at its 20 ms period.
    // (Overdamped filters with the same slow pole look alike, so the response is the paper's
    // discrete filter itself: the grid must land on the exact node.)
    let dt = 0.02;
    let truth = DofParams::PUBLISHED_PITCH;
    let steps = [(0.5, 0.3), (3.0, -0.6), (6.0, 0.45), (9.0, -0.15)];
    let mut series = synthetic(&steps, dt, 600, &truth);
    filter::filter_series(
        &DofFilter::new(&truth, dt),
        &series.input,
        &mut series.output,
    );
    let fit = fit_dof(&[series], dt, &FitOptions::paper_grid()).expect("fit");
    let p = fit.params;
    assert_eq!(FitOptions::paper_grid().method, FitMethod::Grid);
    assert!((p.delay_s - 0.08).abs() < 1e-9, "{p:?}");
    assert!((p.natural_frequency_hz - 2.8).abs() < 1e-9, "{p:?}");
    assert!((p.damping - 1.5).abs() < 1e-9, "{p:?}");
    assert!(fit.nrmse > 1.0 - 1e-9, "{}", fit.nrmse);
}

#[test]
fn nrmse_definition() {
    let reference = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(nrmse(&reference, &reference), Some(1.0));
    // Mean 2.5, spread √5; error ‖1‖ over 4 samples = 2: 1 − 2/√5.
    let shifted = [2.0, 3.0, 4.0, 5.0];
    let v = nrmse(&reference, &shifted).expect("excited");
    assert!((v - (1.0 - 2.0 / 5f64.sqrt())).abs() < 1e-12);
    assert_eq!(nrmse(&[2.0; 5], &[1.0; 5]), None);
}

#[test]
fn params_round_trip_and_errors_name_file_line_field() {
    let mut p = SurrogateParams::empty("uvigo8", 0.001, [0.0, 0.0, 0.15, 0.0, 0.0, 0.0]);
    p.set_dof(
        0,
        DofEntry::from_params(&params(0.004, 1.0, 2.6, 1.1), Some(0.99)),
    );
    p.set_dof(5, DofEntry::from_params(&params(0.0, 1.0, 8.0, 0.7), None));
    let text = p.to_toml();
    let back = SurrogateParams::parse(&text, "p.toml").expect("parse");
    assert_eq!(back, p);

    let bad = edited(&text, "damping = 1.1", "damping = -1.1");
    let err = SurrogateParams::parse(&bad, "p.toml").expect_err("negative damping");
    let msg = err.to_string();
    assert!(msg.starts_with("p.toml:"), "{msg}");
    assert!(msg.contains("x.damping"), "{msg}");
    let line = bad
        .lines()
        .position(|l| l.starts_with("damping = -1.1"))
        .expect("line")
        + 1;
    assert!(msg.contains(&format!(":{line}:")), "{msg}");

    let typo = edited(&text, "natural_frequency_hz = 2.6", "natural_freq = 2.6");
    let msg = SurrogateParams::parse(&typo, "p.toml")
        .expect_err("unknown key")
        .to_string();
    assert!(
        msg.contains("p.toml:") && msg.contains("natural_freq"),
        "{msg}"
    );
}

#[test]
fn params_errors_after_multi_line_arrays_name_the_table_and_key() {
    // Written by hand: multi-line arrays (one of arrays of numbers) before the DOF tables.
    let text = "robot = \"uvigo8\"\n\
        dt = 0.001\n\
        rest = [\n  0.0, 0.0, 0.15,\n  0.0, 0.0, 0.0,\n]\n\
        references = [\n  \"[a] run\",\n  \"b\",\n]\n\
        \n[x]\n\
        delay_s = 0.004\n\
        gain = 1.0\n\
        natural_frequency_hz = 2.6\n\
        dampng = 1.1\n";
    let msg = SurrogateParams::parse(text, "p.toml")
        .expect_err("unknown key")
        .to_string();
    // Line 16: after 2 + 4 (rest) + 4 (references) + blank + header + 3 keys.
    assert!(
        msg.starts_with("p.toml:16: x.dampng: unknown field"),
        "{msg}"
    );

    let text = edited(text, "dampng = 1.1", "damping = 0.0");
    let msg = SurrogateParams::parse(&text, "p.toml")
        .expect_err("zero damping")
        .to_string();
    assert!(
        msg.starts_with("p.toml:16: x.damping: damping must be > 0"),
        "{msg}"
    );

    let text = edited(&text, "gain = 1.0\n", "");
    let msg = SurrogateParams::parse(&text, "p.toml")
        .expect_err("missing gain")
        .to_string();
    assert!(msg.contains(": x.gain: missing field `gain`"), "{msg}");
}

#[test]
fn combination_scales_proportionally_to_the_boundary() {
    // Reachable iff |x| ≤ 0.1 and |yaw| ≤ 0.2: the demand (0.3, 0, 0.15, 0, 0, 0.3) from rest
    // (0, 0, 0.15, 0, 0, 0) is limited by x at λ = 1/3.
    let reach = |p: &[f64; 6]| p[0].abs() <= 0.1 && p[5].abs() <= 0.2;
    let rest = [0.0, 0.0, 0.15, 0.0, 0.0, 0.0];
    let demand = [0.3, 0.0, 0.15, 0.0, 0.0, 0.3];
    let c = combine(&reach, &rest, &demand, &combine::DEFAULT_TOLERANCES);
    assert!(c.limited && !c.rest_unreachable);
    assert!(reach(&c.pose), "{c:?}");
    assert!((c.scale - 1.0 / 3.0).abs() < 1e-3, "{c:?}");
    assert!(
        (c.pose[5] / c.pose[0] - 1.0).abs() < 1e-12,
        "proportional: {c:?}"
    );
    assert!((c.pose[0] - 0.1).abs() <= 1e-4);
    let free = combine(&reach, &rest, &rest, &combine::DEFAULT_TOLERANCES);
    assert!(!free.limited && free.scale == 1.0 && free.checks == 1);
}

#[test]
fn cdpr_reachability_map_agrees_with_the_exact_test() {
    let robot = crate::robot::Robot::load("uvigo8").expect("uvigo8");
    let exact = CdprReachability::exact(&robot);
    let mapped = CdprReachability::with_map(&robot, 0.02);
    let mut disagreements = 0;
    for i in 0..9 {
        for k in 0..9 {
            let pose = [
                -0.2 + 0.05 * i as f64,
                0.03,
                -0.05 + 0.05 * k as f64,
                0.0,
                0.0,
                0.0,
            ];
            disagreements += (exact.reachable(&pose) != mapped.reachable(&pose)) as usize;
        }
    }
    assert_eq!(disagreements, 0);
}

#[test]
fn surrogate_passes_unfitted_dofs_and_starts_at_rest() {
    let mut p = SurrogateParams::empty("t", 0.01, [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    p.set_dof(2, DofEntry::from_params(&params(0.02, 1.0, 3.0, 1.0), None));
    let s = Surrogate::new(&p, 0.01);
    let start = [0.1, 0.2, 1.0, 0.0, 0.0, 0.0];
    let mut state = s.start(&start);
    let out = s.step(&mut state, &[0.3, 0.2, 1.5, 0.0, 0.0, 0.0]);
    assert_eq!(out[0], 0.3, "x passes through");
    assert_eq!(out[2], 1.0, "z still at rest (2 samples of delay)");
    for _ in 0..1000 {
        s.step(&mut state, &[0.3, 0.2, 1.5, 0.0, 0.0, 0.0]);
    }
    assert!((state.output[2] - 1.5).abs() < 1e-9);
}
