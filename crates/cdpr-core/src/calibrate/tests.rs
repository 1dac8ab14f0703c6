//! The calibration recovers a "real" robot that differs from the file it starts from, from a
//! run the test generates itself, independently of the simulator and of the fit's model code:
//! the platform moved along a prescribed motion, its Newton–Euler written here with the
//! angular velocity taken from the rotation matrices by differences (not from Euler rates),
//! the tensions from a pseudo-inverse with a pretension in the null space, each cable's
//! payout integrated (RK4) through its spring-damper from those tensions, the motor torques
//! from the drive law, then noise on everything measured.

use super::*;
use crate::fixtures::{Splitmix, robot};
use crate::robot::{Robot, Stiffness};
use nalgebra::{DMatrix, DVector, Matrix3, Rotation3, Vector3};

/// The exciting motion: sums of sines in every coordinate, a few centimetres and degrees.
fn pose_at(t: f64) -> [f64; 6] {
    let s = |a: f64, f: f64, p: f64| a * (std::f64::consts::TAU * f * t + p).sin();
    [
        s(0.07, 0.37, 0.0) + s(0.03, 1.3, 0.4),
        s(0.07, 0.29, 1.0) + s(0.03, 1.7, 0.2),
        0.15 + s(0.07, 0.43, 0.5) + s(0.01, 2.9, 1.3),
        s(0.04, 0.53, 0.3),
        s(0.04, 0.61, 0.9),
        s(0.05, 0.47, 1.7),
    ]
}

fn rotation(p: &[f64; 6]) -> Matrix3<f64> {
    *Rotation3::from_euler_angles(p[3], p[4], p[5]).matrix()
}

/// The world angular velocity at t from R(t ± h) (the skew part of Ṙ Rᵀ).
fn omega_at(t: f64) -> Vector3<f64> {
    let h = 1e-5;
    let d = (rotation(&pose_at(t + h)) - rotation(&pose_at(t - h))) / (2.0 * h);
    let w = d * rotation(&pose_at(t)).transpose();
    Vector3::new(
        w[(2, 1)] - w[(1, 2)],
        w[(0, 2)] - w[(2, 0)],
        w[(1, 0)] - w[(0, 1)],
    ) * 0.5
}

/// The "real" robot: the file's with its drives, stiffness and geometry changed.
fn real_robot(file: &Robot) -> (Robot, Vec<f64>, Vec<f64>) {
    let mut real = file.clone();
    for (i, d) in real.drives.iter_mut().enumerate() {
        d.rotor_inertia *= 1.3 - 0.05 * i as f64;
        d.viscous_friction *= 1.5;
        d.coulomb_friction *= 0.7 + 0.1 * i as f64;
    }
    for (i, c) in real.cables.iter_mut().enumerate() {
        c.stiffness = match c.stiffness {
            Stiffness::Constant(k) => Stiffness::Constant(k * (0.9 + 0.02 * i as f64)),
            Stiffness::Ea(ea) => Stiffness::Ea(ea * (0.9 + 0.02 * i as f64)),
        };
    }
    real.cables[2].frame_anchor += Vector3::new(0.005, -0.003, 0.004);
    real.cables[5].frame_anchor += Vector3::new(-0.002, 0.006, -0.003);
    let torque_offsets = (0..8).map(|i| 0.004 * (i as f64 - 3.5)).collect();
    let length_offsets = (0..8).map(|i| 0.001 * ((i % 3) as f64 - 1.0)).collect();
    (real, torque_offsets, length_offsets)
}

/// Tensions holding the prescribed motion at t on `real`: W⁺w plus the projection of a
/// uniform pretension onto W's null space.
fn tensions_at(real: &Robot, t: f64) -> (Vec<f64>, Vec<f64>) {
    let p = pose_at(t);
    let r = rotation(&p);
    let origin = Vector3::new(p[0], p[1], p[2]);
    let h = 1e-4;
    let position = |t: f64| {
        let q = pose_at(t);
        Vector3::new(q[0], q[1], q[2])
    };
    let acceleration = (position(t + h) - 2.0 * origin + position(t - h)) / (h * h);
    let omega = omega_at(t);
    let alpha = (omega_at(t + h) - omega_at(t - h)) / (2.0 * h);
    let m = real.platform.mass;
    let rc = r * real.platform.com;
    let a_c = acceleration + alpha.cross(&rc) + omega.cross(&omega.cross(&rc));
    let inertia = r * real.platform.inertia * r.transpose();
    let gravity = Vector3::new(0.0, 0.0, -9.81 * m);
    let force = m * a_c - gravity;
    let moment = rc.cross(&(m * a_c - gravity)) + inertia * alpha + omega.cross(&(inertia * omega));
    let mut w = DMatrix::zeros(6, real.cables.len());
    let mut lengths = Vec::new();
    for (i, c) in real.cables.iter().enumerate() {
        let arm = r * c.platform_anchor;
        let l = c.frame_anchor - origin - arm;
        let d = l / l.norm();
        let col = arm.cross(&d);
        for k in 0..3 {
            w[(k, i)] = d[k];
            w[(k + 3, i)] = col[k];
        }
        lengths.push(l.norm());
    }
    let wrench =
        DVector::from_column_slice(&[force.x, force.y, force.z, moment.x, moment.y, moment.z]);
    let pinv = w.clone().pseudo_inverse(1e-12).expect("W has full rank");
    let null = DMatrix::identity(8, 8) - &pinv * &w;
    let tensions = &pinv * wrench + null * DVector::from_element(8, 25.0);
    (tensions.iter().copied().collect(), lengths)
}

/// The run as the drives and a tracker measure it: `seconds` at 1 kHz.
fn measured_run(
    real: &Robot,
    torque_offsets: &[f64],
    length_offsets: &[f64],
    seconds: f64,
) -> Measured {
    let dt = 1e-3;
    let sub = 4;
    let h = dt / sub as f64;
    let steps = (seconds / dt).round() as usize;
    let cables = real.cables.len();
    // Tensions and lengths on a grid of h/2 (RK4's stages), L̇ by central differences.
    let grid: Vec<(Vec<f64>, Vec<f64>)> = (0..=2 * steps * sub + 2)
        .map(|m| tensions_at(real, m as f64 * 0.5 * h))
        .collect();
    let rate_of = |m: usize, i: usize| {
        let (a, b) = (m.saturating_sub(1), (m + 1).min(grid.len() - 1));
        (grid[b].1[i] - grid[a].1[i]) / ((b - a) as f64 * 0.5 * h)
    };
    // ṡ = L̇ − (T − k(L − s))/c per cable, at grid point m.
    let rhs = |m: usize, s: &[f64]| -> Vec<f64> {
        (0..cables)
            .map(|i| {
                let c = &real.cables[i];
                let (tension, length) = (grid[m].0[i], grid[m].1[i]);
                rate_of(m, i) - (tension - c.stiffness_at(s[i]) * (length - s[i])) / c.damping
            })
            .collect()
    };
    // Start at the static stretch (the dampers' transient dies in a few ms, before the window
    // of the first sample kept).
    let mut s: Vec<f64> = (0..cables)
        .map(|i| grid[0].1[i] - grid[0].0[i] / real.cables[i].stiffness_at(grid[0].1[i]))
        .collect();
    let mut fine_s = vec![s.clone()];
    let mut fine_rate = vec![rhs(0, &s)];
    let add = |a: &[f64], b: &[f64], f: f64| -> Vec<f64> {
        a.iter().zip(b).map(|(a, b)| a + f * b).collect()
    };
    for j in 0..steps * sub {
        let m = 2 * j;
        let k1 = rhs(m, &s);
        let k2 = rhs(m + 1, &add(&s, &k1, 0.5 * h));
        let k3 = rhs(m + 1, &add(&s, &k2, 0.5 * h));
        let k4 = rhs(m + 2, &add(&s, &k3, h));
        for i in 0..cables {
            s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
        fine_s.push(s.clone());
        fine_rate.push(rhs(m + 2, &s));
    }
    let mut noise = Splitmix(38);
    let mut m = Measured {
        cables,
        drives: real.drives.len(),
        ..Measured::default()
    };
    for n in 0..=steps {
        let t = n as f64 * dt;
        let j = n * sub;
        let tension = &grid[2 * j].0;
        let mut pose = pose_at(t);
        for x in pose.iter_mut() {
            // A tracker to 10 µm and 10 µrad.
            *x += noise.normal(10e-6);
        }
        m.times.push(t);
        m.poses.push(pose);
        for i in 0..cables {
            m.payouts
                .push(fine_s[j][i] - length_offsets[i] + noise.normal(10e-6));
        }
        for (i, d) in real.drives.iter().enumerate() {
            let rate = fine_rate[j][i];
            let (ahead, behind) = (
                &fine_rate[(j + 1).min(fine_rate.len() - 1)],
                &fine_rate[j.saturating_sub(1)],
            );
            let acceleration = (ahead[i] - behind[i]) / (2.0 * h);
            let rho = d.payout_per_radian();
            let tau = d.torque_for(rate / rho, acceleration / rho, tension[i]) + torque_offsets[i];
            m.torques.push(tau + noise.normal(0.005 * d.rated_torque));
        }
    }
    m
}

#[test]
fn a_real_robot_is_recovered_from_its_noisy_run() {
    let file = robot("uvigo8-drives");
    let (real, torque_offsets, length_offsets) = real_robot(&file);
    let measured = measured_run(&real, &torque_offsets, &length_offsets, 20.0);
    // Through a CSV as a lab would export it, read back by column name.
    let dir = std::env::temp_dir().join(format!("cdpr-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("run.csv");
    std::fs::write(&csv, csv_text(&measured, "")).unwrap();
    let read = input::read_csv(&csv, &file).unwrap();
    assert_eq!(
        read, measured,
        "a CSV of shortest round-trip numbers reads back bit for bit"
    );
    let samples = prepare(&file, &read, &Preparation::default()).unwrap();
    let groups = [Group::Drives, Group::Stiffness, Group::Geometry];
    let fit = calibrate(&file, &samples, &groups).unwrap();
    assert_eq!(
        fit.not_excited,
        vec![],
        "everything is excited by this motion"
    );
    // The residuals fall to the smoothed noise: a Gaussian of σ = 10 samples keeps
    // 1/√(2√π·10) ≈ 0.17 of white noise.
    for (i, (before, after)) in fit.before.torque.iter().zip(&fit.after.torque).enumerate() {
        let noise = 0.005 * file.drives[i].rated_torque;
        assert!(
            *after < 0.3 * noise,
            "drive {i}: {after} N·m after, from {before}"
        );
    }
    let fitted = fit.robot(&file);
    let worst = |pairs: Vec<(f64, f64)>| {
        pairs
            .iter()
            .map(|(fit, truth)| ((fit - truth) / truth).abs())
            .fold(0.0, f64::max)
    };
    let drives = || real.drives.iter().zip(&fitted.drives);
    let stiffness = |c: &crate::robot::Cable| match c.stiffness {
        Stiffness::Constant(k) | Stiffness::Ea(k) => k,
    };
    let errors = [
        worst(
            drives()
                .map(|(d, f)| (f.rotor_inertia, d.rotor_inertia))
                .collect(),
        ),
        worst(
            drives()
                .map(|(d, f)| (f.viscous_friction, d.viscous_friction))
                .collect(),
        ),
        worst(
            drives()
                .map(|(d, f)| (f.coulomb_friction, d.coulomb_friction))
                .collect(),
        ),
        worst(
            real.cables
                .iter()
                .zip(&fitted.cables)
                .map(|(c, f)| (stiffness(f), stiffness(c)))
                .collect(),
        ),
    ];
    let anchor = real
        .cables
        .iter()
        .zip(&fitted.cables)
        .map(|(c, f)| (c.frame_anchor - f.frame_anchor).norm())
        .fold(0.0, f64::max);
    let offset = |q: Quantity, truth: &[f64]| {
        truth
            .iter()
            .enumerate()
            .map(|(i, t)| (fit.estimate(i, q).map_or(f64::NAN, |e| e.value) - t).abs())
            .fold(0.0, f64::max)
    };
    // The payout offset the fit finds is what was subtracted from the measurement.
    let (payout, torque) = (
        offset(Quantity::LengthOffset, &length_offsets),
        offset(Quantity::TorqueOffset, &torque_offsets),
    );
    eprintln!(
        "worst errors: J {:.2} %, b {:.2} %, τc {:.2} %, stiffness {:.2} %, anchor {:.3} mm, \
         payout offset {:.3} mm, torque offset {:.2e} N·m",
        errors[0] * 100.0,
        errors[1] * 100.0,
        errors[2] * 100.0,
        errors[3] * 100.0,
        anchor * 1e3,
        payout * 1e3,
        torque
    );
    // The accuracy: J, b, τ_c within 5 %, stiffness 2 %, anchors 1 mm.
    assert!(
        errors[0] < 0.05 && errors[1] < 0.05 && errors[2] < 0.05,
        "{errors:?}"
    );
    assert!(errors[3] < 0.02, "{errors:?}");
    assert!(anchor < 1e-3 && payout < 1e-3, "{anchor} {payout}");
    assert!(torque < 0.01 * file.drives[0].rated_torque, "{torque}");

    // The fitted file: the robot parser (not the writer) reads the fitted values back, and
    // the drives keep the gains they had.
    let text = crate::fixtures::robot_text("uvigo8-drives");
    let written = output::fitted_text(text, "uvigo8-drives.toml", &file, &fit, "run.csv").unwrap();
    if let Some(path) = std::env::var_os("CDPR_SHOW_FITTED") {
        std::fs::write(path, &written).unwrap();
    }
    let back = crate::robot::parse_robot(&written, "fitted.toml").unwrap();
    for (b, f) in back.cables.iter().zip(&fitted.cables) {
        assert!((b.frame_anchor - f.frame_anchor).norm() < 1e-6);
        assert!((stiffness(b) / stiffness(f) - 1.0).abs() < 1e-5);
    }
    for ((b, f), d) in back.drives.iter().zip(&fitted.drives).zip(&file.drives) {
        assert!((b.rotor_inertia / f.rotor_inertia - 1.0).abs() < 1e-5);
        assert!((b.coulomb_friction / f.coulomb_friction - 1.0).abs() < 1e-5);
        assert!(
            (b.velocity_gain / d.velocity_gain - 1.0).abs() < 1e-5,
            "the drive's own gain"
        );
        assert_eq!(b.torque_limit, d.torque_limit);
    }
    assert!(
        written.contains("# Fitted frame anchors (standard errors):"),
        "{written}"
    );
    assert!(
        written.contains("# The drives' torques read off by"),
        "{written}"
    );
    // Everything the fit did not touch is as the file had it, comments included.
    assert!(
        written.contains(
            "encoder_increments = 1048576    # per motor turn (a 20-bit absolute encoder)"
        )
    );
    assert_eq!(back.name, file.name);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `measured` as a CSV with the column names [`input`] reads, plus `extra` columns' header
/// text appended (their cells empty).
fn csv_text(measured: &Measured, extra: &str) -> String {
    let mut header = vec!["t".to_string()];
    header.extend(input::POSE_COLUMNS.iter().map(|c| c.to_string()));
    header.extend((1..=measured.cables).map(|i| format!("actual_length_{i}")));
    header.extend((1..=measured.drives).map(|i| format!("actual_torque_{i}")));
    let mut text = header.join(",") + extra + "\n";
    for k in 0..measured.times.len() {
        let mut row = vec![measured.times[k]];
        row.extend(measured.poses[k]);
        row.extend(&measured.payouts[k * measured.cables..(k + 1) * measured.cables]);
        row.extend(&measured.torques[k * measured.drives..(k + 1) * measured.drives]);
        let cells: Vec<String> = row.iter().map(|v| format!("{v:?}")).collect();
        text += &cells.join(",");
        text += &",".repeat(extra.matches(',').count());
        text += "\n";
    }
    text
}

/// What a recording's reader says of a file it cannot take: the file, the line and the column
/// named; a shadow's record without a tracker's pose refused; a gap row's empty cells NaN.
#[test]
fn recordings_are_read_by_column_name_and_refused_with_the_column_named() {
    let robot = robot("uvigo8-drives");
    let dir = std::env::temp_dir().join(format!("cdpr-calibrate-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.csv");
    let measured = Measured {
        times: vec![0.0, 0.001],
        poses: vec![[0.0, 0.0, 0.15, 0.0, 0.0, 0.0]; 2],
        payouts: vec![1.5; 16],
        torques: vec![-0.1; 16],
        cables: 8,
        drives: 8,
    };
    let mut text = csv_text(&measured, ",plc_cycle");
    text.push_str(&format!("0.002{}\n", ",".repeat(6 + 16 + 1)));
    std::fs::write(&path, &text).unwrap();
    let read = input::read_csv(&path, &robot).unwrap();
    assert_eq!(read.times.len(), 3);
    assert!(
        read.payouts[16..].iter().all(|v| v.is_nan()),
        "a gap row: NaN"
    );

    // The shadow's own pose is not a measurement.
    let shadow = text.replacen(
        "actual_x,actual_y,actual_z,actual_roll,actual_pitch,actual_yaw",
        "x,y,z,roll,pitch,yaw",
        1,
    );
    std::fs::write(&path, &shadow).unwrap();
    let err = input::read_csv(&path, &robot).unwrap_err();
    assert!(matches!(err, input::InputError::ShadowPose { .. }), "{err}");
    // Without the shadow's columns the same file is a lab's, its x … yaw a tracker's.
    std::fs::write(&path, shadow.replace(",plc_cycle", ",other")).unwrap();
    assert!(input::read_csv(&path, &robot).is_ok());

    let missing = text.replace("actual_torque_5", "torque_5");
    std::fs::write(&path, missing).unwrap();
    let err = input::read_csv(&path, &robot).unwrap_err().to_string();
    assert!(
        err.contains("no column `actual_torque_5` (a drive's torque, N·m)"),
        "{err}"
    );
    assert!(err.contains("run.csv"), "{err}");

    let bad = text.replacen("0.001,", "0.001x,", 1);
    std::fs::write(&path, bad).unwrap();
    let err = input::read_csv(&path, &robot).unwrap_err().to_string();
    assert!(
        err.contains("run.csv:3: `0.001x` in column `t` is not a number"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
