//! How well a model predicts what a robot measures: per drive, the error between a predicted
//! series (the shadow's motor torques, its cable lengths) and the measured one (the drives'
//! own actual values, read from the controller), in constant memory — RMS and largest error,
//! and the lag that best aligns the two.
//!
//! The lag is searched over whole pushes, −[`MAX_LAG`]..=[`MAX_LAG`]: for a lag k ≥ 0 the
//! error is measured(t) − predicted(t − k) (the measurement comes k pushes after the
//! prediction), for k < 0 measured(t + k) − predicted(t). The best lag is the one whose error
//! spreads least about its mean (its standard deviation): a constant offset between the two
//! (a friction the model lacks, a torque sensor's zero) does not move it. Each lag's sums are
//! kept from the first push on, so the best lag is exact over the whole run, not a window's
//! estimate; a push costs (2·[`MAX_LAG`] + 1) multiply-adds per drive.

use crate::robot::Robot;
use serde::Serialize;

/// The largest lag searched either way, pushes (at a 1 ms PLC task, 50 ms).
pub const MAX_LAG: usize = 50;

/// What one drive's prediction gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictionError {
    /// 1-based, with its cable's name.
    pub drive: usize,
    pub name: String,
    /// RMS and largest |measured − predicted| at the same push, in the series' unit (N·m,
    /// m), and in % of the drive's rated torque (torques only: `None` otherwise).
    pub rms: f64,
    pub max: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rms_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_percent: Option<f64>,
    /// The lag whose error spreads least about its mean, s (positive: the measurement comes
    /// after the prediction), and the RMS error at it.
    pub best_lag_s: f64,
    pub rms_at_best_lag: f64,
}

/// Predicted against measured, drive by drive (see the module's documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PredictionTally {
    names: Vec<String>,
    /// Per drive, what 100 % is (rated torque, N·m); empty: no percentages.
    rated: Vec<f64>,
    /// Time between two pushes, s.
    period: f64,
    drives: usize,
    /// The last `MAX_LAG + 1` pushes of both series, drive-major per push, `head` the newest.
    predicted: Vec<f64>,
    measured: Vec<f64>,
    head: usize,
    /// Per lag index (lag + MAX_LAG) and drive: Σ e, Σ e² and the pushes it holds.
    sums: Vec<f64>,
    squares: Vec<f64>,
    counts: Vec<u64>,
    /// Per drive, the largest |e| at lag 0.
    max: Vec<f64>,
    pushes: u64,
}

const LAGS: usize = 2 * MAX_LAG + 1;

impl PredictionTally {
    /// A tally of `robot`'s drives' torques (percentages of their rated torques), pushed every
    /// `period` seconds.
    pub fn torques(robot: &Robot, period: f64) -> PredictionTally {
        let rated = robot.drives.iter().map(|d| d.rated_torque).collect();
        PredictionTally::new(robot, rated, period)
    }

    /// A tally of `robot`'s cable lengths (no percentages), pushed every `period` seconds.
    pub fn lengths(robot: &Robot, period: f64) -> PredictionTally {
        PredictionTally::new(robot, Vec::new(), period)
    }

    fn new(robot: &Robot, rated: Vec<f64>, period: f64) -> PredictionTally {
        let drives = robot.cable_count();
        PredictionTally {
            names: robot.cables.iter().map(|c| c.name.clone()).collect(),
            rated,
            period,
            drives,
            predicted: vec![0.0; (MAX_LAG + 1) * drives],
            measured: vec![0.0; (MAX_LAG + 1) * drives],
            head: 0,
            sums: vec![0.0; LAGS * drives],
            squares: vec![0.0; LAGS * drives],
            counts: vec![0; LAGS],
            max: vec![0.0; drives],
            pushes: 0,
        }
    }

    /// Pushes so far.
    pub fn pushes(&self) -> u64 {
        self.pushes
    }

    /// One push of both series, one value per drive (a push of other lengths is ignored: the
    /// controller's arrays are checked against the robot's cables when the link is made).
    pub fn push(&mut self, predicted: &[f64], measured: &[f64]) {
        let m = self.drives;
        if m == 0 || predicted.len() != m || measured.len() != m {
            return;
        }
        let slots = MAX_LAG + 1;
        self.head = (self.head + 1) % slots;
        let at = self.head * m;
        self.predicted[at..at + m].copy_from_slice(predicted);
        self.measured[at..at + m].copy_from_slice(measured);
        self.pushes += 1;
        // The pushes `k` back that exist: k ≤ pushes − 1.
        let reach = usize::try_from(self.pushes - 1)
            .unwrap_or(MAX_LAG)
            .min(MAX_LAG);
        let Self {
            predicted: past_predicted,
            measured: past_measured,
            sums,
            squares,
            counts,
            ..
        } = self;
        for k in 0..=reach {
            let back = ((self.head + slots - k) % slots) * m;
            // Lag +k: the measurement now against the prediction k pushes back.
            let plus = (MAX_LAG + k) * m..(MAX_LAG + k + 1) * m;
            gather(
                (&mut sums[plus.clone()], &mut squares[plus]),
                measured,
                &past_predicted[back..back + m],
            );
            counts[MAX_LAG + k] += 1;
            if k == 0 {
                for (max, (a, b)) in self.max.iter_mut().zip(measured.iter().zip(predicted)) {
                    *max = max.max((a - b).abs());
                }
                continue;
            }
            // Lag −k: the measurement k pushes back against the prediction now.
            let minus = (MAX_LAG - k) * m..(MAX_LAG - k + 1) * m;
            gather(
                (&mut sums[minus.clone()], &mut squares[minus]),
                &past_measured[back..back + m],
                predicted,
            );
            counts[MAX_LAG - k] += 1;
        }
    }

    /// The figures so far (empty before the first push).
    pub fn errors(&self) -> Vec<PredictionError> {
        if self.pushes == 0 {
            return Vec::new();
        }
        let m = self.drives;
        let n = |lag: usize| self.counts[lag].max(1) as f64;
        let rms_at = |lag: usize, d: usize| (self.squares[lag * m + d] / n(lag)).sqrt();
        let spread_at = |lag: usize, d: usize| {
            let mean = self.sums[lag * m + d] / n(lag);
            (self.squares[lag * m + d] / n(lag) - mean * mean).max(0.0)
        };
        (0..m)
            .map(|d| {
                let best = (0..LAGS)
                    .filter(|&lag| self.counts[lag] > 0)
                    // Ties (to rounding) go to the lag nearest zero.
                    .min_by(|&a, &b| {
                        let (sa, sb) = (spread_at(a, d), spread_at(b, d));
                        let tie = (sa - sb).abs() <= 1e-12 * sa.max(sb);
                        let nearer = a.abs_diff(MAX_LAG).cmp(&b.abs_diff(MAX_LAG));
                        if tie { nearer } else { sa.total_cmp(&sb) }
                    })
                    .unwrap_or(MAX_LAG);
                let rms_best = rms_at(best, d);
                let (rms, max) = (rms_at(MAX_LAG, d), self.max[d]);
                let percent = |v: f64| self.rated.get(d).map(|r| 100.0 * v / r);
                PredictionError {
                    drive: d + 1,
                    name: self.names.get(d).cloned().unwrap_or_default(),
                    rms,
                    max,
                    rms_percent: percent(rms),
                    max_percent: percent(max),
                    best_lag_s: (best as f64 - MAX_LAG as f64) * self.period,
                    rms_at_best_lag: rms_best,
                }
            })
            .collect()
    }
}

/// Σ e and Σ e² of e = measured − predicted, drive by drive.
fn gather((sums, squares): (&mut [f64], &mut [f64]), measured: &[f64], predicted: &[f64]) {
    for (((sum, square), a), b) in sums.iter_mut().zip(squares).zip(measured).zip(predicted) {
        let e = a - b;
        *sum += e;
        *square += e * e;
    }
}

/// The torque prediction's figures as a table, one line each after a header (what `cdpr
/// shadow` prints); nothing without figures.
pub fn prediction_table(errors: &[PredictionError]) -> Vec<String> {
    if errors.is_empty() {
        return Vec::new();
    }
    let width = errors
        .iter()
        .map(|d| d.name.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut lines = vec![format!(
        "{:<w$}  RMS N·m  RMS %  max N·m  max %  best lag  RMS there",
        "drive",
        w = width + 3
    )];
    for d in errors {
        lines.push(format!(
            "{:>2} {:<w$}  {:>7.4}  {:>5.1}  {:>7.4}  {:>5.1}  {:>5.1} ms  {:>9.4}",
            d.drive,
            d.name,
            d.rms,
            d.rms_percent.unwrap_or(f64::NAN),
            d.max,
            d.max_percent.unwrap_or(f64::NAN),
            d.best_lag_s * 1e3,
            d.rms_at_best_lag,
            w = width
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::robot;

    /// A smooth signal per drive, different per drive.
    fn signal(d: usize, t: f64) -> f64 {
        (0.7 * t + d as f64).sin() + 0.3 * (2.3 * t).cos()
    }

    #[test]
    fn a_delayed_copy_is_found_at_its_lag_with_no_error_there() {
        let r = robot("uvigo8-drives");
        let period = 0.01;
        let mut tally = PredictionTally::torques(&r, period);
        // The measurement comes 7 pushes after the prediction, scaled by 1 (a perfect model
        // seen late).
        let lag = 7;
        for n in 0..2000 {
            let t = n as f64 * period;
            let predicted: Vec<f64> = (0..8).map(|d| signal(d, t)).collect();
            let measured: Vec<f64> = (0..8).map(|d| signal(d, t - lag as f64 * period)).collect();
            tally.push(&predicted, &measured);
        }
        let errors = tally.errors();
        assert_eq!(errors.len(), 8);
        for (d, e) in errors.iter().enumerate() {
            assert!((e.best_lag_s - 0.07).abs() < 1e-12, "{e:?}");
            // The first 7 pushes have no prediction 7 back yet: the rest match exactly.
            assert!(e.rms_at_best_lag < 1e-12, "{e:?}");
            // At lag 0 the error is the signal's change over 70 ms: RMS by hand over the
            // same pushes.
            let (mut sq, mut max) = (0.0f64, 0.0f64);
            for n in 0..2000 {
                let t = n as f64 * period;
                let e = signal(d, t - 0.07) - signal(d, t);
                sq += e * e;
                max = max.max(e.abs());
            }
            assert!((e.rms - (sq / 2000.0).sqrt()).abs() < 1e-12, "{e:?}");
            assert!((e.max - max).abs() < 1e-12);
            let rated = r.drives[d].rated_torque;
            let percent = e.rms_percent.expect("torques have percentages");
            assert!((percent - 100.0 * e.rms / rated).abs() < 1e-9);
        }
    }

    #[test]
    fn a_measurement_ahead_of_the_model_has_a_negative_lag_and_an_offset_stays() {
        let r = robot("uvigo8");
        let period = 0.001;
        let mut tally = PredictionTally::lengths(&r, period);
        for n in 0..500 {
            let t = n as f64 * 0.01;
            // The measurement leads by 3 pushes and sits 0.5 above.
            let predicted: Vec<f64> = (0..8).map(|d| signal(d, t)).collect();
            let measured: Vec<f64> = (0..8).map(|d| signal(d, t + 0.03) + 0.5).collect();
            tally.push(&predicted, &measured);
        }
        for e in tally.errors() {
            assert!((e.best_lag_s + 0.003).abs() < 1e-12, "{e:?}");
            assert!((e.rms_at_best_lag - 0.5).abs() < 1e-9, "{e:?}");
            assert!(e.rms_percent.is_none());
        }
    }

    #[test]
    fn pushes_of_the_wrong_size_are_ignored_and_nothing_pushed_says_nothing() {
        let r = robot("uvigo8-drives");
        let mut tally = PredictionTally::torques(&r, 0.01);
        assert!(tally.errors().is_empty());
        tally.push(&[1.0; 7], &[1.0; 8]);
        assert_eq!(tally.pushes(), 0);
        tally.push(&[1.0; 8], &[1.5; 8]);
        let e = &tally.errors()[0];
        assert_eq!((e.rms, e.max, e.best_lag_s), (0.5, 0.5, 0.0));
        assert_eq!(prediction_table(&tally.errors()).len(), 9);
    }
}
