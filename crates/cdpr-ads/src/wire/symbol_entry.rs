//! `AdsSymbolEntry`: the record a device answers about a symbol (0xF009) and concatenates
//! for the symbol upload (0xF00B).

use super::{Cursor, len32};

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

#[cfg(test)]
mod tests;
