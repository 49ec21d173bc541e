//! The few backend messages the replay server writes, and reading the
//! frontend's messages.

use bytes::{BufMut, BytesMut};

/// Appends a message: tag, length, then what `body` writes.
pub(super) fn message(buf: &mut BytesMut, tag: u8, body: impl FnOnce(&mut BytesMut)) {
    buf.put_u8(tag);
    let at = buf.len();
    buf.put_u32(0);
    body(buf);
    let len = (buf.len() - at) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// AuthenticationOk, the ParameterStatus a client looks for, BackendKeyData
/// and ReadyForQuery.
pub(super) fn startup_reply(buf: &mut BytesMut, pid: i32) {
    message(buf, b'R', |b| b.put_u32(0));
    for (k, v) in [
        ("server_version", "15.0 (pgpipe-bench replay)"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("TimeZone", "UTC"),
        ("IntervalStyle", "postgres"),
        ("is_superuser", "off"),
        ("in_hot_standby", "off"),
        ("default_transaction_read_only", "off"),
    ] {
        message(buf, b'S', |b| {
            b.put_slice(k.as_bytes());
            b.put_u8(0);
            b.put_slice(v.as_bytes());
            b.put_u8(0);
        });
    }
    message(buf, b'K', |b| {
        b.put_i32(pid);
        b.put_i32(0x5eed);
    });
    ready(buf);
}

/// ReadyForQuery, idle.
pub(super) fn ready(buf: &mut BytesMut) {
    message(buf, b'Z', |b| b.put_u8(b'I'));
}

/// ParameterDescription echoing the types a Parse declared.
pub(super) fn parameter_description(buf: &mut BytesMut, oids: &[u32]) {
    message(buf, b't', |b| {
        b.put_i16(oids.len() as i16);
        for &o in oids {
            b.put_u32(o);
        }
    });
}

/// An ErrorResponse with SQLSTATE `code` and `text`.
pub(super) fn error(buf: &mut BytesMut, code: &str, text: &str) {
    message(buf, b'E', |b| {
        for (f, v) in [(b'S', "ERROR"), (b'V', "ERROR"), (b'C', code), (b'M', text)] {
            b.put_u8(f);
            b.put_slice(v.as_bytes());
            b.put_u8(0);
        }
        b.put_u8(0);
    });
}

/// The parameter types declared by a Parse body (name, query, types).
pub(super) fn parse_param_oids(body: &[u8]) -> Vec<u32> {
    let mut rest = body;
    for _ in 0..2 {
        match rest.iter().position(|&c| c == 0) {
            Some(i) => rest = &rest[i + 1..],
            None => return Vec::new(),
        }
    }
    let Some((n, rest)) = rest.split_first_chunk::<2>() else {
        return Vec::new();
    };
    rest.chunks_exact(4)
        .take(i16::from_be_bytes(*n).max(0) as usize)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
