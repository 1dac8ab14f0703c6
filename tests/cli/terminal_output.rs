//! What cdpr writes to a terminal and to a pipe: no colour codes in a pipe, a status line for
//! long runs on a terminal only.

use crate::common::*;

#[test]
fn no_colour_codes_when_stderr_is_not_a_terminal() {
    // Log lines (CDPR_LOG) and clap's errors both go to stderr, here a pipe.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(words("plc -r uvigo8 --listen 127.0.0.1:0 --duration 0.2"))
        .env("CDPR_LOG", "info")
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("INFO"), "a log line was written: {err}");
    assert!(!err.contains('\x1b'), "colour codes in a pipe: {err:?}");
    let o = cdpr(&words("simulate --robot uvigo8 --dt nope -t seed000"));
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains('\x1b'));
}

/// Runs `cdpr ARGS` on a pseudo-terminal (util-linux `script`), returning what it drew, or
/// None where `script` is missing.
fn on_a_terminal(args: &str) -> Option<String> {
    let line = format!("{} {args}", env!("CARGO_BIN_EXE_cdpr"));
    let o = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .output()
        .ok()?;
    assert!(o.status.success(), "{}", stderr(&o));
    Some(stdout(&o))
}

#[test]
fn long_runs_draw_a_status_line_on_a_terminal_only() {
    let run = "plc -r uvigo8 --listen 127.0.0.1:0 --duration 0.8";
    // A pipe: no status line.
    let o = cdpr(&words(run));
    assert!(o.status.success());
    assert!(!stderr(&o).contains("late cycles"), "{}", stderr(&o));
    let Some(drawn) = on_a_terminal(run) else {
        eprintln!("SKIPPED the terminal half: no `script` here");
        return;
    };
    assert!(drawn.contains("late cycles"), "{drawn}");
    let quiet = on_a_terminal(&format!("{run} --quiet")).expect("script ran before");
    assert!(!quiet.contains("late cycles"), "{quiet}");
    assert!(
        quiet.contains("PLC cycles"),
        "the statistics are still printed: {quiet}"
    );
}
