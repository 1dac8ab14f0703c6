//! Every command's `--help`: each option and argument says what it is.

mod common;
use common::*;

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

