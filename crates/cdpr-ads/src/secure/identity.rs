//! Certificates and keys: this machine's own (created on demand for self-signed mode), the
//! ones a user names (shared-CA mode), their SHA-256 fingerprints, and the per-user directory
//! Secure ADS keeps its files in.

use super::SecureError;
use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::x509::extension::{BasicConstraints, ExtendedKeyUsage, KeyUsage};
use openssl::x509::{X509, X509NameBuilder};
use std::fs;
use std::path::{Path, PathBuf};

/// Environment variable naming the directory of Secure ADS files (before the default).
pub const DIR_ENV: &str = "CDPR_SECURE_DIR";

/// Years a certificate created here is valid.
const VALID_DAYS: u32 = 10 * 365;

/// The directory of Secure ADS files: `given`, else `$CDPR_SECURE_DIR`, else
/// `$XDG_CONFIG_HOME/cdpr/secure-ads`, else `~/.config/cdpr/secure-ads` (`%APPDATA%` on
/// Windows).
pub fn default_dir(given: Option<&Path>) -> Result<PathBuf, SecureError> {
    if let Some(d) = given {
        return Ok(d.to_path_buf());
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env(DIR_ENV) {
        return Ok(d);
    }
    let base = env("XDG_CONFIG_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".config")))
        .or_else(|| env("APPDATA"))
        .ok_or_else(|| SecureError::Files {
            path: PathBuf::from("~"),
            text: format!(
                "no home directory (HOME unset): name one with --secure-dir or {DIR_ENV}"
            ),
        })?;
    Ok(base.join("cdpr").join("secure-ads"))
}

/// A certificate and its private key.
#[derive(Clone)]
pub struct Identity {
    pub cert: X509,
    pub key: PKey<Private>,
    /// Where it was read from (for messages).
    pub source: String,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("source", &self.source)
            .field("fingerprint", &fingerprint(&self.cert).unwrap_or_default())
            .finish()
    }
}

impl Identity {
    /// Reads a PEM certificate and its PEM private key.
    pub fn load(cert: &Path, key: &Path) -> Result<Identity, SecureError> {
        let cert_pem = read(cert)?;
        let key_pem = read(key)?;
        let bad = |path: &Path, what: &str, e: openssl::error::ErrorStack| SecureError::Files {
            path: path.to_path_buf(),
            text: format!("not a PEM {what}: {e}"),
        };
        let cert_x = X509::from_pem(&cert_pem).map_err(|e| bad(cert, "certificate", e))?;
        let key_x = PKey::private_key_from_pem(&key_pem).map_err(|e| bad(key, "private key", e))?;
        let matches = cert_x
            .public_key()
            .map(|p| p.public_eq(&key_x))
            .unwrap_or(false);
        if !matches {
            return Err(SecureError::Files {
                path: key.to_path_buf(),
                text: format!(
                    "this key does not belong to the certificate {}",
                    cert.display()
                ),
            });
        }
        Ok(Identity {
            cert: cert_x,
            key: key_x,
            source: cert.display().to_string(),
        })
    }

    /// The self-signed identity `name` (`client`, `plc`) in `dir`: read when its files exist,
    /// created (RSA 2048, SHA-256, CN = `common_name`, 10 years) and written otherwise. The
    /// bool says whether it was created now.
    pub fn self_signed(
        dir: &Path,
        name: &str,
        common_name: &str,
    ) -> Result<(Identity, bool), SecureError> {
        let cert_path = dir.join(format!("{name}.crt"));
        let key_path = dir.join(format!("{name}.key"));
        if cert_path.exists() {
            return Identity::load(&cert_path, &key_path).map(|i| (i, false));
        }
        if key_path.exists() {
            // Another process is making it: its certificate follows the key.
            return wait_for_identity(&cert_path, &key_path).map(|i| (i, false));
        }
        let id = create_self_signed(common_name).map_err(|e| SecureError::Files {
            path: cert_path.clone(),
            text: format!("cannot create a certificate: {e}"),
        })?;
        create_private_dir(dir)?;
        let pem = |r: Result<Vec<u8>, openssl::error::ErrorStack>, path: &Path| {
            r.map_err(SecureError::file(path))
        };
        let key_tmp = write_temp(
            &key_path,
            &pem(id.key.private_key_to_pem_pkcs8(), &key_path)?,
            true,
        )?;
        // The key's name is taken atomically (a hard link fails where it exists): of two
        // processes making this identity at once, one wins and the other reads the winner's.
        let linked = fs::hard_link(&key_tmp, &key_path);
        let _ = fs::remove_file(&key_tmp);
        match linked {
            Ok(()) => write_file(&cert_path, &pem(id.cert.to_pem(), &cert_path)?)?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return wait_for_identity(&cert_path, &key_path).map(|i| (i, false));
            }
            Err(e) => return Err(SecureError::file(&key_path)(e)),
        }
        Ok((
            Identity {
                source: cert_path.display().to_string(),
                ..id
            },
            true,
        ))
    }

    /// The certificate's common name.
    pub fn common_name(&self) -> Option<String> {
        common_name(&self.cert)
    }
}

/// The identity another process is writing right now: read once its certificate is there
/// (within 5 s).
fn wait_for_identity(cert: &Path, key: &Path) -> Result<Identity, SecureError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match Identity::load(cert, key) {
            Ok(i) => return Ok(i),
            Err(e) if std::time::Instant::now() > deadline => return Err(e),
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
}

/// The CN of a certificate's subject.
pub fn common_name(cert: &X509) -> Option<String> {
    cert.subject_name()
        .entries_by_nid(openssl::nid::Nid::COMMONNAME)
        .next()
        .and_then(|e| e.data().to_string().ok())
}

/// A certificate's SHA-256 fingerprint, as `openssl x509 -fingerprint -sha256` prints it
/// (upper-case hex pairs joined by `:`).
pub fn fingerprint(cert: &X509) -> Result<String, openssl::error::ErrorStack> {
    let d = cert.digest(MessageDigest::sha256())?;
    Ok(d.iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":"))
}

/// Whether two fingerprints name the same certificate, however written (`AB:CD…`, `abcd…`).
pub fn same_fingerprint(a: &str, b: &str) -> bool {
    let hex = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_hexdigit)
            .map(|c| c.to_ascii_uppercase())
            .collect()
    };
    let (a, b) = (hex(a), hex(b));
    !a.is_empty() && a == b
}

/// Reads a PEM file of one or more certificates (a CA).
pub fn load_certs(path: &Path) -> Result<Vec<X509>, SecureError> {
    let pem = read(path)?;
    let certs = X509::stack_from_pem(&pem).map_err(|e| SecureError::Files {
        path: path.to_path_buf(),
        text: format!("not a PEM certificate: {e}"),
    })?;
    if certs.is_empty() {
        return Err(SecureError::Files {
            path: path.to_path_buf(),
            text: "holds no certificate".into(),
        });
    }
    Ok(certs)
}

fn create_self_signed(common_name: &str) -> Result<Identity, openssl::error::ErrorStack> {
    let key = PKey::from_rsa(Rsa::generate(2048)?)?;
    let mut name = X509NameBuilder::new()?;
    name.append_entry_by_text("O", "cdpr")?;
    name.append_entry_by_text("CN", common_name)?;
    let name = name.build();
    let mut b = X509::builder()?;
    b.set_version(2)?;
    let mut serial = BigNum::new()?;
    serial.rand(127, openssl::bn::MsbOption::MAYBE_ZERO, false)?;
    let serial = serial.to_asn1_integer()?;
    b.set_serial_number(&serial)?;
    b.set_subject_name(&name)?;
    b.set_issuer_name(&name)?;
    b.set_pubkey(&key)?;
    b.set_not_before(Asn1Time::days_from_now(0)?.as_ref())?;
    b.set_not_after(Asn1Time::days_from_now(VALID_DAYS)?.as_ref())?;
    b.append_extension(BasicConstraints::new().build()?)?;
    b.append_extension(
        KeyUsage::new()
            .digital_signature()
            .key_encipherment()
            .build()?,
    )?;
    b.append_extension(
        ExtendedKeyUsage::new()
            .server_auth()
            .client_auth()
            .build()?,
    )?;
    b.sign(&key, MessageDigest::sha256())?;
    Ok(Identity {
        cert: b.build(),
        key,
        source: String::new(),
    })
}

fn read(path: &Path) -> Result<Vec<u8>, SecureError> {
    fs::read(path).map_err(SecureError::file(path))
}

/// Creates `dir` (and its parents) readable by its owner only (Unix: 0700), as the keys and
/// pins in it are nobody else's business.
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), SecureError> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir).map_err(SecureError::file(dir))
}

/// Writes `bytes` to a new temporary file beside `path`, of its own name (two processes never
/// share one), created readable by its owner only when `private` (Unix: 0600 from the start,
/// never a moment wider), and synced to disk; its path.
fn write_temp(path: &Path, bytes: &[u8], private: bool) -> Result<PathBuf, SecureError> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let err = SecureError::file(path);
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let tmp = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    let written = o.open(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(tmp)
}

/// Writes `bytes` to `path` through a temporary file, synced, and a rename: a crash leaves the
/// old file or the new one, never half of one.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), SecureError> {
    let tmp = write_temp(path, bytes, false)?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        SecureError::file(path)(e)
    })
}

/// This machine's host name (what a TlsConnectInfo carries): the kernel's, else `cdpr`.
pub fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "cdpr".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_identity_is_reread_with_the_same_fingerprint_and_a_private_key_file() {
        let dir = std::env::temp_dir().join(format!("cdpr-id-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let (a, created) = Identity::self_signed(&dir, "client", "laptop").expect("created");
        assert!(created);
        assert_eq!(a.common_name().as_deref(), Some("laptop"));
        let (b, created) = Identity::self_signed(&dir, "client", "other").expect("read");
        assert!(!created);
        let fa = fingerprint(&a.cert).expect("fp");
        assert_eq!(fa, fingerprint(&b.cert).expect("fp"));
        assert_eq!(fa.len(), 32 * 3 - 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.join("client.key"))
                .expect("key")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&dir).expect("dir").permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "the directory is its owner's only");
        }
        // A key of another certificate is refused with both files named.
        let (_, _) = Identity::self_signed(&dir, "other", "x").expect("created");
        let e = Identity::load(&dir.join("client.crt"), &dir.join("other.key")).unwrap_err();
        assert!(e.to_string().contains("does not belong"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }

    /// Two processes (here threads) making the same identity at once end with one identity
    /// both read, never one's key beside the other's certificate.
    #[test]
    fn an_identity_made_twice_at_once_is_one_identity() {
        for round in 0..3 {
            let dir =
                std::env::temp_dir().join(format!("cdpr-id-race-{}-{round}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            let made: Vec<String> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..4)
                    .map(|_| {
                        let dir = &dir;
                        s.spawn(move || {
                            let (id, _) =
                                Identity::self_signed(dir, "client", "x").expect("identity");
                            fingerprint(&id.cert).expect("fp")
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("thread"))
                    .collect()
            });
            assert!(made.windows(2).all(|w| w[0] == w[1]), "{made:?}");
            let (again, created) = Identity::self_signed(&dir, "client", "x").expect("reread");
            assert!(!created);
            assert_eq!(fingerprint(&again.cert).expect("fp"), made[0]);
            let leftovers: Vec<_> = fs::read_dir(&dir)
                .expect("dir")
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
                .collect();
            assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
            let _ = fs::remove_dir_all(&dir);
        }
    }
}
