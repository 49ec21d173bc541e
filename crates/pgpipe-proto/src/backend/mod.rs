//! Decoder for backend (server to client) messages.
//! CONTRACT STUB: the public names and signatures here are fixed; the proto
//! helper writes the bodies (and may split this file: one message family a file).

use bytes::{Bytes, BytesMut};

use crate::{DecodeError, Oid};

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
}

/// The 5-byte header of a backend message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Message type byte.
    pub tag: u8,
    /// Total length of the message on the wire: 1 (tag) + the declared length.
    pub total_len: usize,
}

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
        let _ = buf;
        todo!()
    }
    /// Splits one complete message off the front of `buf` and parses it;
    /// `Ok(None)` (consuming nothing) if the message is not complete yet.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Message>, DecodeError> {
        let _ = buf;
        todo!()
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

/// A decoded backend message. Bodies are zero-copy views into the read buffer,
/// validated when the message was parsed so their accessors cannot fail.
#[derive(Debug, Clone)]
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
        /// Secret key for CancelRequest.
        secret_key: i32,
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
        let _ = (tag, body);
        todo!()
    }
}

/// The SASL mechanisms listed by AuthenticationSASL.
#[derive(Debug, Clone)]
pub struct SaslMechanisms {
    body: Bytes,
}
impl SaslMechanisms {
    /// Mechanism names, in the server's order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let _ = &self.body;
        std::iter::empty()
    }
}

/// CommandComplete body.
#[derive(Debug, Clone)]
pub struct CommandComplete {
    body: Bytes,
}
impl CommandComplete {
    /// The command tag, e.g. `"INSERT 0 3"`.
    pub fn tag(&self) -> &str {
        let _ = &self.body;
        todo!()
    }
    /// Rows affected or returned: the last word of the tag when it is a number
    /// (INSERT, UPDATE, DELETE, SELECT, MOVE, FETCH, COPY, MERGE); `None` otherwise.
    pub fn rows(&self) -> Option<u64> {
        todo!()
    }
}

/// CopyIn/Out/BothResponse body.
#[derive(Debug, Clone)]
pub struct CopyResponse {
    body: Bytes,
}
impl CopyResponse {
    /// Overall format: 0 text, 1 binary.
    pub fn format(&self) -> i8 {
        let _ = &self.body;
        todo!()
    }
    /// Per-column format codes.
    pub fn column_formats(&self) -> impl Iterator<Item = i16> + '_ {
        std::iter::empty()
    }
}

/// A DataRow body: validated so that every column length fits in the body.
#[derive(Debug, Clone)]
pub struct DataRow {
    body: Bytes,
    column_count: u16,
}
impl DataRow {
    /// Number of columns.
    pub fn column_count(&self) -> usize {
        self.column_count as usize
    }
    /// The whole body (starting with the 2-byte column count).
    pub fn buffer(&self) -> &Bytes {
        &self.body
    }
    /// Each column's byte range within [`DataRow::buffer`], `None` for NULL.
    pub fn ranges(&self) -> impl Iterator<Item = Option<std::ops::Range<usize>>> + '_ {
        std::iter::empty()
    }
    /// Each column's bytes, `None` for NULL.
    pub fn columns(&self) -> impl Iterator<Item = Option<&[u8]>> + '_ {
        std::iter::empty()
    }
}

/// An ErrorResponse or NoticeResponse body: `(field code, value)` pairs.
#[derive(Debug, Clone)]
pub struct ErrorFields {
    body: Bytes,
}
impl ErrorFields {
    /// The fields in order: code byte (`b'S'`, `b'C'`, `b'M'`, ...) and raw value.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &[u8])> + '_ {
        let _ = &self.body;
        std::iter::empty()
    }
}

/// NegotiateProtocolVersion body.
#[derive(Debug, Clone)]
pub struct NegotiateProtocolVersion {
    /// Newest minor protocol version the server supports.
    pub newest_minor: i32,
    body: Bytes,
}
impl NegotiateProtocolVersion {
    /// Protocol options the server did not recognise.
    pub fn unrecognized_options(&self) -> impl Iterator<Item = &str> + '_ {
        let _ = &self.body;
        std::iter::empty()
    }
}

/// NotificationResponse body.
#[derive(Debug, Clone)]
pub struct Notification {
    /// PID of the notifying backend.
    pub process_id: i32,
    body: Bytes,
}
impl Notification {
    /// Channel name.
    pub fn channel(&self) -> &str {
        let _ = &self.body;
        todo!()
    }
    /// Payload.
    pub fn payload(&self) -> &str {
        todo!()
    }
}

/// ParameterDescription body.
#[derive(Debug, Clone)]
pub struct ParameterDescription {
    body: Bytes,
}
impl ParameterDescription {
    /// Number of parameters.
    pub fn len(&self) -> usize {
        let _ = &self.body;
        todo!()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Parameter type OIDs.
    pub fn types(&self) -> impl Iterator<Item = Oid> + '_ {
        std::iter::empty()
    }
}

/// ParameterStatus body.
#[derive(Debug, Clone)]
pub struct ParameterStatus {
    body: Bytes,
}
impl ParameterStatus {
    /// Parameter name.
    pub fn name(&self) -> &str {
        let _ = &self.body;
        todo!()
    }
    /// Parameter value.
    pub fn value(&self) -> &str {
        todo!()
    }
}

/// RowDescription body.
#[derive(Debug, Clone)]
pub struct RowDescription {
    body: Bytes,
    field_count: u16,
}
impl RowDescription {
    /// Number of fields.
    pub fn len(&self) -> usize {
        self.field_count as usize
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.field_count == 0
    }
    /// The fields in order.
    pub fn fields(&self) -> impl Iterator<Item = Field<'_>> + '_ {
        let _ = &self.body;
        std::iter::empty()
    }
}

/// One field of a RowDescription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// Column name.
    pub name: &'a str,
    /// OID of the source table, 0 if none.
    pub table_oid: Oid,
    /// Attribute number in the source table, 0 if none.
    pub column_id: i16,
    /// Type OID.
    pub type_oid: Oid,
    /// Type size (`pg_type.typlen`).
    pub type_size: i16,
    /// Type modifier (`pg_attribute.atttypmod`).
    pub type_modifier: i32,
    /// Format code: 0 text, 1 binary.
    pub format: i16,
}
