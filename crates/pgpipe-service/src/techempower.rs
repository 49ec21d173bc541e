//! TechEmpower's endpoints, as their specification describes them:
//! `/json`, `/plaintext`, `/db`, `/queries?queries=N`, `/fortunes` and
//! `/updates?queries=N` (N clamped to 1..=500; missing or not a number
//! means 1). Every statement is its own query with its own Sync; the
//! statements of one request may be pipelined; the updates of a request are
//! one batched statement, which the rules allow.

use std::collections::HashMap;
use std::fmt::Write;

use axum::extract::{RawQuery, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use rand::Rng;
use serde::Serialize;

use crate::db::{Db, Fortune, World};
use crate::errors::ApiError;

/// Rows of the `world` table.
pub const WORLD_ROWS: i32 = 10_000;
/// The fortune every `/fortunes` answer adds before sorting.
pub const ADDED_FORTUNE: &str = "Additional fortune added at request time.";

/// The `/json` body.
#[derive(Debug, Serialize)]
pub struct Message {
    /// Always `Hello, World!`.
    pub message: &'static str,
}

/// `GET /json`.
pub async fn json() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

/// `GET /plaintext`.
pub async fn plaintext() -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], "Hello, World!").into_response()
}

/// The `queries` parameter as the specification wants it read: missing,
/// empty or not an integer is 1; below 1 is 1; above 500 is 500.
pub fn query_count(raw: Option<&str>) -> usize {
    let n = raw
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("queries="))
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1);
    n.clamp(1, 500) as usize
}

fn random_id(rng: &mut impl Rng) -> i32 {
    rng.gen_range(1..=WORLD_ROWS)
}

fn random_ids(n: usize) -> Vec<i32> {
    let mut rng = rand::thread_rng();
    (0..n).map(|_| random_id(&mut rng)).collect()
}

/// `GET /db`: one random world row.
pub async fn db<D: Db>(State(db): State<D>) -> Result<Json<World>, ApiError> {
    let id = random_id(&mut rand::thread_rng());
    let mut worlds = db.worlds(&[id]).await?;
    worlds
        .pop()
        .map(Json)
        .ok_or_else(|| ApiError::from(crate::errors::StoreError::failed("no world row")))
}

/// `GET /queries?queries=N`: N random world rows, one query each.
pub async fn queries<D: Db>(
    State(db): State<D>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<World>>, ApiError> {
    let ids = random_ids(query_count(raw.as_deref()));
    Ok(Json(db.worlds(&ids).await?))
}

/// `GET /updates?queries=N`: N random rows read one query each, given new
/// random numbers, written back in one batched statement and returned.
pub async fn updates<D: Db>(
    State(db): State<D>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<World>>, ApiError> {
    let ids = random_ids(query_count(raw.as_deref()));
    let mut worlds = db.worlds(&ids).await?;
    {
        // (The thread's generator must not live across an await.)
        let mut rng = rand::thread_rng();
        // A repeated id gets one new number, so the answer shows what is stored.
        let mut numbers: HashMap<i32, i32> = HashMap::with_capacity(worlds.len());
        for w in &mut worlds {
            w.randomnumber = *numbers.entry(w.id).or_insert_with(|| random_id(&mut rng));
        }
    }
    // Sorted and distinct: concurrent requests lock rows in the same order
    // (no deadlocks between them).
    let mut distinct: Vec<World> = worlds.clone();
    distinct.sort_unstable_by_key(|w| w.id);
    distinct.dedup_by_key(|w| w.id);
    db.update_worlds(&distinct).await?;
    Ok(Json(worlds))
}

/// The Fortunes page: the added fortune, sorted by message, HTML-escaped.
pub fn fortunes_html(mut fortunes: Vec<Fortune>) -> String {
    fortunes.push(Fortune {
        id: 0,
        message: ADDED_FORTUNE.to_string(),
    });
    fortunes.sort_unstable_by(|a, b| a.message.cmp(&b.message));
    let mut html = String::with_capacity(1200);
    html.push_str(
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
         <tr><th>id</th><th>message</th></tr>",
    );
    for f in &fortunes {
        // Writing into a String cannot fail.
        let _ = write!(html, "<tr><td>{}</td><td>", f.id);
        escape_into(&mut html, &f.message);
        html.push_str("</td></tr>");
    }
    html.push_str("</table></body></html>");
    html
}

/// HTML-escapes `s` (`& < > " '`) onto `out`.
pub fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
}

/// `GET /fortunes`.
pub async fn fortunes<D: Db>(State(db): State<D>) -> Result<Html<String>, ApiError> {
    Ok(Html(fortunes_html(db.fortunes().await?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_parameter_is_clamped() {
        assert_eq!(query_count(None), 1);
        assert_eq!(query_count(Some("")), 1);
        assert_eq!(query_count(Some("queries=")), 1);
        assert_eq!(query_count(Some("queries=foo")), 1);
        assert_eq!(query_count(Some("queries=0")), 1);
        assert_eq!(query_count(Some("queries=-5")), 1);
        assert_eq!(query_count(Some("queries=20")), 20);
        assert_eq!(query_count(Some("x=1&queries=7")), 7);
        assert_eq!(query_count(Some("queries=501")), 500);
        assert_eq!(query_count(Some("queries=99999999999999999999")), 1);
    }

    #[test]
    fn fortunes_are_escaped_and_sorted() {
        let html = fortunes_html(vec![
            Fortune {
                id: 2,
                message: "b & 'c'".into(),
            },
            Fortune {
                id: 1,
                message: "<script>\"x\"</script>".into(),
            },
        ]);
        assert_eq!(
            html,
            "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
             <tr><th>id</th><th>message</th></tr>\
             <tr><td>1</td><td>&lt;script&gt;&quot;x&quot;&lt;/script&gt;</td></tr>\
             <tr><td>0</td><td>Additional fortune added at request time.</td></tr>\
             <tr><td>2</td><td>b &amp; &#x27;c&#x27;</td></tr>\
             </table></body></html>"
        );
    }
}
