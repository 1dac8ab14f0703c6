//! The PLC's memory: the symbol table and the bytes behind it (the data area, index group
//! 0x4040), shared by the ADS server, the virtual PLC's tasks and the in-process controller.
//!
//! One mutex guards the bytes: a request copies a few hundred bytes under it, a task cycle
//! writes a few arrays, so contention costs microseconds. Writes that arrive over ADS (or
//! through the in-process controller) are counted per symbol, so that a test can prove that
//! nothing but the allow-listed symbols was ever written from outside.

use super::symbols::{SymbolRef, SymbolTable};
use crate::wire::{ads_state, error};
use crate::wire::{decode_reals, decode_u32, encode_reals, encode_u32};
use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Debug)]
struct Image {
    bytes: Vec<u8>,
    /// Per symbol: external writes that touched it.
    external_writes: Vec<u64>,
}

/// Symbol table + process image + ADS state.
#[derive(Debug)]
pub struct PlcMemory {
    table: SymbolTable,
    image: Mutex<Image>,
    ads_state: AtomicU16,
    /// TwinCAT's symbol version (index group 0xF008): moves on an online change.
    symbol_version: AtomicU32,
}

impl PlcMemory {
    pub fn new(table: SymbolTable) -> Arc<PlcMemory> {
        let image = Image {
            bytes: vec![0; table.image_len()],
            external_writes: vec![0; table.symbols().len()],
        };
        Arc::new(PlcMemory {
            table,
            image: Mutex::new(image),
            ads_state: AtomicU16::new(ads_state::RUN),
            symbol_version: AtomicU32::new(1),
        })
    }

    pub fn table(&self) -> &SymbolTable {
        &self.table
    }

    /// A poisoned lock only means another thread panicked mid-copy of plain bytes; the bytes
    /// are still bytes, so carry on rather than take the server down.
    fn lock(&self) -> MutexGuard<'_, Image> {
        self.image.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Checks `offset..offset+len` against the data area: 0x703 past its end, 0x705 when the
    /// range runs over it.
    fn range(&self, offset: u32, len: usize) -> Result<std::ops::Range<usize>, u32> {
        let start = offset as usize;
        let size = self.table.image_len();
        if start >= size {
            return Err(error::INVALID_OFFSET);
        }
        match start.checked_add(len) {
            Some(end) if end <= size => Ok(start..end),
            _ => Err(error::INVALID_SIZE),
        }
    }

    /// 0x703/0x705 as [`PlcMemory::read`] would answer for `offset..offset+len`, else Ok.
    pub fn check_range(&self, offset: u32, len: usize) -> Result<(), u32> {
        self.range(offset, len).map(|_| ())
    }

    /// Reads `len` bytes of the data area.
    pub fn read(&self, offset: u32, len: usize) -> Result<Vec<u8>, u32> {
        let r = self.range(offset, len)?;
        Ok(self.lock().bytes[r].to_vec())
    }

    /// Several reads under one lock: one consistent snapshot (the per-cycle sum read).
    pub fn read_many(&self, parts: &[(u32, usize)]) -> Vec<Result<Vec<u8>, u32>> {
        let image = self.lock();
        parts
            .iter()
            .map(|&(o, l)| self.range(o, l).map(|r| image.bytes[r].to_vec()))
            .collect()
    }

    /// A write from outside the PLC (ADS client or in-process controller).
    pub fn write_external(&self, offset: u32, data: &[u8]) -> Result<(), u32> {
        let r = self.range(offset, data.len())?;
        let mut image = self.lock();
        image.bytes[r].copy_from_slice(data);
        for k in self.table.overlapping(offset as usize, data.len()) {
            image.external_writes[k] += 1;
        }
        Ok(())
    }

    /// Several external writes under one lock (the per-cycle sum write).
    pub fn write_many_external(&self, parts: &[(u32, &[u8])]) -> Vec<Result<(), u32>> {
        let mut image = self.lock();
        parts
            .iter()
            .map(|&(offset, data)| {
                let r = self.range(offset, data.len())?;
                image.bytes[r].copy_from_slice(data);
                for k in self.table.overlapping(offset as usize, data.len()) {
                    image.external_writes[k] += 1;
                }
                Ok(())
            })
            .collect()
    }

    /// How many external writes touched symbol `k` (index in the table).
    pub fn external_writes(&self, k: usize) -> u64 {
        self.lock().external_writes.get(k).copied().unwrap_or(0)
    }

    /// Runs `f` with the PLC's own view of the bytes (task code: not counted as external).
    pub fn with_image<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        f(&mut self.lock().bytes)
    }

    pub fn ads_state(&self) -> u16 {
        self.ads_state.load(Ordering::Relaxed)
    }

    pub fn set_ads_state(&self, state: u16) {
        self.ads_state.store(state, Ordering::Relaxed);
    }

    /// The symbol version: TwinCAT moves it on an online change, and handles taken under an
    /// older version then answer ADS 0x711 ("symbol version invalid -> create a new handle").
    pub fn symbol_version(&self) -> u32 {
        self.symbol_version.load(Ordering::Relaxed)
    }

    /// An online change as the shadow sees it: the symbol version moves, the bytes stay. The
    /// in-process transport honours it (its handles go stale); the ADS server keeps its
    /// handles (tests invalidate those over the wire: release them, as `tests/integration/exchange_choice.rs`
    /// does).
    pub fn online_change(&self) {
        self.symbol_version.fetch_add(1, Ordering::Relaxed);
    }
}

// ------------------------------------------------------------------------------ typed access

/// The bytes of a symbol inside an image (or inside a buffer holding just that symbol when
/// `base` is its own offset). `None` if the image is too short.
fn slot<'a>(image: &'a mut [u8], r: &SymbolRef) -> Option<&'a mut [u8]> {
    image.get_mut(r.offset as usize..r.offset as usize + r.size())
}

/// Writes reals into a symbol's slot of the image (task code).
pub fn put_reals(image: &mut [u8], r: &SymbolRef, values: &[f64]) {
    if let (Some(bytes), Some(s)) = (encode_reals(&r.ty, values), slot(image, r)) {
        s.copy_from_slice(&bytes);
    }
}

/// Reads reals from a symbol's slot of the image.
pub fn get_reals(image: &mut [u8], r: &SymbolRef) -> Option<Vec<f64>> {
    slot(image, r).and_then(|s| decode_reals(&r.ty, s))
}

/// Writes numbers into a symbol's slot of any elementary type but BOOL (integers rounded,
/// counters wrapping: [`crate::wire::encode_numbers`]).
pub fn put_numbers(image: &mut [u8], r: &SymbolRef, values: &[f64]) {
    if let (Some(bytes), Some(s)) = (crate::wire::encode_numbers(&r.ty, values), slot(image, r)) {
        s.copy_from_slice(&bytes);
    }
}

/// Reads numbers from a symbol's slot of any elementary type.
pub fn get_numbers(image: &mut [u8], r: &SymbolRef) -> Option<Vec<f64>> {
    slot(image, r).and_then(|s| crate::wire::decode_numbers(&r.ty, s))
}

/// Writes a UDINT/BOOL into a symbol's slot.
pub fn put_u32(image: &mut [u8], r: &SymbolRef, value: u32) {
    if let (Some(bytes), Some(s)) = (encode_u32(&r.ty, value), slot(image, r)) {
        s.copy_from_slice(&bytes);
    }
}

/// Reads a UDINT/BOOL from a symbol's slot.
pub fn get_u32(image: &mut [u8], r: &SymbolRef) -> Option<u32> {
    slot(image, r).and_then(|s| decode_u32(&r.ty, s))
}
