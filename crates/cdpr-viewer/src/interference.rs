//! Interference, live: the core's check ([`cdpr_core::interference`]) at the shown pose every
//! frame, the cables in violation drawn in the warning colour (over the tension colour
//! [`crate::scene::sync_scene`] gave them), the robot file's `[[obstacles]]` drawn (boxes,
//! cylinders, spheres as wire frames, a half-space as a translucent grid over the frame), and a
//! line of text naming what interferes and how close.

use crate::colors;
use crate::playback::Playback;
use crate::scene::{CableRod, to_bevy};
use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};
use cdpr_core::interference::{DEFAULT_CLEARANCE, Report, check};
use cdpr_core::robot::obstacles::Shape;
use nalgebra::Vector3;

/// The warning colour of a cable in interference.
pub const INTERFERENCE_COLOR: Color = Color::srgb(
    cdpr_core::colors::INTERFERENCE_RGB[0],
    cdpr_core::colors::INTERFERENCE_RGB[1],
    cdpr_core::colors::INTERFERENCE_RGB[2],
);
/// Obstacles, translucent.
pub const OBSTACLE_COLOR: Color = Color::srgba(
    cdpr_core::colors::OBSTACLE_RGB[0],
    cdpr_core::colors::OBSTACLE_RGB[1],
    cdpr_core::colors::OBSTACLE_RGB[2],
    cdpr_core::colors::OBSTACLE_ALPHA,
);

/// The check at the shown pose, and the clearance it used (m).
#[derive(Resource)]
pub struct InterferenceView {
    pub clearance: f64,
    pub report: Option<Report>,
}

impl InterferenceView {
    /// No check made yet, at `clearance` (m).
    pub fn with_clearance(clearance: f64) -> Self {
        InterferenceView {
            clearance,
            report: None,
        }
    }
}

impl Default for InterferenceView {
    fn default() -> Self {
        InterferenceView::with_clearance(DEFAULT_CLEARANCE)
    }
}

/// Checks the shown pose and recolours the cables in violation (after `sync_scene`).
pub fn check_and_color(
    playback: Res<Playback>,
    mut view: ResMut<InterferenceView>,
    cables: Query<(&CableRod, &MeshMaterial3d<StandardMaterial>)>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let robot = playback.robot();
    let report = check(robot, &playback.state().pose, view.clearance);
    let flagged = report.cables_in_violation(robot.cables.len());
    for (rod, material) in &cables {
        if flagged.get(rod.0).copied().unwrap_or(false)
            && let Some(mut m) = materials.get_mut(&material.0)
        {
            m.base_color = INTERFERENCE_COLOR;
        }
    }
    view.report = Some(report);
}

/// A circle of `radius` about `center` in the plane of the unit vectors `u`, `v`.
fn circle(center: Vector3<f64>, u: Vector3<f64>, v: Vector3<f64>, radius: f64) -> Vec<Vec3> {
    (0..=48)
        .map(|k| {
            let phi = std::f64::consts::TAU * k as f64 / 48.0;
            to_bevy(&(center + (u * phi.cos() + v * phi.sin()) * radius))
        })
        .collect()
}

/// The obstacles as lines.
pub fn draw_obstacles(mut gizmos: Gizmos, playback: Res<Playback>) {
    let robot = playback.robot();
    for o in &robot.obstacles {
        match o.shape {
            Shape::Box { min, max } => {
                let (c, s) = ((min + max) * 0.5, max - min);
                gizmos.cube(
                    Transform::from_translation(to_bevy(&c))
                        .with_scale(Vec3::new(s.x as f32, s.z as f32, s.y as f32)),
                    OBSTACLE_COLOR,
                );
            }
            Shape::Sphere { center, radius } => {
                let (x, y, z) = (Vector3::x(), Vector3::y(), Vector3::z());
                for (u, v) in [(x, y), (y, z), (z, x)] {
                    gizmos.linestrip(circle(center, u, v, radius), OBSTACLE_COLOR);
                }
            }
            Shape::Cylinder {
                base,
                axis,
                radius,
                height,
            } => {
                let (u, v) = cdpr_core::kinematics::pulley::reference_axes(&axis);
                let top = base + axis * height;
                gizmos.linestrip(circle(base, u, v, radius), OBSTACLE_COLOR);
                gizmos.linestrip(circle(top, u, v, radius), OBSTACLE_COLOR);
                for k in 0..8 {
                    let phi = std::f64::consts::TAU * k as f64 / 8.0;
                    let r = (u * phi.cos() + v * phi.sin()) * radius;
                    gizmos.line(to_bevy(&(base + r)), to_bevy(&(top + r)), OBSTACLE_COLOR);
                }
            }
            Shape::Plane { point, normal } => {
                // A grid as large as the frame's diagonal, centred on the frame's projection.
                let (u, v) = cdpr_core::kinematics::pulley::reference_axes(&normal);
                let frame = robot.frame;
                let half = 0.5 * frame.size().norm();
                let c = frame.center();
                let c = c - normal * (c - point).dot(&normal);
                for k in 0..=10 {
                    let t = -half + 2.0 * half * k as f64 / 10.0;
                    for (a, b) in [(u, v), (v, u)] {
                        gizmos.line(
                            to_bevy(&(c + a * t - b * half)),
                            to_bevy(&(c + a * t + b * half)),
                            OBSTACLE_COLOR,
                        );
                    }
                }
            }
        }
    }
}

/// What interferes, named, in the warning colour at the bottom of the window.
pub fn status_text(mut contexts: EguiContexts, view: Res<InterferenceView>) -> Result {
    let Some(report) = &view.report else {
        return Ok(());
    };
    let lines: Vec<String> = report.violations().map(|p| p.to_string()).collect();
    if lines.is_empty() {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    egui::Area::new(egui::Id::new("interference"))
        .anchor(egui::Align2::CENTER_BOTTOM, egui::vec2(0.0, -12.0))
        .show(ctx, |ui| {
            let text = format!(
                "interference (clearance {} mm): {}",
                cdpr_core::text::short(view.clearance * 1e3),
                lines.join("; ")
            );
            ui.label(
                egui::RichText::new(text)
                    .color(colors::to_color32(INTERFERENCE_COLOR))
                    .strong(),
            );
        });
    Ok(())
}

/// Interference at the shown pose: checked each frame, the parts coloured, the obstacles
/// drawn, the status said under the panel.
pub struct InterferencePlugin;

impl Plugin for InterferencePlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Update, check_and_color.in_set(crate::ViewerSet::Check))
            .add_systems(
                Update,
                draw_obstacles.in_set(crate::ViewerSet::DrawObstacles),
            )
            .add_systems(
                bevy_egui::EguiPrimaryContextPass,
                status_text.after(crate::panel::panel),
            );
    }
}
