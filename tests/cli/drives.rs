//! The drives as built through the binary: `cdpr feedforward`'s CSV against the motor
//! equation written out here from the robot file's numbers, `cdpr simulate`'s drive table
//! and columns, the torque check of `cdpr preflight`, and the modes that need drives refused
//! on a robot without them.

use crate::common::*;

/// uvigo8-drives' drive, from robots/uvigo8-drives.toml (one value for all eight): r, p, N,
/// J, b, τ_c.
const DRUM: f64 = 0.025;
const PITCH: f64 = 0.003;
const RATIO: f64 = 5.0;
const INERTIA: f64 = 1.2e-5;
const VISCOUS: f64 = 2.0e-5;
const COULOMB: f64 = 0.01;
/// The friction's smoothing velocity, rad/s (the guide's drives page).
const OMEGA0: f64 = 0.1;

fn column(header: &[&str], name: &str) -> usize {
    header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

#[test]
fn feedforward_rows_obey_the_motor_equation_of_the_robot_file() {
    let dir = scratch("feedforward");
    let out = dir.join("ff.csv");
    let o = cdpr(&with(
        "feedforward --robot uvigo8-drives --trajectory poly5 --speed 0.5 --out",
        &[out.to_str().unwrap()],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(" 8 lower3"), "{}", stdout(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.len(), 1 + 8 * 5);
    let rho = DRUM.hypot(PITCH / std::f64::consts::TAU) / RATIO;
    let mut rows = 0;
    let mut moving = 0;
    for line in lines {
        let v: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        for i in 1..=8 {
            let get = |c: &str| v[column(&header, &format!("{c}_{i}"))];
            let (rate, accel, tension) = (
                get("payout_rate"),
                get("payout_acceleration"),
                get("winch_tension"),
            );
            let omega = rate / rho;
            let expected =
                INERTIA * accel / rho + VISCOUS * omega + COULOMB * (omega / OMEGA0).tanh()
                    - rho * tension;
            let torque = get("torque");
            assert!(
                (torque - expected).abs() <= 1e-12 + 1e-9 * expected.abs(),
                "t = {}: drive {i}: {torque} vs {expected}",
                v[0]
            );
            assert!(tension > 0.0, "a feasible distribution pulls");
            if rate.abs() > 1e-3 {
                moving += 1;
            }
        }
        rows += 1;
    }
    assert!(rows > 500 && moving > 1000, "{rows} rows, {moving} moving");
}

#[test]
fn simulate_reports_the_drives_and_records_their_columns() {
    let dir = scratch("drives-simulate");
    let out = dir.join("run.csv");
    let o = cdpr(&with(
        "simulate --robot uvigo8-drives --trajectory poly5 --speed 0.5 --model elastic --compensate --settle 2 --out",
        &[out.to_str().unwrap()],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("drive ") && text.contains("peak N·m"),
        "{text}"
    );
    let csv = std::fs::read_to_string(&out).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for name in ["motor_torque_8", "motor_velocity_8", "following_error_8"] {
        column(&header, name);
    }
    // The last row: at rest after the move the drives hold −ρ·T of their cables.
    let last: Vec<&str> = csv.lines().last().unwrap().split(',').collect();
    let rho = DRUM.hypot(PITCH / std::f64::consts::TAU) / RATIO;
    for i in 1..=8 {
        let get = |c: &str| {
            last[column(&header, &format!("{c}_{i}"))]
                .parse::<f64>()
                .unwrap()
        };
        let (torque, tension) = (get("motor_torque"), get("tension"));
        assert!(
            (torque + rho * tension).abs() < 0.02 * rho * tension,
            "drive {i}: {torque} N·m holding {tension} N"
        );
    }
    // A robot without drives keeps its columns.
    let plain = dir.join("plain.csv");
    let o = cdpr(&with(
        "simulate --robot uvigo8 --trajectory poly5 --speed 0.5 --model elastic --out",
        &[plain.to_str().unwrap()],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let header = std::fs::read_to_string(&plain).unwrap();
    assert!(
        !header.lines().next().unwrap().contains("motor_"),
        "{header}"
    );
    assert!(!stdout(&o).contains("peak N·m"));
}

#[test]
fn preflight_names_a_drive_beyond_its_torque_limit() {
    let dir = scratch("drives-preflight");
    let text = std::fs::read_to_string("robots/uvigo8-drives.toml").unwrap();
    // The held start alone takes ρ·T ≈ 0.03 N·m: a limit of 0.02 N·m cannot hold it.
    let weak = text.replace(
        "torque_limit = 1.5              # N·m (the drive's peak torque)",
        "torque_limit = 0.02",
    );
    assert_ne!(weak, text);
    let file = dir.join("weak.toml");
    std::fs::write(&file, weak).unwrap();
    let o = cdpr(&with(
        "preflight --trajectory poly5 --speed 0.5 --profile scurve --robot",
        &[file.to_str().unwrap()],
    ));
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FIRST VIOLATION at t = 0.0000 s")
            && stdout(&o).contains(": torque of"),
        "{}",
        stdout(&o)
    );
    let o = cdpr(&words(
        "preflight --robot uvigo8-drives --trajectory poly5 --speed 0.5 --profile scurve",
    ));
    assert!(o.status.success(), "{}", stdout(&o));
}

#[test]
fn the_motor_modes_and_the_feedforward_need_drives() {
    let o = cdpr(&words(
        "simulate --robot uvigo8 --trajectory poly5 --control torque --model elastic",
    ));
    assert_fails(&o, "torque winches drive motors: uvigo8 describes none");
    let o = cdpr(&words("feedforward --robot uvigo8 --trajectory poly5"));
    assert_fails(&o, "uvigo8 describes no drives");
    // The controller commands lengths: a shadow cannot take motor torques or rates from it.
    let o = cdpr(&words(
        "shadow --plc 127.0.0.1:9 --robot uvigo8-drives --model elastic --control torque --duration 1",
    ));
    assert_fails(
        &o,
        "--control torque does not fit a shadow: the controller commands lengths, not torques",
    );
}

/// uvigo8-drives' file with `from` replaced by `to` (each edit must apply), written to `dir`.
fn drives_file(dir: &std::path::Path, name: &str, edits: &[(&str, &str)]) -> String {
    let mut text = cdpr_core::fixtures::robot_text("uvigo8-drives").to_string();
    for (from, to) in edits {
        text = cdpr_core::fixtures::edited(&text, from, to);
    }
    let path = dir.join(name);
    std::fs::write(&path, text).expect("robot file");
    path.to_str().expect("utf-8").to_string()
}

#[test]
fn a_shadow_reports_how_well_it_predicts_the_drives_of_another_robot() {
    let dir = scratch("shadow_beside_the_drives");
    // The "real" robot: three times the model's Coulomb friction, the rest the same.
    let real = drives_file(
        &dir,
        "real.toml",
        &[("coulomb_friction = 0.01 ", "coulomb_friction = 0.03 ")],
    );
    let (plc, addr) = plc(&[
        "--robot",
        "uvigo8-drives",
        "--actual-robot",
        &real,
        "--listen",
        "127.0.0.1:0",
        "--trajectory",
        "seed000",
        "--speed",
        "0.4",
        "--wait-for-client",
        "--duration",
        "9",
        "--json",
    ]);
    let run = Proc::spawn(&[
        "shadow",
        "--plc",
        &addr,
        "--ams-net-id",
        "127.0.0.1.1.1",
        "--headless",
        "--robot",
        "uvigo8-drives",
        "--model",
        "elastic",
        "--cycle",
        "lockstep",
        "--duration",
        "6",
        "--json",
    ]);
    let summary = run.json();
    let _ = plc.json();
    let errors = summary["torque_prediction"]
        .as_array()
        .expect("a torque prediction per drive");
    assert_eq!(errors.len(), 8, "{summary}");
    for e in errors {
        let (rms, max) = (
            e["rms"].as_f64().expect("rms"),
            e["max"].as_f64().expect("max"),
        );
        let percent = e["rms_percent"].as_f64().expect("%");
        // The friction the model lacks: 0.02·tanh(ω/ω₀) N·m whenever the motor turns, on top
        // of the 0.4 % of rated (2 mN·m) the elastic shadow is off its own drives by; at rest
        // none. So the RMS error is within the friction step and above a tenth of it.
        assert!(rms > 0.002 && rms < 0.02 + 0.004, "{e}");
        assert!(max >= rms && max < 0.1, "{e}");
        assert!((percent - 100.0 * rms / 0.5).abs() < 1e-9, "{e}");
        assert!(e["best_lag_s"].as_f64().expect("lag").abs() <= 0.5, "{e}");
    }
    // The payouts are read too (mm on the PLC): the drives follow the same set points.
    for e in summary["length_prediction"].as_array().expect("lengths") {
        assert!(e["rms"].as_f64().expect("rms") < 1e-4, "{e}");
    }
}

#[test]
fn the_actual_robot_must_have_the_same_cables_with_drives() {
    let o = cdpr(&words(
        "plc --robot uvigo8-drives --actual-robot uvigo8 --listen 127.0.0.1:0 --duration 1",
    ));
    assert_fails(&o, "the actual robot uvigo8 has no drives to simulate");
    let o = cdpr(&words(
        "plc --robot uvigo8 --actual-robot uvigo8-drives --listen 127.0.0.1:0 --duration 1",
    ));
    assert_fails(&o, "robot uvigo8 has no drives");
    let o = cdpr(&words(
        "plc --robot uvigo8-drives --actual-robot no-such-robot.toml --listen 127.0.0.1:0 --duration 1",
    ));
    assert_fails(&o, "--actual-robot no-such-robot.toml");
    // A drive's symbol on a robot without drives is refused where it is written.
    let dir = scratch("drive_symbols_without_drives");
    let text = cdpr_core::fixtures::robot_text("uvigo8").replacen(
        "[plc]",
        "[plc]\nactual_torques = \"GVL_Shadow.aActualTorques\"",
        1,
    );
    let path = dir.join("uvigo8-torques.toml");
    std::fs::write(&path, &text).expect("file");
    let o = cdpr(&["check", path.to_str().expect("utf-8")]);
    assert_fails(
        &o,
        "plc.actual_torques: is a drive's symbol, and the robot has no drives",
    );
}
