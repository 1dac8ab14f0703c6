//! The shadow's loop: cycles at fixed deadlines, sleeps between them, stops on a flag or
//! after a duration, flushes the record. What `cdpr shadow` runs; a viewer can run it on a
//! thread of its own.

use super::{CycleReport, CycleStatus, CycleTiming, Shadow, ShadowError};
use crate::link::Controller;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest uninterrupted sleep: how late a stop request may be noticed.
const STOP_POLL: Duration = Duration::from_millis(50);

/// How often lockstep reads the counter: a tenth of the PLC period, within 0.25…1 ms, so that
/// a new PLC cycle is answered well within the cycle.
pub fn poll_interval(plc_period: Duration) -> Duration {
    (plc_period / 10).clamp(Duration::from_micros(250), Duration::from_millis(1))
}

/// Runs `shadow` until `stop` is set or `duration` has passed, then flushes its record.
/// Free-running cycles start on absolute deadlines (no drift); a cycle that ends past its
/// deadline starts the next at once and the schedule moves on (no bursts to catch up: the
/// physics catches up inside the cycle, and [`Shadow`] counts the overrun).
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
    let start = Instant::now();
    let end = duration.map(|d| start + d);
    let period = match shadow.config().timing {
        CycleTiming::Free { period, .. } => period,
        CycleTiming::Lockstep { plc_period } => poll_interval(plc_period),
    };
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
        let wake = match (report.status, report.retry_at) {
            (CycleStatus::Offline, Some(retry)) => {
                deadline = retry;
                retry
            }
            _ => {
                deadline += period;
                let after = Instant::now();
                if deadline < after {
                    deadline = after;
                }
                deadline
            }
        };
        sleep_until(end.map_or(wake, |e| wake.min(e)), stop);
    };
    // The record is flushed even when the loop ended on an error.
    let flushed = shadow.finish();
    result.and(flushed)
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
