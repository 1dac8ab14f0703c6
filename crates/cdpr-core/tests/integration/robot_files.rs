//! Hostile edits of the shipped robot files: loading one returns the robot or one error that
//! names the file (and, for a field, its line and dotted path); it never panics, and what it
//! accepts is finite and within the documented ranges.

use cdpr_core::robot::{BUILTIN_ROBOTS, MAX_COORDINATE, RobotFileError, Stiffness, parse_robot};
use proptest::prelude::*;

/// The workspace's one list of hostile values (shared with the command-line tests).
const HOSTILE: &[&str] = cdpr_core::fixtures::HOSTILE_VALUES;

/// Byte ranges of the numbers in `text` (outside comments and strings, roughly).
fn numbers(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_comment = false;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            in_comment = false;
        } else if !in_string && c == b'#' {
            in_comment = true;
        } else if !in_comment && c == b'"' {
            in_string = !in_string;
        } else if !in_comment
            && !in_string
            && (c.is_ascii_digit() || c == b'-')
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'_')
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b"+-.".contains(&b[i])) {
                i += 1;
            }
            out.push(start..i);
            continue;
        }
        i += 1;
    }
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Number { which: usize, value: usize },
    DeleteLine(usize),
    DuplicateLine(usize),
    Truncate(usize),
    StrayField(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), 0..HOSTILE.len()).prop_map(|(which, value)| Mutation::Number { which, value }),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => any::<usize>().prop_map(Mutation::StrayField),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let no_numbers = numbers(text).is_empty();
    if lines.is_empty() || matches!(m, Mutation::Number { .. }) && no_numbers {
        return text.to_string(); // a truncated text may have nothing left to edit
    }
    match *m {
        Mutation::Number { which, value } => {
            let spans = numbers(text);
            let span = spans[which % spans.len()].clone();
            format!(
                "{}{}{}",
                &text[..span.start],
                HOSTILE[value],
                &text[span.end..]
            )
        }
        Mutation::DeleteLine(k) => {
            let k = k % lines.len();
            lines
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != k)
                .map(|(_, l)| format!("{l}\n"))
                .collect()
        }
        Mutation::DuplicateLine(k) => {
            let k = k % lines.len();
            lines
                .iter()
                .enumerate()
                .flat_map(|(i, l)| {
                    std::iter::repeat_n(format!("{l}\n"), if i == k { 2 } else { 1 })
                })
                .collect()
        }
        Mutation::Truncate(at) => {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text[..at].to_string()
        }
        Mutation::StrayField(k) => {
            let k = k % (lines.len() + 1);
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            out.insert(k, "stray_field = 1.0".to_string());
            out.join("\n")
        }
    }
}

fn check(text: &str) {
    let line_count = text.lines().count() + 1;
    match parse_robot(text, "mut.toml") {
        Ok(robot) => {
            assert!(robot.platform.mass.is_finite() && robot.platform.mass > 0.0);
            assert!(robot.platform.inertia.iter().all(|x| x.is_finite()));
            assert!(
                robot
                    .home
                    .iter()
                    .all(|x| x.is_finite() && x.abs() <= MAX_COORDINATE)
            );
            for c in &robot.cables {
                for v in [c.frame_anchor, c.platform_anchor] {
                    assert!(v.iter().all(|x| x.abs() <= MAX_COORDINATE), "{v:?}");
                }
                let k = match c.stiffness {
                    Stiffness::Constant(k) | Stiffness::Ea(k) => k,
                };
                assert!(k.is_finite() && k > 0.0);
            }
            if robot.is_cable_robot() {
                // What `cdpr check` computes next must not panic either.
                let home = cdpr_core::statics::home_report(&robot);
                assert!(home.lengths.iter().all(|l| l.is_finite() && *l > 0.0));
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with("mut.toml"), "no file name: {msg}");
            if let RobotFileError::Invalid { line, field, .. } = &e {
                assert!(!field.is_empty(), "no field: {msg}");
                assert!(*line <= line_count, "line {line} past the end: {msg}");
                if *line > 0 {
                    assert!(
                        msg.starts_with(&format!("mut.toml:{line}: {field}: ")),
                        "{msg}"
                    );
                } else {
                    assert!(msg.starts_with(&format!("mut.toml: {field}: ")), "{msg}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hostile_edits_of_shipped_robots_are_loaded_or_refused_clearly(
        robot in 0..BUILTIN_ROBOTS.len(),
        first in mutation(),
        second in proptest::option::of(mutation()),
    ) {
        let (_, text) = BUILTIN_ROBOTS[robot];
        let mut text = apply(text, &first);
        if let Some(m) = &second {
            text = apply(&text, m);
        }
        check(&text);
    }
}

#[test]
fn every_number_of_every_shipped_robot_replaced_by_every_hostile_value() {
    for (_, text) in BUILTIN_ROBOTS {
        for which in 0..numbers(text).len() {
            for value in 0..HOSTILE.len() {
                check(&apply(text, &Mutation::Number { which, value }));
            }
        }
    }
}
