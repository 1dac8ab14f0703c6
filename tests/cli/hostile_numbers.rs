//! Every number the command line takes, attacked: for every subcommand and every option that
//! takes a typed value (numbers, number lists, poses, durations, ports, …), the workspace's
//! hostile values (`HOSTILE_VALUES`: 0, -0, -1, 1e-300, 1e300, NaN, ±inf, huge integers,
//! malformed numbers, …), the ends of each option's range and just beyond them must give exit
//! code 0, 1 or 2 (never a panic, an abort or a signal), a message naming the option when the
//! run fails, and finish within a deadline under a 4 GB address-space limit. A number outside
//! the option's stated range is refused by the parser (exit 2) with that range and the value
//! given ("must be between A and B, got V"); a number inside it is never refused so.
//!
//! The options are not listed here: they are read from the binary's own `--help` (every
//! subcommand, recursively), and an option is "typed" when clap refuses the value `x` for it
//! without listing possible values (an enum). A new option is covered without touching this
//! file; a new subcommand with typed options needs a base command line in `base()` (the test
//! says so). Each option's range is read from clap's message for an absurd value ("must be
//! between A and B"), so the values just inside and outside it follow the code.
//!
//! `PROPTEST_CASES` (default 16) sets the random cases per subcommand; the fixed sweep and the
//! list of values once accepted always run in full.

use crate::common;

use crate::common::scratch;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A hang guard, not a speed claim: a run still going after this long (debug build, 2 busy
/// cores; a refusal takes milliseconds) is killed, and fails if its value had to be refused.
const DEADLINE: Duration = Duration::from_secs(20);

/// The values every typed option gets, besides its range ends: the workspace's one list.
const HOSTILE: &[&str] = common::HOSTILE_VALUES;

/// A value the parser accepted may legitimately start a long job (a PLC serving for an hour,
/// a run settling for an hour: the core's budgets bound those); such runs are stopped after
/// this long and count as passed if nothing went wrong before.
const ACCEPTED_DEADLINE: Duration = Duration::from_secs(3);

/// One finished (or killed) run.
type Run = common::Bounded;

/// Runs `cdpr ARGS` in `dir` under a 4 GB address-space limit, killed after `DEADLINE`.
fn bounded(args: &[String], dir: &Path) -> Run {
    bounded_for(args, dir, DEADLINE)
}

fn bounded_for(args: &[String], dir: &Path, deadline: Duration) -> Run {
    common::bounded(args, dir, 4_000_000, deadline)
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// The subcommands listed in the "Commands:" section of `cdpr PATH --help`.
fn subcommands(path: &[String], dir: &Path) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help".into());
    let run = bounded(&args, dir);
    let mut out = Vec::new();
    let mut inside = false;
    for line in run.stdout.lines() {
        if line.trim_end() == "Commands:" {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with("  ") {
                break;
            }
            // "  name  description" (a description may wrap onto deeper-indented lines).
            if line.starts_with("  ") && !line.starts_with("   ") {
                let name = line.split_whitespace().next().unwrap_or("").to_string();
                if !name.is_empty() && name != "help" {
                    out.push(name);
                }
            }
        }
    }
    out
}

/// The long options of `cdpr PATH --help` that take a value.
fn valued_options(path: &[String], dir: &Path) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help".into());
    let run = bounded(&args, dir);
    let mut out = Vec::new();
    for line in run.stdout.lines() {
        let t = line.trim_start();
        let t = match t.strip_prefix('-') {
            Some(rest) if !rest.starts_with('-') => {
                // "-r, --robot <ROBOT>"
                match t.split_once(", ") {
                    Some((_, long)) => long,
                    None => continue,
                }
            }
            _ => t,
        };
        let Some(rest) = t.strip_prefix("--") else {
            continue;
        };
        let mut parts = rest.splitn(2, ' ');
        let long = parts.next().unwrap_or("");
        let value = parts.next().unwrap_or("");
        if value.starts_with('<') && !long.is_empty() && long != "help" {
            out.push(long.to_string());
        }
    }
    out
}

/// A typed option of one subcommand, with the range clap states for it.
#[derive(Debug, Clone)]
struct Opt {
    path: Vec<String>,
    long: String,
    /// "must be between A and B" / "from A to B", as written.
    range: Option<(String, String)>,
    /// The range is of whole numbers ("must be a whole number from A to B").
    whole: bool,
}

/// What the range messages of the parsers start with.
const RANGE_LEADS: [&str; 2] = ["must be between ", "must be a whole number from "];

/// The command lines the options are tried on: each valid and quick on its own.
fn base(path: &[String], files: &Files) -> Option<Vec<String>> {
    let f = |p: &PathBuf| p.display().to_string();
    let line: Vec<String> = match path.join(" ").as_str() {
        "ik" => strings(&["ik", "--robot", "silva4", "--pose", "0,0,0.5"]),
        "fk" => strings(&[
            "fk",
            "--robot",
            "silva4",
            "--lengths",
            "1.36206030,1.42183276,1.22378845,1.15380164",
        ]),
        "tensions" => strings(&["tensions", "--robot", "caroca", "--pose", "0,0,1.5"]),
        "equilibrium" => strings(&["equilibrium", "--robot", "silva4", "--sag-at", "0,0,0.5"]),
        "trajectory" => strings(&[
            "trajectory",
            "--robot",
            "silva4",
            "--name",
            "pickplace",
            "--speed",
            "2",
            "--json",
        ]),
        "compare" => vec![
            "compare".into(),
            "--reference".into(),
            f(&files.reference),
            "--actual".into(),
            f(&files.actual),
        ],
        "report" => vec![
            "report".into(),
            "--reference".into(),
            f(&files.reference),
            "--actual".into(),
            f(&files.actual),
            "--out".into(),
            "report-@".into(),
        ],
        "feedforward" => vec![
            "feedforward".into(),
            "--robot".into(),
            "uvigo8-drives".into(),
            "--trajectory".into(),
            f(&files.short),
        ],
        "preflight" => vec![
            "preflight".into(),
            "--robot".into(),
            "silva4".into(),
            "--trajectory".into(),
            f(&files.short),
            "--json".into(),
        ],
        "simulate" => vec![
            "simulate".into(),
            "--robot".into(),
            "silva4".into(),
            "--trajectory".into(),
            f(&files.short),
            "--model".into(),
            "elastic".into(),
        ],
        "plc" => strings(&[
            "plc",
            "--robot",
            "silva4",
            "--trajectory",
            "pickplace",
            "--speed",
            "2",
            "--listen",
            "127.0.0.1:0",
            "--duration",
            "0.05",
        ]),
        // Nothing listens on port 1: the connection is refused (exit 1) once the numbers
        // have passed.
        "shadow" => strings(&[
            "shadow",
            "--plc",
            "127.0.0.1:1",
            "--robot",
            "silva4",
            "--duration",
            "0.2",
        ]),
        // Nothing listens on port 1: a client would be reset; none comes in 0.05 s.
        "proxy" => strings(&[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--to",
            "127.0.0.1:1",
            "--duration",
            "0.05",
        ]),
        // Nothing listens on UDP port 9: the port is closed (exit 1) once the numbers have
        // passed.
        "discover" => strings(&["discover", "127.0.0.1:9", "--timeout", "0.2s"]),
        "route add" => strings(&[
            "route",
            "add",
            "--plc",
            "127.0.0.1:9",
            "--password",
            "1",
            "--net-id",
            "10.1.2.3.1.1",
            "--timeout",
            "0.2s",
        ]),
        "surrogate fit" => vec![
            "surrogate".into(),
            "fit".into(),
            "--robot".into(),
            "silva4".into(),
            "--reference".into(),
            f(&files.run),
            "--method".into(),
            "grid".into(),
            // The combination step maps the workspace first: 20 s of a debug build.
            "--no-combine".into(),
            "--out".into(),
            "fit-@.toml".into(),
        ],
        "surrogate validate" => vec![
            "surrogate".into(),
            "validate".into(),
            "--robot".into(),
            "silva4".into(),
            "--surrogate".into(),
            f(&files.params),
            "--reference".into(),
            f(&files.run),
            "--no-combine".into(),
        ],
        "workspace" => strings(&["workspace", "--robot", "silva4", "--grid", "4", "--no-plot"]),
        "export" => strings(&["export", "--robot", "silva4", "--mjcf", "export-@.xml"]),
        "robots" => strings(&["robots"]),
        // The shipped 12-run example (a few milliseconds a run).
        "sweep" => vec![
            "sweep".into(),
            format!(
                "{}/robots/sweeps/uvigo8-stiffness.toml",
                env!("CARGO_MANIFEST_DIR")
            ),
            "--out".into(),
            "sweep-@.csv".into(),
        ],
        // The shipped suite's shortest scenario (a quarter of a second of a debug build).
        "test" => vec![
            "test".into(),
            format!("{}/robots/suites/shipped.toml", env!("CARGO_MANIFEST_DIR")),
            "--filter".into(),
            "silva4".into(),
            "--records".into(),
            "test-records-@".into(),
            "--jobs".into(),
            "1".into(),
        ],
        _ => return None,
    };
    Some(line)
}

/// Input files made once for the commands that read runs.
struct Files {
    dir: PathBuf,
    /// A reference and a delayed copy (compare, report).
    reference: PathBuf,
    actual: PathBuf,
    /// A short trajectory (simulate): a few centimetres, so that even the slowest speed and
    /// the finest step keep the run short.
    short: PathBuf,
    /// A recorded run (surrogate fit and validate) and parameters fitted on it.
    run: PathBuf,
    params: PathBuf,
}

fn files() -> &'static Files {
    static FILES: OnceLock<Files> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = scratch("cli_numbers_props");
        let must = |args: &[String]| {
            let run = bounded(args, &dir);
            assert_eq!(run.code, Some(0), "setup {args:?}: {}", run.stderr);
        };
        let reference = dir.join("reference.csv");
        let actual = dir.join("actual.csv");
        let short = dir.join("short.csv");
        let run = dir.join("run.csv");
        let params = dir.join("params.toml");
        let p = |p: &PathBuf| p.display().to_string();
        must(
            &[
                strings(&[
                    "trajectory",
                    "--robot",
                    "silva4",
                    "--name",
                    "pickplace",
                    "--speed",
                    "2",
                    "--dt",
                    "0.01",
                    "--out",
                ]),
                vec![p(&reference)],
            ]
            .concat(),
        );
        must(
            &[
                strings(&["trajectory", "--robot", "silva4", "--name"]),
                vec![p(&reference)],
                strings(&["--delay", "0.05", "--lowpass", "3", "--out"]),
                vec![p(&actual)],
            ]
            .concat(),
        );
        // Three samples 2 cm apart.
        std::fs::write(
            &short,
            "t,x,y,z\n0,0,0,0.5\n0.1,0.01,0,0.5\n0.2,0.02,0,0.5\n",
        )
        .expect("short trajectory");
        must(
            &[
                strings(&["simulate", "--robot", "silva4", "--trajectory"]),
                vec![p(&short)],
                strings(&["--model", "elastic", "--out"]),
                vec![p(&run)],
            ]
            .concat(),
        );
        must(
            &[
                strings(&["surrogate", "fit", "--robot", "silva4", "--reference"]),
                vec![p(&run)],
                strings(&["--method", "grid", "--no-combine", "--out"]),
                vec![p(&params)],
            ]
            .concat(),
        );
        Files {
            dir,
            reference,
            actual,
            short,
            run,
            params,
        }
    })
}

/// Every leaf subcommand (path) and its typed options, read from the binary.
fn catalogue() -> &'static Vec<Opt> {
    static OPTS: OnceLock<Vec<Opt>> = OnceLock::new();
    OPTS.get_or_init(|| {
        let dir = &files().dir;
        let mut leaves = Vec::new();
        let mut todo: Vec<Vec<String>> = vec![vec![]];
        while let Some(path) = todo.pop() {
            let subs = subcommands(&path, dir);
            if subs.is_empty() {
                leaves.push(path);
            } else {
                for s in subs {
                    // The viewer is tested headless elsewhere (a window per case here);
                    // the stub of a build without it has its own test below.
                    if path.is_empty() && (s == "view" || s == "completions") {
                        continue;
                    }
                    let mut p = path.clone();
                    p.push(s);
                    todo.push(p);
                }
            }
        }
        let mut opts = Vec::new();
        for path in leaves {
            for long in valued_options(&path, dir) {
                let probe = |value: &str| {
                    let mut args = path.clone();
                    args.push(format!("--{long}={value}"));
                    bounded(&args, dir)
                };
                let x = probe("x");
                let typed = x.code == Some(2)
                    && x.stderr.contains(&format!("for '--{long}"))
                    && !x.stderr.contains("[possible values");
                if !typed {
                    continue;
                }
                let big = probe("1e300");
                let range = RANGE_LEADS.iter().find_map(|lead| {
                    let rest = big.stderr.split(lead).nth(1)?;
                    let (a, rest) = rest.split_once(if lead.contains("between") {
                        " and "
                    } else {
                        " to "
                    })?;
                    let b = rest.split([' ', ',', '\n']).next()?;
                    Some((a.to_string(), b.to_string()))
                });
                let whole = big.stderr.contains(RANGE_LEADS[1]);
                opts.push(Opt {
                    path: path.clone(),
                    long,
                    range,
                    whole,
                });
            }
        }
        opts
    })
}

/// The values just inside and just outside a stated range.
fn range_values(range: &Option<(String, String)>) -> Vec<String> {
    let Some((a, b)) = range else {
        return vec![];
    };
    let mut out = vec![a.clone(), b.clone()];
    if let (Ok(lo), Ok(hi)) = (a.parse::<f64>(), b.parse::<f64>()) {
        let whole = !a.contains(['.', 'e']) && !b.contains(['.', 'e']);
        if whole {
            out.push(format!("{}", lo as i128 - 1));
            out.push(format!("{}", hi as i128 + 1));
        } else {
            out.push(format!("{:e}", lo.next_down()));
            out.push(format!("{:e}", hi.next_up()));
        }
    }
    out
}

/// `base` with `--long value` (replacing the base's own value for it).
fn command(opt: &Opt, value: &str, files: &Files) -> Option<Vec<String>> {
    let mut args = base(&opt.path, files)?;
    let flag = format!("--{}", opt.long);
    if let Some(k) = args.iter().position(|a| *a == flag) {
        args.remove(k);
        args.remove(k);
    }
    // `--x=value`: a value starting with '-' is the option's value, not another flag.
    args.push(format!("{flag}={value}"));
    // Outputs of parallel runs apart.
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let n = RUN.fetch_add(1, Ordering::Relaxed);
    for a in &mut args {
        if a.contains('@') && !a.starts_with("--") {
            *a = a.replace('@', &n.to_string());
        }
    }
    Some(args)
}

/// The base's own value of the option (a pose, a list), if it has one.
fn base_value(opt: &Opt, files: &Files) -> Option<String> {
    let args = base(&opt.path, files)?;
    let flag = format!("--{}", opt.long);
    let k = args.iter().position(|a| *a == flag)?;
    args.get(k + 1).cloned()
}

/// Seconds of a number or a duration ("10ms", "0.5s", "2"); None when it is not one.
fn seconds(text: &str) -> Option<f64> {
    let t = text.trim();
    let (n, scale) = [
        ("ms", 1e-3),
        ("µs", 1e-6),
        ("us", 1e-6),
        ("ns", 1e-9),
        ("s", 1.0),
    ]
    .iter()
    .find_map(|(suffix, scale)| t.strip_suffix(suffix).map(|n| (n, *scale)))
    .unwrap_or((t, 1.0));
    let x: f64 = n.trim().parse().ok()?;
    Some(x * scale)
}

/// Whether `value` must be refused for `opt`: not a number (an item of a list that is not),
/// not finite, outside the option's stated range, or (no stated range) absurdly large.
fn must_refuse(opt: &Opt, value: &str) -> bool {
    let items: Vec<Option<f64>> = value.split(',').map(seconds).collect();
    if items.iter().any(|x| !x.is_some_and(f64::is_finite)) {
        return true;
    }
    let range = opt
        .range
        .as_ref()
        .and_then(|(a, b)| Some((seconds(a)?, seconds(b)?)));
    match (range, items.as_slice()) {
        (Some((lo, hi)), [Some(x)]) => !(lo..=hi).contains(x),
        (Some(_), _) => true,
        (None, _) => items.iter().flatten().any(|x| x.abs() >= 1e100),
    }
}

/// What is wrong with `run` of `args` (None: it passed): a value that must be refused is
/// refused (exit 1 or 2) within the deadline by a message naming the option — by the parser
/// with the range and the value when it is a number outside the option's stated range; any
/// other value ends with 0, 1 or 2 (3: `cdpr preflight`'s violation) (or is still running cleanly at `ACCEPTED_DEADLINE`) and is
/// not refused with a range it lies in; never a panic.
fn verdict(opt: &Opt, value: &str, args: &[String], refuse: bool, run: &Run) -> Option<String> {
    let shown = || {
        format!(
            "cdpr {} → exit {:?} in {:.1} s: {}",
            args.join(" "),
            run.code,
            run.elapsed.as_secs_f64(),
            run.stderr.lines().take(3).collect::<Vec<_>>().join(" | ")
        )
    };
    if run.stderr.contains("panicked") || run.stdout.contains("panicked") {
        return Some(format!("panic: {}", shown()));
    }
    if run.timed_out {
        return refuse.then(|| {
            format!(
                "hung: not refused, still running after {DEADLINE:?} (killed): {}",
                shown()
            )
        });
    }
    // `cdpr preflight` exits with 3 when a check is violated (a heavy --payload): a verdict.
    let verdict_status = run.code == Some(3) && args.first().is_some_and(|a| a == "preflight");
    if !matches!(run.code, Some(0..=2)) && !verdict_status {
        return Some(format!("bad exit: {}", shown()));
    }
    let says_range = RANGE_LEADS.iter().any(|lead| run.stderr.contains(lead))
        && run.stderr.contains(&format!("for '--{}", opt.long));
    if refuse {
        if run.code == Some(0) {
            return Some(format!("accepted: {}", shown()));
        }
        if !run.stderr.contains(&format!("--{}", opt.long)) {
            return Some(format!(
                "the message does not name --{}: {}",
                opt.long,
                shown()
            ));
        }
        // A number outside the stated range: the parser's refusal, with the range and the
        // value as given.
        let number = !value.contains(',') && value.trim().parse::<f64>().is_ok();
        if opt.range.is_some()
            && number
            && !(run.code == Some(2) && says_range && run.stderr.contains(&format!("got {value}")))
        {
            return Some(format!(
                "out of range but not refused with the range and `got {value}`: {}",
                shown()
            ));
        }
    } else if inside_stated_range(opt, value) && says_range {
        return Some(format!(
            "refused with its range although within it: {}",
            shown()
        ));
    }
    None
}

/// Whether the parser of `opt` takes `value` as within its stated range: a whole number for
/// a range of whole numbers, a number or duration otherwise.
fn inside_stated_range(opt: &Opt, value: &str) -> bool {
    let Some((a, b)) = &opt.range else {
        return false;
    };
    let (Some(lo), Some(hi)) = (seconds(a), seconds(b)) else {
        return false;
    };
    let x = if opt.whole {
        value.trim().parse::<u64>().ok().map(|n| n as f64)
    } else {
        seconds(value)
    };
    x.is_some_and(|x| x.is_finite() && (lo..=hi).contains(&x))
}

/// Runs `cases` on `threads` threads; the failures found.
fn sweep(cases: Vec<(Opt, String, Vec<String>)>, threads: usize) -> Vec<String> {
    let files = files();
    let queue = Mutex::new(cases.into_iter());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let next = queue.lock().expect("queue").next();
                    let Some((opt, value, args)) = next else {
                        break;
                    };
                    let refuse = must_refuse(&opt, &value);
                    let deadline = if refuse { DEADLINE } else { ACCEPTED_DEADLINE };
                    let run = bounded_for(&args, &files.dir, deadline);
                    if let Some(f) = verdict(&opt, &value, &args, refuse, &run) {
                        failures.lock().expect("failures").push(f);
                    }
                }
            });
        }
    });
    failures.into_inner().expect("failures")
}

/// Twice the cores (at least 4, at most 8): a run spends as long starting and waiting on its
/// pipes as computing.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| 2 * n.get())
        .unwrap_or(4)
        .clamp(4, 8)
}

#[test]
fn the_catalogue_covers_every_subcommand_with_numbers() {
    let opts = catalogue();
    let files = files();
    for o in opts {
        eprintln!("{} --{} {:?}", o.path.join(" "), o.long, o.range);
    }
    let mut missing: Vec<String> = opts
        .iter()
        .filter(|o| base(&o.path, files).is_none())
        .map(|o| o.path.join(" "))
        .collect();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "add a base command line to base() for: {missing:?}"
    );
    // The option parser found the options known to take numbers (a guard against a help format change
    // that would make the sweep test nothing).
    for (cmd, long) in [
        ("simulate", "dt"),
        ("simulate", "speed"),
        ("trajectory", "dt"),
        ("trajectory", "offset"),
        ("ik", "pose"),
        ("fk", "lengths"),
        ("tensions", "f-min"),
        ("workspace", "grid"),
        ("plc", "duration"),
        ("plc", "task"),
        ("shadow", "duration"),
        ("shadow", "cycle"),
        ("surrogate fit", "max-delay"),
        ("surrogate validate", "dt"),
        ("compare", "max-lag"),
    ] {
        assert!(
            opts.iter()
                .any(|o| o.path.join(" ") == cmd && o.long == long),
            "--{long} of {cmd} not found in {:?}",
            opts.iter()
                .map(|o| format!("{} --{}", o.path.join(" "), o.long))
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn every_typed_option_survives_hostile_values() {
    let files = files();
    let mut cases = Vec::new();
    for opt in catalogue() {
        let mut values: Vec<String> = HOSTILE.iter().map(|v| v.to_string()).collect();
        values.extend(range_values(&opt.range));
        // A hostile item inside the base's own list (a pose, lengths).
        if let Some(v) = base_value(opt, files)
            && v.contains(',')
        {
            for bad in ["nan", "1e300", "1e"] {
                let mut items: Vec<&str> = v.split(',').collect();
                items[0] = bad;
                values.push(items.join(","));
                let last = items.len() - 1;
                items[0] = v.split(',').next().unwrap_or("0");
                items[last] = bad;
                values.push(items.join(","));
            }
        }
        for value in values {
            if let Some(args) = command(opt, &value, files) {
                cases.push((opt.clone(), value, args));
            }
        }
    }
    // An option (its flag and stated range) that many commands take refuses a value outside
    // its range by the same parser on each (the one spec in core): one command refuses it.
    let mut refused = std::collections::HashSet::new();
    let before = cases.len();
    cases.retain(|(opt, value, _)| {
        !must_refuse(opt, value)
            || refused.insert((opt.long.clone(), opt.range.clone(), value.clone()))
    });
    let n = cases.len();
    eprintln!("{before} cases, {n} after one refusal per option and value");
    let start = Instant::now();
    let failures = sweep(cases, threads());
    eprintln!(
        "{n} runs in {:.1} s, {} failures",
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {n} runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A number as people (and fuzzers) write one: any f64 in two notations, a whole number of
/// any size, a value within the option's range, a malformed literal.
fn number(range: Option<(f64, f64)>) -> BoxedStrategy<String> {
    let (lo, hi) = range.unwrap_or((-1e3, 1e3));
    prop_oneof![
        any::<f64>().prop_map(|x| format!("{x}")),
        any::<f64>().prop_map(|x| format!("{x:e}")),
        any::<i128>().prop_map(|x| x.to_string()),
        (lo..=hi).prop_map(|x| format!("{x}")),
        "[-+]?[0-9]{0,4}(\\.[0-9]{0,3})?([eE][-+]?[0-9]{0,4})?(ms|s|us|ns)?",
        proptest::sample::select(HOSTILE).prop_map(str::to_string),
    ]
    .boxed()
}

#[test]
fn random_values_on_every_subcommand_are_refused_or_run_cleanly() {
    let files = files();
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let mut by_path: BTreeMap<Vec<String>, Vec<Opt>> = BTreeMap::new();
    for o in catalogue() {
        by_path.entry(o.path.clone()).or_default().push(o.clone());
    }
    // Draw all the cases first (proptest's generator, fixed seed per subcommand so that a
    // failure reproduces), then run them on all threads.
    let mut all = Vec::new();
    for (path, opts) in by_path {
        let mut runner = TestRunner::new_with_rng(
            Config {
                cases,
                ..Config::default()
            },
            proptest::test_runner::TestRng::deterministic_rng(
                proptest::test_runner::RngAlgorithm::ChaCha,
            ),
        );
        let strategy = (0..opts.len()).prop_flat_map(|k| {
            let opt = opts[k].clone();
            let range = opt
                .range
                .as_ref()
                .and_then(|(a, b)| Some((a.parse::<f64>().ok()?, b.parse::<f64>().ok()?)));
            let list = base_value(&opt, files).filter(|v| v.contains(','));
            let items = list.as_ref().map_or(1, |v| v.split(',').count());
            (
                Just(opt),
                number(range),
                0..items.max(1),
                proptest::bool::weighted(0.7),
                Just(list),
            )
                .prop_map(|(opt, value, at, in_list, list)| {
                    let value = match (list, in_list) {
                        (Some(list), true) => {
                            let mut items: Vec<String> =
                                list.split(',').map(str::to_string).collect();
                            items[at] = value;
                            items.join(",")
                        }
                        _ => value,
                    };
                    (opt, value)
                })
        });
        for _ in 0..cases {
            let tree = strategy
                .new_tree(&mut runner)
                .map_err(|e| TestCaseError::fail(e.to_string()))
                .expect("a case");
            let (opt, value) = tree.current();
            let _ = path.len();
            if let Some(args) = command(&opt, &value, files) {
                all.push((opt, value, args));
            }
        }
    }
    let n = all.len();
    let failures = sweep(all, threads());
    assert!(
        failures.is_empty(),
        "{} of {n} random runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Values the sweep once found accepted, and list items it does not try, kept as a fixed
/// list: (subcommand, option, value); each must be refused naming the option.
#[test]
fn values_the_sweep_once_found_accepted_are_refused_naming_the_option() {
    let files = files();
    let cases: &[(&str, &str, &str)] = &[
        // An absurd mass went through to the physics: "no equilibrium: every cable is
        // slack", "the platform left the robot's frame", NaN residuals.
        ("tensions", "payload", "1e300"),
        ("tensions", "payload", "1e-300"),
        ("equilibrium", "payload", "1e308"),
        ("simulate", "payload", "1e-300"),
        ("workspace", "payload", "1e9"),
        // Periods each within range but not a whole multiple: the message named neither.
        ("plc", "task", "100µs"),
        ("plc", "nc", "1s"),
        // Too few lengths: "1 lengths given but the robot has 4 cables" named no option.
        ("fk", "lengths", "1"),
        // One huge item of a list that the parser takes (checked against the robot later).
        ("trajectory", "offset", "1e300,0,0"),
        ("workspace", "region", "0,0,0,1e300,1,1"),
    ];
    let mut failures = Vec::new();
    for (path, long, value) in cases {
        let opt = Opt {
            path: path.split(' ').map(str::to_string).collect(),
            long: long.to_string(),
            range: None,
            whole: false,
        };
        let args = command(&opt, value, files).expect("a base for the regression");
        let run = bounded(&args, &files.dir);
        failures.extend(verdict(&opt, value, &args, true, &run));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[cfg(not(feature = "viewer"))]
#[test]
fn view_without_the_viewer_says_how_whatever_the_numbers() {
    let dir = &files().dir;
    for value in ["1e300", "nan", "-1", "0", ""] {
        for long in ["speed", "duration", "seek", "time-scale", "frames"] {
            let args = vec!["view".to_string(), format!("--{long}={value}")];
            let run = bounded(&args, dir);
            assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
            assert!(
                run.stderr.contains("without the 3D viewer"),
                "{args:?}: {}",
                run.stderr
            );
        }
    }
}
