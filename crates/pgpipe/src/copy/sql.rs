//! Building the SQL of typed COPY and the upsert helper: identifiers are
//! always quoted, so a column name can never inject SQL.

use crate::Error;

/// ` ("a", "b")`, or nothing for no columns (all of them).
pub(crate) fn column_list(columns: &[&str]) -> Result<String, Error> {
    if columns.is_empty() {
        return Ok(String::new());
    }
    Ok(format!(" ({})", quoted_list(columns)?))
}

/// `"a", "b"`.
pub(crate) fn quoted_list(columns: &[&str]) -> Result<String, Error> {
    let mut out = String::new();
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        crate::sql::push_quoted_ident(&mut out, "column", column)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_lists_are_quoted() {
        assert_eq!(column_list(&[]).unwrap(), "");
        assert_eq!(column_list(&["a", "B"]).unwrap(), " (\"a\", \"B\")");
        assert_eq!(quoted_list(&["x\"y"]).unwrap(), "\"x\"\"y\"");
        let e = column_list(&["a", ""]).unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::InvalidUse);
        assert!(e.to_string().contains("column"), "{e}");
    }
}
