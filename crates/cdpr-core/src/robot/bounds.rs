//! The sizes of a robot file's lists, checked on its tokens before it is parsed: a file of a
//! million cables (well under [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES)) is refused in one
//! streaming pass over the text, in constant memory, instead of after its parse into a tree
//! and a robot (35 s and 2 GB for 750 000 cables).
//!
//! No list of a robot file needs more than [`MAX_CABLES`] values: the per-cable lists hold
//! one value per cable, the others three or six numbers, and cable robots have a handful of
//! cables to a few dozen.

use super::error::{MAX_CABLES, RobotFileError};
use toml_parser::lexer::{Token, TokenKind};

/// Refuses `text` when one of its arrays, or one of its arrays of tables (`[[obstacles]]`),
/// holds more than [`MAX_CABLES`] values; `file` is only used in messages. An array longer
/// than the limit is counted to its end (tokens only, nothing kept), so that the message
/// says how long it is.
pub(super) fn check_list_lengths(text: &str, file: &str) -> Result<(), RobotFileError> {
    let source = toml_parser::Source::new(text);
    let mut scan = Scan::default();
    for token in source.lex() {
        if let Some(long) = scan.token(text, token) {
            return Err(long.error(text, file));
        }
    }
    match scan.tables.into_iter().find(|(_, n)| *n > MAX_CABLES) {
        Some((field, count)) => Err(Long {
            field,
            count,
            at: 0,
        }
        .error(text, file)),
        None => Ok(()),
    }
}

/// A list longer than the limit: its field, its length, where it starts.
struct Long {
    field: String,
    count: usize,
    at: usize,
}

impl Long {
    fn error(self, text: &str, file: &str) -> RobotFileError {
        let line = if self.at == 0 {
            0
        } else {
            crate::toml_location::line_of(text, self.at)
        };
        let of_cables = self.field == "cables" || self.field.starts_with("cables.");
        if of_cables {
            RobotFileError::TooManyCables {
                file: file.to_string(),
                line,
                field: self.field,
                count: self.count,
                max: MAX_CABLES,
            }
        } else {
            RobotFileError::TooManyValues {
                file: file.to_string(),
                line,
                field: self.field,
                count: self.count,
                max: MAX_CABLES,
            }
        }
    }
}

/// An array being read: how many values it has, whether the next token begins one.
struct Open {
    values: usize,
    expect_value: bool,
    /// `[` or `{`: only an array's values are counted.
    array: bool,
    start: usize,
}

/// Where the token stream is: the last header's table, the key of the statement being read,
/// the brackets open in its value.
#[derive(Default)]
struct Scan {
    table: String,
    key: String,
    /// A statement has begun on this line (a header or a key).
    in_statement: bool,
    /// Reading a header's name (`[` seen at the start of a statement).
    header: Option<Header>,
    /// Past the `=` of a key/value pair.
    in_value: bool,
    open: Vec<Open>,
    /// The array being counted past the limit, by its depth.
    over: Option<usize>,
    /// How many tables each array of tables (`[[name]]`) has.
    tables: Vec<(String, usize)>,
}

struct Header {
    name: String,
    /// `[[`: an array of tables.
    array: bool,
    /// The name's brackets are closed (`]`, `]]`).
    closing: bool,
}

fn is_trivia(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Whitespace | TokenKind::Comment | TokenKind::Newline | TokenKind::Eof
    )
}

/// A key's text: a bare key as written, a quoted one without its quotes.
fn key_text<'t>(text: &'t str, token: &Token) -> &'t str {
    let raw = text
        .get(token.span().start()..token.span().end())
        .unwrap_or_default();
    match token.kind() {
        TokenKind::BasicString | TokenKind::LiteralString => {
            raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default()
        }
        _ => raw,
    }
}

impl Scan {
    fn field(&self) -> String {
        match (self.table.is_empty(), self.key.is_empty()) {
            (true, _) => self.key.clone(),
            (false, true) => self.table.clone(),
            (false, false) => format!("{}.{}", self.table, self.key),
        }
    }

    /// Takes one token; a list past the limit once it is closed (or the text ends).
    fn token(&mut self, text: &str, token: Token) -> Option<Long> {
        let kind = token.kind();
        if !self.open.is_empty() {
            return self.in_brackets(kind, token.span().start());
        }
        if let Some(h) = &mut self.header {
            match kind {
                TokenKind::LeftSquareBracket if h.name.is_empty() && !h.array => h.array = true,
                TokenKind::RightSquareBracket => h.closing = true,
                TokenKind::Dot => h.name.push('.'),
                TokenKind::Newline | TokenKind::Eof => self.end_header(),
                k if is_trivia(k) || h.closing => {}
                _ => h.name.push_str(key_text(text, &token)),
            }
            return None;
        }
        match kind {
            TokenKind::Newline | TokenKind::Eof => {
                self.in_statement = false;
                self.in_value = false;
                self.key.clear();
            }
            k if is_trivia(k) => {}
            TokenKind::LeftSquareBracket if !self.in_statement => {
                self.in_statement = true;
                self.header = Some(Header {
                    name: String::new(),
                    array: false,
                    closing: false,
                });
            }
            TokenKind::Equals if !self.in_value => self.in_value = true,
            TokenKind::LeftSquareBracket | TokenKind::LeftCurlyBracket if self.in_value => {
                self.open.push(Open {
                    values: 0,
                    expect_value: true,
                    array: kind == TokenKind::LeftSquareBracket,
                    start: token.span().start(),
                });
            }
            TokenKind::Dot if !self.in_value => self.key.push('.'),
            _ if !self.in_value => {
                self.in_statement = true;
                self.key.push_str(key_text(text, &token));
            }
            _ => {}
        }
        None
    }

    /// A header's name is read: the table statements now belong to, and one more table of
    /// an array of tables.
    fn end_header(&mut self) {
        let Some(h) = self.header.take() else { return };
        self.in_statement = false;
        self.key.clear();
        self.table = h.name;
        if h.array {
            match self.tables.iter_mut().find(|(n, _)| *n == self.table) {
                Some((_, n)) => *n += 1,
                None => self.tables.push((self.table.clone(), 1)),
            }
        }
    }

    /// A token inside a value's brackets: values counted at each depth.
    fn in_brackets(&mut self, kind: TokenKind, at: usize) -> Option<Long> {
        if is_trivia(kind) && kind != TokenKind::Eof {
            return None;
        }
        let depth = self.open.len();
        match kind {
            TokenKind::Comma => {
                if let Some(o) = self.open.last_mut() {
                    o.expect_value = true;
                }
                return None;
            }
            TokenKind::RightSquareBracket | TokenKind::RightCurlyBracket | TokenKind::Eof => {
                let closed = self.open.pop()?;
                if self.over == Some(depth) || kind == TokenKind::Eof && self.over.is_some() {
                    return Some(Long {
                        field: self.field(),
                        count: closed.values,
                        at: closed.start,
                    });
                }
                return None;
            }
            _ => {}
        }
        let o = self.open.last_mut()?;
        if o.expect_value {
            o.expect_value = false;
            if o.array {
                o.values += 1;
                if o.values > MAX_CABLES && self.over.is_none() {
                    self.over = Some(depth);
                }
            }
        }
        if matches!(
            kind,
            TokenKind::LeftSquareBracket | TokenKind::LeftCurlyBracket
        ) {
            self.open.push(Open {
                values: 0,
                expect_value: true,
                array: kind == TokenKind::LeftSquareBracket,
                start: at,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchors(n: usize) -> String {
        (0..n)
            .map(|k| format!("[{k}.0, 1.5, 2e0]"))
            .collect::<Vec<_>>()
            .join(",\n  ")
    }

    #[test]
    fn a_list_of_the_limit_passes_and_one_more_is_refused_with_its_length() {
        let at_limit = format!(
            "name = \"x\"\n[cables]\nframe_anchors = [\n  {}\n]\n",
            anchors(MAX_CABLES)
        );
        assert!(check_list_lengths(&at_limit, "f.toml").is_ok());
        let over = format!(
            "name = \"x\" # [not a header]\n\n[cables]\nnames = [\"a]\", 'b[']\nframe_anchors = [\n  {}\n]\n",
            anchors(MAX_CABLES + 7)
        );
        let e = check_list_lengths(&over, "f.toml").expect_err("too many");
        match &e {
            RobotFileError::TooManyCables {
                field, count, line, ..
            } => {
                assert_eq!(
                    (field.as_str(), *count, *line),
                    ("cables.frame_anchors", MAX_CABLES + 7, 5)
                );
            }
            other => panic!("{other:?}"),
        }
        let text = e.to_string();
        assert!(
            text.starts_with("f.toml:5: cables.frame_anchors:"),
            "{text}"
        );
        assert!(
            text.contains("1031 cables") && text.contains("1024"),
            "{text}"
        );
    }

    #[test]
    fn every_way_of_writing_a_long_list_is_counted() {
        let n = MAX_CABLES + 1;
        let ones = vec!["1"; n].join(",");
        for (text, field) in [
            // A dotted key at the top level, an inline table, a one-line array.
            (format!("cables.damping = [{ones}]\n"), "cables.damping"),
            (format!("cables = {{ damping = [{ones}] }}\n"), "cables"),
            (format!("[\"cables\"]\n'ea' = [{ones},]\n"), "cables.ea"),
            (format!("[platform]\ncom = [{ones}]\n"), "platform.com"),
        ] {
            let e = check_list_lengths(&text, "f.toml").expect_err(&text);
            assert_eq!(e.field(), Some(field), "{text}");
            assert!(e.to_string().contains(&format!("{n} ")), "{e}");
        }
        // Nested arrays count at their own depth: 1 000 anchors of 3 numbers pass.
        let nested = format!("[cables]\nframe_anchors = [{}]\n", anchors(1000));
        assert!(check_list_lengths(&nested, "f.toml").is_ok());
        // Arrays of tables count their tables.
        let tables = "[[obstacles]]\nname = 'o'\n".repeat(n);
        let e = check_list_lengths(&tables, "f.toml").expect_err("obstacles");
        assert_eq!(e.field(), Some("obstacles"));
        assert!(check_list_lengths(&"[[obstacles]]\n".repeat(MAX_CABLES), "f").is_ok());
        // An array never closed is counted to the end of the text.
        let open = format!("[cables]\nframe_anchors = [{ones}");
        assert!(check_list_lengths(&open, "f.toml").is_err());
    }
}
