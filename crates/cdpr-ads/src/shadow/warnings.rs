//! The shadow's rate-limited warnings: a shadow in trouble may hit the same problem every 2 ms.

use crate::throttle::Throttle;

/// The shadow's rate-limited warnings, one throttle per kind of trouble.
#[derive(Default)]
pub(super) struct Warnings {
    /// Samples refused.
    pub(super) rejected: Throttle,
    /// The physics falling behind the controller.
    pub(super) behind: Throttle,
    /// The PLC still unreachable.
    pub(super) offline: Throttle,
    /// The PLC's counter went back (a restart, or a counter that glitches).
    pub(super) restarted: Throttle,
    /// Said once: the commanded lengths changed while the counter stood.
    pub(super) commands_between_counts: bool,
}
