//! A scenario's run judged: one [`Verdict`] per expectation it sets and per condition, each
//! with the value measured, the bound and when it happened, and for a failure over time the
//! plot of its series against the bound. The tracking and the tensions are read back from the
//! run's record (every row: nothing between two samples of a statistic is missed), the cycle
//! figures from the shadow's statistics.

use super::run::ScenarioRun;
use super::spec::{Condition, Op, Scenario, When};
use cdpr_core::colors::SLACK;
use cdpr_core::recording::{RecordingError, RunFile};
use cdpr_core::report::plots::CheckPlot;

/// One expectation or condition, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The expectation's key (`tracking_max`) or the condition as written (`GVL.bDone ==
    /// true within 12 s`).
    pub name: String,
    pub passed: bool,
    /// What the run showed, with its unit (`3.214 mm`, cable and all).
    pub measured: String,
    /// What it is held to (`≤ 2.000 mm`).
    pub bound: String,
    /// When the measured value happened, s of shadow time.
    pub at: Option<f64>,
    /// The series against its bound, for a failure that has one.
    pub plot: Option<CheckPlot>,
}

impl Verdict {
    fn new(name: impl Into<String>, passed: bool, measured: String, bound: String) -> Verdict {
        Verdict {
            name: name.into(),
            passed,
            measured,
            bound,
            at: None,
            plot: None,
        }
    }

    /// A check that could not be made (its data unreadable): failed, saying why.
    pub fn broken(name: &str, why: String) -> Verdict {
        Verdict::new(name, false, why, "readable".into())
    }

    fn at(mut self, t: f64) -> Verdict {
        self.at = Some(t);
        self
    }

    /// One line: `tracking_max: 3.214 mm at t = 4.210 s (bound ≤ 2.000 mm)`.
    pub fn describe(&self) -> String {
        let when = self
            .at
            .map_or(String::new(), |t| format!(" at t = {t:.3} s"));
        format!(
            "{}: {}{when} (bound {})",
            self.name, self.measured, self.bound
        )
    }
}

/// A symbol's value as a message shows it: whole numbers as they are, others to six
/// significant digits (4.38430, not 4.384297224394729).
pub fn number(v: f64) -> String {
    if !v.is_finite() || v.fract() == 0.0 {
        return format!("{v}");
    }
    let decimals = (5 - v.abs().log10().floor() as i32).clamp(0, 15) as usize;
    let text = format!("{v:.decimals$}");
    let text = text.trim_end_matches('0');
    text.trim_end_matches('.').to_string()
}

/// The condition as a user reads it: `GVL.bDone == true within 12 s`.
pub fn condition_text(c: &Condition) -> String {
    let value = if c.boolean {
        (c.value != 0.0).to_string()
    } else {
        number(c.value)
    };
    let when = match c.when {
        When::Always if c.op == Op::Reaches => " during the run".to_string(),
        When::Always => " throughout".to_string(),
        When::Within(t) => format!(" within {t} s"),
        When::After(t) => format!(" after {t} s"),
    };
    format!("{} {} {value}{when}", c.symbol, c.op.name())
}

/// The figures of a record that the expectations read, in one pass over its rows.
struct RecordFigures {
    rms_error: f64,
    /// (t, value) of the largest tracking error.
    max_error: (f64, f64),
    /// (t, cable, value) of the lowest and the highest tension.
    min_tension: (f64, usize, f64),
    max_tension: (f64, usize, f64),
    /// Over time, per bin: (t, largest error); per cable (t, lowest), (t, highest).
    error_curve: Vec<(f64, f64)>,
    low_curves: Vec<Vec<(f64, f64)>>,
    high_curves: Vec<Vec<(f64, f64)>>,
    /// (t, cable, tension) of the first slack cable.
    first_slack: Option<(f64, usize, f64)>,
}

impl RecordFigures {
    fn read(file: &mut RunFile) -> Result<RecordFigures, RecordingError> {
        let mut sum = 0.0;
        let mut max_error = (0.0, f64::NEG_INFINITY);
        let mut min_tension = (0.0, 0, f64::INFINITY);
        let mut max_tension = (0.0, 0, f64::NEG_INFINITY);
        for k in 0..file.len() {
            let row = file.row(k)?;
            let e = row.tracking_error();
            sum += e * e;
            // NaN is the worst of all: it is kept, and fails every bound.
            if e > max_error.1 || e.is_nan() && !max_error.1.is_nan() {
                max_error = (row.time, e);
            }
            for (cable, &f) in row.tensions.iter().enumerate() {
                if f < min_tension.2 || f.is_nan() && !min_tension.2.is_nan() {
                    min_tension = (row.time, cable, f);
                }
                if f > max_tension.2 || f.is_nan() && !max_tension.2.is_nan() {
                    max_tension = (row.time, cable, f);
                }
            }
        }
        let bins = &file.overview().bins;
        let cables = file.cables();
        let mid = |b: &cdpr_core::recording::reader::Bin| 0.5 * (b.t_first + b.t_last);
        let per_cable = |pick: fn(&cdpr_core::recording::reader::Bin) -> &Vec<f64>| {
            (0..cables)
                .map(|c| bins.iter().map(|b| (mid(b), pick(b)[c])).collect())
                .collect()
        };
        Ok(RecordFigures {
            rms_error: (sum / file.len().max(1) as f64).sqrt(),
            max_error,
            min_tension,
            max_tension,
            error_curve: bins.iter().map(|b| (mid(b), b.error_max * 1e3)).collect(),
            low_curves: per_cable(|b| &b.tension_min),
            high_curves: per_cable(|b| &b.tension_max),
            first_slack: file
                .events()
                .first_slack
                .map(|e| (e.time, e.cable.unwrap_or(0), e.value)),
        })
    }
}

fn cables_curves(curves: &[Vec<(f64, f64)>]) -> Vec<(String, Vec<(f64, f64)>)> {
    curves
        .iter()
        .enumerate()
        .map(|(c, points)| (format!("cable {}", c + 1), points.clone()))
        .collect()
}

fn plot(
    title: String,
    y_desc: &str,
    curves: Vec<(String, Vec<(f64, f64)>)>,
    bound: Option<(String, f64)>,
    mark: Option<(f64, f64)>,
) -> CheckPlot {
    CheckPlot {
        title,
        y_desc: y_desc.to_string(),
        curves,
        bound,
        window: None,
        mark,
    }
}

/// A tension as the verdicts show it.
fn newton(f: f64) -> String {
    format!("{f:.2} N")
}

/// `tension_min` or `tension_max` of scenario `s`: the extreme `(t, cable, value)` against
/// `bound`, with the cables' lowest or highest tensions over time for a failure's plot.
fn tension(
    s: &Scenario,
    name: &str,
    (t, cable, m): (f64, usize, f64),
    bound: f64,
    curves: &[Vec<(f64, f64)>],
) -> Verdict {
    let (lowest, passed, relation) = match name {
        "tension_min" => (true, m >= bound, "≥"),
        _ => (false, m <= bound, "≤"),
    };
    let mut v = Verdict::new(
        name,
        passed,
        format!("{} (cable {})", newton(m), cable + 1),
        format!("{relation} {}", newton(bound)),
    )
    .at(t);
    if !v.passed {
        v.plot = Some(plot(
            format!(
                "{}: {} tension, cable {} at {t:.3} s",
                s.name,
                if lowest { "lowest" } else { "highest" },
                cable + 1
            ),
            "tension [N]",
            cables_curves(curves),
            Some((format!("bound {}", newton(bound)), bound)),
            Some((t, m)),
        ));
    }
    v
}

/// A whole-number figure (cycles, counts) against its largest allowed value.
fn count(name: &str, measured: Option<u64>, unit: &str, bound: Option<usize>) -> Option<Verdict> {
    let bound = bound? as u64;
    Some(match measured {
        Some(m) => Verdict::new(
            name,
            m <= bound,
            format!("{m}{unit}"),
            format!("≤ {bound}{unit}"),
        ),
        None => Verdict::new(
            name,
            false,
            "none measured (the PLC publishes no reaction figure, or the run had no sample)".into(),
            format!("≤ {bound}{unit}"),
        ),
    })
}

/// Every verdict of scenario `s` on its run, in the order of [`super::EXPECT_OPTIONS`], then
/// the conditions.
pub fn judge(s: &Scenario, run: &ScenarioRun) -> Result<Vec<Verdict>, RecordingError> {
    let e = &s.expect;
    let mut verdicts = Vec::new();
    let needs_record = e.tracking_rms.is_some()
        || e.tracking_max.is_some()
        || e.tension_min.is_some()
        || e.tension_max.is_some()
        || e.no_slack;
    let figures = if needs_record {
        Some(RecordFigures::read(&mut RunFile::open(&run.record)?)?)
    } else {
        None
    };
    let mm = |m: f64| format!("{:.3} mm", m * 1e3);
    if let Some(f) = &figures {
        if let Some(bound) = e.tracking_rms {
            let mut v = Verdict::new(
                "tracking_rms",
                f.rms_error <= bound,
                mm(f.rms_error),
                format!("≤ {}", mm(bound)),
            );
            if !v.passed {
                v.plot = Some(plot(
                    format!("{}: tracking error (RMS {})", s.name, mm(f.rms_error)),
                    "tracking error [mm]",
                    vec![("largest in each bin".into(), f.error_curve.clone())],
                    Some((format!("RMS bound {}", mm(bound)), bound * 1e3)),
                    None,
                ));
            }
            verdicts.push(v);
        }
        if let Some(bound) = e.tracking_max {
            let (t, m) = f.max_error;
            let mut v = Verdict::new(
                "tracking_max",
                m <= bound,
                mm(m),
                format!("≤ {}", mm(bound)),
            )
            .at(t);
            if !v.passed {
                v.plot = Some(plot(
                    format!("{}: tracking error, largest {} at {t:.3} s", s.name, mm(m)),
                    "tracking error [mm]",
                    vec![("largest in each bin".into(), f.error_curve.clone())],
                    Some((format!("bound {}", mm(bound)), bound * 1e3)),
                    Some((t, m * 1e3)),
                ));
            }
            verdicts.push(v);
        }
        if let Some(bound) = e.tension_min {
            verdicts.push(tension(
                s,
                "tension_min",
                f.min_tension,
                bound,
                &f.low_curves,
            ));
        }
        if let Some(bound) = e.tension_max {
            verdicts.push(tension(
                s,
                "tension_max",
                f.max_tension,
                bound,
                &f.high_curves,
            ));
        }
        if e.no_slack {
            let bound = format!("no cable at or below {SLACK} N");
            verdicts.push(match f.first_slack {
                None => Verdict::new("no_slack", true, "none slack".into(), bound),
                Some((t, cable, m)) => {
                    let mut v = Verdict::new(
                        "no_slack",
                        false,
                        format!("cable {} slack ({})", cable + 1, newton(m)),
                        bound,
                    )
                    .at(t);
                    v.plot = Some(plot(
                        format!("{}: cable {} slack first at {t:.3} s", s.name, cable + 1),
                        "tension [N]",
                        cables_curves(&f.low_curves),
                        Some(("slack".into(), SLACK)),
                        Some((t, m)),
                    ));
                    v
                }
            });
        }
    }
    let sum = &run.summary;
    if e.no_interference {
        let n = sum.interference_cycles;
        let detail = if sum.first_interference.is_empty() {
            String::new()
        } else {
            format!(", the first: {}", sum.first_interference.join("; "))
        };
        let mut v = Verdict::new(
            "no_interference",
            n == 0,
            format!("{n} exchanges{detail}"),
            "0 exchanges".into(),
        );
        v.at = sum.first_interference_s;
        verdicts.push(v);
    }
    verdicts.extend(count(
        "reaction_p99",
        sum.reaction_p99_cycles.map(u64::from),
        " PLC cycles",
        e.reaction_p99,
    ));
    verdicts.extend(count(
        "reaction_max",
        sum.reaction_max_cycles.map(u64::from),
        " PLC cycles",
        e.reaction_max,
    ));
    verdicts.extend(count(
        "missed_plc_cycles",
        Some(sum.missed_plc_cycles),
        "",
        e.missed_plc_cycles,
    ));
    verdicts.extend(count("gaps", Some(sum.gaps), "", e.gaps));
    if let Some(report) = &run.preflight {
        let v = match &report.first_violation {
            None => Verdict::new(
                "preflight",
                true,
                format!("every check holds ({} samples)", report.checked_samples),
                "every check".into(),
            ),
            Some(x) => Verdict::new(
                "preflight",
                false,
                format!(
                    "{} of {} = {} {} (limit {}), beyond by {}",
                    x.check.name(),
                    x.subject,
                    number(x.value),
                    x.unit,
                    x.limit,
                    number(x.by)
                ),
                "every check".into(),
            )
            .at(x.t),
        };
        verdicts.push(v);
    }
    for (c, w) in s.conditions.iter().zip(&run.watches) {
        let name = condition_text(c);
        let (passed, shown) = w.outcome(c);
        let show = |v: f64| {
            if c.boolean {
                (v != 0.0).to_string()
            } else {
                number(v)
            }
        };
        let measured = match (shown, c.when) {
            (None, _) => "no sample of it in the run".to_string(),
            (Some((_, v)), _) if passed => show(v),
            (Some((_, v)), When::Within(_)) => format!("{} (never met in time; last)", show(v)),
            (Some((_, v)), _) if c.op == Op::Reaches => format!("{} (never met; last)", show(v)),
            (Some((t, v)), When::After(from)) if t < from => {
                format!("{} (the run ended at {t:.3} s, before {from} s)", show(v))
            }
            (Some((_, v)), _) => show(v),
        };
        let mut v = Verdict::new(
            &name,
            passed,
            measured,
            format!("{} {}", c.op.name(), show(c.value)),
        );
        v.at = shown.map(|(t, _)| t);
        if !passed {
            let end = run.simulated;
            let mut p = plot(
                format!("{}: {name}", s.name),
                &c.symbol,
                vec![(c.symbol.clone(), step_curve(&w.points, end))],
                Some((format!("{} {}", c.op.name(), show(c.value)), c.value)),
                shown,
            );
            p.window = match c.when {
                When::Always => None,
                When::Within(t) => Some((0.0, t)),
                When::After(t) => Some((t, end.max(t))),
            };
            v.plot = Some(p);
        }
        verdicts.push(v);
    }
    Ok(verdicts)
}

/// A value's changes as the steps it made, held to `end`.
fn step_curve(changes: &[(f64, f64)], end: f64) -> Vec<(f64, f64)> {
    let mut curve = Vec::with_capacity(2 * changes.len() + 1);
    for (k, &(t, v)) in changes.iter().enumerate() {
        if k > 0 {
            curve.push((t, changes[k - 1].1));
        }
        curve.push((t, v));
    }
    if let Some(&(t, v)) = changes.last()
        && end > t
    {
        curve.push((end, v));
    }
    curve
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_steps_from_change_to_change() {
        let c = step_curve(&[(0.0, 0.0), (1.0, 20.0), (2.0, 40.0)], 3.0);
        assert_eq!(
            c,
            vec![
                (0.0, 0.0),
                (1.0, 0.0),
                (1.0, 20.0),
                (2.0, 20.0),
                (2.0, 40.0),
                (3.0, 40.0)
            ]
        );
    }

    #[test]
    fn numbers_keep_six_significant_digits() {
        assert_eq!(number(4.384297224394729), "4.3843");
        assert_eq!(number(1306.897246), "1306.9");
        assert_eq!(number(0.000123456789), "0.000123457");
        assert_eq!(number(40.0), "40");
        assert_eq!(number(-2.5), "-2.5");
    }

    #[test]
    fn conditions_read_as_written() {
        let c = Condition {
            symbol: "GVL.bDone".into(),
            op: Op::Eq,
            value: 1.0,
            boolean: true,
            when: When::Within(12.0),
            line: 3,
            field: "f".into(),
        };
        assert_eq!(condition_text(&c), "GVL.bDone == true within 12 s");
        let c = Condition {
            symbol: "GVL.nState".into(),
            op: Op::Reaches,
            value: 40.0,
            boolean: false,
            when: When::Always,
            ..c
        };
        assert_eq!(condition_text(&c), "GVL.nState reaches 40 during the run");
    }
}
