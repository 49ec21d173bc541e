//! Arrays against the real server: `Vec<T>`, `Vec<Option<T>>`, slices and
//! `[T; N]` as parameters, `Array<T>` for several dimensions and lower
//! bounds, both as bound parameters and as literals selected from SQL.

mod common;

use std::fmt::Debug;

use common::values::{literal, round_trip};
use common::{bounded, connect, database, server_major};
use pgpipe::types::{Array, Dimension};
use pgpipe::{Client, Decode, Encode, ErrorKind};

#[tokio::test]
async fn integer_arrays_both_ways() {
    bounded(async {
        let db = database("arr_int");
        let client = connect(&db).await;
        round_trip(
            &client,
            "int2[]",
            vec![i16::MIN, 0, i16::MAX],
            "{-32768,0,32767}",
        )
        .await;
        round_trip(
            &client,
            "int4[]",
            vec![i32::MIN, -1, i32::MAX],
            "{-2147483648,-1,2147483647}",
        )
        .await;
        round_trip(
            &client,
            "int8[]",
            vec![i64::MIN, i64::MAX],
            "{-9223372036854775808,9223372036854775807}",
        )
        .await;
        round_trip(&client, "oid[]", vec![0u32, u32::MAX], "{0,4294967295}").await;
        assert_eq!(
            literal::<Vec<i32>>(&client, "ARRAY[1,2,3]::int4[]").await,
            [1, 2, 3]
        );
        assert_eq!(
            literal::<Vec<i16>>(&client, "'{7,-8}'::int2[]").await,
            [7, -8]
        );
        assert_eq!(
            literal::<Vec<i64>>(&client, "'{-9223372036854775808}'::int8[]").await,
            [i64::MIN]
        );
        // Widening is accepted for elements as for scalars.
        assert_eq!(
            literal::<Vec<i64>>(&client, "'{1,2}'::int4[]").await,
            [1, 2]
        );
        // The parameter can be used where PostgreSQL expects an array.
        let row = client
            .query_one("SELECT 3 = ANY($1), cardinality($1)", (vec![1i32, 2, 3],))
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0));
        assert_eq!(row.get::<i32, _>(1), 3);
    })
    .await
}

#[tokio::test]
async fn nulls_in_arrays() {
    bounded(async {
        let db = database("arr_null");
        let client = connect(&db).await;
        round_trip(
            &client,
            "int4[]",
            vec![Some(1), None, Some(3)],
            "{1,NULL,3}",
        )
        .await;
        round_trip(&client, "text[]", vec![None::<String>], "{NULL}").await;
        assert_eq!(
            literal::<Vec<Option<i32>>>(&client, "ARRAY[1,2,NULL]::int4[]").await,
            [Some(1), Some(2), None]
        );
        // Without Option a NULL element is an error that says where it is.
        let row = client
            .query_one("SELECT ARRAY[1,NULL]::int4[]", ())
            .await
            .unwrap();
        let err = row.try_get::<Vec<i32>, _>(0).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        let msg = err.to_string();
        assert!(
            msg.contains("int4[] element [2]") && msg.contains("NULL"),
            "{msg}"
        );
        // A NULL array is None.
        let none: Option<Vec<i32>> = literal(&client, "NULL::int4[]").await;
        assert_eq!(none, None);
        let row = client
            .query_one("SELECT $1::int4[]", (None::<Vec<i32>>,))
            .await
            .unwrap();
        assert_eq!(row.get::<Option<Vec<i32>>, _>(0), None);
        // The has-null flag is right: the server checks array_position of NULL.
        let row = client
            .query_one("SELECT array_position($1, NULL)", (vec![Some(5i64), None],))
            .await
            .unwrap();
        assert_eq!(row.get::<i32, _>(0), 2);
    })
    .await
}

#[tokio::test]
async fn empty_arrays() {
    bounded(async {
        let db = database("arr_empty");
        let client = connect(&db).await;
        round_trip(&client, "int4[]", Vec::<i32>::new(), "{}").await;
        round_trip(&client, "text[]", Vec::<String>::new(), "{}").await;
        round_trip(&client, "int8[]", Array::<i64>::default(), "{}").await;
        let row = client
            .query_one(
                "SELECT cardinality($1::int4[]), array_ndims($1::int4[]) IS NULL, $1 = '{}'::int4[]",
                (Vec::<i32>::new(),),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<i32, _>(0), 0);
        assert!(row.get::<bool, _>(1));
        assert!(row.get::<bool, _>(2));
        assert!(literal::<Vec<i32>>(&client, "'{}'::int4[]").await.is_empty());
        assert!(literal::<Vec<String>>(&client, "ARRAY[]::text[]").await.is_empty());
        let a: Array<i32> = literal(&client, "'{}'::int4[]").await;
        assert_eq!((a.ndim(), a.len()), (0, 0));
    })
    .await
}

#[tokio::test]
async fn two_dimensional_arrays() {
    bounded(async {
        let db = database("arr_2d");
        let client = connect(&db).await;
        let a: Array<i32> = literal(&client, "'{{1,2,3},{4,5,6}}'::int4[]").await;
        assert_eq!(
            a.dims(),
            [
                Dimension {
                    len: 2,
                    lower_bound: 1
                },
                Dimension {
                    len: 3,
                    lower_bound: 1
                }
            ]
        );
        assert_eq!(a.elements(), [1, 2, 3, 4, 5, 6]);
        assert_eq!(a.get(&[2, 1]), Some(&4));
        assert_eq!(
            a.clone().into_rows().unwrap(),
            vec![vec![1, 2, 3], vec![4, 5, 6]]
        );
        round_trip(&client, "int4[]", a, "{{1,2,3},{4,5,6}}").await;

        // Subscripts agree with the server's.
        let m = Array::from_rows(vec![vec![Some("a"), None], vec![Some("c"), Some("d")]]).unwrap();
        let row = client
            .query_one(
                "SELECT $1::text[], $1[2][1], array_dims($1), $1[1][2] IS NULL",
                (&m,),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<Array<Option<&str>>, _>(0), m);
        assert_eq!(row.get::<&str, _>(1), "c");
        assert_eq!(row.get::<&str, _>(2), "[1:2][1:2]");
        assert!(row.get::<bool, _>(3));

        // Nested Vecs, one level per dimension, both ways.
        let nested: Vec<Vec<i32>> = literal(&client, "'{{1,2,3},{4,5,6}}'::int4[]").await;
        assert_eq!(nested, [[1, 2, 3], [4, 5, 6]]);
        round_trip(
            &client,
            "int4[]",
            vec![vec![1i64, 2], vec![3, 4]],
            "{{1,2},{3,4}}",
        )
        .await;
        round_trip(
            &client,
            "text[]",
            vec![vec![Some("a b".to_owned()), None]],
            "{{\"a b\",NULL}}",
        )
        .await;
        round_trip(
            &client,
            "int2[]",
            vec![vec![vec![1i16], vec![2]], vec![vec![3], vec![4]]],
            "{{{1},{2}},{{3},{4}}}",
        )
        .await;
        let row = client
            .query_one(
                "SELECT array_dims($1::int4[])",
                ([[1i32, 2, 3], [4, 5, 6]],),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), "[1:2][1:3]");
        let row = client
            .query_one("SELECT $1::int4[]", (vec![vec![1i32, 2], vec![3]],))
            .await;
        let msg = row.unwrap_err().to_string();
        assert!(msg.contains("rectangular"), "{msg}");
        let row = client
            .query_one("SELECT '{{a,b},{c,d}}'::text[]", ())
            .await
            .unwrap();
        let borrowed: Vec<Vec<&str>> = row.get(0);
        assert_eq!(borrowed, [["a", "b"], ["c", "d"]]);
        let row = client
            .query_one("SELECT '{1,2}'::int4[]", ())
            .await
            .unwrap();
        let msg = row.try_get::<Vec<Vec<i32>>, _>(0).unwrap_err().to_string();
        assert!(msg.contains("1-dimensional int4[]"), "{msg}");

        // A multi-dimensional value into Vec<T> is an error naming the fix.
        let row = client
            .query_one("SELECT '{{1,2},{3,4}}'::int4[]", ())
            .await
            .unwrap();
        let msg = row.try_get::<Vec<i32>, _>(0).unwrap_err().to_string();
        assert!(
            msg.contains("2-dimensional int4[]") && msg.contains("Array<T>"),
            "{msg}"
        );

        // Three dimensions and the maximum of six.
        let cube: Array<i16> = literal(&client, "'{{{1,2},{3,4}},{{5,6},{7,8}}}'::int2[]").await;
        assert_eq!(cube.ndim(), 3);
        assert_eq!(cube.get(&[2, 1, 2]), Some(&6));
        round_trip(&client, "int2[]", cube, "{{{1,2},{3,4}},{{5,6},{7,8}}}").await;
        let six: Array<i32> = literal(&client, "'{{{{{{42}}}}}}'::int4[]").await;
        assert_eq!(six.ndim(), 6);
        round_trip(&client, "int4[]", six, "{{{{{{42}}}}}}").await;
    })
    .await
}

#[tokio::test]
async fn lower_bounds_other_than_one() {
    bounded(async {
        let db = database("arr_lb");
        let client = connect(&db).await;
        let a: Array<i32> = literal(&client, "'[0:2]={1,2,3}'::int4[]").await;
        assert_eq!(
            a.dims(),
            [Dimension {
                len: 3,
                lower_bound: 0
            }]
        );
        assert_eq!(a.get(&[0]), Some(&1));
        // Vec<T> keeps the values, not the bound.
        assert_eq!(
            literal::<Vec<i32>>(&client, "'[0:2]={1,2,3}'::int4[]").await,
            [1, 2, 3]
        );

        let b = Array::from_vec(vec![10i64, 20, 30])
            .with_lower_bounds(&[-5])
            .unwrap();
        round_trip(&client, "int8[]", b.clone(), "[-5:-3]={10,20,30}").await;
        let row = client
            .query_one("SELECT array_lower($1, 1), $1[-4]", (&b,))
            .await
            .unwrap();
        assert_eq!(row.get::<i32, _>(0), -5);
        assert_eq!(row.get::<i64, _>(1), 20);

        let m: Array<i32> = literal(&client, "'[2:3][-1:0]={{1,2},{3,4}}'::int4[]").await;
        assert_eq!(
            m.dims(),
            [
                Dimension {
                    len: 2,
                    lower_bound: 2
                },
                Dimension {
                    len: 2,
                    lower_bound: -1
                }
            ]
        );
        assert_eq!(m.get(&[3, -1]), Some(&3));
        round_trip(&client, "int4[]", m, "[2:3][-1:0]={{1,2},{3,4}}").await;
        let top = Array::from_vec(vec![1])
            .with_lower_bounds(&[i32::MAX - 1])
            .unwrap();
        round_trip(&client, "int4[]", top, "[2147483646:2147483646]={1}").await;
        let low = Array::from_vec(vec![1, 2])
            .with_lower_bounds(&[i32::MIN])
            .unwrap();
        round_trip(&client, "int4[]", low, "[-2147483648:-2147483647]={1,2}").await;
        // The same limit as the server's, checked before sending.
        assert!(Array::from_vec(vec![1])
            .with_lower_bounds(&[i32::MAX])
            .is_err());
    })
    .await
}

#[tokio::test]
async fn float_and_bool_arrays() {
    bounded(async {
        let db = database("arr_float");
        let client = connect(&db).await;
        let v = vec![
            1.5f64,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            f64::MIN_POSITIVE,
        ];
        let row = client
            .query_one("SELECT $1::float8[], $1::float8[]::text", (&v,))
            .await
            .unwrap();
        let back: Vec<f64> = row.get(0);
        assert_eq!(
            back.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
            v.iter().map(|f| f.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(
            row.get::<&str, _>(1),
            "{1.5,Infinity,-Infinity,-0,2.2250738585072014e-308}"
        );
        let nan: Vec<f32> = literal(&client, "'{NaN,-Infinity,3.25}'::float4[]").await;
        assert!(nan[0].is_nan());
        assert_eq!(&nan[1..], [f32::NEG_INFINITY, 3.25]);
        let row = client
            .query_one("SELECT $1::float4[]", (vec![f32::NAN],))
            .await
            .unwrap();
        assert!(row.get::<Vec<f32>, _>(0)[0].is_nan());
        round_trip(&client, "bool[]", vec![true, false], "{t,f}").await;
        round_trip(&client, "bool[]", vec![Some(true), None], "{t,NULL}").await;
        assert_eq!(
            literal::<Vec<bool>>(&client, "ARRAY[true, false, true]").await,
            [true, false, true]
        );
    })
    .await
}

#[tokio::test]
async fn text_arrays() {
    bounded(async {
        let db = database("arr_text");
        let client = connect(&db).await;
        let tricky = vec![
            "plain".to_owned(),
            String::new(),
            "with, comma".to_owned(),
            "quote \" and \\ backslash".to_owned(),
            "NULL".to_owned(),
            "{braces}".to_owned(),
            "emoji \u{1F600} and \u{10FFFF}".to_owned(),
        ];
        round_trip(
            &client,
            "text[]",
            tricky.clone(),
            "{plain,\"\",\"with, comma\",\"quote \\\" and \\\\ backslash\",\"NULL\",\"{braces}\",\"emoji \u{1F600} and \u{10FFFF}\"}",
        )
        .await;
        round_trip(&client, "varchar[]", vec!["a".to_owned(), "b c".to_owned()], "{a,\"b c\"}").await;
        round_trip(&client, "name[]", vec!["pg_class".to_owned()], "{pg_class}").await;
        // Borrowed elements from the row.
        let row = client.query_one("SELECT ARRAY['x', 'yz']::text[]", ()).await.unwrap();
        let v: Vec<&str> = row.get(0);
        assert_eq!(v, ["x", "yz"]);
        // &str elements as a parameter, and as a slice.
        let words: &[&str] = &["a", "b"];
        let row = client.query_one("SELECT array_to_string($1::text[], '-')", (words,)).await.unwrap();
        assert_eq!(row.get::<&str, _>(0), "a-b");
        let literal_text: Vec<String> =
            literal(&client, "ARRAY['with, comma', '', 'q\"uote']::varchar[]").await;
        assert_eq!(literal_text, ["with, comma", "", "q\"uote"]);
        // bpchar pads.
        assert_eq!(literal::<Vec<String>>(&client, "'{ab}'::char(3)[]").await, ["ab "]);
    })
    .await
}

#[tokio::test]
async fn bytea_arrays() {
    bounded(async {
        let db = database("arr_bytea");
        let client = connect(&db).await;
        let all: Vec<u8> = (0..=255).collect();
        round_trip(
            &client,
            "bytea[]",
            vec![vec![0u8, 1], vec![]],
            "{\"\\\\x0001\",\"\\\\x\"}",
        )
        .await;
        let row = client
            .query_one("SELECT $1::bytea[], length($1[1])", (vec![all.clone()],))
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<Vec<u8>>, _>(0), [all]);
        assert_eq!(row.get::<i32, _>(1), 256);
        let row = client
            .query_one("SELECT ARRAY['\\x00ff'::bytea, '']", ())
            .await
            .unwrap();
        let v: Vec<&[u8]> = row.get(0);
        assert_eq!(v, [&[0u8, 255][..], &[][..]]);
        // Vec<u8> alone is still bytea, not an array.
        let row = client
            .query_one("SELECT $1::bytea", (vec![1u8, 2],))
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<u8>, _>(0), [1, 2]);
    })
    .await
}

#[tokio::test]
async fn slices_and_fixed_size_arrays() {
    bounded(async {
        let db = database("arr_slices");
        let client = connect(&db).await;
        let slice: &[i64] = &[4, 5, 6];
        let row = client
            .query_one("SELECT $1::int8[]", (slice,))
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<i64>, _>(0), slice);
        let row = client
            .query_one("SELECT $1::int4[]", ([7i32, 8],))
            .await
            .unwrap();
        assert_eq!(row.get::<[i32; 2], _>(0), [7, 8]);
        let err = row.try_get::<[i32; 3], _>(0).unwrap_err().to_string();
        assert!(err.contains("2 elements"), "{err}");
        let boxed: Box<[i16]> = vec![1, 2].into_boxed_slice();
        let row = client
            .query_one("SELECT $1::int2[]", (&boxed,))
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<i16>, _>(0), [1, 2]);
    })
    .await
}

#[tokio::test]
async fn arrays_in_tables_and_prepared_statements() {
    bounded(async {
        let db = database("arr_table");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE t (id int, tags text[], grid int4[])")
            .await
            .unwrap();
        let grid = Array::from_rows(vec![vec![1, 2], vec![3, 4]]).unwrap();
        client
            .execute(
                "INSERT INTO t VALUES ($1, $2, $3)",
                (1i32, vec!["a", "b"], &grid),
            )
            .await
            .unwrap();
        let stmt = client
            .prepare("SELECT tags, grid FROM t WHERE id = $1")
            .await
            .unwrap();
        let row = client.query_one(&stmt, (1i32,)).await.unwrap();
        assert_eq!(row.get::<Vec<String>, _>(0), ["a", "b"]);
        assert_eq!(row.get::<Array<i32>, _>(1), grid);

        // A prepared statement's parameter type is checked before sending.
        let ins = client
            .prepare("INSERT INTO t (tags) VALUES ($1)")
            .await
            .unwrap();
        let err = client.execute(&ins, (vec![1i64],)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Encode);
        let msg = err.to_string();
        assert!(msg.contains("text[]"), "{msg}");
        client
            .execute(&ins, (vec![Some("x"), None],))
            .await
            .unwrap();

        // An int8[] column is not read into Vec<i32>.
        let row = client.query_one("SELECT '{1}'::int8[]", ()).await.unwrap();
        let err = row.try_get::<Vec<i32>, _>(0).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        assert!(err.to_string().contains("int8[]"), "{err}");
    })
    .await
}

/// Reads the literal array `'lit'::ty[]` as `Vec<Option<T>>`, sends it back
/// as a parameter and checks that the server sees the same array (compared
/// by its text rendering, which every type has) and that it reads back the
/// same; returns the values.
async fn literal_and_back<T>(client: &Client, ty: &str, lit: &str) -> Vec<Option<T>>
where
    T: Encode + pgpipe::types::StaticType + Sync + for<'a> Decode<'a> + PartialEq + Debug,
{
    let v: Vec<Option<T>> = literal(client, &format!("'{lit}'::{ty}[]")).await;
    let row = client
        .query_one(
            &format!("SELECT $1::{ty}[], $1::{ty}[]::text, '{lit}'::{ty}[]::text"),
            (&v,),
        )
        .await
        .unwrap_or_else(|e| panic!("sending {v:?} as {ty}[]: {e}"));
    assert_eq!(row.get::<Vec<Option<T>>, _>(0), v, "{ty}[] round trip");
    assert_eq!(
        row.get::<&str, _>(1),
        row.get::<&str, _>(2),
        "{ty}[] as the server renders it"
    );
    // Declared without a cast: the Rust type names the array type.
    let row = client
        .query_one("SELECT $1", (&v,))
        .await
        .unwrap_or_else(|e| panic!("sending {v:?} uncast: {e}"));
    assert_eq!(
        row.get::<Vec<Option<T>>, _>(0),
        v,
        "{ty}[] uncast round trip"
    );
    v
}

#[tokio::test]
async fn arrays_of_every_other_type() {
    use pgpipe::types::{
        BitString, Cidr, Date, Inet, Interval, MacAddr, MacAddr8, Money, Numeric, Time, TimeTz,
        Timestamp, TimestampTz, WithInfinity,
    };
    bounded(async {
        let db = database("arr_other");
        let client = connect(&db).await;
        client.batch_execute("SET TimeZone = 'UTC'").await.unwrap();

        // numeric has Infinity since PostgreSQL 14.
        let numerics = if server_major() >= 14 {
            "{0,-0.000,NaN,Infinity,-Infinity,1e-130,12345678901234567890.0987654321,NULL}"
        } else {
            "{0,-0.000,NaN,NaN,NaN,1e-130,12345678901234567890.0987654321,NULL}"
        };
        let v: Vec<Option<Numeric>> = literal_and_back(&client, "numeric", numerics).await;
        assert!(v[2].as_ref().unwrap().is_nan());
        assert_eq!(v[7], None);
        let v: Vec<Option<WithInfinity<Date>>> = literal_and_back(
            &client,
            "date",
            "{2024-02-29,4713-11-24 BC,5874897-12-31,infinity,-infinity,NULL}",
        )
        .await;
        assert_eq!(v[3], Some(WithInfinity::Infinity));
        literal_and_back::<Date>(&client, "date", "{1999-12-31,0001-01-01 BC}").await;
        literal_and_back::<WithInfinity<Timestamp>>(
            &client,
            "timestamp",
            "{2000-01-01 00:00:00,294276-12-31 23:59:59.999999,4713-11-24 00:00:00 BC,-infinity}",
        )
        .await;
        literal_and_back::<WithInfinity<TimestampTz>>(
            &client,
            "timestamptz",
            "{2000-01-01 00:00:00+05:30,1970-01-01 00:00:00+00,infinity,NULL}",
        )
        .await;
        literal_and_back::<Time>(&client, "time", "{00:00:00,23:59:59.999999,24:00:00}").await;
        literal_and_back::<TimeTz>(&client, "timetz", "{12:00:00+05:30,00:00:00-14:59}").await;
        literal_and_back::<Interval>(
            &client,
            "interval",
            "{1 year 2 mons 3 days 04:05:06.789,-00:00:00.000001,0}",
        )
        .await;
        literal_and_back::<uuid::Uuid>(
            &client,
            "uuid",
            "{00000000-0000-0000-0000-000000000000,a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}",
        )
        .await;
        literal_and_back::<serde_json::Value>(
            &client,
            "jsonb",
            r#"{"{\"a\": [1, 2.5, null]}","\"text\"",null,NULL}"#,
        )
        .await;
        literal_and_back::<Inet>(&client, "inet", "{192.168.0.1/24,::1,10.0.0.1}").await;
        literal_and_back::<Cidr>(&client, "cidr", "{10.0.0.0/8,2001:db8::/32}").await;
        literal_and_back::<MacAddr>(&client, "macaddr", "{08:00:2b:01:02:03}").await;
        literal_and_back::<MacAddr8>(&client, "macaddr8", "{08:00:2b:01:02:03:04:05}").await;
        literal_and_back::<Money>(&client, "money", "{-92233720368547758.08,0,1.23}").await;
        literal_and_back::<BitString>(&client, "varbit", "{101,\"\",1111000011}").await;
        literal_and_back::<BitString>(&client, "bit(3)", "{101,010}").await;
        literal_and_back::<i8>(&client, "\"char\"", "{a,b}").await;
        literal_and_back::<String>(&client, "bpchar", "{ab,c}").await;
    })
    .await
}

/// A binary array built by hand: header, dimensions, elements (None = NULL).
fn raw_array(ndim: i32, oid: u32, dims: &[(i32, i32)], elems: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&ndim.to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&oid.to_be_bytes());
    for (len, lb) in dims {
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(&lb.to_be_bytes());
    }
    for e in elems {
        match e {
            Some(e) => {
                b.extend_from_slice(&(e.len() as i32).to_be_bytes());
                b.extend_from_slice(e);
            }
            None => b.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    b
}

#[tokio::test]
async fn malformed_arrays_from_a_fake_server_are_decode_errors() {
    use pgpipe_testkit::{msg, FakeServer, Script};
    bounded(async {
        let overflow = raw_array(6, 23, &[(i32::MAX, 0); 6], &[]);
        let too_many = raw_array(2, 23, &[(65536, 1), (65536, 1)], &[Some(&[0; 4])]);
        let truncated = raw_array(1, 23, &[(2, 1)], &[Some(&[0; 4]), Some(&[0; 4])]);
        let truncated = &truncated[..truncated.len() - 2];
        let wrong_len = raw_array(1, 23, &[(2, 1)], &[Some(&[0; 4]), Some(&[0; 3])]);
        let wrong_oid = raw_array(1, 20, &[(1, 1)], &[Some(&[0; 8])]);
        let range = [0x02u8, 0, 0, 0, 4, 0, 0, 0, 1];
        let multirange = [0x7fu8, 0xff, 0xff, 0xff];
        let script = Script::new()
            .expect_startup()
            .send(msg::handshake())
            .expect_until(b'S')
            .send(msg::parse_complete())
            .send(msg::bind_complete())
            .send(msg::row_description(&[
                ("overflow", 1007, 1),
                ("too_many", 1007, 1),
                ("truncated", 1007, 1),
                ("wrong_len", 1007, 1),
                ("wrong_oid", 1007, 1),
                ("range", 3904, 1),
                ("multirange", 4451, 1),
            ]))
            .send(msg::data_row(&[
                Some(&overflow),
                Some(&too_many),
                Some(truncated),
                Some(&wrong_len),
                Some(&wrong_oid),
                Some(&range),
                Some(&multirange),
            ]))
            .send(msg::command_complete("SELECT 1"))
            .send(msg::ready_for_query(b'I'))
            .expect_eof();
        let server = FakeServer::start(script).await.unwrap();
        let client = pgpipe::connect(&server.url()).await.unwrap();
        let row = client.query_one("SELECT malformed", ()).await.unwrap();
        let err = |i: usize, e: pgpipe::Error| {
            assert_eq!(e.kind(), ErrorKind::Decode, "column {i}: {e}");
            e.to_string()
        };
        for (i, expected) in [
            (0, "product of the dimension lengths overflows"),
            (1, "describe 4294967296 elements but only 8 bytes"),
            (2, "int4[] element [2]: truncated"),
            (
                3,
                "int4[] element [2]: invalid binary integer value: expected 4 bytes, got 3",
            ),
            (4, "element type OID is 20 (int8), expected 23 (int4)"),
        ] {
            let msg = err(i, row.try_get::<Vec<Option<i32>>, _>(i).unwrap_err());
            assert!(msg.contains(expected), "column {i}: {msg}");
            let msg = err(i, row.try_get::<Array<Option<i32>>, _>(i).unwrap_err());
            assert!(msg.contains(expected), "column {i}: {msg}");
            assert!(row.try_get::<Vec<Vec<i32>>, _>(i).is_err());
        }
        let msg = err(
            5,
            row.try_get::<pgpipe::types::Range<i32>, _>(5).unwrap_err(),
        );
        assert!(msg.contains("truncated before the upper bound"), "{msg}");
        let msg = err(
            6,
            row.try_get::<pgpipe::types::Multirange<i32>, _>(6)
                .unwrap_err(),
        );
        assert!(msg.contains("range count 2147483647 does not fit"), "{msg}");
        drop(client);
        server.finish().await.unwrap();
    })
    .await
}

#[tokio::test]
async fn arrays_of_an_extension_type_found_by_name() {
    use std::collections::BTreeMap;
    bounded(async {
        let db = database("arr_hstore");
        common::cluster()
            .execute(db.name(), "CREATE EXTENSION hstore")
            .expect("the hstore extension is installed with PostgreSQL's contrib modules");
        let client = connect(&db).await;
        // hstore has no fixed OID: Vec<map> declares `hstore[]` by name, the
        // client resolves it and the element OID written is the server's.
        let maps: Vec<Option<BTreeMap<String, Option<String>>>> = vec![
            Some(BTreeMap::from([("k".to_owned(), Some("v".to_owned()))])),
            None,
            Some(BTreeMap::new()),
        ];
        let row = client
            .query_one("SELECT $1::hstore[], $1::hstore[]::text", (&maps,))
            .await
            .unwrap();
        assert_eq!(
            row.get::<Vec<Option<BTreeMap<String, Option<String>>>>, _>(0),
            maps
        );
        assert_eq!(row.get::<&str, _>(1), r#"{"\"k\"=>\"v\"",NULL,""}"#);
        let row = client.query_one("SELECT $1", (&maps,)).await.unwrap();
        assert_eq!(
            row.get::<Vec<Option<BTreeMap<String, Option<String>>>>, _>(0),
            maps
        );
        let lit: Vec<BTreeMap<String, Option<String>>> =
            literal(&client, "ARRAY['a=>1'::hstore, 'b=>NULL']").await;
        assert_eq!(lit[1]["b"], None);
    })
    .await
}
