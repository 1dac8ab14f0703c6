//! Slices of the workspace as PNG and SVG: horizontal (XY) slices in a row, the vertical XZ
//! slice below; feasible cells coloured by the largest reachable minimum tension (a
//! viridis-like scale from f_min up), infeasible cells in two greys (tensions exist but not
//! within the bounds / none hold the platform at all), the robot's `[workspace]` box outlined
//! where the plane cuts it; with an interference check, cells where something interferes in
//! the scene's interference colour. Axes in metres, equal scale on both axes of a panel.

use super::{Plane, Slice};
use crate::plotting::{checked_axis as axis, tick_label};
use crate::robot::Aabb;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::error::Error;
use std::path::{Path, PathBuf};

type DrawResult = Result<(), Box<dyn Error>>;

const FONT: &str = "sans-serif";
/// What the colours of feasible cells mean.
pub const COLOUR_BAR_LABEL: &str = "largest reachable minimum tension [N]";
const BELOW_MIN: RGBColor = RGBColor(215, 215, 215);
const NO_TENSIONS: RGBColor = RGBColor(150, 150, 150);
const BOX: RGBColor = RGBColor(214, 39, 40);

/// Cells where something interferes: the scene's interference colour.
fn colliding_colour() -> RGBColor {
    let [r, g, b] = crate::colors::INTERFERENCE_RGB.map(|c| (c * 255.0).round() as u8);
    RGBColor(r, g, b)
}

/// A plot could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{file}: drawing the workspace plot failed: {message}")]
pub struct PlotError {
    pub file: String,
    pub message: String,
}

/// What the figure shows besides the slices.
#[derive(Debug, Clone)]
pub struct PlotSpec<'a> {
    pub title: &'a str,
    /// The lower tension bound that decides feasibility, N.
    pub f_min: f64,
    /// Upper end of the colour scale, N.
    pub f_top: f64,
    /// The robot file's workspace box, outlined.
    pub workspace: Option<Aabb>,
    /// The clearance colliding cells were marked at, m (None: not checked).
    pub clearance: Option<f64>,
}

/// Viridis, sampled at eight points and interpolated linearly.
fn viridis(u: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 8] = [
        (68, 1, 84),
        (70, 50, 127),
        (54, 92, 141),
        (39, 127, 142),
        (31, 161, 135),
        (74, 194, 109),
        (159, 218, 58),
        (253, 231, 37),
    ];
    let x = u.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let k = (x.floor() as usize).min(STOPS.len() - 2);
    let w = x - k as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * w).round() as u8;
    let (a, b) = (STOPS[k], STOPS[k + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn cell_color(capacity: Option<f64>, feasible: bool, spec: &PlotSpec) -> RGBColor {
    match (capacity, feasible) {
        (Some(c), true) => viridis((c - spec.f_min) / (spec.f_top - spec.f_min).max(1e-9)),
        (Some(_), false) => BELOW_MIN,
        (None, _) => NO_TENSIONS,
    }
}

/// Writes `<stem>.png` and `<stem>.svg` into `dir`; returns their paths.
pub fn write_slices(
    dir: &Path,
    stem: &str,
    slices: &[Slice],
    spec: &PlotSpec,
) -> Result<Vec<PathBuf>, PlotError> {
    let size = figure_size(slices);
    let mut written = Vec::new();
    for ext in ["png", "svg"] {
        let path = dir.join(format!("{stem}.{ext}"));
        let result = if ext == "png" {
            draw(
                BitMapBackend::new(&path, size).into_drawing_area(),
                slices,
                spec,
            )
        } else {
            draw(
                SVGBackend::new(&path, size).into_drawing_area(),
                slices,
                spec,
            )
        };
        result.map_err(|e| PlotError {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        written.push(path);
    }
    Ok(written)
}

const WIDTH: u32 = 1700;
const HEADER: u32 = 100;
const BAR: u32 = 200;

fn aspect(s: &Slice) -> f64 {
    let du = s.u_edges.last().unwrap_or(&1.0) - s.u_edges[0];
    let dv = s.v_edges.last().unwrap_or(&1.0) - s.v_edges[0];
    (dv / du.max(1e-9)).clamp(0.05, 5.0)
}

/// Panel rows: the XY slices side by side, then each XZ slice on its own row.
fn rows(slices: &[Slice]) -> (Vec<&Slice>, Vec<&Slice>) {
    let xy = slices
        .iter()
        .filter(|s| matches!(s.plane, Plane::Xy(_)))
        .collect();
    let xz = slices
        .iter()
        .filter(|s| matches!(s.plane, Plane::Xz(_)))
        .collect();
    (xy, xz)
}

/// Heights of the panel rows (pixels), keeping each panel's data at equal scale.
fn row_heights(slices: &[Slice]) -> Vec<u32> {
    let (xy, xz) = rows(slices);
    let body = (WIDTH - BAR) as f64;
    let mut heights = Vec::new();
    if let Some(first) = xy.first() {
        let w = body / xy.len() as f64 - 130.0;
        heights.push((w * aspect(first) + 130.0) as u32);
    }
    for s in xz {
        heights.push(((body - 130.0) * aspect(s) + 130.0) as u32);
    }
    heights
}

fn figure_size(slices: &[Slice]) -> (u32, u32) {
    (
        WIDTH,
        HEADER + row_heights(slices).iter().sum::<u32>().max(200),
    )
}

fn caption(plane: Plane) -> String {
    match plane {
        Plane::Xy(z) => format!("XY at z = {:.3} m", z),
        Plane::Xz(y) => format!("XZ at y = {:.3} m", y),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    slices: &[Slice],
    spec: &PlotSpec,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(HEADER);
    header(&top, spec)?;
    let (body, bar) = rest.split_horizontally(WIDTH - BAR);
    colour_bar(&bar, spec)?;
    let (xy, xz) = rows(slices);
    let heights = row_heights(slices);
    let mut area = body;
    let mut row = 0;
    if !xy.is_empty() {
        let (this, below) = area.split_vertically(heights[row]);
        row += 1;
        for (panel, s) in this.split_evenly((1, xy.len())).iter().zip(&xy) {
            panel_plot(panel, s, spec)?;
        }
        area = below;
    }
    for s in xz {
        let (this, below) = area.split_vertically(heights[row]);
        row += 1;
        panel_plot(&this, s, spec)?;
        area = below;
    }
    root.present()?;
    Ok(())
}

fn header<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, spec: &PlotSpec) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (width, height) = area.dim_in_pixel();
    // Two rows: the title, then the legend (one row would overlap at these font sizes).
    let left = TextStyle::from((FONT, 30).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    area.draw_text(spec.title, &left, (15, height as i32 / 4 + 2))?;
    let y = 3 * height as i32 / 4;
    let mut entries: Vec<(String, RGBColor, bool)> = vec![
        (
            format!("tensions exist, but not all ≥ {} N", spec.f_min),
            BELOW_MIN,
            true,
        ),
        ("no tensions hold the platform".into(), NO_TENSIONS, true),
        ("[workspace] box of the robot file".into(), BOX, false),
    ];
    if let Some(c) = spec.clearance {
        entries.insert(
            0,
            (
                format!(
                    "interference (clearance {} mm)",
                    crate::text::short(c * 1e3)
                ),
                colliding_colour(),
                true,
            ),
        );
    }
    let mut x = width as i32 - 15;
    for (label, colour, filled) in entries.iter().rev() {
        let style =
            TextStyle::from((FONT, 24).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        let (w, _) = area.estimate_text_size(label, &style)?;
        area.draw_text(label, &style, (x, y))?;
        x -= w as i32 + 8;
        if *filled {
            area.draw(&Rectangle::new(
                [(x - 22, y - 9), (x, y + 9)],
                colour.filled(),
            ))?;
        } else {
            area.draw(&Rectangle::new(
                [(x - 22, y - 9), (x, y + 9)],
                colour.stroke_width(3),
            ))?;
        }
        x -= 22 + 28;
    }
    Ok(())
}

fn colour_bar<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, spec: &PlotSpec) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (lo, hi) = (spec.f_min, spec.f_top.max(spec.f_min + 1e-6));
    let mut chart = ChartBuilder::on(area)
        .margin_top(40)
        .margin_bottom(60)
        .margin_right(10)
        .y_label_area_size(100)
        .build_cartesian_2d(0.0..1.0, axis("capacity", lo, hi)?)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .disable_x_axis()
        .y_labels(8)
        .y_label_formatter(&|v| tick_label(*v, hi - lo))
        .y_desc(COLOUR_BAR_LABEL)
        .axis_desc_style((FONT, 24))
        .label_style((FONT, 24))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let steps = 200;
    chart.draw_series((0..steps).map(|k| {
        let a = lo + (hi - lo) * k as f64 / steps as f64;
        let b = lo + (hi - lo) * (k + 1) as f64 / steps as f64;
        Rectangle::new(
            [(0.0, a), (1.0, b)],
            viridis(k as f64 / steps as f64).filled(),
        )
    }))?;
    Ok(())
}

/// The box's outline in the plane's coordinates, if the plane cuts it.
fn box_outline(plane: Plane, b: &Aabb) -> Option<[(f64, f64); 2]> {
    match plane {
        Plane::Xy(z) if z >= b.min.z - 1e-9 && z <= b.max.z + 1e-9 => {
            Some([(b.min.x, b.min.y), (b.max.x, b.max.y)])
        }
        Plane::Xz(y) if y >= b.min.y - 1e-9 && y <= b.max.y + 1e-9 => {
            Some([(b.min.x, b.min.z), (b.max.x, b.max.z)])
        }
        _ => None,
    }
}

fn panel_plot<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &Slice,
    spec: &PlotSpec,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (u0, u1) = (s.u_edges[0], *s.u_edges.last().unwrap_or(&1.0));
    let (v0, v1) = (s.v_edges[0], *s.v_edges.last().unwrap_or(&1.0));
    let v_name = match s.plane {
        Plane::Xy(_) => "y [m]",
        Plane::Xz(_) => "z [m]",
    };
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .margin_right(20)
        .caption(caption(s.plane), (FONT, 26))
        .x_label_area_size(70)
        .y_label_area_size(100)
        .build_cartesian_2d(axis("x", u0, u1)?, axis(v_name, v0, v1)?)?;
    let n_u = s.u_edges.len() - 1;
    chart.draw_series(
        s.capacity
            .iter()
            .zip(&s.feasible)
            .enumerate()
            .map(|(k, (c, f))| {
                let (a, b) = (k % n_u, k / n_u);
                let colour = if s.colliding.get(k).copied().unwrap_or(false) {
                    colliding_colour()
                } else {
                    cell_color(*c, *f, spec)
                };
                Rectangle::new(
                    [
                        (s.u_edges[a], s.v_edges[b]),
                        (s.u_edges[a + 1], s.v_edges[b + 1]),
                    ],
                    colour.filled(),
                )
            }),
    )?;
    chart
        .configure_mesh()
        .x_desc("x [m]")
        .y_desc(v_name)
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&|v| tick_label(*v, u1 - u0))
        .y_label_formatter(&|v| tick_label(*v, v1 - v0))
        .label_style((FONT, 24))
        .axis_desc_style((FONT, 26))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()?;
    if let Some(corners) = spec
        .workspace
        .as_ref()
        .and_then(|b| box_outline(s.plane, b))
    {
        chart.draw_series(std::iter::once(Rectangle::new(
            corners,
            BOX.stroke_width(3),
        )))?;
    }
    Ok(())
}
