//! Named-query files: the one parser behind `#[derive(pgpipe::Query)]`
//! (at compile time), `pgpipe::named` (at run time) and `pgpipe-cli check`.
//!
//! A file is a list of blocks, each headed by a `-- name:` comment line,
//! optionally followed by the result kind as sqlc spells it:
//!
//! ```sql
//! -- Messages of one user, newest first.
//! -- name: get_messages :many
//! SELECT mid, subject, received
//!   FROM mail.messages
//!  WHERE uid = :uid AND mid = ANY(:mids)
//!  ORDER BY received DESC;
//!
//! -- name: count_unread :one
//! SELECT count(*) AS n FROM mail.messages WHERE uid = :uid AND NOT seen;
//! ```
//!
//! `:name` placeholders become `$1`, `$2`, ... in order of first use (a
//! name used twice is the same parameter). They are not recognised inside
//! string literals, quoted identifiers, dollar-quoted bodies or comments,
//! and `::type` casts are casts. Positional `$1` placeholders are refused
//! (mixing both kinds is a mistake waiting to happen). A trailing `;` is
//! dropped: each block is one statement for the extended protocol.
//!
//! Array slices written with identifiers (`arr[lo:hi]`) look like
//! placeholders; write them with spaces (`arr[lo : hi]`).
//!
//! ```
//! let file = pgpipe_queryfile::parse(
//!     "-- name: by_uid :one\nSELECT name FROM users WHERE uid = :uid AND :uid > 0;\n",
//! )
//! .unwrap();
//! let q = file.get("by_uid").unwrap();
//! assert_eq!(q.sql, "SELECT name FROM users WHERE uid = $1 AND $1 > 0");
//! assert_eq!(q.params[0].name, "uid");
//! assert_eq!(q.line, 1);
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

use std::fmt;

/// What a query returns, as sqlc's annotations spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `:one`: exactly one row.
    One,
    /// `:many` (the default): any number of rows.
    Many,
    /// `:exec`: no rows are read.
    Exec,
    /// `:execrows`: the number of rows affected.
    ExecRows,
    /// `:stream`: rows streamed in bounded memory.
    Stream,
}

impl Kind {
    /// The annotation (`"one"`, `"many"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::One => "one",
            Kind::Many => "many",
            Kind::Exec => "exec",
            Kind::ExecRows => "execrows",
            Kind::Stream => "stream",
        }
    }

    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "one" => Kind::One,
            "many" => Kind::Many,
            "exec" => Kind::Exec,
            "execrows" => Kind::ExecRows,
            "stream" => Kind::Stream,
            _ => return None,
        })
    }
}

/// One `:name` placeholder of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// The name after the colon.
    pub name: String,
    /// The 1-based line of the file where it is first used.
    pub line: usize,
}

/// One named query of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The name after `-- name:`.
    pub name: String,
    /// The result kind (`Kind::Many` when not written).
    pub kind: Kind,
    /// The 1-based line of the `-- name:` header.
    pub line: usize,
    /// The SQL with placeholders rewritten to `$n`, trimmed, without a
    /// trailing `;`.
    pub sql: String,
    /// The placeholders in `$n` order (`params[0]` is `$1`).
    pub params: Vec<Param>,
}

/// The queries of one file, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct File {
    /// The queries in the order they appear.
    pub queries: Vec<Query>,
}

impl File {
    /// The query called `name`.
    pub fn get(&self, name: &str) -> Option<&Query> {
        self.queries.iter().find(|q| q.name == name)
    }

    /// The names of all queries, for "did you mean" messages.
    pub fn names(&self) -> Vec<&str> {
        self.queries.iter().map(|q| q.name.as_str()).collect()
    }
}

/// A mistake in a query file, with the 1-based line where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        message: message.into(),
    })
}

/// Whether `s` is a query or parameter name: an ASCII letter or `_`, then
/// letters, digits and `_`.
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The header on this line, if it is one: `(name, kind text)`.
fn header(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("--")?.trim_start();
    rest.strip_prefix("name:")
}

/// Parses a whole query file.
pub fn parse(text: &str) -> Result<File, ParseError> {
    let mut file = File::default();
    // (header line number, name, kind, first body line number, body)
    let mut current: Option<(usize, String, Kind, usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if let Some(rest) = header(line) {
            if let Some(block) = current.take() {
                file.queries.push(finish(block)?);
            }
            let mut words = rest.split_whitespace();
            let Some(name) = words.next() else {
                return err(number, "`-- name:` without a query name");
            };
            if !is_name(name) {
                return err(
                    number,
                    format!("{name:?} is not a valid query name (letters, digits and _, not starting with a digit)"),
                );
            }
            if let Some(first) = file.queries.iter().find(|q| q.name == name) {
                return err(
                    number,
                    format!(
                        "query {name:?} is defined twice (first at line {})",
                        first.line
                    ),
                );
            }
            let kind = match words.next() {
                None => Kind::Many,
                Some(k) => match k.strip_prefix(':').and_then(Kind::parse) {
                    Some(kind) => kind,
                    None => {
                        return err(
                            number,
                            format!("unknown result kind {k:?} for query {name:?}; expected :one, :many, :exec, :execrows or :stream"),
                        )
                    }
                },
            };
            if let Some(extra) = words.next() {
                return err(
                    number,
                    format!("unexpected {extra:?} after the header of query {name:?}"),
                );
            }
            current = Some((number, name.to_owned(), kind, number + 1, String::new()));
            continue;
        }
        match &mut current {
            Some((_, _, _, _, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {
                let t = line.trim();
                if !(t.is_empty() || t.starts_with("--")) {
                    return err(
                        number,
                        "SQL before the first `-- name:` header: every query needs a name",
                    );
                }
            }
        }
    }
    if let Some(block) = current.take() {
        file.queries.push(finish(block)?);
    }
    Ok(file)
}

fn finish(
    (line, name, kind, first, body): (usize, String, Kind, usize, String),
) -> Result<Query, ParseError> {
    let (sql, params) = rewrite(&body, first)?;
    let mut sql = sql.trim().to_owned();
    while let Some(stripped) = sql.strip_suffix(';') {
        sql = stripped.trim_end().to_owned();
    }
    if only_comments(&sql) {
        return err(line, format!("query {name:?} has no SQL"));
    }
    Ok(Query {
        name,
        kind,
        line,
        sql,
        params,
    })
}

fn only_comments(sql: &str) -> bool {
    sql.lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with("--"))
}

/// Rewrites `:name` placeholders of one block to `$n`; `first_line` is
/// the file line of the block's first line (for error positions).
pub fn rewrite(body: &str, first_line: usize) -> Result<(String, Vec<Param>), ParseError> {
    let b = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut params: Vec<Param> = Vec::new();
    let mut line = first_line;
    let mut i = 0;
    // Start of text not yet copied to `out`.
    let mut copied = 0;
    let lines_in = |s: &[u8]| s.iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'\'' => {
                // E'...' strings take backslash escapes.
                let escapes =
                    i > 0 && matches!(b[i - 1], b'E' | b'e') && !ident_byte_before(b, i - 1);
                let end = skip_quoted(b, i, b'\'', escapes).ok_or_else(|| ParseError {
                    line,
                    message: "unterminated string literal".into(),
                })?;
                line += lines_in(&b[i..end]);
                i = end;
            }
            b'"' => {
                let end = skip_quoted(b, i, b'"', false).ok_or_else(|| ParseError {
                    line,
                    message: "unterminated quoted identifier".into(),
                })?;
                line += lines_in(&b[i..end]);
                i = end;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = skip_block_comment(b, i).ok_or_else(|| ParseError {
                    line,
                    message: "unterminated /* comment".into(),
                })?;
                line += lines_in(&b[i..end]);
                i = end;
            }
            b'$' => {
                if let Some(tag_end) = dollar_tag(b, i) {
                    let tag = &b[i..tag_end];
                    let Some(close) = find(&b[tag_end..], tag) else {
                        return err(line, "unterminated dollar-quoted string");
                    };
                    let end = tag_end + close + tag.len();
                    line += lines_in(&b[i..end]);
                    i = end;
                } else if b.get(i + 1).is_some_and(u8::is_ascii_digit) && !ident_byte_before(b, i) {
                    return err(
                        line,
                        "positional placeholder ($n) in a named query: use :name placeholders",
                    );
                } else {
                    i += 1;
                }
            }
            b':' if b.get(i + 1) == Some(&b':') => i += 2,
            b':' => {
                let start = i + 1;
                let mut end = start;
                if b.get(start)
                    .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
                {
                    while b
                        .get(end)
                        .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
                    {
                        end += 1;
                    }
                }
                if end == start {
                    i += 1;
                    continue;
                }
                let name = &body[start..end];
                let n = match params.iter().position(|p| p.name == name) {
                    Some(k) => k + 1,
                    None => {
                        params.push(Param {
                            name: name.to_owned(),
                            line,
                        });
                        params.len()
                    }
                };
                out.push_str(&body[copied..i]);
                out.push('$');
                out.push_str(&n.to_string());
                copied = end;
                i = end;
            }
            _ => i += 1,
        }
    }
    out.push_str(&body[copied..]);
    Ok((out, params))
}

fn ident_byte_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] >= 0x80)
}

/// The index after the closing quote of a quoted run starting at `start`.
fn skip_quoted(b: &[u8], start: usize, quote: u8, escapes: bool) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        if escapes && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// The index after a (nesting) block comment starting at `start`.
fn skip_block_comment(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i + 1 < b.len() {
        if b[i] == b'/' && b[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return Some(i);
            }
        } else {
            i += 1;
        }
    }
    None
}

/// If a dollar-quote opening tag (`$$` or `$tag$`) starts at `i`, the
/// index after it.
fn dollar_tag(b: &[u8], i: usize) -> Option<usize> {
    if ident_byte_before(b, i) {
        return None;
    }
    let mut j = i + 1;
    if b.get(j).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    while b
        .get(j)
        .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
    {
        j += 1;
    }
    (b.get(j) == Some(&b'$')).then_some(j + 1)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_kinds_and_lines() {
        let text = "-- the mail queries\n\n-- name: a :one\nSELECT 1\n\n-- name: b\n-- a comment\nSELECT :x,\n  :y, :x;\n";
        let f = parse(text).unwrap();
        assert_eq!(f.names(), ["a", "b"]);
        assert_eq!(f.queries[0].kind, Kind::One);
        assert_eq!(f.queries[0].line, 3);
        let b = &f.queries[1];
        assert_eq!(b.kind, Kind::Many);
        assert_eq!(b.line, 6);
        assert_eq!(b.sql, "-- a comment\nSELECT $1,\n  $2, $1");
        assert_eq!(
            b.params,
            [
                Param {
                    name: "x".into(),
                    line: 8
                },
                Param {
                    name: "y".into(),
                    line: 9
                }
            ]
        );
    }

    #[test]
    fn placeholders_are_not_found_in_quotes_comments_or_casts() {
        let body = "SELECT ':no', \"a:b\", $$ :no $$, $t$ :no $t$, E'\\' :no', x::int, :yes -- :no\n/* :no /* :no */ */ FROM t";
        let (sql, params) = rewrite(body, 1).unwrap();
        assert_eq!(params.len(), 1);
        assert_eq!(params[0].name, "yes");
        assert!(sql.contains("x::int, $1 --"), "{sql}");
    }

    #[test]
    fn mistakes_name_their_line() {
        let e = parse("SELECT 1\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("-- name: a\nSELECT 1\n-- name: a\nSELECT 2\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("defined twice (first at line 1)"));
        let e = parse("-- name: a :few\nSELECT 1\n").unwrap_err();
        assert!(e.message.contains(":few"), "{e}");
        let e = parse("-- name: a\nSELECT 1\n-- name: b\n-- nothing\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("-- name: a\nSELECT\n$1\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("-- name: a\nSELECT 'x\n").unwrap_err();
        assert!(e.message.contains("unterminated"));
        let e = parse("-- name: 1a\nSELECT 1\n").unwrap_err();
        assert!(e.message.contains("not a valid query name"));
    }

    #[test]
    fn any_input_is_an_answer_not_a_panic() {
        for text in [
            "",
            ":",
            "-- name: a\n:",
            "-- name: a\n$",
            "-- name: a\n/*",
            "-- name: a\n$a",
            "-- name: a\n'é:x'",
            "-- name: a\nE'\\",
        ] {
            let _ = parse(text);
        }
    }
}
