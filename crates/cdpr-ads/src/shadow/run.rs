//! The shadow's loop: cycles at fixed deadlines, sleeps between them, stops on a flag or
//! after a duration, flushes the record. What `cdpr shadow` runs; a viewer can run it on a
//! thread of its own.

use super::{CycleReport, CycleStatus, CycleTiming, Shadow, ShadowError};
use crate::link::Controller;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest uninterrupted sleep: how late a stop request may be noticed.
const STOP_POLL: Duration = Duration::from_millis(50);

/// The shortest time between two polls.
const FASTEST_POLL: Duration = Duration::from_micros(250);

/// How often lockstep reads the counter: a tenth of the PLC period, within 0.25…1 ms, so that
/// a new PLC cycle is answered well within the cycle.
pub fn poll_interval(plc_period: Duration) -> Duration {
    (plc_period / 10).clamp(FASTEST_POLL, Duration::from_millis(1))
}

/// The time between two scheduled cycles: lockstep [`poll_interval`]; free-running the
/// configured period — where the inputs are polled, at most half the PLC's measured period
/// (not below 0.25 ms), so that every PLC cycle is seen (notifications bring each cycle as it
/// comes, and a cycle runs then).
pub fn cycle_period<C: Controller>(shadow: &Shadow<C>) -> Duration {
    match shadow.config().timing {
        CycleTiming::Lockstep { plc_period } => poll_interval(plc_period),
        CycleTiming::Free { period, .. } if shadow.notified() => period,
        CycleTiming::Free { period, .. } => {
            let half = Duration::from_secs_f64(shadow.plc_period() / 2.0);
            period.min(half.max(FASTEST_POLL))
        }
    }
}

/// Runs `shadow` until `stop` is set or `duration` has passed, then flushes its record.
/// Free-running cycles start on absolute deadlines (no drift) and, where the samples come by
/// notification, also as soon as one comes: each is answered at once, whatever the ratio of
/// the PLC's period to the shadow's. A cycle that ends past its deadline starts the next at
/// once and the schedule moves on (no bursts to catch up: the physics catches up inside the
/// cycle, and [`Shadow`] counts the overrun).
pub fn run<C: Controller>(
    shadow: &mut Shadow<C>,
    duration: Option<Duration>,
    stop: &AtomicBool,
) -> Result<(), ShadowError> {
    run_with(shadow, duration, stop, |_, _| {})
}

/// [`run`], calling `after_cycle` after each cycle (outside its measured time): how the
/// viewer's live mode publishes the state it draws without touching the loop's timing.
pub fn run_with<C: Controller>(
    shadow: &mut Shadow<C>,
    duration: Option<Duration>,
    stop: &AtomicBool,
    mut after_cycle: impl FnMut(&Shadow<C>, &CycleReport),
) -> Result<(), ShadowError> {
    let scheduling = crate::realtime::prefer_current_thread(
        shadow.config().realtime,
        crate::realtime::Role::Shadow,
    );
    tracing::info!("shadow cycle: {scheduling}");
    shadow.scheduling = Some(scheduling);
    let start = Instant::now();
    let end = duration.map(|d| start + d);
    let mut deadline = start;
    let result = loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) || end.is_some_and(|e| now >= e) {
            break Ok(());
        }
        let report = match shadow.cycle_at(now) {
            Ok(r) => r,
            Err(e) => break Err(e),
        };
        after_cycle(shadow, &report);
        if let (CycleStatus::Offline, Some(retry)) = (report.status, report.retry_at) {
            deadline = retry;
            sleep_until(end.map_or(retry, |e| retry.min(e)), stop);
            continue;
        }
        let period = cycle_period(shadow);
        // The next deadline on the schedule (a cycle that a sample brought early keeps it).
        let after = Instant::now();
        while deadline <= now {
            deadline += period;
        }
        if deadline < after {
            deadline = after;
        }
        wait_until(shadow, end.map_or(deadline, |e| deadline.min(e)), stop);
    };
    // A run that ends without its PLC closes its record with a gap row (and is an error when
    // the PLC was lost for longer than the link's timeout); the record is flushed even when
    // the loop ended on an error.
    let lost_after = shadow.config().lost_after;
    let ended = match result {
        Ok(()) => shadow.end_at(Instant::now(), lost_after),
        Err(e) => Err(e),
    };
    let flushed = shadow.finish();
    ended.and(flushed)
}

/// Waits until `wake`, a stop request, or a sample the controller sent of its own accord.
fn wait_until<C: Controller>(shadow: &mut Shadow<C>, wake: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= wake || stop.load(Ordering::Relaxed) {
            return;
        }
        if shadow.wait_for_samples(wake.min(now + STOP_POLL)) {
            return;
        }
    }
}

fn sleep_until(wake: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= wake || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((wake - now).min(STOP_POLL));
    }
}
