//! Trust on first use: certificate fingerprints pinned in a text file, one `NAME FINGERPRINT`
//! per line (`#` comments), as `~/.ssh/known_hosts` does. The client pins each PLC's
//! (`known-plcs`, by `host:port`), the virtual PLC each client it registered a route for
//! (`trusted-clients`, by the client's AMS NetId).

use super::SecureError;
use std::path::{Path, PathBuf};

/// The pins in one file.
#[derive(Debug, Clone)]
pub struct Pins {
    path: PathBuf,
    entries: Vec<(String, String)>,
}

/// What a presented fingerprint is to the pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pinned {
    /// The name has this fingerprint.
    Same,
    /// The name is not pinned yet.
    New,
    /// The name is pinned to another fingerprint (the old one).
    Changed(String),
}

impl Pins {
    /// The pins of `path`; none when the file does not exist. A malformed line is an error
    /// naming the file and line (a pin file edited by hand must not silently lose a pin).
    pub fn load(path: &Path) -> Result<Pins, SecureError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(SecureError::file(path)(e)),
        };
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some(name), Some(fp), None) if is_fingerprint(fp) => {
                    entries.push((name.to_string(), fp.to_ascii_uppercase()));
                }
                _ => {
                    return Err(SecureError::Files {
                        path: path.to_path_buf(),
                        text: format!(
                            "line {}: `{line}` is not `NAME SHA256-FINGERPRINT` (32 hex pairs \
                             joined by `:`)",
                            n + 1
                        ),
                    });
                }
            }
        }
        Ok(Pins {
            path: path.to_path_buf(),
            entries,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Compares `fingerprint` with the pin of `name`.
    pub fn check(&self, name: &str, fingerprint: &str) -> Pinned {
        match self.entries.iter().find(|(n, _)| n == name) {
            None => Pinned::New,
            Some((_, fp)) if fp.eq_ignore_ascii_case(fingerprint) => Pinned::Same,
            Some((_, fp)) => Pinned::Changed(fp.clone()),
        }
    }

    /// Whether any name is pinned to `fingerprint`.
    pub fn trusts(&self, fingerprint: &str) -> bool {
        self.entries
            .iter()
            .any(|(_, fp)| fp.eq_ignore_ascii_case(fingerprint))
    }

    /// Pins `name` to `fingerprint` (replacing its pin) and writes the file.
    pub fn pin(&mut self, name: &str, fingerprint: &str) -> Result<(), SecureError> {
        let fingerprint = fingerprint.to_ascii_uppercase();
        self.update(|entries| {
            entries.retain(|(n, _)| n != name);
            entries.push((name.to_string(), fingerprint));
            true
        })
        .map(|_| ())
    }

    /// Removes the pin of `name`; whether there was one.
    pub fn forget(&mut self, name: &str) -> Result<bool, SecureError> {
        self.update(|entries| {
            let before = entries.len();
            entries.retain(|(n, _)| n != name);
            entries.len() != before
        })
    }

    /// Changes the pins as `change` says, on the file as it is now: under an exclusive lock
    /// (`FILE.lock`) the file is read again, changed and written, so that two processes
    /// pinning at once (two `cdpr route add`, two virtual PLCs sharing a directory) keep each
    /// other's pins. Written only when `change` says it changed something.
    fn update(
        &mut self,
        change: impl FnOnce(&mut Vec<(String, String)>) -> bool,
    ) -> Result<bool, SecureError> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            super::identity::create_private_dir(dir)?;
        }
        let lock_path = self.path.with_extension("lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(SecureError::file(&lock_path))?;
        lock.lock().map_err(SecureError::file(&lock_path))?;
        let mut now = Pins::load(&self.path)?;
        let changed = change(&mut now.entries);
        if changed {
            now.save()?;
        }
        self.entries = now.entries;
        Ok(changed)
    }

    fn save(&self) -> Result<(), SecureError> {
        let mut text = String::from(
            "# Secure ADS certificate fingerprints (SHA-256), trusted on first use by cdpr.\n\
             # A line per peer: NAME FINGERPRINT. Delete a line to trust that peer's next \
             certificate.\n",
        );
        for (n, fp) in &self.entries {
            text.push_str(&format!("{n} {fp}\n"));
        }
        super::identity::write_file(&self.path, text.as_bytes())
    }
}

fn is_fingerprint(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 32
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89";

    #[test]
    fn pins_survive_a_reload_and_a_changed_fingerprint_is_told_apart() {
        let path = std::env::temp_dir().join(format!("cdpr-pins-{}/known", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut p = Pins::load(&path).expect("empty");
        assert_eq!(p.check("plc:8016", A), Pinned::New);
        p.pin("plc:8016", &A.to_lowercase()).expect("pinned");
        let mut q = Pins::load(&path).expect("reloaded");
        assert_eq!(q.check("plc:8016", A), Pinned::Same);
        assert!(q.trusts(A));
        let b = A.replace("AB:CD", "00:11");
        assert_eq!(q.check("plc:8016", &b), Pinned::Changed(A.to_string()));
        assert!(q.forget("plc:8016").expect("written"));
        assert_eq!(
            Pins::load(&path).expect("r").check("plc:8016", A),
            Pinned::New
        );
    }

    #[test]
    fn a_malformed_line_is_refused_with_its_number() {
        let path = std::env::temp_dir().join(format!("cdpr-pins-bad-{}", std::process::id()));
        std::fs::write(&path, format!("# c\nplc {A}\nplc2 nothex\n")).expect("w");
        let e = Pins::load(&path).unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        let _ = std::fs::remove_file(&path);
    }

    /// Two writers holding the pins as they were loaded each pin another peer: both pins
    /// survive (each write re-reads the file under its lock).
    #[test]
    fn two_writers_keep_each_others_pins() {
        let path = std::env::temp_dir().join(format!("cdpr-pins-two-{}/known", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut a = Pins::load(&path).expect("a");
        let mut b = Pins::load(&path).expect("b");
        a.pin("plc-a:8016", A).expect("a pins");
        let other = A.replace("AB:CD", "00:11");
        b.pin("plc-b:8016", &other).expect("b pins");
        let now = Pins::load(&path).expect("reloaded");
        assert_eq!(now.check("plc-a:8016", A), Pinned::Same);
        assert_eq!(now.check("plc-b:8016", &other), Pinned::Same);
        assert_eq!(b.check("plc-a:8016", A), Pinned::Same, "b sees a's pin too");
    }
}
