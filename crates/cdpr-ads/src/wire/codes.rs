//! The numbers of the protocol: command ids, state flags, router frame kinds, index groups,
//! ADS states and notification modes (InfoSys; names as in Beckhoff's AdsDef.h).

/// Command ids (InfoSys "ADS Commands").
pub mod cmd {
    pub const READ_DEVICE_INFO: u16 = 1;
    pub const READ: u16 = 2;
    pub const WRITE: u16 = 3;
    pub const READ_STATE: u16 = 4;
    pub const WRITE_CONTROL: u16 = 5;
    pub const ADD_NOTIFICATION: u16 = 6;
    pub const DELETE_NOTIFICATION: u16 = 7;
    pub const NOTIFICATION: u16 = 8;
    pub const READ_WRITE: u16 = 9;
}

/// State flags of the AMS header.
pub mod flags {
    pub const RESPONSE: u16 = 0x0001;
    pub const NO_RETURN: u16 = 0x0002;
    pub const ADS_COMMAND: u16 = 0x0004;
    /// What a request carries and what a notification carries (the `ads` crate drops a
    /// notification with any other value).
    pub const REQUEST: u16 = ADS_COMMAND;
    /// What every reply carries (the `ads` crate rejects any other value).
    pub const REPLY: u16 = ADS_COMMAND | RESPONSE;
}

/// AMS/TCP "reserved" values of router frames (the `ads` crate's `Source::Request`).
pub mod router {
    pub const ADS: u16 = 0x0000;
    pub const PORT_CLOSE: u16 = 0x0001;
    pub const PORT_CONNECT: u16 = 0x1000;
    pub const ROUTER_NOTE: u16 = 0x1001;
    pub const GET_LOCAL_NETID: u16 = 0x1002;
}

/// Index groups served by the virtual PLC.
pub mod group {
    /// PLC data area: every symbol lives here at a fixed offset (TwinCAT 3 reports 0x4040 for
    /// GVL variables in its symbol information).
    pub const PLC_DATA: u32 = 0x4040;
    pub const SYM_HANDLE_BY_NAME: u32 = 0xF003;
    pub const SYM_VALUE_BY_NAME: u32 = 0xF004;
    pub const SYM_VALUE_BY_HANDLE: u32 = 0xF005;
    pub const SYM_RELEASE_HANDLE: u32 = 0xF006;
    pub const SYM_INFO_BY_NAME: u32 = 0xF007;
    pub const SYM_VERSION: u32 = 0xF008;
    pub const SYM_INFO_BY_NAME_EX: u32 = 0xF009;
    pub const SYM_UPLOAD: u32 = 0xF00B;
    pub const SYM_UPLOAD_INFO: u32 = 0xF00C;
    pub const SYM_DT_UPLOAD: u32 = 0xF00E;
    pub const SYM_UPLOAD_INFO2: u32 = 0xF00F;
    /// ADSIGRP_SYM_DT_INFOBYNAMEEX: a data type's `AdsDatatypeEntry` by its name (ReadWrite,
    /// the name as write data; ads-client asks it for every symbol's type).
    pub const SYM_DT_INFO_BY_NAME_EX: u32 = 0xF011;
    pub const SUM_READ: u32 = 0xF080;
    pub const SUM_WRITE: u32 = 0xF081;
    pub const SUM_READ_WRITE: u32 = 0xF082;
    pub const SUM_READ_EX: u32 = 0xF083;
    pub const SUM_READ_EX2: u32 = 0xF084;
    pub const SUM_ADD_NOTIFICATION: u32 = 0xF085;
    pub const SUM_DELETE_NOTIFICATION: u32 = 0xF086;
    /// ADSIGRP_DEVICE_DATA: offset 0 the runtime's ADS state and device state (2 × u16), the
    /// group ads-client subscribes to at connect to notice a stop.
    pub const DEVICE_DATA: u32 = 0xF100;
    /// The system service's (port 10000) extended state: ADS state, device state, restart
    /// index, version, revision, build, platform, OS, flags (16 bytes; ads-client reads it at
    /// connect, falling back to ReadState).
    pub const SYSTEM_STATE_EX: u32 = 0xF0;
}

/// ADS states (ReadState / WriteControl).
pub mod ads_state {
    pub const RESET: u16 = 2;
    pub const RUN: u16 = 5;
    pub const STOP: u16 = 6;
}

/// Notification transmission modes.
pub mod trans_mode {
    pub const NONE: u32 = 0;
    pub const SERVER_CYCLE: u32 = 3;
    pub const SERVER_ON_CHANGE: u32 = 4;
    pub const SERVER_CYCLE2: u32 = 5;
    pub const SERVER_ON_CHANGE2: u32 = 6;
}
