//! The panel in replay: the record (and the compared one), the time slider, play/pause, speed,
//! one-sample steps, jumps to the run's events, and plots of the whole run (its overview's
//! min/max envelope, which keeps every spike however long the run) with a cursor at the
//! slider's time; clicking or dragging on a plot moves the slider there.

use super::panel::{CABLE_COLORS, row, time_axis};
use super::playback::Playback;
use super::replay::Replay;
use bevy_egui::egui;
use cdpr_core::recording::reader::{Event, Events, Overview};

/// Replay speeds the slider offers, × the record's own clock.
pub const SPEEDS: std::ops::RangeInclusive<f64> = 0.1..=10.0;

/// The time row of the numbers: slider time, end, and the segment of the row shown.
pub fn time_text(playback: &Playback) -> String {
    let Some(replay) = playback.replay_source() else {
        return String::new();
    };
    let segment = &replay.main.row().segment;
    let segment = if segment.is_empty() { "–" } else { segment };
    format!("{:7.3} / {:.3} s  {segment}", replay.time(), replay.end())
}

pub fn replay_section(ui: &mut egui::Ui, playback: &mut Playback) {
    let Some(replay) = playback.replay_source() else {
        return;
    };
    replay_header(ui, replay);
    let (start, end) = (replay.start(), replay.end());
    let t = replay.time();
    let events = replay.main.file().events().clone();
    let (seek, step) = transport(ui, playback, start, end, t);
    let goto = jumps(ui, &events);
    let result = match (seek, goto, step) {
        (Some(t), _, _) => playback.seek_replay(t),
        (None, Some(row), _) => playback.show_replay_row(row),
        (None, None, 0) => Ok(()),
        (None, None, by) => {
            playback.paused = true;
            playback.step_replay(by)
        }
    };
    if let Err(e) = result {
        playback.error = Some(e.to_string());
    }
}

/// The record's name, description, whether it ended early, its robot, row and ghost.
fn replay_header(ui: &mut egui::Ui, replay: &Replay) {
    let file = replay.main.file();
    ui.strong(format!("replay: {}", replay.main.name()));
    if let Some(description) = file.description() {
        ui.label(egui::RichText::new(description).small());
    }
    for note in replay.main.notes() {
        ui.colored_label(egui::Color32::from_rgb(230, 160, 60), note);
    }
    egui::Grid::new("replay_grid").striped(true).show(ui, |ui| {
        row(
            ui,
            "robot",
            format!("{} ({})", replay.main.robot.name, replay.main.robot_source),
        );
        row(
            ui,
            "row",
            format!(
                "{} of {}, every {:.3} ms",
                replay.main.index() + 1,
                file.len(),
                replay.sample_period() * 1e3
            ),
        );
        if let Some(compare) = &replay.compare {
            row(ui, "compared", format!("{} (ghost)", compare.name()));
        }
    });
}

/// The time slider, the play buttons and the speed: a time to seek to, or samples to step.
fn transport(
    ui: &mut egui::Ui,
    playback: &mut Playback,
    start: f64,
    end: f64,
    mut t: f64,
) -> (Option<f64>, isize) {
    let at_end = t >= end;
    let mut seek: Option<f64> = None;
    let mut step: isize = 0;
    let width = ui.available_width();
    ui.scope(|ui| {
        ui.spacing_mut().slider_width = (width - 90.0).max(80.0);
        if ui
            .add(
                egui::Slider::new(&mut t, start..=end)
                    .suffix(" s")
                    .max_decimals(3),
            )
            .changed()
        {
            seek = Some(t);
        }
    });
    ui.horizontal(|ui| {
        if ui.button("⏮").on_hover_text("back to the start").clicked() {
            seek = Some(start);
        }
        if ui.button("◀ 1").on_hover_text("one sample back").clicked() {
            step = -1;
        }
        let label = if playback.paused {
            "▶ play"
        } else {
            "⏸ pause"
        };
        if ui.button(label).clicked() {
            playback.paused = !playback.paused;
            // Play at the end starts again from the beginning.
            if !playback.paused && at_end {
                seek = Some(start);
            }
        }
        if ui.button("1 ▶").on_hover_text("one sample on").clicked() {
            step = 1;
        }
        ui.checkbox(&mut playback.looping, "loop");
    });
    ui.horizontal(|ui| {
        ui.label("speed");
        ui.add(
            egui::Slider::new(&mut playback.time_scale, SPEEDS)
                .logarithmic(true)
                .suffix("×"),
        );
    });
    (seek, step)
}

/// The buttons that jump to the run's events: the row to show.
fn jumps(ui: &mut egui::Ui, events: &Events) -> Option<usize> {
    let mut goto: Option<usize> = None;
    ui.label("jump to");
    ui.horizontal_wrapped(|ui| {
        let mut jump = |ui: &mut egui::Ui, event: Option<Event>, label: &str, what: &str| {
            let hover = match event {
                Some(e) => format!("{what} at {:.3} s", e.time),
                None => format!("no {what} in this run"),
            };
            if ui
                .add_enabled(event.is_some(), egui::Button::new(label))
                .on_hover_text(&hover)
                .on_disabled_hover_text(&hover)
                .clicked()
                && let Some(e) = event
            {
                // The event's own row (another row may share its time).
                goto = Some(e.row);
            }
        };
        jump(
            ui,
            events.largest_tension,
            "max tension",
            "the largest tension",
        );
        jump(
            ui,
            events.largest_error,
            "max error",
            "the largest tracking error",
        );
        jump(ui, events.first_slack, "first slack", "a slack cable");
        jump(ui, events.first_gap, "first gap", "a gap in the record");
    });
    goto
}

/// The whole run's tensions and tracking error, with the slider's time as a cursor.
pub fn replay_plots(ui: &mut egui::Ui, playback: &mut Playback, scale_max: f64) {
    let Some(replay) = playback.replay_source() else {
        return;
    };
    let overview = replay.main.file().overview();
    let (t0, t1) = (replay.start(), replay.end().max(replay.start() + 1e-9));
    let cursor = replay.time();
    let robot = &replay.main.robot;
    let cables = replay.main.file().cables();
    let what = if robot.is_cable_robot() {
        "cable tensions"
    } else {
        "leg forces"
    };
    ui.label(format!("{what} [N], whole run (min/max)"));
    let colors: Vec<egui::Color32> = (0..cables)
        .map(|k| CABLE_COLORS[k % CABLE_COLORS.len()])
        .collect();
    let tensions: Vec<Envelope> = (0..cables)
        .map(|cable| Envelope {
            color: colors[cable],
            bins: envelope(overview, |b| {
                (
                    b.tension_min.get(cable).copied().unwrap_or(f64::NAN),
                    b.tension_max.get(cable).copied().unwrap_or(f64::NAN),
                )
            }),
        })
        .collect();
    let mut seek = envelope_plot(ui, (t0, t1), &tensions, scale_max, "N", 1.0, cursor);
    ui.label("tracking error |p_cmd − p| [mm], whole run");
    let error = Envelope {
        color: egui::Color32::from_rgb(255, 90, 190),
        bins: envelope(overview, |b| (b.error_min, b.error_max)),
    };
    let top_mm = cdpr_core::colors::nice_ceil(
        overview
            .bins
            .iter()
            .map(|b| b.error_max)
            .filter(|e| e.is_finite())
            .fold(0.0, f64::max)
            * 1e3,
    );
    seek = seek.or(envelope_plot(
        ui,
        (t0, t1),
        &[error],
        top_mm,
        "mm",
        1e3,
        cursor,
    ));
    if let Some(t) = seek
        && let Err(e) = playback.seek_replay(t)
    {
        playback.error = Some(e.to_string());
    }
}

/// One series of an overview plot: per bin (first time, last time, min, max).
struct Envelope {
    color: egui::Color32,
    bins: Vec<(f64, f64, f64, f64)>,
}

fn envelope(
    overview: &Overview,
    pick: impl Fn(&cdpr_core::recording::reader::Bin) -> (f64, f64),
) -> Vec<(f64, f64, f64, f64)> {
    overview
        .bins
        .iter()
        .map(|b| {
            let (lo, hi) = pick(b);
            (b.t_first, b.t_last, lo, hi)
        })
        .collect()
}

/// Draws `series` from `t0` to `t1` (each bin's min and max reduced to the plot's pixel
/// columns, drawn as two lines: a band where the value swings within a column), values times
/// `unit_scale` from 0 to `y_max`, and a cursor at `cursor`. Returns the time under the
/// pointer while it is pressed on the plot.
fn envelope_plot(
    ui: &mut egui::Ui,
    (t0, t1): (f64, f64),
    series: &[Envelope],
    y_max: f64,
    unit: &str,
    unit_scale: f64,
    cursor: f64,
) -> Option<f64> {
    const AXIS: f32 = 13.0;
    let size = egui::vec2(ui.available_width().max(120.0), 80.0 + AXIS);
    let (response, painter) = ui.allocate_painter(size, egui::Sense::click_and_drag());
    let rect = egui::Rect::from_min_max(
        response.rect.min,
        egui::pos2(response.rect.max.x, response.rect.max.y - AXIS),
    );
    painter.rect_filled(rect, 2.0, egui::Color32::from_gray(22));
    let x_of = |t: f64| egui::lerp(rect.left()..=rect.right(), ((t - t0) / (t1 - t0)) as f32);
    let span = y_max.max(1e-12);
    let y_of = |v: f64| {
        let s = ((v * unit_scale / span).clamp(0.0, 1.0)) as f32;
        egui::lerp(rect.bottom() - 1.0..=rect.top() + 1.0, s)
    };
    let columns = rect.width().max(1.0) as usize;
    for s in series {
        let mut lo = vec![f64::INFINITY; columns];
        let mut hi = vec![f64::NEG_INFINITY; columns];
        for &(ta, tb, min, max) in &s.bins {
            let column = |t: f64| {
                (((t - t0) / (t1 - t0)) * columns as f64).clamp(0.0, columns as f64 - 1.0) as usize
            };
            for c in column(ta)..=column(tb) {
                if min.is_finite() {
                    lo[c] = lo[c].min(min);
                }
                if max.is_finite() {
                    hi[c] = hi[c].max(max);
                }
            }
        }
        for values in [&lo, &hi] {
            let points: Vec<egui::Pos2> = values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.is_finite())
                .map(|(c, &v)| egui::pos2(rect.left() + c as f32 + 0.5, y_of(v)))
                .collect();
            if points.len() >= 2 {
                painter.line(points, egui::Stroke::new(1.2, s.color));
            }
        }
    }
    let x = x_of(cursor);
    painter.line_segment(
        [egui::pos2(x, rect.top()), egui::pos2(x, rect.bottom())],
        egui::Stroke::new(1.5, egui::Color32::WHITE),
    );
    painter.text(
        rect.left_top() + egui::vec2(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!("{y_max} {unit}"),
        egui::FontId::monospace(10.0),
        egui::Color32::GRAY,
    );
    time_axis(&painter, rect, t0, t1, x_of);
    if response.is_pointer_button_down_on()
        && let Some(p) = response.interact_pointer_pos()
    {
        let f = ((p.x - rect.left()) / rect.width().max(1.0)).clamp(0.0, 1.0) as f64;
        return Some(t0 + f * (t1 - t0));
    }
    None
}
