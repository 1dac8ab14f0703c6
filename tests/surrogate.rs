//! The `cdpr surrogate` / `simulate --model surrogate` contract.

mod common;
use common::*;

#[test]
fn cli_fit_from_a_recorded_run_then_simulate_with_the_surrogate() {
    let dir = scratch("cli_surrogate");
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
