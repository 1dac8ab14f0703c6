//! The tension colour scale and the scene's fixed colours.
//!
//! Tensions map from 0 to a "nice" upper bound (1, 2 or 5 × 10^k N) that grows with the largest
//! tension seen in the run, so that a 1 kg robot (a few newtons) and CAROCA (hundreds) both use
//! the whole scale; the legend shows the bound. Slack cables (no tension) are not on the scale:
//! they are drawn thin and grey.

use bevy::color::Color;

#[cfg(test)]
use cdpr_core::colors::STOPS;
pub use cdpr_core::colors::{SLACK, is_slack, nice_ceil, scale_color};

/// A core colour as Bevy's.
const fn rgb(c: [f32; 3]) -> Color {
    Color::srgb(c[0], c[1], c[2])
}

pub const SLACK_COLOR: Color = rgb(cdpr_core::colors::SLACK_RGB);
pub const PLATFORM_COLOR: Color = rgb(cdpr_core::colors::PLATFORM_RGB);
pub const TCP_COLOR: Color = Color::srgb(1.0, 1.0, 1.0);
pub const PULLEY_COLOR: Color = rgb(cdpr_core::colors::PULLEY_RGB);
pub const LEG_COLOR: Color = Color::srgb(0.85, 0.87, 0.90);
pub const FRAME_COLOR: Color = rgb(cdpr_core::colors::FRAME_RGB);
pub const WORKSPACE_COLOR: Color = Color::srgba(0.45, 0.75, 0.95, 0.35);
pub const COMMANDED_TRAIL: Color = Color::srgb(0.92, 0.92, 0.92);
pub const ACTUAL_TRAIL: Color = Color::srgb(1.0, 0.35, 0.75);
pub const GHOST_COLOR: Color = Color::srgba(1.0, 1.0, 1.0, 0.8);
/// The compared run of a replay (`--compare`): a ghost too, told apart from the commanded
/// pose's.
pub const COMPARE_COLOR: Color = Color::srgba(0.35, 0.9, 1.0, 0.85);
pub const GROUND_COLOR: Color = Color::srgb(0.22, 0.24, 0.27);
pub const BACKGROUND: Color = Color::srgb(0.08, 0.09, 0.11);

/// A cable's colour: on the scale, or grey when slack.
pub fn tension_color(tension: f64, scale_max: f64) -> Color {
    if is_slack(tension) {
        return SLACK_COLOR;
    }
    let [r, g, b] = scale_color(tension / scale_max.max(SLACK));
    Color::srgb(r, g, b)
}

/// egui's colour for a Bevy colour (sRGB, opaque).
pub fn to_color32(color: Color) -> bevy_egui::egui::Color32 {
    let s = color.to_srgba();
    let byte = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    bevy_egui::egui::Color32::from_rgb(byte(s.red), byte(s.green), byte(s.blue))
}

/// A force on the tension scale in words: whole newtons from 10 N, one decimal below.
pub fn scale_label(value: f64) -> String {
    if value >= 10.0 || value == value.round() {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Colours equal to f32 rounding (the interpolation may land one ulp off a stop).
    fn close(a: [f32; 3], b: [f32; 3]) -> bool {
        (0..3).all(|c| (a[c] - b[c]).abs() < 1e-6)
    }

    #[test]
    fn the_scale_runs_from_blue_to_red_through_the_stops() {
        assert!(close(scale_color(0.0), STOPS[0]));
        assert!(close(scale_color(1.0), STOPS[5]));
        assert!(close(scale_color(0.4), STOPS[2]));
        assert!(close(scale_color(7.0), STOPS[5]));
        assert!(close(scale_color(f64::NAN), STOPS[0]));
        let mid = scale_color(0.1); // halfway between the first two stops
        for c in 0..3 {
            assert!((mid[c] - 0.5 * (STOPS[0][c] + STOPS[1][c])).abs() < 1e-6);
        }
    }

    #[test]
    fn slack_cables_are_grey_and_taut_ones_are_not() {
        assert_eq!(tension_color(0.0, 10.0), SLACK_COLOR);
        assert_eq!(tension_color(-3.0, 10.0), SLACK_COLOR);
        assert_eq!(tension_color(f64::NAN, 10.0), SLACK_COLOR);
        assert_ne!(tension_color(0.01, 10.0), SLACK_COLOR);
        let top = tension_color(10.0, 10.0).to_srgba();
        assert!(
            close([top.red, top.green, top.blue], [0.90, 0.12, 0.10]),
            "{top:?}"
        );
    }

    #[test]
    fn nice_bounds_are_1_2_5_decades() {
        for (x, want) in [
            (0.0, 1.0),
            (0.7, 1.0),
            (1.0, 1.0),
            (1.2, 2.0),
            (4.9, 5.0),
            (5.0, 5.0),
            (7.3, 10.0),
            (99.0, 100.0),
            (101.0, 200.0),
            (2400.0, 5000.0),
            (6500.0, 10000.0),
        ] {
            assert_eq!(nice_ceil(x), want, "nice_ceil({x})");
        }
    }
}
