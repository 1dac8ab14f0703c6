//! Rate-limited warnings: one line a second at most for one kind of trouble, with the count of
//! what was held back since the last one. A shadow in trouble may hit the same problem every
//! 2 ms; a server under a flood of broken connections or failed handshakes sees one per
//! connection (a Secure ADS handshake flood wrote 21 879 lines in 20 s before this).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The least time between two lines of one throttle.
pub(crate) const EVERY: Duration = Duration::from_secs(1);

/// Logs at most once a second, counting what it held back.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    last: Option<Instant>,
    held: u64,
}

impl Throttle {
    /// Logs `message` unless one was logged within the last second; whether it was logged.
    pub(crate) fn warn(&mut self, now: Instant, message: impl FnOnce() -> String) -> bool {
        if self.recent(now) {
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

    /// Says how many were held back since the last line, if any were and a second has gone
    /// by (a flood that stopped would otherwise keep its count to itself): `what` names them,
    /// e.g. "ADS connections closed for a malformed frame". Whether it logged.
    pub(crate) fn flush(&mut self, now: Instant, what: &str) -> bool {
        if self.held == 0 || self.recent(now) {
            return false;
        }
        let held = std::mem::take(&mut self.held);
        tracing::warn!("{what}: {held} more since the last message");
        self.last = Some(now);
        true
    }

    fn recent(&self, now: Instant) -> bool {
        self.last
            .is_some_and(|l| now.saturating_duration_since(l) < EVERY)
    }
}

/// A [`Throttle`] shared by the threads of a server, with the name of what it counts (for
/// [`Throttle::flush`]).
#[derive(Debug)]
pub(crate) struct SharedThrottle {
    what: &'static str,
    inner: Mutex<Throttle>,
}

impl SharedThrottle {
    pub(crate) const fn new(what: &'static str) -> SharedThrottle {
        SharedThrottle {
            what,
            inner: Mutex::new(Throttle {
                last: None,
                held: 0,
            }),
        }
    }

    /// [`Throttle::warn`] now.
    pub(crate) fn warn(&self, message: impl FnOnce() -> String) -> bool {
        self.lock().warn(Instant::now(), message)
    }

    /// [`Throttle::flush`] now (`force`: even within the second, as a server stops).
    pub(crate) fn flush(&self, force: bool) -> bool {
        let mut t = self.lock();
        if force {
            t.last = None;
        }
        t.flush(Instant::now(), self.what)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Throttle> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
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

    #[test]
    fn what_a_flood_held_back_is_said_once_a_second_has_gone_by() {
        let mut t = Throttle::default();
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        assert!(t.warn(at(0), || "broken".into()));
        for k in 1..=500 {
            assert!(!t.warn(at(k), || "broken".into()));
        }
        assert!(!t.flush(at(900), "broken ones"), "within the second");
        assert!(t.flush(at(1001), "broken ones"));
        assert_eq!(t.held, 0);
        assert!(!t.flush(at(3000), "broken ones"), "nothing held");
    }
}
