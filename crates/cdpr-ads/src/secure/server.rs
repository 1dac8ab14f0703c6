//! The virtual PLC's side of Secure ADS: accepts TLS connections in one mode and answers
//! their TlsConnectInfo as TwinCAT does (an error code in the answer, then the connection
//! closed).

use super::client::{handshake_failure, read_info};
use super::connect_info::{ConnectError, ConnectInfo, flag};
use super::identity::{self, Identity, fingerprint};
use super::pins::{Pinned, Pins};
use super::{SecureError, explain_handshake, psk_key, psk_suites, tls12, trust_ca, use_identity};
use crate::wire::AmsNetId;
use openssl::dh::Dh;
use openssl::ssl::{Ssl, SslAcceptor, SslContext, SslMethod, SslStream, SslVerifyMode};
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// How the virtual PLC authenticates its clients.
#[derive(Debug, Clone)]
pub enum ServerMode {
    /// Its own self-signed certificate (created in the secure directory on first use);
    /// clients register with `user`/`password` and are then known by their fingerprint.
    SelfSigned { user: String, password: String },
    /// A certificate and key signed by `ca`; clients must present one signed by it too.
    SharedCa {
        cert: PathBuf,
        key: PathBuf,
        ca: PathBuf,
    },
    /// PSK entries: (identity, password), as in TwinCAT's StaticRoutes.xml.
    Psk { entries: Vec<(String, String)> },
}

/// A Secure ADS acceptor.
pub struct SecureServer {
    context: SslContext,
    mode: ServerMode,
    /// Self-signed mode: the clients that registered a route (by NetId).
    clients: Option<Mutex<Pins>>,
    net_id: AmsNetId,
    host_name: String,
    fingerprint: Option<String>,
    /// Where its own certificate is, and whether it was created now (to print).
    pub certificate: Option<(String, bool)>,
}

impl std::fmt::Debug for SecureServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecureServer")
            .field("mode", &self.mode_name())
            .field("fingerprint", &self.fingerprint)
            .finish()
    }
}

impl SecureServer {
    /// The acceptor for `mode`, answering as `net_id`; its files in `dir` (`None`: the
    /// default secure directory).
    pub fn new(
        mode: ServerMode,
        dir: Option<&Path>,
        net_id: AmsNetId,
    ) -> Result<SecureServer, SecureError> {
        let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())
            .map_err(SecureError::setup)?;
        tls12(&mut b)?;
        let mut clients = None;
        let mut certificate = None;
        let id = match &mode {
            ServerMode::SelfSigned { .. } => {
                let dir = identity::default_dir(dir)?;
                let (id, created) = Identity::self_signed(&dir, "plc", &identity::host_name())?;
                certificate = Some((id.source.clone(), created));
                clients = Some(Mutex::new(Pins::load(&dir.join("trusted-clients"))?));
                // Any certificate gets through the handshake; its fingerprint decides after.
                b.set_verify_callback(
                    SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
                    |_, _| true,
                );
                Some(id)
            }
            ServerMode::SharedCa { cert, key, ca } => {
                let id = Identity::load(cert, key)?;
                certificate = Some((id.source.clone(), false));
                // The CA's names go to clients in the certificate request.
                for c in trust_ca(&mut b, ca)? {
                    b.add_client_ca(&c).map_err(SecureError::setup)?;
                }
                b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
                Some(id)
            }
            ServerMode::Psk { entries } => {
                psk_suites(&mut b)?;
                let keys: Vec<(String, [u8; 32])> = entries
                    .iter()
                    .map(|(i, p)| (i.to_uppercase(), psk_key(i, p)))
                    .collect();
                b.set_psk_server_callback(move |_, identity, key_out| {
                    let Some(identity) = identity.map(String::from_utf8_lossy) else {
                        return Ok(0);
                    };
                    let wanted = identity.to_uppercase();
                    // Unknown identity: no key, OpenSSL answers "unknown PSK identity".
                    match keys.iter().find(|(i, _)| *i == wanted) {
                        Some((_, k)) if k.len() <= key_out.len() => {
                            key_out[..k.len()].copy_from_slice(k);
                            Ok(k.len())
                        }
                        _ => Ok(0),
                    }
                });
                b.set_verify(SslVerifyMode::NONE);
                None
            }
        };
        let fingerprint = match &id {
            Some(id) => {
                use_identity(&mut b, id)?;
                // DHE suites, as TwinCAT offers them (RFC 5114's 2048-bit group).
                let dh = Dh::get_2048_256().map_err(SecureError::setup)?;
                b.set_tmp_dh(&dh).map_err(SecureError::setup)?;
                Some(fingerprint(&id.cert).map_err(SecureError::setup)?)
            }
            None => None,
        };
        Ok(SecureServer {
            context: b.build().into_context(),
            mode,
            clients,
            net_id,
            host_name: identity::host_name(),
            fingerprint,
            certificate,
        })
    }

    /// `ssc`, `sca` or `psk`.
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            ServerMode::SelfSigned { .. } => "ssc",
            ServerMode::SharedCa { .. } => "sca",
            ServerMode::Psk { .. } => "psk",
        }
    }

    /// Its certificate's SHA-256 fingerprint (certificate modes).
    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// The TLS handshake and the TlsConnectInfo of one client, within `timeout` each. A
    /// refused client gets the answer with its error and is closed (`Err`, with the reason).
    pub fn accept(
        &self,
        tcp: TcpStream,
        timeout: Duration,
    ) -> Result<(SslStream<TcpStream>, ConnectInfo), String> {
        let peer = tcp
            .peer_addr()
            .map_or_else(|_| "?".to_string(), |a| a.to_string());
        tcp.set_read_timeout(Some(timeout))
            .map_err(|e| e.to_string())?;
        tcp.set_write_timeout(Some(timeout))
            .map_err(|e| e.to_string())?;
        let ssl = Ssl::new(&self.context).map_err(|e| e.to_string())?;
        let mut stream = ssl.accept(tcp).map_err(|e| {
            let (detail, verify) = handshake_failure(e);
            let psk = matches!(self.mode, ServerMode::Psk { .. });
            let advice = explain_handshake(&detail, verify.as_deref(), psk, None);
            format!("TLS handshake with {peer} failed: {detail} ({advice})")
        })?;
        let request = read_info(
            &mut stream,
            "closed the connection before its TlsConnectInfo",
        )
        .map_err(|e| format!("{peer}: {e}"))?;
        let verdict = self.judge(&stream, &request);
        let answer = ConnectInfo::response(verdict.err(), self.net_id, &self.host_name)
            .encode()
            .map_err(|e| e.to_string())?;
        stream
            .write_all(&answer)
            .map_err(|e| format!("{peer}: answering its TlsConnectInfo: {e}"))?;
        match verdict {
            Ok(()) => Ok((stream, request)),
            Err(e) => {
                let _ = stream.shutdown();
                Err(format!(
                    "refused {peer} ({}, NetId {}): TlsConnectInfo error {} ({e:?})",
                    request.host_name,
                    request.net_id,
                    e.code()
                ))
            }
        }
    }

    /// TwinCAT's checks of a TlsConnectInfo, in its order: version, then the mode's.
    fn judge(&self, stream: &SslStream<TcpStream>, r: &ConnectInfo) -> Result<(), ConnectError> {
        if r.version != super::connect_info::VERSION {
            return Err(ConnectError::Version);
        }
        let presented = stream
            .ssl()
            .peer_certificate()
            .and_then(|c| Some((fingerprint(&c).ok()?, identity::common_name(&c))));
        match &self.mode {
            ServerMode::SelfSigned { user, password } => {
                let Some((fp, _)) = presented else {
                    return Err(ConnectError::UnknownCert);
                };
                let Some(clients) = &self.clients else {
                    return Err(ConnectError::UnknownCert);
                };
                let mut clients = clients.lock().unwrap_or_else(|e| e.into_inner());
                if r.flags & flag::ADD_REMOTE != 0 {
                    match &r.credentials {
                        Some((u, p)) if u == user && p == password => {
                            let name = r.net_id.to_string();
                            if let Err(e) = clients.pin(&name, &fp) {
                                tracing::warn!("the route of {name} is kept in memory only: {e}");
                            }
                            tracing::info!(net_id = %r.net_id, host = %r.host_name, fingerprint = %fp,
                                "Secure ADS route added (self-signed)");
                            Ok(())
                        }
                        _ => Err(ConnectError::UnknownUser),
                    }
                } else if clients.check(&r.net_id.to_string(), &fp) == Pinned::Same {
                    // Known by its NetId and that NetId's certificate: another registered
                    // client's certificate does not open this NetId's route.
                    Ok(())
                } else {
                    Err(ConnectError::UnknownCert)
                }
            }
            ServerMode::SharedCa { .. } => {
                let cn = presented.and_then(|(_, cn)| cn).unwrap_or_default();
                if r.flags & flag::IGNORE_CN == 0 && !cn.eq_ignore_ascii_case(&r.host_name) {
                    return Err(ConnectError::CnMismatch);
                }
                Ok(())
            }
            ServerMode::Psk { .. } => Ok(()),
        }
    }
}
