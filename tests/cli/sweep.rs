//! `cdpr sweep`: the same rows whatever the shard, threads or resume; the rows are
//! `cdpr simulate`'s numbers; the parameters really change the robot; clear errors.

use crate::common::*;
use std::path::{Path, PathBuf};

const SPEC: &str = "robots/sweeps/uvigo8-stiffness.toml";

/// The header and the rows of a sweep's CSV, sorted by index, `wall_s` blanked (the only
/// column that depends on the machine's load).
fn rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).expect("output");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let wall = header.iter().position(|c| c == "wall_s").expect("wall_s");
    let mut rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.expect("row").iter().map(String::from).collect())
        .collect();
    for r in &mut rows {
        r[wall].clear();
    }
    rows.sort_by_key(|r| r[0].parse::<u64>().expect("index"));
    (header, rows)
}

fn sweep(args: &[&str]) -> std::process::Output {
    let o = cdpr(&with("sweep", args));
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn shards_and_threads_give_the_rows_of_one_unsharded_run() {
    let dir = scratch("sweep_shards");
    let all = dir.join("all.csv");
    let o = sweep(&[SPEC, "--out", path(&all), "--jobs", "1"]);
    assert!(
        stdout(&o).contains("12 runs: 12 done (0 failed), 0 skipped"),
        "{}",
        stdout(&o)
    );
    let (header, one) = rows(&all);
    assert_eq!(one.len(), 12);
    assert!(
        one.iter()
            .all(|r| r[header.iter().position(|c| c == "status").expect("status")] == "ok")
    );
    let mut parts = Vec::new();
    for i in 0..3 {
        let part = dir.join(format!("part{i}.csv"));
        let o = sweep(&[
            SPEC,
            "--out",
            path(&part),
            "--jobs",
            "2",
            "--shard",
            &format!("{i}/3"),
        ]);
        assert!(
            stdout(&o).contains(&format!("4 runs in shard {i}/3 of 12")),
            "{}",
            stdout(&o)
        );
        let (h, r) = rows(&part);
        assert_eq!(h, header);
        parts.extend(r);
    }
    parts.sort_by_key(|r| r[0].parse::<u64>().expect("index"));
    // Bit for bit: every number is written in its shortest round-trip form.
    assert_eq!(parts, one);
}

#[test]
fn a_resumed_sweep_completes_the_same_file() {
    let dir = scratch("sweep_resume");
    let reference = dir.join("reference.csv");
    sweep(&[SPEC, "--out", path(&reference)]);
    let (_, expected) = rows(&reference);
    let text = std::fs::read_to_string(&reference).expect("output");
    let lines: Vec<&str> = text.lines().collect();

    // Half the rows deleted: the other half is run again, the rest skipped.
    let half = dir.join("half.csv");
    std::fs::write(&half, lines[..7].join("\n") + "\n").expect("write");
    let o = sweep(&[SPEC, "--out", path(&half)]);
    assert!(
        stdout(&o).contains("6 done (0 failed), 6 skipped"),
        "{}",
        stdout(&o)
    );
    assert_eq!(rows(&half).1, expected);

    // Killed while writing a row: the partial line is cut off and that run done again.
    let cut = dir.join("cut.csv");
    let mut partial = lines[..10].join("\n") + "\n";
    partial.push_str(&lines[10][..lines[10].len() / 2]);
    std::fs::write(&cut, &partial).expect("write");
    let o = sweep(&[SPEC, "--out", path(&cut)]);
    assert!(
        stdout(&o).contains("3 done (0 failed), 9 skipped"),
        "{}",
        stdout(&o)
    );
    assert_stderr(&o, "a partial last row");
    assert_eq!(rows(&cut).1, expected);
    let text = std::fs::read_to_string(&cut).expect("output");
    assert_eq!(text.lines().count(), 13);

    // Nothing left: a no-op; --force starts over.
    let o = sweep(&[SPEC, "--out", path(&cut)]);
    assert!(
        stdout(&o).contains("0 done (0 failed), 12 skipped"),
        "{}",
        stdout(&o)
    );
    let o = sweep(&[SPEC, "--out", path(&cut), "--force"]);
    assert!(
        stdout(&o).contains("12 done (0 failed), 0 skipped"),
        "{}",
        stdout(&o)
    );
    assert_eq!(rows(&cut).1, expected);
}

#[test]
fn an_output_of_another_spec_is_refused() {
    let dir = scratch("sweep_header");
    let out = dir.join("runs.csv");
    std::fs::write(
        &out,
        "index,seed,robot,trajectory,speed,payload,status\n0,1,uvigo8,poly5,0.4,0,ok\n",
    )
    .expect("write");
    let o = cdpr(&with("sweep", &[SPEC, "--out", path(&out)]));
    assert_eq!(o.status.code(), Some(1));
    assert_stderr(&o, "runs.csv: was written by a different spec");
    assert_stderr(&o, "--force");
    // The file is left alone.
    assert!(
        std::fs::read_to_string(&out)
            .expect("kept")
            .starts_with("index,seed,robot,trajectory,speed,payload,status\n")
    );
}

#[test]
fn a_row_has_the_numbers_of_cdpr_simulate_for_the_same_run() {
    let dir = scratch("sweep_simulate");
    let out = dir.join("runs.csv");
    sweep(&[SPEC, "--out", path(&out)]);
    let (header, rows) = rows(&out);
    let col = |name: &str| header.iter().position(|c| c == name).expect(name);
    // Run 10: stiffness × 4, 0.5 kg added, no anchor offset.
    let r = &rows[10];
    assert_eq!(
        (
            r[col("stiffness_scale")].as_str(),
            r[col("payload")].as_str(),
            r[col("anchor_offset")].as_str()
        ),
        ("4", "0.5", "0")
    );
    let robot = dir.join("stiff.toml");
    let text = std::fs::read_to_string("robots/uvigo8.toml").expect("robot");
    std::fs::write(
        &robot,
        text.replace("stiffness = 20000.0", "stiffness = 80000.0"),
    )
    .expect("write");
    let j = json(&with(
        "simulate --trajectory poly5 --speed 0.4 --model elastic --control ideal --dt 0.002 --payload 1.5 --json --robot",
        &[path(&robot)],
    ));
    let num = |name: &str| r[col(name)].parse::<f64>().expect(name);
    let rms = floats(&j["rms"]);
    for (name, value) in [
        ("rms_3d", j["rms_3d"].as_f64()),
        ("rms_x", Some(rms[0])),
        ("rms_y", Some(rms[1])),
        ("rms_z", Some(rms[2])),
        ("max_3d", j["max_3d"].as_f64()),
        ("frechet", j["frechet"].as_f64()),
        ("lag_s", j["lag_s"].as_f64()),
        ("tension_min", j["tension_min"].as_f64()),
        ("tension_max", j["tension_max"].as_f64()),
        ("simulated_s", j["simulated_s"].as_f64()),
        ("steps", j["steps"].as_f64()),
    ] {
        assert_eq!(Some(num(name)), value, "{name}");
    }
}

/// A CSV holding `uvigo8`'s home pose for 0.2 s.
fn hold(dir: &Path) -> PathBuf {
    let p = dir.join("hold.csv");
    let mut text = String::from("t,x,y,z\n");
    for k in 0..=100 {
        text.push_str(&format!("{},0,0,0.15\n", k as f64 * 0.002));
    }
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn stiffness_scale_changes_the_sag_as_elastic_statics_says() {
    // Ideal winches paying out the IK lengths: the cables start unstretched, the platform
    // sags until their stretch holds its weight — by δ = K⁻¹ m g with K = Σ k u uᵀ (no
    // pre-tension, so no geometric stiffness): δ ∝ 1/k.
    let dir = scratch("sweep_sag");
    hold(&dir);
    let spec = dir.join("sag.toml");
    std::fs::write(
        &spec,
        "robots = [\"uvigo8\"]\ntrajectories = [\"hold.csv\"]\nmodel = \"elastic\"\ncontrol = \"ideal\"\ndt = 0.002\n\
         [parameters]\nstiffness_scale = [0.5, 1.0, 2.0]\n",
    )
    .expect("write");
    let out = dir.join("runs.csv");
    sweep(&[path(&spec), "--out", path(&out)]);
    let (header, rows) = rows(&out);
    let col = |name: &str| header.iter().position(|c| c == name).expect(name);
    let sag: Vec<f64> = rows
        .iter()
        .map(|r| r[col("rms_z")].parse().expect("rms_z"))
        .collect();

    // The independent number: uvigo8's stiffness at home from its file, K = Σ k j jᵀ with
    // j = (u, b × u) (u the unit vector from platform anchor to frame anchor), and the
    // platform's displacement under its weight (centre of mass on the platform's z axis).
    use nalgebra::{Matrix6, Vector3, Vector6};
    let k: f64 = 20000.0;
    let m = 1.0;
    let home = Vector3::new(0.0, 0.0, 0.15);
    let mut stiffness = Matrix6::zeros();
    for (sx, sy) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)] {
        // upper: a = (1.32545 sx, 1.09656 sy, 0.825), b = Rz(90°)(0.1 sx, 0.1 sy) at z 0.175;
        // lower: a = (1.39656 sx, 1.02545 sy, 0.700), b = Rz(−90°)(0.1 sx, 0.1 sy) at z 0.330.
        for (a, b) in [
            (
                Vector3::new(1.32545 * sx, 1.09656 * sy, 0.825),
                Vector3::new(-0.1 * sy, 0.1 * sx, 0.175),
            ),
            (
                Vector3::new(1.39656 * sx, 1.02545 * sy, 0.700),
                Vector3::new(0.1 * sy, -0.1 * sx, 0.330),
            ),
        ] {
            let u = (a - (home + b)).normalize();
            let m_u = b.cross(&u);
            let j = Vector6::new(u.x, u.y, u.z, m_u.x, m_u.y, m_u.z);
            stiffness += k * j * j.transpose();
        }
    }
    let weight: Vector6<f64> = Vector6::new(0.0, 0.0, -m * 9.81, 0.0, 0.0, 0.0);
    let displacement = stiffness.lu().solve(&weight).expect("K is invertible");
    let expected = displacement[2].abs();
    // Small sag (≈ 1.5 mm): the linearisation holds to a few per cent.
    assert!(
        (sag[1] - expected).abs() < 0.03 * expected,
        "sag {} m, statics {} m",
        sag[1],
        expected
    );
    assert!((sag[0] / sag[1] - 2.0).abs() < 0.05, "{sag:?}");
    assert!((sag[1] / sag[2] - 2.0).abs() < 0.05, "{sag:?}");
}

#[test]
fn bad_specs_and_options_are_named() {
    let dir = scratch("sweep_errors");
    let spec = dir.join("bad.toml");
    std::fs::write(&spec, "robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\n\n[parameters]\nstiffnes_scale = [1.0]\n").expect("write");
    let o = cdpr(&with("sweep --dry-run", &[path(&spec)]));
    assert_eq!(o.status.code(), Some(1));
    assert_stderr(
        &o,
        &format!(
            "{}:5: parameters.stiffnes_scale: unknown option `stiffnes_scale` (did you mean `stiffness_scale`?)",
            spec.display()
        ),
    );
    std::fs::write(
        &spec,
        "robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\nspeeds = [0.1, 50]\n",
    )
    .expect("write");
    let o = cdpr(&with("sweep --dry-run", &[path(&spec)]));
    assert_stderr(&o, ":3: speeds: must be between 1e-3 and 10 m/s, got 50");
    for (shard, message) in [
        ("3/3", "I must be from 0 to N − 1 = 2, got 3"),
        ("0/0", "N must be from 1 to 10000, got 0"),
        ("1/20000", "N must be from 1 to 10000, got 20000"),
        ("x/2", "I `x` is not a whole number"),
        ("2", "expected I/N"),
    ] {
        let o = cdpr(&with("sweep --dry-run --shard", &[shard, SPEC]));
        assert_eq!(o.status.code(), Some(2), "{shard}");
        assert_stderr(&o, message);
    }
    let o = cdpr(&words(
        "sweep --jobs 0 --out x.csv robots/sweeps/uvigo8-stiffness.toml",
    ));
    assert_eq!(o.status.code(), Some(2));
    assert_stderr(&o, "must be a whole number from 1 to 1024, got 0");
    let o = cdpr(&with("sweep", &[SPEC]));
    assert_eq!(o.status.code(), Some(2));
    assert_stderr(&o, "--out");
    // --dry-run lists the shard's runs.
    let o = cdpr(&with("sweep --dry-run --shard 1/4", &[SPEC]));
    let out = stdout(&o);
    let indices: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap_or(""))
        .collect();
    assert_eq!(indices, ["1", "5", "9"]);
}
