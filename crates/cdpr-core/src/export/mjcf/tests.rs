use super::*;
use crate::fixtures::{edited, robot, robot_text, uvigo8};
use crate::robot::Robot;
use std::path::Path;

/// A small XML 1.0 well-formedness check (no XML parser in the dependency tree): one
/// declaration, comments without `--`, every tag's attributes `name="value"` with no raw `<` or
/// `&` outside entities, tags balanced and one root. Returns the element names in order.
fn well_formed(doc: &str) -> Vec<String> {
    let mut rest = doc
        .strip_prefix(r#"<?xml version="1.0" encoding="utf-8"?>"#)
        .expect("an XML declaration first");
    let mut stack: Vec<String> = Vec::new();
    let mut elements = Vec::new();
    let mut roots = 0;
    while let Some(open) = rest.find('<') {
        assert!(
            rest[..open].trim().is_empty(),
            "text outside tags: {:?}",
            &rest[..open]
        );
        rest = &rest[open..];
        if let Some(body) = rest.strip_prefix("<!--") {
            let end = body.find("-->").expect("a closed comment");
            let text = &body[..end];
            assert!(!text.contains("--"), "`--` inside a comment: {text}");
            assert!(!text.ends_with('-'), "comment ends with `-`: {text}");
            rest = &body[end + 3..];
            continue;
        }
        let close = rest.find('>').expect("a closed tag");
        let tag = &rest[1..close];
        rest = &rest[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "unbalanced </{name}>");
            continue;
        }
        let empty = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "bad element name in <{tag}>"
        );
        // Attributes: name="value" pairs.
        let mut attrs = tag[name_end..].trim();
        while !attrs.is_empty() {
            let eq = attrs.find("=\"").expect("attribute as name=\"value\"");
            let attr = attrs[..eq].trim();
            assert!(
                attr.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "bad attribute name `{attr}` in <{tag}>"
            );
            let value_end = attrs[eq + 2..].find('"').expect("a closed value");
            let value = &attrs[eq + 2..eq + 2 + value_end];
            assert!(!value.contains('<'), "raw < in {attr}=\"{value}\"");
            for (k, _) in value.match_indices('&') {
                let entity = &value[k..];
                assert!(
                    ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                        .iter()
                        .any(|e| entity.starts_with(e)),
                    "raw & in {attr}=\"{value}\""
                );
            }
            attrs = attrs[eq + 2 + value_end + 1..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        elements.push(name.to_string());
        if !empty {
            stack.push(name.to_string());
        }
    }
    assert!(rest.trim().is_empty(), "trailing text: {rest:?}");
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    assert_eq!(roots, 1, "one root element");
    elements
}

/// The value of `attr` in the first element that contains `needle` (e.g. `name="upper0"`).
fn attr<'a>(doc: &'a str, needle: &str, attr: &str) -> &'a str {
    let at = doc
        .find(needle)
        .unwrap_or_else(|| panic!("no {needle} in the document"));
    let start = doc[..=at].rfind('<').expect("inside a tag");
    let end = start + doc[start..].find('>').expect("a closed tag");
    let tag = &doc[start..end];
    let key = format!(" {attr}=\"");
    let v = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {attr} in {tag}"));
    let v = &tag[v + key.len()..];
    &v[..v.find('"').expect("a closed value")]
}

fn numbers(text: &str) -> Vec<f64> {
    text.split_whitespace()
        .map(|x| x.parse().expect("a number"))
        .collect()
}

fn export(robot: &Robot) -> String {
    mjcf(robot, &MjcfOptions::default()).expect("exports")
}

#[test]
fn uvigo8_document_is_well_formed_with_one_of_each_per_cable() {
    let robot = uvigo8();
    let doc = export(&robot);
    let elements = well_formed(&doc);
    let count = |name: &str| elements.iter().filter(|e| *e == name).count();
    assert_eq!(elements[0], "mujoco");
    assert_eq!(count("freejoint"), 1);
    assert_eq!(count("inertial"), 1);
    assert_eq!(count("spatial"), 8);
    assert_eq!(count("motor"), 8);
    // 8 frame anchors + 8 platform anchors, and 2 site references per tendon.
    assert_eq!(count("site"), 32);
    assert!(
        doc.contains(r#"<option timestep="0.001" gravity="0 0 -9.81" integrator="implicitfast"/>"#)
    );
}

#[test]
fn numbers_are_the_robot_files() {
    let robot = uvigo8();
    let doc = export(&robot);
    // Anchors, from robots/uvigo8.toml.
    assert_eq!(
        attr(&doc, r#"name="upper0_frame""#, "pos"),
        "1.32545 1.09656 0.825"
    );
    assert_eq!(
        attr(&doc, r#"name="lower3_frame""#, "pos"),
        "1.39656 -1.02545 0.7"
    );
    assert_eq!(
        attr(&doc, r#"name="upper0_platform""#, "pos"),
        "-0.1 0.1 0.175"
    );
    assert_eq!(
        attr(&doc, r#"name="lower2_platform""#, "pos"),
        "-0.1 0.1 0.33"
    );
    // Elasticity and mass.
    for c in &robot.cables {
        let needle = format!(r#"<spatial name="{}""#, c.name);
        assert_eq!(attr(&doc, &needle, "stiffness"), "20000");
        assert_eq!(attr(&doc, &needle, "damping"), "50");
        let needle = format!(r#"<motor name="{}_payout_rate""#, c.name);
        assert_eq!(attr(&doc, &needle, "gear"), "50");
    }
    assert_eq!(attr(&doc, "<inertial", "mass"), "1");
    assert_eq!(attr(&doc, "<inertial", "pos"), "0 0 0.175");
    // Uniform box 0.2 × 0.2 × 0.35 m of 1 kg: Ixx = Iyy = (0.2² + 0.35²)/12, Izz = 2·0.2²/12.
    let i = numbers(attr(&doc, "<inertial", "fullinertia"));
    let (ixx, izz) = ((0.04 + 0.1225) / 12.0, 0.08 / 12.0);
    for (got, want) in i.iter().zip([ixx, ixx, izz, 0.0, 0.0, 0.0]) {
        assert!((got - want).abs() < 1e-15, "{i:?}");
    }
    // Home pose [0, 0, 0.15, 0, 0, 0].
    assert_eq!(attr(&doc, r#"<body name="platform""#, "pos"), "0 0 0.15");
    assert_eq!(attr(&doc, r#"<body name="platform""#, "quat"), "1 0 0 0");
    assert_eq!(
        attr(&doc, r#"<geom name="platform""#, "size"),
        "0.1 0.1 0.175"
    );
}

#[test]
fn rest_lengths_hold_the_platform_at_home_with_its_tension_distribution() {
    let robot = uvigo8();
    let doc = export(&robot);
    let home = Pose::from_array(robot.home);
    // Independent of the export's code path: IK lengths and the distribution, then f = k (L − L0).
    let lengths = kinematics::lengths(&robot, &home);
    let dist = statics::tension_distribution(&robot, &home, robot.tension);
    assert!(dist.feasible);
    for (k, c) in robot.cables.iter().enumerate() {
        let band = numbers(attr(
            &doc,
            &format!(r#"<spatial name="{}""#, c.name),
            "springlength",
        ));
        assert_eq!(band[0], 0.0, "a dead band from 0: the cable never pushes");
        let l0 = band[1];
        let f = 20000.0 * (lengths[k] - l0);
        assert!(
            (f - dist.tensions[k]).abs() < 1e-9,
            "{}: k(L − L0) = {f} N, f* = {} N",
            c.name,
            dist.tensions[k]
        );
        assert!(f >= robot.tension.min - 1e-9 && f <= robot.tension.max + 1e-9);
    }
    // And the elastic statics puts the platform at home with those rest lengths.
    let rest: Vec<f64> = robot
        .cables
        .iter()
        .map(|c| {
            numbers(attr(
                &doc,
                &format!(r#"<spatial name="{}""#, c.name),
                "springlength",
            ))[1]
        })
        .collect();
    let options = statics::EquilibriumOptions {
        guess: Some(home),
        ..Default::default()
    };
    let eq = statics::elastic_equilibrium(&robot, &rest, &options).expect("an equilibrium");
    let d = (eq.pose.position - home.position).norm();
    assert!(d < 1e-6, "settles {d} m from home");
}

#[test]
fn legs_robots_are_refused() {
    for name in ["keops", "rssu2"] {
        let e = mjcf(&robot(name), &MjcfOptions::default()).expect_err("not a cable robot");
        assert!(matches!(e, ExportError::NotCableRobot { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(name) && text.contains("cable-driven robots only"),
            "{text}"
        );
    }
}

#[test]
fn time_step_out_of_range_is_refused() {
    for dt in [0.0, -1e-3, 1e-9, 0.5, f64::NAN, f64::INFINITY] {
        let e = mjcf(
            &uvigo8(),
            &MjcfOptions {
                dt,
                ..Default::default()
            },
        )
        .expect_err("a bad step");
        assert!(matches!(e, ExportError::BadStep { .. }), "{e}");
    }
    let doc = mjcf(
        &uvigo8(),
        &MjcfOptions {
            dt: 0.0005,
            integrator: MjcfIntegrator::Rk4,
        },
    )
    .expect("exports");
    assert!(doc.contains(r#"timestep="0.0005""#) && doc.contains(r#"integrator="RK4""#));
}

#[test]
fn names_are_escaped_and_made_unique_comments_stay_comments() {
    let text = edited(
        robot_text("uvigo8"),
        r#"names = ["upper0", "upper1","#,
        r#"names = ["a<b&\"c\"'", "a<b&\"c\"'","#,
    );
    let text = edited(
        &text,
        r#"description = "8-cable"#,
        r#"description = "-- a -->comment<!-- --- 8-cable"#,
    );
    let text = edited(&text, r#"name = "uvigo8""#, r#"name = "uvigo8 <&>""#);
    let robot = Robot::from_text(&text, Path::new("edited.toml")).expect("parses");
    let doc = export(&robot);
    well_formed(&doc);
    assert!(doc.contains(r#"<mujoco model="uvigo8 &lt;&amp;&gt;">"#));
    assert!(doc.contains(r#"<spatial name="a&lt;b&amp;&quot;c&quot;&apos;_1""#));
    assert!(doc.contains(r#"<spatial name="a&lt;b&amp;&quot;c&quot;&apos;_2""#));
    assert!(doc.contains(r#"<site site="a&lt;b&amp;&quot;c&quot;&apos;_2_platform"/>"#));
    assert!(
        doc.contains(r#"<spatial name="upper2""#),
        "unique names kept"
    );
}

#[test]
fn ea_stiffness_is_taken_at_the_home_rest_length() {
    let text = edited(
        robot_text("uvigo8"),
        "stiffness = 20000.0             # N/m per cable",
        "ea = 30000.0",
    );
    let robot = Robot::from_text(&text, Path::new("ea.toml")).expect("parses");
    let doc = export(&robot);
    for c in &robot.cables {
        let needle = format!(r#"<spatial name="{}""#, c.name);
        let l0 = numbers(attr(&doc, &needle, "springlength"))[1];
        let k: f64 = attr(&doc, &needle, "stiffness").parse().expect("a number");
        assert!(
            (k - 30000.0 / l0).abs() < 1e-9,
            "{}: k {k}, L0 {l0}",
            c.name
        );
    }
}

#[test]
fn every_shipped_cable_robot_exports() {
    for name in crate::robot::Robot::builtin_names() {
        let robot = robot(name);
        if robot.is_cable_robot() {
            let doc = export(&robot);
            well_formed(&doc);
            let count = doc.matches("<spatial ").count();
            assert_eq!(count, robot.cable_count(), "{name}");
        }
    }
}

#[test]
fn a_robot_that_cannot_hang_at_home_is_refused_by_name() {
    // Eight cables of at most 1 N cannot hold a 1 kg platform (9.81 N).
    let text = edited(robot_text("uvigo8"), "min = 1.0 ", "min = 0.1 ");
    let text = edited(&text, "max = 100.0 ", "max = 1.0 ");
    let robot = Robot::from_text(&text, Path::new("weak.toml")).expect("parses");
    let e = mjcf(&robot, &MjcfOptions::default()).expect_err("infeasible at home");
    assert!(matches!(e, ExportError::HomeInfeasible { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("uvigo8") && text.contains("[0.1, 1] N") && text.contains("home pose"),
        "{text}"
    );
}
