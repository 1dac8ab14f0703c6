//! The ADS wire format, all of it: AMS/TCP and AMS headers ([`frame`]), the addresses in
//! them ([`addr`]), the protocol's numbers ([`codes`], return codes in [`error`]), the ADS
//! commands' request/response payloads ([`command`]), sum-command payloads and notification
//! frames ([`sum`]), the IEC types of symbols and their values' bytes ([`iec`]), symbol
//! records ([`symbol_entry`]), the UDP service of port 48899 (discovery, add-route: [`udp`]).
//! Everything is little-endian ([`cursor`]). Decoders take any
//! byte slice and return an error instead of panicking (the fuzz test in `tests/integration/broken_frames.rs`
//! holds them to that).
//!
//! Bytes only: nothing here knows a robot, a shadow or a socket; the server and the link both
//! build on it.
//!
//! Layout (Beckhoff InfoSys "AMS/TCP Header", "AMS Header"; `/work/scratch/notes/ads.md`):
//! ```text
//!  0  u16 reserved (0 = ADS command; 0x1000 port open, 0x0001 port close: router frames)
//!  2  u32 length of what follows (32 + payload)
//!  6  6×u8 target NetId, u16 target port, 6×u8 source NetId, u16 source port
//! 22  u16 command id, u16 state flags, u32 payload length, u32 error code, u32 invoke id
//! 38  payload
//! ```

mod addr;
mod codes;
mod command;
mod cursor;
pub mod error;
mod frame;
mod iec;
mod reply;
mod sum;
mod symbol_entry;
pub mod udp;

pub use addr::{AmsAddr, AmsNetId};
pub use codes::{ads_state, cmd, flags, group, router, trans_mode};
pub use command::*;
pub use cursor::{Cursor, len32};
pub(crate) use cursor::{put_u16, put_u32};
pub use frame::{
    AmsHeader, Frame, FrameError, Framing, bare_frame_length, decode_frame, encode_frame,
    encode_port_connect_reply, frame_length,
};
pub use iec::{
    IecType, Scalar, decode_number, decode_numbers, decode_reals, decode_u32, encode_numbers,
    encode_reals, encode_u32,
};
pub use reply::{
    ReplyError, Stamp, decode_data, decode_notification, decode_notification_handle, decode_status,
};
pub use sum::*;
pub use symbol_entry::{
    DATATYPE_FLAG_DATATYPE, SymbolEntry, decode_symbol_entry, encode_datatype_entry,
    encode_symbol_entry,
};

/// Bytes of the AMS/TCP header (reserved + length).
pub const TCP_HEADER_LEN: usize = 6;
/// Bytes of the AMS header.
pub const AMS_HEADER_LEN: usize = 32;
/// Largest AMS length (header + payload) the server accepts: 64 KiB. The whole process image
/// of the shipped robots is under 2 KiB and a 500-item sum command under 20 KiB, so anything
/// bigger is a broken or hostile peer; it is refused before its bytes are read.
pub const MAX_AMS_LEN: usize = 64 * 1024;
/// Largest read data the server builds for one request, whatever length the request claims
/// it accepts: the same 64 KiB. Every length on the wire is checked against what the server
/// holds (the data area, the symbol upload) and this limit before a byte is allocated.
pub const MAX_REPLY_LEN: usize = MAX_AMS_LEN;

#[cfg(test)]
mod tests;
