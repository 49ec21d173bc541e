//! Binary encoding and decoding of PostgreSQL types.
