//! TechEmpower's endpoints on both drivers, checked as their verifier
//! checks them: headers, JSON shapes, `queries` clamping, the Fortunes page
//! with the escaped `<script>` fortune, updates persisted.

mod common;

use common::{bounded, database, get, start};
use hyper::StatusCode;
use pgpipe_service::cli::Driver;
use pgpipe_service::db::Fortune;
use pgpipe_service::router::Limits;
use pgpipe_service::schema::FORTUNES;
use pgpipe_service::techempower::fortunes_html;
use pgpipe_testkit::AuthRole;
use serde_json::Value;

/// One world object as the verifier wants it: exactly `id` and
/// `randomNumber`, both integers in 1..=10000.
fn check_world(v: &Value) -> (i64, i64) {
    let o = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    assert_eq!(o.len(), 2, "{v}");
    let id = o["id"].as_i64().unwrap_or_else(|| panic!("id: {v}"));
    let n = o["randomNumber"]
        .as_i64()
        .unwrap_or_else(|| panic!("randomNumber: {v}"));
    assert!(
        (1..=10_000).contains(&id) && (1..=10_000).contains(&n),
        "{v}"
    );
    (id, n)
}

async fn verifier(driver: Driver) {
    let db = database("te").await;
    let url = db.url(AuthRole::Trust);
    let mut svc = start(driver, &url, Limits::default()).await;
    let a = svc.addr;

    let r = get(a, "/json").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.content_type(), "application/json");
    assert_eq!(r.json(), serde_json::json!({"message": "Hello, World!"}));
    assert_eq!(r.headers["server"], "pgpipe-service");
    assert!(r.headers.contains_key("date"));

    let r = get(a, "/plaintext").await;
    assert_eq!((r.status, r.text()), (StatusCode::OK, "Hello, World!"));
    assert_eq!(r.content_type(), "text/plain");

    let r = get(a, "/db").await;
    assert_eq!(r.content_type(), "application/json");
    check_world(&r.json());

    for (q, n) in [
        ("", 1),
        ("?queries=", 1),
        ("?queries=foo", 1),
        ("?queries=0", 1),
        ("?queries=-3", 1),
        ("?queries=1", 1),
        ("?queries=20", 20),
        ("?queries=501", 500),
    ] {
        let r = get(a, &format!("/queries{q}")).await;
        assert_eq!(r.status, StatusCode::OK, "{q}");
        let v = r.json();
        let list = v.as_array().unwrap_or_else(|| panic!("{q}: not an array"));
        assert_eq!(list.len(), n, "{q}");
        list.iter().for_each(|w| {
            check_world(w);
        });
    }

    // Fortunes: the 12 rows plus the added one, sorted, escaped.
    let r = get(a, "/fortunes").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.content_type(), "text/html; charset=utf-8");
    let expected = fortunes_html(
        FORTUNES
            .iter()
            .enumerate()
            .map(|(i, m)| Fortune {
                id: i as i32 + 1,
                message: m.to_string(),
            })
            .collect(),
    );
    assert_eq!(r.text(), expected);
    assert!(r.text().contains(
        "<tr><td>11</td><td>&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);&lt;/script&gt;</td></tr>"
    ));
    assert!(r
        .text()
        .contains("<td>0</td><td>Additional fortune added at request time.</td>"));
    assert!(!r.text().contains("<script>"));

    // Updates: clamped like queries, and what is returned is stored.
    let client = pgpipe::connect(&url).await.unwrap();
    for (q, n) in [
        ("?queries=foo", 1),
        ("?queries=20", 20),
        ("?queries=501", 500),
    ] {
        let r = get(a, &format!("/updates{q}")).await;
        assert_eq!(r.status, StatusCode::OK, "{q}: {}", r.text());
        let v = r.json();
        let list = v.as_array().unwrap();
        assert_eq!(list.len(), n, "{q}");
        for w in list {
            let (id, number) = check_world(w);
            let stored: i32 = client
                .query_one("SELECT randomnumber FROM world WHERE id = $1", (id as i32,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(stored as i64, number, "{q}: world {id} not persisted");
        }
    }

    let r = get(a, "/health").await;
    assert_eq!(r.status, StatusCode::OK);
    let expected = match driver {
        Driver::Pgpipe => "pgpipe",
        Driver::TokioPostgres => "tokio-postgres",
    };
    assert_eq!(r.json()["driver"], expected);

    svc.shutdown();
    svc.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn techempower_verifier_pgpipe() {
    bounded(verifier(Driver::Pgpipe)).await;
}

#[tokio::test]
async fn techempower_verifier_tokio_postgres() {
    bounded(verifier(Driver::TokioPostgres)).await;
}
