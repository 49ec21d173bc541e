//! Transaction control statements on the wire: SAVEPOINT, RELEASE,
//! ROLLBACK TO, COMMIT and ROLLBACK, each through the extended protocol on
//! the unnamed statement (so a pending BEGIN can travel in front of it).

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use pgpipe_proto::backend::{tag, CommandComplete, Message};
use pgpipe_proto::frontend::{self, Encoder};

use super::encode_error;
use super::ConnRef;
use super::{Event, Reply};
use crate::driver::{Request, Responses};
use crate::error::ErrorKind;
use crate::session::Session;
use crate::Error;

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
pub(crate) async fn send_control(conn: &ConnRef, statements: &[&str]) -> Result<Responses, Error> {
    let permit = conn.shared().permit().await?;
    conn.shared()
        .send_cached(
            conn.session(),
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
/// protocol error, or how it ended (the first statement's tag decides).
///
/// Bounded by `limit` (the handle's query timeout): a COMMIT held up by a
/// commit-time trigger or a stalled server would otherwise wait forever.
/// On expiry the connection is closed (see [`read_control_value`]).
pub(crate) async fn read_control(
    shared: &Session,
    responses: &mut Responses,
    limit: Option<Duration>,
) -> Result<Ended, Error> {
    read_control_value(shared, responses, limit)
        .await
        .map(|(ended, _)| ended)
}

/// [`read_control`], also returning the first column of the first row a
/// statement returned (in text: control statements bind no formats), for a
/// COMMIT followed by a `SELECT` under the same Sync.
///
/// When `limit` expires first, the statements' effect is unknown and the
/// connection's state with it: the connection is closed (never handed out
/// again by a pool) and the error is [`ErrorKind::Timeout`]; the caller
/// says what that means for its statement (see [`expired`]).
pub(crate) async fn read_control_value(
    shared: &Session,
    responses: &mut Responses,
    limit: Option<Duration>,
) -> Result<(Ended, Option<Bytes>), Error> {
    let Some(limit) = limit else {
        return read_unbounded(shared, responses).await;
    };
    match tokio::time::timeout(limit, read_unbounded(shared, responses)).await {
        Ok(read) => read,
        Err(_) => {
            shared.abort(Error::new(
                ErrorKind::Closed,
                format!(
                    "a transaction control statement got no answer within the query timeout \
                     ({limit:?}); the connection was closed"
                ),
            ));
            Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "no answer within the query timeout ({limit:?}); the connection was closed"
                ),
            ))
        }
    }
}

/// Whether `e` is [`read_control_value`]'s expiry (its only timeout).
pub(crate) fn expired(e: &Error) -> bool {
    e.kind() == ErrorKind::Timeout
}

async fn read_unbounded(
    shared: &Session,
    responses: &mut Responses,
) -> Result<(Ended, Option<Bytes>), Error> {
    let mut reply = Reply::extended();
    let mut ended = None;
    let mut value = None;
    loop {
        let (t, body) = responses.next_raw().await.map_err(|e| reply.cut_short(e))?;
        match reply.event(t, body) {
            Event::Ready => break,
            Event::Step | Event::Failed => {}
            Event::Complete { tag, .. } => {
                ended.get_or_insert(if CommandComplete::command_in_body(&tag) == b"ROLLBACK" {
                    Ended::RolledBack
                } else {
                    Ended::Done
                });
            }
            Event::Row(body) if value.is_none() => match Message::parse(tag::DATA_ROW, body) {
                Ok(Message::DataRow(row)) => {
                    let first = row.ranges().next().flatten();
                    value = Some(first.map(|r| row.buffer().slice(r)));
                }
                Ok(_) => reply.fail(Error::protocol("a DataRow did not parse as one")),
                Err(e) => reply.fail(Error::protocol(e.to_string())),
            },
            other => reply.unexpected_event(other, "in a transaction control response"),
        }
    }
    match reply.take_error() {
        Some(e) => Err(shared.request_failed(e)),
        None => Ok((ended.unwrap_or(Ended::Done), value.flatten())),
    }
}
