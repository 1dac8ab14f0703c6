//! Where in a TOML file an error is: the 1-based line and the dotted field (`table.key`) of a
//! byte offset, for messages of the form `file:line: field: message`.
//!
//! Robot files ([`crate::robot`]) and surrogate parameter files ([`crate::surrogate::params`])
//! both turn the byte span of a `toml` parse or deserialisation error, or of a value they
//! reject, into such a location. The text is cut into its statements — table headers and
//! `key = value` pairs, a value running over as many lines as its brackets and strings
//! take — by the toml crate's own lexer and parser, so that the lines inside a multi-line
//! array or string are never mistaken for headers.

use std::ops::Range;
use toml_parser::parser::{Event, EventKind};

/// A located error: 1-based line (0 when unknown), dotted field, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub line: usize,
    pub field: String,
    pub message: String,
}

/// Where a `toml` error (syntax, type, unknown or missing field) is in `text`.
pub fn locate(text: &str, error: &toml::de::Error) -> Located {
    let message = error.message().trim().to_string();
    let span = error.span();
    Located {
        line: span.as_ref().map(|s| line_of(text, s.start)).unwrap_or(0),
        field: span
            .as_ref()
            .map(|s| field_at(text, s.start, &message))
            .unwrap_or_else(|| "(file)".to_string()),
        message,
    }
}

/// The 1-based line of byte `offset` (the last line past the end).
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The dotted field at byte `offset`: the table the offset is in and the key whose statement
/// holds it (`table.key`, the table alone between statements or on its header, the key alone
/// at the top level, `(top level)` for neither). `message` of the form "missing field `k`"
/// names the missing key instead (such errors point at the table).
pub fn field_at(text: &str, offset: usize, message: &str) -> String {
    let statements = statements(text);
    let at = statements.iter().rev().find(|s| s.span.start <= offset);
    let (table, key, on_header) = match at {
        None => ("", None, false),
        Some(s) => {
            let inside = offset <= s.span.end;
            match &s.kind {
                Kind::Header => (s.table.as_str(), None, inside),
                Kind::Pair(key) => (s.table.as_str(), key.as_deref().filter(|_| inside), false),
            }
        }
    };
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|m| m.split('`').next());
    let leaf = if on_header { missing } else { missing.or(key) };
    match (table.is_empty(), leaf) {
        (true, Some(k)) => k.to_string(),
        (false, Some(k)) => format!("{table}.{k}"),
        (false, None) => table.to_string(),
        (true, None) => "(top level)".to_string(),
    }
}

/// The byte range of the statement `key = …` in table `table` ("" for the top level), if the
/// text has one: for errors about a value found valid by the parser but rejected after.
pub fn key_span(text: &str, table: &str, key: &str) -> Option<Range<usize>> {
    statements(text)
        .into_iter()
        .find(|s| s.table == table && matches!(&s.kind, Kind::Pair(Some(k)) if k == key))
        .map(|s| s.span)
}

/// The byte range where table `table` is written: its `[table]` header, else a top-level
/// `table = …` (an inline table or a plain key), else its first dotted `table.key = …`.
pub fn table_span(text: &str, table: &str) -> Option<Range<usize>> {
    let statements = statements(text);
    let dotted = format!("{table}.");
    statements
        .iter()
        .find(|s| s.kind == Kind::Header && s.table == table)
        .or_else(|| {
            statements.iter().find(|s| {
                s.table.is_empty() && matches!(&s.kind, Kind::Pair(Some(k)) if k == table)
            })
        })
        .or_else(|| {
            statements.iter().find(|s| {
                s.table.is_empty()
                    && matches!(&s.kind, Kind::Pair(Some(k)) if k.starts_with(&dotted))
            })
        })
        .map(|s| s.span.clone())
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// `[table]` or `[[array.of.tables]]`.
    Header,
    /// `key = value`; None for a statement with no `=` (a syntax error).
    Pair(Option<String>),
}

/// One header or key/value pair: from its first byte to the end of its last line (comment
/// included, newline excluded), and the table it belongs to (a header: itself).
#[derive(Debug, Clone, PartialEq)]
struct Statement {
    kind: Kind,
    table: String,
    span: Range<usize>,
}

/// Cuts `text` into statements with the toml crate's own lexer and event parser
/// (`toml_parser`, what `toml::de::DeTable` is built from). Never fails: the parser recovers
/// at every token, so malformed text gives plausible statements (an unclosed bracket runs
/// to the end of the text, as the parser reads it).
///
/// `DeTable::parse_recoverable`'s spanned tree is not enough here. Measured on toml 1.2.1:
/// on `[a]\nk = = 3\nlonely\nopen = [1, 2,\n` it stops at `lonely` (a key with no `=` ends
/// its document loop: `open` is missing) and gives `k` the value span `0..0`; on
/// `b = 1\nb = 2` it keeps the first `b` only. Those are the texts a syntax error is
/// located in, so the statements come from the events, which cover every token.
fn statements(text: &str) -> Vec<Statement> {
    let tokens = toml_parser::Source::new(text).lex().into_vec();
    let mut cutter = Cutter {
        text,
        table: String::new(),
        open: None,
        out: Vec::new(),
    };
    toml_parser::parser::parse_document(&tokens, &mut |e: Event| cutter.event(&e), &mut ());
    cutter.close(text.len());
    cutter.out
}

/// A statement begun and not yet ended by a newline outside brackets.
struct Open {
    start: usize,
    header: bool,
    /// A header: from its first key's first byte to its last key's last.
    name: Option<Range<usize>>,
    /// A pair: where its `=` is.
    equals: Option<usize>,
    /// Arrays and inline tables open in its value.
    depth: usize,
}

/// The parser's events, cut into [`Statement`]s.
struct Cutter<'t> {
    text: &'t str,
    /// The last header's table ("" before any).
    table: String,
    open: Option<Open>,
    out: Vec<Statement>,
}

impl Cutter<'_> {
    /// Whitespace and comments belong to the statement around them; a newline outside
    /// brackets ends it; anything else begins one, or adds to the one begun.
    fn event(&mut self, event: &Event) {
        let span = event.span();
        let kind = event.kind();
        if matches!(kind, EventKind::Whitespace | EventKind::Comment) {
            return;
        }
        if kind == EventKind::Newline {
            if self.open.as_ref().is_some_and(|o| o.depth == 0) {
                self.close(span.start());
            }
            return;
        }
        let open = self.open.get_or_insert_with(|| Open {
            start: span.start(),
            header: matches!(kind, EventKind::StdTableOpen | EventKind::ArrayTableOpen),
            name: None,
            equals: None,
            depth: 0,
        });
        match kind {
            EventKind::SimpleKey if open.header => {
                let from = open.name.as_ref().map_or(span.start(), |n| n.start);
                open.name = Some(from..span.end());
            }
            EventKind::KeyValSep if !open.header && open.depth == 0 => {
                open.equals.get_or_insert(span.start());
            }
            EventKind::ArrayOpen | EventKind::InlineTableOpen => open.depth += 1,
            EventKind::ArrayClose | EventKind::InlineTableClose => {
                open.depth = open.depth.saturating_sub(1);
            }
            _ => {}
        }
    }

    /// Ends the open statement, if any, at `end`.
    fn close(&mut self, end: usize) {
        let Some(open) = self.open.take() else {
            return;
        };
        let kind = if open.header {
            self.table = open
                .name
                .and_then(|n| self.text.get(n))
                .unwrap_or_default()
                .to_string();
            Kind::Header
        } else {
            let key = open
                .equals
                .and_then(|eq| self.text.get(open.start..eq))
                .map(str::trim);
            // Keys with blanks inside (spaced dots, quoted keys with a blank) are not named.
            Kind::Pair(
                key.filter(|k| !k.is_empty() && !k.contains(' '))
                    .map(str::to_string),
            )
        };
        self.out.push(Statement {
            kind,
            table: self.table.clone(),
            span: open.start..end,
        });
    }
}

/// The text of the file at `path`, read through a cap of `max` bytes so that `/dev/zero` or a
/// huge file cannot eat the memory (a file's reported size says nothing of a device's):
/// Err(None) when it is larger, Err(Some(e)) for an OS or UTF-8 error.
pub fn read_capped(path: &std::path::Path, max: u64) -> Result<String, Option<std::io::Error>> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(Some)?;
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text).map_err(Some)?;
    if text.len() as u64 > max {
        return Err(None);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte offset of the first occurrence of `needle`.
    fn at(text: &str, needle: &str) -> usize {
        text.find(needle).expect("needle in text")
    }

    const ANCHORS: &str = "name = \"r\"\n\
        [cables]\n\
        frame_anchors = [    # m\n\
        \x20 [-0.029,  0.0515, 0.0],\n\
        \x20 [ 0.029,  0.0515, 0.0],\n\
        ]\n\
        dampng = 1.0\n";

    #[test]
    fn a_key_after_a_multi_line_array_of_arrays_is_in_its_table() {
        let offset = at(ANCHORS, "dampng");
        assert_eq!(field_at(ANCHORS, offset, "unknown field"), "cables.dampng");
        assert_eq!(line_of(ANCHORS, offset), 7);
    }

    #[test]
    fn an_offset_inside_a_multi_line_value_names_its_key() {
        let offset = at(ANCHORS, "0.0515");
        assert_eq!(field_at(ANCHORS, offset, ""), "cables.frame_anchors");
        assert_eq!(line_of(ANCHORS, offset), 4);
    }

    #[test]
    fn headers_top_level_and_missing_fields() {
        let text = "# c = 1\nname = \"r\"\n\n[winch]\nmax_velocity = 1.0\n\n[[legs]]\nx = 2\n";
        assert_eq!(field_at(text, 0, ""), "(top level)");
        assert_eq!(field_at(text, 0, "missing field `dof`"), "dof");
        assert_eq!(field_at(text, at(text, "name"), ""), "name");
        assert_eq!(field_at(text, at(text, "[winch]"), ""), "winch");
        assert_eq!(
            field_at(text, at(text, "[winch]"), "missing field `max_jerk`"),
            "winch.max_jerk"
        );
        // Between statements: the table alone (a missing field still named).
        let blank = at(text, "\n\n[[legs]]") + 1;
        assert_eq!(field_at(text, blank, ""), "winch");
        assert_eq!(field_at(text, at(text, "x = 2"), ""), "legs.x");
        assert_eq!(field_at(text, at(text, "[[legs]]"), ""), "legs");
    }

    #[test]
    fn brackets_and_signs_inside_strings_and_comments_are_not_structure() {
        let text = "title = \"a [b] # c = d\"  # [comment]\n\
            s = \"\"\"\n[not.a.table]\nk = 0\n\"\"\"\n\
            lit = '[x'\n\
            k = 2\n\
            [t]\n\
            \"quoted key\" = 1\n\
            'x=y' = 3\n";
        assert_eq!(field_at(text, at(text, "[not.a"), ""), "s");
        assert_eq!(field_at(text, at(text, "k = 2"), ""), "k");
        assert_eq!(field_at(text, at(text, "'x=y'"), ""), "t.'x=y'");
        // A quoted key with a blank is left out, as the old heuristic did.
        assert_eq!(field_at(text, at(text, "\"quoted"), ""), "t");
        assert_eq!(
            key_span(text, "", "k").map(|s| s.start),
            Some(at(text, "k = 2"))
        );
    }

    #[test]
    fn table_span_finds_headers_inline_tables_and_dotted_keys() {
        let text =
            "name = \"r\"\nplc = { lengths = \"x\" }\ncables.damping = 1\n\n[winch]\nkp = 1\n";
        let span = |t: &str| table_span(text, t).map(|s| &text[s]);
        assert_eq!(span("winch"), Some("[winch]"));
        assert_eq!(span("plc"), Some("plc = { lengths = \"x\" }"));
        assert_eq!(span("cables"), Some("cables.damping = 1"));
        assert_eq!(span("name"), Some("name = \"r\""));
        assert_eq!(span("frame"), None);
    }

    #[test]
    fn key_span_looks_in_the_named_table_only() {
        let text = "[x]\ndamping = 1.0\n[y]\ndelay_s = 0.1\ndamping = -1.0\n";
        let span = key_span(text, "y", "damping").expect("found");
        assert_eq!(&text[span], "damping = -1.0");
        assert_eq!(key_span(text, "y", "gain"), None);
        assert_eq!(key_span(text, "", "damping"), None);
    }

    #[test]
    fn malformed_text_still_gives_a_location() {
        let text = "[a]\nk = = 3\nlonely\nopen = [1, 2,\n";
        assert_eq!(field_at(text, at(text, "= 3"), ""), "a.k");
        assert_eq!(field_at(text, at(text, "lonely"), ""), "a");
        assert_eq!(field_at(text, text.len(), ""), "a.open");
        assert_eq!(line_of(text, text.len() + 10), 5);
    }

    #[test]
    fn statements_after_a_syntax_error_and_a_repeated_key_are_found() {
        // What the toml crate reports for each text, located.
        let located = |text: &str| {
            let e = toml::from_str::<toml::Table>(text).expect_err("a syntax error");
            let l = locate(text, &e);
            (l.line, l.field, l.message)
        };
        let text = "[a]\nlonely\nb = 1\nb = 2\n";
        assert_eq!(
            located(text),
            (2, "a".into(), "key with no value, expected `=`".into())
        );
        assert_eq!(field_at(text, at(text, "b = 2"), ""), "a.b");
        let text = "[a]\nb = 1\nb = 2\n";
        assert_eq!(located(text), (3, "a.b".into(), "duplicate key".into()));
        let span = key_span(text, "a", "b").expect("found");
        assert_eq!(&text[span], "b = 1");
    }

    #[test]
    fn a_statement_ends_before_its_newline_crlf_included() {
        let text = "[a]\r\nk = 1 # c\r\n[b]\r\nx = \"é\" # ü\r\n";
        let span = key_span(text, "a", "k").expect("found");
        assert_eq!(&text[span], "k = 1 # c");
        assert_eq!(table_span(text, "b").map(|s| &text[s]), Some("[b]"));
        assert_eq!(
            key_span(text, "b", "x").map(|s| &text[s]),
            Some("x = \"é\" # ü")
        );
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        a: Vec<[f64; 2]>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        t: Inner,
    }

    #[test]
    fn toml_errors_are_located() {
        let text = "[t]\na = [\n  [1.0, 2.0],\n  [3.0, 4.0],\n]\nb = 1\n";
        let e = toml::from_str::<Outer>(text).expect_err("unknown field");
        let located = locate(text, &e);
        assert_eq!((located.line, located.field.as_str()), (6, "t.b"));
        assert!(located.message.contains("unknown field"), "{located:?}");

        let text = "[t]\na = [\n  [1.0, \"two\"],\n]\n";
        let e = toml::from_str::<Outer>(text).expect_err("wrong type");
        let located = locate(text, &e);
        assert_eq!((located.line, located.field.as_str()), (3, "t.a"));
    }
}
