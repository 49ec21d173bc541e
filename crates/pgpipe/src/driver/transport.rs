//! What the driver reads and writes: any byte stream (`connect/` opens it).

use tokio::io::{AsyncRead, AsyncWrite};

/// A byte stream to the server, as the driver sees it.
pub(crate) trait Transport: AsyncRead + AsyncWrite + Unpin + Send + Sync {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send + Sync> Transport for T {}
