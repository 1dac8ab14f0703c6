//! The calibration recovers a "real" robot that differs from the file it starts from, from a
//! run generated independently of the simulator and of the fit's model code
//! ([`crate::fixtures::calibration`]).

use super::*;
use crate::fixtures::calibration::{RealRobot, measured_run, real_robot};
use crate::fixtures::robot;
use crate::robot::Stiffness;

#[test]
fn a_real_robot_is_recovered_from_its_noisy_run() {
    let file = robot("uvigo8-drives");
    let truth = real_robot(&file);
    let measured = measured_run(&truth, 20.0);
    let RealRobot {
        robot: real,
        torque_offsets,
        length_offsets,
    } = truth;
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
