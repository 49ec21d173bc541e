//! The [`ToRow`] marker: a row type for typed binary COPY.

use pgpipe_types::Params;

/// A struct whose fields are one row of a typed binary COPY, usually from
/// `#[derive(ToRow)]` (see the derive for its attributes).
///
/// A `ToRow` type is a [`Params`] list whose
/// [`column_names`](Params::column_names) are its fields' columns, so
/// [`Client::copy_in_rows`](crate::Client::copy_in_rows) with an empty
/// column list copies into exactly those columns, and checks each field's
/// Rust type against the type the server describes for its column before
/// any data is sent.
///
/// ```no_run
/// # #[cfg(feature = "derive")]
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// #[derive(pgpipe::ToRow)]
/// #[pg(rename_all = "camelCase")]
/// struct Contact {
///     user_id: i64, // column "userId"
///     email: String,
///     nickname: Option<String>,
/// }
///
/// let mut copy = client.copy_in_rows::<Contact>("contacts", &[]).await?;
/// copy.write(&Contact { user_id: 1, email: "a@example.com".into(), nickname: None })
///     .await?;
/// copy.finish().await?;
/// # Ok(()) }
/// ```
pub trait ToRow: Params {}
