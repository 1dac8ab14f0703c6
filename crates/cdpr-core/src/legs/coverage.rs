//! Seed 002's workspace check of a linear delta: every point of an evenly spaced cloud inside
//! the required cylinder is put through the inverse kinematics and the constraints (reach,
//! stroke, spherical-joint opening, arm-to-arm clearance); the report says which constraint
//! fails where, and [`plot`] draws it (top and side views, one colour per constraint).

use super::{Cylinder, LinearDelta, Violation};
use nalgebra::Vector3;
use plotters::prelude::*;
use serde::Serialize;
use std::path::Path;

/// The outcome of the check on one cloud.
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub cylinder: Cylinder,
    pub step: f64,
    pub points: usize,
    pub reachable: usize,
    /// Per violated constraint: how many points, and the z range (m) where it happens.
    pub failures: Vec<FailureSummary>,
    /// Every failing point with its first violated constraint.
    #[serde(skip)]
    pub failing: Vec<(Vector3<f64>, Violation)>,
    #[serde(skip)]
    pub cloud: Vec<Vector3<f64>>,
    /// Smallest arm-to-arm clearance over the reachable points (m), and where.
    pub min_clearance: Option<(f64, [f64; 3])>,
    /// Largest spherical-joint opening over the reachable points (rad), and where.
    pub max_opening: Option<(f64, [f64; 3])>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FailureSummary {
    pub violation: Violation,
    pub count: usize,
    pub z_min: f64,
    pub z_max: f64,
    /// Largest distance from the axis among the failing points (m).
    pub r_max: f64,
}

impl Coverage {
    pub fn covered(&self) -> bool {
        self.reachable == self.points
    }
}

/// Checks `delta` on the cloud of `cylinder` at spacing `step`.
pub fn coverage(delta: &LinearDelta, cylinder: &Cylinder, step: f64) -> Coverage {
    let cloud = LinearDelta::cloud(cylinder, step);
    let failing = delta.check_cloud(&cloud);
    let mut failures: Vec<FailureSummary> = Vec::new();
    for (p, v) in &failing {
        let r = p.xy().norm();
        match failures.iter_mut().find(|f| f.violation == *v) {
            Some(f) => {
                f.count += 1;
                f.z_min = f.z_min.min(p.z);
                f.z_max = f.z_max.max(p.z);
                f.r_max = f.r_max.max(r);
            }
            None => failures.push(FailureSummary {
                violation: *v,
                count: 1,
                z_min: p.z,
                z_max: p.z,
                r_max: r,
            }),
        }
    }
    failures.sort_by_key(|f| f.violation);
    let mut min_clearance: Option<(f64, [f64; 3])> = None;
    let mut max_opening: Option<(f64, [f64; 3])> = None;
    for p in &cloud {
        let Ok(ik) = delta.inverse(p) else { continue };
        let c = delta.min_clearance(p, &ik);
        if min_clearance.is_none_or(|(m, _)| c < m) {
            min_clearance = Some((c, [p.x, p.y, p.z]));
        }
        let opening = (0..3)
            .map(|i| ik.arms[i].angle(&delta.neutral_direction(i)))
            .fold(0.0, f64::max);
        if max_opening.is_none_or(|(m, _)| opening > m) {
            max_opening = Some((opening, [p.x, p.y, p.z]));
        }
    }
    Coverage {
        cylinder: *cylinder,
        step,
        points: cloud.len(),
        reachable: cloud.len() - failing.len(),
        failures,
        failing,
        cloud,
        min_clearance,
        max_opening,
    }
}

fn colour(v: Option<Violation>) -> RGBColor {
    match v {
        None => RGBColor(150, 190, 150),
        Some(Violation::Unreachable) => RGBColor(214, 39, 40),
        Some(Violation::Stroke) => RGBColor(255, 127, 14),
        Some(Violation::SphericalJoint) => RGBColor(148, 103, 189),
        Some(Violation::Clearance) => RGBColor(31, 119, 180),
    }
}

fn name(v: Option<Violation>) -> &'static str {
    match v {
        None => "reachable",
        Some(Violation::Unreachable) => "arm cannot reach the rail",
        Some(Violation::Stroke) => "beyond the stroke",
        Some(Violation::SphericalJoint) => "spherical joint > limit",
        Some(Violation::Clearance) => "arms collide",
    }
}

/// Draws the check as a PNG (or SVG, by the file's extension): top view (x, y) and side view
/// (x, z) of the cloud, failing points on top in their constraint's colour, in mm.
pub fn plot(coverage: &Coverage, title: &str, path: &Path) -> Result<(), String> {
    let size = (1400, 760);
    let svg = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    let result = if svg {
        draw(
            SVGBackend::new(path, size).into_drawing_area(),
            coverage,
            title,
        )
    } else {
        draw(
            BitMapBackend::new(path, size).into_drawing_area(),
            coverage,
            title,
        )
    };
    result.map_err(|e| format!("{}: {e}", path.display()))
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    coverage: &Coverage,
    title: &str,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    // Header: the title, then the legend on its own row (outside the views: no point hidden).
    let (top, body) = root.split_vertically(96);
    top.draw(&Text::new(
        format!(
            "{title}: {} of {} points reachable ({} mm cloud)",
            coverage.reachable,
            coverage.points,
            (coverage.step * 1e3).round()
        ),
        (20, 12),
        ("sans-serif", 30),
    ))?;
    let legend_style = TextStyle::from(("sans-serif", 22).into_font()).pos(
        plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        ),
    );
    let mut x = 30;
    for v in [
        None,
        Some(Violation::Unreachable),
        Some(Violation::Stroke),
        Some(Violation::SphericalJoint),
        Some(Violation::Clearance),
    ] {
        top.draw(&Circle::new((x, 70), 6, colour(v).filled()))?;
        top.draw_text(name(v), &legend_style, (x + 14, 70))?;
        let (w, _) = top.estimate_text_size(name(v), &legend_style)?;
        x += 14 + w as i32 + 40;
    }
    let c = &coverage.cylinder;
    let r = c.radius * 1e3 * 1.15;
    let (z_lo, z_hi) = ((c.z_top - c.height) * 1e3, c.z_top * 1e3);
    let pad = 0.1 * (z_hi - z_lo);
    let panels = body.split_evenly((1, 2));
    // The failing points are copies of cloud points: a set of their bits finds them in
    // constant time (a scan per cloud point was quadratic in the cloud's size).
    let bits = |p: &Vector3<f64>| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()];
    let failing: std::collections::HashSet<[u64; 3]> =
        coverage.failing.iter().map(|(q, _)| bits(q)).collect();
    let failing_at = |p: &Vector3<f64>| failing.contains(&bits(p));
    for (k, panel) in panels.iter().enumerate() {
        let (x_range, y_range, x_desc, y_desc) = if k == 0 {
            (-r..r, -r..r, "x [mm]", "y [mm]")
        } else {
            (-r..r, z_lo - pad..z_hi + pad, "x [mm]", "z [mm]")
        };
        let mut chart = ChartBuilder::on(panel)
            .caption(
                if k == 0 { "top view" } else { "side view" },
                ("sans-serif", 26),
            )
            .margin(15)
            .margin_right(30)
            .x_label_area_size(60)
            .y_label_area_size(95)
            .build_cartesian_2d(
                crate::plotting::checked_axis("x", x_range.start, x_range.end)?,
                crate::plotting::checked_axis(y_desc, y_range.start, y_range.end)?,
            )?;
        let tick = crate::plotting::tick_label;
        let (x_span, y_span) = (x_range.end - x_range.start, y_range.end - y_range.start);
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|v| tick(*v, x_span))
            .y_label_formatter(&|v| tick(*v, y_span))
            .label_style(("sans-serif", 22))
            .axis_desc_style(("sans-serif", 24))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let project = |p: &Vector3<f64>| {
            if k == 0 {
                (p.x * 1e3, p.y * 1e3)
            } else {
                (p.x * 1e3, p.z * 1e3)
            }
        };
        chart.draw_series(
            coverage
                .cloud
                .iter()
                .filter(|p| !failing_at(p))
                .map(|p| Circle::new(project(p), 2, colour(None).filled())),
        )?;
        let kinds: [Option<Violation>; 5] = [
            None,
            Some(Violation::Unreachable),
            Some(Violation::Stroke),
            Some(Violation::SphericalJoint),
            Some(Violation::Clearance),
        ];
        for v in kinds.into_iter().skip(1) {
            chart.draw_series(
                coverage
                    .failing
                    .iter()
                    .filter(|(_, w)| Some(*w) == v)
                    .map(|(p, _)| Circle::new(project(p), 4, colour(v).filled())),
            )?;
        }
    }
    root.present()?;
    Ok(())
}
