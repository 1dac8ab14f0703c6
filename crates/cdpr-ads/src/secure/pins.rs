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
            Err(e) => {
                return Err(SecureError::Files {
                    path: path.to_path_buf(),
                    text: e.to_string(),
                });
            }
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
        self.entries.retain(|(n, _)| n != name);
        self.entries
            .push((name.to_string(), fingerprint.to_ascii_uppercase()));
        self.save()
    }

    /// Removes the pin of `name`; whether there was one.
    pub fn forget(&mut self, name: &str) -> Result<bool, SecureError> {
        let before = self.entries.len();
        self.entries.retain(|(n, _)| n != name);
        if self.entries.len() == before {
            return Ok(false);
        }
        self.save().map(|()| true)
    }

    fn save(&self) -> Result<(), SecureError> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| SecureError::Files {
                path: dir.to_path_buf(),
                text: e.to_string(),
            })?;
        }
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
}
