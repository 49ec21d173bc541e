//! Serving with a graceful shutdown: on SIGINT or SIGTERM the listener
//! stops accepting, requests in flight finish (idle keep-alive connections
//! are closed), then the database pool is closed.

use std::future::Future;

use axum::Router;
use tokio::net::TcpListener;

use crate::db::Db;

/// Resolves on the first SIGINT or SIGTERM (Ctrl-C only where there are no
/// Unix signals). If a handler cannot be installed, it never resolves and
/// the failure is logged: the service keeps serving rather than stopping.
pub async fn signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for SIGINT: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT: shutting down"),
        () = term => tracing::info!("SIGTERM: shutting down"),
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, lets the requests
/// in flight finish, then closes `db`'s pool.
pub async fn serve<D: Db>(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    db: D,
) -> std::io::Result<()> {
    let result = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await;
    db.close();
    tracing::info!("stopped: in-flight requests finished, pool closed");
    result
}
