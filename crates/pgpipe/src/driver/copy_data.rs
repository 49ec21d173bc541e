//! Bytes that belong to a request already in flight (a COPY's data,
//! CopyDone, CopyFail), and the bound on how far a COPY IN writer may run
//! ahead of the socket.

use bytes::BytesMut;
use pgpipe_proto::frontend::Encoder;

use crate::driver::Shared;
use crate::Error;

impl Shared {
    /// Ready once the write buffer holds at most `limit` bytes, so that a
    /// COPY IN writer never queues more than that ahead of the socket;
    /// otherwise the driver wakes `cx` when it takes the buffer.
    pub(crate) fn poll_write_room(
        &self,
        cx: &mut std::task::Context<'_>,
        limit: usize,
    ) -> std::task::Poll<Result<(), Error>> {
        let mut q = self.lock();
        if let Some(reason) = &q.closed {
            return std::task::Poll::Ready(Err(Error::closed().context(reason)));
        }
        if q.write_buf.len() <= limit {
            return std::task::Poll::Ready(Ok(()));
        }
        match &q.writer_waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => q.writer_waker = Some(cx.waker().clone()),
        }
        std::task::Poll::Pending
    }

    /// Writes bytes that belong to a request already in flight (a COPY's
    /// data, CopyDone, CopyFail): no new response slot, and never held
    /// back (the request cannot end without them).
    pub(crate) fn send_unrouted<F>(&self, encode: F) -> Result<(), Error>
    where
        F: FnOnce(&Encoder, &mut BytesMut) -> Result<(), Error>,
    {
        let waker = {
            let mut q = self.lock();
            if let Some(reason) = &q.closed {
                return Err(Error::closed().context(reason));
            }
            q.seal_group();
            let start = q.write_buf.len();
            if let Err(e) = encode(&self.encoder, &mut q.write_buf) {
                q.write_buf.truncate(start);
                return Err(e);
            }
            // Wake the driver unless it was woken for these bytes already:
            // bytes queued before ours may be gathering (held back while
            // the pipeline is deep), and ours make the whole buffer go now.
            let held = start > 0 && !q.flush_now;
            q.flush_now = true;
            if start == 0 || held {
                q.driver_waker.take()
            } else {
                None
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Queues one complete message that belongs to a request already in
    /// flight (a COPY's CopyData), leaving `message` empty. When nothing
    /// else is queued the buffer itself becomes the write buffer (the
    /// caller gets the old, empty one with its capacity): a 64 KiB chunk of
    /// COPY data goes to the socket without being copied here.
    pub(crate) fn send_message(&self, message: &mut BytesMut) -> Result<(), Error> {
        self.send_unrouted(|_, buf| {
            if buf.is_empty() {
                std::mem::swap(buf, message);
            } else {
                buf.extend_from_slice(message);
            }
            message.clear();
            Ok(())
        })
    }

    /// Refuses a COPY FROM STDIN started through a query method: the server
    /// would otherwise wait for data forever.
    pub(crate) fn refuse_copy_in(&self) {
        let _ = self.send_unrouted(|enc, buf| {
            enc.copy_fail("COPY FROM STDIN is not supported through this method", buf)
                .map_err(|e| Error::protocol(e.to_string()))
        });
    }
}
