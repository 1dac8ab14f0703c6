//! Rate-limited warnings: a shadow in trouble may hit the same problem every 2 ms.

use std::time::{Duration, Instant};

/// Logs at most once a second, counting what it held back.
#[derive(Default)]
pub(super) struct Throttle {
    last: Option<Instant>,
    held: u64,
}

impl Throttle {
    /// Logs `message` unless one was logged within the last second; whether it was logged.
    pub(super) fn warn(&mut self, now: Instant, message: impl FnOnce() -> String) -> bool {
        if self
            .last
            .is_some_and(|l| now.saturating_duration_since(l) < Duration::from_secs(1))
        {
            self.held += 1;
            return false;
        }
        let held = std::mem::take(&mut self.held);
        let suffix = if held > 0 {
            format!(" (+{held} more since the last message)")
        } else {
            String::new()
        };
        tracing::warn!("{}{suffix}", message());
        self.last = Some(now);
        true
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
    /// The PLC's counter went back (a restart, or a counter that glitches).
    pub(super) restarted: Throttle,
    /// Said once: the commanded lengths changed while the counter stood.
    pub(super) commands_between_counts: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_glitching_every_fifth_reply_for_two_seconds_warns_twice() {
        // 184 restarts seen in 2 s (a glitch every 5th reply at 2 ms polls): one line a second.
        let mut t = Throttle::default();
        let t0 = Instant::now();
        let logged = (0..184)
            .filter(|k| {
                t.warn(t0 + Duration::from_micros(10_870 * k), || {
                    "went back".into()
                })
            })
            .count();
        assert_eq!(logged, 2);
        assert_eq!(
            t.held, 91,
            "held since the second line, said with the third"
        );
    }
}
