//! The Secure ADS options every face takes (`cdpr shadow`'s and `cdpr plc`'s flags, a test
//! suite's keys): which of TwinCAT's three modes, its files or key, and the rules across them,
//! checked here once. Errors name the options by their keys; each face spells them its own way
//! ([`SecureOptionError::message`]: `--psk-identity` on the command line, `psk_identity` in a
//! file).

use super::{ClientMode, SecureClient, ServerMode};
use std::path::PathBuf;

/// TwinCAT's Secure ADS modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Self-signed certificates: each side its own, known by fingerprint after the first
    /// connection registered a route.
    Ssc,
    /// A shared CA: both certificates signed by one CA.
    Sca,
    /// A pre-shared key: an identity and password, as in the PLC's StaticRoutes.xml.
    Psk,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Ssc, Mode::Sca, Mode::Psk];

    /// `ssc`, `sca`, `psk`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ssc => "ssc",
            Mode::Sca => "sca",
            Mode::Psk => "psk",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(text: &str) -> Result<Mode, String> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == text.trim())
            .ok_or_else(|| format!("`{text}` is not ssc, sca or psk"))
    }
}

/// The options as given (`None`: not given). `secure: None` is plain ADS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecureOptions {
    pub secure: Option<Mode>,
    /// This machine's certificate and the pins ([`super::identity::default_dir`] without).
    pub secure_dir: Option<PathBuf>,
    /// `sca`: this side's certificate, its key, the CA (PEM files).
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub ca: Option<PathBuf>,
    /// `psk`: the PSK entry's identity and password.
    pub psk_identity: Option<String>,
    pub psk_password: Option<String>,
    /// The host name sent in the TlsConnectInfo.
    pub secure_host_name: Option<String>,
    /// `ssc`: the PLC's certificate to accept, by its SHA-256 fingerprint.
    pub accept_fingerprint: Option<String>,
    /// `sca`: the common name the PLC's certificate must carry.
    pub plc_cn: Option<String>,
}

/// A rule across the Secure ADS options broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecureOptionError {
    /// `sca` without some of its files.
    #[error("{}", self.message(&|n| format!("`{n}`")))]
    SharedCaFiles { missing: Vec<&'static str> },
    /// `psk` without its identity or password.
    #[error("{}", self.message(&|n| format!("`{n}`")))]
    PskMissing,
    /// An identity or password outside ASCII.
    #[error("{}", self.message(&|n| format!("`{n}`")))]
    PskNotAscii,
    /// Options of another mode than the one chosen (`options` belong to `belongs`).
    #[error("{}", self.message(&|n| format!("`{n}`")))]
    OtherMode {
        options: Vec<&'static str>,
        belongs: Mode,
        chosen: Option<Mode>,
    },
}

impl SecureOptionError {
    /// The message with each option spelt by `spell` (its key in, the face's name out).
    pub fn message(&self, spell: &dyn Fn(&str) -> String) -> String {
        let mode = |m: Mode| format!("{} {}", spell("secure"), m.name());
        let list = |names: &[&str]| {
            let spelt: Vec<String> = names.iter().map(|n| spell(n)).collect();
            match spelt.as_slice() {
                [one] => one.clone(),
                [init @ .., last] => format!("{} and {last}", init.join(", ")),
                [] => String::new(),
            }
        };
        match self {
            SecureOptionError::SharedCaFiles { missing } => format!(
                "{} needs {}: this side's certificate and key (PEM), and the CA that signed both \
                 sides' certificates",
                mode(Mode::Sca),
                missing
                    .iter()
                    .map(|n| spell(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            SecureOptionError::PskMissing => format!(
                "{} needs {} and {} (or $CDPR_PSK_PASSWORD): the identity and password of a PSK \
                 entry on the PLC (TwinCAT: StaticRoutes.xml, <RemoteConnections><Server><Tls><Psk>)",
                mode(Mode::Psk),
                spell("psk_identity"),
                spell("psk_password")
            ),
            SecureOptionError::PskNotAscii => format!(
                "{} and {} must be ASCII: TwinCAT's key is SHA-256 of the upper-case identity and \
                 the password in its ANSI code page, which other characters would not match",
                spell("psk_identity"),
                spell("psk_password")
            ),
            SecureOptionError::OtherMode {
                options,
                belongs,
                chosen,
            } => {
                let what = match belongs {
                    Mode::Sca => " (a shared CA)",
                    _ => "",
                };
                let verb = if options.len() > 1 {
                    "belong"
                } else {
                    "belongs"
                };
                match chosen {
                    Some(c) => format!(
                        "{} {verb} to {}{what}, not {}",
                        list(options),
                        mode(*belongs),
                        mode(*c)
                    ),
                    None => format!(
                        "{} {verb} to {}{what}: without {} the link is plain ADS",
                        list(options),
                        mode(*belongs),
                        spell("secure")
                    ),
                }
            }
        }
    }
}

impl SecureOptions {
    /// This side's certificate files for `sca`, each missing one named.
    fn shared_ca(&self) -> Result<(PathBuf, PathBuf, PathBuf), SecureOptionError> {
        match (&self.cert, &self.key, &self.ca) {
            (Some(c), Some(k), Some(a)) => Ok((c.clone(), k.clone(), a.clone())),
            _ => Err(SecureOptionError::SharedCaFiles {
                missing: [
                    ("cert", self.cert.is_none()),
                    ("key", self.key.is_none()),
                    ("ca", self.ca.is_none()),
                ]
                .iter()
                .filter(|(_, m)| *m)
                .map(|(f, _)| *f)
                .collect(),
            }),
        }
    }

    fn psk(&self) -> Result<(String, String), SecureOptionError> {
        match (&self.psk_identity, &self.psk_password) {
            // TwinCAT upper-cases the identity and hashes its ANSI bytes: outside ASCII the
            // two sides could derive different keys and the user would see only a mismatch.
            (Some(i), Some(p)) if !i.is_ascii() || !p.is_ascii() => {
                Err(SecureOptionError::PskNotAscii)
            }
            (Some(i), Some(p)) if !i.is_empty() => Ok((i.clone(), p.clone())),
            _ => Err(SecureOptionError::PskMissing),
        }
    }

    /// Refuses options of another mode than the one chosen (a `ca` with psk is a mistake).
    fn check_mode_options(&self, client: bool) -> Result<(), SecureOptionError> {
        let given = |pairs: &[(&'static str, bool)]| -> Vec<&'static str> {
            pairs.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect()
        };
        let chosen = self.secure;
        let cert_files = given(&[
            ("cert", self.cert.is_some()),
            ("key", self.key.is_some()),
            ("ca", self.ca.is_some()),
        ]);
        let other = |options: Vec<&'static str>, belongs: Mode| {
            (!options.is_empty() && chosen != Some(belongs)).then_some(
                SecureOptionError::OtherMode {
                    options,
                    belongs,
                    chosen,
                },
            )
        };
        let checks = [
            other(cert_files, Mode::Sca),
            other(
                given(&[("psk_identity", self.psk_identity.is_some())]),
                Mode::Psk,
            ),
            if client {
                other(given(&[("plc_cn", self.plc_cn.is_some())]), Mode::Sca)
            } else {
                None
            },
        ];
        match checks.into_iter().flatten().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The client's Secure ADS setup; `None` for plain ADS. `register`: the PLC's user and
    /// password, to add the route in self-signed mode.
    pub fn client(
        &self,
        register: Option<(String, String)>,
    ) -> Result<Option<SecureClient>, SecureOptionError> {
        self.check_mode_options(true)?;
        let Some(mode) = self.secure else {
            return Ok(None);
        };
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
            host_name: self.secure_host_name.clone(),
            accept_fingerprint: self.accept_fingerprint.clone(),
            plc_common_name: self.plc_cn.clone(),
            ..SecureClient::new(mode)
        }))
    }

    /// The virtual PLC's Secure ADS mode; `None` for plain ADS. `route`: the user and password
    /// a self-signed client registers with.
    pub fn server(&self, route: (String, String)) -> Result<Option<ServerMode>, SecureOptionError> {
        self.check_mode_options(false)?;
        let Some(mode) = self.secure else {
            return Ok(None);
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(name: &str) -> String {
        format!("--{}", name.replace('_', "-"))
    }

    fn refused(o: &SecureOptions) -> String {
        o.client(None).expect_err("refused").message(&flag)
    }

    #[test]
    fn each_mode_takes_its_own_options_and_names_what_it_lacks() {
        let sca = SecureOptions {
            secure: Some(Mode::Sca),
            cert: Some("c.pem".into()),
            ..SecureOptions::default()
        };
        assert_eq!(
            refused(&sca),
            "--secure sca needs --key, --ca: this side's certificate and key (PEM), and the CA \
             that signed both sides' certificates"
        );
        let psk = SecureOptions {
            secure: Some(Mode::Psk),
            psk_identity: Some("lab".into()),
            ..SecureOptions::default()
        };
        assert!(refused(&psk).starts_with("--secure psk needs --psk-identity and --psk-password"));
        let e = SecureOptions {
            psk_password: Some("é".into()),
            ..psk.clone()
        }
        .client(None)
        .expect_err("refused");
        assert_eq!(e, SecureOptionError::PskNotAscii);
        // In a file the keys are spelt as keys.
        assert!(
            e.to_string()
                .starts_with("`psk_identity` and `psk_password` must be ASCII")
        );
        let ca_with_psk = SecureOptions {
            ca: Some("ca.pem".into()),
            ..psk.clone()
        };
        assert_eq!(
            refused(&ca_with_psk),
            "--ca belongs to --secure sca (a shared CA), not --secure psk"
        );
        let cn = SecureOptions {
            secure: Some(Mode::Ssc),
            plc_cn: Some("plc".into()),
            ..SecureOptions::default()
        };
        assert_eq!(
            refused(&cn),
            "--plc-cn belongs to --secure sca (a shared CA), not --secure ssc"
        );
        let plain = SecureOptions {
            psk_identity: Some("lab".into()),
            ..SecureOptions::default()
        };
        assert_eq!(
            refused(&plain),
            "--psk-identity belongs to --secure psk: without --secure the link is plain ADS"
        );
        let ok = SecureOptions {
            psk_password: Some("secret".into()),
            secure_host_name: Some("laptop".into()),
            ..psk
        };
        let client = ok.client(None).expect("ok").expect("secure");
        assert_eq!(client.mode.name(), "psk");
        assert_eq!(client.host_name.as_deref(), Some("laptop"));
        assert!(
            SecureOptions::default()
                .client(None)
                .expect("plain")
                .is_none()
        );
    }
}
