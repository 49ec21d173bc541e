//! One keep-alive HTTP/1.1 connection of the load tool (hyper's
//! connection-level client: no pool, no extra task hops), reconnected after
//! an error.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;

/// A request of a mix.
#[derive(Debug, Clone)]
pub struct Req {
    /// The method.
    pub method: Method,
    /// Path and query.
    pub path: String,
    /// The body (empty for GET).
    pub body: Bytes,
}

/// Longest a request may take before it counts as an error.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// One connection to a service.
#[derive(Debug)]
pub struct Conn {
    addr: SocketAddr,
    host: String,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    /// A connection to `addr`, opened at the first request.
    pub fn new(addr: SocketAddr) -> Conn {
        Conn {
            addr,
            host: addr.to_string(),
            sender: None,
        }
    }

    async fn open(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, String> {
        if self.sender.as_ref().is_none_or(|s| s.is_closed()) {
            let stream = tokio::net::TcpStream::connect(self.addr)
                .await
                .map_err(|e| format!("connect to {}: {e}", self.addr))?;
            let _ = stream.set_nodelay(true);
            let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(|e| format!("HTTP handshake with {}: {e}", self.addr))?;
            tokio::spawn(conn);
            self.sender = Some(sender);
        }
        // Just set when it was missing.
        self.sender
            .as_mut()
            .ok_or_else(|| "no connection".to_string())
    }

    /// Sends `req` and reads the whole answer; an error drops the
    /// connection (the next request opens a new one).
    pub async fn send(&mut self, req: &Req) -> Result<(StatusCode, Bytes), String> {
        let result = tokio::time::timeout(REQUEST_TIMEOUT, self.send_inner(req))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {REQUEST_TIMEOUT:?}")));
        if result.is_err() {
            self.sender = None;
        }
        result
    }

    async fn send_inner(&mut self, req: &Req) -> Result<(StatusCode, Bytes), String> {
        let request = Request::builder()
            .method(req.method.clone())
            .uri(req.path.as_str())
            .header(hyper::header::HOST, self.host.as_str())
            .body(Full::new(req.body.clone()))
            .map_err(|e| format!("bad request {}: {e}", req.path))?;
        let sender = self.open().await?;
        sender
            .ready()
            .await
            .map_err(|e| format!("connection: {e}"))?;
        let resp = sender
            .send_request(request)
            .await
            .map_err(|e| format!("{} {}: {e}", req.method, req.path))?;
        let status = resp.status();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{} {}: reading the body: {e}", req.method, req.path))?
            .to_bytes();
        Ok((status, body))
    }
}
