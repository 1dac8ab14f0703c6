//! Helpers for driving the real `cdpr` binary.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod svg;

/// The workspace's one list of hostile values (numbers in every spelling, malformed ones,
/// wrong types), kept in the core's fixtures so that its own tests use it too.
#[allow(unused_imports)] // not every binary that shares `common` throws hostile values
pub use cdpr_core::fixtures::HOSTILE_VALUES;

/// The words of `line` (split at blanks) followed by `tail`: a command line written as one
/// string, with the arguments that are not literals (paths) appended.
pub fn with<'a>(line: &'a str, tail: &[&'a str]) -> Vec<&'a str> {
    line.split_whitespace()
        .chain(tail.iter().copied())
        .collect()
}

/// The words of `line`, split at blanks.
pub fn words(line: &str) -> Vec<&str> {
    with(line, &[])
}

pub fn cdpr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the cdpr binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `cdpr LINE` (split at blanks) run in `dir`: the README's commands use relative file names.
pub fn cdpr_in(dir: &std::path::Path, line: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args(words(line))
        .current_dir(dir)
        .output()
        .expect("cdpr runs")
}

/// `o` failed and said `needle` on stderr.
pub fn assert_fails(o: &Output, needle: &str) {
    assert!(!o.status.success(), "expected a failure: {}", stdout(o));
    assert_stderr(o, needle);
}

/// `o` said `needle` on stderr.
pub fn assert_stderr(o: &Output, needle: &str) {
    assert!(
        stderr(o).contains(needle),
        "no `{needle}` in: {}",
        stderr(o)
    );
}

/// Runs, expects success, parses stdout as one JSON object.
pub fn json(args: &[&str]) -> serde_json::Value {
    let o = cdpr(args);
    assert!(o.status.success(), "cdpr {args:?} failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout of {args:?} is not one JSON object ({e}): {}",
            stdout(&o)
        )
    })
}

pub fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A `cdpr` process whose stderr is drained on a thread (so it never blocks on a full pipe);
/// its first stderr line is kept apart (`cdpr plc` and `cdpr shadow` announce themselves
/// there).
pub struct Proc {
    pub child: Child,
    pub stderr: Arc<Mutex<String>>,
    pub first_line: String,
}

impl Proc {
    /// Starts `cdpr ARGS` in the workspace root and waits for its first stderr line.
    pub fn spawn(args: &[&str]) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cdpr"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cdpr runs");
        let mut reader = BufReader::new(child.stderr.take().expect("stderr"));
        let mut first_line = String::new();
        reader.read_line(&mut first_line).expect("first line");
        let stderr = Arc::new(Mutex::new(first_line.clone()));
        {
            let stderr = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut rest = String::new();
                let _ = reader.read_to_string(&mut rest);
                stderr.lock().expect("stderr").push_str(&rest);
            });
        }
        Proc {
            child,
            stderr,
            first_line,
        }
    }

    /// Sends SIGINT, as Ctrl-C does (`cdpr plc` and `cdpr shadow` then print their
    /// statistics and exit 0).
    pub fn interrupt(&self) {
        let kill = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(kill.success(), "kill -INT {}", self.child.id());
    }

    /// Waits for the exit; (success, stdout, stderr).
    pub fn finish(mut self) -> (bool, String, String) {
        let mut out = String::new();
        if let Some(mut s) = self.child.stdout.take() {
            let _ = s.read_to_string(&mut out);
        }
        let ok = self.child.wait().expect("exits").success();
        std::thread::sleep(Duration::from_millis(50));
        let err = self.stderr.lock().expect("stderr").clone();
        (ok, out, err)
    }

    /// Waits for a successful exit and parses stdout as one JSON object.
    pub fn json(self) -> serde_json::Value {
        let (ok, out, err) = self.finish();
        assert!(ok, "failed: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not one JSON object ({e}): {out}"))
    }
}

/// `cdpr plc ARGS` (give it `--listen 127.0.0.1:0` for a free port); the process and the
/// address it serves on, read from its first stderr line ("… serving ADS on ADDR …").
pub fn plc(args: &[&str]) -> (Proc, String) {
    let mut all = vec!["plc"];
    all.extend_from_slice(args);
    let p = Proc::spawn(&all);
    let addr = p
        .first_line
        .split("serving ADS on ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {:?}", p.first_line))
        .to_string();
    (p, addr)
}

/// Virtual memory cap of the runs [`capped`] and [`refused`], KB (the debug binary maps ~1 GB
/// before it allocates).
pub const MEMORY_KB: u64 = 3_000_000;
/// Deadline of the runs [`capped`] and [`refused`]: a hang guard, well above a normal error
/// exit (milliseconds), well below a runaway.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// `cdpr ARGS` in the workspace root under [`MEMORY_KB`], killed at [`DEADLINE`].
pub fn capped(args: &[&str]) -> Bounded {
    bounded(
        args,
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        MEMORY_KB,
        DEADLINE,
    )
}

/// A [`capped`] run that failed with `code` within the deadline, naming `needle` on stderr,
/// without a panic or a failed allocation.
#[track_caller]
pub fn refused(args: &[&str], code: i32, needle: &str) -> Bounded {
    let r = capped(args);
    assert!(
        !r.timed_out,
        "hung: cdpr {args:?} still running after {DEADLINE:?}, killed (stderr: {})",
        r.stderr
    );
    assert_eq!(
        r.code,
        Some(code),
        "cdpr {args:?}: exit {:?}, stderr: {}",
        r.code,
        r.stderr
    );
    assert!(
        r.stderr.contains(needle),
        "cdpr {args:?}: no `{needle}` in stderr: {}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("memory allocation"),
        "{}",
        r.stderr
    );
    r
}

/// What a [`bounded`] run of `cdpr` did.
#[derive(Debug, Clone)]
pub struct Bounded {
    /// Exit code (None: killed by a signal, or at the deadline).
    pub code: Option<i32>,
    /// Killed at the deadline.
    pub timed_out: bool,
    pub elapsed: Duration,
    /// The first MiB of each stream (a runaway output is drained, not kept).
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cdpr ARGS` in `dir` under a `memory_kb` address-space limit (`ulimit -v`), killed
/// after `deadline`: a hang or a runaway fails the caller's assertions instead of eating the
/// machine. Both pipes are drained while it runs, so a full pipe cannot stall it.
pub fn bounded<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    dir: &std::path::Path,
    memory_kb: u64,
    deadline: Duration,
) -> Bounded {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {memory_kb}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_cdpr"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cdpr runs");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.by_ref().take(1 << 20).read_to_end(&mut bytes);
                let _ = std::io::copy(&mut p, &mut std::io::sink());
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    // Polled from 1 ms up to 10 ms: most runs end within a few milliseconds (a refused value),
    // and a sweep of a thousand of them would otherwise wait out a fixed poll each.
    let mut poll = Duration::from_millis(1);
    let (code, timed_out) = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break (status.code(), false);
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(poll);
        poll = (poll * 2).min(Duration::from_millis(10));
    };
    Bounded {
        code,
        timed_out,
        elapsed: start.elapsed(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// The tests' Python (`CDPR_PYTHON`, default `.venv-ci/bin/python`, which `.ci/run` creates)
/// when it imports `modules` (e.g. "numpy, pandas"); else None, and the test skips with a line
/// saying so — or fails, when `CDPR_REQUIRE_PYTHON=1` (CI) asks that it run.
pub fn python_with(modules: &str) -> Option<std::path::PathBuf> {
    let candidate = std::env::var_os("CDPR_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-ci/bin/python")
        });
    let ok = std::process::Command::new(&candidate)
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(candidate);
    }
    let why = format!(
        "no Python importing {modules} at {} (set CDPR_PYTHON)",
        candidate.display()
    );
    assert!(
        std::env::var("CDPR_REQUIRE_PYTHON").as_deref() != Ok("1"),
        "{why}"
    );
    eprintln!("SKIPPED: {why}");
    None
}

/// A host that takes connections and reads them, and answers nothing: its address (a PLC
/// without a route for this PC, or one whose runtime hangs).
pub fn silent_listener() -> String {
    use std::io::Read;
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = silent.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        for mut c in silent.incoming().flatten() {
            std::thread::spawn(move || {
                let mut sink = [0u8; 4096];
                while matches!(c.read(&mut sink), Ok(n) if n > 0) {}
            });
        }
    });
    addr
}
