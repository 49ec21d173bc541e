//! A scripted fake PostgreSQL server for what a real server won't do:
//! malformed, truncated, oversized and out-of-order messages.
//!
//! It accepts one TCP connection on 127.0.0.1, plays a [`Script`] and
//! records every frontend message in a [`Transcript`].

mod framing;
pub mod msg;
pub mod scram;
mod script;

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use framing::{startup_code, Framer, GSSENC_REQUEST, SSL_REQUEST};
pub use script::{Responder, Script, Step};

/// How long [`FakeServer::finish`] waits for the script to end.
const FINISH_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything the client sent, as the fake server saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    /// Every frontend message received up to the end of the script, in
    /// order, as (tag, body). Untagged startup-phase messages
    /// (StartupMessage, SSLRequest, CancelRequest) have tag `0` and a body
    /// starting with the protocol version or request code. Messages that
    /// arrived in the same read as consumed ones are included even if no
    /// step consumed them.
    pub messages: Vec<(u8, Bytes)>,
    /// For each socket read that completed at least one message, how many
    /// it completed: `[1, 4]` means the StartupMessage came alone, then four
    /// messages (say Parse, Bind, Execute, Sync) arrived together, i.e. were
    /// pipelined. Reads that completed none (a message split across reads)
    /// are not listed.
    pub reads: Vec<usize>,
}

impl Transcript {
    /// The tags of [`Transcript::messages`], in order.
    pub fn tags(&self) -> Vec<u8> {
        self.messages.iter().map(|(t, _)| *t).collect()
    }

    /// The bodies of the messages with `tag`, in order.
    pub fn bodies(&self, tag: u8) -> Vec<&Bytes> {
        self.messages
            .iter()
            .filter(|(t, _)| *t == tag)
            .map(|(_, b)| b)
            .collect()
    }
}

/// Why a script did not play to its end.
#[derive(Debug)]
#[non_exhaustive]
pub enum FakeErrorKind {
    /// An `Expect*` step got something else; `got` is `None` when the
    /// client closed the connection instead.
    Mismatch {
        /// What the step wanted, in words.
        expected: String,
        /// What arrived instead: (tag, body), or `None` for end of stream.
        got: Option<(u8, Bytes)>,
    },
    /// The client sent bytes that are not a frontend message.
    Protocol(String),
    /// A socket operation failed (e.g. writing after the client left).
    Io(io::Error),
    /// A step needed the socket after a [`Step::Close`].
    Closed,
    /// The script did not end within 10 s of [`FakeServer::finish`].
    Timeout,
    /// A [`Step::Respond`] function panicked.
    Panicked(String),
}

/// A script that did not play to its end, with what had arrived so far.
#[derive(Debug)]
pub struct FakeError {
    /// What went wrong.
    pub kind: FakeErrorKind,
    /// The step that failed: (index, description), if any step had started.
    pub step: Option<(usize, String)>,
    /// What the client had sent until then.
    pub transcript: Transcript,
}

impl fmt::Display for FakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fake server")?;
        if let Some((i, desc)) = &self.step {
            write!(f, ", step {i} ({desc})")?;
        }
        match &self.kind {
            FakeErrorKind::Mismatch { expected, got } => {
                write!(f, ": expected {expected}, got ")?;
                match got {
                    Some((tag, body)) => write!(f, "{}", describe(*tag, body))?,
                    None => write!(f, "end of stream (the client closed the connection)")?,
                }
            }
            FakeErrorKind::Protocol(why) => write!(f, ": {why}")?,
            FakeErrorKind::Io(e) => write!(f, ": I/O error: {e}")?,
            FakeErrorKind::Closed => write!(f, ": the socket was already closed by a Close step")?,
            FakeErrorKind::Timeout => write!(
                f,
                ": the script did not end within {} s",
                FINISH_TIMEOUT.as_secs()
            )?,
            FakeErrorKind::Panicked(why) => write!(f, ": a Respond function panicked: {why}")?,
        }
        write!(
            f,
            "; received so far: {:?}",
            String::from_utf8_lossy(&self.transcript.tags()).replace('\0', "<startup>")
        )
    }
}

impl std::error::Error for FakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            FakeErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// `'P' (12 bytes: "...")`, the body cut to 64 bytes.
fn describe(tag: u8, body: &[u8]) -> String {
    let name = if tag == 0 {
        "startup-phase message".to_string()
    } else {
        format!("'{}'", tag.escape_ascii())
    };
    let shown: Vec<u8> = body.iter().take(64).copied().collect();
    let more = if body.len() > 64 { "..." } else { "" };
    format!(
        "{name} ({} bytes: \"{}{more}\")",
        body.len(),
        shown.escape_ascii()
    )
}

/// Where a running script is, shared with [`FakeServer::finish`] so a
/// timeout can still report it.
#[derive(Default)]
struct Progress {
    transcript: Transcript,
    step: Option<(usize, String)>,
}

/// A fake PostgreSQL server playing one [`Script`] to one connection.
///
/// Dropping it stops the script.
pub struct FakeServer {
    addr: SocketAddr,
    task: Option<JoinHandle<Result<Transcript, FakeError>>>,
    progress: Arc<Mutex<Progress>>,
}

impl FakeServer {
    /// Binds 127.0.0.1 on a free port and plays `script` to the first
    /// connection (later connections are refused). Call from a tokio runtime.
    pub async fn start(script: Script) -> io::Result<FakeServer> {
        FakeServer::start_sequence(vec![script]).await
    }

    /// Like [`FakeServer::start`], for several connections in turn: the
    /// first connection plays the first script, the next one (accepted
    /// after it ended) the second, and so on; e.g. a session and then its
    /// cancel request. The transcript holds every connection's messages.
    pub async fn start_sequence(scripts: Vec<Script>) -> io::Result<FakeServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let progress = Arc::new(Mutex::new(Progress::default()));
        let scripts = scripts.into_iter().map(Script::into_steps).collect();
        let task = tokio::spawn(play(listener, scripts, progress.clone()));
        Ok(FakeServer {
            addr,
            task: Some(task),
            progress,
        })
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The listening port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `postgres://fake:secret@127.0.0.1:<port>/fake?connect_timeout=5`;
    /// append `&name=value` for more parameters.
    pub fn url(&self) -> String {
        format!(
            "postgres://fake:secret@127.0.0.1:{}/fake?connect_timeout=5",
            self.port()
        )
    }

    /// Waits (at most 10 s) for the script to end and returns what the
    /// client sent, or why the script stopped early (an `Expect*` step that
    /// got something else says what it got).
    pub async fn finish(mut self) -> Result<Transcript, FakeError> {
        let Some(task) = self.task.take() else {
            return Err(self.error(FakeErrorKind::Closed));
        };
        let abort = task.abort_handle();
        match tokio::time::timeout(FINISH_TIMEOUT, task).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => {
                let why = match join.try_into_panic() {
                    Ok(payload) => payload
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "(no message)".into()),
                    Err(_) => "the task was cancelled".into(),
                };
                Err(self.error(FakeErrorKind::Panicked(why)))
            }
            Err(_) => {
                abort.abort();
                Err(self.error(FakeErrorKind::Timeout))
            }
        }
    }

    fn error(&self, kind: FakeErrorKind) -> FakeError {
        let progress = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        FakeError {
            kind,
            step: progress.step.clone(),
            transcript: progress.transcript.clone(),
        }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeServer")
            .field("addr", &self.addr)
            .finish()
    }
}

async fn play(
    listener: TcpListener,
    scripts: Vec<Vec<Step>>,
    progress: Arc<Mutex<Progress>>,
) -> Result<Transcript, FakeError> {
    let fail = |kind: FakeErrorKind, progress: &Arc<Mutex<Progress>>| {
        let p = progress.lock().unwrap_or_else(|p| p.into_inner());
        FakeError {
            kind,
            step: p.step.clone(),
            transcript: p.transcript.clone(),
        }
    };
    let mut offset = 0;
    let last = scripts.len().saturating_sub(1);
    let mut listener = Some(listener);
    for (n, steps) in scripts.into_iter().enumerate() {
        let Some(bound) = listener.as_ref() else {
            break;
        };
        let (stream, _) = bound
            .accept()
            .await
            .map_err(|e| fail(FakeErrorKind::Io(e), &progress))?;
        if n == last {
            // No more scripts: later connects are refused.
            listener = None;
        }
        let _ = stream.set_nodelay(true);
        let mut player = Player {
            stream: Some(Box::new(stream)),
            framer: Framer::new(),
            pending: VecDeque::new(),
            last_body: Bytes::new(),
            eof: false,
            progress: progress.clone(),
        };
        let count = steps.len();
        for (i, step) in steps.into_iter().enumerate() {
            progress.lock().unwrap_or_else(|p| p.into_inner()).step =
                Some((offset + i, format!("{step:?}")));
            player
                .run(step)
                .await
                .map_err(|kind| fail(kind, &progress))?;
        }
        offset += count;
        if let Some(mut stream) = player.stream.take() {
            // FIN rather than RST where possible, so the client sees a clean end.
            let _ = stream.shutdown().await;
        }
    }
    let transcript = progress
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .transcript
        .clone();
    Ok(transcript)
}

/// The connection, plain or TLS.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

struct Player {
    stream: Option<Box<dyn Io>>,
    framer: Framer,
    /// Messages decoded but not yet consumed by a step.
    pending: VecDeque<(u8, Bytes)>,
    last_body: Bytes,
    eof: bool,
    progress: Arc<Mutex<Progress>>,
}

impl Player {
    async fn run(&mut self, step: Step) -> Result<(), FakeErrorKind> {
        match step {
            Step::ExpectStartup => self.expect_startup().await,
            Step::Expect(tag) => match self.next().await? {
                Some((t, body)) if t == tag => {
                    self.last_body = body;
                    Ok(())
                }
                got => Err(mismatch(format!("'{}'", tag.escape_ascii()), got)),
            },
            Step::ExpectUntil(tag) => loop {
                match self.next().await? {
                    Some((t, body)) if t == tag => {
                        self.last_body = body;
                        return Ok(());
                    }
                    Some(_) => {}
                    None => {
                        return Err(mismatch(
                            format!("messages up to '{}'", tag.escape_ascii()),
                            None,
                        ))
                    }
                }
            },
            Step::Send(bytes) => self.write(&bytes).await,
            Step::Respond(mut f) => {
                let bytes = f(&self.last_body);
                self.write(&bytes).await
            }
            Step::Sleep(d) => {
                tokio::time::sleep(d).await;
                Ok(())
            }
            Step::ExpectNothingFor(d) => match tokio::time::timeout(d, self.next()).await {
                Err(_) => Ok(()),
                Ok(Err(e)) => Err(e),
                Ok(Ok(got)) => Err(mismatch(format!("no message for {d:?}"), got)),
            },
            Step::Close => {
                if let Some(mut stream) = self.stream.take() {
                    let _ = stream.shutdown().await;
                }
                Ok(())
            }
            Step::ExpectSslRequest => match self.next().await? {
                Some((0, body)) if startup_code(&body) == Some(SSL_REQUEST) => Ok(()),
                got => Err(mismatch("an SSLRequest".into(), got)),
            },
            Step::StartTls(config) => {
                if !self.pending.is_empty() || self.framer.has_buffered() {
                    return Err(FakeErrorKind::Protocol(
                        "the client sent bytes before the TLS handshake".into(),
                    ));
                }
                let stream = self.stream.take().ok_or(FakeErrorKind::Closed)?;
                let acceptor = tokio_rustls::TlsAcceptor::from(config);
                let tls = acceptor.accept(stream).await.map_err(FakeErrorKind::Io)?;
                self.stream = Some(Box::new(tls));
                Ok(())
            }
            Step::ExpectEof => {
                match self.next().await? {
                    None => return Ok(()),
                    Some((b'X', body)) => self.last_body = body,
                    got => return Err(mismatch("end of stream or Terminate ('X')".into(), got)),
                }
                match self.next().await? {
                    None => Ok(()),
                    got => Err(mismatch("end of stream after Terminate".into(), got)),
                }
            }
        }
    }

    async fn expect_startup(&mut self) -> Result<(), FakeErrorKind> {
        // At most SSLRequest and GSSENCRequest before the StartupMessage.
        for _ in 0..3 {
            match self.next().await? {
                Some((0, body)) => match startup_code(&body) {
                    Some(SSL_REQUEST) | Some(GSSENC_REQUEST) => self.write(b"N").await?,
                    Some(version) if version >> 16 == 3 => {
                        self.last_body = body;
                        return Ok(());
                    }
                    _ => {
                        return Err(mismatch(
                            "a StartupMessage (protocol 3.x)".into(),
                            Some((0, body)),
                        ))
                    }
                },
                got => return Err(mismatch("a StartupMessage".into(), got)),
            }
        }
        Err(FakeErrorKind::Protocol(
            "more than two encryption requests before the StartupMessage".into(),
        ))
    }

    /// The next frontend message; `None` at end of stream.
    async fn next(&mut self) -> Result<Option<(u8, Bytes)>, FakeErrorKind> {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            if let Some(m) = self.pending.pop_front() {
                return Ok(Some(m));
            }
            if self.eof {
                return Ok(None);
            }
            let stream = self.stream.as_mut().ok_or(FakeErrorKind::Closed)?;
            let n = match stream.read(&mut buf).await {
                Ok(n) => n,
                // A client closing with our data unread resets the connection;
                // over TLS, one closing without close_notify is just as gone.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof
                    ) =>
                {
                    0
                }
                Err(e) => return Err(FakeErrorKind::Io(e)),
            };
            if n == 0 {
                self.eof = true;
                continue;
            }
            self.framer.push(&buf[..n]);
            let mut completed = 0;
            while let Some(m) = self.framer.next().map_err(FakeErrorKind::Protocol)? {
                completed += 1;
                self.progress
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .transcript
                    .messages
                    .push(m.clone());
                self.pending.push_back(m);
            }
            if completed > 0 {
                self.progress
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .transcript
                    .reads
                    .push(completed);
            }
        }
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), FakeErrorKind> {
        let stream = self.stream.as_mut().ok_or(FakeErrorKind::Closed)?;
        stream.write_all(bytes).await.map_err(FakeErrorKind::Io)?;
        stream.flush().await.map_err(FakeErrorKind::Io)
    }
}

fn mismatch(expected: String, got: Option<(u8, Bytes)>) -> FakeErrorKind {
    FakeErrorKind::Mismatch { expected, got }
}

#[cfg(test)]
mod e2e_tests;
