//! `cdpr test`: the shipped suite passes and its JUnit file reads back in junitparser (an
//! independent JUnit reader); a violated bound fails with the value and the time that pandas
//! finds in the run's record; lockstep verdicts and records are the same on every run and for
//! any number of jobs; bad suites are refused at file:line: field; a scenario against `cdpr plc`
//! over ADS reads the PLC's symbols, a symbol the PLC lacks is refused at its condition's line,
//! and a PLC killed mid-run is an error, never a pass.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

const SHIPPED: &str = "robots/suites/shipped.toml";

fn test(args: &[&str]) -> Output {
    let mut all = vec!["test"];
    all.extend_from_slice(args);
    cdpr(&all)
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// The JUnit file read by junitparser, with each record's figures computed by pandas
/// (`tests/python/check_junit.py`); None when the tests' Python lacks them (skipped, or a
/// failure where CI requires it).
fn junit(junit: &Path) -> Option<Value> {
    let python = python_with("junitparser, pandas")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_junit.py");
    let o = std::process::Command::new(python)
        .arg(script)
        .arg(junit)
        .output()
        .expect("python runs");
    assert!(o.status.success(), "check_junit.py: {}", stderr(&o));
    Some(serde_json::from_slice(&o.stdout).expect("one JSON object"))
}

fn cases(suite: &Value) -> Vec<(String, String, String)> {
    suite["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_string(),
                c["result"].as_str().unwrap_or_default().to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The number after `prefix` in `text` (`"11.56 N"` after `"tension_max: "`).
fn number_after(text: &str, prefix: &str) -> f64 {
    let rest = &text[text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} in {text:?}"))
        + prefix.len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("a number in {rest:?}"))
}

#[test]
fn the_shipped_suite_passes_and_junitparser_reads_it_back() {
    let dir = scratch("test_suites_shipped");
    let (xml, report, records) = (
        dir.join("results.xml"),
        dir.join("report"),
        dir.join("records"),
    );
    let o = test(&[
        SHIPPED,
        "--junit",
        &path(&xml),
        "--report",
        &path(&report),
        "--records",
        &path(&records),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("4 scenarios: 4 passed, 0 failed, 0 errors"),
        "{out}"
    );
    assert!(!out.contains("VIOLATED"), "{out}");
    // One progress line per scenario on stderr.
    assert_eq!(stderr(&o).matches("] passed ").count(), 4, "{}", stderr(&o));
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    assert!(
        md.contains("| seed000 at a 10 ms task | passed | 12/12 |"),
        "{md}"
    );
    let Some(j) = junit(&xml) else { return };
    // 1 run case per scenario, + its expectations and conditions: 12, 6, 4 and 4.
    assert_eq!(j["tests"], 30);
    assert_eq!(
        (j["failures"].as_u64(), j["errors"].as_u64()),
        (Some(0), Some(0))
    );
    let suites = j["suites"].as_array().expect("suites");
    let names: Vec<&str> = suites
        .iter()
        .map(|s| s["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        [
            "seed000 at a 10 ms task",
            "seed000 at a 1 ms task",
            "seed000, elastic cables",
            "silva4 pick and place"
        ]
    );
    for s in suites {
        let record = PathBuf::from(s["attachment"].as_str().expect("attachment"));
        assert!(record.is_absolute() && record.exists(), "{record:?}");
        assert!(record.starts_with(std::path::absolute(&records).unwrap()));
        let c = cases(s);
        assert_eq!(c[0].0, "run");
        assert!(c.iter().all(|(_, r, _)| r == "passed"), "{c:?}");
        assert_eq!(
            s["cases"][0]["classname"],
            format!("shipped.{}", s["name"].as_str().unwrap())
        );
    }
    // The 10 ms scenario's bounds hold by the record's own numbers (pandas).
    let f = &suites[0]["record_figures"];
    assert!(f["max_error"].as_f64().unwrap() <= 0.005, "{f}");
    assert!(f["max_tension"].as_f64().unwrap() <= 100.0, "{f}");
    assert!(f["first_slack_t"].is_null(), "{f}");
    // A row per 1 ms step over the hold (0.2 s), the trajectory as `cdpr trajectory` writes
    // it, and the 0.5 s of settling.
    let csv = dir.join("seed000.csv");
    let o = cdpr(&[
        "trajectory",
        "--robot",
        "uvigo8",
        "--name",
        "seed000",
        "--speed",
        "0.4",
        "--profile",
        "scurve",
        "--out",
        &path(&csv),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).expect("trajectory");
    let last: f64 = text
        .lines()
        .last()
        .and_then(|l| l.split(',').next())
        .unwrap()
        .parse()
        .unwrap();
    let rows = f["rows"].as_f64().unwrap();
    assert!(
        (rows - (0.2 + last + 0.5) * 1e3).abs() <= 5.0,
        "{f} vs {last} s"
    );
    let cases0: Vec<String> = cases(&suites[0]).into_iter().map(|c| c.0).collect();
    assert!(cases0.contains(&"GVL_Shadow.nCycle reaches 100 within 1.5 s".to_string()));
}

/// A suite that fails: seed 000's trapezoid at 0.4 m/s on elastic cables (its corners' jerk
/// slackens cable 1), held to a 5 N tension bound, and a counter that cannot reach 10⁶ in 2 s.
const FAILING: &str = r#"
robot = "uvigo8"
trajectory = "seed000"
speed = 0.4
cycle = "lockstep"
model = "elastic"

[[scenario]]
name = "trapezoid on elastic cables"

[scenario.expect]
tension_max = 5.0
no_slack = true
reaction_max = 1

[[scenario]]
name = "a counter that cannot get there"
duration = 2.0

[[scenario.symbol]]
symbol = "GVL_Shadow.nCycle"
is = "reaches"
value = 1000000
within = 1.5

[[scenario.symbol]]
symbol = "GVL_Shadow.bMotionEnable"
is = "=="
value = true
after = 0.3
"#;

fn failing_suite(dir: &Path) -> PathBuf {
    let suite = dir.join("failing.toml");
    std::fs::write(&suite, FAILING).expect("suite");
    suite
}

#[test]
fn a_violated_bound_fails_with_the_value_and_time_the_record_shows() {
    let dir = scratch("test_suites_failing");
    let suite = failing_suite(&dir);
    let (xml, report) = (dir.join("results.xml"), dir.join("report"));
    let o = test(&[
        &path(&suite),
        "--junit",
        &path(&xml),
        "--report",
        &path(&report),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("2 scenarios: 0 passed, 2 failed, 0 errors"),
        "{out}"
    );
    // Without --records, beside the report.
    assert!(
        report
            .join("records/001-trapezoid-on-elastic-cables.csv")
            .exists()
    );
    // The Markdown report: each failure over time with its plot, the plot's labels readable.
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    assert!(md.contains("| tension_max | **VIOLATED** |"), "{md}");
    assert!(
        md.contains("| GVL_Shadow.bMotionEnable == true after 0.3 s | held |"),
        "{md}"
    );
    let plots: Vec<&str> = md
        .lines()
        .filter_map(|l| l.strip_prefix("![").and_then(|l| l.split("](").nth(1)))
        .map(|l| l.trim_end_matches(')'))
        .collect();
    assert_eq!(plots.len(), 3, "tension_max, no_slack, the counter: {md}");
    for p in &plots {
        let texts = svg::readable(&report.join(p), 12.0);
        assert!(
            texts.iter().any(|t| t.contains("time [s]")),
            "{p}: {texts:?}"
        );
    }
    let Some(j) = junit(&xml) else { return };
    assert_eq!(
        (j["tests"].as_u64(), j["failures"].as_u64()),
        (Some(7), Some(3))
    );
    let trapezoid = &j["suites"][0];
    let f = &trapezoid["record_figures"];
    let c = cases(trapezoid);
    // tension_max: the largest tension of any cable in any row, when and which, as pandas
    // reads the record.
    let (_, result, message) = &c[1];
    assert_eq!(
        (c[1].0.as_str(), result.as_str()),
        ("tension_max", "failure")
    );
    let measured = number_after(message, "tension_max: ");
    assert!(
        (measured - f["max_tension"].as_f64().unwrap()).abs() < 0.005,
        "{message} {f}"
    );
    assert!(
        message.contains(&format!("(cable {})", f["max_tension_cable"])),
        "{message} {f}"
    );
    let at = number_after(message, "at t = ");
    assert!(
        (at - f["max_tension_t"].as_f64().unwrap()).abs() < 5e-4,
        "{message} {f}"
    );
    assert!(message.contains("(bound ≤ 5.00 N)"), "{message}");
    // no_slack: the first row with a cable at or below 1 mN.
    let (_, result, message) = &c[2];
    assert_eq!((c[2].0.as_str(), result.as_str()), ("no_slack", "failure"));
    let at = number_after(message, "at t = ");
    assert!(
        (at - f["first_slack_t"].as_f64().unwrap()).abs() < 5e-4,
        "{message} {f}"
    );
    assert!(
        message.contains(&format!("cable {} slack", f["first_slack_cable"])),
        "{message} {f}"
    );
    assert_eq!(
        c[3],
        ("reaction_max".into(), "passed".into(), String::new())
    );
    // The counter: 2 s of a 10 ms task is 200 PLC cycles; the shadow's last exchange saw 200.
    let counter = cases(&j["suites"][1]);
    let (name, result, message) = &counter[1];
    assert_eq!(name, "GVL_Shadow.nCycle reaches 1000000 within 1.5 s");
    assert_eq!(result, "failure");
    assert!(
        message.contains(": 200 (never met in time; last) at t = 2.000 s"),
        "{message}"
    );
    assert_eq!(counter[2].1, "passed");
}

/// The JUnit file without what differs between runs: the wall times and the records' paths.
fn comparable(xml: &Path) -> String {
    let text = std::fs::read_to_string(xml).expect("junit");
    text.lines()
        .filter(|l| !l.contains("ATTACHMENT") && !l.contains("name=\"record\""))
        .map(|l| match l.find(" time=\"") {
            Some(k) => {
                let rest = &l[k + 7..];
                let end = rest.find('"').map_or(0, |e| e + 1);
                format!("{}{}", &l[..k], &rest[end..])
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn lockstep_verdicts_and_records_are_the_same_on_every_run_and_any_jobs() {
    let dir = scratch("test_suites_lockstep");
    let suite = failing_suite(&dir);
    let run = |name: &str, jobs: &str| {
        let (xml, records) = (dir.join(format!("{name}.xml")), dir.join(name));
        let o = test(&[
            &path(&suite),
            "--junit",
            &path(&xml),
            "--records",
            &path(&records),
            "--jobs",
            jobs,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
        let report: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        (comparable(&xml), records, report)
    };
    let (first, a, one) = run("one", "1");
    let (second, b, two) = run("two", "2");
    assert_eq!(first, second);
    // --json: the same verdicts, measured values and times; the shadow's statistics beside.
    let verdicts = |r: &Value| {
        r["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["verdicts"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(verdicts(&one), verdicts(&two));
    assert_eq!(
        (one["passed"].as_u64(), one["failed"].as_u64()),
        (Some(0), Some(2))
    );
    let s = &one["scenarios"][0];
    assert_eq!(s["verdicts"][0]["name"], "tension_max");
    assert_eq!(s["verdicts"][0]["passed"], false);
    assert_eq!(s["shadow"]["reaction_max_cycles"], 1);
    assert_eq!(s["shadow"]["gaps"], 0);
    for name in [
        "001-trapezoid-on-elastic-cables.csv",
        "002-a-counter-that-cannot-get-there.csv",
    ] {
        let (x, y) = (
            std::fs::read(a.join(name)).expect("record"),
            std::fs::read(b.join(name)).expect("record"),
        );
        assert!(x.len() > 10_000 && x == y, "{name} differs between runs");
    }
}

#[test]
fn bad_suites_are_refused_at_file_line_field() {
    let dir = scratch("test_suites_bad");
    let head = "robot = \"uvigo8\"\ntrajectory = \"seed000\"\n\n[[scenario]]\nname = \"a\"\n";
    let refused = |body: &str, needle: &str| {
        let suite = dir.join("bad.toml");
        std::fs::write(&suite, format!("{head}{body}")).expect("suite");
        let o = test(&[&path(&suite), "--records", &path(&dir.join("records"))]);
        assert_eq!(o.status.code(), Some(1), "{body}: {}", stdout(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("{}:{needle}", path(&suite))),
            "{body}\n{e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    };
    refused("sped = 0.4\n", "6: scenario \"a\".sped: ");
    refused(
        "[scenario.expect]\ntension_max = \"a lot\"\n",
        "7: scenario \"a\".expect.tension_max:",
    );
    let symbol = |s: &str, value: &str| {
        format!("[[scenario.symbol]]\nsymbol = \"{s}\"\nis = \"==\"\nvalue = {value}\n")
    };
    refused(
        &symbol("GVL.bDone", "true"),
        "6: scenario \"a\".symbol[1].symbol: the virtual PLC has no symbol `GVL.bDone`",
    );
    refused(
        &symbol("GVL_Shadow.nCycle", "true"),
        "6: scenario \"a\".symbol[1].symbol: `GVL_Shadow.nCycle` is UDINT: compare it with a number",
    );
    refused(
        &symbol("GVL_Shadow.aTcpPose", "1"),
        "6: scenario \"a\".symbol[1].symbol: `GVL_Shadow.aTcpPose` is ARRAY [1..6] OF LREAL",
    );
    refused(
        &symbol("GVL_Shadow.bMotionEnable", "1"),
        "6: scenario \"a\".symbol[1].symbol: `GVL_Shadow.bMotionEnable` is BOOL",
    );
    // A filter that matches nothing lists the names.
    let suite = dir.join("good.toml");
    std::fs::write(&suite, head).expect("suite");
    let o = test(&[&path(&suite), "--filter", "zzz"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no scenario's name contains `zzz`; its scenarios: a"));
    // Hostile files: an endless device, bytes that are not text, a directory — refused at
    // once, in bounded memory.
    crate::common::refused(
        &["test", "/dev/zero"],
        1,
        "/dev/zero: larger than 4 MiB: not a suite",
    );
    let noise = dir.join("noise.toml");
    std::fs::write(&noise, [0xffu8, 0xfe, 0x00, 0x80].repeat(500)).expect("noise");
    crate::common::refused(&["test", &path(&noise)], 1, "valid UTF-8");
    crate::common::refused(&["test", &path(&dir)], 1, &path(&dir));
}

/// A suite of one scenario against the PLC at `addr` for `duration` s, with `body` after.
fn address_suite(dir: &Path, addr: &str, duration: f64, body: &str) -> PathBuf {
    let suite = dir.join("plc.toml");
    std::fs::write(
        &suite,
        format!(
            "robot = \"uvigo8\"\n\n[[scenario]]\nname = \"over ADS\"\nplc = \"{addr}\"\n\
             ams_net_id = \"127.0.0.1.1.1\"\nduration = {duration}\nwrite = true\n{body}"
        ),
    )
    .expect("suite");
    suite
}

#[test]
fn a_scenario_against_cdpr_plc_reads_its_symbols_and_a_lost_plc_is_an_error() {
    let dir = scratch("test_suites_address");
    let (plc, addr) = plc(&[
        "--robot",
        "uvigo8",
        "--trajectory",
        "seed000",
        "--listen",
        "127.0.0.1:0",
    ]);
    let body = "[scenario.expect]\ngaps = 0\nreaction_max = 3\n\n[[scenario.symbol]]\n\
                symbol = \"GVL_Shadow.bMotionEnable\"\nis = \"==\"\nvalue = true\nwithin = 1.5\n\n\
                [[scenario.symbol]]\nsymbol = \"GVL_Shadow.nShadowCycle\"\nis = \">\"\nvalue = 0\n\
                after = 1.0\n";
    let suite = address_suite(&dir, &addr, 2.0, body);
    let xml = dir.join("plc.xml");
    let o = test(&[
        &path(&suite),
        "--junit",
        &path(&xml),
        "--records",
        &path(&dir),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("GVL_Shadow.bMotionEnable == true within 1.5 s  held"),
        "{out}"
    );
    // The shadow's echo is written back (write = true) and read by the condition.
    assert!(
        out.contains("GVL_Shadow.nShadowCycle > 0 after 1 s"),
        "{out}"
    );
    // A symbol the PLC lacks: refused at its condition's line, the PLC's answer named.
    let missing = "[[scenario.symbol]]\nsymbol = \"GVL.bDone\"\nis = \"==\"\nvalue = true\n";
    let suite = address_suite(&dir, &addr, 1.0, missing);
    let o = test(&[&path(&suite), "--records", &path(&dir)]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "{}:9: scenario \"over ADS\".symbol[1].symbol:",
            path(&suite)
        )),
        "{out}"
    );
    assert!(out.contains("GVL.bDone") && out.contains("0x710"), "{out}");
    // The PLC killed 1 s into a 4 s run: an error, with the record kept.
    let suite = address_suite(&dir, &addr, 4.0, "[scenario.expect]\ngaps = 10\n");
    let xml = dir.join("lost.xml");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args([
            "test",
            &path(&suite),
            "--junit",
            &path(&xml),
            "--records",
            &path(&dir),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cdpr test runs");
    std::thread::sleep(Duration::from_millis(1200));
    let mut plc = plc;
    plc.child.kill().expect("kill -9 the PLC");
    let _ = plc.child.wait();
    let o = {
        let status = child.wait().expect("exits");
        let mut out = String::new();
        use std::io::Read;
        let _ = child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out);
        (status, out)
    };
    assert_eq!(o.0.code(), Some(1), "{}", o.1);
    assert!(
        o.1.contains("ERROR") && o.1.contains("the PLC was lost"),
        "{}",
        o.1
    );
    assert!(o.1.contains("0 passed, 0 failed, 1 errors"), "{}", o.1);
    assert!(dir.join("001-over-ADS.csv").exists());
    let Some(j) = junit(&xml) else { return };
    assert_eq!(j["errors"], 1);
    let c = cases(&j["suites"][0]);
    assert_eq!((c[0].0.as_str(), c[0].1.as_str()), ("run", "error"));
    assert!(c[0].2.contains("the PLC was lost"), "{c:?}");
}

#[test]
fn a_scenario_over_secure_ads_takes_the_shadows_options_and_the_password_from_the_environment() {
    let dir = scratch("test_suites_secure");
    let (plc, addr) = plc(&[
        "--robot",
        "uvigo8",
        "--trajectory",
        "seed000",
        "--listen",
        "127.0.0.1:0",
        "--udp-listen",
        "off",
        "--duration",
        "30",
        "--secure",
        "psk",
        "--psk-identity",
        "lab",
        "--psk-password",
        "fromenv",
    ]);
    let body = "secure = \"psk\"\npsk_identity = \"lab\"\n\n[scenario.expect]\ngaps = 0\n\n\
                [[scenario.symbol]]\nsymbol = \"GVL_Shadow.bMotionEnable\"\nis = \"==\"\n\
                value = true\nwithin = 1.0\n";
    let suite = address_suite(&dir, &addr, 1.5, body);
    let run = |password: Option<&str>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cdpr"));
        c.args(["test", &path(&suite), "--records", &path(&dir)]);
        match password {
            Some(p) => c.env("CDPR_PSK_PASSWORD", p),
            None => c.env_remove("CDPR_PSK_PASSWORD"),
        };
        c.output().expect("cdpr test runs")
    };
    let o = run(Some("fromenv"));
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("GVL_Shadow.bMotionEnable == true within 1 s  held"));
    // Without the password the suite is refused at the mode's line, before anything runs.
    let o = run(None);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            "{}:9: scenario \"over ADS\".secure: `secure` psk needs",
            path(&suite)
        )),
        "{e}"
    );
    assert!(e.contains("$CDPR_PSK_PASSWORD"), "{e}");
    let mut plc = plc;
    let _ = plc.child.kill();
}

#[test]
fn interference_fails_at_the_first_exchange_whose_pose_the_record_shows_interfering() {
    use cdpr_core::fixtures::{column, csv_rows, num};
    let dir = scratch("test_suites_interference");
    let suite = dir.join("silva4.toml");
    std::fs::write(
        &suite,
        "robot = \"silva4-obstacle\"\ntrajectory = \"pickplace\"\nspeed = 0.5\ncycle = \"lockstep\"\n\
         [[scenario]]\nname = \"past the obstacle\"\n[scenario.expect]\nno_interference = true\n",
    )
    .expect("suite");
    let o = test(&[&path(&suite), "--records", &path(&dir), "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let v = &report["scenarios"][0]["verdicts"][0];
    assert_eq!(
        (v["name"].as_str(), v["passed"].as_bool()),
        (Some("no_interference"), Some(false))
    );
    let at = v["at"].as_f64().expect("when");
    let what = v["measured"].as_str().expect("measured");
    // The record's rows whose pose interferes, by core's check at the link's default
    // clearance. The shadow checks the pose of each exchange (every 10 ms PLC cycle, a row whose
    // time is a whole number of cycles): the verdict names the first such row; the first
    // interfering row of all lies within the PLC cycle before it.
    let robot = cdpr_core::robot::lookup::find("silva4-obstacle")
        .expect("robot")
        .robot;
    let text = std::fs::read(dir.join("001-past-the-obstacle.csv")).expect("record");
    let (header, rows) = csv_rows(text.as_slice());
    let (t, x) = (column(&header, "t"), column(&header, "x"));
    let interfering: Vec<f64> = rows
        .iter()
        .filter(|row| {
            let pose =
                cdpr_core::kinematics::Pose::from_array(std::array::from_fn(|k| num(row, x + k)));
            !cdpr_core::interference::check(
                &robot,
                &pose,
                cdpr_core::interference::DEFAULT_CLEARANCE,
            )
            .is_clear()
        })
        .map(|row| num(row, t))
        .collect();
    let on_exchange = |t: &&f64| ((**t / 0.01).round() * 0.01 - **t).abs() < 1e-9;
    let first_exchange = *interfering
        .iter()
        .find(on_exchange)
        .expect("an exchange interferes");
    assert!(
        (first_exchange - at).abs() < 1e-9,
        "first exchange at {first_exchange} s, verdict at {at} s"
    );
    assert!(
        interfering[0] > at - 0.01 && interfering[0] <= at,
        "{} vs {at}",
        interfering[0]
    );
    assert!(what.contains(", the first: "), "{what}");
}
