//! The 3D scene: frame, pulleys, platform with its TCP, cables coloured by tension, trails and
//! the commanded pose as a ghost. It only reads the core's state; nothing here moves anything
//! but entities.
//!
//! Robots are z-up (SI, the papers' frames), Bevy is y-up: a robot point (x, y, z) is drawn at
//! (x, z, −y), a proper rotation (−90° about x), so handedness and orientations survive.

use super::colors::{self, tension_color};
use super::playback::Playback;
use bevy::prelude::*;
use cdpr_core::kinematics::{CableGeometry, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::statics::catenary::{CableCatenary, cable_polyline};
use nalgebra::{UnitQuaternion, Vector3};

/// Robot world (z-up) → Bevy world (y-up).
pub fn to_bevy(p: &Vector3<f64>) -> Vec3 {
    Vec3::new(p.x as f32, p.z as f32, -p.y as f32)
}

fn world_rotation() -> Quat {
    Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2)
}

/// The Bevy transform of a platform frame at `pose`: children given in platform coordinates
/// (z-up) land where the robot's kinematics puts them.
pub fn pose_transform(pose: &Pose) -> Transform {
    let q = UnitQuaternion::from_rotation_matrix(&pose.rotation());
    let q = Quat::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32);
    Transform {
        translation: to_bevy(&pose.position),
        rotation: world_rotation() * q,
        scale: Vec3::ONE,
    }
}

/// A robot-axis-aligned box (centre, edge lengths) as a Bevy transform of the unit cube.
fn box_transform(center: &Vector3<f64>, size: &Vector3<f64>) -> Transform {
    Transform::from_translation(to_bevy(center)).with_scale(Vec3::new(
        size.x as f32,
        size.z as f32,
        size.y as f32,
    ))
}

/// A unit cylinder along +y (radius 1, height 1) stretched into a rod from `a` to `b`.
pub fn rod(a: Vec3, b: Vec3, radius: f32) -> Transform {
    let d = b - a;
    let length = d.length();
    let rotation = if length > 1e-6 {
        Quat::from_rotation_arc(Vec3::Y, d / length)
    } else {
        Quat::IDENTITY
    };
    Transform {
        translation: (a + b) * 0.5,
        rotation,
        scale: Vec3::new(radius, length.max(1e-4), radius),
    }
}

/// Sizes that scale with the robot: CAROCA's frame is 7 m long, silva4's platform 8 cm.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// Diagonal of the frame box, m.
    pub diagonal: f32,
    pub cable_radius: f32,
    pub pulley_radius: f32,
    pub tcp_radius: f32,
}

impl Scale {
    /// Core's sizes ([`cdpr_core::colors::SceneSizes`]) as Bevy's.
    pub fn of(robot: &Robot) -> Scale {
        let s =
            cdpr_core::colors::SceneSizes::of(robot.frame.size().norm(), robot.platform.size.min());
        Scale {
            diagonal: s.diagonal as f32,
            cable_radius: s.cable_radius as f32,
            pulley_radius: s.pulley_radius as f32,
            tcp_radius: s.tcp_radius as f32,
        }
    }
}

/// The platform's box in the platform's frame: a unit cube scaled and moved to it.
fn platform_box(platform: &cdpr_core::robot::Platform) -> Transform {
    Transform::from_translation(Vec3::new(
        platform.box_center.x as f32,
        platform.box_center.y as f32,
        platform.box_center.z as f32,
    ))
    .with_scale(Vec3::new(
        platform.size.x as f32,
        platform.size.y as f32,
        platform.size.z as f32,
    ))
}

/// Everything spawned for one robot (despawned when the robot changes).
#[derive(Component)]
pub struct SceneEntity;
#[derive(Component)]
pub struct PlatformRoot;
#[derive(Component)]
pub struct CableRod(pub usize);

/// Which run the spawned scene belongs to.
#[derive(Resource, Default)]
pub struct SpawnedFor {
    pub robot: Option<Robot>,
}

/// Display toggles (panel and keyboard).
#[derive(Resource, Debug, Clone)]
pub struct DisplayOptions {
    pub show_trails: bool,
    pub show_ghost: bool,
    pub show_workspace: bool,
}

impl Default for DisplayOptions {
    fn default() -> Self {
        DisplayOptions {
            show_trails: true,
            show_ghost: true,
            show_workspace: true,
        }
    }
}

/// The colour scale's upper bound, N (the legend reads it).
#[derive(Resource, Debug, Clone, Copy)]
pub struct TensionScale(pub f64);

/// Spawns the robot's entities when the run's robot differs from the drawn one. Returns
/// through `changed` whether it did, so the camera can re-frame.
#[allow(clippy::too_many_arguments)]
pub fn respawn_robot(
    mut commands: Commands,
    playback: Res<Playback>,
    mut spawned: ResMut<SpawnedFor>,
    old: Query<Entity, With<SceneEntity>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut changed: MessageWriter<RobotChanged>,
) {
    let robot = playback.robot();
    if spawned.robot.as_ref() == Some(robot) {
        return;
    }
    for entity in &old {
        commands.entity(entity).despawn();
    }
    let scale = Scale::of(robot);
    let frame = robot.frame;
    // Ground: a floor under the frame, a bit larger than it.
    let floor = frame.size() * 1.6;
    commands.spawn((
        SceneEntity,
        Mesh3d(
            meshes.add(
                Plane3d::default()
                    .mesh()
                    .size(floor.x as f32, floor.y as f32),
            ),
        ),
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: colors::GROUND_COLOR,
            perceptual_roughness: 0.95,
            ..default()
        })),
        Transform::from_translation(to_bevy(&Vector3::new(
            frame.center().x,
            frame.center().y,
            frame.min.z,
        ))),
    ));
    // Pulleys: the cables' exit points a_i.
    let pulley = meshes.add(Sphere::new(scale.pulley_radius));
    let pulley_material = materials.add(StandardMaterial {
        base_color: colors::PULLEY_COLOR,
        metallic: 0.3,
        ..default()
    });
    for cable in &robot.cables {
        commands.spawn((
            SceneEntity,
            Mesh3d(pulley.clone()),
            MeshMaterial3d(pulley_material.clone()),
            Transform::from_translation(to_bevy(&cable.frame_anchor)),
        ));
    }
    // Platform: its box and the TCP (the platform frame's origin, the pose's point).
    let platform = &robot.platform;
    commands
        .spawn((
            SceneEntity,
            PlatformRoot,
            pose_transform(&playback.state().pose),
            Visibility::default(),
        ))
        .with_children(|parent| {
            parent.spawn((
                Mesh3d(meshes.add(Cuboid::new(
                    platform.size.x as f32,
                    platform.size.y as f32,
                    platform.size.z as f32,
                ))),
                MeshMaterial3d(materials.add(StandardMaterial {
                    base_color: colors::PLATFORM_COLOR,
                    metallic: 0.1,
                    perceptual_roughness: 0.6,
                    ..default()
                })),
                Transform::from_translation(Vec3::new(
                    platform.box_center.x as f32,
                    platform.box_center.y as f32,
                    platform.box_center.z as f32,
                )),
            ));
            parent.spawn((
                Mesh3d(meshes.add(Sphere::new(scale.tcp_radius))),
                MeshMaterial3d(materials.add(StandardMaterial {
                    base_color: colors::TCP_COLOR,
                    unlit: true,
                    ..default()
                })),
                Transform::default(),
            ));
        });
    // Cables: one shared unit cylinder, one unlit material each (its colour is the legend's).
    let cylinder = meshes.add(Cylinder::new(1.0, 1.0));
    for (index, _) in robot.cables.iter().enumerate() {
        commands.spawn((
            SceneEntity,
            CableRod(index),
            Mesh3d(cylinder.clone()),
            MeshMaterial3d(materials.add(StandardMaterial {
                base_color: colors::SLACK_COLOR,
                unlit: true,
                ..default()
            })),
            Transform::default(),
        ));
    }
    spawned.robot = Some(robot.clone());
    changed.write(RobotChanged);
}

/// Sent when a new robot's scene was spawned.
#[derive(Message, Debug, Clone, Copy)]
pub struct RobotChanged;

/// Moves the platform and the cables to the core's current state and colours the cables.
pub fn sync_scene(
    playback: Res<Playback>,
    mut scale: ResMut<TensionScale>,
    mut platform: Query<&mut Transform, (With<PlatformRoot>, Without<CableRod>)>,
    mut cables: Query<
        (&CableRod, &mut Transform, &MeshMaterial3d<StandardMaterial>),
        Without<PlatformRoot>,
    >,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let robot = playback.robot();
    let state = playback.state();
    let sizes = Scale::of(robot);
    let bound = colors::nice_ceil(playback.history.peak_tension);
    if bound != scale.0 {
        scale.0 = bound;
    }
    for mut transform in &mut platform {
        *transform = pose_transform(&state.pose);
    }
    let world_from_platform = state.pose.world_from_platform();
    let rotation = state.pose.rotation();
    for (rod_of, mut transform, material) in &mut cables {
        let Some(cable) = robot.cables.get(rod_of.0) else {
            continue;
        };
        let tension = state.tensions.get(rod_of.0).copied().unwrap_or(0.0);
        let anchor = (world_from_platform * nalgebra::Point3::from(cable.platform_anchor)).coords;
        // Over a pulley the straight rod starts where the cable leaves the wheel; the arc over
        // the wheel and a cable with mass (drawn as its catenary, no rod) are
        // [`draw_cable_curves`]' lines.
        let geometry = CableGeometry::new(cable, &state.pose.position, rotation.matrix());
        let a = to_bevy(&geometry.exit_point(&anchor));
        let b = to_bevy(&anchor);
        // Slack cables are drawn at a third of the radius as well as grey.
        let radius = if cable.mass_per_length > 0.0 {
            0.0
        } else if colors::is_slack(tension) {
            sizes.cable_radius / 3.0
        } else {
            sizes.cable_radius
        };
        *transform = rod(a, b, radius);
        let color = tension_color(tension, scale.0);
        if let Some(mut m) = materials.get_mut(&material.0)
            && m.base_color != color
        {
            m.base_color = color;
        }
    }
}

/// The parts of a cable a straight rod cannot show: the arc over its swivel pulley and, for a
/// cable with mass, its catenary (core's [`cable_polyline`] at the shown tension; straight when
/// no catenary carries that tension), in the cable's tension colour. Draws only: the physics
/// never sees it.
pub fn draw_cable_curves(mut gizmos: Gizmos, playback: Res<Playback>, scale: Res<TensionScale>) {
    let robot = playback.robot();
    let state = playback.state();
    let world_from_platform = state.pose.world_from_platform();
    let rotation = state.pose.rotation();
    for (k, cable) in robot.cables.iter().enumerate() {
        if cable.pulley.is_none() && cable.mass_per_length <= 0.0 {
            continue;
        }
        let tension = state.tensions.get(k).copied().unwrap_or(0.0);
        let anchor = (world_from_platform * nalgebra::Point3::from(cable.platform_anchor)).coords;
        let geometry = CableGeometry::new(cable, &state.pose.position, rotation.matrix());
        let catenary = (cable.mass_per_length > 0.0)
            .then(|| CableCatenary::for_tension(cable, &geometry, &anchor, tension).ok())
            .flatten();
        let points = cable_polyline(cable, &geometry, &anchor, catenary.as_ref(), 12, 32);
        let end = if catenary.is_some() || cable.mass_per_length > 0.0 {
            points.len()
        } else {
            // The free segment is the rod.
            points.len().saturating_sub(1)
        };
        gizmos.linestrip(
            points[..end].iter().map(to_bevy),
            tension_color(tension, scale.0),
        );
    }
}

/// Lines drawn every frame: the frame box, the workspace, the trails, the ghost, TCP axes.
/// The trails' gizmos, drawn over the meshes (a negative depth bias): the path runs under the
/// platform box, which would otherwise hide it.
#[derive(Default, Reflect, GizmoConfigGroup)]
pub struct TrailGizmos;

/// Their configuration: every line in front of the meshes.
pub fn trail_gizmo_config() -> GizmoConfig {
    GizmoConfig {
        depth_bias: -1.0,
        ..default()
    }
}

pub fn draw_gizmos(
    mut gizmos: Gizmos,
    mut trails: Gizmos<TrailGizmos>,
    playback: Res<Playback>,
    display: Res<DisplayOptions>,
) {
    let robot = playback.robot();
    let frame = robot.frame;
    gizmos.cube(
        box_transform(&frame.center(), &frame.size()),
        colors::FRAME_COLOR,
    );
    if display.show_workspace {
        let w = robot.workspace;
        gizmos.cube(
            box_transform(&w.center(), &w.size()),
            colors::WORKSPACE_COLOR,
        );
    }
    let history = &playback.history;
    if display.show_trails {
        let path = |q: &std::collections::VecDeque<[f64; 3]>| {
            q.iter()
                .map(|p| to_bevy(&Vector3::new(p[0], p[1], p[2])))
                .collect::<Vec<_>>()
        };
        if history.commanded_path.len() >= 2 {
            trails.linestrip(path(&history.commanded_path), colors::COMMANDED_TRAIL);
        }
        if history.actual_path.len() >= 2 {
            trails.linestrip(path(&history.actual_path), colors::ACTUAL_TRAIL);
        }
    }
    let sizes = Scale::of(robot);
    if display.show_ghost {
        let ghost = pose_transform(playback.commanded());
        gizmos.cube(
            ghost.mul_transform(platform_box(&robot.platform)),
            colors::GHOST_COLOR,
        );
    }
    // Replay with --compare: the second run at the same time, its platform box and its
    // cables as lines (its own robot: two models may differ in geometry).
    if let Some((other, state)) = playback.compare() {
        let local = platform_box(&other.platform);
        gizmos.cube(
            pose_transform(&state.pose).mul_transform(local),
            colors::COMPARE_COLOR,
        );
        let world_from_platform = state.pose.world_from_platform();
        for cable in &other.cables {
            let a = to_bevy(&cable.frame_anchor);
            let b = to_bevy(
                &(world_from_platform * nalgebra::Point3::from(cable.platform_anchor)).coords,
            );
            gizmos.line(a, b, colors::COMPARE_COLOR);
        }
    }
    // Robots with legs: each leg through its joints (a cable robot has none; its cables are
    // the rods spawned above).
    let legs = playback
        .driver()
        .map(|d| d.sim().leg_polylines())
        .unwrap_or_default();
    for leg in legs {
        let points: Vec<Vec3> = leg.iter().map(to_bevy).collect();
        for p in &points {
            gizmos.sphere(*p, sizes.pulley_radius, colors::PULLEY_COLOR);
        }
        if points.len() >= 2 {
            gizmos.linestrip(points, colors::LEG_COLOR);
        }
    }
    // TCP axes (x red, y green, z blue in the platform frame).
    let tcp = pose_transform(&playback.state().pose);
    gizmos.axes(tcp, 4.0 * sizes.tcp_radius.max(0.01 * sizes.diagonal));
}

/// The 3D scene: the robot's entities respawned on a change and synced to the playback each
/// frame, its gizmos (trails, cables coloured by tension) drawn.
pub struct ScenePlugin;

impl Plugin for ScenePlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(SpawnedFor::default())
            .insert_resource(DisplayOptions::default())
            .insert_resource(TensionScale(1.0))
            .add_message::<RobotChanged>()
            .insert_gizmo_config(TrailGizmos, trail_gizmo_config())
            .add_systems(Update, respawn_robot.in_set(crate::ViewerSet::Spawn))
            .add_systems(Update, sync_scene.in_set(crate::ViewerSet::Sync))
            .add_systems(
                Update,
                (draw_gizmos, draw_cable_curves)
                    .chain()
                    .in_set(crate::ViewerSet::Draw),
            );
    }
}
