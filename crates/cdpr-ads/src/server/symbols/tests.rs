use super::*;

fn table() -> SymbolTable {
    let robot = cdpr_core::fixtures::uvigo8();
    SymbolTable::from_robot(&robot).expect("table")
}

#[test]
fn types_print_as_twincat_does_and_parse_back() {
    let t = IecType::array(Scalar::LReal, &[8, 3]);
    assert_eq!(t.type_name(), "ARRAY [1..8,1..3] OF LREAL");
    assert_eq!(t.size(), 192);
    assert_eq!(IecType::parse(&t.type_name()), Some(t));
    assert_eq!(
        IecType::parse("ARRAY[0..5] OF REAL").map(|t| t.size()),
        Some(24)
    );
    assert_eq!(
        IecType::parse("udint"),
        Some(IecType::scalar(Scalar::UDInt))
    );
    assert_eq!(IecType::parse("ARRAY [1..0] OF LREAL"), None);
    assert_eq!(IecType::parse("ST_Vec3"), None);
}

#[test]
fn every_plc_symbol_has_its_place_type_and_unit() {
    let t = table();
    assert_eq!(t.symbols().len(), 13);
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
    assert_eq!((count as usize, size as usize), (13, t.upload().len()));
    let mut rest = t.upload();
    let mut n = 0;
    while let Some(e) = decode_symbol_entry(rest) {
        rest = &rest[30 + e.name.len() + e.type_name.len() + e.comment.len() + 3..];
        n += 1;
    }
    assert_eq!((n, rest.len()), (13, 0));
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

#[test]
fn reaction_symbol_sits_in_the_counters_gvl() {
    let mut p = PlcSymbols::defaults();
    assert_eq!(reaction_symbol(&p), "GVL_Shadow.nReactionCycles");
    p.cycle_counter = "MAIN.fbRobot.nCycle".into();
    assert_eq!(reaction_symbol(&p), "MAIN.fbRobot.nReactionCycles");
}

/// An `AdsSymbolEntry` built by hand: the fixed part, then `text` as given (strings and
/// whatever separates them), with `entry_len` as declared.
fn entry_bytes(entry_len: usize, lengths: [u16; 3], text: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [entry_len as u32, 0x4040, 0x28, 64, 5, 8] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for n in lengths {
        b.extend_from_slice(&n.to_le_bytes());
    }
    b.extend_from_slice(text);
    b
}

#[test]
fn twincat_entries_decode_by_their_lengths_with_padding_after_the_comment() {
    // TwinCAT: each string NUL-terminated, entryLength counting the three NULs and 4 bytes of
    // padding (TwinCAT 3 appends more: GUIDs, attributes) that the decoder must skip.
    let text = b"GVL.aCmd\0ARRAY [1..8] OF LREAL\0set points, mm\0\xAA\xBB\xCC\xDD";
    let b = entry_bytes(30 + text.len(), [8, 21, 14], text);
    let e = decode_symbol_entry(&b).expect("decodes");
    assert_eq!(
        (e.name.as_str(), e.type_name.as_str(), e.comment.as_str()),
        ("GVL.aCmd", "ARRAY [1..8] OF LREAL", "set points, mm")
    );
    assert_eq!(
        (e.index_group, e.index_offset, e.size, e.data_type, e.flags),
        (0x4040, 0x28, 64, 5, 8)
    );
}

#[test]
fn pyads_test_server_entries_decode_without_terminators() {
    // pyads 3.6 `PLCVariable.get_packed_info`: name, 0x20, type, 0x20, comment (unterminated);
    // entryLength = 30 + name + 1 + type + 1 + comment.
    let text = b"GVL_Shadow.nCycle UDINT PLC cycles";
    let b = entry_bytes(30 + 17 + 1 + 5 + 1 + 10, [17, 5, 10], text);
    assert_eq!(b.len(), 30 + text.len());
    let e = decode_symbol_entry(&b).expect("decodes");
    assert_eq!(
        (e.name.as_str(), e.type_name.as_str(), e.comment.as_str()),
        ("GVL_Shadow.nCycle", "UDINT", "PLC cycles")
    );
    // Its usual case: no comment at all, the entry ending on the type's separator.
    let text = b"GVL_Shadow.aCmdLengths ARRAY [1..8] OF LREAL ";
    let b = entry_bytes(30 + text.len(), [22, 21, 0], text);
    let e = decode_symbol_entry(&b).expect("decodes");
    assert_eq!(
        (e.name.as_str(), e.type_name.as_str(), e.comment.as_str()),
        ("GVL_Shadow.aCmdLengths", "ARRAY [1..8] OF LREAL", "")
    );
    assert_eq!(
        IecType::parse(&e.type_name).map(|t| t.size()),
        Some(64),
        "the type string parses as TwinCAT's"
    );
}

#[test]
fn entries_whose_strings_run_past_the_entry_are_refused() {
    let text = b"GVL_Shadow.nCycle UDINT PLC cycles";
    let exact = 30 + text.len();
    assert!(decode_symbol_entry(&entry_bytes(exact, [17, 5, 10], text)).is_some());
    // Each length one too long runs past entryLength (the buffer holds the bytes: it is the
    // declared entry that is too short).
    for lengths in [[17, 5, 11], [17, 16, 10], [31, 5, 0], [17, 5 + 1 + 10, 1]] {
        let b = entry_bytes(exact, lengths, text);
        assert!(decode_symbol_entry(&b).is_none(), "{lengths:?}");
    }
    // entryLength past the bytes received, or shorter than the fixed part.
    let mut long = entry_bytes(exact + 1, [17, 5, 10], text);
    assert!(decode_symbol_entry(&long).is_none());
    long.push(0);
    assert!(
        decode_symbol_entry(&long).is_some(),
        "once the byte is there"
    );
    assert!(decode_symbol_entry(&entry_bytes(29, [0, 0, 0], b"")).is_none());
    // A comment that starts beyond the entry (no separator room left) is refused too.
    let b = entry_bytes(30 + 17 + 1 + 5, [17, 5, 1], b"GVL_Shadow.nCycle UDINT");
    assert!(decode_symbol_entry(&b).is_none());
}
