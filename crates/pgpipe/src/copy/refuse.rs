//! Recognising `COPY ... FROM STDIN` before it is sent through a query
//! method (extended protocol), where it cannot be refused after the fact.
//!
//! Why before: once the server has answered Execute with CopyInResponse it
//! is in copy-in mode, where it ignores Sync. A CopyFail sent then makes it
//! skip everything up to the *next* Sync, which belongs to the request
//! pipelined behind the COPY (another task's query): that request would get
//! no answer or a wrong one. So such a statement is never sent: its caller
//! gets an error naming [`Client::copy_in`](crate::Client::copy_in).

use crate::error::ErrorKind;
use crate::Error;

/// The error for a `COPY ... FROM STDIN` given to a query method.
pub(crate) fn copy_from_stdin_refused() -> Error {
    Error::new(
        ErrorKind::Unsupported,
        "COPY ... FROM STDIN cannot run through a query method: use client.copy_in(sql) \
         (or copy_in_rows for typed binary rows)",
    )
}

/// The server answered a query method with CopyInResponse although the
/// statement was not recognised as `COPY ... FROM STDIN` beforehand: the
/// requests pipelined behind it can no longer be answered reliably (see
/// the module docs), so the connection is closed and every caller gets an
/// error instead of another's answer.
pub(crate) fn copy_in_reached_the_server(shared: &crate::driver::Shared) -> Error {
    shared.abort(copy_from_stdin_refused().context(
        "the server started a COPY FROM STDIN for a query method; the connection is closed",
    ))
}

/// Errors if `sql` is a `COPY ... FROM STDIN` statement. Cheap for every
/// other statement: only SQL whose first word is COPY is scanned further.
pub(crate) fn refuse_copy_from_stdin(sql: &str) -> Result<(), Error> {
    if is_copy_from_stdin(sql) {
        Err(copy_from_stdin_refused())
    } else {
        Ok(())
    }
}

/// Whether `sql` starts with the word COPY and has the words `FROM STDIN`
/// outside parentheses, quotes and comments (so `COPY (SELECT ... FROM
/// stdin) TO STDOUT` and `COPY t FROM 'stdin'` are not). Only its first
/// statement counts: the extended protocol takes one.
pub(crate) fn is_copy_from_stdin(sql: &str) -> bool {
    let mut lexer = Lexer {
        s: sql.as_bytes(),
        i: 0,
    };
    next_statement_copies_from_stdin(&mut lexer) == Some(true)
}

/// Whether any statement of `sql` (a simple query may hold several,
/// separated by semicolons) is a `COPY ... FROM STDIN`.
pub(crate) fn any_copy_from_stdin(sql: &str) -> bool {
    let mut lexer = Lexer {
        s: sql.as_bytes(),
        i: 0,
    };
    while let Some(copies) = next_statement_copies_from_stdin(&mut lexer) {
        if copies {
            return true;
        }
    }
    false
}

/// Reads one statement, up to a semicolon outside parentheses or the end:
/// whether it is a `COPY ... FROM STDIN`; `None` once nothing is left.
fn next_statement_copies_from_stdin(lexer: &mut Lexer<'_>) -> Option<bool> {
    let is_copy = match lexer.next_token()? {
        Token::Semicolon => return Some(false),
        Token::Word(w) => w.eq_ignore_ascii_case(b"copy"),
        _ => false,
    };
    let mut found = false;
    let mut depth = 0usize;
    let mut after_from = false;
    while let Some(token) = lexer.next_token() {
        match token {
            Token::Semicolon if depth == 0 => break,
            Token::Open => depth += 1,
            Token::Close => depth = depth.saturating_sub(1),
            Token::Word(w) if depth == 0 => {
                if is_copy && after_from && w.eq_ignore_ascii_case(b"stdin") {
                    found = true;
                }
                after_from = w.eq_ignore_ascii_case(b"from");
                continue;
            }
            _ => {}
        }
        after_from = false;
    }
    Some(found)
}

enum Token<'a> {
    Word(&'a [u8]),
    Open,
    Close,
    Semicolon,
    Other,
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Lexer<'a> {
    fn peek(&self, k: usize) -> Option<u8> {
        self.s.get(self.i + k).copied()
    }

    fn next_token(&mut self) -> Option<Token<'a>> {
        loop {
            let c = self.peek(0)?;
            match c {
                c if c.is_ascii_whitespace() => self.i += 1,
                b'-' if self.peek(1) == Some(b'-') => {
                    while self.peek(0).is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                b'/' if self.peek(1) == Some(b'*') => self.block_comment(),
                _ => break,
            }
        }
        let c = self.peek(0)?;
        let start = self.i;
        let token = match c {
            b'(' => {
                self.i += 1;
                Token::Open
            }
            b')' => {
                self.i += 1;
                Token::Close
            }
            b';' => {
                self.i += 1;
                Token::Semicolon
            }
            b'\'' => {
                // E'...' strings are caught by the word branch first.
                self.quoted(b'\'', false);
                Token::Other
            }
            b'"' => {
                self.quoted(b'"', false);
                Token::Other
            }
            b'$' => {
                self.dollar();
                Token::Other
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                while self.peek(0).is_some_and(|c| {
                    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
                }) {
                    self.i += 1;
                }
                let word = &self.s[start..self.i];
                if self.peek(0) == Some(b'\'') {
                    // A prefixed string constant: E'..', B'..', X'..', U&'..'.
                    let escapes = word.eq_ignore_ascii_case(b"e");
                    self.quoted(b'\'', escapes);
                    return Some(Token::Other);
                }
                Token::Word(word)
            }
            _ => {
                self.i += 1;
                Token::Other
            }
        };
        Some(token)
    }

    fn block_comment(&mut self) {
        // Nested, as PostgreSQL's are.
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            if c == b'/' && self.peek(1) == Some(b'*') {
                depth += 1;
                self.i += 2;
            } else if c == b'*' && self.peek(1) == Some(b'/') {
                depth -= 1;
                self.i += 2;
                if depth == 0 {
                    return;
                }
            } else {
                self.i += 1;
            }
        }
    }

    /// Skips a quoted string or identifier starting at the quote (a doubled
    /// quote is part of it; with `escapes`, so is a backslash-escaped one).
    fn quoted(&mut self, quote: u8, escapes: bool) {
        self.i += 1;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            if escapes && c == b'\\' {
                self.i += 1;
            } else if c == quote {
                if self.peek(0) == Some(quote) {
                    self.i += 1;
                } else {
                    return;
                }
            }
        }
    }

    /// Skips `$tag$ ... $tag$`, or a lone `$` (a parameter such as `$1`).
    fn dollar(&mut self) {
        let rest = &self.s[self.i + 1..];
        let tag_len = rest
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80));
        match tag_len {
            Some(n) if rest[n] == b'$' && !rest.first().is_some_and(u8::is_ascii_digit) => {
                let delimiter = &self.s[self.i..self.i + n + 2];
                self.i += n + 2;
                match self.s[self.i..]
                    .windows(delimiter.len())
                    .position(|w| w == delimiter)
                {
                    Some(end) => self.i += end + delimiter.len(),
                    None => self.i = self.s.len(),
                }
            }
            _ => self.i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{any_copy_from_stdin, is_copy_from_stdin};

    #[test]
    fn copy_from_stdin_is_recognised() {
        for sql in [
            "COPY t FROM STDIN",
            "copy t (a, b) from stdin with (format csv)",
            "  -- load\n /* a /* nested */ comment */ COPY\n\"T\" FROM\tStdIn;",
            "COPY mail.message (id) FROM STDIN (FORMAT binary)",
            "COPY t FROM /* c */ STDIN",
        ] {
            assert!(is_copy_from_stdin(sql), "{sql}");
        }
    }

    #[test]
    fn other_statements_are_not() {
        for sql in [
            "SELECT 'COPY t FROM STDIN'",
            "COPY t TO STDOUT",
            "COPY t FROM '/tmp/stdin'",
            "COPY (SELECT * FROM stdin) TO STDOUT",
            "COPY stdin FROM '/data'",
            "COPY \"from\" TO STDOUT",
            "COPY t FROM E'st\\'din' ",
            "COPY t FROM $$stdin$$",
            "COPY t FROM $x$ FROM STDIN $x$",
            "-- COPY t FROM STDIN\nSELECT 1",
            "copyx t FROM STDIN",
            "",
            "/* unterminated",
            "COPY t FROM $",
        ] {
            assert!(!is_copy_from_stdin(sql), "{sql}");
        }
    }

    #[test]
    fn any_statement_of_a_simple_query_counts() {
        for sql in [
            "COPY t FROM STDIN",
            "SELECT 1; COPY t FROM STDIN",
            "BEGIN;\nTRUNCATE t;\ncopy t from stdin with (format csv);\nCOMMIT",
            "SELECT ';'; COPY t FROM STDIN",
            "SELECT $$ ; $$;COPY t FROM STDIN",
            ";;COPY t FROM STDIN",
        ] {
            assert!(any_copy_from_stdin(sql), "{sql}");
        }
        for sql in [
            "SELECT 1; SELECT 2",
            "SELECT 1; COPY t TO STDOUT",
            "SELECT 'x; COPY t FROM STDIN'",
            "SELECT 1 -- ; COPY t FROM STDIN",
            "SELECT 1 FROM stdin; COPY t FROM '/x'",
            "SELECT $$;COPY t FROM STDIN$$",
            "",
            ";",
        ] {
            assert!(!any_copy_from_stdin(sql), "{sql}");
        }
        // The first statement alone decides for the extended protocol.
        assert!(!is_copy_from_stdin("SELECT 1; COPY t FROM STDIN"));
    }
}
