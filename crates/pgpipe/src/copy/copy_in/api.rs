//! What users (and the typed writer) call on an open [`CopyIn`]: send
//! data, copy from a reader, finish, abort, the `Sink` implementation, and
//! the typed writer's hooks into the buffer.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::{CopyIn, End, State};
use crate::Error;

impl CopyIn {
    /// Bytes of data handed to the connection so far.
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }

    /// Sends a piece of data. Pieces need not align with rows: a row may
    /// span several, and a piece may hold many rows.
    ///
    /// Returns the server's error as soon as it has reported one (a bad
    /// row); after that the COPY is over and `finish` returns the error
    /// again. Cancel safe: dropping this future keeps the data (it is
    /// buffered) unless the writer is dropped too.
    pub async fn send(&mut self, data: impl AsRef<[u8]>) -> Result<(), Error> {
        self.check_open()?;
        self.pending.append().extend_from_slice(data.as_ref());
        poll_fn(|cx| self.poll_drain(cx, false)).await
    }

    /// Copies everything `reader` yields, returning the number of bytes.
    pub async fn copy_from<R: AsyncRead + Unpin>(&mut self, mut reader: R) -> Result<u64, Error> {
        self.check_open()?;
        let mut total = 0u64;
        loop {
            self.pending.append().reserve(self.chunk);
            let n = reader
                .read_buf(self.pending.append())
                .await
                .map_err(|e| Error::io("reading the data to copy", e))?;
            if n == 0 {
                return Ok(total);
            }
            total += n as u64;
            poll_fn(|cx| self.poll_drain(cx, false)).await?;
        }
    }

    /// Sends CopyDone and waits for the server: returns the number of rows
    /// copied, or the server's error (a bad row, a constraint).
    pub async fn finish(mut self) -> Result<u64, Error> {
        poll_fn(|cx| self.poll_finish(cx)).await
    }

    /// Aborts the COPY with CopyFail: nothing is copied (the server rolls
    /// the statement back). `reason` appears in the server's log.
    pub async fn abort(mut self, reason: &str) -> Result<(), Error> {
        if let State::Failed(..) = self.state {
            return Ok(());
        }
        if matches!(self.state, State::Open) {
            self.pending.reset();
            // A NUL in the reason cannot be sent; say something generic.
            let reason = if reason.contains('\0') {
                "aborted"
            } else {
                reason
            };
            self.end(End::Fail(reason))?;
        }
        let ended = match self.read_to_end().await {
            Ok(_) => Ok(()),
            // The server answers CopyFail with the error it was asked for.
            Err(e) if e.is_db() => Ok(()),
            Err(e) => Err(e),
        };
        // Aborted on purpose: nothing copied, no error.
        self.op.end(ended.as_ref().map(|()| 0));
        ended
    }
}

impl futures_sink::Sink<Bytes> for CopyIn {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_drain(cx, false)
    }

    fn start_send(self: Pin<&mut Self>, item: Bytes) -> Result<(), Error> {
        let this = self.get_mut();
        this.check_open()?;
        this.pending.append().extend_from_slice(&item);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_drain(cx, true)
    }

    /// Finishes the COPY (CopyDone) and waits for the server's answer;
    /// the row count is then in [`CopyIn::rows`].
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_finish(cx).map_ok(drop)
    }
}

impl CopyIn {
    /// The number of rows copied, once the COPY has finished through the
    /// `Sink` interface (`close`).
    pub fn rows(&self) -> Option<u64> {
        self.rows
    }

    /// Data queued here but not yet handed to the connection.
    pub(crate) fn pending_mut(&mut self) -> &mut BytesMut {
        self.pending.append()
    }

    /// Hands full chunks of the pending data to the connection, waiting for
    /// room; for writers that encode straight into [`pending_mut`].
    pub(crate) async fn drain(&mut self) -> Result<(), Error> {
        poll_fn(|cx| self.poll_drain(cx, false)).await
    }

    /// Whether a full chunk is pending (worth a [`drain`](Self::drain)).
    #[inline]
    pub(crate) fn chunk_full(&self) -> bool {
        self.pending.data_len() >= self.chunk
    }

    #[inline]
    pub(crate) fn ensure_open(&mut self) -> Result<(), Error> {
        self.check_open()
    }
}

impl std::fmt::Debug for CopyIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyIn")
            .field("state", &self.state)
            .field("bytes_sent", &self.bytes_sent)
            .finish()
    }
}
