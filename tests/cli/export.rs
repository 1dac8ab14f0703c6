//! `cdpr export --mjcf`: writes a MuJoCo model, refuses what it cannot export with one clear
//! message. (The model itself is stepped in MuJoCo by python/tests/test_mjcf.py.)

use crate::common::*;

#[test]
fn writes_the_mjcf_file_and_says_how_to_open_it() {
    let dir = scratch("export_writes");
    let path = dir.join("uvigo8.xml");
    let o = cdpr(&with(
        "export --robot uvigo8 --dt 0.002 --mjcf",
        &[path.to_str().unwrap()],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("8 cables as spatial tendons"), "{out}");
    assert!(
        out.contains(&format!(
            "python -m mujoco.viewer --mjcf={}",
            path.display()
        )),
        "{out}"
    );
    let doc = std::fs::read_to_string(&path).expect("the file was written");
    assert!(doc.starts_with("<?xml"), "{doc}");
    assert!(doc.trim_end().ends_with("</mujoco>"));
    assert_eq!(doc.matches("<spatial ").count(), 8);
    assert!(doc.contains(r#"timestep="0.002""#));
    assert!(doc.contains(r#"<site name="upper0_frame" pos="1.32545 1.09656 0.825""#));
}

#[test]
fn dash_writes_the_document_to_stdout_and_payload_changes_the_mass() {
    let o = cdpr(&words("export -r caroca --payload 15 --mjcf -"));
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = stdout(&o);
    assert!(
        doc.starts_with("<?xml") && doc.contains(r#"mass="15""#),
        "{doc}"
    );
    assert_eq!(doc.matches("<spatial ").count(), 8, "caroca has 8 cables");
}

#[test]
fn robots_with_legs_are_refused_by_name() {
    let dir = scratch("export_legs");
    for name in ["keops", "rssu2"] {
        let path = dir.join(format!("{name}.xml"));
        let o = cdpr(&with(
            &format!("export --robot {name} --mjcf"),
            &[path.to_str().unwrap()],
        ));
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_fails(&o, name);
        assert_stderr(&o, "rigid legs, not cables");
        assert!(!path.exists(), "nothing written for {name}");
        assert_eq!(stderr(&o).lines().count(), 1, "one line: {}", stderr(&o));
    }
}

#[test]
fn an_unwritable_path_is_named() {
    let dir = scratch("export_unwritable");
    let missing = dir.join("no-such-dir").join("out.xml");
    for path in [missing.as_path(), dir.as_path()] {
        let o = cdpr(&with(
            "export --robot uvigo8 --mjcf",
            &[path.to_str().unwrap()],
        ));
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_fails(&o, &format!("writing {}", path.display()));
    }
}

#[test]
fn a_bad_time_step_names_the_option() {
    for dt in ["0", "1", "1e-9", "NaN"] {
        let o = cdpr(&words(&format!("export -r uvigo8 --mjcf - --dt {dt}")));
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_fails(&o, "--dt");
        assert_stderr(&o, "must be between 1e-6 and 0.1 s");
    }
}

#[test]
fn help_has_an_example_and_how_to_open_it() {
    let o = cdpr(&words("export --help"));
    assert!(o.status.success());
    let help = stdout(&o);
    assert!(
        help.contains("cdpr export --robot uvigo8 --mjcf uvigo8.xml"),
        "{help}"
    );
    assert!(help.contains("python -m mujoco.viewer --mjcf="), "{help}");
}
