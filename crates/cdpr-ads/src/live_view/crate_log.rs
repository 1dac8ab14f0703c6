//! What the foxglove crate logs, rate-limited: it logs an ERROR per message it fails to send, so
//! 100 viewers that stopped reading and then closed made it write 24 691 lines in 0.2 s. A
//! face's log subscriber asks [`admit`] for every event of the crate's [`TARGET`] (the command
//! line's does, in `init_tracing`): one a second goes through, the others are counted, and the
//! live view's publisher says how many with its next look at them ([`report_held`]: within a
//! second, and when the view stops).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The crate's log target (its modules' paths start with it).
pub const TARGET: &str = "foxglove";

/// The least time between two of the crate's lines.
pub const EVERY: Duration = crate::throttle::EVERY;

/// One throttle of the crate's lines: when the last went through, how many were held since.
#[derive(Debug)]
struct Gate {
    last: Mutex<Option<Instant>>,
    held: AtomicU64,
}

impl Gate {
    const fn new() -> Gate {
        Gate {
            last: Mutex::new(None),
            held: AtomicU64::new(0),
        }
    }

    fn admit(&self, target: &str, now: Instant) -> bool {
        if !is_crates(target) {
            return true;
        }
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|l| now.saturating_duration_since(l) < EVERY) {
            self.held.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        *last = Some(now);
        true
    }

    fn take_held(&self) -> u64 {
        self.held.swap(0, Ordering::Relaxed)
    }
}

/// The process's: the log subscriber is the process's too.
static GATE: Gate = Gate::new();

/// Whether an event of `target` is to be logged: always unless it is the foxglove crate's;
/// of the crate's, one per [`EVERY`], the others counted.
pub fn admit(target: &str) -> bool {
    GATE.admit(target, Instant::now())
}

/// Whether `target` is the foxglove crate's (`foxglove` or a module of it).
pub fn is_crates(target: &str) -> bool {
    target
        .strip_prefix(TARGET)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

/// Logs how many of the crate's lines [`admit`] held back since the last report, if any; the
/// number.
pub fn report_held() -> u64 {
    let held = GATE.take_held();
    if held > 0 {
        tracing::warn!(
            "the live view's WebSocket server (foxglove crate) logged {held} more lines, not \
             shown (at most one a second)"
        );
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of_a_burst_of_the_crates_lines_one_a_second_goes_through_and_the_rest_are_counted() {
        assert!(is_crates("foxglove::websocket::connected_client::poller"));
        assert!(is_crates("foxglove"));
        assert!(!is_crates("foxglove_bridge") && !is_crates("cdpr_ads::live_view"));
        let gate = Gate::new();
        let t0 = Instant::now();
        let poller = "foxglove::websocket::connected_client::poller";
        // 24 691 lines in 0.2 s, then 5 more over the next 2 s.
        let through = (0..24_691u64)
            .filter(|k| gate.admit(poller, t0 + Duration::from_nanos(8_100 * k)))
            .count();
        assert_eq!(through, 1);
        assert!(gate.admit("cdpr_ads::server::tcp", t0), "ours always");
        assert_eq!(gate.take_held(), 24_690);
        assert_eq!(gate.take_held(), 0, "said once");
        let later = (0..5u64)
            .filter(|k| gate.admit(poller, t0 + Duration::from_millis(1_000 + 400 * k)))
            .count();
        assert_eq!(later, 2, "at 1.0 s and 2.2 s");
        assert_eq!(gate.take_held(), 3);
    }
}
