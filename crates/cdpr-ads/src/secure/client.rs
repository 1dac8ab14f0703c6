//! The client's side of Secure ADS: the TLS handshake in the chosen mode, the certificate
//! checks of self-signed mode (pins), the TlsConnectInfo exchange.

use super::connect_info::{self, ConnectInfo, flag};
use super::identity::{self, Identity, fingerprint};
use super::pins::{Pinned, Pins};
use super::{SecureError, explain_handshake, psk_key, psk_suites, tls12, trust_ca, use_identity};
use crate::wire::AmsNetId;
use openssl::ssl::{HandshakeError, Ssl, SslContext, SslMethod, SslStream, SslVerifyMode};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

/// How this client authenticates.
#[derive(Debug, Clone)]
pub enum ClientMode {
    /// This machine's self-signed certificate (created on first use in the secure directory);
    /// the PLC's pinned on first use. `register`: the PLC's user and password, to add the
    /// route (sent only when given).
    SelfSigned { register: Option<(String, String)> },
    /// A certificate and key signed by the CA the PLC trusts, and that CA.
    SharedCa {
        cert: PathBuf,
        key: PathBuf,
        ca: PathBuf,
    },
    /// An identity and password the PLC has as a PSK entry.
    Psk { identity: String, password: String },
}

impl ClientMode {
    /// Its name on the command line (`ssc`, `sca`, `psk`).
    pub fn name(&self) -> &'static str {
        match self {
            ClientMode::SelfSigned { .. } => "ssc",
            ClientMode::SharedCa { .. } => "sca",
            ClientMode::Psk { .. } => "psk",
        }
    }
}

/// Everything the client needs to open Secure ADS connections.
#[derive(Debug, Clone)]
pub struct SecureClient {
    pub mode: ClientMode,
    /// The directory of this machine's certificate and the pins (see
    /// [`identity::default_dir`]); `None`: the default.
    pub dir: Option<PathBuf>,
    /// The host name sent in the TlsConnectInfo; `None`: the certificate's common name, else
    /// this machine's host name.
    pub host_name: Option<String>,
    /// The user's word for the PLC's certificate (`--accept-fingerprint`): on a first
    /// connection only this one is trusted; a pinned PLC whose certificate changed to exactly
    /// this one is re-pinned.
    pub accept_fingerprint: Option<String>,
    /// What the PLC announces (its UDP identify): on a first connection only this one is
    /// trusted. Never overrides a pin: who can answer TCP 8016 in the PLC's place can answer
    /// its UDP as well.
    pub expected_fingerprint: Option<String>,
    /// Self-signed mode with credentials: register on every connection (`cdpr route add`:
    /// the PLC may have lost the route while the pin stayed), not only on the first.
    pub always_register: bool,
    /// Shared-CA mode: the common name the PLC's certificate must carry (any certificate the
    /// CA signed passes the chain check, a laptop's too).
    pub plc_common_name: Option<String>,
}

/// An established Secure ADS connection.
pub struct Session {
    pub stream: SslStream<TcpStream>,
    /// The PLC's NetId, from its TlsConnectInfo answer.
    pub plc_net_id: AmsNetId,
    /// What happened that the user should hear once (a route registered, a PLC pinned).
    pub notes: Vec<String>,
    /// The PLC certificate's SHA-256 fingerprint (certificate modes).
    pub plc_fingerprint: Option<String>,
}

impl SecureClient {
    pub fn new(mode: ClientMode) -> SecureClient {
        SecureClient {
            mode,
            dir: None,
            host_name: None,
            accept_fingerprint: None,
            expected_fingerprint: None,
            always_register: false,
            plc_common_name: None,
        }
    }

    /// The file of pinned PLC fingerprints.
    pub fn pins_path(&self) -> Result<PathBuf, SecureError> {
        Ok(identity::default_dir(self.dir.as_deref())?.join("known-plcs"))
    }

    /// This machine's identity in self-signed mode (created if missing) and whether it was
    /// created now.
    pub fn own_self_signed(&self) -> Result<(Identity, bool), SecureError> {
        let dir = identity::default_dir(self.dir.as_deref())?;
        Identity::self_signed(&dir, "client", &identity::host_name())
    }

    /// Self-signed mode: this machine's certificate made now if it is missing, before a
    /// connection is opened (a key made on a slow machine would otherwise hold the PLC's
    /// handshake past its timeout); the note saying so. Other modes: nothing to make.
    pub fn make_own_certificate(&self) -> Result<Option<String>, SecureError> {
        match &self.mode {
            ClientMode::SelfSigned { .. } => {
                let (id, created) = self.own_self_signed()?;
                created.then(|| created_note(&id)).transpose()
            }
            _ => Ok(None),
        }
    }

    /// Over `tcp` (connected to `endpoint`, `host:port`): the TLS handshake, the PLC's
    /// certificate checked, the TlsConnectInfo sent as `net_id` and its answer read; every
    /// wait within `timeout`.
    pub fn connect(
        &self,
        tcp: TcpStream,
        endpoint: &str,
        net_id: AmsNetId,
        timeout: Duration,
    ) -> Result<Session, SecureError> {
        let io = |e: std::io::Error| SecureError::Protocol {
            endpoint: endpoint.to_string(),
            text: e.to_string(),
        };
        // Each read waits `timeout` at most; the whole exchange (handshake, TlsConnectInfo)
        // three times that: a peer that dribbles a byte now and then is cut off.
        let watchdog = Watchdog::arm(&tcp, timeout.saturating_mul(3)).map_err(io)?;
        tcp.set_read_timeout(Some(timeout)).map_err(io)?;
        tcp.set_write_timeout(Some(timeout)).map_err(io)?;
        let mut notes = Vec::new();
        let tls = self.tls_context(&mut notes)?;
        let psk = matches!(self.mode, ClientMode::Psk { .. });
        // No host name check (TwinCAT's certificates name the PLC as they like; the shared
        // CA, the pin or the key are the trust) and no SNI.
        let ssl = Ssl::new(&tls.context).map_err(SecureError::setup)?;
        let host = endpoint
            .rsplit_once(':')
            .map_or(endpoint, |(h, _)| h)
            .trim_matches(['[', ']']);
        let mut stream = ssl.connect(tcp).map_err(|e| {
            let (detail, verify) = handshake_failure(e);
            SecureError::Handshake {
                endpoint: endpoint.to_string(),
                advice: if watchdog.fired() {
                    watchdog.said()
                } else {
                    explain_handshake(&detail, verify.as_deref(), psk, tls.ca.as_deref())
                },
                detail,
            }
        })?;
        let plc_fingerprint = stream
            .ssl()
            .peer_certificate()
            .map(|c| fingerprint(&c))
            .transpose()
            .map_err(SecureError::setup)?;
        self.check_common_name(&stream, endpoint)?;
        let host_name = self
            .host_name
            .clone()
            .or(tls.own_cn)
            .unwrap_or_else(identity::host_name);
        let trust = match (&self.mode, &plc_fingerprint) {
            (ClientMode::SelfSigned { register }, Some(presented)) => {
                self.trust_pinned(endpoint, host, presented, register.as_ref(), &mut notes)?
            }
            _ => Trust::default(),
        };
        let request = ConnectInfo::request(trust.flags, net_id, &host_name, trust.credentials)
            .encode()
            .map_err(|e| SecureError::Protocol {
                endpoint: endpoint.to_string(),
                text: e.to_string(),
            })?;
        stream.write_all(&request).map_err(io)?;
        let answer = read_info(
            &mut stream,
            "closed the connection instead of answering the TlsConnectInfo (a TwinCAT that \
             refuses a client closes without a word)",
        )
        .map_err(|text| SecureError::Protocol {
            endpoint: endpoint.to_string(),
            text: if watchdog.fired() {
                watchdog.said()
            } else {
                text
            },
        })?;
        drop(watchdog);
        if answer.flags & flag::RESPONSE == 0 {
            return Err(SecureError::Protocol {
                endpoint: endpoint.to_string(),
                text: "its TlsConnectInfo answer lacks the response flag".into(),
            });
        }
        if let Some(error) = answer.refusal() {
            return Err(SecureError::Refused {
                endpoint: endpoint.to_string(),
                error,
            });
        }
        if let Some((mut pins, presented)) = trust.pin {
            pins.pin(endpoint, &presented)?;
            notes.push(format!(
                "route registered on {endpoint}; its certificate (SHA-256 {presented}) pinned in {}",
                pins.path().display()
            ));
        }
        Ok(Session {
            stream,
            plc_net_id: answer.net_id,
            notes,
            plc_fingerprint,
        })
    }

    /// The TLS 1.2 context of the mode: this machine's certificate (created on first use for
    /// `ssc`, noted), the CA or the pre-shared key.
    fn tls_context(&self, notes: &mut Vec<String>) -> Result<Tls, SecureError> {
        // A bare context, not `SslConnector`: that one reads the system's CA store on every
        // build (20 ms a connection here), and Secure ADS trusts a pin, its own CA or a key.
        let mut b = SslContext::builder(SslMethod::tls_client()).map_err(SecureError::setup)?;
        tls12(&mut b)?;
        let (own_cn, ca) = match &self.mode {
            ClientMode::SelfSigned { .. } => {
                let (id, created) = self.own_self_signed()?;
                if created {
                    notes.push(created_note(&id)?);
                }
                use_identity(&mut b, &id)?;
                // Checked by its pin after the handshake, not by a CA.
                b.set_verify_callback(SslVerifyMode::PEER, |_, _| true);
                (id.common_name(), None)
            }
            ClientMode::SharedCa { cert, key, ca } => {
                let id = Identity::load(cert, key)?;
                use_identity(&mut b, &id)?;
                trust_ca(&mut b, ca)?;
                b.set_verify(SslVerifyMode::PEER);
                (id.common_name(), Some(ca.clone()))
            }
            ClientMode::Psk { identity, password } => {
                psk_suites(&mut b)?;
                let (id, key) = (identity.clone().into_bytes(), psk_key(identity, password));
                b.set_psk_client_callback(move |_, _hint, id_out, key_out| {
                    // The identity as a NUL-terminated C string; too long for OpenSSL's
                    // buffer: no key (the handshake then fails with an alert).
                    if id.len() >= id_out.len() || key.len() > key_out.len() {
                        return Ok(0);
                    }
                    id_out[..id.len()].copy_from_slice(&id);
                    id_out[id.len()] = 0;
                    key_out[..key.len()].copy_from_slice(&key);
                    Ok(key.len())
                });
                b.set_verify(SslVerifyMode::NONE);
                (None, None)
            }
        };
        Ok(Tls {
            context: b.build(),
            own_cn,
            ca,
        })
    }

    /// With `--plc-cn`: the PLC's certificate must carry that common name (any certificate of
    /// the shared CA would do otherwise), checked before anything is sent.
    fn check_common_name(
        &self,
        stream: &SslStream<TcpStream>,
        endpoint: &str,
    ) -> Result<(), SecureError> {
        let Some(wanted) = &self.plc_common_name else {
            return Ok(());
        };
        let presented = stream
            .ssl()
            .peer_certificate()
            .and_then(|c| identity::common_name(&c))
            .unwrap_or_default();
        if presented.eq_ignore_ascii_case(wanted) {
            return Ok(());
        }
        Err(SecureError::Handshake {
            endpoint: endpoint.to_string(),
            detail: format!("the PLC's certificate names CN `{presented}`"),
            advice: format!(
                "--plc-cn asks for `{wanted}`: another machine holding a certificate of \
                 the same CA answers at this address, or --plc-cn is not the PLC's \
                 certificate's CN (`openssl x509 -noout -subject` on it shows it); \
                 nothing was sent to it"
            ),
        })
    }

    /// A self-signed PLC's certificate against its pin: the same, a renewal accepted, or a
    /// first use (trusted, expected from the UDP announcement, or refused); and what the
    /// TlsConnectInfo then carries (the flags, the credentials where a registration needs
    /// them, the pin to write once the PLC accepts).
    fn trust_pinned(
        &self,
        endpoint: &str,
        host: &str,
        presented: &str,
        register: Option<&(String, String)>,
        notes: &mut Vec<String>,
    ) -> Result<Trust, SecureError> {
        let mut pins = Pins::load(&self.pins_path()?)?;
        let said = |f: &Option<String>| {
            f.as_deref()
                .map(|a| identity::same_fingerprint(a, presented))
        };
        let (accepted, expected) = (
            said(&self.accept_fingerprint),
            said(&self.expected_fingerprint),
        );
        let first_use = match pins.check(endpoint, presented) {
            Pinned::Same => false,
            Pinned::Changed(_) if accepted == Some(true) => {
                pins.pin(endpoint, presented)?;
                notes.push(format!(
                    "accepted the new certificate of {endpoint} (SHA-256 {presented})"
                ));
                false
            }
            Pinned::Changed(pinned) => {
                return Err(SecureError::FingerprintChanged {
                    endpoint: endpoint.to_string(),
                    pinned,
                    presented: presented.to_string(),
                    pins: pins.path().to_path_buf(),
                });
            }
            // Told what to expect (--accept-fingerprint, else the PLC's UDP announcement) and
            // shown another: nothing is sent to it.
            Pinned::New if accepted.or(expected) == Some(false) => {
                return Err(SecureError::UnexpectedFingerprint {
                    endpoint: endpoint.to_string(),
                    expected: self
                        .accept_fingerprint
                        .clone()
                        .or_else(|| self.expected_fingerprint.clone())
                        .unwrap_or_default(),
                    presented: presented.to_string(),
                });
            }
            Pinned::New if register.is_none() => {
                return Err(SecureError::NotRegistered {
                    endpoint: endpoint.to_string(),
                    // The port only when it is not Secure ADS's own.
                    host: if endpoint.ends_with(&format!(":{}", super::PORT)) {
                        host.to_string()
                    } else {
                        endpoint.to_string()
                    },
                    presented: presented.to_string(),
                    pins: pins.path().to_path_buf(),
                });
            }
            Pinned::New => {
                if accepted.or(expected).is_none() {
                    notes.push(format!(
                        "trusted {endpoint}'s certificate on first use (SHA-256 \
                         {presented}): nothing to compare it with (no UDP announcement, \
                         no --accept-fingerprint); check it against the PLC's"
                    ));
                }
                true
            }
        };
        // Credentials only where they are needed: a first connection, or a registration asked
        // for (`cdpr route add`).
        Ok(match register {
            Some(c) if first_use || self.always_register => Trust {
                flags: flag::ADD_REMOTE | flag::SELF_SIGNED | flag::IP_ADDR | flag::IGNORE_CN,
                credentials: Some(c.clone()),
                pin: Some((pins, presented.to_string())),
            },
            _ => Trust {
                flags: flag::SELF_SIGNED,
                ..Trust::default()
            },
        })
    }
}

/// The OpenSSL message of a failed handshake, and the certificate check's verdict when that
/// is what failed.
pub(super) fn handshake_failure<S>(e: HandshakeError<S>) -> (String, Option<String>) {
    match e {
        HandshakeError::SetupFailure(e) => (e.to_string(), None),
        HandshakeError::Failure(m) | HandshakeError::WouldBlock(m) => {
            let v = m.ssl().verify_result();
            let verify = (v.as_raw() != 0).then(|| v.error_string().to_string());
            let detail = match m.error().io_error() {
                Some(io) => io.to_string(),
                None => m.error().to_string(),
            };
            (detail, verify)
        }
    }
}

/// Reads one TlsConnectInfo: its length checked (64 to 512) before the rest is waited for.
/// `closed`: what a connection closed before it means (the client's and the server's words
/// differ).
pub(super) fn read_info(stream: &mut impl Read, closed: &str) -> Result<ConnectInfo, String> {
    let mut head = [0u8; 2];
    stream.read_exact(&mut head).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            closed.to_string()
        } else if crate::timed_out::timed_out(&e) {
            "no TlsConnectInfo in time".to_string()
        } else {
            format!("reading its TlsConnectInfo: {e}")
        }
    })?;
    let length = ConnectInfo::length(head).map_err(|e| e.to_string())?;
    let mut b = vec![0u8; length];
    b[..2].copy_from_slice(&head);
    stream
        .read_exact(&mut b[2..])
        .map_err(|e| format!("reading its TlsConnectInfo: {e}"))?;
    debug_assert!(b.len() <= connect_info::MAX_LEN);
    ConnectInfo::decode(&b).map_err(|e| e.to_string())
}

/// Shuts a socket down when a deadline passes before it is dropped: the one bound on the
/// whole of a blocking handshake (OpenSSL's reads each wait the socket's timeout, but a peer
/// may keep sending a byte just in time).
struct Watchdog {
    cancel: Option<std::sync::mpsc::Sender<()>>,
    fired: std::sync::Arc<std::sync::atomic::AtomicBool>,
    within: Duration,
}

impl Watchdog {
    fn arm(socket: &TcpStream, within: Duration) -> std::io::Result<Watchdog> {
        let socket = socket.try_clone()?;
        let (cancel, wait) = std::sync::mpsc::channel::<()>();
        let fired = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&fired);
        std::thread::Builder::new()
            .name("secure-ads-deadline".into())
            .spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(within) {
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                    let _ = socket.shutdown(std::net::Shutdown::Both);
                }
            })?;
        Ok(Watchdog {
            cancel: Some(cancel),
            fired,
            within,
        })
    }

    fn fired(&self) -> bool {
        self.fired.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn said(&self) -> String {
        format!(
            "no complete handshake within {:?}: the peer answers too slowly to be a Secure ADS \
             endpoint (or a firewall holds the connection)",
            self.within
        )
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Disconnecting the channel ends the thread's wait.
        self.cancel.take();
    }
}

/// The TLS context of a connection, with this machine's certificate's common name (the host
/// name the TlsConnectInfo sends by default) and the CA trusted (for the handshake's advice).
/// The note of a certificate made for this machine.
fn created_note(id: &Identity) -> Result<String, SecureError> {
    Ok(format!(
        "created this machine's certificate {} (SHA-256 {})",
        id.source,
        fingerprint(&id.cert).map_err(SecureError::setup)?
    ))
}

struct Tls {
    context: SslContext,
    own_cn: Option<String>,
    ca: Option<PathBuf>,
}

/// What the TlsConnectInfo carries after the pin check: its flags, the credentials of a
/// registration, and the pin to write once the PLC accepts.
#[derive(Default)]
struct Trust {
    flags: u16,
    credentials: Option<(String, String)>,
    pin: Option<(Pins, String)>,
}
