//! The seven geometric types against the real server: each decoded from
//! literals (extremes, NaN and infinities, -0 included), sent back through
//! a prepared statement and as SQL text, the server's text compared with
//! ours; arrays; NULL; what the server refuses refused before sending.

mod common;

use std::fmt::{Debug, Display};

use common::values::{literal_round_trip, null, round_trip};
use common::{bounded, connect, database};
use pgpipe::types::{Circle, Line, LineSegment, Path, PgBox, Point, Polygon};
use pgpipe::{Client, Decode, Encode};

/// `lit::ty` read, shown by the server as `text`, sent back both ways and
/// shown the same, and `Display`ed as the server shows it.
async fn check<T>(client: &Client, ty: &str, lit: &str, text: &str) -> T
where
    T: Encode + Sync + for<'a> Decode<'a> + Debug + Display + PartialEq + Clone,
{
    let v: T = literal_round_trip(client, ty, &format!("'{lit}'"), text, false).await;
    assert_eq!(v.to_string(), text, "our Display of {lit}::{ty}");
    // `~=` (same as) where the type has it: the value the server keeps is
    // the one it was given, coordinate for coordinate.
    if ["point", "box", "polygon", "circle"].contains(&ty) {
        let row = client
            .query_one(&format!("SELECT $1::{ty} ~= '{lit}'::{ty}"), (&v,))
            .await
            .unwrap();
        let same: Option<bool> = row.get(0);
        // NaN coordinates are never "the same" on the server.
        assert!(same.unwrap_or(true) || text.contains("NaN"), "{lit}::{ty}");
    }
    round_trip(client, ty, v.clone(), text).await;
    v
}

#[tokio::test]
async fn points_lsegs_lines_and_circles() {
    bounded(async {
        let db = database("geo_point");
        let client = connect(&db).await;
        for (lit, text, want) in [
            ("(0,0)", "(0,0)", Point::new(0.0, 0.0)),
            ("(-0,1.5)", "(-0,1.5)", Point::new(-0.0, 1.5)),
            (
                "(1e300,-1e-300)",
                "(1e+300,-1e-300)",
                Point::new(1e300, -1e-300),
            ),
            (
                "(1.7976931348623157e+308,5e-324)",
                "(1.7976931348623157e+308,5e-324)",
                Point::new(f64::MAX, 5e-324),
            ),
            (
                "(0.1,123456789012345)",
                "(0.1,123456789012345)",
                Point::new(0.1, 123456789012345.0),
            ),
            (
                "(-Infinity,Infinity)",
                "(-Infinity,Infinity)",
                Point::new(f64::NEG_INFINITY, f64::INFINITY),
            ),
        ] {
            let v: Point = check(&client, "point", lit, text).await;
            assert_eq!(v, want);
            assert_eq!(v.x.to_bits(), want.x.to_bits(), "{lit}");
        }
        // NaN is not equal to itself; compare bits.
        let v: Point = literal_round_trip(&client, "point", "'(NaN,1)'", "(NaN,1)", false).await;
        assert!(v.x.is_nan() && v.y == 1.0);

        let v: LineSegment = check(&client, "lseg", "[(1,2),(-3,4.25)]", "[(1,2),(-3,4.25)]").await;
        assert_eq!(
            v,
            LineSegment::new(Point::new(1.0, 2.0), Point::new(-3.0, 4.25))
        );
        check::<LineSegment>(&client, "lseg", "[(0,0),(0,0)]", "[(0,0),(0,0)]").await;

        for (lit, text, want) in [
            ("{1,-1,0}", "{1,-1,0}", Line::new(1.0, -1.0, 0.0)),
            ("{0,1,-5}", "{0,1,-5}", Line::new(0.0, 1.0, -5.0)),
            (
                "{1e-5,0,1e+300}",
                "{1e-05,0,1e+300}",
                Line::new(1e-5, 0.0, 1e300),
            ),
        ] {
            assert_eq!(check::<Line>(&client, "line", lit, text).await, want);
        }
        for (lit, text, want) in [
            (
                "<(1,2),3>",
                "<(1,2),3>",
                Circle::new(Point::new(1.0, 2.0), 3.0),
            ),
            (
                "<(0,0),0>",
                "<(0,0),0>",
                Circle::new(Point::new(0.0, 0.0), 0.0),
            ),
            (
                "<(1e300,-1e300),1.7976931348623157e308>",
                "<(1e+300,-1e+300),1.7976931348623157e+308>",
                Circle::new(Point::new(1e300, -1e300), f64::MAX),
            ),
        ] {
            assert_eq!(check::<Circle>(&client, "circle", lit, text).await, want);
        }

        // What the server refuses is refused before anything is sent.
        for (sql, value, why) in [
            (
                "SELECT $1::line",
                &Line::new(0.0, 1e-7, 3.0) as &(dyn Encode + Sync),
                "A and B cannot both be zero",
            ),
            (
                "SELECT $1::circle",
                &Circle::new(Point::new(0.0, 0.0), -1.0),
                "radius is negative",
            ),
        ] {
            let err = client.query_one(sql, &[value][..]).await.unwrap_err();
            assert!(format!("{err:#}").contains(why), "{err:#}");
            assert!(
                err.code().is_none(),
                "refused by the server, not by us: {err}"
            );
        }
        // The server agrees that it would refuse them.
        for lit in ["'{0,0,3}'::line", "'<(0,0),-1>'::circle"] {
            assert!(
                client
                    .query_one(&format!("SELECT {lit}"), ())
                    .await
                    .is_err(),
                "{lit}"
            );
        }

        let points = vec![Point::new(1.0, 2.0), Point::new(-0.5, f64::MAX)];
        let row = client
            .query_one("SELECT $1::point[], $1::point[]::text", (&points,))
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<Point>, _>(0), points);
        assert_eq!(
            row.get::<&str, _>(1),
            "{\"(1,2)\",\"(-0.5,1.7976931348623157e+308)\"}"
        );
        let lines = vec![Line::new(1.0, 2.0, 3.0)];
        let circles = vec![Circle::new(Point::new(0.0, 1.0), 2.0)];
        let segs = vec![LineSegment::new(Point::new(0.0, 0.0), Point::new(1.0, 1.0))];
        let row = client
            .query_one(
                "SELECT $1::line[], $2::circle[], $3::lseg[]",
                (&lines, &circles, &segs),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<Line>, _>(0), lines);
        assert_eq!(row.get::<Vec<Circle>, _>(1), circles);
        assert_eq!(row.get::<Vec<LineSegment>, _>(2), segs);
        null::<Point>(&client, "point").await;
        null::<LineSegment>(&client, "lseg").await;
        null::<Line>(&client, "line").await;
        null::<Circle>(&client, "circle").await;
    })
    .await;
}

#[tokio::test]
async fn boxes_paths_and_polygons() {
    bounded(async {
        let db = database("geo_box");
        let client = connect(&db).await;
        // The server keeps the upper right corner first, whatever it is given.
        for (lit, text) in [
            ("(3,4),(1,2)", "(3,4),(1,2)"),
            ("(1,4),(3,2)", "(3,4),(1,2)"),
            ("(1,2),(3,4)", "(3,4),(1,2)"),
            ("(0,0),(0,0)", "(0,0),(0,0)"),
            (
                "(-1e300,1e-300),(1e300,-Infinity)",
                "(1e+300,1e-300),(-1e+300,-Infinity)",
            ),
        ] {
            let v: PgBox = check(&client, "box", lit, text).await;
            assert!(v.high().x >= v.low().x && v.high().y >= v.low().y, "{lit}");
        }
        // Our constructor normalises as the server does: what we send is
        // what it stores.
        let b = PgBox::new(Point::new(1.0, 4.0), Point::new(3.0, 2.0));
        round_trip(&client, "box", b, "(3,4),(1,2)").await;

        for (lit, text, closed, n) in [
            ("[(1,2),(3,4)]", "[(1,2),(3,4)]", false, 2),
            ("((1,2),(3,4),(5,-6))", "((1,2),(3,4),(5,-6))", true, 3),
            ("[(0,0)]", "[(0,0)]", false, 1),
            ("((1e300,NaN))", "((1e+300,NaN))", true, 1),
        ] {
            let v: Path =
                literal_round_trip(&client, "path", &format!("'{lit}'"), text, false).await;
            assert_eq!(v.to_string(), text);
            assert_eq!((v.closed, v.points.len()), (closed, n), "{lit}");
            if !text.contains("NaN") {
                round_trip(&client, "path", v, text).await;
            }
        }
        let long: Vec<Point> = (0..1000)
            .map(|i| Point::new(f64::from(i), -f64::from(i) / 7.0))
            .collect();
        let text = Path::closed(long.clone()).to_string();
        round_trip(&client, "path", Path::closed(long.clone()), &text).await;

        for (lit, text, n) in [
            ("((0,0),(1,1),(1,0))", "((0,0),(1,1),(1,0))", 3),
            ("((1,1))", "((1,1))", 1),
            ("((-0,5e-324),(1.5,2))", "((-0,5e-324),(1.5,2))", 2),
        ] {
            let v: Polygon = check(&client, "polygon", lit, text).await;
            assert_eq!(v.points.len(), n);
        }
        let text = Polygon::new(long.clone()).to_string();
        round_trip(&client, "polygon", Polygon::new(long), &text).await;

        // Empty ones cannot exist on the server: refused here.
        let err = client
            .query_one("SELECT $1::path", (Path::open(vec![]),))
            .await
            .unwrap_err();
        assert!(format!("{err:#}").contains("at least one point"), "{err:#}");
        let err = client
            .query_one("SELECT $1::polygon", (Polygon::new(vec![]),))
            .await
            .unwrap_err();
        assert!(format!("{err:#}").contains("at least one point"), "{err:#}");

        let paths = vec![
            Path::open(vec![Point::new(0.0, 0.0)]),
            Path::closed(vec![Point::new(1.0, 1.0), Point::new(2.0, 2.0)]),
        ];
        let polys = vec![Polygon::new(vec![Point::new(1.0, 1.0)])];
        let boxes = vec![b, PgBox::new(Point::new(-1.0, -1.0), Point::new(0.0, 0.0))];
        let row = client
            .query_one(
                "SELECT $1::path[], $2::polygon[], $3::box[]",
                (&paths, &polys, &boxes),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<Path>, _>(0), paths);
        assert_eq!(row.get::<Vec<Polygon>, _>(1), polys);
        assert_eq!(row.get::<Vec<PgBox>, _>(2), boxes);
        null::<PgBox>(&client, "box").await;
        null::<Path>(&client, "path").await;
        null::<Polygon>(&client, "polygon").await;

        // Each type reads only its own columns.
        let row = client
            .query_one("SELECT '(1,2)'::point, '((1,2))'::polygon", ())
            .await
            .unwrap();
        assert!(row.try_get::<PgBox, _>(0).is_err());
        assert!(row.try_get::<Path, _>(1).is_err());
    })
    .await;
}
