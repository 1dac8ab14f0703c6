//! Notifications: what a client registers (AddDeviceNotification, alone or in a sum) and the
//! samples it gets.
//!
//! Two clocks. With a PLC task driving the device ([`Device::driven_by_plc`]), data
//! notifications are sampled by [`Device::plc_cycle_notifications`], which the PLC task calls
//! right after it has written its outputs: a cyclic registration whose cycle time is at most
//! the task period (or 0) gets one sample per PLC cycle, a longer one every k-th cycle
//! (k = cycle time ÷ task period), an on-change one a sample after each such cycle whose bytes
//! changed; every sample stamped with the PLC's time, not the wall clock's. Without a PLC task
//! (a bare server in tests), and always for the runtime's state (0xF100) and the symbol
//! version (0xF008), [`Device::due_notifications`] samples on the wall clock.
//!
//! Either way, all samples due for one client at one time go out in one DeviceNotification
//! frame (one stamp, several samples), as TwinCAT batches them.

use super::{Device, MIN_NOTIFICATION_PERIOD, Session};
use crate::wire::{self, AmsAddr, AmsHeader, NotificationParams, error, group, trans_mode};
use std::time::{Duration, Instant};

/// Bytes of samples one connection may have registered in all (a client asking for more gets
/// 0x70A): what one cycle's notification frames to it can weigh.
pub const MAX_NOTIFICATION_BYTES: usize = 1 << 20;

/// What a notification samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Bytes of the data area (registered by address or by a symbol handle).
    Data { offset: u32 },
    /// 0xF100 offset 0: the runtime's ADS state and device state.
    RuntimeState,
    /// 0xF008: the symbol version.
    SymbolVersion,
}

/// One registered notification.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The client's address (target of the notification frames).
    pub client: AmsAddr,
    /// The address the client registered with (source of the frames; AdsLib drops frames
    /// from any other address).
    pub server: AmsAddr,
    pub source: Source,
    pub length: u32,
    pub on_change: bool,
    /// The cycle time asked for (at least [`MIN_NOTIFICATION_PERIOD`]).
    pub period: Duration,
    /// Wall clock: when the next sample is due.
    pub next_due: Instant,
    /// PLC clock: the cycle of the first sample (every k-th cycle from there).
    pub first_cycle: Option<u32>,
    pub last_sent: Option<Vec<u8>>,
}

/// The samples of one frame: its addresses and (handle, bytes) pairs.
type Batch = ((AmsAddr, AmsAddr), Vec<(u32, Vec<u8>)>);

impl Device {
    pub(super) fn add_notification(
        &self,
        session: &mut Session,
        header: &AmsHeader,
        p: &NotificationParams,
    ) -> Result<u32, u32> {
        let on_change = match p.trans_mode {
            trans_mode::SERVER_CYCLE | trans_mode::SERVER_CYCLE2 => false,
            trans_mode::SERVER_ON_CHANGE | trans_mode::SERVER_ON_CHANGE2 => true,
            _ => return Err(error::TRANSMODE_NOT_SUPPORTED),
        };
        if p.length == 0 || p.length as usize > wire::MAX_REPLY_LEN {
            return Err(error::INVALID_SIZE);
        }
        let source = match p.index_group {
            group::PLC_DATA => {
                self.memory.check_range(p.index_offset, p.length as usize)?;
                Source::Data {
                    offset: p.index_offset,
                }
            }
            group::SYM_VALUE_BY_HANDLE => {
                let s = self.handle(session, p.index_offset)?;
                if p.length as usize > s.size() {
                    return Err(error::INVALID_SIZE);
                }
                Source::Data { offset: s.offset }
            }
            group::DEVICE_DATA if p.index_offset == 0 && p.length <= 4 => Source::RuntimeState,
            group::SYM_VERSION if p.length <= 1 => Source::SymbolVersion,
            group::DEVICE_DATA | group::SYM_VERSION => return Err(error::INVALID_SIZE),
            _ => return Err(error::INVALID_GROUP),
        };
        if session.notifications.len() >= super::MAX_NOTIFICATIONS {
            return Err(error::NO_MORE_HANDLES);
        }
        let registered: usize = session
            .notifications
            .values()
            .map(|r| r.length as usize)
            .sum();
        if registered + p.length as usize > MAX_NOTIFICATION_BYTES {
            return Err(error::NO_MEMORY);
        }
        let mut period =
            Duration::from_nanos(u64::from(p.cycle_time) * 100).max(MIN_NOTIFICATION_PERIOD);
        // The runtime's state and symbol version change with the PLC task at the fastest: no
        // cyclic sample of them more often than its period.
        if let (Some(task), false) = (self.plc_task, matches!(source, Source::Data { .. })) {
            period = period.max(task);
        }
        session.next_notification = session.next_notification.wrapping_add(1).max(1);
        while session
            .notifications
            .contains_key(&session.next_notification)
        {
            session.next_notification = session.next_notification.wrapping_add(1).max(1);
        }
        let handle = session.next_notification;
        session.notifications.insert(
            handle,
            Registration {
                client: header.source,
                server: header.target,
                source,
                length: p.length,
                on_change,
                period,
                // The first sample goes out at once (the next PLC cycle when a PLC drives
                // it), as TwinCAT sends the current value.
                next_due: Instant::now(),
                first_cycle: None,
                last_sent: None,
            },
        );
        Ok(handle)
    }

    pub(super) fn delete_notification(
        &self,
        session: &mut Session,
        handle: u32,
    ) -> Result<(), u32> {
        session
            .notifications
            .remove(&handle)
            .map(|_| ())
            .ok_or(error::NOTIFY_HANDLE_INVALID)
    }

    /// Whether the PLC task samples `reg` (else the wall clock does).
    fn plc_driven(&self, reg: &Registration) -> bool {
        self.plc_task.is_some() && matches!(reg.source, Source::Data { .. })
    }

    /// Samples the registrations `due` of `session` (by handle), all data under one lock (one
    /// consistent snapshot), and batches the ones to send into frames stamped `stamp`.
    fn sample(&self, session: &mut Session, due: &[u32], stamp: u64) -> Vec<Vec<u8>> {
        let places: Vec<(u32, usize)> = due
            .iter()
            .filter_map(|h| session.notifications.get(h))
            .filter_map(|r| match r.source {
                Source::Data { offset } => Some((offset, r.length as usize)),
                _ => None,
            })
            .collect();
        let mut data = self.memory.read_many(&places).into_iter();
        let mut batches: Vec<Batch> = Vec::new();
        for h in due {
            let Some(reg) = session.notifications.get_mut(h) else {
                continue;
            };
            let bytes = match reg.source {
                Source::Data { .. } => match data.next() {
                    Some(Ok(bytes)) => bytes,
                    _ => continue,
                },
                Source::RuntimeState => {
                    self.runtime_state()[..(reg.length as usize).min(4)].to_vec()
                }
                Source::SymbolVersion => self.symbol_version().to_vec(),
            };
            if reg.on_change && reg.last_sent.as_deref() == Some(bytes.as_slice()) {
                continue;
            }
            reg.last_sent = Some(bytes.clone());
            let key = (reg.client, reg.server);
            match batches.iter_mut().find(|(k, _)| *k == key) {
                Some((_, samples)) => samples.push((*h, bytes)),
                None => batches.push((key, vec![(*h, bytes)])),
            }
        }
        batches
            .into_iter()
            .flat_map(|((client, server), samples)| frames(client, server, stamp, &samples))
            .collect()
    }

    /// The wall-clock notifications due at `now` for one session (every one without a PLC
    /// task; the runtime state and symbol version ones with), and when the next is due.
    pub fn due_notifications(
        &self,
        session: &mut Session,
        now: Instant,
    ) -> (Vec<Vec<u8>>, Option<Instant>) {
        let mut due = Vec::new();
        let mut next: Option<Instant> = None;
        for (&handle, reg) in session.notifications.iter_mut() {
            if self.plc_driven(reg) {
                continue;
            }
            if reg.next_due <= now {
                due.push(handle);
                // Catch up without bursts after a stall: the next slot after `now`.
                while reg.next_due <= now {
                    reg.next_due += reg.period;
                }
            }
            next = Some(next.map_or(reg.next_due, |n| n.min(reg.next_due)));
        }
        due.sort_unstable();
        let stamp = wire::filetime(std::time::SystemTime::now());
        (self.sample(session, &due, stamp), next)
    }

    /// The PLC-driven notifications of one session after PLC cycle `cycle`, stamped `stamp`
    /// (FILETIME, the PLC's time at the end of that cycle): one frame per client address with
    /// every sample due (more only when they exceed a frame). Nothing without a PLC task.
    pub fn plc_cycle_notifications(
        &self,
        session: &mut Session,
        cycle: u32,
        stamp: u64,
    ) -> Vec<Vec<u8>> {
        let Some(task) = self.plc_task else {
            return Vec::new();
        };
        let task_ns = task.as_nanos().max(1);
        let mut due = Vec::new();
        for (&handle, reg) in session.notifications.iter_mut() {
            if !self.plc_driven(reg) {
                continue;
            }
            let first = *reg.first_cycle.get_or_insert(cycle);
            // Every k-th cycle: k = cycle time ÷ task period, at least 1.
            let k = (reg.period.as_nanos() / task_ns).clamp(1, u128::from(u32::MAX)) as u32;
            if cycle.wrapping_sub(first).is_multiple_of(k) {
                due.push(handle);
            }
        }
        due.sort_unstable();
        self.sample(session, &due, stamp)
    }
}

/// Notification frames carrying `samples` with one stamp: as few as the frame limit allows
/// (one, unless the samples together exceed [`wire::MAX_AMS_LEN`]).
fn frames(
    client: AmsAddr,
    server: AmsAddr,
    stamp: u64,
    samples: &[(u32, Vec<u8>)],
) -> Vec<Vec<u8>> {
    // AMS header, length, stamp count, stamp, sample count.
    const OVERHEAD: usize = wire::AMS_HEADER_LEN + 4 + 4 + 8 + 4;
    let mut out = Vec::new();
    let mut chunk: Vec<(u32, &[u8])> = Vec::new();
    let mut size = OVERHEAD;
    for (h, bytes) in samples {
        let one = 8 + bytes.len();
        if !chunk.is_empty() && size + one > wire::MAX_AMS_LEN {
            out.push(wire::encode_notification(client, server, stamp, &chunk));
            chunk.clear();
            size = OVERHEAD;
        }
        chunk.push((*h, bytes));
        size += one;
    }
    if !chunk.is_empty() {
        out.push(wire::encode_notification(client, server, stamp, &chunk));
    }
    out
}
