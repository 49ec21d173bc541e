//! The routes, shared by both drivers.

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use crate::db::Db;
use crate::errors::ApiError;
use crate::{kv, mail, techempower};

/// Limits the router enforces.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest accepted request body (a key-value PUT); larger is 413.
    pub max_body: usize,
}

impl Default for Limits {
    /// 1 MiB bodies.
    fn default() -> Limits {
        Limits { max_body: 1 << 20 }
    }
}

/// The service's routes on `db`: `/v0/entity`, the TechEmpower endpoints,
/// `/mail/{uid}/inbox` and `/health`. Unknown paths are 404 and known paths
/// with another method 405, both with a JSON body.
pub fn router<D: Db>(db: D, limits: Limits) -> Router {
    Router::new()
        .route(
            "/v0/entity",
            get(kv::get::<D>)
                .put(kv::put::<D>)
                .delete(kv::delete::<D>)
                .layer(DefaultBodyLimit::max(limits.max_body)),
        )
        .route("/json", get(techempower::json))
        .route("/plaintext", get(techempower::plaintext))
        .route("/db", get(techempower::db::<D>))
        .route("/queries", get(techempower::queries::<D>))
        .route("/fortunes", get(techempower::fortunes::<D>))
        .route("/updates", get(techempower::updates::<D>))
        .route("/mail/{uid}/inbox", get(mail::inbox::<D>))
        .route("/health", get(health::<D>))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found)
        .layer(axum::middleware::map_response(server_header))
        .with_state(db)
}

/// TechEmpower requires a `Server` header (hyper adds `Date`).
async fn server_header(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::SERVER, HeaderValue::from_static("pgpipe-service"));
    response
}

async fn method_not_allowed() -> ApiError {
    ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: "method not allowed".into(),
    }
}

async fn not_found() -> ApiError {
    ApiError::not_found()
}

/// `GET /health`: 200 `{"status":"ok","driver":...}` when the database
/// answers, 503 otherwise.
async fn health<D: Db>(State(db): State<D>) -> Response {
    match db.ping().await {
        Ok(()) => Json(serde_json::json!({ "status": "ok", "driver": db.name() })).into_response(),
        Err(e) => ApiError::from(crate::errors::StoreError::unavailable(e.detail)).into_response(),
    }
}
