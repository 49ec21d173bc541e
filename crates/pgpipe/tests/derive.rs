//! The derives against a real server: composites (the ozo `mail.attach`
//! example end to end, nested, with NULL fields, arrays of them), enums,
//! transparent newtypes, anonymous records, and `FromRow` with every
//! attribute and every mismatch caught before the first row.

mod common;

use common::{bounded, connect, database};
use pgpipe::types::Kind;
use pgpipe::{Composite, Decode, Encode, ErrorKind, FromRow, PgEnum};

const MAIL_SCHEMA: &str = "
    CREATE SCHEMA mail;
    CREATE TYPE mail.attach AS (filename text, type text, size bigint);
    CREATE TABLE mail.message (id bigint PRIMARY KEY, subject text, attachments mail.attach[]);
";

#[derive(Composite, Debug, Clone, PartialEq)]
#[pg(name = "mail.attach")]
struct Attach {
    filename: String,
    r#type: String,
    size: i64,
}

/// The same type with the fields in another order and renamed: fields are
/// matched by name, not position.
#[derive(Composite, Debug, Clone, PartialEq)]
#[pg(name = "mail.attach")]
struct AttachReordered {
    size: i64,
    #[pg(rename = "type")]
    mime: String,
    filename: String,
}

/// Lacks the `type` field.
#[derive(Composite, Debug, Clone, PartialEq)]
#[pg(name = "mail.attach")]
struct AttachShort {
    filename: String,
    size: i64,
}

#[derive(FromRow, Debug, PartialEq)]
struct Message {
    id: i64,
    subject: String,
    attachments: Vec<Attach>,
}

fn attach(filename: &str, ty: &str, size: i64) -> Attach {
    Attach {
        filename: filename.into(),
        r#type: ty.into(),
        size,
    }
}

#[tokio::test]
async fn ozo_attach_example_end_to_end() {
    bounded(async {
        let db = database("derive_ozo");
        let client = connect(&db).await;
        client.batch_execute(MAIL_SCHEMA).await.unwrap();

        let files = vec![
            attach("report.pdf", "application/pdf", 1_048_576),
            attach("", "text/plain", 0),
            attach("naïve \"quoted\", (parens)", "x/y", i64::MAX),
        ];
        let n = client
            .execute(
                "INSERT INTO mail.message VALUES ($1, $2, $3)",
                (1i64, "hello", &files),
            )
            .await
            .unwrap();
        assert_eq!(n, 1);
        // An empty array declares its type too.
        client
            .execute(
                "INSERT INTO mail.message VALUES ($1, $2, $3)",
                (2i64, "empty", Vec::<Attach>::new()),
            )
            .await
            .unwrap();

        // The array back as a parameter of its own statement and as a column.
        let row = client
            .query_one("SELECT attachments FROM mail.message WHERE id = 1", ())
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<Attach>, _>(0), files);
        let reordered: Vec<AttachReordered> = row.get(0);
        assert_eq!(reordered[0].mime, "application/pdf");
        assert_eq!(reordered[2].size, i64::MAX);

        // The server stored what was sent: compare with its own rendering.
        let text: String = client
            .query_one(
                "SELECT (attachments[1])::text FROM mail.message WHERE id = 1",
                (),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(text, "(report.pdf,application/pdf,1048576)");
        let fname: String = client
            .query_one(
                "SELECT (attachments[3]).filename FROM mail.message WHERE id = 1",
                (),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(fname, files[2].filename);

        // FromRow with the array field, through query_as and friends.
        let messages: Vec<Message> = client
            .query_as("SELECT * FROM mail.message ORDER BY id", ())
            .await
            .unwrap();
        assert_eq!(
            messages,
            vec![
                Message {
                    id: 1,
                    subject: "hello".into(),
                    attachments: files.clone(),
                },
                Message {
                    id: 2,
                    subject: "empty".into(),
                    attachments: vec![],
                },
            ]
        );
        let one: Message = client
            .query_one_as(
                "SELECT id, subject, attachments FROM mail.message WHERE id = $1",
                (1i64,),
            )
            .await
            .unwrap();
        assert_eq!(one.attachments, files);
        let none: Option<Message> = client
            .query_opt_as("SELECT * FROM mail.message WHERE id = $1", (99i64,))
            .await
            .unwrap();
        assert_eq!(none, None);

        // A literal from SQL, and one composite as a parameter.
        let lit: Attach = client
            .query_one("SELECT ROW('a.txt', 'text/plain', 3)::mail.attach", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(lit, attach("a.txt", "text/plain", 3));
        let row = client
            .query_one(
                "SELECT $1::mail.attach, $1::mail.attach::text, ($1::mail.attach).size",
                (attach("b", "c", -5),),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<Attach, _>(0), attach("b", "c", -5));
        assert_eq!(row.get::<&str, _>(1), "(b,c,-5)");
        assert_eq!(row.get::<i64, _>(2), -5);
        // Sent in a different field order, stored in the type's order.
        let reordered = AttachReordered {
            size: 9,
            mime: "m".into(),
            filename: "f".into(),
        };
        let text: String = client
            .query_one("SELECT $1::mail.attach::text", (&reordered,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(text, "(f,m,9)");

        // Arrays with NULL elements, and NULL arrays.
        let row = client
            .query_one(
                "SELECT ARRAY[ROW('a', 'b', 1)::mail.attach, NULL], NULL::mail.attach[]",
                (),
            )
            .await
            .unwrap();
        assert_eq!(
            row.get::<Vec<Option<Attach>>, _>(0),
            vec![Some(attach("a", "b", 1)), None]
        );
        assert!(row.try_get::<Vec<Attach>, _>(0).is_err());
        assert_eq!(row.get::<Option<Vec<Attach>>, _>(1), None);
        let back: Vec<Option<Attach>> = client
            .query_one(
                "SELECT $1::mail.attach[]",
                (vec![None, Some(attach("x", "y", 2))],),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(back, vec![None, Some(attach("x", "y", 2))]);

        // register_type describes the type up front.
        let ty = client.register_type("mail.attach").await.unwrap();
        match ty.kind() {
            Kind::Composite(fields) => {
                let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                assert_eq!(names, ["filename", "type", "size"]);
            }
            other => panic!("mail.attach is {other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn composite_mismatches_are_errors_that_say_what() {
    bounded(async {
        let db = database("derive_comp_err");
        let client = connect(&db).await;
        client.batch_execute(MAIL_SCHEMA).await.unwrap();

        // Reading: a struct without the `type` field does not accept the
        // type, so the column check fails before any row is decoded (and
        // even with no rows at all).
        let err = client
            .query_as::<(AttachShort,), _, _>(
                "SELECT ROW('a', 'b', 1)::mail.attach AS a WHERE false",
                (),
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
        let msg = err.to_string();
        assert!(msg.contains("\"a\""), "{msg}");
        assert!(msg.contains("mail.attach"), "{msg}");
        assert!(msg.contains("AttachShort"), "{msg}");

        // Sending: the writer checks the field count.
        let short = AttachShort {
            filename: "a".into(),
            size: 1,
        };
        let err = client
            .query("SELECT $1::mail.attach", (&short,))
            .await
            .unwrap_err();
        let msg = format!("{err} / {:?}", std::error::Error::source(&err));
        assert!(
            msg.contains("mail.attach has 3 fields, but Rust type AttachShort has 2"),
            "{msg}"
        );
        // The connection is still usable.
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );

        // A NULL in a field the Rust type cannot hold names the field.
        let row = client
            .query_one("SELECT ROW(NULL, 'b', 1)::mail.attach", ())
            .await
            .unwrap();
        let err = row.try_get::<Attach, _>(0).unwrap_err();
        let msg = format!("{err}");
        assert!(msg.contains("field \"filename\" of mail.attach"), "{msg}");
        assert!(msg.contains("unexpected NULL"), "{msg}");

        // A type that does not exist fails at lookup, naming it.
        #[derive(Composite, Debug)]
        #[pg(name = "mail.nope")]
        struct Nope {
            a: i32,
        }
        let err = client
            .query("SELECT $1", (Nope { a: 1 },))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("mail.nope"), "{err}");
    })
    .await;
}

#[derive(Composite, Debug, Clone, PartialEq)]
#[pg(name = "point2")]
struct Point2 {
    x: i32,
    y: i32,
}

#[derive(Composite, Debug, Clone, PartialEq)]
#[pg(name = "shape", rename_all = "camelCase")]
struct Shape {
    shape_name: String,
    origin: Option<Point2>,
    corners: Vec<Point2>,
    note: Option<String>,
    fill: Option<Mood>,
}

/// Borrows its text fields from the row.
#[derive(Composite, Debug, PartialEq)]
#[pg(name = "shape", rename_all = "camelCase")]
struct ShapeRef<'a> {
    shape_name: &'a str,
    origin: Option<Point2>,
    corners: Vec<Point2>,
    note: Option<&'a str>,
    fill: Option<Mood>,
}

#[tokio::test]
async fn nested_composites_and_null_fields() {
    bounded(async {
        let db = database("derive_nested");
        let client = connect(&db).await;
        client
            .batch_execute(
                r#"CREATE TYPE mood AS ENUM ('sad', 'ok', 'very_happy');
                   CREATE TYPE point2 AS (x int4, y int4);
                   CREATE TYPE shape AS ("shapeName" text, origin point2, corners point2[], note text, fill mood);"#,
            )
            .await
            .unwrap();

        let full = Shape {
            shape_name: "square".into(),
            origin: Some(Point2 { x: -1, y: i32::MAX }),
            corners: vec![Point2 { x: 0, y: 0 }, Point2 { x: 1, y: 1 }],
            note: Some("∑ 𝄞".into()),
            fill: Some(Mood::VeryHappy),
        };
        let empty = Shape {
            shape_name: String::new(),
            origin: None,
            corners: vec![],
            note: None,
            fill: None,
        };
        for value in [&full, &empty] {
            let row = client
                .query_one("SELECT $1::shape, $1::shape::text", (value,))
                .await
                .unwrap();
            assert_eq!(&row.get::<Shape, _>(0), value);
        }
        let text: String = client
            .query_one("SELECT $1::shape::text", (&full,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(text, r#"(square,"(-1,2147483647)","{""(0,0)"",""(1,1)""}","∑ 𝄞",very_happy)"#);
        let text: String = client
            .query_one("SELECT $1::shape::text", (&empty,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(text, r#"("",,{},,)"#);

        // The same values as SQL literals.
        let row = client
            .query_one(
                "SELECT ROW('square', ROW(-1, 2147483647)::point2,
                            ARRAY[ROW(0, 0)::point2, ROW(1, 1)::point2], '∑ 𝄞', 'very_happy')::shape,
                        ROW('', NULL, '{}', NULL, NULL)::shape",
                (),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<Shape, _>(0), full);
        assert_eq!(row.get::<Shape, _>(1), empty);
        let borrowed: ShapeRef<'_> = row.get(0);
        assert_eq!(borrowed.shape_name, "square");
        assert_eq!(borrowed.note, Some("∑ 𝄞"));
        // A NULL nested composite in a non-Option field is an error that
        // names the field.
        #[derive(Composite, Debug)]
        #[pg(name = "shape", rename_all = "camelCase")]
        #[allow(dead_code)]
        struct StrictShape {
            shape_name: String,
            origin: Point2,
            corners: Vec<Point2>,
            note: Option<String>,
            fill: Option<Mood>,
        }
        let err = row.try_get::<StrictShape, _>(1).unwrap_err().to_string();
        assert!(err.contains("field \"origin\" of shape"), "{err}");

        // The nested composite read on its own, and the whole value read
        // by position as a tuple.
        let origin: Point2 = client
            .query_one("SELECT ($1::shape).origin", (&full,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(origin, Point2 { x: -1, y: i32::MAX });
        type ShapeTuple = (String, Option<Point2>, Vec<Point2>, Option<String>, Option<Mood>);
        let tuple: ShapeTuple = row.get(0);
        assert_eq!(tuple.0, "square");
        assert_eq!(tuple.4, Some(Mood::VeryHappy));
    })
    .await;
}

#[derive(PgEnum, Debug, Clone, Copy, PartialEq)]
#[pg(name = "mood", rename_all = "snake_case")]
enum Mood {
    Sad,
    Ok,
    VeryHappy,
}

/// No rename_all: labels 'Sad', 'Ok', 'VeryHappy', which the server lacks.
#[derive(PgEnum, Debug, Clone, Copy, PartialEq)]
#[pg(name = "mood")]
enum MoodUnrenamed {
    Sad,
    Ok,
    VeryHappy,
}

/// Fewer labels than the server: accepted, but an unknown label is an error.
#[derive(PgEnum, Debug, Clone, Copy, PartialEq)]
#[pg(name = "public.mood")]
enum MoodSubset {
    #[pg(rename = "sad")]
    Down,
    #[pg(rename = "ok")]
    Fine,
}

#[tokio::test]
async fn enums_both_ways_with_arrays() {
    bounded(async {
        let db = database("derive_enum");
        let client = connect(&db).await;
        client
            .batch_execute(
                "CREATE TYPE mood AS ENUM ('sad', 'ok', 'very_happy');
                 CREATE TABLE diary (day int4, mood mood, moods mood[])",
            )
            .await
            .unwrap();

        for m in [Mood::Sad, Mood::Ok, Mood::VeryHappy] {
            let row = client
                .query_one("SELECT $1::mood, $1::mood::text", (m,))
                .await
                .unwrap();
            assert_eq!(row.get::<Mood, _>(0), m);
            let text: &str = row.get(1);
            assert_eq!(
                text,
                match m {
                    Mood::Sad => "sad",
                    Mood::Ok => "ok",
                    Mood::VeryHappy => "very_happy",
                }
            );
        }
        let row = client
            .query_one(
                "SELECT 'very_happy'::mood, NULL::mood, ARRAY['sad', NULL, 'ok']::mood[], '{}'::mood[]",
                (),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<Mood, _>(0), Mood::VeryHappy);
        assert_eq!(row.get::<Option<Mood>, _>(1), None);
        assert_eq!(
            row.get::<Vec<Option<Mood>>, _>(2),
            vec![Some(Mood::Sad), None, Some(Mood::Ok)]
        );
        assert_eq!(row.get::<Vec<Mood>, _>(3), vec![]);

        // Through a table, with arrays and NULL as parameters.
        let all = vec![Mood::VeryHappy, Mood::Sad, Mood::Ok];
        client
            .execute(
                "INSERT INTO diary VALUES (1, $1, $2), (2, $3, $4)",
                (Mood::Ok, &all, None::<Mood>, Vec::<Mood>::new()),
            )
            .await
            .unwrap();
        #[derive(FromRow, Debug, PartialEq)]
        struct Day {
            day: i32,
            mood: Option<Mood>,
            moods: Vec<Mood>,
        }
        let days: Vec<Day> = client
            .query_as("SELECT day, mood, moods FROM diary ORDER BY day", ())
            .await
            .unwrap();
        assert_eq!(
            days,
            vec![
                Day {
                    day: 1,
                    mood: Some(Mood::Ok),
                    moods: all.clone(),
                },
                Day {
                    day: 2,
                    mood: None,
                    moods: vec![],
                },
            ]
        );
        let text: String = client
            .query_one("SELECT moods::text FROM diary WHERE day = 1", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(text, "{very_happy,sad,ok}");
        // Enum order is the server's label order.
        let max: Mood = client
            .query_one("SELECT max(m) FROM unnest($1::mood[]) m", (&all,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(max, Mood::VeryHappy);

        // A Rust enum whose labels the server lacks: rejected before any
        // row, even on an empty result.
        let err = client
            .query_as::<(MoodUnrenamed,), _, _>("SELECT mood FROM diary WHERE false", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
        let msg = err.to_string();
        assert!(msg.contains("\"mood\"") && msg.contains("of type mood"), "{msg}");
        assert!(msg.contains("MoodUnrenamed"), "{msg}");
        // And as a parameter, before the server sees the label.
        let err = client
            .query("SELECT $1::mood", (MoodUnrenamed::Sad,))
            .await
            .unwrap_err();
        let msg = format!("{err} / {:?}", std::error::Error::source(&err));
        assert!(msg.contains("\"Sad\""), "{msg}");
        assert!(msg.contains("MoodUnrenamed"), "{msg}");
        assert!(err.as_db_error().is_none(), "the server saw the value: {err}");

        // A subset is accepted; a label it lacks is an error naming it.
        let row = client
            .query_one("SELECT 'sad'::mood, 'very_happy'::mood", ())
            .await
            .unwrap();
        assert_eq!(row.get::<MoodSubset, _>(0), MoodSubset::Down);
        let msg = row.try_get::<MoodSubset, _>(1).unwrap_err().to_string();
        assert!(
            msg.contains("mood value \"very_happy\" has no variant in Rust enum MoodSubset"),
            "{msg}"
        );
        let back: MoodSubset = client
            .query_one("SELECT $1::mood", (MoodSubset::Fine,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(back, MoodSubset::Fine);
        // Text is not an enum, and an enum is not text (without a cast).
        let row = client.query_one("SELECT 'ok'::text", ()).await.unwrap();
        assert!(row.try_get::<Mood, _>(0).is_err());
    })
    .await;
}

#[derive(Encode, Decode, Debug, Clone, Copy, PartialEq)]
struct UserId(i64);

#[derive(Encode, Decode, Debug, Clone, PartialEq)]
struct Email {
    address: String,
}

#[derive(Decode, Debug, PartialEq)]
struct Borrowed<'a>(&'a str);

#[tokio::test]
async fn transparent_newtypes() {
    bounded(async {
        let db = database("derive_newtype");
        let client = connect(&db).await;
        let ids = vec![UserId(1), UserId(i64::MIN)];
        let row = client
            .query_one(
                "SELECT $1::int8, $2::int8[], $3::text, $4::int8, pg_typeof($1)::text",
                (
                    UserId(42),
                    &ids,
                    Email {
                        address: "a@b".into(),
                    },
                    None::<UserId>,
                ),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<UserId, _>(0), UserId(42));
        assert_eq!(row.get::<Vec<UserId>, _>(1), ids);
        assert_eq!(row.get::<Email, _>(2).address, "a@b");
        assert_eq!(row.get::<Borrowed<'_>, _>(2), Borrowed("a@b"));
        assert_eq!(row.get::<Option<UserId>, _>(3), None);
        assert_eq!(row.get::<&str, _>(4), "bigint");
        // The inner type's checks apply: int8 is not an int4 newtype's.
        #[derive(Decode, Debug)]
        #[allow(dead_code)]
        struct Small(i32);
        let err = row.try_get::<Small, _>(0).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        let err = row.try_get::<UserId, _>(3).unwrap_err();
        assert!(err.to_string().contains("NULL"), "{err}");
    })
    .await;
}

#[tokio::test]
async fn anonymous_records_read_as_tuples() {
    bounded(async {
        let db = database("derive_record");
        let client = connect(&db).await;
        let row = client
            .query_one(
                "SELECT ROW(1, 'a'::text, NULL::int8), ROW(), ARRAY[ROW(1, 'x'::text), ROW(2, 'y')]",
                (),
            )
            .await
            .unwrap();
        let (a, b, c): (i32, String, Option<i64>) = row.get(0);
        assert_eq!((a, b.as_str(), c), (1, "a", None));
        // Borrowed fields point into the row.
        let (_, s, _): (i32, &str, Option<i64>) = row.get(0);
        assert_eq!(s, "a");
        let pairs: Vec<(i64, String)> = row.get(2);
        assert_eq!(pairs, vec![(1, "x".to_string()), (2, "y".to_string())]);
        // Wrong field types and counts are errors naming the field.
        let err = row.try_get::<(i32, i32, Option<i64>), _>(0).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("field 1 of record has type text, which cannot be read as Rust type i32"),
            "{msg}"
        );
        let err = row.try_get::<(i32, String), _>(0).unwrap_err();
        assert!(err.to_string().contains("record has 3 fields"), "{err}");
        assert!(row.try_get::<(i32,), _>(1).is_err());
        // An int8 field never narrows into i32.
        let row = client
            .query_one("SELECT ROW(5000000000::int8)", ())
            .await
            .unwrap();
        assert!(row.try_get::<(i32,), _>(0).is_err());
        assert_eq!(row.get::<(i64,), _>(0), (5_000_000_000,));
    })
    .await;
}

#[derive(FromRow, Debug, PartialEq)]
struct Narrow {
    id: i32,
}

#[derive(FromRow, Debug, PartialEq)]
struct Audit {
    created_by: String,
    #[pg(rename = "version")]
    rev: i32,
}

#[derive(FromRow, Debug, PartialEq)]
#[pg(rename_all = "camelCase")]
struct User {
    user_id: i64,
    #[pg(rename = "email_address")]
    email: String,
    #[pg(default)]
    nick_name: Option<String>,
    #[pg(default)]
    score: i32,
    #[pg(try_from = "i32")]
    age: u8,
    #[pg(with = "upper")]
    country: String,
    #[pg(flatten)]
    audit: Audit,
    mood: Option<Mood>,
}

fn upper(row: &pgpipe::Row, index: usize) -> Result<String, pgpipe::Error> {
    Ok(row.try_get::<&str, _>(index)?.to_uppercase())
}

#[derive(FromRow, Debug, PartialEq)]
struct Pair(i32, #[pg(try_from = "i64")] u32);

#[tokio::test]
async fn from_row_attributes_work() {
    bounded(async {
        let db = database("derive_fromrow");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'very_happy')")
            .await
            .unwrap();
        let sql = r#"SELECT 7::int8 AS "userId", 'a@b' AS email_address, 30 AS age,
                            'fr' AS country, 'admin' AS created_by, 3 AS version,
                            'ok'::mood AS mood, 'zed' AS "nickName""#;
        let user: User = client.query_one_as(sql, ()).await.unwrap();
        assert_eq!(
            user,
            User {
                user_id: 7,
                email: "a@b".into(),
                nick_name: Some("zed".into()),
                score: 0,
                age: 30,
                country: "FR".into(),
                audit: Audit {
                    created_by: "admin".into(),
                    rev: 3,
                },
                mood: Some(Mood::Ok),
            }
        );
        // Without the default columns, and with an extra column: fine.
        let users: Vec<User> = client
            .query_as(
                r#"SELECT 8::int8 AS "userId", 'c@d' AS email_address, 255 AS age, 'de' AS country,
                          'me' AS created_by, 1 AS version, NULL::mood AS mood, 99 AS score, 1 AS extra
                   UNION ALL
                   SELECT 9, 'e@f', 0, 'it', 'you', 2, 'sad', 98, 1"#,
                (),
            )
            .await
            .unwrap();
        assert_eq!(users.len(), 2);
        assert_eq!(users[0].nick_name, None);
        assert_eq!(users[0].score, 99);
        assert_eq!(users[0].age, 255);
        assert_eq!(users[0].mood, None);
        assert_eq!(users[1].country, "IT");
        assert_eq!(users[1].mood, Some(Mood::Sad));

        // try_from failing names the field and both types.
        let err = client
            .query_one_as::<User, _, _>(
                r#"SELECT 1::int8 AS "userId", '' AS email_address, 300 AS age, '' AS country,
                          '' AS created_by, 1 AS version, NULL::mood AS mood"#,
                (),
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        let msg = err.to_string();
        assert!(msg.contains("User.age"), "{msg}");
        assert!(msg.contains("i32") && msg.contains("u8"), "{msg}");
        // The `with` function's error names the field too.
        let err = client
            .query_one_as::<User, _, _>(
                r#"SELECT 1::int8 AS "userId", '' AS email_address, 3 AS age, NULL::text AS country,
                          '' AS created_by, 1 AS version, NULL::mood AS mood"#,
                (),
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains("User.country"), "{err}");

        // Tuple structs read by position.
        let pairs: Vec<Pair> = client
            .query_as("SELECT 1, 4294967295::int8 UNION ALL SELECT -1, 0", ())
            .await
            .unwrap();
        assert_eq!(pairs, vec![Pair(1, u32::MAX), Pair(-1, 0)]);
        let err = client
            .query_one_as::<Pair, _, _>("SELECT 1, -1::int8", ())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("Pair.1"), "{err}");
    })
    .await;
}

#[tokio::test]
async fn from_row_mismatches_fail_before_any_row() {
    bounded(async {
        let db = database("derive_fromrow_err");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE t (id int8, name text); INSERT INTO t VALUES (1, 'x')")
            .await
            .unwrap();

        // Each case also runs on an empty result: the check looks at the
        // columns, not at the rows.
        for filter in ["", " WHERE false"] {
            // int8 column into an i32 field.
            let err = client
                .query_as::<Narrow, _, _>(&format!("SELECT id FROM t{filter}"), ())
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
            let msg = format!("{err}");
            assert!(msg.contains("\"id\""), "{msg}");
            assert!(msg.contains("int8"), "{msg}");
            assert!(msg.contains("Narrow.id"), "{msg}");
            assert!(msg.contains("i32"), "{msg}");

            // text into i32.
            let err = client
                .query_as::<Narrow, _, _>(&format!("SELECT name AS id FROM t{filter}"), ())
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
            let msg = format!("{err}");
            assert!(msg.contains("text") && msg.contains("i32"), "{msg}");
            assert!(msg.contains("Narrow.id"), "{msg}");

            // A wrong column name.
            let err = client
                .query_as::<Narrow, _, _>(&format!("SELECT id AS ident FROM t{filter}"), ())
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ColumnNotFound, "{err}");
            let msg = err.to_string();
            assert!(
                msg.contains("Narrow.id needs a column named \"id\""),
                "{msg}"
            );
            assert!(msg.contains("[\"ident\"]"), "{msg}");

            // Too few columns, for a tuple and a tuple struct.
            let err = client
                .query_as::<(i64, String), _, _>(&format!("SELECT id FROM t{filter}"), ())
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ColumnCount, "{err}");
            let err = client
                .query_as::<Pair, _, _>(&format!("SELECT 1 FROM t{filter}"), ())
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ColumnCount, "{err}");
            assert!(
                err.to_string()
                    .contains("Pair takes 2 column(s), but the result has 1"),
                "{err}"
            );

            // A flattened struct's columns are checked too.
            let err = client
                .query_as::<User, _, _>(
                    &format!(
                        r#"SELECT id AS "userId", name AS email_address, 1 AS age, name AS country,
                                  name AS created_by, id AS version, NULL AS mood FROM t{filter}"#
                    ),
                    (),
                )
                .await
                .unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains("Audit.rev") && msg.contains("int8"), "{msg}");
        }
    })
    .await;
}
