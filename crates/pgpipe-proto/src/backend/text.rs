//! Messages made of strings: CommandComplete, ParameterStatus,
//! NotificationResponse and NegotiateProtocolVersion.

use bytes::{Buf, Bytes};

use super::reader::{cstrs, malformed, Reader};
use crate::{DecodeError, DecodeErrorKind};

/// CommandComplete body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandComplete {
    /// The tag without its NUL, UTF-8 validated.
    body: Bytes,
}

impl CommandComplete {
    pub(super) fn parse(mut body: Bytes) -> Result<Self, DecodeErrorKind> {
        let mut r = Reader::new(&body);
        let tag_len = r.str("command tag")?.len();
        r.finish("command tag")?;
        body.truncate(tag_len);
        Ok(CommandComplete { body })
    }

    /// The command tag, e.g. `"INSERT 0 3"`.
    pub fn tag(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap_or("")
    }

    /// Rows affected or returned: the last word of the tag when it is a number
    /// (INSERT, UPDATE, DELETE, SELECT, MOVE, FETCH, COPY, MERGE); `None` otherwise.
    pub fn rows(&self) -> Option<u64> {
        rows_in_tag(&self.body)
    }

    /// [`rows`](Self::rows) straight from a CommandComplete body, without
    /// building the message: every query ends with one, so this is on the
    /// hot path. The framing is checked as [`Message::parse`](super::Message::parse)
    /// does (one NUL, at the end); the tag's UTF-8 is not, as nothing here
    /// shows it.
    pub fn rows_in_body(body: &[u8]) -> Result<Option<u64>, DecodeError> {
        match body.split_last() {
            Some((0, tag)) if !tag.contains(&0) => Ok(rows_in_tag(tag)),
            _ => Err(DecodeError::new(
                super::tag::COMMAND_COMPLETE,
                malformed("the command tag is not one NUL-terminated string".into()),
            )),
        }
    }
}

impl CommandComplete {
    /// The command word of a CommandComplete body (`b"ROLLBACK"` for a
    /// COMMIT the server answered with ROLLBACK, `b"INSERT"` for `INSERT 0 3`),
    /// read in place; the framing is not checked (see [`rows_in_body`](Self::rows_in_body)).
    pub fn command_in_body(body: &[u8]) -> &[u8] {
        let end = body
            .iter()
            .position(|&b| b == b' ' || b == 0)
            .unwrap_or(body.len());
        &body[..end]
    }
}

/// The row count at the end of a command tag, for the commands that have one.
fn rows_in_tag(tag: &[u8]) -> Option<u64> {
    let command = tag.split(|&b| b == b' ').next()?;
    if !matches!(
        command,
        b"INSERT" | b"UPDATE" | b"DELETE" | b"SELECT" | b"MOVE" | b"FETCH" | b"COPY" | b"MERGE"
    ) {
        return None;
    }
    let last = tag.rsplit(|&b| b == b' ').next()?;
    if last.is_empty() {
        return None;
    }
    // Digits only (`u64::from_str` would also take a leading '+'), and
    // `None` on overflow.
    last.iter().try_fold(0u64, |n, &b| {
        if b.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// ParameterStatus body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterStatus {
    /// Name and value, each NUL-terminated UTF-8 (checked by `parse`).
    body: Bytes,
    /// Where the name's NUL is, so that the accessors neither search for
    /// it again nor check the name's UTF-8 a second time to reach the
    /// value: a server sends about fifteen of these on every connect.
    name_end: usize,
}

impl ParameterStatus {
    pub(super) fn parse(body: Bytes) -> Result<Self, DecodeErrorKind> {
        let mut r = Reader::new(&body);
        let name_end = r.str("parameter name")?.len();
        r.str("parameter value")?;
        r.finish("parameter value")?;
        Ok(ParameterStatus { body, name_end })
    }

    /// Parameter name.
    pub fn name(&self) -> &str {
        utf8(self.body.get(..self.name_end))
    }

    /// Parameter value.
    pub fn value(&self) -> &str {
        // Between the name's NUL and the body's final NUL.
        let end = self.body.len().saturating_sub(1);
        utf8(self.body.get(self.name_end + 1..end))
    }
}

/// A part of a body that `parse` already checked; `""` is unreachable.
fn utf8(part: Option<&[u8]>) -> &str {
    part.and_then(|p| std::str::from_utf8(p).ok()).unwrap_or("")
}

/// NotificationResponse body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// PID of the notifying backend.
    pub process_id: i32,
    /// Channel and payload, each NUL-terminated UTF-8.
    body: Bytes,
}

impl Notification {
    pub(super) fn parse(mut body: Bytes) -> Result<Self, DecodeErrorKind> {
        let mut r = Reader::new(&body);
        let process_id = r.i32("process id")?;
        r.str("channel name")?;
        r.str("payload")?;
        r.finish("payload")?;
        body.advance(4);
        Ok(Notification { process_id, body })
    }

    /// Channel name.
    pub fn channel(&self) -> &str {
        cstrs(&self.body).next().unwrap_or("")
    }

    /// Payload.
    pub fn payload(&self) -> &str {
        cstrs(&self.body).nth(1).unwrap_or("")
    }
}

/// NegotiateProtocolVersion body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NegotiateProtocolVersion {
    /// The newest protocol version the server supports for the major
    /// version asked for, as servers send it: the whole version number
    /// (`major << 16 | minor`, so 196608 for 3.0), although the protocol
    /// documentation speaks of "the minor version". See
    /// [`NegotiateProtocolVersion::newest_version`].
    pub newest_minor: i32,
    /// The option names, each NUL-terminated UTF-8.
    body: Bytes,
}

impl NegotiateProtocolVersion {
    pub(super) fn parse(mut body: Bytes) -> Result<Self, DecodeErrorKind> {
        let mut r = Reader::new(&body);
        let newest_minor = r.i32("newest minor version")?;
        let count = r.i32("option count")?;
        if count < 0 {
            return Err(malformed(format!("negative option count {count}")));
        }
        for i in 0..count {
            // A hostile count cannot make this loop long: each option
            // consumes at least its NUL, and running out of body ends it.
            r.str(format_args!("option name {i}"))?;
        }
        if count == 0 {
            r.finish("option count")?;
        } else {
            r.finish(format_args!("last of {count} options"))?;
        }
        body.advance(8);
        Ok(NegotiateProtocolVersion { newest_minor, body })
    }

    /// The server's newest version as (major, minor). Real servers send
    /// `major << 16 | minor`; a bare minor number (as the documentation
    /// reads) is taken as major 3.
    pub fn newest_version(&self) -> (u16, u16) {
        let v = self.newest_minor as u32;
        if v >> 16 == 0 {
            (3, v as u16)
        } else {
            ((v >> 16) as u16, (v & 0xffff) as u16)
        }
    }

    /// Protocol options the server did not recognise.
    pub fn unrecognized_options(&self) -> impl Iterator<Item = &str> + '_ {
        cstrs(&self.body)
    }
}
