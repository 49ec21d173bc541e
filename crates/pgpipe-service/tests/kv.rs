//! The key-value API on both drivers: every status code and body.

mod common;

use common::{bounded, database, get, request, start};
use hyper::{Method, StatusCode};
use pgpipe_service::cli::Driver;
use pgpipe_service::router::Limits;
use pgpipe_testkit::AuthRole;

async fn every_status_code(driver: Driver) {
    let db = database("kv").await;
    let url = db.url(AuthRole::Trust);
    let limits = Limits { max_body: 1024 };
    let mut svc = start(driver, &url, limits).await;
    let a = svc.addr;

    // PUT: 201, then GET returns exactly the bytes (binary, NUL included).
    let value: Vec<u8> = (0..=255u8).collect();
    let r = request(a, Method::PUT, "/v0/entity?id=k1", value.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{r:?}");
    let r = get(a, "/v0/entity?id=k1").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(&r.body[..], &value[..]);
    assert_eq!(r.content_type(), "application/octet-stream");

    // Idempotent PUT: an upsert; an empty value is a value.
    let r = request(a, Method::PUT, "/v0/entity?id=k1", "second").await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(get(a, "/v0/entity?id=k1").await.text(), "second");
    let r = request(a, Method::PUT, "/v0/entity?id=empty", "").await;
    assert_eq!(r.status, StatusCode::CREATED);
    let r = get(a, "/v0/entity?id=empty").await;
    assert_eq!((r.status, r.body.len()), (StatusCode::OK, 0));

    // Percent-encoded keys are decoded.
    let r = request(a, Method::PUT, "/v0/entity?id=a%20b%2F%C3%A9", "x").await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(get(a, "/v0/entity?id=a%20b%2F%C3%A9").await.text(), "x");

    // DELETE: 202, then 404 with a JSON body; deleting again is 202.
    let r = request(a, Method::DELETE, "/v0/entity?id=k1", "").await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let r = get(a, "/v0/entity?id=k1").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.json(), serde_json::json!({"error": "not found"}));
    let r = request(a, Method::DELETE, "/v0/entity?id=k1", "").await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(
        get(a, "/v0/entity?id=never").await.status,
        StatusCode::NOT_FOUND
    );

    // Missing, empty or NUL-bearing id: 400 for every method.
    for method in [Method::GET, Method::PUT, Method::DELETE] {
        for path in [
            "/v0/entity",
            "/v0/entity?id=",
            "/v0/entity?other=1",
            "/v0/entity?id=a%00b",
        ] {
            let r = request(a, method.clone(), path, "v").await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{method} {path}: {r:?}");
            let e = r.json();
            assert!(e["error"].as_str().unwrap().contains("id"), "{e}");
        }
    }

    // Any other method: 405 with a JSON body.
    for method in [Method::POST, Method::PATCH] {
        let r = request(a, method.clone(), "/v0/entity?id=k1", "v").await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(r.json(), serde_json::json!({"error": "method not allowed"}));
    }

    // Over the body limit: 413, nothing stored; at the limit: fine.
    let r = request(a, Method::PUT, "/v0/entity?id=big", vec![7u8; 1025]).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{r:?}");
    assert!(r.json()["error"].is_string());
    assert_eq!(
        get(a, "/v0/entity?id=big").await.status,
        StatusCode::NOT_FOUND
    );
    let r = request(a, Method::PUT, "/v0/entity?id=big", vec![7u8; 1024]).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(get(a, "/v0/entity?id=big").await.body.len(), 1024);

    // Unknown paths: 404 JSON.
    let r = get(a, "/nope").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.json(), serde_json::json!({"error": "not found"}));

    svc.shutdown();
    svc.task.await.unwrap().unwrap();
}

/// A failing statement is a 500 whose body says nothing about the database.
async fn database_errors_are_opaque(driver: Driver) {
    let db = database("kverr").await;
    let url = db.url(AuthRole::Trust);
    let mut svc = start(driver, &url, Limits::default()).await;
    let client = pgpipe::connect(&url).await.unwrap();
    client
        .batch_execute("ALTER TABLE kv RENAME TO kv_gone")
        .await
        .unwrap();
    let r = get(svc.addr, "/v0/entity?id=x").await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(r.json(), serde_json::json!({"error": "database error"}));
    assert!(!r.text().contains("kv"), "{}", r.text());
    client
        .batch_execute("ALTER TABLE kv_gone RENAME TO kv")
        .await
        .unwrap();
    svc.shutdown();
    svc.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn kv_status_codes_pgpipe() {
    bounded(every_status_code(Driver::Pgpipe)).await;
}

#[tokio::test]
async fn kv_status_codes_tokio_postgres() {
    bounded(every_status_code(Driver::TokioPostgres)).await;
}

#[tokio::test]
async fn database_errors_are_opaque_pgpipe() {
    bounded(database_errors_are_opaque(Driver::Pgpipe)).await;
}

#[tokio::test]
async fn database_errors_are_opaque_tokio_postgres() {
    bounded(database_errors_are_opaque(Driver::TokioPostgres)).await;
}
