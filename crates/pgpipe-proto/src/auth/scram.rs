//! SCRAM-SHA-256 (RFC 5802 / RFC 7677) as PostgreSQL uses it.

use std::fmt;

/// Mechanism name without channel binding.
pub const SCRAM_SHA_256: &str = "SCRAM-SHA-256";
/// Mechanism name with channel binding.
pub const SCRAM_SHA_256_PLUS: &str = "SCRAM-SHA-256-PLUS";
/// Default cap on the iteration count a server may demand.
pub const DEFAULT_MAX_ITERATIONS: u32 = 1_000_000;

/// Channel binding for SCRAM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelBinding {
    /// The client does not support channel binding (`n,,`).
    Unsupported,
    /// The client supports it but thinks the server does not (`y,,`).
    Unrequested,
    /// `tls-server-end-point` with the hash of the server certificate.
    TlsServerEndPoint(Vec<u8>),
}

/// Why a SCRAM exchange failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScramError {
    /// A server message does not follow the SCRAM grammar.
    Malformed(String),
    /// The server nonce does not start with the client nonce.
    NonceMismatch,
    /// The server demanded more iterations than allowed (or zero).
    IterationCount {
        /// Demanded.
        requested: u32,
        /// Allowed maximum.
        max: u32,
    },
    /// The server's signature is wrong: it does not know the password.
    InvalidServerSignature,
    /// The server reported an error (`e=...`).
    Server(String),
    /// A method was called in the wrong state.
    State(&'static str),
}

impl fmt::Display for ScramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for ScramError {}

/// A client-side SCRAM-SHA-256 exchange.
///
/// ```text
/// let mut scram = ScramSha256::new(password, ChannelBinding::Unsupported);
/// send SASLInitialResponse(scram.mechanism(), scram.message())
/// scram.update(server_first)?;   send SASLResponse(scram.message())
/// scram.finish(server_final)?;
/// ```
#[derive(Debug)]
pub struct ScramSha256 {
    _private: (),
}

impl ScramSha256 {
    /// Starts an exchange with a random nonce; `password` is SASLprep-normalised.
    pub fn new(password: &[u8], channel_binding: ChannelBinding) -> ScramSha256 {
        let _ = (password, channel_binding);
        todo!()
    }
    /// Starts an exchange with a given client nonce (for test vectors).
    pub fn with_nonce(password: &[u8], channel_binding: ChannelBinding, nonce: &str) -> ScramSha256 {
        let _ = (password, channel_binding, nonce);
        todo!()
    }
    /// Caps the iteration count the server may demand.
    pub fn max_iterations(mut self, max: u32) -> ScramSha256 {
        let _ = (&mut self, max);
        todo!()
    }
    /// The mechanism name to put in SASLInitialResponse.
    pub fn mechanism(&self) -> &'static str {
        todo!()
    }
    /// The message to send now: client-first before [`update`](Self::update),
    /// client-final after it.
    pub fn message(&self) -> &[u8] {
        todo!()
    }
    /// Takes the server-first message (AuthenticationSASLContinue).
    pub fn update(&mut self, server_first: &[u8]) -> Result<(), ScramError> {
        let _ = server_first;
        todo!()
    }
    /// Takes the server-final message (AuthenticationSASLFinal) and verifies the
    /// server signature.
    pub fn finish(&mut self, server_final: &[u8]) -> Result<(), ScramError> {
        let _ = server_final;
        todo!()
    }
}
