//! Encoders for every frontend (client to server) message of protocol v3.
//! CONTRACT STUB: signatures are fixed; the proto helper writes the bodies.

use bytes::BytesMut;

use crate::{EncodeError, Oid};

/// Whether an encoded parameter value is SQL NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsNull {
    /// The value is NULL; nothing was written for it.
    Yes,
    /// The value was written.
    No,
}

/// What a Describe or Close message refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A prepared statement (`'S'`).
    Statement,
    /// A portal (`'P'`).
    Portal,
}

/// A complete Sync message.
pub const SYNC: &[u8] = b"S\0\0\0\x04";
/// A complete Flush message.
pub const FLUSH: &[u8] = b"H\0\0\0\x04";

/// Encodes frontend messages, enforcing a maximum message length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoder {
    max_message_len: usize,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder { max_message_len: i32::MAX as usize }
    }
}

/// Writes the parameter values of a Bind message, one length-prefixed value at a time.
pub struct ParamWriter<'a> {
    buf: &'a mut BytesMut,
    written: usize,
}

impl ParamWriter<'_> {
    /// Writes one parameter: reserves its length prefix, lets `f` append the
    /// value, and patches the length (or -1 for NULL).
    pub fn write<F>(&mut self, f: F) -> Result<(), EncodeError>
    where
        F: FnOnce(&mut BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Send + Sync>>,
    {
        let _ = (&mut self.buf, self.written, f);
        todo!()
    }
}

impl Encoder {
    /// An encoder refusing messages longer than `max_message_len` bytes
    /// (capped at `i32::MAX`).
    pub fn new(max_message_len: usize) -> Self {
        Encoder { max_message_len: max_message_len.min(i32::MAX as usize) }
    }
    /// The configured maximum.
    pub fn max_message_len(&self) -> usize {
        self.max_message_len
    }
    /// StartupMessage for protocol 3.0 with the given parameters.
    pub fn startup(&self, params: &[(&str, &str)], buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (params, buf);
        todo!()
    }
    /// PasswordMessage (cleartext or MD5 hash; NUL-terminated).
    pub fn password(&self, password: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (password, buf);
        todo!()
    }
    /// SASLInitialResponse.
    pub fn sasl_initial_response(&self, mechanism: &str, data: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (mechanism, data, buf);
        todo!()
    }
    /// SASLResponse.
    pub fn sasl_response(&self, data: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (data, buf);
        todo!()
    }
    /// Query (simple query protocol).
    pub fn query(&self, sql: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (sql, buf);
        todo!()
    }
    /// Parse.
    pub fn parse(&self, name: &str, sql: &str, param_types: &[Oid], buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (name, sql, param_types, buf);
        todo!()
    }
    /// Bind. `write_params` must write exactly `param_count` values through the
    /// [`ParamWriter`]; otherwise [`EncodeError::ParameterCountMismatch`].
    #[allow(clippy::too_many_arguments)]
    pub fn bind<F>(
        &self,
        portal: &str,
        statement: &str,
        param_formats: &[i16],
        param_count: usize,
        write_params: F,
        result_formats: &[i16],
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError>
    where
        F: FnOnce(&mut ParamWriter<'_>) -> Result<(), EncodeError>,
    {
        let _ = (portal, statement, param_formats, param_count, write_params, result_formats, buf);
        todo!()
    }
    /// Describe.
    pub fn describe(&self, target: Target, name: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (target, name, buf);
        todo!()
    }
    /// Execute; `max_rows` 0 means all rows.
    pub fn execute(&self, portal: &str, max_rows: i32, buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (portal, max_rows, buf);
        todo!()
    }
    /// Close.
    pub fn close(&self, target: Target, name: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (target, name, buf);
        todo!()
    }
    /// CopyData.
    pub fn copy_data(&self, data: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (data, buf);
        todo!()
    }
    /// CopyFail.
    pub fn copy_fail(&self, message: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
        let _ = (message, buf);
        todo!()
    }
}

/// SSLRequest.
pub fn ssl_request(buf: &mut BytesMut) {
    let _ = buf;
    todo!()
}
/// CancelRequest (sent on a new connection instead of a StartupMessage).
pub fn cancel_request(process_id: i32, secret_key: i32, buf: &mut BytesMut) {
    let _ = (process_id, secret_key, buf);
    todo!()
}
/// Sync.
pub fn sync(buf: &mut BytesMut) {
    buf.extend_from_slice(SYNC);
}
/// Flush.
pub fn flush(buf: &mut BytesMut) {
    buf.extend_from_slice(FLUSH);
}
/// Terminate.
pub fn terminate(buf: &mut BytesMut) {
    buf.extend_from_slice(b"X\0\0\0\x04");
}
/// CopyDone.
pub fn copy_done(buf: &mut BytesMut) {
    buf.extend_from_slice(b"c\0\0\0\x04");
}
