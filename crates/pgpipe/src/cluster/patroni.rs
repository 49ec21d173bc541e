//! The Patroni topology source of a shard: `GET /cluster` on Patroni's
//! REST API at each probe round, beside the servers' own probes.

use std::time::Duration;

use serde::Deserialize;

use super::http;
use super::patroni_member::PatroniMember;
use crate::error::ErrorKind;
use crate::Error;

/// A `/cluster` answer is a few hundred bytes per member: more means
/// something else answered.
const MAX_BODY: usize = 1 << 20;

/// Where a shard's Patroni REST API answers.
#[derive(Debug, Clone)]
pub(crate) struct PatroniSource {
    pub(crate) url: String,
}

impl PatroniSource {
    /// The members, asked of the REST API within `timeout`.
    pub(crate) async fn members(&self, timeout: Duration) -> Result<Vec<PatroniMember>, Error> {
        let body = tokio::time::timeout(timeout, http::get(&self.url, "/cluster", MAX_BODY))
            .await
            .map_err(|_| {
                Error::new(
                    ErrorKind::Timeout,
                    format!("GET {}/cluster did not answer within {timeout:?}", self.url),
                )
            })??;
        parse_cluster(&body).map_err(|e| e.context(format!("GET {}/cluster", self.url)))
    }
}

#[derive(Deserialize)]
struct ClusterAnswer {
    members: Vec<MemberAnswer>,
}

#[derive(Deserialize)]
struct MemberAnswer {
    name: String,
    #[serde(default)]
    role: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    host: String,
    #[serde(default)]
    port: u16,
    /// A number of bytes, or `"unknown"`.
    #[serde(default)]
    lag: Option<serde_json::Value>,
}

/// The members of a `GET /cluster` answer.
pub(crate) fn parse_cluster(body: &[u8]) -> Result<Vec<PatroniMember>, Error> {
    let answer: ClusterAnswer = serde_json::from_slice(body).map_err(|e| {
        Error::new(
            ErrorKind::Protocol,
            format!("not a Patroni /cluster answer: {e}"),
        )
    })?;
    Ok(answer
        .members
        .into_iter()
        .map(|m| PatroniMember {
            name: m.name,
            role: m.role,
            state: m.state,
            host: m.host,
            port: m.port,
            lag: m.lag.and_then(|l| l.as_u64()),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As Patroni 3.0 answers (`patronictl list` reads the same).
    const ANSWER: &str = r#"{"members": [
        {"name": "node1", "role": "leader", "state": "running", "api_url": "http://127.0.0.1:8008/patroni",
         "host": "127.0.0.1", "port": 5432, "timeline": 3},
        {"name": "node2", "role": "sync_standby", "state": "streaming", "host": "127.0.0.1", "port": 5433,
         "timeline": 3, "lag": 0},
        {"name": "node3", "role": "replica", "state": "running", "host": "127.0.0.1", "port": 5434,
         "timeline": 2, "lag": 16777216},
        {"name": "node4", "role": "replica", "state": "starting", "host": "127.0.0.1", "port": 5435,
         "lag": "unknown"}
    ], "scope": "pgpipe"}"#;

    #[test]
    fn members_roles_and_lag_are_read() {
        let members = parse_cluster(ANSWER.as_bytes()).unwrap();
        assert_eq!(members.len(), 4);
        assert!(members[0].is_leader());
        assert_eq!(members[0].lag, None);
        assert_eq!(
            (members[1].role.as_str(), members[1].port, members[1].lag),
            ("sync_standby", 5433, Some(0))
        );
        assert_eq!(members[2].lag, Some(16 << 20));
        assert!(!members[2].is_leader());
        assert_eq!(
            (members[3].state.as_str(), members[3].lag),
            ("starting", None)
        );
    }

    #[test]
    fn answers_that_are_not_a_cluster_are_clear_errors() {
        for body in [
            "",
            "<html>",
            "{\"members\": 3}",
            "{\"state\": \"running\"}",
            "{\"members\": [{\"role\": \"leader\"}]}",
        ] {
            let e = parse_cluster(body.as_bytes()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{body}");
            assert!(
                e.to_string().contains("not a Patroni /cluster answer"),
                "{e}"
            );
        }
    }

    /// A source asked of something that is not a good Patroni fails
    /// clearly, and within its timeout.
    #[tokio::test]
    async fn a_bad_server_is_a_clear_error() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        async fn serve(answer: Vec<u8>) -> String {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(&answer).await;
            });
            format!("http://{addr}")
        }
        let source = |url| PatroniSource { url };
        let timeout = Duration::from_secs(30);

        let url = serve(b"HTTP/1.1 503 Service Unavailable\r\n\r\n{}".to_vec()).await;
        let e = source(url).members(timeout).await.unwrap_err();
        assert!(e.to_string().contains("503"), "{e}");

        let mut huge = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        huge.resize(MAX_BODY + 100_000, b' ');
        let url = serve(huge).await;
        let e = source(url).members(timeout).await.unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e}");

        let url = serve(b"HTTP/1.1 200 OK\r\n\r\n{\"members\": [".to_vec()).await;
        let e = source(url).members(timeout).await.unwrap_err();
        assert!(
            e.to_string().contains("not a Patroni /cluster answer"),
            "{e}"
        );

        let url = serve(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{ANSWER}",
                ANSWER.len()
            )
            .into_bytes(),
        )
        .await;
        assert_eq!(source(url).members(timeout).await.unwrap().len(), 4);

        // A server that never answers: the timeout ends the wait.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let e = source(url)
            .members(Duration::from_millis(200))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        drop(listener);
    }
}
