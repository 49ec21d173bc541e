//! Property test: generated values of the main scalar types are sent as
//! parameters, read back, and compared both with the Rust value and with
//! the server's own text rendering of the parameter (`$1::T::text`).
//!
//! 64 cases per type keep CI fast; failures shrink to a minimal value.

mod common;

use std::fmt::Debug;
use std::future::Future;

use pgpipe::types::{
    Circle, Lexeme, Line, LineSegment, Numeric, Path, PgBox, PgLsn, PgSnapshot, Point, Polygon,
    Tid, TsVector, Weight, Xid8,
};
use pgpipe::Client;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use uuid::Uuid;

/// Runs `check` on 64 generated values, each against one connection to a
/// fresh database.
fn run<S, F, Fut>(hint: &str, strategy: S, check: F)
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(Client, S::Value) -> Fut,
    Fut: Future<Output = Result<(), TestCaseError>>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let db = common::database(hint);
    let client = rt.block_on(common::connect(&db));
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |value| {
        rt.block_on(common::bounded(check(client.clone(), value)))
    });
    if let Err(e) = result {
        panic!("{hint}: {e}");
    }
}

/// `SELECT $1::ty, $1::ty::text` with `value`, returning the value read back
/// and the server's text.
async fn select<T>(client: &Client, ty: &str, value: &T) -> Result<(T, String), TestCaseError>
where
    T: pgpipe::Encode + Sync + for<'a> pgpipe::Decode<'a> + Debug,
{
    let row = client
        .query_one(&format!("SELECT $1::{ty}, $1::{ty}::text"), (value,))
        .await
        .map_err(|e| TestCaseError::fail(format!("SELECT $1::{ty} with {value:?}: {e}")))?;
    let back = row
        .try_get::<T, _>(0)
        .map_err(|e| TestCaseError::fail(format!("reading {ty}: {e}")))?;
    Ok((back, row.get::<String, _>(1)))
}

#[test]
fn integers() {
    run(
        "prop_int",
        (any::<i16>(), any::<i32>(), any::<i64>()),
        |client, (a, b, c)| async move {
            let (back, text) = select(&client, "int2", &a).await?;
            prop_assert_eq!(back, a);
            prop_assert_eq!(text, a.to_string());
            let (back, text) = select(&client, "int4", &b).await?;
            prop_assert_eq!(back, b);
            prop_assert_eq!(text, b.to_string());
            let (back, text) = select(&client, "int8", &c).await?;
            prop_assert_eq!(back, c);
            prop_assert_eq!(text, c.to_string());
            Ok(())
        },
    );
}

/// PostgreSQL prints the shortest text that reads back as the same float,
/// so parsing the server's text must give the same bits (NaN aside).
#[test]
fn floats() {
    run(
        "prop_float",
        (
            prop_oneof![
                4 => prop::num::f64::ANY,
                1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0]),
            ],
            prop_oneof![
                4 => prop::num::f32::ANY,
                1 => prop::sample::select(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0]),
            ],
        ),
        |client, (d, f)| async move {
            let (back, text) = select(&client, "float8", &d).await?;
            if d.is_nan() {
                prop_assert!(back.is_nan());
                prop_assert_eq!(text, "NaN");
            } else {
                prop_assert_eq!(back.to_bits(), d.to_bits());
                let parsed: f64 = text.parse().map_err(|e| {
                    TestCaseError::fail(format!("server text {text:?} for {d:?}: {e}"))
                })?;
                prop_assert_eq!(parsed.to_bits(), d.to_bits(), "server text {}", text);
            }
            let (back, text) = select(&client, "float4", &f).await?;
            if f.is_nan() {
                prop_assert!(back.is_nan());
                prop_assert_eq!(text, "NaN");
            } else {
                prop_assert_eq!(back.to_bits(), f.to_bits());
                let parsed: f32 = text.parse().map_err(|e| {
                    TestCaseError::fail(format!("server text {text:?} for {f:?}: {e}"))
                })?;
                prop_assert_eq!(parsed.to_bits(), f.to_bits(), "server text {}", text);
            }
            Ok(())
        },
    );
}

#[test]
fn bools_and_uuids() {
    run(
        "prop_bool_uuid",
        (any::<bool>(), any::<u128>()),
        |client, (b, u)| async move {
            let (back, text) = select(&client, "bool", &b).await?;
            prop_assert_eq!(back, b);
            prop_assert_eq!(text, b.to_string());
            let id = Uuid::from_u128(u);
            let (back, text) = select(&client, "uuid", &id).await?;
            prop_assert_eq!(back, id);
            prop_assert_eq!(text, id.hyphenated().to_string());
            Ok(())
        },
    );
}

/// Any Unicode text PostgreSQL can store (everything but NUL).
#[test]
fn strings() {
    let text = prop::collection::vec(any::<char>().prop_filter("no NUL", |c| *c != '\0'), 0..64)
        .prop_map(String::from_iter);
    run("prop_text", text, |client, s| async move {
        let (back, text) = select(&client, "text", &s).await?;
        prop_assert_eq!(&back, &s);
        prop_assert_eq!(&text, &s);
        let row = client
            .query_one("SELECT length($1::text)", (s.as_str(),))
            .await
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(row.get::<i32, _>(0) as usize, s.chars().count());
        Ok(())
    });
}

#[test]
fn byte_strings() {
    run(
        "prop_bytea",
        prop::collection::vec(any::<u8>(), 0..256),
        |client, bytes| async move {
            let (back, text) = select(&client, "bytea", &bytes).await?;
            prop_assert_eq!(&back, &bytes);
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            prop_assert_eq!(text, format!("\\x{hex}"));
            Ok(())
        },
    );
}

/// A numeric input (with a sign, leading zeros, digits on either side of
/// the point, or a special value) and the text PostgreSQL prints for it,
/// built independently of `Numeric`'s own parsing and formatting.
fn numeric_text() -> impl Strategy<Value = (String, String)> {
    let finite = (
        prop::sample::select(vec!["", "-", "+"]),
        prop::sample::select(vec!["", "0", "0000"]),
        "[0-9]{0,40}",
        "[0-9]{0,40}",
    )
        .prop_map(|(sign, pad, int, frac)| {
            let int = if pad.is_empty() && int.is_empty() && frac.is_empty() {
                "0".to_string()
            } else {
                format!("{pad}{int}")
            };
            let mut input = format!("{sign}{int}");
            if !frac.is_empty() {
                input.push('.');
                input.push_str(&frac);
            }
            // PostgreSQL prints no leading zeros (a single 0 for no integer
            // digits), every fraction digit given, and no sign for zero.
            let int_digits = int.trim_start_matches('0');
            let zero = int_digits.is_empty() && frac.bytes().all(|b| b == b'0');
            let mut text = String::new();
            if sign == "-" && !zero {
                text.push('-');
            }
            text.push_str(if int_digits.is_empty() {
                "0"
            } else {
                int_digits
            });
            if !frac.is_empty() {
                text.push('.');
                text.push_str(&frac);
            }
            (input, text)
        });
    let special = prop::sample::select(vec![
        ("NaN", "NaN"),
        ("nan", "NaN"),
        ("Infinity", "Infinity"),
        ("+inf", "Infinity"),
        ("-Infinity", "-Infinity"),
        ("-INF", "-Infinity"),
    ])
    .prop_map(|(i, t)| (i.to_string(), t.to_string()));
    prop_oneof![8 => finite, 1 => special]
}

#[test]
fn numerics() {
    run(
        "prop_numeric",
        numeric_text(),
        |client, (input, text)| async move {
            let value: Numeric = input
                .parse()
                .map_err(|e| TestCaseError::fail(format!("{input:?}: {e}")))?;
            prop_assert_eq!(value.to_string(), text.as_str(), "Display of {}", input);
            let (back, server_text) = select(&client, "numeric", &value).await?;
            prop_assert_eq!(&back, &value);
            prop_assert_eq!(back.to_string(), text.as_str());
            prop_assert_eq!(server_text, text.as_str());
            // The server's own parse of the input is the same value and scale.
            let row = client
                .query_one("SELECT $1::numeric", (input.as_str(),))
                .await
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(row.get::<Numeric, _>(0).to_string(), text.as_str());
            Ok(())
        },
    );
}

/// Any `f64`, NaN, the infinities and subnormals included.
fn coordinate() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => any::<f64>(),
        1 => Just(f64::NAN),
        1 => Just(-0.0),
        1 => (-1000i32..1000).prop_map(|i| f64::from(i) / 8.0),
    ]
}

fn point() -> impl Strategy<Value = Point> {
    (coordinate(), coordinate()).prop_map(|(x, y)| Point::new(x, y))
}

/// `select`, the value compared through `Debug` (bit for bit but for NaN
/// payloads, which PostgreSQL keeps anyway) and the text with our Display.
async fn same_geometry<T>(client: &Client, ty: &str, v: &T) -> Result<(), TestCaseError>
where
    T: pgpipe::Encode + Sync + for<'a> pgpipe::Decode<'a> + Debug + std::fmt::Display,
{
    let (back, text) = select(client, ty, v).await?;
    prop_assert_eq!(format!("{back:?}"), format!("{v:?}"));
    // Our text must read back on the server as the very same value. It is
    // the server's own text but in one rare case: when the shortest digits
    // sit exactly halfway above the value, Rust's shortest form uses them
    // (they round back to it, ties to even) and PostgreSQL's Ryu, whose
    // upper bound is exclusive, writes one digit more. Seen with
    // 4.504983444557162e16 (server: 4.5049834445571616e+16).
    let ours = v.to_string();
    let reread: String = client
        .query_one(&format!("SELECT $1::text::{ty}::text"), (ours.as_str(),))
        .await
        .map_err(|e| TestCaseError::fail(format!("reading back {ours} as {ty}: {e}")))?
        .get(0);
    prop_assert_eq!(reread, text, "our text: {}", ours);
    Ok(())
}

#[test]
fn geometric() {
    run(
        "prop_geometric",
        (
            point(),
            point(),
            prop::collection::vec(point(), 1..8),
            any::<bool>(),
            any::<f64>().prop_map(f64::abs),
        ),
        |client, (a, b, points, closed, radius)| async move {
            same_geometry(&client, "point", &a).await?;
            same_geometry(&client, "lseg", &LineSegment::new(a, b)).await?;
            same_geometry(&client, "box", &PgBox::new(a, b)).await?;
            same_geometry(
                &client,
                "path",
                &Path {
                    points: points.clone(),
                    closed,
                },
            )
            .await?;
            same_geometry(&client, "polygon", &Polygon::new(points)).await?;
            same_geometry(&client, "circle", &Circle::new(a, radius)).await?;
            if b.x.abs() > 1e-6 || b.y.abs() > 1e-6 {
                same_geometry(&client, "line", &Line::new(b.x, b.y, a.x)).await?;
            }
            Ok(())
        },
    );
}

/// The tie the property test found: the shortest digits sit exactly halfway
/// above the value, and the server writes one digit more than we do; our
/// text must still read back as the same point.
#[test]
fn geometric_text_at_an_upper_tie_reads_back() {
    run(
        "prop_geometric_tie",
        Just(Point::new(4.504983444557162e16, 0.0)),
        |client, p| async move {
            let (_, text) = select(&client, "point", &p).await?;
            prop_assert_eq!(text, "(4.5049834445571616e+16,0)");
            prop_assert_eq!(p.to_string(), "(4.504983444557162e+16,0)");
            same_geometry(&client, "point", &p).await
        },
    );
}

#[test]
fn lsn_and_row_ids() {
    run(
        "prop_lsn",
        (any::<u64>(), any::<u64>(), any::<u32>(), any::<u16>()),
        |client, (a, b, block, offset)| async move {
            let (x, y) = (PgLsn::new(a), PgLsn::new(b));
            let (back, text) = select(&client, "pg_lsn", &x).await?;
            prop_assert_eq!(back, x);
            prop_assert_eq!(&text, &x.to_string());
            prop_assert_eq!(text.parse::<PgLsn>().ok(), Some(x));
            let row = client
                .query_one(
                    "SELECT ($1::pg_lsn - $2::pg_lsn)::text, $1::pg_lsn < $2::pg_lsn",
                    (x, y),
                )
                .await
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(row.get::<&str, _>(0), x.diff(y).to_string());
            prop_assert_eq!(row.get::<bool, _>(1), x < y);
            let tid = Tid::new(block, offset);
            let (back, text) = select(&client, "tid", &tid).await?;
            prop_assert_eq!(back, tid);
            prop_assert_eq!(text, tid.to_string());
            let (back, text) = select(&client, "xid8", &Xid8(a)).await?;
            prop_assert_eq!(back, Xid8(a));
            prop_assert_eq!(text, a.to_string());
            Ok(())
        },
    );
}

#[test]
fn snapshots() {
    let snapshot = (
        1u64..u64::MAX / 2,
        0u64..1 << 40,
        prop::collection::btree_set(0u64..1 << 40, 0..16),
    )
        .prop_map(|(xmin, span, offsets)| {
            let xmax = xmin + span;
            let xip = offsets
                .into_iter()
                .filter(|o| *o <= span)
                .map(|o| xmin + o)
                .collect();
            PgSnapshot::new(xmin, xmax, xip).unwrap()
        });
    run("prop_snapshot", snapshot, |client, s| async move {
        let (back, text) = select(&client, "pg_snapshot", &s).await?;
        prop_assert_eq!(&back, &s);
        prop_assert_eq!(text, s.to_string());
        Ok(())
    });
}

/// Words of any non-NUL characters (quotes and backslashes included) with
/// positions and weights; the server's text of what we send is our Display.
#[test]
fn tsvectors() {
    let weight = prop_oneof![
        Just(Weight::A),
        Just(Weight::B),
        Just(Weight::C),
        Just(Weight::D)
    ];
    let word = prop::collection::vec(
        prop_oneof![
            any::<char>().prop_filter("no NUL", |c| *c != '\0'),
            Just('\''),
            Just('\\')
        ],
        1..12,
    )
    .prop_map(String::from_iter);
    let lexeme = (
        word,
        prop::collection::btree_map(1u16..=TsVector::MAX_POSITION, weight, 0..6),
    )
        .prop_map(|(w, pos)| Lexeme::new(w).at(pos));
    let vector = prop::collection::vec(lexeme, 0..8).prop_map(|mut ls| {
        ls.sort_by(|a, b| a.word.cmp(&b.word));
        ls.dedup_by(|a, b| a.word == b.word);
        TsVector::new(ls).unwrap()
    });
    run("prop_tsvector", vector, |client, v| async move {
        let (back, text) = select(&client, "tsvector", &v).await?;
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(text, v.to_string());
        Ok(())
    });
}

/// Any `Duration` an interval holds (up to 2^31 hours, which PostgreSQL 13
/// and 14 still print): sent as microseconds alone and read back equal
/// (sub-microsecond digits dropped), the server's text that of the same
/// `Interval`.
#[test]
fn durations() {
    use std::time::Duration;
    let duration = prop_oneof![
        (0u64..(i32::MAX as u64 - 1) * 3_600_000_000, 0u32..1000)
            .prop_map(|(us, ns)| Duration::from_micros(us) + Duration::from_nanos(u64::from(ns))),
        (0u64..86_400_000_000 * 400).prop_map(Duration::from_micros),
    ];
    run("prop_duration", duration, |client, d| async move {
        let (back, text) = select(&client, "interval", &d).await?;
        let micros = d.as_micros() as i64;
        prop_assert_eq!(back, Duration::from_micros(micros as u64));
        prop_assert_eq!(text, pgpipe::types::Interval::new(0, 0, micros).to_string());
        Ok(())
    });
}
