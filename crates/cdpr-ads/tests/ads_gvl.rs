//! The GVL shipped for TwinCAT (`assets/twincat/GVL_Shadow.TcGVL`) declares every symbol of
//! `PlcSymbols::defaults()` with the type the virtual PLC serves, so a real controller and
//! `cdpr plc` look the same to the shadow.

use cdpr_ads::plc::{IecType, SymbolTable};
use cdpr_core::robot::PlcSymbols;
use std::collections::HashMap;

/// `name : TYPE;` declarations of the GVL, with MAX_CABLES substituted and spaces normalised.
fn gvl_declarations() -> (String, HashMap<String, IecType>) {
    let path = cdpr_core::fixtures::workspace_root().join("assets/twincat/GVL_Shadow.TcGVL");
    let text = std::fs::read_to_string(path).expect("GVL shipped");
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

#[test]
fn gvl_declares_every_default_symbol_with_the_served_type() {
    let (gvl, vars) = gvl_declarations();
    assert_eq!(gvl, "GVL_Shadow");
    let robot = cdpr_core::fixtures::uvigo8();
    assert_eq!(
        robot.plc,
        PlcSymbols::defaults(),
        "uvigo8 spells out the defaults"
    );
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
    for name in &robot.plc.writable {
        assert!(vars.contains_key(name), "writable {name} declared");
    }
}
