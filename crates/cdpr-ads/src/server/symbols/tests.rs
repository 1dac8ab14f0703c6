use super::*;
use crate::wire::decode_symbol_entry;

fn table() -> SymbolTable {
    let robot = cdpr_core::fixtures::uvigo8();
    SymbolTable::from_robot(&robot).expect("table")
}

#[test]
fn every_plc_symbol_has_its_place_type_and_unit() {
    let t = table();
    assert_eq!(t.symbols().len(), 14);
    let mut end = 0;
    for s in t.symbols() {
        assert!(s.offset as usize >= end, "{} overlaps", s.name);
        assert_eq!(s.offset % 8, 0, "{} aligned", s.name);
        end = s.offset as usize + s.size();
    }
    assert!(t.image_len() >= end);
    let cmd = t.lookup_str("GVL_Shadow.aCmdLengths").expect("cmd");
    assert_eq!(
        (cmd.ty.type_name().as_str(), cmd.size()),
        ("ARRAY [1..8] OF LREAL", 64)
    );
    assert!(cmd.comment.contains("mm"));
    let angles = t.lookup_str("GVL_Shadow.aCableAngles").expect("angles");
    assert_eq!(angles.ty.type_name(), "ARRAY [1..8,1..2] OF LREAL");
    assert!(angles.comment.contains("degrees"));
    assert_eq!(
        t.lookup_str("GVL_Shadow.bMotionEnable")
            .expect("bool")
            .size(),
        1
    );
}

#[test]
fn lookup_ignores_case_and_nul_and_resolves_elements() {
    let t = table();
    let base = t.lookup(b"gvl_shadow.aframeanchors\0").expect("found");
    assert_eq!(base.name, "GVL_Shadow.aFrameAnchors");
    let e = t
        .lookup_str("GVL_Shadow.aFrameAnchors[2, 3]")
        .expect("element");
    assert_eq!(e.offset, base.offset + (3 + 2) * 8);
    assert_eq!(e.ty, IecType::scalar(Scalar::LReal));
    assert_eq!(e.name, "GVL_Shadow.aFrameAnchors[2,3]");
    assert!(
        t.lookup_str("GVL_Shadow.aFrameAnchors[9,1]").is_none(),
        "out of bounds"
    );
    assert!(
        t.lookup_str("GVL_Shadow.aFrameAnchors[2]").is_none(),
        "both indices needed"
    );
    assert!(
        t.lookup_str("GVL_Shadow.nCycle[1]").is_none(),
        "not an array"
    );
    assert!(t.lookup(&[0xff, 0xfe]).is_none());
}

#[test]
fn symbol_entries_round_trip_and_fill_the_upload() {
    let t = table();
    let cmd = t.lookup_str("GVL_Shadow.aCmdLengths").expect("cmd");
    let bytes = t.entry_of(&cmd);
    let e = decode_symbol_entry(&bytes).expect("decodes");
    assert_eq!(
        u32::from_le_bytes(bytes[..4].try_into().expect("4")) as usize,
        bytes.len()
    );
    assert_eq!(
        (e.index_group, e.index_offset, e.size, e.data_type),
        (0x4040, cmd.offset, 64, 5)
    );
    assert_eq!(e.type_name, "ARRAY [1..8] OF LREAL");
    assert!(bytes.len() <= 798, "fits pyads' buffer");
    for cut in 0..bytes.len() {
        assert!(
            decode_symbol_entry(&bytes[..cut]).is_none(),
            "truncated at {cut}"
        );
    }
    let [count, size] = t.upload_info();
    assert_eq!((count as usize, size as usize), (14, t.upload().len()));
    let mut rest = t.upload();
    let mut n = 0;
    while let Some(e) = decode_symbol_entry(rest) {
        rest = &rest[30 + e.name.len() + e.type_name.len() + e.comment.len() + 3..];
        n += 1;
    }
    assert_eq!((n, rest.len()), (14, 0));
    assert_eq!(t.upload_info2().len(), 64);
}

#[test]
fn duplicate_names_are_refused_with_the_name() {
    let robot = cdpr_core::fixtures::uvigo8();
    let mut names = PlcSymbols::of(&robot).expect("[plc]");
    names.shadow_lengths = names.lengths.to_uppercase();
    let e = SymbolTable::for_symbols(&names, robot.cable_count()).expect_err("duplicate");
    assert!(e.to_string().contains("GVL_SHADOW.ACABLELENGTHS"), "{e}");
}
