//! Malformed binary values a real server never sends, from the scripted
//! fake server: each must be a decode error naming the column, never a
//! panic, and must leave the connection usable.

use std::time::Duration;

use bytes::{BufMut, BytesMut};
use pgpipe::types::{Numeric, Type};
use pgpipe::ErrorKind;
use pgpipe_testkit::{msg, FakeServer, Script};

const BOUND: Duration = Duration::from_secs(20);

/// Answers two extended queries: the first with one column of type `oid`
/// holding `value`, the second with `SELECT 1`.
fn one_value(oid: u32, value: &[u8]) -> Script {
    let mut script = Script::new()
        .expect_startup()
        .send(msg::handshake())
        .expect_until(b'S')
        .send(msg::concat(&[
            msg::parse_complete(),
            msg::bind_complete(),
            msg::row_description(&[("v", oid, 1)]),
            msg::data_row(&[Some(value)]),
            msg::command_complete("SELECT 1"),
            msg::ready_for_query(b'I'),
        ]));
    script = script.expect_until(b'S').send(msg::concat(&[
        msg::parse_complete(),
        msg::bind_complete(),
        msg::row_description(&[("one", Type::INT4.oid(), 1)]),
        msg::data_row(&[Some(&1i32.to_be_bytes())]),
        msg::command_complete("SELECT 1"),
        msg::ready_for_query(b'I'),
    ]));
    script.sleep(Duration::from_secs(2))
}

/// Runs the malformed query, returns the decode error of reading the value
/// as `T` (both through `Row::try_get` and `query_as`), and checks that the
/// connection still answers.
async fn decode_error<T>(oid: u32, value: &[u8]) -> String
where
    T: for<'a> pgpipe::Decode<'a> + std::fmt::Debug,
{
    let server = FakeServer::start(one_value(oid, value)).await.unwrap();
    let client = tokio::time::timeout(BOUND, pgpipe::connect(&server.url()))
        .await
        .expect("connect hung")
        .unwrap();
    let rows = tokio::time::timeout(BOUND, client.query("SELECT v", ()))
        .await
        .expect("query hung")
        .expect("the rows arrive; decoding is lazy");
    let err = rows[0]
        .try_get::<T, _>(0)
        .expect_err("a malformed value must not decode");
    assert_eq!(err.kind(), ErrorKind::Decode, "{err:#}");
    let text = format!("{err:#}");
    assert!(text.contains("column 0 (\"v\")"), "{text}");
    let again = tokio::time::timeout(BOUND, client.query_one("SELECT 1", ()))
        .await
        .expect("second query hung")
        .unwrap();
    assert_eq!(again.get::<i32, _>(0), 1);
    text
}

#[tokio::test]
async fn numeric_with_more_digits_than_its_length() {
    let mut v = BytesMut::new();
    v.put_i16(1000); // ndigits
    v.put_i16(0); // weight
    v.put_u16(0); // sign
    v.put_u16(0); // dscale
    v.put_i16(1); // one digit instead of 1000
    let text = decode_error::<Numeric>(Type::NUMERIC.oid(), &v).await;
    assert!(text.contains("numeric"), "{text}");
}

#[tokio::test]
async fn numeric_with_a_digit_over_9999() {
    let mut v = BytesMut::new();
    v.put_i16(1);
    v.put_i16(0);
    v.put_u16(0);
    v.put_u16(0);
    v.put_i16(10_000);
    decode_error::<Numeric>(Type::NUMERIC.oid(), &v).await;
}

#[tokio::test]
async fn array_whose_dimensions_overflow() {
    let mut v = BytesMut::new();
    v.put_i32(2); // ndim
    v.put_i32(0); // no nulls
    v.put_u32(Type::INT4.oid());
    v.put_i32(i32::MAX); // len
    v.put_i32(1); // lower bound
    v.put_i32(i32::MAX);
    v.put_i32(1);
    decode_error::<Vec<i32>>(Type::INT4_ARRAY.oid(), &v).await;
}

#[tokio::test]
async fn array_claiming_more_elements_than_it_holds() {
    let mut v = BytesMut::new();
    v.put_i32(1);
    v.put_i32(0);
    v.put_u32(Type::INT4.oid());
    v.put_i32(1_000_000);
    v.put_i32(1);
    v.put_i32(4);
    v.put_i32(7);
    decode_error::<Vec<i32>>(Type::INT4_ARRAY.oid(), &v).await;
}

#[tokio::test]
async fn fixed_size_values_of_the_wrong_length() {
    let text = decode_error::<i32>(Type::INT4.oid(), &[0, 0, 1]).await;
    assert!(text.contains("expected 4 bytes, got 3"), "{text}");
    decode_error::<i64>(Type::INT8.oid(), &[0; 9]).await;
    decode_error::<f64>(Type::FLOAT8.oid(), &[0; 4]).await;
    decode_error::<bool>(Type::BOOL.oid(), &[]).await;
    // An array whose int4 element is 2 bytes long.
    let mut v = BytesMut::new();
    v.put_i32(1);
    v.put_i32(0);
    v.put_u32(Type::INT4.oid());
    v.put_i32(1);
    v.put_i32(1);
    v.put_i32(2);
    v.put_i16(7);
    decode_error::<Vec<i32>>(Type::INT4_ARRAY.oid(), &v).await;
}
