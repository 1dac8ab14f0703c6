//! Numbers as people write them: one format per quantity, no `9.607e0`-style exponents for
//! ordinary magnitudes, no Debug forms (`[0.0, …]`, enum names) in the text of the commands.

use crate::common::*;

#[test]
fn inertia_and_the_fk_method_read_as_people_write_them() {
    // Inertia in plain notation (not 1.3542e-2), the FK method by name (not `Lm`).
    let out = stdout(&cdpr(&["check", "uvigo8"]));
    assert!(
        out.contains("inertia diag (0.013542, 0.013542, 0.0066667) kg·m²"),
        "{out}"
    );
    let out = stdout(&cdpr(&words(
        "fk --robot silva4 --lengths 1.36206030,1.42183276,1.22378845,1.15380164",
    )));
    assert!(out.contains("method    lm (Levenberg–Marquardt"), "{out}");
}

/// One number format per quantity — no `9.607e0`-style exponents for ordinary
/// magnitudes and no Debug forms (`[0.0, …]`, enum names) in the text of these commands.
#[test]
fn ordinary_numbers_print_without_exponents_or_debug_forms() {
    let runs = [
        "trajectory -r uvigo8 --name seed000 --check --speed 2",
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic",
        "check robots/uvigo8.toml",
        "equilibrium -r uvigo8 --sag-at 0,0,0.05",
        "ik -r uvigo8 --pose 0,0,0.15",
        "fk -r uvigo8 --lengths 0,1 --method lm",
        "ik -r keops --pose 0,0,5",
        "ik -r rssu2 --pose 0,0,0,80,0,0",
        "workspace -r uvigo8 --grid 10 --no-plot",
    ];
    let exponent = |s: &str| {
        // A mantissa, then e, then an exponent: 9.607e0, 2.1e-17, 1e3.
        let b = s.as_bytes();
        (1..b.len()).any(|k| {
            b[k] == b'e'
                && b[k - 1].is_ascii_digit()
                && b.get(k + 1)
                    .is_some_and(|c| c.is_ascii_digit() || *c == b'-')
                && b.get(k + 2).is_some_and(|c| c.is_ascii_digit())
        })
    };
    for run in runs {
        let o = cdpr(&words(run));
        let text = format!("{}{}", stdout(&o), stderr(&o));
        for line in text.lines() {
            // Residuals are tiny quantities, shown in scientific notation on purpose.
            if line.starts_with("residual") || line.contains("‖W f + w_g‖") {
                continue;
            }
            assert!(!exponent(line), "{run}: exponent in `{line}`");
            assert!(
                !line.contains("[0.0, ") && !line.contains(", 0.0]"),
                "{run}: Debug array in `{line}`"
            );
            assert!(
                !line.contains("[\"") && !line.contains(".1, -0.1"),
                "{run}: Debug list in `{line}`"
            );
            for debug in [
                "Lm",
                "Elastic",
                "Length,",
                "Some(",
                "None",
                "Unreachable",
                "Stroke",
                "CrankLimit",
            ] {
                assert!(!line.contains(debug), "{run}: `{debug}` in `{line}`");
            }
        }
    }
}
