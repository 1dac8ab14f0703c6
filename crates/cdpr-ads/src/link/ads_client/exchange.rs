//! How the shadow's per-cycle reads and writes travel over ADS, and how the user asks for one.
//!
//! Three exchanges, the way robust ADS clients (Beckhoff's own ADS libraries, pyads) pick them:
//! - sum commands by handle — 0xF083 (read, with lengths) and 0xF081 (write) over handles
//!   0xF005: one round trip each, and a stale handle after an online change answers an error
//!   (0x710/0x711) instead of another symbol's bytes;
//! - sum commands by symbol address — 0xF080/0xF081 with the index group and offset from the
//!   symbol info (0xF009): what pyads' `read_list_by_name` sends and all pyads' test server
//!   (`AdsTestServer` + `AdvancedHandler`) serves. An online change that moves a symbol is not
//!   noticed: the address now reads whatever lies there, so this comes after handles;
//! - single reads and writes by handle, one round trip per symbol: every ADS device has them
//!   (TwinCAT 2 before 2.11 R2 B2018 has no sum commands at all).
//!
//! And for the cycle's inputs, a fourth ahead of the three: device notifications
//! ([`Exchange::Notify`]) — the PLC sends the commanded lengths and the cycle counter once per
//! task cycle, in server-cycle mode with its own time stamp (Beckhoff's advice for data wanted
//! every cycle), so no PLC cycle falls between two polls. The geometry and the shadow's writes
//! still travel as the first of the three the PLC serves. `auto` tries notifications first and
//! polls where the PLC refuses them or sends nothing.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

use crate::wire::error::SYMBOL_VERSION_INVALID;

/// ADS codes on a handle's read or write that mean the handle went stale — an online change or
/// a PLC re-download: 0x1 (internal error, as some runtimes answer then), 0x710 (symbol not
/// found), 0x711 (symbol version invalid), 0x722 (symbol not active). Re-resolving helps.
pub const STALE_HANDLE: [u32; 4] = [0x1, 0x710, SYMBOL_VERSION_INVALID, 0x722];

/// ADS codes that answer a sum command the device does not have: 0x701 (service not
/// supported), 0x702 (invalid index group) — TwinCAT 2 before 2.11 R2 B2018.
pub const NOT_SERVED: [u32; 2] = [0x701, 0x702];

/// The exchange a connection uses (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exchange {
    Notify,
    SumHandle,
    SumAddress,
    Single,
}

impl Exchange {
    /// The polled exchanges in the order `auto` tries them: safest first (the geometry and
    /// the writes travel as one of these also when the inputs come by notification).
    pub const PREFERENCE: [Exchange; 3] =
        [Exchange::SumHandle, Exchange::SumAddress, Exchange::Single];

    /// The command-line spelling: `sum-handle`, `sum-address`, `single`.
    pub fn name(self) -> &'static str {
        match self {
            Exchange::Notify => "notify",
            Exchange::SumHandle => "sum-handle",
            Exchange::SumAddress => "sum-address",
            Exchange::Single => "single",
        }
    }

    /// What goes over the wire, for messages.
    pub fn wire(self) -> &'static str {
        match self {
            Exchange::Notify => {
                "device notifications 0x8 every PLC cycle (server-cycle mode, by handle) for the \
                 inputs; geometry and writes polled"
            }
            Exchange::SumHandle => "sum read 0xF083 / sum write 0xF081 by handle (0xF005)",
            Exchange::SumAddress => {
                "sum read 0xF080 / sum write 0xF081 by index group and offset (from 0xF009)"
            }
            Exchange::Single => "one read / write by handle (0xF005) per symbol",
        }
    }
}

impl fmt::Display for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the user asks for: `auto` probes, anything else is used as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExchangeChoice {
    /// Per connection: the inputs by notification where the PLC sends them, and the first of
    /// [`Exchange::PREFERENCE`] the PLC serves.
    #[default]
    Auto,
    /// [`ExchangeChoice::Auto`] without notifications: everything polled.
    Poll,
    /// This exchange or an error naming it.
    Force(Exchange),
}

impl ExchangeChoice {
    /// The polled exchanges to try, in order.
    pub fn candidates(self) -> &'static [Exchange] {
        match self {
            ExchangeChoice::Auto
            | ExchangeChoice::Poll
            | ExchangeChoice::Force(Exchange::Notify) => &Exchange::PREFERENCE,
            ExchangeChoice::Force(Exchange::SumHandle) => &[Exchange::SumHandle],
            ExchangeChoice::Force(Exchange::SumAddress) => &[Exchange::SumAddress],
            ExchangeChoice::Force(Exchange::Single) => &[Exchange::Single],
        }
    }
}

impl ExchangeChoice {
    /// Whether the exchange is probed (the first the PLC serves), not forced.
    pub fn probes(self) -> bool {
        matches!(self, ExchangeChoice::Auto | ExchangeChoice::Poll)
    }

    /// Whether the cycle's inputs are to be asked for by notification (`auto`, `notify`).
    pub fn notify(self) -> bool {
        matches!(
            self,
            ExchangeChoice::Auto | ExchangeChoice::Force(Exchange::Notify)
        )
    }
}

impl fmt::Display for ExchangeChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExchangeChoice::Auto => f.write_str("auto"),
            ExchangeChoice::Poll => f.write_str("poll"),
            ExchangeChoice::Force(e) => e.fmt(f),
        }
    }
}

impl FromStr for ExchangeChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<ExchangeChoice, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(ExchangeChoice::Auto),
            "poll" => Ok(ExchangeChoice::Poll),
            other => [Exchange::Notify]
                .into_iter()
                .chain(Exchange::PREFERENCE)
                .find(|e| e.name() == other)
                .map(ExchangeChoice::Force)
                .ok_or_else(|| {
                    format!(
                        "`{s}` is not an ADS exchange: auto, poll, notify, sum-handle, \
                         sum-address or single"
                    )
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_print_and_order_their_candidates() {
        for text in [
            "auto",
            "poll",
            "notify",
            "sum-handle",
            "sum-address",
            "single",
        ] {
            let c: ExchangeChoice = text.parse().expect("parses");
            assert_eq!(c.to_string(), text);
        }
        assert_eq!(
            " Sum-Address ".parse(),
            Ok(ExchangeChoice::Force(Exchange::SumAddress))
        );
        let e = "sum".parse::<ExchangeChoice>().expect_err("refused");
        assert!(e.contains("`sum`") && e.contains("sum-address"), "{e}");
        assert_eq!(
            ExchangeChoice::Auto.candidates(),
            [Exchange::SumHandle, Exchange::SumAddress, Exchange::Single]
        );
        assert_eq!(
            ExchangeChoice::Force(Exchange::Single).candidates(),
            [Exchange::Single]
        );
        assert_eq!(
            serde_json::to_string(&Exchange::SumAddress).expect("json"),
            "\"sum-address\""
        );
    }
}
