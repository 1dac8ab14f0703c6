//! Checking a robot file's values and its sections shared by every kind of robot (platform,
//! winch, boxes, the `[plc]` section kept as written), each error located as
//! `file:line: field: message`.

use super::error::{INERTIA_RANGE, MASS_RANGE, MAX_COORDINATE, RobotFileError, max_for};
use super::raw::{RawBox, RawInertia, RawPlatform, RawWinch, ScalarOrList};
use super::{Aabb, Platform, PlcSection, Winch};
use crate::text::Plain;
use crate::toml_location::{self, Located, line_of};
use nalgebra::{Matrix3, Vector3};
use std::ops::Range;
use toml::Spanned;

/// Default reflected mass of a winch (drum and motor inertia J/r²), kg.
pub const DEFAULT_WINCH_MASS: f64 = 0.2;
/// Default PID of the simulated winch drive (see `sim`), used when `[winch]` gives none:
/// with the default mass a 160 Hz position loop (√(kp/m) = 1000 rad/s), damping ratio
/// kd/(2√(kp·m)) = 1.5, integral time kp/ki = 0.1 s.
pub const DEFAULT_WINCH_KP: f64 = 2.0e5;
pub const DEFAULT_WINCH_KI: f64 = 2.0e6;
pub const DEFAULT_WINCH_KD: f64 = 600.0;

pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
}

impl Ctx<'_> {
    pub(super) fn err(
        &self,
        span: Option<Range<usize>>,
        field: &str,
        message: impl Into<String>,
    ) -> RobotFileError {
        RobotFileError::Invalid {
            file: self.file.to_string(),
            line: span.map(|s| line_of(self.text, s.start)).unwrap_or(0),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// A per-cable list of `field` (`what`: "values", "names", …) holds one item per cable.
    pub(super) fn one_per_cable<T>(
        &self,
        list: &Spanned<T>,
        given: usize,
        field: &str,
        what: &str,
        count: usize,
    ) -> Result<(), RobotFileError> {
        if given == count {
            return Ok(());
        }
        Err(self.err(
            span_of(list),
            field,
            format!("gives {given} {what} but the file has {count} cables"),
        ))
    }

    /// A section the robot needs and the file lacks.
    pub(super) fn missing(&self, section: &str, why: impl Into<String>) -> RobotFileError {
        RobotFileError::MissingSection {
            file: self.file.to_string(),
            section: section.to_string(),
            why: why.into(),
        }
    }

    /// Where table `table` is written (its header, or `table = {…}` at the top level).
    pub(super) fn table_span(&self, table: &str) -> Option<Range<usize>> {
        toml_location::table_span(self.text, table)
    }

    /// Turns a TOML/serde error into ours, with the line and the dotted field of its span.
    pub(super) fn toml_error(&self, error: &toml::de::Error) -> RobotFileError {
        let Located {
            line,
            field,
            message,
        } = toml_location::locate(self.text, error);
        // A missing top-level table: its span is the whole document, so no line to give.
        if field == "platform" && message.starts_with("missing field `platform`") {
            return self.missing("platform", "every robot needs its mass, inertia and size");
        }
        let line = if !field.contains('.') && message.starts_with("missing field") {
            0
        } else {
            line
        };
        RobotFileError::Invalid {
            file: self.file.to_string(),
            line,
            field,
            message,
        }
    }
}

pub(super) fn span_of<T>(s: &Spanned<T>) -> Option<Range<usize>> {
    Some(s.span())
}

pub(super) fn finite(ctx: &Ctx, s: &Spanned<f64>, field: &str) -> Result<f64, RobotFileError> {
    let v = *s.get_ref();
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ctx.err(
            span_of(s),
            field,
            format!("must be a finite number, got {v}"),
        ))
    }
}

/// A finite coordinate (m) within ±[`MAX_COORDINATE`].
pub(super) fn coordinate(ctx: &Ctx, s: &Spanned<f64>, field: &str) -> Result<f64, RobotFileError> {
    let v = finite(ctx, s, field)?;
    if v.abs() <= MAX_COORDINATE {
        Ok(v)
    } else {
        Err(ctx.err(
            span_of(s),
            field,
            format!("must be within ±{MAX_COORDINATE} m, got {v}"),
        ))
    }
}

/// A positive number no larger than the cap of its unit ([`max_for`]).
pub(super) fn positive(
    ctx: &Ctx,
    s: &Spanned<f64>,
    field: &str,
    unit: &str,
) -> Result<f64, RobotFileError> {
    let v = finite(ctx, s, field)?;
    let max = max_for(unit);
    if v <= 0.0 {
        Err(ctx.err(
            span_of(s),
            field,
            format!("must be positive, got {v} {unit}"),
        ))
    } else if v > max {
        Err(ctx.err(
            span_of(s),
            field,
            format!(
                "must be at most {} {unit}, got {} {unit}",
                Plain(max),
                Plain(v)
            ),
        ))
    } else {
        Ok(v)
    }
}

/// A number within [lo, hi] (unit for the message).
pub(super) fn within(
    ctx: &Ctx,
    s: &Spanned<f64>,
    field: &str,
    (lo, hi): (f64, f64),
    unit: &str,
) -> Result<f64, RobotFileError> {
    let v = finite(ctx, s, field)?;
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(ctx.err(
            span_of(s),
            field,
            format!(
                "must be between {} and {} {unit}, got {} {unit}",
                Plain(lo),
                Plain(hi),
                Plain(v)
            ),
        ))
    }
}

/// Exactly `n` numbers (`what` names them in the message).
pub(super) fn numbers<'a>(
    ctx: &Ctx,
    s: &'a Spanned<Vec<f64>>,
    field: &str,
    n: usize,
    what: &str,
) -> Result<&'a [f64], RobotFileError> {
    let v = s.get_ref();
    if v.len() != n {
        return Err(ctx.err(
            span_of(s),
            field,
            format!("needs {n} numbers ({what}), got {}", v.len()),
        ));
    }
    Ok(v)
}

/// A point or vector (x, y, z) in m: three finite numbers within ±[`MAX_COORDINATE`].
pub(super) fn vec3(
    ctx: &Ctx,
    s: &Spanned<Vec<f64>>,
    field: &str,
) -> Result<Vector3<f64>, RobotFileError> {
    let v = numbers(ctx, s, field, 3, "x, y, z")?;
    for (k, x) in v.iter().enumerate() {
        let axis = ["x", "y", "z"][k];
        if !x.is_finite() {
            return Err(ctx.err(
                span_of(s),
                field,
                format!("component {axis} must be a finite number, got {x}"),
            ));
        }
        if x.abs() > MAX_COORDINATE {
            return Err(ctx.err(
                span_of(s),
                field,
                format!(
                    "component {axis} must be within ±{MAX_COORDINATE} m, got {}",
                    Plain(*x)
                ),
            ));
        }
    }
    Ok(Vector3::new(v[0], v[1], v[2]))
}

/// A per-cable value given as one number for all cables or one per cable, each in [0, max].
pub(super) fn per_cable(
    ctx: &Ctx,
    s: &Spanned<ScalarOrList>,
    field: &str,
    count: usize,
    max: f64,
) -> Result<Vec<f64>, RobotFileError> {
    let values = match s.get_ref() {
        ScalarOrList::Scalar(v) => vec![*v; count],
        ScalarOrList::List(list) => {
            ctx.one_per_cable(s, list.len(), field, "values", count)?;
            list.clone()
        }
    };
    if let Some((k, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(ctx.err(
            span_of(s),
            field,
            format!("value for cable {} is not finite: {v}", k + 1),
        ));
    }
    if let Some((k, v)) = values.iter().enumerate().find(|(_, v)| **v > max) {
        return Err(ctx.err(
            span_of(s),
            field,
            format!(
                "value for cable {} must be at most {}, got {}",
                k + 1,
                Plain(max),
                Plain(*v)
            ),
        ));
    }
    Ok(values)
}

pub(super) fn aabb(ctx: &Ctx, raw: &RawBox, name: &str) -> Result<Aabb, RobotFileError> {
    let min = vec3(ctx, &raw.min, &format!("{name}.min"))?;
    let max = vec3(ctx, &raw.max, &format!("{name}.max"))?;
    if let Some(k) = (0..3).find(|&k| min[k] > max[k]) {
        return Err(ctx.err(
            span_of(&raw.max),
            &format!("{name}.max"),
            format!(
                "{} max {} is below min {}",
                ["x", "y", "z"][k],
                max[k],
                min[k]
            ),
        ));
    }
    Ok(Aabb { min, max })
}

/// Sections (or top-level keys) of the other kinds of robot must not be in a file: they
/// would be ignored silently.
pub(super) fn refuse_sections(
    ctx: &Ctx,
    kind: &str,
    present: &[(&str, bool)],
    hint: &str,
) -> Result<(), RobotFileError> {
    if let Some((section, _)) = present.iter().find(|(_, there)| *there) {
        let span = ctx.table_span(section);
        let shown = if span
            .as_ref()
            .is_some_and(|s| ctx.text[s.clone()].starts_with('['))
        {
            format!("[{section}]")
        } else {
            format!("`{section}`")
        };
        return Err(ctx.err(
            span,
            section,
            format!("a {kind} robot takes no {shown}: remove it ({hint})"),
        ));
    }
    Ok(())
}

pub(super) fn build_platform(ctx: &Ctx, p: &RawPlatform) -> Result<Platform, RobotFileError> {
    positive(ctx, &p.mass, "platform.mass", "kg")?;
    let mass = within(ctx, &p.mass, "platform.mass", MASS_RANGE, "kg")?;
    let com = vec3(ctx, &p.com, "platform.com")?;
    let size = vec3(ctx, &p.size, "platform.size")?;
    if let Some(k) = (0..3).find(|&k| size[k] <= 0.0) {
        return Err(ctx.err(
            span_of(&p.size),
            "platform.size",
            format!(
                "box edge {} must be positive, got {}",
                ["x", "y", "z"][k],
                size[k]
            ),
        ));
    }
    let box_center = match &p.box_center {
        Some(c) => vec3(ctx, c, "platform.box_center")?,
        None => com,
    };
    let field = "platform.inertia";
    let inertia = match p.inertia.get_ref() {
        RawInertia::Named(name) if name == "uniform_box" => {
            Platform::uniform_box_inertia(mass, &size)
        }
        RawInertia::Named(name) => {
            return Err(ctx.err(
                span_of(&p.inertia),
                field,
                format!(
                    "unknown inertia `{name}`: give \"uniform_box\", [ixx, iyy, izz] or a 3×3 matrix (kg·m²)"
                ),
            ));
        }
        RawInertia::Diagonal(d) => {
            if d.len() != 3 {
                return Err(ctx.err(
                    span_of(&p.inertia),
                    field,
                    format!(
                        "needs 3 principal moments [ixx, iyy, izz] (or a 3×3 matrix), got {} numbers",
                        d.len()
                    ),
                ));
            }
            Matrix3::from_diagonal(&Vector3::new(d[0], d[1], d[2]))
        }
        RawInertia::Full(m) => {
            if m.len() != 3 || m.iter().any(|row| row.len() != 3) {
                return Err(ctx.err(
                    span_of(&p.inertia),
                    field,
                    "a full inertia matrix needs 3 rows of 3 numbers (kg·m²)",
                ));
            }
            Matrix3::from_fn(|r, c| m[r][c])
        }
    };
    check_inertia(ctx, &p.inertia, &inertia)?;
    let payload_options = match &p.payload_options {
        Some(list) => {
            if let Some(v) = list
                .get_ref()
                .iter()
                .find(|v| !(v.is_finite() && (MASS_RANGE.0..=MASS_RANGE.1).contains(*v)))
            {
                return Err(ctx.err(
                    span_of(list),
                    "platform.payload_options",
                    format!(
                        "every option must be a mass between {} and {} kg, got {}",
                        Plain(MASS_RANGE.0),
                        Plain(MASS_RANGE.1),
                        Plain(*v)
                    ),
                ));
            }
            list.get_ref().clone()
        }
        None => Vec::new(),
    };
    let platform = Platform {
        mass,
        com,
        inertia,
        size,
        box_center,
        payload_options,
    };
    Ok(platform)
}

pub(super) fn build_winch(ctx: &Ctx, w: &RawWinch, section: &str) -> Result<Winch, RobotFileError> {
    let name = |field: &str| format!("{section}.{field}");
    let gain =
        |s: &Option<Spanned<f64>>, name: &str, default: f64| -> Result<f64, RobotFileError> {
            match s {
                Some(v) => {
                    let x = finite(ctx, v, name)?;
                    if x < 0.0 {
                        Err(ctx.err(span_of(v), name, format!("must be ≥ 0, got {x}")))
                    } else {
                        within(ctx, v, name, (0.0, max_for("gain")), "(SI)")
                    }
                }
                None => Ok(default),
            }
        };
    Ok(Winch {
        max_velocity: positive(ctx, &w.max_velocity, &name("max_velocity"), "m/s")?,
        max_acceleration: positive(ctx, &w.max_acceleration, &name("max_acceleration"), "m/s²")?,
        max_jerk: positive(ctx, &w.max_jerk, &name("max_jerk"), "m/s³")?,
        mass: match &w.mass {
            Some(m) => positive(ctx, m, &name("mass"), "kg")?,
            None => DEFAULT_WINCH_MASS,
        },
        kp: gain(&w.kp, &name("kp"), DEFAULT_WINCH_KP)?,
        ki: gain(&w.ki, &name("ki"), DEFAULT_WINCH_KI)?,
        kd: gain(&w.kd, &name("kd"), DEFAULT_WINCH_KD)?,
    })
}

pub(super) fn check_inertia(
    ctx: &Ctx,
    s: &Spanned<RawInertia>,
    inertia: &Matrix3<f64>,
) -> Result<(), RobotFileError> {
    let field = "platform.inertia";
    if inertia.iter().any(|x| !x.is_finite()) {
        return Err(ctx.err(
            span_of(s),
            field,
            "all entries must be finite numbers (kg·m²)",
        ));
    }
    let (lo, hi) = INERTIA_RANGE;
    if inertia.amax() > hi {
        return Err(ctx.err(
            span_of(s),
            field,
            format!(
                "entries must be at most {} kg·m², got {}",
                Plain(hi),
                Plain(inertia.amax())
            ),
        ));
    }
    if (inertia - inertia.transpose()).abs().max() > 1e-12 * inertia.abs().max().max(1.0) {
        return Err(ctx.err(span_of(s), field, "the inertia matrix must be symmetric"));
    }
    let eig = inertia.symmetric_eigenvalues();
    if eig.iter().any(|&e| e <= 0.0) {
        return Err(ctx.err(
            span_of(s),
            field,
            format!(
                "must be positive definite (principal moments {:.3e}, {:.3e}, {:.3e} kg·m²)",
                eig[0], eig[1], eig[2]
            ),
        ));
    }
    if let Some(e) = eig.iter().find(|&&e| e < lo) {
        return Err(ctx.err(
            span_of(s),
            field,
            format!(
                "principal moment {} kg·m² is below {} kg·m²: not a physical body",
                Plain(*e),
                Plain(lo)
            ),
        ));
    }
    // A rigid body's principal moments obey the triangle inequality.
    let (a, b, c) = (eig[0], eig[1], eig[2]);
    let slack = 1e-12 * (a + b + c).max(1.0);
    if a > b + c + slack || b > a + c + slack || c > a + b + slack {
        return Err(ctx.err(
            span_of(s),
            field,
            format!("principal moments {a:.3e}, {b:.3e}, {c:.3e} kg·m² violate the triangle inequality: no rigid body has them"),
        ));
    }
    Ok(())
}

/// The `[plc]` section as written, with the file's name and text that locate errors about it.
pub(super) fn plc_section(ctx: &Ctx, table: Option<toml::Table>) -> PlcSection {
    PlcSection {
        file: ctx.file.to_string(),
        text: if table.is_some() {
            ctx.text.into()
        } else {
            "".into()
        },
        table,
    }
}
