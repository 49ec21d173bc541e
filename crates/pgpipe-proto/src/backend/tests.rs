//! Decoder tests on hand-built messages, following the layouts of the
//! protocol documentation's "Message Formats" section.

use bytes::{BufMut, Bytes, BytesMut};

use super::*;

fn frame(tag: u8, body: &[u8]) -> BytesMut {
    let mut buf = BytesMut::new();
    buf.put_u8(tag);
    buf.put_i32(body.len() as i32 + 4);
    buf.put_slice(body);
    buf
}

/// Decodes one framed message, checking it is consumed whole.
fn decode(tag: u8, body: &[u8]) -> Result<Message, DecodeError> {
    let mut buf = frame(tag, body);
    let result = Decoder::default()
        .decode(&mut buf)
        .map(|m| m.expect("complete message"));
    assert!(buf.is_empty(), "the message must be consumed");
    // `Message::parse` on the body alone agrees with the decoder.
    let direct = Message::parse(tag, Bytes::copy_from_slice(body));
    assert_eq!(format!("{result:?}"), format!("{direct:?}"));
    result
}

fn ok(tag: u8, body: &[u8]) -> Message {
    decode(tag, body).unwrap_or_else(|e| panic!("{e}"))
}

/// The reason of a `Malformed` error.
fn malformed_reason(tag: u8, body: &[u8]) -> String {
    match decode(tag, body) {
        Err(DecodeError {
            tag: t,
            kind: DecodeErrorKind::Malformed { reason },
        }) => {
            assert_eq!(t, tag);
            reason
        }
        other => panic!("expected a malformed error, got {other:?}"),
    }
}

fn be32(v: i32) -> [u8; 4] {
    v.to_be_bytes()
}

// ---------------------------------------------------------------- header

#[test]
fn header_needs_five_bytes() {
    let d = Decoder::default();
    for n in 0..5 {
        assert_eq!(d.header(&b"Z\0\0\0\x05I"[..n]).unwrap(), None);
    }
    assert_eq!(
        d.header(b"Z\0\0\0\x05").unwrap(),
        Some(Header {
            tag: b'Z',
            total_len: 6
        })
    );
    // The tag is not the header's business.
    assert_eq!(
        d.header(b"?\0\0\0\x04").unwrap(),
        Some(Header {
            tag: b'?',
            total_len: 5
        })
    );
}

#[test]
fn header_rejects_lengths_below_four() {
    let d = Decoder::default();
    for len in [3, 0, -1, i32::MIN] {
        let mut buf = BytesMut::new();
        buf.put_u8(b'D');
        buf.put_i32(len);
        let e = d.header(&buf).unwrap_err();
        assert_eq!(
            e,
            DecodeError {
                tag: b'D',
                kind: DecodeErrorKind::InvalidLength { len: len.into() }
            }
        );
        assert_eq!(d.decode(&mut buf).unwrap_err(), e);
        assert_eq!(buf.len(), 5, "nothing consumed");
    }
}

#[test]
fn oversized_declaration_is_refused_from_the_header_alone() {
    let d = Decoder::default();
    let mut buf = BytesMut::from(&b"E\x7f\xff\xfd\x78"[..]);
    let e = d.decode(&mut buf).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::MessageTooLarge {
            len: 2147483000,
            max: 1 << 30
        }
    );
    assert_eq!(
        e.to_string(),
        "message too large: ErrorResponse declares 2147483000 bytes, the maximum is 1073741824"
    );
    assert_eq!(buf.len(), 5);

    let small = Decoder::new(10);
    assert_eq!(small.max_message_len(), 10);
    assert!(small.header(b"d\0\0\0\x0a").unwrap().is_some());
    assert_eq!(
        small.header(b"d\0\0\0\x0b").unwrap_err().kind,
        DecodeErrorKind::MessageTooLarge { len: 11, max: 10 }
    );
}

#[test]
fn partial_input_consumes_nothing() {
    let d = Decoder::default();
    let mut whole = frame(b'D', b"\0\x02\0\0\0\x03abc\xff\xff\xff\xff");
    whole.extend_from_slice(&frame(b'Z', b"I"));
    let first_len = 1 + 4 + 13;
    for n in 0..first_len {
        let mut buf = BytesMut::from(&whole[..n]);
        assert!(d.decode(&mut buf).unwrap().is_none(), "prefix {n}");
        assert_eq!(&buf[..], &whole[..n], "prefix {n} untouched");
    }
    let mut buf = whole.clone();
    let row = match d.decode(&mut buf).unwrap() {
        Some(Message::DataRow(row)) => row,
        other => panic!("{other:?}"),
    };
    assert_eq!(row.columns().collect::<Vec<_>>(), [Some(&b"abc"[..]), None]);
    assert_eq!(&buf[..], &frame(b'Z', b"I")[..]);
    assert!(matches!(
        d.decode(&mut buf).unwrap(),
        Some(Message::ReadyForQuery(TransactionStatus::Idle))
    ));
    assert!(buf.is_empty());
    assert!(d.decode(&mut buf).unwrap().is_none());
}

#[test]
fn unknown_type_is_refused_before_its_body_arrives() {
    let d = Decoder::default();
    let mut buf = BytesMut::from(&b"Q\0\0\x10\0"[..]);
    let e = d.decode(&mut buf).unwrap_err();
    assert_eq!(e.tag, b'Q');
    assert_eq!(e.kind, DecodeErrorKind::UnknownMessageType);
    assert_eq!(e.to_string(), "unknown backend message type 0x51 ('Q')");
    assert_eq!(buf.len(), 5);
    assert_eq!(
        Message::parse(b'Q', Bytes::new()).unwrap_err().kind,
        DecodeErrorKind::UnknownMessageType
    );
}

#[test]
fn a_malformed_body_is_consumed_and_decoding_can_go_on() {
    let d = Decoder::default();
    let mut buf = frame(b'Z', b"X");
    buf.extend_from_slice(&frame(b'1', b""));
    assert!(d.decode(&mut buf).is_err());
    assert!(matches!(
        d.decode(&mut buf).unwrap(),
        Some(Message::ParseComplete)
    ));
}

#[test]
fn decoded_bodies_share_the_read_buffer() {
    let d = Decoder::default();
    let mut buf = frame(b'd', b"copy bytes");
    let start = buf.as_ptr() as usize;
    let Some(Message::CopyData(data)) = d.decode(&mut buf).unwrap() else {
        panic!()
    };
    assert_eq!(&data[..], b"copy bytes");
    assert_eq!(data.as_ptr() as usize, start + 5, "zero copy");
}

// ---------------------------------------------------------------- authentication

#[test]
fn authentication_requests() {
    let auth = |code: i32, rest: &[u8]| {
        let mut body = be32(code).to_vec();
        body.extend_from_slice(rest);
        decode(b'R', &body)
    };
    assert_eq!(auth(0, b"").unwrap(), Message::AuthenticationOk);
    assert_eq!(auth(2, b"").unwrap(), Message::AuthenticationKerberosV5);
    assert_eq!(
        auth(3, b"").unwrap(),
        Message::AuthenticationCleartextPassword
    );
    assert_eq!(
        auth(5, b"\x01\x02\x03\x04").unwrap(),
        Message::AuthenticationMd5Password { salt: [1, 2, 3, 4] }
    );
    assert_eq!(auth(6, b"").unwrap(), Message::AuthenticationScmCredential);
    assert_eq!(auth(7, b"").unwrap(), Message::AuthenticationGss);
    assert_eq!(
        auth(8, b"gss token").unwrap(),
        Message::AuthenticationGssContinue(Bytes::from_static(b"gss token"))
    );
    assert_eq!(auth(9, b"").unwrap(), Message::AuthenticationSspi);
    let Message::AuthenticationSasl(mechs) =
        auth(10, b"SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0").unwrap()
    else {
        panic!()
    };
    assert_eq!(
        mechs.iter().collect::<Vec<_>>(),
        ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]
    );
    assert!(mechs.contains("SCRAM-SHA-256"));
    assert!(!mechs.contains("SCRAM"));
    let Message::AuthenticationSasl(none) = auth(10, b"\0").unwrap() else {
        panic!()
    };
    assert_eq!(none.iter().count(), 0);
    assert_eq!(
        auth(11, b"r=abc,s=xyz,i=4096").unwrap(),
        Message::AuthenticationSaslContinue(Bytes::from_static(b"r=abc,s=xyz,i=4096"))
    );
    assert_eq!(
        auth(12, b"v=sig").unwrap(),
        Message::AuthenticationSaslFinal(Bytes::from_static(b"v=sig"))
    );
    assert_eq!(
        auth(11, b"").unwrap(),
        Message::AuthenticationSaslContinue(Bytes::new())
    );
    for code in [1, 4, 13, -1] {
        let e = auth(code, b"").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::UnknownAuthentication { code });
    }
}

#[test]
fn malformed_authentication_requests() {
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0"),
        "the body ends inside the authentication code (4 bytes needed, 3 remain)"
    );
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0\0x"),
        "1 unexpected bytes after the authentication code"
    );
    for code in [2u8, 3, 6, 7, 9] {
        malformed_reason(b'R', &[0, 0, 0, code, 0]);
    }
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0\x05abc"),
        "the body ends inside the MD5 salt (4 bytes needed, 3 remain)"
    );
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0\x05abcde"),
        "1 unexpected bytes after the MD5 salt"
    );
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0\x0aSCRAM-SHA-256\0"),
        "the SASL mechanism list is not terminated by an empty name"
    );
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0\x0a"),
        "the SASL mechanism list is not terminated by an empty name"
    );
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0\x0aSCRAM"),
        "the SASL mechanism name 0 is not NUL-terminated"
    );
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0\x0aok\0\xff\0\0"),
        "the SASL mechanism name 1 is not valid UTF-8 (invalid byte at body offset 7)"
    );
    assert_eq!(
        malformed_reason(b'R', b"\0\0\0\x0aok\0\0x"),
        "1 unexpected bytes after the SASL mechanism list"
    );
}

// ---------------------------------------------------------------- simple messages

#[test]
fn backend_key_data() {
    assert_eq!(
        ok(b'K', b"\0\0\x30\x39\xff\xff\xff\xfe"),
        Message::BackendKeyData {
            process_id: 12345,
            secret_key: -2
        }
    );
    assert_eq!(
        malformed_reason(b'K', b"\0\0\x30\x39\xff\xff\xff"),
        "the body ends inside the secret key (4 bytes needed, 3 remain)"
    );
    assert_eq!(
        malformed_reason(b'K', b"\0\0\x30\x39\xff\xff\xff\xfe\0"),
        "1 unexpected bytes after the secret key"
    );
    malformed_reason(b'K', b"");
}

#[test]
fn empty_messages() {
    let cases = [
        (b'1', Message::ParseComplete),
        (b'2', Message::BindComplete),
        (b'3', Message::CloseComplete),
        (b'n', Message::NoData),
        (b's', Message::PortalSuspended),
        (b'I', Message::EmptyQueryResponse),
        (b'c', Message::CopyDone),
    ];
    for (tag, expected) in cases {
        let m = ok(tag, b"");
        assert_eq!(m.tag(), tag);
        assert_eq!(m, expected);
        assert_eq!(
            malformed_reason(tag, b"x"),
            "the body must be empty but has 1 bytes"
        );
    }
}

#[test]
fn ready_for_query() {
    for (byte, status) in [
        (b'I', TransactionStatus::Idle),
        (b'T', TransactionStatus::InTransaction),
        (b'E', TransactionStatus::Failed),
    ] {
        assert_eq!(ok(b'Z', &[byte]), Message::ReadyForQuery(status));
    }
    assert_eq!(
        malformed_reason(b'Z', b"X"),
        "unknown transaction status 0x58 ('X')"
    );
    assert_eq!(
        malformed_reason(b'Z', b"\0"),
        "unknown transaction status 0x00"
    );
    assert_eq!(
        malformed_reason(b'Z', b""),
        "the body ends inside the transaction status (1 bytes needed, 0 remain)"
    );
    assert_eq!(
        malformed_reason(b'Z', b"II"),
        "1 unexpected bytes after the transaction status"
    );
    assert_eq!(
        decode(b'Z', b"X").unwrap_err().to_string(),
        "malformed ReadyForQuery message: unknown transaction status 0x58 ('X')"
    );
}

#[test]
fn copy_data() {
    assert_eq!(ok(b'd', b""), Message::CopyData(Bytes::new()));
    assert_eq!(
        ok(b'd', b"1\t\\N\n"),
        Message::CopyData(Bytes::from_static(b"1\t\\N\n"))
    );
}

#[test]
fn copy_responses() {
    let body = b"\x01\0\x02\0\x01\0\x00";
    for tag in [b'G', b'H', b'W'] {
        let m = ok(tag, body);
        assert_eq!(m.tag(), tag);
        let r = match m {
            Message::CopyInResponse(r) => {
                assert_eq!(tag, b'G');
                r
            }
            Message::CopyOutResponse(r) => {
                assert_eq!(tag, b'H');
                r
            }
            Message::CopyBothResponse(r) => {
                assert_eq!(tag, b'W');
                r
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(r.format(), 1);
        assert_eq!(r.column_count(), 2);
        assert_eq!(r.column_formats().collect::<Vec<_>>(), [1, 0]);
    }
    let Message::CopyOutResponse(r) = ok(b'H', b"\0\0\0") else {
        panic!()
    };
    assert_eq!((r.format(), r.column_count()), (0, 0));
    assert_eq!(r.column_formats().count(), 0);

    assert_eq!(
        malformed_reason(b'G', b"\0\0\x02\0\x01"),
        "2 column formats need 4 bytes but 2 remain"
    );
    assert_eq!(
        malformed_reason(b'G', b"\0\0\x01\0\x01\0"),
        "1 column formats need 2 bytes but 3 remain"
    );
    assert_eq!(
        malformed_reason(b'H', b"\0\0"),
        "the body ends inside the column count (2 bytes needed, 1 remain)"
    );
    malformed_reason(b'W', b"");
}

// ---------------------------------------------------------------- strings

#[test]
fn command_complete() {
    let tag_of = |tag: &str| {
        let mut body = tag.as_bytes().to_vec();
        body.push(0);
        match ok(b'C', &body) {
            Message::CommandComplete(c) => {
                assert_eq!(c.tag(), tag);
                c.rows()
            }
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(tag_of("INSERT 0 3"), Some(3));
    assert_eq!(tag_of("UPDATE 12"), Some(12));
    assert_eq!(tag_of("DELETE 0"), Some(0));
    assert_eq!(tag_of("SELECT 18446744073709551615"), Some(u64::MAX));
    assert_eq!(tag_of("MOVE 5"), Some(5));
    assert_eq!(tag_of("FETCH 1"), Some(1));
    assert_eq!(tag_of("COPY 1000"), Some(1000));
    assert_eq!(tag_of("MERGE 7"), Some(7));
    assert_eq!(tag_of("CREATE TABLE"), None);
    assert_eq!(tag_of("BEGIN"), None);
    assert_eq!(tag_of("SELECT"), None);
    assert_eq!(tag_of("SELECT +5"), None);
    assert_eq!(tag_of("SELECT 18446744073709551616"), None);
    assert_eq!(tag_of("LISTEN 5"), None);
    assert_eq!(tag_of(""), None);

    assert_eq!(
        malformed_reason(b'C', b"SELECT 1"),
        "the command tag is not NUL-terminated"
    );
    assert_eq!(
        malformed_reason(b'C', b"SELECT 1\0x"),
        "1 unexpected bytes after the command tag"
    );
    assert_eq!(
        malformed_reason(b'C', b"SEL\xc3\0"),
        "the command tag is not valid UTF-8 (invalid byte at body offset 3)"
    );
}

#[test]
fn parameter_status() {
    let Message::ParameterStatus(p) = ok(b'S', b"client_encoding\0UTF8\0") else {
        panic!()
    };
    assert_eq!((p.name(), p.value()), ("client_encoding", "UTF8"));
    let Message::ParameterStatus(p) = ok(b'S', b"application_name\0\0") else {
        panic!()
    };
    assert_eq!((p.name(), p.value()), ("application_name", ""));
    assert_eq!(
        malformed_reason(b'S', b"TimeZone\0UTC"),
        "the parameter value is not NUL-terminated"
    );
    assert_eq!(
        malformed_reason(b'S', b"TimeZone"),
        "the parameter name is not NUL-terminated"
    );
    assert_eq!(
        malformed_reason(b'S', b"a\0b\0c"),
        "1 unexpected bytes after the parameter value"
    );
    malformed_reason(b'S', b"a\0\xff\0");
}

#[test]
fn notification() {
    let Message::NotificationResponse(n) = ok(b'A', b"\0\0\x01\0jobs\0{\"id\":1}\0") else {
        panic!()
    };
    assert_eq!(n.process_id, 256);
    assert_eq!((n.channel(), n.payload()), ("jobs", "{\"id\":1}"));
    assert_eq!(
        malformed_reason(b'A', b"\0\0\x01\0jobs\0"),
        "the payload is not NUL-terminated"
    );
    assert_eq!(
        malformed_reason(b'A', b"\0\0\x01\0j\xffobs\0\0"),
        "the channel name is not valid UTF-8 (invalid byte at body offset 5)"
    );
    malformed_reason(b'A', b"\0\0\x01");
    malformed_reason(b'A', b"\0\0\x01\0a\0b\0c");
}

#[test]
fn negotiate_protocol_version() {
    let mut body = be32(0).to_vec();
    body.extend_from_slice(&be32(2));
    body.extend_from_slice(b"_pq_.a\0_pq_.b\0");
    let Message::NegotiateProtocolVersion(v) = ok(b'v', &body) else {
        panic!()
    };
    assert_eq!(v.newest_minor, 0);
    assert_eq!(
        v.unrecognized_options().collect::<Vec<_>>(),
        ["_pq_.a", "_pq_.b"]
    );

    let Message::NegotiateProtocolVersion(v) = ok(b'v', b"\0\0\0\x02\0\0\0\0") else {
        panic!()
    };
    assert_eq!(v.newest_minor, 2);
    assert_eq!(v.unrecognized_options().count(), 0);

    assert_eq!(
        malformed_reason(b'v', b"\0\0\0\0\xff\xff\xff\xff"),
        "negative option count -1"
    );
    assert_eq!(
        malformed_reason(b'v', b"\0\0\0\0\0\0\0\x02a\0"),
        "the option name 1 is not NUL-terminated"
    );
    assert_eq!(
        malformed_reason(b'v', b"\0\0\0\0\0\0\0\x01a\0b\0"),
        "2 unexpected bytes after the last of 1 options"
    );
    assert_eq!(
        malformed_reason(b'v', b"\0\0\0\0\0\0\0\0x"),
        "1 unexpected bytes after the option count"
    );
    // A huge count is refused as soon as the body runs out.
    malformed_reason(b'v', b"\0\0\0\0\x7f\xff\xff\xff");
    malformed_reason(b'v', b"\0\0\0\0\0\0");
}

// ---------------------------------------------------------------- errors and notices

#[test]
fn error_and_notice_fields() {
    let body = b"SERROR\0VERROR\0C42P01\0Mrelation \"x\" does not exist\0P15\0\0";
    for tag in [b'E', b'N'] {
        let fields = match ok(tag, body) {
            Message::ErrorResponse(f) => {
                assert_eq!(tag, b'E');
                f
            }
            Message::NoticeResponse(f) => {
                assert_eq!(tag, b'N');
                f
            }
            other => panic!("{other:?}"),
        };
        let all: Vec<(u8, &[u8])> = fields.iter().collect();
        assert_eq!(
            all,
            [
                (b'S', &b"ERROR"[..]),
                (b'V', b"ERROR"),
                (b'C', b"42P01"),
                (b'M', b"relation \"x\" does not exist"),
                (b'P', b"15"),
            ]
        );
        assert_eq!(fields.get(b'C'), Some(&b"42P01"[..]));
        assert_eq!(fields.get(b'D'), None);
    }
    let Message::ErrorResponse(empty) = ok(b'E', b"\0") else {
        panic!()
    };
    assert_eq!(empty.iter().count(), 0);
    // Values are raw bytes in the server's encoding, not necessarily UTF-8.
    let Message::NoticeResponse(latin1) = ok(b'N', b"Mcaf\xe9\0\0") else {
        panic!()
    };
    assert_eq!(latin1.get(b'M'), Some(&b"caf\xe9"[..]));
}

#[test]
fn malformed_error_fields() {
    assert_eq!(
        malformed_reason(b'E', b""),
        "the field list is not terminated by a 0 byte"
    );
    assert_eq!(
        malformed_reason(b'E', b"SERROR\0"),
        "the field list is not terminated by a 0 byte"
    );
    assert_eq!(
        malformed_reason(b'E', b"SERROR\0Mboom"),
        "the value of field 1 (M) is not NUL-terminated"
    );
    assert_eq!(
        malformed_reason(b'N', b"SERROR\0\0x"),
        "1 unexpected bytes after the terminating 0 byte"
    );
    assert_eq!(
        malformed_reason(b'N', b"\x01"),
        "the value of field 0 (\\x01) is not NUL-terminated"
    );
}

// ---------------------------------------------------------------- rows

#[test]
fn data_row() {
    let body = b"\0\x04\0\0\0\x03abc\xff\xff\xff\xff\0\0\0\0\0\0\0\x02\x00\x01";
    let Message::DataRow(row) = ok(b'D', body) else {
        panic!()
    };
    assert_eq!(row.column_count(), 4);
    assert_eq!(&row.buffer()[..], &body[..]);
    assert_eq!(
        row.ranges().collect::<Vec<_>>(),
        [Some(6..9), None, Some(17..17), Some(21..23)]
    );
    assert_eq!(
        row.columns().collect::<Vec<_>>(),
        [
            Some(&b"abc"[..]),
            None,
            Some(&b""[..]),
            Some(&b"\x00\x01"[..])
        ]
    );

    let Message::DataRow(empty) = ok(b'D', b"\0\0") else {
        panic!()
    };
    assert_eq!(empty.column_count(), 0);
    assert_eq!(empty.ranges().count(), 0);
}

#[test]
fn malformed_data_rows() {
    let mut body = b"\0\x04".to_vec();
    for _ in 0..3 {
        body.extend_from_slice(&be32(-1));
    }
    body.extend_from_slice(&be32(100));
    body.extend_from_slice(&[7; 12]);
    assert_eq!(
        decode(b'D', &body).unwrap_err().to_string(),
        "malformed DataRow message: column 3 declares 100 bytes but only 12 remain"
    );
    assert_eq!(
        malformed_reason(b'D', b""),
        "the body ends inside the column count (2 bytes needed, 0 remain)"
    );
    assert_eq!(
        malformed_reason(b'D', b"\0"),
        "the body ends inside the column count (2 bytes needed, 1 remain)"
    );
    assert_eq!(
        malformed_reason(b'D', b"\0\x02\0\0\0\x01a\0\0"),
        "the body ends inside the length of column 1 (4 bytes needed, 2 remain)"
    );
    assert_eq!(
        malformed_reason(b'D', b"\0\x01\xff\xff\xff\xfe"),
        "column 0 declares length -2; only -1 (NULL) may be negative"
    );
    assert_eq!(
        malformed_reason(b'D', b"\0\x01\0\0\0\x01ab"),
        "1 unexpected bytes after the last of 1 columns"
    );
    assert_eq!(
        malformed_reason(b'D', b"\0\0x"),
        "1 unexpected bytes after the column count"
    );
    assert_eq!(
        malformed_reason(b'D', b"\0\x01\x7f\xff\xff\xff"),
        "column 0 declares 2147483647 bytes but only 0 remain"
    );
    // A count far above what the body holds fails fast, not after 65535 rounds
    // of work per byte.
    malformed_reason(b'D', b"\xff\xff\xff\xff\xff\xff");
}

#[test]
fn row_description() {
    let mut body = b"\0\x02".to_vec();
    body.extend_from_slice(b"id\0");
    body.extend_from_slice(&0x4000u32.to_be_bytes());
    body.extend_from_slice(&1i16.to_be_bytes());
    body.extend_from_slice(&23u32.to_be_bytes());
    body.extend_from_slice(&4i16.to_be_bytes());
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.extend_from_slice(&1i16.to_be_bytes());
    body.extend_from_slice("prénom\0".as_bytes());
    body.extend_from_slice(&0u32.to_be_bytes());
    body.extend_from_slice(&0i16.to_be_bytes());
    body.extend_from_slice(&1043u32.to_be_bytes());
    body.extend_from_slice(&(-1i16).to_be_bytes());
    body.extend_from_slice(&68i32.to_be_bytes());
    body.extend_from_slice(&0i16.to_be_bytes());
    let Message::RowDescription(desc) = ok(b'T', &body) else {
        panic!()
    };
    assert_eq!(desc.len(), 2);
    assert!(!desc.is_empty());
    assert_eq!(&desc.buffer()[..], &body[..]);
    assert_eq!(
        desc.fields().collect::<Vec<_>>(),
        [
            Field {
                name: "id",
                table_oid: 0x4000,
                column_id: 1,
                type_oid: 23,
                type_size: 4,
                type_modifier: -1,
                format: 1,
            },
            Field {
                name: "prénom",
                table_oid: 0,
                column_id: 0,
                type_oid: 1043,
                type_size: -1,
                type_modifier: 68,
                format: 0,
            },
        ]
    );

    let Message::RowDescription(none) = ok(b'T', b"\0\0") else {
        panic!()
    };
    assert!(none.is_empty());
    assert_eq!(none.fields().count(), 0);

    // An empty name is legal (e.g. `SELECT 1 AS ""`).
    let mut body = b"\0\x01\0".to_vec();
    body.extend_from_slice(&[0; 18]);
    let Message::RowDescription(unnamed) = ok(b'T', &body) else {
        panic!()
    };
    assert_eq!(unnamed.fields().next().unwrap().name, "");
}

#[test]
fn malformed_row_descriptions() {
    assert_eq!(
        malformed_reason(b'T', b"\0\x01id"),
        "the name of field 0 is not NUL-terminated"
    );
    assert_eq!(
        malformed_reason(b'T', b"\0\x01i\xffd\0"),
        "the name of field 0 is not valid UTF-8 (invalid byte at body offset 3)"
    );
    let mut body = b"\0\x01id\0".to_vec();
    body.extend_from_slice(&[0; 17]);
    assert_eq!(
        malformed_reason(b'T', &body),
        "the body ends inside the attributes of field 0 (18 bytes needed, 17 remain)"
    );
    body.extend_from_slice(&[0; 2]);
    assert_eq!(
        malformed_reason(b'T', &body),
        "1 unexpected bytes after the last of 1 fields"
    );
    assert_eq!(
        malformed_reason(b'T', b"\0\0\0"),
        "1 unexpected bytes after the field count"
    );
    malformed_reason(b'T', b"\0");
    malformed_reason(b'T', b"\0\x02a\0");
}

#[test]
fn parameter_description() {
    let Message::ParameterDescription(p) = ok(b't', b"\0\x02\0\0\0\x17\0\0\x04\x13") else {
        panic!()
    };
    assert_eq!(p.len(), 2);
    assert!(!p.is_empty());
    assert_eq!(p.types().collect::<Vec<_>>(), [23, 1043]);
    let Message::ParameterDescription(p) = ok(b't', b"\0\0") else {
        panic!()
    };
    assert!(p.is_empty());
    assert_eq!(p.types().count(), 0);
    assert_eq!(
        malformed_reason(b't', b"\0\x02\0\0\0\x17"),
        "2 parameter types need 8 bytes but 4 remain"
    );
    assert_eq!(
        malformed_reason(b't', b"\0\x01\0\0\0\x17\0"),
        "1 parameter types need 4 bytes but 5 remain"
    );
    malformed_reason(b't', b"");
}

#[test]
fn every_known_tag_has_a_name_and_every_other_byte_none() {
    let known = b"RK23CdcGHWDIEvnNAtS1sZT";
    for b in 0..=u8::MAX {
        assert_eq!(tag::name(b).is_some(), known.contains(&b), "{b:#x}");
    }
}
