//! Encoders for every frontend (client to server) message of protocol v3.
//!
//! Every encoder appends one complete message to a [`BytesMut`] or, on error,
//! leaves the buffer exactly as it found it, so a caller sharing one write
//! buffer between many requests never sends a torn message. Lengths are
//! checked before anything is written wherever they are known up front, so a
//! refused message costs no copying.

use bytes::BytesMut;
use memchr::memchr;

use crate::put::PutInline;
use crate::{EncodeError, Oid};

mod bind;

pub use bind::ParamWriter;

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

impl Target {
    fn byte(self) -> u8 {
        match self {
            Target::Statement => b'S',
            Target::Portal => b'P',
        }
    }

    fn field(self) -> &'static str {
        match self {
            Target::Statement => "statement name",
            Target::Portal => "portal name",
        }
    }
}

/// A complete Sync message.
pub const SYNC: &[u8] = b"S\0\0\0\x04";
/// A complete Flush message.
pub const FLUSH: &[u8] = b"H\0\0\0\x04";

/// The protocol version of a StartupMessage: 3.0.
pub const PROTOCOL_VERSION: i32 = 196_608;
/// Protocol 3.2 (PostgreSQL 18): variable-length cancel keys.
pub const PROTOCOL_VERSION_3_2: i32 = (3 << 16) | 2;
/// The request code of an SSLRequest.
pub const SSL_REQUEST_CODE: i32 = 80_877_103;
/// The request code of a CancelRequest.
pub const CANCEL_REQUEST_CODE: i32 = 80_877_102;

/// Encodes frontend messages, enforcing a maximum message length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoder {
    max_message_len: usize,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder {
            max_message_len: i32::MAX as usize,
        }
    }
}

/// Refuses a string that cannot be NUL-terminated.
fn check_cstr(s: &[u8], message: &'static str, field: &'static str) -> Result<(), EncodeError> {
    match memchr(0, s) {
        Some(_) => Err(EncodeError::NulInString { message, field }),
        None => Ok(()),
    }
}

/// Refuses a list longer than a 16-bit count can express.
fn check_count(
    count: usize,
    message: &'static str,
    what: &'static str,
) -> Result<u16, EncodeError> {
    u16::try_from(count).map_err(|_| EncodeError::TooManyItems {
        message,
        what,
        count,
    })
}

/// Fills a zeroed slice front to back; the slice was sized for exactly
/// what is written, so the slicing below cannot fail.
struct Fill<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl<'a> Fill<'a> {
    fn new(out: &'a mut [u8]) -> Self {
        Fill { out, at: 0 }
    }

    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        self.out[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }

    /// Leaves `n` bytes as they are (zero) for a later patch.
    fn skip(&mut self, n: usize) {
        self.at += n;
    }

    /// A C string: the bytes, then the NUL (already there: the slice is zeroed).
    fn cstr(&mut self, s: &[u8]) {
        self.bytes(s);
        self.at += 1;
    }
}

fn put_cstr(buf: &mut BytesMut, s: &[u8]) {
    buf.put_slice_inline(s);
    buf.put_u8_inline(0);
}

impl Encoder {
    /// An encoder refusing messages longer than `max_message_len` bytes
    /// (capped at `i32::MAX`).
    pub fn new(max_message_len: usize) -> Self {
        Encoder {
            max_message_len: max_message_len.min(i32::MAX as usize),
        }
    }
    /// The configured maximum.
    pub fn max_message_len(&self) -> usize {
        self.max_message_len
    }

    /// The cap applied to every message: the configured maximum, never above
    /// what the `i32` length field can carry.
    fn max(&self) -> usize {
        self.max_message_len.min(i32::MAX as usize)
    }

    /// Checks a length-field value against the maximum.
    fn check_len(&self, message: &'static str, len: usize) -> Result<i32, EncodeError> {
        let max = self.max();
        if len > max {
            return Err(EncodeError::MessageTooLarge { message, len, max });
        }
        // `max` is at most i32::MAX, so this cannot truncate.
        Ok(len as i32)
    }

    /// Checks the size of a message whose body length is known, reserves room
    /// for all of it and writes its type byte and length. The caller then puts
    /// exactly `body_len` bytes, with nothing left that can fail.
    fn begin(
        &self,
        tag: u8,
        message: &'static str,
        body_len: usize,
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        let len = self.check_len(message, body_len.saturating_add(4))?;
        buf.reserve(1 + len as usize);
        buf.put_u8_inline(tag);
        buf.put_i32_inline(len);
        Ok(())
    }

    /// StartupMessage for protocol 3.0 with the given parameters.
    pub fn startup(&self, params: &[(&str, &str)], buf: &mut BytesMut) -> Result<(), EncodeError> {
        self.startup_version(PROTOCOL_VERSION, params, buf)
    }

    /// StartupMessage asking for protocol `version` (major << 16 | minor,
    /// e.g. [`PROTOCOL_VERSION_3_2`]) with the given parameters. A server
    /// that does not speak that minor version answers with
    /// NegotiateProtocolVersion and carries on with the newest it knows.
    pub fn startup_version(
        &self,
        version: i32,
        params: &[(&str, &str)],
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        const MSG: &str = "StartupMessage";
        // Protocol version and the final NUL that ends the parameter list.
        let mut body_len: usize = 4 + 1;
        for (name, value) in params {
            if name.is_empty() {
                return Err(EncodeError::EmptyString {
                    message: MSG,
                    field: "parameter name",
                });
            }
            check_cstr(name.as_bytes(), MSG, "parameter name")?;
            check_cstr(value.as_bytes(), MSG, "parameter value")?;
            body_len = body_len
                .saturating_add(name.len())
                .saturating_add(value.len())
                .saturating_add(2);
        }
        let len = self.check_len(MSG, body_len.saturating_add(4))?;
        buf.reserve(len as usize);
        buf.put_i32_inline(len);
        buf.put_i32_inline(version);
        for (name, value) in params {
            put_cstr(buf, name.as_bytes());
            put_cstr(buf, value.as_bytes());
        }
        buf.put_u8_inline(0);
        Ok(())
    }

    /// PasswordMessage (cleartext or MD5 hash; NUL-terminated).
    pub fn password(&self, password: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
        const MSG: &str = "PasswordMessage";
        check_cstr(password, MSG, "password")?;
        self.begin(b'p', MSG, password.len().saturating_add(1), buf)?;
        put_cstr(buf, password);
        Ok(())
    }

    /// SASLInitialResponse.
    pub fn sasl_initial_response(
        &self,
        mechanism: &str,
        data: &[u8],
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        const MSG: &str = "SASLInitialResponse";
        check_cstr(mechanism.as_bytes(), MSG, "mechanism name")?;
        let body_len = mechanism
            .len()
            .saturating_add(1 + 4)
            .saturating_add(data.len());
        // The data length fits in i32 because the whole message does.
        self.begin(b'p', MSG, body_len, buf)?;
        put_cstr(buf, mechanism.as_bytes());
        buf.put_i32_inline(data.len() as i32);
        buf.put_slice_inline(data);
        Ok(())
    }

    /// SASLResponse.
    pub fn sasl_response(&self, data: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
        self.begin(b'p', "SASLResponse", data.len(), buf)?;
        buf.put_slice_inline(data);
        Ok(())
    }

    /// Query (simple query protocol).
    pub fn query(&self, sql: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
        const MSG: &str = "Query";
        check_cstr(sql.as_bytes(), MSG, "query")?;
        self.begin(b'Q', MSG, sql.len().saturating_add(1), buf)?;
        put_cstr(buf, sql.as_bytes());
        Ok(())
    }

    /// Parse.
    pub fn parse(
        &self,
        name: &str,
        sql: &str,
        param_types: &[Oid],
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        const MSG: &str = "Parse";
        check_cstr(name.as_bytes(), MSG, "statement name")?;
        check_cstr(sql.as_bytes(), MSG, "query")?;
        let count = check_count(param_types.len(), MSG, "parameter types")?;
        let body_len = name
            .len()
            .saturating_add(sql.len())
            .saturating_add(2 + 2)
            .saturating_add(param_types.len() * 4);
        self.begin(b'P', MSG, body_len, buf)?;
        put_cstr(buf, name.as_bytes());
        put_cstr(buf, sql.as_bytes());
        buf.put_u16_inline(count);
        for &oid in param_types {
            buf.put_u32_inline(oid);
        }
        Ok(())
    }

    /// Describe.
    pub fn describe(
        &self,
        target: Target,
        name: &str,
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        self.target_message(b'D', "Describe", target, name, buf)
    }

    /// Execute; `max_rows` 0 means all rows.
    pub fn execute(
        &self,
        portal: &str,
        max_rows: i32,
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        const MSG: &str = "Execute";
        if portal.is_empty() {
            // The unnamed portal, as every plain query uses: one write of
            // ten bytes instead of four small ones.
            self.check_len(MSG, 4 + 1 + 4)?;
            let n = max_rows.to_be_bytes();
            buf.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, n[0], n[1], n[2], n[3]]);
            return Ok(());
        }
        check_cstr(portal.as_bytes(), MSG, "portal name")?;
        self.begin(b'E', MSG, portal.len().saturating_add(1 + 4), buf)?;
        put_cstr(buf, portal.as_bytes());
        buf.put_i32_inline(max_rows);
        Ok(())
    }

    /// Close.
    pub fn close(&self, target: Target, name: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
        self.target_message(b'C', "Close", target, name, buf)
    }

    /// Describe and Close share one layout: target byte, then a name.
    fn target_message(
        &self,
        tag: u8,
        message: &'static str,
        target: Target,
        name: &str,
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        check_cstr(name.as_bytes(), message, target.field())?;
        self.begin(tag, message, name.len().saturating_add(2), buf)?;
        buf.put_u8_inline(target.byte());
        put_cstr(buf, name.as_bytes());
        Ok(())
    }

    /// CopyData.
    pub fn copy_data(&self, data: &[u8], buf: &mut BytesMut) -> Result<(), EncodeError> {
        self.begin(b'd', "CopyData", data.len(), buf)?;
        buf.put_slice_inline(data);
        Ok(())
    }

    /// CopyFail.
    pub fn copy_fail(&self, message: &str, buf: &mut BytesMut) -> Result<(), EncodeError> {
        const MSG: &str = "CopyFail";
        check_cstr(message.as_bytes(), MSG, "message")?;
        self.begin(b'f', MSG, message.len().saturating_add(1), buf)?;
        put_cstr(buf, message.as_bytes());
        Ok(())
    }
}

/// SSLRequest.
pub fn ssl_request(buf: &mut BytesMut) {
    buf.reserve(8);
    buf.put_i32_inline(8);
    buf.put_i32_inline(SSL_REQUEST_CODE);
}
/// CancelRequest (sent on a new connection instead of a StartupMessage).
///
/// `secret_key` is the key from BackendKeyData as sent: 4 bytes in protocol
/// 3.0, up to 256 in 3.2. Its length is the caller's to check (the decoder
/// only accepts 4 to 256 bytes); the message length field follows it.
pub fn cancel_request(process_id: i32, secret_key: &[u8], buf: &mut BytesMut) {
    let len = 12 + secret_key.len();
    buf.reserve(len);
    // A key from the decoder is at most 256 bytes: the length always fits.
    buf.put_i32_inline(i32::try_from(len).unwrap_or(i32::MAX));
    buf.put_i32_inline(CANCEL_REQUEST_CODE);
    buf.put_i32_inline(process_id);
    buf.put_slice_inline(secret_key);
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

#[cfg(test)]
mod tests {
    use super::*;

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    /// A buffer that already holds an unrelated message, so every test also
    /// checks that encoders append and that failures restore it exactly.
    fn prefilled() -> BytesMut {
        let mut buf = BytesMut::new();
        buf.extend_from_slice(b"prefix");
        buf
    }

    fn appended(buf: &BytesMut) -> &[u8] {
        assert_eq!(&buf[..6], b"prefix");
        &buf[6..]
    }

    fn text(buf: &mut BytesMut, s: &str) -> Result<IsNull, BoxError> {
        buf.extend_from_slice(s.as_bytes());
        Ok(IsNull::No)
    }

    #[test]
    fn startup() {
        let mut buf = prefilled();
        Encoder::default()
            .startup(&[("user", "bob"), ("database", "db")], &mut buf)
            .unwrap();
        let mut expected = Vec::new();
        let body = b"\x00\x03\x00\x00user\0bob\0database\0db\0\0";
        expected.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        expected.extend_from_slice(body);
        assert_eq!(appended(&buf), &expected[..]);

        let mut buf = prefilled();
        Encoder::default().startup(&[], &mut buf).unwrap();
        assert_eq!(appended(&buf), b"\0\0\0\x09\x00\x03\x00\x00\0");
    }

    #[test]
    fn startup_refuses_nul_and_empty_names() {
        let enc = Encoder::default();
        let mut buf = prefilled();
        let e = enc.startup(&[("user", "b\0b")], &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                message: "StartupMessage",
                field: "parameter value"
            }
        ));
        let e = enc.startup(&[("us\0er", "bob")], &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                field: "parameter name",
                ..
            }
        ));
        let e = enc.startup(&[("", "bob")], &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::EmptyString {
                field: "parameter name",
                ..
            }
        ));
        assert_eq!(&buf[..], b"prefix");
    }

    #[test]
    fn password() {
        let mut buf = prefilled();
        Encoder::default().password(b"secret", &mut buf).unwrap();
        assert_eq!(appended(&buf), b"p\0\0\0\x0bsecret\0");
        let e = Encoder::default()
            .password(b"se\0cret", &mut buf)
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                field: "password",
                ..
            }
        ));
        assert_eq!(appended(&buf), b"p\0\0\0\x0bsecret\0");
    }

    #[test]
    fn sasl_messages() {
        let mut buf = prefilled();
        let enc = Encoder::default();
        enc.sasl_initial_response("SCRAM-SHA-256", b"n,,n=,r=abc", &mut buf)
            .unwrap();
        let mut expected = b"p\0\0\0\x21SCRAM-SHA-256\0\0\0\0\x0bn,,n=,r=abc".to_vec();
        assert_eq!(appended(&buf), &expected[..]);
        enc.sasl_response(b"c=biws", &mut buf).unwrap();
        expected.extend_from_slice(b"p\0\0\0\x0ac=biws");
        assert_eq!(appended(&buf), &expected[..]);
        let e = enc
            .sasl_initial_response("SCRAM\0", b"", &mut buf)
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                field: "mechanism name",
                ..
            }
        ));
        assert_eq!(appended(&buf), &expected[..]);
    }

    #[test]
    fn query() {
        let mut buf = prefilled();
        Encoder::default().query("SELECT 1", &mut buf).unwrap();
        assert_eq!(appended(&buf), b"Q\0\0\0\x0dSELECT 1\0");
        let e = Encoder::default()
            .query("SELECT\0 1", &mut buf)
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                message: "Query",
                field: "query"
            }
        ));
        assert_eq!(appended(&buf), b"Q\0\0\0\x0dSELECT 1\0");
    }

    #[test]
    fn parse() {
        let mut buf = prefilled();
        Encoder::default()
            .parse("s1", "SELECT $1", &[23, 0x1234_5678], &mut buf)
            .unwrap();
        assert_eq!(
            appended(&buf),
            b"P\0\0\0\x1bs1\0SELECT $1\0\0\x02\0\0\0\x17\x12\x34\x56\x78"
        );
        let mut buf = prefilled();
        Encoder::default().parse("", "", &[], &mut buf).unwrap();
        assert_eq!(appended(&buf), b"P\0\0\0\x08\0\0\0\0");
    }

    #[test]
    fn parse_refusals() {
        let enc = Encoder::default();
        let mut buf = prefilled();
        let e = enc.parse("a\0", "x", &[], &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                field: "statement name",
                ..
            }
        ));
        let e = enc.parse("a", "x\0", &[], &mut buf).unwrap_err();
        assert!(matches!(e, EncodeError::NulInString { field: "query", .. }));
        let types = vec![0; 65536];
        let e = enc.parse("a", "x", &types, &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::TooManyItems {
                message: "Parse",
                what: "parameter types",
                count: 65536
            }
        ));
        assert_eq!(&buf[..], b"prefix");
        // 65535 is the largest count the 16-bit field carries.
        enc.parse("a", "x", &types[..65535], &mut buf).unwrap();
        assert_eq!(&buf[6 + 1 + 4 + 4..6 + 1 + 4 + 6], &[0xff, 0xff]);
    }

    #[test]
    fn bind() {
        let mut buf = prefilled();
        Encoder::default()
            .bind(
                "p",
                "s",
                &[1],
                2,
                |w| {
                    w.write(|b| text(b, "abc"))?;
                    w.write(|_| Ok(IsNull::Yes))?;
                    assert_eq!(w.written(), 2);
                    Ok(())
                },
                &[1, 0],
                &mut buf,
            )
            .unwrap();
        let expected: &[u8] =
            b"B\0\0\0\x1fp\0s\0\0\x01\0\x01\0\x02\0\0\0\x03abc\xff\xff\xff\xff\0\x02\0\x01\0\0";
        assert_eq!(appended(&buf), expected);
    }

    #[test]
    fn bind_without_anything() {
        let mut buf = BytesMut::new();
        Encoder::default()
            .bind("", "", &[], 0, |_| Ok(()), &[], &mut buf)
            .unwrap();
        assert_eq!(&buf[..], b"B\0\0\0\x0c\0\0\0\0\0\0\0\0");
    }

    #[test]
    fn bind_empty_value_is_not_null() {
        let mut buf = BytesMut::new();
        Encoder::default()
            .bind("", "", &[], 1, |w| w.write(|b| text(b, "")), &[], &mut buf)
            .unwrap();
        assert_eq!(&buf[..], b"B\0\0\0\x10\0\0\0\0\0\x01\0\0\0\0\0\0");
    }

    #[test]
    fn bind_null_discards_what_the_value_wrote() {
        let mut buf = BytesMut::new();
        Encoder::default()
            .bind(
                "",
                "",
                &[],
                1,
                |w| {
                    w.write(|b| {
                        b.extend_from_slice(b"junk");
                        Ok(IsNull::Yes)
                    })
                },
                &[],
                &mut buf,
            )
            .unwrap();
        assert_eq!(&buf[..], b"B\0\0\0\x10\0\0\0\0\0\x01\xff\xff\xff\xff\0\0");
    }

    #[test]
    fn bind_count_mismatch_restores_buffer() {
        let enc = Encoder::default();
        for written in [0, 1, 3] {
            let mut buf = prefilled();
            let e = enc
                .bind(
                    "",
                    "",
                    &[],
                    2,
                    |w| {
                        for _ in 0..written {
                            w.write(|b| text(b, "x"))?;
                        }
                        Ok(())
                    },
                    &[],
                    &mut buf,
                )
                .unwrap_err();
            match e {
                EncodeError::ParameterCountMismatch { expected, actual } => {
                    assert_eq!((expected, actual), (2, written));
                }
                other => panic!("unexpected {other:?}"),
            }
            assert_eq!(&buf[..], b"prefix");
        }
    }

    #[test]
    fn bind_parameter_error_carries_index_and_restores_buffer() {
        let mut buf = prefilled();
        let e = Encoder::default()
            .bind(
                "",
                "",
                &[],
                3,
                |w| {
                    w.write(|b| text(b, "ok"))?;
                    w.write(|b| {
                        b.extend_from_slice(b"half");
                        Err("bad value".into())
                    })?;
                    w.write(|b| text(b, "never"))
                },
                &[],
                &mut buf,
            )
            .unwrap_err();
        match &e {
            EncodeError::Parameter { index, source } => {
                assert_eq!(*index, 1);
                assert_eq!(source.to_string(), "bad value");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(&buf[..], b"prefix");
    }

    #[test]
    fn param_writer_error_leaves_earlier_values() {
        // A caller may catch a parameter's error and still finish the message
        // (e.g. by writing NULL): the failed value must leave no trace.
        let mut buf = BytesMut::new();
        Encoder::default()
            .bind(
                "",
                "",
                &[],
                1,
                |w| {
                    let e = w
                        .write(|b| {
                            b.extend_from_slice(b"half");
                            Err("nope".into())
                        })
                        .unwrap_err();
                    assert!(matches!(e, EncodeError::Parameter { index: 0, .. }));
                    assert_eq!(w.written(), 0);
                    w.write(|_| Ok(IsNull::Yes))
                },
                &[],
                &mut buf,
            )
            .unwrap();
        assert_eq!(&buf[..], b"B\0\0\0\x10\0\0\0\0\0\x01\xff\xff\xff\xff\0\0");
    }

    #[test]
    fn known_size_values_are_written_as_the_placeholder_path_writes_them() {
        let encode = |direct: bool| {
            let mut buf = BytesMut::new();
            Encoder::default()
                .bind(
                    "",
                    "",
                    &[],
                    3,
                    |w| {
                        if direct {
                            w.write_fixed(Ok(7i64.to_be_bytes()))?;
                            w.write_bytes(b"text")?;
                            w.write_bytes(b"")
                        } else {
                            w.write(|b| {
                                b.extend_from_slice(&7i64.to_be_bytes());
                                Ok(IsNull::No)
                            })?;
                            w.write(|b| text(b, "text"))?;
                            w.write(|_| Ok(IsNull::No))
                        }
                    },
                    &[],
                    &mut buf,
                )
                .unwrap();
            buf
        };
        assert_eq!(encode(true), encode(false));
    }

    #[test]
    fn known_size_values_respect_the_message_limit_and_leave_nothing_on_error() {
        // After the type byte: length (4), two empty names (2), format
        // count (2), parameter count (2) = 10, then the value's 12; the
        // result-format count (2) makes the whole message 24. With a limit
        // of 21 the value itself is refused (22 so far), before the rest.
        for (limit, outcome) in [(24, None), (21, Some(22))] {
            let mut buf = BytesMut::new();
            let result = Encoder::new(limit).bind(
                "",
                "",
                &[],
                1,
                |w| w.write_fixed(Ok(1i64.to_be_bytes())),
                &[],
                &mut buf,
            );
            match (result, outcome) {
                (Ok(()), None) => assert_eq!(buf.len(), 25),
                (Err(EncodeError::MessageTooLarge { len, .. }), Some(at)) => {
                    assert_eq!(len, at);
                    assert!(buf.is_empty());
                }
                (other, _) => panic!("limit {limit}: {other:?}"),
            }
        }
        let mut buf = prefilled();
        let e = Encoder::default()
            .bind(
                "",
                "",
                &[],
                2,
                |w| {
                    w.write_bytes(b"ok")?;
                    w.write_fixed::<8>(Err("no such instant".into()))
                },
                &[],
                &mut buf,
            )
            .unwrap_err();
        assert!(matches!(e, EncodeError::Parameter { index: 1, .. }));
        assert_eq!(&buf[..], b"prefix");
    }

    #[test]
    fn bind_value_that_eats_the_buffer_is_refused() {
        let mut buf = prefilled();
        let e = Encoder::default()
            .bind(
                "",
                "",
                &[],
                1,
                |w| {
                    w.write(|b| {
                        b.truncate(3);
                        Ok(IsNull::No)
                    })
                },
                &[],
                &mut buf,
            )
            .unwrap_err();
        assert!(matches!(e, EncodeError::Parameter { index: 0, .. }));
    }

    #[test]
    fn bind_too_large() {
        // Fixed part: 4 + 2 + 2 + 2 + 2 NULs = 12 bytes, a value adds 4 + len.
        let enc = Encoder::new(20);
        let mut buf = prefilled();
        enc.bind(
            "",
            "",
            &[],
            1,
            |w| w.write(|b| text(b, "1234")),
            &[],
            &mut buf,
        )
        .unwrap();
        assert_eq!(appended(&buf).len(), 21);

        let mut buf = prefilled();
        let e = enc
            .bind(
                "",
                "",
                &[],
                1,
                |w| w.write(|b| text(b, "12345")),
                &[],
                &mut buf,
            )
            .unwrap_err();
        // Caught once the result format count makes it 21 bytes.
        assert!(matches!(
            e,
            EncodeError::MessageTooLarge {
                message: "Bind",
                len: 21,
                max: 20
            }
        ));
        assert_eq!(&buf[..], b"prefix");

        // Too large only once the result formats are added.
        let mut buf = prefilled();
        let e = enc
            .bind(
                "",
                "",
                &[],
                1,
                |w| w.write(|b| text(b, "1234")),
                &[1],
                &mut buf,
            )
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::MessageTooLarge {
                message: "Bind",
                len: 22,
                max: 20
            }
        ));
        assert_eq!(&buf[..], b"prefix");

        // Refused before the closure runs when the fixed part alone is too long.
        let mut buf = prefilled();
        let e = enc
            .bind(
                "a-long-portal-name",
                "",
                &[],
                0,
                |_| panic!("must not run"),
                &[],
                &mut buf,
            )
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::MessageTooLarge {
                message: "Bind",
                len: 30,
                ..
            }
        ));
        assert_eq!(&buf[..], b"prefix");
    }

    #[test]
    fn bind_too_large_while_writing_values() {
        let enc = Encoder::new(32);
        let mut buf = prefilled();
        let mut calls = 0;
        let e = enc
            .bind(
                "",
                "",
                &[],
                3,
                |w| {
                    for _ in 0..3 {
                        calls += 1;
                        w.write(|b| text(b, "0123456789"))?;
                    }
                    Ok(())
                },
                &[],
                &mut buf,
            )
            .unwrap_err();
        // The fixed part is 24 bytes; the second value pushes the message to
        // 10 + 2 * 14 = 38 > 32, and the third is never encoded.
        assert_eq!(calls, 2);
        assert!(matches!(
            e,
            EncodeError::MessageTooLarge {
                message: "Bind",
                len: 38,
                max: 32
            }
        ));
        assert_eq!(&buf[..], b"prefix");
    }

    #[test]
    fn bind_refusals() {
        let enc = Encoder::default();
        let mut buf = prefilled();
        let e = enc
            .bind("p\0", "", &[], 0, |_| Ok(()), &[], &mut buf)
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                message: "Bind",
                field: "portal name"
            }
        ));
        let e = enc
            .bind("", "s\0", &[], 0, |_| Ok(()), &[], &mut buf)
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                field: "statement name",
                ..
            }
        ));
        let many = vec![0i16; 65536];
        let e = enc
            .bind("", "", &many, 0, |_| Ok(()), &[], &mut buf)
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::TooManyItems {
                what: "parameter formats",
                ..
            }
        ));
        let e = enc
            .bind("", "", &[], 65536, |_| Ok(()), &[], &mut buf)
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::TooManyItems {
                what: "parameters",
                count: 65536,
                ..
            }
        ));
        let e = enc
            .bind("", "", &[], 0, |_| Ok(()), &many, &mut buf)
            .unwrap_err();
        assert!(matches!(
            e,
            EncodeError::TooManyItems {
                what: "result formats",
                ..
            }
        ));
        assert_eq!(&buf[..], b"prefix");
    }

    #[test]
    fn bind_65535_parameters() {
        let mut buf = BytesMut::new();
        Encoder::default()
            .bind(
                "",
                "",
                &[],
                65535,
                |w| {
                    for _ in 0..65535 {
                        w.write(|_| Ok(IsNull::Yes))?;
                    }
                    Ok(())
                },
                &[],
                &mut buf,
            )
            .unwrap();
        assert_eq!(buf.len(), 1 + 4 + 2 + 2 + 2 + 65535 * 4 + 2);
        assert_eq!(&buf[9..11], &[0xff, 0xff]);
    }

    #[test]
    fn describe_and_close() {
        let enc = Encoder::default();
        let mut buf = prefilled();
        enc.describe(Target::Statement, "s1", &mut buf).unwrap();
        enc.describe(Target::Portal, "", &mut buf).unwrap();
        enc.close(Target::Statement, "s1", &mut buf).unwrap();
        enc.close(Target::Portal, "p", &mut buf).unwrap();
        assert_eq!(
            appended(&buf),
            b"D\0\0\0\x08Ss1\0D\0\0\0\x06P\0C\0\0\0\x08Ss1\0C\0\0\0\x07Pp\0"
        );
        let e = enc.describe(Target::Portal, "\0", &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                message: "Describe",
                field: "portal name"
            }
        ));
        let e = enc.close(Target::Statement, "\0", &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                message: "Close",
                field: "statement name"
            }
        ));
        assert_eq!(buf.len(), 6 + 9 + 7 + 9 + 8);
    }

    #[test]
    fn execute() {
        let mut buf = prefilled();
        Encoder::default().execute("", 0, &mut buf).unwrap();
        Encoder::default().execute("p", 100, &mut buf).unwrap();
        assert_eq!(
            appended(&buf),
            b"E\0\0\0\x09\0\0\0\0\0E\0\0\0\x0ap\0\0\0\0\x64"
        );
        let e = Encoder::default().execute("p\0", 0, &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                message: "Execute",
                ..
            }
        ));
    }

    #[test]
    fn copy_messages() {
        let enc = Encoder::default();
        let mut buf = prefilled();
        enc.copy_data(b"1\t2\n", &mut buf).unwrap();
        enc.copy_data(b"", &mut buf).unwrap();
        enc.copy_fail("bad", &mut buf).unwrap();
        copy_done(&mut buf);
        assert_eq!(
            appended(&buf),
            b"d\0\0\0\x081\t2\nd\0\0\0\x04f\0\0\0\x08bad\0c\0\0\0\x04"
        );
        let e = enc.copy_fail("b\0d", &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::NulInString {
                message: "CopyFail",
                field: "message"
            }
        ));
    }

    #[test]
    fn cancel_request_with_a_long_protocol_3_2_key() {
        let mut buf = BytesMut::new();
        let key: Vec<u8> = (0..=255u8).collect();
        cancel_request(7, &key, &mut buf);
        assert_eq!(buf.len(), 12 + 256);
        assert_eq!(&buf[..12], b"\0\0\x01\x0c\x04\xd2\x16\x2e\0\0\0\x07");
        assert_eq!(&buf[12..], &key[..]);
    }

    #[test]
    fn startup_for_protocol_3_2() {
        let mut buf = BytesMut::new();
        Encoder::default()
            .startup_version(PROTOCOL_VERSION_3_2, &[("user", "u")], &mut buf)
            .unwrap();
        assert_eq!(&buf[4..8], &[0, 3, 0, 2]);
    }

    #[test]
    fn fixed_messages() {
        let mut buf = prefilled();
        ssl_request(&mut buf);
        cancel_request(0x0102_0304, &[0xff; 4], &mut buf);
        sync(&mut buf);
        flush(&mut buf);
        terminate(&mut buf);
        assert_eq!(
            appended(&buf),
            b"\0\0\0\x08\x04\xd2\x16\x2f\
              \0\0\0\x10\x04\xd2\x16\x2e\x01\x02\x03\x04\xff\xff\xff\xff\
              S\0\0\0\x04H\0\0\0\x04X\0\0\0\x04"
        );
    }

    #[test]
    fn max_message_len_is_enforced_everywhere() {
        let enc = Encoder::new(8);
        assert_eq!(enc.max_message_len(), 8);
        assert_eq!(
            Encoder::new(usize::MAX).max_message_len(),
            i32::MAX as usize
        );
        let mut buf = prefilled();
        // "Q" + len + "abc\0": length field 8, exactly the maximum.
        enc.query("abc", &mut buf).unwrap();
        let before = buf.clone();
        let too_large =
            |e: EncodeError| matches!(e, EncodeError::MessageTooLarge { len: 9, max: 8, .. });
        assert!(too_large(enc.query("abcd", &mut buf).unwrap_err()));
        assert!(too_large(enc.password(b"abcd", &mut buf).unwrap_err()));
        assert!(too_large(
            enc.sasl_response(b"abcde", &mut buf).unwrap_err()
        ));
        assert!(too_large(enc.copy_data(b"abcde", &mut buf).unwrap_err()));
        assert!(too_large(enc.copy_fail("abcd", &mut buf).unwrap_err()));
        assert!(too_large(
            enc.describe(Target::Portal, "abc", &mut buf).unwrap_err()
        ));
        assert!(too_large(
            enc.close(Target::Portal, "abc", &mut buf).unwrap_err()
        ));
        let e = enc.execute("", 0, &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::MessageTooLarge {
                message: "Execute",
                len: 9,
                ..
            }
        ));
        let e = enc.parse("a", "", &[], &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::MessageTooLarge {
                message: "Parse",
                len: 9,
                ..
            }
        ));
        let e = enc.sasl_initial_response("", b"", &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::MessageTooLarge {
                message: "SASLInitialResponse",
                ..
            }
        ));
        let e = enc.startup(&[], &mut buf).unwrap_err();
        assert!(matches!(
            e,
            EncodeError::MessageTooLarge {
                message: "StartupMessage",
                len: 9,
                ..
            }
        ));
        assert_eq!(buf, before);
    }
}
