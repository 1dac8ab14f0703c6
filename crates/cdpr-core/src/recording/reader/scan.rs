//! What one pass over a run keeps: every row's time, the overview and the events.

use super::{Bin, Event, Events, GAP_STEPS, MAX_BINS, Overview};
use crate::colors::is_slack;
use crate::recording::RecordingError;

/// Builds the overview bin by bin, row by row: bins of `rows_per_bin` rows; when
/// [`MAX_BINS`] are full, pairs merge and bins hold twice as many rows.
struct OverviewBuilder {
    overview: Overview,
    cables: usize,
}

impl OverviewBuilder {
    fn new(cables: usize) -> OverviewBuilder {
        OverviewBuilder {
            overview: Overview {
                rows_per_bin: 1,
                bins: Vec::new(),
            },
            cables,
        }
    }

    fn push(&mut self, row: usize, t: f64, tensions: impl Iterator<Item = f64>, error: f64) {
        let full = self
            .overview
            .bins
            .last()
            .is_none_or(|b| b.rows == self.overview.rows_per_bin);
        if full {
            if self.overview.bins.len() == MAX_BINS {
                self.merge_pairs();
            }
            self.overview.bins.push(Bin {
                first: row,
                rows: 0,
                t_first: t,
                t_last: t,
                tension_min: vec![f64::NAN; self.cables],
                tension_max: vec![f64::NAN; self.cables],
                error_min: f64::NAN,
                error_max: f64::NAN,
            });
        }
        let Some(bin) = self.overview.bins.last_mut() else {
            return;
        };
        bin.rows += 1;
        bin.t_last = t;
        // f64::min/max skip a NaN: a bin is NaN only when all its values are.
        for (cable, v) in tensions.enumerate() {
            bin.tension_min[cable] = bin.tension_min[cable].min(v);
            bin.tension_max[cable] = bin.tension_max[cable].max(v);
        }
        bin.error_min = bin.error_min.min(error);
        bin.error_max = bin.error_max.max(error);
    }

    fn merge_pairs(&mut self) {
        let bins = std::mem::take(&mut self.overview.bins);
        let mut it = bins.into_iter();
        while let Some(mut a) = it.next() {
            if let Some(b) = it.next() {
                a.rows += b.rows;
                a.t_last = b.t_last;
                for c in 0..self.cables {
                    a.tension_min[c] = a.tension_min[c].min(b.tension_min[c]);
                    a.tension_max[c] = a.tension_max[c].max(b.tension_max[c]);
                }
                a.error_min = a.error_min.min(b.error_min);
                a.error_max = a.error_max.max(b.error_max);
            }
            self.overview.bins.push(a);
        }
        self.overview.rows_per_bin *= 2;
    }
}

/// Finds the events row by row (the time-step gap at the end, from all the times).
#[derive(Default)]
struct EventFinder {
    events: Events,
}

impl EventFinder {
    fn push(&mut self, row: usize, t: f64, tensions: &[f64], error: f64, gap: Option<f64>) {
        let e = &mut self.events;
        for (cable, &v) in tensions.iter().enumerate() {
            // A NaN or infinite tension is no measurement: neither the largest nor slack.
            if !v.is_finite() {
                continue;
            }
            if e.largest_tension.is_none_or(|m| v > m.value) {
                e.largest_tension = Some(Event {
                    row,
                    time: t,
                    value: v,
                    cable: Some(cable),
                });
            }
            if e.first_slack.is_none() && is_slack(v) {
                e.first_slack = Some(Event {
                    row,
                    time: t,
                    value: v,
                    cable: Some(cable),
                });
            }
        }
        if !error.is_nan() && e.largest_error.is_none_or(|m| error > m.value) {
            e.largest_error = Some(Event {
                row,
                time: t,
                value: error,
                cable: None,
            });
        }
        if let Some(flag) = gap
            && e.first_gap.is_none()
            && flag != 0.0
            && !flag.is_nan()
        {
            e.first_gap = Some(Event {
                row,
                time: t,
                value: flag,
                cable: None,
            });
        }
    }

    /// The first step longer than [`GAP_STEPS`] median steps.
    fn gap_from_steps(&mut self, times: &[f64]) {
        let mut steps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        if steps.is_empty() {
            return;
        }
        let mid = steps.len() / 2;
        let (_, median, _) = steps.select_nth_unstable_by(mid, f64::total_cmp);
        let limit = *median * GAP_STEPS;
        self.events.first_gap = times
            .windows(2)
            .position(|w| w[1] - w[0] > limit)
            .map(|k| Event {
                row: k + 1,
                time: times[k + 1],
                value: times[k + 1] - times[k],
                cable: None,
            });
    }
}

/// One pass over a run, row by row: times, overview and events.
pub(super) struct Scan {
    times: Vec<f64>,
    overview: OverviewBuilder,
    events: EventFinder,
    /// Whether the record flags its gaps (the shadow's `gap` column).
    gap_column: bool,
}

impl Scan {
    pub(super) fn new(cables: usize, gap_column: bool) -> Scan {
        Scan {
            times: Vec::new(),
            overview: OverviewBuilder::new(cables),
            events: EventFinder::default(),
            gap_column,
        }
    }

    /// The next row: its time (s), tensions (N), tracking error (m) and gap flag.
    pub(super) fn push(&mut self, t: f64, tensions: &[f64], error: f64, gap: Option<f64>) {
        let k = self.times.len();
        self.times.push(t);
        self.overview.push(k, t, tensions.iter().copied(), error);
        self.events.push(k, t, tensions, error, gap);
    }

    /// Refuses the next row's time `t` unless it is finite and not before the last row's
    /// (equal is fine); `at` names the row in the error (`line 7`).
    pub(super) fn check_time(
        &self,
        t: f64,
        file: &str,
        at: impl FnOnce() -> String,
    ) -> Result<(), RecordingError> {
        let previous = self.times.last().copied();
        let fault = if !t.is_finite() {
            Some(None)
        } else {
            previous.filter(|&p| t < p).map(Some)
        };
        match fault {
            None => Ok(()),
            Some(previous) => Err(RecordingError::BadTime {
                file: file.to_string(),
                at: at(),
                time: t,
                previous,
            }),
        }
    }

    /// Rows so far.
    pub(super) fn len(&self) -> usize {
        self.times.len()
    }

    pub(super) fn finish(mut self) -> (Vec<f64>, Overview, Events) {
        if !self.gap_column {
            self.events.gap_from_steps(&self.times);
        }
        (self.times, self.overview.overview, self.events.events)
    }
}

/// Tracking error: the distance between the platform's and the commanded position, m.
pub(super) fn tracking_error(pose: &[f64], commanded: &[f64]) -> f64 {
    let d = |k: usize| pose[k] - commanded[k];
    (d(0) * d(0) + d(1) * d(1) + d(2) * d(2)).sqrt()
}
