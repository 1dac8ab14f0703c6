//! [`Transport`] over the project's own ADS client ([`super::connection`]): a real TwinCAT
//! runtime, `cdpr plc`, or pyads' test server.
//!
//! Symbols are resolved once per connection: type, size and address from the symbol info
//! (0xF009), a handle (0xF003). Reads and writes then travel as one of the three
//! [`Exchange`]s, picked once per connection at its first exchange and kept: the one asked
//! for, or with [`ExchangeChoice::Auto`] the first the PLC serves — sum commands by handle,
//! by symbol address, single requests by handle (see [`super::exchange`]). A device that does
//! not serve one answers ADS 0x701/0x702 or, like pyads' test server, not at all: then the
//! connection is reopened (a device that ignored one request is not trusted with the next),
//! the symbols resolved again, and the next one tried.
//!
//! A socket error or a garbled reply drops the client, and [`Transport::reopen`] builds a new
//! one (the exchange is picked again); the caller spaces attempts with
//! [`Backoff`](crate::link::guard::Backoff). ADS codes that mean a handle went stale (an online
//! change) come back as [`ControllerError::Stale`], the link kept, for the caller to resolve
//! the symbols again.

use super::config::{AdsConfig, AdsSource};
use super::connection::{ConnError, Connection, OpenError, Source};
use super::exchange::{Exchange, ExchangeChoice, NOT_SERVED};
use super::failure::{Failure, code_error};
use crate::link::error::ControllerError;
use crate::link::transport::{Inputs, Transport};
use crate::wire::{self, AmsAddr, IecType, decode_symbol_entry, group};

/// What the link knows of one resolved symbol.
#[derive(Debug, Clone)]
struct Resolved {
    name: String,
    handle: u32,
    size: usize,
    /// Its address from the symbol info (pyads' test server: group 12345, offsets from 10000).
    index_group: u32,
    index_offset: u32,
}

/// The ADS client as a [`Transport`].
pub struct AdsTransport {
    config: AdsConfig,
    client: Option<Connection>,
    symbols: Vec<Resolved>,
    /// The exchange of this connection, once picked.
    exchange: Option<Exchange>,
    /// This connection refused symbol infos and handles by sum read-write (0xF082).
    no_sum_resolve: bool,
    /// The cycle's inputs by notification, on this connection ([`Exchange::Notify`]).
    subscription: Option<notify::Subscription>,
    /// This connection refused notifications (or sent no sample): the inputs are polled.
    notify_refused: bool,
    /// This connection answered a sum write as not served (ADS 0x701/0x702), or left
    /// [`SILENT_SUM_WRITES`] of them in a row unanswered: its writes go one by one (its reads
    /// keep their exchange).
    single_writes: bool,
    /// Sum writes left unanswered in a row on this connection.
    silent_sum_writes: u32,
    /// Reconnects that succeeded ([`Transport::reopen`]).
    pub reconnects: u64,
    /// Times the client was reopened while picking the exchange (a device that did not answer).
    pub probe_reopens: u64,
}

impl AdsTransport {
    /// Connects (one attempt).
    pub fn connect(config: AdsConfig) -> Result<AdsTransport, ControllerError> {
        let mut t = AdsTransport {
            config,
            client: None,
            symbols: Vec::new(),
            exchange: None,
            no_sum_resolve: false,
            subscription: None,
            notify_refused: false,
            single_writes: false,
            silent_sum_writes: 0,
            reconnects: 0,
            probe_reopens: 0,
        };
        t.open()?;
        Ok(t)
    }

    fn open(&mut self) -> Result<(), ControllerError> {
        let source = match self.config.source {
            AdsSource::Auto => Source::Auto,
            AdsSource::Request => Source::Request,
            AdsSource::Fixed(a) => Source::Fixed(a),
        };
        // A new connection: its handles are new, and what it serves is asked again.
        self.client = None;
        self.exchange = None;
        self.no_sum_resolve = false;
        self.single_writes = false;
        self.silent_sum_writes = 0;
        self.subscription = None;
        let endpoint = self.config.endpoint.as_str();
        let client = Connection::open_interruptible(
            endpoint,
            self.config.target,
            source,
            self.config.timeout,
            self.config.secure.as_ref(),
            &self.config.interrupt,
        )
        .map_err(|e| {
            if self.config.interrupt.raised() {
                return ControllerError::Interrupted;
            }
            let (refused, text) = match e {
                OpenError::Io(io) => (
                    io.kind() == std::io::ErrorKind::ConnectionRefused,
                    if crate::timed_out::timed_out(&io) {
                        format!(
                            "no answer within {:?} (a wrong address, the host off, or a \
                             firewall dropping TCP to this port)",
                            self.config.timeout
                        )
                    } else {
                        io.to_string()
                    },
                ),
                OpenError::Router(text) => (false, text),
                OpenError::Secure(e) => {
                    return ControllerError::Secure {
                        endpoint: self.config.endpoint.clone(),
                        text: e.to_string(),
                    };
                }
            };
            ControllerError::Unreachable {
                endpoint: self.config.endpoint.clone(),
                refused,
                text,
            }
        })?;
        self.client = Some(client);
        Ok(())
    }

    /// The client's own AMS address (what a route on a real PLC must name).
    pub fn source(&self) -> Option<AmsAddr> {
        self.client.as_ref().map(Connection::source)
    }

    /// The PLC's AMS address on this connection (Secure ADS may have taken its NetId from
    /// the PLC's answer).
    pub fn target(&self) -> AmsAddr {
        self.client
            .as_ref()
            .map_or(self.config.target, Connection::target)
    }

    /// What the Secure ADS session has to tell the user (once).
    pub fn take_notes(&mut self) -> Vec<String> {
        self.client
            .as_mut()
            .map(Connection::take_notes)
            .unwrap_or_default()
    }

    /// What was asked for.
    pub fn exchange_choice(&self) -> ExchangeChoice {
        self.config.exchange
    }

    /// The connection, for a request about to be sent.
    pub(super) fn client(&mut self) -> Result<&mut Connection, ControllerError> {
        self.client
            .as_mut()
            .ok_or_else(|| ControllerError::Link("not connected".into()))
    }

    /// Sorts a request's failure: ADS codes stay codes (0x701/0x702 as refusals), no reply is
    /// silence, anything else a lost link. Silence and lost links drop the connection, so that
    /// the next call does not reuse it (a device that ignored one request is not trusted with
    /// the next).
    pub(super) fn classify(&mut self, what: &str, e: ConnError) -> Failure {
        match e {
            ConnError::Ads(code) if NOT_SERVED.contains(&code) => Failure::Refused(code),
            ConnError::Ads(code) => Failure::Other(code_error(what, code)),
            ConnError::Timeout(t) => {
                self.client = None;
                Failure::Silent(format!("no reply within {t:?}"))
            }
            ConnError::Closed(why) => {
                self.client = None;
                Failure::Other(ControllerError::Link(format!("`{what}`: {why}")))
            }
            ConnError::Garbled(why) => {
                self.client = None;
                Failure::Other(ControllerError::Broken(format!(
                    "`{what}`: the PLC sent {why}"
                )))
            }
            ConnError::Interrupted => {
                self.client = None;
                Failure::Other(ControllerError::Interrupted)
            }
        }
    }

    /// Releases the handles held (answers ignored: stale ones are gone already), in one sum
    /// write when `sums`.
    fn release_handles(&mut self, sums: bool) {
        if let Some(sub) = self.subscription.take() {
            let handles = sub.handles().to_vec();
            self.release_notifications(&handles);
        }
        let handles: Vec<[u8; 4]> = self
            .symbols
            .iter()
            .map(|s| s.handle.to_le_bytes())
            .collect();
        self.symbols.clear();
        let Some(client) = self.client.as_mut() else {
            return;
        };
        if sums {
            let items: Vec<(u32, u32, &[u8])> = handles
                .iter()
                .map(|h| (group::SYM_RELEASE_HANDLE, 0, &h[..]))
                .collect();
            let _ = sum::sum_write(client, &items);
        } else {
            for h in &handles {
                let _ = client.write(group::SYM_RELEASE_HANDLE, 0, h);
            }
        }
    }

    /// Symbol info and a handle for each name, on the current client: in two sum round trips
    /// (0xF082) on a connection known to serve sums by handle — so that symbols invalidated
    /// by an online change are back within a millisecond or so, not one round trip per name
    /// and handle — else, or if those are not served after all, one request each.
    fn resolve_names(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError> {
        let sums =
            self.exchange == Some(Exchange::SumHandle) && !self.no_sum_resolve && !names.is_empty();
        self.release_handles(sums);
        let fetched = if sums {
            match self.fetch_by_sum(names) {
                Ok(v) => v,
                Err(Failure::Other(e)) => return Err(e),
                Err(f) => {
                    tracing::info!(
                        "symbol info and handles by sum read-write (0xF082) not served ({}); one request each",
                        f.reason()
                    );
                    if self.client.is_none() {
                        self.open()?;
                        self.probe_reopens += 1;
                    }
                    self.no_sum_resolve = true;
                    self.fetch_one_by_one(names)?
                }
            }
        } else {
            self.fetch_one_by_one(names)?
        };
        let mut types = Vec::with_capacity(names.len());
        let mut resolved = Vec::with_capacity(names.len());
        for (name, (entry, handle)) in names.iter().zip(fetched) {
            let bad = |reason: String| ControllerError::Symbol {
                symbol: name.clone(),
                reason,
            };
            let entry = decode_symbol_entry(&entry)
                .ok_or_else(|| bad("the PLC sent a malformed symbol entry".into()))?;
            let ty = IecType::parse(&entry.type_name)
                .ok_or_else(|| bad(format!("unsupported type `{}`", entry.type_name)))?;
            if ty.size() != entry.size as usize {
                return Err(bad(format!(
                    "type {} takes {} bytes but the PLC reports {}",
                    entry.type_name,
                    ty.size(),
                    entry.size
                )));
            }
            resolved.push(Resolved {
                name: name.clone(),
                handle,
                size: ty.size(),
                index_group: entry.index_group,
                index_offset: entry.index_offset,
            });
            types.push(ty);
        }
        self.symbols = resolved;
        Ok(types)
    }

    /// The `AdsSymbolEntry` bytes and a handle of each name, two requests per name.
    fn fetch_one_by_one(
        &mut self,
        names: &[String],
    ) -> Result<Vec<(Vec<u8>, u32)>, ControllerError> {
        let mut fetched = Vec::with_capacity(names.len());
        for name in names {
            let result = self.client()?.write_read(
                group::SYM_INFO_BY_NAME_EX,
                0,
                name.as_bytes(),
                SYMBOL_ENTRY_BUFFER,
            );
            let result = result.and_then(|entry| {
                let h = self
                    .client()
                    .map_err(|e| ConnError::Closed(e.to_string()))?
                    .write_read(group::SYM_HANDLE_BY_NAME, 0, name.as_bytes(), 4)?;
                match h.as_slice() {
                    &[a, b, c, d] => Ok((entry, u32::from_le_bytes([a, b, c, d]))),
                    other => Err(ConnError::Garbled(format!(
                        "a handle of {} bytes for `{name}`, 4 expected",
                        other.len()
                    ))),
                }
            });
            let (entry, handle) = match result {
                Ok(v) => v,
                Err(ConnError::Ads(code)) if code == wire::error::SYMBOL_NOT_FOUND => {
                    return Err(ControllerError::Symbol {
                        symbol: name.clone(),
                        reason: "not found on the PLC (ADS 0x710)".into(),
                    });
                }
                Err(e) => return Err(self.classify(name, e).into_error(name)),
            };
            fetched.push((entry, handle));
        }
        Ok(fetched)
    }

    /// After a probe the device did not answer: a new client, the same symbols resolved on it.
    fn restore(&mut self) -> Result<(), ControllerError> {
        let names: Vec<String> = self.symbols.iter().map(|s| s.name.clone()).collect();
        self.symbols.clear();
        // A new connection: one request per name (what it serves is not known yet).
        self.open()?;
        self.probe_reopens += 1;
        self.resolve_names(&names)?;
        Ok(())
    }

    fn items(&self, indices: &[usize]) -> Result<Vec<Resolved>, ControllerError> {
        indices
            .iter()
            .map(|&k| {
                self.symbols
                    .get(k)
                    .cloned()
                    .ok_or_else(|| ControllerError::Link(format!("symbol {k} is not resolved")))
            })
            .collect()
    }

    /// Picks the exchange with the connection's first request — a read, or a write of the
    /// allow-listed outputs that was to go out anyway: the first candidate the device serves.
    /// That request's outcome is returned.
    fn pick<R>(
        &mut self,
        mut attempt: impl FnMut(&mut Self, Exchange) -> Result<R, Failure>,
    ) -> Result<R, ControllerError> {
        let candidates = self.config.exchange.candidates();
        let mut refused = Vec::new();
        for (k, &mode) in candidates.iter().enumerate() {
            match attempt(self, mode) {
                Ok(data) => {
                    let how = if refused.is_empty() {
                        String::new()
                    } else {
                        format!(" (not served: {})", refused.join("; "))
                    };
                    tracing::info!("ADS exchange: {mode}, {}{how}", mode.wire());
                    self.exchange = Some(mode);
                    return Ok(data);
                }
                Err(f @ (Failure::Silent(_) | Failure::Refused(_))) => {
                    let reason = f.reason();
                    if k + 1 == candidates.len() {
                        return Err(ControllerError::Unsupported {
                            exchange: mode,
                            reason,
                        });
                    }
                    tracing::info!("ADS exchange {mode} not served ({reason}); trying the next");
                    refused.push(format!("{mode}: {reason}"));
                    if self.client.is_none() {
                        self.restore()?;
                    }
                }
                Err(Failure::Other(e)) => return Err(e),
            }
        }
        Err(ControllerError::Link("no ADS exchange to try".into()))
    }

    fn read_as(&mut self, mode: Exchange, indices: &[usize]) -> Result<Vec<Vec<u8>>, Failure> {
        let items = self.items(indices)?;
        match mode {
            // Never the polled exchange (see `candidates`); read as sum-handle if it were.
            Exchange::Notify | Exchange::SumHandle => {
                self.sum_read_by(group::SUM_READ_EX, &items, |s| {
                    (group::SYM_VALUE_BY_HANDLE, s.handle)
                })
            }
            Exchange::SumAddress => {
                self.sum_read_by(group::SUM_READ, &items, |s| (s.index_group, s.index_offset))
            }
            Exchange::Single => items
                .iter()
                .map(|s| {
                    let result = self
                        .client()?
                        .read(group::SYM_VALUE_BY_HANDLE, s.handle, s.size);
                    let buf = result.map_err(|e| self.classify(&s.name, e))?;
                    if buf.len() != s.size {
                        return Err(Failure::Other(short(&s.name, buf.len(), s.size)));
                    }
                    Ok(buf)
                })
                .collect(),
        }
    }

    fn write_as(&mut self, mode: Exchange, items: &[(usize, Vec<u8>)]) -> Result<(), Failure> {
        let targets = self.items(&items.iter().map(|(k, _)| *k).collect::<Vec<_>>())?;
        let place = |s: &Resolved| match mode {
            Exchange::SumAddress => (s.index_group, s.index_offset),
            _ => (group::SYM_VALUE_BY_HANDLE, s.handle),
        };
        if mode == Exchange::Single {
            for (s, (_, data)) in targets.iter().zip(items) {
                let (ig, io) = place(s);
                let result = self.client()?.write(ig, io, data);
                result.map_err(|e| self.classify(&s.name, e))?;
            }
            return Ok(());
        }
        let sub: Vec<(u32, u32, &[u8])> = targets
            .iter()
            .zip(items)
            .map(|(s, (_, data))| {
                let (ig, io) = place(s);
                (ig, io, data.as_slice())
            })
            .collect();
        let results = sum::sum_write(self.client()?, &sub);
        let results = results.map_err(|e| self.classify("sum write", e))?;
        for (s, code) in targets.iter().zip(results) {
            if code != 0 {
                return Err(self.classify(&s.name, ConnError::Ads(code)));
            }
        }
        Ok(())
    }
}

fn short(symbol: &str, got: usize, want: usize) -> ControllerError {
    ControllerError::Symbol {
        symbol: symbol.to_string(),
        reason: format!("the PLC returned {got} bytes, {want} expected"),
    }
}

impl Drop for AdsTransport {
    fn drop(&mut self) {
        self.release_handles(self.exchange == Some(Exchange::SumHandle));
    }
}

/// Largest `AdsSymbolEntry` asked for: pyads' buffer size (fixed part + 768 bytes of text).
const SYMBOL_ENTRY_BUFFER: usize = 798;

impl Transport for AdsTransport {
    fn resolve(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError> {
        self.resolve_names(names)
    }

    fn sum_read(&mut self, symbols: &[usize]) -> Result<Vec<Vec<u8>>, ControllerError> {
        self.poll(symbols)
    }

    fn read_inputs(
        &mut self,
        symbols: &[usize],
        out: &mut Vec<Inputs>,
    ) -> Result<(), ControllerError> {
        self.inputs(symbols, out)
    }

    fn wait_for_inputs(&mut self, until: std::time::Instant) -> bool {
        self.wait_for_notification(until)
    }

    fn sum_write(&mut self, items: &[(usize, Vec<u8>)]) -> Result<(), ControllerError> {
        self.write(items)
    }

    fn reopen(&mut self) -> Result<(), ControllerError> {
        // Handles die with the old connection; releasing them over a half-dead socket would
        // only wait out the timeout once per handle.
        self.symbols.clear();
        // A new link: notifications are asked for again (a probe's reopen keeps the verdict).
        self.notify_refused = false;
        self.open()?;
        self.reconnects += 1;
        Ok(())
    }

    fn plc_state(&mut self) -> Result<Option<u16>, ControllerError> {
        let state = self.client()?.read_state();
        match state {
            Ok((ads_state, _)) => Ok(Some(ads_state)),
            // A device that does not serve ReadState says nothing about its state.
            Err(ConnError::Ads(_)) => Ok(None),
            Err(e) => Err(self.classify("ReadState", e).into_error("ReadState")),
        }
    }

    fn exchange(&self) -> Option<Exchange> {
        match self.subscription {
            Some(_) => Some(Exchange::Notify),
            None => self.exchange,
        }
    }
}

impl AdsTransport {
    /// The symbols read by the connection's polled exchange (picked with the first request).
    fn poll(&mut self, symbols: &[usize]) -> Result<Vec<Vec<u8>>, ControllerError> {
        match self.exchange {
            Some(mode) => self
                .read_as(mode, symbols)
                .map_err(|f| f.into_error("sum read")),
            None => self.pick(|t, mode| t.read_as(mode, symbols)),
        }
    }

    /// The symbols written as the connection's polled exchange writes them, or one by one on
    /// a connection that does not take sum writes.
    ///
    /// A sum write answered "not served" (ADS 0x701/0x702) is proof: single writes for the rest
    /// of the connection. One left unanswered is not (a reply lost on the way looks the same):
    /// the connection is reopened, the same bytes go out one by one for this cycle, and the
    /// next cycle tries the sum again; only [`SILENT_SUM_WRITES`] silences in a row (a device
    /// that ignores sum writes, as pyads' test server ignores what it does not know) make
    /// the writes single for the connection.
    fn write(&mut self, items: &[(usize, Vec<u8>)]) -> Result<(), ControllerError> {
        let Some(mode) = self.exchange else {
            return self.pick(|t, mode| t.write_as(mode, items));
        };
        if self.single_writes || mode == Exchange::Single {
            return self
                .write_as(Exchange::Single, items)
                .map_err(|f| f.into_error("write"));
        }
        match self.write_as(mode, items) {
            Ok(()) => {
                self.silent_sum_writes = 0;
                Ok(())
            }
            Err(f @ Failure::Refused(_)) if self.config.exchange.probes() => {
                tracing::warn!(
                    "the PLC reads {mode} but refused a sum write ({}); single writes on this \
                     connection",
                    f.reason()
                );
                self.single_writes = true;
                self.write_as(Exchange::Single, items)
                    .map_err(|f| f.into_error("write"))
            }
            Err(f @ Failure::Silent(_)) if self.config.exchange.probes() => {
                self.silent_sum_writes += 1;
                let silent = self.silent_sum_writes;
                // The reads' exchange outlives the reopen: they were served.
                self.restore()?;
                self.exchange = Some(mode);
                self.silent_sum_writes = silent;
                if silent >= SILENT_SUM_WRITES {
                    tracing::warn!(
                        "the PLC reads {mode} but left {silent} sum writes in a row unanswered \
                         ({}); single writes on this connection",
                        f.reason()
                    );
                    self.single_writes = true;
                } else {
                    tracing::info!(
                        "a sum write went unanswered ({}); written one by one this cycle, the \
                         sum tried again next cycle",
                        f.reason()
                    );
                }
                self.write_as(Exchange::Single, items)
                    .map_err(|f| f.into_error("write"))
            }
            Err(f) => Err(f.into_error("sum write")),
        }
    }

    /// Whether this connection writes one request per symbol (the single exchange, or sum
    /// writes not taken).
    pub fn writes_one_by_one(&self) -> bool {
        self.single_writes || self.exchange == Some(Exchange::Single)
    }
}

/// Sum writes left unanswered in a row before a connection's writes go one by one.
pub const SILENT_SUM_WRITES: u32 = 3;

/// The shadow's controller over ADS.
pub type AdsController = crate::link::shadow_link::ShadowLink<AdsTransport>;

mod notify;
mod sum;
