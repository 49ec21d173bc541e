//! The driver's clock readings of one request, read by the request's span.

use std::time::Instant;

/// When the driver handled one request, for the queue and server times of
/// its span. The driver takes them only for requests whose caller records
/// them; one clock read per write batch and per read,
/// shared by every timed slot of that batch or read.
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct Stamps {
    /// The driver took the request's bytes for the socket write (they are
    /// written in the same poll, up to the socket's room).
    pub(crate) written: Option<Instant>,
    /// The answer to the request pipelined just ahead of this one was
    /// complete (its ReadyForQuery was read): from then on the server
    /// works on this one. `None` if nothing was in flight ahead of it
    /// when it was written.
    pub(crate) ahead_done: Option<Instant>,
    /// Its own ReadyForQuery was read.
    pub(crate) done: Option<Instant>,
}

impl Stamps {
    /// When the server could start on the request: the later of its write
    /// and the completion of the answer ahead of it.
    pub(crate) fn server_start(&self) -> Option<Instant> {
        let written = self.written?;
        Some(match self.ahead_done {
            Some(ahead) if ahead > written => ahead,
            _ => written,
        })
    }
}

/// What holds a request's [`Stamps`] (the driver's reply slot); read only
/// when a span records them.
pub(crate) trait Stamped {
    /// The readings so far.
    fn stamps(&self) -> Stamps;
}

/// Slots are shared behind an `Arc`.
impl<T: Stamped + ?Sized> Stamped for std::sync::Arc<T> {
    fn stamps(&self) -> Stamps {
        (**self).stamps()
    }
}
