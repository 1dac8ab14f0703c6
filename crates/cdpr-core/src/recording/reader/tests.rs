use super::*;
use crate::recording::sidecar;
use crate::run::{CsvRecorder, RunOptions, csv_columns, hold, run};
use crate::sim::{ControlMode, ModelKind, SimConfig};

/// A directory of its own for each test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cdpr-reader-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// silva4 settling at home for 8 s at 1 ms (8001 rows, eight CSV blocks, several MCAP
/// chunks), in two segments; its run and its extra (shadow) columns' values per row.
fn settling_run() -> (
    crate::robot::Robot,
    crate::trajectory::Trajectory,
    crate::run::RunOutcome,
) {
    let robot = crate::fixtures::robot("silva4");
    let options = RunOptions::new(SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, 1e-3));
    let mut traj = hold(Pose::from_array(robot.home), 8.0, 1e-3);
    traj.segments = vec!["settle".into(), "hold, still".into()];
    let n = traj.samples.len();
    for (k, s) in traj.samples.iter_mut().enumerate() {
        s.segment = Some(usize::from(k > n / 3));
    }
    let outcome = run(&robot, &traj, &options, &mut |_| {}).expect("runs");
    (robot, traj, outcome)
}

const SHADOW_COLUMNS: [&str; 4] = ["plc_cycle", "enable", "rejected", "gap"];

fn shadow_extra(k: usize) -> [f64; 4] {
    [k as f64 * 3.0, (k % 2) as f64, 0.0, f64::from(k == 1500)]
}

/// Every row of `f` equals the run's record bit for bit, read forwards, backwards and
/// jumping about.
fn assert_rows_are_the_records(
    f: &mut RunFile,
    traj: &crate::trajectory::Trajectory,
    outcome: &crate::run::RunOutcome,
) {
    assert_eq!(f.len(), outcome.records.len());
    let order: Vec<usize> = (0..f.len())
        .chain((0..f.len()).rev())
        .chain((0..f.len()).map(|k| k * 7919 % f.len()))
        .collect();
    for k in order {
        let row = f.row(k).expect("row");
        let r = &outcome.records[k];
        let segment = traj.segments[r.commanded.segment.expect("segment")].as_str();
        assert_eq!(row.time.to_bits(), r.state.time.to_bits(), "row {k}");
        assert_eq!(f.time(k).to_bits(), r.state.time.to_bits(), "row {k}");
        assert!(
            same_bits(&row.commanded.to_array(), &r.commanded.pose.to_array()),
            "row {k}"
        );
        assert!(
            same_bits(&row.pose.to_array(), &r.state.pose.to_array()),
            "row {k}"
        );
        assert!(same_bits(&row.length_command, &r.length_command), "row {k}");
        assert!(same_bits(&row.lengths, &r.state.lengths), "row {k}");
        assert!(same_bits(&row.tensions, &r.state.tensions), "row {k}");
        assert!(same_bits(&row.extra, &shadow_extra(k)), "row {k}");
        assert_eq!(row.segment, segment, "row {k}");
    }
    assert!(f.row(f.len()).is_err());
}

#[test]
fn an_mcap_recording_reads_back_bit_for_bit_and_as_its_csv() {
    let (robot, traj, outcome) = settling_run();
    let dir = scratch("mcap");
    let meta = sidecar::Sidecar::new("cdpr shadow: robot silva4").with_robot(&robot);
    let mut files = Vec::new();
    for name in ["run.mcap", "run.csv"] {
        let path = dir.join(name);
        let mut recorder = crate::recording::Recorder::create(&path, &robot, &traj, &meta)
            .expect("created")
            .with_extra_columns(&SHADOW_COLUMNS);
        for (k, r) in outcome.records.iter().enumerate() {
            recorder
                .write_with(&r.as_record(), &shadow_extra(k))
                .expect("row");
        }
        recorder.finish().expect("finished");
        files.push(RunFile::open(&path).expect("opens"));
    }
    let [mut mcap, csv] = <[RunFile; 2]>::try_from(files).expect("two");
    let Backend::Mcap(backend) = &mcap.backend else {
        panic!("an MCAP backend");
    };
    assert!(backend.chunk_rows.len() > 3, "{:?}", backend.chunk_rows);
    assert_rows_are_the_records(&mut mcap, &traj, &outcome);
    assert_eq!(mcap.description(), Some("cdpr shadow: robot silva4"));
    assert_eq!(mcap.robot_name(), Some("silva4"));
    assert!(
        mcap.robot_text().is_some_and(|t| t.contains("silva4")),
        "the robot file rides along"
    );
    assert_eq!(mcap.cables(), 4);
    assert_eq!(mcap.extra_columns(), SHADOW_COLUMNS);
    // The same run read from either file: the same times, overview and events.
    assert!(same_bits(mcap.times(), csv.times()));
    assert_eq!(mcap.overview(), csv.overview());
    assert_eq!(mcap.events(), csv.events());
    assert_eq!(mcap.events().first_gap.map(|e| e.row), Some(1500));
    assert_eq!(mcap.description(), csv.description());
    // A file that is not an MCAP recording names itself.
    let fake = dir.join("fake.mcap");
    std::fs::write(&fake, "t,x\n").expect("written");
    let e = RunFile::open(&fake).expect_err("not MCAP").to_string();
    assert!(e.contains("fake.mcap"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_real_run_reads_back_bit_for_bit_in_any_order() {
    let (robot, traj, outcome) = settling_run();
    let dir = scratch("real");
    let path = dir.join("run.csv");
    let file = std::fs::File::create(&path).expect("created");
    let mut recorder = CsvRecorder::new(file, &robot, &traj).with_extra_columns(&SHADOW_COLUMNS);
    for (k, r) in outcome.records.iter().enumerate() {
        recorder
            .write_with(&r.as_record(), &shadow_extra(k))
            .expect("row");
    }
    recorder.finish().expect("finished");
    sidecar::write(
        &path,
        &sidecar::Sidecar::new("cdpr simulate: robot silva4, held").with_robot(&robot),
    )
    .expect("sidecar");

    let mut f = RunFile::open(&path).expect("opens");
    assert!(f.len() > 2 * BLOCK_ROWS);
    assert_eq!(f.cables(), 4);
    assert_eq!(f.extra_columns(), SHADOW_COLUMNS);
    assert_eq!(f.description(), Some("cdpr simulate: robot silva4, held"));
    assert_eq!(f.robot_name(), Some("silva4"));
    assert_eq!(f.robot_text(), None);
    assert_eq!(f.events().first_gap.map(|e| e.row), Some(1500));
    assert_rows_are_the_records(&mut f, &traj, &outcome);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run's CSV of `rows` rows on 2 cables, every 10 ms: tensions 10 and 20 N, the platform
/// on its command; `edit(k, row)` changes row `k` (numbers in `csv_columns(2)` order).
fn constructed(rows: usize, extra: &[&str], edit: impl Fn(usize, &mut Vec<f64>)) -> String {
    let mut header = csv_columns(2);
    header.push("segment".into());
    header.extend(extra.iter().map(|e| e.to_string()));
    let mut text = header.join(",") + "\n";
    for k in 0..rows {
        let t = k as f64 * 0.01;
        let mut v = vec![
            t, 0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3, 0.0, 0.0, 0.0,
        ];
        v.extend([1.0, 1.0, 10.0, 1.5, 1.5, 20.0]);
        v.extend(extra.iter().map(|_| 0.0));
        edit(k, &mut v);
        let mut fields: Vec<String> = v[..19].iter().map(|x| format!("{x}")).collect();
        fields.push("seg".into());
        fields.extend(v[19..].iter().map(|x| format!("{x}")));
        text += &(fields.join(",") + "\n");
    }
    text
}

#[test]
fn index_at_takes_the_last_row_at_or_before() {
    let dir = scratch("index");
    let path = dir.join("run.csv");
    std::fs::write(&path, constructed(5, &[], |_, _| {})).expect("written");
    let f = RunFile::open(&path).expect("opens");
    assert_eq!(f.len(), 5);
    assert_eq!(f.index_at(-1.0), 0);
    assert_eq!(f.index_at(f64::NAN), 0);
    assert_eq!(f.index_at(0.0), 0);
    assert_eq!(f.index_at(0.02), 2);
    assert_eq!(f.index_at(0.029), 2);
    assert_eq!(f.index_at(0.04), 4);
    assert_eq!(f.index_at(1e9), 4);
    // No rows: a header alone opens, and every time is row 0.
    std::fs::write(&path, constructed(0, &[], |_, _| {})).expect("written");
    let f = RunFile::open(&path).expect("opens");
    assert!(f.is_empty());
    assert_eq!(f.index_at(3.0), 0);
    assert_eq!(f.events(), &Events::default());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn events_are_found_where_they_were_put() {
    let dir = scratch("events");
    let path = dir.join("run.csv");
    // A spike on cable 2 at row 37, cable 1 slack at row 50, the platform 5 cm off its
    // command at row 60, a 50 ms step before row 80.
    let edit = |k: usize, v: &mut Vec<f64>| {
        if k >= 80 {
            v[0] += 0.04;
        }
        match k {
            37 => v[18] = 250.0,
            50 => v[15] = 0.0,
            60 => v[8] += 0.05,
            _ => {}
        }
    };
    std::fs::write(&path, constructed(100, &[], edit)).expect("written");
    let f = RunFile::open(&path).expect("opens");
    let e = f.events();
    let tension = e.largest_tension.expect("tension");
    assert_eq!(
        (tension.row, tension.cable, tension.value),
        (37, Some(1), 250.0)
    );
    assert_eq!(tension.time, 0.37);
    let slack = e.first_slack.expect("slack");
    assert_eq!((slack.row, slack.cable, slack.time), (50, Some(0), 0.5));
    let error = e.largest_error.expect("error");
    assert_eq!(error.row, 60);
    assert!((error.value - 0.05).abs() < 1e-12, "{}", error.value);
    let gap = e.first_gap.expect("gap");
    assert_eq!(gap.row, 80);
    assert!((gap.time - 0.84).abs() < 1e-12 && (gap.value - 0.05).abs() < 1e-12);
    // With the shadow's `gap` column, the flag is the gap (not the step).
    let flagged = |k: usize, v: &mut Vec<f64>| {
        edit(k, v);
        if k == 70 {
            v[19] = 1.0;
        }
    };
    std::fs::write(&path, constructed(100, &["gap"], flagged)).expect("written");
    let f = RunFile::open(&path).expect("opens");
    assert_eq!(f.extra_columns(), ["gap"]);
    assert_eq!(f.events().first_gap.map(|g| g.row), Some(70));
    // Neither slack nor gap: none.
    std::fs::write(&path, constructed(100, &[], |_, _| {})).expect("written");
    let f = RunFile::open(&path).expect("opens");
    assert_eq!((f.events().first_slack, f.events().first_gap), (None, None));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_overview_keeps_every_extreme() {
    let dir = scratch("overview");
    let path = dir.join("run.csv");
    let rows = 5003;
    // Deterministic noise (a linear congruential generator) on the tensions and the pose.
    let noise = |k: usize, salt: u64| {
        let x = (k as u64 ^ salt)
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let edit = |k: usize, v: &mut Vec<f64>| {
        v[15] = 100.0 * noise(k, 1);
        v[18] = 100.0 * noise(k, 2) - 5.0;
        v[7] += 0.01 * noise(k, 3);
    };
    std::fs::write(&path, constructed(rows, &[], edit)).expect("written");
    let mut f = RunFile::open(&path).expect("opens");
    let o = f.overview().clone();
    assert!(
        o.bins.len() <= MAX_BINS && o.bins.len() >= MAX_BINS / 2,
        "{}",
        o.bins.len()
    );
    assert_eq!(o.bins.iter().map(|b| b.rows).sum::<usize>(), rows);
    let mut overall = [f64::MIN; 2];
    for (i, b) in o.bins.iter().enumerate() {
        assert_eq!(b.first, i * o.rows_per_bin);
        let mut brute = (vec![f64::MAX; 2], vec![f64::MIN; 2], f64::MAX, f64::MIN);
        for k in b.first..b.first + b.rows {
            let r = f.row(k).expect("row");
            for c in 0..2 {
                brute.0[c] = brute.0[c].min(r.tensions[c]);
                brute.1[c] = brute.1[c].max(r.tensions[c]);
            }
            brute.2 = brute.2.min(r.tracking_error());
            brute.3 = brute.3.max(r.tracking_error());
        }
        assert_eq!(
            (&b.tension_min, &b.tension_max),
            (&brute.0, &brute.1),
            "bin {i}"
        );
        assert_eq!((b.error_min, b.error_max), (brute.2, brute.3), "bin {i}");
        assert_eq!(
            (b.t_first, b.t_last),
            (f.time(b.first), f.time(b.first + b.rows - 1))
        );
        for (o, m) in overall.iter_mut().zip(&b.tension_max) {
            *o = o.max(*m);
        }
    }
    let brute_max = (0..rows)
        .map(|k| 100.0 * noise(k, 1))
        .fold(f64::MIN, f64::max);
    assert_eq!(overall[0], brute_max);
    let top = f.events().largest_tension.expect("largest");
    assert_eq!(top.value, overall[0].max(overall[1]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_malformed_record_names_the_file_line_and_column() {
    let dir = scratch("malformed");
    let path = dir.join("run.csv");
    let open_err = |text: String| {
        std::fs::write(&path, text).expect("written");
        RunFile::open(&path).expect_err("malformed").to_string()
    };
    // Data row 3 is line 4; `x` is the 8th column.
    let bad = constructed(5, &[], |_, _| {}).replacen(
        "0.02,0.1,0.2,0.3,0,0,0,0.1",
        "0.02,0.1,0.2,0.3,0,0,0,zero",
        1,
    );
    let e = open_err(bad);
    assert!(
        e.contains("run.csv:4: column 8 (`x`): `zero` is not a number"),
        "{e}"
    );
    // An old file's comment line counts in the line numbers.
    let bad = "# cdpr simulate: old\n".to_string()
        + &constructed(3, &[], |_, _| {}).replacen(",seg\n", ",seg,9\n", 1);
    let e = open_err(bad);
    assert!(
        e.contains("run.csv:3: this row has 21 fields but the header has 20"),
        "{e}"
    );
    let e = open_err(constructed(3, &[], |_, _| {}).replace("tension_2", "force_2"));
    assert!(e.contains("run.csv: missing column `tension_2`"), "{e}");
    let e = open_err("t,x,y,z\n0,1,2,3\n".into());
    assert!(e.contains("missing column `x_cmd`"), "{e}");
    // A line without end (a binary file named .csv) is refused, not read into memory.
    let long = constructed(2, &[], |_, _| {}) + &"7".repeat(3 << 20);
    let e = open_err(long);
    assert!(e.contains("run.csv: line 4 is longer than 1 MiB"), "{e}");
    let e = RunFile::open(&dir.join("run.txt"))
        .expect_err("not a run")
        .to_string();
    assert!(e.contains("run.txt: not a recording"), "{e}");
    let e = RunFile::open(&dir.join("absent.csv"))
        .expect_err("absent")
        .to_string();
    assert!(e.contains("absent.csv"), "{e}");
    // An old file's comment line is its description.
    std::fs::write(
        &path,
        "# cdpr simulate: old\n".to_string() + &constructed(3, &[], |_, _| {}),
    )
    .expect("w");
    let f = RunFile::open(&path).expect("opens");
    assert_eq!((f.description(), f.len()), (Some("cdpr simulate: old"), 3));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_time_that_goes_back_or_is_not_finite_is_refused_with_its_line() {
    let dir = scratch("times");
    let path = dir.join("run.csv");
    let open = |edit: &dyn Fn(usize, &mut Vec<f64>)| {
        std::fs::write(&path, constructed(5, &[], edit)).expect("written");
        RunFile::open(&path)
    };
    // Data row 3 (line 5: the header is line 1) at 0.005 s, after row 2's 0.02 s.
    let e = open(&|k, v| {
        if k == 3 {
            v[0] = 0.005;
        }
    })
    .expect_err("backwards")
    .to_string();
    assert!(
        e.contains("run.csv: line 5: time 0.005 s is before the previous row's 0.02 s"),
        "{e}"
    );
    // The first row after the last: refused at the last.
    let e = open(&|k, v| {
        if k == 0 {
            v[0] = 1.0;
        }
    })
    .expect_err("first after last")
    .to_string();
    assert!(
        e.contains("line 3: time 0.01 s is before the previous row's 1 s"),
        "{e}"
    );
    for bad in [f64::NAN, f64::INFINITY] {
        let e = open(&|k, v| {
            if k == 4 {
                v[0] = bad;
            }
        })
        .expect_err("not finite")
        .to_string();
        assert!(e.contains("run.csv: line 6: time"), "{e}");
        assert!(e.contains("is not a finite number"), "{e}");
    }
    // Equal times (two shadow steps at one time) are kept.
    let f = open(&|k, v| {
        if k == 2 {
            v[0] = 0.01;
        }
    })
    .expect("equal times open");
    assert_eq!(f.times(), [0.0, 0.01, 0.01, 0.03, 0.04]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tension_that_is_not_a_number_is_neither_slack_nor_largest() {
    let dir = scratch("nan-tension");
    let path = dir.join("run.csv");
    // Cable 1 unmeasured (NaN) from the start, cable 2 infinite at row 1; cable 1 slack at
    // row 3; cable 2's 30 N at row 4 is the largest measured.
    let edit = |k: usize, v: &mut Vec<f64>| {
        v[15] = f64::NAN;
        match k {
            1 => v[18] = f64::INFINITY,
            3 => v[15] = 0.0,
            4 => v[18] = 30.0,
            _ => {}
        }
    };
    std::fs::write(&path, constructed(6, &[], edit)).expect("written");
    let f = RunFile::open(&path).expect("opens");
    let slack = f.events().first_slack.expect("slack");
    assert_eq!((slack.row, slack.cable, slack.value), (3, Some(0), 0.0));
    let top = f.events().largest_tension.expect("largest");
    assert_eq!((top.row, top.cable, top.value), (4, Some(1), 30.0));
    // All NaN: no slack, no largest.
    let all_nan = |_: usize, v: &mut Vec<f64>| {
        v[15] = f64::NAN;
        v[18] = f64::NAN;
    };
    std::fs::write(&path, constructed(3, &[], all_nan)).expect("written");
    let f = RunFile::open(&path).expect("opens");
    assert_eq!(
        (f.events().first_slack, f.events().largest_tension),
        (None, None)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
