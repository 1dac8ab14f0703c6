//! The egui side panel: what runs (robot, trajectory, speed, model, winch mode), play controls,
//! live numbers and two small plots (cable tensions, tracking error).

use super::colors::{self, to_color32};
use super::live::LinkState;
use super::playback::Playback;
use super::replay_panel as replay;
use super::sampling::{PLOT_SAMPLES, SAMPLE_EVERY};
use super::scenario::{self, Scenario};
use super::scene::{DisplayOptions, TensionScale};
use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};
use cdpr_core::choice::Choice;
use cdpr_core::run::CommandSource;
use cdpr_core::sim::{ControlMode, MODELS, ModelKind};
use cdpr_core::text::short;
use cdpr_core::trajectory::BUILTINS;

/// What the panel keeps between frames.
#[derive(Resource, Debug, Clone)]
pub struct PanelState {
    /// The panel's rectangle in egui points (the camera ignores the mouse over it).
    pub rect: egui::Rect,
    pub robots: Vec<String>,
    /// The CSV path being typed.
    pub csv_path: String,
    /// The speed slider's value while it is dragged, m/s.
    pub speed_edit: Option<f64>,
    /// Frame time, smoothed, s.
    pub frame_time: f64,
    pub steps_last_frame: u64,
    /// Simulated time per frame when it is fixed (screenshot mode), s; None: the wall clock
    /// paces the physics and the panel shows the real-time factor.
    pub fixed_frame_s: Option<f64>,
    /// Not drawn at all (`--no-panel`: a clip of the 3D view alone).
    pub hidden: bool,
}

impl PanelState {
    pub fn new(robots: Vec<String>) -> PanelState {
        PanelState {
            rect: egui::Rect::NOTHING,
            robots,
            csv_path: String::new(),
            speed_edit: None,
            frame_time: 0.0,
            steps_last_frame: 0,
            fixed_frame_s: None,
            hidden: false,
        }
    }
}

/// The models the picker offers: core's table, less those that need a parameter file the
/// panel cannot pick (the surrogate's): (model, name, help).
pub fn model_choices() -> Vec<(ModelKind, &'static str, &'static str)> {
    MODELS
        .iter()
        .filter(|m| !m.needs_surrogate)
        .filter_map(|m| ModelKind::from_name(m.name).ok())
        .map(|k| (k, k.name(), k.help()))
        .collect()
}

/// The winch modes the picker offers: core's, those that drive motors only for a robot
/// whose file describes its drives.
fn winches(drives: bool) -> Vec<(ControlMode, &'static str, &'static str)> {
    ControlMode::all()
        .into_iter()
        .filter(|c| drives || !c.needs_drives())
        .map(|c| (c, c.name(), c.help()))
        .collect()
}

/// "1/60 s" for a frame of 16.67 ms (a whole number of frames per second), else "12.5 ms".
pub fn frame_period_text(seconds: f64) -> String {
    let rate = 1.0 / seconds;
    if (rate - rate.round()).abs() < 1e-3 {
        format!("1/{} s", rate.round())
    } else {
        format!("{:.1} ms", seconds * 1e3)
    }
}

/// Colours told apart in the tension plot, one per cable (cycled beyond eight).
pub(crate) const CABLE_COLORS: [egui::Color32; 8] = [
    egui::Color32::from_rgb(86, 180, 233),
    egui::Color32::from_rgb(230, 159, 0),
    egui::Color32::from_rgb(0, 158, 115),
    egui::Color32::from_rgb(240, 228, 66),
    egui::Color32::from_rgb(0, 114, 178),
    egui::Color32::from_rgb(213, 94, 0),
    egui::Color32::from_rgb(204, 121, 167),
    egui::Color32::from_rgb(200, 200, 200),
];

pub fn panel(
    mut contexts: EguiContexts,
    mut playback: ResMut<Playback>,
    mut state: ResMut<PanelState>,
    mut display: ResMut<DisplayOptions>,
    scale: Res<TensionScale>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let playback = &mut *playback;
    let state = &mut *state;
    if state.hidden {
        state.rect = egui::Rect::NOTHING;
        return Ok(());
    }
    // egui 0.36 shows panels inside a Ui; bevy_egui hands out only the context, so the root Ui
    // covering the window is built here (as bevy_egui's own examples do).
    let mut root = egui::Ui::new(
        ctx.clone(),
        egui::Id::new("cdpr_root"),
        egui::UiBuilder::new()
            .layer_id(egui::LayerId::background())
            .max_rect(ctx.viewport_rect()),
    );
    let response = egui::Panel::left("cdpr_panel")
        .default_size(310.0)
        .resizable(true)
        .show(&mut root, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                ui.heading("cdpr — CDPR shadow");
                if playback.is_live() {
                    live_section(ui, playback);
                } else if playback.is_replay() {
                    replay::replay_section(ui, playback);
                } else {
                    scenario_section(ui, playback, state);
                }
                ui.separator();
                display_section(ui, &mut display);
                ui.separator();
                numbers(ui, playback, state, scale.0);
                ui.separator();
                if playback.is_replay() {
                    replay::replay_plots(ui, playback, scale.0);
                } else {
                    plots(ui, playback, scale.0);
                }
                if let Some(error) = &playback.error {
                    ui.separator();
                    ui.colored_label(egui::Color32::from_rgb(255, 110, 110), error);
                }
            });
        });
    state.rect = response.response.rect;
    Ok(())
}

/// Live mode: the connection indicator, where and how the shadow runs, its cycle figures, and
/// pause (which freezes the view only: the shadow keeps exchanging with the controller).
fn live_section(ui: &mut egui::Ui, playback: &mut Playback) {
    let Some(feed) = playback.live_feed() else {
        return;
    };
    let latest = &feed.latest;
    let (color, text) = match &latest.link {
        LinkState::Connected => (
            egui::Color32::from_rgb(60, 200, 90),
            "connected".to_string(),
        ),
        LinkState::Offline { since } => (
            egui::Color32::from_rgb(240, 170, 40),
            format!(
                "offline {:.1} s, reconnecting",
                since.elapsed().as_secs_f64()
            ),
        ),
        LinkState::Stalled { since, stopped } => (
            egui::Color32::from_rgb(240, 170, 40),
            format!(
                "no new samples for {:.1} s{}, holding",
                since.elapsed().as_secs_f64(),
                if *stopped { " (PLC in STOP)" } else { "" }
            ),
        ),
        LinkState::Stopped { error: None } => {
            (egui::Color32::from_gray(140), "stopped".to_string())
        }
        LinkState::Stopped { error: Some(_) } => (
            egui::Color32::from_rgb(230, 70, 60),
            "stopped on an error".to_string(),
        ),
    };
    ui.horizontal(|ui| {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
        ui.painter().circle_filled(rect.center(), 6.0, color);
        ui.strong(format!("live: {text}"));
    });
    if let LinkState::Stopped { error: Some(e) } = &latest.link {
        ui.colored_label(egui::Color32::from_rgb(255, 110, 110), e);
    }
    let ms = |v: Option<f64>| v.map_or("–".into(), |v| format!("{:.3}", v * 1e3));
    let summary = &latest.summary;
    egui::Grid::new("live_grid").striped(true).show(ui, |ui| {
        row(ui, "controller", feed.info.address.clone());
        for (name, value) in &feed.info.lines {
            row(ui, name, value.clone());
        }
        row(ui, "PLC cycle", latest.plc_cycle.to_string());
        row(
            ui,
            "motion enable",
            if latest.motion_enable { "on" } else { "off" }.to_string(),
        );
        row(
            ui,
            "exchange p50/p99",
            format!(
                "{} / {} ms",
                ms(summary.cycle_p50_s),
                ms(summary.cycle_p99_s)
            ),
        );
        row(
            ui,
            "reaction p50",
            summary
                .reaction_cycles
                .map_or("–".into(), |c| format!("{c} PLC cycles")),
        );
        row(
            ui,
            "samples: late / missed",
            format!("{} / {}", summary.late_samples, summary.missed_plc_cycles),
        );
        row(
            ui,
            "command latency",
            format!("{:.1} ms", summary.command_latency_s * 1e3),
        );
        row(
            ui,
            "rejected / gaps",
            format!("{} / {}", latest.rejected, summary.gaps),
        );
        // The controller gives its drives' actual torques: how well the shadow predicts them.
        if let Some(worst) = summary
            .torque_prediction
            .iter()
            .max_by(|a, b| a.rms.total_cmp(&b.rms))
        {
            row(
                ui,
                "torque error RMS (worst)",
                format!(
                    "{:.1} % of rated, {} (lag {:.0} ms)",
                    worst.rms_percent.unwrap_or(f64::NAN),
                    worst.name,
                    worst.best_lag_s * 1e3
                ),
            );
        }
    });
    let label = if playback.paused {
        "▶ follow"
    } else {
        "⏸ freeze view"
    };
    ui.horizontal(|ui| {
        if ui
            .button(label)
            .on_hover_text("the shadow keeps running; only the view stops")
            .clicked()
        {
            playback.paused = !playback.paused;
        }
        if ui.button("clear trails").clicked() {
            let _ = playback.reset();
        }
    });
}

fn scenario_section(ui: &mut egui::Ui, playback: &mut Playback, state: &mut PanelState) {
    let current = playback.scenario.clone();
    demo_checkbox(ui, playback, state);
    let mut wanted: Option<Scenario> = None;
    egui::Grid::new("scenario_grid")
        .num_columns(2)
        .show(ui, |ui| {
            // The last change of a frame wins, in the rows' order.
            let played = played_rows(ui, &current, state, playback);
            let drives = playback.robot().has_drives();
            wanted = physics_rows(ui, &current, drives).or(played);
        });
    if let Some(scenario) = run_buttons(ui, playback, &current) {
        wanted = Some(scenario);
    }
    if let Some(scenario) = wanted {
        playback.stop_demo();
        if let Err(e) = playback.load(scenario) {
            playback.error = Some(e.to_string());
        }
    }
}

/// The demo's checkbox: on, the robots' playlist; off, the current robot stays.
fn demo_checkbox(ui: &mut egui::Ui, playback: &mut Playback, state: &PanelState) {
    let mut demo = playback.demo.is_some();
    if ui
        .checkbox(&mut demo, "demo: cycle through the robots")
        .changed()
    {
        if demo {
            match Playback::demo(scenario::demo_playlist(&state.robots)) {
                Ok(fresh) => *playback = fresh,
                Err(e) => playback.error = Some(e.to_string()),
            }
        } else {
            playback.stop_demo();
        }
    }
}

/// What is played: robot, trajectory (built-in or CSV), speed, and the time scale; the
/// scenario a change asks for.
fn played_rows(
    ui: &mut egui::Ui,
    current: &Scenario,
    state: &mut PanelState,
    playback: &mut Playback,
) -> Option<Scenario> {
    let mut wanted = None;
    ui.label("robot");
    let mut robot = current.robot().to_string();
    egui::ComboBox::from_id_salt("robot")
        .width(180.0)
        .selected_text(&robot)
        .show_ui(ui, |ui| {
            for name in &state.robots {
                ui.selectable_value(&mut robot, name.clone(), name);
            }
        });
    if robot != current.robot() {
        wanted = Some(current.with_robot(&robot));
    }
    ui.end_row();

    ui.label("trajectory");
    let mut trajectory = current.trajectory().to_string();
    egui::ComboBox::from_id_salt("trajectory")
        .width(180.0)
        .selected_text(&trajectory)
        .show_ui(ui, |ui| {
            for (name, what) in BUILTINS {
                ui.selectable_value(&mut trajectory, name.to_string(), *name)
                    .on_hover_text(*what);
            }
        });
    if trajectory != current.trajectory() {
        wanted = Some(current.with(|r| r.trajectory = Some(trajectory)));
    }
    ui.end_row();

    ui.label("CSV");
    ui.horizontal(|ui| {
        ui.add(
            egui::TextEdit::singleline(&mut state.csv_path)
                .hint_text("path/to/trajectory.csv")
                .desired_width(130.0),
        );
        if ui.button("load").clicked() && !state.csv_path.trim().is_empty() {
            let csv = state.csv_path.trim().to_string();
            wanted = Some(current.with(|r| r.trajectory = Some(csv)));
        }
    });
    ui.end_row();

    ui.label("speed [m/s]");
    let speed = state.speed_edit.get_or_insert(current.request().speed);
    let r = ui.add(egui::Slider::new(speed, 0.02..=1.0).logarithmic(true));
    // Rebuilding the trajectory restarts the run: only once the slider is let go.
    if !r.dragged() {
        let speed = *speed;
        state.speed_edit = None;
        if speed != current.request().speed {
            wanted = Some(current.with(|r| r.speed = speed));
        }
    }
    ui.end_row();

    ui.label("time scale");
    ui.add(
        egui::Slider::new(&mut playback.time_scale, 0.05..=4.0)
            .logarithmic(true)
            .suffix("×"),
    );
    ui.end_row();

    wanted
}

/// The physics: model, winch mode, compensation; the scenario a change asks for.
fn physics_rows(ui: &mut egui::Ui, current: &Scenario, drives: bool) -> Option<Scenario> {
    let mut wanted = None;
    ui.label("model");
    let asked = current.request();
    let mut model = asked.model;
    combo(ui, "model", &mut model, &model_choices());
    ui.end_row();
    ui.label("winches");
    let mut control = asked.control_mode(CommandSource::Trajectory);
    combo(ui, "winches", &mut control, &winches(drives));
    ui.end_row();
    let mut compensate = asked.compensate;
    ui.label("");
    ui.checkbox(&mut compensate, "compensate pre-stretch f*/k");
    ui.end_row();
    let before = (
        asked.model,
        asked.control_mode(CommandSource::Trajectory),
        asked.compensate,
    );
    if (model, control, compensate) != before {
        wanted = Some(current.with(|r| {
            r.model = model;
            r.control = Some(control);
            r.compensate = compensate;
        }));
    }
    wanted
}

/// Play/pause, one step, reset (the scenario it asks for) and loop.
fn run_buttons(ui: &mut egui::Ui, playback: &mut Playback, current: &Scenario) -> Option<Scenario> {
    let mut wanted = None;
    ui.horizontal(|ui| {
        let label = if playback.paused {
            "▶ play"
        } else {
            "⏸ pause"
        };
        if ui.button(label).clicked() {
            playback.paused = !playback.paused;
        }
        if ui.button("step").clicked() {
            playback.paused = true;
            if let Err(e) = playback.step_once() {
                playback.error = Some(e.to_string());
            }
        }
        if ui.button("⟲ reset").clicked() {
            playback.stop_demo();
            wanted = Some(current.clone());
        }
        ui.checkbox(&mut playback.looping, "loop");
    });
    wanted
}

/// A picker over `items` (value, name, what it means: shown on hover).
fn combo<T: Copy + PartialEq>(
    ui: &mut egui::Ui,
    id: &str,
    value: &mut T,
    items: &[(T, &'static str, &'static str)],
) {
    let selected = items
        .iter()
        .find(|(v, _, _)| v == value)
        .map(|(_, name, _)| *name)
        .unwrap_or("?");
    egui::ComboBox::from_id_salt(id)
        .width(180.0)
        .selected_text(selected)
        .show_ui(ui, |ui| {
            for (v, name, help) in items {
                ui.selectable_value(value, *v, *name).on_hover_text(*help);
            }
        });
}

fn display_section(ui: &mut egui::Ui, display: &mut DisplayOptions) {
    ui.horizontal(|ui| {
        ui.checkbox(&mut display.show_trails, "trails");
        ui.checkbox(&mut display.show_ghost, "ghost");
        ui.checkbox(&mut display.show_workspace, "workspace");
    });
}

fn numbers(ui: &mut egui::Ui, playback: &Playback, state: &PanelState, scale_max: f64) {
    let s = playback.state();
    let p = s.pose.position;
    let [_, _, _, roll, pitch, yaw] = s.pose.to_array();
    let c = playback.commanded().position;
    let error_mm = (c - p).norm() * 1e3;
    let (lo, hi) = s
        .tensions
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &f| {
            (lo.min(f), hi.max(f))
        });
    if let Some(demo) = &playback.demo {
        let entry = &demo.playlist[demo.entry];
        ui.label(format!(
            "demo {}/{}: loop {}/{}",
            demo.entry + 1,
            demo.playlist.len(),
            demo.loops_done + 1,
            entry.loops
        ));
    }
    let time = match playback.driver() {
        None if playback.is_replay() => replay::time_text(playback),
        Some(driver) => {
            let traj = driver.trajectory();
            let segment = traj.segment_name(driver.commanded()).unwrap_or("–");
            format!(
                "{:7.3} / {:.1} s  {segment}",
                driver.elapsed(),
                traj.duration()
            )
        }
        None => format!("{:7.3} s (shadow)", playback.total_simulated()),
    };
    egui::Grid::new("numbers").striped(true).show(ui, |ui| {
        row(ui, "time", time);
        row(
            ui,
            "x y z [mm]",
            format!("{:7.2} {:7.2} {:7.2}", p.x * 1e3, p.y * 1e3, p.z * 1e3),
        );
        row(
            ui,
            "r p y [°]",
            format!(
                "{:7.3} {:7.3} {:7.3}",
                roll.to_degrees(),
                pitch.to_degrees(),
                yaw.to_degrees()
            ),
        );
        row(ui, "tracking error", format!("{error_mm:7.3} mm"));
        if let Some((_, other)) = playback.compare() {
            let apart = (other.pose.position - p).norm() * 1e3;
            row(ui, "vs compared run", format!("{apart:7.3} mm"));
        }
        ui.label(if playback.robot().is_cable_robot() {
            "tension min–max"
        } else {
            "leg force min–max"
        });
        ui.horizontal(|ui| {
            let tension = |f: f64| to_color32(colors::tension_color(f, scale_max));
            ui.colored_label(
                tension(lo),
                egui::RichText::new(format!("{lo:7.2}")).monospace(),
            );
            ui.monospace("–");
            ui.colored_label(
                tension(hi),
                egui::RichText::new(format!("{hi:.2} N")).monospace(),
            );
        });
        ui.end_row();
        // Live, the shadow runs on the wall clock whatever the frames do.
        match state.fixed_frame_s.filter(|_| !playback.is_live()) {
            // A replay shows the record's own clock: no physics to keep up.
            None if playback.is_replay() => row(
                ui,
                "replay speed",
                format!(
                    "{:5.2}× (asked {:.2}×)",
                    playback.rtf.value, playback.time_scale
                ),
            ),
            // Screenshot mode: each frame advances the simulation by a fixed step, whatever
            // the wall clock does; a wall-clock real-time factor would describe the renderer.
            Some(frame) => row(
                ui,
                "clock",
                format!("fixed step, {} per frame", frame_period_text(frame)),
            ),
            None => {
                let rtf = if playback.is_live() {
                    format!("{:5.2}×", playback.rtf.value)
                } else {
                    format!(
                        "{:5.2}× (asked {:.2}×)",
                        playback.rtf.value, playback.time_scale
                    )
                };
                row(ui, "real-time factor", rtf);
            }
        }
        row(
            ui,
            "frame",
            format!(
                "{:5.1} ms, {} steps",
                state.frame_time * 1e3,
                state.steps_last_frame
            ),
        );
    });
}

pub(crate) fn row(ui: &mut egui::Ui, name: &str, value: String) {
    ui.label(name);
    ui.monospace(value);
    ui.end_row();
}

fn plots(ui: &mut egui::Ui, playback: &Playback, scale_max: f64) {
    let history = &playback.history;
    let robot = playback.robot();
    let what = if robot.is_cable_robot() {
        "cable tensions"
    } else {
        "leg forces"
    };
    let window = plot_window_s(playback.dt());
    ui.label(format!("{what} [N] over the last {} s", short(window)));
    // One series per cable, or per leg of a robot with legs.
    let cables = playback.state().tensions.len();
    let times: Vec<f64> = history.tensions.iter().map(|(t, _)| *t).collect();
    let series: Vec<Vec<f64>> = (0..cables)
        .map(|k| {
            history
                .tensions
                .iter()
                .map(|(_, f)| f.get(k).copied().unwrap_or(0.0))
                .collect()
        })
        .collect();
    let colors: Vec<egui::Color32> = (0..cables)
        .map(|k| CABLE_COLORS[k % CABLE_COLORS.len()])
        .collect();
    line_plot(ui, window, &times, &series, &colors, 0.0, scale_max, "N");
    // The key: each series' colour and its cable's (or leg's) name.
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 3.0;
        for (k, color) in colors.iter().enumerate() {
            let name = robot
                .cables
                .get(k)
                .map_or_else(|| format!("leg {}", k + 1), |c| c.name.clone());
            let (swatch, _) = ui.allocate_exact_size(egui::vec2(9.0, 9.0), egui::Sense::hover());
            ui.painter().rect_filled(swatch, 1.0, *color);
            ui.label(egui::RichText::new(format!("{name} ")).small());
        }
    });
    if robot.has_drives() {
        torque_plot(ui, playback, window, &colors);
    }
    ui.label("tracking error |p_cmd − p| [mm]");
    let error_times: Vec<f64> = history.error.iter().map(|(t, _)| *t).collect();
    let error: Vec<f64> = history.error.iter().map(|(_, e)| e * 1e3).collect();
    let top = colors::nice_ceil(error.iter().copied().fold(0.0, f64::max));
    line_plot(
        ui,
        window,
        &error_times,
        &[error],
        &[egui::Color32::from_rgb(255, 90, 190)],
        0.0,
        top,
        "mm",
    );
}

/// The drives' torques in % of rated over the plot's window, symmetric about 0 (holding a
/// cable takes a negative torque), and the drives at their limit now named in red.
fn torque_plot(ui: &mut egui::Ui, playback: &Playback, window: f64, colors: &[egui::Color32]) {
    let history = &playback.history;
    let drives = &playback.robot().drives;
    ui.label("motor torques [% of rated]");
    let times: Vec<f64> = history.torques.iter().map(|(t, _)| *t).collect();
    let series: Vec<Vec<f64>> = drives
        .iter()
        .enumerate()
        .map(|(k, d)| {
            history
                .torques
                .iter()
                .map(|(_, tau)| d.percent_of_rated(tau.get(k).copied().unwrap_or(0.0)))
                .collect()
        })
        .collect();
    let top = colors::nice_ceil(
        series
            .iter()
            .flatten()
            .fold(0.0_f64, |m, v| m.max(v.abs()))
            .max(1.0),
    );
    line_plot(ui, window, &times, &series, colors, -top, top, "%");
    let now = &playback.state().motor_torques;
    let limited: Vec<String> = drives
        .iter()
        .enumerate()
        .filter(|(k, d)| {
            now.get(*k)
                .is_some_and(|t| t.abs() >= d.torque_limit * (1.0 - 1e-9))
        })
        .map(|(k, _)| {
            playback
                .robot()
                .cables
                .get(k)
                .map_or_else(|| format!("drive {}", k + 1), |c| c.name.clone())
        })
        .collect();
    if !limited.is_empty() {
        ui.colored_label(
            egui::Color32::from_rgb(230, 60, 60),
            format!("at the torque limit: {}", limited.join(", ")),
        );
    }
}

/// Time the plots span, s: their window of [`PLOT_SAMPLES`] samples, one every
/// [`SAMPLE_EVERY`] physics steps of `dt`.
pub fn plot_window_s(dt: f64) -> f64 {
    PLOT_SAMPLES as f64 * SAMPLE_EVERY as f64 * dt
}

/// The time span a plot shows: `window` s ending at the last sample once the data is that
/// long, starting at the first sample before (the plot fills from the left).
pub fn time_window(times: &[f64], window: f64) -> (f64, f64) {
    let first = times.first().copied().unwrap_or(0.0);
    let last = times.last().copied().unwrap_or(0.0);
    let start = if last - first < window {
        first
    } else {
        last - window
    };
    (start, start + window)
}

/// Tick positions (s) for a time axis from `t0` to `t1`: multiples of 1, 2 or 5 × 10^k s, about
/// five of them.
pub fn time_ticks(t0: f64, t1: f64) -> Vec<f64> {
    let span = t1 - t0;
    if !(span.is_finite() && span > 0.0) {
        return Vec::new();
    }
    let rough = span / 5.0;
    let decade = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * decade)
        .find(|s| *s >= rough * (1.0 - 1e-9))
        .unwrap_or(10.0 * decade);
    let first = (t0 / step - 1e-9).ceil() as i64;
    let last = (t1 / step + 1e-9).floor() as i64;
    // Rounded so that 3 × 0.2 is written 0.6.
    (first..=last)
        .map(|k| (k as f64 * step * 1e9).round() / 1e9)
        .collect()
}

/// A small line plot drawn with egui's painter: series share the time axis (`times`, s, drawn
/// below with ticks) and the y range; the range's top is written in the corner.
#[allow(clippy::too_many_arguments)]
fn line_plot(
    ui: &mut egui::Ui,
    window: f64,
    times: &[f64],
    series: &[Vec<f64>],
    colors: &[egui::Color32],
    y_min: f64,
    y_max: f64,
    unit: &str,
) {
    const AXIS: f32 = 13.0;
    let size = egui::vec2(ui.available_width().max(120.0), 80.0 + AXIS);
    let (response, painter) = ui.allocate_painter(size, egui::Sense::hover());
    let rect = egui::Rect::from_min_max(
        response.rect.min,
        egui::pos2(response.rect.max.x, response.rect.max.y - AXIS),
    );
    painter.rect_filled(rect, 2.0, egui::Color32::from_gray(22));
    let (t0, t1) = time_window(times, window);
    let x_of = |t: f64| egui::lerp(rect.left()..=rect.right(), ((t - t0) / (t1 - t0)) as f32);
    let span = (y_max - y_min).max(1e-12);
    for (values, color) in series.iter().zip(colors) {
        if values.len() < 2 {
            continue;
        }
        let points: Vec<egui::Pos2> = times
            .iter()
            .zip(values)
            .filter(|(t, _)| **t >= t0)
            .map(|(&t, &v)| {
                let s = (((v - y_min) / span).clamp(0.0, 1.0)) as f32;
                egui::pos2(
                    x_of(t),
                    egui::lerp(rect.bottom() - 1.0..=rect.top() + 1.0, s),
                )
            })
            .collect();
        painter.line(points, egui::Stroke::new(1.3, *color));
    }
    painter.text(
        rect.left_top() + egui::vec2(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!("{y_max} {unit}"),
        egui::FontId::monospace(10.0),
        egui::Color32::GRAY,
    );
    time_axis(&painter, rect, t0, t1, x_of);
}

/// The time axis under a plot's `rect`: ticks and their times, the unit after the last.
pub(crate) fn time_axis(
    painter: &egui::Painter,
    rect: egui::Rect,
    t0: f64,
    t1: f64,
    x_of: impl Fn(f64) -> f32,
) {
    let ticks = time_ticks(t0, t1);
    let tick_color = egui::Color32::from_gray(150);
    for (k, &t) in ticks.iter().enumerate() {
        let x = x_of(t);
        painter.line_segment(
            [
                egui::pos2(x, rect.bottom()),
                egui::pos2(x, rect.bottom() + 3.0),
            ],
            egui::Stroke::new(1.0, tick_color),
        );
        let last = k + 1 == ticks.len();
        let (text, align) = if last {
            (format!("{t} s"), egui::Align2::RIGHT_TOP)
        } else {
            (format!("{t}"), egui::Align2::CENTER_TOP)
        };
        let x = if last { x.min(rect.right()) } else { x };
        painter.text(
            egui::pos2(x, rect.bottom() + 3.0),
            align,
            text,
            egui::FontId::monospace(9.0),
            tick_color,
        );
    }
}

/// The side panel (robot, trajectory, model, the replay's controls).
pub struct PanelPlugin;

impl Plugin for PanelPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(bevy_egui::EguiPrimaryContextPass, panel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_motor_modes_are_offered_only_for_a_robot_with_drives() {
        let names = |drives| winches(drives).iter().map(|w| w.1).collect::<Vec<_>>();
        assert_eq!(names(false), ["length", "ideal", "tension"]);
        assert_eq!(
            names(true),
            ["length", "ideal", "tension", "velocity", "torque"]
        );
    }

    #[test]
    fn the_fixed_frame_is_written_as_a_rate() {
        assert_eq!(
            frame_period_text(crate::SCREENSHOT_FRAME.as_secs_f64()),
            "1/60 s"
        );
        assert_eq!(frame_period_text(0.0125), "1/80 s");
        assert_eq!(frame_period_text(0.013), "13.0 ms");
    }

    #[test]
    fn time_ticks_are_round_and_inside_the_window() {
        assert_eq!(time_ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(time_ticks(2.05, 12.05), vec![4.0, 6.0, 8.0, 10.0, 12.0]);
        assert_eq!(time_ticks(0.0, 1.0), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert!(time_ticks(1.0, 1.0).is_empty());
        // The window: from the first sample until it is full, then the last 10 s.
        let window = plot_window_s(1e-3);
        assert_eq!(window, 10.0);
        assert_eq!(time_window(&[0.5, 3.0], window), (0.5, 10.5));
        assert_eq!(time_window(&[0.0, 4.0, 12.0], window), (2.0, 12.0));
        assert_eq!(time_window(&[], window), (0.0, 10.0));
    }
}
