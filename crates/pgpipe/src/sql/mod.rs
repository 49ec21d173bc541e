//! SQL text as the client needs to understand it: one lexer (comments,
//! quoted identifiers, string constants including `E''` and dollar quotes),
//! the first keyword of a statement, the `COPY ... FROM STDIN` check and the
//! one identifier quoter. Nothing here knows connections or errors of the
//! client: callers turn an [`InvalidIdent`] into their `Error`.

mod copy;
mod ident;
mod lexer;
#[cfg(test)]
mod proptests;

pub(crate) use copy::{any_copy_from_stdin, is_copy_from_stdin};
pub(crate) use ident::{push_quoted_ident, quote_ident, InvalidIdent};
pub(crate) use lexer::first_keyword;
