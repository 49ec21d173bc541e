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

mod bool;
mod bytea;
mod error;
mod float;
mod int;
mod option;
mod params;
mod text;
mod traits;
mod ty;

pub use error::{BoxError, UnexpectedNull, WrongType};
pub use params::{encode_param, Params};
pub use pgpipe_proto::frontend::IsNull;
pub use pgpipe_proto::Oid;
pub use traits::{Decode, Encode, StaticType, TypeRef};
pub use ty::{Field, Kind, Type};
