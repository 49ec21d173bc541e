//! The one identifier quoter: every name the client writes into SQL (COPY
//! and upsert columns, channels, savepoints, the query builder's `Ident`)
//! is written as a quoted identifier, so no name can end it and inject SQL.

use std::fmt;

/// A name PostgreSQL cannot hold as an identifier: empty, or with a NUL
/// byte. `error/` turns it into an `InvalidUse` error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidIdent {
    /// What the name was for ("column", "channel", "savepoint", ...).
    pub(crate) what: &'static str,
    pub(crate) name: String,
}

impl fmt::Display for InvalidIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} name {:?} cannot be used: a PostgreSQL identifier is non-empty and holds no NUL byte",
            self.what, self.name
        )
    }
}

/// `name` as a quoted identifier (`"a""b"` for `a"b`); `what` names it in
/// the error for an empty name or one with a NUL byte.
pub(crate) fn quote_ident(what: &'static str, name: &str) -> Result<String, InvalidIdent> {
    let mut out = String::with_capacity(name.len() + 2);
    push_quoted_ident(&mut out, what, name)?;
    Ok(out)
}

/// Appends `name` quoted to `out` (see [`quote_ident`]); on error `out` is
/// unchanged.
pub(crate) fn push_quoted_ident(
    out: &mut String,
    what: &'static str,
    name: &str,
) -> Result<(), InvalidIdent> {
    if name.is_empty() || name.contains('\0') {
        return Err(InvalidIdent {
            what,
            name: name.to_owned(),
        });
    }
    out.reserve(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("column", "id").unwrap(), "\"id\"");
        assert_eq!(
            quote_ident("column", "x\"); DROP TABLE t; --").unwrap(),
            "\"x\"\"); DROP TABLE t; --\""
        );
        assert_eq!(quote_ident("savepoint", "Ünï").unwrap(), "\"Ünï\"");
        let e = quote_ident("column", "").unwrap_err();
        assert_eq!(e.what, "column");
        let e = quote_ident("channel", "a\0b").unwrap_err();
        assert!(e.to_string().contains("channel"), "{e}");
        assert!(e.to_string().contains("NUL"), "{e}");
        let mut out = String::from("x");
        assert!(push_quoted_ident(&mut out, "column", "").is_err());
        assert_eq!(out, "x");
    }
}
