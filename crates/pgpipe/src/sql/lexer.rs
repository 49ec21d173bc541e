//! The one SQL lexer: just enough of PostgreSQL's to find words outside
//! comments, quoted identifiers and string constants. It never fails: SQL
//! the server would reject still lexes to something, and unterminated
//! quotes or comments run to the end of the text.

/// One token; everything the callers need not tell apart is `Other`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Token<'a> {
    /// A keyword or unquoted identifier, as written (not case-folded).
    Word(&'a str),
    /// `(`
    Open,
    /// `)`
    Close,
    /// `;`
    Semicolon,
    /// A quoted identifier, a string constant, a dollar-quoted string, a
    /// parameter, an operator, a number: anything else.
    Other,
}

pub(super) struct Lexer<'a> {
    text: &'a str,
    s: &'a [u8],
    i: usize,
}

/// The first keyword of `sql` after white space, comments and opening
/// parentheses (`(SELECT 1)` starts with SELECT), as written; empty when
/// the statement does not start with a word.
pub(crate) fn first_keyword(sql: &str) -> &str {
    let mut lexer = Lexer::new(sql);
    loop {
        match lexer.next_token() {
            Some(Token::Open) => {}
            Some(Token::Word(w)) => return w,
            _ => return "",
        }
    }
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Lexer<'a> {
        Lexer {
            text,
            s: text.as_bytes(),
            i: 0,
        }
    }

    fn peek(&self, k: usize) -> Option<u8> {
        self.s.get(self.i + k).copied()
    }

    pub(super) fn next_token(&mut self) -> Option<Token<'a>> {
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
                let end = self.i;
                if self.peek(0) == Some(b'\'') {
                    // A prefixed string constant: E'..', B'..', X'..', U&'..'.
                    let escapes = self.s[start..end].eq_ignore_ascii_case(b"e");
                    self.quoted(b'\'', escapes);
                    return Some(Token::Other);
                }
                // A word starts and ends next to an ASCII byte or an end of
                // the text, so it is whole characters; `get` only guards that.
                Token::Word(self.text.get(start..end).unwrap_or(""))
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
    use super::{first_keyword, Lexer, Token};

    fn tokens(sql: &str) -> Vec<Token<'_>> {
        let mut lexer = Lexer::new(sql);
        std::iter::from_fn(|| lexer.next_token()).collect()
    }

    #[test]
    fn words_are_found_outside_quotes_and_comments() {
        assert_eq!(
            tokens("SELECT 'a b' /* c /* d */ e */ \"f g\" $$h$$ E'i\\'j' -- k\n(l);"),
            vec![
                Token::Word("SELECT"),
                Token::Other,
                Token::Other,
                Token::Other,
                Token::Other,
                Token::Open,
                Token::Word("l"),
                Token::Close,
                Token::Semicolon,
            ]
        );
        assert_eq!(tokens("Ünï_1$x"), vec![Token::Word("Ünï_1$x")]);
        assert_eq!(tokens("$1"), vec![Token::Other, Token::Other]);
    }

    #[test]
    fn the_first_keyword_skips_space_comments_and_parentheses() {
        assert_eq!(
            first_keyword("  begin isolation level serializable"),
            "begin"
        );
        assert_eq!(first_keyword("-- note\nCOMMIT"), "COMMIT");
        assert_eq!(first_keyword("/* x */ rollback"), "rollback");
        assert_eq!(first_keyword("((SELECT 1))"), "SELECT");
        // A nested comment is one comment: the word after it counts.
        assert_eq!(first_keyword("/* a /* b */ c */ BEGIN"), "BEGIN");
        assert_eq!(
            first_keyword("settings_table_select()"),
            "settings_table_select"
        );
        assert_eq!(first_keyword(""), "");
        assert_eq!(first_keyword("   "), "");
        assert_eq!(first_keyword("'BEGIN'"), "");
        assert_eq!(first_keyword("-- only a comment"), "");
    }
}
