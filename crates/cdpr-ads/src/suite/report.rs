//! The suite's results as a Markdown report (`DIR/report.md`): a table of the scenarios, then
//! each scenario's expectations with what was measured, the bound and when, and for each one
//! that failed over time the plot of its series against its bound (an SVG beside the report).

use super::run::{ScenarioResult, Tally};
use cdpr_core::report::ReportError;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A cell of a Markdown table: its `|` escaped, on one line.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Where a path is linked from the report in `dir`: relative to it when inside it.
fn link(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .display()
        .to_string()
        .replace(' ', "%20")
}

fn verdict_word(r: &ScenarioResult) -> &'static str {
    match (r.error(), r.passed()) {
        (Some(_), _) => "ERROR",
        (None, true) => "passed",
        (None, false) => "FAILED",
    }
}

/// Writes the report and its plots into `dir` (made if missing); returns the report's path.
pub fn write(dir: &Path, suite: &Path, results: &[ScenarioResult]) -> Result<PathBuf, ReportError> {
    let io = |file: &Path| {
        let file = file.display().to_string();
        move |cause| ReportError::Io { file, cause }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let checks: usize = results.iter().map(|r| r.verdicts.len()).sum();
    let violated: usize = results.iter().map(ScenarioResult::failures).sum();
    let mut md = String::new();
    let _ = writeln!(md, "# Test report: {}\n", suite.display());
    let _ = writeln!(
        md,
        "{}; {checks} expectations, {violated} violated.\n",
        Tally::of(results)
    );
    md.push_str("| scenario | verdict | expectations held | simulated [s] | wall [s] | record |\n");
    md.push_str("|---|---|---|---|---|---|\n");
    for r in results {
        let (simulated, wall, record) = match &r.run {
            Ok(run) => (
                format!("{:.2}", run.simulated),
                format!("{:.2}", run.wall),
                format!(
                    "[{}]({})",
                    cell(&link(dir, &run.record)),
                    link(dir, &run.record)
                ),
            ),
            Err(_) => ("-".into(), "-".into(), "-".into()),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {}/{} | {simulated} | {wall} | {record} |",
            cell(&r.name),
            verdict_word(r),
            r.verdicts.len() - r.failures(),
            r.verdicts.len()
        );
    }
    for r in results {
        let _ = writeln!(md, "\n## {} — {}\n", r.name, verdict_word(r));
        if let Some(e) = r.error() {
            let _ = writeln!(md, "**Error:** {}\n", cell(e));
        }
        if r.verdicts.is_empty() {
            continue;
        }
        md.push_str("| expectation | verdict | measured | bound | at [s] |\n");
        md.push_str("|---|---|---|---|---|\n");
        for v in &r.verdicts {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                cell(&v.name),
                if v.passed { "held" } else { "**VIOLATED**" },
                cell(&v.measured),
                cell(&v.bound),
                v.at.map_or("-".into(), |t| format!("{t:.3}"))
            );
        }
        let stem = r
            .run
            .as_ref()
            .ok()
            .and_then(|run| run.record.file_stem())
            .map_or_else(
                || "scenario".to_string(),
                |s| s.to_string_lossy().into_owned(),
            );
        for (k, v) in r.verdicts.iter().enumerate() {
            let Some(plot) = &v.plot else { continue };
            let file = dir.join(format!("{stem}-{}.svg", k + 1));
            plot.write_svg(&file)?;
            let _ = writeln!(
                md,
                "\n**{}**\n\n![{}]({})",
                cell(&v.describe()),
                cell(&v.name),
                link(dir, &file)
            );
        }
    }
    let path = dir.join("report.md");
    std::fs::write(&path, md).map_err(io(&path))?;
    Ok(path)
}
