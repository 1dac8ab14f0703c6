//! Secure ADS: ADS over TLS 1.2 on TCP port 8016 (TwinCAT 3.1.4024 and later; on
//! TwinCAT/BSD the only ADS port open by default), in TwinCAT's three modes:
//!
//! - **self-signed certificates** ([`ClientMode::SelfSigned`]): each side has its own
//!   certificate; the first connection registers a route with the PLC's user and password
//!   (`AddRemote | SelfSigned` and the credentials in the [`ConnectInfo`]), after which the
//!   PLC knows the client by its certificate's fingerprint and the client the PLC by its own
//!   (trust on first use, [`Pins`]);
//! - **shared CA** ([`ClientMode::SharedCa`]): both certificates signed by one CA, each side
//!   checks the other's chain; no route registration;
//! - **pre-shared key** ([`ClientMode::Psk`]): TLS-PSK (RFC 4279) with the pure PSK AES-CBC
//!   suites TwinCAT offers, the key SHA-256(UPPER(identity) ‖ password) ([`psk_key`]).
//!
//! After the TLS handshake the client sends a [`ConnectInfo`] and the server answers with 64
//! bytes (its NetId and an error code); then AMS frames travel **without** their 6-byte
//! AMS/TCP header ([`crate::wire::Framing::Bare`]). The protocol above TLS follows
//! kevinherron/beckhoff-secure-ads (README), the only public description.
//!
//! TLS comes from OpenSSL (the `openssl` crate): rustls has no TLS-PSK.

mod client;
pub mod connect_info;
pub mod identity;
pub mod options;
pub mod pins;
mod server;

pub use client::{ClientMode, SecureClient, Session};
pub use connect_info::{ConnectError, ConnectInfo};
pub use identity::{Identity, fingerprint, same_fingerprint};
pub use options::{Mode, SecureOptionError, SecureOptions};
pub use pins::{Pinned, Pins};
pub use server::{SecureServer, ServerMode};

use openssl::hash::{MessageDigest, hash};
use openssl::ssl::{SslContextBuilder, SslOptions, SslVersion};
use std::path::PathBuf;

/// Secure ADS's TCP port.
pub const PORT: u16 = 8016;

/// The cipher suites of the certificate modes, in OpenSSL's names: what TwinCAT offers (the
/// reference client's list: DHE-RSA with AES), ECDHE first where a peer has it.
pub const CERT_CIPHERS: &str = "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:\
     DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-SHA256:\
     DHE-RSA-AES128-SHA256";
/// The pure PSK suites TwinCAT accepts (AES-CBC only; no DHE/ECDHE-PSK, no GCM).
pub const PSK_CIPHERS: &str =
    "PSK-AES256-CBC-SHA384:PSK-AES128-CBC-SHA256:PSK-AES256-CBC-SHA:PSK-AES128-CBC-SHA";

/// `SSL_OP_NO_EXTENDED_MASTER_SECRET` (OpenSSL 3.0) and `SSL_OP_NO_ENCRYPT_THEN_MAC`: TwinCAT
/// rejects a PSK ClientHello carrying those extensions (the reference client sends none).
const NO_EMS_NO_ETM: u64 = 0x1 | 0x8_0000;

/// The 32-byte key TwinCAT derives from a PSK identity and password:
/// SHA-256(UPPER(identity) ‖ password) (identities are case-insensitive by default).
pub fn psk_key(identity: &str, password: &str) -> [u8; 32] {
    let mut input = identity.to_uppercase().into_bytes();
    input.extend_from_slice(password.as_bytes());
    let mut key = [0u8; 32];
    // SHA-256 of a few bytes cannot fail short of a broken OpenSSL; then no key matches.
    if let Ok(d) = hash(MessageDigest::sha256(), &input) {
        key.copy_from_slice(&d);
    }
    key
}

/// Why a Secure ADS connection could not be made, each with what to change on which side.
#[derive(Debug, thiserror::Error)]
pub enum SecureError {
    /// A file of certificates, keys or pins.
    #[error("{}: {text}", path.display())]
    Files { path: PathBuf, text: String },
    /// The TLS setup of this side (an OpenSSL error building the context).
    #[error("TLS setup: {0}")]
    Setup(String),
    /// The TLS handshake failed.
    #[error("TLS handshake with {endpoint} failed: {detail}. {advice}")]
    Handshake {
        endpoint: String,
        detail: String,
        advice: String,
    },
    /// The PLC's certificate is not the one pinned for it.
    #[error(
        "the certificate of {endpoint} changed: pinned {pinned}, presented {presented}. If the \
         PLC's certificate was renewed on purpose, accept the new one with \
         --accept-fingerprint {presented} (or delete the line `{endpoint} …` in {}); otherwise \
         someone may be in between: do not connect",
        pins.display()
    )]
    FingerprintChanged {
        endpoint: String,
        pinned: String,
        presented: String,
        pins: PathBuf,
    },
    /// Self-signed mode, the PLC not known yet, and its certificate not the one expected.
    #[error(
        "{endpoint} presented a certificate with fingerprint {presented}, not the expected \
         {expected} (--accept-fingerprint, or what the PLC announces over UDP): someone may be \
         in between, or another machine answers at that address; nothing was sent to it"
    )]
    UnexpectedFingerprint {
        endpoint: String,
        expected: String,
        presented: String,
    },
    /// Self-signed mode, the PLC not known yet and no credentials to register with.
    #[error(
        "no route to {endpoint} yet (its certificate, fingerprint {presented}, is not pinned in \
         {}): register once with the PLC's user and password: `cdpr route add --plc {host} --secure \
         ssc --user USER --password PASSWORD`, or --secure-user/--secure-password on this \
         connection",
        pins.display()
    )]
    NotRegistered {
        endpoint: String,
        host: String,
        presented: String,
        pins: PathBuf,
    },
    /// The PLC answered the TlsConnectInfo with an error.
    #[error("{endpoint} refused the connection (TlsConnectInfo error {}): {}", .error.code(), .error.advice())]
    Refused {
        endpoint: String,
        error: ConnectError,
    },
    /// The PLC's TlsConnectInfo answer is missing or malformed.
    #[error("{endpoint}: {text}")]
    Protocol { endpoint: String, text: String },
}

impl SecureError {
    fn setup(e: openssl::error::ErrorStack) -> SecureError {
        SecureError::Setup(e.to_string())
    }

    /// An error about the file `path`, for `map_err`.
    fn file<E: std::fmt::Display>(path: &std::path::Path) -> impl Fn(E) -> SecureError + '_ {
        move |e| SecureError::Files {
            path: path.to_path_buf(),
            text: e.to_string(),
        }
    }
}

/// TLS 1.2 exactly, no compression, tickets or renegotiation: what TwinCAT speaks.
fn tls12(b: &mut SslContextBuilder) -> Result<(), SecureError> {
    b.set_min_proto_version(Some(SslVersion::TLS1_2))
        .map_err(SecureError::setup)?;
    b.set_max_proto_version(Some(SslVersion::TLS1_2))
        .map_err(SecureError::setup)?;
    b.set_options(
        SslOptions::NO_COMPRESSION | SslOptions::NO_TICKET | SslOptions::NO_RENEGOTIATION,
    );
    Ok(())
}

/// The pure PSK suites, no extensions TwinCAT refuses.
fn psk_suites(b: &mut SslContextBuilder) -> Result<(), SecureError> {
    b.set_cipher_list(PSK_CIPHERS).map_err(SecureError::setup)?;
    b.set_options(SslOptions::from_bits_retain(NO_EMS_NO_ETM as _));
    Ok(())
}

/// This side's certificate and key, with the certificate modes' suites.
fn use_identity(b: &mut SslContextBuilder, id: &Identity) -> Result<(), SecureError> {
    b.set_cipher_list(CERT_CIPHERS)
        .map_err(SecureError::setup)?;
    b.set_certificate(&id.cert).map_err(SecureError::setup)?;
    b.set_private_key(&id.key).map_err(SecureError::setup)?;
    b.check_private_key().map_err(SecureError::setup)
}

/// Trusts the CA(s) of the PEM file `ca`, and only them (not the system's store), to sign the
/// peer's certificate; the CA certificates.
fn trust_ca(
    b: &mut SslContextBuilder,
    ca: &std::path::Path,
) -> Result<Vec<openssl::x509::X509>, SecureError> {
    let certs = identity::load_certs(ca)?;
    let mut store = openssl::x509::store::X509StoreBuilder::new().map_err(SecureError::setup)?;
    for c in &certs {
        store.add_cert(c.clone()).map_err(SecureError::setup)?;
    }
    b.set_verify_cert_store(store.build())
        .map_err(SecureError::setup)?;
    Ok(certs)
}

/// Words for an OpenSSL handshake failure: what happened and what to change.
pub(crate) fn explain_handshake(
    detail: &str,
    verify: Option<&str>,
    psk: bool,
    ca: Option<&std::path::Path>,
) -> String {
    let d = detail.to_ascii_lowercase();
    let has = |s: &str| d.contains(s);
    if let Some(v) = verify {
        let v_l = v.to_ascii_lowercase();
        if v_l.contains("expired") {
            return format!("the peer's certificate has expired ({v}): renew it on its side");
        }
        if v_l.contains("not yet valid") {
            return format!("the peer's certificate is not valid yet ({v}): check both clocks");
        }
        if v_l.contains("issuer") || v_l.contains("self-signed") || v_l.contains("self signed") {
            return format!(
                "the peer's certificate is not signed by the CA {} ({v}): give --ca the CA that \
                 signed the peer's certificate, or use self-signed mode",
                ca.map_or("given".into(), |p| p.display().to_string())
            );
        }
        return format!("the peer's certificate was refused: {v}");
    }
    if has("unknown psk identity") || (psk && (has("decrypt") || has("bad record mac"))) {
        return "PSK mismatch: the identity or password differs from the PLC's (TwinCAT: \
                StaticRoutes.xml, <Server><Tls><Psk>; the identity is case-insensitive, the \
                password is not)"
            .into();
    }
    if has("certificate expired") {
        return "the peer refused this side's certificate as expired: renew it".into();
    }
    if has("unknown ca") || has("bad certificate") || has("certificate unknown") {
        return "the peer refused this side's certificate (not signed by a CA it trusts, or \
                not registered): shared CA: sign it with the PLC's CA; self-signed: register a \
                route first"
            .into();
    }
    if has("certificate required") || has("peer did not return a certificate") {
        return "the peer sent no certificate: both sides need one in the certificate modes".into();
    }
    if has("no shared cipher") || has("handshake failure") || has("no ciphers") {
        return "no cipher suite in common: the two sides are set to different modes \
                (certificates against PSK?)"
            .into();
    }
    if has("wrong version") || has("unsupported protocol") || has("packet length too long") {
        return "the peer does not speak TLS 1.2 on this port: plain ADS is on 48898, Secure \
                ADS on 8016"
            .into();
    }
    if has("eof") || has("reset") || has("broken pipe") {
        return "the peer closed the connection during the handshake: is Secure ADS enabled \
                there (TwinCAT 3.1.4024 or later, port 8016 open in its firewall) and set to \
                this mode?"
            .into();
    }
    if has("timed out") || has("would block") || has("resource temporarily") {
        return "no TLS answer in time: a firewall in between, or not a Secure ADS port".into();
    }
    "see the OpenSSL message".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SHA-256("MY-CLIENT" ‖ "my-secret-password"), computed independently with
    /// `printf '%s' MY-CLIENTmy-secret-password | sha256sum`.
    #[test]
    fn the_psk_key_is_sha256_of_the_upper_case_identity_and_the_password() {
        let hex: String = psk_key("my-client", "my-secret-password")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, include_str!("psk_key_reference.txt").trim());
        assert_eq!(psk_key("My-Client", "x"), psk_key("MY-CLIENT", "x"));
        assert_ne!(psk_key("a", "Pw"), psk_key("a", "pw"));
    }
}
