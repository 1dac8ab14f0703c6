//! The report's plots, drawn once per backend (PNG via the bitmap backend, SVG).
//!
//! Positions are drawn in mm (the unit of seed 000's figures), time in s. Legends sit in a
//! header strip and segment names in head-room above the curves, so neither covers data.
//! Long series are thinned to the minimum and maximum of each of ~2000 buckets per curve,
//! which keeps peaks visible and the SVGs small.

use super::ReportError;
use crate::metrics::{Alignment, Comparison};
use crate::plotting::{checked_axis, tick_label};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::error::Error;
use std::path::{Path, PathBuf};

type DrawResult = Result<(), Box<dyn Error>>;

const REFERENCE: RGBColor = RGBColor(214, 39, 40);
const ACTUAL: RGBColor = RGBColor(31, 119, 180);
const ERROR: RGBColor = RGBColor(44, 44, 44);
const RMS: RGBColor = RGBColor(255, 127, 14);
const SHADE: RGBColor = RGBColor(120, 160, 220);
const FONT: &str = "sans-serif";
/// The reference is a wide translucent band, the actual a narrower line drawn over it, so
/// both stay visible where they coincide.
const REFERENCE_ALPHA: f64 = 0.45;
const ACTUAL_ALPHA: f64 = 0.9;

/// Contiguous runs of one segment tag: (start time, end time, name).
fn runs(aligned: &Alignment) -> Vec<(f64, f64, String)> {
    let mut out: Vec<(f64, f64, String)> = Vec::new();
    let mut current: Option<(usize, Option<usize>)> = None;
    for (k, (&t, seg)) in aligned.t.iter().zip(&aligned.segment).enumerate() {
        match current {
            Some((_, s)) if s == *seg => {}
            _ => {
                if let Some((start, Some(s))) = current {
                    out.push((aligned.t[start], t, aligned.segment_names[s].clone()));
                }
                current = Some((k, *seg));
            }
        }
    }
    if let (Some((start, Some(s))), Some(&end)) = (current, aligned.t.last()) {
        out.push((aligned.t[start], end, aligned.segment_names[s].clone()));
    }
    out
}

/// At most ~2·`buckets` points: each bucket's minimum and maximum, in time order.
fn thin(t: &[f64], y: &[f64], buckets: usize) -> Vec<(f64, f64)> {
    let n = t.len();
    if n <= 2 * buckets {
        return t.iter().copied().zip(y.iter().copied()).collect();
    }
    let size = n.div_ceil(buckets);
    let mut out = Vec::with_capacity(2 * buckets + 1);
    for start in (0..n).step_by(size) {
        let end = (start + size).min(n);
        let (mut lo, mut hi) = (start, start);
        for k in start..end {
            if y[k] < y[lo] {
                lo = k;
            }
            if y[k] > y[hi] {
                hi = k;
            }
        }
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push((t[a], y[a]));
        if b != a {
            out.push((t[b], y[b]));
        }
    }
    out
}

/// (min, max) of the values, widened so that a flat channel still gets a readable axis.
fn range(values: impl Iterator<Item = f64>, min_span: f64) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max((min_span - (hi - lo)).max(0.0) / 2.0);
    (lo - pad, hi + pad)
}

/// Header strip: title on the left, coloured legend entries on the right. A title too long
/// for the room the legend leaves is set smaller (down to 24 px), then on two lines (broken
/// at " vs ", or after as many words as fit), the second shortened with "…" if it still does
/// not fit: never drawn past the edge or under the legend.
fn header<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    entries: &[(&str, RGBColor)],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (width, height) = area.dim_in_pixel();
    let y = height as i32 / 2;
    let mut x = width as i32 - 15;
    for (label, color) in entries.iter().rev() {
        let style = TextStyle::from((FONT, 24).into_font()).pos(text_anchor(HPos::Right));
        let (w, _) = area.estimate_text_size(label, &style)?;
        area.draw_text(label, &style, (x, y))?;
        x -= w as i32 + 8;
        area.draw(&PathElement::new(
            vec![(x - 30, y), (x, y)],
            color.stroke_width(3),
        ))?;
        x -= 30 + 25;
    }
    // Room for the title: from the left margin to the legend, less a gap.
    let room = (x - 15 - 20).max(100) as u32;
    let style = |size: u32| TextStyle::from((FONT, size).into_font()).pos(text_anchor(HPos::Left));
    let fits = |text: &str, size: u32| -> Result<bool, Box<dyn Error>> {
        Ok(area.estimate_text_size(text, &style(size))?.0 <= room)
    };
    for size in [30, 26, 24] {
        if fits(title, size)? {
            area.draw_text(title, &style(size), (15, y))?;
            return Ok(());
        }
    }
    // Two lines at 24 px (the smallest text of the figures): at " vs " when both halves
    // fit, else as many words as fit on the first.
    let size = 24;
    let lines = match title.find(" vs ") {
        Some(k) if fits(&title[..k], size)? && fits(&title[k + 1..], size)? => {
            vec![title[..k].to_string(), title[k + 1..].to_string()]
        }
        _ => {
            let words: Vec<&str> = title.split(' ').collect();
            let mut n = 1;
            while n < words.len() && fits(&words[..n + 1].join(" "), size)? {
                n += 1;
            }
            vec![words[..n].join(" "), words[n..].join(" ")]
        }
    };
    for (k, line) in lines.iter().filter(|l| !l.is_empty()).enumerate() {
        let mut text = line.to_string();
        while !fits(&text, size)? && text.chars().count() > 1 {
            text.pop();
            text = text.trim_end().to_string();
            text.pop();
            text.push('…');
        }
        let line_y = y + (2 * k as i32 - 1) * 14;
        area.draw_text(&text, &style(size), (15, line_y))?;
    }
    Ok(())
}

fn text_anchor(h: HPos) -> Pos {
    Pos::new(h, VPos::Center)
}

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Segment shading (every other run, starting with the first, like seed 000 Fig. 5) and,
/// when `labels`, the segment names centred in the head-room above the data.
fn shade<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    runs: &[(f64, f64, String)],
    (lo, hi): (f64, f64),
    label_y: Option<f64>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart.draw_series(runs.iter().enumerate().filter(|(k, _)| k % 2 == 0).map(
        |(_, (t0, t1, _))| Rectangle::new([(*t0, lo), (*t1, hi)], SHADE.mix(0.22).filled()),
    ))?;
    if let Some(y) = label_y {
        let style = TextStyle::from((FONT, 24).into_font())
            .pos(Pos::new(HPos::Center, VPos::Center))
            .color(&BLACK);
        chart.draw_series(
            runs.iter()
                .map(|(t0, t1, name)| Text::new(name.clone(), ((t0 + t1) / 2.0, y), &style)),
        )?;
    }
    Ok(())
}

fn axes_plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    aligned: &Alignment,
    title: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (top, body) = root.split_vertically(64);
    let lag = if aligned.lag_samples > 0 {
        format!(
            "actual, shifted back by the lag ({:.0} ms)",
            aligned.lag_s * 1e3
        )
    } else {
        "actual".to_string()
    };
    header(
        &top,
        title,
        &[("reference (commanded)", REFERENCE), (&lag, ACTUAL)],
    )?;
    let runs = runs(aligned);
    let t = &aligned.t;
    let (t0, t1) = (t[0], *t.last().unwrap_or(&t[0]));
    let panels = body.split_evenly((3, 1));
    for (axis, panel) in panels.iter().enumerate() {
        let name = ["X", "Y", "Z"][axis];
        let r: Vec<f64> = aligned.reference.iter().map(|p| p[axis] * 1e3).collect();
        let a: Vec<f64> = aligned.actual.iter().map(|p| p[axis] * 1e3).collect();
        let (lo, hi) = range(r.iter().chain(&a).copied(), 1.0);
        // Head-room for the segment names above the curves.
        let top_y = hi + (hi - lo) * 0.18;
        let last = axis == 2;
        let mut chart = ChartBuilder::on(panel)
            .margin_left(10)
            .margin_right(25)
            .margin_top(8)
            .margin_bottom(if last { 5 } else { 12 })
            .x_label_area_size(if last { 75 } else { 40 })
            .y_label_area_size(115)
            .build_cartesian_2d(
                checked_axis("time", t0, t1)?,
                checked_axis(name, lo, top_y)?,
            )?;
        let (fx, fy) = (
            |v: &f64| tick_label(*v, t1 - t0),
            |v: &f64| tick_label(*v, top_y - lo),
        );
        let mut mesh = chart.configure_mesh();
        mesh.x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .y_desc(format!("{name} [mm]"))
            .label_style((FONT, 24))
            .axis_desc_style((FONT, 26))
            .light_line_style(WHITE.mix(0.0));
        if last {
            mesh.x_desc("time [s]");
        }
        mesh.draw()?;
        shade(&mut chart, &runs, (lo, top_y), Some(hi + (hi - lo) * 0.09))?;
        chart.draw_series(LineSeries::new(
            thin(t, &r, 2000),
            REFERENCE.mix(REFERENCE_ALPHA).stroke_width(4),
        ))?;
        chart.draw_series(LineSeries::new(
            thin(t, &a, 2000),
            ACTUAL.mix(ACTUAL_ALPHA).stroke_width(2),
        ))?;
    }
    root.present()?;
    Ok(())
}

fn error_plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    aligned: &Alignment,
    comparison: &Comparison,
    title: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (top, body) = root.split_vertically(64);
    let rms = comparison.total.rms_3d * 1e3;
    let rms_label = format!("RMS 3D = {rms:.3} mm");
    header(
        &top,
        title,
        &[("|actual − reference| (3D)", ERROR), (&rms_label, RMS)],
    )?;
    let t = &aligned.t;
    let e: Vec<f64> = aligned
        .reference
        .iter()
        .zip(&aligned.actual)
        .map(|(r, a)| {
            let (dx, dy, dz) = (a[0] - r[0], a[1] - r[1], a[2] - r[2]);
            (dx * dx + dy * dy + dz * dz).sqrt() * 1e3
        })
        .collect();
    let hi = e.iter().copied().fold(0.0, f64::max).max(1e-3) * 1.05;
    let top_y = hi * 1.15;
    let (t0, t1) = (t[0], *t.last().unwrap_or(&t[0]));
    let mut chart = time_chart(&body, (t0, t1), (0.0, top_y), "3D error [mm]")?;
    shade(&mut chart, &runs(aligned), (0.0, top_y), Some(hi * 1.075))?;
    chart.draw_series(LineSeries::new(thin(t, &e, 2000), ERROR.stroke_width(1)))?;
    chart.draw_series(LineSeries::new(
        vec![(t0, rms), (t1, rms)],
        RMS.stroke_width(2),
    ))?;
    root.present()?;
    Ok(())
}

fn paths_plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    aligned: &Alignment,
    title: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (top, body) = root.split_vertically(64);
    header(
        &top,
        title,
        &[("reference (commanded)", REFERENCE), ("actual", ACTUAL)],
    )?;
    let panels = body.split_evenly((1, 3));
    for (panel, (i, j)) in panels.iter().zip([(0, 1), (0, 2), (1, 2)]) {
        let names = ["x", "y", "z"];
        let pick = |pts: &[[f64; 3]]| -> Vec<(f64, f64)> {
            let step = (pts.len() / 4000).max(1);
            pts.iter()
                .step_by(step)
                .map(|p| (p[i] * 1e3, p[j] * 1e3))
                .collect()
        };
        let (r, a) = (pick(&aligned.reference), pick(&aligned.actual));
        let (xlo, xhi) = range(r.iter().chain(&a).map(|p| p.0), 1.0);
        let (ylo, yhi) = range(r.iter().chain(&a).map(|p| p.1), 1.0);
        // Same scale on both axes, so that squares look square.
        let span = (xhi - xlo).max(yhi - ylo);
        let (xc, yc) = ((xlo + xhi) / 2.0, (ylo + yhi) / 2.0);
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!(
                    "{}{} projection",
                    names[i].to_uppercase(),
                    names[j].to_uppercase()
                ),
                (FONT, 26),
            )
            .margin(15)
            .x_label_area_size(75)
            .y_label_area_size(105)
            .build_cartesian_2d(
                checked_axis(names[i], xc - span / 2.0, xc + span / 2.0)?,
                checked_axis(names[j], yc - span / 2.0, yc + span / 2.0)?,
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| tick_label(*v, span))
            .y_label_formatter(&|v| tick_label(*v, span))
            .x_labels(6)
            .y_labels(6)
            .x_desc(format!("{} [mm]", names[i]))
            .y_desc(format!("{} [mm]", names[j]))
            .label_style((FONT, 24))
            .axis_desc_style((FONT, 26))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        chart.draw_series(LineSeries::new(
            r,
            REFERENCE.mix(REFERENCE_ALPHA).stroke_width(4),
        ))?;
        chart.draw_series(LineSeries::new(a, ACTUAL.mix(ACTUAL_ALPHA).stroke_width(2)))?;
    }
    root.present()?;
    Ok(())
}

fn plot_error(path: &Path, error: Box<dyn Error>) -> ReportError {
    ReportError::Plot {
        file: path.display().to_string(),
        message: error.to_string(),
    }
}

/// Draws every plot as PNG and SVG into `dir`, reporting the fraction of the 6 files written;
/// returns the paths written.
pub fn write_all(
    dir: &Path,
    aligned: &Alignment,
    comparison: &Comparison,
    title: &str,
    progress: &dyn Fn(f64),
) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Vec::new();
    let sizes = [
        ("axes", (1600, 1100)),
        ("error", (1600, 600)),
        ("paths", (1800, 680)),
    ];
    for (name, size) in sizes {
        for ext in ["png", "svg"] {
            let path = dir.join(format!("{name}.{ext}"));
            let result = match ext {
                "png" => {
                    let root = BitMapBackend::new(&path, size).into_drawing_area();
                    draw(name, root, aligned, comparison, title)
                }
                _ => {
                    let root = SVGBackend::new(&path, size).into_drawing_area();
                    draw(name, root, aligned, comparison, title)
                }
            };
            result.map_err(|e| plot_error(&path, e))?;
            written.push(path);
            progress(written.len() as f64 / 6.0);
        }
    }
    Ok(written)
}

fn draw<DB: DrawingBackend>(
    name: &str,
    root: DrawingArea<DB, Shift>,
    aligned: &Alignment,
    comparison: &Comparison,
    title: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    match name {
        "axes" => axes_plot(root, aligned, title),
        "error" => error_plot(root, aligned, comparison, title),
        _ => paths_plot(root, aligned, title),
    }
}

type TimeChart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A chart of a value over `t0..t1` on `area` with the report's margins, axes and labels, its
/// mesh drawn: what the plots of one value over a whole run share.
fn time_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    (t0, t1): (f64, f64),
    (lo, hi): (f64, f64),
    y_desc: &str,
) -> Result<TimeChart<'a, DB>, Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin_left(10)
        .margin_right(25)
        .margin_top(8)
        .margin_bottom(5)
        .x_label_area_size(75)
        .y_label_area_size(115)
        .build_cartesian_2d(checked_axis("time", t0, t1)?, checked_axis(y_desc, lo, hi)?)?;
    chart
        .configure_mesh()
        .x_label_formatter(&|v| tick_label(*v, t1 - t0))
        .y_label_formatter(&|v| tick_label(*v, hi - lo))
        .x_desc("time [s]")
        .y_desc(y_desc)
        .label_style((FONT, 24))
        .axis_desc_style((FONT, 26))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    Ok(chart)
}

/// A series over time checked against a bound: what a test suite's report draws for an
/// expectation that failed (a cable's tension, the tracking error, a PLC symbol's value).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckPlot {
    pub title: String,
    /// The value axis, with its unit (`tension [N]`).
    pub y_desc: String,
    /// Named curves of (time, value), each in its own colour.
    pub curves: Vec<(String, Vec<(f64, f64)>)>,
    /// The bound, drawn as a horizontal line with its label.
    pub bound: Option<(String, f64)>,
    /// The time window the expectation holds over (shaded).
    pub window: Option<(f64, f64)>,
    /// Where it failed: a point marked on the curves.
    pub mark: Option<(f64, f64)>,
}

const CURVES: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

impl CheckPlot {
    /// Draws the plot as an SVG file at `path` (1600 × 600).
    pub fn write_svg(&self, path: &Path) -> Result<(), ReportError> {
        let root = SVGBackend::new(path, (1600, 600)).into_drawing_area();
        self.draw(root).map_err(|e| plot_error(path, e))
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let (top, body) = root.split_vertically(64);
        let mut legend: Vec<(&str, RGBColor)> = self
            .curves
            .iter()
            .zip(CURVES.iter().cycle())
            .take(4)
            .map(|((name, _), c)| (name.as_str(), *c))
            .collect();
        if let Some((label, _)) = &self.bound {
            legend.push((label.as_str(), REFERENCE));
        }
        header(&top, &self.title, &legend)?;
        let points = || self.curves.iter().flat_map(|(_, p)| p.iter());
        let (mut t0, mut t1) = points().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
        if let Some((a, b)) = self.window {
            (t0, t1) = (t0.min(a), t1.max(b));
        }
        if !t0.is_finite() {
            (t0, t1) = (0.0, 1.0);
        }
        let bound = self.bound.as_ref().map(|b| b.1);
        let (lo, hi) = range(
            points().map(|p| p.1).chain(bound).filter(|v| v.is_finite()),
            1e-6,
        );
        let mut chart = time_chart(&body, (t0, t1), (lo, hi), &self.y_desc)?;
        if let Some((a, b)) = self.window {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(a, lo), (b, hi)],
                SHADE.mix(0.18).filled(),
            )))?;
        }
        for ((_, curve), color) in self.curves.iter().zip(CURVES.iter().cycle()) {
            let (t, y): (Vec<f64>, Vec<f64>) = curve.iter().copied().unzip();
            chart.draw_series(LineSeries::new(thin(&t, &y, 2000), color.stroke_width(2)))?;
        }
        if let Some(b) = bound {
            chart.draw_series(LineSeries::new(
                vec![(t0, b), (t1, b)],
                REFERENCE.stroke_width(2),
            ))?;
        }
        if let Some(m) = self.mark {
            chart.draw_series(std::iter::once(Circle::new(m, 9, ERROR.stroke_width(3))))?;
        }
        root.present()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_that_would_hang_the_tick_search_are_refused() {
        for (lo, hi) in [
            (0.0, f64::INFINITY),
            (f64::NEG_INFINITY, 0.0),
            (f64::NAN, 1.0),
            (0.0, 1e308),
            (-1e13, 0.0),
        ] {
            let e = checked_axis("x", lo, hi).expect_err("refused").to_string();
            assert!(e.contains("the x axis"), "{e}");
        }
        assert_eq!(checked_axis("t", 2.0, 1.0).unwrap(), 1.0..2.0);
        // An empty or sub-precision span is widened, and plotters' ticks come back.
        for (lo, hi) in [(5.0, 5.0), (1e9, 1e9 + 1e-6), (0.0, 0.0)] {
            let r = checked_axis("t", lo, hi).unwrap();
            assert!(r.end > r.start && r.start <= lo && r.end >= hi, "{r:?}");
            let mut svg = String::new();
            let root = SVGBackend::with_string(&mut svg, (300, 200)).into_drawing_area();
            let mut chart = ChartBuilder::on(&root)
                .x_label_area_size(30)
                .y_label_area_size(30)
                .build_cartesian_2d(r.clone(), r)
                .unwrap();
            chart.configure_mesh().draw().unwrap();
        }
    }
}
