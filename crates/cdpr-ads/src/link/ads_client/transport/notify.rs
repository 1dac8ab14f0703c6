//! The cycle's inputs by device notification ([`Exchange::Notify`]): one AddDeviceNotification
//! per input symbol, by handle, in server-cycle mode with a cycle time below any PLC task's, so
//! that the PLC sends every symbol once per task cycle, stamped with its own time. Each read
//! takes every sample that has come since the last, in the order the PLC sent them: whatever
//! the ratio of the PLC's period to the shadow's, nothing is skipped and no backlog builds up
//! (taking one per read, a shadow slower than the PLC by a hair falls behind for good).

use super::AdsTransport;
use crate::link::ads_client::connection::ConnError;
use crate::link::ads_client::exchange::{Exchange, ExchangeChoice, NOT_SERVED};
use crate::link::ads_client::failure::Failure;
use crate::link::error::ControllerError;
use crate::link::transport::{Inputs, MAX_READY};
use crate::wire::{NotificationParams, error, group, trans_mode};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The cycle time asked for, 100 ns ticks: below every PLC task's, so one sample per cycle.
const EVERY_CYCLE: u32 = 1;

/// Longest wait for the first two samples after registering (within the reply timeout): a
/// PLC sends the current values at once, and the next with its task's next cycle.
const FIRST_SAMPLE: Duration = Duration::from_secs(1);

/// ADS codes that say notifications of this kind are not served: 0x701/0x702, transmission
/// mode not supported (0x713), no more notification handles (0x716).
const REFUSALS: [u32; 2] = [error::TRANSMODE_NOT_SUPPORTED, error::NO_MORE_HANDLES];

/// The notifications of one connection.
#[derive(Debug, Clone)]
pub(super) struct Subscription {
    /// The symbols (indices into the resolved names) in the order asked for.
    symbols: Vec<usize>,
    /// Their notification handles, same order.
    handles: Vec<u32>,
    /// Complete samples not taken yet, oldest first.
    ready: VecDeque<Inputs>,
    /// Values that came since `last` was made, per symbol, and the newest stamp among them:
    /// a sample is complete once every symbol has a fresh value (one frame per cycle from a
    /// TwinCAT; a server that sends each symbol in a frame of its own completes it too).
    fresh: Vec<Option<Vec<u8>>>,
    newest: u64,
    /// When the last complete sample was made: no new sample within the timeout, and the
    /// inputs are polled from then on (a PLC whose task stopped sends nothing; its values are
    /// still there).
    since: Instant,
    /// Complete samples made.
    made: u64,
}

impl Subscription {
    pub(super) fn handles(&self) -> &[u32] {
        &self.handles
    }
}

impl AdsTransport {
    /// The cycle's inputs into `out`: by notification where asked for and served (every
    /// sample since the last call), else one, polled.
    pub(super) fn inputs(
        &mut self,
        symbols: &[usize],
        out: &mut Vec<Inputs>,
    ) -> Result<(), ControllerError> {
        if self.subscription.is_none() && self.config.exchange.notify() && !self.notify_refused {
            self.subscribe(symbols)?;
        }
        match &self.subscription {
            Some(sub) if sub.symbols == symbols => self.new_samples(out),
            Some(_) => Err(ControllerError::Link(
                "the inputs asked for are not those subscribed to".into(),
            )),
            None => {
                out.push(Inputs {
                    values: self.poll(symbols)?,
                    plc_time: None,
                });
                Ok(())
            }
        }
    }

    /// Waits until a notification may have come or `until`: true then. Without a
    /// subscription (polled inputs) it sleeps to `until`.
    pub(super) fn wait_for_notification(&mut self, until: Instant) -> bool {
        let Some(sub) = &self.subscription else {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
            return false;
        };
        if !sub.ready.is_empty() {
            return true;
        }
        match self.client.as_mut() {
            Some(client) => client.wait_readable(until),
            None => true,
        }
    }

    /// Registers a notification per symbol and waits for the first sample. Refused (or no
    /// sample within the timeout) with `auto`: polling from now on, for this connection.
    fn subscribe(&mut self, symbols: &[usize]) -> Result<(), ControllerError> {
        let forced = self.config.exchange == ExchangeChoice::Force(Exchange::Notify);
        match self.try_subscribe(symbols) {
            Ok(sub) => {
                tracing::info!("ADS inputs: {}", Exchange::Notify.wire());
                self.subscription = Some(sub);
                Ok(())
            }
            Err(Failure::Other(e)) => Err(e),
            Err(f) if forced => Err(ControllerError::Unsupported {
                exchange: Exchange::Notify,
                reason: f.reason(),
            }),
            Err(f) => {
                tracing::info!(
                    "ADS notifications not served ({}); the inputs are polled",
                    f.reason()
                );
                self.notify_refused = true;
                if self.client.is_none() {
                    self.restore()?;
                }
                Ok(())
            }
        }
    }

    fn try_subscribe(&mut self, symbols: &[usize]) -> Result<Subscription, Failure> {
        let items = self.items(symbols)?;
        let mut handles = Vec::with_capacity(items.len());
        for s in &items {
            let params = NotificationParams {
                index_group: group::SYM_VALUE_BY_HANDLE,
                index_offset: s.handle,
                length: crate::wire::len32(s.size),
                trans_mode: trans_mode::SERVER_CYCLE,
                max_delay: 0,
                cycle_time: EVERY_CYCLE,
            };
            let added = self.client()?.add_notification(params);
            match added {
                Ok(h) => handles.push(h),
                Err(ConnError::Ads(code))
                    if NOT_SERVED.contains(&code) || REFUSALS.contains(&code) =>
                {
                    self.release_notifications(&handles);
                    return Err(Failure::Refused(code));
                }
                Err(e) => return Err(self.classify(&s.name, e)),
            }
        }
        let mut sub = Subscription {
            symbols: symbols.to_vec(),
            handles,
            ready: VecDeque::new(),
            fresh: vec![None; symbols.len()],
            newest: 0,
            since: Instant::now(),
            made: 0,
        };
        // Two samples: the current values, which a PLC sends at once, and the next cycle's —
        // a device that sends only on change (pyads' test server) or only once is polled.
        let first = self.config.timeout.min(FIRST_SAMPLE);
        let deadline = Instant::now() + first;
        while sub.made < 2 {
            let wait = deadline.saturating_duration_since(Instant::now());
            if wait.is_zero() {
                let handles = sub.handles.clone();
                self.release_notifications(&handles);
                return Err(Failure::Silent(format!(
                    "notifications registered but {} samples within {first:?}, not one a cycle",
                    sub.made
                )));
            }
            self.take_stamp(&mut sub, wait)?;
        }
        Ok(sub)
    }

    /// Every complete sample that has come, into `out` (none when none has); polled when none
    /// came for longer than the timeout.
    fn new_samples(&mut self, out: &mut Vec<Inputs>) -> Result<(), ControllerError> {
        let Some(mut sub) = self.subscription.take() else {
            return Err(ControllerError::Link("no notifications registered".into()));
        };
        // Every stamp waiting, without waiting for more.
        let mut result = Ok(());
        loop {
            match self.take_stamp(&mut sub, Duration::ZERO) {
                Ok(true) => {}
                Ok(false) => break,
                Err(f) => {
                    result = Err(f.into_error("notification"));
                    break;
                }
            }
        }
        let quiet = sub.ready.is_empty() && sub.since.elapsed() > self.config.timeout;
        if result.is_ok() && quiet {
            // Quiet for longer than the timeout: not a PLC sending every cycle (one that sends
            // only on change, or whose task stopped). Polled for the rest of the connection.
            tracing::info!(
                "no notification for {:?}: the inputs are polled on this connection",
                self.config.timeout
            );
            self.release_notifications(&sub.handles);
            self.notify_refused = true;
            let values = self.poll(&sub.symbols)?;
            out.push(Inputs {
                values,
                plc_time: None,
            });
            return Ok(());
        }
        out.extend(sub.ready.drain(..));
        if self.client.is_some() {
            self.subscription = Some(sub);
        }
        result
    }

    /// Takes one stamp off the connection (waiting up to `wait` for one) into `sub`: whether
    /// one came.
    fn take_stamp(&mut self, sub: &mut Subscription, wait: Duration) -> Result<bool, Failure> {
        let stamp = self.client()?.next_stamp(wait);
        let stamp = match stamp {
            Ok(Some(s)) => s,
            Ok(None) => return Ok(false),
            Err(e) => return Err(self.classify("notification", e)),
        };
        for (handle, data) in stamp.samples {
            if let Some(k) = sub.handles.iter().position(|&h| h == handle) {
                sub.fresh[k] = Some(data);
                sub.newest = sub.newest.max(stamp.filetime);
            }
        }
        if sub.fresh.iter().all(Option::is_some) {
            if sub.ready.len() == MAX_READY {
                // A reader that stopped reading: the oldest go, and the counter shows the gap.
                sub.ready.pop_front();
            }
            sub.ready.push_back(Inputs {
                values: sub.fresh.iter_mut().filter_map(Option::take).collect(),
                plc_time: Some(sub.newest),
            });
            sub.since = Instant::now();
            sub.made += 1;
        }
        Ok(true)
    }

    /// Deletes notifications (answers ignored: a dead link has dropped them anyway).
    pub(super) fn release_notifications(&mut self, handles: &[u32]) {
        if let Some(c) = self.client.as_mut() {
            for &h in handles {
                let _ = c.delete_notification(h);
            }
        }
    }
}
