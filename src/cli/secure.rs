//! The Secure ADS options (TLS on TCP 8016), shared by `cdpr shadow`, `cdpr view --plc`,
//! `cdpr route add` and `cdpr plc`: which of TwinCAT's three modes, and its files or key.

use anyhow::{Result, bail};
use cdpr_ads::secure::{ClientMode, SecureClient, ServerMode};
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

impl SecureArgs {
    /// This side's certificate files for `sca`, each missing one named.
    fn shared_ca(&self) -> Result<(PathBuf, PathBuf, PathBuf)> {
        match (&self.cert, &self.key, &self.ca) {
            (Some(c), Some(k), Some(a)) => Ok((c.clone(), k.clone(), a.clone())),
            _ => {
                let missing: Vec<&str> = [
                    ("--cert", self.cert.is_none()),
                    ("--key", self.key.is_none()),
                    ("--ca", self.ca.is_none()),
                ]
                .iter()
                .filter(|(_, m)| *m)
                .map(|(f, _)| *f)
                .collect();
                bail!(
                    "--secure sca needs {}: this side's certificate and key (PEM), and the CA \
                     that signed both sides' certificates",
                    missing.join(", ")
                )
            }
        }
    }

    fn psk(&self) -> Result<(String, String)> {
        match (&self.psk_identity, &self.psk_password) {
            // TwinCAT upper-cases the identity and hashes its ANSI bytes: outside ASCII the
            // two sides could derive different keys and the user would see only a mismatch.
            (Some(i), Some(p)) if !i.is_ascii() || !p.is_ascii() => bail!(
                "--psk-identity and --psk-password must be ASCII: TwinCAT's key is SHA-256 of \
                 the upper-case identity and the password in its ANSI code page, which other \
                 characters would not match"
            ),
            (Some(i), Some(p)) if !i.is_empty() => Ok((i.clone(), p.clone())),
            _ => bail!(
                "--secure psk needs --psk-identity and --psk-password (or $CDPR_PSK_PASSWORD): \
                 the identity and password of a PSK entry on the PLC (TwinCAT: StaticRoutes.xml, \
                 <RemoteConnections><Server><Tls><Psk>)"
            ),
        }
    }

    /// Refuses options of another mode than the one chosen (a --ca with psk is a mistake).
    fn check_mode_options(&self, mode: Mode) -> Result<()> {
        let cert_files = self.cert.is_some() || self.key.is_some() || self.ca.is_some();
        let psk = self.psk_identity.is_some();
        match mode {
            Mode::Ssc | Mode::Psk if cert_files => bail!(
                "--cert, --key and --ca belong to --secure sca (a shared CA), not --secure {}",
                name(mode)
            ),
            Mode::Ssc | Mode::Sca if psk => bail!(
                "--psk-identity belongs to --secure psk, not --secure {}",
                name(mode)
            ),
            _ => Ok(()),
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
        let Some(mode) = self.secure else {
            return Ok(None);
        };
        self.check_mode_options(mode)?;
        let mode = match mode {
            Mode::Ssc => ClientMode::SelfSigned { register },
            Mode::Sca => {
                let (cert, key, ca) = self.shared_ca()?;
                ClientMode::SharedCa { cert, key, ca }
            }
            Mode::Psk => {
                let (identity, password) = self.psk()?;
                ClientMode::Psk { identity, password }
            }
        };
        Ok(Some(SecureClient {
            dir: self.secure_dir.clone(),
            host_name,
            accept_fingerprint,
            ..SecureClient::new(mode)
        }))
    }

    /// The virtual PLC's Secure ADS mode; `None` without --secure. `route`: the user and
    /// password a self-signed client registers with.
    pub fn server(&self, route: (String, String)) -> Result<Option<ServerMode>> {
        let Some(mode) = self.secure else {
            return Ok(None);
        };
        self.check_mode_options(mode)?;
        Ok(Some(match mode {
            Mode::Ssc => ServerMode::SelfSigned {
                user: route.0,
                password: route.1,
            },
            Mode::Sca => {
                let (cert, key, ca) = self.shared_ca()?;
                ServerMode::SharedCa { cert, key, ca }
            }
            Mode::Psk => ServerMode::Psk {
                entries: vec![self.psk()?],
            },
        }))
    }
}

pub fn name(mode: Mode) -> &'static str {
    match mode {
        Mode::Ssc => "ssc",
        Mode::Sca => "sca",
        Mode::Psk => "psk",
    }
}
