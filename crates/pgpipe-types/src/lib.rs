//! Binary encoding and decoding of PostgreSQL values for pgpipe.
//!
//! Two traits carry a Rust type to and from the wire: [`Encode`] writes a
//! query parameter in PostgreSQL's binary format, [`Decode`] reads a column
//! value. Both say which PostgreSQL types they accept, so a mismatch is a clear
//! error naming both types instead of garbage. Parameter lists are tuples or
//! slices through [`Params`].
//!
//! ```
//! use pgpipe_types::{Decode, Encode, Type};
//! use bytes::BytesMut;
//!
//! let mut buf = BytesMut::new();
//! 42i32.encode(&Type::INT4, &mut buf).unwrap();
//! assert_eq!(&buf[..], &[0, 0, 0, 42]);
//! assert_eq!(i32::decode(&Type::INT4, &buf).unwrap(), 42);
//! assert!(!<i32 as Decode>::accepts(&Type::INT8));
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

mod array;
mod bit;
mod bool;
mod bytea;
#[cfg(feature = "postgres-types")]
pub mod compat;
mod composite;
mod cursor;
pub mod datetime;
mod enums;
mod error;
mod float;
mod geometric;
mod hstore;
mod int;
mod json;
mod lsn;
mod money;
mod net;
mod numeric;
mod option;
mod params;
mod range;
mod snapshot;
mod text;
mod traits;
mod tsvector;
mod ty;
#[cfg(feature = "uuid")]
mod uuid;
mod xid;

pub use array::{Array, ArrayError, Dimension};
pub use bit::{BitString, BitStringError};
pub use composite::{CompositeField, CompositeReader, CompositeWriter};
pub use datetime::{
    Date, Interval, RangeError, Time, TimeTz, Timestamp, TimestampTz, WithInfinity,
};
pub use error::{BoxError, UnexpectedNull, WrongType};
pub use geometric::{Circle, Line, LineSegment, Path, PgBox, Point, Polygon};
#[cfg(feature = "serde_json")]
pub use json::Json;
pub use lsn::{LsnParseError, PgLsn};
pub use money::Money;
pub use net::{Cidr, Inet, MacAddr, MacAddr8, NetError};
pub use numeric::{Numeric, NumericError};
pub use params::{encode_param, Params};
pub use pgpipe_proto::frontend::IsNull;
pub use pgpipe_proto::Oid;
pub use range::{Multirange, Range};
pub use snapshot::{PgSnapshot, SnapshotError};
pub use traits::{Decode, Encode, StaticType, TypeRef};
pub use tsvector::{Lexeme, TsVector, TsVectorError, Weight};
pub use ty::{Field, Kind, Type};
pub use xid::{Cid, Tid, Xid, Xid8};

#[doc(hidden)]
#[path = "derive_support.rs"]
pub mod __private;
