//! Recognising `COPY ... FROM STDIN` in SQL text (why it matters: see
//! `query/refuse.rs`, which refuses such statements in query methods).

use super::lexer::{Lexer, Token};

/// Whether `sql` starts with the word COPY and has the words `FROM STDIN`
/// outside parentheses, quotes and comments (so `COPY (SELECT ... FROM
/// stdin) TO STDOUT` and `COPY t FROM 'stdin'` are not). Only its first
/// statement counts: the extended protocol takes one.
pub(crate) fn is_copy_from_stdin(sql: &str) -> bool {
    next_statement_copies_from_stdin(&mut Lexer::new(sql)) == Some(true)
}

/// Whether any statement of `sql` (a simple query may hold several,
/// separated by semicolons) is a `COPY ... FROM STDIN`.
pub(crate) fn any_copy_from_stdin(sql: &str) -> bool {
    let mut lexer = Lexer::new(sql);
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
        Token::Word(w) => w.eq_ignore_ascii_case("copy"),
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
                if is_copy && after_from && w.eq_ignore_ascii_case("stdin") {
                    found = true;
                }
                after_from = w.eq_ignore_ascii_case("from");
                continue;
            }
            _ => {}
        }
        after_from = false;
    }
    Some(found)
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
