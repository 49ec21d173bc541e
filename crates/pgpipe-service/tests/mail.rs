//! The mail inbox (ozo's `mail.attach[]`) on both drivers.

mod common;

use common::{bounded, database, get, start};
use hyper::StatusCode;
use pgpipe_service::cli::Driver;
use pgpipe_service::router::Limits;
use pgpipe_service::schema::MAIL_PER_USER;
use pgpipe_testkit::AuthRole;

async fn inbox(driver: Driver) {
    let db = database("mail").await;
    let url = db.url(AuthRole::Trust);
    let mut svc = start(driver, &url, Limits::default()).await;

    // A message with an awkward attachment (quotes, commas, parentheses,
    // non-ASCII) and a NULL-free empty list.
    let client = pgpipe::connect(&url).await.unwrap();
    client
        .batch_execute(
            "INSERT INTO mail.message VALUES \
             (1000001, 77777, 'inbox', 'hi', ARRAY[ROW('naïve \"q\", (p).txt', 'text/plain', 5)::mail.attach]), \
             (1000002, 77777, 'inbox', 'none', '{}'), \
             (1000003, 77777, 'sent', 'not in the inbox', '{}')",
        )
        .await
        .unwrap();

    let r = get(svc.addr, "/mail/77777/inbox").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.content_type(), "application/json");
    assert_eq!(
        r.json(),
        serde_json::json!([
            {"id": 1000002, "subject": "none", "attachments": []},
            {"id": 1000001, "subject": "hi", "attachments": [
                {"filename": "naïve \"q\", (p).txt", "type": "text/plain", "size": 5}
            ]},
        ])
    );

    // A seeded user: MAIL_PER_USER messages, newest first, message g with
    // g % 4 attachments.
    let r = get(svc.addr, "/mail/3/inbox").await;
    let v = r.json();
    let list = v.as_array().unwrap();
    assert_eq!(list.len() as i64, MAIL_PER_USER);
    assert_eq!(list[0]["id"], 30);
    for m in list {
        let id = m["id"].as_i64().unwrap();
        let attachments = m["attachments"].as_array().unwrap();
        assert_eq!(attachments.len() as i64, id % 4, "{m}");
        if let Some(first) = attachments.first() {
            assert_eq!(first["filename"], format!("file-{id}-1.pdf"));
            assert_eq!(first["type"], "application/pdf");
            assert_eq!(first["size"], id * 100 + 1);
        }
    }

    let r = get(svc.addr, "/mail/123456789/inbox").await;
    assert_eq!(
        (r.status, r.json()),
        (StatusCode::OK, serde_json::json!([]))
    );
    let r = get(svc.addr, "/mail/abc/inbox").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.json()["error"].as_str().unwrap().contains("uid"));

    svc.shutdown();
    svc.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn mail_inbox_pgpipe() {
    bounded(inbox(Driver::Pgpipe)).await;
}

#[tokio::test]
async fn mail_inbox_tokio_postgres() {
    bounded(inbox(Driver::TokioPostgres)).await;
}
