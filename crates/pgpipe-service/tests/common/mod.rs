//! Shared helpers: one throwaway cluster per test binary, a fresh database
//! per test with the service's tables, the service running in-process on
//! either driver, and a tiny HTTP/1.1 client.
#![allow(dead_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{HeaderMap, Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use pgpipe_service::cli::Driver;
use pgpipe_service::db::{Db, PgpipeDb, TokioPostgresDb};
use pgpipe_service::router::{router, Limits};
use pgpipe_service::{schema, shutdown};
use pgpipe_testkit::{AuthRole, Cluster, TestDatabase};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Every test body runs under this bound.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs a test body with a time bound: a hang fails the test instead of CI.
pub async fn bounded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(TEST_TIMEOUT, f)
        .await
        .expect("test exceeded its time bound")
}

/// A fresh database with the service's tables and fixtures.
pub async fn database(hint: &str) -> TestDatabase {
    let cluster = Cluster::shared().unwrap_or_else(|e| panic!("cannot start the cluster: {e}"));
    let db = cluster
        .create_database(hint)
        .unwrap_or_else(|e| panic!("cannot create a test database: {e}"));
    schema::ensure(&db.url(AuthRole::Trust))
        .await
        .unwrap_or_else(|e| panic!("cannot create the tables: {e}"));
    db
}

/// A service running in this process.
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    /// The serving task (ends after a graceful shutdown).
    pub task: JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Starts the graceful shutdown.
    pub fn shutdown(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

async fn spawn<D: Db>(db: D, limits: Limits) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let app = router(db.clone(), limits);
    let task = tokio::spawn(shutdown::serve(
        listener,
        app,
        async move {
            let _ = rx.await;
        },
        db,
    ));
    Running {
        addr,
        stop: Some(tx),
        task,
    }
}

/// The service on `driver` against `url`.
pub async fn start(driver: Driver, url: &str, limits: Limits) -> Running {
    match driver {
        Driver::Pgpipe => spawn(PgpipeDb::connect(url, 4).await.unwrap(), limits).await,
        Driver::TokioPostgres => {
            spawn(TokioPostgresDb::connect(url, 4).await.unwrap(), limits).await
        }
    }
}

/// An answer.
#[derive(Debug)]
pub struct Answer {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Bytes,
}

impl Answer {
    /// The body as UTF-8.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("a UTF-8 body")
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text()))
    }

    /// The Content-Type.
    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }
}

/// One request on a new connection.
pub async fn request(
    addr: SocketAddr,
    method: Method,
    path: &str,
    body: impl Into<Bytes>,
) -> Answer {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr.to_string())
        .body(Full::new(body.into()))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        headers,
        body,
    }
}

/// `GET path`.
pub async fn get(addr: SocketAddr, path: &str) -> Answer {
    request(addr, Method::GET, path, Bytes::new()).await
}
