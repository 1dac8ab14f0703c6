//! Replay without a window: the viewer's app (MinimalPlugins, manual updates) showing a record
//! written by a real run. What it draws at slider time t — the [`Playback`] state the scene's
//! systems read: pose, commanded pose, cable lengths and tensions — must be the record's row at
//! t (the last row at or before t) bit for bit, as read here straight from the CSV with the
//! `csv` crate rather than through core's reader; the compared run's ghost likewise from its
//! own file.

use cdpr_core::recording::Recorder;
use cdpr_core::recording::sidecar::{self, Sidecar};
use cdpr_core::run::{RunRequest, run, write_csv};
use cdpr_core::sim::ModelKind;
use cdpr_viewer::replay::Replay;
use cdpr_viewer::{Playback, ViewerError, headless_app};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A record read independently of the viewer: per row, every value as the CSV writes it.
struct Rows {
    time: Vec<f64>,
    commanded: Vec<[f64; 6]>,
    pose: Vec<[f64; 6]>,
    length_command: Vec<Vec<f64>>,
    lengths: Vec<Vec<f64>>,
    tensions: Vec<Vec<f64>>,
}

impl Rows {
    fn read(path: &Path) -> Rows {
        let mut reader = csv::ReaderBuilder::new()
            .comment(Some(b'#'))
            .from_path(path)
            .expect("the record");
        let header = reader.headers().expect("a header").clone();
        let col = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .unwrap_or_else(|| panic!("no column {name}"))
        };
        let six = |suffix: &str| {
            ["x", "y", "z", "roll", "pitch", "yaw"].map(|axis| col(&format!("{axis}{suffix}")))
        };
        let (commanded, pose) = (six("_cmd"), six(""));
        let cables = (1..)
            .take_while(|i| header.iter().any(|h| h == format!("tension_{i}")))
            .count();
        let per_cable = |what: &str| {
            (1..=cables)
                .map(|i| col(&format!("{what}_{i}")))
                .collect::<Vec<_>>()
        };
        let (length_command, lengths, tensions) = (
            per_cable("length_cmd"),
            per_cable("length"),
            per_cable("tension"),
        );
        let t = col("t");
        let mut rows = Rows {
            time: Vec::new(),
            commanded: Vec::new(),
            pose: Vec::new(),
            length_command: Vec::new(),
            lengths: Vec::new(),
            tensions: Vec::new(),
        };
        for record in reader.records() {
            let record = record.expect("a row");
            let num = |k: usize| record[k].parse::<f64>().expect("a number");
            rows.time.push(num(t));
            rows.commanded.push(commanded.map(num));
            rows.pose.push(pose.map(num));
            rows.length_command
                .push(length_command.iter().map(|&k| num(k)).collect());
            rows.lengths.push(lengths.iter().map(|&k| num(k)).collect());
            rows.tensions
                .push(tensions.iter().map(|&k| num(k)).collect());
        }
        assert!(rows.time.len() > 100, "a real run");
        rows
    }

    /// The row shown at time `t`: the last at or before it, the first before the start.
    fn at(&self, t: f64) -> usize {
        let mut shown = 0;
        for (k, &time) in self.time.iter().enumerate() {
            if time <= t {
                shown = k;
            }
        }
        shown
    }
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The state `playback` draws is row `k` of `rows`, bit for bit.
fn assert_shows(playback: &Playback, rows: &Rows, k: usize, what: &str) {
    let state = playback.state();
    assert_eq!(state.time.to_bits(), rows.time[k].to_bits(), "{what}: time");
    assert_eq!(
        bits(&state.pose.to_array()),
        bits(&rows.pose[k]),
        "{what}: pose"
    );
    assert_eq!(
        bits(&playback.commanded().to_array()),
        bits(&rows.commanded[k]),
        "{what}: commanded pose"
    );
    assert_eq!(
        bits(&state.lengths),
        bits(&rows.lengths[k]),
        "{what}: lengths"
    );
    assert_eq!(
        bits(&state.tensions),
        bits(&rows.tensions[k]),
        "{what}: tensions"
    );
    assert_eq!(
        bits(&state.winch),
        bits(&rows.length_command[k]),
        "{what}: commanded payouts"
    );
}

/// The compared run's ghost is row `k` of `rows`.
fn assert_ghost(playback: &Playback, rows: &Rows, k: usize, what: &str) {
    let (_, state) = playback.compare().expect("a compared run");
    assert_eq!(state.time.to_bits(), rows.time[k].to_bits(), "{what}: time");
    assert_eq!(
        bits(&state.pose.to_array()),
        bits(&rows.pose[k]),
        "{what}: pose"
    );
    assert_eq!(
        bits(&state.tensions),
        bits(&rows.tensions[k]),
        "{what}: tensions"
    );
    assert_eq!(
        bits(&state.lengths),
        bits(&rows.lengths[k]),
        "{what}: lengths"
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cdpr-replay-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

/// silva4 on its pick-and-place at `speed`, stepped every `dt`, as `cdpr simulate --out`
/// writes it (with its sidecar naming the robot unless `named` is false); with `mcap`, the
/// same run also as MCAP through core's recorder.
fn record(path: &Path, speed: f64, dt: f64, named: bool) -> PathBuf {
    record_as(path, speed, dt, named, None)
}

fn record_as(path: &Path, speed: f64, dt: f64, named: bool, mcap: Option<&Path>) -> PathBuf {
    let request = RunRequest {
        robot: Some("silva4".into()),
        trajectory: Some("pickplace".into()),
        speed,
        dt,
        model: ModelKind::ELASTIC,
        ..RunRequest::default()
    };
    let prepared = request.prepare().expect("prepares");
    let outcome = run(
        &prepared.robot,
        &prepared.trajectory,
        &prepared.options,
        &mut |_| {},
    )
    .expect("runs");
    if let Some(mcap) = mcap {
        let meta = Sidecar::new("test run").with_robot(&prepared.robot);
        let mut recorder =
            Recorder::create(mcap, &prepared.robot, &prepared.trajectory, &meta).expect("mcap");
        for r in &outcome.records {
            recorder.write(&r.as_record()).expect("row");
        }
        recorder.finish().expect("finished");
    }
    let file = std::fs::File::create(path).expect("created");
    write_csv(file, &prepared.robot, &prepared.trajectory, &outcome).expect("written");
    if named {
        sidecar::write(path, &Sidecar::new("test run").with_robot(&prepared.robot))
            .expect("sidecar");
    }
    path.to_path_buf()
}

#[test]
fn replay_draws_the_records_row_at_the_slider_time_bit_for_bit_and_the_ghost_its_own() {
    let dir = scratch("bits");
    let main = record(&dir.join("main.csv"), 0.5, 1e-3, true);
    // The compared run: another speed and step, so its rows fall between the main run's.
    let other = record(&dir.join("other.csv"), 0.4, 2e-3, true);
    let (main_rows, other_rows) = (Rows::read(&main), Rows::read(&other));
    let replay = Replay::open(&main, Some(&other), None).expect("opens");
    assert_eq!(replay.main.robot.name, "silva4");
    let mut playback = Playback::replay(replay).expect("replays");
    assert!(!playback.paused, "a replay opens playing");
    assert_shows(&playback, &main_rows, 0, "at open");
    assert_ghost(&playback, &other_rows, 0, "at open");
    playback.paused = true;
    // 1/16 s frames: sums of them are exact in binary.
    let mut app = headless_app(playback, Duration::from_nanos(62_500_000));
    app.update();
    let end = *main_rows.time.last().expect("rows");
    assert!(end > 2.0, "a run of {end} s");

    // Slider times: on a row, between rows, between the compared run's rows, the end, and
    // outside the record (clamped to it).
    let times = [
        0.0,
        0.2,
        0.2005,
        1.0 / 3.0,
        0.5 * end,
        main_rows.time[main_rows.time.len() / 3],
        end - 1e-4,
        end,
        end + 5.0,
        -1.0,
    ];
    for t in times {
        app.world_mut()
            .resource_mut::<Playback>()
            .seek_replay(t)
            .expect("seeks");
        app.update();
        let playback = app.world().resource::<Playback>();
        let shown = t.clamp(main_rows.time[0], end);
        let what = format!("slider at {t} s");
        assert_shows(playback, &main_rows, main_rows.at(shown), &what);
        assert_ghost(playback, &other_rows, other_rows.at(shown), &what);
        assert_eq!(playback.total_simulated().to_bits(), shown.to_bits());
    }

    // Playing: each frame moves the slider by the frame's time × the speed, and what is drawn
    // is the row at the slider's new time.
    {
        let mut playback = app.world_mut().resource_mut::<Playback>();
        playback.seek_replay(0.0).expect("seeks");
        playback.time_scale = 2.0;
        playback.paused = false;
    }
    let mut before = 0.0;
    for frame in 0..12 {
        app.update();
        let playback = app.world().resource::<Playback>();
        let t = playback.total_simulated();
        if frame > 0 {
            assert_eq!(t - before, 0.125, "frame {frame}: 1/16 s at 2×");
        }
        before = t;
        let what = format!("playing, frame {frame} at {t} s");
        assert_shows(playback, &main_rows, main_rows.at(t), &what);
        assert_ghost(playback, &other_rows, other_rows.at(t), &what);
    }

    // Steps of one sample, and the jump to the largest tension: the largest of the file.
    {
        let mut playback = app.world_mut().resource_mut::<Playback>();
        playback.paused = true;
        playback.seek_replay(1.0).expect("seeks");
        playback.step_replay(1).expect("steps");
    }
    app.update();
    let k = main_rows.at(1.0) + 1;
    assert_shows(
        app.world().resource::<Playback>(),
        &main_rows,
        k,
        "one sample on",
    );
    app.world_mut()
        .resource_mut::<Playback>()
        .step_replay(-2)
        .expect("steps");
    app.update();
    assert_shows(
        app.world().resource::<Playback>(),
        &main_rows,
        k - 2,
        "two back",
    );
    let largest = main_rows
        .tensions
        .iter()
        .flatten()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let event = {
        let playback = app.world().resource::<Playback>();
        let replay = playback.replay_source().expect("a replay");
        replay
            .main
            .file()
            .events()
            .largest_tension
            .expect("a largest tension")
    };
    app.world_mut()
        .resource_mut::<Playback>()
        .seek_replay(event.time)
        .expect("jumps");
    app.update();
    let playback = app.world().resource::<Playback>();
    let shown = playback
        .state()
        .tensions
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(
        shown.to_bits(),
        largest.to_bits(),
        "the jump lands on the largest tension"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_record_without_its_robot_needs_one_and_a_wrong_one_is_refused() {
    let dir = scratch("robot");
    let bare = record(&dir.join("bare.csv"), 0.5, 2e-3, false);
    let error = Replay::open(&bare, None, None).err().expect("refused");
    assert!(
        matches!(&error, ViewerError::Options(m) if m.contains("bare.csv") && m.contains("--robot")),
        "{error}"
    );
    // --robot names it: opens.
    let replay = Replay::open(&bare, None, Some("silva4")).expect("opens");
    assert_eq!(replay.main.robot_source, "--robot silva4");
    // A robot with another number of cables cannot draw it.
    let error = Replay::open(&bare, None, Some("uvigo8"))
        .err()
        .expect("refused");
    let text = error.to_string();
    assert!(
        text.contains("4 cables") && text.contains("uvigo8"),
        "{text}"
    );
    // Not a record at all.
    let error = Replay::open(&dir.join("missing.csv"), None, Some("silva4"))
        .err()
        .expect("refused");
    assert!(error.to_string().contains("missing.csv"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same run recorded as MCAP replays exactly as its CSV: core's one reader, whatever the
/// file type; the rows compared are the CSV's, read independently.
#[test]
fn an_mcap_record_replays_the_same_rows_as_its_csv() {
    let dir = scratch("mcap");
    let mcap = dir.join("run.mcap");
    let csv = record_as(&dir.join("run.csv"), 0.5, 1e-3, true, Some(&mcap));
    let rows = Rows::read(&csv);
    let replay = Replay::open(&mcap, Some(&csv), None).expect("opens the MCAP");
    assert_eq!(replay.main.robot.name, "silva4");
    let mut playback = Playback::replay(replay).expect("replays");
    let end = *rows.time.last().expect("rows");
    for t in [0.0, 0.3333, 1.0, 0.5 * end, end] {
        playback.seek_replay(t).expect("seeks");
        let what = format!("MCAP at {t} s");
        assert_shows(&playback, &rows, rows.at(t), &what);
        assert_ghost(&playback, &rows, rows.at(t), &what);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
