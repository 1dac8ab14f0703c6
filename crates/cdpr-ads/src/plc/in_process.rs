//! The in-process [`Transport`]: the virtual PLC's memory read and written directly, no
//! sockets, for fast deterministic tests and one-process demos.

use super::controller::{ControllerError, ShadowLink, Transport};
use super::memory::PlcMemory;
use super::symbols::IecType;
use std::sync::Arc;

/// The virtual PLC's memory, read and written directly (no sockets). Writes count as
/// external writes, exactly as ADS writes do.
pub struct InProcessTransport {
    memory: Arc<PlcMemory>,
    places: Vec<(u32, usize)>,
}

impl InProcessTransport {
    pub fn new(memory: Arc<PlcMemory>) -> InProcessTransport {
        InProcessTransport {
            memory,
            places: Vec::new(),
        }
    }
}

impl Transport for InProcessTransport {
    fn resolve(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError> {
        let mut types = Vec::new();
        self.places.clear();
        for name in names {
            let s =
                self.memory
                    .table()
                    .lookup_str(name)
                    .ok_or_else(|| ControllerError::Symbol {
                        symbol: name.clone(),
                        reason: "not found on the PLC (ADS 0x710)".into(),
                    })?;
            self.places.push((s.offset, s.size()));
            types.push(s.ty);
        }
        Ok(types)
    }

    fn sum_read(&mut self, symbols: &[usize]) -> Result<Vec<Vec<u8>>, ControllerError> {
        let parts: Vec<(u32, usize)> = symbols
            .iter()
            .filter_map(|&k| self.places.get(k).copied())
            .collect();
        self.memory
            .read_many(&parts)
            .into_iter()
            .map(|r| r.map_err(|code| ControllerError::Link(format!("read failed: ADS {code:#x}"))))
            .collect()
    }

    fn sum_write(&mut self, items: &[(usize, Vec<u8>)]) -> Result<(), ControllerError> {
        let parts: Vec<(u32, &[u8])> = items
            .iter()
            .filter_map(|(k, data)| self.places.get(*k).map(|p| (p.0, data.as_slice())))
            .collect();
        for r in self.memory.write_many_external(&parts) {
            r.map_err(|code| ControllerError::Link(format!("write failed: ADS {code:#x}")))?;
        }
        Ok(())
    }

    fn reopen(&mut self) -> Result<(), ControllerError> {
        Ok(())
    }
}

/// The in-process controller the tests and a one-process demo use.
pub type InProcessController = ShadowLink<InProcessTransport>;
