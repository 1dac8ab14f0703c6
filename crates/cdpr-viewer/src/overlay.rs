//! Text over the 3D view, drawn by egui as the panel is: the keyboard help (top right) and the
//! legend of the tension colour scale, the slack cables, the trails and the ghost (bottom
//! right). egui rather than bevy_ui, so that the build carries one text and layout stack.

use super::colors::{self, scale_color, to_color32};
use super::playback::Playback;
use super::scene::TensionScale;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};

pub const HELP: &str = "Space  pause / run\n\
R      reset the run\n\
S      one physics step (pauses)\n\
F      next view: frame, path, platform\n\
H, F1  hide / show this help\n\
Esc    quit\n\
Mouse  left-drag orbit, right-drag pan,\n       wheel zoom";

/// The help in live mode: the controller drives the shadow, the keys only change the view.
pub const HELP_LIVE: &str = "Space  freeze / follow the view\n\
       (the shadow keeps running)\n\
R      clear the trails and plots\n\
F      next view: frame, path, platform\n\
H, F1  hide / show this help\n\
Esc    quit (stops the shadow)\n\
Mouse  left-drag orbit, right-drag pan,\n       wheel zoom";

/// The help in replay: the record is shown, not run.
pub const HELP_REPLAY: &str = "Space  play / pause\n\
Left   one recorded sample back\n\
Right  one recorded sample on\n\
S      one sample on (pauses)\n\
R      back to the start\n\
F      next view: frame, path, platform\n\
H, F1  hide / show this help\n\
Esc    quit\n\
Mouse  left-drag orbit, right-drag pan,\n       wheel zoom";

const LEGEND_WIDTH: f32 = 230.0;
/// The colour bar's pieces: the scale's colour at each piece's middle, both ends exact.
const BAR_PIECES: usize = 46;
const MARGIN: f32 = 10.0;

/// Whether the keyboard help shows (at start: not in a clip, nobody is at the keyboard; then
/// H or F1 toggles it).
#[derive(Resource, Debug, Clone, Copy)]
pub struct ShowHelp(pub bool);

/// The legend's line for the ghost box.
#[derive(Resource, Debug, Clone)]
pub struct GhostText(pub String);

/// The keyboard help for the playback's mode: a run, a live view or a replay.
fn help_text(playback: &Playback) -> &'static str {
    if playback.is_live() {
        HELP_LIVE
    } else if playback.is_replay() {
        HELP_REPLAY
    } else {
        HELP
    }
}

/// The overlays' dark, translucent backing.
fn backing() -> egui::Frame {
    egui::Frame::NONE
        .fill(egui::Color32::from_black_alpha(158))
        .inner_margin(egui::Margin::same(8))
}

fn text(text: impl Into<String>, size: f32) -> egui::RichText {
    egui::RichText::new(text)
        .size(size)
        .color(egui::Color32::WHITE)
}

/// The help (top right) and the legend (bottom right), each frame.
pub fn overlays(
    mut contexts: EguiContexts,
    playback: Res<Playback>,
    scale: Res<TensionScale>,
    ghost: Res<GhostText>,
    show_help: Res<ShowHelp>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    if show_help.0 {
        egui::Area::new(egui::Id::new("cdpr_help"))
            .anchor(egui::Align2::RIGHT_TOP, egui::vec2(-MARGIN, MARGIN))
            .interactable(false)
            .fade_in(false)
            .show(ctx, |ui| {
                backing().show(ui, |ui| {
                    ui.label(text(help_text(&playback), 14.0).monospace());
                });
            });
    }
    let compare = playback
        .replay_source()
        .and_then(|r| r.compare.as_ref())
        .map(|compare| format!("compared run: {} (box, cables)", compare.name()));
    egui::Area::new(egui::Id::new("cdpr_legend"))
        .anchor(egui::Align2::RIGHT_BOTTOM, egui::vec2(-MARGIN, -MARGIN))
        .interactable(false)
        .fade_in(false)
        .show(ctx, |ui| {
            backing().show(ui, |ui| {
                ui.set_width(LEGEND_WIDTH);
                ui.spacing_mut().item_spacing.y = 4.0;
                tension_scale(ui, &playback, scale.0);
                swatch(ui, colors::SLACK_COLOR, 2.0, "slack cable (thin, grey)");
                swatch(ui, colors::COMMANDED_TRAIL, 3.0, "commanded TCP path");
                swatch(ui, colors::ACTUAL_TRAIL, 3.0, "actual TCP path");
                ghost_line(ui, &ghost.0);
                if let Some(line) = &compare {
                    swatch(ui, colors::COMPARE_COLOR, 3.0, line);
                }
            });
        });
    Ok(())
}

/// The legend's title (what is coloured, and on which scale), the colour bar and its labels at
/// 0, ½ and 1 of the bound.
fn tension_scale(ui: &mut egui::Ui, playback: &Playback, bound: f64) {
    let what = if playback.robot().is_cable_robot() {
        "Cable tension"
    } else {
        "Leg force"
    };
    // The scale is a round number above the largest force: the record's in a replay, the
    // largest so far while a run is computed (it grows). Said, so that two views' colours
    // are not compared on different scales unknowingly.
    let rule = if playback.is_replay() {
        "the record's largest"
    } else {
        "grows with the largest so far"
    };
    let title = format!(
        "{what} [N]: scale 0 to {}, {rule}",
        colors::scale_label(bound)
    );
    ui.label(text(title, 14.0));
    let (bar, _) = ui.allocate_exact_size(egui::vec2(LEGEND_WIDTH, 16.0), egui::Sense::hover());
    let piece = bar.width() / BAR_PIECES as f32;
    for k in 0..BAR_PIECES {
        let at = k as f64 / (BAR_PIECES - 1) as f64;
        let [r, g, b] = scale_color(at);
        let rect = egui::Rect::from_min_size(
            bar.min + egui::vec2(k as f32 * piece, 0.0),
            egui::vec2(piece + 0.5, bar.height()),
        );
        ui.painter()
            .rect_filled(rect, 0.0, to_color32(Color::srgb(r, g, b)));
    }
    ui.horizontal(|ui| {
        let label = |at: f64| text(colors::scale_label(at * bound), 13.0);
        ui.label(label(0.0));
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            ui.label(label(1.0));
            ui.add_space(ui.available_width() / 2.0 - 12.0);
            ui.label(label(0.5));
        });
    });
}

/// A legend line: a bar of `color`, `height` px thick, and its text.
fn swatch(ui: &mut egui::Ui, color: Color, height: f32, line: &str) {
    ui.horizontal(|ui| {
        let (bar, _) = ui.allocate_exact_size(egui::vec2(28.0, 12.0), egui::Sense::hover());
        let bar = egui::Rect::from_center_size(bar.center(), egui::vec2(28.0, height));
        ui.painter().rect_filled(bar, 0.0, to_color32(color));
        ui.label(text(line, 13.0));
    });
}

/// The ghost's legend line: an outlined box, as the ghost is drawn, and whose pose it is.
fn ghost_line(ui: &mut egui::Ui, ghost: &str) {
    ui.horizontal(|ui| {
        let (outline, _) = ui.allocate_exact_size(egui::vec2(28.0, 12.0), egui::Sense::hover());
        let outline = egui::Rect::from_center_size(outline.center(), egui::vec2(26.0, 12.0));
        ui.painter().rect_stroke(
            outline,
            0.0,
            egui::Stroke::new(1.0, to_color32(colors::GHOST_COLOR)),
            egui::StrokeKind::Inside,
        );
        ui.label(text(ghost, 13.0));
    });
}

/// The overlays: the key help, the ghost box's label, the tension legend (after the panel, so
/// that they stay above it).
pub struct OverlayPlugin;

impl Plugin for OverlayPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(
            bevy_egui::EguiPrimaryContextPass,
            overlays.after(crate::panel::panel),
        );
    }
}
