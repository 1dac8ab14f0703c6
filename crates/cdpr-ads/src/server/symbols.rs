//! The symbol table the virtual PLC serves: every symbol of a robot's [`PlcSymbols`] with its
//! IEC 61131-3 type, size and place in the PLC data area (index group 0x4040), plus the ADS
//! symbol records (`AdsSymbolEntry`, `AdsDatatypeEntry`) clients ask for.
//!
//! Units are the controller's (mm, degrees) — the symbols mirror `assets/twincat/GVL_Shadow`.
//! Names are matched case-insensitively with a trailing NUL ignored (pyads sends one, the
//! `ads` crate does not), and array elements can be addressed as TwinCAT allows:
//! `GVL_Shadow.aCmdLengths[3]`, `GVL_Shadow.aFrameAnchors[2,1]`.

use crate::plc_symbols::{PlcSymbols, PositionUnit, TorqueUnit};
use crate::wire::{
    IecType, Scalar, SymbolEntry, encode_datatype_entry, encode_symbol_entry, group, len32,
};
use cdpr_core::robot::{Robot, RobotFileError};
use std::collections::HashMap;

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

/// The immutable symbol table and its pre-encoded upload blobs.
#[derive(Debug, Clone)]
pub struct SymbolTable {
    symbols: Vec<Symbol>,
    by_name: HashMap<String, usize>,
    /// Per symbol: whether a client may write it (the shadow's allow-list) or only the PLC
    /// task (see [`SymbolTable::protected_in`]).
    writable: Vec<bool>,
    image_len: usize,
    upload: Vec<u8>,
    datatypes: Vec<u8>,
    datatype_count: usize,
}

/// Cable count the symbol table is laid out for, and the declarations of a robot's symbols
/// (the pulley arrays only when `pulleys`).
fn declarations(
    plc: &PlcSymbols,
    cables: u32,
    pulleys: bool,
) -> Vec<(String, IecType, &'static str)> {
    use Scalar::*;
    let m = cables;
    let mut out = vec![
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
            plc.reaction(),
            IecType::scalar(UDInt),
            "PLC diagnostic: last reaction time of the shadow, PLC cycles",
        ),
        (
            plc.interference
                .clone()
                .unwrap_or_else(|| crate::plc_symbols::INTERFERENCE_DEFAULT.to_string()),
            IecType::scalar(Bool),
            "written by the shadow: cables or platform closer than the clearance to each other or an obstacle",
        ),
    ];
    if !plc.drives.scaling.is_empty() {
        let d = plc.served_drives();
        let torque = match d.actual_torque_unit {
            TorqueUnit::Permille => Int,
            TorqueUnit::NewtonMetre | TorqueUnit::Percent => LReal,
        };
        let (position, position_comment) = match d.actual_position_unit {
            PositionUnit::Millimetres => {
                (LReal, "the drives' actual positions as cable lengths, mm")
            }
            PositionUnit::Increments => (
                DInt,
                "the drives' actual motor positions, encoder increments from zero payout",
            ),
        };
        out.extend([
            (
                d.actual_torques,
                IecType::array(torque, &[m]),
                "the drives' actual torques, motor side ([plc] actual_torque_unit)",
            ),
            (d.actual_positions, IecType::array(position, &[m]), position_comment),
            (
                d.shadow_torques,
                IecType::array(LReal, &[m]),
                "written by the shadow: its motor torques, Nm",
            ),
            (
                d.feedforward_torques,
                IecType::array(LReal, &[m]),
                "written by the shadow: the torque each drive needs one PLC cycle ahead, Nm",
            ),
            (
                d.axis_positions,
                IecType::array(DInt, &[m]),
                "written by the shadow standing in for the drives: each axis's actual position, encoder increments (the NC encoder's input)",
            ),
            (
                d.axis_torques,
                IecType::array(Int, &[m]),
                "written by the shadow standing in for the drives: each axis's actual torque, per mille of rated (CiA 402 0x6077)",
            ),
            (
                d.following_errors,
                IecType::array(LReal, &[m]),
                "PLC: the emulated axes' following errors (set point - actual position), mm",
            ),
            (
                d.axis_error,
                IecType::scalar(Bool),
                "PLC: an emulated axis is in error (following-error monitoring)",
            ),
            (
                d.axis_error_id,
                IecType::scalar(UDInt),
                "PLC: the emulated axes' NC error code (0x4550: following error; 0: none)",
            ),
        ]);
    }
    if pulleys {
        out.extend([
            (
                plc.pulley_radii.clone(),
                IecType::array(LReal, &[m]),
                "swivel-pulley radii, mm (0: the cable leaves at its frame anchor)",
            ),
            (
                plc.pulley_axes.clone(),
                IecType::array(LReal, &[m, 3]),
                "swivel-pulley axes (x, y, z), unit vectors, world frame",
            ),
        ]);
    }
    out
}

impl SymbolTable {
    /// The table for a robot: its `[plc]` names, arrays sized for its cables.
    /// With the pulley arrays when the robot has swivel pulleys.
    pub fn from_robot(robot: &Robot) -> Result<SymbolTable, SymbolError> {
        let pulleys = robot.cables.iter().any(|c| c.pulley.is_some());
        SymbolTable::with_pulleys(&PlcSymbols::of(robot)?, robot.cable_count(), pulleys)
    }

    /// The table of `symbols` with arrays sized for `cables` cables (no pulleys).
    pub fn for_symbols(symbols: &PlcSymbols, cables: usize) -> Result<SymbolTable, SymbolError> {
        SymbolTable::with_pulleys(symbols, cables, false)
    }

    /// The table of `symbols` with arrays sized for `cables` cables, the pulley arrays too
    /// when `pulleys`.
    pub fn with_pulleys(
        symbols: &PlcSymbols,
        cables: usize,
        pulleys: bool,
    ) -> Result<SymbolTable, SymbolError> {
        let decls = declarations(symbols, len32(cables), pulleys)
            .into_iter()
            .map(|(n, t, c)| (n, t, c.to_string()))
            .collect();
        let mut table = SymbolTable::new(decls)?;
        // What the PLC task owns is the PLC's; the client may write what the shadow is meant
        // to write back (the robot file's allow-list), nothing else.
        let allowed: Vec<String> = symbols
            .writable
            .iter()
            .map(|n| n.to_ascii_lowercase())
            .collect();
        table.writable = table
            .symbols
            .iter()
            .map(|s| allowed.contains(&s.name.to_ascii_lowercase()))
            .collect();
        Ok(table)
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
            writable: vec![true; symbols.len()],
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

    /// Whether clients may write symbol `k` (every symbol of a table made by
    /// [`SymbolTable::new`]; only the allow-listed ones of a robot's table).
    pub fn is_writable(&self, k: usize) -> bool {
        self.writable.get(k).copied().unwrap_or(false)
    }

    /// The first symbol in `offset..offset + len` that clients may not write, if any.
    pub fn protected_in(&self, offset: usize, len: usize) -> Option<&Symbol> {
        self.overlapping(offset, len)
            .find(|&k| !self.is_writable(k))
            .and_then(|k| self.symbols.get(k))
    }

    /// The symbols larger than `limit` bytes: what one ADS read of `limit` bytes cannot carry.
    pub fn larger_than(&self, limit: usize) -> impl Iterator<Item = &Symbol> + '_ {
        self.symbols.iter().filter(move |s| s.size() > limit)
    }

    /// The `AdsDatatypeEntry` of a type by the name a client sends (0xF011): every type of
    /// the table's symbols, their element types, and any other array of the elementary types
    /// (`ARRAY [0..7] OF LREAL`, with or without the space); `None` for an unknown name or a
    /// type of more than 4 GiB.
    pub fn datatype(&self, raw: &[u8]) -> Option<Vec<u8>> {
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        let name = std::str::from_utf8(raw.get(..end)?).ok()?;
        let ty = IecType::parse(name)?;
        ty.checked_size()?;
        Some(encode_datatype_entry(&ty))
    }

    /// Indices of the symbols whose bytes overlap `offset..offset + len`.
    pub fn overlapping(&self, offset: usize, len: usize) -> impl Iterator<Item = usize> + '_ {
        self.symbols.iter().enumerate().filter_map(move |(k, s)| {
            let (start, end) = (s.offset as usize, s.offset as usize + s.size());
            (start < offset.saturating_add(len) && offset < end).then_some(k)
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
        let out = seen.iter().flat_map(encode_datatype_entry).collect();
        (out, seen.len())
    }
}

#[cfg(test)]
mod tests;
