//! `cdpr compare`: the lag and the errors of a delayed, offset, resampled copy, per segment
//! and as seed 000's table; the commanded and actual columns of one simulation run.

use crate::common::*;

fn path_str(p: &std::path::Path) -> String {
    p.display().to_string()
}

#[test]
fn finds_the_shadows_delay_and_reports_per_segment() {
    let dir = scratch("compare_delayed_copy");
    let reference = path_str(&dir.join("ref.csv"));
    let shadow = path_str(&dir.join("shadow.csv"));
    let o = cdpr(&with(
        "trajectory -r uvigo8 --name seed000 --out",
        &[&reference],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr(&[
        "trajectory",
        "-r",
        "uvigo8",
        "--name",
        &reference,
        "--delay",
        "0.07",
        "--offset",
        "0,0,-0.0005",
        "--resample",
        "0.05",
        "--out",
        &shadow,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&[
        "compare",
        "--reference",
        &reference,
        "--actual",
        &shadow,
        "--json",
    ]);
    assert_eq!(v["lag_samples"], 35);
    assert!((v["lag_s"].as_f64().unwrap() - 0.07).abs() < 1e-9);
    assert!((floats(&v["rms"])[2] - 0.0005).abs() < 2e-5);
    assert_eq!(v["segments"].as_array().unwrap().len(), 5);
    assert!(
        v["nrmse_definition"]
            .as_str()
            .unwrap()
            .contains("goodnessOfFit")
    );
    // The human table is in mm, shaped like seed 000's Table 1.
    let o = cdpr(&["compare", "--reference", &reference, "--actual", &shadow]);
    let text = stdout(&o);
    assert!(text.contains("RMS X [mm]") && text.contains("TOTAL") && text.contains("Fréchet"));
}

#[test]
fn reads_the_commanded_and_actual_columns_of_one_simulation_run() {
    let dir = scratch("compare_columns");
    let run = dir.join("run.csv");
    let mut text = String::from(
        "t,x_cmd,y_cmd,z_cmd,roll_cmd,pitch_cmd,yaw_cmd,x,y,z,roll,pitch,yaw,length_cmd_1,length_1,tension_1,segment\n",
    );
    for k in 0..200 {
        let t = k as f64 * 0.002;
        let x = 0.1 * t;
        let seg = if k < 100 { "A" } else { "B" };
        text += &format!(
            "{t},{x},0,0.15,0,0,0,{},0,0.149,0,0,0,1.5,1.5,10,{seg}\n",
            x - 0.0001
        );
    }
    std::fs::write(&run, text).unwrap();
    let run = path_str(&run);
    let v = json(&[
        "compare",
        "--reference",
        &run,
        "--reference-columns",
        "_cmd",
        "--actual",
        &run,
        "--no-lag",
        "--json",
    ]);
    let rms = floats(&v["rms"]);
    assert!((rms[0] - 0.0001).abs() < 1e-12 && (rms[2] - 0.001).abs() < 1e-12);
    assert_eq!(v["segments"][1]["name"], "B");
}
