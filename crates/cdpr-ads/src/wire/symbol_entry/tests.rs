use super::*;
use crate::wire::IecType;

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
