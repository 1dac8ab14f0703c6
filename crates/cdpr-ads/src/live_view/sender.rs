//! The caller's side of the live view: [`LiveSender::offer`], which a shadow's cycle, a virtual
//! PLC's cycle or a viewer's frame calls, and which must never make it wait.
//!
//! The queue is a fixed pool of [`Snapshot`] buffers: `offer` takes a free one (a pop under
//! a mutex only offer and the publisher ever hold, each for a few instructions), lets the
//! caller copy its numbers into it and sends it to the publisher thread; the publisher hands
//! it back once encoded. No free buffer means the publisher is behind: the snapshot is
//! dropped and counted, the caller goes on. The buffers' vectors keep their capacity, so after
//! the first few offers nothing is allocated on the caller's side.
//!
//! Offers are throttled before anything is copied (one atomic load): at most one snapshot per
//! [`RUN_PERIOD`](super::RUN_PERIOD) is taken, so a 2 kHz shadow cycle costs the publisher
//! 100 wake-ups a second, not 2000, and a throttled offer is not a drop.

use cdpr_core::kinematics::Pose;
use cdpr_core::recording::messages::ShadowCycle;
use cdpr_core::robot::Robot;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a face hands the live view: the numbers of one instant of its run.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The run's time (shadow time, the PLC's time, the viewer's simulated time), s.
    pub time: f64,
    /// The commanded pose (the controller's, or the trajectory's).
    pub commanded: Pose,
    /// The pose drawn (the physics' state; the PLC's set pose for `cdpr plc`).
    pub pose: Pose,
    /// Per cable (per actuator for a robot with legs): commanded length, m.
    pub commanded_lengths: Vec<f64>,
    /// Per cable (per leg): geometric length, m.
    pub lengths: Vec<f64>,
    /// Per cable (per leg): tension (force), N; empty when the face has none (`cdpr plc`).
    pub tensions: Vec<f64>,
    /// Robots with legs, per actuator: its position (m or rad); empty for cable robots.
    pub actuators: Vec<f64>,
    /// The face's extra columns (named when the view starts, [`super::LiveOptions::extra`]).
    pub extra: Vec<f64>,
    /// The shadow's cycle statistics, when the face sends them (about once a second).
    pub cycle: Option<ShadowCycle>,
    /// A robot to draw from now on (the viewer's demo or picker changed it; an `Arc` clone,
    /// no copy); `None`: the same robot.
    pub robot: Option<Arc<Robot>>,
}

impl Snapshot {
    /// Empties the per-cable vectors, keeping their capacity.
    fn clear(&mut self) {
        self.commanded_lengths.clear();
        self.lengths.clear();
        self.tensions.clear();
        self.actuators.clear();
        self.extra.clear();
        self.cycle = None;
        self.robot = None;
    }
}

/// What became of an offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// Queued for the publisher.
    Queued,
    /// Too soon after the last one taken: not wanted (not a drop).
    Throttled,
    /// The queue was full (the publisher is behind, or gone): dropped and counted.
    Dropped,
}

/// Counters shared by the senders and the publisher.
#[derive(Debug, Default)]
pub struct Counters {
    /// Snapshots queued.
    pub queued: AtomicU64,
    /// Snapshots dropped because the queue was full.
    pub dropped: AtomicU64,
    /// Snapshots the publisher has encoded and logged (whether or not a client listened).
    pub published: AtomicU64,
    /// Scenes sent.
    pub scenes: AtomicU64,
}

/// The shared state of every clone of a sender.
#[derive(Debug)]
struct Shared {
    origin: Instant,
    period_ns: u64,
    /// Nanoseconds since `origin` before which offers are throttled.
    next_due_ns: AtomicU64,
    free: Mutex<Vec<Snapshot>>,
    queue: SyncSender<Snapshot>,
    counters: Arc<Counters>,
}

/// A face's handle on the live view: cheap to clone, `offer` never blocks.
#[derive(Debug, Clone)]
pub struct LiveSender {
    shared: Arc<Shared>,
}

/// The publisher's end: the queue, and the way back for used buffers.
pub(super) struct Queue {
    pub rx: Receiver<Snapshot>,
    sender: LiveSender,
}

impl Queue {
    /// Hands an encoded snapshot's buffer back to the senders.
    pub fn recycle(&self, mut snapshot: Snapshot) {
        snapshot.clear();
        lock(&self.sender.shared.free).push(snapshot);
    }
}

fn lock(free: &Mutex<Vec<Snapshot>>) -> std::sync::MutexGuard<'_, Vec<Snapshot>> {
    // A poisoned pool is still a pool of buffers.
    free.lock().unwrap_or_else(|p| p.into_inner())
}

/// A queue of `capacity` snapshots taking at most one per `period`, and its sender.
pub(super) fn queue(
    capacity: usize,
    period: Duration,
    counters: Arc<Counters>,
) -> (LiveSender, Queue) {
    let capacity = capacity.max(1);
    let (tx, rx) = std::sync::mpsc::sync_channel(capacity);
    let sender = LiveSender {
        shared: Arc::new(Shared {
            origin: Instant::now(),
            period_ns: u64::try_from(period.as_nanos()).unwrap_or(u64::MAX),
            next_due_ns: AtomicU64::new(0),
            free: Mutex::new((0..capacity).map(|_| Snapshot::default()).collect()),
            queue: tx,
            counters,
        }),
    };
    let queue = Queue {
        rx,
        sender: sender.clone(),
    };
    (sender, queue)
}

impl LiveSender {
    /// Whether an offer now would be taken (not throttled): lets a face skip gathering what
    /// costs more than a copy (the shadow's commanded pose is a forward kinematics solve).
    pub fn due(&self) -> bool {
        self.now_ns() >= self.shared.next_due_ns.load(Ordering::Relaxed)
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.shared.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Offers a snapshot, which `fill` writes into a recycled buffer (its vectors empty, their
    /// capacity kept) — only when the offer is taken. Never blocks, never sleeps.
    pub fn offer(&self, fill: impl FnOnce(&mut Snapshot)) -> Offered {
        let s = &*self.shared;
        let now = self.now_ns();
        let due = s.next_due_ns.load(Ordering::Relaxed);
        if now < due {
            return Offered::Throttled;
        }
        // The next slot one period after this one's, or after now when the caller fell a
        // whole period behind (no burst to catch up): at most one snapshot per period on
        // average, whatever the caller's rate.
        let next = if now - due >= s.period_ns {
            now.saturating_add(s.period_ns)
        } else {
            due.saturating_add(s.period_ns)
        };
        if s.next_due_ns
            .compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            // Another clone took this slot.
            return Offered::Throttled;
        }
        let Some(mut snapshot) = lock(&s.free).pop() else {
            s.counters.dropped.fetch_add(1, Ordering::Relaxed);
            return Offered::Dropped;
        };
        fill(&mut snapshot);
        match s.queue.try_send(snapshot) {
            Ok(()) => {
                s.counters.queued.fetch_add(1, Ordering::Relaxed);
                Offered::Queued
            }
            Err(TrySendError::Full(snapshot) | TrySendError::Disconnected(snapshot)) => {
                let mut snapshot = snapshot;
                snapshot.clear();
                lock(&s.free).push(snapshot);
                s.counters.dropped.fetch_add(1, Ordering::Relaxed);
                Offered::Dropped
            }
        }
    }

    /// Snapshots dropped so far (the queue was full).
    pub fn dropped(&self) -> u64 {
        self.shared.counters.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_are_throttled_to_one_per_period_and_a_full_queue_drops_and_counts() {
        let counters = Arc::new(Counters::default());
        let (sender, queue) = queue(3, Duration::from_millis(20), Arc::clone(&counters));
        // Nobody reads: three are queued, the following ones dropped, none blocks.
        let mut outcomes = Vec::new();
        let started = Instant::now();
        while outcomes
            .iter()
            .filter(|o| **o != Offered::Throttled)
            .count()
            < 6
        {
            outcomes.push(sender.offer(|s| {
                s.time = 1.0;
                s.lengths.extend_from_slice(&[1.0, 2.0]);
            }));
            assert!(started.elapsed() < Duration::from_secs(5), "{outcomes:?}");
        }
        let taken: Vec<Offered> = outcomes
            .iter()
            .copied()
            .filter(|o| *o != Offered::Throttled)
            .collect();
        assert_eq!(
            taken,
            [
                Offered::Queued,
                Offered::Queued,
                Offered::Queued,
                Offered::Dropped,
                Offered::Dropped,
                Offered::Dropped
            ]
        );
        assert_eq!(sender.dropped(), 3);
        assert_eq!(counters.queued.load(Ordering::Relaxed), 3);
        // Six taken in at least five periods: the throttle held (the first is taken at once).
        assert!(started.elapsed() >= Duration::from_millis(100));
        // A buffer handed back is taken again, emptied.
        let first = queue.rx.try_recv().expect("queued");
        assert_eq!(first.lengths, [1.0, 2.0]);
        queue.recycle(first);
        std::thread::sleep(Duration::from_millis(25));
        let mut seen = None;
        assert_eq!(
            sender.offer(|s| seen = Some(s.lengths.len())),
            Offered::Queued
        );
        assert_eq!(seen, Some(0));
    }

    #[test]
    fn a_gone_publisher_turns_offers_into_drops() {
        let counters = Arc::new(Counters::default());
        let (sender, queue) = queue(2, Duration::ZERO, counters);
        drop(queue);
        assert_eq!(sender.offer(|_| {}), Offered::Dropped);
        assert_eq!(sender.dropped(), 1);
    }
}
