use super::*;
use std::time::Duration;

const SUITE: &str = r#"# two scenarios of uvigo8
robot = "uvigo8"
trajectory = "seed000"
model = "chain"

[[scenario]]
name = "fast task"
speed = 0.2
task = "2ms"
cycle = "lockstep"

[scenario.expect]
tracking_max = 0.005
tension_min = 1.0
no_slack = true
reaction_max = 1

[[scenario.symbol]]
symbol = "GVL_Shadow.bMotionEnable"
is = "=="
value = true
within = 1.5

[[scenario.symbol]]
symbol = "GVL_Shadow.nCycle"
is = "reaches"
value = 100

[[scenario]]
name = "the lab's PLC"
plc = "192.168.1.10"
ams_net_id = "192.168.1.10.1.1"
duration = 30
"#;

fn parse(text: &str) -> Result<Suite, SuiteError> {
    Suite::parse(text, "lab.toml", None)
}

fn refused(text: &str) -> (usize, String, String) {
    match parse(text).expect_err("refused") {
        SuiteError::Invalid {
            file,
            line,
            field,
            message,
        } => {
            assert_eq!(file, "lab.toml");
            (line, field, message)
        }
        e => panic!("not located: {e}"),
    }
}

#[test]
fn a_suite_reads_its_defaults_scenarios_expectations_and_conditions() {
    let suite = parse(SUITE).expect("reads");
    let [fast, lab] = &suite.scenarios[..] else {
        panic!("two scenarios: {:?}", suite.scenarios);
    };
    assert_eq!((fast.name.as_str(), fast.line), ("fast task", 6));
    assert_eq!(fast.run.robot.as_deref(), Some("uvigo8"));
    assert_eq!(fast.run.trajectory.as_deref(), Some("seed000"));
    assert_eq!(fast.run.speed, 0.2);
    assert_eq!(fast.link.cycle, crate::requests::Cycle::Lockstep);
    let PlcTarget::Virtual(plc) = &fast.plc else {
        panic!("virtual: {:?}", fast.plc)
    };
    assert_eq!(plc.task, Duration::from_millis(2));
    assert_eq!(
        fast.link.plc_period,
        Duration::from_millis(2),
        "the shadow's PLC period follows the virtual PLC's task"
    );
    assert!(fast.write, "the virtual PLC is written to by default");
    assert_eq!(fast.expect.tracking_max, Some(0.005));
    assert_eq!(fast.expect.tension_min, Some(1.0));
    assert!(fast.expect.no_slack && !fast.expect.no_interference);
    assert_eq!(fast.expect.reaction_max, Some(1));
    assert_eq!(fast.expect.tracking_rms, None);
    assert_eq!(fast.conditions.len(), 2);
    let enable = &fast.conditions[0];
    assert_eq!(
        (
            enable.symbol.as_str(),
            enable.op,
            enable.value,
            enable.boolean
        ),
        ("GVL_Shadow.bMotionEnable", Op::Eq, 1.0, true)
    );
    assert_eq!((enable.when, enable.line), (When::Within(1.5), 18));
    assert_eq!(fast.conditions[1].op, Op::Reaches);
    assert_eq!(fast.conditions[1].when, When::Always);
    assert_eq!(
        lab.plc,
        PlcTarget::Address {
            plc: "192.168.1.10".into(),
            ams_net_id: Some(AmsNetId([192, 168, 1, 10, 1, 1])),
            secure: crate::secure::SecureOptions::default(),
        }
    );
    assert!(
        !lab.write,
        "a real PLC is only written to when the scenario says so"
    );
    assert_eq!(lab.duration, Some(30.0));
    assert_eq!(
        lab.link.plc_period,
        Duration::from_millis(10),
        "the link's default"
    );
    assert_eq!(
        lab.run.model, fast.run.model,
        "the suite's defaults reach every scenario"
    );
}

#[test]
fn comparisons_hold_as_their_names_say() {
    let cases = [
        (Op::Eq, 2.0, 2.0, true),
        (Op::Ne, 2.0, 2.0, false),
        (Op::Lt, 1.0, 2.0, true),
        (Op::Le, 2.0, 2.0, true),
        (Op::Gt, 2.0, 2.0, false),
        (Op::Ge, 2.0, 2.0, true),
        (Op::Reaches, 41.0, 40.0, true),
        (Op::Reaches, 39.0, 40.0, false),
    ];
    for (op, value, target, holds) in cases {
        assert_eq!(
            op.holds(value, target),
            holds,
            "{value} {} {target}",
            op.name()
        );
    }
}

#[test]
fn bad_suites_are_refused_with_file_line_and_field() {
    // (text replaced, by, line, end of the field, what the message says)
    let cases: [(&str, &str, usize, &str, &str); 10] = [
        (
            "speed = 0.2",
            "sped = 0.2",
            8,
            "scenario \"fast task\".sped",
            "did you mean `speed`",
        ),
        (
            "tracking_max = 0.005",
            "tracking_max = \"big\"",
            13,
            "expect.tracking_max",
            "big",
        ),
        (
            "no_slack = true",
            "no_slak = true",
            15,
            "expect.no_slak",
            "`no_slack`",
        ),
        (
            "is = \"==\"",
            "is = \"=\"",
            20,
            "symbol[1].is",
            "`=` is not one of",
        ),
        (
            "is = \"==\"",
            "is = \"<\"",
            20,
            "symbol[1].is",
            "a BOOL is == or !=",
        ),
        (
            "within = 1.5",
            "after = -1",
            22,
            "symbol[1].after",
            "0 or more",
        ),
        (
            "value = 100",
            "value = 100\nafter = 2",
            28,
            "symbol[2].after",
            "`reaches` is met at one moment",
        ),
        (
            "duration = 30",
            "duration = 30\ntask = \"2ms\"",
            34,
            "the lab's PLC\".task",
            "virtual PLC's",
        ),
        (
            "duration = 30",
            "",
            29,
            "the lab's PLC\".duration",
            "needs a `duration`",
        ),
        (
            "name = \"the lab's PLC\"",
            "name = \"fast task\"",
            30,
            "scenario.name",
            "line 6 too",
        ),
    ];
    for (from, to, line, field, says) in cases {
        let text = SUITE.replacen(from, to, 1);
        let (l, f, message) = refused(&text);
        assert_eq!(l, line, "{to}: {f}: {message}");
        assert!(f.ends_with(field), "{to}: field {f}");
        assert!(message.contains(says), "{to}: {message}");
    }
    // The virtual PLC's rule across its times, located at `task`.
    let (line, field, message) = refused(&SUITE.replacen("task = \"2ms\"", "task = \"3ms\"", 1));
    assert_eq!((line, field.as_str()), (9, "scenario \"fast task\".task"));
    assert!(message.contains("whole multiple"), "{message}");
    // A syntax error is located by the TOML parser's span.
    let (line, _, _) = refused(&SUITE.replacen("speed = 0.2", "speed = ", 1));
    assert_eq!(line, 8);
    assert!(matches!(
        parse("robot = \"uvigo8\"\n"),
        Err(SuiteError::File { .. })
    ));
}

#[test]
fn robot_files_are_found_beside_the_suite() {
    let dir = std::env::temp_dir().join(format!("cdpr-suite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("mine.toml"),
        cdpr_core::fixtures::robot_text("uvigo8"),
    )
    .expect("robot");
    let text = "robot = \"mine.toml\"\ntrajectory = \"seed000\"\n[[scenario]]\nname = \"a\"\n";
    let suite = Suite::parse(text, "suite.toml", Some(&dir)).expect("reads");
    let robot = suite.scenarios[0].run.robot.clone().expect("robot");
    assert_eq!(PathBuf::from(robot), dir.join("mine.toml"));
    let suite = Suite::parse(
        &text.replace("mine.toml", "uvigo8"),
        "suite.toml",
        Some(&dir),
    )
    .expect("reads");
    assert_eq!(
        suite.scenarios[0].run.robot.as_deref(),
        Some("uvigo8"),
        "a shipped name"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn secure_ads_keys_follow_the_shadows_rules_and_keep_no_password() {
    let head = "robot = \"uvigo8\"\n[[scenario]]\nname = \"lab\"\nplc = \"192.168.1.10\"\n\
                duration = 5\n";
    let suite = |body: &str| {
        Suite::parse(
            &format!("{head}{body}"),
            "s.toml",
            Some(Path::new("/suites")),
        )
    };
    let ok = suite("secure = \"sca\"\ncert = \"me.pem\"\nkey = \"me.key\"\nca = \"/etc/ca.pem\"\nplc_cn = \"plc1\"\n")
        .expect("reads");
    let PlcTarget::Address { secure, .. } = &ok.scenarios[0].plc else {
        panic!("an address")
    };
    assert_eq!(secure.secure, Some(crate::secure::Mode::Sca));
    // Files relative to the suite's directory, absolute ones as written.
    assert_eq!(secure.cert.as_deref(), Some(Path::new("/suites/me.pem")));
    assert_eq!(secure.ca.as_deref(), Some(Path::new("/etc/ca.pem")));
    assert_eq!(secure.plc_cn.as_deref(), Some("plc1"));
    let refused = |body: &str| match suite(body) {
        Err(SuiteError::Invalid {
            line,
            field,
            message,
            ..
        }) => (line, field, message),
        other => panic!("{body}: {other:?}"),
    };
    let (line, field, message) = refused("secure = \"sca\"\ncert = \"me.pem\"\n");
    assert_eq!((line, field.as_str()), (6, "scenario \"lab\".secure"));
    assert!(
        message.contains("`secure` sca needs `key`, `ca`"),
        "{message}"
    );
    let (line, field, message) = refused("secure = \"ssc\"\nplc_cn = \"x\"\n");
    assert_eq!((line, field.as_str()), (7, "scenario \"lab\".plc_cn"));
    assert!(
        message.contains("`plc_cn` belongs to `secure` sca"),
        "{message}"
    );
    let (line, _, message) = refused("secure = \"tls\"\n");
    assert_eq!(line, 6);
    assert!(
        message.contains("`tls` is not ssc, sca or psk"),
        "{message}"
    );
    let (line, _, message) =
        refused("secure = \"psk\"\npsk_identity = \"lab\"\npsk_password = \"1\"\n");
    assert_eq!(line, 8);
    assert!(message.contains("$CDPR_PSK_PASSWORD"), "{message}");
    // The virtual PLC has no TLS.
    let text = "robot = \"uvigo8\"\ntrajectory = \"seed000\"\n[[scenario]]\nname = \"v\"\nsecure = \"ssc\"\n";
    match Suite::parse(text, "s.toml", None) {
        Err(SuiteError::Invalid { line, message, .. }) => {
            assert_eq!(line, 5);
            assert!(message.contains("in-process"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}
