//! What the virtual PLC does with each ADS request: the semantics of the commands and index
//! groups, independent of sockets (the server feeds it frames; tests call it directly).
//!
//! Error codes follow TwinCAT: unknown symbol or handle 0x710, size that does not fit 0x705,
//! offset outside the data area 0x703, unknown index group 0x702, a known group that does
//! not support the command 0x701, bad notification mode 0x713, unknown notification 0x714.
//! A reply never carries more data than was asked for (AdsLib rejects that), nor more than
//! [`wire::MAX_REPLY_LEN`] (0x705 for a symbol larger than that, as for any read too large).
//!
//! Writes: the symbols the PLC task owns (everything but the shadow's allow-list, see
//! [`SymbolTable::protected_in`](super::SymbolTable::protected_in)) answer 0x704
//! (ADSERR_DEVICE_INVALIDACCESS, "reading/writing not permitted", Beckhoff InfoSys "ADS Return
//! Codes") to a write by address, handle, name or sum, and WriteControl answers 0x723
//! (ADSERR_DEVICE_ACCESSDENIED), unless the device was built with [`Device::allow_writes`]
//! (`cdpr plc --allow-writes`).

use super::memory::PlcMemory;
use super::symbols::SymbolRef;
use crate::wire::{self, AmsHeader, Request, Response, ads_state, cmd, error, group, len32};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub use notify::{MAX_NOTIFICATION_BYTES, Registration, Source};

/// AMS port of TwinCAT's system service: answers ReadState and ReadDeviceInfo only.
pub const SYSTEM_SERVICE_PORT: u16 = 10000;
/// Symbol handles one connection may hold (TwinCAT has a similar per-client limit).
pub const MAX_HANDLES: usize = 4096;
/// Notifications one connection may hold.
pub const MAX_NOTIFICATIONS: usize = 1024;
/// Shortest notification period served. Clients disagree on the unit of `cycleTime`: the ADS
/// DLL and pyads send 100 ns ticks, the `ads` crate 0.4 sends milliseconds. The value is read
/// as 100 ns ticks (as TwinCAT does) and clamped to this floor, so an `ads`-crate client asking
/// for 100 ms gets a notification every PLC cycle (every millisecond from a bare server without
/// a PLC task) — see the guide's page on the virtual PLC.
pub const MIN_NOTIFICATION_PERIOD: Duration = Duration::from_millis(1);

/// Who the device is on the AMS network.
#[derive(Debug, Clone)]
pub struct DeviceIdentity {
    pub net_id: wire::AmsNetId,
    pub port: u16,
    /// Returned by ReadDeviceInfo (at most 15 bytes are sent).
    pub name: String,
}

/// Per-connection state: symbol handles and notifications die with the connection.
#[derive(Debug, Default)]
pub struct Session {
    handles: HashMap<u32, SymbolRef>,
    next_handle: u32,
    notifications: HashMap<u32, Registration>,
    next_notification: u32,
}

impl Session {
    /// Notifications registered on this connection.
    pub fn notification_count(&self) -> usize {
        self.notifications.len()
    }
}

/// The ADS device: identity + memory.
#[derive(Debug, Clone)]
pub struct Device {
    pub identity: DeviceIdentity,
    pub memory: Arc<PlcMemory>,
    /// Clients may write every symbol and start/stop the runtime (`cdpr plc
    /// --allow-writes`); else only the symbols the table says are writable.
    pub writes_allowed: bool,
    /// The PLC task period when a PLC task drives the data notifications (see
    /// [`Device::plc_cycle_notifications`]); `None`: every notification runs on the wall
    /// clock ([`Device::due_notifications`]).
    pub plc_task: Option<Duration>,
}

impl Device {
    /// A device serving `memory`, write-protecting what its table protects, notifying on the
    /// wall clock.
    pub fn new(identity: DeviceIdentity, memory: Arc<PlcMemory>) -> Device {
        Device {
            identity,
            memory,
            writes_allowed: false,
            plc_task: None,
        }
    }

    /// Lets clients write every symbol and start/stop the runtime.
    pub fn allow_writes(mut self, allowed: bool) -> Device {
        self.writes_allowed = allowed;
        self
    }

    /// Data notifications sampled by a PLC task of this period, after each of its cycles.
    pub fn driven_by_plc(mut self, task: Duration) -> Device {
        self.plc_task = Some(task);
        self
    }

    /// 0x704 when `offset..offset + len` holds a symbol clients may not write.
    fn check_writable(&self, offset: u32, len: usize) -> Result<(), u32> {
        if self.writes_allowed {
            return Ok(());
        }
        match self.memory.table().protected_in(offset as usize, len) {
            Some(_) => Err(error::INVALID_ACCESS),
            None => Ok(()),
        }
    }

    /// A client's write into the data area: range, then protection, then the bytes.
    fn write_data(&self, offset: u32, data: &[u8]) -> Result<(), u32> {
        self.memory.check_range(offset, data.len())?;
        self.check_writable(offset, data.len())?;
        self.memory.write_external(offset, data)
    }

    /// Answers one ADS frame; `None` when no reply is due (a reply or notification sent to
    /// us, or a request flagged "no return").
    pub fn handle_frame(
        &self,
        session: &mut Session,
        header: &AmsHeader,
        payload: &[u8],
    ) -> Option<Vec<u8>> {
        if header.is_response() || header.command == cmd::NOTIFICATION {
            return None;
        }
        let reply = if header.target.net_id != self.identity.net_id {
            wire::encode_ams_error(header, error::TARGET_MACHINE_NOT_FOUND)
        } else if header.target.port == self.identity.port {
            match wire::decode_request(header.command, payload) {
                Ok(req) => wire::encode_reply(header, &self.request(session, header, &req)),
                Err(code) if code == error::SERVICE_NOT_SUPPORTED => {
                    wire::encode_ams_error(header, code)
                }
                Err(code) => wire::encode_reply(header, &Response::error(header.command, code)),
            }
        } else if header.target.port == SYSTEM_SERVICE_PORT {
            match wire::decode_request(header.command, payload) {
                Ok(req) => match system_service(&req) {
                    Some(Ok(response)) => wire::encode_reply(header, &response),
                    Some(Err(code)) => {
                        wire::encode_reply(header, &Response::error(header.command, code))
                    }
                    None if matches!(req, Request::ReadDeviceInfo) => {
                        wire::encode_reply(header, &self.request(session, header, &req))
                    }
                    None => wire::encode_ams_error(header, error::SERVICE_NOT_SUPPORTED),
                },
                Err(_) => wire::encode_ams_error(header, error::SERVICE_NOT_SUPPORTED),
            }
        } else {
            wire::encode_ams_error(header, error::TARGET_PORT_NOT_FOUND)
        };
        (header.state_flags & wire::flags::NO_RETURN == 0).then_some(reply)
    }

    /// Executes a decoded request.
    pub fn request(&self, session: &mut Session, header: &AmsHeader, req: &Request) -> Response {
        let command = req.command();
        let data = |r: Result<Vec<u8>, u32>| match r {
            Ok(data) => Response::Data {
                command,
                result: error::NO_ERROR,
                data,
            },
            Err(result) => Response::error(command, result),
        };
        let status = |r: Result<(), u32>| Response::Status {
            command,
            result: r.err().unwrap_or(error::NO_ERROR),
        };
        match req {
            Request::ReadDeviceInfo => Response::DeviceInfo {
                result: 0,
                major: 3,
                minor: 1,
                build: 4024,
                name: self.identity.name.clone(),
            },
            Request::ReadState => Response::State {
                result: 0,
                ads_state: self.memory.ads_state(),
                device_state: 0,
            },
            Request::WriteControl { .. } if !self.writes_allowed => {
                status(Err(error::ACCESS_DENIED))
            }
            Request::WriteControl { ads_state, .. } => status(match *ads_state {
                ads_state::RUN | ads_state::STOP => {
                    self.memory.set_ads_state(*ads_state);
                    Ok(())
                }
                _ => Err(error::INVALID_PARAMETER),
            }),
            Request::Read {
                index_group,
                index_offset,
                length,
            } => data(self.read(session, *index_group, *index_offset, *length)),
            Request::Write {
                index_group,
                index_offset,
                data,
            } => status(self.write(session, *index_group, *index_offset, data)),
            Request::ReadWrite {
                index_group,
                index_offset,
                read_length,
                data: wdata,
            } => data(self.read_write(
                session,
                header,
                *index_group,
                *index_offset,
                *read_length,
                wdata,
            )),
            Request::AddNotification(p) => match self.add_notification(session, header, p) {
                Ok(handle) => Response::NotificationHandle { result: 0, handle },
                Err(result) => Response::NotificationHandle { result, handle: 0 },
            },
            Request::DeleteNotification { handle } => {
                status(self.delete_notification(session, *handle))
            }
        }
    }

    pub(super) fn handle(&self, session: &Session, handle: u32) -> Result<SymbolRef, u32> {
        session
            .handles
            .get(&handle)
            .cloned()
            .ok_or(error::SYMBOL_NOT_FOUND)
    }

    fn lookup(&self, name: &[u8]) -> Result<SymbolRef, u32> {
        self.memory
            .table()
            .lookup(name)
            .ok_or(error::SYMBOL_NOT_FOUND)
    }

    /// Read: `length` bytes, exactly, or an error.
    pub fn read(&self, session: &Session, ig: u32, io: u32, length: u32) -> Result<Vec<u8>, u32> {
        let table = self.memory.table();
        let fixed = |blob: &[u8]| {
            if (length as usize) < blob.len() {
                Err(error::INVALID_SIZE)
            } else {
                Ok(blob.to_vec())
            }
        };
        let bounded = |length: u32| {
            if length as usize > wire::MAX_REPLY_LEN {
                Err(error::INVALID_SIZE)
            } else {
                Ok(length as usize)
            }
        };
        match ig {
            group::PLC_DATA => self.memory.read(io, bounded(length)?),
            group::SYM_VALUE_BY_HANDLE => {
                let s = self.handle(session, io)?;
                if length as usize > s.size() {
                    return Err(error::INVALID_SIZE);
                }
                self.memory.read(s.offset, bounded(length)?)
            }
            group::SYM_UPLOAD => fixed(table.upload()),
            group::SYM_DT_UPLOAD => fixed(table.datatype_upload()),
            group::SYM_UPLOAD_INFO => {
                let info = table.upload_info();
                fixed(&[info[0].to_le_bytes(), info[1].to_le_bytes()].concat())
            }
            group::SYM_UPLOAD_INFO2 => {
                // The `ads` crate reads exactly 64 bytes, pyads at least 24.
                let mut info = table.upload_info2();
                if (length as usize) < 24 {
                    return Err(error::INVALID_SIZE);
                }
                info.truncate(length as usize);
                Ok(info)
            }
            group::SYM_VERSION => fixed(&self.symbol_version()),
            group::DEVICE_DATA => match io {
                // ADS state, then device state: as much of the 4 bytes as asked (≥ 2).
                0 if length >= 2 => Ok(self.runtime_state()[..(length as usize).min(4)].to_vec()),
                0 => Err(error::INVALID_SIZE),
                2 => fixed(&[0, 0]),
                _ => Err(error::INVALID_OFFSET),
            },
            group::SYM_HANDLE_BY_NAME
            | group::SYM_VALUE_BY_NAME
            | group::SYM_RELEASE_HANDLE
            | group::SYM_INFO_BY_NAME
            | group::SYM_INFO_BY_NAME_EX
            | group::SYM_DT_INFO_BY_NAME_EX
            | group::SUM_READ..=group::SUM_DELETE_NOTIFICATION => Err(error::SERVICE_NOT_SUPPORTED),
            _ => Err(error::INVALID_GROUP),
        }
    }

    /// The runtime's state as 0xF100 holds it: ADS state, device state (u16 each).
    pub(super) fn runtime_state(&self) -> [u8; 4] {
        let [a, b] = self.memory.ads_state().to_le_bytes();
        [a, b, 0, 0]
    }

    /// The symbol version as 0xF008 holds it: one byte.
    pub(super) fn symbol_version(&self) -> [u8; 1] {
        [self.memory.symbol_version() as u8]
    }

    /// Write: the whole of `data`, or an error (nothing written).
    pub fn write(&self, session: &mut Session, ig: u32, io: u32, data: &[u8]) -> Result<(), u32> {
        match ig {
            group::PLC_DATA => self.write_data(io, data),
            group::SYM_VALUE_BY_HANDLE => {
                let s = self.handle(session, io)?;
                if data.len() != s.size() {
                    return Err(error::INVALID_SIZE);
                }
                self.write_data(s.offset, data)
            }
            group::SYM_RELEASE_HANDLE => {
                let handle = match data {
                    [a, b, c, d] => u32::from_le_bytes([*a, *b, *c, *d]),
                    _ => return Err(error::INVALID_SIZE),
                };
                session
                    .handles
                    .remove(&handle)
                    .map(|_| ())
                    .ok_or(error::SYMBOL_NOT_FOUND)
            }
            group::SYM_HANDLE_BY_NAME
            | group::SYM_VALUE_BY_NAME
            | group::SYM_INFO_BY_NAME
            | group::SYM_INFO_BY_NAME_EX
            | group::SYM_UPLOAD
            | group::SYM_UPLOAD_INFO
            | group::SYM_UPLOAD_INFO2
            | group::SYM_DT_UPLOAD
            | group::SYM_DT_INFO_BY_NAME_EX
            | group::SYM_VERSION
            | group::DEVICE_DATA
            | group::SUM_READ..=group::SUM_DELETE_NOTIFICATION => Err(error::SERVICE_NOT_SUPPORTED),
            _ => Err(error::INVALID_GROUP),
        }
    }

    /// ReadWrite: symbol services by name and the sum commands.
    pub fn read_write(
        &self,
        session: &mut Session,
        header: &AmsHeader,
        ig: u32,
        io: u32,
        read_length: u32,
        data: &[u8],
    ) -> Result<Vec<u8>, u32> {
        let fits = |reply: Vec<u8>| {
            if reply.len() > read_length as usize {
                Err(error::INVALID_SIZE)
            } else {
                Ok(reply)
            }
        };
        match ig {
            group::SYM_HANDLE_BY_NAME => {
                if read_length < 4 {
                    return Err(error::INVALID_SIZE);
                }
                let s = self.lookup(data)?;
                if session.handles.len() >= MAX_HANDLES {
                    return Err(error::NO_MEMORY);
                }
                // Handles start at 0x10001 and are never 0, like TwinCAT's.
                session.next_handle = session.next_handle.wrapping_add(1).max(1);
                while session
                    .handles
                    .contains_key(&(session.next_handle | 0x1_0000))
                {
                    session.next_handle = session.next_handle.wrapping_add(1).max(1);
                }
                let handle = session.next_handle | 0x1_0000;
                let reply = handle_reply(handle, &s, read_length);
                session.handles.insert(handle, s);
                Ok(reply)
            }
            group::SYM_VALUE_BY_NAME => {
                let s = self.lookup(data)?;
                if (read_length as usize) < s.size() || s.size() > wire::MAX_REPLY_LEN {
                    return Err(error::INVALID_SIZE);
                }
                self.memory.read(s.offset, s.size())
            }
            group::SYM_INFO_BY_NAME => {
                let s = self.lookup(data)?;
                let info = [group::PLC_DATA, s.offset, len32(s.size())];
                fits(info.iter().flat_map(|v| v.to_le_bytes()).collect())
            }
            group::SYM_INFO_BY_NAME_EX => {
                let s = self.lookup(data)?;
                fits(self.memory.table().entry_of(&s))
            }
            group::SYM_DT_INFO_BY_NAME_EX => fits(
                self.memory
                    .table()
                    .datatype(data)
                    .ok_or(error::SYMBOL_NOT_FOUND)?,
            ),
            group::PLC_DATA => {
                if !data.is_empty() {
                    self.write_data(io, data)?;
                }
                if read_length as usize > wire::MAX_REPLY_LEN {
                    return Err(error::INVALID_SIZE);
                }
                self.memory.read(io, read_length as usize)
            }
            group::SUM_READ..=group::SUM_DELETE_NOTIFICATION => {
                fits(self.sum(session, header, ig, io, read_length, data)?)
            }
            group::SYM_VALUE_BY_HANDLE => {
                if !data.is_empty() {
                    self.write(session, ig, io, data)?;
                }
                self.read(session, ig, io, read_length)
            }
            group::SYM_RELEASE_HANDLE
            | group::SYM_UPLOAD
            | group::SYM_UPLOAD_INFO
            | group::SYM_UPLOAD_INFO2
            | group::SYM_DT_UPLOAD
            | group::SYM_VERSION
            | group::DEVICE_DATA => Err(error::SERVICE_NOT_SUPPORTED),
            _ => Err(error::INVALID_GROUP),
        }
    }
}

/// The reply to a handle request (0xF003): the handle alone when 4 bytes are asked for
/// (pyads, the `ads` crate, AdsLib), else, when the read length allows, what TwinCAT 3 answers
/// and ads-client 2.1 reads (`createVariableHandle`): handle, size, type decoration (0), the
/// type name's length (u16) and the type name, NUL-terminated.
fn handle_reply(handle: u32, s: &SymbolRef, read_length: u32) -> Vec<u8> {
    let type_name = s.ty.type_name();
    let full = 4 + 4 + 4 + 2 + type_name.len() + 1;
    if (read_length as usize) < full {
        return handle.to_le_bytes().to_vec();
    }
    let mut out = Vec::with_capacity(full);
    for v in [handle, len32(s.size()), 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&(type_name.len().min(u16::MAX as usize) as u16).to_le_bytes());
    out.extend_from_slice(type_name.as_bytes());
    out.push(0);
    out
}

/// The system service (port 10000): its state is the TwinCAT system's, Run whatever the PLC
/// runtime on port 851 does (stopping the PLC stops the PLC, not TwinCAT); ReadState, the
/// extended state (index group 0xF0, 16 bytes) and ReadDeviceInfo (`None`: answered as the
/// device's). Anything else is no service of it.
fn system_service(req: &Request) -> Option<Result<Response, u32>> {
    match req {
        Request::ReadState => Some(Ok(Response::State {
            result: 0,
            ads_state: ads_state::RUN,
            device_state: 0,
        })),
        Request::Read {
            index_group: group::SYSTEM_STATE_EX,
            index_offset: 0,
            length,
        } => Some(if *length < 16 {
            Err(error::INVALID_SIZE)
        } else {
            // ADS state, device state, restart index, version, revision, build, platform,
            // OS type, flags: TwinCAT 3.1.4024 on an unnamed platform.
            let mut data = Vec::with_capacity(16);
            data.extend_from_slice(&ads_state::RUN.to_le_bytes());
            data.extend_from_slice(&[0, 0, 0, 0, 3, 1]);
            data.extend_from_slice(&4024u16.to_le_bytes());
            data.resize(16, 0);
            Ok(Response::Data {
                command: cmd::READ,
                result: error::NO_ERROR,
                data,
            })
        }),
        _ => None,
    }
}

mod notify;
mod sum;

#[cfg(test)]
mod tests;
