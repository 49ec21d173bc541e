//! What the proxy does to the bytes of one direction of every connection.

use std::time::Duration;

/// One direction of a proxied connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Bytes the client sends to the server.
    ToServer,
    /// Bytes the server sends to the client.
    ToClient,
}

impl Direction {
    /// Both directions, for settings that apply to the whole link.
    pub const BOTH: [Direction; 2] = [Direction::ToServer, Direction::ToClient];

    pub(crate) fn index(self) -> usize {
        match self {
            Direction::ToServer => 0,
            Direction::ToClient => 1,
        }
    }
}

/// The faults applied to one direction. `LinkFaults::default()` is a clean
/// link: every byte forwarded at once, in one piece.
///
/// Settings take effect at once, on open connections as well as new ones.
/// The byte budgets (`close_after`, `stall_after`) count from the moment they
/// are set, separately on each connection (from its start for connections
/// opened later).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkFaults {
    /// Every chunk is delivered this long after it was read.
    pub latency: Duration,
    /// A random extra delay in `0..=jitter` per chunk (order is kept, as on
    /// TCP: a chunk is never delivered before the one read before it).
    pub jitter: Duration,
    /// At most this many bytes per second.
    pub bandwidth: Option<u64>,
    /// Writes of at most this many bytes (at least 1), each its own
    /// `write()` call: the reader sees messages split at every boundary.
    pub slice: Option<usize>,
    /// Deliver nothing while set; the sockets stay open and nothing is lost
    /// (the proxy reads until its small buffer is full, then stops reading,
    /// so the sender's socket buffers fill as on a dead link). Clearing it
    /// delivers what was held.
    pub black_hole: bool,
    /// After this many more bytes, close the connection (both sides see an
    /// orderly end of stream).
    pub close_after: Option<u64>,
    /// After this many more bytes, deliver nothing more (as `black_hole`,
    /// from a precise point in the stream: `Some(0)` on
    /// [`Direction::ToClient`] stalls a connect before the server's first
    /// byte).
    pub stall_after: Option<u64>,
}
