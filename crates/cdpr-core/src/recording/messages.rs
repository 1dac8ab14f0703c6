//! What a run looks like to Foxglove, Lichtblick and PlotJuggler: the topics and frame ids of
//! every recording and live view, the typed per-step sample ([`RunSample`], the CSV's numbers),
//! the shadow's cycle statistics ([`ShadowCycle`]) and the 3D scene built from the robot and a
//! state ([`scene_update`], [`platform_transform`]) in the Foxglove schemas, so that the tools
//! show the robot with no setup.
//!
//! Every face (the MCAP recorder, the shadow's live view) builds its messages here, so a
//! recording and a live view of the same run carry the same messages.

use crate::colors;
use crate::kinematics::{CableGeometry, Pose};
use crate::robot::Robot;
use crate::run::{Record, RecordLayout};
use foxglove::messages::{
    Color, CubePrimitive, FrameTransform, LinePrimitive, Point3, Quaternion, SceneEntity,
    SceneUpdate, SpherePrimitive, Timestamp, Vector3, line_primitive,
};
use nalgebra::{Isometry3, UnitQuaternion, Vector3 as V3};

/// The 3D scene ([`SceneUpdate`]): frame, pulleys, platform, cables coloured by tension.
pub const SCENE_TOPIC: &str = "/scene";
/// The platform's pose ([`FrameTransform`] world → platform).
pub const TF_TOPIC: &str = "/tf";
/// One [`RunSample`] per recorded step: the CSV's numbers, typed.
pub const RUN_TOPIC: &str = "/run";
/// The shadow's cycle statistics ([`ShadowCycle`]), about once per second.
pub const SHADOW_CYCLE_TOPIC: &str = "/shadow/cycle";

/// The fixed frame: the robot's frame (anchors, pulleys) is given in it.
pub const WORLD_FRAME: &str = "world";
/// The platform's frame: origin at the pose's position, axes rotated by R(roll, pitch, yaw).
pub const PLATFORM_FRAME: &str = "platform";

/// Scenes per second of simulated time at most. Foxglove and Lichtblick draw about 30 frames a
/// second, so a denser scene is never seen, and a scene (every primitive of the robot) is ~20×
/// a sample: at 1 kHz it would make up most of the file. `/run` and `/tf` keep every step.
pub const SCENE_RATE_HZ: f64 = 30.0;

/// Nanoseconds of simulated time `t` (s), the log time of every message of a run: recordings
/// are on the simulation's clock, never the wall clock (a replay is then independent of how
/// fast the run was computed). Negative or non-finite times give 0.
pub fn time_ns(t: f64) -> u64 {
    if t.is_finite() && t > 0.0 {
        (t * 1e9).round() as u64
    } else {
        0
    }
}

/// Simulated time `t` (s) as a Foxglove timestamp (see [`time_ns`]).
pub fn timestamp(t: f64) -> Timestamp {
    let ns = time_ns(t);
    let sec = u32::try_from(ns / 1_000_000_000).unwrap_or(u32::MAX);
    Timestamp::new(sec, (ns % 1_000_000_000) as u32)
}

/// One step of a run, as the CSV's row: the same numbers in typed fields (PlotJuggler plots
/// each field, Foxglove's plot panel takes `/run.tension[0]`). Fields follow
/// [`RecordLayout::columns`]; the vectors of a cable robot's legs are empty and vice versa.
///
/// On the wire the protobuf message `runsample.RunSample` (`super::run_sample_protobuf`),
/// whose fields carry explicit numbers: the order here is free, a new field takes the next
/// unused number there, and a number is never reused.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunSample {
    /// Simulated time, s.
    pub t: f64,
    /// Commanded pose: x, y, z (m), roll, pitch, yaw (rad), R = Rz(yaw)·Ry(pitch)·Rx(roll).
    pub pose_cmd: [f64; 6],
    /// Actual pose, same convention.
    pub pose: [f64; 6],
    /// Per cable: commanded payout (or the IK length of the commanded pose), m.
    pub length_cmd: Vec<f64>,
    /// Per cable: geometric length, m.
    pub length: Vec<f64>,
    /// Per cable: tension, N.
    pub tension: Vec<f64>,
    /// Robots with legs, per actuator: commanded position (m or rad).
    pub actuator_cmd: Vec<f64>,
    /// Robots with legs, per actuator: position (m or rad).
    pub actuator: Vec<f64>,
    /// Robots with legs, per leg: length, m.
    pub leg_length: Vec<f64>,
    /// Robots with legs, per leg: axial force, N.
    pub leg_force: Vec<f64>,
    /// The trajectory segment being played ("" outside any).
    pub segment: String,
    /// A face's own columns after `segment` (the shadow's `plc_cycle`, `enable`,
    /// `rejected`, `gap`), named in the recording's metadata.
    pub extra: Vec<f64>,
    /// Robots with pulley friction, per cable: tension on the winch side of the pulley, N
    /// (empty otherwise).
    pub winch_tension: Vec<f64>,
    /// Robots with drives, per drive: motor torque (N·m), motor velocity (rad/s), following
    /// error (m) (empty otherwise).
    pub motor_torque: Vec<f64>,
    pub motor_velocity: Vec<f64>,
    pub following_error: Vec<f64>,
}

impl RunSample {
    /// The sample of `r` in a run laid out as `layout`, segment named from `segment_names`
    /// (the source trajectory's), with a face's `extra` column values. Numbers are taken
    /// through [`RecordLayout::numbers`], the CSV writer's own walk, so the sample carries
    /// exactly the CSV's numbers.
    pub fn from_record(
        layout: &RecordLayout,
        r: &Record<'_>,
        segment_names: &[String],
        extra: &[f64],
    ) -> RunSample {
        let mut numbers = Vec::with_capacity(layout_width(layout));
        let _ = layout.numbers(r, &mut |v| {
            numbers.push(v);
            Ok::<(), std::convert::Infallible>(())
        });
        let segment = r
            .commanded
            .segment
            .and_then(|k| segment_names.get(k))
            .cloned()
            .unwrap_or_default();
        RunSample::from_numbers(layout, &numbers, segment, extra)
    }

    /// The sample of one row's numeric columns (`numbers`, in [`RecordLayout::columns`]'
    /// order, as a CSV row gives them), its segment and extra values. Missing numbers read as
    /// NaN (a short row stays visible rather than shifting every later column).
    pub fn from_numbers(
        layout: &RecordLayout,
        numbers: &[f64],
        segment: String,
        extra: &[f64],
    ) -> RunSample {
        let mut it = numbers.iter().copied();
        let mut next = || it.next().unwrap_or(f64::NAN);
        let t = next();
        let pose_cmd = std::array::from_fn(|_| next());
        let pose = std::array::from_fn(|_| next());
        let mut s = RunSample {
            t,
            pose_cmd,
            pose,
            segment,
            extra: extra.to_vec(),
            ..RunSample::default()
        };
        for _ in 0..layout.cables() {
            s.length_cmd.push(next());
            s.length.push(next());
            s.tension.push(next());
        }
        for _ in 0..layout.actuators() {
            s.actuator_cmd.push(next());
            s.actuator.push(next());
        }
        for _ in 0..layout.legs() {
            s.leg_length.push(next());
            s.leg_force.push(next());
        }
        if layout.winch_side() {
            for _ in 0..layout.cables() {
                s.winch_tension.push(next());
            }
        }
        for _ in 0..layout.drives() {
            s.motor_torque.push(next());
            s.motor_velocity.push(next());
            s.following_error.push(next());
        }
        s
    }

    /// The numeric columns, in [`RecordLayout::columns`]' order (what a CSV row holds before
    /// `segment`): the inverse of [`RunSample::from_numbers`].
    pub fn numbers(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(
            13 + 3 * self.tension.len() + 2 * self.actuator.len() + 2 * self.leg_force.len(),
        );
        out.push(self.t);
        out.extend(self.pose_cmd);
        out.extend(self.pose);
        for i in 0..self.tension.len() {
            out.extend([self.length_cmd[i], self.length[i], self.tension[i]]);
        }
        for i in 0..self.actuator.len() {
            out.extend([self.actuator_cmd[i], self.actuator[i]]);
        }
        for i in 0..self.leg_force.len() {
            out.extend([self.leg_length[i], self.leg_force[i]]);
        }
        out.extend(&self.winch_tension);
        for i in 0..self.motor_torque.len() {
            out.extend([
                self.motor_torque[i],
                self.motor_velocity[i],
                self.following_error[i],
            ]);
        }
        out
    }
}

/// Numeric columns of `layout`.
fn layout_width(layout: &RecordLayout) -> usize {
    13 + 3 * layout.cables()
        + 2 * layout.actuators()
        + 2 * layout.legs()
        + if layout.winch_side() {
            layout.cables()
        } else {
            0
        }
        + 3 * layout.drives()
}

/// The shadow's cycle statistics since it started, as it reports them at its end, sent about
/// once a second: a late cycle or a missed PLC cycle can be found on the timeline.
#[derive(Debug, Clone, PartialEq, Default, foxglove::Encode)]
pub struct ShadowCycle {
    /// Simulated time of the shadow's last step, s.
    pub t: f64,
    /// Exchanges so far (read, physics, write).
    pub cycles: u64,
    /// One exchange (read + physics + write): median, 99th percentile and maximum, s.
    pub exchange_p50_s: f64,
    pub exchange_p99_s: f64,
    pub exchange_max_s: f64,
    /// Lockstep: PLC cycles that passed between two reads.
    pub missed_plc_cycles: u64,
    /// Free-running cycles that started more than half a period late.
    pub overruns: u64,
    /// Physics steps skipped because the shadow fell too far behind.
    pub skipped_steps: u64,
    /// Samples refused (non-finite, or a jump beyond the winch limits).
    pub rejected: u64,
    /// Re-synchronisations (each a gap in the record).
    pub gaps: u64,
    /// When the controller gives its drives' actual torques, per drive: the shadow's
    /// prediction error so far (RMS and max, N·m; RMS in % of rated) and the lag that best
    /// aligns the two, s (empty otherwise).
    pub torque_error_rms_nm: Vec<f64>,
    pub torque_error_max_nm: Vec<f64>,
    pub torque_error_rms_percent: Vec<f64>,
    pub torque_best_lag_s: Vec<f64>,
}

/// The platform's pose at `t` as the transform world → platform.
pub fn platform_transform(pose: &Pose, t: f64) -> FrameTransform {
    FrameTransform {
        timestamp: Some(timestamp(t)),
        parent_frame_id: WORLD_FRAME.into(),
        child_frame_id: PLATFORM_FRAME.into(),
        translation: Some(vector(&pose.position)),
        rotation: Some(quaternion(pose)),
    }
}

/// The rotation of `pose` as a Foxglove quaternion.
fn quaternion(pose: &Pose) -> Quaternion {
    let q = UnitQuaternion::from_rotation_matrix(&pose.rotation());
    Quaternion {
        x: q.i,
        y: q.j,
        z: q.k,
        w: q.w,
    }
}

fn vector(v: &V3<f64>) -> Vector3 {
    Vector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

fn point(v: &V3<f64>) -> Point3 {
    Point3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

fn color(rgb: [f32; 3]) -> Color {
    Color {
        r: f64::from(rgb[0]),
        g: f64::from(rgb[1]),
        b: f64::from(rgb[2]),
        a: 1.0,
    }
}

/// The colour of a cable at `tension` on a scale up to `tension_bound` (N): grey when slack.
pub fn cable_color(tension: f64, tension_bound: f64) -> [f32; 3] {
    if colors::is_slack(tension) {
        colors::SLACK_RGB
    } else {
        colors::scale_color(tension / tension_bound)
    }
}

/// The frame box's edges, a fraction of its diagonal (the viewer draws them as hairlines; the
/// other sizes are [`colors::SceneSizes`]).
const FRAME_THICKNESS: f64 = 0.002;

/// Entity ids of the scene (stable: each update replaces the previous one's entities).
pub const FRAME_ENTITY: &str = "frame";
pub const PLATFORM_ENTITY: &str = "platform";
pub const CABLES_ENTITY: &str = "cables";

/// Segments of a pulley wheel's circle in the scene.
const WHEEL_SEGMENTS: usize = 32;

/// The scene of `robot` at `pose` with cable `tensions` (N) coloured on a scale up to
/// `tension_bound` (N, e.g. [`colors::nice_ceil`] of the run's largest tension), at `t`:
/// entity [`FRAME_ENTITY`] (the frame box's 12 edges as a line list, a sphere per pulley, i.e.
/// per frame anchor a_i, and for a robot with swivel pulleys one closed line strip per wheel,
/// turned to the pose), [`PLATFORM_ENTITY`] (the platform box as a cube at the pose) and
/// [`CABLES_ENTITY`] (line i from a_i — over a swivel pulley from the tangent point where the
/// cable leaves the wheel — to r + R·b_i, in the cable's colour). All in [`WORLD_FRAME`], so
/// the scene needs no transform to be drawn.
///
/// Robots with legs: the frame box and the platform only (their legs are not drawn; the
/// `/run` samples carry the leg lengths and forces). `tensions` is then ignored.
pub fn scene_update(
    robot: &Robot,
    pose: &Pose,
    tensions: &[f64],
    tension_bound: f64,
    t: f64,
) -> SceneUpdate {
    let sizes = colors::SceneSizes::of(robot.frame.size().norm(), robot.platform.size.min());
    let stamp = Some(timestamp(t));
    let entity = |id: &str| SceneEntity {
        timestamp: stamp,
        frame_id: WORLD_FRAME.into(),
        id: id.into(),
        ..SceneEntity::default()
    };
    let world_from_platform = pose.world_from_platform();
    let rotation = pose.rotation();
    let geometry: Vec<CableGeometry> = robot
        .cables
        .iter()
        .map(|c| CableGeometry::new(c, &pose.position, rotation.matrix()))
        .collect();

    let mut frame = entity(FRAME_ENTITY);
    frame.lines.push(frame_edges(robot, sizes.diagonal));
    frame.spheres = pulley_spheres(robot, sizes.pulley_radius);
    frame
        .lines
        .extend(wheel_circles(robot, &geometry, sizes.diagonal));
    let mut platform = entity(PLATFORM_ENTITY);
    platform
        .cubes
        .push(platform_cube(robot, pose, &world_from_platform));
    let mut cables = entity(CABLES_ENTITY);
    if robot.is_cable_robot() {
        cables.lines = cable_lines(
            robot,
            &world_from_platform,
            &geometry,
            tensions,
            tension_bound,
            sizes.cable_radius,
        );
    }

    SceneUpdate {
        deletions: Vec::new(),
        entities: vec![frame, platform, cables],
    }
}

/// The frame box's 12 edges as one line list, for a frame of diagonal `diagonal` (m).
fn frame_edges(robot: &Robot, diagonal: f64) -> LinePrimitive {
    let (lo, hi) = (robot.frame.min, robot.frame.max);
    let corner = |k: usize| {
        V3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        )
    };
    let mut edges = Vec::with_capacity(24);
    for k in 0..8usize {
        for bit in [1, 2, 4] {
            if k & bit == 0 {
                edges.push(point(&corner(k)));
                edges.push(point(&corner(k | bit)));
            }
        }
    }
    LinePrimitive {
        r#type: line_primitive::Type::LineList as i32,
        thickness: FRAME_THICKNESS * diagonal,
        points: edges,
        color: Some(color(colors::FRAME_RGB)),
        ..LinePrimitive::default()
    }
}

/// A sphere of radius `pulley_radius` (m) per pulley, i.e. per frame anchor.
fn pulley_spheres(robot: &Robot, pulley_radius: f64) -> Vec<SpherePrimitive> {
    let pulley = 2.0 * pulley_radius;
    robot
        .cables
        .iter()
        .map(|cable| SpherePrimitive {
            pose: Some(foxglove::messages::Pose {
                position: Some(vector(&cable.frame_anchor)),
                orientation: Some(Quaternion {
                    w: 1.0,
                    ..Quaternion::default()
                }),
            }),
            size: Some(Vector3 {
                x: pulley,
                y: pulley,
                z: pulley,
            }),
            color: Some(color(colors::PULLEY_RGB)),
        })
        .collect()
}

/// Swivel pulleys: each wheel as a closed circle in its plane at this pose (it swivels with the
/// platform), in the pulley colour.
fn wheel_circles(robot: &Robot, geometry: &[CableGeometry], diagonal: f64) -> Vec<LinePrimitive> {
    let mut wheels = Vec::new();
    for (cable, g) in robot.cables.iter().zip(geometry) {
        let (Some(p), Some(wheel)) = (&cable.pulley, &g.pulley) else {
            continue;
        };
        wheels.push(LinePrimitive {
            r#type: line_primitive::Type::LineStrip as i32,
            thickness: 0.5 * FRAME_THICKNESS * diagonal,
            points: (0..=WHEEL_SEGMENTS)
                .map(|k| {
                    let phi = std::f64::consts::TAU * k as f64 / WHEEL_SEGMENTS as f64;
                    let on_rim =
                        wheel.center + (wheel.radial * phi.cos() + p.axis * phi.sin()) * p.radius;
                    point(&on_rim)
                })
                .collect(),
            color: Some(color(colors::PULLEY_RGB)),
            ..LinePrimitive::default()
        });
    }
    wheels
}

/// The platform box as a cube at the pose.
fn platform_cube(
    robot: &Robot,
    pose: &Pose,
    world_from_platform: &Isometry3<f64>,
) -> CubePrimitive {
    CubePrimitive {
        pose: Some(foxglove::messages::Pose {
            position: Some(vector(
                &(world_from_platform * nalgebra::Point3::from(robot.platform.box_center)).coords,
            )),
            orientation: Some(quaternion(pose)),
        }),
        size: Some(vector(&robot.platform.size)),
        color: Some(color(colors::PLATFORM_RGB)),
    }
}

/// Per cable its free segment as a line in the colour of its tension (NaN when `tensions` is
/// short of it).
fn cable_lines(
    robot: &Robot,
    world_from_platform: &Isometry3<f64>,
    geometry: &[CableGeometry],
    tensions: &[f64],
    tension_bound: f64,
    cable_radius: f64,
) -> Vec<LinePrimitive> {
    let mut lines = Vec::with_capacity(robot.cables.len());
    for (i, (cable, g)) in robot.cables.iter().zip(geometry).enumerate() {
        let end = world_from_platform * nalgebra::Point3::from(cable.platform_anchor);
        let tension = tensions.get(i).copied().unwrap_or(f64::NAN);
        // The free segment: from the exit point (the frame anchor, or where the cable leaves
        // its pulley) to the platform anchor.
        let start = g.pulley.map_or(cable.frame_anchor, |p| p.tangent);
        lines.push(LinePrimitive {
            r#type: line_primitive::Type::LineStrip as i32,
            thickness: 2.0 * cable_radius,
            points: vec![point(&start), point(&end.coords)],
            color: Some(color(cable_color(tension, tension_bound))),
            ..LinePrimitive::default()
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimState;
    use crate::trajectory::Sample;

    fn p(v: &Point3) -> [f64; 3] {
        [v.x, v.y, v.z]
    }

    /// R = Rz(yaw)·Ry(pitch)·Rx(roll) written out by hand (not through nalgebra).
    fn rotation_by_hand(roll: f64, pitch: f64, yaw: f64) -> [[f64; 3]; 3] {
        let (sr, cr) = roll.sin_cos();
        let (sp, cp) = pitch.sin_cos();
        let (sy, cy) = yaw.sin_cos();
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    }

    fn apply(m: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
        std::array::from_fn(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
    }

    /// v rotated by the unit quaternion q: v + 2w(u×v) + 2u×(u×v), u = (x, y, z).
    fn rotate_by_quaternion(q: &Quaternion, v: [f64; 3]) -> [f64; 3] {
        let u = [q.x, q.y, q.z];
        let cross = |a: [f64; 3], b: [f64; 3]| {
            [
                a[1] * b[2] - a[2] * b[1],
                a[2] * b[0] - a[0] * b[2],
                a[0] * b[1] - a[1] * b[0],
            ]
        };
        let uv = cross(u, v);
        let uuv = cross(u, uv);
        std::array::from_fn(|k| v[k] + 2.0 * q.w * uv[k] + 2.0 * uuv[k])
    }

    fn close(a: [f64; 3], b: [f64; 3], tol: f64) -> bool {
        (0..3).all(|k| (a[k] - b[k]).abs() <= tol)
    }

    const POSE: [f64; 6] = [0.02, -0.03, 0.05, 0.1, -0.2, 0.3];

    #[test]
    fn the_transform_rotates_as_the_pose_convention_says() {
        let pose = Pose::from_array(POSE);
        let tf = platform_transform(&pose, 1.25);
        assert_eq!(
            (tf.parent_frame_id.as_str(), tf.child_frame_id.as_str()),
            ("world", "platform")
        );
        let t = tf.translation.expect("translation");
        assert_eq!([t.x, t.y, t.z], [POSE[0], POSE[1], POSE[2]]);
        let stamp = tf.timestamp.expect("timestamp");
        assert_eq!((stamp.sec(), stamp.nsec()), (1, 250_000_000));
        let q = tf.rotation.expect("rotation");
        let norm = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
        assert!((norm - 1.0).abs() < 1e-12, "|q| = {norm}");
        let m = rotation_by_hand(POSE[3], POSE[4], POSE[5]);
        for v in [
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.3, -2.0, 0.7],
        ] {
            let (a, b) = (rotate_by_quaternion(&q, v), apply(&m, v));
            assert!(close(a, b, 1e-12), "{v:?}: quaternion {a:?}, R {b:?}");
        }
    }

    #[test]
    fn cables_run_from_the_frame_anchor_to_the_moved_platform_anchor_in_their_colour() {
        let robot = crate::fixtures::robot("uvigo8");
        let pose = Pose::from_array(POSE);
        let n = robot.cable_count();
        assert_eq!(n, 8);
        // A slack cable, one at the scale's top and beyond it, the others in between.
        let tensions: Vec<f64> = (0..n)
            .map(|i| match i {
                0 => 0.0,
                1 => 50.0,
                2 => 80.0,
                _ => 10.0 * i as f64,
            })
            .collect();
        let scene = scene_update(&robot, &pose, &tensions, 50.0, 2.0);
        let ids: Vec<&str> = scene.entities.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["frame", "platform", "cables"]);
        assert!(scene.entities.iter().all(|e| e.frame_id == "world"));
        let cables = &scene.entities[2];
        assert_eq!(cables.lines.len(), n);
        let m = rotation_by_hand(POSE[3], POSE[4], POSE[5]);
        for (i, (line, cable)) in cables.lines.iter().zip(&robot.cables).enumerate() {
            let a = cable.frame_anchor;
            let b = cable.platform_anchor;
            let rb = apply(&m, [b.x, b.y, b.z]);
            let end = [POSE[0] + rb[0], POSE[1] + rb[1], POSE[2] + rb[2]];
            assert_eq!(line.points.len(), 2);
            assert_eq!(p(&line.points[0]), [a.x, a.y, a.z], "cable {i}");
            assert!(
                close(p(&line.points[1]), end, 1e-12),
                "cable {i}: {:?} against {end:?}",
                p(&line.points[1])
            );
            let c = line.color.expect("colour");
            let rgb = [c.r as f32, c.g as f32, c.b as f32];
            let expected = match i {
                0 => colors::SLACK_RGB,
                1 | 2 => colors::STOPS[colors::STOPS.len() - 1],
                _ => colors::scale_color(10.0 * i as f64 / 50.0),
            };
            // Within f32 rounding of the stop (the scale interpolates in f32).
            assert!(
                (0..3).all(|k| (rgb[k] - expected[k]).abs() < 1e-6),
                "cable {i} at {} N: {rgb:?} against {expected:?}",
                tensions[i]
            );
        }
        // Pulleys at the frame anchors, the platform box centred at r + R·c.
        let frame = &scene.entities[0];
        assert_eq!(frame.spheres.len(), n);
        for (s, cable) in frame.spheres.iter().zip(&robot.cables) {
            let at = s.pose.as_ref().and_then(|q| q.position).expect("position");
            let a = cable.frame_anchor;
            assert_eq!([at.x, at.y, at.z], [a.x, a.y, a.z]);
        }
        assert_eq!(frame.lines[0].points.len(), 24, "12 edges");
        let cube = &scene.entities[1].cubes[0];
        let c = robot.platform.box_center;
        let rc = apply(&m, [c.x, c.y, c.z]);
        let at = cube
            .pose
            .as_ref()
            .and_then(|q| q.position)
            .expect("position");
        assert!(close(
            [at.x, at.y, at.z],
            [POSE[0] + rc[0], POSE[1] + rc[1], POSE[2] + rc[2]],
            1e-12
        ));
        let size = cube.size.expect("size");
        let s = robot.platform.size;
        assert_eq!([size.x, size.y, size.z], [s.x, s.y, s.z]);
    }

    #[test]
    fn over_pulleys_cables_start_where_they_leave_the_wheel_and_the_wheels_are_drawn() {
        let robot = crate::fixtures::robot("uvigo8-pulleys");
        let pose = Pose::from_array(POSE);
        let n = robot.cable_count();
        let scene = scene_update(&robot, &pose, &vec![10.0; n], 50.0, 1.0);
        let m = rotation_by_hand(POSE[3], POSE[4], POSE[5]);
        let (frame, cables) = (&scene.entities[0], &scene.entities[2]);
        // The box's edges and one circle per wheel.
        assert_eq!(frame.lines.len(), 1 + n);
        let lengths = crate::kinematics::lengths(&robot, &pose);
        for (i, (line, cable)) in cables.lines.iter().zip(&robot.cables).enumerate() {
            let b = cable.platform_anchor;
            let rb = apply(&m, [b.x, b.y, b.z]);
            let anchor = V3::new(POSE[0] + rb[0], POSE[1] + rb[1], POSE[2] + rb[2]);
            let start = V3::new(line.points[0].x, line.points[0].y, line.points[0].z);
            let end = V3::new(line.points[1].x, line.points[1].y, line.points[1].z);
            assert!((end - anchor).norm() < 1e-12);
            let pulley = cable.pulley.expect("pulley");
            let (r, z, a) = (pulley.radius, pulley.axis, cable.frame_anchor);
            // The wheel: centre r from the swivel point, away from the axis towards the anchor.
            let v = anchor - a;
            let u = (v - z * v.dot(&z)).normalize();
            let centre = a + u * r;
            // The start is on that wheel, the free segment tangent there, and the drawn free
            // length plus the wrap r·β (β from the angle swept from a) is the IK length.
            assert!(((start - centre).norm() - r).abs() < 1e-12, "cable {i}");
            assert!((start - centre).dot(&(anchor - start)).abs() < 1e-12);
            let from_a = (a - centre).normalize();
            let to_start = (start - centre).normalize();
            let mut beta =
                to_start.dot(&z).atan2(to_start.dot(&u)) - from_a.dot(&z).atan2(from_a.dot(&u));
            beta = beta.rem_euclid(std::f64::consts::TAU);
            assert!(
                (r * beta + (anchor - start).norm() - lengths[i]).abs() < 1e-12,
                "cable {i}"
            );
            // Its circle in the frame entity: closed, every point r from the centre, in the
            // plane of the swivel axis and the platform anchor.
            let wheel = &frame.lines[1 + i];
            assert_eq!(wheel.points.first(), wheel.points.last());
            for q in &wheel.points {
                let q = V3::new(q.x, q.y, q.z);
                assert!(((q - centre).norm() - r).abs() < 1e-12);
                assert!((q - centre).dot(&z.cross(&u)).abs() < 1e-12);
            }
        }
        // Point-exit robots draw no wheels.
        let plain = scene_update(&crate::fixtures::robot("uvigo8"), &pose, &[], 50.0, 1.0);
        assert_eq!(plain.entities[0].lines.len(), 1);
    }

    #[test]
    fn a_robot_with_legs_shows_its_frame_and_platform_only() {
        let robot = crate::fixtures::robot("keops");
        let scene = scene_update(&robot, &Pose::from_array(robot.home), &[1.0; 3], 10.0, 0.0);
        assert!(scene.entities[2].lines.is_empty());
        assert_eq!(scene.entities[1].cubes.len(), 1);
    }

    #[test]
    fn a_sample_holds_the_csv_columns_numbers_in_its_fields() {
        let robot = crate::fixtures::robot("silva4");
        let n = robot.cable_count();
        let state = SimState {
            time: 0.125,
            step: 125,
            pose: Pose::from_array(POSE),
            twist: [0.0; 6],
            winch: vec![0.0; n],
            lengths: (0..n).map(|i| 1.0 + i as f64).collect(),
            tensions: (0..n).map(|i| 100.0 + i as f64).collect(),
            tensions_constraint: vec![0.0; n],
            winch_tensions: (0..n).map(|i| 100.0 + i as f64).collect(),
            motor_torques: Vec::new(),
            motor_velocities: Vec::new(),
            following_errors: Vec::new(),
            wrench_residual: 0.0,
        };
        let commanded = Sample {
            t: 0.125,
            pose: Pose::from_array([0.0, 0.0, 0.1, 0.0, 0.0, 0.0]),
            velocity: [0.0; 6],
            acceleration: [0.0; 6],
            segment: Some(1),
        };
        let length_command: Vec<f64> = (0..n).map(|i| 2.0 + i as f64).collect();
        let record = Record {
            commanded: &commanded,
            length_command: &length_command,
            tension_command: None,
            state: &state,
        };
        let layout = RecordLayout::new(&robot, Some(&record));
        let names = vec!["hold".to_string(), "move".to_string()];
        let s = RunSample::from_record(&layout, &record, &names, &[7.0, 1.0]);
        assert_eq!(s.t, 0.125);
        assert_eq!(s.pose_cmd, [0.0, 0.0, 0.1, 0.0, 0.0, 0.0]);
        assert_eq!(s.pose, POSE);
        assert_eq!(s.length_cmd, length_command);
        assert_eq!(s.length, state.lengths);
        assert_eq!(s.tension, state.tensions);
        assert!(s.actuator.is_empty() && s.leg_force.is_empty());
        assert_eq!(s.segment, "move");
        assert_eq!(s.extra, [7.0, 1.0]);
        // The numbers in the columns' order are the CSV writer's.
        let mut csv = Vec::new();
        let _ = layout.numbers(&record, &mut |v| {
            csv.push(v);
            Ok::<(), ()>(())
        });
        assert_eq!(s.numbers(), csv);
        assert_eq!(s.numbers().len(), layout.columns().len());
        assert_eq!(
            RunSample::from_numbers(&layout, &csv, "move".into(), &[7.0, 1.0]),
            s
        );
    }

    #[test]
    fn simulated_time_maps_to_nanoseconds() {
        assert_eq!(time_ns(0.001), 1_000_000);
        assert_eq!(time_ns(600.0), 600_000_000_000);
        assert_eq!(time_ns(-1.0), 0);
        assert_eq!(time_ns(f64::NAN), 0);
        let s = timestamp(12.000_000_5);
        assert_eq!((s.sec(), s.nsec()), (12, 500));
    }
}
