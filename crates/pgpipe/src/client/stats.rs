//! [`ClientStats`]: the counters of one connection.

use super::Client;

/// Counters of one connection (see [`Client::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ClientStats {
    /// The most response bytes that were ever delivered by the driver but
    /// not yet taken by the caller, for any one request: what backpressure
    /// bounds.
    pub peak_buffered_bytes: usize,
    /// Notifications that arrived while nobody subscribed
    /// ([`Client::notifications`], [`Client::listen`]): counted and dropped.
    pub notifications_dropped: u64,
    /// Reads from the socket that returned data (or end of stream).
    pub socket_reads: u64,
    /// Writes to the socket that the kernel accepted.
    pub socket_writes: u64,
    /// The most bytes one socket read returned: at most 64 KiB, which is
    /// what bounds how far a response may go past its backpressure limit.
    pub largest_read_bytes: usize,
    /// Statements that shared a Sync with others (coalesced groups; see
    /// [`Client::coalesced`]).
    pub coalesced_statements: u64,
    /// Statements of coalesced groups sent again on their own Sync after a
    /// neighbour failed (or because they were refused with 25001).
    pub coalesced_sent_again: u64,
    /// Times the driver asked the kernel to wake it only once several
    /// answers' bytes wait (`SO_RCVLOWAT`, TCP on Linux; see
    /// [`Connection::receive_low_water`](crate::Connection::receive_low_water)):
    /// 64 KiB for a long answer (past 1 MiB), about 16 answers' bytes
    /// for a pipeline 128 or more statements deep.
    pub low_water_raised: u64,
    /// Times the driver, waiting with that mark up, found nothing more
    /// after 1 ms and lowered it to read what had come.
    pub low_water_tail_waits: u64,
}

impl Client {
    /// Counters of this connection, for monitoring and tests.
    pub fn stats(&self) -> ClientStats {
        let (socket_reads, socket_writes, largest_read_bytes) = self.shared().counters.snapshot();
        let (coalesced_statements, coalesced_sent_again) = self.shared().counters.coalesced();
        let (low_water_raised, low_water_tail_waits) = self.shared().counters.low_water();
        ClientStats {
            coalesced_statements,
            coalesced_sent_again,
            peak_buffered_bytes: self.shared().peak_buffered(),
            notifications_dropped: self
                .shared()
                .notifications
                .dropped
                .load(std::sync::atomic::Ordering::Relaxed),
            socket_reads,
            socket_writes,
            largest_read_bytes,
            low_water_raised,
            low_water_tail_waits,
        }
    }
}
