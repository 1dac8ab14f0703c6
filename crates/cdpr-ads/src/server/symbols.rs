//! The symbol table the virtual PLC serves: every symbol of a robot's [`PlcSymbols`] with its
//! IEC 61131-3 type, size and place in the PLC data area (index group 0x4040), plus the ADS
//! symbol records (`AdsSymbolEntry`, `AdsDatatypeEntry`) clients ask for.
//!
//! Units are the controller's (mm, degrees) — the symbols mirror `assets/twincat/GVL_Shadow`.
//! Names are matched case-insensitively with a trailing NUL ignored (pyads sends one, the
//! `ads` crate does not), and array elements can be addressed as TwinCAT allows:
//! `GVL_Shadow.aCmdLengths[3]`, `GVL_Shadow.aFrameAnchors[2,1]`.

use crate::plc_symbols::PlcSymbols;
use crate::wire::{Cursor, group, len32};
use cdpr_core::robot::{Robot, RobotFileError};
use std::collections::HashMap;

/// The elementary types used here, with their ADS type codes (`ADST_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    UDInt,
    Real,
    LReal,
}

impl Scalar {
    pub fn size(self) -> usize {
        match self {
            Scalar::Bool => 1,
            Scalar::UDInt | Scalar::Real => 4,
            Scalar::LReal => 8,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "BOOL",
            Scalar::UDInt => "UDINT",
            Scalar::Real => "REAL",
            Scalar::LReal => "LREAL",
        }
    }
    /// ADST code: BOOL is ADST_BIT (33) though it takes a whole byte, as in TwinCAT.
    pub fn ads_type(self) -> u32 {
        match self {
            Scalar::Bool => 33,
            Scalar::UDInt => 19,
            Scalar::Real => 4,
            Scalar::LReal => 5,
        }
    }
    fn parse(s: &str) -> Option<Scalar> {
        match s.trim().to_ascii_uppercase().as_str() {
            "BOOL" => Some(Scalar::Bool),
            "UDINT" | "DWORD" => Some(Scalar::UDInt),
            "REAL" => Some(Scalar::Real),
            "LREAL" => Some(Scalar::LReal),
            _ => None,
        }
    }
}

/// A scalar or an array of scalars; `dims` holds (lower bound, element count) per dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IecType {
    pub scalar: Scalar,
    pub dims: Vec<(i32, u32)>,
}

impl IecType {
    pub fn scalar(scalar: Scalar) -> IecType {
        IecType {
            scalar,
            dims: Vec::new(),
        }
    }
    /// `ARRAY[1..n1, 1..n2, ...] OF scalar`.
    pub fn array(scalar: Scalar, counts: &[u32]) -> IecType {
        IecType {
            scalar,
            dims: counts.iter().map(|&n| (1, n)).collect(),
        }
    }
    pub fn elements(&self) -> usize {
        self.dims.iter().map(|&(_, n)| n as usize).product()
    }
    pub fn size(&self) -> usize {
        self.elements() * self.scalar.size()
    }
    /// The type string TwinCAT reports, e.g. `ARRAY [1..8,1..3] OF LREAL` (with the space
    /// after ARRAY that pyads' type regex expects).
    pub fn type_name(&self) -> String {
        if self.dims.is_empty() {
            return self.scalar.name().to_string();
        }
        let dims: Vec<String> = self
            .dims
            .iter()
            .map(|&(lo, n)| format!("{lo}..{}", lo as i64 + n as i64 - 1))
            .collect();
        format!("ARRAY [{}] OF {}", dims.join(","), self.scalar.name())
    }
    /// Parses what [`IecType::type_name`] writes (and `ARRAY[1..8] OF LREAL` without space).
    pub fn parse(s: &str) -> Option<IecType> {
        let s = s.trim();
        let upper = s.to_ascii_uppercase();
        let Some(rest) = upper.strip_prefix("ARRAY") else {
            return Scalar::parse(s).map(IecType::scalar);
        };
        let rest = rest.trim_start().strip_prefix('[')?;
        let (ranges, tail) = rest.split_once(']')?;
        let scalar = Scalar::parse(tail.trim_start().strip_prefix("OF")?)?;
        let mut dims = Vec::new();
        for range in ranges.split(',') {
            let (lo, hi) = range.split_once("..")?;
            let (lo, hi): (i32, i32) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
            let count = u32::try_from(i64::from(hi) - i64::from(lo) + 1).ok()?;
            if count == 0 {
                return None;
            }
            dims.push((lo, count));
        }
        Some(IecType { scalar, dims })
    }
}

/// One symbol of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Symbol {
    pub name: String,
    pub ty: IecType,
    /// Byte offset in the PLC data area (index group 0x4040).
    pub offset: u32,
    pub comment: String,
}

impl Symbol {
    pub fn size(&self) -> usize {
        self.ty.size()
    }
}

/// A resolved name: a whole symbol or one element of an array symbol.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolRef {
    /// Index of the symbol in the table.
    pub symbol: usize,
    /// The name as resolved (canonical case, with any element suffix).
    pub name: String,
    pub ty: IecType,
    pub offset: u32,
    pub comment: String,
}

impl SymbolRef {
    pub fn size(&self) -> usize {
        self.ty.size()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SymbolError {
    /// The robot file's `[plc]` section is wrong (see [`PlcSymbols::of`]).
    #[error(transparent)]
    Names(#[from] RobotFileError),
    #[error("PLC symbol `{0}` is declared twice (check the robot file's [plc] section)")]
    Duplicate(String),
    #[error("PLC symbol name `{0}` is empty or not ASCII")]
    BadName(String),
}

/// Symbol flag bits of `AdsSymbolEntry`.
const SYMBOL_FLAG_PERSISTENT_NONE: u32 = 0;
/// `AdsDatatypeEntry` flag: a data type.
const DATATYPE_FLAG_DATATYPE: u32 = 1;

/// The immutable symbol table and its pre-encoded upload blobs.
#[derive(Debug, Clone)]
pub struct SymbolTable {
    symbols: Vec<Symbol>,
    by_name: HashMap<String, usize>,
    image_len: usize,
    upload: Vec<u8>,
    datatypes: Vec<u8>,
    datatype_count: usize,
}

/// Cable count the symbol table is laid out for, and the declarations of a robot's symbols.
fn declarations(plc: &PlcSymbols, cables: u32) -> Vec<(String, IecType, &'static str)> {
    use Scalar::*;
    let m = cables;
    vec![
        (
            plc.frame_anchors.clone(),
            IecType::array(LReal, &[m, 3]),
            "frame anchors a_i (x, y, z), world frame, mm",
        ),
        (
            plc.platform_anchors.clone(),
            IecType::array(LReal, &[m, 3]),
            "platform anchors b_i (x, y, z), platform frame, mm",
        ),
        (
            plc.lengths.clone(),
            IecType::array(LReal, &[m]),
            "current cable lengths, mm",
        ),
        (
            plc.cable_angles.clone(),
            IecType::array(LReal, &[m, 2]),
            "cable angles theta_z, theta_x (seed 000 eqs. 2-3), degrees",
        ),
        (
            plc.tcp_pose.clone(),
            IecType::array(LReal, &[6]),
            "TCP pose x, y, z (mm), roll, pitch, yaw (degrees)",
        ),
        (
            plc.commanded_lengths.clone(),
            IecType::array(LReal, &[m]),
            "commanded cable lengths (motor set points), mm",
        ),
        (
            plc.cycle_counter.clone(),
            IecType::scalar(UDInt),
            "PLC task cycle counter",
        ),
        (
            plc.motion_enable.clone(),
            IecType::scalar(Bool),
            "motion enabled (axis group enabled and moving)",
        ),
        (
            plc.shadow_pose.clone(),
            IecType::array(LReal, &[6]),
            "written by the shadow: platform pose x, y, z (mm), roll, pitch, yaw (degrees)",
        ),
        (
            plc.shadow_lengths.clone(),
            IecType::array(LReal, &[m]),
            "written by the shadow: cable lengths, mm",
        ),
        (
            plc.shadow_tensions.clone(),
            IecType::array(LReal, &[m]),
            "written by the shadow: cable tensions, N",
        ),
        (
            plc.shadow_cycle.clone(),
            IecType::scalar(UDInt),
            "written by the shadow: the PLC cycle counter its outputs answer",
        ),
        (
            reaction_symbol(plc),
            IecType::scalar(UDInt),
            "PLC diagnostic: last reaction time of the shadow, PLC cycles",
        ),
    ]
}

/// The diagnostic symbol the virtual PLC publishes its measured reaction time in: beside the
/// cycle counter, in the same GVL (`GVL_Shadow.nReactionCycles` by default).
pub fn reaction_symbol(plc: &PlcSymbols) -> String {
    match plc.cycle_counter.rsplit_once('.') {
        Some((gvl, _)) => format!("{gvl}.nReactionCycles"),
        None => "nReactionCycles".to_string(),
    }
}

impl SymbolTable {
    /// The table for a robot: its `[plc]` names, arrays sized for its cables.
    pub fn from_robot(robot: &Robot) -> Result<SymbolTable, SymbolError> {
        SymbolTable::for_symbols(&PlcSymbols::of(robot)?, robot.cable_count())
    }

    /// The table of `symbols` with arrays sized for `cables` cables.
    pub fn for_symbols(symbols: &PlcSymbols, cables: usize) -> Result<SymbolTable, SymbolError> {
        let decls = declarations(symbols, len32(cables))
            .into_iter()
            .map(|(n, t, c)| (n, t, c.to_string()))
            .collect();
        SymbolTable::new(decls)
    }

    /// A table of (name, type, comment), laid out in order, each symbol 8-byte aligned as
    /// TwinCAT aligns LREALs.
    pub fn new(decls: Vec<(String, IecType, String)>) -> Result<SymbolTable, SymbolError> {
        let mut symbols = Vec::new();
        let mut by_name = HashMap::new();
        let mut offset = 0usize;
        for (name, ty, comment) in decls {
            if name.is_empty() || !name.is_ascii() || name.len() > 255 {
                return Err(SymbolError::BadName(name));
            }
            if by_name
                .insert(name.to_ascii_lowercase(), symbols.len())
                .is_some()
            {
                return Err(SymbolError::Duplicate(name));
            }
            let size = ty.size();
            symbols.push(Symbol {
                name,
                ty,
                offset: len32(offset),
                comment,
            });
            offset = (offset + size).div_ceil(8) * 8;
        }
        let mut table = SymbolTable {
            symbols,
            by_name,
            image_len: offset,
            upload: Vec::new(),
            datatypes: Vec::new(),
            datatype_count: 0,
        };
        let upload: Vec<u8> = (0..table.symbols.len())
            .flat_map(|k| table.entry_of(&table.reference(k)))
            .collect();
        table.upload = upload;
        let (datatypes, count) = table.encode_datatypes();
        table.datatypes = datatypes;
        table.datatype_count = count;
        Ok(table)
    }

    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// Bytes of the PLC data area.
    pub fn image_len(&self) -> usize {
        self.image_len
    }

    fn reference(&self, k: usize) -> SymbolRef {
        let s = &self.symbols[k];
        SymbolRef {
            symbol: k,
            name: s.name.clone(),
            ty: s.ty.clone(),
            offset: s.offset,
            comment: s.comment.clone(),
        }
    }

    /// Resolves a name as sent by a client: trailing NULs ignored, case-insensitive, with an
    /// optional element index `[i]` / `[i,j]` within the array's bounds.
    pub fn lookup(&self, raw: &[u8]) -> Option<SymbolRef> {
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        let name = std::str::from_utf8(&raw[..end]).ok()?.trim();
        self.lookup_str(name)
    }

    pub fn lookup_str(&self, name: &str) -> Option<SymbolRef> {
        let lower = name.to_ascii_lowercase();
        if let Some(&k) = self.by_name.get(&lower) {
            return Some(self.reference(k));
        }
        // An element: `base[i,j]`.
        let (base, index) = lower.strip_suffix(']')?.rsplit_once('[')?;
        let &k = self.by_name.get(base.trim_end())?;
        let s = &self.symbols[k];
        let indices: Vec<i64> = index
            .split(',')
            .map(|p| p.trim().parse::<i64>().ok())
            .collect::<Option<_>>()?;
        if indices.len() != s.ty.dims.len() {
            return None;
        }
        let mut flat = 0i64;
        for (&i, &(lo, n)) in indices.iter().zip(&s.ty.dims) {
            let pos = i - i64::from(lo);
            if pos < 0 || pos >= i64::from(n) {
                return None;
            }
            flat = flat * i64::from(n) + pos;
        }
        let offset = i64::from(s.offset) + flat * s.ty.scalar.size() as i64;
        Some(SymbolRef {
            symbol: k,
            name: format!("{}[{}]", s.name, index.replace(' ', "")),
            ty: IecType::scalar(s.ty.scalar),
            offset: u32::try_from(offset).ok()?,
            comment: s.comment.clone(),
        })
    }

    /// Indices of the symbols whose bytes overlap `offset..offset + len`.
    pub fn overlapping(&self, offset: usize, len: usize) -> impl Iterator<Item = usize> + '_ {
        self.symbols.iter().enumerate().filter_map(move |(k, s)| {
            let (start, end) = (s.offset as usize, s.offset as usize + s.size());
            (start < offset + len && offset < end).then_some(k)
        })
    }

    /// The `AdsSymbolEntry` record of a symbol (0xF009 reply, one record of 0xF00B).
    pub fn entry_of(&self, r: &SymbolRef) -> Vec<u8> {
        encode_symbol_entry(&SymbolEntry {
            index_group: group::PLC_DATA,
            index_offset: r.offset,
            size: len32(r.size()),
            data_type: r.ty.scalar.ads_type(),
            flags: SYMBOL_FLAG_PERSISTENT_NONE,
            name: r.name.clone(),
            type_name: r.ty.type_name(),
            comment: r.comment.clone(),
        })
    }

    /// The whole symbol table, back-to-back `AdsSymbolEntry` records (0xF00B).
    pub fn upload(&self) -> &[u8] {
        &self.upload
    }

    /// The data type table (0xF00E): one version-1 `AdsDatatypeEntry` per type used.
    pub fn datatype_upload(&self) -> &[u8] {
        &self.datatypes
    }

    /// 0xF00C: symbol count, upload size.
    pub fn upload_info(&self) -> [u32; 2] {
        [len32(self.symbols.len()), len32(self.upload.len())]
    }

    /// 0xF00F: symbols, upload size, data types, data type size, max/used dynamic symbols,
    /// zero-padded to the 64 bytes the `ads` crate reads.
    pub fn upload_info2(&self) -> Vec<u8> {
        let fields = [
            len32(self.symbols.len()),
            len32(self.upload.len()),
            len32(self.datatype_count),
            len32(self.datatypes.len()),
            0,
            0,
        ];
        let mut out: Vec<u8> = fields.iter().flat_map(|v| v.to_le_bytes()).collect();
        out.resize(64, 0);
        out
    }

    fn encode_datatypes(&self) -> (Vec<u8>, usize) {
        let mut seen: Vec<IecType> = Vec::new();
        for s in &self.symbols {
            for ty in [IecType::scalar(s.ty.scalar), s.ty.clone()] {
                if !seen.contains(&ty) {
                    seen.push(ty);
                }
            }
        }
        let mut out = Vec::new();
        for ty in &seen {
            let name = ty.type_name();
            let base = if ty.dims.is_empty() {
                String::new()
            } else {
                ty.scalar.name().to_string()
            };
            let mut e = Vec::new();
            for v in [1u32, 0, 0, len32(ty.size()), 0, ty.scalar.ads_type()] {
                e.extend_from_slice(&v.to_le_bytes()); // version, hashes, size, offs, type
            }
            e.extend_from_slice(&DATATYPE_FLAG_DATATYPE.to_le_bytes());
            for v in [name.len(), base.len(), 0, ty.dims.len(), 0] {
                e.extend_from_slice(&(v as u16).to_le_bytes());
            }
            for text in [&name, &base, &String::new()] {
                e.extend_from_slice(text.as_bytes());
                e.push(0);
            }
            for &(lo, n) in &ty.dims {
                e.extend_from_slice(&lo.to_le_bytes());
                e.extend_from_slice(&n.to_le_bytes());
            }
            out.extend_from_slice(&len32(e.len() + 4).to_le_bytes());
            out.extend_from_slice(&e);
        }
        (out, seen.len())
    }
}

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
