use super::*;
use crate::fixtures::{edited, robot, uvigo8};
use nalgebra::{Rotation3, Vector2};

#[test]
fn shipped_robots_parse() {
    for name in Robot::builtin_names() {
        let robot = robot(name);
        assert_eq!(robot.name, name);
        if robot.is_cable_robot() {
            assert!(robot.cable_count() >= robot.dof.count());
        }
    }
    assert_eq!(uvigo8().cable_count(), 8);
    assert_eq!(robot("silva4").dof, Dof::Three);
    assert_eq!(robot("caroca").platform.payload_options, vec![1.0, 15.0]);
}

#[test]
fn uvigo8_matches_seed_000_construction() {
    // Rebuild the anchors from the construction rule of the issue/paper and compare.
    let robot = uvigo8();
    let signs = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)];
    for (k, (sx, sy)) in signs.iter().enumerate() {
        let upper = &robot.cables[k];
        let lower = &robot.cables[4 + k];
        let rot = |deg: f64| Rotation3::from_axis_angle(&Vector3::z_axis(), deg.to_radians());
        let corner = Vector3::new(0.1 * sx, 0.1 * sy, 0.0);
        let bu = rot(90.0) * corner + Vector3::new(0.0, 0.0, 0.175);
        let bl = rot(-90.0) * corner + Vector3::new(0.0, 0.0, 0.330);
        assert!((upper.platform_anchor - bu).norm() < 1e-12, "upper{k}");
        assert!((lower.platform_anchor - bl).norm() < 1e-12, "lower{k}");
        assert_eq!(
            upper.frame_anchor,
            Vector3::new(1.32545 * sx, 1.09656 * sy, 0.825)
        );
        assert_eq!(
            lower.frame_anchor,
            Vector3::new(1.39656 * sx, 1.02545 * sy, 0.700)
        );
    }
    // Uniform-box inertia of a 1 kg 0.2×0.2×0.35 m box: (0.2² + 0.35²)/12 about x.
    let i = robot.platform.inertia;
    assert!((i[(0, 0)] - (0.04 + 0.1225) / 12.0).abs() < 1e-15);
    assert!((i[(2, 2)] - 0.08 / 12.0).abs() < 1e-15);
    let _ = Vector2::<f64>::zeros();
}

#[test]
fn silva4_matches_seed_003() {
    let robot = robot("silva4");
    let order = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
    assert_eq!(robot.cables.len(), order.len());
    for (c, (sx, sy)) in robot.cables.iter().zip(order) {
        assert_eq!(c.frame_anchor, Vector3::new(0.445 * sx, 0.760 * sy, 1.450));
        assert_eq!(
            c.platform_anchor,
            Vector3::new(0.029 * sx, 0.0515 * sy, 0.0)
        );
    }
    assert_eq!(robot.platform.mass, 0.602);
    assert_eq!(robot.winch.max_velocity, 3.0);
    assert_eq!(robot.winch.max_acceleration, 15.0);
    assert_eq!(robot.winch.max_jerk, 22.5);
}

#[test]
fn ea_stiffness_and_rest_length_are_consistent() {
    let cable = Cable {
        name: "c".into(),
        frame_anchor: Vector3::zeros(),
        platform_anchor: Vector3::zeros(),
        stiffness: Stiffness::Ea(1.0e5),
        damping: 0.0,
        pulley: None,
        mass_per_length: 0.0,
    };
    let (l, f) = (2.0, 50.0);
    let l0 = cable.rest_length_for(l, f);
    // f = EA (L − L0) / L0 must give back the tension.
    assert!((cable.stiffness_at(l0) * (l - l0) - f).abs() < 1e-9);
}

// ---------------------------------------------------------------- bad files

const GOOD: &str = include_str!("../../../../robots/silva4.toml");

fn bad(text: &str) -> RobotFileError {
    match parse_robot(text, "bad.toml") {
        Ok(_) => panic!("accepted a bad file:\n{text}"),
        Err(e) => e,
    }
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in text")
        + 1
}

fn assert_names(err: &RobotFileError, field: &str, line: usize, words: &str) {
    let msg = err.to_string();
    assert!(msg.starts_with("bad.toml:"), "no file in: {msg}");
    assert_eq!(err.field(), Some(field), "field in: {msg}");
    if line > 0 {
        assert!(
            msg.starts_with(&format!("bad.toml:{line}:")),
            "expected line {line} in: {msg}"
        );
    }
    assert!(msg.contains(words), "expected `{words}` in: {msg}");
}

#[test]
fn missing_field_is_named() {
    let text = edited(
        GOOD,
        "mass = 0.602                               # kg\n",
        "",
    );
    assert_names(&bad(&text), "platform.mass", 0, "missing field `mass`");
}

#[test]
fn wrong_type_is_named_with_line() {
    let text = edited(GOOD, "mass = 0.602", "mass = \"heavy\"");
    assert_names(
        &bad(&text),
        "platform.mass",
        line_of(&text, "heavy"),
        "invalid type",
    );
}

#[test]
fn nan_is_rejected() {
    let text = edited(GOOD, "max_jerk = 22.5", "max_jerk = nan");
    assert_names(
        &bad(&text),
        "winch.max_jerk",
        line_of(&text, "max_jerk"),
        "finite",
    );
    let text = edited(GOOD, "[ 0.445, -0.760, 1.450]", "[ 0.445, nan, 1.450]");
    assert_names(
        &bad(&text),
        "cables.frame_anchors[1]",
        line_of(&text, "nan"),
        "component y",
    );
}

#[test]
fn coinciding_cables_are_rejected() {
    let text = edited(
        &edited(GOOD, "[ 0.445, -0.760, 1.450],", "[-0.445, -0.760, 1.450],"),
        "[ 0.029, -0.0515, 0.0],",
        "[-0.029, -0.0515, 0.0],",
    );
    assert_names(
        &bad(&text),
        "cables.platform_anchors[1]",
        0,
        "coincides with cable 1",
    );
}

#[test]
fn non_positive_mass_and_stiffness_are_rejected() {
    let text = edited(GOOD, "mass = 0.602", "mass = 0.0");
    assert_names(
        &bad(&text),
        "platform.mass",
        line_of(&text, "mass = 0.0"),
        "positive",
    );
    let text = edited(GOOD, "stiffness = 20000.0", "stiffness = -5.0");
    assert_names(
        &bad(&text),
        "cables.stiffness",
        line_of(&text, "stiffness = -5"),
        "must be positive",
    );
    let text = edited(
        GOOD,
        "stiffness = 20000.0",
        "stiffness = [1.0, 2.0, 0.0, 4.0]",
    );
    assert_names(&bad(&text), "cables.stiffness", 0, "cable 3");
}

#[test]
fn cable_counts_must_agree() {
    let text = edited(GOOD, "  [-0.029,  0.0515, 0.0],\n", "");
    assert_names(
        &bad(&text),
        "cables.platform_anchors",
        0,
        "has 3 anchors but cables.frame_anchors has 4",
    );
    let text = edited(GOOD, "damping = 50.0", "damping = [1.0, 2.0]");
    assert_names(
        &bad(&text),
        "cables.damping",
        line_of(&text, "damping = [1.0"),
        "2 values but the file has 4",
    );
    let text = edited(GOOD, "\"cable4\"]", "]");
    assert_names(&bad(&text), "cables.names", 0, "3 names");
}

#[test]
fn unknown_field_and_syntax_errors_are_located() {
    let text = edited(GOOD, "max_jerk = 22.5", "max_jerk = 22.5\nmax_jerks = 1.0");
    assert_names(
        &bad(&text),
        "winch.max_jerks",
        line_of(&text, "max_jerks"),
        "unknown field",
    );
    let text = edited(GOOD, "dof = 3", "dof = = 3");
    let err = bad(&text);
    assert!(
        err.to_string()
            .starts_with(&format!("bad.toml:{}:", line_of(&text, "dof = ="))),
        "{err}"
    );
}

#[test]
fn inconsistent_values_are_rejected() {
    let text = edited(GOOD, "dof = 3", "dof = 4");
    assert_names(
        &bad(&text),
        "dof",
        line_of(&text, "dof = 4"),
        "3 (translation only) or 6",
    );
    let text = edited(GOOD, "max = 50.0 ", "max = 0.1 ");
    assert_names(&bad(&text), "tension.max", 0, "must exceed tension.min");
    let text = edited(
        GOOD,
        "inertia = [0.00055, 0.00179, 0.00134]",
        "inertia = [0.00055, 0.00379, 0.00134]",
    );
    assert_names(&bad(&text), "platform.inertia", 0, "triangle inequality");
    let text = edited(GOOD, "min = [-0.3, -0.5, 0.2]", "min = [0.5, -0.5, 0.2]");
    assert_names(&bad(&text), "workspace.max", 0, "below min");
}

#[test]
fn load_names_unknown_robots() {
    let msg = Robot::load("no/such/robot.toml").unwrap_err().to_string();
    assert_eq!(msg, "file not found: no/such/robot.toml");
    let msg = Robot::load("nosuchrobot").unwrap_err().to_string();
    assert!(
        msg.contains("no robot `nosuchrobot`")
            && msg.contains("(uvigo8, silva4, caroca, keops, rssu2, uvigo8-pulleys, caroca-pulleys, silva4-obstacle, uvigo8-drives)"),
        "{msg}"
    );
}

#[test]
fn with_geometry_replaces_the_anchors_and_keeps_the_rest() {
    let robot = uvigo8();
    let shift = Vector3::new(0.01, -0.02, 0.005);
    let frame: Vec<_> = robot.cables.iter().map(|c| c.frame_anchor * 1.5).collect();
    let platform: Vec<_> = robot
        .cables
        .iter()
        .map(|c| c.platform_anchor + shift)
        .collect();
    let moved = robot.with_geometry(&frame, &platform).expect("fits");
    for (k, c) in moved.cables.iter().enumerate() {
        assert_eq!(c.frame_anchor, frame[k]);
        assert_eq!(c.platform_anchor, platform[k]);
        assert_eq!(c.name, robot.cables[k].name);
        assert_eq!(c.stiffness, robot.cables[k].stiffness);
        assert!(moved.frame.contains(&c.frame_anchor), "frame box grew");
    }
    assert_eq!(moved.platform, robot.platform);
    assert_eq!(moved.winch, robot.winch);
    assert_eq!(moved.plc, robot.plc);
    // The frame box of uvigo8 reaches x = 1.45 m; anchors at 1.5 × 1.39656 m lie beyond it.
    assert!((moved.frame.max.x - 1.5 * 1.39656).abs() < 1e-12);
    // Same anchors: the same robot.
    let same: (Vec<_>, Vec<_>) = robot
        .cables
        .iter()
        .map(|c| (c.frame_anchor, c.platform_anchor))
        .unzip();
    assert_eq!(robot.with_geometry(&same.0, &same.1).expect("fits"), robot);
}

#[test]
fn with_geometry_names_what_does_not_fit() {
    let robot = uvigo8();
    let (mut frame, mut platform): (Vec<_>, Vec<_>) = robot
        .cables
        .iter()
        .map(|c| (c.frame_anchor, c.platform_anchor))
        .unzip();
    let e = robot
        .with_geometry(&frame[..4], &platform[..4])
        .expect_err("4 of 8");
    assert!(e.to_string().contains("8 cables") && e.to_string().contains("4 frame"));
    platform[2].y = f64::NAN;
    let e = robot.with_geometry(&frame, &platform).expect_err("NaN");
    assert!(
        e.to_string()
            .contains("platform anchor of cable 3 (upper2)"),
        "{e}"
    );
    platform[2] = platform[5];
    frame[2] = frame[5];
    let e = robot.with_geometry(&frame, &platform).expect_err("twins");
    assert!(
        e.to_string()
            .contains("cable 6 (lower1) coincides with cable 3 (upper2)"),
        "{e}"
    );
}

// ------------------------------------------------ files `check` refuses

#[test]
fn an_anchor_with_four_numbers_is_refused_not_cut() {
    let text = edited(
        GOOD,
        "[ 0.445, -0.760, 1.450],",
        "[ 0.445, -0.760, 1.450, 7.0],",
    );
    assert_names(
        &bad(&text),
        "cables.frame_anchors[1]",
        line_of(&text, "7.0]"),
        "needs 3 numbers (x, y, z), got 4",
    );
    let text = edited(
        GOOD,
        "size = [0.079, 0.125, 0.024]",
        "size = [0.079, 0.125]",
    );
    assert_names(
        &bad(&text),
        "platform.size",
        line_of(&text, "size = [0.079, 0.125]"),
        "got 2",
    );
    let text = edited(
        GOOD,
        "inertia = [0.00055, 0.00179, 0.00134]",
        "inertia = [0.00055, 0.00179, 0.00134, 1.0]",
    );
    assert_names(
        &bad(&text),
        "platform.inertia",
        line_of(&text, "inertia ="),
        "got 4 numbers",
    );
}

#[test]
fn a_cable_of_zero_length_at_home_is_refused() {
    // Home (0, 0, 0.5) plus platform anchor 1 (−0.029, −0.0515, 0) is frame anchor 1.
    let text = edited(GOOD, "[-0.445, -0.760, 1.450],", "[-0.029, -0.0515, 0.5],");
    assert_names(
        &bad(&text),
        "cables.frame_anchors[0]",
        line_of(&text, "[-0.029, -0.0515, 0.5]"),
        "cable 1 (cable1) has zero length",
    );
}

#[test]
fn absurd_values_are_refused_with_their_range() {
    for (from, to, field, words) in [
        (
            "home = [0.0, 0.0, 0.5]",
            "home = [1e300, 0.0, 0.5]",
            "home",
            "x must be within ±1000 m",
        ),
        (
            "home = [0.0, 0.0, 0.5]",
            "home = [0.0, 0.0, 0.5, 0.0, 0.0, 1e9]",
            "home",
            "yaw must be within",
        ),
        (
            "inertia = [0.00055, 0.00179, 0.00134]",
            "inertia = [1e300, 1e300, 1e300]",
            "platform.inertia",
            "at most 1e6",
        ),
        (
            "inertia = [0.00055, 0.00179, 0.00134]",
            "inertia = [1e-300, 1e-300, 1e-300]",
            "platform.inertia",
            "not a physical body",
        ),
        (
            "mass = 0.602",
            "mass = 1e300",
            "platform.mass",
            "at most 1e6 kg",
        ),
        (
            "[ 0.445, -0.760, 1.450],",
            "[ 0.445, -0.760, 1e300],",
            "cables.frame_anchors[1]",
            "within ±1000 m",
        ),
        (
            "stiffness = 20000.0",
            "stiffness = 1e300",
            "cables.stiffness",
            "at most",
        ),
        (
            "damping = 50.0",
            "damping = 1e300",
            "cables.damping",
            "at most",
        ),
        ("max = 50.0 ", "max = 1e300 ", "tension.max", "between"),
        (
            "max_jerk = 22.5",
            "max_jerk = 1e300",
            "winch.max_jerk",
            "at most",
        ),
        (
            "max = [ 0.3,  0.5, 1.0]",
            "max = [ 0.3,  0.5, 1e300]",
            "workspace.max",
            "within ±1000 m",
        ),
    ] {
        let text = edited(GOOD, from, to);
        let line = line_of(&text, to.trim());
        assert_names(&bad(&text), field, line, words);
    }
}

#[test]
fn frame_anchors_outside_the_frame_box_or_below_its_floor_are_refused() {
    let text = edited(GOOD, "[ 0.445, -0.760, 1.450],", "[ 0.445, -0.760, -0.5],");
    assert_names(
        &bad(&text),
        "cables.frame_anchors[1]",
        line_of(&text, "-0.5]"),
        "below the floor of the [frame] box (z = 0 m)",
    );
    let text = edited(GOOD, "[ 0.445, -0.760, 1.450],", "[ 0.945, -0.760, 1.450],");
    assert_names(
        &bad(&text),
        "cables.frame_anchors[1]",
        line_of(&text, "0.945"),
        "outside the [frame] box (x ∈ [-0.445, 0.445] m)",
    );
    // A flipped box is refused too.
    let text = edited(
        GOOD,
        "max = [ 0.445,  0.760, 1.450]",
        "max = [ 0.445,  0.760, -1.450]",
    );
    assert_names(
        &bad(&text),
        "frame.max",
        line_of(&text, "-1.450]"),
        "below min",
    );
}

#[test]
fn the_plc_section_is_kept_as_written_and_unknown_sections_are_still_refused() {
    // The core does not read symbol names (the ADS crate does): an empty name passes here
    // and is kept, with the file and text that locate an error about it later.
    let text = format!("{GOOD}\n[plc]\ntcp_pose = \"GVL.a\"\ncommanded_lengths = \"\"\n");
    let robot = parse_robot(&text, "plc.toml").expect("the core does not judge [plc]");
    let table = robot.plc.table.as_ref().expect("a [plc] section");
    assert_eq!(
        table.get("commanded_lengths").and_then(|v| v.as_str()),
        Some("")
    );
    assert_eq!(
        table.get("tcp_pose").and_then(|v| v.as_str()),
        Some("GVL.a")
    );
    assert_eq!(
        (robot.plc.file.as_str(), &*robot.plc.text),
        ("plc.toml", text.as_str())
    );
    // Without the section: none, and nothing of the text kept.
    let robot = parse_robot(GOOD, "good.toml").expect("parses");
    assert!(robot.plc.table.is_none() && robot.plc.text.is_empty());
    // Every other section is still checked for unknown names.
    let text = format!("{GOOD}\n[plcc]\nlengths = \"GVL.a\"\n");
    assert_names(
        &bad(&text),
        "plcc",
        line_of(&text, "[plcc]"),
        "unknown field `plcc`",
    );
}

#[test]
fn sections_of_another_kind_of_robot_are_refused() {
    let keops = include_str!("../../../../robots/keops.toml");
    let text = format!(
        "{keops}\n[cables]\nframe_anchors = [[0, 0, 1]]\nplatform_anchors = [[0, 0, 0]]\ndamping = 1.0\n"
    );
    assert_names(
        &bad(&text),
        "cables",
        line_of(&text, "[cables]"),
        "takes no [cables]",
    );
    let rssu2 = include_str!("../../../../robots/rssu2.toml");
    let text = format!("home = [0.0, 0.0, 1.0]\n{rssu2}");
    assert_names(&bad(&text), "home", 1, "takes no `home`");
    let text = format!(
        "{GOOD}\n[actuators]\nmax_velocity = 1.0\nmax_acceleration = 1.0\nmax_jerk = 1.0\n"
    );
    assert_names(
        &bad(&text),
        "actuators",
        line_of(&text, "[actuators]"),
        "takes no [actuators]",
    );
}

#[test]
fn a_typo_after_a_multi_line_array_names_its_line_and_field() {
    let text = edited(GOOD, "damping = 50.0", "dampng = 50.0");
    let e = bad(&text);
    assert_names(
        &e,
        "cables.dampng",
        line_of(&text, "dampng"),
        "unknown field `dampng`",
    );
    // The closing bracket on the last element's line.
    let text = edited(
        &text,
        "  [-0.029,  0.0515, 0.0],\n]",
        "  [-0.029,  0.0515, 0.0]]",
    );
    assert_names(
        &bad(&text),
        "cables.dampng",
        line_of(&text, "dampng"),
        "unknown field",
    );
}

#[test]
fn missing_sections_have_no_bogus_line() {
    let start = GOOD.find("[platform]").expect("platform");
    let end = GOOD.find("[cables]").expect("cables");
    let text = format!("{}{}", &GOOD[..start], &GOOD[end..]);
    let e = bad(&text);
    assert_eq!(e.field(), Some("platform"));
    let msg = e.to_string();
    assert!(
        msg.starts_with("bad.toml: missing section [platform]"),
        "{msg}"
    );
    let text = edited(GOOD, "[winch]", "[winch_]");
    let msg = bad(&text).to_string();
    assert!(!msg.contains(":0:"), "{msg}");
}

#[test]
fn file_errors_say_their_cause_once_and_huge_files_are_refused() {
    let dir = std::env::temp_dir().join(format!("cdpr-robot-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let e = Robot::from_file(&dir).expect_err("a directory");
    let chain = format!("{:#}", anyhow_like(&e));
    assert_eq!(chain.matches("os error").count(), 1, "{chain}");
    let big = dir.join("big.toml");
    std::fs::write(&big, vec![b' '; (MAX_FILE_BYTES + 10) as usize]).expect("write");
    let e = Robot::from_file(&big).expect_err("too large");
    assert!(
        e.to_string().contains("is larger than 16777216 bytes"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).expect("clean");
}

/// The error and its sources joined as anyhow's `{:#}` does.
fn anyhow_like(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[test]
fn the_most_cables_a_file_may_have_parse_and_their_statics_answer() {
    // MAX_CABLES (1024) cables on a circle: parsed, validated, their home lengths and the
    // infeasible home tensions found; one more is refused before the parse. (How long it
    // takes: `benches/foundation.rs`, `robot_1024_cables`.)
    let n = crate::robot::MAX_CABLES;
    let mut frame = String::new();
    let mut platform = String::new();
    for i in 0..n {
        let t = std::f64::consts::TAU * i as f64 / n as f64;
        frame.push_str(&format!(
            "[{}, {}, {}],\n",
            2.0 * t.cos(),
            2.0 * t.sin(),
            2.0 + 0.5 * (i % 2) as f64
        ));
        platform.push_str(&format!("[{}, {}, 0.0],\n", 0.1 * t.cos(), 0.1 * t.sin()));
    }
    let text = format!(
        "name = \"many\"\ndof = 6\nhome = [0.0, 0.0, 1.0]\n[platform]\nmass = 500.0\ncom = [0.0, 0.0, 0.0]\n\
         inertia = \"uniform_box\"\nsize = [0.2, 0.2, 0.1]\n[cables]\nframe_anchors = [\n{frame}]\n\
         platform_anchors = [\n{platform}]\nstiffness = 2e4\ndamping = 50.0\n[tension]\nmin = 1.0\nmax = 1000.0\n\
         [winch]\nmax_velocity = 1.0\nmax_acceleration = 5.0\nmax_jerk = 50.0\n\
         [workspace]\nmin = [-0.5, -0.5, 0.5]\nmax = [0.5, 0.5, 1.5]\n"
    );
    let robot = parse_robot(&text, "many.toml").expect("valid");
    assert_eq!(robot.cable_count(), n);
    let home = crate::statics::home_report(&robot);
    assert_eq!(home.lengths.len(), n);
    let one_more = text.replacen(
        "frame_anchors = [\n",
        "frame_anchors = [\n[0.0, 0.0, 3.0],\n",
        1,
    );
    match parse_robot(&one_more, "many.toml") {
        Err(RobotFileError::TooManyCables {
            count, max, line, ..
        }) => {
            assert_eq!((count, max, line), (n + 1, n, 10));
        }
        other => panic!("{other:?}"),
    }
    // Infeasible at home with 1 kg (1024 × 1 N lifts far more than its weight): the slow path.
    let light = robot.with_mass(1.0);
    let light_home = crate::statics::home_report(&light);
    assert!(light_home.tensions.is_none());
}

#[test]
fn with_pulleys_rebuilds_the_shipped_pulley_robot_and_names_the_bad_cable() {
    use nalgebra::Vector3;
    let point = crate::fixtures::robot("uvigo8");
    let shipped = crate::fixtures::robot("uvigo8-pulleys");
    let radii = vec![0.025; 8];
    let axes = vec![-Vector3::z(); 8];
    let built = point.with_pulleys(&radii, &axes).expect("fits");
    let home = crate::kinematics::Pose::from_array(shipped.home);
    let (a, b) = (
        crate::kinematics::lengths(&built, &home),
        crate::kinematics::lengths(&shipped, &home),
    );
    assert_eq!(a, b, "same pulleys, same lengths");
    // Friction is the file's when it had a pulley, else zero; a radius of 0 removes one.
    let again = shipped.with_pulleys(&radii, &axes).expect("fits");
    assert_eq!(again.cables[0].pulley, shipped.cables[0].pulley);
    assert_eq!(built.cables[0].pulley.map(|p| p.friction), Some(0.0));
    let mut some = radii.clone();
    some[3] = 0.0;
    assert!(
        shipped.with_pulleys(&some, &axes).expect("fits").cables[3]
            .pulley
            .is_none()
    );
    // Refused, naming the cable.
    let err = point.with_pulleys(&radii[..7], &axes).expect_err("count");
    assert!(matches!(
        err,
        GeometryError::PulleyCount {
            expected: 8,
            radii: 7,
            axes: 8
        }
    ));
    let mut bad = radii.clone();
    bad[2] = -0.01;
    let err = point.with_pulleys(&bad, &axes).expect_err("negative");
    assert!(err.to_string().contains("cable 3 (upper2)"), "{err}");
    bad[2] = f64::NAN;
    assert!(point.with_pulleys(&bad, &axes).is_err());
    let mut tilted = axes.clone();
    tilted[5] = Vector3::new(0.0, 0.0, -2.0);
    let err = point.with_pulleys(&radii, &tilted).expect_err("not unit");
    assert!(err.to_string().contains("cable 6 (lower1)"), "{err}");
    assert!(err.to_string().contains("length 2"), "{err}");
}

#[test]
fn anchors_at_one_point_are_warned_about_with_what_dof_does_not_do() {
    let mut robot = crate::fixtures::robot("uvigo8");
    assert_eq!(robot.orientation_warning(), None);
    for c in &mut robot.cables {
        c.platform_anchor = nalgebra::Vector3::zeros();
    }
    robot.platform.com = nalgebra::Vector3::new(0.0, 0.0, 0.175);
    assert!(
        robot
            .orientation_warning()
            .expect("warned")
            .contains("`dof = 6` the wrench")
    );
    robot.dof = super::Dof::Three;
    let w = robot.orientation_warning().expect("warned");
    assert!(
        w.starts_with("all 8 platform anchors are at one point (0, 0, 0) m"),
        "{w}"
    );
    assert!(
        w.contains("`dof = 3` does not hold it either") && w.contains("0.175 m above"),
        "{w}"
    );
    robot.platform.com = nalgebra::Vector3::new(0.0, 0.0, -0.01);
    assert!(
        robot
            .orientation_warning()
            .expect("warned")
            .contains("it swings")
    );
}
