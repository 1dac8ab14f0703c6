//! What a new user is told when an input is probably not what they meant: angles in degrees
//! given as radians, poses and trajectories in millimetres, a file compared with itself, and a
//! residual printed without its unit.

use crate::common::*;

/// Lines of stderr that contain `needle`.
fn count(o: &std::process::Output, needle: &str) -> usize {
    stderr(o).lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn an_angle_beyond_a_turn_in_radians_asks_for_degrees_once() {
    let hint = "warning: yaw 90 rad: did you mean --degrees?";
    for run in [
        "ik -r uvigo8 --pose 0,0,0.15,0,0,90",
        "tensions -r uvigo8 --pose 0,0,0.15,0,0,90",
        // Three poses read, one hint.
        "equilibrium -r uvigo8 --sag-at 0,0,0.15,0,0,90 --guess 0,0,0.15,0,0,90",
        "fk -r uvigo8 --lengths 1.7,1.7,1.7,1.7,1.6,1.6,1.6,1.6 --guess 0,0,0.15,0,0,90",
    ] {
        let o = cdpr(&words(run));
        assert_eq!(count(&o, hint), 1, "{run}: {}", stderr(&o));
        assert_eq!(count(&o, "did you mean"), 1, "{run}: {}", stderr(&o));
    }
    let o = cdpr(&words("ik -r uvigo8 --pose 0,0,0.15,7,-8,0.5"));
    assert_eq!(
        count(
            &o,
            "warning: roll 7 rad, pitch -8 rad: did you mean --degrees?"
        ),
        1,
        "{}",
        stderr(&o)
    );
    // In degrees, or within a turn: not a word.
    for run in [
        "ik -r uvigo8 --pose 0,0,0.15,0,0,90 --degrees",
        "ik -r uvigo8 --pose 0,0,0.15,0,0,6.2",
    ] {
        let o = cdpr(&words(run));
        assert!(o.status.success(), "{run}: {}", stderr(&o));
        assert_eq!(count(&o, "did you mean"), 0, "{run}: {}", stderr(&o));
    }
}

#[test]
fn a_pose_in_millimetres_is_refused_with_how_far_it_is() {
    for (run, option) in [
        ("ik -r uvigo8 --pose 0,0,150", "--pose 0,0,150"),
        ("tensions -r uvigo8 --pose 0,0,150", "--pose 0,0,150"),
        ("equilibrium -r uvigo8 --sag-at 0,0,150", "--sag-at 0,0,150"),
        (
            "equilibrium -r uvigo8 --pretensioned-at 0,0,150",
            "--pretensioned-at 0,0,150",
        ),
        (
            "equilibrium -r uvigo8 --sag-at 0,0,0.15 --guess 0,0,150",
            "--guess 0,0,150",
        ),
        (
            "fk -r uvigo8 --lengths 1.7,1.7,1.7,1.7,1.6,1.6,1.6,1.6 --guess 0,0,150",
            "--guess 0,0,150",
        ),
    ] {
        let o = cdpr(&words(run));
        assert_eq!(o.status.code(), Some(1), "{run}: {}", stdout(&o));
        assert_stderr(
            &o,
            &format!(
                "{option} is 149 m away from uvigo8's frame (2.90 m across): millimetres? the robot file is in metres"
            ),
        );
        assert!(!stderr(&o).contains("slack"), "{run}: {}", stderr(&o));
    }
    // Past the parser's ±1000 m the parser asks too.
    let o = cdpr(&words("ik -r caroca --pose 0,0,1500"));
    assert_fails(&o, "(millimetres? poses are in metres)");
    // Outside the frame but not absurd: computed, with the workspace warning.
    let o = cdpr(&words("ik -r uvigo8 --pose 0,0,3"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_stderr(&o, "outside uvigo8's workspace");
}

#[test]
fn a_trajectory_in_millimetres_is_refused_with_how_far_it_is() {
    let dir = scratch("hints-mm-csv");
    let csv = dir.join("mm.csv");
    // seed 000's test volume, written in millimetres.
    std::fs::write(
        &csv,
        "t,x,y,z\n0,0,0,150\n0.5,50,0,150\n1,100,0,150\n1.5,100,100,150\n",
    )
    .expect("write");
    let path = csv.display().to_string();
    for run in [
        "simulate -r uvigo8 --model elastic --trajectory",
        "trajectory -r uvigo8 --name",
    ] {
        let o = cdpr(&with(run, &[&path]));
        assert_eq!(o.status.code(), Some(1), "{run}: {}", stdout(&o));
        assert_stderr(
            &o,
            "the pose at t = 0 s, (0, 0, 150) m, is 149 m away from uvigo8's frame (2.90 m across): millimetres? the robot file is in metres",
        );
        assert_stderr(&o, &path);
        assert!(!stderr(&o).contains("slack"), "{run}: {}", stderr(&o));
    }
}

#[test]
fn comparing_a_file_with_itself_says_the_zeros_mean_nothing() {
    let dir = scratch("hints-compare-self");
    let run = dir.join("run.csv");
    let o = cdpr(&with(
        "simulate -r uvigo8 -t poly5 --speed 0.5 --model elastic --out",
        &[&run.display().to_string()],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let run = run.display().to_string();
    let warning = "the reference and the actual are the same file";
    let o = cdpr(&with("compare --reference", &[&run, "--actual", &run]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count(&o, warning), 1, "{}", stderr(&o));
    assert_stderr(&o, "add --reference-columns _cmd");
    // The same columns through another spelling of the path: still the same file.
    let other = format!("{}/./run.csv", dir.display());
    let o = cdpr(&with(
        "compare --json --reference",
        &[&other, "--actual", &run],
    ));
    assert_eq!(count(&o, warning), 1, "{}", stderr(&o));
    // The commanded pose against the platform's: what a user means.
    let o = cdpr(&with(
        "compare --reference-columns _cmd --reference",
        &[&run, "--actual", &run],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count(&o, warning), 0, "{}", stderr(&o));
}

#[test]
fn an_infeasible_distribution_prints_its_residual_with_units() {
    // 1 kg on tensions of at most 0.1 N: nothing holds it.
    let o = cdpr(&words(
        "tensions -r uvigo8 --pose 0,0,0.15 --f-min 0 --f-max 0.1",
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let verdict = stderr(&o);
    assert!(
        verdict.contains("leaving a residual of ") && verdict.contains(" N (force), "),
        "{verdict}"
    );
    assert!(verdict.contains(" N·m (moment)"), "{verdict}");
    assert!(!verdict.contains("e0"), "{verdict}");
    let line = stdout(&o)
        .lines()
        .find(|l| l.contains("‖W f + w_g‖"))
        .map(str::to_string)
        .expect("the residual line");
    assert!(
        line.contains(" N (force), ") && line.ends_with(" N·m (moment)"),
        "{line}"
    );
    // A 3-DOF robot has no moment rows.
    let o = cdpr(&words(
        "tensions -r silva4 --pose 0,0,0.5 --f-min 0 --f-max 0.1",
    ));
    assert!(stderr(&o).contains(" N (force)"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("N·m"), "{}", stderr(&o));
    // The other kinematics outputs give their units too.
    let o = cdpr(&words("ik -r uvigo8 --pose 0,0,0.15"));
    assert!(
        stdout(&o).starts_with(
            "uvigo8 at x,y,z 0.000000, 0.000000, 0.150000 m, roll,pitch,yaw 0.000000, 0.000000, 0.000000 rad"
        ),
        "{}",
        stdout(&o)
    );
    let o = cdpr(&words("equilibrium -r uvigo8 --sag-at 0,0,0.15"));
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.starts_with("‖W f + w_g‖ = ") && l.contains(" N (force)")),
        "{}",
        stdout(&o)
    );
    let o = cdpr(&words("check uvigo8"));
    assert!(
        stdout(&o).contains("PID kp 200000 N/m, ki "),
        "{}",
        stdout(&o)
    );
}
