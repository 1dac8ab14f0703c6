//! The fitted robot file: the original file's text with the fitted values written in (its
//! comments, layout and every other key kept, `toml_edit`), each fitted key preceded by a
//! comment giving per cable the value's standard error, and the file's head saying what was
//! fitted from what. The offsets of the measurements (torque, payout) are not robot-file
//! keys: the comment at the head gives them, for the drives' and the encoders' settings.
//! When J is fitted and the file derives the drives' gains from J, the gains the drives have
//! are written explicitly, so that the fitted file's drives are tuned as the real ones are.

use super::fit::Calibration;
use super::model::Quantity;
use crate::robot::{Robot, Stiffness};
use toml_edit::{Array, DocumentMut, Item, Table, Value};

/// Why a fitted file cannot be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OutputError {
    #[error("{file}: not TOML any more ({message})")]
    Unreadable { file: String, message: String },
    #[error("{file}: no [{table}] table to write the fitted `{key}` into")]
    NoTable {
        file: String,
        table: &'static str,
        key: &'static str,
    },
}

/// `text` (the robot file `file` of `robot`) with `calibration`'s values written in;
/// `source` names the recording in the head comment.
pub fn fitted_text(
    text: &str,
    file: &str,
    robot: &Robot,
    calibration: &Calibration,
    source: &str,
) -> Result<String, OutputError> {
    let mut doc: DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| OutputError::Unreadable {
                file: file.to_string(),
                message: e.message().to_string(),
            })?;
    let fitted = calibration.robot(robot);
    let errors = |q: Quantity, unit_scale: f64, unit: &str| -> Vec<String> {
        robot
            .cables
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                calibration
                    .estimate(i, q)
                    .map(|e| format!("{} ±{} {unit}", c.name, number(e.std_error * unit_scale)))
            })
            .collect()
    };
    let fitted_any =
        |q: Quantity| (0..robot.cables.len()).any(|i| calibration.estimate(i, q).is_some());

    // [cables]: frame anchors (mm errors), stiffness or EA.
    let anchors = [Quantity::AnchorX, Quantity::AnchorY, Quantity::AnchorZ];
    if anchors.iter().any(|&q| fitted_any(q)) {
        let cables = table_of(&mut doc, file, "cables", "frame_anchors")?;
        let mut rows = Array::new();
        for c in &fitted.cables {
            let mut row = Array::new();
            for v in [c.frame_anchor.x, c.frame_anchor.y, c.frame_anchor.z] {
                row.push(round(v, 6));
            }
            let mut value = Value::Array(row);
            value.decor_mut().set_prefix("\n  ");
            rows.push_formatted(value);
        }
        rows.set_trailing("\n");
        rows.set_trailing_comma(true);
        let lines: Vec<String> = (0..robot.cables.len())
            .filter_map(|i| {
                let parts: Vec<String> = anchors
                    .iter()
                    .filter_map(|&q| {
                        calibration
                            .estimate(i, q)
                            .map(|e| format!("{} ±{:.3} mm", &q.name()[13..], e.std_error * 1e3))
                    })
                    .collect();
                (!parts.is_empty())
                    .then(|| format!("#   {}: {}", robot.cables[i].name, parts.join(", ")))
            })
            .collect();
        set_commented(
            cables,
            "frame_anchors",
            Value::Array(rows),
            &format!(
                "# Fitted frame anchors (standard errors):\n{}\n",
                lines.join("\n")
            ),
        );
    }
    if fitted_any(Quantity::Stiffness) {
        let cables = table_of(&mut doc, file, "cables", "stiffness")?;
        let (key, unit) = match robot.cables.first().map(|c| c.stiffness) {
            Some(Stiffness::Ea(_)) => ("ea", "N"),
            _ => ("stiffness", "N/m"),
        };
        let values = fitted.cables.iter().map(|c| match c.stiffness {
            Stiffness::Constant(k) | Stiffness::Ea(k) => round(k, 1),
        });
        set_commented(
            cables,
            key,
            Value::Array(values.collect()),
            &block(
                &format!("Fitted {key} per cable (standard errors)"),
                &errors(Quantity::Stiffness, 1.0, unit),
            ),
        );
    }

    // [winch]: the drives' J, b, τ_c, and the gains the drives have.
    let drive_keys = [
        (Quantity::RotorInertia, "rotor_inertia", "kg·m²"),
        (Quantity::ViscousFriction, "viscous_friction", "N·m·s/rad"),
        (Quantity::CoulombFriction, "coulomb_friction", "N·m"),
    ];
    if drive_keys.iter().any(|&(q, _, _)| fitted_any(q)) {
        let winch = table_of(&mut doc, file, "winch", "rotor_inertia")?;
        for (q, key, unit) in drive_keys {
            if !fitted_any(q) {
                continue;
            }
            let values = fitted.drives.iter().map(|d| match q {
                Quantity::RotorInertia => round_significant(d.rotor_inertia),
                Quantity::ViscousFriction => round_significant(d.viscous_friction),
                _ => round_significant(d.coulomb_friction),
            });
            set_commented(
                winch,
                key,
                Value::Array(values.collect()),
                &block(
                    &format!("Fitted {key} per drive (standard errors)"),
                    &errors(q, 1.0, unit),
                ),
            );
        }
        if fitted_any(Quantity::RotorInertia) {
            let gains = [
                (
                    "position_gain",
                    robot
                        .drives
                        .iter()
                        .map(|d| d.position_gain)
                        .collect::<Vec<_>>(),
                ),
                (
                    "velocity_gain",
                    robot.drives.iter().map(|d| d.velocity_gain).collect(),
                ),
                (
                    "integral_time",
                    robot.drives.iter().map(|d| d.integral_time).collect(),
                ),
            ];
            for (key, values) in gains {
                if winch.contains_key(key) {
                    continue;
                }
                set_commented(
                    winch,
                    key,
                    Value::Array(values.into_iter().map(round_significant).collect()),
                    &format!(
                        "# The drives' {key} as tuned (the file derived it from the J before the fit)\n"
                    ),
                );
            }
        }
    }

    // The head: what was fitted from what, and the measurements' offsets.
    let offsets = |q: Quantity, scale: f64, unit: &str| -> Vec<String> {
        (0..robot.cables.len())
            .filter_map(|i| {
                calibration.estimate(i, q).map(|e| {
                    format!(
                        "{} {} ±{} {unit}",
                        robot.cables[i].name,
                        number(e.value * scale),
                        number(e.std_error * scale)
                    )
                })
            })
            .collect()
    };
    let mut head = block(
        &format!(
            "Fitted by `cdpr calibrate` to {source} ({} samples): {} parameters fitted",
            calibration.samples,
            calibration.parameters.len()
        ),
        &[],
    );
    if !calibration.not_excited.is_empty() {
        let names: Vec<String> = calibration
            .not_excited
            .iter()
            .map(|u| format!("{} of {}", u.quantity.name(), u.cable_name))
            .collect();
        head.push_str(&block("Not excited by the run, left as they were", &names));
    }
    let torque = offsets(Quantity::TorqueOffset, 1.0, "N·m");
    if !torque.is_empty() {
        head.push_str(&block(
            "The drives' torques read off by (reported minus true)",
            &torque,
        ));
    }
    let payout = offsets(Quantity::LengthOffset, 1e3, "mm");
    if !payout.is_empty() {
        head.push_str(&block(
            "The measured payouts short of the true ones by",
            &payout,
        ));
    }
    Ok(format!("{head}{doc}"))
}

/// The table `table` of `doc` (the file `file`), into which `key` is to be written.
fn table_of<'d>(
    doc: &'d mut DocumentMut,
    file: &str,
    table: &'static str,
    key: &'static str,
) -> Result<&'d mut Table, OutputError> {
    doc.get_mut(table)
        .and_then(Item::as_table_mut)
        .ok_or(OutputError::NoTable {
            file: file.to_string(),
            table,
            key,
        })
}

/// A comment block: `title`, then `entries` four to a line.
fn block(title: &str, entries: &[String]) -> String {
    let mut text = format!("# {title}{}\n", if entries.is_empty() { "." } else { ":" });
    for line in entries.chunks(4) {
        text.push_str(&format!("#   {}\n", line.join(", ")));
    }
    text
}

/// A standard error or an offset, to three significant digits.
fn number(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-2 || v.abs() >= 1e5) {
        format!("{v:.2e}")
    } else {
        format!("{v:.3}")
    }
}

/// Sets `key` of `table` to `value`, its comment `comment` on the lines above it (the value
/// replaced in place when the key exists, its own trailing comment dropped).
fn set_commented(table: &mut Table, key: &str, mut value: Value, comment: &str) {
    value.decor_mut().set_prefix(" ");
    value.decor_mut().set_suffix("");
    table.insert(key, Item::Value(value));
    if let Some(mut k) = table.key_mut(key) {
        k.leaf_decor_mut().set_prefix(comment);
    }
}

/// `v` to `decimals` places, as the file shows it (1 µm anchors, 0.1 N/m stiffness).
fn round(v: f64, decimals: usize) -> f64 {
    format!("{v:.decimals$}").parse().unwrap_or(v)
}

/// `v` to six significant digits.
fn round_significant(v: f64) -> f64 {
    format!("{v:.5e}").parse().unwrap_or(v)
}
