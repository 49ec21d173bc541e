//! Several hosts in one connection string: failing over to the next host,
//! target_session_attrs, load balancing.

mod common;

use common::{bounded, cluster, database};
use pgpipe::ErrorKind;

fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn url(hosts: &str, db: &str, query: &str) -> String {
    format!("postgres://pgpipe_trust@{hosts}/{db}?connect_timeout=5{query}")
}

#[tokio::test]
async fn a_dead_first_host_falls_through_to_the_next() {
    bounded(async {
        if cluster().is_external() {
            return;
        }
        let db = database("multihost");
        let port = cluster().port();
        let hosts = format!("127.0.0.1:{},127.0.0.1:{port}", dead_port());
        let client = pgpipe::connect(&url(&hosts, db.name(), "")).await.unwrap();
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );

        let both = format!("127.0.0.1:{port},127.0.0.1:{port}");
        let client = pgpipe::connect(&url(&both, db.name(), "&load_balance_hosts=random"))
            .await
            .unwrap();
        assert!(!client.is_closed());

        // Every host dead: one error naming each of them.
        let (a, b) = (dead_port(), dead_port());
        let err = pgpipe::connect(&url(&format!("127.0.0.1:{a},127.0.0.1:{b}"), db.name(), ""))
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&a.to_string()) && msg.contains(&b.to_string()),
            "{msg}"
        );
    })
    .await
}

#[tokio::test]
async fn target_session_attrs_choose_the_kind_of_server() {
    bounded(async {
        if cluster().is_external() {
            return;
        }
        let db = database("session_attrs");
        let hosts = format!("127.0.0.1:{}", cluster().port());
        for ok in ["read-write", "primary", "any", "prefer-standby"] {
            let u = url(&hosts, db.name(), &format!("&target_session_attrs={ok}"));
            pgpipe::connect(&u)
                .await
                .unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        for refused in ["standby", "read-only"] {
            let u = url(
                &hosts,
                db.name(),
                &format!("&target_session_attrs={refused}"),
            );
            let err = pgpipe::connect(&u).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Connect, "{refused}: {err}");
            assert!(err.to_string().contains(refused), "{err}");
        }
        // A session that defaults to read-only counts as read-only.
        let ro = "&options=-c%20default_transaction_read_only%3Don";
        let u = url(
            &hosts,
            db.name(),
            &format!("{ro}&target_session_attrs=read-only"),
        );
        let client = pgpipe::connect(&u).await.unwrap();
        let err = client
            .execute("CREATE TABLE nope (a int)", ())
            .await
            .unwrap_err();
        assert_eq!(err.code().map(|c| c.code()), Some("25006"));
        let u = url(
            &hosts,
            db.name(),
            &format!("{ro}&target_session_attrs=read-write"),
        );
        assert!(pgpipe::connect(&u).await.is_err());
    })
    .await
}
