//! The socket as the driver gets it: a plain socket split into the
//! driver's read half and a write half the callers share.
//!
//! Why the write half is shared: a caller whose request finds the driver
//! idle (nothing of its own left to write, nothing queued) writes the
//! request itself instead of waking the driver to do it. Waking the
//! driver for every statement was most of the driver's polls (0.53 of
//! 0.73 per statement on TechEmpower's Fortunes) and, on tokio's
//! multi-thread runtime, what sent the two workers waking each other;
//! with the caller writing, the driver runs when the socket has answers,
//! as xitca-postgres's does. The ordering rules live with the queue (see
//! `Shared::enqueue` in the driver); this file only provides the halves.
//!
//! TLS streams are not split: a TLS writer needs `&mut` of one state
//! machine, and the driver alone writes them.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{tcp, unix, TcpStream, UnixStream};

use crate::connect::Socket;

/// The write half of a plain socket, shared by the driver and the callers.
/// Dropping the last handle shuts the writing direction down (and with the
/// read half gone, closes the socket): the driver's queue drops its handle
/// when the connection closes, so no caller keeps a socket open.
#[derive(Clone)]
pub(crate) enum SharedWriter {
    Tcp(Arc<tcp::OwnedWriteHalf>),
    Unix(Arc<unix::OwnedWriteHalf>),
}

impl std::fmt::Debug for SharedWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SharedWriter::Tcp(_) => "SharedWriter::Tcp",
            SharedWriter::Unix(_) => "SharedWriter::Unix",
        })
    }
}

impl SharedWriter {
    /// Writes what the socket takes now without waiting: `WouldBlock` when
    /// its send buffer is full.
    pub(crate) fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            SharedWriter::Tcp(w) => w.try_write(buf),
            SharedWriter::Unix(w) => w.try_write(buf),
        }
    }

    fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            match self {
                SharedWriter::Tcp(w) => {
                    ready!(AsRef::<TcpStream>::as_ref(&**w).poll_write_ready(cx))?
                }
                SharedWriter::Unix(w) => {
                    ready!(AsRef::<UnixStream>::as_ref(&**w).poll_write_ready(cx))?
                }
            }
            match self.try_write(buf) {
                // The readiness was stale: try_write cleared it, so the
                // next poll_write_ready registers the waker.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                other => return Poll::Ready(other),
            }
        }
    }

    /// Shuts the writing direction down (our FIN), for every holder.
    fn shutdown(&self) -> io::Result<()> {
        let how = std::net::Shutdown::Write;
        match self {
            SharedWriter::Tcp(w) => {
                socket2::SockRef::from(AsRef::<TcpStream>::as_ref(&**w)).shutdown(how)
            }
            SharedWriter::Unix(w) => {
                socket2::SockRef::from(AsRef::<UnixStream>::as_ref(&**w)).shutdown(how)
            }
        }
    }
}

/// The driver's read half of a plain socket.
pub(crate) enum ReadHalf {
    Tcp(tcp::OwnedReadHalf),
    Unix(unix::OwnedReadHalf),
}

/// The byte stream the driver owns: a split plain socket, or TLS whole.
pub(crate) enum DriverSocket {
    Plain {
        read: ReadHalf,
        write: SharedWriter,
    },
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Socket {
    /// The stream for the driver and, for a plain socket, the write half
    /// callers may share (none for TLS).
    pub(crate) fn into_driver_socket(self) -> (DriverSocket, Option<SharedWriter>) {
        let (read, write) = match self {
            Socket::Tcp(s) => {
                let (r, w) = s.into_split();
                (ReadHalf::Tcp(r), SharedWriter::Tcp(Arc::new(w)))
            }
            Socket::Unix(s) => {
                let (r, w) = s.into_split();
                (ReadHalf::Unix(r), SharedWriter::Unix(Arc::new(w)))
            }
            #[cfg(feature = "tls")]
            Socket::Tls(s) => return (DriverSocket::Tls(s), None),
        };
        let shared = write.clone();
        (DriverSocket::Plain { read, write }, Some(shared))
    }
}

impl AsyncRead for DriverSocket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            DriverSocket::Plain { read, .. } => match read {
                ReadHalf::Tcp(r) => Pin::new(r).poll_read(cx, buf),
                ReadHalf::Unix(r) => Pin::new(r).poll_read(cx, buf),
            },
            #[cfg(feature = "tls")]
            DriverSocket::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for DriverSocket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            DriverSocket::Plain { write, .. } => write.poll_write(cx, buf),
            #[cfg(feature = "tls")]
            DriverSocket::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        #[cfg(not(feature = "tls"))]
        let _ = cx;
        match self.get_mut() {
            DriverSocket::Plain { .. } => Poll::Ready(Ok(())),
            #[cfg(feature = "tls")]
            DriverSocket::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        #[cfg(not(feature = "tls"))]
        let _ = cx;
        match self.get_mut() {
            DriverSocket::Plain { write, .. } => Poll::Ready(write.shutdown()),
            #[cfg(feature = "tls")]
            DriverSocket::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
