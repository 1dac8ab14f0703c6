//! The tension colour scale and the scene's sizes, shared by every face that draws cables (the Bevy viewer, the
//! Foxglove scene of recordings and of the live view).
//!
//! Tensions map from 0 to a "nice" upper bound (1, 2 or 5 × 10^k N, [`nice_ceil`]) that grows
//! with the largest tension seen in the run, so that a 1 kg robot (a few newtons) and CAROCA
//! (hundreds) both use the whole scale. Slack cables (no tension) are not on the scale.

/// Fixed colours of the scene (sRGB, 0–1), shared by the viewer and the Foxglove scene.
pub const SLACK_RGB: [f32; 3] = [0.55, 0.55, 0.58];
pub const PLATFORM_RGB: [f32; 3] = [0.62, 0.30, 0.85];
pub const PULLEY_RGB: [f32; 3] = [0.90, 0.75, 0.25];
pub const FRAME_RGB: [f32; 3] = [0.62, 0.64, 0.68];
/// A cable or pose in interference (`crate::interference`): magenta, off the tension scale
/// and apart from the platform's purple.
pub const INTERFERENCE_RGB: [f32; 3] = [1.0, 0.0, 0.85];
/// Obstacles (`[[obstacles]]`), drawn translucent.
pub const OBSTACLE_RGB: [f32; 3] = [0.55, 0.42, 0.30];
pub const OBSTACLE_ALPHA: f32 = 0.45;

/// Sizes of the drawn scene that scale with the robot (CAROCA's frame is 7 m long, silva4's
/// platform 8 cm): fractions of the frame box's diagonal, shared by the Bevy viewer and the
/// Foxglove scene, m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneSizes {
    /// Diagonal of the frame box (at least 0.1 m).
    pub diagonal: f64,
    pub cable_radius: f64,
    pub pulley_radius: f64,
    /// The TCP marker: a quarter of the platform's smallest side, at most 0.8 % of the diagonal.
    pub tcp_radius: f64,
}

impl SceneSizes {
    /// The sizes for a frame box of diagonal `frame_diagonal` and a platform whose smallest
    /// side is `platform_side` (m).
    pub fn of(frame_diagonal: f64, platform_side: f64) -> SceneSizes {
        let diagonal = frame_diagonal.max(0.1);
        SceneSizes {
            diagonal,
            cable_radius: 0.0022 * diagonal,
            pulley_radius: 0.009 * diagonal,
            tcp_radius: (0.25 * platform_side.max(0.01)).min(0.008 * diagonal),
        }
    }
}

/// Below this a cable counts as slack, N.
pub const SLACK: f64 = 1e-3;

/// Stops of the scale, low → high: blue, cyan, green, yellow, orange, red. No purple or grey
/// in it, so that the platform (purple) and slack cables (grey) stand apart.
pub const STOPS: [[f32; 3]; 6] = [
    [0.15, 0.35, 0.95],
    [0.10, 0.80, 0.95],
    [0.15, 0.85, 0.30],
    [0.95, 0.90, 0.15],
    [1.00, 0.55, 0.10],
    [0.90, 0.12, 0.10],
];

/// The colour of `fraction` ∈ [0, 1] of the scale (clamped), linear between the stops.
pub fn scale_color(fraction: f64) -> [f32; 3] {
    let x = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = x * (STOPS.len() - 1) as f64;
    let k = (pos.floor() as usize).min(STOPS.len() - 2);
    let u = (pos - k as f64) as f32;
    let (a, b) = (STOPS[k], STOPS[k + 1]);
    [
        a[0] + (b[0] - a[0]) * u,
        a[1] + (b[1] - a[1]) * u,
        a[2] + (b[2] - a[2]) * u,
    ]
}

/// Slack: at most [`SLACK`], or not a number.
pub fn is_slack(tension: f64) -> bool {
    tension.is_nan() || tension <= SLACK
}

/// The smallest 1, 2 or 5 × 10^k that is ≥ `x` (at least 1 N).
pub fn nice_ceil(x: f64) -> f64 {
    if x.is_nan() || x <= 1.0 {
        return 1.0;
    }
    let decade = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * decade)
        .find(|v| *v >= x * (1.0 - 1e-12))
        .unwrap_or(10.0 * decade)
}
