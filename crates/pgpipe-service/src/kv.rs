//! The key-value API of the wrk2 load-test report: `/v0/entity?id=KEY`.
//!
//! | request | answer |
//! | --- | --- |
//! | `PUT` with the value as the body | 201 Created (insert or replace) |
//! | `GET` | 200 with the stored bytes, 404 if absent |
//! | `DELETE` | 202 Accepted (absent keys too) |
//! | no `id`, an empty one, or one with a NUL | 400 |
//! | a body over the limit | 413 |
//! | any other method | 405 |

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::db::Db;
use crate::errors::ApiError;

/// The query string of `/v0/entity`.
#[derive(Debug, Deserialize)]
pub struct EntityQuery {
    /// The key.
    pub id: Option<String>,
}

/// The key of a request, or why it has none.
fn key(query: Result<Query<EntityQuery>, QueryRejection>) -> Result<String, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::bad_request(format!("bad query string: {e}")))?;
    match q.id {
        None => Err(ApiError::bad_request("missing id parameter")),
        Some(id) if id.is_empty() => Err(ApiError::bad_request("empty id parameter")),
        // PostgreSQL text cannot hold NUL.
        Some(id) if id.contains('\0') => Err(ApiError::bad_request("id contains a NUL character")),
        Some(id) => Ok(id),
    }
}

/// `GET /v0/entity?id=KEY`.
pub async fn get<D: Db>(
    State(db): State<D>,
    query: Result<Query<EntityQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let key = key(query)?;
    match db.kv_get(&key).await? {
        Some(v) => Ok(([(header::CONTENT_TYPE, "application/octet-stream")], v).into_response()),
        None => Err(ApiError::not_found()),
    }
}

/// `PUT /v0/entity?id=KEY` with the value as the body.
pub async fn put<D: Db>(
    State(db): State<D>,
    query: Result<Query<EntityQuery>, QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, ApiError> {
    let key = key(query)?;
    // Over the body limit: 413, as a JSON error like the others.
    let value = body.map_err(|e| ApiError {
        status: e.status(),
        message: e.body_text(),
    })?;
    db.kv_put(&key, value).await?;
    Ok(StatusCode::CREATED)
}

/// `DELETE /v0/entity?id=KEY`.
pub async fn delete<D: Db>(
    State(db): State<D>,
    query: Result<Query<EntityQuery>, QueryRejection>,
) -> Result<StatusCode, ApiError> {
    let key = key(query)?;
    db.kv_delete(&key).await?;
    Ok(StatusCode::ACCEPTED)
}
