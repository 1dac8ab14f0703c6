//! Camera and input: an orbit camera framing the workspace and the path (or, with `F`, the whole
//! robot) in the part of the window right of the panel, mouse input withheld from it while the
//! pointer is on the panel, and the keyboard
//! shortcuts of the help overlay.

use super::colors;
use super::overlay::ShowHelp;
use super::panel::PanelState;
use super::playback::Playback;
use super::scene::{RobotChanged, to_bevy};
use bevy::camera::{CameraOutputMode, ClearColorConfig, Viewport, visibility::RenderLayers};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::light::CascadeShadowConfigBuilder;
use bevy::prelude::*;
use bevy::render::render_resource::BlendState;
use bevy::render::renderer::RenderAdapterInfo;
use bevy::window::PrimaryWindow;
use bevy_egui::{PrimaryEguiContext, egui, input::EguiWantsInput};
use bevy_panorbit_camera::PanOrbitCamera;
use cdpr_core::robot::{Aabb, Robot};
use nalgebra::Vector3;

/// The 3D view's camera (the egui camera is a separate overlay, see [`spawn_cameras`]).
#[derive(Component)]
pub struct SceneCamera;

const YAW: f32 = 0.55;
const PITCH: f32 = 0.42;
/// How much room the default view leaves around [`path_region`]'s bounding sphere.
const PATH_MARGIN: f32 = 1.6;
/// Vertical field of view of Bevy's default perspective projection.
const FOV: f32 = std::f32::consts::FRAC_PI_4;

/// Focus and distance that show the whole frame box: its bounding sphere fits the vertical
/// field of view (the view is wider than tall), less a little since a box's outline is smaller
/// than its sphere's.
pub fn framing(robot: &Robot) -> (Vec3, f32) {
    let radius = 0.5 * robot.frame.size().norm() as f32;
    (
        to_bevy(&robot.frame.center()),
        0.92 * radius / (0.5 * FOV).sin(),
    )
}

/// What the default view frames: the robot's workspace box and the trajectory's path (when
/// there is one), grown by the platform's box so that the platform at the path's edge is in
/// the picture too. The frame itself may be much larger (uvigo8: a 2.9 m frame around a 0.2 m
/// test volume, whose path the platform box hides at that distance).
pub fn path_region(robot: &Robot, path: impl IntoIterator<Item = Vector3<f64>>) -> Aabb {
    let mut region = robot.workspace;
    for p in path {
        region.min = region.min.inf(&p);
        region.max = region.max.sup(&p);
    }
    // The platform's box around each of those points (its rotation aside).
    let half = robot.platform.size * 0.5;
    let (low, high) = (
        robot.platform.box_center - half,
        robot.platform.box_center + half,
    );
    Aabb {
        min: region.min + low.inf(&Vector3::zeros()),
        max: region.max + high.sup(&Vector3::zeros()),
    }
}

/// Focus and distance of the default view: [`path_region`]'s bounding sphere fills the
/// vertical field of view (never farther out than the whole robot's [`framing`]).
pub fn path_framing(robot: &Robot, path: impl IntoIterator<Item = Vector3<f64>>) -> (Vec3, f32) {
    let region = path_region(robot, path);
    let radius = 0.5 * region.size().norm() as f32;
    let distance = PATH_MARGIN * radius / (0.5 * FOV).sin();
    let (_, whole) = framing(robot);
    (to_bevy(&region.center()), distance.min(whole))
}

/// Whether the 3D view is drawn with 4× multisampling.
#[derive(Resource, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Antialiasing {
    /// On a GPU; not on a software renderer (Mesa's lavapipe on a laptop without a GPU driver,
    /// a CI machine), which spends nearly half of a 1280×720 frame on it (745 → 373–440 ms).
    #[default]
    Auto,
    On,
    Off,
}

cdpr_core::named_choice!(Antialiasing, "antialiasing", {
    Auto => "auto", "4× multisampling on a GPU, none on a software renderer (lavapipe)";
    On => "on", "4× multisampling on every renderer (the guide's pictures)";
    Off => "off", "no multisampling";
});

impl Antialiasing {
    /// The camera's multisampling on `adapter`.
    fn msaa(self, adapter: Option<&RenderAdapterInfo>) -> Msaa {
        let software = adapter.is_some_and(|a| a.device_type == wgpu_types::DeviceType::Cpu);
        match self {
            Antialiasing::On => Msaa::Sample4,
            Antialiasing::Auto if !software => Msaa::Sample4,
            Antialiasing::Auto | Antialiasing::Off => Msaa::Off,
        }
    }
}

/// What the camera frames at the start, on a new robot and after `F` cycles to it.
#[derive(Resource, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CameraView {
    /// The whole frame: every pulley and anchor in view.
    Frame,
    /// The workspace and the path with the platform around them (the default).
    #[default]
    Path,
    /// The platform, close up.
    Platform,
}

cdpr_core::named_choice!(CameraView, "camera view", {
    Frame => "frame", "the whole frame: every pulley and anchor in view";
    Path => "path", "the workspace and the path, with the platform around them";
    Platform => "platform", "the platform at its start pose, close up";
});

impl CameraView {
    /// The next view of `F`.
    fn next(self) -> CameraView {
        match self {
            CameraView::Frame => CameraView::Path,
            CameraView::Path => CameraView::Platform,
            CameraView::Platform => CameraView::Frame,
        }
    }
}

/// Focus and distance of `view` of what `playback` plays.
fn view_framing(view: CameraView, playback: &Playback) -> (Vec3, f32) {
    match view {
        CameraView::Frame => framing(playback.robot()),
        CameraView::Path => default_framing(playback),
        CameraView::Platform => {
            let robot = playback.robot();
            let pose = cdpr_core::pose::Pose::from_array(robot.home);
            let centre = pose.position + pose.rotation() * robot.platform.box_center;
            let size = robot.platform.size.norm().max(0.05) as f32;
            (to_bevy(&centre), 3.0 * size / (0.5 * FOV).sin())
        }
    }
}

/// The default view of what `playback` plays.
fn default_framing(playback: &Playback) -> (Vec3, f32) {
    match playback.driver() {
        Some(driver) => path_framing(
            playback.robot(),
            driver
                .trajectory()
                .samples
                .iter()
                .map(|sample| sample.pose.position),
        ),
        // Replay: the recorded commanded path (the trails), live: the workspace.
        None => path_framing(
            playback.robot(),
            playback
                .history
                .commanded_path
                .iter()
                .filter(|_| playback.is_replay())
                .map(|p| Vector3::new(p[0], p[1], p[2])),
        ),
    }
}

/// Two cameras, as bevy_egui's side-panel example has them: the 3D camera draws into the part
/// of the window right of the panel, and a camera that draws nothing but egui (the panel and the
/// overlays) covers the whole window on top.
pub fn spawn_cameras(
    mut commands: Commands,
    playback: Res<Playback>,
    smooth: Res<SmoothCamera>,
    view: Res<CameraView>,
    antialiasing: Res<Antialiasing>,
    adapter: Option<Res<RenderAdapterInfo>>,
) {
    let msaa = antialiasing.msaa(adapter.as_deref());
    let (focus, radius) = view_framing(*view, &playback);
    let mut orbit = PanOrbitCamera {
        focus,
        radius: Some(radius),
        yaw: Some(YAW),
        pitch: Some(PITCH),
        ..default()
    };
    if !smooth.0 {
        orbit.orbit_smoothness = 0.0;
        orbit.pan_smoothness = 0.0;
        orbit.zoom_smoothness = 0.0;
    }
    // No tone mapping: the unlit cables then show exactly the legend's colours.
    commands.spawn((SceneCamera, orbit, msaa, Tonemapping::None));
    commands.spawn((
        PrimaryEguiContext,
        Camera2d,
        RenderLayers::none(),
        Camera {
            order: 1,
            output_mode: CameraOutputMode::Write {
                blend_state: Some(BlendState::ALPHA_BLENDING),
                clear_color: ClearColorConfig::None,
            },
            clear_color: ClearColorConfig::Custom(Color::NONE),
            ..default()
        },
    ));
    // One shadowed sun from above and behind the default view; cascades sized to the robot.
    let reach = 4.0 * framing(playback.robot()).1;
    commands.spawn((
        DirectionalLight {
            illuminance: 9_000.0,
            shadow_maps_enabled: true,
            ..default()
        },
        CascadeShadowConfigBuilder {
            maximum_distance: reach,
            first_cascade_far_bound: 0.5 * reach,
            num_cascades: 2,
            ..default()
        }
        .build(),
        Transform::from_xyz(0.4, 1.0, 0.3).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}

/// Whether the camera eases towards new targets (off in screenshot mode: the picture must not
/// depend on how many frames an animation had).
#[derive(Resource, Debug, Clone, Copy)]
pub struct SmoothCamera(pub bool);

/// Points the camera at `(focus, radius)` from the default direction (the `F` key, and each
/// new robot).
pub fn reframe(camera: &mut PanOrbitCamera, (focus, radius): (Vec3, f32)) {
    camera.target_focus = focus;
    camera.target_radius = radius;
    camera.target_yaw = YAW;
    camera.target_pitch = PITCH;
    camera.force_update = true;
}

pub fn reframe_on_new_robot(
    mut changed: MessageReader<RobotChanged>,
    playback: Res<Playback>,
    view: Res<CameraView>,
    mut cameras: Query<&mut PanOrbitCamera>,
) {
    if changed.read().count() == 0 {
        return;
    }
    for mut camera in &mut cameras {
        reframe(&mut camera, view_framing(*view, &playback));
    }
}

/// Keeps the 3D camera's viewport right of the panel (physical pixels).
pub fn fit_viewport(
    panel: Res<PanelState>,
    window: Single<&Window, With<PrimaryWindow>>,
    mut camera: Single<&mut Camera, With<SceneCamera>>,
) {
    let size = UVec2::new(window.physical_width(), window.physical_height());
    let left = ((panel.rect.width().max(0.0) * window.scale_factor()) as u32).min(size.x / 2);
    if size.x == 0 || size.y == 0 {
        return;
    }
    let viewport = Viewport {
        physical_position: UVec2::new(left, 0),
        physical_size: UVec2::new(size.x - left, size.y),
        ..default()
    };
    let same = camera.viewport.as_ref().is_some_and(|v| {
        v.physical_position == viewport.physical_position
            && v.physical_size == viewport.physical_size
    });
    if !same {
        camera.viewport = Some(viewport);
    }
}

/// Withholds mouse input from the orbit camera while the pointer is on the panel or egui is
/// using it. egui's own "pointer over area" is false over a panel drawn on the background
/// layer, so the panel's rectangle is tested directly. A drag keeps its owner: one begun in the
/// 3D view may cross the panel, one begun on a slider never orbits.
pub fn gate_camera_input(
    wants: Res<EguiWantsInput>,
    panel: Res<PanelState>,
    window: Single<&Window, With<PrimaryWindow>>,
    mouse: Res<ButtonInput<MouseButton>>,
    mut cameras: Query<&mut PanOrbitCamera>,
    mut drag_owned_by_camera: Local<bool>,
) {
    let over_panel = window
        .cursor_position()
        .is_some_and(|p| panel.rect.contains(egui::pos2(p.x, p.y)));
    let egui_busy = over_panel || wants.wants_any_pointer_input();
    if mouse.get_just_pressed().next().is_some() {
        *drag_owned_by_camera = !egui_busy;
    }
    let enabled = if mouse.get_pressed().next().is_some() {
        *drag_owned_by_camera
    } else {
        !egui_busy
    };
    for mut camera in &mut cameras {
        if camera.enabled != enabled {
            camera.enabled = enabled;
        }
    }
}

/// Space pause, R reset, S step, H help, F the next view (frame → path → platform), Esc quit.
#[allow(clippy::too_many_arguments)]
pub fn keyboard(
    keys: Res<ButtonInput<KeyCode>>,
    wants: Res<EguiWantsInput>,
    mut playback: ResMut<Playback>,
    mut help: ResMut<ShowHelp>,
    mut cameras: Query<&mut PanOrbitCamera>,
    mut exit: MessageWriter<AppExit>,
    mut view: ResMut<CameraView>,
) {
    if wants.wants_any_keyboard_input() {
        return; // typing into a text field
    }
    if keys.just_pressed(KeyCode::Space) {
        playback.paused = !playback.paused;
    }
    if keys.just_pressed(KeyCode::KeyR) {
        playback.stop_demo();
        if let Err(e) = playback.reset() {
            playback.error = Some(e.to_string());
        }
    }
    if keys.just_pressed(KeyCode::KeyS) && !playback.is_live() {
        playback.paused = true;
        if let Err(e) = playback.step_once() {
            playback.error = Some(e.to_string());
        }
    }
    // Replay: the arrows step one recorded sample back or forward.
    for (key, by) in [(KeyCode::ArrowLeft, -1), (KeyCode::ArrowRight, 1)] {
        if keys.just_pressed(key) && playback.is_replay() {
            playback.paused = true;
            if let Err(e) = playback.step_replay(by) {
                playback.error = Some(e.to_string());
            }
        }
    }
    if keys.just_pressed(KeyCode::KeyH) || keys.just_pressed(KeyCode::F1) {
        help.0 = !help.0;
    }
    if keys.just_pressed(KeyCode::KeyF) {
        *view = view.next();
        let target = view_framing(*view, &playback);
        for mut camera in &mut cameras {
            reframe(&mut camera, target);
        }
    }
    if keys.just_pressed(KeyCode::Escape) {
        exit.write(AppExit::Success);
    }
}

/// The window's clear colour.
pub fn background() -> ClearColor {
    ClearColor(colors::BACKGROUND)
}

/// The camera: spawned at start, moved by the keys, reframed on a new robot, fitted beside
/// the panel, and kept from taking the mouse while the panel has it.
pub struct CameraPlugin;

impl Plugin for CameraPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(background())
            .add_systems(Startup, spawn_cameras)
            .add_systems(Update, keyboard.in_set(crate::ViewerSet::Input))
            .add_systems(Update, reframe_on_new_robot.in_set(crate::ViewerSet::Frame))
            .add_systems(
                PostUpdate,
                (gate_camera_input, fit_viewport)
                    .after(bevy_egui::EguiPostUpdateSet::ProcessOutput)
                    .before(bevy_panorbit_camera::PanOrbitCameraSystemSet),
            );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multisampling_is_as_asked_and_on_where_the_renderer_is_not_known_to_be_software() {
        assert_eq!(Antialiasing::On.msaa(None), Msaa::Sample4);
        assert_eq!(Antialiasing::Off.msaa(None), Msaa::Off);
        assert_eq!(Antialiasing::Auto.msaa(None), Msaa::Sample4);
        assert_eq!(Antialiasing::default(), Antialiasing::Auto);
    }
}
