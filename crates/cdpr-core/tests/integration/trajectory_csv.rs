//! CSV import/export: exact round trip, optional and extra columns, the simulator's `_cmd`
//! columns, derivatives from positions, and one clear error per kind of bad file.

use cdpr_core::kinematics::Pose;
use cdpr_core::trajectory::csv::{self, CsvOptions};
use cdpr_core::trajectory::{self, BuiltinOptions, Sample, Trajectory};
use proptest::prelude::*;

fn parse(text: &str) -> Result<Trajectory, cdpr_core::trajectory::TrajectoryError> {
    csv::from_reader(text.as_bytes(), "test.csv", &CsvOptions::default())
}

fn round_trip(t: &Trajectory) -> Trajectory {
    let mut bytes = Vec::new();
    csv::to_writer(&mut bytes, t).unwrap();
    csv::from_reader(bytes.as_slice(), "round trip", &CsvOptions::default()).unwrap()
}

#[test]
fn seed000_round_trips_exactly_through_a_file() {
    let robot = cdpr_core::fixtures::uvigo8();
    let t = trajectory::builtin(&robot, "seed000", &BuiltinOptions::default()).unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("csv_round_trip");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("seed000.csv");
    csv::write(&path, &t).unwrap();
    assert_eq!(csv::read(&path).unwrap(), t);
}

fn sample_strategy() -> impl Strategy<Value = (f64, [f64; 6], [f64; 6], [f64; 6], Option<u8>)> {
    let six = || prop::array::uniform6(-1e3f64..1e3);
    (1e-6f64..10.0, six(), six(), six(), prop::option::of(0u8..3))
}

proptest! {
    #[test]
    fn write_then_read_is_the_identity(rows in prop::collection::vec(sample_strategy(), 1..30)) {
        let mut t = 0.0;
        let names = ["XY", "a, quoted \"name\"", "Down"];
        let trajectory = Trajectory {
            samples: rows.iter().map(|(dt, p, v, a, seg)| {
                t += dt;
                Sample {
                    t,
                    pose: Pose::from_array(*p),
                    velocity: *v,
                    acceleration: *a,
                    segment: seg.map(usize::from),
                }
            }).collect(),
            segments: names.iter().map(|s| s.to_string()).collect(),
        };
        let back = round_trip(&trajectory);
        // Segment names are renumbered in order of appearance; compare by name.
        prop_assert_eq!(back.samples.len(), trajectory.samples.len());
        for (a, b) in back.samples.iter().zip(&trajectory.samples) {
            prop_assert_eq!((a.t, a.pose, a.velocity, a.acceleration), (b.t, b.pose, b.velocity, b.acceleration));
            prop_assert_eq!(back.segment_name(a), trajectory.segment_name(b));
        }
    }
}

#[test]
fn angles_are_optional_extra_columns_ignored_derivatives_estimated() {
    // x = t², y = 3t − 1, z = 0.5 on a non-uniform grid; the three-point formulas are exact
    // for quadratics (interior samples).
    let times = [0.0, 0.1, 0.25, 0.3, 0.7, 1.0];
    let mut text = String::from("note,t,z,y,x,segment\n");
    for t in times {
        text += &format!("hi,{t},0.5,{},{},S\n", 3.0 * t - 1.0, t * t);
    }
    let tr = parse(&text).unwrap();
    assert_eq!(tr.segments, ["S"]);
    for (k, s) in tr.samples.iter().enumerate() {
        assert_eq!(s.pose.rpy.norm(), 0.0);
        assert_eq!(s.pose.position.z, 0.5);
        assert!((s.velocity[1] - 3.0).abs() < 1e-12);
        if k > 0 && k + 1 < times.len() {
            assert!((s.velocity[0] - 2.0 * s.t).abs() < 1e-12, "{k}");
            assert!((s.acceleration[0] - 2.0).abs() < 1e-9, "{k}");
        }
    }
}

#[test]
fn simulator_output_is_read_with_a_column_suffix() {
    let text = "t,x_cmd,y_cmd,z_cmd,roll_cmd,pitch_cmd,yaw_cmd,x,y,z,roll,pitch,yaw,length_cmd_1,length_1,tension_1,segment\n\
                0,0.1,0.2,0.3,0,0,0.01,0.11,0.21,0.31,0,0,0,1.5,1.49,10,XY\n\
                0.002,0.2,0.3,0.4,0,0,0.02,0.12,0.22,0.32,0,0,0,1.5,1.49,10,XY\n";
    let cmd = csv::from_reader(
        text.as_bytes(),
        "run.csv",
        &CsvOptions {
            suffix: "_cmd".into(),
        },
    )
    .unwrap();
    let actual = parse(text).unwrap();
    assert_eq!(
        cmd.samples[1].pose.to_array(),
        [0.2, 0.3, 0.4, 0.0, 0.0, 0.02]
    );
    assert_eq!(actual.samples[1].pose.position.x, 0.12);
    assert_eq!(cmd.segments, ["XY"]);
    let e = csv::from_reader(
        text.as_bytes(),
        "run.csv",
        &CsvOptions {
            suffix: "_ref".into(),
        },
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("run.csv:1: missing column `x_ref`"),
        "{e}"
    );
}

/// Each bad file and the start of its message.
#[test]
fn each_bad_csv_gives_its_clear_error() {
    let cases = [
        (
            "t,x,y,z\n0,0,0,0\n0.1,1,0,0\n0.1,2,0,0\n",
            "test.csv:4: t = 0.1 s does not increase (the previous row has t = 0.1 s)",
        ),
        (
            "t,x,y,z\n0,0,0,0\n0.2,1,0,0\n0.1,2,0,0\n",
            "test.csv:4: t = 0.1 s does not increase",
        ),
        (
            "t,x,y,z\n0,0,0,0\n0.1,NaN,0,0\n",
            "test.csv:3: column `x`: `NaN` is not a finite number",
        ),
        (
            "t,x,y,z\n0,0,0,0\n0.1,0,inf,0\n",
            "test.csv:3: column `y`: `inf` is not a finite number",
        ),
        (
            "t,x,y,z\n0,0,0,0\n0.1,0,0,abc\n",
            "test.csv:3: column `z`: `abc` is not a number",
        ),
        (
            "t,x,y,z\n0,0,0,0\n0.1,0,,0\n",
            "test.csv:3: column `y` is empty",
        ),
        (
            "t,x,z\n0,0,0\n",
            "test.csv:1: missing column `y` (the header has: t, x, z)",
        ),
        ("x,y,z\n0,0,0\n", "test.csv:1: missing column `t`"),
        (
            "t,x,y,z\n0,0,0,0\n0.1,0,0\n",
            "test.csv:3: this row has 3 fields but the header has 4",
        ),
        (
            "t,x,y,z\n0,0,0,0\n0.1,0,0,0,7\n",
            "test.csv:3: this row has 5 fields but the header has 4",
        ),
        ("", "test.csv:1: no header row"),
        ("t,x,y,z\n", "test.csv:1: no data rows after the header"),
        (
            "t,x,y,z,x\n0,0,0,0,0\n",
            "test.csv:1: the column `x` appears more than once",
        ),
    ];
    for (text, expected) in cases {
        let e = parse(text).expect_err(expected);
        assert!(
            e.to_string().starts_with(expected),
            "for {text:?}:\n  got      {e}\n  expected {expected}"
        );
    }
}

#[test]
fn a_missing_file_is_named() {
    let e = csv::read("no/such/file.csv").unwrap_err();
    assert!(e.to_string().starts_with("no/such/file.csv: "), "{e}");
}
