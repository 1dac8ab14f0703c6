//! The suite's results as a JUnit XML file, the format CI servers (Jenkins, GitLab, Azure
//! DevOps) and TcUnit-Runner merge and show: one `<testsuite>` per scenario, one
//! `<testcase>` per expectation and condition; a failure carries the measured value, the bound
//! and when; a scenario that could not run or stopped early is an `<error>`; the run's record
//! is attached (`[[ATTACHMENT|path]]`, Jenkins' attachments convention, in `<system-out>`).

use super::run::ScenarioResult;
use cdpr_core::export::xml::escape;
use std::fmt::Write as _;
use std::path::Path;

/// The JUnit XML of `results`, the suite named `suite` (its file's stem).
pub fn junit(suite: &str, results: &[ScenarioResult]) -> String {
    // Each scenario's first case is its run: an error when it could not run or stopped early.
    let tests: usize = results.iter().map(|r| r.verdicts.len() + 1).sum();
    let failures: usize = results.iter().map(ScenarioResult::failures).sum();
    let errors = results.iter().filter(|r| r.error().is_some()).count();
    let wall: f64 = results
        .iter()
        .map(|r| r.run.as_ref().map_or(0.0, |run| run.wall))
        .sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{wall:.3}\">",
        escape(suite)
    );
    for r in results {
        let class = escape(&format!("{suite}.{}", r.name));
        let wall = r.run.as_ref().map_or(0.0, |run| run.wall);
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{wall:.3}\">",
            escape(&r.name),
            r.verdicts.len() + 1,
            r.failures(),
            usize::from(r.error().is_some()),
        );
        if let Ok(run) = &r.run {
            let _ = writeln!(x, "    <properties>");
            for (name, value) in [
                ("record", run.record.display().to_string()),
                ("simulated_s", format!("{:.3}", run.simulated)),
                ("suite_line", r.line.to_string()),
            ] {
                let _ = writeln!(
                    x,
                    "      <property name=\"{name}\" value=\"{}\"/>",
                    escape(&value)
                );
            }
            let _ = writeln!(x, "    </properties>");
        }
        let _ = write!(
            x,
            "    <testcase name=\"run\" classname=\"{class}\" time=\"{wall:.3}\""
        );
        match r.error() {
            None => x.push_str("/>\n"),
            Some(error) => {
                let _ = writeln!(
                    x,
                    ">\n      <error message=\"{}\" type=\"run\">{}</error>\n    </testcase>",
                    escape(error),
                    escape(error)
                );
            }
        }
        for v in &r.verdicts {
            let _ = write!(
                x,
                "    <testcase name=\"{}\" classname=\"{class}\" time=\"0\"",
                escape(&v.name)
            );
            if v.passed {
                x.push_str("/>\n");
            } else {
                let _ = writeln!(
                    x,
                    ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                    escape(&v.describe()),
                    escape(&v.name),
                    escape(&format!(
                        "measured: {}\nbound: {}\nat: {}",
                        v.measured,
                        v.bound,
                        v.at.map_or("-".into(), |t| format!("t = {t:.3} s"))
                    ))
                );
            }
        }
        if let Ok(run) = &r.run {
            let record = std::path::absolute(&run.record).unwrap_or_else(|_| run.record.clone());
            let _ = writeln!(
                x,
                "    <system-out>[[ATTACHMENT|{}]]</system-out>",
                escape(&record.display().to_string())
            );
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

/// Writes [`junit`] to `path`.
pub fn write(path: &Path, suite: &str, results: &[ScenarioResult]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, junit(suite, results))
}
