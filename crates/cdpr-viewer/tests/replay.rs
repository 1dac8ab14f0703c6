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

/// Two rows of one time (the shadow may record two steps at one time): a step back moves
/// row by row through them, and a jump to a row lands on that row (a time would always pick
/// the last of the two).
#[test]
fn steps_and_jumps_go_by_row_through_rows_of_one_time() {
    let dir = scratch("equal");
    let path = record(&dir.join("run.csv"), 0.5, 2e-3, true);
    // Row 11 at row 10's time.
    let text = std::fs::read_to_string(&path).expect("read");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let first = 1 + lines
        .iter()
        .position(|l| !l.starts_with('#'))
        .expect("a header");
    let time_of = |line: &str| line.split(',').next().expect("t").to_string();
    let t10 = time_of(&lines[first + 10]);
    let rest = lines[first + 11]
        .split_once(',')
        .map(|(_, rest)| rest.to_string())
        .expect("fields");
    lines[first + 11] = format!("{t10},{rest}");
    std::fs::write(&path, lines.join("\n") + "\n").expect("written");
    let rows = Rows::read(&path);
    assert_eq!(rows.time[10], rows.time[11]);
    let replay = Replay::open(&path, None, None).expect("opens");
    let mut playback = Playback::replay(replay).expect("replays");
    let index = |p: &Playback| p.replay_source().expect("a replay").main.index();
    playback.seek_replay(rows.time[12]).expect("seeks");
    assert_eq!(index(&playback), 12);
    for k in [11, 10, 9] {
        playback.step_replay(-1).expect("steps");
        assert_eq!(index(&playback), k, "stepping back");
        assert_shows(&playback, &rows, k, "stepping back");
    }
    playback.step_replay(1).expect("steps");
    playback.step_replay(1).expect("steps");
    assert_eq!(index(&playback), 11, "stepping on");
    playback.show_replay_row(10).expect("jumps");
    assert_eq!(index(&playback), 10, "the jump lands on its row");
    assert_shows(&playback, &rows, 10, "the jump");
    assert_eq!(
        playback.replay_source().expect("replay").time(),
        rows.time[10]
    );
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

/// A record whose writer was killed (an MCAP cut before its summary) replays its complete
/// chunks, and the replay says so (in its panel and on the log); a finished one says nothing.
#[test]
fn a_truncated_mcap_replays_and_says_it_was_never_finished() {
    let dir = scratch("mcap-cut");
    let mcap = dir.join("run.mcap");
    // Slow enough for several chunks: the cut keeps the first.
    record_as(&dir.join("run.csv"), 0.1, 1e-3, true, Some(&mcap));
    let whole = Replay::open(&mcap, None, None).expect("opens");
    assert_eq!(whole.main.notes(), Vec::<String>::new());
    let bytes = std::fs::read(&mcap).expect("mcap");
    let cut = dir.join("cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).expect("cut");
    let replay = Replay::open(&cut, None, None).expect("opens the cut MCAP");
    assert!(replay.main.file().len() < whole.main.file().len());
    let notes = replay.main.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("never finished"), "{notes:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The closing note's figures (`cargo test --release -p cdpr-viewer --test replay -- --ignored
/// --nocapture`): a 10-minute run at 1 kHz (uvigo8, 8 cables, 600 001 rows) recorded as CSV and
/// as MCAP, then for each the time to open it in the viewer (the reader's pass and the 2000
/// rows of the trails) and the slider's latency — from a new time to its row on the scene —
/// for jumps anywhere in the run and for playing frame by frame. Bounded loosely: a slider
/// that takes a tenth of a second is broken whatever the machine.
#[test]
#[ignore = "a measurement: writes ~400 MB and takes a minute"]
fn measure_slider_latency_on_a_ten_minute_record() {
    use cdpr_core::kinematics::Pose;
    use cdpr_core::run::{RunOptions, hold, run_with};
    use cdpr_core::sim::{ControlMode, SimConfig};
    use std::ops::ControlFlow;
    use std::time::Instant;

    let dir = scratch("ten-minutes");
    let robot = cdpr_core::fixtures::uvigo8();
    let options = RunOptions::new(SimConfig::new(ModelKind::ELASTIC, ControlMode::Ideal, 1e-3));
    let trajectory = hold(Pose::from_array(robot.home), 600.0, 1e-3);
    let meta = Sidecar::new("ten minutes at 1 kHz").with_robot(&robot);
    let paths = [dir.join("ten.csv"), dir.join("ten.mcap")];
    let mut recorders: Vec<Recorder> = paths
        .iter()
        .map(|p| Recorder::create(p, &robot, &trajectory, &meta).expect("recorder"))
        .collect();
    let started = Instant::now();
    run_with(
        &robot,
        trajectory.clone(),
        &options,
        &mut |_| {},
        &mut |r| {
            for recorder in &mut recorders {
                recorder.write(r).expect("row");
            }
            ControlFlow::Continue(())
        },
    )
    .expect("runs");
    for recorder in recorders {
        recorder.finish().expect("finished");
    }
    eprintln!(
        "recorded 600 s at 1 kHz as CSV and MCAP in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for path in &paths {
        let bytes = std::fs::metadata(path).expect("written").len();
        let started = Instant::now();
        let replay = Replay::open(path, None, None).expect("opens");
        let mut playback = Playback::replay(replay).expect("replays");
        let open_s = started.elapsed().as_secs_f64();
        let rows = playback.replay_source().expect("replay").main.file().len();
        assert_eq!(rows, 600_001);
        // Jumps anywhere (a fixed pseudo-random sequence), then 10 s played at 60 frames/s.
        let mut jumps: Vec<f64> = (0..300u64)
            .map(|k| {
                let t = (k.wrapping_mul(2_654_435_761) % 600_000) as f64 * 1e-3;
                let started = Instant::now();
                playback.seek_replay(t).expect("seeks");
                assert_eq!(playback.state().time, t.min(600.0));
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let mut frames: Vec<f64> = (0..600)
            .map(|k| {
                let started = Instant::now();
                playback
                    .seek_replay(100.0 + k as f64 / 60.0)
                    .expect("seeks");
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        let pick = |v: &mut Vec<f64>, q: f64| {
            v.sort_by(f64::total_cmp);
            v[((v.len() - 1) as f64 * q).round() as usize]
        };
        let (jump_p50, jump_p99, jump_max) = (
            pick(&mut jumps, 0.5),
            pick(&mut jumps, 0.99),
            pick(&mut jumps, 1.0),
        );
        let (frame_p50, frame_max) = (pick(&mut frames, 0.5), pick(&mut frames, 1.0));
        eprintln!(
            "{}: {:.1} MB, opened in the viewer in {open_s:.2} s; slider jump p50 {jump_p50:.2} \
             ms, p99 {jump_p99:.2} ms, max {jump_max:.2} ms; playing at 60 fps p50 \
             {frame_p50:.1} µs, max {frame_max:.0} µs",
            path.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            bytes as f64 / 1e6
        );
        assert!(jump_p99 < 100.0, "slider jumps take {jump_p99} ms (p99)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
