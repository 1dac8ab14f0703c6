//! `cdpr surrogate fit`/`validate` and `simulate --model surrogate`: a fit on a recorded run
//! or generated signals, its warnings and errors, and a simulation with the fitted filters.

use crate::common::*;
use std::path::Path;

#[test]
fn a_fit_on_a_recorded_run_then_simulate_with_the_surrogate() {
    let dir = scratch("surrogate_fit_then_simulate");
    let csv = dir.join("steps.csv");
    let params = dir.join("p.toml");
    let (csv_s, params_s) = (
        csv.to_str().expect("utf-8"),
        params.to_str().expect("utf-8"),
    );
    let o = cdpr(&with(
        "simulate --robot uvigo8 --trajectory steps --model elastic --control length --dt 0.002 --out",
        &[csv_s],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr(&[
        "surrogate",
        "fit",
        "--robot",
        "uvigo8",
        "--reference",
        csv_s,
        "--dofs",
        "x,z",
        "--out",
        params_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&params).expect("params written");
    assert!(
        text.contains("[x]") && text.contains("[z]") && !text.contains("[y]"),
        "{text}"
    );
    let v = json(&with(
        "simulate --robot uvigo8 --trajectory seed000 --dt 0.002 --model surrogate --surrogate",
        &[params_s, "--json"],
    ));
    assert_eq!(v["model"], "surrogate");
    // Every step of the trajectory's 31.396 s at 2 ms was taken (its speed is a bench's
    // business: benches/surrogate.rs).
    let simulated = v["simulated_s"].as_f64().expect("simulated_s");
    assert_eq!(
        v["steps"].as_u64(),
        Some((simulated / 0.002).round() as u64),
        "{v}"
    );
    assert!((simulated - 31.396).abs() < 1e-9, "{v}");

    // Errors: the missing file, the missing option, a bad field named with file and line.
    let o = cdpr(&words(
        "simulate --robot uvigo8 --trajectory seed000 --model surrogate",
    ));
    assert!(
        !o.status.success() && stderr(&o).contains("--surrogate"),
        "{}",
        stderr(&o)
    );
    let bad = dir.join("bad.toml");
    let negative = text.replacen("damping = ", "damping = -", 1);
    assert_ne!(negative, text, "the parameter file has a damping to negate");
    std::fs::write(&bad, negative).expect("write");
    let o = cdpr(&with(
        "simulate --robot uvigo8 --trajectory seed000 --model surrogate --surrogate",
        &[bad.to_str().expect("utf-8")],
    ));
    let err = stderr(&o);
    assert!(
        !o.status.success() && err.contains("bad.toml:") && err.contains(".damping"),
        "{err}"
    );
}

#[test]
fn the_readmes_fit_on_a_recorded_run_warns_of_the_still_rotations_and_validates() {
    let dir = scratch("surrogate_readme");
    // README, "Simulation": how run.csv is written.
    let o = cdpr_in(
        &dir,
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --compensate --out run.csv --json",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // README, "Surrogate": the two commands on it.
    let o = cdpr_in(
        &dir,
        "surrogate fit --robot uvigo8 --reference run.csv --out params.toml",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    // seed000 moves x, y and z; the rotations stay at zero: one warning names them.
    assert_eq!(
        e.matches("roll, pitch, yaw do not move in run.csv").count(),
        1,
        "{e}"
    );
    let out = stdout(&o);
    assert!(out.contains("fitted 3 DOF(s) of uvigo8"), "{out}");
    let params = std::fs::read_to_string(dir.join("params.toml")).expect("params.toml");
    for dof in ["[x]", "[y]", "[z]"] {
        assert!(params.contains(dof), "{dof} in {params}");
    }
    assert!(!params.contains("[roll]"), "{params}");
    let o = cdpr_in(
        &dir,
        "surrogate validate --robot uvigo8 --surrogate params.toml --reference dsine,seed000",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("seed000"), "{}", stdout(&o));
}

#[test]
fn surrogate_fit_warns_when_a_parameter_sits_on_its_bound() {
    // README: a fit on chirp runs f_n to its 100 Hz bound.
    let dir = scratch("surrogate_bound");
    let o = cdpr_in(
        &dir,
        "surrogate fit --robot uvigo8 --signals chirp --dofs x --model elastic --out p.toml --json",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("warning: x: f_n = ") && e.contains("sits on its search bound"),
        "{e}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(v["warnings"][0].as_str().unwrap().contains("f_n"), "{v}");
}

#[test]
fn a_fit_with_nothing_moving_is_one_clear_error() {
    let dir = scratch("surrogate_nothing_moving");
    let o = cdpr_in(
        &dir,
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --out run.csv",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr_in(
        &dir,
        "surrogate fit --robot uvigo8 --reference run.csv --dofs roll,yaw --out p.toml",
    );
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("none of the DOFs to fit (roll, yaw) moves"),
        "{e}"
    );
    assert_eq!(e.matches("moves").count(), 1, "said once: {e}");
}

#[test]
fn surrogate_messages_name_the_model_and_round_the_bounds() {
    let dir = scratch("surrogate_messages");
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let run = dir.join("run.csv");
    let o = cdpr(&with(
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --compensate --out",
        &[&s(&run)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // A recorded run (with its description line) fits; the bounds it hits read plainly.
    let o = cdpr(&with(
        "surrogate fit --robot uvigo8 --reference",
        &[&s(&run), "--out", &s(&dir.join("params.toml"))],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("warning: z: f_n = 100 Hz sits on its search bound (0.1 … 100 Hz)"),
        "{e}"
    );
    assert!(
        e.contains("warning: z: ζ = 0.2 sits on its search bound (0.2 … 4);"),
        "{e}"
    );
    // Generated runs: the model by its option name, not a Rust value.
    let o = cdpr(&with(
        "surrogate fit --robot uvigo8 --signals steps --dofs z --out",
        &[&s(&dir.join("z.toml"))],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("running 1 identification runs (steps on z, elastic model)"),
        "{e}"
    );
}
