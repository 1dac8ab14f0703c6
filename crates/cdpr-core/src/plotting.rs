//! What every plot of the crate shares (the report's, the workspace's, the linear delta's
//! coverage): tick labels and axis ranges that plotters can draw. Knows no robot.

use std::error::Error;

/// A tick label for `v` on an axis spanning `span`: as many decimals as the tick spacing
/// (about a tenth of the span) needs, and never "-0".
pub fn tick_label(v: f64, span: f64) -> String {
    let step = span / 8.0;
    let decimals = if step.is_finite() && step > 0.0 {
        (-step.log10().floor()).clamp(0.0, 9.0) as usize
    } else {
        1
    };
    let text = format!("{v:.decimals$}");
    if text.parse::<f64>() == Ok(0.0) {
        format!("{:.decimals$}", 0.0)
    } else {
        text
    }
}

/// Largest |value| on a plot axis (in the axis' unit, e.g. mm).
pub const AXIS_LIMIT: f64 = 1e12;

/// The checked range of a plot axis from `lo` to `hi`: plotters' tick search never ends on an
/// infinite or NaN range and stalls on absurd ones, so those are an error (naming `what`);
/// an empty or sub-precision span is widened around its middle.
pub fn checked_axis(what: &str, lo: f64, hi: f64) -> Result<std::ops::Range<f64>, Box<dyn Error>> {
    let (lo, hi) = if hi < lo { (hi, lo) } else { (lo, hi) };
    if !(lo.is_finite() && hi.is_finite() && lo.abs() <= AXIS_LIMIT && hi.abs() <= AXIS_LIMIT) {
        return Err(format!(
            "the {what} axis would span {lo:e} … {hi:e}: not a range a plot can show"
        )
        .into());
    }
    let mid = 0.5 * (lo + hi);
    let min_span = (mid.abs() * 1e-9).max(1e-9);
    Ok(if hi - lo < min_span {
        mid - min_span / 2.0..mid + min_span / 2.0
    } else {
        lo..hi
    })
}
