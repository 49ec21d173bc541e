//! What the derives generate, checked without a server: type checks
//! against described types (the client's registry builds the same
//! `Type`s from the catalog), bytes in PostgreSQL's binary formats, and
//! errors. The server round trips are in `crates/pgpipe/tests/derive.rs`.

use bytes::BytesMut;
use pgpipe::types::{Decode, Encode, Field, IsNull, Kind, StaticType, Type, TypeRef};
use pgpipe::{Composite, FromRow, PgEnum};

fn attach_type() -> Type {
    Type::new(
        16390,
        "attach",
        "mail",
        16389,
        Kind::Composite(vec![
            Field {
                name: "filename".into(),
                type_: Type::TEXT,
            },
            Field {
                name: "type".into(),
                type_: Type::TEXT,
            },
            Field {
                name: "size".into(),
                type_: Type::INT8,
            },
        ]),
    )
}

#[derive(Composite, Debug, Clone, PartialEq)]
#[pg(name = "mail.attach")]
struct Attach {
    filename: String,
    r#type: Option<String>,
    size: i64,
}

#[derive(Composite, Debug, PartialEq)]
#[pg(name = "mail.attach", rename_all = "UPPERCASE")]
struct Shouting {
    filename: String,
    r#type: String,
    size: i64,
}

#[derive(Composite, Debug, PartialEq)]
#[pg(name = "mail.attach")]
struct Narrow {
    filename: String,
    r#type: String,
    size: i32,
}

#[derive(Composite, Debug, PartialEq)]
#[pg(name = "mail.attach")]
struct Borrowed<'a> {
    size: i64,
    filename: &'a str,
    r#type: &'a str,
}

#[test]
fn composite_declares_its_type_by_name() {
    assert_eq!(<Attach as StaticType>::TYPE, TypeRef::Named("mail.attach"));
    assert_eq!(
        <Vec<Attach> as StaticType>::TYPE,
        TypeRef::ArrayOf("mail.attach")
    );
    let a = Attach {
        filename: "f".into(),
        r#type: None,
        size: 1,
    };
    assert_eq!(a.type_ref(), TypeRef::Named("mail.attach"));
}

#[test]
fn composite_accepts_checks_every_field() {
    let ty = attach_type();
    assert!(<Attach as Decode>::accepts(&ty));
    assert!(<Borrowed as Decode>::accepts(&ty));
    // Names after rename_all do not match.
    assert!(!<Shouting as Decode>::accepts(&ty));
    // int8 never narrows into i32.
    assert!(!<Narrow as Decode>::accepts(&ty));
    // A bare OID (not described) and other kinds of type are not accepted.
    assert!(!<Attach as Decode>::accepts(&Type::from_oid(16390)));
    assert!(!<Attach as Decode>::accepts(&Type::TEXT));
    assert!(!<Attach as Decode>::accepts(&Type::RECORD));
    // A field more or less on the server.
    let mut fields = match attach_type().kind() {
        Kind::Composite(f) => f.clone(),
        _ => unreachable!(),
    };
    fields.push(Field {
        name: "extra".into(),
        type_: Type::INT4,
    });
    let wider = Type::new(16391, "attach", "mail", 0, Kind::Composite(fields.clone()));
    assert!(!<Attach as Decode>::accepts(&wider));
    fields.truncate(2);
    let fewer = Type::new(16392, "attach", "mail", 0, Kind::Composite(fields));
    assert!(!<Attach as Decode>::accepts(&fewer));
    // A domain over the composite is looked through.
    let dom = Type::new(16393, "attach_d", "mail", 0, Kind::Domain(attach_type()));
    assert!(<Attach as Decode>::accepts(&dom));

    let a = Attach {
        filename: "f".into(),
        r#type: None,
        size: 1,
    };
    assert!(a.accepts(&ty));
    assert!(!a.accepts(&wider));
    assert!(!a.accepts(&Type::from_oid(16390)));
}

#[test]
fn composite_round_trips_in_the_binary_record_format() {
    let ty = attach_type();
    let a = Attach {
        filename: "a.txt".into(),
        r#type: None,
        size: 7,
    };
    let mut buf = BytesMut::new();
    assert_eq!(a.encode(&ty, &mut buf).unwrap(), IsNull::No);
    let mut expected = vec![0, 0, 0, 3];
    expected.extend_from_slice(&[0, 0, 0, 25, 0, 0, 0, 5]);
    expected.extend_from_slice(b"a.txt");
    expected.extend_from_slice(&[0, 0, 0, 25, 255, 255, 255, 255]);
    expected.extend_from_slice(&[0, 0, 0, 20, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 7]);
    assert_eq!(&buf[..], &expected[..]);
    assert_eq!(Attach::decode(&ty, &buf).unwrap(), a);

    // Borrowed fields point into the value; the field order of the Rust
    // struct does not matter.
    let full = Attach {
        filename: "b".into(),
        r#type: Some("text/plain".into()),
        size: -1,
    };
    let mut buf = BytesMut::new();
    full.encode(&ty, &mut buf).unwrap();
    let b = Borrowed::decode(&ty, &buf).unwrap();
    assert_eq!((b.filename, b.r#type, b.size), ("b", "text/plain", -1));
    assert!(std::ptr::eq(b.filename.as_ptr(), buf[12..].as_ptr()));

    // NULL in a non-Option field names the field.
    let err = Borrowed::decode(&ty, &expected).unwrap_err().to_string();
    assert!(
        err.starts_with("field \"type\" of mail.attach as &str: unexpected NULL"),
        "{err}"
    );
    // Not described: the field names are unknown.
    let err = Attach::decode(&Type::from_oid(16390), &expected)
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not a described composite type"), "{err}");
    let err = a
        .encode(&Type::from_oid(16390), &mut BytesMut::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not described"), "{err}");
    // Malformed bytes are errors.
    for cut in 0..expected.len() {
        assert!(Attach::decode(&ty, &expected[..cut]).is_err(), "cut {cut}");
    }
}

#[derive(PgEnum, Debug, Clone, Copy, PartialEq)]
#[pg(name = "mood", rename_all = "kebab-case")]
enum Mood {
    Sad,
    VeryHappy,
    #[pg(rename = "OK!")]
    Ok,
}

fn mood_type(labels: &[&str]) -> Type {
    Type::new(
        70010,
        "mood",
        "public",
        70009,
        Kind::Enum(labels.iter().map(|l| l.to_string()).collect()),
    )
}

#[test]
fn enum_checks_name_and_labels() {
    assert_eq!(<Mood as StaticType>::TYPE, TypeRef::Named("mood"));
    let full = mood_type(&["sad", "very-happy", "OK!", "angry"]);
    assert!(<Mood as Decode>::accepts(&full));
    assert!(Mood::Sad.accepts(&full));
    // One label missing on the server: rejected before any value.
    let partial = mood_type(&["sad", "very-happy"]);
    assert!(!<Mood as Decode>::accepts(&partial));
    assert!(!Mood::Sad.accepts(&partial));
    // Another enum with the same labels is another type.
    let other = Type::new(
        70011,
        "feeling",
        "public",
        0,
        Kind::Enum(vec!["sad".into(), "very-happy".into(), "OK!".into()]),
    );
    assert!(!<Mood as Decode>::accepts(&other));
    assert!(!<Mood as Decode>::accepts(&Type::from_oid(70010)));
    assert!(!<Mood as Decode>::accepts(&Type::TEXT));

    let mut buf = BytesMut::new();
    Mood::VeryHappy.encode(&full, &mut buf).unwrap();
    assert_eq!(&buf[..], b"very-happy");
    assert_eq!(Mood::decode(&full, b"OK!").unwrap(), Mood::Ok);
    let err = Mood::decode(&full, b"angry").unwrap_err().to_string();
    assert_eq!(err, "mood value \"angry\" has no variant in Rust enum Mood");
    let err = Mood::Ok
        .encode(&partial, &mut BytesMut::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("has no label \"OK!\""), "{err}");
}

#[derive(pgpipe::Encode, pgpipe::Decode, Debug, Clone, Copy, PartialEq)]
struct UserId(i64);

#[derive(pgpipe::Encode, pgpipe::Decode, Debug, PartialEq)]
struct Tags {
    inner: Vec<String>,
}

#[test]
fn newtypes_are_their_inner_type() {
    assert_eq!(<UserId as StaticType>::TYPE, TypeRef::Oid(20));
    assert_eq!(UserId(1).type_ref(), TypeRef::Oid(20));
    assert!(UserId(1).accepts(&Type::INT8));
    assert!(!UserId(1).accepts(&Type::INT4));
    assert!(<UserId as Decode>::accepts(&Type::INT4));
    assert!(!<UserId as Decode>::accepts(&Type::TEXT));
    let mut buf = BytesMut::new();
    UserId(-2).encode(&Type::INT8, &mut buf).unwrap();
    assert_eq!(&buf[..], &(-2i64).to_be_bytes());
    assert_eq!(UserId::decode(&Type::INT8, &buf).unwrap(), UserId(-2));
    assert!(UserId::decode_opt(&Type::INT8, None).is_err());
    assert_eq!(
        Option::<UserId>::decode_opt(&Type::INT8, None).unwrap(),
        None
    );
    assert_eq!(<Tags as StaticType>::TYPE, TypeRef::Oid(1009));
    assert!(<Tags as Decode>::accepts(&Type::TEXT_ARRAY));
}

/// Generic structs get the bounds they need.
#[derive(FromRow)]
#[allow(dead_code)]
struct Generic<T> {
    value: T,
    #[pg(flatten)]
    nested: Inner,
}

#[derive(FromRow)]
#[allow(dead_code)]
struct Inner {
    name: String,
}

#[derive(Composite)]
#[pg(name = "wrapper")]
#[allow(dead_code)]
struct GenericComposite<T> {
    value: T,
}

#[test]
fn generic_types_derive() {
    fn from_row<T: FromRow>() {}
    fn codec<T: Encode + StaticType + for<'a> Decode<'a>>() {}
    from_row::<Generic<i64>>();
    from_row::<Generic<Option<String>>>();
    codec::<GenericComposite<i32>>();
    codec::<Vec<GenericComposite<Attach>>>();
}
