//! `cdpr report`: the comparison written as JSON, a Markdown table shaped like seed 000's
//! Table 1 (rows = segments + total; RMS X/Y/Z/3D and Fréchet in mm) and plots (PNG and SVG):
//! per-axis reference vs actual over time with the segments shaded (seed 000, Fig. 5), the 3D
//! error over time, and the paths in three projections. The plots show exactly the pairs the
//! metrics were computed on (actual resampled and shifted by the lag when it was removed).

pub mod plots;

use crate::metrics::{self, Alignment, Comparison, Metrics, MetricsError};
use crate::trajectory::Trajectory;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{file}: {cause}")]
    Io {
        file: String,
        /// In the message, not also a `source`: an error chain prints each cause once.
        cause: std::io::Error,
    },
    #[error("{file}: drawing the plot failed: {message}")]
    Plot { file: String, message: String },
    /// A position or time too large to draw (a plot of it would be meaningless, and the
    /// plotting library loops forever on an infinite axis).
    #[error(
        "the {series} trajectory's {what} is {value:e} {unit} at t = {t} s: beyond what a plot can show \
         (|{what}| ≤ {limit:e} {unit}); check that row of the CSV"
    )]
    Range {
        series: &'static str,
        what: &'static str,
        value: f64,
        t: f64,
        limit: f64,
        unit: &'static str,
    },
    #[error(transparent)]
    Metrics(#[from] MetricsError),
}

/// Largest |position| a report plots, m (a cable robot spans metres to hundreds of metres).
pub const POSITION_LIMIT_M: f64 = 1e6;
/// Largest |time| a report plots, s (about 30 years).
pub const TIME_LIMIT_S: f64 = 1e9;

/// Refuses a trajectory whose times or positions cannot be plotted (not finite or absurdly
/// large), naming the series, the coordinate and the time.
pub fn check_plottable(series: &'static str, trajectory: &Trajectory) -> Result<(), ReportError> {
    for s in &trajectory.samples {
        let bad = |what, value: f64, limit, unit| {
            (!(value.is_finite() && value.abs() <= limit)).then_some(ReportError::Range {
                series,
                what,
                value,
                t: s.t,
                limit,
                unit,
            })
        };
        let p = s.pose.position;
        let found = bad("t", s.t, TIME_LIMIT_S, "s")
            .or_else(|| bad("x", p.x, POSITION_LIMIT_M, "m"))
            .or_else(|| bad("y", p.y, POSITION_LIMIT_M, "m"))
            .or_else(|| bad("z", p.z, POSITION_LIMIT_M, "m"));
        if let Some(e) = found {
            return Err(e);
        }
    }
    Ok(())
}

/// The files a report consists of.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReportFiles {
    pub dir: PathBuf,
    /// The [`Comparison`] as JSON (`metrics.json`).
    pub metrics: PathBuf,
    /// The Markdown report (`report.md`), embedding the PNGs.
    pub markdown: PathBuf,
    /// `axes`, `error`, `paths` as PNG and SVG.
    pub plots: Vec<PathBuf>,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |cause| ReportError::Io {
        file: path.display().to_string(),
        cause,
    }
}

/// Writes `metrics.json`, `report.md` and the plots into `dir` (created if needed).
pub fn write_report(
    dir: impl AsRef<Path>,
    reference: &Trajectory,
    actual: &Trajectory,
    comparison: &Comparison,
    title: &str,
) -> Result<ReportFiles, ReportError> {
    write_report_with_progress(dir, reference, actual, comparison, title, &|_| {})
}

/// [`write_report`], reporting the fraction of the plot files written.
pub fn write_report_with_progress(
    dir: impl AsRef<Path>,
    reference: &Trajectory,
    actual: &Trajectory,
    comparison: &Comparison,
    title: &str,
    progress: &dyn Fn(f64),
) -> Result<ReportFiles, ReportError> {
    let dir = dir.as_ref();
    check_plottable("reference", reference)?;
    check_plottable("actual", actual)?;
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let lag = if comparison.lag_removed {
        comparison.lag_samples
    } else {
        0
    };
    let aligned = metrics::align(reference, actual, Some(lag), comparison.max_lag_s)?;

    let metrics_path = dir.join("metrics.json");
    let json = serde_json::to_string_pretty(comparison).map_err(|e| ReportError::Io {
        file: metrics_path.display().to_string(),
        cause: e.into(),
    })?;
    std::fs::write(&metrics_path, json + "\n").map_err(io_error(&metrics_path))?;

    let plots = plots::write_all(dir, &aligned, comparison, title, progress)?;

    let markdown_path = dir.join("report.md");
    let text = markdown(comparison, &aligned, title);
    std::fs::write(&markdown_path, text).map_err(io_error(&markdown_path))?;
    Ok(ReportFiles {
        dir: dir.to_path_buf(),
        metrics: metrics_path,
        markdown: markdown_path,
        plots,
    })
}

fn mm(x: f64) -> String {
    if x.is_finite() {
        format!("{:.3}", x * 1e3)
    } else {
        "–".into()
    }
}

fn nrmse_text(n: &[Option<f64>; 3]) -> String {
    let axis = ["x", "y", "z"];
    n.iter()
        .zip(axis)
        .map(|(v, a)| match v {
            Some(v) => format!("{a} {v:.4}"),
            None => format!("{a} – (constant reference)"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Seed 000's Table 1 columns of one row, in mm with 3 decimals ("–" when not finite): RMS
/// of x, y, z, RMS 3D, Fréchet distance, largest 3D error.
pub fn metric_cells(m: &Metrics) -> [String; 6] {
    [m.rms[0], m.rms[1], m.rms[2], m.rms_3d, m.frechet, m.max_3d].map(mm)
}

fn table_row(out: &mut String, name: &str, m: &Metrics) {
    let _ = writeln!(
        out,
        "| {name} | {} | {} |",
        metric_cells(m).join(" | "),
        m.samples
    );
}

/// The Markdown report: a summary, Table 1's shape, NRMSE, and the plots.
pub fn markdown(comparison: &Comparison, aligned: &Alignment, title: &str) -> String {
    let c = comparison;
    let mut out = String::new();
    let _ = writeln!(out, "# {title}\n");
    let _ = writeln!(
        out,
        "Reference: {} samples; actual: {} samples, resampled onto the reference instants by \
         linear interpolation; {} pairs compared{}.\n",
        c.reference_samples,
        c.actual_samples,
        c.total.samples,
        if c.reference_outside_actual > 0 {
            format!(
                " ({} reference samples lie outside the actual's time span and are left out)",
                c.reference_outside_actual
            )
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "Lag of the actual behind the reference (normalised cross-correlation, searched up to {} s): \
         **{} samples = {:.1} ms**, {}.\n",
        c.max_lag_s,
        c.lag_samples,
        c.lag_s * 1e3,
        if c.lag_removed {
            "removed before the error metrics"
        } else {
            "not removed (compared at equal instants)"
        }
    );
    let _ = writeln!(
        out,
        "| Segment | RMS X (mm) | RMS Y (mm) | RMS Z (mm) | RMS X-Y-Z (mm) | Fréchet (mm) | Max 3D (mm) | Samples |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for s in &c.segments {
        table_row(&mut out, &s.name, &s.metrics);
    }
    table_row(&mut out, "**TOTAL**", &c.total);
    let _ = writeln!(
        out,
        "\nRMS X-Y-Z is √(mean |e|²) of the 3D error; Fréchet is the discrete Fréchet distance \
         of the two 3D paths.\n"
    );
    let _ = writeln!(
        out,
        "NRMSE (seed 004; MATLAB `goodnessOfFit` 'NRMSE' = 1 − ‖x_ref − x‖ / ‖x_ref − mean(x_ref)‖, \
         1 is a perfect fit): total {}.",
        nrmse_text(&c.total.nrmse)
    );
    for s in &c.segments {
        let _ = writeln!(out, "- {}: {}", s.name, nrmse_text(&s.metrics.nrmse));
    }
    let shift = if aligned.lag_samples > 0 {
        format!(
            ", the actual shifted back by the lag ({:.1} ms)",
            aligned.lag_s * 1e3
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\n## Plots\n\nReference (red) and actual (blue) per axis over time, segments shaded{shift}:\n\n\
         ![per-axis positions](axes.png)\n\n3D error over time:\n\n![3D error](error.png)\n\n\
         Paths in the XY, XZ and YZ projections:\n\n![paths](paths.png)\n\n\
         SVG versions: `axes.svg`, `error.svg`, `paths.svg`; all numbers: `metrics.json` (SI, m)."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinematics::Pose;
    use crate::trajectory::Sample;

    #[test]
    fn writing_a_report_reports_each_plot_file_up_to_one() {
        let track = |offset: f64| Trajectory {
            samples: (0..200)
                .map(|k| {
                    let t = k as f64 * 0.01;
                    Sample {
                        t,
                        pose: Pose::from_array([
                            t.sin() * 0.1 + offset,
                            t * 0.05,
                            0.2,
                            0.0,
                            0.0,
                            0.0,
                        ]),
                        velocity: [0.0; 6],
                        acceleration: [0.0; 6],
                        segment: None,
                    }
                })
                .collect(),
            segments: Vec::new(),
        };
        let (reference, actual) = (track(0.0), track(0.001));
        let c = metrics::compare(&reference, &actual, &Default::default()).expect("compares");
        let dir = std::env::temp_dir().join(format!("cdpr-report-progress-{}", std::process::id()));
        let seen = std::cell::RefCell::new(Vec::new());
        let files = write_report_with_progress(&dir, &reference, &actual, &c, "t", &|f| {
            seen.borrow_mut().push(f)
        })
        .expect("written");
        let seen = seen.into_inner();
        assert_eq!(seen.len(), files.plots.len());
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
        assert_eq!(seen.last().copied(), Some(1.0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
