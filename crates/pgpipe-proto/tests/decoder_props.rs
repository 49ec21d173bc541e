//! Property tests of the backend decoder: no input makes it panic, and how a
//! stream is split across reads never changes what it decodes to.

use bytes::{BufMut, BytesMut};
use pgpipe_proto::backend::{tag, Decoder, Message, TransactionStatus};
use pgpipe_proto::DecodeError;
use proptest::prelude::*;
use proptest::sample::Index;

/// Reads every accessor of a message, so a validation gap that would let an
/// accessor panic shows up here.
fn exercise(message: &Message) {
    let _ = message.tag();
    match message {
        Message::AuthenticationSasl(m) => {
            let _ = m.iter().count();
            let _ = m.contains("SCRAM-SHA-256");
        }
        Message::CommandComplete(c) => {
            let _ = (c.tag(), c.rows());
        }
        Message::CopyInResponse(c) | Message::CopyOutResponse(c) | Message::CopyBothResponse(c) => {
            let _ = (c.format(), c.column_count(), c.column_formats().count());
        }
        Message::DataRow(row) => {
            let _ = (row.column_count(), row.buffer().len());
            for range in row.ranges().flatten() {
                assert!(range.end <= row.buffer().len());
            }
            assert_eq!(row.columns().count(), row.column_count());
        }
        Message::ErrorResponse(f) | Message::NoticeResponse(f) => {
            let _ = f.iter().count();
            let _ = f.get(b'M');
        }
        Message::NegotiateProtocolVersion(v) => {
            let _ = (v.newest_minor, v.unrecognized_options().count());
        }
        Message::NotificationResponse(n) => {
            let _ = (n.process_id, n.channel(), n.payload());
        }
        Message::ParameterDescription(p) => {
            assert_eq!(p.types().count(), p.len());
            let _ = p.is_empty();
        }
        Message::ParameterStatus(p) => {
            let _ = (p.name(), p.value());
        }
        Message::RowDescription(d) => {
            assert_eq!(d.fields().count(), d.len());
            let _ = (d.is_empty(), d.buffer().len());
        }
        _ => {}
    }
}

/// Decodes everything `buf` holds, stopping at the first error as a client
/// would.
fn drain(
    decoder: &Decoder,
    buf: &mut BytesMut,
    out: &mut Vec<Result<Message, DecodeError>>,
) -> bool {
    loop {
        let before = buf.len();
        match decoder.decode(buf) {
            Ok(Some(m)) => {
                assert!(buf.len() < before, "a decoded message consumes bytes");
                exercise(&m);
                out.push(Ok(m));
            }
            Ok(None) => return true,
            Err(e) => {
                let _ = e.to_string();
                out.push(Err(e));
                return false;
            }
        }
    }
}

fn decode_whole(decoder: &Decoder, stream: &[u8]) -> Vec<Result<Message, DecodeError>> {
    let mut out = Vec::new();
    drain(decoder, &mut BytesMut::from(stream), &mut out);
    out
}

/// Feeds `stream` in chunks cut at `cuts`, as successive socket reads would.
fn decode_split(
    decoder: &Decoder,
    stream: &[u8],
    cuts: &[Index],
) -> Vec<Result<Message, DecodeError>> {
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(stream.len() + 1)).collect();
    points.push(stream.len());
    points.sort_unstable();
    let mut out = Vec::new();
    let mut buf = BytesMut::new();
    let mut from = 0;
    for to in points {
        buf.extend_from_slice(&stream[from..to]);
        from = to;
        if !drain(decoder, &mut buf, &mut out) {
            break;
        }
    }
    out
}

const TAGS: &[u8] = b"RK23CdcGHWDIEvnNAtS1sZT";

fn framed(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(body.len() + 5);
    v.push(tag);
    v.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// A message with a known type and a correct length but a random body.
fn random_body_message() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(TAGS),
        prop::collection::vec(any::<u8>(), 0..48),
    )
        .prop_map(|(tag, mut body)| {
            // Authentication bodies start with a code; make the known ones common.
            if tag == b'R' && body.len() >= 4 {
                body[..3].fill(0);
                body[3] %= 14;
            }
            framed(tag, &body)
        })
}

/// A model of a valid backend message: what it should decode to.
#[derive(Debug, Clone)]
enum Model {
    AuthenticationOk,
    Md5([u8; 4]),
    Sasl(Vec<String>),
    SaslContinue(Vec<u8>),
    BackendKeyData(i32, i32),
    Empty(u8),
    CommandComplete(String),
    CopyData(Vec<u8>),
    CopyResponse(u8, i8, Vec<i16>),
    DataRow(Vec<Option<Vec<u8>>>),
    Fields(u8, Vec<(u8, Vec<u8>)>),
    Negotiate(i32, Vec<String>),
    Notification(i32, String, String),
    ParameterDescription(Vec<u32>),
    ParameterStatus(String, String),
    ReadyForQuery(u8),
    RowDescription(Vec<(String, u32, i16, u32, i16, i32, i16)>),
}

fn text() -> impl Strategy<Value = String> {
    "[^\u{0}]{0,12}"
}

fn model() -> impl Strategy<Value = Model> {
    let no_nul = prop::collection::vec(1u8..=255, 0..12);
    prop_oneof![
        Just(Model::AuthenticationOk),
        any::<[u8; 4]>().prop_map(Model::Md5),
        prop::collection::vec("[^\u{0}]{1,12}", 0..4).prop_map(Model::Sasl),
        prop::collection::vec(any::<u8>(), 0..24).prop_map(Model::SaslContinue),
        (any::<i32>(), any::<i32>()).prop_map(|(p, k)| Model::BackendKeyData(p, k)),
        prop::sample::select(&b"123nsIc"[..]).prop_map(Model::Empty),
        text().prop_map(Model::CommandComplete),
        prop::collection::vec(any::<u8>(), 0..24).prop_map(Model::CopyData),
        (
            prop::sample::select(&b"GHW"[..]),
            any::<i8>(),
            prop::collection::vec(any::<i16>(), 0..6)
        )
            .prop_map(|(t, f, c)| Model::CopyResponse(t, f, c)),
        prop::collection::vec(
            prop::option::of(prop::collection::vec(any::<u8>(), 0..12)),
            0..8
        )
        .prop_map(Model::DataRow),
        (
            prop::sample::select(&b"EN"[..]),
            prop::collection::vec((1u8..=255, no_nul), 0..6)
        )
            .prop_map(|(t, f)| Model::Fields(t, f)),
        (any::<i32>(), prop::collection::vec(text(), 0..4))
            .prop_map(|(m, o)| Model::Negotiate(m, o)),
        (any::<i32>(), text(), text()).prop_map(|(p, c, m)| Model::Notification(p, c, m)),
        prop::collection::vec(any::<u32>(), 0..8).prop_map(Model::ParameterDescription),
        (text(), text()).prop_map(|(n, v)| Model::ParameterStatus(n, v)),
        prop::sample::select(&b"ITE"[..]).prop_map(Model::ReadyForQuery),
        prop::collection::vec(
            (
                text(),
                any::<u32>(),
                any::<i16>(),
                any::<u32>(),
                any::<i16>(),
                any::<i32>(),
                any::<i16>()
            ),
            0..5
        )
        .prop_map(Model::RowDescription),
    ]
}

fn put_cstr(b: &mut Vec<u8>, s: &[u8]) {
    b.extend_from_slice(s);
    b.push(0);
}

fn encode(model: &Model) -> Vec<u8> {
    let mut b = Vec::new();
    let tag = match model {
        Model::AuthenticationOk => {
            b.put_i32(0);
            tag::AUTHENTICATION
        }
        Model::Md5(salt) => {
            b.put_i32(5);
            b.extend_from_slice(salt);
            tag::AUTHENTICATION
        }
        Model::Sasl(mechs) => {
            b.put_i32(10);
            for m in mechs {
                put_cstr(&mut b, m.as_bytes());
            }
            b.push(0);
            tag::AUTHENTICATION
        }
        Model::SaslContinue(data) => {
            b.put_i32(11);
            b.extend_from_slice(data);
            tag::AUTHENTICATION
        }
        Model::BackendKeyData(p, k) => {
            b.put_i32(*p);
            b.put_i32(*k);
            tag::BACKEND_KEY_DATA
        }
        Model::Empty(t) => *t,
        Model::CommandComplete(t) => {
            put_cstr(&mut b, t.as_bytes());
            tag::COMMAND_COMPLETE
        }
        Model::CopyData(d) => {
            b.extend_from_slice(d);
            tag::COPY_DATA
        }
        Model::CopyResponse(t, f, cols) => {
            b.put_i8(*f);
            b.put_u16(cols.len() as u16);
            for c in cols {
                b.put_i16(*c);
            }
            *t
        }
        Model::DataRow(cols) => {
            b.put_u16(cols.len() as u16);
            for c in cols {
                match c {
                    None => b.put_i32(-1),
                    Some(v) => {
                        b.put_i32(v.len() as i32);
                        b.extend_from_slice(v);
                    }
                }
            }
            tag::DATA_ROW
        }
        Model::Fields(t, fields) => {
            for (code, value) in fields {
                b.push(*code);
                put_cstr(&mut b, value);
            }
            b.push(0);
            *t
        }
        Model::Negotiate(minor, options) => {
            b.put_i32(*minor);
            b.put_i32(options.len() as i32);
            for o in options {
                put_cstr(&mut b, o.as_bytes());
            }
            tag::NEGOTIATE_PROTOCOL_VERSION
        }
        Model::Notification(pid, channel, payload) => {
            b.put_i32(*pid);
            put_cstr(&mut b, channel.as_bytes());
            put_cstr(&mut b, payload.as_bytes());
            tag::NOTIFICATION_RESPONSE
        }
        Model::ParameterDescription(types) => {
            b.put_u16(types.len() as u16);
            for t in types {
                b.put_u32(*t);
            }
            tag::PARAMETER_DESCRIPTION
        }
        Model::ParameterStatus(n, v) => {
            put_cstr(&mut b, n.as_bytes());
            put_cstr(&mut b, v.as_bytes());
            tag::PARAMETER_STATUS
        }
        Model::ReadyForQuery(s) => {
            b.push(*s);
            tag::READY_FOR_QUERY
        }
        Model::RowDescription(fields) => {
            b.put_u16(fields.len() as u16);
            for (name, table, column, ty, size, modifier, format) in fields {
                put_cstr(&mut b, name.as_bytes());
                b.put_u32(*table);
                b.put_i16(*column);
                b.put_u32(*ty);
                b.put_i16(*size);
                b.put_i32(*modifier);
                b.put_i16(*format);
            }
            tag::ROW_DESCRIPTION
        }
    };
    framed(tag, &b)
}

/// Checks a decoded message against its model through the public accessors.
fn check(model: &Model, message: &Message) -> Result<(), TestCaseError> {
    match (model, message) {
        (Model::AuthenticationOk, Message::AuthenticationOk) => {}
        (Model::Md5(s), Message::AuthenticationMd5Password { salt }) => prop_assert_eq!(s, salt),
        (Model::Sasl(mechs), Message::AuthenticationSasl(m)) => {
            prop_assert_eq!(
                m.iter().collect::<Vec<_>>(),
                mechs.iter().map(String::as_str).collect::<Vec<_>>()
            );
        }
        (Model::SaslContinue(d), Message::AuthenticationSaslContinue(b)) => {
            prop_assert_eq!(&d[..], &b[..])
        }
        (
            Model::BackendKeyData(p, k),
            Message::BackendKeyData {
                process_id,
                secret_key,
            },
        ) => {
            prop_assert_eq!((p, &k.to_be_bytes()[..]), (process_id, &secret_key[..]));
        }
        (Model::Empty(t), m) => prop_assert_eq!(*t, m.tag()),
        (Model::CommandComplete(t), Message::CommandComplete(c)) => {
            prop_assert_eq!(t.as_str(), c.tag())
        }
        (Model::CopyData(d), Message::CopyData(b)) => prop_assert_eq!(&d[..], &b[..]),
        (Model::CopyResponse(t, f, cols), m) => {
            prop_assert_eq!(*t, m.tag());
            let (Message::CopyInResponse(r)
            | Message::CopyOutResponse(r)
            | Message::CopyBothResponse(r)) = m
            else {
                return Err(TestCaseError::fail(format!("{m:?}")));
            };
            prop_assert_eq!(r.format(), *f);
            prop_assert_eq!(r.column_count(), cols.len());
            prop_assert_eq!(r.column_formats().collect::<Vec<_>>(), cols.clone());
        }
        (Model::DataRow(cols), Message::DataRow(row)) => {
            prop_assert_eq!(row.column_count(), cols.len());
            let got: Vec<Option<Vec<u8>>> = row.columns().map(|c| c.map(<[u8]>::to_vec)).collect();
            prop_assert_eq!(&got, cols);
            for (range, col) in row.ranges().zip(cols) {
                prop_assert_eq!(range.map(|r| row.buffer()[r].to_vec()), col.clone());
            }
        }
        (Model::Fields(t, fields), m) => {
            prop_assert_eq!(*t, m.tag());
            let (Message::ErrorResponse(f) | Message::NoticeResponse(f)) = m else {
                return Err(TestCaseError::fail(format!("{m:?}")));
            };
            let got: Vec<(u8, Vec<u8>)> = f.iter().map(|(c, v)| (c, v.to_vec())).collect();
            prop_assert_eq!(&got, fields);
        }
        (Model::Negotiate(minor, options), Message::NegotiateProtocolVersion(v)) => {
            prop_assert_eq!(v.newest_minor, *minor);
            prop_assert_eq!(
                v.unrecognized_options().collect::<Vec<_>>(),
                options.iter().map(String::as_str).collect::<Vec<_>>()
            );
        }
        (Model::Notification(pid, channel, payload), Message::NotificationResponse(n)) => {
            prop_assert_eq!(
                (n.process_id, n.channel(), n.payload()),
                (*pid, channel.as_str(), payload.as_str())
            );
        }
        (Model::ParameterDescription(types), Message::ParameterDescription(p)) => {
            prop_assert_eq!(p.len(), types.len());
            prop_assert_eq!(&p.types().collect::<Vec<_>>(), types);
        }
        (Model::ParameterStatus(n, v), Message::ParameterStatus(p)) => {
            prop_assert_eq!((p.name(), p.value()), (n.as_str(), v.as_str()));
        }
        (Model::ReadyForQuery(s), Message::ReadyForQuery(status)) => {
            let expected = match s {
                b'I' => TransactionStatus::Idle,
                b'T' => TransactionStatus::InTransaction,
                _ => TransactionStatus::Failed,
            };
            prop_assert_eq!(*status, expected);
        }
        (Model::RowDescription(fields), Message::RowDescription(d)) => {
            prop_assert_eq!(d.len(), fields.len());
            for (f, (name, table, column, ty, size, modifier, format)) in d.fields().zip(fields) {
                prop_assert_eq!(f.name, name.as_str());
                prop_assert_eq!(
                    (
                        f.table_oid,
                        f.column_id,
                        f.type_oid,
                        f.type_size,
                        f.type_modifier,
                        f.format
                    ),
                    (*table, *column, *ty, *size, *modifier, *format)
                );
            }
        }
        (model, message) => {
            return Err(TestCaseError::fail(format!(
                "{model:?} decoded as {message:?}"
            )));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        cuts in prop::collection::vec(any::<Index>(), 0..8),
    ) {
        for decoder in [Decoder::default(), Decoder::new(64)] {
            let _ = decoder.header(&bytes);
            let whole = decode_whole(&decoder, &bytes);
            prop_assert_eq!(decode_split(&decoder, &bytes, &cuts), whole);
        }
    }

    #[test]
    fn random_bodies_never_panic(
        messages in prop::collection::vec(random_body_message(), 0..12),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        let stream = messages.concat();
        let decoder = Decoder::default();
        let whole = decode_whole(&decoder, &stream);
        prop_assert_eq!(decode_split(&decoder, &stream, &cuts), whole);
        // Every body is framed correctly, so each message is consumed, valid
        // or not, and decoding carries on past errors in bodies.
        let mut buf = BytesMut::from(&stream[..]);
        for _ in &messages {
            match decoder.decode(&mut buf) {
                Ok(Some(m)) => exercise(&m),
                Ok(None) => return Err(TestCaseError::fail("complete message reported partial")),
                Err(e) => { let _ = e.to_string(); }
            }
        }
        prop_assert!(buf.is_empty());
    }

    #[test]
    fn valid_messages_decode_the_same_however_split(
        models in prop::collection::vec(model(), 0..24),
        cuts in prop::collection::vec(any::<Index>(), 0..16),
    ) {
        let stream: Vec<u8> = models.iter().flat_map(encode).collect();
        let decoder = Decoder::default();
        let whole = decode_whole(&decoder, &stream);
        prop_assert_eq!(whole.len(), models.len());
        for (model, decoded) in models.iter().zip(&whole) {
            match decoded {
                Ok(message) => check(model, message)?,
                Err(e) => return Err(TestCaseError::fail(format!("{model:?}: {e}"))),
            }
        }
        prop_assert_eq!(decode_split(&decoder, &stream, &cuts), whole);
    }

    #[test]
    fn truncating_a_valid_message_is_refused(model in model(), cut in any::<Index>()) {
        // Shrink the declared length so the body loses its tail: unless the
        // tail was free-form data, the decoder must notice.
        let mut bytes = encode(&model);
        let body_len = bytes.len() - 5;
        if body_len == 0 {
            return Ok(());
        }
        let new_len = cut.index(body_len);
        bytes.truncate(5 + new_len);
        bytes[1..5].copy_from_slice(&(new_len as i32 + 4).to_be_bytes());
        let result = Decoder::default().decode(&mut BytesMut::from(&bytes[..]));
        let free_form = matches!(model, Model::CopyData(_))
            // Cutting only into the SASL challenge leaves a valid message.
            || (matches!(model, Model::SaslContinue(_)) && new_len >= 4);
        if !free_form {
            prop_assert!(result.is_err(), "{:?} cut to {} decoded as {:?}", model, new_len, result);
        }
    }
}
