//! `cdpr preflight`: a trajectory that holds passes; one that leaves the workspace, is too fast,
//! too heavy or wraps a pulley too far fails at the first violation, whose time and cable are
//! computed here independently (closed forms, the CSV of `cdpr trajectory` with the cable
//! lengths from the robot's anchors, `cdpr tensions`, `cdpr ik`); bad input exits with 1 (2 for a command line the parser refuses), a violation with 3.

use crate::common::*;
use std::path::Path;

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// Runs `cdpr preflight … --json`, expecting exit status `code`, and parses the report.
fn preflight(args: &[&str], code: i32) -> serde_json::Value {
    let mut all = vec!["preflight"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = cdpr(&all);
    assert_eq!(o.status.code(), Some(code), "{all:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)))
}

/// A CSV trajectory `t,x,y,z` with the given samples.
fn write_csv(path: &Path, rows: impl Iterator<Item = [f64; 4]>) {
    let mut text = String::from("t,x,y,z\n");
    for r in rows {
        text.push_str(&format!("{},{},{},{}\n", r[0], r[1], r[2], r[3]));
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn seed000_with_the_s_curve_passes_on_uvigo8() {
    let v = preflight(
        &words("--robot uvigo8 --trajectory seed000 --profile scurve"),
        0,
    );
    assert_eq!(v["ok"], true);
    assert!(v["first_violation"].is_null());
    let names: Vec<&str> = v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["XY", "XZ", "YZ", "Up", "Down"]);
    for w in v["total"]["checks"].as_array().unwrap() {
        assert_eq!(w["violations"], 0, "{w}");
        if w["applies"] == true {
            assert!(w["margin"].as_f64().unwrap() >= 0.0, "{w}");
        }
    }
    // Its text form, "OK: every check holds" with exit status 0, is the guide's first figure
    // (docs/src/preflight.md), which `guide_examples` runs.
}

#[test]
fn leaving_the_workspace_is_refused_at_the_crossing_time() {
    let dir = scratch("preflight_workspace");
    let csv = dir.join("out.csv");
    // x = x0 + v t at z = 0.15, sampled every 0.2 s; uvigo8's box ends at x = 0.1.
    let (x0, v) = (0.0003, 0.08);
    write_csv(
        &csv,
        (0..=10).map(|k| {
            let t = k as f64 * 0.2;
            [t, x0 + v * t, 0.0, 0.15]
        }),
    );
    let r = preflight(&["--robot", "uvigo8", "--trajectory", &path_str(&csv)], 3);
    assert_eq!(r["ok"], false);
    let first = &r["first_violation"];
    assert_eq!(first["check"], "workspace");
    assert_eq!(first["subject"], "x max");
    let crossing = (0.1 - x0) / v; // 1.24625 s
    let t = first["t"].as_f64().unwrap();
    // Checked every 10 ms (0.8 mm < the 1 mm step): found within one checked interval.
    assert!(
        t >= crossing && t <= crossing + 0.01 + 1e-9,
        "{t} vs {crossing}"
    );
    let by = first["by"].as_f64().unwrap();
    assert!((by - (x0 + v * t - 0.1)).abs() < 1e-9, "{by}");
    // The text names the time and the face.
    let o = cdpr(&[
        "preflight",
        "--robot",
        "uvigo8",
        "--trajectory",
        &path_str(&csv),
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stdout(&o).contains(&format!(
            "FIRST VIOLATION at t = {t:.4} s: workspace of x max"
        )),
        "{}",
        stdout(&o)
    );
}

/// Cable lengths l_i = |a_i − (p + b_i)| at zero rotation, from the robot's anchors.
fn lengths(anchors: &[(String, [f64; 3], [f64; 3])], p: [f64; 3]) -> Vec<f64> {
    anchors
        .iter()
        .map(|(_, a, b)| {
            (0..3)
                .map(|k| (a[k] - p[k] - b[k]).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect()
}

#[test]
fn a_high_speed_exceeds_the_winch_velocity_where_the_csv_says() {
    let dir = scratch("preflight_speed");
    let csv = path_str(&dir.join("fast.csv"));
    let shape = "--robot uvigo8 --speed 1.5 --profile scurve";
    let o = cdpr(&with(
        &format!("trajectory {shape} --name seed000 --dt 0.001 --out"),
        &[&csv],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let robot = json(&words("check uvigo8 --json"));
    let anchors: Vec<(String, [f64; 3], [f64; 3])> = robot["cables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let v = |k: &str| {
                let f = floats(&c[k]);
                [f[0], f[1], f[2]]
            };
            (
                c["name"].as_str().unwrap().to_string(),
                v("frame_anchor"),
                v("platform_anchor"),
            )
        })
        .collect();
    let limit = robot["winch"]["max_velocity"].as_f64().unwrap();
    // Cable speeds by differences of the lengths between consecutive CSV rows.
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').take(4).map(|x| x.parse().unwrap()).collect())
        .collect();
    let segments: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    let mut expected = None;
    for (k, pair) in rows.windows(2).enumerate() {
        let (a, b) = (&pair[0], &pair[1]);
        let (la, lb) = (
            lengths(&anchors, [a[1], a[2], a[3]]),
            lengths(&anchors, [b[1], b[2], b[3]]),
        );
        let dt = b[0] - a[0];
        if let Some((i, _)) = (0..la.len())
            .map(|i| (i, ((lb[i] - la[i]) / dt).abs()))
            .filter(|(_, s)| *s > limit)
            .max_by(|p, q| p.1.total_cmp(&q.1))
        {
            expected = Some(((a[0] + b[0]) / 2.0, anchors[i].0.clone(), segments[k]));
            break;
        }
    }
    let (t_fd, cable, segment) = expected.expect("the CSV exceeds the winch velocity somewhere");
    let r = preflight(&with(&format!("{shape} --trajectory seed000"), &[]), 3);
    let first = &r["first_violation"];
    assert_eq!(first["check"], "velocity", "{first}");
    let t = first["t"].as_f64().unwrap();
    assert!(
        (t - t_fd).abs() <= 0.002,
        "preflight {t} s, lengths {t_fd} s"
    );
    assert_eq!(first["subject"], cable.as_str());
    assert_eq!(first["segment"], segment);
    assert!(
        (first["value"].as_f64().unwrap() - limit - first["by"].as_f64().unwrap()).abs() < 1e-12
    );
}

/// A payload too heavy from the first pose on: any trajectory shows it, poly5 (3 s) soonest.
#[test]
fn a_heavy_payload_breaks_the_tensions_from_the_start() {
    let r = preflight(
        &words("--robot uvigo8 --trajectory poly5 --profile scurve --payload 50"),
        3,
    );
    let first = &r["first_violation"];
    assert_eq!(first["t"], 0.0);
    assert_eq!(first["check"], "tensions");
    let pose: Vec<String> = floats(&first["pose"])
        .iter()
        .map(|x| x.to_string())
        .collect();
    // `cdpr tensions` at that pose: no tensions ≤ f_max hold 50 kg there.
    let o = cdpr(&with(
        "tensions --robot uvigo8 --payload 50 --json --pose",
        &[&pose.join(",")],
    ));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["feasible"], false);
    assert!(v["largest_min_tension"].is_null());
    assert!(first["value"].as_f64().unwrap() > 100.0);
    // A payload it carries passes.
    preflight(
        &words("--robot uvigo8 --trajectory poly5 --profile scurve --payload 1.5"),
        0,
    );
}

#[test]
fn a_pulley_wrapped_beyond_max_wrap_fails_where_ik_says() {
    let dir = scratch("preflight_wrap");
    // uvigo8-pulleys: swivel axes −z, so the wrap is the angle the cable turns from its free
    // segment d (platform → pulley, `cdpr ik`'s direction) to −z: β = acos(−d_z).
    let wrap_at = |z: f64| -> (f64, Vec<usize>) {
        let v = json(&with(
            "ik --robot uvigo8-pulleys --json --pose",
            &[&format!("0,0,{z}")],
        ));
        let b: Vec<f64> = v["directions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (-floats(d)[2]).acos())
            .collect();
        let max = b.iter().copied().fold(f64::MIN, f64::max);
        let which = (0..b.len()).filter(|&i| b[i] > max - 1e-9).collect();
        (max, which)
    };
    let (w, cables) = wrap_at(0.1);
    assert!(
        wrap_at(0.15).0 < w && w < wrap_at(0.06).0,
        "the wrap grows as z falls"
    );
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("robots/uvigo8-pulleys.toml"),
    )
    .unwrap();
    let text = text
        .replace("name = \"uvigo8-pulleys\"", "name = \"tight-pulleys\"")
        .replace(
            "pulley_radius = 0.025",
            &format!("pulley_max_wrap = {w}\npulley_radius = 0.025"),
        );
    let robot = dir.join("tight-pulleys.toml");
    std::fs::write(&robot, text).unwrap();
    // z = 0.15 − 0.05 t: the largest wrap reaches max_wrap at z = 0.1, t = 1 s.
    let csv = dir.join("down.csv");
    write_csv(
        &csv,
        (0..=9).map(|k| {
            let t = k as f64 * 0.2;
            [t, 0.0, 0.0, 0.15 - 0.05 * t]
        }),
    );
    let r = preflight(
        &[
            "--robot",
            &path_str(&robot),
            "--trajectory",
            &path_str(&csv),
        ],
        3,
    );
    let first = &r["first_violation"];
    assert_eq!(first["check"], "wrap", "{first}");
    let t = first["t"].as_f64().unwrap();
    assert!((1.0 - 1e-9..=1.0 + 0.01 + 1e-9).contains(&t), "{t}");
    let names: Vec<String> = cables.iter().map(|i| r_cable(&robot, *i)).collect();
    assert!(
        names.contains(&first["subject"].as_str().unwrap().to_string()),
        "{first}"
    );
    // The same robot with its default max_wrap (π) passes.
    preflight(
        &["--robot", "uvigo8-pulleys", "--trajectory", &path_str(&csv)],
        0,
    );
}

fn r_cable(robot: &Path, i: usize) -> String {
    let v = json(&["check", &path_str(robot), "--json"]);
    v["cables"][i]["name"].as_str().unwrap().to_string()
}

#[test]
fn bad_input_exits_with_1_and_says_why() {
    let o = cdpr(&words("preflight --robot nosuchrobot --trajectory seed000"));
    assert_eq!(o.status.code(), Some(1));
    assert_stderr(&o, "nosuchrobot");
    let dir = scratch("preflight_bad");
    let csv = dir.join("bad.csv");
    std::fs::write(&csv, "t,x,y,z\n0,0,0,0.15\n0.1,zero,0,0.15\n").unwrap();
    let o = cdpr(&[
        "preflight",
        "--robot",
        "uvigo8",
        "--trajectory",
        &path_str(&csv),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_stderr(&o, &format!("{}:3", path_str(&csv)));
    let o = cdpr(&words(
        "preflight --robot uvigo8 --trajectory seed000 --step 0",
    ));
    assert_eq!(o.status.code(), Some(2), "clap refuses it before the run");
    let o = cdpr(&words("preflight --robot uvigo8"));
    assert!(!o.status.success());
    assert_stderr(&o, "--trajectory");
}
