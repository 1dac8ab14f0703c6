//! How a request of the `ads` crate's client failed, as the exchange probe needs to know it,
//! and the errors it becomes outside the probe.

use super::exchange::STALE_HANDLE;
use crate::link::error::ControllerError;
use crate::wire::error;

/// Why a request failed, as the exchange probe needs to know it.
pub(super) enum Failure {
    /// No reply within the timeout (or the peer closed): the client was dropped.
    Silent(String),
    /// The request as a whole refused as not served (ADS 0x701/0x702).
    Refused(u32),
    Other(ControllerError),
}

impl Failure {
    /// Outside the probe: silence is a lost link, a refusal an ADS error.
    pub(super) fn into_error(self, what: &str) -> ControllerError {
        match self {
            Failure::Silent(why) => ControllerError::Link(format!("`{what}`: {why}")),
            Failure::Refused(code) => code_error(what, code),
            Failure::Other(e) => e,
        }
    }

    pub(super) fn reason(&self) -> String {
        match self {
            Failure::Silent(why) => why.clone(),
            Failure::Refused(code) => format!("ADS {code:#x} ({})", error::text(*code)),
            Failure::Other(e) => e.to_string(),
        }
    }
}

impl From<ControllerError> for Failure {
    fn from(e: ControllerError) -> Failure {
        Failure::Other(e)
    }
}

/// An ADS return code for `what`: a stale handle, or any other error.
pub(super) fn code_error(what: &str, code: u32) -> ControllerError {
    let text = error::text(code).to_string();
    if STALE_HANDLE.contains(&code) {
        ControllerError::Stale {
            symbol: what.to_string(),
            code,
            text,
        }
    } else {
        ControllerError::Ads {
            symbol: what.to_string(),
            code,
            text,
        }
    }
}
