//! `[[obstacles]]`: named solids (boxes, cylinders, spheres, half-spaces) the cables and the
//! platform must keep clear of. The distances to them are [`crate::interference`]'s; this
//! module reads and checks them (`file:line: obstacles[k].<key>: …`).

use super::error::{MAX_COORDINATE, RobotFileError};
use super::fields::{Ctx, finite, span_of, vec3};
use super::pulleys::UNIT_AXIS_TOLERANCE;
use super::raw::RawObstacle;
use crate::text::Plain;
use nalgebra::Vector3;
use serde::Serialize;
use toml::Spanned;

/// A named obstacle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Obstacle {
    pub name: String,
    pub shape: Shape,
}

/// An obstacle's solid, world frame, m.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "shape")]
pub enum Shape {
    /// Axis-aligned box.
    Box {
        min: Vector3<f64>,
        max: Vector3<f64>,
    },
    /// Solid cylinder: base disc centred on `base`, top disc at `base + height·axis`.
    Cylinder {
        base: Vector3<f64>,
        axis: Vector3<f64>,
        radius: f64,
        height: f64,
    },
    Sphere {
        center: Vector3<f64>,
        radius: f64,
    },
    /// The half-space behind a plane: points p with (p − point)·normal < 0 are solid.
    Plane {
        point: Vector3<f64>,
        normal: Vector3<f64>,
    },
}

impl Shape {
    /// The shape's kind as the robot file writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            Shape::Box { .. } => "box",
            Shape::Cylinder { .. } => "cylinder",
            Shape::Sphere { .. } => "sphere",
            Shape::Plane { .. } => "plane",
        }
    }

    /// True when `p` lies strictly inside the solid (more than `margin` m from its surface).
    pub fn contains(&self, p: &Vector3<f64>, margin: f64) -> bool {
        self.signed_distance(p) < -margin
    }

    /// Signed distance of `p` to the solid (negative inside), m.
    pub fn signed_distance(&self, p: &Vector3<f64>) -> f64 {
        // Per-direction distances out of the solid: the Euclidean norm of the positive ones
        // outside, the largest (negative) one inside.
        let from_parts = |d: &[f64]| {
            let outside = d.iter().map(|x| x.max(0.0).powi(2)).sum::<f64>().sqrt();
            outside + d.iter().copied().fold(f64::NEG_INFINITY, f64::max).min(0.0)
        };
        match *self {
            Shape::Box { min, max } => {
                let d: [f64; 3] = std::array::from_fn(|k| (min[k] - p[k]).max(p[k] - max[k]));
                from_parts(&d)
            }
            Shape::Cylinder {
                base,
                axis,
                radius,
                height,
            } => {
                let v = p - base;
                let h = v.dot(&axis);
                let radial = (v - axis * h).norm();
                from_parts(&[radial - radius, (h - 0.5 * height).abs() - 0.5 * height])
            }
            Shape::Sphere { center, radius } => (p - center).norm() - radius,
            Shape::Plane { point, normal } => (p - point).dot(&normal),
        }
    }
}

/// The `[[obstacles]]` entries, each with a unique name, a known shape, only that shape's keys
/// and valid values for them.
pub(super) fn build(ctx: &Ctx, raw: &[RawObstacle]) -> Result<Vec<Obstacle>, RobotFileError> {
    let mut out: Vec<Obstacle> = Vec::with_capacity(raw.len());
    for (k, o) in raw.iter().enumerate() {
        let name = obstacle_name(ctx, k, o, &out)?;
        let fields = ObstacleFields { ctx, k, o };
        fields.refuse_foreign_keys()?;
        let shape = fields.shape()?;
        out.push(Obstacle { name, shape });
    }
    Ok(out)
}

/// Obstacle k's trimmed name, refused when empty or already taken by an earlier one.
fn obstacle_name(
    ctx: &Ctx,
    k: usize,
    o: &RawObstacle,
    earlier: &[Obstacle],
) -> Result<String, RobotFileError> {
    let field = format!("obstacles[{k}].name");
    let name = o.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(ctx.err(span_of(&o.name), &field, "must not be empty"));
    }
    if let Some(j) = earlier.iter().position(|p| p.name == name) {
        return Err(ctx.err(
            span_of(&o.name),
            &field,
            format!("`{name}` is already the name of obstacle {}", j + 1),
        ));
    }
    Ok(name)
}

/// One `[[obstacles]]` entry being read, for errors that name its keys (`obstacles[k].key`).
struct ObstacleFields<'a> {
    ctx: &'a Ctx<'a>,
    k: usize,
    o: &'a RawObstacle,
}

impl ObstacleFields<'_> {
    /// The error path of one of the obstacle's keys.
    fn field(&self, key: &str) -> String {
        format!("obstacles[{}].{key}", self.k)
    }

    /// Refuses an unknown shape, and any key its shape does not take (a sphere's `axis`, say):
    /// such a key would otherwise be ignored without a word.
    fn refuse_foreign_keys(&self) -> Result<(), RobotFileError> {
        let (ctx, o) = (self.ctx, self.o);
        let allowed: &[&str] = match o.shape.get_ref().as_str() {
            "box" => &["min", "max"],
            "cylinder" => &["center", "axis", "radius", "height"],
            "sphere" => &["center", "radius"],
            "plane" => &["point", "normal"],
            other => {
                return Err(ctx.err(
                    span_of(&o.shape),
                    &self.field("shape"),
                    format!("unknown shape `{other}`: use box, cylinder, sphere or plane"),
                ));
            }
        };
        let given = [
            ("min", o.min.as_ref().map(|s| s.span())),
            ("max", o.max.as_ref().map(|s| s.span())),
            ("center", o.center.as_ref().map(|s| s.span())),
            ("radius", o.radius.as_ref().map(|s| s.span())),
            ("axis", o.axis.as_ref().map(|s| s.span())),
            ("height", o.height.as_ref().map(|s| s.span())),
            ("point", o.point.as_ref().map(|s| s.span())),
            ("normal", o.normal.as_ref().map(|s| s.span())),
        ];
        if let Some((key, span)) = given
            .iter()
            .find(|(key, span)| span.is_some() && !allowed.contains(key))
        {
            return Err(ctx.err(
                span.clone(),
                &self.field(key),
                format!(
                    "a {} has no `{key}`: it takes {}",
                    o.shape.get_ref(),
                    allowed.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// The solid, from the keys of its (already checked) shape.
    fn shape(&self) -> Result<Shape, RobotFileError> {
        let o = self.o;
        Ok(match o.shape.get_ref().as_str() {
            "box" => {
                let (min, max) = (self.need(&o.min, "min")?, self.need(&o.max, "max")?);
                if let Some(i) = (0..3).find(|&i| max[i] <= min[i]) {
                    return Err(self.ctx.err(
                        o.max.as_ref().and_then(span_of),
                        &self.field("max"),
                        format!(
                            "must exceed `min` in every axis; {} is {} ≤ {}",
                            ["x", "y", "z"][i],
                            Plain(max[i]),
                            Plain(min[i])
                        ),
                    ));
                }
                Shape::Box { min, max }
            }
            "cylinder" => Shape::Cylinder {
                base: self.need(&o.center, "center")?,
                axis: self.unit(&o.axis, "axis")?,
                radius: self.length(&o.radius, "radius")?,
                height: self.length(&o.height, "height")?,
            },
            "sphere" => Shape::Sphere {
                center: self.need(&o.center, "center")?,
                radius: self.length(&o.radius, "radius")?,
            },
            _ => Shape::Plane {
                point: self.need(&o.point, "point")?,
                normal: self.unit(&o.normal, "normal")?,
            },
        })
    }

    /// A point or vector the shape needs.
    fn need(
        &self,
        v: &Option<Spanned<Vec<f64>>>,
        key: &str,
    ) -> Result<Vector3<f64>, RobotFileError> {
        match v {
            Some(s) => vec3(self.ctx, s, &self.field(key)),
            None => Err(self.ctx.err(
                span_of(&self.o.shape),
                &self.field(key),
                format!("missing: a {} needs `{key}`", self.o.shape.get_ref()),
            )),
        }
    }

    /// A length the shape needs, in (0, MAX_COORDINATE] m.
    fn length(&self, v: &Option<Spanned<f64>>, key: &str) -> Result<f64, RobotFileError> {
        let ctx = self.ctx;
        let Some(s) = v else {
            return Err(ctx.err(
                span_of(&self.o.shape),
                &self.field(key),
                format!("missing: a {} needs `{key}` (m)", self.o.shape.get_ref()),
            ));
        };
        let x = finite(ctx, s, &self.field(key))?;
        if x <= 0.0 || x > MAX_COORDINATE {
            return Err(ctx.err(
                span_of(s),
                &self.field(key),
                format!("must be in (0, {MAX_COORDINATE}] m, got {}", Plain(x)),
            ));
        }
        Ok(x)
    }

    /// A direction the shape needs, which must be given as a unit vector.
    fn unit(
        &self,
        v: &Option<Spanned<Vec<f64>>>,
        key: &str,
    ) -> Result<Vector3<f64>, RobotFileError> {
        let a = self.need(v, key)?;
        let norm = a.norm();
        let span = v.as_ref().and_then(span_of);
        if norm == 0.0 {
            return Err(self.ctx.err(
                span,
                &self.field(key),
                "has zero length: give a unit vector",
            ));
        }
        if (norm - 1.0).abs() > UNIT_AXIS_TOLERANCE {
            return Err(self.ctx.err(
                span,
                &self.field(key),
                format!("must be a unit vector, its length is {}", Plain(norm)),
            ));
        }
        Ok(a)
    }
}

/// No frame anchor, and no platform anchor at the home pose, lies inside an obstacle.
pub(super) fn anchors_outside(
    ctx: &Ctx,
    raw: &[RawObstacle],
    robot: &super::Robot,
) -> Result<(), RobotFileError> {
    let home = crate::pose::Pose::from_array(robot.home);
    let rotation = home.rotation();
    for (k, o) in robot.obstacles.iter().enumerate() {
        for (i, c) in robot.cables.iter().enumerate() {
            let at_home = home.position + rotation.matrix() * c.platform_anchor;
            for (which, p) in [("frame", c.frame_anchor), ("platform (at home)", at_home)] {
                if o.shape.contains(&p, 0.0) {
                    return Err(ctx.err(
                        span_of(&raw[k].name),
                        &format!("obstacles[{k}]"),
                        format!(
                            "{} `{}` contains the {which} anchor of cable {} ({}) at ({}, {}, {}) m",
                            o.shape.kind(),
                            o.name,
                            i + 1,
                            c.name,
                            Plain(p.x),
                            Plain(p.y),
                            Plain(p.z)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}
