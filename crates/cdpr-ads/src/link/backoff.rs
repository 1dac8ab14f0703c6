//! The back-off between reconnect attempts.

use std::time::Duration;

/// Exponential back-off for reconnect attempts: 50 ms, doubling, at most 2 s.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    pub first: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            next: Duration::from_millis(50),
            first: Duration::from_millis(50),
            max: Duration::from_secs(2),
        }
    }
}

impl Backoff {
    /// The wait before the next attempt (and doubles the one after).
    pub fn next_delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (self.next * 2).min(self.max);
        d
    }
    /// After a success.
    pub fn reset(&mut self) {
        self.next = self.first;
    }
}
