//! A minimal indented XML writer with escaping. Written by hand (decision record 0009):
//! the documents are small, fixed in shape and must be byte-stable for the drift tests.

use std::fmt::Write as _;

/// Escapes text for XML attribute values and character data.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Formats a number compactly and reproducibly (shortest round-trip form, no `-0`).
pub fn num(v: f64) -> String {
    let v = if v == 0.0 { 0.0 } else { v };
    format!("{v}")
}

/// Formats a vector of numbers separated by spaces.
pub fn nums(v: &[f64]) -> String {
    v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(" ")
}

/// An XML document being written.
#[derive(Debug, Default)]
pub struct Xml {
    out: String,
    stack: Vec<String>,
}

impl Xml {
    /// A document starting with the XML declaration.
    pub fn new() -> Xml {
        Xml {
            out: "<?xml version=\"1.0\"?>\n".to_string(),
            stack: Vec::new(),
        }
    }

    fn indent(&mut self) {
        for _ in 0..self.stack.len() {
            self.out.push_str("  ");
        }
    }

    fn tag(&mut self, name: &str, attrs: &[(&str, String)], close: &str) {
        self.indent();
        let _ = write!(self.out, "<{name}");
        for (k, v) in attrs {
            let _ = write!(self.out, " {k}=\"{}\"", escape(v));
        }
        self.out.push_str(close);
        self.out.push('\n');
    }

    /// A comment line.
    pub fn comment(&mut self, text: &str) -> &mut Self {
        self.indent();
        let _ = writeln!(self.out, "<!-- {} -->", text.replace("--", "- -"));
        self
    }

    /// Opens an element.
    pub fn open(&mut self, name: &str, attrs: &[(&str, String)]) -> &mut Self {
        self.tag(name, attrs, ">");
        self.stack.push(name.to_string());
        self
    }

    /// An empty element.
    pub fn empty(&mut self, name: &str, attrs: &[(&str, String)]) -> &mut Self {
        self.tag(name, attrs, "/>");
        self
    }

    /// An element holding text.
    pub fn text(&mut self, name: &str, attrs: &[(&str, String)], text: &str) -> &mut Self {
        self.indent();
        let _ = write!(self.out, "<{name}");
        for (k, v) in attrs {
            let _ = write!(self.out, " {k}=\"{}\"", escape(v));
        }
        let _ = writeln!(self.out, ">{}</{name}>", escape(text));
        self
    }

    /// Closes the innermost open element.
    pub fn close(&mut self) -> &mut Self {
        if let Some(name) = self.stack.pop() {
            self.indent();
            let _ = writeln!(self.out, "</{name}>");
        }
        self
    }

    /// Closes every open element and returns the text.
    pub fn finish(mut self) -> String {
        while !self.stack.is_empty() {
            self.close();
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_escaped_nested_xml() {
        let mut x = Xml::new();
        x.open("a", &[("n", "x\"<".into())])
            .text("b", &[], "1 & 2")
            .empty("c", &[]);
        let s = x.finish();
        assert_eq!(
            s,
            "<?xml version=\"1.0\"?>\n<a n=\"x&quot;&lt;\">\n  <b>1 &amp; 2</b>\n  <c/>\n</a>\n"
        );
        assert_eq!(num(-0.0), "0");
        assert_eq!(nums(&[0.036, 1.0]), "0.036 1");
    }
}
