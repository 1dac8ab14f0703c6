//! Request and response payloads of the ADS commands.

use super::{AmsHeader, Cursor, cmd, encode_frame, error, flags, len32, put_u16, put_u32};

/// Parameters of AddDeviceNotification (40 bytes on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotificationParams {
    pub index_group: u32,
    pub index_offset: u32,
    pub length: u32,
    pub trans_mode: u32,
    /// As sent; see `device.rs` for the unit question (100 ns ticks vs ms).
    pub max_delay: u32,
    pub cycle_time: u32,
}

impl NotificationParams {
    pub(crate) fn decode(c: &mut Cursor) -> Option<NotificationParams> {
        let p = NotificationParams {
            index_group: c.u32()?,
            index_offset: c.u32()?,
            length: c.u32()?,
            trans_mode: c.u32()?,
            max_delay: c.u32()?,
            cycle_time: c.u32()?,
        };
        c.bytes(16)?; // reserved
        Some(p)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        for v in [
            self.index_group,
            self.index_offset,
            self.length,
            self.trans_mode,
            self.max_delay,
            self.cycle_time,
        ] {
            put_u32(out, v);
        }
        out.extend_from_slice(&[0u8; 16]);
    }
}

/// A request, borrowed from the frame's payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request<'a> {
    ReadDeviceInfo,
    Read {
        index_group: u32,
        index_offset: u32,
        length: u32,
    },
    Write {
        index_group: u32,
        index_offset: u32,
        data: &'a [u8],
    },
    ReadState,
    WriteControl {
        ads_state: u16,
        device_state: u16,
        data: &'a [u8],
    },
    AddNotification(NotificationParams),
    DeleteNotification {
        handle: u32,
    },
    ReadWrite {
        index_group: u32,
        index_offset: u32,
        read_length: u32,
        data: &'a [u8],
    },
}

impl Request<'_> {
    pub fn command(&self) -> u16 {
        match self {
            Request::ReadDeviceInfo => cmd::READ_DEVICE_INFO,
            Request::Read { .. } => cmd::READ,
            Request::Write { .. } => cmd::WRITE,
            Request::ReadState => cmd::READ_STATE,
            Request::WriteControl { .. } => cmd::WRITE_CONTROL,
            Request::AddNotification(_) => cmd::ADD_NOTIFICATION,
            Request::DeleteNotification { .. } => cmd::DELETE_NOTIFICATION,
            Request::ReadWrite { .. } => cmd::READ_WRITE,
        }
    }
}

/// Decodes a request payload. `Err` carries the ADS code to answer with: 0x701 for an
/// unknown command, 0x705 for a payload whose lengths do not add up.
pub fn decode_request(command: u16, payload: &[u8]) -> Result<Request<'_>, u32> {
    let bad = error::INVALID_SIZE;
    let mut c = Cursor::new(payload);
    let req = match command {
        cmd::READ_DEVICE_INFO => Request::ReadDeviceInfo,
        cmd::READ_STATE => Request::ReadState,
        cmd::READ => Request::Read {
            index_group: c.u32().ok_or(bad)?,
            index_offset: c.u32().ok_or(bad)?,
            length: c.u32().ok_or(bad)?,
        },
        cmd::WRITE => {
            let index_group = c.u32().ok_or(bad)?;
            let index_offset = c.u32().ok_or(bad)?;
            let length = c.u32().ok_or(bad)? as usize;
            let data = c.bytes(length).ok_or(bad)?;
            Request::Write {
                index_group,
                index_offset,
                data,
            }
        }
        cmd::WRITE_CONTROL => {
            let ads_state = c.u16().ok_or(bad)?;
            let device_state = c.u16().ok_or(bad)?;
            let length = c.u32().ok_or(bad)? as usize;
            let data = c.bytes(length).ok_or(bad)?;
            Request::WriteControl {
                ads_state,
                device_state,
                data,
            }
        }
        cmd::ADD_NOTIFICATION => {
            Request::AddNotification(NotificationParams::decode(&mut c).ok_or(bad)?)
        }
        cmd::DELETE_NOTIFICATION => Request::DeleteNotification {
            handle: c.u32().ok_or(bad)?,
        },
        cmd::READ_WRITE => {
            let index_group = c.u32().ok_or(bad)?;
            let index_offset = c.u32().ok_or(bad)?;
            let read_length = c.u32().ok_or(bad)?;
            let write_length = c.u32().ok_or(bad)? as usize;
            let data = c.bytes(write_length).ok_or(bad)?;
            Request::ReadWrite {
                index_group,
                index_offset,
                read_length,
                data,
            }
        }
        _ => return Err(error::SERVICE_NOT_SUPPORTED),
    };
    Ok(req)
}

/// Encodes a request's payload (tests, benches and the fuzz corpus use it).
pub fn encode_request(req: &Request) -> Vec<u8> {
    let mut out = Vec::new();
    match req {
        Request::ReadDeviceInfo | Request::ReadState => {}
        Request::Read {
            index_group,
            index_offset,
            length,
        } => {
            for v in [*index_group, *index_offset, *length] {
                put_u32(&mut out, v);
            }
        }
        Request::Write {
            index_group,
            index_offset,
            data,
        } => {
            for v in [*index_group, *index_offset, len32(data.len())] {
                put_u32(&mut out, v);
            }
            out.extend_from_slice(data);
        }
        Request::WriteControl {
            ads_state,
            device_state,
            data,
        } => {
            put_u16(&mut out, *ads_state);
            put_u16(&mut out, *device_state);
            put_u32(&mut out, len32(data.len()));
            out.extend_from_slice(data);
        }
        Request::AddNotification(p) => p.encode(&mut out),
        Request::DeleteNotification { handle } => put_u32(&mut out, *handle),
        Request::ReadWrite {
            index_group,
            index_offset,
            read_length,
            data,
        } => {
            for v in [*index_group, *index_offset, *read_length, len32(data.len())] {
                put_u32(&mut out, v);
            }
            out.extend_from_slice(data);
        }
    }
    out
}

// ------------------------------------------------------------------------------ responses

/// A response payload. Every variant carries the full fixed part even on error: pyads' AdsLib
/// reads the 8-byte read header unconditionally and would lose sync on a shorter reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    DeviceInfo {
        result: u32,
        major: u8,
        minor: u8,
        build: u16,
        /// NUL-padded to 16 bytes on the wire.
        name: String,
    },
    /// Read and ReadWrite replies: result, length, data.
    Data {
        command: u16,
        result: u32,
        data: Vec<u8>,
    },
    /// Write, WriteControl, DeleteNotification replies: result only.
    Status {
        command: u16,
        result: u32,
    },
    State {
        result: u32,
        ads_state: u16,
        device_state: u16,
    },
    NotificationHandle {
        result: u32,
        handle: u32,
    },
}

impl Response {
    /// The error reply to a request: its command with `result`, and zero-length data.
    pub fn error(command: u16, result: u32) -> Response {
        match command {
            cmd::READ | cmd::READ_WRITE => Response::Data {
                command,
                result,
                data: Vec::new(),
            },
            cmd::READ_STATE => Response::State {
                result,
                ads_state: 0,
                device_state: 0,
            },
            cmd::ADD_NOTIFICATION => Response::NotificationHandle { result, handle: 0 },
            cmd::READ_DEVICE_INFO => Response::DeviceInfo {
                result,
                major: 0,
                minor: 0,
                build: 0,
                name: String::new(),
            },
            _ => Response::Status { command, result },
        }
    }

    pub fn command(&self) -> u16 {
        match self {
            Response::DeviceInfo { .. } => cmd::READ_DEVICE_INFO,
            Response::Data { command, .. } | Response::Status { command, .. } => *command,
            Response::State { .. } => cmd::READ_STATE,
            Response::NotificationHandle { .. } => cmd::ADD_NOTIFICATION,
        }
    }

    pub fn result(&self) -> u32 {
        match self {
            Response::DeviceInfo { result, .. }
            | Response::Data { result, .. }
            | Response::Status { result, .. }
            | Response::State { result, .. }
            | Response::NotificationHandle { result, .. } => *result,
        }
    }

    pub fn encode_payload(&self, out: &mut Vec<u8>) {
        match self {
            Response::DeviceInfo {
                result,
                major,
                minor,
                build,
                name,
            } => {
                put_u32(out, *result);
                out.push(*major);
                out.push(*minor);
                put_u16(out, *build);
                let mut padded = [0u8; 16];
                for (d, s) in padded.iter_mut().zip(name.bytes().take(15)) {
                    *d = s;
                }
                out.extend_from_slice(&padded);
            }
            Response::Data { result, data, .. } => {
                put_u32(out, *result);
                put_u32(out, len32(data.len()));
                out.extend_from_slice(data);
            }
            Response::Status { result, .. } => put_u32(out, *result),
            Response::State {
                result,
                ads_state,
                device_state,
            } => {
                put_u32(out, *result);
                put_u16(out, *ads_state);
                put_u16(out, *device_state);
            }
            Response::NotificationHandle { result, handle } => {
                put_u32(out, *result);
                put_u32(out, *handle);
            }
        }
    }
}

/// The complete reply frame to `request`: addresses swapped byte for byte, same command and
/// invoke id, state flags 0x0005 (the `ads` crate checks all of these).
pub fn encode_reply(request: &AmsHeader, response: &Response) -> Vec<u8> {
    let mut payload = Vec::with_capacity(64);
    response.encode_payload(&mut payload);
    let header = AmsHeader {
        target: request.source,
        source: request.target,
        command: response.command(),
        state_flags: flags::REPLY,
        data_length: 0,
        error_code: 0,
        invoke_id: request.invoke_id,
    };
    encode_frame(&header, &payload)
}

/// A reply carrying the error in the AMS header and no payload (unknown command, wrong port);
/// both clients accept it.
pub fn encode_ams_error(request: &AmsHeader, code: u32) -> Vec<u8> {
    let header = AmsHeader {
        target: request.source,
        source: request.target,
        command: request.command,
        state_flags: flags::REPLY,
        data_length: 0,
        error_code: code,
        invoke_id: request.invoke_id,
    };
    encode_frame(&header, &[])
}
