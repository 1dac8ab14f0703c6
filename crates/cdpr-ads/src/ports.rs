//! What the listening ports of one process share: its file descriptors.
//!
//! Every socket is a descriptor, and a process has `RLIMIT_NOFILE` of them (1 024 in a
//! default shell). Without caps, 1 012 idle connections to one port (the live view's) took
//! them all and the ADS server then failed every client ("Too many open files"). So:
//!
//! - each listener caps its connections, and the caps' descriptors add up to well under the
//!   default limit (table below, checked by a test): one listener at its cap leaves the others
//!   theirs;
//! - every connection also takes its descriptors from one process-wide budget,
//!   [`descriptors`]: the limit less a reserve ([`reserve`]: an eighth, at least
//!   [`RESERVE_MIN`]) kept for what is not a connection (the recording, robot files, the
//!   runtimes' pollers, the listeners themselves). A connection the budget cannot take is closed
//!   at once, counted and logged (rate-limited): a limit lowered under the caps' sum
//!   (`ulimit -n 256`) costs connections, never the run's files;
//! - at first use the soft limit is raised to the hard one (what the hard limit is for; on
//!   most systems 524 288 or more), so that the budget is rarely the bound.
//!
//! | listener | cap | descriptors each | at most |
//! |---|---|---|---|
//! | ADS (plain or Secure ADS, [`crate::server::tcp`]) | 64 connections | 3 | 192 |
//! | Secure ADS handshakes under way | 2 × 16 | 2 | 64 |
//! | live view, upgraded ([`crate::live_view`]) | 32 viewers | 3 | 96 |
//! | live view, upgrade request still coming | 2 × 16 | 1 | 32 |
//! | sum | | | 384 of a 1 024 limit's budget of 896 |

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The least number of descriptors kept out of the connections' budget.
pub const RESERVE_MIN: usize = 64;

/// What the connections of every listener may hold at most together, beside the reserve:
/// one listener's caps times descriptors each, as in the module's table.
pub const CAPS_SUM: usize = 64 * 3 + 2 * 16 * 2 + 32 * 3 + 2 * 16;

/// The descriptors kept for what is not a connection, out of a limit of `limit`.
pub fn reserve(limit: usize) -> usize {
    (limit / 8).max(RESERVE_MIN).min(limit)
}

/// The process's descriptors as the connections see them.
#[derive(Debug)]
pub struct Descriptors {
    /// The soft `RLIMIT_NOFILE` (after raising it).
    limit: usize,
    /// What connections may hold together: the limit less the reserve.
    budget: usize,
    held: AtomicUsize,
}

/// Descriptors taken from the budget, given back on drop (when the connection's sockets are
/// closed).
#[derive(Debug)]
pub struct Held {
    from: &'static Descriptors,
    n: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.from.held.fetch_sub(self.n, Ordering::AcqRel);
    }
}

impl Held {
    /// Takes `n` more for the same connection (its second socket); `false` when the budget
    /// cannot (this one is kept).
    pub fn grow(&mut self, n: usize) -> bool {
        if self.from.reserve_n(n) {
            self.n += n;
            true
        } else {
            false
        }
    }
}

impl Descriptors {
    /// A budget for a process allowed `limit` descriptors.
    pub fn with_limit(limit: usize) -> Descriptors {
        Descriptors {
            limit,
            budget: limit - reserve(limit),
            held: AtomicUsize::new(0),
        }
    }

    /// The soft `RLIMIT_NOFILE`.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// What connections may hold together.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// What they hold now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// `n` descriptors for a new connection, or `None` when they would eat into the reserve.
    pub fn take(&'static self, n: usize) -> Option<Held> {
        self.reserve_n(n).then(|| Held { from: self, n })
    }

    fn reserve_n(&self, n: usize) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| {
                (h + n <= self.budget).then_some(h + n)
            })
            .is_ok()
    }
}

/// The process's budget, read (and the soft limit raised to the hard one) at first use.
pub fn descriptors() -> &'static Descriptors {
    static ONE: OnceLock<Descriptors> = OnceLock::new();
    ONE.get_or_init(|| Descriptors::with_limit(raise_limit()))
}

/// Raises the soft `RLIMIT_NOFILE` to the hard one (bounded to 2^20: an unlimited hard limit
/// is not a number of sockets to budget); the soft limit now. Where the limit cannot be read,
/// 1 024 (the usual default).
#[cfg(unix)]
fn raise_limit() -> usize {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    const MOST: u64 = 1 << 20;
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 1024;
    };
    let wanted = hard.min(MOST);
    if soft < wanted {
        match setrlimit(Resource::RLIMIT_NOFILE, wanted, hard) {
            Ok(()) => return usize::try_from(wanted).unwrap_or(usize::MAX),
            Err(e) => tracing::debug!("cannot raise RLIMIT_NOFILE from {soft} to {wanted}: {e}"),
        }
    }
    usize::try_from(soft.min(MOST)).unwrap_or(usize::MAX)
}

/// Windows has no per-process descriptor limit of this kind: the budget is the caps' room.
#[cfg(not(unix))]
fn raise_limit() -> usize {
    1 << 14
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listener_at_its_cap_fits_a_default_limits_budget() {
        // The caps as the listeners declare them, against the module's table.
        use crate::live_view::front;
        use crate::server::tcp;
        let ads = tcp::ServerConfig::new("127.0.0.1:0".parse().expect("addr")).max_connections
            * tcp::DESCRIPTORS_PER_CONNECTION;
        let handshakes = 2 * tcp::MAX_HANDSHAKES * tcp::DESCRIPTORS_PER_HANDSHAKE;
        let viewers = front::MAX_VIEWERS * front::DESCRIPTORS_PER_VIEWER;
        let upgrading = 2 * front::MAX_UPGRADING;
        assert_eq!(ads + handshakes + viewers + upgrading, CAPS_SUM);
        let default = Descriptors::with_limit(1024);
        assert_eq!(default.budget(), 896);
        assert!(CAPS_SUM <= default.budget(), "{CAPS_SUM}");
    }

    #[test]
    fn a_connection_the_budget_cannot_take_is_refused_and_its_descriptors_come_back() {
        let d: &'static Descriptors = Box::leak(Box::new(Descriptors::with_limit(100)));
        // 100 - max(12, 64) = 36 for connections.
        assert_eq!(d.budget(), 36);
        let held: Vec<Held> = (0..12).map_while(|_| d.take(3)).collect();
        assert_eq!(held.len(), 12);
        assert!(d.take(1).is_none(), "the reserve is not for connections");
        drop(held);
        assert_eq!(d.held(), 0);
        let mut one = d.take(1).expect("room again");
        assert!(one.grow(35));
        assert!(!one.grow(1));
        drop(one);
        assert_eq!(d.held(), 0);
    }
}
