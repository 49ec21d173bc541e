//! Backend message builders for fake-server scripts.
//!
//! The named builders produce well-formed messages; [`raw`] and
//! [`raw_with_len`] produce anything, for malformed ones. Concatenate with
//! [`concat()`] or send them one [`Script::send`](crate::Script::send) at a time.

use bytes::{BufMut, Bytes, BytesMut};
use pgpipe_proto::Oid;

/// A message with `tag`, a correct length, and `body`.
pub fn raw(tag: u8, body: &[u8]) -> Bytes {
    // Bodies beyond i32::MAX cannot be framed; saturate rather than panic
    // (the result then lies about its length, which is what a test of that
    // would want anyway).
    let len = i32::try_from(body.len() + 4).unwrap_or(i32::MAX);
    raw_with_len(tag, len, body)
}

/// A message whose length field says `declared_len` whatever the body is
/// (the length counts itself: a correct value is `body.len() + 4`).
pub fn raw_with_len(tag: u8, declared_len: i32, body: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(body.len() + 5);
    out.put_u8(tag);
    out.put_i32(declared_len);
    out.put_slice(body);
    out.freeze()
}

/// Several messages as one buffer (so they arrive in one write).
pub fn concat(parts: &[Bytes]) -> Bytes {
    let mut out = BytesMut::with_capacity(parts.iter().map(Bytes::len).sum());
    for p in parts {
        out.put_slice(p);
    }
    out.freeze()
}

fn cstr(out: &mut BytesMut, s: &str) {
    out.put_slice(s.as_bytes());
    out.put_u8(0);
}

fn auth(code: i32, extra: &[u8]) -> Bytes {
    let mut body = BytesMut::with_capacity(4 + extra.len());
    body.put_i32(code);
    body.put_slice(extra);
    raw(b'R', &body)
}

/// AuthenticationOk.
pub fn auth_ok() -> Bytes {
    auth(0, &[])
}

/// AuthenticationCleartextPassword.
pub fn auth_cleartext() -> Bytes {
    auth(3, &[])
}

/// AuthenticationMD5Password with `salt`.
pub fn auth_md5(salt: [u8; 4]) -> Bytes {
    auth(5, &salt)
}

/// AuthenticationSASL offering `mechanisms` (e.g. `["SCRAM-SHA-256"]`).
pub fn auth_sasl(mechanisms: &[&str]) -> Bytes {
    let mut list = BytesMut::new();
    for m in mechanisms {
        cstr(&mut list, m);
    }
    list.put_u8(0);
    auth(10, &list)
}

/// AuthenticationSASLContinue carrying `data` (server-first-message).
pub fn auth_sasl_continue(data: &[u8]) -> Bytes {
    auth(11, data)
}

/// AuthenticationSASLFinal carrying `data` (server-final-message).
pub fn auth_sasl_final(data: &[u8]) -> Bytes {
    auth(12, data)
}

/// ParameterStatus `name` = `value`.
pub fn parameter_status(name: &str, value: &str) -> Bytes {
    let mut body = BytesMut::new();
    cstr(&mut body, name);
    cstr(&mut body, value);
    raw(b'S', &body)
}

/// BackendKeyData.
pub fn backend_key_data(pid: i32, key: i32) -> Bytes {
    let mut body = BytesMut::with_capacity(8);
    body.put_i32(pid);
    body.put_i32(key);
    raw(b'K', &body)
}

/// BackendKeyData with a key of any length (protocol 3.2 allows 4 to 256
/// bytes; other lengths make malformed messages for tests).
pub fn backend_key_data_bytes(pid: i32, key: &[u8]) -> Bytes {
    let mut body = BytesMut::with_capacity(4 + key.len());
    body.put_i32(pid);
    body.put_slice(key);
    raw(b'K', &body)
}

/// NegotiateProtocolVersion: the newest 3.x minor version the server
/// speaks (sent as real servers do, `3 << 16 | minor`) and the `_pq_.`
/// options it did not recognise.
pub fn negotiate_protocol_version(newest_minor: i32, unrecognized: &[&str]) -> Bytes {
    let mut body = BytesMut::new();
    body.put_i32((3 << 16) | newest_minor);
    body.put_i32(unrecognized.len() as i32);
    for option in unrecognized {
        cstr(&mut body, option);
    }
    raw(b'v', &body)
}

/// ReadyForQuery with transaction status `b'I'`, `b'T'` or `b'E'`.
pub fn ready_for_query(status: u8) -> Bytes {
    raw(b'Z', &[status])
}

/// RowDescription: (name, type OID, format code) per column; no table,
/// typmod -1, and the type's real size for common fixed-size types.
pub fn row_description(fields: &[(&str, Oid, i16)]) -> Bytes {
    let mut body = BytesMut::new();
    body.put_i16(i16::try_from(fields.len()).unwrap_or(i16::MAX));
    for &(name, type_oid, format) in fields {
        cstr(&mut body, name);
        body.put_u32(0); // table OID
        body.put_i16(0); // column number
        body.put_u32(type_oid);
        body.put_i16(type_size(type_oid));
        body.put_i32(-1); // typmod
        body.put_i16(format);
    }
    raw(b'T', &body)
}

/// pg_type.typlen for common built-in types, -1 (varlena) otherwise.
fn type_size(oid: Oid) -> i16 {
    match oid {
        16 | 18 => 1,                       // bool, char
        21 => 2,                            // int2
        23 | 26 | 700 | 1082 => 4,          // int4, oid, float4, date
        20 | 701 | 1083 | 1114 | 1184 => 8, // int8, float8, time, timestamp, timestamptz
        2950 => 16,                         // uuid
        _ => -1,
    }
}

/// DataRow; `None` is NULL.
pub fn data_row(cols: &[Option<&[u8]>]) -> Bytes {
    let mut body = BytesMut::new();
    body.put_i16(i16::try_from(cols.len()).unwrap_or(i16::MAX));
    for col in cols {
        match col {
            Some(v) => {
                body.put_i32(i32::try_from(v.len()).unwrap_or(i32::MAX));
                body.put_slice(v);
            }
            None => body.put_i32(-1),
        }
    }
    raw(b'D', &body)
}

/// CommandComplete with `tag` (e.g. `"SELECT 1"`).
pub fn command_complete(tag: &str) -> Bytes {
    let mut body = BytesMut::new();
    cstr(&mut body, tag);
    raw(b'C', &body)
}

/// ParseComplete.
pub fn parse_complete() -> Bytes {
    raw(b'1', &[])
}

/// BindComplete.
pub fn bind_complete() -> Bytes {
    raw(b'2', &[])
}

/// CloseComplete.
pub fn close_complete() -> Bytes {
    raw(b'3', &[])
}

/// NoData.
pub fn no_data() -> Bytes {
    raw(b'n', &[])
}

/// EmptyQueryResponse.
pub fn empty_query() -> Bytes {
    raw(b'I', &[])
}

/// PortalSuspended.
pub fn portal_suspended() -> Bytes {
    raw(b's', &[])
}

/// ParameterDescription with these parameter type OIDs.
pub fn parameter_description(types: &[Oid]) -> Bytes {
    let mut body = BytesMut::new();
    body.put_i16(i16::try_from(types.len()).unwrap_or(i16::MAX));
    for &t in types {
        body.put_u32(t);
    }
    raw(b't', &body)
}

fn fields_body(fields: &[(u8, &str)]) -> BytesMut {
    let mut body = BytesMut::new();
    for &(code, value) in fields {
        body.put_u8(code);
        cstr(&mut body, value);
    }
    body.put_u8(0);
    body
}

/// ErrorResponse with these (field code, value) pairs, e.g.
/// `[(b'S', "ERROR"), (b'C', "42P01"), (b'M', "relation does not exist")]`.
pub fn error_response(fields: &[(u8, &str)]) -> Bytes {
    raw(b'E', &fields_body(fields))
}

/// NoticeResponse with these (field code, value) pairs.
pub fn notice_response(fields: &[(u8, &str)]) -> Bytes {
    raw(b'N', &fields_body(fields))
}

/// NotificationResponse (LISTEN/NOTIFY).
pub fn notification_response(pid: i32, channel: &str, payload: &str) -> Bytes {
    let mut body = BytesMut::new();
    body.put_i32(pid);
    cstr(&mut body, channel);
    cstr(&mut body, payload);
    raw(b'A', &body)
}

/// The answer to SSLRequest / GSSENCRequest refusing encryption: one byte
/// `N`, no framing. ([`Step::ExpectStartup`](crate::Step::ExpectStartup)
/// already sends it when needed.)
pub fn ssl_refused() -> Bytes {
    Bytes::from_static(b"N")
}

/// A successful login as a PostgreSQL 15 server would answer it:
/// AuthenticationOk, ParameterStatus (server_version 15.0,
/// server_encoding and client_encoding UTF8, DateStyle ISO, MDY,
/// integer_datetimes on, TimeZone UTC, standard_conforming_strings on),
/// BackendKeyData (pid 4242, key 1234567), ReadyForQuery idle.
pub fn handshake() -> Bytes {
    concat(&[
        auth_ok(),
        parameter_status("server_version", "15.0"),
        parameter_status("server_encoding", "UTF8"),
        parameter_status("client_encoding", "UTF8"),
        parameter_status("DateStyle", "ISO, MDY"),
        parameter_status("integer_datetimes", "on"),
        parameter_status("TimeZone", "UTC"),
        parameter_status("standard_conforming_strings", "on"),
        backend_key_data(4242, 1_234_567),
        ready_for_query(b'I'),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits a buffer into (tag, body) using the lengths, checking each.
    fn split(mut b: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        while !b.is_empty() {
            let len = i32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize;
            out.push((b[0], b[5..1 + len].to_vec()));
            b = &b[1 + len..];
        }
        out
    }

    #[test]
    fn lengths_are_right() {
        assert_eq!(&auth_ok()[..], &[b'R', 0, 0, 0, 8, 0, 0, 0, 0]);
        assert_eq!(&ready_for_query(b'T')[..], &[b'Z', 0, 0, 0, 5, b'T']);
        assert_eq!(
            &auth_md5(*b"salt")[5..],
            &[0, 0, 0, 5, b's', b'a', b'l', b't']
        );
        assert_eq!(&raw_with_len(b'D', 100, &[1])[..], &[b'D', 0, 0, 0, 100, 1]);
        assert_eq!(&command_complete("SELECT 1")[..], b"C\0\0\0\x0dSELECT 1\0");
    }

    #[test]
    fn sasl_lists_mechanisms() {
        let m = auth_sasl(&["SCRAM-SHA-256", "SCRAM-SHA-256-PLUS"]);
        assert_eq!(&m[5..9], &10i32.to_be_bytes());
        assert_eq!(&m[9..], b"SCRAM-SHA-256\0SCRAM-SHA-256-PLUS\0\0");
    }

    #[test]
    fn rows() {
        let d = data_row(&[Some(b"ab"), None]);
        assert_eq!(
            &d[5..],
            &[0, 2, 0, 0, 0, 2, b'a', b'b', 0xff, 0xff, 0xff, 0xff]
        );
        let t = row_description(&[("n", 23, 1)]);
        let body = &split(&t)[0].1;
        assert_eq!(&body[..4], &[0, 1, b'n', 0]);
        assert_eq!(
            &body[4..],
            &[0, 0, 0, 0, 0, 0, 0, 0, 0, 23, 0, 4, 0xff, 0xff, 0xff, 0xff, 0, 1]
        );
    }

    #[test]
    fn handshake_is_well_formed() {
        let msgs = split(&handshake());
        let tags: Vec<u8> = msgs.iter().map(|m| m.0).collect();
        assert_eq!(tags.first(), Some(&b'R'));
        assert_eq!(&tags[tags.len() - 2..], b"KZ");
        assert!(msgs
            .iter()
            .any(|(t, b)| *t == b'S' && b.starts_with(b"server_version\x0015.0\x00")));
    }

    #[test]
    fn errors_and_notices() {
        let e = error_response(&[(b'S', "ERROR"), (b'C', "42P01")]);
        assert_eq!(&e[5..], b"SERROR\0C42P01\0\0");
        assert_eq!(notice_response(&[])[0], b'N');
    }
}
