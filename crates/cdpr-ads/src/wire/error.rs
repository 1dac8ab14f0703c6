//! ADS return codes (InfoSys "ADS Return Codes"; names as in Beckhoff's AdsDef.h) and their
//! texts.

pub const NO_ERROR: u32 = 0;
pub const TARGET_PORT_NOT_FOUND: u32 = 0x006;
pub const TARGET_MACHINE_NOT_FOUND: u32 = 0x007;
pub const DEVICE_ERROR: u32 = 0x700;
pub const SERVICE_NOT_SUPPORTED: u32 = 0x701;
pub const INVALID_GROUP: u32 = 0x702;
pub const INVALID_OFFSET: u32 = 0x703;
/// ADSERR_DEVICE_INVALIDACCESS (1796), "reading/writing not permitted": the object does not
/// allow this access (InfoSys "ADS Return Codes",
/// <https://infosys.beckhoff.com/content/1033/cx1100_000x/1549882891.html>; ADS_E_INVALIDACCESS
/// "reading and writing not permitted" in the ADS DLL's ADSERRORCODES). What the virtual PLC
/// answers for a write to a symbol its PLC task owns, as for a read-only object (see
/// `server::device`); 0x723 (access denied) is TwinCAT's answer to a client lacking the rights,
/// used for WriteControl.
pub const INVALID_ACCESS: u32 = 0x704;
pub const INVALID_SIZE: u32 = 0x705;
pub const INVALID_DATA: u32 = 0x706;
pub const NO_MEMORY: u32 = 0x70A;
pub const INVALID_PARAMETER: u32 = 0x70B;
pub const SYMBOL_NOT_FOUND: u32 = 0x710;
pub const TRANSMODE_NOT_SUPPORTED: u32 = 0x713;
pub const NOTIFY_HANDLE_INVALID: u32 = 0x714;
pub const NO_MORE_HANDLES: u32 = 0x716;
/// ADSERR_DEVICE_ACCESSDENIED (1827), "access denied": the requester lacks the right
/// (TwinCAT's answer to a client without a route's rights; Beckhoff/ADS#128, pyads#255).
pub const ACCESS_DENIED: u32 = 0x723;
/// The PLC's symbol version changed since a handle was taken: an online change or a
/// re-download (TwinCAT's answer to a stale handle).
pub const SYMBOL_VERSION_INVALID: u32 = 0x711;

/// The text of an ADS return code, from the `ads` crate's table.
pub fn text(code: u32) -> &'static str {
    ads::errors::ADS_ERRORS
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("unknown ADS error", |(_, text)| *text)
}
