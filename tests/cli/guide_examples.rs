//! The user guide's command examples run, so that they cannot rot.
//!
//! Every ```` ```console ```` block of `README.md` and `docs/src/*.md` is a sequence of
//! `$ cdpr …` commands, each followed by what it prints (or part of it). The commands of a page
//! run in order, with the freshly built binary, in a scratch directory that holds a copy of
//! `robots/` and an empty `out/` — what a reader has at the repository's root after
//! `mkdir -p out`. Each command must exit with status 0, or with the status its line ends with
//! (`# exit status 2`). Every output line shown must appear in what the command printed, in
//! order (stdout and stderr each keep their own order, as a terminal interleaves them); a line
//! `...` stands for lines left out, and `...` inside a line for any text (timings, long tails).
//! Blocks that need a PLC, a window or minutes of physics are ```` ```sh ```` and do not run.
//!
//! Why not `trycmd`: it gives a Markdown file a scratch directory only when a `PAGE.out/`
//! directory sits beside it in `docs/src`, continues commands with `> ` lines (which a reader
//! cannot paste into a shell) and wants each block's whole output; this harness is the little
//! the guide needs.
//!
//! A second test checks the guide's links: every relative link and image of the pages resolves
//! to a file inside the repository, `SUMMARY.md` lists every page, and a page that says
//! "seed 00N" links to the page that introduces the five papers.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The pages whose examples run: the README and the guide's chapters.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut pages = vec![root.join("README.md")];
    let mut guide: Vec<PathBuf> = fs::read_dir(root.join("docs/src"))
        .expect("docs/src exists")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    guide.sort();
    pages.extend(guide);
    pages
}

/// One `$ cdpr …` command of a console block and the output lines shown under it.
#[derive(Debug)]
struct Example {
    /// Line of the command in its page (1-based).
    line: usize,
    command: String,
    args: Vec<String>,
    status: i32,
    shown: Vec<String>,
}

/// The commands of every ```console block of a page, in order.
fn examples(page: &Path, text: &str) -> Result<Vec<Example>, String> {
    let mut examples: Vec<Example> = Vec::new();
    let mut in_console = false;
    let mut in_other = false;
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            if in_console || in_other {
                in_console = false;
                in_other = false;
            } else {
                in_console = trimmed.trim_start_matches('`').trim() == "console";
                in_other = !in_console;
            }
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            let mut command = command.trim_end().to_string();
            while command.ends_with('\\') {
                command.pop();
                let (_, next) = lines.next().ok_or_else(|| {
                    format!(
                        "{}:{}: a command continued past the block",
                        page.display(),
                        index + 1
                    )
                })?;
                command.push(' ');
                command.push_str(next.trim());
            }
            let (words, comment) = split_command(&command)
                .map_err(|e| format!("{}:{}: {e}", page.display(), index + 1))?;
            if words.first().map(String::as_str) != Some("cdpr") {
                return Err(format!(
                    "{}:{}: only `cdpr` commands run in ```console blocks (`{command}`): \
                     show others in ```sh",
                    page.display(),
                    index + 1
                ));
            }
            let status = match comment
                .as_deref()
                .and_then(|c| c.strip_prefix("exit status "))
            {
                Some(code) => code.trim().parse().map_err(|_| {
                    format!(
                        "{}:{}: bad `# exit status`: {code}",
                        page.display(),
                        index + 1
                    )
                })?,
                None => 0,
            };
            examples.push(Example {
                line: index + 1,
                command,
                args: words[1..].to_vec(),
                status,
                shown: Vec::new(),
            });
        } else if let Some(example) = examples.last_mut() {
            let shown = line.trim_end();
            if !shown.is_empty() && shown != "..." {
                example.shown.push(shown.to_string());
            }
        } else if !line.trim().is_empty() {
            return Err(format!(
                "{}:{}: output before any `$ cdpr` command in a console block",
                page.display(),
                index + 1
            ));
        }
    }
    Ok(examples)
}

/// Splits a command line into words as a POSIX shell does for the simple cases the guide uses
/// (spaces, single and double quotes) and returns a trailing `# comment` apart.
fn split_command(line: &str) -> Result<(Vec<String>, Option<String>), String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some(other) => word.push(other),
                        None => return Err(format!("unclosed quote in `{line}`")),
                    }
                }
            }
            '#' if word.is_none() => {
                let comment: String = chars.collect();
                return Ok((words, Some(comment.trim().to_string())));
            }
            c if c.is_whitespace() => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    if let Some(done) = word {
        words.push(done);
    }
    Ok((words, None))
}

/// Whether `actual` matches `shown`, where `...` in `shown` stands for any text.
fn line_matches(shown: &str, actual: &str) -> bool {
    let parts: Vec<&str> = shown.split("...").collect();
    if parts.len() == 1 {
        return shown == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Checks that every shown line appears in stdout or stderr, each stream in order.
fn check_output(shown: &[String], stdout: &str, stderr: &str) -> Result<(), String> {
    let out: Vec<&str> = stdout.lines().map(str::trim_end).collect();
    let err: Vec<&str> = stderr.lines().map(str::trim_end).collect();
    let (mut at_out, mut at_err) = (0, 0);
    for line in shown {
        if let Some(i) = out[at_out..].iter().position(|a| line_matches(line, a)) {
            at_out += i + 1;
        } else if let Some(i) = err[at_err..].iter().position(|a| line_matches(line, a)) {
            at_err += i + 1;
        } else {
            return Err(format!(
                "shown line not printed (in this order):\n    {line}"
            ));
        }
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create the scratch directory");
    for entry in fs::read_dir(from).expect("read robots/") {
        let path = entry.expect("a directory entry").path();
        let target = to.join(path.file_name().expect("a file name"));
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            fs::copy(&path, &target).expect("copy a robot file");
        }
    }
}

/// Runs a page's examples in its own scratch directory; returns the failures.
fn run_page(page: &Path) -> Vec<String> {
    let text = fs::read_to_string(page).expect("read the page");
    let examples = match examples(page, &text) {
        Ok(examples) => examples,
        Err(e) => return vec![e],
    };
    if examples.is_empty() {
        return Vec::new();
    }
    let stem = page
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("a page name");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("guide")
        .join(stem);
    let _ = fs::remove_dir_all(&scratch);
    copy_dir(&Path::new(ROOT).join("robots"), &scratch.join("robots"));
    fs::create_dir_all(scratch.join("out")).expect("create out/");
    let mut failures = Vec::new();
    for example in &examples {
        let output = Command::new(env!("CARGO_BIN_EXE_cdpr"))
            .args(&example.args)
            .current_dir(&scratch)
            .env_remove("CDPR_LOG")
            .output()
            .expect("run cdpr");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let status = output.status.code().unwrap_or(-1);
        let problem = if status != example.status {
            Some(format!(
                "exit status {status}, the page expects {}",
                example.status
            ))
        } else {
            check_output(&example.shown, &stdout, &stderr).err()
        };
        if let Some(problem) = problem {
            failures.push(format!(
                "{}:{}: $ {}\n  {problem}\n  --- stdout ---\n{stdout}  --- stderr ---\n{stderr}",
                page.display(),
                example.line,
                example.command
            ));
        }
    }
    failures
}

#[test]
fn the_guides_console_examples_print_what_they_show() {
    let pages = pages();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = pages
            .iter()
            .map(|page| scope.spawn(move || run_page(page)))
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("a page's worker"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The targets of a page's Markdown links and images that are files of the repository.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].split('#').next().unwrap_or("").trim();
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                links.push(target.to_string());
            }
            rest = &rest[end..];
        }
    }
    links
}

#[test]
fn the_guides_links_resolve_inside_the_repository() {
    let root = fs::canonicalize(ROOT).expect("the repository");
    let mut problems = Vec::new();
    let mut all = pages();
    all.push(root.join("assets/twincat/README.md"));
    all.push(root.join("python/README.md"));
    all.push(root.join("ARCHITECTURE.md"));
    for page in &all {
        let text = fs::read_to_string(page).expect("read the page");
        let dir = page.parent().expect("a page's directory");
        for link in relative_links(&text) {
            let resolved = fs::canonicalize(dir.join(&link));
            match resolved {
                Ok(path) if path.starts_with(&root) => {}
                Ok(path) => problems.push(format!(
                    "{}: `{link}` leaves the repository ({})",
                    page.display(),
                    path.display()
                )),
                Err(e) => problems.push(format!("{}: `{link}`: {e}", page.display())),
            }
        }
        let name = page.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let says_seed = (0..5).any(|n| text.contains(&format!("seed 00{n}")));
        if says_seed && name != "papers.md" && !text.contains("papers.md") {
            problems.push(format!(
                "{}: says \"seed 00N\" without a link to the papers page (papers.md)",
                page.display()
            ));
        }
        if text.contains("shared/seeds") {
            problems.push(format!(
                "{}: points at the papers' text outside the repository",
                page.display()
            ));
        }
    }
    let summary = fs::read_to_string(root.join("docs/src/SUMMARY.md")).expect("SUMMARY.md");
    let listed = relative_links(&summary);
    for page in pages().iter().skip(1) {
        let name = page
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a page name");
        if name != "SUMMARY.md" && !listed.iter().any(|l| l == name) {
            problems.push(format!("docs/src/{name} is not in SUMMARY.md"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_harness_reads_commands_as_a_shell_would() {
    let (words, comment) =
        split_command("cdpr check 'my robot.toml' --title \"a b\" # exit status 2")
            .expect("a well-formed line");
    assert_eq!(words, ["cdpr", "check", "my robot.toml", "--title", "a b"]);
    assert_eq!(comment.as_deref(), Some("exit status 2"));
    assert!(split_command("cdpr check 'open").is_err());
    assert!(line_matches(
        "steps in ... s wall (...× real time)",
        "steps in 0.22 s wall (140× real time)"
    ));
    assert!(!line_matches("TOTAL  0.143", "TOTAL  0.144"));
    assert!(!line_matches("a...b", "ab-"));
    assert!(check_output(&["b".into(), "a".into()], "a\nb\n", "").is_err());
    assert!(check_output(&["warning".into(), "a".into()], "a\n", "warning\n").is_ok());
}
