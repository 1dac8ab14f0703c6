//! A condition on a PLC symbol followed sample by sample ([`Watch`]), and its symbol's type
//! checked against what it compares ([`check_type`]).

use super::spec::{Condition, Op, When};
use crate::wire::{IecType, Scalar};

/// Most changes of a symbol's value kept for a report's plot (the verdict sees every sample).
pub const PLOT_POINTS: usize = 20_000;

/// What a condition saw over a run: each moment counted by its `when` that broke or met it,
/// the last sample, and the value's changes for the plot. Times are the shadow's, s from the
/// run's start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Watch {
    /// The first counted sample that broke the comparison: (t, value).
    pub first_broken: Option<(f64, f64)>,
    /// The first counted sample that met it: (t, value).
    pub first_met: Option<(f64, f64)>,
    /// The last sample of the run: (t, value).
    pub last: Option<(f64, f64)>,
    /// The value at its first sample and at each change, at most [`PLOT_POINTS`].
    pub points: Vec<(f64, f64)>,
}

impl Watch {
    /// Takes the sample `value` of the condition's symbol at `t`.
    pub fn observe(&mut self, c: &Condition, t: f64, value: f64) {
        let counted = match c.when {
            When::Always => true,
            When::Within(end) => t <= end,
            When::After(from) => t >= from,
        };
        if counted {
            let slot = if c.op.holds(value, c.value) {
                &mut self.first_met
            } else {
                &mut self.first_broken
            };
            slot.get_or_insert((t, value));
        }
        let changed = self
            .points
            .last()
            .is_none_or(|&(_, v)| v.to_bits() != value.to_bits());
        if changed && self.points.len() < PLOT_POINTS {
            self.points.push((t, value));
        }
        self.last = Some((t, value));
    }

    /// Whether the condition held over the run, and the sample that shows it (the first that
    /// broke it, the first that met it; else the last one, `None` without samples).
    pub fn outcome(&self, c: &Condition) -> (bool, Option<(f64, f64)>) {
        match (c.op, c.when) {
            // Met at some moment (by the deadline, for `within`).
            (Op::Reaches, _) | (_, When::Within(_)) => match self.first_met {
                Some(met) => (true, Some(met)),
                None => (false, self.last),
            },
            // Held at every counted sample, and there was one.
            (_, When::After(from)) => match self.first_broken {
                Some(broken) => (false, Some(broken)),
                None => (self.last.is_some_and(|(t, _)| t >= from), self.last),
            },
            (_, When::Always) => match self.first_broken {
                Some(broken) => (false, Some(broken)),
                None => (self.last.is_some(), self.last),
            },
        }
    }
}

/// The values an integer type holds (`None`: REAL, LREAL, BOOL).
fn integer_range(scalar: Scalar) -> Option<(f64, f64)> {
    let r = |lo: f64, hi: f64| Some((lo, hi));
    match scalar {
        Scalar::SInt => r(i8::MIN.into(), i8::MAX.into()),
        Scalar::USInt => r(0.0, u8::MAX.into()),
        Scalar::Int => r(i16::MIN.into(), i16::MAX.into()),
        Scalar::UInt => r(0.0, u16::MAX.into()),
        Scalar::DInt => r(i32::MIN.into(), i32::MAX.into()),
        Scalar::UDInt => r(0.0, u32::MAX.into()),
        Scalar::LInt => r(i64::MIN as f64, i64::MAX as f64),
        Scalar::ULInt => r(0.0, u64::MAX as f64),
        Scalar::Bool | Scalar::Real | Scalar::LReal => None,
    }
}

/// Whether condition `c` can be asked of a symbol of type `ty`: one value (not an array), a
/// BOOL compared with true/false and only it, an integer with a whole number it can hold
/// where the comparison needs one. The message says what is wrong and what to write.
pub fn check_type(c: &Condition, ty: &IecType) -> Result<(), String> {
    ty.one_value(&c.symbol)
        .map_err(|reason| format!("`{}` {reason}", c.symbol))?;
    let name = ty.type_name();
    match (ty.scalar, c.boolean) {
        (Scalar::Bool, false) => Err(format!(
            "`{}` is BOOL: compare it with true or false (== or !=)",
            c.symbol
        )),
        (Scalar::Bool, true) => Ok(()),
        (_, true) => Err(format!(
            "`{}` is {name}: compare it with a number, not true/false",
            c.symbol
        )),
        (scalar, false) => match integer_range(scalar) {
            Some(_) if matches!(c.op, Op::Eq | Op::Ne) && c.value.fract() != 0.0 => Err(format!(
                "`{}` is {name}, a whole number: {} {} is {} at every sample",
                c.symbol,
                c.op.name(),
                c.value,
                if c.op == Op::Eq { "false" } else { "true" }
            )),
            Some((lo, hi)) if !(lo..=hi).contains(&c.value) => Err(format!(
                "`{}` is {name}, which holds {lo} to {hi}: {} {} is decided before the run",
                c.symbol,
                c.op.name(),
                c.value
            )),
            _ => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(op: Op, value: f64, boolean: bool, when: When) -> Condition {
        Condition {
            symbol: "GVL.x".into(),
            op,
            value,
            boolean,
            when,
            line: 1,
            field: "symbol[1]".into(),
        }
    }

    /// Feeds the samples and returns the outcome.
    fn run(c: &Condition, samples: &[(f64, f64)]) -> (bool, Option<(f64, f64)>) {
        let mut w = Watch::default();
        for &(t, v) in samples {
            w.observe(c, t, v);
        }
        w.outcome(c)
    }

    #[test]
    fn within_after_always_and_reaches_read_the_samples_as_written() {
        // A state machine: 0 until 1 s, 20 until 2 s, 40 from 2 s on (every 0.5 s).
        let steps: Vec<(f64, f64)> = (0..=8)
            .map(|k| {
                let t = k as f64 * 0.5;
                (
                    t,
                    if t < 1.0 {
                        0.0
                    } else if t < 2.0 {
                        20.0
                    } else {
                        40.0
                    },
                )
            })
            .collect();
        let reaches = |v: f64| condition(Op::Reaches, v, false, When::Always);
        assert_eq!(run(&reaches(40.0), &steps), (true, Some((2.0, 40.0))));
        assert_eq!(run(&reaches(41.0), &steps), (false, Some((4.0, 40.0))));
        let within = |t: f64| condition(Op::Eq, 40.0, false, When::Within(t));
        assert_eq!(run(&within(2.0), &steps), (true, Some((2.0, 40.0))));
        // Not yet at 1.9 s: the last sample is what the failure shows.
        assert_eq!(run(&within(1.9), &steps), (false, Some((4.0, 40.0))));
        let after = |t: f64| condition(Op::Ge, 20.0, false, When::After(t));
        assert_eq!(run(&after(1.0), &steps), (true, Some((4.0, 40.0))));
        assert_eq!(run(&after(0.5), &steps), (false, Some((0.5, 0.0))));
        // A moment after the last sample was never seen: not held.
        assert_eq!(run(&after(5.0), &steps), (false, Some((4.0, 40.0))));
        let always = condition(Op::Lt, 40.0, false, When::Always);
        assert_eq!(run(&always, &steps), (false, Some((2.0, 40.0))));
        assert_eq!(run(&always, &[]), (false, None), "no sample proves nothing");
    }

    #[test]
    fn the_plot_keeps_the_changes_only() {
        let c = condition(Op::Eq, 1.0, true, When::Always);
        let mut w = Watch::default();
        for k in 0..10 {
            w.observe(&c, f64::from(k), f64::from(u8::from(k >= 4)));
        }
        assert_eq!(w.points, vec![(0.0, 0.0), (4.0, 1.0)]);
        assert_eq!(w.last, Some((9.0, 1.0)));
    }

    #[test]
    fn a_condition_that_cannot_fit_its_type_is_refused() {
        let array = IecType::array(Scalar::LReal, &[6]);
        let flag = IecType::scalar(Scalar::Bool);
        let int = IecType::scalar(Scalar::Int);
        let byte = IecType::scalar(Scalar::USInt);
        let real = IecType::scalar(Scalar::LReal);
        let eq = |v: f64, b: bool| condition(Op::Eq, v, b, When::Always);
        let e = check_type(&eq(1.0, false), &array).expect_err("array");
        assert!(
            e.contains("ARRAY [1..6] OF LREAL") && e.contains("`GVL.x[1]`"),
            "{e}"
        );
        let e = check_type(&eq(1.0, false), &flag).expect_err("bool vs number");
        assert!(e.contains("is BOOL") && e.contains("true or false"), "{e}");
        check_type(&eq(1.0, true), &flag).expect("bool vs true");
        let e = check_type(&eq(1.0, true), &int).expect_err("int vs true");
        assert!(e.contains("is INT") && e.contains("a number"), "{e}");
        let e = check_type(&eq(2.5, false), &int).expect_err("fraction");
        assert!(
            e.contains("whole number") && e.contains("false at every sample"),
            "{e}"
        );
        check_type(&condition(Op::Lt, 2.5, false, When::Always), &int).expect("< 2.5");
        let e = check_type(&condition(Op::Reaches, 300.0, false, When::Always), &byte)
            .expect_err("out of USINT");
        assert!(e.contains("0 to 255"), "{e}");
        check_type(&eq(2.5, false), &real).expect("a REAL takes any number");
    }
}
