//! The GVL shipped for TwinCAT (`assets/twincat/GVL_Shadow.TcGVL`) declares every symbol of
//! `PlcSymbols::defaults()` with the type the virtual PLC serves, so a real controller and
//! `cdpr plc` look the same to the shadow.

use cdpr_ads::PlcSymbols;
use cdpr_ads::server::SymbolTable;
use cdpr_ads::wire::IecType;
use std::collections::HashMap;

/// The text of a file shipped in `assets/twincat/`.
fn twincat(file: &str) -> String {
    let path = cdpr_core::fixtures::workspace_root()
        .join("assets/twincat")
        .join(file);
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{file} shipped: {e}"))
}

/// `name : TYPE;` declarations of the GVL, with MAX_CABLES substituted and spaces normalised.
fn gvl_declarations() -> (String, HashMap<String, IecType>) {
    let text = twincat("GVL_Shadow.TcGVL");
    let gvl = text
        .split("GVL Name=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("GVL name")
        .to_string();
    let cables = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("MAX_CABLES : UDINT :="))
        .and_then(|v| v.trim().trim_end_matches(';').parse::<u32>().ok())
        .expect("MAX_CABLES");
    let mut vars = HashMap::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        let Some((name, ty)) = code.strip_suffix(';').and_then(|c| c.split_once(':')) else {
            continue;
        };
        if ty.contains(":=") {
            continue; // the constant
        }
        let ty = ty.replace("MAX_CABLES", &cables.to_string());
        let ty = IecType::parse(&ty).unwrap_or_else(|| panic!("GVL type `{ty}` of {name}"));
        vars.insert(format!("{gvl}.{}", name.trim()), ty);
    }
    (gvl, vars)
}

/// uvigo8-pulleys with uvigo8-drives' drives: every symbol the virtual PLC may serve (the
/// pulley arrays, the drives').
fn everything() -> cdpr_core::robot::Robot {
    let mut robot = cdpr_core::fixtures::robot("uvigo8-pulleys");
    robot.drives = cdpr_core::fixtures::robot("uvigo8-drives").drives;
    robot
}

#[test]
fn gvl_declares_every_default_symbol_with_the_served_type() {
    let (gvl, vars) = gvl_declarations();
    assert_eq!(gvl, "GVL_Shadow");
    // uvigo8-pulleys: uvigo8's symbols and the optional pulley arrays.
    let pulleys = cdpr_core::fixtures::robot("uvigo8-pulleys");
    assert_eq!(
        PlcSymbols::of(&pulleys).expect("[plc]"),
        PlcSymbols::asking_for_everything(),
        "uvigo8-pulleys spells out the defaults (and, having pulleys, asks for them)"
    );
    let robot = everything();
    let table = SymbolTable::from_robot(&robot).expect("table");
    for s in table.symbols() {
        let declared = vars
            .get(&s.name)
            .unwrap_or_else(|| panic!("{} missing from the GVL", s.name));
        assert_eq!(declared, &s.ty, "{}", s.name);
    }
    assert_eq!(
        vars.len(),
        table.symbols().len(),
        "no extra variables: {:?}",
        vars.keys()
    );
    for name in &PlcSymbols::of(&robot).expect("[plc]").writable {
        assert!(vars.contains_key(name), "writable {name} declared");
    }
}

/// The TwinCAT README's table of symbols: (short name, "required"/"optional", type column).
fn readme_table() -> Vec<(String, String, String)> {
    let text = twincat("README.md");
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells[1].split('`').nth(1).expect("`name`").to_string();
            (name, cells[3].to_string(), cells[2].to_string())
        })
        .collect()
}

#[test]
fn the_twincat_readme_says_which_symbols_are_required_and_their_types() {
    let robot = everything();
    let table = SymbolTable::from_robot(&robot).expect("table");
    let rows = readme_table();
    assert_eq!(rows.len(), table.symbols().len(), "{rows:?}");
    let names = PlcSymbols::of(&robot).expect("[plc]");
    let d = names.served_drives();
    let optional = [
        names.reaction(),
        names.pulley_radii,
        names.pulley_axes,
        d.actual_torques,
        d.actual_positions,
        d.shadow_torques,
        d.feedforward_torques,
        d.axis_positions,
        d.axis_torques,
        d.following_errors,
        d.axis_error,
        d.axis_error_id,
    ];
    for s in table.symbols() {
        let short = s.name.trim_start_matches("GVL_Shadow.");
        let (_, need, ty) = rows
            .iter()
            .find(|(n, _, _)| n == short)
            .unwrap_or_else(|| panic!("{short} missing from the README's table"));
        let expected = if optional.contains(&s.name)
            || s.name == cdpr_ads::plc_symbols::INTERFERENCE_DEFAULT
        {
            "optional"
        } else {
            "required"
        };
        assert_eq!(need, expected, "{short}");
        let ty = IecType::parse(&ty.replace("1..n", "1..8"));
        assert_eq!(ty.as_ref(), Some(&s.ty), "{short}: README type");
    }
}

#[test]
fn the_readme_snippet_declares_every_variable_it_uses() {
    let text = twincat("README.md");
    let code = text
        .split("```iecst")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("an iecst snippet");
    let code: String = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let (_, gvl) = gvl_declarations();
    let vars = code
        .split("VAR")
        .nth(1)
        .and_then(|s| s.split("END_VAR").next())
        .expect("a VAR block");
    let declared: Vec<&str> = vars
        .lines()
        .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim()))
        .collect();
    const KEYWORDS: &[&str] = &[
        "PROGRAM",
        "END_PROGRAM",
        "VAR",
        "END_VAR",
        "FOR",
        "TO",
        "DO",
        "END_FOR",
        "IF",
        "THEN",
        "END_IF",
        "ARRAY",
        "OF",
        "BOOL",
        "UDINT",
        "AXIS_REF",
        "MAIN",
    ];
    let mut previous = ' ';
    let mut word = String::new();
    let mut after_dot = false;
    let mut used = Vec::new();
    for c in code.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            if word.is_empty() {
                after_dot = previous == '.';
            }
            word.push(c);
        } else if !word.is_empty() {
            if !after_dot && !word.chars().next().is_some_and(|d| d.is_ascii_digit()) {
                used.push((word.clone(), c == '.'));
            }
            word.clear();
        }
        previous = c;
    }
    for (name, _) in &used {
        assert!(
            KEYWORDS.contains(&name.as_str())
                || name == "GVL_Shadow"
                || declared.contains(&name.as_str()),
            "`{name}` is used in the README's snippet but not declared there"
        );
    }
    // Every GVL_Shadow.<member> it names is declared in the GVL (or is its constant).
    for member in code.split("GVL_Shadow.").skip(1) {
        let member: String = member
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        assert!(
            member == "MAX_CABLES" || gvl.contains_key(&format!("GVL_Shadow.{member}")),
            "GVL_Shadow.{member} is not in the GVL"
        );
    }
}
