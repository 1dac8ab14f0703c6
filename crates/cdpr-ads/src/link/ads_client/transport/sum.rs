//! The sum commands of [`AdsTransport`]: 0xF080 and 0xF083 (the cycle's reads), 0xF081 (the
//! cycle's writes, handles released), 0xF082 (symbol infos and handles in one round trip
//! each). Every length here is checked against the request: what a PLC sends decides nothing
//! but the error.

use super::{AdsTransport, Resolved, SYMBOL_ENTRY_BUFFER, short};
use crate::link::ads_client::connection::{ConnError, Connection};
use crate::link::ads_client::failure::{Failure, code_error};
use crate::link::error::ControllerError;
use crate::wire::{self, SumItem, group, len32};

impl AdsTransport {
    /// [`AdsTransport::fetch_one_by_one`] in two round trips: symbol infos (0xF009), then
    /// handles (0xF003), each as one sum read-write.
    pub(super) fn fetch_by_sum(
        &mut self,
        names: &[String],
    ) -> Result<Vec<(Vec<u8>, u32)>, Failure> {
        let not_found = |name: &String, code: u32| {
            Failure::Other(if code == wire::error::SYMBOL_NOT_FOUND {
                ControllerError::Symbol {
                    symbol: name.clone(),
                    reason: "not found on the PLC (ADS 0x710)".into(),
                }
            } else {
                code_error(name, code)
            })
        };
        let ask = |ig: u32, read: usize| -> Vec<(u32, u32, usize, &[u8])> {
            names.iter().map(|n| (ig, 0, read, n.as_bytes())).collect()
        };
        let entries = self.sum_read_write(&ask(group::SYM_INFO_BY_NAME_EX, SYMBOL_ENTRY_BUFFER))?;
        let handles = self.sum_read_write(&ask(group::SYM_HANDLE_BY_NAME, 4))?;
        let mut fetched = Vec::with_capacity(names.len());
        for ((name, entry), handle) in names.iter().zip(entries).zip(handles) {
            let entry = entry.map_err(|code| not_found(name, code))?;
            let handle = match handle.map_err(|code| not_found(name, code))?.as_slice() {
                &[a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
                other => {
                    return Err(Failure::Other(short(name, other.len(), 4)));
                }
            };
            fetched.push((entry, handle));
        }
        Ok(fetched)
    }

    /// A sum read-write (0xF082) of `(group, offset, read length, data)` items: per item its
    /// reply bytes or its ADS code. The reply is N (result, length) pairs, then the blocks at
    /// their real lengths; parsed here, bounds-checked.
    fn sum_read_write(
        &mut self,
        items: &[(u32, u32, usize, &[u8])],
    ) -> Result<Vec<Result<Vec<u8>, u32>>, Failure> {
        let sub: Vec<SumItem> = items
            .iter()
            .map(|&(index_group, index_offset, read, data)| SumItem {
                index_group,
                index_offset,
                length: len32(data.len()),
                read_length: len32(read),
                data,
            })
            .collect();
        let request = wire::encode_sum_items(group::SUM_READ_WRITE, &sub);
        let most = items.iter().map(|it| 8 + it.2).sum();
        let result =
            self.client()?
                .write_read(group::SUM_READ_WRITE, len32(items.len()), &request, most);
        let reply = result.map_err(|e| self.classify("sum read-write", e))?;
        let n = reply.len();
        let garbled = || {
            Failure::Other(ControllerError::Link(format!(
                "sum read-write: a reply of {n} bytes that does not add up"
            )))
        };
        let (heads, mut data) = reply
            .split_at_checked(8 * items.len())
            .ok_or_else(garbled)?;
        let mut out = Vec::with_capacity(items.len());
        for (head, it) in heads.chunks_exact(8).zip(items) {
            let code = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
            let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
            if len > it.2 {
                return Err(garbled());
            }
            let (mine, rest) = data.split_at_checked(len).ok_or_else(garbled)?;
            data = rest;
            out.push(if code == 0 {
                Ok(mine.to_vec())
            } else {
                Err(code)
            });
        }
        Ok(out)
    }

    /// A sum read (0xF080: a result per item; 0xF083: a result and a length per item), then
    /// each item's data at its requested length. Parsed here, bounds-checked: what a PLC sends
    /// decides nothing but the error.
    pub(super) fn sum_read_by(
        &mut self,
        sum_group: u32,
        items: &[Resolved],
        address: impl Fn(&Resolved) -> (u32, u32),
    ) -> Result<Vec<Vec<u8>>, Failure> {
        let head = if sum_group == group::SUM_READ { 4 } else { 8 };
        let sub: Vec<SumItem> = items
            .iter()
            .map(|s| {
                let (index_group, index_offset) = address(s);
                SumItem {
                    index_group,
                    index_offset,
                    length: len32(s.size),
                    read_length: len32(s.size),
                    data: &[],
                }
            })
            .collect();
        let request = wire::encode_sum_items(sum_group, &sub);
        let data_len: usize = items.iter().map(|s| s.size).sum();
        let whole = head * items.len() + data_len;
        let result = self
            .client()?
            .write_read(sum_group, len32(items.len()), &request, whole);
        let reply = result.map_err(|e| self.classify("sum read", e))?;
        let short_reply = || {
            Failure::Other(ControllerError::Link(format!(
                "sum read returned {} of {whole} bytes",
                reply.len()
            )))
        };
        let (results, mut data) = reply
            .split_at_checked(head * items.len())
            .ok_or_else(short_reply)?;
        for (s, r) in items.iter().zip(results.chunks_exact(head)) {
            let code = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
            if code != 0 {
                return Err(Failure::Other(code_error(&s.name, code)));
            }
            if head == 8 {
                let len = u32::from_le_bytes([r[4], r[5], r[6], r[7]]) as usize;
                if len != s.size {
                    return Err(Failure::Other(short(&s.name, len, s.size)));
                }
            }
        }
        let mut out = Vec::with_capacity(items.len());
        for s in items {
            let (mine, rest) = data.split_at_checked(s.size).ok_or_else(short_reply)?;
            out.push(mine.to_vec());
            data = rest;
        }
        Ok(out)
    }
}

/// A sum write (0xF081) of `(group, offset, data)` items: the ADS code of each item.
pub(super) fn sum_write(
    client: &mut Connection,
    items: &[(u32, u32, &[u8])],
) -> Result<Vec<u32>, ConnError> {
    let sub: Vec<SumItem> = items
        .iter()
        .map(|&(index_group, index_offset, data)| SumItem {
            index_group,
            index_offset,
            length: len32(data.len()),
            read_length: 0,
            data,
        })
        .collect();
    let request = wire::encode_sum_items(group::SUM_WRITE, &sub);
    let reply = client.write_read(
        group::SUM_WRITE,
        len32(items.len()),
        &request,
        4 * items.len(),
    )?;
    if reply.len() != 4 * items.len() {
        return Err(ConnError::Garbled(format!(
            "a sum write reply of {} bytes for {} items",
            reply.len(),
            items.len()
        )));
    }
    Ok(reply
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}
