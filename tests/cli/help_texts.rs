//! Every command's `--help`: each option and argument says what it is, and the shipped robots
//! are named as `cdpr robots` lists them (all of them or one at a time, never a stale subset).

use crate::common::*;
use std::collections::BTreeSet;

/// The subcommand paths of `cdpr`, depth first (`[]` is `cdpr` itself).
fn command_paths() -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    let mut k = 0;
    while k < out.len() {
        let path = out[k].clone();
        for name in subcommands(&help(&path)) {
            let mut child = path.clone();
            child.push(name);
            out.push(child);
        }
        k += 1;
    }
    out
}

fn help(path: &[String]) -> String {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let o = cdpr(&args);
    assert!(o.status.success(), "cdpr {args:?}: {}", stderr(&o));
    stdout(&o)
}

/// The names under "Commands:" (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The options and arguments of a help text that have no text of their own.
fn undocumented(help: &str) -> Vec<String> {
    let lines: Vec<&str> = help.lines().collect();
    let mut out = Vec::new();
    // The heading of the block a line is in ("Options:", "Arguments:", a help heading; None
    // in prose): the examples' wrapped lines start with `-` too.
    let mut section: Option<&str> = None;
    for (k, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            section = line.ends_with(':').then_some(*line);
            continue;
        }
        if section.is_none() || section == Some("Examples:") {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let t = line.trim_start();
        if !(2..=6).contains(&indent) || !(t.starts_with('-') || t.starts_with('<')) {
            continue;
        }
        // "  -r, --robot <ROBOT>  text": the flag, two blanks, its text.
        let has_text = t
            .split_once("  ")
            .is_some_and(|(_, rest)| !rest.trim().is_empty());
        // Or its text on the next lines, indented deeper (clap's long layout).
        let next = lines.get(k + 1).copied().unwrap_or("");
        let next_indent = next.len() - next.trim_start().len();
        let text_below = !next.trim().is_empty()
            && next_indent > indent + 2
            && !next.trim_start().starts_with('-');
        if !has_text && !text_below {
            out.push(t.to_string());
        }
    }
    out
}

#[test]
fn every_option_of_every_command_has_a_help_text() {
    let mut missing = Vec::new();
    for path in command_paths() {
        for option in undocumented(&help(&path)) {
            missing.push(format!("cdpr {} {option}", path.join(" ")));
        }
    }
    assert!(
        missing.is_empty(),
        "options without help:\n{}",
        missing.join("\n")
    );
}

#[test]
fn help_texts_name_the_shipped_robots_as_cdpr_robots_lists_them() {
    let v = json(&["robots", "--json"]);
    let shipped: BTreeSet<String> = v["robots"]
        .as_array()
        .expect("robots")
        .iter()
        .filter(|r| r["source"] == "shipped")
        .map(|r| r["name"].as_str().expect("name").to_string())
        .collect();
    assert!(shipped.len() >= 5, "{shipped:?}");
    let paths = command_paths();
    assert!(paths.len() > 15, "{paths:?}");
    let mut listing_seen = 0;
    for path in paths {
        let text = help(&path);
        let named = |s: &str| -> BTreeSet<String> {
            shipped
                .iter()
                .filter(|name| {
                    s.match_indices(name.as_str()).any(|(at, _)| {
                        let before = s[..at].chars().last();
                        let after = s[at + name.len()..].chars().next();
                        !before.is_some_and(|c| c.is_alphanumeric())
                            && !after.is_some_and(|c| c.is_alphanumeric())
                    })
                })
                .cloned()
                .collect()
        };
        // Each paragraph about the shipped robots (example command lines aside: they name the
        // robot they run) that names two of them or more names them all. (A paragraph may
        // name a few robots for what they are: "robots with rigid legs (keops, rssu2)".)
        for paragraph in text.split("\n\n") {
            let prose: Vec<&str> = paragraph
                .lines()
                .filter(|l| {
                    let t = l.trim_start();
                    !(t.starts_with("cdpr ") || t.starts_with("xvfb-run "))
                })
                .collect();
            // The list of shipped robots: one per line under its heading.
            if let Some(at) = prose.iter().position(|l| *l == "Shipped robots:") {
                let listed: BTreeSet<String> = prose[at + 1..]
                    .iter()
                    .take_while(|l| l.starts_with("  "))
                    .filter_map(|l| l.split_whitespace().next())
                    .map(str::to_string)
                    .collect();
                assert_eq!(listed, shipped, "cdpr {} --help", path.join(" "));
                listing_seen += 1;
                continue;
            }
            let prose = prose.join(" ");
            if !prose.contains("shipped") {
                continue;
            }
            let found = named(&prose);
            assert!(
                found.len() < 2 || found == shipped,
                "cdpr {} --help names {found:?} of the shipped {shipped:?} in:\n{paragraph}",
                path.join(" ")
            );
        }
    }
    assert!(
        listing_seen >= 10,
        "the robot list appears in {listing_seen} helps"
    );
}

#[test]
fn no_option_says_its_default_twice() {
    for path in command_paths() {
        let text = help(&path);
        // One option's text runs from its flag to the next flag; the default is said once.
        let mut doubled = Vec::new();
        let mut block = String::new();
        for line in text.lines().chain(["  --end"]) {
            if line.trim_start().starts_with('-') {
                if block.matches("[default:").count() > 1 {
                    doubled.push(block.lines().next().unwrap_or("").trim().to_string());
                }
                block.clear();
            }
            block.push_str(line);
            block.push('\n');
        }
        assert!(doubled.is_empty(), "cdpr {}: {doubled:?}", path.join(" "));
    }
}

/// Each command's request table (core's, the ADS layer's, the viewer's) and the commands that
/// take it: every option of the table is a flag of each, whose help carries the table's help,
/// range and unit, and default, so that no face can drift from the table.
#[test]
fn every_request_table_is_offered_by_its_commands_help() {
    use cdpr_core::options::{Kind, OptionSpec, Request, Value};
    fn check<R: Request>(commands: &[&[&str]]) {
        for path in commands {
            let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
            let text = help(&path);
            // The help as one line per option: clap wraps, so join the words.
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            for spec in R::OPTIONS {
                let flag = format!("--{}", spec.cli_flag());
                let at = flat
                    .find(&format!("{flag} "))
                    .unwrap_or_else(|| panic!("cdpr {path:?} --help lacks {flag}"));
                let end = (at + 1500).min(flat.len());
                let end = (end..=flat.len())
                    .find(|&e| flat.is_char_boundary(e))
                    .unwrap_or(flat.len());
                let entry = &flat[at..end];
                let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
                let first: String = spec.help.chars().skip(1).take(30).collect();
                assert!(
                    entry.contains(&words(&first)),
                    "cdpr {path:?} {flag}: help is not the table's ({first:?}): {entry}"
                );
                if let Some(range) = spec_range(spec) {
                    assert!(
                        entry.contains(&range),
                        "cdpr {path:?} {flag}: no range {range}: {entry}"
                    );
                }
                let default = match (spec.default_text, R::default_value(spec.name)) {
                    (Some(t), _) => Some(t.to_string()),
                    (None, Some(Value::Whole(n))) => Some(n.to_string()),
                    (None, Some(Value::Number(x))) if spec.value_name != "TIME" => {
                        Some(format!("{x}"))
                    }
                    (None, Some(Value::Text(t))) if !t.is_empty() => Some(t),
                    _ => None,
                };
                if let Some(d) = default {
                    assert!(
                        entry.contains(&format!("[default: {}", words(&d))),
                        "cdpr {path:?} {flag}: no default {d}: {entry}"
                    );
                }
            }
        }
    }
    fn spec_range(spec: &OptionSpec) -> Option<String> {
        match spec.kind {
            Kind::Number { .. } | Kind::Whole { .. } => spec.range_text(),
            _ => None,
        }
    }
    check::<cdpr_core::workspace::survey::WorkspaceRequest>(&[&["workspace"]]);
    check::<cdpr_core::preflight::PreflightRequest>(&[&["preflight"]]);
    check::<cdpr_core::run::feedforward::FeedforwardRequest>(&[&["feedforward"]]);
    check::<cdpr_core::export::MjcfOptions>(&[&["export"]]);
    check::<cdpr_core::trajectory::perturb::PerturbRequest>(&[&["trajectory"]]);
    check::<cdpr_core::metrics::CompareRequest>(&[&["compare"], &["report"]]);
    check::<cdpr_core::kinematics::FkRequest>(&[&["fk"]]);
    check::<cdpr_core::identify::session::FitRequest>(&[&["surrogate", "fit"]]);
    check::<cdpr_ads::requests::PlcRequest>(&[&["plc"]]);
    check::<cdpr_ads::requests::LinkRequest>(&[&["shadow"]]);
    check::<cdpr_ads::requests::DiscoverRequest>(&[&["discover"]]);
    check::<cdpr_ads::requests::RouteAddRequest>(&[&["route", "add"]]);
    check::<cdpr_ads::requests::RunForRequest>(&[&["plc"], &["shadow"], &["proxy"]]);
    check::<cdpr_ads::requests::ProxyRequest>(&[&["proxy"]]);
    check::<cdpr_core::sweep::SweepRequest>(&[&["sweep"]]);
    #[cfg(feature = "viewer")]
    {
        check::<cdpr_viewer::request::ViewRequest>(&[&["view"]]);
        check::<cdpr_ads::requests::LinkRequest>(&[&["view"]]);
    }
}

/// `-h` is the summary (each option's first clause, the link's and Secure ADS's options of
/// live mode left to `--help`), `--help` the whole: `cdpr view -h` fits a couple of screens.
#[test]
fn short_help_is_a_summary_of_the_long_one() {
    for path in command_paths() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let o = cdpr(&args);
        assert!(o.status.success(), "cdpr {args:?}: {}", stderr(&o));
        let short = stdout(&o).lines().count();
        let long = help(&path).lines().count();
        assert!(short <= long, "cdpr {args:?}: {short} lines, --help {long}");
        if path == ["view"] {
            assert!(
                short <= 150 && long > 2 * short,
                "cdpr view -h: {short} lines, --help {long}"
            );
            assert!(stdout(&o).contains("--help says more"));
        }
    }
}
