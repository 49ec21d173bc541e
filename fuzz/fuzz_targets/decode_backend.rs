//! Feeds arbitrary bytes to the backend decoder and reads every accessor of
//! every message it accepts: parsing must reject anything an accessor could
//! trip over, so no input may panic here.

#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use pgpipe_proto::backend::{Decoder, Message};

fuzz_target!(|data: &[u8]| {
    // The first byte picks a small maximum sometimes, so the size check runs
    // against lengths the fuzzer can actually reach.
    let decoder = match data.first() {
        Some(&b) if b & 1 == 1 => Decoder::new(usize::from(b) * 4),
        _ => Decoder::default(),
    };
    let _ = decoder.header(data);
    let mut buf = BytesMut::from(data);
    loop {
        let before = buf.len();
        match decoder.decode(&mut buf) {
            Ok(Some(message)) => exercise(&message),
            Ok(None) => break,
            Err(e) => {
                let _ = e.to_string();
                // Header errors consume nothing; body errors consume the
                // message, and decoding may go on past them.
                if buf.len() == before {
                    break;
                }
            }
        }
        assert!(buf.len() < before, "decode made no progress");
    }
});

fn exercise(message: &Message) {
    let _ = message.tag();
    let _ = format!("{message:?}");
    let _ = message.clone() == *message;
    match message {
        Message::AuthenticationOk
        | Message::AuthenticationKerberosV5
        | Message::AuthenticationCleartextPassword
        | Message::AuthenticationScmCredential
        | Message::AuthenticationGss
        | Message::AuthenticationSspi
        | Message::BindComplete
        | Message::CloseComplete
        | Message::CopyDone
        | Message::EmptyQueryResponse
        | Message::NoData
        | Message::ParseComplete
        | Message::PortalSuspended => {}
        Message::AuthenticationMd5Password { salt } => {
            let _ = salt;
        }
        Message::AuthenticationGssContinue(b)
        | Message::AuthenticationSaslContinue(b)
        | Message::AuthenticationSaslFinal(b)
        | Message::CopyData(b) => {
            let _ = b.len();
        }
        Message::AuthenticationSasl(mechanisms) => {
            for name in mechanisms.iter() {
                let _ = name.len();
            }
            let _ = mechanisms.contains("SCRAM-SHA-256");
        }
        Message::BackendKeyData {
            process_id,
            secret_key,
        } => {
            let _ = (process_id, secret_key);
        }
        Message::CommandComplete(c) => {
            let _ = (c.tag(), c.rows());
        }
        Message::CopyInResponse(c) | Message::CopyOutResponse(c) | Message::CopyBothResponse(c) => {
            let _ = c.format();
            assert_eq!(c.column_formats().count(), c.column_count());
        }
        Message::DataRow(row) => {
            let len = row.buffer().len();
            let mut count = 0;
            for range in row.ranges().flatten() {
                assert!(range.start <= range.end && range.end <= len);
                count += 1;
            }
            let non_null = row.columns().flatten().count();
            assert_eq!(count, non_null);
            assert_eq!(row.columns().count(), row.column_count());
        }
        Message::ErrorResponse(fields) | Message::NoticeResponse(fields) => {
            for (code, value) in fields.iter() {
                assert_ne!(code, 0);
                assert!(!value.contains(&0));
            }
            let _ = fields.get(b'C');
        }
        Message::NegotiateProtocolVersion(v) => {
            let _ = v.newest_minor;
            for option in v.unrecognized_options() {
                let _ = option.len();
            }
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
        Message::ReadyForQuery(status) => {
            let _ = status;
        }
        Message::RowDescription(d) => {
            let _ = (d.is_empty(), d.buffer().len());
            assert_eq!(d.fields().count(), d.len());
            for field in d.fields() {
                let _ = (
                    field.name,
                    field.table_oid,
                    field.column_id,
                    field.type_oid,
                    field.type_size,
                    field.type_modifier,
                    field.format,
                );
            }
        }
        _ => {}
    }
}
