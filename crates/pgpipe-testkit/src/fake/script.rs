//! What the fake server does, step by step.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

/// Computes bytes to send from the body of the last message an `Expect*`
/// step consumed.
pub type Responder = Box<dyn FnMut(&[u8]) -> Bytes + Send>;

/// One action of a [`Script`].
pub enum Step {
    /// Reads a StartupMessage. An SSLRequest or GSSENCRequest first is
    /// answered `N` (no encryption) and the StartupMessage read after it.
    ExpectStartup,
    /// Reads one frontend message and checks its tag.
    Expect(u8),
    /// Reads frontend messages until one with this tag (e.g. `b'S'` Sync).
    ExpectUntil(u8),
    /// Writes these bytes as they are.
    Send(Bytes),
    /// Writes what the function computes from the body of the last message
    /// consumed by an `Expect*` step (empty if none yet).
    Respond(Responder),
    /// Does nothing for a while (keeps the connection open).
    Sleep(Duration),
    /// Waits this long and fails if a frontend message arrives meanwhile
    /// (or had arrived unconsumed): proves the client holds something back.
    ExpectNothingFor(Duration),
    /// Closes the socket (FIN); later steps that need it fail.
    Close,
    /// Expects the client to close, optionally after Terminate (`X`).
    /// A connection reset counts as closing.
    ExpectEof,
    /// Reads one SSLRequest and answers nothing (follow with
    /// `Send(b"S")` and [`Step::StartTls`], or `Send(b"N")`).
    ExpectSslRequest,
    /// Runs the server side of a TLS handshake on the connection (after an
    /// accepted SSLRequest, or first thing for direct SSL); every later step
    /// goes through TLS. Fails the script if the client aborts it.
    StartTls(Arc<rustls::ServerConfig>),
}

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::ExpectStartup => write!(f, "ExpectStartup"),
            Step::Expect(t) => write!(f, "Expect('{}')", t.escape_ascii()),
            Step::ExpectUntil(t) => write!(f, "ExpectUntil('{}')", t.escape_ascii()),
            Step::Send(b) => write!(f, "Send({} bytes)", b.len()),
            Step::Respond(_) => write!(f, "Respond(..)"),
            Step::Sleep(d) => write!(f, "Sleep({d:?})"),
            Step::ExpectNothingFor(d) => write!(f, "ExpectNothingFor({d:?})"),
            Step::Close => write!(f, "Close"),
            Step::ExpectEof => write!(f, "ExpectEof"),
            Step::ExpectSslRequest => write!(f, "ExpectSslRequest"),
            Step::StartTls(c) => write!(f, "StartTls(alpn {:?})", c.alpn_protocols),
        }
    }
}

/// A fake server's script: built with the chained methods, played by
/// [`FakeServer::start`](crate::FakeServer::start).
///
/// ```
/// use pgpipe_testkit::{msg, Script};
/// let script = Script::new()
///     .expect_startup()
///     .send(msg::handshake())
///     .expect_until(b'S')
///     .send(msg::raw_with_len(b'D', 100_000_000, &[0, 1]))
///     .expect_eof();
/// assert_eq!(script.steps().len(), 5);
/// ```
#[derive(Debug, Default)]
pub struct Script {
    steps: Vec<Step>,
}

impl Script {
    /// An empty script (accepts the connection, then closes it).
    pub fn new() -> Script {
        Script::default()
    }

    /// Appends any step.
    pub fn step(mut self, step: Step) -> Script {
        self.steps.push(step);
        self
    }

    /// Appends [`Step::ExpectStartup`].
    pub fn expect_startup(self) -> Script {
        self.step(Step::ExpectStartup)
    }

    /// Appends [`Step::Expect`].
    pub fn expect(self, tag: u8) -> Script {
        self.step(Step::Expect(tag))
    }

    /// Appends [`Step::ExpectUntil`].
    pub fn expect_until(self, tag: u8) -> Script {
        self.step(Step::ExpectUntil(tag))
    }

    /// Appends [`Step::Send`].
    pub fn send(self, bytes: impl Into<Bytes>) -> Script {
        self.step(Step::Send(bytes.into()))
    }

    /// Appends [`Step::Respond`].
    pub fn respond(self, f: impl FnMut(&[u8]) -> Bytes + Send + 'static) -> Script {
        self.step(Step::Respond(Box::new(f)))
    }

    /// Appends [`Step::Sleep`].
    pub fn sleep(self, duration: Duration) -> Script {
        self.step(Step::Sleep(duration))
    }

    /// Appends [`Step::ExpectNothingFor`].
    pub fn expect_nothing_for(self, duration: Duration) -> Script {
        self.step(Step::ExpectNothingFor(duration))
    }

    /// Appends [`Step::Close`].
    pub fn close(self) -> Script {
        self.step(Step::Close)
    }

    /// Appends [`Step::ExpectEof`].
    pub fn expect_eof(self) -> Script {
        self.step(Step::ExpectEof)
    }

    /// Appends [`Step::ExpectSslRequest`].
    pub fn expect_ssl_request(self) -> Script {
        self.step(Step::ExpectSslRequest)
    }

    /// Appends [`Step::StartTls`].
    pub fn start_tls(self, config: Arc<rustls::ServerConfig>) -> Script {
        self.step(Step::StartTls(config))
    }

    /// The steps so far.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub(crate) fn into_steps(self) -> Vec<Step> {
        self.steps
    }
}
