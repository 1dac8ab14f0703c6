//! The real binary's window under Xvfb with Mesa's software Vulkan (lavapipe): a screenshot
//! that shows the robot, and the physics following the wall clock (never ahead of it) while
//! frames take hundreds of milliseconds. Without `xvfb-run` or a Vulkan driver the window tests
//! are reported as ignored, their names saying `[SKIPPED: …]` and why, unless
//! `CDPR_REQUIRE_DISPLAY=1` (`.ci/run` sets it), when they fail. A libtest-mimic harness
//! (`harness = false`, `required-features = ["viewer"]` in Cargo.toml): libtest has no way to
//! skip a test at run time.

mod common;

use common::*;
use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn main() {
    let args = Arguments::from_args();
    let missing = display_missing();
    let trials = vec![
        windowed(
            "screenshot_shows_the_robot_the_cables_and_the_legend",
            screenshot_shows_the_robot_the_cables_and_the_legend,
            &missing,
        ),
        windowed(
            "interference_turns_the_cables_the_warning_colour_at_the_given_clearance",
            interference_turns_the_cables_the_warning_colour_at_the_given_clearance,
            &missing,
        ),
        windowed(
            "physics_follows_the_clock_while_software_rendering_is_slow",
            physics_follows_the_clock_while_software_rendering_is_slow,
            &missing,
        ),
        plain(
            "without_a_display_the_viewer_says_so_instead_of_panicking",
            without_a_display_the_viewer_says_so_instead_of_panicking,
        ),
        windowed(
            "live_mode_window_shows_the_shadow_of_a_virtual_plc_and_flushes_its_record",
            live_mode_window_shows_the_shadow_of_a_virtual_plc_and_flushes_its_record,
            &missing,
        ),
        plain(
            "live_mode_errors_name_what_is_wrong_without_a_window",
            live_mode_errors_name_what_is_wrong_without_a_window,
        ),
        plain(
            "a_screenshot_format_this_build_cannot_write_is_refused_before_the_window",
            a_screenshot_format_this_build_cannot_write_is_refused_before_the_window,
        ),
        windowed(
            "a_screenshot_that_cannot_be_written_is_an_error_not_wrote",
            a_screenshot_that_cannot_be_written_is_an_error_not_wrote,
            &missing,
        ),
        windowed(
            "video_gif_of_a_simulated_run_has_one_frame_per_tenth_of_a_second",
            video_gif_of_a_simulated_run_has_one_frame_per_tenth_of_a_second,
            &missing,
        ),
        windowed(
            "video_gif_of_a_replay_with_its_compared_run",
            video_gif_of_a_replay_with_its_compared_run,
            &missing,
        ),
        plain(
            "replay_errors_name_what_is_wrong_without_a_window",
            replay_errors_name_what_is_wrong_without_a_window,
        ),
        plain(
            "video_formats_and_ffmpeg_are_checked_before_the_window",
            video_formats_and_ffmpeg_are_checked_before_the_window,
        ),
        with_ffmpeg(
            "video_mp4_through_ffmpeg",
            video_mp4_through_ffmpeg,
            &missing,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// A test that needs no window.
fn plain(name: &str, test: fn()) -> Trial {
    Trial::test(name, move || {
        test();
        Ok(())
    })
}

/// A test that opens the window: run, failed (`CDPR_REQUIRE_DISPLAY=1`) or reported as
/// ignored with the reason in its name when `missing` says what this machine lacks.
fn windowed(name: &str, test: fn(), missing: &Option<String>) -> Trial {
    let Some(reason) = missing.clone() else {
        return plain(name, test);
    };
    if std::env::var("CDPR_REQUIRE_DISPLAY").is_ok_and(|v| v == "1") {
        return Trial::test(name, move || {
            Err(format!("CDPR_REQUIRE_DISPLAY=1 but {reason}").into())
        });
    }
    // Run anyway (--include-ignored) it fails with the reason rather than pass untested.
    Trial::test(format!("{name} [SKIPPED: {reason}]"), move || {
        Err(reason.into())
    })
    .with_ignored_flag(true)
}

/// A window test that also needs ffmpeg: reported as ignored without it, whatever
/// `CDPR_REQUIRE_DISPLAY` says (CI does not install ffmpeg; the message without it is tested).
fn with_ffmpeg(name: &str, test: fn(), missing: &Option<String>) -> Trial {
    if on_path("ffmpeg") && on_path("ffprobe") {
        return windowed(name, test, missing);
    }
    let reason = "no ffmpeg/ffprobe on PATH (apt-get install ffmpeg)";
    Trial::test(format!("{name} [SKIPPED: {reason}]"), move || {
        Err(reason.into())
    })
    .with_ignored_flag(true)
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// A Vulkan loader and at least one driver manifest (lavapipe's on a CI machine).
fn has_vulkan() -> bool {
    let loader = [
        "/usr/lib/x86_64-linux-gnu/libvulkan.so.1",
        "/usr/lib/aarch64-linux-gnu/libvulkan.so.1",
        "/usr/lib64/libvulkan.so.1",
        "/usr/lib/libvulkan.so.1",
    ]
    .iter()
    .any(|p| Path::new(p).exists());
    let manifest = ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .flatten()
        .any(|e| e.path().extension().is_some_and(|x| x == "json"));
    loader && manifest
}

/// What this machine lacks to run the window, if anything.
fn display_missing() -> Option<String> {
    if on_path("xvfb-run") && on_path("xauth") && has_vulkan() {
        return None;
    }
    Some(
        "no xvfb-run/xauth or no Vulkan driver (apt-get install xvfb xauth \
         mesa-vulkan-drivers libvulkan1)"
            .into(),
    )
}

/// One window at a time: two software-rendered windows (and their physics) on a 2-core CI
/// machine would starve each other, and the real-time test measures the physics rate.
static WINDOW: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `cdpr ARGS` in a 1280×720×24 Xvfb screen (one such run at a time).
fn under_xvfb(args: &[&str], scratch_dir: &Path) -> Output {
    let _one_window = WINDOW
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let runtime = scratch_dir.join("xdg");
    let _ = std::fs::create_dir_all(&runtime);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700));
    }
    Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x720x24"])
        .arg(env!("CARGO_BIN_EXE_cdpr"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .expect("xvfb-run starts")
}

struct Picture {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Picture {
    fn read(path: &Path) -> Picture {
        let file = std::fs::File::open(path).expect("the PNG exists");
        let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buffer = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buffer).expect("a frame");
        let channels = info.color_type.samples();
        let rgb = buffer[..info.buffer_size()]
            .chunks(channels)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        Picture {
            width: info.width,
            height: info.height,
            rgb,
        }
    }

    fn pixel(&self, x: u32, y: u32) -> [f32; 3] {
        let i = 3 * (y * self.width + x) as usize;
        [
            self.rgb[i] as f32 / 255.0,
            self.rgb[i + 1] as f32 / 255.0,
            self.rgb[i + 2] as f32 / 255.0,
        ]
    }

    /// Pixels in [x0, x1) × [y0, y1) for which `test` holds.
    fn count(
        &self,
        (x0, x1): (u32, u32),
        (y0, y1): (u32, u32),
        test: impl Fn([f32; 3]) -> bool,
    ) -> usize {
        let mut n = 0;
        for y in y0..y1.min(self.height) {
            for x in x0..x1.min(self.width) {
                if test(self.pixel(x, y)) {
                    n += 1;
                }
            }
        }
        n
    }
}

fn near(c: [f32; 3], target: [f32; 3], tolerance: f32) -> bool {
    (0..3).all(|k| (c[k] - target[k]).abs() <= tolerance)
}

/// Any colour of the tension scale (sampled finely), as drawn: cables are unlit and the camera
/// does no tone mapping, so their pixels are the legend's colours.
fn on_tension_scale(c: [f32; 3]) -> bool {
    (0..=100).any(|k| near(c, cdpr_viewer::colors::scale_color(k as f64 / 100.0), 0.06))
}

/// The platform's purple, lit: red and blue well above green, blue the largest.
fn platform_like(c: [f32; 3]) -> bool {
    let [r, g, b] = c;
    b > 0.15 && r > g + 0.08 && b > g + 0.15 && b >= r * 0.9 && r >= b * 0.45
}

fn screenshot_shows_the_robot_the_cables_and_the_legend() {
    let dir = scratch("viewer-screenshot");
    let png_path: PathBuf = dir.join("uvigo8.png");
    let png_s = png_path.to_string_lossy().into_owned();
    let out = under_xvfb(
        &[
            "view",
            "--robot",
            "uvigo8",
            "--seek",
            "12",
            "--screenshot",
            &png_s,
            "--frames",
            "3",
            "--stats",
        ],
        &dir,
    );
    // xvfb-run can exit 0 after the app failed: the file is the evidence.
    assert!(
        out.status.success() && png_path.is_file(),
        "cdpr view --screenshot failed ({:?}):\n{}",
        out.status,
        stderr(&out)
    );
    let picture = Picture::read(&png_path);
    assert_eq!((picture.width, picture.height), (1280, 720));

    // Not blank: many colours, light and dark.
    let mut colours = std::collections::HashSet::new();
    for p in picture.rgb.chunks(3) {
        colours.insert([p[0] >> 3, p[1] >> 3, p[2] >> 3]);
    }
    assert!(
        colours.len() > 300,
        "only {} distinct colours",
        colours.len()
    );

    // The panel (left), the 3D view (right of it), the legend (bottom right).
    let view = (330, 1280);
    let platform = picture.count((560, 1060), (150, 620), platform_like);
    assert!(
        platform > 150,
        "platform purple: {platform} pixels in the middle of the view"
    );
    let cables = picture.count(view, (0, 520), on_tension_scale);
    assert!(cables > 300, "tension-coloured cable pixels: {cables}");
    let legend = (1000, 1280);
    let low = picture.count(legend, (560, 720), |c| near(c, [0.15, 0.35, 0.95], 0.05));
    let high = picture.count(legend, (560, 720), |c| near(c, [0.90, 0.12, 0.10], 0.05));
    assert!(
        low > 20 && high > 20,
        "legend ends: blue {low}, red {high} pixels"
    );
    // The panel is egui's dark grey with light text.
    let panel_text = picture.count((0, 300), (0, 720), |c| c.iter().all(|v| *v > 0.7));
    assert!(panel_text > 500, "panel text pixels: {panel_text}");
}

/// The interference warning colour (core's `INTERFERENCE_RGB`, magenta), lit: red above blue
/// (the platform's purple has blue above red), both far above green.
fn warning_like(c: [f32; 3]) -> bool {
    let [r, g, b] = c;
    r > 0.3 && r >= b && b > 0.6 * r && g < 0.25 * r
}

fn interference_turns_the_cables_the_warning_colour_at_the_given_clearance() {
    // silva4-obstacle at the pick point: at the default 10 mm nothing interferes; at 0.4 m the
    // four cables come closer than that to each other (they meet at the platform), so all are
    // drawn in the warning colour. The same frame otherwise.
    let dir = scratch("viewer-interference");
    let shot = |clearance: &str| {
        let png = dir.join(format!("silva4-obstacle-{clearance}.png"));
        let png_s = png.to_string_lossy().into_owned();
        let out = under_xvfb(
            &[
                "view",
                "--robot",
                "silva4-obstacle",
                "--clearance",
                clearance,
                "--screenshot",
                &png_s,
                "--frames",
                "3",
            ],
            &dir,
        );
        assert!(
            out.status.success() && png.is_file(),
            "cdpr view --clearance {clearance} failed ({:?}):\n{}",
            out.status,
            stderr(&out)
        );
        Picture::read(&png)
    };
    // The 3D view above the legend (whose "actual TCP path" swatch is pink) and the line of
    // text naming the pairs.
    let view = (330, 1280);
    let clear = shot("0.01").count(view, (0, 550), warning_like);
    let close = shot("0.4").count(view, (0, 550), warning_like);
    assert!(clear < 20, "warning-coloured pixels at 10 mm: {clear}");
    assert!(close > 300, "warning-coloured pixels at 0.4 m: {close}");
}

fn physics_follows_the_clock_while_software_rendering_is_slow() {
    let dir = scratch("viewer-realtime");
    // seed 000 on uvigo8 with the chain model (the heaviest step) for 4 s of wall time.
    let out = under_xvfb(
        &["view", "--robot", "uvigo8", "--duration", "4", "--stats"],
        &dir,
    );
    let err = stderr(&out);
    assert!(out.status.success(), "cdpr view failed:\n{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("cdpr view:"))
        .unwrap_or_else(|| panic!("no summary line in:\n{err}"));
    let figure = |name: &str| -> f64 {
        let rest = &line[line
            .find(name)
            .unwrap_or_else(|| panic!("no `{name}` in {line}"))
            + name.len()..];
        rest.trim_start()
            .split([' ', ','])
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no number after `{name}` in {line}"))
    };
    let steps = figure("physics");
    let simulated = figure("steps =");
    let wall = figure("simulated in");
    let dropped = figure("dropped");
    let frame_max_ms = figure("max");
    // The measurement (real-time factor, frame times under Xvfb/lavapipe) is printed, not
    // asserted: how fast this machine renders and steps is no property of the program (the
    // physics step's cost is measured in `benches/sim.rs`).
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("\nmeasured under Xvfb/lavapipe: {line}\n").as_bytes(),
    );
    // What holds on any machine: the physics steps, and never runs ahead of the clock — the
    // simulated time and the time dropped because the physics could not keep up together
    // cover at most the wall time (give or take one frame, the edges of the measurement, and
    // the 3-decimal print).
    assert!(steps > 0.0 && simulated > 0.0, "no physics step: {line}");
    assert!(
        simulated + dropped <= wall + frame_max_ms * 1e-3 + 2e-3,
        "simulated {simulated} s + dropped {dropped} s > wall {wall} s: {line}"
    );
}

fn without_a_display_the_viewer_says_so_instead_of_panicking() {
    let o = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(["view", "--robot", "silva4"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("runs");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no display"), "{err}");
    assert!(err.contains("xvfb-run"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `--screenshot shot.jpg` once logged an error, printed "wrote shot.jpg", exited 0 and left
/// 0 bytes: the extension is checked with the arguments, before any window opens.
fn a_screenshot_format_this_build_cannot_write_is_refused_before_the_window() {
    let dir = scratch("viewer-screenshot-format");
    for name in ["shot.jpg", "shot.JPEG", "shot.webp", "shot"] {
        let path = dir.join(name);
        let o = Command::new(env!("CARGO_BIN_EXE_cdpr"))
            .args(["view", "--robot", "uvigo8", "--screenshot"])
            .arg(&path)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .expect("runs");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(name) && err.contains("a screenshot is written as .png"),
            "{name}: {err}"
        );
        assert!(!err.contains("no display"), "{name}: {err}");
        assert!(!stdout(&o).contains("wrote"), "{name}: {}", stdout(&o));
        assert!(!path.exists(), "{name} was created");
    }
    // The upper-case spelling of a writable format is fine (then the display is missing).
    let o = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(["view", "--robot", "uvigo8", "--screenshot"])
        .arg(dir.join("shot.PNG"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("runs");
    assert!(stderr(&o).contains("no display"), "{}", stderr(&o));
}

/// A picture that is not written (here: into a directory that does not exist) fails the run
/// and is never announced as written.
fn a_screenshot_that_cannot_be_written_is_an_error_not_wrote() {
    let dir = scratch("viewer-screenshot-unwritable");
    let path = dir.join("no-such-dir").join("shot.png");
    let out = under_xvfb(
        &[
            "view",
            "--robot",
            "silva4",
            "--screenshot",
            &path.to_string_lossy(),
            "--frames",
            "2",
        ],
        &dir,
    );
    assert!(!stdout(&out).contains("wrote"), "{}", stdout(&out));
    assert!(!path.exists());
    assert!(
        stderr(&out).contains("the screenshot was not written to"),
        "{}",
        stderr(&out)
    );
}

/// `cdpr plc` in the background on a free loopback port; killed on drop.
struct VirtualPlc {
    process: Proc,
    address: String,
}

impl VirtualPlc {
    fn start() -> VirtualPlc {
        let (process, address) = plc(&common::words(
            "--robot uvigo8 --trajectory seed000 --listen 127.0.0.1:0",
        ));
        VirtualPlc { process, address }
    }
}

impl Drop for VirtualPlc {
    fn drop(&mut self) {
        let _ = self.process.child.kill();
        let _ = self.process.child.wait();
    }
}

fn live_mode_window_shows_the_shadow_of_a_virtual_plc_and_flushes_its_record() {
    let plc = VirtualPlc::start();
    let dir = scratch("viewer-live");
    let png_path = dir.join("live.png");
    let record = dir.join("live.csv");
    let (png_s, record_s) = (
        png_path.to_string_lossy().into_owned(),
        record.to_string_lossy().into_owned(),
    );
    let out = under_xvfb(
        &[
            "view",
            "--plc",
            &plc.address,
            "--robot",
            "uvigo8",
            "--write",
            "--record",
            &record_s,
            "--screenshot",
            &png_s,
            "--frames",
            "20",
        ],
        &dir,
    );
    let err = stderr(&out);
    assert!(
        out.status.success() && png_path.is_file(),
        "cdpr view --plc failed ({:?}):\n{err}",
        out.status
    );
    // The address is NetId-less: derived from 127.0.0.1 as 127.0.0.1.1.1.
    assert!(err.contains("live shadow: uvigo8"), "{err}");
    assert!(err.contains("127.0.0.1.1.1:851"), "{err}");
    let text = stdout(&out);
    assert!(
        text.contains("cycles (polls)"),
        "no shadow statistics: {text}"
    );
    assert!(text.contains(&format!("wrote {record_s}")), "{text}");
    // The record holds the shadow's steps (how many depends on how long this machine took
    // for the 20 frames), each a full row.
    let rows = std::fs::read_to_string(&record).expect("record");
    let mut lines = rows.lines();
    let header = lines.next().expect("header");
    assert!(header.starts_with("t,x_cmd,"), "{header}");
    let count = lines
        .inspect(|l| assert_eq!(l.split(',').count(), header.split(',').count(), "{l}"))
        .count();
    assert!(count > 0, "no record rows");

    let picture = Picture::read(&png_path);
    assert_eq!((picture.width, picture.height), (1280, 720));
    let platform = picture.count((330, 1280), (0, 720), platform_like);
    assert!(platform > 150, "platform purple: {platform} pixels");
    let cables = picture.count((330, 1280), (0, 520), on_tension_scale);
    assert!(cables > 300, "tension-coloured cable pixels: {cables}");
    // The connection indicator: egui's filled green circle in the panel.
    let green = picture.count((0, 330), (0, 200), |c| {
        near(c, [60.0 / 255.0, 200.0 / 255.0, 90.0 / 255.0], 0.04)
    });
    assert!(green > 30, "connection indicator: {green} green pixels");
}

fn live_mode_errors_name_what_is_wrong_without_a_window() {
    // Options that do not fit live mode are refused before any connection.
    let o = cdpr(&words("view --plc 127.0.0.1 --trajectory seed000"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--trajectory does not apply to live mode"),
        "{err}"
    );
    // Link options without --plc.
    let o = cdpr(&["view", "--write"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--plc"), "{}", stderr(&o));
    // Nobody listening: the address is named, told apart from a missing route (the same
    // connect as `cdpr shadow`: tests/cli/shadow_unreachable_plc.rs).
    let o = cdpr(&words("view --plc 127.0.0.1:1 --timeout 200ms"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no PLC listening on 127.0.0.1:1"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // A host name gives no NetId to derive.
    let o = cdpr(&words("view --plc plc.invalid"));
    let err = stderr(&o);
    assert!(err.contains("--ams-net-id is needed"), "{err}");
}

/// A GIF decoded back: its size, and each frame composited (every frame of a clip is a
/// rectangle drawn over the one before) as RGB.
struct Clip {
    width: u32,
    height: u32,
    /// Each frame's delay, 1/100 s.
    delays: Vec<u16>,
    frames: Vec<Vec<u8>>,
}

impl Clip {
    fn read(path: &Path) -> Clip {
        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::RGBA);
        let file = std::fs::File::open(path).expect("the GIF exists");
        let mut decoder = options.read_info(file).expect("a GIF");
        let (width, height) = (decoder.width() as u32, decoder.height() as u32);
        let mut canvas = vec![0u8; (width * height * 3) as usize];
        let (mut delays, mut frames) = (Vec::new(), Vec::new());
        while let Some(f) = decoder.read_next_frame().expect("a frame") {
            for y in 0..f.height as usize {
                for x in 0..f.width as usize {
                    let src = (y * f.width as usize + x) * 4;
                    let dst = ((f.top as usize + y) * width as usize + f.left as usize + x) * 3;
                    canvas[dst..dst + 3].copy_from_slice(&f.buffer[src..src + 3]);
                }
            }
            delays.push(f.delay);
            frames.push(canvas.clone());
        }
        Clip {
            width,
            height,
            delays,
            frames,
        }
    }

    /// Pixels that differ between frames `a` and `b`.
    fn changed(&self, a: usize, b: usize) -> usize {
        self.frames[a]
            .chunks(3)
            .zip(self.frames[b].chunks(3))
            .filter(|(p, q)| p != q)
            .count()
    }

    /// The clip as the tests want it: `frames` frames of `width × height` shown 1/10 s each,
    /// the robot moving from each frame to the next.
    fn assert_moves(&self, (width, height): (u32, u32), frames: usize, what: &str) {
        assert_eq!((self.width, self.height), (width, height), "{what}: size");
        assert_eq!(self.frames.len(), frames, "{what}: frames");
        assert!(
            self.delays.iter().all(|&d| d == 10),
            "{what}: {:?}",
            self.delays
        );
        for k in 1..frames {
            let changed = self.changed(k - 1, k);
            assert!(
                changed > 20,
                "{what}: frame {k} like the one before ({changed} pixels)"
            );
        }
        let whole = self.changed(0, frames - 1);
        assert!(
            whole > 200,
            "{what}: first and last frames differ by {whole} pixels"
        );
        // A picture, not a blank: the background and something else.
        let colours: std::collections::HashSet<&[u8]> = self.frames[0].chunks(3).collect();
        assert!(colours.len() > 30, "{what}: {} colours", colours.len());
    }
}

/// `cdpr view --video`: a second of silva4's pick-and-place at 10 fps, rendered frame by frame
/// on the simulation's clock, is a GIF of 10 frames at the window's size, 1/10 s each, the
/// platform moving between every two.
fn video_gif_of_a_simulated_run_has_one_frame_per_tenth_of_a_second() {
    let dir = scratch("viewer-video");
    let gif_path = dir.join("clip.gif");
    let out = under_xvfb(
        &[
            "view",
            "--robot",
            "silva4",
            "--speed",
            "0.5",
            "--video",
            &gif_path.to_string_lossy(),
            "--from",
            "1",
            "--to",
            "2",
            "--fps",
            "10",
            "--size",
            "640x360",
        ],
        &dir,
    );
    assert!(
        out.status.success() && gif_path.is_file(),
        "cdpr view --video failed ({:?}):\n{}",
        out.status,
        stderr(&out)
    );
    assert!(stdout(&out).contains("wrote"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("clip frame 10/10"),
        "{}",
        stderr(&out)
    );
    Clip::read(&gif_path).assert_moves((640, 360), 10, "simulated run");
}

/// A replay clip: the record of `cdpr simulate --out` and a second run as the ghost, the 3D
/// view alone (--no-panel), each frame shrunk twice.
fn video_gif_of_a_replay_with_its_compared_run() {
    let dir = scratch("viewer-video-replay");
    let run = |name: &str, speed: &str| {
        let path = dir.join(name);
        let o = cdpr(&[
            "simulate",
            "--robot",
            "silva4",
            "--trajectory",
            "pickplace",
            "--model",
            "elastic",
            "--speed",
            speed,
            "--out",
            &path.to_string_lossy(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        path
    };
    let (main, other) = (run("main.csv", "0.5"), run("other.csv", "0.3"));
    let gif_path = dir.join("replay.gif");
    let out = under_xvfb(
        &[
            "view",
            "--replay",
            &main.to_string_lossy(),
            "--compare",
            &other.to_string_lossy(),
            "--video",
            &gif_path.to_string_lossy(),
            "--from",
            "0.5",
            "--to",
            "1.2",
            "--fps",
            "10",
            "--size",
            "480x320",
            "--shrink",
            "2",
            "--no-panel",
        ],
        &dir,
    );
    assert!(
        out.status.success() && gif_path.is_file(),
        "cdpr view --replay --video failed ({:?}):\n{}",
        out.status,
        stderr(&out)
    );
    Clip::read(&gif_path).assert_moves((240, 160), 7, "replay, shrunk twice");
}

/// Asked for what it cannot write, `--video` says so before any window: an unknown format
/// names the two it writes; MP4 without ffmpeg names ffmpeg and how to install it.
fn video_formats_and_ffmpeg_are_checked_before_the_window() {
    let dir = scratch("viewer-video-formats");
    let o = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(["view", "--robot", "silva4", "--video"])
        .arg(dir.join("clip.avi"))
        .env_remove("DISPLAY")
        .output()
        .expect("runs");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("clip.avi") && err.contains(".gif") && err.contains(".mp4"),
        "{err}"
    );
    // No ffmpeg: a PATH that holds nothing.
    let empty = dir.join("empty-path");
    std::fs::create_dir_all(&empty).expect("a folder");
    let o = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(["view", "--robot", "silva4", "--video"])
        .arg(dir.join("clip.mp4"))
        .env("PATH", &empty)
        .env_remove("DISPLAY")
        .output()
        .expect("runs");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("needs ffmpeg") && err.contains("apt-get install ffmpeg"),
        "{err}"
    );
    assert!(
        !err.contains("no display"),
        "checked before the display: {err}"
    );
    assert!(!dir.join("clip.mp4").exists());
    // --from and --to the wrong way round.
    let o = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args([
            "view", "--robot", "silva4", "--from", "3", "--to", "2", "--video",
        ])
        .arg(dir.join("clip.gif"))
        .env_remove("DISPLAY")
        .output()
        .expect("runs");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("must end after it starts"), "{err}");
}

/// With ffmpeg on PATH: the same second as an MP4, which ffprobe reads as 10 frames.
fn video_mp4_through_ffmpeg() {
    let dir = scratch("viewer-video-mp4");
    let path = dir.join("clip.mp4");
    let out = under_xvfb(
        &[
            "view",
            "--robot",
            "silva4",
            "--video",
            &path.to_string_lossy(),
            "--from",
            "1",
            "--to",
            "2",
            "--fps",
            "10",
            "--size",
            "640x360",
        ],
        &dir,
    );
    assert!(out.status.success() && path.is_file(), "{}", stderr(&out));
    let probe = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args([
            "-show_entries",
            "stream=nb_read_frames,width,height",
            "-of",
            "csv=p=0",
        ])
        .arg(&path)
        .output()
        .expect("ffprobe runs");
    let text = String::from_utf8_lossy(&probe.stdout).trim().to_string();
    assert_eq!(text, "640,360,10", "ffprobe: {text}");
}

/// What `--replay` cannot do is said before any window opens, naming the culprit: a record that
/// is not there, a run option (the record holds the run), --compare without --replay.
fn replay_errors_name_what_is_wrong_without_a_window() {
    let dir = scratch("viewer-replay-errors");
    let view = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cdpr"))
            .arg("view")
            .args(args)
            .current_dir(&dir)
            .env_remove("DISPLAY")
            .output()
            .expect("runs")
    };
    let o = view(&["--replay", "no-such-run.csv"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no-such-run.csv") && !err.contains("no display"),
        "{err}"
    );
    let o = view(&["--replay", "run.txt"]);
    assert!(
        stderr(&o).contains("run.txt") && stderr(&o).contains(".mcap"),
        "{}",
        stderr(&o)
    );
    let o = view(&["--replay", "run.csv", "--trajectory", "seed000"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--trajectory does not apply to a replay"),
        "{err}"
    );
    let o = view(&["--compare", "other.csv"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--replay"), "{err}");
}
