//! The in-process [`Transport`]: the virtual PLC's memory read and written directly, no
//! sockets, for fast deterministic tests and one-process demos.

use super::error::ControllerError;
use super::shadow_link::ShadowLink;
use super::transport::{Inputs, MAX_READY, Transport};
use crate::server::PlcCore;
use crate::server::memory::PlcMemory;
use crate::wire::IecType;
use crate::wire::error::{self, SYMBOL_VERSION_INVALID};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Copies of the PLC's memory taken after each of its cycles, with the PLC's time stamp: the
/// in-process stand-in for device notifications.
type Snapshots = Arc<Mutex<VecDeque<(u64, Vec<u8>)>>>;

/// The virtual PLC's memory, read and written directly (no sockets). Writes count as
/// external writes, exactly as ADS writes do. Its "handles" are those of a TwinCAT client:
/// taken under a symbol version, stale (ADS 0x711) once [`PlcMemory::online_change`] moves it.
pub struct InProcessTransport {
    memory: Arc<PlcMemory>,
    places: Vec<(u32, usize)>,
    names: Vec<String>,
    /// The symbol version the places were resolved under.
    version: u32,
    /// The inputs as notifications bring them (see [`InProcessTransport::notified`]).
    notified: Option<Snapshots>,
}

impl InProcessTransport {
    pub fn new(memory: Arc<PlcMemory>) -> InProcessTransport {
        InProcessTransport {
            memory,
            places: Vec::new(),
            names: Vec::new(),
            version: 0,
            notified: None,
        }
    }

    /// The memory of `core`, the inputs taken as notifications bring them: the memory as it is
    /// now, then a sample of it after each PLC cycle, stamped with the PLC's time, every one
    /// since the last read taken at each read.
    pub fn notified(core: &mut PlcCore) -> InProcessTransport {
        let memory = Arc::clone(core.memory());
        // The current values first, as a PLC sends them when the notification is registered.
        let now = (
            core.plc_filetime(),
            memory.with_image(|image| image.to_vec()),
        );
        let queue = Snapshots::new(Mutex::new(VecDeque::from([now])));
        let (q, m) = (Arc::clone(&queue), Arc::clone(&memory));
        core.add_cycle_hook(Box::new(move |_, stamp| {
            let image = m.with_image(|image| image.to_vec());
            let mut queue = q.lock().unwrap_or_else(|e| e.into_inner());
            if queue.len() == MAX_READY {
                queue.pop_front();
            }
            queue.push_back((stamp, image));
        }));
        InProcessTransport {
            notified: Some(queue),
            ..InProcessTransport::new(memory)
        }
    }

    /// TwinCAT's answer to a handle of an older symbol version.
    fn check_version(&self, first: Option<usize>) -> Result<(), ControllerError> {
        if self.memory.symbol_version() == self.version {
            return Ok(());
        }
        let code = SYMBOL_VERSION_INVALID;
        Err(ControllerError::Stale {
            symbol: first
                .and_then(|k| self.names.get(k).cloned())
                .unwrap_or_default(),
            code,
            text: error::text(code).to_string(),
        })
    }
}

impl Transport for InProcessTransport {
    fn resolve(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError> {
        let mut types = Vec::new();
        self.places.clear();
        self.version = self.memory.symbol_version();
        self.names = names.to_vec();
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
        self.check_version(symbols.first().copied())?;
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

    fn read_inputs(
        &mut self,
        symbols: &[usize],
        out: &mut Vec<Inputs>,
    ) -> Result<(), ControllerError> {
        let Some(queue) = &self.notified else {
            out.push(Inputs {
                values: self.sum_read(symbols)?,
                plc_time: None,
            });
            return Ok(());
        };
        self.check_version(symbols.first().copied())?;
        let taken: Vec<(u64, Vec<u8>)> = queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
            .collect();
        for (stamp, image) in taken {
            let values = symbols
                .iter()
                .filter_map(|&k| self.places.get(k))
                .map(|&(offset, len)| {
                    image
                        .get(offset as usize..offset as usize + len)
                        .map(<[u8]>::to_vec)
                        .ok_or_else(|| ControllerError::Link("symbol outside the image".into()))
                })
                .collect::<Result<_, _>>()?;
            out.push(Inputs {
                values,
                plc_time: Some(stamp),
            });
        }
        Ok(())
    }

    fn sum_write(&mut self, items: &[(usize, Vec<u8>)]) -> Result<(), ControllerError> {
        self.check_version(items.first().map(|(k, _)| *k))?;
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

    fn plc_state(&mut self) -> Result<Option<u16>, ControllerError> {
        Ok(Some(self.memory.ads_state()))
    }
}

/// The in-process controller the tests and a one-process demo use.
pub type InProcessController = ShadowLink<InProcessTransport>;
