//! Rate-limited warnings: a shadow in trouble may hit the same problem every 2 ms.

use std::time::{Duration, Instant};

/// Logs at most once a second, counting what it held back.
#[derive(Default)]
pub(super) struct Throttle {
    last: Option<Instant>,
    held: u64,
}

impl Throttle {
    pub(super) fn warn(&mut self, now: Instant, message: impl FnOnce() -> String) {
        if self
            .last
            .is_some_and(|l| now.saturating_duration_since(l) < Duration::from_secs(1))
        {
            self.held += 1;
            return;
        }
        let held = std::mem::take(&mut self.held);
        let suffix = if held > 0 {
            format!(" (+{held} more since the last message)")
        } else {
            String::new()
        };
        tracing::warn!("{}{suffix}", message());
        self.last = Some(now);
    }
}

/// The shadow's rate-limited warnings, one throttle per kind of trouble.
#[derive(Default)]
pub(super) struct Warnings {
    /// Samples refused.
    pub(super) rejected: Throttle,
    /// The physics falling behind the controller.
    pub(super) behind: Throttle,
    /// The PLC still unreachable.
    pub(super) offline: Throttle,
}
