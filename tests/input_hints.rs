//! What a new user is told when an input is probably not what they meant: angles in degrees
//! given as radians, poses and trajectories in millimetres, a file compared with itself, and a
//! residual printed without its unit.

mod common;
use common::*;

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

