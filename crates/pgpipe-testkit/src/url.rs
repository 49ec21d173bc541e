//! Building connection URLs for the client under test, and reading the one
//! in `PGPIPE_TEST_URL`.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::error::TestkitError;

/// Everything but RFC 3986 "unreserved" characters is encoded, so the result
/// is valid in any URL part (user, password, host, path) and matches what
/// libpq and most test helpers produce.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes one URL component.
pub(crate) fn encode(s: &str) -> String {
    utf8_percent_encode(s, COMPONENT).to_string()
}

/// `postgres://user[:password]@host:port/dbname[?query]`, every part encoded.
/// A host starting with `/` is a Unix socket directory and is encoded whole
/// (`%2Ftmp%2Fdir`), as libpq accepts.
pub(crate) fn build(
    user: &str,
    password: Option<&str>,
    host: &str,
    port: u16,
    dbname: &str,
    query: Option<&str>,
) -> String {
    let mut url = format!("postgres://{}", encode(user));
    if let Some(pw) = password.filter(|p| !p.is_empty()) {
        url.push(':');
        url.push_str(&encode(pw));
    }
    url.push('@');
    if host.contains(':') && !host.starts_with('/') {
        url.push_str(&format!("[{host}]")); // IPv6 literal
    } else {
        url.push_str(&encode(host));
    }
    url.push_str(&format!(":{port}/{}", encode(dbname)));
    if let Some(q) = query.filter(|q| !q.is_empty()) {
        url.push('?');
        url.push_str(q);
    }
    url
}

/// The parts of a connection URL the testkit needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedUrl {
    pub user: String,
    pub password: Option<String>,
    /// A host name, an IP address, or (starting with `/`) a socket directory.
    pub host: String,
    pub port: u16,
    pub dbname: Option<String>,
    /// The query string without `?`, kept verbatim (sslmode and friends are
    /// passed on to the client under test).
    pub query: Option<String>,
}

/// [`parse_var`] for `PGPIPE_TEST_URL`.
#[cfg(test)]
pub(crate) fn parse(url: &str) -> Result<ParsedUrl, TestkitError> {
    parse_var(crate::cluster::TEST_URL_VAR, url)
}

/// Parses `postgres://` / `postgresql://` URLs: user, password, one host
/// (name, `[v6]`, or percent-encoded socket directory), port, dbname, and the
/// `host`, `port`, `user`, `password`, `dbname` query parameters. Errors
/// name the environment variable `var` the URL came from.
pub(crate) fn parse_var(var: &str, url: &str) -> Result<ParsedUrl, TestkitError> {
    let bad =
        |why: &str| TestkitError::new(format!("{var} `{}` is not usable: {why}", redact(url)));
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .ok_or_else(|| bad("expected postgres://user:password@host:port/dbname"))?;
    let (before_query, query) = match rest.split_once('?') {
        Some((a, q)) => (a, Some(q.to_string())),
        None => (rest, None),
    };
    let (authority, path) = match before_query.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (before_query, None),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let decode = |s: &str, what: &str| -> Result<String, TestkitError> {
        percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| bad(&format!("{what} is not UTF-8 after percent-decoding")))
    };
    let (mut user, mut password) = match userinfo {
        Some(info) => match info.split_once(':') {
            Some((u, p)) => (decode(u, "user")?, Some(decode(p, "password")?)),
            None => (decode(info, "user")?, None),
        },
        None => (String::new(), None),
    };
    if hostport.contains(',') {
        return Err(bad("several hosts are not supported; give one"));
    }
    let (host_part, port_part) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("unterminated [IPv6] host"))?;
        (h.to_string(), after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (decode(h, "host")?, Some(p)),
            None => (decode(hostport, "host")?, None),
        }
    };
    let mut host = host_part;
    let mut port = match port_part.filter(|p| !p.is_empty()) {
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| bad(&format!("port `{p}` is not a number")))?,
        None => 5432,
    };
    let mut dbname = match path.filter(|p| !p.is_empty()) {
        Some(p) => Some(decode(p, "dbname")?),
        None => None,
    };
    for pair in query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = decode(v, k)?;
        match k {
            "host" => host = v,
            "port" => {
                port = v
                    .parse()
                    .map_err(|_| bad(&format!("port `{v}` is not a number")))?
            }
            "user" => user = v,
            "password" => password = Some(v),
            "dbname" => dbname = Some(v),
            _ => {}
        }
    }
    if host.is_empty() {
        host = "localhost".to_string();
    }
    if user.is_empty() {
        return Err(bad("no user name (postgres://USER@host/db)"));
    }
    Ok(ParsedUrl {
        user,
        password,
        host,
        port,
        dbname,
        query,
    })
}

/// The URL with its password replaced, for error messages.
pub(crate) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let start = scheme_end + 3;
    let authority_end = url[start..]
        .find(['/', '?'])
        .map_or(url.len(), |i| start + i);
    let authority = &url[start..authority_end];
    match authority.rsplit_once('@') {
        Some((info, host)) => match info.split_once(':') {
            Some((user, _)) => format!(
                "{}{user}:***@{host}{}",
                &url[..start],
                &url[authority_end..]
            ),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_encodes_every_part() {
        let url = build(
            "pgpipe_md5",
            Some("pw@md5 ok!"),
            "127.0.0.1",
            5433,
            "db one",
            None,
        );
        assert_eq!(
            url,
            "postgres://pgpipe_md5:pw%40md5%20ok%21@127.0.0.1:5433/db%20one"
        );
        let url = build("u", None, "/tmp/x y", 5433, "d", Some("sslmode=disable"));
        assert_eq!(url, "postgres://u@%2Ftmp%2Fx%20y:5433/d?sslmode=disable");
        assert_eq!(
            build("u", Some(""), "::1", 1, "d", None),
            "postgres://u@[::1]:1/d"
        );
    }

    #[test]
    fn parse_round_trips_build() {
        let url = build(
            "me",
            Some("p:w@/#?%"),
            "/run/pg sock",
            6543,
            "d b",
            Some("sslmode=disable"),
        );
        let p = parse(&url).unwrap();
        assert_eq!(p.user, "me");
        assert_eq!(p.password.as_deref(), Some("p:w@/#?%"));
        assert_eq!(p.host, "/run/pg sock");
        assert_eq!(p.port, 6543);
        assert_eq!(p.dbname.as_deref(), Some("d b"));
        assert_eq!(p.query.as_deref(), Some("sslmode=disable"));
    }

    #[test]
    fn parse_defaults_and_query_parameters() {
        let p = parse("postgresql://alice@db.example").unwrap();
        assert_eq!(
            (p.host.as_str(), p.port, p.dbname),
            ("db.example", 5432, None)
        );
        let p = parse("postgres://bob@[::1]:7/x?host=%2Fvar%2Frun&port=9&password=s").unwrap();
        assert_eq!(p.host, "/var/run");
        assert_eq!(p.port, 9);
        assert_eq!(p.password.as_deref(), Some("s"));
        let p = parse("postgres://carol@/db?host=/tmp").unwrap();
        assert_eq!(p.host, "/tmp");
    }

    #[test]
    fn parse_errors_say_what_is_wrong_without_the_password() {
        let e = parse("mysql://u:secret@h/db").unwrap_err().to_string();
        assert!(e.contains("postgres://"), "{e}");
        let e = parse("postgres://u:secret@h:port/db")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`port`"), "{e}");
        assert!(!e.contains("secret"), "{e}");
        let e = parse("postgres://h/db").unwrap_err().to_string();
        assert!(e.contains("no user"), "{e}");
        let e = parse("postgres://u@a,b/db").unwrap_err().to_string();
        assert!(e.contains("several hosts"), "{e}");
    }
}
