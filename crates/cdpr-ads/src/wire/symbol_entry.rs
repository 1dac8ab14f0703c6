//! `AdsSymbolEntry`: the record a device answers about a symbol (0xF009) and concatenates
//! for the symbol upload (0xF00B).

use super::{Cursor, IecType, len32};

/// An `AdsSymbolEntry` (Beckhoff AdsDef.h): what 0xF009 answers and 0xF00B concatenates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolEntry {
    pub index_group: u32,
    pub index_offset: u32,
    pub size: u32,
    pub data_type: u32,
    pub flags: u32,
    pub name: String,
    pub type_name: String,
    pub comment: String,
}

/// Fixed part of an `AdsSymbolEntry`: 6 × u32 + 3 × u16.
const SYMBOL_ENTRY_FIXED: usize = 30;

/// Encodes a record: entryLength, group, offset, size, type, flags, three string lengths,
/// then the three strings each NUL-terminated. pyads insists that entryLength equals the
/// bytes returned, so nothing is padded.
pub fn encode_symbol_entry(e: &SymbolEntry) -> Vec<u8> {
    let len = SYMBOL_ENTRY_FIXED + e.name.len() + e.type_name.len() + e.comment.len() + 3;
    let mut out = Vec::with_capacity(len);
    for v in [
        len32(len),
        e.index_group,
        e.index_offset,
        e.size,
        e.data_type,
        e.flags,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for s in [&e.name, &e.type_name, &e.comment] {
        out.extend_from_slice(&(s.len().min(u16::MAX as usize) as u16).to_le_bytes());
    }
    for s in [&e.name, &e.type_name, &e.comment] {
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    }
    out
}

/// Decodes one record by its declared lengths; `None` if it is truncated or a string runs past
/// `entryLength`.
///
/// The strings are read by their lengths, and the one byte after the name and after the type
/// is skipped whatever it holds: TwinCAT terminates each string with a NUL (and its
/// `entryLength` counts all three, plus any padding or TwinCAT 3 extras after the comment),
/// pyads' test server (`PLCVariable.get_packed_info`, pyads 3.6) separates them with a space
/// and leaves the comment unterminated (its `entryLength` counts +1 for name and type only).
pub fn decode_symbol_entry(b: &[u8]) -> Option<SymbolEntry> {
    let mut c = Cursor::new(b);
    let entry_len = c.u32()? as usize;
    if entry_len > b.len() || entry_len < SYMBOL_ENTRY_FIXED {
        return None;
    }
    let mut c = Cursor::new(&b[4..entry_len]);
    let (index_group, index_offset, size, data_type, flags) =
        (c.u32()?, c.u32()?, c.u32()?, c.u32()?, c.u32()?);
    let (ln, lt, lc) = (c.u16()? as usize, c.u16()? as usize, c.u16()? as usize);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let name = text(c.bytes(ln)?);
    c.bytes(1)?; // NUL (TwinCAT) or space (pyads)
    let type_name = text(c.bytes(lt)?);
    // An empty comment may end the entry right after the type's separator, or even without it.
    let comment = if lc == 0 {
        String::new()
    } else {
        c.bytes(1)?;
        text(c.bytes(lc)?)
    };
    Some(SymbolEntry {
        index_group,
        index_offset,
        size,
        data_type,
        flags,
        name,
        type_name,
        comment,
    })
}

/// `ADSDATATYPEFLAG_DATATYPE`: the entry describes a data type (not a data item).
pub const DATATYPE_FLAG_DATATYPE: u32 = 1;

/// The `AdsDatatypeEntry` of an elementary type or an array of one: what 0xF011 answers for
/// its name and 0xF00E concatenates. Layout (Beckhoff's `AdsDatatypeEntry`, as ads-client
/// 2.1's `parseAdsResponseDataType` reads it): entryLength, version (1), hashValue,
/// typeHashValue, size, offs, dataType (ADST_*), flags, then u16 nameLength, typeLength,
/// commentLength, arrayDim, subItems; name, type and comment each NUL-terminated; then
/// (lBound i32, elements u32) per dimension. An elementary type names no base type (type
/// "" — ads-client's test for "final form"); an array names its element type, so that a
/// client resolves `ARRAY [1..8] OF LREAL` to LREAL. No flag-dependent extras (type GUID,
/// attributes) are sent, and the flags say so.
pub fn encode_datatype_entry(ty: &IecType) -> Vec<u8> {
    let name = ty.type_name();
    let base = if ty.dims.is_empty() {
        String::new()
    } else {
        ty.scalar.name().to_string()
    };
    let mut e = Vec::with_capacity(64 + name.len() + 8 * ty.dims.len());
    for v in [1u32, 0, 0, len32(ty.size()), 0, ty.scalar.ads_type()] {
        e.extend_from_slice(&v.to_le_bytes()); // version, hashes, size, offs, type
    }
    e.extend_from_slice(&DATATYPE_FLAG_DATATYPE.to_le_bytes());
    for v in [name.len(), base.len(), 0, ty.dims.len(), 0] {
        e.extend_from_slice(&(v.min(u16::MAX as usize) as u16).to_le_bytes());
    }
    for text in [name.as_str(), base.as_str(), ""] {
        e.extend_from_slice(text.as_bytes());
        e.push(0);
    }
    for &(lo, n) in &ty.dims {
        e.extend_from_slice(&lo.to_le_bytes());
        e.extend_from_slice(&n.to_le_bytes());
    }
    let mut out = Vec::with_capacity(e.len() + 4);
    out.extend_from_slice(&len32(e.len() + 4).to_le_bytes());
    out.extend_from_slice(&e);
    out
}

#[cfg(test)]
mod tests;
