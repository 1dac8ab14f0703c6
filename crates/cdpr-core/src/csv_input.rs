//! What the CSV readers of trajectories (`trajectory::csv`) and of recorded runs
//! (`recording::reader::csv`) share: one guard between the file and the csv crate, which would
//! otherwise grow one record without end on a binary file or `/dev/zero` named `.csv`, and the
//! words for the csv crate's errors.

use std::io::Read;

/// Longest line either reader takes, bytes (a trajectory row of 1000 numbers is ~25 kB, a
/// shadow's row of 8 cables under 1 kB).
pub const MAX_LINE_BYTES: u64 = 1 << 20;

/// A reader that fails (with [`std::io::ErrorKind::InvalidData`]) on a line longer than
/// [`MAX_LINE_BYTES`] or an input longer than its limit, saying which line.
#[derive(Debug)]
pub struct BoundedLines<R> {
    inner: R,
    /// The line being read (1-based).
    line: u64,
    /// Its bytes read so far.
    line_bytes: u64,
    total: u64,
    max_total: u64,
    /// What the input should be, for the messages ("a CSV trajectory").
    what: &'static str,
}

impl<R> BoundedLines<R> {
    /// `inner`, whose first byte is on line `first_line` of its file, read as `what`, at most
    /// `max_total` bytes of it.
    pub fn new(inner: R, first_line: u64, max_total: u64, what: &'static str) -> Self {
        BoundedLines {
            inner,
            line: first_line,
            line_bytes: 0,
            total: 0,
            max_total,
            what,
        }
    }
}

impl<R: Read> Read for BoundedLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for part in buf[..n].split_inclusive(|&b| b == b'\n') {
            self.line_bytes += part.len() as u64;
            if self.line_bytes > MAX_LINE_BYTES {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "line {} is longer than {} MiB: not {}",
                        self.line,
                        MAX_LINE_BYTES >> 20,
                        self.what
                    ),
                ));
            }
            if part.ends_with(b"\n") {
                self.line += 1;
                self.line_bytes = 0;
            }
        }
        self.total += n as u64;
        if self.total > self.max_total {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "larger than {} GiB: too large for {}",
                    self.max_total >> 30,
                    self.what
                ),
            ));
        }
        Ok(n)
    }
}

/// The csv crate's error in words (a row's field count against the header's, text that is not
/// UTF-8), and its line (0: none).
pub fn problem(error: &csv::Error) -> (u64, String) {
    let line = error.position().map(|p| p.line()).unwrap_or(0);
    let message = match error.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("this row has {len} fields but the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not valid UTF-8 text".to_string(),
        _ => error.to_string(),
    };
    (line, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_and_large_inputs_are_refused_naming_the_line() {
        let text = b"a,b\n1,2\n".to_vec();
        let mut ok = BoundedLines::new(&text[..], 1, 1 << 30, "a test CSV");
        let mut out = Vec::new();
        ok.read_to_end(&mut out).expect("short lines");
        assert_eq!(out, text);
        let endless = std::io::repeat(b'0').take(3 << 20);
        let mut long = BoundedLines::new(endless, 7, 1 << 30, "a test CSV");
        let e = long.read_to_end(&mut Vec::new()).expect_err("a 3 MiB line");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert_eq!(e.to_string(), "line 7 is longer than 1 MiB: not a test CSV");
        let lines = std::io::repeat(b'\n').take(3 << 20);
        let mut large = BoundedLines::new(lines, 1, 2 << 20, "a test CSV");
        let e = large
            .read_to_end(&mut Vec::new())
            .expect_err("over the limit");
        assert!(e.to_string().starts_with("larger than 0 GiB"), "{e}");
    }
}
