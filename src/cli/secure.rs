//! The Secure ADS options (TLS on TCP 8016), shared by `cdpr shadow`, `cdpr view --plc`,
//! `cdpr route add` and `cdpr plc`: which of TwinCAT's three modes, and its files or key.

use anyhow::{Result, anyhow};
use cdpr_ads::secure::{SecureClient, SecureOptions, ServerMode};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// TwinCAT's Secure ADS modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Self-signed certificates: each side makes its own; the first connection registers a
    /// route with the PLC's user and password, then each knows the other by fingerprint.
    Ssc,
    /// Shared CA: both certificates signed by one CA (--cert, --key, --ca).
    Sca,
    /// Pre-shared key: --psk-identity and --psk-password, as in the PLC's StaticRoutes.xml.
    Psk,
}

/// The options every Secure ADS face shares.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Secure ADS (TLS 1.2 on TCP 8016; TwinCAT 3.1.4024 and later)")]
pub struct SecureArgs {
    /// Talk ADS over TLS in this mode (the port is then 8016 unless given): `ssc` self-signed
    /// certificates, `sca` a shared CA, `psk` a pre-shared key. Without it: plain ADS.
    #[arg(long, value_enum, value_name = "ssc|sca|psk")]
    pub secure: Option<Mode>,
    /// Where this machine's self-signed certificate and the pinned fingerprints are kept
    /// (default: $CDPR_SECURE_DIR, else ~/.config/cdpr/secure-ads).
    #[arg(long, value_name = "DIR", requires = "secure")]
    pub secure_dir: Option<PathBuf>,
    /// `--secure sca`: this side's certificate (PEM), signed by the CA of --ca.
    #[arg(long, value_name = "PEM", requires = "secure")]
    pub cert: Option<PathBuf>,
    /// `--secure sca`: the private key of --cert (PEM).
    #[arg(long, value_name = "PEM", requires = "secure")]
    pub key: Option<PathBuf>,
    /// `--secure sca`: the CA (PEM) the other side's certificate must be signed by.
    #[arg(long, value_name = "PEM", requires = "secure")]
    pub ca: Option<PathBuf>,
    /// `--secure psk`: the PSK identity (case-insensitive, as TwinCAT compares it).
    #[arg(long, value_name = "IDENTITY", requires = "secure")]
    pub psk_identity: Option<String>,
    /// `--secure psk`: the PSK password (the key is SHA-256 of the upper-case identity and
    /// this password). Also from $CDPR_PSK_PASSWORD, which keeps it out of the shell history.
    #[arg(
        long,
        value_name = "PASSWORD",
        env = "CDPR_PSK_PASSWORD",
        hide_env_values = true
    )]
    pub psk_password: Option<String>,
}

impl From<Mode> for cdpr_ads::secure::Mode {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Ssc => cdpr_ads::secure::Mode::Ssc,
            Mode::Sca => cdpr_ads::secure::Mode::Sca,
            Mode::Psk => cdpr_ads::secure::Mode::Psk,
        }
    }
}

/// A Secure ADS option's key as this command line spells it (`psk_identity` →
/// `--psk-identity`).
pub fn flag(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

impl SecureArgs {
    /// The options as cdpr-ads checks them (the client's own, host name, fingerprint and
    /// common name, left out).
    pub fn options(&self) -> SecureOptions {
        SecureOptions {
            secure: self.secure.map(Into::into),
            secure_dir: self.secure_dir.clone(),
            cert: self.cert.clone(),
            key: self.key.clone(),
            ca: self.ca.clone(),
            psk_identity: self.psk_identity.clone(),
            psk_password: self.psk_password.clone(),
            ..SecureOptions::default()
        }
    }

    /// The client's Secure ADS setup; `None` without --secure. `register`: the PLC's user and
    /// password, to add the route in self-signed mode.
    pub fn client(
        &self,
        register: Option<(String, String)>,
        host_name: Option<String>,
        accept_fingerprint: Option<String>,
    ) -> Result<Option<SecureClient>> {
        self.client_with(
            SecureOptions {
                secure_host_name: host_name,
                accept_fingerprint,
                ..self.options()
            },
            register,
        )
    }

    /// [`SecureArgs::client`] of `options` (these and the link's own), errors spelt as flags.
    pub fn client_with(
        &self,
        options: SecureOptions,
        register: Option<(String, String)>,
    ) -> Result<Option<SecureClient>> {
        options
            .client(register)
            .map_err(|e| anyhow!(e.message(&flag)))
    }

    /// The virtual PLC's Secure ADS mode; `None` without --secure. `route`: the user and
    /// password a self-signed client registers with.
    pub fn server(&self, route: (String, String)) -> Result<Option<ServerMode>> {
        self.options()
            .server(route)
            .map_err(|e| anyhow!(e.message(&flag)))
    }
}

pub fn name(mode: Mode) -> &'static str {
    match mode {
        Mode::Ssc => "ssc",
        Mode::Sca => "sca",
        Mode::Psk => "psk",
    }
}
