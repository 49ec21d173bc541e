//! SCRAM-SHA-256 (RFC 5802 / RFC 7677) as PostgreSQL uses it.
//!
//! PostgreSQL differences from the RFC that matter here:
//!
//! - the client sends an empty username (`n=,`): the server takes the user from the
//!   startup message and ignores the SCRAM one;
//! - the password goes through SASLprep, but if it is not valid UTF-8 or SASLprep
//!   rejects it, the raw bytes are used (as libpq and the server do when the
//!   verifier is created);
//! - no SCRAM extensions are used, so any `m=` or extra attribute is refused.
//!
//! The exchange is a small state machine: client-first → [`ScramSha256::update`]
//! (server-first, produces client-final) → [`ScramSha256::finish`] (server-final).
//! Calling the steps out of order yields [`ScramError::State`]; any error poisons
//! the exchange so that later calls fail too instead of carrying on half-verified.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Mechanism name without channel binding.
pub const SCRAM_SHA_256: &str = "SCRAM-SHA-256";
/// Mechanism name with channel binding.
pub const SCRAM_SHA_256_PLUS: &str = "SCRAM-SHA-256-PLUS";
/// Default cap on the iteration count a server may demand.
///
/// PostgreSQL's default is 4096 (`scram_iterations`); one million leaves ample
/// room for hardened servers while keeping a hostile server from making the
/// client spin for minutes.
pub const DEFAULT_MAX_ITERATIONS: u32 = 1_000_000;

/// Bytes of randomness in the client nonce (24 base64 characters, like libpq).
const NONCE_BYTES: usize = 18;

type HmacSha256 = Hmac<Sha256>;

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

impl ChannelBinding {
    /// The GS2 header that starts client-first and is echoed (base64) in `c=`.
    fn gs2_header(&self) -> &'static str {
        match self {
            ChannelBinding::Unsupported => "n,,",
            ChannelBinding::Unrequested => "y,,",
            ChannelBinding::TlsServerEndPoint(_) => "p=tls-server-end-point,,",
        }
    }

    /// The `c=` attribute value: base64(gs2-header ++ channel-binding data).
    fn c_attribute(&self) -> String {
        let mut input = self.gs2_header().as_bytes().to_vec();
        if let ChannelBinding::TlsServerEndPoint(hash) = self {
            input.extend_from_slice(hash);
        }
        BASE64.encode(input)
    }
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
        match self {
            ScramError::Malformed(what) => write!(f, "SCRAM: malformed server message: {what}"),
            ScramError::NonceMismatch => f.write_str(
                "SCRAM: server nonce does not extend the client nonce (possible replay or man in the middle)",
            ),
            ScramError::IterationCount { requested: 0, .. } => {
                f.write_str("SCRAM: server demanded 0 iterations, at least 1 is required")
            }
            ScramError::IterationCount { requested, max } => write!(
                f,
                "SCRAM: server demanded {requested} iterations, the configured maximum is {max}"
            ),
            ScramError::InvalidServerSignature => f.write_str(
                "SCRAM: server signature is invalid (the server may not know the password, or a man in the middle)",
            ),
            ScramError::Server(msg) => write!(f, "SCRAM: server reported an error: {msg}"),
            ScramError::State(what) => write!(f, "SCRAM: {what}"),
        }
    }
}

impl std::error::Error for ScramError {}

/// The normalised password, wiped (best effort) when dropped and never printed.
struct Password(Vec<u8>);

impl Drop for Password {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

/// Where the exchange is. Deliberately not `Debug`: it holds the password.
enum State {
    /// Client-first is in `message`; waiting for server-first.
    First {
        password: Password,
        client_nonce: String,
        client_first_bare: String,
    },
    /// Client-final is in `message`; waiting for server-final.
    Final { server_signature: [u8; 32] },
    /// The server proved it knows the password.
    Done,
    /// A step failed; the exchange cannot continue.
    Failed,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::First { .. } => "awaiting server-first",
            State::Final { .. } => "awaiting server-final",
            State::Done => "done",
            State::Failed => "failed",
        }
    }
}

/// A client-side SCRAM-SHA-256 exchange.
///
/// ```text
/// let mut scram = ScramSha256::new(password, ChannelBinding::Unsupported);
/// send SASLInitialResponse(scram.mechanism(), scram.message())
/// scram.update(server_first)?;   send SASLResponse(scram.message())
/// scram.finish(server_final)?;
/// ```
///
/// The `Debug` output shows the mechanism and state only: the password, the
/// proof and the expected server signature are never printed.
pub struct ScramSha256 {
    state: State,
    message: Vec<u8>,
    channel_binding: ChannelBinding,
    max_iterations: u32,
}

impl fmt::Debug for ScramSha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramSha256")
            .field("mechanism", &self.mechanism())
            .field("state", &self.state.name())
            .field("max_iterations", &self.max_iterations)
            .finish_non_exhaustive()
    }
}

impl ScramSha256 {
    /// Starts an exchange with a random nonce; `password` is SASLprep-normalised.
    pub fn new(password: &[u8], channel_binding: ChannelBinding) -> ScramSha256 {
        let mut raw = [0u8; NONCE_BYTES];
        // thread_rng is a CSPRNG seeded from the OS; the nonce must be unpredictable.
        rand::thread_rng().fill_bytes(&mut raw);
        // Base64 of a multiple of 3 bytes has no padding and never contains ',',
        // so it is a valid SCRAM nonce as is.
        ScramSha256::start(password, channel_binding, BASE64.encode(raw), "")
    }

    /// Starts an exchange with a given client nonce (for test vectors).
    ///
    /// The nonce is used verbatim: it must be printable ASCII without `,`,
    /// otherwise the server will reject the exchange.
    pub fn with_nonce(
        password: &[u8],
        channel_binding: ChannelBinding,
        nonce: &str,
    ) -> ScramSha256 {
        ScramSha256::start(password, channel_binding, nonce.to_owned(), "")
    }

    /// Builds client-first. `user` is only non-empty in tests: PostgreSQL takes
    /// the user from the startup packet, and the RFC 7677 vector needs `n=user`
    /// because the username is part of the signed auth message.
    fn start(
        password: &[u8],
        channel_binding: ChannelBinding,
        client_nonce: String,
        user: &str,
    ) -> ScramSha256 {
        let client_first_bare = format!("n={},r={}", escape_saslname(user), client_nonce);
        let mut message = channel_binding.gs2_header().as_bytes().to_vec();
        message.extend_from_slice(client_first_bare.as_bytes());
        ScramSha256 {
            state: State::First {
                password: Password(normalize_password(password)),
                client_nonce,
                client_first_bare,
            },
            message,
            channel_binding,
            max_iterations: DEFAULT_MAX_ITERATIONS,
        }
    }

    /// Caps the iteration count the server may demand.
    ///
    /// Anything above `max` (and zero) is refused with
    /// [`ScramError::IterationCount`] before any key derivation is done.
    pub fn max_iterations(mut self, max: u32) -> ScramSha256 {
        self.max_iterations = max;
        self
    }

    /// The mechanism name to put in SASLInitialResponse.
    pub fn mechanism(&self) -> &'static str {
        match self.channel_binding {
            ChannelBinding::TlsServerEndPoint(_) => SCRAM_SHA_256_PLUS,
            ChannelBinding::Unsupported | ChannelBinding::Unrequested => SCRAM_SHA_256,
        }
    }

    /// The channel binding this exchange was started with.
    ///
    /// Lets the caller enforce a `channel_binding=require` policy after
    /// authentication without keeping its own copy.
    pub fn channel_binding(&self) -> &ChannelBinding {
        &self.channel_binding
    }

    /// The message to send now: client-first before [`update`](Self::update),
    /// client-final after it.
    ///
    /// After a failed `update`, this is still client-first; there is nothing
    /// left to send at that point.
    pub fn message(&self) -> &[u8] {
        &self.message
    }

    /// Takes the server-first message (AuthenticationSASLContinue).
    ///
    /// Everything is validated (grammar, nonce, iteration count) before the
    /// expensive PBKDF2 step, so a hostile server cannot make the client burn
    /// CPU. On success [`message`](Self::message) becomes client-final.
    pub fn update(&mut self, server_first: &[u8]) -> Result<(), ScramError> {
        let (password, client_nonce, client_first_bare) =
            match std::mem::replace(&mut self.state, State::Failed) {
                State::First {
                    password,
                    client_nonce,
                    client_first_bare,
                } => (password, client_nonce, client_first_bare),
                other => {
                    let err = match other {
                        State::Final { .. } | State::Done => {
                            "update() called twice: the server-first message was already processed"
                        }
                        _ => "update() called after the exchange failed",
                    };
                    self.state = other;
                    return Err(ScramError::State(err));
                }
            };
        // From here on the state is Failed until everything succeeds.

        let server_first = std::str::from_utf8(server_first)
            .map_err(|_| malformed("server-first-message is not valid UTF-8"))?;
        let parsed = parse_server_first(server_first)?;

        // The server must append its own part; equal nonces would mean the
        // server contributed no freshness (or is echoing us).
        if parsed.nonce.len() <= client_nonce.len() || !parsed.nonce.starts_with(&client_nonce) {
            return Err(ScramError::NonceMismatch);
        }
        if parsed.iterations == 0 || parsed.iterations > self.max_iterations {
            return Err(ScramError::IterationCount {
                requested: parsed.iterations,
                max: self.max_iterations,
            });
        }

        let mut salted_password = hi(&password.0, &parsed.salt, parsed.iterations);
        drop(password);
        let mut client_key = hmac(&salted_password, b"Client Key");
        let mut stored_key: [u8; 32] = Sha256::digest(client_key).into();

        let client_final_without_proof = format!(
            "c={},r={}",
            self.channel_binding.c_attribute(),
            parsed.nonce
        );
        let auth_message =
            format!("{client_first_bare},{server_first},{client_final_without_proof}");

        let client_signature = hmac(&stored_key, auth_message.as_bytes());
        let mut proof = client_key;
        for (p, s) in proof.iter_mut().zip(client_signature) {
            *p ^= s;
        }
        let mut server_key = hmac(&salted_password, b"Server Key");
        let server_signature = hmac(&server_key, auth_message.as_bytes());

        let mut message = client_final_without_proof.into_bytes();
        message.extend_from_slice(b",p=");
        message.extend_from_slice(BASE64.encode(proof).as_bytes());
        self.message = message;
        self.state = State::Final { server_signature };

        // Anyone holding ClientKey or SaltedPassword can log in as this user.
        for secret in [
            &mut salted_password,
            &mut client_key,
            &mut stored_key,
            &mut server_key,
            &mut proof,
        ] {
            wipe(secret);
        }
        Ok(())
    }

    /// Takes the server-final message (AuthenticationSASLFinal) and verifies the
    /// server signature.
    ///
    /// Only `Ok(())` means the server proved it knows the password; the caller
    /// must treat every error as an authentication failure.
    pub fn finish(&mut self, server_final: &[u8]) -> Result<(), ScramError> {
        let expected = match &self.state {
            State::Final { server_signature } => *server_signature,
            State::First { .. } => {
                return Err(ScramError::State(
                    "finish() called before update(): no server-first message yet",
                ))
            }
            State::Done => {
                return Err(ScramError::State(
                    "finish() called twice: the exchange is already complete",
                ))
            }
            State::Failed => {
                return Err(ScramError::State(
                    "finish() called after the exchange failed",
                ))
            }
        };
        self.state = State::Failed;
        verify_server_final(server_final, &expected)?;
        self.state = State::Done;
        Ok(())
    }
}

/// The attributes of a server-first-message.
struct ServerFirst<'a> {
    nonce: &'a str,
    salt: Vec<u8>,
    iterations: u32,
}

fn malformed(what: &str) -> ScramError {
    ScramError::Malformed(what.to_owned())
}

/// Parses `r=<nonce>,s=<base64 salt>,i=<count>` exactly, in that order.
fn parse_server_first(msg: &str) -> Result<ServerFirst<'_>, ScramError> {
    let mut parts = msg.split(',');
    let nonce = attribute(parts.next(), 'r')?;
    let salt = attribute(parts.next(), 's')?;
    let iterations = attribute(parts.next(), 'i')?;
    if parts.next().is_some() {
        return Err(malformed(
            "unexpected attribute after i= (SCRAM extensions are not supported)",
        ));
    }

    // RFC 5802: printable ASCII except ','; ',' cannot occur after the split.
    if nonce.is_empty() || !nonce.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err(malformed("server nonce is empty or not printable ASCII"));
    }

    let salt = BASE64
        .decode(salt)
        .map_err(|_| malformed("salt is not valid base64"))?;
    if salt.is_empty() {
        return Err(malformed("salt is empty"));
    }

    // str::parse would accept a leading '+'; the grammar is digits only.
    if iterations.is_empty() || !iterations.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed("iteration count is not a positive integer"));
    }
    let iterations = iterations
        .parse::<u32>()
        .map_err(|_| malformed("iteration count does not fit in 32 bits"))?;

    Ok(ServerFirst {
        nonce,
        salt,
        iterations,
    })
}

/// Returns the value of `part` if it is the attribute `name=`.
fn attribute(part: Option<&str>, name: char) -> Result<&str, ScramError> {
    let part = part.ok_or_else(|| ScramError::Malformed(format!("missing attribute {name}=")))?;
    if part.starts_with("m=") {
        return Err(malformed(
            "server requires a mandatory extension (m=), which is not supported",
        ));
    }
    let mut chars = part.chars();
    if chars.next() == Some(name) && chars.next() == Some('=') {
        Ok(&part[2..])
    } else {
        Err(ScramError::Malformed(format!(
            "expected attribute {name}= (attributes must be r=, s=, i= in that order)"
        )))
    }
}

/// Checks `v=<base64 signature>` against `expected`, or reports `e=<error>`.
fn verify_server_final(msg: &[u8], expected: &[u8; 32]) -> Result<(), ScramError> {
    if let Some(error) = msg.strip_prefix(b"e=") {
        return Err(ScramError::Server(
            String::from_utf8_lossy(error).into_owned(),
        ));
    }
    let Some(signature) = msg.strip_prefix(b"v=") else {
        return Err(malformed("server-final-message has neither v= nor e="));
    };
    if signature.contains(&b',') {
        return Err(malformed(
            "unexpected attribute after v= (SCRAM extensions are not supported)",
        ));
    }
    let signature = BASE64
        .decode(signature)
        .map_err(|_| malformed("server signature is not valid base64"))?;
    // The length is public (always 32), so an early return leaks nothing.
    if signature.len() != expected.len() {
        return Err(ScramError::InvalidServerSignature);
    }
    // Constant time: look at every byte whatever the first difference is.
    let diff = signature
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    if diff == 0 {
        Ok(())
    } else {
        Err(ScramError::InvalidServerSignature)
    }
}

/// SASLprep the password, falling back to the raw bytes like libpq does when
/// it is not UTF-8 or contains prohibited characters: the server applies the
/// same rule when it builds the verifier, so both sides agree.
fn normalize_password(password: &[u8]) -> Vec<u8> {
    match std::str::from_utf8(password) {
        Ok(s) => match stringprep::saslprep(s) {
            Ok(prepped) => prepped.into_owned().into_bytes(),
            Err(_) => password.to_vec(),
        },
        Err(_) => password.to_vec(),
    }
}

/// RFC 5802 `saslname`: ',' and '=' must be escaped.
fn escape_saslname(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '=' => out.push_str("=3D"),
            ',' => out.push_str("=2C"),
            c => out.push(c),
        }
    }
    out
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// RFC 5802 `Hi()`: PBKDF2-HMAC-SHA-256 with a single output block.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    // Key the HMAC once and clone it: re-deriving the padded key each round
    // would double the cost of the loop.
    let prf = HmacSha256::new_from_slice(password).expect("HMAC accepts keys of any length");
    let mut mac = prf.clone();
    mac.update(salt);
    mac.update(&1u32.to_be_bytes());
    let mut u: [u8; 32] = mac.finalize().into_bytes().into();
    let mut out = u;
    for _ in 1..iterations {
        let mut mac = prf.clone();
        mac.update(&u);
        u = mac.finalize().into_bytes().into();
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    wipe(&mut u);
    out
}

/// Best-effort erase of secret material (no `zeroize` dependency: black_box
/// keeps the compiler from dropping the writes as dead stores).
fn wipe(buf: &mut [u8]) {
    buf.fill(0);
    std::hint::black_box(buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT_NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
    const SERVER_FIRST: &[u8] =
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";

    fn pg(password: &[u8]) -> ScramSha256 {
        ScramSha256::with_nonce(password, ChannelBinding::Unsupported, CLIENT_NONCE)
    }

    /// RFC 7677 section 3. The RFC's client-first carries `n=user`, which is part
    /// of the signed auth message, so this uses the private constructor with a
    /// username; the PostgreSQL-style (`n=`) variant is checked separately below.
    /// Note the server-final is the RFC's `...Rsjl95G4=` (the brief quoted a
    /// different tail, which does not verify; Python's hashlib agrees with the RFC).
    #[test]
    fn rfc7677_vector() {
        let mut s = ScramSha256::start(
            b"pencil",
            ChannelBinding::Unsupported,
            CLIENT_NONCE.to_owned(),
            "user",
        );
        assert_eq!(s.mechanism(), SCRAM_SHA_256);
        assert_eq!(s.message(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        s.update(SERVER_FIRST).unwrap();
        assert_eq!(
            s.message(),
            &b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="[..]
        );
        s.finish(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
    }

    /// Same inputs with PostgreSQL's empty username; expected values computed
    /// independently with Python's hashlib.pbkdf2_hmac / hmac.
    #[test]
    fn postgres_style_vector() {
        let mut s = pg(b"pencil");
        assert_eq!(s.message(), b"n,,n=,r=rOprNGfwEbeRWgbNEkqO");
        s.update(SERVER_FIRST).unwrap();
        assert_eq!(
            s.message(),
            &b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=qvT2SWdEH5Q06albL+hjSYuUhCG7VndFyzIb7CK4n9k="[..]
        );
        s.finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=")
            .unwrap();
        assert!(format!("{s:?}").contains("done"));
    }

    /// SCRAM-SHA-256-PLUS with a made-up 32-byte certificate hash (0..32);
    /// expected values computed independently with Python.
    #[test]
    fn plus_channel_binding() {
        let hash: Vec<u8> = (0u8..32).collect();
        let mut s = ScramSha256::with_nonce(
            b"pencil",
            ChannelBinding::TlsServerEndPoint(hash.clone()),
            CLIENT_NONCE,
        );
        assert_eq!(s.mechanism(), SCRAM_SHA_256_PLUS);
        assert_eq!(
            s.channel_binding(),
            &ChannelBinding::TlsServerEndPoint(hash)
        );
        assert_eq!(
            s.message(),
            b"p=tls-server-end-point,,n=,r=rOprNGfwEbeRWgbNEkqO"
        );
        s.update(SERVER_FIRST).unwrap();
        assert_eq!(
            s.message(),
            &b"c=cD10bHMtc2VydmVyLWVuZC1wb2ludCwsAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=Q8h71kjaoMzNI7dPksDrhRE/5mTUObF0fUHVIgBOWQg="[..]
        );
        s.finish(b"v=ykwoqH8mLqO5AQCeuwwf6lsj9f8zyJZT/CcvAbN4Ssc=")
            .unwrap();
    }

    #[test]
    fn unrequested_channel_binding() {
        let mut s = ScramSha256::with_nonce(b"pencil", ChannelBinding::Unrequested, CLIENT_NONCE);
        assert_eq!(s.mechanism(), SCRAM_SHA_256);
        assert_eq!(s.message(), b"y,,n=,r=rOprNGfwEbeRWgbNEkqO");
        s.update(SERVER_FIRST).unwrap();
        // base64("y,,")
        assert!(s.message().starts_with(b"c=eSws,r=rOprNGfwEbeRWgbNEkqO%"));
    }

    #[test]
    fn random_nonce() {
        let a = ScramSha256::new(b"pw", ChannelBinding::Unsupported);
        let b = ScramSha256::new(b"pw", ChannelBinding::Unsupported);
        let nonce = |s: &ScramSha256| {
            std::str::from_utf8(s.message().strip_prefix(b"n,,n=,r=").unwrap())
                .unwrap()
                .to_owned()
        };
        let na = nonce(&a);
        assert_eq!(na.len(), 24);
        assert!(na.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b','));
        assert_ne!(na, nonce(&b));
    }

    #[test]
    fn nonce_mismatch() {
        let mut s = pg(b"pencil");
        assert_eq!(
            s.update(b"r=XXXXXXXXXXXXXXXXXXXXserver,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"),
            Err(ScramError::NonceMismatch)
        );
    }

    #[test]
    fn nonce_equal_to_client_nonce() {
        let mut s = pg(b"pencil");
        assert_eq!(
            s.update(b"r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"),
            Err(ScramError::NonceMismatch)
        );
        // Shorter than the client nonce must not panic either.
        let mut s = pg(b"pencil");
        assert_eq!(
            s.update(b"r=rOpr,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"),
            Err(ScramError::NonceMismatch)
        );
    }

    #[test]
    fn iteration_count_refused() {
        let mut s = pg(b"pencil");
        assert_eq!(
            s.update(b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0"),
            Err(ScramError::IterationCount {
                requested: 0,
                max: DEFAULT_MAX_ITERATIONS
            })
        );
        // Must return the error without running 10^9 PBKDF2 rounds.
        let mut s = pg(b"pencil");
        let err = s
            .update(b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1000000000")
            .unwrap_err();
        assert_eq!(
            err,
            ScramError::IterationCount {
                requested: 1_000_000_000,
                max: DEFAULT_MAX_ITERATIONS
            }
        );
        assert_eq!(
            err.to_string(),
            "SCRAM: server demanded 1000000000 iterations, the configured maximum is 1000000"
        );
    }

    #[test]
    fn custom_iteration_cap() {
        let mut s = pg(b"pencil").max_iterations(4095);
        assert_eq!(
            s.update(SERVER_FIRST),
            Err(ScramError::IterationCount {
                requested: 4096,
                max: 4095
            })
        );
        let mut s = pg(b"pencil").max_iterations(4096);
        s.update(SERVER_FIRST).unwrap();
    }

    #[test]
    fn malformed_server_first() {
        let cases: &[&[u8]] = &[
            b"",
            b"r=rOprNGfwEbeRWgbNEkqOsrv,i=4096", // missing s=
            b"r=rOprNGfwEbeRWgbNEkqOsrv",        // missing s= and i=
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==", // missing i=
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=not*base64,i=4096", // bad base64
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ,i=4096", // missing padding
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=,i=4096", // empty salt
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=abc", // non-numeric
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=",
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1",
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=+4096",
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999999", // > u32
            b"m=ext,r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",  // extension
            b"r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,x=y",    // trailing attr
            b"s=W22ZaJ0SNY7soEsUEjb6gQ==,r=rOprNGfwEbeRWgbNEkqOsrv,i=4096",        // wrong order
            b"r=rOprNGfwEbeRWgbNEkqOs v,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",        // space in nonce
            b"r=rOprNGfwEbeRWgbNEkqOsrv\xff,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",    // not UTF-8
        ];
        for case in cases {
            let mut s = pg(b"pencil");
            let res = s.update(case);
            assert!(
                matches!(res, Err(ScramError::Malformed(_))),
                "{:?} gave {res:?}",
                String::from_utf8_lossy(case)
            );
            // The exchange is poisoned, not half-advanced.
            assert!(matches!(s.update(SERVER_FIRST), Err(ScramError::State(_))));
        }
    }

    #[test]
    fn wrong_server_signature() {
        let mut s = pg(b"pencil");
        s.update(SERVER_FIRST).unwrap();
        // The RFC's signature is for n=user, so it is wrong here.
        assert_eq!(
            s.finish(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
            Err(ScramError::InvalidServerSignature)
        );
        assert!(matches!(
            s.finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg="),
            Err(ScramError::State(_))
        ));

        // A wrong password also gives a wrong server signature.
        let mut s = pg(b"pencil2");
        s.update(SERVER_FIRST).unwrap();
        assert_eq!(
            s.finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg="),
            Err(ScramError::InvalidServerSignature)
        );

        // Truncated signature.
        let mut s = pg(b"pencil");
        s.update(SERVER_FIRST).unwrap();
        assert_eq!(
            s.finish(b"v=3HO6Qt1M4MKJrmlKaoOqLA=="),
            Err(ScramError::InvalidServerSignature)
        );
    }

    #[test]
    fn malformed_server_final() {
        let cases: &[&[u8]] = &[
            b"",
            b"x=abc",
            b"v=not base64!",
            b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=,x=y",
        ];
        for case in cases {
            let mut s = pg(b"pencil");
            s.update(SERVER_FIRST).unwrap();
            let res = s.finish(case);
            assert!(matches!(res, Err(ScramError::Malformed(_))), "{res:?}");
        }
    }

    #[test]
    fn server_error() {
        let mut s = pg(b"pencil");
        s.update(SERVER_FIRST).unwrap();
        let err = s.finish(b"e=invalid-proof").unwrap_err();
        assert_eq!(err, ScramError::Server("invalid-proof".into()));
        assert_eq!(
            err.to_string(),
            "SCRAM: server reported an error: invalid-proof"
        );
    }

    #[test]
    fn wrong_call_order() {
        let mut s = pg(b"pencil");
        assert!(matches!(
            s.finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg="),
            Err(ScramError::State(_))
        ));
        // The premature finish() did not break the exchange.
        s.update(SERVER_FIRST).unwrap();
        let client_final = s.message().to_vec();
        assert!(matches!(s.update(SERVER_FIRST), Err(ScramError::State(_))));
        assert_eq!(s.message(), &client_final[..]);
        s.finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=")
            .unwrap();
        assert!(matches!(
            s.finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg="),
            Err(ScramError::State(_))
        ));
        assert!(matches!(s.update(SERVER_FIRST), Err(ScramError::State(_))));
        assert_eq!(s.message(), &client_final[..]);

        // After a failure, both steps refuse.
        let mut s = pg(b"pencil");
        assert!(s.update(b"garbage").is_err());
        assert!(matches!(s.update(SERVER_FIRST), Err(ScramError::State(_))));
        assert!(matches!(s.finish(b"v="), Err(ScramError::State(_))));
    }

    #[test]
    fn saslprep_normalisation() {
        // RFC 4013 examples: soft hyphen maps to nothing, U+2168 (ROMAN NUMERAL
        // NINE) NFKC-normalises to "IX", no-break space maps to space.
        assert_eq!(normalize_password("I\u{AD}X".as_bytes()), b"IX");
        assert_eq!(normalize_password("\u{2168}".as_bytes()), b"IX");
        assert_eq!(normalize_password("a\u{A0}b".as_bytes()), b"a b");
        assert_eq!(normalize_password(b"user"), b"user");
        // Prohibited character (ASCII control): raw bytes, as libpq does.
        assert_eq!(normalize_password(b"a\x07b"), b"a\x07b");
        // Not UTF-8: raw bytes.
        assert_eq!(normalize_password(b"\xff\xfepw"), b"\xff\xfepw");
    }

    #[test]
    fn saslprep_applies_to_exchange() {
        let mut a = pg("\u{2168}".as_bytes());
        let mut b = pg(b"IX");
        a.update(SERVER_FIRST).unwrap();
        b.update(SERVER_FIRST).unwrap();
        assert_eq!(a.message(), b.message());
        let mut c = pg(b"ix");
        c.update(SERVER_FIRST).unwrap();
        assert_ne!(a.message(), c.message());
    }

    #[test]
    fn saslname_escaping() {
        assert_eq!(escape_saslname("a=b,c"), "a=3Db=2Cc");
        assert_eq!(escape_saslname(""), "");
    }

    #[test]
    fn debug_redacts_secrets() {
        let mut s = pg(b"hunter2-secret");
        let before = format!("{s:?}");
        assert!(!before.contains("hunter2"), "{before}");
        s.update(SERVER_FIRST).unwrap();
        let proof = std::str::from_utf8(s.message())
            .unwrap()
            .rsplit("p=")
            .next()
            .unwrap()
            .to_owned();
        let after = format!("{s:?}");
        assert!(!after.contains("hunter2"), "{after}");
        assert!(!after.contains(&proof), "{after}");
        assert!(after.contains("SCRAM-SHA-256"), "{after}");
    }

    #[test]
    fn display_messages() {
        assert_eq!(
            ScramError::InvalidServerSignature.to_string(),
            "SCRAM: server signature is invalid (the server may not know the password, or a man in the middle)"
        );
        assert_eq!(
            ScramError::IterationCount {
                requested: 0,
                max: 10
            }
            .to_string(),
            "SCRAM: server demanded 0 iterations, at least 1 is required"
        );
        assert!(ScramError::Malformed("x".into())
            .to_string()
            .starts_with("SCRAM: malformed"));
        assert!(ScramError::NonceMismatch.to_string().starts_with("SCRAM: "));
        assert!(ScramError::State("y").to_string().starts_with("SCRAM: "));
    }

    #[test]
    fn hi_single_iteration_is_one_hmac() {
        // With i=1, Hi(p, s, 1) = HMAC(p, s ++ INT(1)).
        assert_eq!(
            hi(b"key", b"salt", 1),
            hmac(b"key", b"salt\x00\x00\x00\x01")
        );
    }
}
