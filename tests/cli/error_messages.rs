//! Error messages say each cause and each name once, down the chain of contexts.

use crate::common::*;

/// Every cause and every name once in an error ("x.csv: No such file or directory
/// (os error 2): No such file or directory (os error 2)" before).
#[test]
fn errors_print_each_cause_and_each_name_once() {
    let missing = "/nonexistent-sim2/none.csv";
    let bad = scratch("sim2_causes").join("bad.toml");
    std::fs::write(&bad, "garbage\n").unwrap();
    let bad = bad.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            with("compare --actual x.csv --reference", &[missing]),
            "No such file or directory",
            missing,
        ),
        (
            with(
                "report -o /tmp/sim2-none --actual x.csv --reference",
                &[missing],
            ),
            "No such file or directory",
            missing,
        ),
        (
            with("simulate -r uvigo8 -t", &[missing]),
            "neither a built-in trajectory",
            missing,
        ),
        (
            with("trajectory -r uvigo8 --name", &[missing]),
            "neither a built-in trajectory",
            missing,
        ),
        (
            with("simulate -t seed000 -r", &["/nonexistent-sim2/robot.toml"]),
            "file not found",
            "/nonexistent-sim2/robot.toml",
        ),
        (
            with("simulate -t seed000 -r", &[bad]),
            "key with no value",
            bad,
        ),
    ];
    for (args, cause, name) in cases {
        let o = cdpr(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(
            err.matches(cause).count(),
            1,
            "{args:?}: cause twice in\n{err}"
        );
        assert_eq!(
            err.matches(name).count(),
            1,
            "{args:?}: name twice in\n{err}"
        );
    }
}
