//! The geometric types: `point` ([`Point`]), `lseg` ([`LineSegment`]),
//! `box` ([`PgBox`]), `path` ([`Path`]), `polygon` ([`Polygon`]), `line`
//! ([`Line`]) and `circle` ([`Circle`]).
//!
//! Coordinates are `float8` on the wire and `f64` here, so every value
//! (NaN and the infinities included) comes back bit for bit.
//! [`Display`](fmt::Display) writes PostgreSQL's text for each type, floats
//! as the server writes them with the default `extra_float_digits`
//! (shortest exact form, `1e+300`; in the rare tie where the server writes
//! one digit more, both texts read back as the same value). What the server's binary input refuses
//! is refused here before sending: a path or polygon without points, a
//! line whose `A` and `B` are both zero, a circle with a negative radius.

use std::fmt;

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use crate::cursor::Cursor;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// Writes `v` as PostgreSQL's `float8out` does with `extra_float_digits`
/// above 0: the shortest digits that read back exactly, fixed notation for
/// decimal exponents from -4 to 14, else `d.ddde+XX`. One rare difference:
/// when the shortest digits lie exactly halfway above `v` (they still read
/// back as `v`, ties to even), PostgreSQL's Ryu excludes them and writes one
/// digit more (`4.5049834445571616e+16` where this writes
/// `4.504983444557162e+16`); both texts read back as the same value.
pub(crate) fn write_pg_float(f: &mut fmt::Formatter<'_>, v: f64) -> fmt::Result {
    if v.is_nan() {
        return f.write_str("NaN");
    }
    if v.is_infinite() {
        return f.write_str(if v < 0.0 { "-Infinity" } else { "Infinity" });
    }
    if v == 0.0 {
        return f.write_str(if v.is_sign_negative() { "-0" } else { "0" });
    }
    // `{:e}` gives the shortest exact digits: `-1.2345e-7`.
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..15).contains(&exp) {
        return write!(f, "{v}");
    }
    let sign = if exp < 0 { '-' } else { '+' };
    write!(f, "{mantissa}e{sign}{:02}", exp.unsigned_abs())
}

/// PostgreSQL's `float8_lt`: NaN is equal to itself and above every
/// other value.
fn float8_lt(a: f64, b: f64) -> bool {
    if a.is_nan() {
        false
    } else if b.is_nan() {
        true
    } else {
        a < b
    }
}

/// One point's text, `(x,y)`.
fn write_point(f: &mut fmt::Formatter<'_>, p: &Point) -> fmt::Result {
    f.write_str("(")?;
    write_pg_float(f, p.x)?;
    f.write_str(",")?;
    write_pg_float(f, p.y)?;
    f.write_str(")")
}

fn write_points(f: &mut fmt::Formatter<'_>, points: &[Point]) -> fmt::Result {
    for (i, p) in points.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write_point(f, p)?;
    }
    Ok(())
}

fn put_point(buf: &mut BytesMut, p: &Point) {
    buf.put_f64_inline(p.x);
    buf.put_f64_inline(p.y);
}

fn read_point(c: &mut Cursor<'_>) -> Result<Point, BoxError> {
    Ok(Point {
        x: c.f64()?,
        y: c.f64()?,
    })
}

/// The largest point count of a `path` or `polygon` (what fits in a 1 GB
/// value with its header).
const MAX_POINTS: usize = (i32::MAX as usize - 64) / 16;

/// Checks a path or polygon's point count before sending.
fn check_count(what: &str, n: usize) -> Result<(), BoxError> {
    if n == 0 {
        return Err(
            format!("a {what} needs at least one point (PostgreSQL refuses an empty one)").into(),
        );
    }
    if n > MAX_POINTS {
        return Err(
            format!("a {what} of {n} points is more than PostgreSQL holds ({MAX_POINTS})").into(),
        );
    }
    Ok(())
}

/// Reads a point count and that many points, the count checked against
/// the bytes before anything is reserved.
fn read_points(what: &'static str, c: &mut Cursor<'_>) -> Result<Vec<Point>, BoxError> {
    let n = c.i32()?;
    if n <= 0 || c.remaining() != n as usize * 16 {
        return Err(format!(
            "invalid binary {what} value: {n} points in {} bytes",
            c.remaining()
        )
        .into());
    }
    let mut points = Vec::with_capacity(n as usize);
    for _ in 0..n {
        points.push(read_point(c)?);
    }
    Ok(points)
}

/// Implements `StaticType`, `Encode` and `Decode` from a type's encode
/// body and decode function.
macro_rules! geometric {
    ($t:ty, $oid:literal, $pg:ident, $name:literal, |$v:ident, $buf:ident| $enc:block, |$c:ident| $dec:block) => {
        impl StaticType for $t {
            const TYPE: TypeRef = TypeRef::Oid($oid);
        }

        impl Encode for $t {
            fn type_ref(&self) -> TypeRef {
                Self::TYPE
            }
            fn accepts(&self, ty: &Type) -> bool {
                ty.is(&[Type::$pg])
            }
            fn encode(&self, _: &Type, $buf: &mut BytesMut) -> Result<IsNull, BoxError> {
                let $v = self;
                $enc
                Ok(IsNull::No)
            }
        }

        impl<'a> Decode<'a> for $t {
            fn accepts(ty: &Type) -> bool {
                ty.is(&[Type::$pg])
            }
            fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
                let mut $c = Cursor::new($name, raw);
                let value = $dec;
                $c.finish()?;
                Ok(value)
            }
        }
    };
}

/// A `point`: `(x,y)`.
///
/// ```
/// use pgpipe_types::Point;
/// assert_eq!(Point::new(1.5, -2.0).to_string(), "(1.5,-2)");
/// assert_eq!(Point::new(1e300, f64::NAN).to_string(), "(1e+300,NaN)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// The x coordinate.
    pub x: f64,
    /// The y coordinate.
    pub y: f64,
}

impl Point {
    /// The point `(x,y)`.
    pub const fn new(x: f64, y: f64) -> Point {
        Point { x, y }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_point(f, self)
    }
}

geometric!(
    Point,
    600,
    POINT,
    "point",
    |v, buf| {
        put_point(buf, v);
    },
    |c| { read_point(&mut c)? }
);

/// An `lseg`: the line segment between two points, `[(x1,y1),(x2,y2)]`.
///
/// ```
/// use pgpipe_types::{LineSegment, Point};
/// let s = LineSegment::new(Point::new(0.0, 0.0), Point::new(3.0, 4.0));
/// assert_eq!(s.to_string(), "[(0,0),(3,4)]");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LineSegment {
    /// The first end point.
    pub start: Point,
    /// The second end point.
    pub end: Point,
}

impl LineSegment {
    /// The segment from `start` to `end`.
    pub const fn new(start: Point, end: Point) -> LineSegment {
        LineSegment { start, end }
    }
}

impl fmt::Display for LineSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        write_points(f, &[self.start, self.end])?;
        f.write_str("]")
    }
}

geometric!(
    LineSegment,
    601,
    LSEG,
    "lseg",
    |v, buf| {
        put_point(buf, &v.start);
        put_point(buf, &v.end);
    },
    |c| {
        LineSegment {
            start: read_point(&mut c)?,
            end: read_point(&mut c)?,
        }
    }
);

/// A `box`: a rectangle given by two opposite corners, kept as PostgreSQL
/// keeps it: the upper right corner (`high`) and the lower left (`low`),
/// whichever corners it was made from. Named `PgBox` so that it does not
/// shadow `std::boxed::Box`.
///
/// ```
/// use pgpipe_types::{PgBox, Point};
/// let b = PgBox::new(Point::new(1.0, 4.0), Point::new(3.0, 2.0));
/// assert_eq!(b.high(), Point::new(3.0, 4.0));
/// assert_eq!(b.low(), Point::new(1.0, 2.0));
/// assert_eq!(b.to_string(), "(3,4),(1,2)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PgBox {
    high: Point,
    low: Point,
}

impl PgBox {
    /// The box with corners `a` and `b` (any two opposite corners, in any
    /// order), normalised as the server's `box_recv` does: a coordinate
    /// pair is swapped when the first is less than the second, in
    /// PostgreSQL's float order (NaN above every number).
    pub fn new(a: Point, b: Point) -> PgBox {
        let (mut high, mut low) = (a, b);
        if float8_lt(high.x, low.x) {
            std::mem::swap(&mut high.x, &mut low.x);
        }
        if float8_lt(high.y, low.y) {
            std::mem::swap(&mut high.y, &mut low.y);
        }
        PgBox { high, low }
    }

    /// The upper right corner (the larger coordinates).
    pub fn high(&self) -> Point {
        self.high
    }

    /// The lower left corner (the smaller coordinates).
    pub fn low(&self) -> Point {
        self.low
    }
}

impl fmt::Display for PgBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_points(f, &[self.high, self.low])
    }
}

geometric!(
    PgBox,
    603,
    BOX,
    "box",
    |v, buf| {
        put_point(buf, &v.high);
        put_point(buf, &v.low);
    },
    |c| { PgBox::new(read_point(&mut c)?, read_point(&mut c)?) }
);

/// A `path`: points joined in order, open (`[(x1,y1),...]`) or closed
/// (`((x1,y1),...)`, the last joined back to the first). A path has at
/// least one point; an empty one is refused before sending.
///
/// ```
/// use pgpipe_types::{Path, Point};
/// let pts = vec![Point::new(0.0, 0.0), Point::new(1.0, 1.0)];
/// assert_eq!(Path::open(pts.clone()).to_string(), "[(0,0),(1,1)]");
/// assert_eq!(Path::closed(pts).to_string(), "((0,0),(1,1))");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Path {
    /// The points in order.
    pub points: Vec<Point>,
    /// Whether the last point joins back to the first.
    pub closed: bool,
}

impl Path {
    /// An open path through `points`.
    pub fn open(points: Vec<Point>) -> Path {
        Path {
            points,
            closed: false,
        }
    }

    /// A closed path through `points`.
    pub fn closed(points: Vec<Point>) -> Path {
        Path {
            points,
            closed: true,
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.closed { "(" } else { "[" })?;
        write_points(f, &self.points)?;
        f.write_str(if self.closed { ")" } else { "]" })
    }
}

geometric!(
    Path,
    602,
    PATH,
    "path",
    |v, buf| {
        check_count("path", v.points.len())?;
        buf.put_u8_inline(u8::from(v.closed));
        buf.put_i32_inline(v.points.len() as i32);
        for p in &v.points {
            put_point(buf, p);
        }
    },
    |c| {
        // The server's path_recv reads any non-zero byte as closed.
        let closed = c.u8()? != 0;
        Path {
            closed,
            points: read_points("path", &mut c)?,
        }
    }
);

/// A `polygon`: a closed figure through its points, `((x1,y1),...)`; at
/// least one point (an empty one is refused before sending).
///
/// ```
/// use pgpipe_types::{Point, Polygon};
/// let p = Polygon::new(vec![Point::new(0.0, 0.0), Point::new(0.0, 1.0), Point::new(1.0, 0.0)]);
/// assert_eq!(p.to_string(), "((0,0),(0,1),(1,0))");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Polygon {
    /// The vertices in order.
    pub points: Vec<Point>,
}

impl Polygon {
    /// The polygon with these vertices.
    pub fn new(points: Vec<Point>) -> Polygon {
        Polygon { points }
    }
}

impl fmt::Display for Polygon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        write_points(f, &self.points)?;
        f.write_str(")")
    }
}

geometric!(
    Polygon,
    604,
    POLYGON,
    "polygon",
    |v, buf| {
        check_count("polygon", v.points.len())?;
        buf.put_i32_inline(v.points.len() as i32);
        for p in &v.points {
            put_point(buf, p);
        }
    },
    |c| {
        Polygon {
            points: read_points("polygon", &mut c)?,
        }
    }
);

/// A `line`: the infinite line `Ax + By + C = 0`, `{A,B,C}`. `A` and `B`
/// must not both be zero (within PostgreSQL's tolerance of 1e-6); such a
/// line is refused before sending, as the server would refuse it.
///
/// ```
/// use pgpipe_types::Line;
/// assert_eq!(Line::new(1.0, -1.0, 0.0).to_string(), "{1,-1,0}");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// The coefficient of x.
    pub a: f64,
    /// The coefficient of y.
    pub b: f64,
    /// The constant.
    pub c: f64,
}

impl Line {
    /// The line `a*x + b*y + c = 0`.
    pub const fn new(a: f64, b: f64, c: f64) -> Line {
        Line { a, b, c }
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        write_pg_float(f, self.a)?;
        f.write_str(",")?;
        write_pg_float(f, self.b)?;
        f.write_str(",")?;
        write_pg_float(f, self.c)?;
        f.write_str("}")
    }
}

/// PostgreSQL's `FPzero`: within its geometric tolerance of zero.
fn fp_zero(v: f64) -> bool {
    v.abs() <= 1e-6
}

geometric!(
    Line,
    628,
    LINE,
    "line",
    |v, buf| {
        if fp_zero(v.a) && fp_zero(v.b) {
            return Err(format!("invalid line {v}: A and B cannot both be zero").into());
        }
        buf.put_f64_inline(v.a);
        buf.put_f64_inline(v.b);
        buf.put_f64_inline(v.c);
    },
    |c| {
        Line {
            a: c.f64()?,
            b: c.f64()?,
            c: c.f64()?,
        }
    }
);

/// A `circle`: a center and a radius, `<(x,y),r>`. A negative radius is
/// refused before sending, as the server would refuse it.
///
/// ```
/// use pgpipe_types::{Circle, Point};
/// assert_eq!(Circle::new(Point::new(1.0, 2.0), 0.5).to_string(), "<(1,2),0.5>");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Circle {
    /// The center.
    pub center: Point,
    /// The radius (not negative).
    pub radius: f64,
}

impl Circle {
    /// The circle around `center` of radius `radius`.
    pub const fn new(center: Point, radius: f64) -> Circle {
        Circle { center, radius }
    }
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<")?;
        write_point(f, &self.center)?;
        f.write_str(",")?;
        write_pg_float(f, self.radius)?;
        f.write_str(">")
    }
}

geometric!(
    Circle,
    718,
    CIRCLE,
    "circle",
    |v, buf| {
        if v.radius < 0.0 {
            return Err(format!("invalid circle {v}: the radius is negative").into());
        }
        put_point(buf, &v.center);
        buf.put_f64_inline(v.radius);
    },
    |c| {
        Circle {
            center: read_point(&mut c)?,
            radius: c.f64()?,
        }
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T>(v: &T, ty: &Type) -> T
    where
        T: Encode + for<'a> Decode<'a>,
    {
        let mut buf = BytesMut::new();
        v.encode(ty, &mut buf).unwrap();
        T::decode(ty, &buf).unwrap()
    }

    struct F(f64);
    impl fmt::Display for F {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_pg_float(f, self.0)
        }
    }

    #[test]
    fn floats_print_as_float8out() {
        for (v, text) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (1.5, "1.5"),
            (1e-4, "0.0001"),
            (1e-5, "1e-05"),
            (123456789012345.0, "123456789012345"),
            (1e15, "1e+15"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-2.2250738585072014e-308, "-2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (0.1, "0.1"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(F(v).to_string(), text);
        }
    }

    #[test]
    fn values_round_trip() {
        let p = Point::new(f64::MAX, -0.0);
        assert_eq!(round_trip(&p, &Type::POINT), p);
        let s = LineSegment::new(p, Point::new(1.0, 2.0));
        assert_eq!(round_trip(&s, &Type::LSEG), s);
        let b = PgBox::new(Point::new(0.0, 0.0), Point::new(-1.0, 5.0));
        assert_eq!(round_trip(&b, &Type::BOX), b);
        // NaN sorts above numbers, as on the server.
        let b = PgBox::new(Point::new(0.0, -0.0), Point::new(0.0, f64::NAN));
        assert!(b.high().y.is_nan() && b.low().y == 0.0);
        for closed in [false, true] {
            let path = Path {
                points: vec![p, Point::new(1.0, 1.0)],
                closed,
            };
            assert_eq!(round_trip(&path, &Type::PATH), path);
        }
        let poly = Polygon::new(vec![Point::new(1.0, 1.0)]);
        assert_eq!(round_trip(&poly, &Type::POLYGON), poly);
        let l = Line::new(0.0, 1e-5, f64::INFINITY);
        assert_eq!(round_trip(&l, &Type::LINE), l);
        let c = Circle::new(p, 0.0);
        assert_eq!(round_trip(&c, &Type::CIRCLE), c);
    }

    #[test]
    fn refuses_what_the_server_refuses() {
        let mut buf = BytesMut::new();
        let err = Path::open(vec![])
            .encode(&Type::PATH, &mut buf)
            .unwrap_err();
        assert!(err.to_string().contains("at least one point"), "{err}");
        assert!(Polygon::new(vec![])
            .encode(&Type::POLYGON, &mut buf)
            .is_err());
        let err = Line::new(1e-7, 0.0, 1.0)
            .encode(&Type::LINE, &mut buf)
            .unwrap_err();
        assert!(
            err.to_string().contains("A and B cannot both be zero"),
            "{err}"
        );
        let err = Circle::new(Point::default(), -1.0)
            .encode(&Type::CIRCLE, &mut buf)
            .unwrap_err();
        assert!(err.to_string().contains("radius is negative"), "{err}");
        assert!(buf.is_empty(), "nothing written for a refused value");
    }

    #[test]
    fn hostile_bytes_are_errors() {
        assert!(Point::decode(&Type::POINT, &[0; 15]).is_err());
        assert!(Point::decode(&Type::POINT, &[0; 17]).is_err());
        assert!(PgBox::decode(&Type::BOX, &[0; 31]).is_err());
        // Counts the bytes do not hold.
        for n in [0i32, -1, 2, i32::MAX] {
            let mut raw = vec![1];
            raw.extend_from_slice(&n.to_be_bytes());
            raw.extend_from_slice(&[0; 16]);
            assert!(Path::decode(&Type::PATH, &raw).is_err(), "{n}");
            assert!(Polygon::decode(&Type::POLYGON, &raw[1..]).is_err(), "{n}");
        }
        assert!(!<Point as Decode>::accepts(&Type::BOX));
        assert!(!<PgBox as Decode>::accepts(&Type::POLYGON));
    }
}
