//! Building the SQL of typed COPY and the upsert helper: identifiers are
//! always quoted, so a column name can never inject SQL.

use crate::error::ErrorKind;
use crate::Error;

/// `name` as a quoted identifier (`"a""b"` for `a"b`); `what` names it in
/// the error for an empty name or one with a NUL byte.
pub(crate) fn quote_ident(what: &str, name: &str) -> Result<String, Error> {
    if name.is_empty() || name.contains('\0') {
        return Err(Error::new(
            ErrorKind::InvalidUse,
            format!("the {what} name {name:?} is empty or contains a NUL byte"),
        ));
    }
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// ` ("a", "b")`, or nothing for no columns (all of them).
pub(crate) fn column_list(columns: &[&str]) -> Result<String, Error> {
    if columns.is_empty() {
        return Ok(String::new());
    }
    Ok(format!(" ({})", quoted_list(columns)?))
}

/// `"a", "b"`.
pub(crate) fn quoted_list(columns: &[&str]) -> Result<String, Error> {
    let quoted: Result<Vec<String>, Error> =
        columns.iter().map(|c| quote_ident("column", c)).collect();
    Ok(quoted?.join(", "))
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
        assert!(quote_ident("column", "").is_err());
        assert!(quote_ident("channel", "a\0b").is_err());
        assert_eq!(column_list(&[]).unwrap(), "");
        assert_eq!(column_list(&["a", "B"]).unwrap(), " (\"a\", \"B\")");
    }
}
