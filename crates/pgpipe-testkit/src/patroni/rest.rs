//! Patroni's REST API, as much as the harness needs: `GET /cluster` (the
//! members and their roles) and `POST /switchover` (and etcd's `/health`). One HTTP/1.0 request
//! per connection, every socket operation bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::error::TestkitError;

/// Bound of each connect, read and write.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Answers are small; more means something else answered.
const MAX_ANSWER: u64 = 1 << 20;

/// A member as `GET /cluster` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Member {
    /// The member's name (`node1`, `node2`, `node3`).
    pub name: String,
    /// `leader`, `sync_standby` or `replica` (Patroni's words).
    pub role: String,
    /// `running`, `starting`, `stopped`, `crashed`, ...
    pub state: String,
    /// The PostgreSQL timeline the member is on, when it reports one.
    pub timeline: Option<u64>,
    /// Replication lag in bytes (replicas), when reported.
    pub lag: Option<u64>,
}

impl Member {
    /// True for the member holding the leader key.
    pub fn is_leader(&self) -> bool {
        self.role == "leader"
    }

    /// True for a replica (synchronous or not) that is running.
    pub fn is_running_replica(&self) -> bool {
        (self.role == "replica" || self.role == "sync_standby") && self.state == "running"
    }
}

/// `GET /cluster` from the REST API at `addr`.
pub(super) fn cluster(addr: SocketAddr) -> Result<Vec<Member>, TestkitError> {
    let (status, body) = request(addr, "GET", "/cluster", None)?;
    if status != 200 {
        return Err(TestkitError::new(format!(
            "GET /cluster on {addr} answered {status}: {body}"
        )));
    }
    parse_members(&body).map_err(|e| e.context(format!("GET /cluster on {addr}")))
}

/// `POST /switchover` from `leader` (to any eligible member: in synchronous
/// mode, the synchronous standby) to the REST API at `addr`.
pub(super) fn switchover(addr: SocketAddr, leader: &str) -> Result<String, TestkitError> {
    let body = serde_json::json!({ "leader": leader }).to_string();
    let (status, answer) = request(addr, "POST", "/switchover", Some(&body))?;
    if status != 200 {
        return Err(TestkitError::new(format!(
            "POST /switchover (leader {leader}) on {addr} answered {status}: {answer}"
        )));
    }
    Ok(answer)
}

/// `GET path`: the status code and the body.
pub(super) fn get(addr: SocketAddr, path: &str) -> Result<(u16, String), TestkitError> {
    request(addr, "GET", path, None)
}

/// `POST /reinitialize` (forced) to the member whose REST API is at
/// `addr`: Patroni wipes its data directory and copies the leader again
/// (what `patronictl reinit` does).
pub(super) fn reinitialize(addr: SocketAddr) -> Result<(), TestkitError> {
    let (status, answer) = request(addr, "POST", "/reinitialize", Some(r#"{"force": true}"#))?;
    if status != 200 {
        return Err(TestkitError::new(format!(
            "POST /reinitialize on {addr} answered {status}: {answer}"
        )));
    }
    Ok(())
}

fn parse_members(body: &str) -> Result<Vec<Member>, TestkitError> {
    let value: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| TestkitError::new(format!("not JSON ({e}): {body}")))?;
    let members = value
        .get("members")
        .and_then(|m| m.as_array())
        .ok_or_else(|| TestkitError::new(format!("no `members` array: {body}")))?;
    Ok(members
        .iter()
        .map(|m| {
            let text = |key: &str| {
                m.get(key)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            Member {
                name: text("name"),
                role: text("role"),
                state: text("state"),
                timeline: m.get("timeline").and_then(|v| v.as_u64()),
                lag: m.get("lag").and_then(|v| v.as_u64()),
            }
        })
        .collect())
}

/// One request; returns the status code and the body.
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, String), TestkitError> {
    let what = |e| TestkitError::io(format!("{method} {path} on {addr}"), e);
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(what)?;
    stream.set_read_timeout(Some(TIMEOUT)).map_err(what)?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(what)?;
    let body = body.unwrap_or("");
    let request = format!(
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).map_err(what)?;
    let mut answer = Vec::new();
    stream
        .take(MAX_ANSWER)
        .read_to_end(&mut answer)
        .map_err(what)?;
    parse_answer(&String::from_utf8_lossy(&answer))
        .ok_or_else(|| TestkitError::new(format!("{method} {path} on {addr}: not an HTTP answer")))
}

fn parse_answer(answer: &str) -> Option<(u16, String)> {
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_read_from_patronis_answer() {
        let body = r#"{"members": [
            {"name": "node1", "role": "leader", "state": "running", "api_url": "http://127.0.0.1:1/patroni", "host": "127.0.0.1", "port": 2, "timeline": 2},
            {"name": "node2", "role": "sync_standby", "state": "running", "timeline": 2, "lag": 0},
            {"name": "node3", "role": "replica", "state": "starting"}]}"#;
        let members = parse_members(body).unwrap();
        assert_eq!(members.len(), 3);
        assert!(members[0].is_leader());
        assert_eq!(members[0].timeline, Some(2));
        assert!(members[1].is_running_replica());
        assert_eq!(members[1].lag, Some(0));
        assert!(!members[2].is_running_replica());
        assert!(parse_members("{}").is_err());
        assert!(parse_members("<html>").is_err());
    }

    #[test]
    fn status_and_body_are_split() {
        let (status, body) =
            parse_answer("HTTP/1.0 503 Service Unavailable\r\nA: b\r\n\r\nno").unwrap();
        assert_eq!(status, 503);
        assert_eq!(body, "no");
        assert!(parse_answer("garbage").is_none());
    }
}
