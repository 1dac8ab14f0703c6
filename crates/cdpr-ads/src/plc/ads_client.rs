//! [`Transport`] over the crates.io `ads` 0.4 client: a real TwinCAT runtime or `cdpr plc`.
//!
//! Symbols are resolved once per connection: type and size from the symbol info (0xF009),
//! a handle (0xF003). Each cycle is then one sum read (0xF083) or one sum write (0xF081) of
//! values by handle (0xF005): one round trip each. A socket error or a garbled reply drops the
//! client (the `ads` crate cannot recover one: a late reply would surface as a wrong invoke
//! id), and [`Transport::reopen`] builds a new one; the caller spaces attempts with
//! [`Backoff`](super::controller::Backoff).

use super::controller::{ControllerError, Transport};
use super::symbols::{self, IecType};
use super::wire::{self, AmsAddr, AmsNetId, group};
use std::time::Duration;

/// Which AMS source address the client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdsSource {
    /// The local IPv4 address + ".1.1", port 58913 (the route on the PLC must name it).
    Auto,
    /// Ask the router on the other end for a port (a TwinCAT router on 127.0.0.1 wants it).
    Request,
    /// A fixed address.
    Fixed(AmsAddr),
}

/// Where the controller is and how to talk to it.
#[derive(Debug, Clone)]
pub struct AdsConfig {
    /// `host:port` of the AMS/TCP endpoint (TwinCAT: port 48898).
    pub endpoint: String,
    /// NetId and AMS port of the PLC runtime (TwinCAT 3's first runtime: 851).
    pub target: AmsAddr,
    pub source: AdsSource,
    /// Connect, read and write timeout; a dead PLC is noticed within it.
    pub timeout: Duration,
}

impl AdsConfig {
    pub fn new(endpoint: impl Into<String>, target: AmsAddr) -> AdsConfig {
        AdsConfig {
            endpoint: endpoint.into(),
            target,
            source: AdsSource::Auto,
            timeout: Duration::from_millis(500),
        }
    }
}

fn to_ads(a: AmsAddr) -> ads::AmsAddr {
    let n = a.net_id.0;
    ads::AmsAddr::new(
        ads::AmsNetId::new(n[0], n[1], n[2], n[3], n[4], n[5]),
        a.port,
    )
}

/// The text of an ADS return code, from the `ads` crate's table.
pub fn error_text(code: u32) -> &'static str {
    ads::errors::ADS_ERRORS
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("unknown ADS error", |(_, text)| *text)
}

/// The `ads` crate client as a [`Transport`].
pub struct AdsTransport {
    config: AdsConfig,
    client: Option<ads::Client>,
    names: Vec<String>,
    handles: Vec<u32>,
    sizes: Vec<usize>,
    /// Reconnects that succeeded.
    pub reconnects: u64,
}

impl AdsTransport {
    /// Connects (one attempt).
    pub fn connect(config: AdsConfig) -> Result<AdsTransport, ControllerError> {
        let mut t = AdsTransport {
            config,
            client: None,
            names: Vec::new(),
            handles: Vec::new(),
            sizes: Vec::new(),
            reconnects: 0,
        };
        t.open()?;
        Ok(t)
    }

    fn open(&mut self) -> Result<(), ControllerError> {
        let source = match self.config.source {
            AdsSource::Auto => ads::Source::Auto,
            AdsSource::Request => ads::Source::Request,
            AdsSource::Fixed(a) => ads::Source::Addr(to_ads(a)),
        };
        let client = ads::Client::new(
            self.config.endpoint.as_str(),
            ads::Timeouts::new(self.config.timeout),
            source,
        )
        .map_err(|e| {
            ControllerError::Link(format!("connecting to {}: {e}", self.config.endpoint))
        })?;
        self.client = Some(client);
        Ok(())
    }

    /// The client's own AMS address (what a route on a real PLC must name).
    pub fn source(&self) -> Option<AmsAddr> {
        self.client.as_ref().map(|c| {
            let s = c.source();
            let mut id = [0u8; 6];
            id.copy_from_slice(&s.netid().0);
            AmsAddr::new(AmsNetId(id), s.port())
        })
    }

    fn client(&self) -> Result<&ads::Client, ControllerError> {
        self.client
            .as_ref()
            .ok_or_else(|| ControllerError::Link("not connected".into()))
    }

    /// Maps an `ads` error for `symbol`: ADS codes stay codes, everything else means the link
    /// is unusable (and the client is dropped so that the next call does not reuse it).
    fn fail(&mut self, symbol: &str, e: ads::Error) -> ControllerError {
        match e {
            // Symbol version changed (online change) or symbol gone: handles are stale.
            ads::Error::Ads(_, _, code @ (0x711 | 0x722)) => {
                self.client = None;
                ControllerError::Link(format!(
                    "`{symbol}`: ADS {code:#x} ({}), handles must be re-resolved",
                    error_text(code)
                ))
            }
            ads::Error::Ads(_, _, code) => ControllerError::Ads {
                symbol: symbol.to_string(),
                code,
                text: error_text(code).to_string(),
            },
            other => {
                self.client = None;
                ControllerError::Link(format!("`{symbol}`: {other}"))
            }
        }
    }

    fn release_handles(&mut self) {
        if let Some(client) = &self.client {
            let dev = client.device(to_ads(self.config.target));
            for h in self.handles.drain(..) {
                let _ = dev.write(group::SYM_RELEASE_HANDLE, 0, &h.to_le_bytes());
            }
        }
        self.handles.clear();
    }
}

impl Drop for AdsTransport {
    fn drop(&mut self) {
        self.release_handles();
    }
}

/// Largest `AdsSymbolEntry` asked for: pyads' buffer size (fixed part + 768 bytes of text).
const SYMBOL_ENTRY_BUFFER: usize = 798;

impl Transport for AdsTransport {
    fn resolve(&mut self, names: &[String]) -> Result<Vec<IecType>, ControllerError> {
        self.release_handles();
        let mut types = Vec::with_capacity(names.len());
        let (mut handles, mut sizes) = (Vec::new(), Vec::new());
        for name in names {
            let result = {
                let dev = self.client()?.device(to_ads(self.config.target));
                let mut entry = vec![0u8; SYMBOL_ENTRY_BUFFER];
                dev.write_read(group::SYM_INFO_BY_NAME_EX, 0, name.as_bytes(), &mut entry)
                    .and_then(|n| {
                        let mut h = [0u8; 4];
                        dev.write_read_exact(
                            group::SYM_HANDLE_BY_NAME,
                            0,
                            name.as_bytes(),
                            &mut h,
                        )?;
                        entry.truncate(n);
                        Ok((entry, u32::from_le_bytes(h)))
                    })
            };
            let (entry, handle) = match result {
                Ok(v) => v,
                Err(ads::Error::Ads(_, _, code)) if code == wire::error::SYMBOL_NOT_FOUND => {
                    return Err(ControllerError::Symbol {
                        symbol: name.clone(),
                        reason: "not found on the PLC (ADS 0x710)".into(),
                    });
                }
                Err(e) => return Err(self.fail(name, e)),
            };
            let bad = |reason: String| ControllerError::Symbol {
                symbol: name.clone(),
                reason,
            };
            let entry = symbols::decode_symbol_entry(&entry)
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
            handles.push(handle);
            sizes.push(ty.size());
            types.push(ty);
        }
        self.names = names.to_vec();
        self.handles = handles;
        self.sizes = sizes;
        Ok(types)
    }

    fn sum_read(&mut self, symbols: &[usize]) -> Result<Vec<Vec<u8>>, ControllerError> {
        let mut bufs: Vec<Vec<u8>> = symbols
            .iter()
            .map(|&k| vec![0u8; self.sizes.get(k).copied().unwrap_or(0)])
            .collect();
        let handles: Vec<u32> = symbols
            .iter()
            .map(|&k| self.handles.get(k).copied().unwrap_or(0))
            .collect();
        let outcome = {
            let dev = self.client()?.device(to_ads(self.config.target));
            let mut reqs: Vec<ads::client::ReadRequest> = bufs
                .iter_mut()
                .zip(&handles)
                .map(|(b, &h)| ads::client::ReadRequest::new(group::SYM_VALUE_BY_HANDLE, h, b))
                .collect();
            dev.read_multi(&mut reqs).map(|()| {
                reqs.iter()
                    .map(|r| r.data().map(<[u8]>::len))
                    .collect::<Vec<_>>()
            })
        };
        let lengths = outcome.map_err(|e| self.fail("sum read", e))?;
        for ((&k, len), buf) in symbols.iter().zip(lengths).zip(&mut bufs) {
            let name = self.names.get(k).cloned().unwrap_or_default();
            let len = len.map_err(|e| self.fail(&name, e))?;
            buf.truncate(len);
        }
        Ok(bufs)
    }

    fn sum_write(&mut self, items: &[(usize, Vec<u8>)]) -> Result<(), ControllerError> {
        let results = {
            let dev = self.client()?.device(to_ads(self.config.target));
            let mut reqs: Vec<ads::client::WriteRequest> = items
                .iter()
                .map(|(k, data)| {
                    let h = self.handles.get(*k).copied().unwrap_or(0);
                    ads::client::WriteRequest::new(group::SYM_VALUE_BY_HANDLE, h, data)
                })
                .collect();
            dev.write_multi(&mut reqs)
                .map(|()| reqs.iter().map(|r| r.ensure()).collect::<Vec<_>>())
        };
        let results = results.map_err(|e| self.fail("sum write", e))?;
        for ((k, _), r) in items.iter().zip(results) {
            if let Err(e) = r {
                let name = self.names.get(*k).cloned().unwrap_or_default();
                return Err(self.fail(&name, e));
            }
        }
        Ok(())
    }

    fn reopen(&mut self) -> Result<(), ControllerError> {
        // Handles die with the old connection; releasing them over a half-dead socket would
        // only wait out the timeout once per handle.
        self.handles.clear();
        self.client = None;
        self.open()?;
        self.reconnects += 1;
        Ok(())
    }
}

/// The shadow's controller over ADS.
pub type AdsController = super::controller::ShadowLink<AdsTransport>;
