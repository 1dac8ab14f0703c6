//! Tracking metrics with known answers: delays give their lag, offsets their RMS and Fréchet
//! distance, identical paths zero, scaled copies their NRMSE; resampling, segments, errors.

use cdpr_core::kinematics::Pose;
use cdpr_core::metrics::{self, CompareOptions, Point};
use cdpr_core::trajectory::perturb::{Perturbation, perturb};
use cdpr_core::trajectory::{self, BuiltinOptions, Sample, Trajectory};

fn seed000() -> Trajectory {
    let robot = cdpr_core::fixtures::uvigo8();
    trajectory::builtin(&robot, "seed000", &BuiltinOptions::default()).unwrap()
}

/// A copy with every position mapped by `f` (derivatives kept: the metrics use positions).
fn mapped(t: &Trajectory, f: impl Fn(usize, [f64; 3]) -> [f64; 3]) -> Trajectory {
    let mut out = t.clone();
    for (k, s) in out.samples.iter_mut().enumerate() {
        let p = s.pose.position;
        let q = f(k, [p.x, p.y, p.z]);
        s.pose.position = nalgebra::Vector3::new(q[0], q[1], q[2]);
    }
    out
}

/// actualₖ = referenceₖ₋d (held at the start).
fn delayed(t: &Trajectory, d: usize) -> Trajectory {
    let positions: Vec<[f64; 3]> = t
        .samples
        .iter()
        .map(|s| [s.pose.position.x, s.pose.position.y, s.pose.position.z])
        .collect();
    mapped(t, |k, _| positions[k.saturating_sub(d)])
}

#[test]
fn a_delay_of_k_samples_gives_lag_k_and_zero_error_once_removed() {
    let reference = seed000();
    for k in [0, 1, 35, 200] {
        let actual = delayed(&reference, k);
        let c = metrics::compare(&reference, &actual, &CompareOptions::default()).unwrap();
        assert_eq!(c.lag_samples, k);
        assert!((c.lag_s - 0.002 * k as f64).abs() < 1e-12);
        assert_eq!(c.total.samples, reference.samples.len() - k);
        assert!(c.total.rms_3d < 1e-15 && c.total.frechet < 1e-15, "{k}");
    }
}

#[test]
fn the_lag_survives_offset_and_resampling_at_50_ms() {
    // Seed 000's shadow: 70 ms late, reported every 50 ms; plus a 0.5 mm sag.
    let reference = seed000();
    let p = Perturbation {
        delay: 0.07,
        offset: [0.0, 0.0, -0.0005],
        resample: Some(0.05),
        ..Perturbation::default()
    };
    let actual = perturb(&reference, &p).unwrap();
    assert!(actual.samples.len() < 700);
    let c = metrics::compare(&reference, &actual, &CompareOptions::default()).unwrap();
    assert_eq!(c.lag_samples, 35);
    // Left: the offset, plus the linear interpolation's corner errors between 50 ms samples.
    assert!((c.total.rms[2] - 0.0005).abs() < 2e-5, "{:?}", c.total.rms);
    assert!(c.total.rms[0] < 1e-4 && c.total.rms[1] < 1e-4);
}

#[test]
fn a_constant_offset_d_gives_rms_d_and_frechet_d() {
    let reference = seed000();
    let d = 0.0013;
    let actual = mapped(&reference, |_, p| [p[0] + d, p[1], p[2]]);
    let c = metrics::compare(&reference, &actual, &CompareOptions::default()).unwrap();
    assert_eq!(c.lag_samples, 0);
    assert!((c.total.rms[0] - d).abs() < 1e-15);
    assert!(c.total.rms[1] == 0.0 && c.total.rms[2] == 0.0);
    assert!((c.total.rms_3d - d).abs() < 1e-15);
    assert!((c.total.max_3d - d).abs() < 1e-15);
    assert!((c.total.frechet - d).abs() < 1e-15);
    // Per segment too (seed 000's Table 1 rows).
    let names: Vec<&str> = c.segments.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["XY", "XZ", "YZ", "Up", "Down"]);
    for s in &c.segments {
        assert!((s.metrics.rms_3d - d).abs() < 1e-15 && (s.metrics.frechet - d).abs() < 1e-15);
    }
    let total: usize = c.segments.iter().map(|s| s.metrics.samples).sum();
    assert_eq!(total, c.total.samples);
}

#[test]
fn identical_paths_give_zero_and_perfect_nrmse() {
    let reference = seed000();
    let c = metrics::compare(&reference, &reference, &CompareOptions::default()).unwrap();
    assert_eq!(c.lag_samples, 0);
    assert_eq!(
        (c.total.rms, c.total.rms_3d, c.total.max_3d, c.total.frechet),
        ([0.0; 3], 0.0, 0.0, 0.0)
    );
    assert_eq!(c.total.nrmse, [Some(1.0); 3]);
    // The XY square has a constant z: its NRMSE is undefined, reported as null.
    assert_eq!(c.segments[0].metrics.nrmse[2], None);
}

#[test]
fn nrmse_of_a_scaled_copy_is_one_minus_the_scale_error() {
    // actual = mean + s (reference − mean) ⇒ ‖ref − act‖ = |1 − s| ‖ref − mean‖.
    let reference = seed000();
    let n = reference.samples.len() as f64;
    let mut mean = [0.0; 3];
    for s in &reference.samples {
        for (m, x) in mean.iter_mut().zip(s.pose.position.iter()) {
            *m += x / n;
        }
    }
    for scale in [0.9, 1.05, 3.0] {
        let actual = mapped(&reference, |_, p| {
            std::array::from_fn(|c| mean[c] + scale * (p[c] - mean[c]))
        });
        let options = CompareOptions {
            remove_lag: false,
            ..CompareOptions::default()
        };
        let c = metrics::compare(&reference, &actual, &options).unwrap();
        for v in c.total.nrmse {
            let v = v.expect("moving channel");
            assert!(
                (v - (1.0 - (1.0f64 - scale).abs())).abs() < 1e-12,
                "{scale}: {v}"
            );
        }
    }
}

#[test]
fn a_linear_motion_resampled_from_a_coarse_log_is_exact() {
    // Linear interpolation reproduces a straight constant-speed motion exactly.
    let line = |dt: f64, n: usize| Trajectory {
        samples: (0..n)
            .map(|k| {
                let t = k as f64 * dt;
                Sample {
                    t,
                    pose: Pose::new(0.1 * t, -0.2 * t, 0.05, 0.0, 0.0, 0.0),
                    velocity: [0.0; 6],
                    acceleration: [0.0; 6],
                    segment: None,
                }
            })
            .collect(),
        segments: vec![],
    };
    let (reference, actual) = (line(0.002, 1001), line(0.05, 41));
    let c = metrics::compare(&reference, &actual, &CompareOptions::default()).unwrap();
    assert_eq!(c.lag_samples, 0);
    assert!(c.total.max_3d < 1e-15);
    assert!(c.segments.is_empty());
}

#[test]
fn no_lag_reports_the_lag_but_keeps_it_in_the_errors() {
    let reference = seed000();
    let actual = delayed(&reference, 35);
    let options = CompareOptions {
        remove_lag: false,
        ..CompareOptions::default()
    };
    let c = metrics::compare(&reference, &actual, &options).unwrap();
    assert_eq!((c.lag_samples, c.lag_removed), (35, false));
    assert_eq!(c.total.samples, reference.samples.len());
    // Moving at 0.1 m/s, 70 ms behind: 7 mm along the path while cruising.
    assert!((c.total.max_3d - 0.007).abs() < 1e-9, "{}", c.total.max_3d);
}

#[test]
fn the_lag_search_is_bounded_by_max_lag() {
    let reference = seed000();
    let actual = delayed(&reference, 100); // 0.2 s
    let options = CompareOptions {
        max_lag_s: 0.1,
        ..CompareOptions::default()
    };
    let c = metrics::compare(&reference, &actual, &options).unwrap();
    assert!(c.lag_samples <= 50);
}

#[test]
fn frechet_of_a_hand_example() {
    // p walks (0,0)→(1,0)→(2,0); q jumps (0,1)→(2,1): p's middle point must be coupled with
    // one of q's ends, √2 away.
    let p: Vec<Point> = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
    let q: Vec<Point> = vec![[0.0, 1.0, 0.0], [2.0, 1.0, 0.0]];
    assert!((metrics::frechet(&p, &q) - 2f64.sqrt()).abs() < 1e-15);
    // A path against itself reversed: the ends must be coupled, distance = its length.
    let reversed: Vec<Point> = p.iter().rev().copied().collect();
    assert!((metrics::frechet(&p, &reversed) - 2.0).abs() < 1e-15);
    assert!(metrics::frechet(&p, &[]).is_nan());
}

#[test]
fn errors_name_what_is_wrong() {
    let reference = seed000();
    let empty = Trajectory::default();
    let e = metrics::compare(&reference, &empty, &CompareOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "the actual trajectory has no samples");
    let e = metrics::compare(&empty, &reference, &CompareOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "the reference trajectory has no samples");
    let mut later = reference.clone();
    for s in &mut later.samples {
        s.t += 100.0;
    }
    let e = metrics::compare(&reference, &later, &CompareOptions::default()).unwrap_err();
    assert!(e.to_string().contains("do not overlap in time"), "{e}");
    let options = CompareOptions {
        max_lag_s: -1.0,
        ..CompareOptions::default()
    };
    let e = metrics::compare(&reference, &reference, &options).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("`max_lag` -1: the lag search bound"),
        "{e}"
    );
}

#[test]
fn the_json_has_the_issues_keys() {
    let reference = seed000();
    let actual = delayed(&reference, 3);
    let c = metrics::compare(&reference, &actual, &CompareOptions::default()).unwrap();
    let v = serde_json::to_value(&c).unwrap();
    for key in "lag_samples lag_s rms rms_3d max_3d frechet nrmse nrmse_definition samples segments"
        .split_whitespace()
    {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["rms"].as_array().unwrap().len(), 3);
    assert_eq!(v["segments"][3]["name"], "Up");
    assert!(v["segments"][0]["nrmse"][2].is_null());
    assert!(v["segments"][0].get("frechet").is_some());
}
