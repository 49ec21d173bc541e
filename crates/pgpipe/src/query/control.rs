//! Transaction control statements on the wire: SAVEPOINT, RELEASE,
//! ROLLBACK TO, COMMIT and ROLLBACK, each through the extended protocol on
//! the unnamed statement (so a pending BEGIN can travel in front of it).

use bytes::BytesMut;
use pgpipe_proto::backend::{tag, Message};
use pgpipe_proto::frontend::{self, Encoder};

use super::encode_error;
use crate::driver::{Request, Responses, Shared};
use crate::{Client, Error};

/// Parse + Bind + Execute of each statement, then one Sync: if one fails,
/// the server skips the rest.
pub(crate) fn encode_control(
    enc: &Encoder,
    statements: &[&str],
    buf: &mut BytesMut,
) -> Result<(), Error> {
    for sql in statements {
        enc.parse("", sql, &[], buf).map_err(encode_error)?;
        enc.bind("", "", &[], 0, |_| Ok(()), &[], buf)
            .map_err(encode_error)?;
        enc.execute("", 0, buf).map_err(encode_error)?;
    }
    frontend::sync(buf);
    Ok(())
}

/// Queues control statements on `client`'s session; the caller reads the
/// answer with [`read_control`].
pub(crate) async fn send_control(client: &Client, statements: &[&str]) -> Result<Responses, Error> {
    let permit = client.shared().permit().await?;
    client
        .shared()
        .send_cached(
            client.session(),
            Request::Control,
            Some(permit),
            |enc, buf, _| encode_control(enc, statements, buf),
        )
        .map(|(r, ())| r)
}

/// How a control statement's response ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Every statement completed; the last command tag said COMMIT (or
    /// whatever the statement was).
    Done,
    /// A COMMIT was answered with the tag ROLLBACK: the transaction had
    /// failed and was rolled back.
    RolledBack,
}

/// Reads a control response to its ReadyForQuery: the server's error, a
/// `ROLLBACK` tag, or success.
pub(crate) async fn read_control(
    shared: &Shared,
    responses: &mut Responses,
) -> Result<Ended, Error> {
    let mut error = None;
    let mut ended = Ended::Done;
    loop {
        let (t, body) = responses.next_raw().await?;
        match t {
            tag::READY_FOR_QUERY => break,
            tag::PARSE_COMPLETE | tag::BIND_COMPLETE => {}
            tag::COMMAND_COMPLETE => {
                ended = if body.starts_with(b"ROLLBACK") {
                    Ended::RolledBack
                } else {
                    Ended::Done
                };
            }
            _ => match Message::parse(t, body) {
                Ok(Message::ErrorResponse(fields)) => {
                    error.get_or_insert(Error::from_server(&fields));
                }
                Ok(other) => {
                    error.get_or_insert_with(|| {
                        Error::unexpected(&other, "in a transaction control response")
                    });
                }
                Err(e) => {
                    error.get_or_insert_with(|| Error::protocol(e.to_string()));
                }
            },
        }
    }
    match error {
        Some(e) => Err(shared.request_failed(e)),
        None => Ok(ended),
    }
}
