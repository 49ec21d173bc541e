//! The ozo case: `GET /mail/{uid}/inbox` answers with the user's newest
//! inbox messages as JSON, each with its `mail.attach[]` attachments,
//! read through `query_as` and the derives (see [`crate::db::Message`]).

use axum::extract::{Path, State};
use axum::Json;

use crate::db::{Db, Message};
use crate::errors::ApiError;

/// `GET /mail/{uid}/inbox`: 200 with a JSON array (empty for an unknown
/// user), 400 when `uid` is not an integer.
pub async fn inbox<D: Db>(
    State(db): State<D>,
    Path(uid): Path<String>,
) -> Result<Json<Vec<Message>>, ApiError> {
    let uid: i64 = uid
        .parse()
        .map_err(|_| ApiError::bad_request(format!("uid must be an integer, got {uid:?}")))?;
    Ok(Json(db.inbox(uid).await?))
}
