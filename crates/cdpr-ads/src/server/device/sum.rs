//! Sum commands (0xF080–0xF086): many sub-requests in one round trip, dispatched through the
//! same Read/Write/ReadWrite/notification handlers as single requests.

use super::{Device, Session};
use crate::wire::{self, AmsHeader, SumItem, error, group};

impl Device {
    /// A sum command with `count` items. Per-item errors go in the item's result slot; the
    /// sum itself fails only when its payload cannot be decoded.
    pub(super) fn sum(
        &self,
        session: &mut Session,
        header: &AmsHeader,
        ig: u32,
        count: u32,
        read_length: u32,
        data: &[u8],
    ) -> Result<Vec<u8>, u32> {
        let is_sum = |g: u32| (group::SUM_READ..=group::SUM_DELETE_NOTIFICATION).contains(&g);
        let results: Vec<(u32, Vec<u8>, u32)> = match ig {
            group::SUM_ADD_NOTIFICATION => wire::decode_sum_notifications(count, data)?
                .iter()
                .map(|p| match self.add_notification(session, header, p) {
                    Ok(h) => (0, h.to_le_bytes().to_vec(), 4),
                    Err(e) => (e, Vec::new(), 4),
                })
                .collect(),
            group::SUM_DELETE_NOTIFICATION => wire::decode_sum_handles(count, data)?
                .iter()
                .map(|h| match session.notifications.remove(h) {
                    Some(_) => (0, Vec::new(), 0),
                    None => (error::NOTIFY_HANDLE_INVALID, Vec::new(), 0),
                })
                .collect(),
            group::SUM_READ_WRITE => {
                let items = wire::decode_sum_items(ig, count, data)?;
                self.sum_read_write(session, header, &items, read_length)?
            }
            _ => {
                let items = wire::decode_sum_items(ig, count, data)?;
                let admitted = admit(ig, &items, read_length)?;
                // One lock for all plain data-area reads keeps a sum read one snapshot.
                let snapshot = self.sum_snapshot(session, ig, &items, &admitted);
                items
                    .iter()
                    .zip(snapshot)
                    .zip(admitted)
                    .map(|((it, pre), admitted)| {
                        let r = if !admitted {
                            Err(error::INVALID_SIZE)
                        } else if is_sum(it.index_group) {
                            Err(error::SERVICE_NOT_SUPPORTED)
                        } else if let Some(pre) = pre {
                            pre
                        } else {
                            match ig {
                                group::SUM_WRITE => self
                                    .write(session, it.index_group, it.index_offset, it.data)
                                    .map(|()| Vec::new()),
                                group::SUM_READ_WRITE => self.read_write(
                                    session,
                                    header,
                                    it.index_group,
                                    it.index_offset,
                                    it.read_length,
                                    it.data,
                                ),
                                _ => self.read(session, it.index_group, it.index_offset, it.length),
                            }
                        };
                        match r {
                            Ok(d) => (0, d, it.read_length),
                            Err(e) => (e, Vec::new(), it.read_length),
                        }
                    })
                    .collect()
            }
        };
        Ok(wire::encode_sum_reply(ig, &results))
    }

    /// 0xF082: each item executed in turn, its read length capped at what is left of the
    /// reply budget (the smaller of `read_length` and [`wire::MAX_REPLY_LEN`]), the budget
    /// then charged with what the item's reply really holds. Items claim what they might need
    /// (ads-client's handle requests claim 0xFFFF each) and answer a few bytes: counting the
    /// claims would refuse all but the first. An item that cannot answer within what is left
    /// fails alone (0x705), as its own service decides.
    fn sum_read_write(
        &self,
        session: &mut Session,
        header: &AmsHeader,
        items: &[SumItem],
        read_length: u32,
    ) -> Result<Vec<(u32, Vec<u8>, u32)>, u32> {
        let budget = (read_length as usize).min(wire::MAX_REPLY_LEN);
        let mut spent = 8usize
            .checked_mul(items.len())
            .filter(|&n| n <= budget)
            .ok_or(error::INVALID_SIZE)?;
        Ok(items
            .iter()
            .map(|it| {
                let left = u32::try_from(budget - spent).unwrap_or(u32::MAX);
                let r = if (group::SUM_READ..=group::SUM_DELETE_NOTIFICATION)
                    .contains(&it.index_group)
                {
                    Err(error::SERVICE_NOT_SUPPORTED)
                } else {
                    self.read_write(
                        session,
                        header,
                        it.index_group,
                        it.index_offset,
                        it.read_length.min(left),
                        it.data,
                    )
                };
                match r {
                    // Services never answer more than they are given; checked all the same.
                    Ok(d) if d.len() <= budget - spent => {
                        spent += d.len();
                        (0, d, it.read_length)
                    }
                    Ok(_) => (error::INVALID_SIZE, Vec::new(), it.read_length),
                    Err(e) => (e, Vec::new(), it.read_length),
                }
            })
            .collect())
    }

    /// For sum reads: the items that read the data area by handle or address, read under a
    /// single lock; `None` for items handled one by one.
    fn sum_snapshot(
        &self,
        session: &Session,
        ig: u32,
        items: &[SumItem],
        admitted: &[bool],
    ) -> Vec<Option<Result<Vec<u8>, u32>>> {
        let reading = matches!(
            ig,
            group::SUM_READ | group::SUM_READ_EX | group::SUM_READ_EX2
        );
        let places: Vec<Option<Result<(u32, usize), u32>>> = items
            .iter()
            .zip(admitted)
            .map(|(it, &admitted)| {
                if !reading || !admitted {
                    return None;
                }
                match it.index_group {
                    group::PLC_DATA => Some(Ok((it.index_offset, it.length as usize))),
                    group::SYM_VALUE_BY_HANDLE => {
                        Some(match self.handle(session, it.index_offset) {
                            Ok(s) if it.length as usize <= s.size() => {
                                Ok((s.offset, it.length as usize))
                            }
                            Ok(_) => Err(error::INVALID_SIZE),
                            Err(e) => Err(e),
                        })
                    }
                    _ => None,
                }
            })
            .collect();
        let wanted: Vec<(u32, usize)> = places.iter().flatten().flatten().copied().collect();
        let mut read = self.memory.read_many(&wanted).into_iter();
        places
            .into_iter()
            .map(|p| match p {
                None => None,
                Some(Err(e)) => Some(Err(e)),
                Some(Ok(_)) => read.next(),
            })
            .collect()
    }
}

/// Which items of a sum may be read into the reply: the reply never exceeds the smaller of
/// what the request accepts (`read_length`) and [`wire::MAX_REPLY_LEN`], and the budget is
/// spent on requested lengths before anything is read, so no length on the wire can make
/// the server allocate more.
///
/// - 0xF080 has no length fields: a client finds block k only by adding up the requested
///   lengths, so every block is padded to its length and the whole sum must fit, or it is
///   refused (0x705) as a whole.
/// - 0xF083/0xF084 carry each item's length: an item that does not fit fails alone
///   (0x705), and failed items answer with their code, length 0 and no data. (0xF082 is
///   budgeted by what each item answers: [`Device::sum_read_write`].)
/// - Writes and notification sums answer 4 or 8 bytes per item: always admitted.
fn admit(ig: u32, items: &[SumItem], read_length: u32) -> Result<Vec<bool>, u32> {
    let budget = (read_length as usize).min(wire::MAX_REPLY_LEN);
    let (per_item, requested): (usize, fn(&SumItem) -> usize) = match ig {
        group::SUM_READ => (4, |it| it.length as usize),
        group::SUM_READ_EX | group::SUM_READ_EX2 => (8, |it| it.length as usize),
        _ => return Ok(vec![true; items.len()]),
    };
    let mut spent = per_item
        .checked_mul(items.len())
        .filter(|&n| n <= budget)
        .ok_or(error::INVALID_SIZE)?;
    let admitted = items
        .iter()
        .map(|it| match spent.checked_add(requested(it)) {
            Some(total) if total <= budget => {
                spent = total;
                true
            }
            _ => false,
        })
        .collect::<Vec<bool>>();
    if ig == group::SUM_READ && admitted.contains(&false) {
        return Err(error::INVALID_SIZE);
    }
    Ok(admitted)
}
