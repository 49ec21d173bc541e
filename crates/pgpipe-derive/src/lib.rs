//! Derive macros for pgpipe. Use them through the `pgpipe` crate
//! (`pgpipe::FromRow`, `pgpipe::Composite`, `pgpipe::PgEnum`,
//! `pgpipe::Encode`, `pgpipe::Decode`, with its default `derive` feature):
//! the generated code refers to `::pgpipe::...` paths.
//!
//! All derives read `#[pg(...)]` attributes, and one type may derive
//! several (`#[derive(FromRow, Composite)]`): each ignores the attributes
//! that only another uses (the type's `name` for `FromRow`; a field's
//! `default`, `flatten`, `try_from` and `with` for `Composite`), and
//! rejects unknown ones at compile time.
//!
//! `rename_all` rules (on the type; `rename` on a field or variant wins):
//! `"snake_case"`, `"camelCase"`, `"PascalCase"`, `"SCREAMING_SNAKE_CASE"`,
//! `"kebab-case"`, `"SCREAMING-KEBAB-CASE"` split the Rust name into words
//! (at `_` and case changes) and join them again; `"lowercase"` and
//! `"UPPERCASE"` only change the case of the whole name. A raw identifier
//! (`r#type`) is named without its `r#`.

#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

mod attr;
mod case;
mod composite;
mod from_row;
mod newtype;
mod pg_enum;
mod query;
mod to_row;
mod util;

fn finish(result: syn::Result<proc_macro2::TokenStream>) -> TokenStream {
    result.unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Builds a struct from a result row, by column name (`FromRow`).
///
/// Structs with named fields read each field from the column of the same
/// name; tuple structs read columns by position (the column count must
/// match). Before any row is decoded, `FromRow::check` finds every column once
/// (its position is kept, so rows are read without name lookups) and
/// checks that its PostgreSQL type is accepted by the field's Rust type:
/// a missing column or a mismatched type is one error naming the column,
/// the PostgreSQL type and the field.
///
/// Field types must own their data (`String`, not `&str`): a `FromRow`
/// value outlives the row it came from.
///
/// Attributes:
///
/// - on the struct, `#[pg(rename_all = "camelCase")]`: column names from
///   field names by a rule (see the crate docs for the list);
/// - `#[pg(rename = "column")]`: the column's name;
/// - `#[pg(default)]`: when the result has no such column, the field is
///   `Default::default()` (a NULL in an existing column still needs an
///   `Option` field);
/// - `#[pg(flatten)]`: the field is itself a `FromRow` struct reading the
///   same row (its own check runs inside this one);
/// - `#[pg(try_from = "i64")]`: read the column as `i64`, then convert
///   with `TryFrom`; a failed conversion is an error naming the field;
/// - `#[pg(with = "path::to::function")]`: read the column with a function
///   of signature `fn(&pgpipe::Row, usize) -> Result<T, pgpipe::Error>`,
///   given the row and the column's position (found by name). Its type is
///   not checked up front: the function decides what it accepts.
///
/// ```
/// use pgpipe::FromRow;
///
/// #[derive(FromRow)]
/// struct Audit {
///     created_by: String,
/// }
///
/// #[derive(FromRow)]
/// #[pg(rename_all = "camelCase")]
/// struct User {
///     user_id: i64, // column "userId"
///     #[pg(rename = "email_address")]
///     email: String,
///     #[pg(default)]
///     nickname: Option<String>, // Some/None from the column, None without it
///     #[pg(try_from = "i32")]
///     age: u8, // an int4 column; 300 is an error, not 44
///     #[pg(with = "upper")]
///     country: String,
///     #[pg(flatten)]
///     audit: Audit,
/// }
///
/// fn upper(row: &pgpipe::Row, index: usize) -> Result<String, pgpipe::Error> {
///     Ok(row.try_get::<&str, _>(index)?.to_uppercase())
/// }
///
/// #[derive(FromRow)]
/// struct Pair(i32, String); // by position
///
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let users: Vec<User> = client
///     .query_as(r#"SELECT id AS "userId", email_address, 20 AS age, country, created_by FROM users"#, ())
///     .await?;
/// # Ok(()) }
/// ```
#[proc_macro_derive(FromRow, attributes(pg))]
pub fn derive_from_row(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    finish(from_row::expand(&input))
}

/// A struct as one row of a typed binary COPY (`ToRow`): its fields are
/// the row's values, in order, and (for named fields) their names are the
/// COPY's column list, so `client.copy_in_rows::<T>(table, &[])` copies
/// into exactly the struct's columns.
///
/// Generated: `pgpipe::Params` (each field must be `Encode`; `Option<T>`
/// writes NULL) and the marker `pgpipe::ToRow`. Every field's type is
/// checked against the type the server describes for its column before
/// the row is buffered, so a field that does not fit (an `i64` for an
/// `int4` column) fails before any data is sent. Fields may borrow
/// (`&'a str`).
///
/// Attributes, as for `FromRow`: `#[pg(rename_all = "...")]` on the
/// struct and `#[pg(rename = "column")]` on a field. A tuple struct writes
/// its fields by position (pass the column list explicitly).
///
/// ```
/// use pgpipe::ToRow;
///
/// #[derive(ToRow)]
/// struct NewMessage<'a> {
///     id: i64,
///     #[pg(rename = "subject")]
///     title: &'a str,
///     body: Option<Vec<u8>>, // None is NULL
/// }
///
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// // COPY mail.message (id, subject, body) FROM STDIN (FORMAT binary)
/// let mut copy = client.copy_in_rows::<NewMessage>("mail.message", &[]).await?;
/// copy.write(&NewMessage { id: 1, title: "hello", body: None }).await?;
/// assert_eq!(copy.finish().await?, 1);
/// # Ok(()) }
/// ```
#[proc_macro_derive(ToRow, attributes(pg))]
pub fn derive_to_row(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    finish(to_row::expand(&input))
}

/// A struct as a PostgreSQL composite type (`Composite`): `Encode`,
/// `Decode` and `StaticType`.
///
/// `#[pg(name = "schema.type")]` names the type (required; an unqualified
/// name follows the search path). The client looks the type up in the
/// server catalog once per connection, and fields are matched to the
/// type's fields **by name** (`rename` and `rename_all` apply), in
/// whatever order either declares them. `Decode::accepts` (run before any
/// row is read) requires a described composite type (any composite with
/// these fields: the name is what parameters declare) with the same number
/// of fields, every field name present and every field type accepted by
/// the Rust field's type. Fields may be `Option<T>` for NULL, other
/// composites, enums, arrays; a lifetime parameter lets fields borrow from
/// the row (`&'a str`).
///
/// `Vec<T>` of a composite is the composite's array type
/// (`mail.attach[]`).
///
/// ```
/// use pgpipe::{Composite, FromRow};
///
/// #[derive(Composite, Debug, PartialEq)]
/// #[pg(name = "mail.attach")]
/// struct Attach {
///     filename: String,
///     #[pg(rename = "type")]
///     mime_type: String,
///     size: i64,
/// }
///
/// #[derive(FromRow)]
/// struct Message {
///     id: i64,
///     subject: String,
///     attachments: Vec<Attach>,
/// }
///
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let files = vec![Attach { filename: "a.txt".into(), mime_type: "text/plain".into(), size: 3 }];
/// client
///     .execute("INSERT INTO mail.message VALUES ($1, $2, $3)", (1i64, "hi", &files))
///     .await?;
/// let messages: Vec<Message> = client.query_as("SELECT * FROM mail.message", ()).await?;
/// # Ok(()) }
/// ```
#[proc_macro_derive(Composite, attributes(pg))]
pub fn derive_composite(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    finish(composite::expand(&input))
}

/// A Rust enum as a PostgreSQL enum type (`PgEnum`): `Encode`, `Decode`
/// and `StaticType`.
///
/// `#[pg(name = "schema.type")]` names the type (required). Each unit
/// variant is the label of its name, changed by `#[pg(rename_all = "...")]`
/// on the enum or `#[pg(rename = "label")]` on the variant. `accepts`
/// (checked before any row is read and before a parameter is sent)
/// requires the enum type of that name to have **every** label of the Rust
/// enum, so a renamed or missing label is an error up front, not on the
/// first row that happens to hold it. The server may have more labels than
/// the Rust enum; reading one of those is an error naming the label.
///
/// ```
/// use pgpipe::PgEnum;
///
/// #[derive(PgEnum, Debug, Clone, Copy, PartialEq)]
/// #[pg(name = "mood", rename_all = "snake_case")]
/// enum Mood {
///     Sad,
///     Ok,
///     VeryHappy, // 'very_happy'
///     #[pg(rename = "meh!")]
///     Meh,
/// }
///
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let row = client.query_one("SELECT $1::mood", (Mood::VeryHappy,)).await?;
/// assert_eq!(row.get::<Mood, _>(0), Mood::VeryHappy);
/// # Ok(()) }
/// ```
#[proc_macro_derive(PgEnum, attributes(pg))]
pub fn derive_pg_enum(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    finish(pg_enum::expand(&input))
}

/// `Encode` and `StaticType` for a newtype, sent exactly as its one field
/// (a transparent newtype).
///
/// ```
/// use pgpipe::{Decode, Encode};
///
/// #[derive(Encode, Decode, Debug, Clone, Copy, PartialEq)]
/// struct UserId(i64);
///
/// // Everything is the inner type's: the declared type, accepted types, bytes.
/// use pgpipe::types::{StaticType, TypeRef};
/// assert_eq!(<UserId as StaticType>::TYPE, TypeRef::Oid(20));
/// ```
#[proc_macro_derive(Encode, attributes(pg))]
pub fn derive_encode(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    finish(newtype::expand_encode(&input))
}

/// `Decode` for a newtype, read exactly as its one field (a transparent
/// newtype). A lifetime parameter is the row's: `struct Name<'a>(&'a str)`
/// borrows without copying.
///
/// ```
/// use pgpipe::types::{Decode, Type};
///
/// #[derive(pgpipe::Decode, Debug, PartialEq)]
/// struct Name<'a>(&'a str);
///
/// assert_eq!(Name::decode(&Type::TEXT, b"ann").unwrap(), Name("ann"));
/// assert!(!<Name as Decode>::accepts(&Type::INT4));
/// ```
#[proc_macro_derive(Decode, attributes(pg))]
pub fn derive_decode(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    finish(newtype::expand_decode(&input))
}

/// Binds a struct of parameters to a named query of a `.sql` file
/// (`Query`), checked at compile time. See `pgpipe::named`.
///
/// `#[query(file = "sql/mail.sql", name = "get_messages", row = Message)]`:
///
/// - `file`: the query file, relative to the crate's `Cargo.toml` (or to a
///   directory above it, such as the workspace root). It is read at compile
///   time and tracked, so editing it rebuilds the crate.
/// - `name`: the `-- name:` block to bind.
/// - `row`: the `FromRow` type of each row (not for `:exec`/`:execrows`;
///   required for `:one` and `:stream`).
/// - `assume_not_null = "col, ..."`: columns the startup check should not
///   warn about although the catalog cannot prove them non-NULL.
///
/// Every `:param` of the query must be a field and every field a `:param`;
/// the SQL is rewritten to `$1, $2, ...`. Any mistake is a compile error
/// naming the file and line. Generated: `impl pgpipe::named::Query`, and
/// `fetch_all`, `fetch_one`, `fetch_opt`, `stream` (with a row type) and
/// `execute` methods.
///
/// ```
/// #[derive(pgpipe::FromRow)]
/// struct Message { mid: i64, subject: String }
///
/// // tests/ui/queries.sql has `-- name: get_messages :many` using :uid and :mids.
/// #[derive(pgpipe::Query)]
/// #[query(file = "tests/ui/queries.sql", name = "get_messages", row = Message)]
/// struct GetMessages { uid: i64, mids: Vec<i64> }
///
/// use pgpipe::named::Query as _;
/// assert_eq!(GetMessages::INFO.params.len(), 2);
/// assert!(GetMessages::INFO.sql.contains("uid = $1"));
/// ```
#[proc_macro_derive(Query, attributes(query))]
pub fn derive_query(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    finish(query::expand(&input))
}
