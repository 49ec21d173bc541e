//! The smallest HTTP/1.1 client the Patroni source needs: one `GET` per
//! connection (`Connection: close`), the answer read to EOF, bounded in
//! size (the caller bounds it in time). Plain `http://` only.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::ErrorKind;
use crate::Error;

/// `GET path` on the server of `base` (`http://host[:port][/prefix]`):
/// the body of a 200 answer, at most `max_body` bytes of it.
pub(crate) async fn get(base: &str, path: &str, max_body: usize) -> Result<Vec<u8>, Error> {
    let (authority, prefix) = split_url(base)?;
    let target = format!("{}{path}", prefix.trim_end_matches('/'));
    let what = |e: std::io::Error| Error::new(ErrorKind::Io, format!("GET {base}{path}: {e}"));
    let addr = if authority.contains(':') && !authority.ends_with(']') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let mut stream = TcpStream::connect(addr.as_str()).await.map_err(what)?;
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.map_err(what)?;
    // Head and body together: a little room for the head beyond the body.
    let limit = max_body.saturating_add(MAX_HEAD);
    let mut answer = Vec::new();
    let read = (&mut stream)
        .take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut answer)
        .await;
    read.map_err(what)?;
    parse_answer(&answer, max_body)
        .map_err(|e| Error::new(ErrorKind::Protocol, format!("GET {base}{path}: {e}")))
}

/// The most a status line and headers may take.
const MAX_HEAD: usize = 16 * 1024;

/// `http://authority/prefix` into the authority and the path prefix.
fn split_url(base: &str) -> Result<(&str, &str), Error> {
    let rest = base.strip_prefix("http://").ok_or_else(|| {
        Error::new(
            ErrorKind::Config,
            format!("{base:?}: only http:// URLs are supported"),
        )
    })?;
    let (authority, prefix) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains('@') {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{base:?}: expected http://host[:port]"),
        ));
    }
    Ok((authority, prefix))
}

/// The body of a complete answer: the status must be 200, the body at
/// most `max_body` bytes (and as long as `Content-Length` says, if sent).
pub(crate) fn parse_answer(answer: &[u8], max_body: usize) -> Result<Vec<u8>, String> {
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| {
            if answer.len() > MAX_HEAD {
                format!("no end of headers in the first {MAX_HEAD} bytes")
            } else {
                "the answer ended before its headers did (not HTTP?)".to_owned()
            }
        })?;
    if end > MAX_HEAD {
        return Err(format!("headers longer than {MAX_HEAD} bytes"));
    }
    let head = String::from_utf8_lossy(&answer[..end]);
    let body = &answer[end + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let (version, code) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if !version.starts_with("HTTP/1.") {
        return Err(format!("not an HTTP/1 status line: {status_line:?}"));
    }
    let code: u16 = code
        .parse()
        .map_err(|_| format!("no status code in {status_line:?}"))?;
    if code != 200 {
        let excerpt = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
        return Err(format!("answered {status_line:?}: {excerpt}"));
    }
    if body.len() > max_body {
        return Err(format!("the body is longer than {max_body} bytes"));
    }
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("transfer-encoding") && !value.eq_ignore_ascii_case("identity")
        {
            return Err(format!("transfer-encoding {value:?} is not supported"));
        }
        if name.eq_ignore_ascii_case("content-length") {
            let length: usize = value
                .parse()
                .map_err(|_| format!("bad content-length {value:?}"))?;
            if length != body.len() {
                return Err(format!(
                    "the body has {} bytes, content-length said {length}",
                    body.len()
                ));
            }
        }
    }
    Ok(body.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_200_answer_gives_its_body() {
        let answer =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse_answer(answer, 100).unwrap(), b"{}");
        // Without a length, read to EOF.
        assert_eq!(
            parse_answer(b"HTTP/1.0 200 OK\r\n\r\n[1]", 100).unwrap(),
            b"[1]"
        );
    }

    #[test]
    fn bad_answers_are_clear_errors() {
        let e =
            parse_answer(b"HTTP/1.1 503 Service Unavailable\r\n\r\nno leader", 100).unwrap_err();
        assert!(e.contains("503") && e.contains("no leader"), "{e}");
        let e = parse_answer(b"SSH-2.0-OpenSSH\r\n\r\n", 100).unwrap_err();
        assert!(e.contains("status line"), "{e}");
        let e = parse_answer(b"HTTP/1.1 200 OK\r\nContent-Le", 100).unwrap_err();
        assert!(e.contains("ended before its headers"), "{e}");
        let e = parse_answer(b"HTTP/1.1 200 OK\r\n\r\n0123456789", 5).unwrap_err();
        assert!(e.contains("longer than 5 bytes"), "{e}");
        let e = parse_answer(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", 100).unwrap_err();
        assert!(e.contains("content-length said 9"), "{e}");
        let e = parse_answer(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            100,
        )
        .unwrap_err();
        assert!(e.contains("chunked"), "{e}");
    }

    #[test]
    fn urls_other_than_plain_http_are_refused() {
        assert!(split_url("https://h:8008").is_err());
        assert!(split_url("http://").is_err());
        assert_eq!(split_url("http://h:8008").unwrap(), ("h:8008", ""));
        assert_eq!(
            split_url("http://h:8008/api/").unwrap(),
            ("h:8008", "/api/")
        );
    }
}
