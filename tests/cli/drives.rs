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
