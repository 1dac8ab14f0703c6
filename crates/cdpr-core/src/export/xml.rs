//! A small XML writer for the exports: one element or comment per line, indented two spaces a
//! level (the layout MJCF files are read in), attribute values and comments escaped. A full
//! XML library (quick-xml) would add a dependency for what these few methods do; the output
//! is checked by MuJoCo's own parser in `python/tests/test_mjcf.py`.

use std::fmt::Write as _;

/// An XML document being written.
pub struct Xml {
    out: String,
    depth: usize,
}

impl Xml {
    /// A document with its declaration.
    pub fn new() -> Xml {
        let mut x = Xml {
            out: String::new(),
            depth: 0,
        };
        x.line(r#"<?xml version="1.0" encoding="utf-8"?>"#);
        x
    }

    fn line(&mut self, text: &str) {
        // Writing into a String cannot fail.
        let _ = writeln!(self.out, "{:indent$}{text}", "", indent = self.depth * 2);
    }

    fn tag(name: &str, attributes: &[(&str, String)], end: &str) -> String {
        let mut tag = format!("<{name}");
        for (key, value) in attributes {
            let _ = write!(tag, r#" {key}="{}""#, escape(value));
        }
        tag.push_str(end);
        tag
    }

    /// `<!-- text -->`, made a valid comment.
    pub fn comment(&mut self, text: &str) {
        self.line(&format!("<!-- {} -->", comment_text(text)));
    }

    /// `<name a="v" …/>`.
    pub fn empty(&mut self, name: &str, attributes: &[(&str, String)]) {
        self.line(&Self::tag(name, attributes, "/>"));
    }

    /// `<name a="v" …>`, its content a level deeper until [`Xml::close`].
    pub fn open(&mut self, name: &str, attributes: &[(&str, String)]) {
        self.line(&Self::tag(name, attributes, ">"));
        self.depth += 1;
    }

    /// `</name>`.
    pub fn close(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        self.line(&format!("</{name}>"));
    }

    /// The document.
    pub fn finish(self) -> String {
        self.out
    }
}

impl Default for Xml {
    fn default() -> Xml {
        Xml::new()
    }
}

/// `text` made safe inside a double-quoted XML attribute (and in element text).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0 (tab, newline excepted).
            c if c.is_control() && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` as the body of an XML comment: no `--` inside, no `-` at the end, one line.
fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        let ch = if ch.is_control() { ' ' } else { ch };
        if ch == '-' && out.ends_with('-') {
            out.push(' ');
        }
        out.push(ch);
    }
    if out.ends_with('-') {
        out.push(' ');
    }
    out
}
