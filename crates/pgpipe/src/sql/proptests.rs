//! Properties of the lexer, the COPY check and the quoter on arbitrary text.

use proptest::prelude::*;

use super::lexer::{Lexer, Token};
use super::{any_copy_from_stdin, first_keyword, is_copy_from_stdin, quote_ident};

/// SQL-ish text: the characters the lexer treats specially, often.
fn sqlish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("COPY ".to_owned()),
            Just("FROM ".to_owned()),
            Just("STDIN".to_owned()),
            Just("E'".to_owned()),
            Just("$x$".to_owned()),
            Just("$$".to_owned()),
            Just("--".to_owned()),
            Just("/*".to_owned()),
            Just("*/".to_owned()),
            Just("\\".to_owned()),
            Just("\n".to_owned()),
            "[ ();'\"$a-z0-9ü]{0,4}",
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

/// `s` as a standard string constant.
fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_lexer_ends_on_any_text(s in prop_oneof![sqlish(), any::<String>()]) {
        let mut lexer = Lexer::new(&s);
        let mut n = 0;
        while lexer.next_token().is_some() {
            n += 1;
            // Every token consumes at least one byte.
            prop_assert!(n <= s.len());
        }
        let _ = first_keyword(&s);
    }

    #[test]
    fn the_first_statement_copying_means_one_does(s in sqlish()) {
        if is_copy_from_stdin(&s) {
            prop_assert!(any_copy_from_stdin(&s));
        }
    }

    #[test]
    fn text_inside_a_string_or_comment_never_copies(s in sqlish()) {
        let literal = format!("SELECT {}", quote_literal(&s));
        prop_assert!(!any_copy_from_stdin(&literal), "{}", literal);
        let comment = format!("SELECT 1 -- {}", s.replace('\n', " "));
        prop_assert!(!any_copy_from_stdin(&comment), "{}", comment);
        let tag = "$pgpipe$";
        if !s.contains(tag) {
            let dollar = format!("SELECT {tag}{s}{tag}");
            prop_assert!(!any_copy_from_stdin(&dollar), "{}", dollar);
        }
    }

    #[test]
    fn comments_in_front_do_not_change_the_first_keyword(
        word in "[a-zA-Z_][a-zA-Z0-9_]{0,10}",
        comment in "[^\n*/]{0,20}",
    ) {
        let sql = format!("-- {comment}\n  /* {comment} /* */ */ ((\t{word} 1");
        prop_assert_eq!(first_keyword(&sql), word.as_str());
    }

    #[test]
    fn a_quoted_identifier_is_one_token_and_reads_back(name in any::<String>()) {
        match quote_ident("column", &name) {
            Err(e) => prop_assert!(name.is_empty() || name.contains('\0'), "{}", e),
            Ok(quoted) => {
                let mut lexer = Lexer::new(&quoted);
                prop_assert_eq!(lexer.next_token(), Some(Token::Other));
                prop_assert_eq!(lexer.next_token(), None);
                let inner = &quoted[1..quoted.len() - 1];
                prop_assert_eq!(inner.replace("\"\"", "\""), name);
            }
        }
    }
}
