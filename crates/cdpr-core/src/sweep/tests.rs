use super::*;
use std::collections::HashSet;

const GRID: &str = r#"
robots = ["uvigo8", "silva4"]
trajectories = ["poly5"]
speeds = [0.2, 0.4]
model = "elastic"
control = "ideal"
dt = 0.002

[parameters]
stiffness_scale = [0.5, 1.0, 2.0]
payload = [0.0, 0.25]
"#;

fn spec(text: &str) -> Spec {
    Spec::from_text(text, "spec.toml").expect("valid spec")
}

fn error(text: &str) -> String {
    Spec::from_text(text, "spec.toml")
        .expect_err("refused")
        .to_string()
}

#[test]
fn a_grid_has_the_product_of_its_lists_in_mixed_radix_order() {
    let s = spec(GRID);
    let runs = s.runs().expect("runs");
    assert_eq!(runs.len(), 2 * 2 * 3 * 2);
    assert_eq!(s.count().expect("count"), 24);
    // Every combination once.
    let combos: HashSet<String> = runs
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} {:?}",
                r.robot, r.trajectory, r.speed, r.parameters
            )
        })
        .collect();
    assert_eq!(combos.len(), 24);
    // The last parameter fastest, the robots slowest.
    assert_eq!(
        runs[0].parameters,
        vec![("stiffness_scale".into(), 0.5), ("payload".into(), 0.0)]
    );
    assert_eq!(runs[1].parameters[1].1, 0.25);
    assert_eq!(runs[2].parameters[0].1, 1.0);
    assert_eq!(
        (runs[11].robot.as_str(), runs[12].robot.as_str()),
        ("uvigo8", "silva4")
    );
    assert_eq!((runs[5].speed, runs[6].speed), (0.2, 0.4));
    for (k, r) in runs.iter().enumerate() {
        assert_eq!(r.index, k as u64);
        assert_eq!(r.seed, run_seed(0, k as u64));
        assert_eq!(*r, s.plan(k as u64));
    }
    assert_eq!(
        s.columns()[..8],
        [
            "index",
            "seed",
            "robot",
            "trajectory",
            "speed",
            "stiffness_scale",
            "payload",
            "status"
        ]
    );
}

#[test]
fn random_draws_stay_in_bounds_and_depend_only_on_seed_and_index() {
    let text = r#"
robots = ["uvigo8"]
trajectories = ["poly5", "seed000"]
speeds = [0.1, 0.2, 0.3]
mode = "random"
samples = 500
seed = 42
[parameters]
stiffness_scale = { min = 0.5, max = 2.0 }
payload = [0.0, 1.0]
"#;
    let s = spec(text);
    let runs = s.runs().expect("runs");
    assert_eq!(runs.len(), 500);
    let mut speeds = HashSet::new();
    let mut trajectories = HashSet::new();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in &runs {
        let k = r.parameters[0].1;
        assert!((0.5..=2.0).contains(&k), "{k}");
        (lo, hi) = (lo.min(k), hi.max(k));
        assert!(r.parameters[1].1 == 0.0 || r.parameters[1].1 == 1.0);
        speeds.insert(r.speed.to_bits());
        trajectories.insert(r.trajectory.clone());
    }
    // 500 uniform draws cover the range (the chance of missing a 5 % end is 0.95^500).
    assert!(lo < 0.575 && hi > 1.925, "{lo} {hi}");
    assert_eq!((speeds.len(), trajectories.len()), (3, 2));
    // Reproducible: the same spec gives the same runs; another seed others.
    assert_eq!(spec(text).runs().expect("runs"), runs);
    let other = spec(&text.replace("seed = 42", "seed = 43"))
        .runs()
        .expect("runs");
    assert_ne!(other[0].parameters, runs[0].parameters);
    // Mean of a uniform on [0.5, 2]: 1.25 (σ/√500 ≈ 0.02).
    let mean = runs.iter().map(|r| r.parameters[0].1).sum::<f64>() / 500.0;
    assert!((mean - 1.25).abs() < 0.06, "{mean}");
}

#[test]
fn splitmix64_matches_its_reference_values() {
    // Vigna's splitmix64.c from state 0: the first outputs.
    let mut m = SplitMix64(0);
    assert_eq!(m.next(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(m.next(), 0x6e78_9e6a_a1b9_65f4);
    // Seeds differ between neighbouring runs and sweeps.
    assert_ne!(run_seed(0, 0), run_seed(0, 1));
    assert_ne!(run_seed(0, 1), run_seed(1, 0));
}

#[test]
fn bad_specs_are_refused_with_file_line_and_field() {
    let e = error("robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\nsped = [0.1]\n");
    assert_eq!(
        e,
        "spec.toml:3: sped: unknown option `sped` (did you mean `speeds`?)"
    );
    let e = error(
        "robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\n[parameters]\nstifness = [1.0]\n",
    );
    assert!(
        e.starts_with(
            "spec.toml:4: parameters.stifness: unknown option `stifness` (did you mean `stiffness_scale`?)"
        ),
        "{e}"
    );
    let e = error(
        "robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\n\n[parameters]\nstiffness_scale = [1.0, -2.0]\n",
    );
    assert!(
        e.contains("spec.toml:5: parameters.stiffness_scale: must be between 1e-3 and 1e3, got -2"),
        "{e}"
    );
    let e = error("robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\ndt = 1.0\n");
    assert_eq!(e, "spec.toml:3: dt: must be between 1e-5 and 0.01 s, got 1");
    let e = error("robots = [\"uvigo9\"]\ntrajectories = [\"poly5\"]\n");
    assert!(
        e.starts_with("spec.toml:1: robots: no robot `uvigo9`: not a shipped robot"),
        "{e}"
    );
    let e = error("robots = [\"uvigo8\"]\n\ntrajectories = [\"nope\"]\n");
    assert!(
        e.starts_with("spec.toml:3: trajectories: `nope` on robot uvigo8"),
        "{e}"
    );
    let e = error(
        "robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\n[parameters]\npayload = { min = 0.0, max = 1.0 }\n",
    );
    assert!(
        e.contains("spec.toml:4: parameters.payload: {min, max} is for mode = \"random\""),
        "{e}"
    );
    let e = error("robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\nmode = \"random\"\n");
    assert!(
        e.contains("spec.toml:3: mode: mode = \"random\" needs `samples = N`"),
        "{e}"
    );
    let e = error("robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\nmodel = \"rigid\"\n");
    assert!(
        e.contains("spec.toml:3: model: `rigid` is not one of chain, elastic or surrogate"),
        "{e}"
    );
    let e = error("robots = []\ntrajectories = [\"poly5\"]\n");
    assert!(e.contains("spec.toml:1: robots: the list is empty"), "{e}");
    // The budget names the lists.
    let many = format!(
        "robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\n[parameters]\npayload = [{}]\nkp = [{}]\n",
        vec!["0.0"; 2000].join(","),
        vec!["1.0"; 1000].join(",")
    );
    let e = error(&many);
    assert!(
        e.contains("2.000e6 runs (grid of 1 robots × 1 trajectories × 1 speeds × 2000 payload × 1000 kp); at most 1.0e6"),
        "{e}"
    );
}

#[test]
fn parameters_change_the_robot_a_run_simulates() {
    let s = spec(GRID);
    let plan = |k: f64, payload: f64| RunPlan {
        index: 0,
        seed: 1,
        robot: "uvigo8".into(),
        trajectory: "poly5".into(),
        speed: 0.4,
        parameters: vec![("stiffness_scale".into(), k), ("payload".into(), payload)],
    };
    let rows: Vec<Row> = [(1.0, 0.0), (0.5, 0.0), (1.0, 0.25)]
        .iter()
        .map(|&(k, p)| run_one(&s, &plan(k, p)))
        .collect();
    let col = |name: &str| s.columns().iter().position(|c| c == name).expect("column");
    let num = |r: &Row, name: &str| match &r.cells[col(name)] {
        Cell::Num(x) => *x,
        other => panic!("{name}: {other:?}"),
    };
    for r in &rows {
        assert!(r.ok, "{:?}", r.cells);
    }
    // Softer cables and a heavier platform sag more (the error is mostly in z).
    assert!(num(&rows[1], "rms_z") > 1.5 * num(&rows[0], "rms_z"));
    assert!(num(&rows[2], "rms_z") > num(&rows[0], "rms_z"));
    // A run that cannot be built is a row, not a panic.
    let bad = RunPlan {
        robot: "caroca".into(),
        ..plan(1.0, 0.0)
    };
    let row = run_one(&s, &bad);
    assert!(!row.ok);
    assert_eq!(row.cells[col("status")], Cell::Text("error".into()));
    assert!(
        row.cells[col("error")].to_string().contains("caroca"),
        "{:?}",
        row.cells
    );
}

#[test]
fn execute_gives_the_same_rows_whatever_the_threads_and_shards() {
    let s = spec(GRID);
    let strip = |mut rows: Vec<Row>| {
        rows.sort_by_key(|r| r.index);
        let wall = s
            .columns()
            .iter()
            .position(|c| c == "wall_s")
            .expect("wall_s");
        for r in &mut rows {
            r.cells[wall] = Cell::Empty;
        }
        rows
    };
    let collect = |options: &ExecuteOptions| {
        let mut rows = Vec::new();
        let summary = execute(&s, options, |r| {
            rows.push(r);
            std::ops::ControlFlow::Continue(())
        })
        .expect("runs");
        (summary, rows)
    };
    let (all, rows) = collect(&ExecuteOptions {
        jobs: 1,
        ..Default::default()
    });
    assert_eq!((all.done, all.failed, all.skipped), (24, 0, 0));
    let one = strip(rows);
    let mut sharded = Vec::new();
    for i in 0..3 {
        let (summary, rows) = collect(&ExecuteOptions {
            shard: Some((i, 3)),
            jobs: 2,
            resume_skip: [0, 3, 4].into_iter().collect(),
            ..Default::default()
        });
        assert_eq!(summary.selected, 8);
        // 0 and 3 are in shard 0, 4 in shard 1.
        assert_eq!(summary.skipped, [2, 1, 0][i as usize]);
        sharded.extend(rows);
    }
    let sharded = strip(sharded);
    let kept: Vec<&Row> = one
        .iter()
        .filter(|r| ![0, 3, 4].contains(&r.index))
        .collect();
    assert_eq!(sharded.iter().collect::<Vec<_>>(), kept);
    // Stopping: no more rows after the caller says so.
    let mut seen = 0;
    let summary = execute(
        &s,
        &ExecuteOptions {
            jobs: 1,
            ..Default::default()
        },
        |_| {
            seen += 1;
            std::ops::ControlFlow::Break(())
        },
    )
    .expect("runs");
    assert!(
        summary.stopped && seen == 1 && summary.done < 24,
        "{summary:?}"
    );
}

#[test]
fn the_output_resumes_drops_a_partial_row_and_refuses_other_files() {
    let dir = std::env::temp_dir().join(format!("cdpr-sweep-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("runs.csv");
    let columns: Vec<String> = ["index", "x", "note"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let row = |index: u64, note: &str| Row {
        index,
        ok: true,
        cells: vec![Cell::Int(index), Cell::Num(0.1), Cell::Text(note.into())],
    };
    // New: the header; each row flushed as written (readable before the writer is dropped).
    let (mut out, resumed) = csv::open(&path, &columns, true).expect("open");
    assert_eq!(resumed, csv::Resumed::default());
    out.write(&row(3, "a, \"quoted\"\nnote")).expect("row");
    out.write(&row(1, "")).expect("row");
    let text = std::fs::read_to_string(&path).expect("text");
    assert_eq!(
        text,
        "index,x,note\n3,0.1,\"a, \"\"quoted\"\" note\"\n1,0.1,\n"
    );
    drop(out);
    // Killed mid-row: the partial line is cut off, the rows before are done.
    std::fs::write(&path, format!("{text}7,0.")).expect("write");
    let (mut out, resumed) = csv::open(&path, &columns, true).expect("open");
    assert!(resumed.dropped_partial);
    assert_eq!(resumed.done, [1, 3].into_iter().collect());
    out.write(&row(7, "")).expect("row");
    assert_eq!(
        std::fs::read_to_string(&path).expect("text"),
        format!("{text}7,0.1,\n")
    );
    // Another spec's file, or a row that is not one, is refused and left alone.
    let other: Vec<String> = ["index", "y", "note"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let e = csv::open(&path, &other, true)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("was written by a different spec (its columns: index,x,note"),
        "{e}"
    );
    std::fs::write(&path, "index,x,note\n1,0.1,\nnine,0.1,\n").expect("write");
    let e = csv::open(&path, &columns, true)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("line 3: index `nine` is not a run number"),
        "{e}"
    );
    std::fs::write(&path, "index,x,note\n1,0.1\n").expect("write");
    let e = csv::open(&path, &columns, true)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("line 2: 2 fields, expected 3"), "{e}");
    // Not resuming: overwritten.
    let (_, resumed) = csv::open(&path, &columns, false).expect("open");
    assert!(resumed.done.is_empty());
    assert_eq!(
        std::fs::read_to_string(&path).expect("text"),
        "index,x,note\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweep_output_gets_its_sidecar_naming_the_spec_and_shard() {
    let dir = std::env::temp_dir().join(format!("cdpr-sweep-sidecar-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("run.csv");
    let s = spec(GRID);
    let (out, _) = csv::open_for(&path, &s, Some((1, 3)), false).expect("open");
    drop(out);
    let meta = crate::recording::sidecar::read(&path)
        .expect("readable")
        .expect("a sidecar is written");
    assert_eq!(meta.description, "cdpr sweep: spec spec.toml, shard 1/3");
    assert!(dir.join("run.csv.meta.toml").is_file());
    // Without a shard, the spec alone.
    let (out, _) = csv::open_for(&path, &s, None, false).expect("open");
    drop(out);
    let meta = crate::recording::sidecar::read(&path).expect("readable");
    assert_eq!(
        meta.map(|m| m.description).as_deref(),
        Some("cdpr sweep: spec spec.toml")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
