//! Every distance against brute force: dense points on the segments and on the solids'
//! surfaces.

use super::distance::*;
use super::*;
use crate::fixtures;
use crate::robot::obstacles::{Obstacle, Shape};
use nalgebra::{Rotation3, Vector3};

/// A small deterministic generator in [−1, 1).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
    fn vec(&mut self, scale: f64) -> Vector3<f64> {
        Vector3::new(self.next(), self.next(), self.next()) * scale
    }
}

fn samples(a: &Vector3<f64>, b: &Vector3<f64>, n: usize) -> Vec<Vector3<f64>> {
    (0..=n)
        .map(|k| a + (b - a) * (k as f64 / n as f64))
        .collect()
}

/// Points on a solid's surface, about `step` m apart.
fn surface(shape: &Shape, step: f64) -> Vec<Vector3<f64>> {
    let mut out = Vec::new();
    match *shape {
        Shape::Box { min, max } => {
            let b = OrientedBox::aligned(&min, &max);
            out = box_surface(&b, step);
        }
        Shape::Cylinder {
            base,
            axis,
            radius,
            height,
        } => {
            let (u, v) = crate::kinematics::pulley::reference_axes(&axis);
            let na = ((std::f64::consts::TAU * radius / step).ceil() as usize).max(8);
            let nh = ((height / step).ceil() as usize).max(1);
            let nr = ((radius / step).ceil() as usize).max(1);
            for i in 0..na {
                let phi = i as f64 * std::f64::consts::TAU / na as f64;
                let dir = u * phi.cos() + v * phi.sin();
                for k in 0..=nh {
                    out.push(base + axis * (height * k as f64 / nh as f64) + dir * radius);
                }
                for k in 0..=nr {
                    let r = radius * k as f64 / nr as f64;
                    out.push(base + dir * r);
                    out.push(base + axis * height + dir * r);
                }
            }
        }
        Shape::Sphere { center, radius } => {
            let n = ((std::f64::consts::PI * radius / step).ceil() as usize).max(8);
            for i in 0..=n {
                let theta = std::f64::consts::PI * i as f64 / n as f64;
                for k in 0..2 * n {
                    let phi = std::f64::consts::PI * k as f64 / n as f64;
                    out.push(
                        center
                            + Vector3::new(
                                theta.sin() * phi.cos(),
                                theta.sin() * phi.sin(),
                                theta.cos(),
                            ) * radius,
                    );
                }
            }
        }
        Shape::Plane { .. } => unreachable!("a plane has no bounded surface"),
    }
    out
}

fn box_surface(b: &OrientedBox, step: f64) -> Vec<Vector3<f64>> {
    let mut out = Vec::new();
    let n: Vec<usize> = (0..3)
        .map(|k| ((2.0 * b.half[k] / step).ceil() as usize).max(1))
        .collect();
    for axis in 0..3 {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        for side in [-1.0, 1.0] {
            for i in 0..=n[u] {
                for j in 0..=n[v] {
                    let mut local = Vector3::zeros();
                    local[axis] = side * b.half[axis];
                    local[u] = b.half[u] * (2.0 * i as f64 / n[u] as f64 - 1.0);
                    local[v] = b.half[v] * (2.0 * j as f64 / n[v] as f64 - 1.0);
                    out.push(b.center + b.rotation * local);
                }
            }
        }
    }
    out
}

/// Brute-force signed distance: the nearest surface sample, negative when inside.
fn brute_sdf(shape: &Shape, points: &[Vector3<f64>], p: &Vector3<f64>) -> f64 {
    let d = points
        .iter()
        .map(|q| (q - p).norm())
        .fold(f64::INFINITY, f64::min);
    if shape.contains(p, 0.0) { -d } else { d }
}

fn shapes() -> Vec<Shape> {
    vec![
        Shape::Box {
            min: Vector3::new(-0.2, -0.1, 0.0),
            max: Vector3::new(0.3, 0.2, 0.4),
        },
        Shape::Cylinder {
            base: Vector3::new(0.1, -0.1, 0.05),
            axis: Vector3::new(1.0, 2.0, 2.0) / 3.0,
            radius: 0.15,
            height: 0.5,
        },
        Shape::Sphere {
            center: Vector3::new(0.0, 0.1, 0.2),
            radius: 0.25,
        },
    ]
}

#[test]
fn solids_signed_distances_match_their_sampled_surfaces() {
    let step = 0.004;
    let mut rng = Lcg(7);
    for shape in shapes() {
        let surf = surface(&shape, step);
        for _ in 0..60 {
            let p = Vector3::new(0.05, 0.05, 0.2) + rng.vec(0.6);
            let exact = shape_signed_distance(&shape, &p);
            let brute = brute_sdf(&shape, &surf, &p);
            assert!(
                (exact - brute).abs() < step,
                "{shape:?} at {p:?}: {exact} vs sampled {brute}"
            );
        }
    }
    // A plane: the distance along its normal, against the closest of many points on it.
    let (point, normal) = (Vector3::new(0.0, 0.0, 0.1), Vector3::new(0.0, 0.6, 0.8));
    let plane = Shape::Plane { point, normal };
    let (u, v) = crate::kinematics::pulley::reference_axes(&normal);
    let p = Vector3::new(0.3, -0.2, 0.7);
    let brute = (-200..=200)
        .flat_map(|i| (-200..=200).map(move |j| (i, j)))
        .map(|(i, j)| (point + u * (i as f64 * 0.01) + v * (j as f64 * 0.01) - p).norm())
        .fold(f64::INFINITY, f64::min);
    assert!((shape_signed_distance(&plane, &p) - brute).abs() < 0.01);
}

#[test]
fn segment_segment_matches_dense_sampling() {
    let mut rng = Lcg(11);
    let mut cases: Vec<[Vector3<f64>; 4]> = (0..25)
        .map(|_| [rng.vec(1.0), rng.vec(1.0), rng.vec(1.0), rng.vec(1.0)])
        .collect();
    let (o, x, y) = (Vector3::zeros(), Vector3::x(), Vector3::y());
    cases.push([o, x, y * 0.3, y * 0.3 + x * 0.5]); // parallel, overlapping
    cases.push([o, x, x * 1.5 + y * 0.2, x * 2.5 + y * 0.2]); // parallel, apart
    cases.push([-x, x, -y + Vector3::z() * 0.1, y + Vector3::z() * 0.1]); // crossing
    cases.push([o, x, x * 0.5 - y, x * 0.5 + y]); // intersecting
    cases.push([o, o, y, x]); // a point
    let n = 600;
    for [p1, q1, p2, q2] in cases {
        let (d, c1, c2) = segment_segment(&p1, &q1, &p2, &q2);
        assert!(((c1 - c2).norm() - d).abs() < 1e-12);
        let (s1, s2) = (samples(&p1, &q1, n), samples(&p2, &q2, n));
        let brute = s1
            .iter()
            .flat_map(|a| s2.iter().map(move |b| (a - b).norm()))
            .fold(f64::INFINITY, f64::min);
        let slack = ((q1 - p1).norm() + (q2 - p2).norm()) / n as f64;
        assert!(
            d <= brute + 1e-12 && brute - d <= slack,
            "{p1:?}–{q1:?} vs {p2:?}–{q2:?}: {d} vs sampled {brute}"
        );
    }
}

#[test]
fn segment_to_solid_matches_dense_sampling() {
    let mut rng = Lcg(23);
    let mut all = shapes();
    all.push(Shape::Plane {
        point: Vector3::new(0.0, 0.0, 0.1),
        normal: Vector3::new(0.0, 0.6, 0.8),
    });
    for shape in all {
        let mut hits = 0;
        for _ in 0..40 {
            let (a, b) = (rng.vec(0.9), rng.vec(0.9));
            let (d, p) = segment_shape(&shape, &a, &b);
            // The point is on the segment and has the distance.
            assert!(((p - a).cross(&(b - a))).norm() < 1e-9 * (b - a).norm().max(1e-9));
            assert!((shape_signed_distance(&shape, &p) - d).abs() < 1e-12);
            let brute = samples(&a, &b, 4000)
                .iter()
                .map(|q| shape_signed_distance(&shape, q))
                .fold(f64::INFINITY, f64::min);
            assert!(
                d <= brute + 1e-9 && brute - d <= (b - a).norm() / 4000.0,
                "{shape:?}, {a:?}–{b:?}: {d} vs sampled {brute}"
            );
            hits += usize::from(d < 0.0);
        }
        assert!(
            hits > 0 && hits < 40,
            "{shape:?}: {hits} of 40 cut: both cases tested"
        );
    }
}

#[test]
fn box_to_solid_matches_its_sampled_surface() {
    let step = 0.003;
    let mut rng = Lcg(31);
    let mut all = shapes();
    all.push(Shape::Plane {
        point: Vector3::new(0.0, 0.0, -0.3),
        normal: Vector3::new(0.0, 0.6, 0.8),
    });
    for shape in all {
        let mut apart = 0;
        for _ in 0..25 {
            let body = OrientedBox {
                center: Vector3::new(0.05, 0.05, 0.2) + rng.vec(0.55),
                rotation: *Rotation3::from_euler_angles(
                    rng.next() * 3.0,
                    rng.next() * 1.5,
                    rng.next() * 3.0,
                )
                .matrix(),
                half: Vector3::new(0.1, 0.06, 0.15),
            };
            let (d, p) = box_shape(&body, &shape);
            // The point is where they come closest, on the box or on the solid.
            let on_body = body.signed_distance(&p) < 1e-9;
            assert!(on_body || shape_signed_distance(&shape, &p).abs() < 1e-9);
            // Separated: the least distance over the box is on its surface.
            let brute = box_surface(&body, step)
                .iter()
                .map(|q| shape_signed_distance(&shape, q))
                .fold(f64::INFINITY, f64::min);
            if brute > 0.0 {
                apart += 1;
                assert!(
                    d <= brute + 1e-9 && brute - d < step,
                    "{shape:?}, {body:?}: {d} vs sampled {brute}"
                );
            } else {
                assert!(d < 0.0, "{shape:?}, {body:?}: {d}, sampled {brute}");
            }
        }
        assert!(apart > 3 && apart < 23, "{shape:?}: {apart} of 25 apart");
    }
}

fn with_obstacle(mut robot: Robot, name: &str, shape: Shape) -> Robot {
    robot.obstacles.push(Obstacle {
        name: name.into(),
        shape,
    });
    robot
}

#[test]
fn a_sphere_on_a_cables_path_is_named_with_its_sampled_distance() {
    let robot = fixtures::uvigo8();
    let pose = Pose::from_array([0.02, -0.01, 0.15, 0.0, 0.0, 0.1]);
    let segs = segments(&robot, &pose);
    // A sphere 4 mm off cable upper2's free segment, at its middle.
    let (exit, anchor) = segs[2];
    let mid = (exit + anchor) * 0.5;
    let off = (exit - anchor).cross(&Vector3::z()).normalize();
    let shape = Shape::Sphere {
        center: mid + off * 0.054,
        radius: 0.05,
    };
    let robot = with_obstacle(robot, "ball", shape);
    let report = check(&robot, &pose, 0.01);
    let pairs: Vec<&Pair> = report
        .pairs
        .iter()
        .filter(|p| p.kind == Kind::CableObstacle)
        .collect();
    assert_eq!(pairs.len(), 8);
    for (i, p) in pairs.iter().enumerate() {
        let (e, a) = segs[i];
        let brute = samples(&a, &e, 20000)
            .iter()
            .map(|q| shape_signed_distance(&shape, q))
            .fold(f64::INFINITY, f64::min);
        assert!((p.distance - brute).abs() < 1e-4, "{p}: sampled {brute}");
    }
    let v: Vec<&Pair> = report.violations().collect();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(
        (v[0].name_a.as_str(), v[0].name_b.as_str()),
        ("upper2", "ball")
    );
    assert!((v[0].distance - 0.004).abs() < 1e-9, "{}", v[0]);
    assert_eq!(report.counts().cable_obstacle, 1);
    assert_eq!(
        report.cables_in_violation(8),
        [false, false, true, false, false, false, false, false]
    );
    // With a 3 mm clearance nothing is in violation.
    assert!(check(&robot, &pose, 0.003).is_clear());
}

#[test]
fn uvigo8_at_home_is_clear_and_its_closest_cables_match_sampling() {
    let robot = fixtures::uvigo8();
    let pose = Pose::from_array(robot.home);
    let report = check(&robot, &pose, DEFAULT_CLEARANCE);
    assert!(
        report.is_clear(),
        "{:?}",
        report.violations().collect::<Vec<_>>()
    );
    let segs = segments(&robot, &pose);
    for p in report.pairs.iter().filter(|p| p.kind == Kind::CableCable) {
        let [Part::Cable(i), Part::Cable(j)] = [p.a, p.b] else {
            panic!("{p:?}")
        };
        let (s1, s2) = (
            samples(&segs[i].0, &segs[i].1, 500),
            samples(&segs[j].0, &segs[j].1, 500),
        );
        let brute = s1
            .iter()
            .flat_map(|a| s2.iter().map(move |b| (a - b).norm()))
            .fold(f64::INFINITY, f64::min);
        assert!(
            p.distance <= brute + 1e-12 && brute - p.distance < 0.01,
            "{p}: {brute}"
        );
    }
}

#[test]
fn a_platform_turned_over_has_its_cables_through_its_body() {
    // silva4's anchors lie on the top face of its tool; rolled by π they are on the bottom
    // face and every cable, going up, crosses the tool.
    let robot = fixtures::robot("silva4");
    let upright = check(&robot, &Pose::from_array(robot.home), 0.0);
    assert_eq!(upright.counts().cable_platform, 0);
    let mut turned = robot.home;
    turned[3] = std::f64::consts::PI;
    let report = check(&robot, &Pose::from_array(turned), 0.0);
    assert_eq!(report.counts().cable_platform, 4);
    let body = platform_box(&robot, &Pose::from_array(turned));
    let surf = box_surface(&body, 0.001);
    let segs = segments(&robot, &Pose::from_array(turned));
    for (p, (e, a)) in report.violations().zip(segs) {
        // The deepest point of the segment: the farthest from the box's surface while inside.
        let brute = samples(&a, &e, 3000)
            .iter()
            .filter(|q| body.signed_distance(q) < 0.0)
            .map(|q| {
                surf.iter()
                    .map(|s| (s - q).norm())
                    .fold(f64::INFINITY, f64::min)
            })
            .fold(0.0, f64::max);
        assert!(
            (p.distance + brute).abs() < 1e-3,
            "{p}: sampled depth {brute}"
        );
        assert!(p.distance < -0.005, "{p}");
    }
}

#[test]
fn crossing_cables_and_a_platform_against_a_wall_are_named() {
    // Move upper1's frame anchor so that its line runs through the middle of upper0's.
    let mut robot = fixtures::uvigo8();
    let pose = Pose::from_array(robot.home);
    let segs = segments(&robot, &pose);
    let middle = (segs[0].0 + segs[0].1) * 0.5;
    robot.cables[1].frame_anchor = segs[1].1 + (middle - segs[1].1) * 2.0;
    let report = check(&robot, &pose, 1e-9);
    let crossing: Vec<&Pair> = report
        .violations()
        .filter(|p| p.kind == Kind::CableCable)
        .collect();
    assert!(
        crossing
            .iter()
            .any(|p| (p.name_a.as_str(), p.name_b.as_str()) == ("upper0", "upper1")),
        "{crossing:?}"
    );
    // A plane 5 mm below the platform's bottom face: platform–obstacle at 5 mm.
    let robot = with_obstacle(
        fixtures::uvigo8(),
        "floor",
        Shape::Plane {
            point: Vector3::new(0.0, 0.0, robot.home[2] - 0.005),
            normal: Vector3::z(),
        },
    );
    let report = check(&robot, &pose, DEFAULT_CLEARANCE);
    let floor = report
        .violations()
        .find(|p| p.kind == Kind::PlatformObstacle)
        .expect("the floor is 5 mm away");
    assert!((floor.distance - 0.005).abs() < 1e-12, "{floor}");
    assert_eq!(floor.to_string(), "platform – obstacle floor: 5.0 mm");
    // The platform moved out through the frame's side.
    let mut out = robot.home;
    out[0] = robot.frame.max.x;
    let report = check(&robot, &Pose::from_array(out), 0.0);
    assert!(report.counts().platform_frame == 1 && report.counts().cable_frame > 0);
}

#[test]
fn silva4_obstacle_pickplace_goes_over_the_crate_and_a_straight_line_would_not() {
    let robot = fixtures::robot("silva4-obstacle");
    let trajectory = crate::trajectory::builtin(
        &robot,
        "pickplace",
        &crate::trajectory::BuiltinOptions::default(),
    )
    .expect("pickplace");
    assert!(trajectory.samples.len() > 100);
    let closest = trajectory
        .samples
        .iter()
        .map(|s| {
            let report = check(&robot, &s.pose, DEFAULT_CLEARANCE);
            assert!(
                report.is_clear(),
                "t = {}: {:?}",
                s.t,
                report.violations().collect::<Vec<_>>()
            );
            report
                .pairs
                .iter()
                .filter(|p| p.b == Part::Obstacle(0))
                .map(|p| p.distance)
                .fold(f64::INFINITY, f64::min)
        })
        .fold(f64::INFINITY, f64::min);
    // The path's closest approach to the crate: 30.3 mm (the cables at the pick and place
    // points run over its top edge), three times the default clearance.
    assert!(closest > 0.025 && closest < 0.035, "{closest}");
    // The straight line pick → place at z = 350 mm.
    let (first, last) = (
        trajectory.samples[0].pose,
        trajectory.samples[trajectory.samples.len() - 1].pose,
    );
    let hits: Vec<String> = (0..=100)
        .map(|k| {
            let mut pose = first;
            pose.position = first.position + (last.position - first.position) * (k as f64 / 100.0);
            pose
        })
        .flat_map(|pose| {
            check(&robot, &pose, DEFAULT_CLEARANCE)
                .violations()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        hits.iter()
            .any(|h| h.starts_with("platform – obstacle crate")),
        "{hits:?}"
    );
}
