//! Authentication exchanges as sans-IO state machines.
//! CONTRACT STUB: the auth helper writes the bodies.

pub mod md5;
pub mod scram;
