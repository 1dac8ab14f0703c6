//! `cdpr check` on good, bad and hostile robot files: one clear error naming the file, line
//! and field; exit code 0, 1 or 2, never a panic or an abort; bounded time and memory.

use crate::common;

use crate::common::{cdpr, scratch, stderr, stdout};
use std::path::Path;

/// The text of the shipped silva4 robot file.
fn silva4() -> &'static str {
    cdpr_core::fixtures::robot_text("silva4")
}

/// Runs `cdpr ARGS` under a 3 GB address-space limit, failed as hung if still running at the
/// deadline: (exit code, stderr).
fn bounded(args: &[&str]) -> (Option<i32>, String) {
    let run = common::capped(args);
    assert!(
        !run.timed_out,
        "hung: cdpr {args:?} still running after {:?}, killed",
        common::DEADLINE
    );
    (run.code, run.stderr)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

fn edited(from: &str, to: &str) -> String {
    assert!(silva4().contains(from), "{from}");
    silva4().replacen(from, to, 1)
}

#[test]
fn check_refuses_each_bad_file_with_file_line_and_field() {
    let dir = scratch("robot_files_bad");
    let cases = [
        (
            "anchor4.toml",
            edited("[ 0.445, -0.760, 1.450],", "[ 0.445, -0.760, 1.450, 7.0],"),
            ":27: cables.frame_anchors[1]: needs 3 numbers",
        ),
        (
            "zero.toml",
            edited("[-0.445, -0.760, 1.450],", "[-0.029, -0.0515, 0.5],"),
            ":26: cables.frame_anchors[0]: cable 1 (cable1) has zero length",
        ),
        (
            "home.toml",
            edited("home = [0.0, 0.0, 0.5]", "home = [1e300, 0.0, 0.5]"),
            ":12: home: x must be within",
        ),
        (
            "inertia.toml",
            edited(
                "inertia = [0.00055, 0.00179, 0.00134]",
                "inertia = [1e300, 1e300, 1e300]",
            ),
            ":17: platform.inertia:",
        ),
        (
            "floor.toml",
            edited("[ 0.445, -0.760, 1.450],", "[ 0.445, -0.760, -0.5],"),
            ":27: cables.frame_anchors[1]: frame anchor of cable 2 (cable2) at (0.445, -0.76, -0.5) m is below the floor",
        ),
        (
            "box.toml",
            edited(
                "max = [ 0.445,  0.760, 1.450]",
                "max = [ 0.445,  0.760, -1.450]",
            ),
            ": frame.max: z max -1.45 is below min 0",
        ),
        (
            "plc.toml",
            format!("{}\n[plc]\ncommanded_lengths = \"\"\n", silva4()),
            ": plc.commanded_lengths: symbol name \"\" is empty",
        ),
        (
            "outside.toml",
            edited("[ 0.445, -0.760, 1.450],", "[ 0.945, -0.760, 1.450],"),
            ":27: cables.frame_anchors[1]: frame anchor of cable 2 (cable2) at (0.945, -0.76, 1.45) m is outside the [frame] box",
        ),
        (
            "typo.toml",
            edited("damping = 50.0", "dampng = 50.0"),
            ":38: cables.dampng: unknown field `dampng`",
        ),
        (
            "legs.toml",
            format!(
                "{}\n[cables]\nframe_anchors = [[0, 0, 1]]\nplatform_anchors = [[0, 0, 0]]\ndamping = 1.0\n",
                cdpr_core::fixtures::robot_text("keops")
            ),
            ": cables: a linear_delta robot takes no [cables]",
        ),
    ];
    for (name, text, needle) in cases {
        let path = write(&dir, name, &text);
        let o = cdpr(&["check", &path]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with(&format!("error: {path}")),
            "{name}: {first}"
        );
        assert!(first.contains(needle), "{name}: no `{needle}` in {first}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
    }
}

#[test]
fn messages_have_no_bogus_line_or_repeated_cause() {
    let dir = scratch("robot_files_messages");
    let start = silva4().find("[platform]").expect("platform");
    let end = silva4().find("[cables]").expect("cables");
    let path = write(
        &dir,
        "noplatform.toml",
        &format!("{}{}", &silva4()[..start], &silva4()[end..]),
    );
    let o = cdpr(&["check", &path]);
    assert_eq!(
        stderr(&o).lines().next(),
        Some(format!("error: {path}: missing section [platform] (every robot needs its mass, inertia and size)").as_str())
    );
    // A directory: the OS error once.
    let d = dir.display().to_string();
    let o = cdpr(&["check", &d]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).matches("os error").count(), 1, "{}", stderr(&o));
}

#[test]
fn check_of_dev_zero_is_refused_quickly_with_bounded_memory() {
    let (code, err) = bounded(&["check", "/dev/zero"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("/dev/zero: is larger than 16777216 bytes"),
        "{err}"
    );
}

#[test]
fn the_shipped_robots_still_pass() {
    for name in [
        "uvigo8",
        "uvigo8-pulleys",
        "silva4",
        "caroca",
        "caroca-pulleys",
        "rssu2",
        "keops",
    ] {
        let path = format!("robots/{name}.toml");
        let o = cdpr(&["check", &path]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        // The pulley table only for the robots with pulleys.
        let pulleys = stdout(&o).contains("pulley radius [m]");
        assert_eq!(
            pulleys,
            name.ends_with("-pulleys"),
            "{name}: {}",
            stdout(&o)
        );
    }
    let o = cdpr(&["check", "robots/uvigo8-pulleys.toml"]);
    let text = stdout(&o);
    let row = text
        .lines()
        .find(|l| l.starts_with("upper0") && l.contains("0.025"))
        .unwrap_or_else(|| panic!("no pulley row for upper0 in {text}"));
    assert!(row.contains("0.05") && row.contains("0.0025"), "{row}");
}

/// A small deterministic generator (xorshift): the CLI runs are few and must be reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 1) as usize
    }
}

#[test]
fn check_on_mutated_files_exits_cleanly_in_bounded_time_and_memory() {
    let dir = scratch("robot_files_mutated");
    let robots = [
        cdpr_core::fixtures::robot_text("uvigo8"),
        cdpr_core::fixtures::robot_text("silva4"),
        cdpr_core::fixtures::robot_text("caroca"),
        cdpr_core::fixtures::robot_text("keops"),
        cdpr_core::fixtures::robot_text("rssu2"),
    ];
    let hostile = common::HOSTILE_VALUES;
    let mut rng = Rng(0x5eed_1515);
    for case in 0..20 {
        let text = robots[case % robots.len()];
        let lines: Vec<&str> = text.lines().collect();
        let mutated = match rng.next() % 4 {
            0 => {
                // Replace the n-th digit run by a hostile value.
                let starts: Vec<usize> = text
                    .char_indices()
                    .filter(|(i, c)| {
                        c.is_ascii_digit()
                            && (*i == 0
                                || !text.as_bytes()[i - 1].is_ascii_alphanumeric()
                                    && text.as_bytes()[i - 1] != b'.')
                    })
                    .map(|(i, _)| i)
                    .collect();
                let s = starts[rng.next() % starts.len()];
                let e = s + text[s..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
                    .unwrap_or(text.len() - s);
                format!(
                    "{}{}{}",
                    &text[..s],
                    hostile[rng.next() % hostile.len()],
                    &text[e..]
                )
            }
            1 => {
                let k = rng.next() % lines.len();
                lines
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != k)
                    .map(|(_, l)| format!("{l}\n"))
                    .collect()
            }
            2 => {
                let mut at = rng.next() % text.len();
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text[..at].to_string()
            }
            _ => {
                let k = rng.next() % lines.len();
                let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                out.insert(k, "stray = 1".into());
                out.join("\n")
            }
        };
        let path = write(&dir, &format!("case{case}.toml"), &mutated);
        let (code, err) = bounded(&["check", &path]);
        assert!(
            matches!(code, Some(0..=2)),
            "case {case}: exit {code:?}: {err}\n{mutated}"
        );
        if code != Some(0) {
            assert!(
                err.starts_with(&format!("error: {path}")),
                "case {case}: {err}"
            );
        }
    }
}

#[test]
fn check_validates_and_names_the_culprit() {
    let o = cdpr(&["check", "robots/uvigo8.toml"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("uvigo8: OK") && stdout(&o).contains("lower3"));
    let dir = scratch("check_bad");
    let bad = dir.join("bad.toml");
    let text = cdpr_core::fixtures::edited(
        &std::fs::read_to_string("robots/uvigo8.toml").unwrap(),
        "mass = 1.0 ",
        "mass = -1.0 ",
    );
    std::fs::write(&bad, &text).unwrap();
    let o = cdpr(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let line = text
        .lines()
        .position(|l| l.starts_with("mass = -1.0"))
        .unwrap()
        + 1;
    let err = stderr(&o);
    assert!(
        err.contains(&format!("bad.toml:{line}: platform.mass: must be positive")),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

/// uvigo8-pulleys' text with `from` replaced by `to` (once), and the 1-based line where the
/// replacement starts.
fn pulleys_edited(from: &str, to: &str) -> (String, usize) {
    let text = cdpr_core::fixtures::robot_text("uvigo8-pulleys");
    let at = text.find(from).unwrap_or_else(|| panic!("no `{from}`"));
    let line = text[..at].matches('\n').count() + 1;
    (text.replacen(from, to, 1), line)
}

#[test]
fn bad_pulley_and_obstacle_keys_are_refused_with_file_line_and_field() {
    let dir = scratch("robot_files_pulleys");
    let radius = "pulley_radius = 0.025";
    let axis = "[0.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.0, 0.0, -1.0],\n";
    let mass = "cable_mass_per_length = 0.0025";
    let (_, radius_line) = pulleys_edited(radius, radius);
    let (_, axis_line) = pulleys_edited(axis, axis);
    let (_, mass_line) = pulleys_edited(mass, mass);
    let axis_block = "pulley_axis = [                 # unit swivel axes, world frame: the cable comes up each pillar\n  [0.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.0, 0.0, -1.0],\n  [0.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.0, 0.0, -1.0],\n]\n";
    let text = cdpr_core::fixtures::robot_text("uvigo8-pulleys");
    // An [[obstacles]] table appended to the file, and the line of its `key`.
    let obstacle = |body: &str, key: &str| -> (String, usize) {
        let full = format!("{text}\n[[obstacles]]\n{body}");
        let table = full.find("[[obstacles]]").expect("appended");
        let at = table + full[table..].find(key).expect("key in body");
        let line = full[..at].matches('\n').count() + 1;
        (full, line)
    };
    let (pillar, pillar_line) = obstacle(
        "name = \"pillar\"\nshape = \"cylinder\"\ncenter = [1.32545, 1.09656, 0.0]\naxis = [0.0, 0.0, 1.0]\nradius = 0.05\nheight = 0.9\n",
        "name",
    );
    let (cone, cone_line) = obstacle(
        "name = \"cone\"\nshape = \"cone\"\ncenter = [0.0, 0.0, 0.0]\n",
        "shape",
    );
    let (flat, flat_line) = obstacle(
        "name = \"table\"\nshape = \"box\"\nmin = [0.5, 0.5, 0.0]\nmax = [0.8, 0.8, 0.0]\n",
        "max",
    );
    let cases = [
        (
            "negative_radius.toml",
            pulleys_edited(radius, "pulley_radius = -0.025").0,
            format!(
                ":{radius_line}: cables.pulley_radius: cable 1 (upper0) must be ≥ 0 m (0 = no pulley), got -0.025"
            ),
        ),
        (
            "long_axis.toml",
            pulleys_edited(axis, &axis.replacen("-1.0", "-2.0", 1)).0,
            format!(
                ":{axis_line}: cables.pulley_axis[0]: cable 1 (upper0): the swivel axis must be a unit vector, its length is 2"
            ),
        ),
        (
            "zero_axis.toml",
            pulleys_edited(axis, &axis.replacen("-1.0", "0.0", 1)).0,
            format!(
                ":{axis_line}: cables.pulley_axis[0]: cable 1 (upper0): the swivel axis has zero length"
            ),
        ),
        (
            "negative_mass.toml",
            pulleys_edited(mass, "cable_mass_per_length = -0.0025").0,
            format!(
                ":{mass_line}: cables.cable_mass_per_length: cable 1 (upper0) must be ≥ 0 kg/m, got -0.0025"
            ),
        ),
        (
            "no_axis.toml",
            pulleys_edited(axis_block, "").0,
            format!(":{radius_line}: cables.pulley_axis: missing: a pulley needs its swivel axis"),
        ),
        (
            "pillar.toml",
            pillar,
            format!(
                ":{pillar_line}: obstacles[0]: cylinder `pillar` contains the frame anchor of cable 1 (upper0) at (1.32545, 1.09656, 0.825) m"
            ),
        ),
        (
            "cone.toml",
            cone,
            format!(
                ":{cone_line}: obstacles[0].shape: unknown shape `cone`: use box, cylinder, sphere or plane"
            ),
        ),
        (
            "flat_box.toml",
            flat,
            format!(":{flat_line}: obstacles[0].max: must exceed `min` in every axis; z is 0 ≤ 0"),
        ),
    ];
    for (name, text, needle) in cases {
        let path = write(&dir, name, &text);
        let o = cdpr(&["check", &path]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with(&format!("error: {path}")),
            "{name}: {first}"
        );
        assert!(first.contains(&needle), "{name}: no `{needle}` in {first}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
    }
}

/// silva4 with `n` cables: distinct frame anchors on a grid, every platform anchor at the
/// origin (about 19 bytes a cable: 750 000 fit under the 16 MiB file cap).
fn many_cables(n: usize) -> String {
    let frame: Vec<String> = (0..n)
        .map(|k| format!("[{},{},1]", k % 1000, k / 1000))
        .collect();
    let platform = vec!["[0,0,0]"; n].join(",");
    let start = silva4().find("[cables]").expect("[cables]");
    let end = start + silva4()[start..].find("\n[").expect("the next table");
    format!(
        "{}[cables]\nframe_anchors = [{}]\nplatform_anchors = [{platform}]\nstiffness = 2e4\n\
         damping = 50.0\n{}",
        &silva4()[..start],
        frame.join(","),
        &silva4()[end..]
    )
}

#[test]
fn a_file_of_750_000_cables_is_refused_before_it_is_parsed() {
    // It was accepted after 35.6 s and 2.06 GB (release build); its replay refused after 9 s
    // and 1 GB. Under the 3 GB address-space cap of the debug binary (which maps ~1 GB before
    // it allocates) and the 20 s deadline, both are refused, naming the file, the count and
    // the limit.
    let dir = scratch("robot_files_many");
    let text = many_cables(750_000);
    assert!(text.len() as u64 > 14_000_000 && (text.len() as u64) < 16 << 20);
    let huge = write(&dir, "huge.toml", &text);
    let r = common::refused(
        &["check", &huge],
        1,
        "cables.frame_anchors: 750000 cables, more than the 1024",
    );
    assert!(r.stderr.contains("huge.toml:"), "{}", r.stderr);
    // A record whose sidecar names it: refused the same way, before the replay opens.
    #[cfg(feature = "viewer")]
    {
        let run = dir.join("run.csv");
        let o = cdpr(&[
            "simulate",
            "--robot",
            "silva4",
            "--trajectory",
            "pickplace",
            "--out",
            &run.display().to_string(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let sidecar = cdpr_core::recording::sidecar::path_of(&run);
        let meta = std::fs::read_to_string(&sidecar).expect("sidecar");
        let named = meta.replace("robot = \"silva4\"", &format!("robot = {huge:?}"));
        assert_ne!(named, meta, "{meta}");
        std::fs::write(&sidecar, named).expect("sidecar");
        common::refused(
            &["view", "--replay", &run.display().to_string()],
            1,
            "750000 cables, more than the 1024",
        );
    }
}
