//! What the virtual PLC does with each ADS request: the semantics of the commands and index
//! groups, independent of sockets (the server feeds it frames; tests call it directly).
//!
//! Error codes follow TwinCAT: unknown symbol or handle 0x710, size that does not fit 0x705,
//! offset outside the data area 0x703, unknown index group 0x702, a known group that does
//! not support the command 0x701, bad notification mode 0x713, unknown notification 0x714.
//! A reply never carries more data than was asked for (AdsLib rejects that).

use super::memory::PlcMemory;
use super::symbols::SymbolRef;
use crate::wire::{
    self, AmsAddr, AmsHeader, NotificationParams, Request, Response, ads_state, cmd, error, group,
    len32, trans_mode,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// AMS port of TwinCAT's system service: answers ReadState and ReadDeviceInfo only.
pub const SYSTEM_SERVICE_PORT: u16 = 10000;
/// Symbol handles one connection may hold (TwinCAT has a similar per-client limit).
pub const MAX_HANDLES: usize = 4096;
/// Notifications one connection may hold.
pub const MAX_NOTIFICATIONS: usize = 1024;
/// Shortest notification period served. Clients disagree on the unit of `cycleTime`: the ADS
/// DLL and pyads send 100 ns ticks, the `ads` crate 0.4 sends milliseconds. The value is read
/// as 100 ns ticks (as TwinCAT does) and clamped to this floor, so an `ads`-crate client asking
/// for 100 ms gets a notification every millisecond — see the README's ADS section.
pub const MIN_NOTIFICATION_PERIOD: Duration = Duration::from_millis(1);

/// Who the device is on the AMS network.
#[derive(Debug, Clone)]
pub struct DeviceIdentity {
    pub net_id: wire::AmsNetId,
    pub port: u16,
    /// Returned by ReadDeviceInfo (at most 15 bytes are sent).
    pub name: String,
}

/// One registered notification.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The client's address (target of the notification frames).
    pub client: AmsAddr,
    /// The address the client registered with (source of the frames; AdsLib drops frames
    /// from any other address).
    pub server: AmsAddr,
    pub offset: u32,
    pub length: u32,
    pub on_change: bool,
    pub period: Duration,
    pub next_due: Instant,
    pub last_sent: Option<Vec<u8>>,
}

/// Per-connection state: symbol handles and notifications die with the connection.
#[derive(Debug, Default)]
pub struct Session {
    handles: HashMap<u32, SymbolRef>,
    next_handle: u32,
    notifications: HashMap<u32, Registration>,
    next_notification: u32,
}

/// The ADS device: identity + memory.
#[derive(Debug, Clone)]
pub struct Device {
    pub identity: DeviceIdentity,
    pub memory: Arc<PlcMemory>,
}

impl Device {
    pub fn new(identity: DeviceIdentity, memory: Arc<PlcMemory>) -> Device {
        Device { identity, memory }
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
                Ok(req @ (Request::ReadState | Request::ReadDeviceInfo)) => {
                    wire::encode_reply(header, &self.request(session, header, &req))
                }
                _ => wire::encode_ams_error(header, error::SERVICE_NOT_SUPPORTED),
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
            Request::DeleteNotification { handle } => status(
                session
                    .notifications
                    .remove(handle)
                    .map(|_| ())
                    .ok_or(error::NOTIFY_HANDLE_INVALID),
            ),
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
        match ig {
            group::PLC_DATA => self.memory.read(io, length as usize),
            group::SYM_VALUE_BY_HANDLE => {
                let s = self.handle(session, io)?;
                if length as usize > s.size() {
                    return Err(error::INVALID_SIZE);
                }
                self.memory.read(s.offset, length as usize)
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
            group::SYM_VERSION => fixed(&[1]),
            group::DEVICE_DATA => match io {
                0 => fixed(&self.memory.ads_state().to_le_bytes()),
                2 => fixed(&[0, 0]),
                _ => Err(error::INVALID_OFFSET),
            },
            group::SYM_HANDLE_BY_NAME
            | group::SYM_VALUE_BY_NAME
            | group::SYM_RELEASE_HANDLE
            | group::SYM_INFO_BY_NAME
            | group::SYM_INFO_BY_NAME_EX
            | group::SUM_READ..=group::SUM_DELETE_NOTIFICATION => Err(error::SERVICE_NOT_SUPPORTED),
            _ => Err(error::INVALID_GROUP),
        }
    }

    /// Write: the whole of `data`, or an error (nothing written).
    pub fn write(&self, session: &mut Session, ig: u32, io: u32, data: &[u8]) -> Result<(), u32> {
        match ig {
            group::PLC_DATA => self.memory.write_external(io, data),
            group::SYM_VALUE_BY_HANDLE => {
                let s = self.handle(session, io)?;
                if data.len() != s.size() {
                    return Err(error::INVALID_SIZE);
                }
                self.memory.write_external(s.offset, data)
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
                session.handles.insert(handle, s);
                Ok(handle.to_le_bytes().to_vec())
            }
            group::SYM_VALUE_BY_NAME => {
                let s = self.lookup(data)?;
                if (read_length as usize) < s.size() {
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
            group::PLC_DATA => {
                if !data.is_empty() {
                    self.memory.write_external(io, data)?;
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

    pub(super) fn add_notification(
        &self,
        session: &mut Session,
        header: &AmsHeader,
        p: &NotificationParams,
    ) -> Result<u32, u32> {
        let on_change = match p.trans_mode {
            trans_mode::SERVER_CYCLE | trans_mode::SERVER_CYCLE2 => false,
            trans_mode::SERVER_ON_CHANGE | trans_mode::SERVER_ON_CHANGE2 => true,
            _ => return Err(error::TRANSMODE_NOT_SUPPORTED),
        };
        if p.length == 0 {
            return Err(error::INVALID_SIZE);
        }
        let offset = match p.index_group {
            group::PLC_DATA => {
                self.memory.read(p.index_offset, p.length as usize)?;
                p.index_offset
            }
            group::SYM_VALUE_BY_HANDLE => {
                let s = self.handle(session, p.index_offset)?;
                if p.length as usize > s.size() {
                    return Err(error::INVALID_SIZE);
                }
                s.offset
            }
            _ => return Err(error::INVALID_GROUP),
        };
        if session.notifications.len() >= MAX_NOTIFICATIONS {
            return Err(error::NO_MORE_HANDLES);
        }
        let period =
            Duration::from_nanos(u64::from(p.cycle_time) * 100).max(MIN_NOTIFICATION_PERIOD);
        session.next_notification = session.next_notification.wrapping_add(1).max(1);
        while session
            .notifications
            .contains_key(&session.next_notification)
        {
            session.next_notification = session.next_notification.wrapping_add(1).max(1);
        }
        let handle = session.next_notification;
        session.notifications.insert(
            handle,
            Registration {
                client: header.source,
                server: header.target,
                offset,
                length: p.length,
                on_change,
                period,
                // The first sample goes out at once, as TwinCAT sends the current value.
                next_due: Instant::now(),
                last_sent: None,
            },
        );
        Ok(handle)
    }

    /// The notification frames due at `now` for one session, and when the next is due.
    pub fn due_notifications(
        &self,
        session: &mut Session,
        now: Instant,
    ) -> (Vec<Vec<u8>>, Option<Instant>) {
        let mut frames = Vec::new();
        let mut next: Option<Instant> = None;
        let stamp = wire::filetime(std::time::SystemTime::now());
        for (&handle, reg) in session.notifications.iter_mut() {
            if reg.next_due <= now {
                // Catch up without bursts after a stall: the next slot after `now`.
                while reg.next_due <= now {
                    reg.next_due += reg.period;
                }
                if let Ok(bytes) = self.memory.read(reg.offset, reg.length as usize) {
                    let changed = reg.last_sent.as_deref() != Some(bytes.as_slice());
                    if !reg.on_change || changed {
                        frames.push(wire::encode_notification(
                            reg.client,
                            reg.server,
                            stamp,
                            &[(handle, &bytes)],
                        ));
                        reg.last_sent = Some(bytes);
                    }
                }
            }
            next = Some(next.map_or(reg.next_due, |n| n.min(reg.next_due)));
        }
        (frames, next)
    }
}

mod sum;

#[cfg(test)]
mod tests;
