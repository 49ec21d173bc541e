//! Decoder for backend (server to client) messages.
//!
//! [`Decoder::decode`] splits one complete message off a read buffer without
//! copying it and [`Message::parse`] validates its whole body up front, so the
//! accessors of the body types are plain reads that cannot fail or panic. A
//! server that sends garbage gets a [`DecodeError`] saying what and where,
//! never a panic, and never an allocation sized by the garbage: lengths are
//! checked against [`Decoder::max_message_len`] from the header alone.
//!
//! Indices in error messages (columns, fields) are zero-based.

use bytes::{Buf, Bytes, BytesMut};

use crate::{DecodeError, DecodeErrorKind};

mod authentication;
mod copy;
mod data_row;
mod error_fields;
mod parameter_description;
mod reader;
mod row_description;
mod text;

pub use authentication::SaslMechanisms;
pub use copy::CopyResponse;
pub use data_row::DataRow;
pub use error_fields::ErrorFields;
pub use parameter_description::ParameterDescription;
pub use row_description::{Field, RowDescription};
/// The shortest cancel key a server may send (protocol 3.0's fixed size).
pub const MIN_CANCEL_KEY_LEN: usize = 4;
/// The longest cancel key protocol 3.2 allows.
pub const MAX_CANCEL_KEY_LEN: usize = 256;

pub use text::{CommandComplete, NegotiateProtocolVersion, Notification, ParameterStatus};

use reader::{malformed, Reader};

/// Message type bytes of the backend messages.
pub mod tag {
    #![allow(missing_docs)]
    pub const AUTHENTICATION: u8 = b'R';
    pub const BACKEND_KEY_DATA: u8 = b'K';
    pub const BIND_COMPLETE: u8 = b'2';
    pub const CLOSE_COMPLETE: u8 = b'3';
    pub const COMMAND_COMPLETE: u8 = b'C';
    pub const COPY_DATA: u8 = b'd';
    pub const COPY_DONE: u8 = b'c';
    pub const COPY_IN_RESPONSE: u8 = b'G';
    pub const COPY_OUT_RESPONSE: u8 = b'H';
    pub const COPY_BOTH_RESPONSE: u8 = b'W';
    pub const DATA_ROW: u8 = b'D';
    pub const EMPTY_QUERY_RESPONSE: u8 = b'I';
    pub const ERROR_RESPONSE: u8 = b'E';
    pub const NEGOTIATE_PROTOCOL_VERSION: u8 = b'v';
    pub const NO_DATA: u8 = b'n';
    pub const NOTICE_RESPONSE: u8 = b'N';
    pub const NOTIFICATION_RESPONSE: u8 = b'A';
    pub const PARAMETER_DESCRIPTION: u8 = b't';
    pub const PARAMETER_STATUS: u8 = b'S';
    pub const PARSE_COMPLETE: u8 = b'1';
    pub const PORTAL_SUSPENDED: u8 = b's';
    pub const READY_FOR_QUERY: u8 = b'Z';
    pub const ROW_DESCRIPTION: u8 = b'T';

    /// The protocol documentation's name of a backend message type, `None`
    /// for a byte that is not one.
    // Inlined: the driver checks every message's tag with it, and inlined
    // `name(t).is_none()` folds to a few compares instead of a call and a
    // jump table per DataRow.
    #[inline]
    pub const fn name(tag: u8) -> Option<&'static str> {
        Some(match tag {
            AUTHENTICATION => "Authentication",
            BACKEND_KEY_DATA => "BackendKeyData",
            BIND_COMPLETE => "BindComplete",
            CLOSE_COMPLETE => "CloseComplete",
            COMMAND_COMPLETE => "CommandComplete",
            COPY_DATA => "CopyData",
            COPY_DONE => "CopyDone",
            COPY_IN_RESPONSE => "CopyInResponse",
            COPY_OUT_RESPONSE => "CopyOutResponse",
            COPY_BOTH_RESPONSE => "CopyBothResponse",
            DATA_ROW => "DataRow",
            EMPTY_QUERY_RESPONSE => "EmptyQueryResponse",
            ERROR_RESPONSE => "ErrorResponse",
            NEGOTIATE_PROTOCOL_VERSION => "NegotiateProtocolVersion",
            NO_DATA => "NoData",
            NOTICE_RESPONSE => "NoticeResponse",
            NOTIFICATION_RESPONSE => "NotificationResponse",
            PARAMETER_DESCRIPTION => "ParameterDescription",
            PARAMETER_STATUS => "ParameterStatus",
            PARSE_COMPLETE => "ParseComplete",
            PORTAL_SUSPENDED => "PortalSuspended",
            READY_FOR_QUERY => "ReadyForQuery",
            ROW_DESCRIPTION => "RowDescription",
            _ => return None,
        })
    }
}

/// The 5-byte header of a backend message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Message type byte.
    pub tag: u8,
    /// Total length of the message on the wire: 1 (tag) + the declared length.
    pub total_len: usize,
}

/// Length of the header: type byte and `i32` length.
pub const HEADER_LEN: usize = 5;

/// Splits backend messages off a read buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoder {
    max_message_len: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new(crate::DEFAULT_MAX_MESSAGE_LEN)
    }
}

impl Decoder {
    /// A decoder refusing declared lengths above `max_message_len`.
    pub fn new(max_message_len: usize) -> Self {
        Decoder { max_message_len }
    }
    /// The configured maximum.
    pub fn max_message_len(&self) -> usize {
        self.max_message_len
    }
    /// Reads and validates the header at the start of `buf` without consuming
    /// anything. `Ok(None)` if fewer than 5 bytes are there. The body may still be
    /// incomplete: compare `total_len` with `buf.len()`. Does not check the tag.
    pub fn header(&self, buf: &[u8]) -> Result<Option<Header>, DecodeError> {
        let Some(&[tag, a, b, c, d]) = buf.first_chunk::<HEADER_LEN>() else {
            return Ok(None);
        };
        let len = i32::from_be_bytes([a, b, c, d]);
        if len < 4 {
            return Err(DecodeError::new(
                tag,
                DecodeErrorKind::InvalidLength { len: len.into() },
            ));
        }
        // Non-negative after the check above.
        let len = len as usize;
        if len > self.max_message_len {
            return Err(DecodeError::new(
                tag,
                DecodeErrorKind::MessageTooLarge {
                    len,
                    max: self.max_message_len,
                },
            ));
        }
        Ok(Some(Header {
            tag,
            total_len: len + 1,
        }))
    }
    /// Splits one complete message off the front of `buf` and parses it;
    /// `Ok(None)` (consuming nothing) if the message is not complete yet.
    ///
    /// Errors found in the header (bad length, message too large, unknown
    /// type) are reported as soon as the header is there and consume nothing:
    /// the stream cannot be trusted past them. An error in a body consumes
    /// that message, whose boundaries were sound, so a caller may log it and
    /// carry on with the next one.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Message>, DecodeError> {
        let Some(header) = self.header(buf)? else {
            return Ok(None);
        };
        // Refusing an unknown type before its body arrives keeps a peer that
        // is not a PostgreSQL server from making us wait for (and buffer) up
        // to `max_message_len` bytes of garbage.
        if tag::name(header.tag).is_none() {
            return Err(DecodeError::new(
                header.tag,
                DecodeErrorKind::UnknownMessageType,
            ));
        }
        if buf.len() < header.total_len {
            return Ok(None);
        }
        let mut frame = buf.split_to(header.total_len);
        frame.advance(HEADER_LEN);
        Message::parse(header.tag, frame.freeze()).map(Some)
    }
}

/// Transaction status reported by ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransactionStatus {
    /// `'I'`: not in a transaction block.
    Idle,
    /// `'T'`: in a transaction block.
    InTransaction,
    /// `'E'`: in a failed transaction block (queries are rejected until rollback).
    Failed,
}

impl TransactionStatus {
    /// The status a ReadyForQuery's status byte stands for, `None` for a
    /// byte that is none.
    pub const fn from_byte(status: u8) -> Option<TransactionStatus> {
        match status {
            b'I' => Some(TransactionStatus::Idle),
            b'T' => Some(TransactionStatus::InTransaction),
            b'E' => Some(TransactionStatus::Failed),
            _ => None,
        }
    }

    /// The status byte as ReadyForQuery carries it.
    pub const fn as_byte(self) -> u8 {
        match self {
            TransactionStatus::Idle => b'I',
            TransactionStatus::InTransaction => b'T',
            TransactionStatus::Failed => b'E',
        }
    }
}

/// A decoded backend message. Bodies are zero-copy views into the read buffer,
/// validated when the message was parsed so their accessors cannot fail.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Message {
    /// AuthenticationOk.
    AuthenticationOk,
    /// AuthenticationKerberosV5 (unsupported by pgpipe, reported as such).
    AuthenticationKerberosV5,
    /// AuthenticationCleartextPassword.
    AuthenticationCleartextPassword,
    /// AuthenticationMD5Password with its salt.
    AuthenticationMd5Password {
        /// The salt.
        salt: [u8; 4],
    },
    /// AuthenticationSCMCredential.
    AuthenticationScmCredential,
    /// AuthenticationGSS.
    AuthenticationGss,
    /// AuthenticationGSSContinue.
    AuthenticationGssContinue(Bytes),
    /// AuthenticationSSPI.
    AuthenticationSspi,
    /// AuthenticationSASL with the mechanisms offered.
    AuthenticationSasl(SaslMechanisms),
    /// AuthenticationSASLContinue with the server's challenge.
    AuthenticationSaslContinue(Bytes),
    /// AuthenticationSASLFinal with the server's final message.
    AuthenticationSaslFinal(Bytes),
    /// BackendKeyData.
    BackendKeyData {
        /// Backend process id.
        process_id: i32,
        /// Secret key for CancelRequest: 4 bytes in protocol 3.0, 4 to 256
        /// bytes in protocol 3.2.
        secret_key: Bytes,
    },
    /// BindComplete.
    BindComplete,
    /// CloseComplete.
    CloseComplete,
    /// CommandComplete.
    CommandComplete(CommandComplete),
    /// CopyData.
    CopyData(Bytes),
    /// CopyDone.
    CopyDone,
    /// CopyInResponse.
    CopyInResponse(CopyResponse),
    /// CopyOutResponse.
    CopyOutResponse(CopyResponse),
    /// CopyBothResponse.
    CopyBothResponse(CopyResponse),
    /// DataRow.
    DataRow(DataRow),
    /// EmptyQueryResponse.
    EmptyQueryResponse,
    /// ErrorResponse.
    ErrorResponse(ErrorFields),
    /// NegotiateProtocolVersion.
    NegotiateProtocolVersion(NegotiateProtocolVersion),
    /// NoData.
    NoData,
    /// NoticeResponse.
    NoticeResponse(ErrorFields),
    /// NotificationResponse (LISTEN/NOTIFY).
    NotificationResponse(Notification),
    /// ParameterDescription.
    ParameterDescription(ParameterDescription),
    /// ParameterStatus.
    ParameterStatus(ParameterStatus),
    /// ParseComplete.
    ParseComplete,
    /// PortalSuspended.
    PortalSuspended,
    /// ReadyForQuery.
    ReadyForQuery(TransactionStatus),
    /// RowDescription.
    RowDescription(RowDescription),
}

impl Message {
    /// Parses a message body (everything after the 5-byte header) of type `tag`.
    pub fn parse(tag: u8, body: Bytes) -> Result<Message, DecodeError> {
        parse_body(tag, body).map_err(|kind| DecodeError::new(tag, kind))
    }

    /// The message type byte this message is sent with.
    pub fn tag(&self) -> u8 {
        use tag::*;
        match self {
            Message::AuthenticationOk
            | Message::AuthenticationKerberosV5
            | Message::AuthenticationCleartextPassword
            | Message::AuthenticationMd5Password { .. }
            | Message::AuthenticationScmCredential
            | Message::AuthenticationGss
            | Message::AuthenticationGssContinue(_)
            | Message::AuthenticationSspi
            | Message::AuthenticationSasl(_)
            | Message::AuthenticationSaslContinue(_)
            | Message::AuthenticationSaslFinal(_) => AUTHENTICATION,
            Message::BackendKeyData { .. } => BACKEND_KEY_DATA,
            Message::BindComplete => BIND_COMPLETE,
            Message::CloseComplete => CLOSE_COMPLETE,
            Message::CommandComplete(_) => COMMAND_COMPLETE,
            Message::CopyData(_) => COPY_DATA,
            Message::CopyDone => COPY_DONE,
            Message::CopyInResponse(_) => COPY_IN_RESPONSE,
            Message::CopyOutResponse(_) => COPY_OUT_RESPONSE,
            Message::CopyBothResponse(_) => COPY_BOTH_RESPONSE,
            Message::DataRow(_) => DATA_ROW,
            Message::EmptyQueryResponse => EMPTY_QUERY_RESPONSE,
            Message::ErrorResponse(_) => ERROR_RESPONSE,
            Message::NegotiateProtocolVersion(_) => NEGOTIATE_PROTOCOL_VERSION,
            Message::NoData => NO_DATA,
            Message::NoticeResponse(_) => NOTICE_RESPONSE,
            Message::NotificationResponse(_) => NOTIFICATION_RESPONSE,
            Message::ParameterDescription(_) => PARAMETER_DESCRIPTION,
            Message::ParameterStatus(_) => PARAMETER_STATUS,
            Message::ParseComplete => PARSE_COMPLETE,
            Message::PortalSuspended => PORTAL_SUSPENDED,
            Message::ReadyForQuery(_) => READY_FOR_QUERY,
            Message::RowDescription(_) => ROW_DESCRIPTION,
        }
    }
}

fn parse_body(tag: u8, body: Bytes) -> Result<Message, DecodeErrorKind> {
    use tag::*;
    Ok(match tag {
        DATA_ROW => Message::DataRow(DataRow::parse(body)?),
        COMMAND_COMPLETE => Message::CommandComplete(CommandComplete::parse(body)?),
        READY_FOR_QUERY => Message::ReadyForQuery(parse_ready_for_query(&body)?),
        ROW_DESCRIPTION => Message::RowDescription(RowDescription::parse(body)?),
        PARSE_COMPLETE => empty(&body, Message::ParseComplete)?,
        BIND_COMPLETE => empty(&body, Message::BindComplete)?,
        CLOSE_COMPLETE => empty(&body, Message::CloseComplete)?,
        NO_DATA => empty(&body, Message::NoData)?,
        PORTAL_SUSPENDED => empty(&body, Message::PortalSuspended)?,
        EMPTY_QUERY_RESPONSE => empty(&body, Message::EmptyQueryResponse)?,
        COPY_DONE => empty(&body, Message::CopyDone)?,
        COPY_DATA => Message::CopyData(body),
        PARAMETER_DESCRIPTION => Message::ParameterDescription(ParameterDescription::parse(body)?),
        ERROR_RESPONSE => Message::ErrorResponse(ErrorFields::parse(body)?),
        NOTICE_RESPONSE => Message::NoticeResponse(ErrorFields::parse(body)?),
        PARAMETER_STATUS => Message::ParameterStatus(ParameterStatus::parse(body)?),
        NOTIFICATION_RESPONSE => Message::NotificationResponse(Notification::parse(body)?),
        COPY_IN_RESPONSE => Message::CopyInResponse(CopyResponse::parse(body)?),
        COPY_OUT_RESPONSE => Message::CopyOutResponse(CopyResponse::parse(body)?),
        COPY_BOTH_RESPONSE => Message::CopyBothResponse(CopyResponse::parse(body)?),
        AUTHENTICATION => authentication::parse(body)?,
        BACKEND_KEY_DATA => {
            let mut r = Reader::new(&body);
            let process_id = r.i32("process id")?;
            // Protocol 3.2 made the key variable-length (4 to 256 bytes);
            // 3.0 servers always send 4. Anything else is malformed.
            let key_len = body.len() - 4;
            if !(MIN_CANCEL_KEY_LEN..=MAX_CANCEL_KEY_LEN).contains(&key_len) {
                return Err(malformed(format!(
                    "BackendKeyData secret key of {key_len} bytes \
                     (expected {MIN_CANCEL_KEY_LEN} to {MAX_CANCEL_KEY_LEN})"
                )));
            }
            Message::BackendKeyData {
                process_id,
                secret_key: body.slice(4..),
            }
        }
        NEGOTIATE_PROTOCOL_VERSION => {
            Message::NegotiateProtocolVersion(NegotiateProtocolVersion::parse(body)?)
        }
        _ => return Err(DecodeErrorKind::UnknownMessageType),
    })
}

/// Accepts a message that has no body.
fn empty(body: &[u8], message: Message) -> Result<Message, DecodeErrorKind> {
    if body.is_empty() {
        Ok(message)
    } else {
        Err(malformed(format!(
            "the body must be empty but has {} bytes",
            body.len()
        )))
    }
}

fn parse_ready_for_query(body: &[u8]) -> Result<TransactionStatus, DecodeErrorKind> {
    let mut r = Reader::new(body);
    let status = r.u8("transaction status")?;
    r.finish("transaction status")?;
    match TransactionStatus::from_byte(status) {
        Some(s) => Ok(s),
        None => Err(malformed(format!(
            "unknown transaction status {status:#04x}{}",
            if status.is_ascii_graphic() {
                format!(" ('{}')", status as char)
            } else {
                String::new()
            }
        ))),
    }
}

#[cfg(test)]
mod tests;
