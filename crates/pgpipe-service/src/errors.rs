//! Errors as HTTP responses: a status code and a small JSON body
//! (`{"error": "..."}`). Database failures are logged with their detail
//! and answered without it, so nothing internal leaks to clients.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// A failure of the database behind the service, as the [`Db`](crate::db::Db)
/// implementations report it.
#[derive(Debug)]
pub struct StoreError {
    /// The pool is closed, exhausted or the server unreachable (503);
    /// otherwise the statement failed (500).
    pub unavailable: bool,
    /// The driver's message: logged, never sent to the client.
    pub detail: String,
}

impl StoreError {
    /// A statement failure (answered with 500).
    pub fn failed(detail: impl std::fmt::Display) -> StoreError {
        StoreError {
            unavailable: false,
            detail: detail.to_string(),
        }
    }

    /// The database cannot be reached (answered with 503).
    pub fn unavailable(detail: impl std::fmt::Display) -> StoreError {
        StoreError {
            unavailable: true,
            detail: detail.to_string(),
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for StoreError {}

impl From<pgpipe::Error> for StoreError {
    fn from(e: pgpipe::Error) -> StoreError {
        if e.is_closed() || e.is_timeout() {
            StoreError::unavailable(e)
        } else {
            StoreError::failed(e)
        }
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> StoreError {
        if e.is_closed() {
            StoreError::unavailable(e)
        } else {
            StoreError::failed(e)
        }
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(e: deadpool_postgres::PoolError) -> StoreError {
        match e {
            deadpool_postgres::PoolError::Backend(e) => e.into(),
            other => StoreError::unavailable(other),
        }
    }
}

/// An error answer: status and a message safe to show to clients.
#[derive(Debug)]
pub struct ApiError {
    /// The status code.
    pub status: StatusCode,
    /// The `error` field of the JSON body.
    pub message: String,
}

impl ApiError {
    /// 400 with `message`.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    /// 404.
    pub fn not_found() -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: "not found".into(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        tracing::error!(target: "pgpipe_service", error = %e.detail, "database request failed");
        if e.unavailable {
            ApiError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: "database unavailable".into(),
            }
        } else {
            ApiError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                message: "database error".into(),
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}
