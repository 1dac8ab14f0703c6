//! Text over the 3D view (bevy_ui): the keyboard help (top right) and the legend of the tension
//! colour scale, the slack cables, the trails and the ghost (bottom right).

use super::colors::{self, scale_color};
use super::playback::Playback;
use super::scene::TensionScale;
use bevy::prelude::*;

#[derive(Component)]
pub struct HelpOverlay;
/// Labels of the scale at ½ and 1 of its bound.
#[derive(Component)]
pub struct LegendLabel(pub f64);
/// The ghost's line in the legend (it says whose commanded pose it is).
#[derive(Component)]
pub struct GhostLabel;
/// The legend's title: cable tension, or leg force for a robot with legs.
#[derive(Component)]
pub struct LegendTitle;

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

fn font(size: f32) -> TextFont {
    TextFont {
        font_size: FontSize::Px(size),
        ..default()
    }
}

/// `ghost` names whose commanded pose the ghost is ("commanded pose" or "controller's
/// commanded pose").
pub fn spawn_overlays(
    mut commands: Commands,
    ghost: Res<GhostText>,
    playback: Res<Playback>,
    show_help: Res<ShowHelp>,
) {
    spawn_help(&mut commands, help_text(&playback), show_help.0);
    let compare = playback
        .replay_source()
        .and_then(|r| r.compare.as_ref())
        .map(|compare| format!("compared run: {} (box, cables)", compare.name()));
    spawn_legend(&mut commands, &ghost.0, compare.as_deref());
}

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

/// The keyboard help, top right, hidden unless `visible`.
fn spawn_help(commands: &mut Commands, help: &'static str, visible: bool) {
    commands.spawn((
        HelpOverlay,
        if visible {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        },
        Text::new(help),
        font(14.0),
        TextColor(Color::WHITE),
        Node {
            position_type: PositionType::Absolute,
            top: px(10),
            right: px(10),
            padding: UiRect::all(px(8)),
            ..default()
        },
        BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.62)),
    ));
}

/// The legend, bottom right: the tension scale, then a line per kind of thing drawn (slack
/// cables, the two trails, the ghost and, in a replay with a compared run, that run).
fn spawn_legend(commands: &mut Commands, ghost: &str, compare: Option<&str>) {
    commands
        .spawn((
            Node {
                position_type: PositionType::Absolute,
                bottom: px(10),
                right: px(10),
                flex_direction: FlexDirection::Column,
                row_gap: px(4),
                padding: UiRect::all(px(8)),
                ..default()
            },
            BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.62)),
        ))
        .with_children(|legend| {
            spawn_tension_scale(legend);
            spawn_swatch(legend, colors::SLACK_COLOR, 2.0, "slack cable (thin, grey)");
            spawn_swatch(legend, colors::COMMANDED_TRAIL, 3.0, "commanded TCP path");
            spawn_swatch(legend, colors::ACTUAL_TRAIL, 3.0, "actual TCP path");
            spawn_ghost_line(legend, ghost);
            if let Some(text) = compare {
                spawn_swatch(legend, colors::COMPARE_COLOR, 3.0, text);
            }
        });
}

/// The legend's title, the colour bar and its labels at 0, ½ and 1 of the bound (the latter
/// two filled in as the bound is known).
fn spawn_tension_scale(legend: &mut ChildSpawnerCommands) {
    let stops: Vec<ColorStop> = (0..=10)
        .map(|k| {
            let [r, g, b] = scale_color(k as f64 / 10.0);
            Color::srgb(r, g, b).into()
        })
        .collect();
    // As wide as the bar: a long title wraps upwards instead of widening the legend.
    legend.spawn((
        LegendTitle,
        Text::new("Cable tension [N]"),
        font(14.0),
        Node {
            width: px(LEGEND_WIDTH),
            ..default()
        },
    ));
    legend.spawn((
        Node {
            width: px(LEGEND_WIDTH),
            height: px(16),
            ..default()
        },
        BackgroundGradient::from(LinearGradient::to_right(stops)),
    ));
    legend
        .spawn(Node {
            width: px(LEGEND_WIDTH),
            justify_content: JustifyContent::SpaceBetween,
            ..default()
        })
        .with_children(|row| {
            row.spawn((Text::new("0"), font(13.0)));
            row.spawn((LegendLabel(0.5), Text::new("…"), font(13.0)));
            row.spawn((LegendLabel(1.0), Text::new("…"), font(13.0)));
        });
}

/// A legend line: a bar of `color`, `height` px thick, and its text.
fn spawn_swatch(legend: &mut ChildSpawnerCommands, color: Color, height: f32, text: &str) {
    legend
        .spawn(Node {
            align_items: AlignItems::Center,
            column_gap: px(8),
            ..default()
        })
        .with_children(|row| {
            row.spawn((
                Node {
                    width: px(28),
                    height: px(height),
                    ..default()
                },
                BackgroundColor(color),
            ));
            row.spawn((Text::new(text), font(13.0)));
        });
}

/// The ghost's legend line: an outlined box, as the ghost is drawn, and whose pose it is.
fn spawn_ghost_line(legend: &mut ChildSpawnerCommands, ghost: &str) {
    legend
        .spawn(Node {
            align_items: AlignItems::Center,
            column_gap: px(8),
            ..default()
        })
        .with_children(|row| {
            row.spawn((
                Node {
                    width: px(26),
                    height: px(12),
                    border: UiRect::all(px(1)),
                    ..default()
                },
                BorderColor::all(colors::GHOST_COLOR),
            ));
            row.spawn((GhostLabel, Text::new(ghost.to_string()), font(13.0)));
        });
}

/// Whether the keyboard help shows at start (not in a clip: nobody is at the keyboard).
#[derive(Resource, Debug, Clone, Copy)]
pub struct ShowHelp(pub bool);

/// The legend's line for the ghost box.
#[derive(Resource, Debug, Clone)]
pub struct GhostText(pub String);

/// Rewrites the scale's labels when its bound changes, and the title for the robot's kind.
pub fn update_legend(
    scale: Res<TensionScale>,
    playback: Res<Playback>,
    mut labels: Query<(&LegendLabel, &mut Text), Without<LegendTitle>>,
    mut titles: Query<&mut Text, (With<LegendTitle>, Without<LegendLabel>)>,
) {
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
        crate::colors::scale_label(scale.0)
    );
    for mut text in &mut titles {
        if text.0 != title {
            text.0 = title.clone();
        }
    }
    if !scale.is_changed() {
        return;
    }
    for (label, mut text) in &mut labels {
        let wanted = crate::colors::scale_label(label.0 * scale.0);
        if text.0 != wanted {
            text.0 = wanted;
        }
    }
}

/// The overlays: the key help, the ghost box's label, the tension legend.
pub struct OverlayPlugin;

impl Plugin for OverlayPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_overlays)
            .add_systems(Update, update_legend.in_set(crate::ViewerSet::Overlay));
    }
}
