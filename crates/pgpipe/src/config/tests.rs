//! Tests of parsing, resolution and the password file, run against an
//! in-memory [`Environment`].

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;

use super::*;

#[derive(Default)]
struct FakeEnv {
    vars: HashMap<String, String>,
    home: Option<PathBuf>,
    files: HashMap<PathBuf, (Vec<u8>, Option<u32>)>,
}

impl FakeEnv {
    fn new() -> FakeEnv {
        FakeEnv::default().var("USER", "osuser")
    }

    fn var(mut self, name: &str, value: &str) -> FakeEnv {
        self.vars.insert(name.to_owned(), value.to_owned());
        self
    }

    fn home(mut self, home: &str) -> FakeEnv {
        self.home = Some(PathBuf::from(home));
        self
    }

    fn file(mut self, path: &str, contents: &str, mode: Option<u32>) -> FakeEnv {
        self.files
            .insert(PathBuf::from(path), (contents.as_bytes().to_vec(), mode));
        self
    }

    fn pgpass(self, contents: &str) -> FakeEnv {
        self.home("/home/u")
            .file("/home/u/.pgpass", contents, Some(0o100600))
    }
}

impl Environment for FakeEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files
            .get(path)
            .map(|(contents, _)| contents.clone())
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn file_mode(&self, path: &Path) -> Option<u32> {
        self.files.get(path).and_then(|(_, mode)| *mode)
    }
}

fn parse(s: &str) -> Config {
    match Config::parse(s) {
        Ok(config) => config,
        Err(e) => panic!("{s:?} failed to parse: {e}"),
    }
}

fn parse_err(s: &str) -> ConfigError {
    match Config::parse(s) {
        Ok(config) => panic!("{s:?} parsed unexpectedly: {config:?}"),
        Err(e) => e,
    }
}

fn tcp(name: &str) -> Host {
    Host::Tcp(name.to_owned())
}

fn unix(path: &str) -> Host {
    Host::Unix(PathBuf::from(path))
}

fn resolve(config: &Config, env: &FakeEnv) -> ResolvedConfig {
    match config.resolve(env) {
        Ok(resolved) => resolved,
        Err(e) => panic!("{config:?} failed to resolve: {e}"),
    }
}

fn resolve_err(config: &Config, env: &FakeEnv) -> ConfigError {
    match config.resolve(env) {
        Ok(resolved) => panic!("{config:?} resolved unexpectedly: {resolved:?}"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------- URLs

#[test]
fn url_full() {
    let c = parse(
        "postgres://alice:secret@db.example:6543/orders?application_name=app&sslmode=verify-full",
    );
    assert_eq!(c.get_user(), Some("alice"));
    assert_eq!(c.get_password(), Some(&b"secret"[..]));
    assert_eq!(c.get_hosts(), &[tcp("db.example")]);
    assert_eq!(c.get_ports(), &[6543]);
    assert_eq!(c.get_dbname(), Some("orders"));
    assert_eq!(c.get_application_name(), Some("app"));
    assert_eq!(c.get_ssl_mode(), Some(SslMode::VerifyFull));
}

#[test]
fn url_both_schemes_and_case() {
    assert_eq!(parse("postgresql://h/db"), parse("postgres://h/db"));
    assert_eq!(parse("PostgreSQL://h/db").get_hosts(), &[tcp("h")]);
}

#[test]
fn url_minimal_forms() {
    let empty = parse("postgres://");
    assert_eq!(empty, Config::new());
    assert_eq!(parse("postgresql:///"), Config::new());
    assert_eq!(
        parse("postgres://localhost").get_hosts(),
        &[tcp("localhost")]
    );
    let c = parse("postgres:///mydb");
    assert!(c.get_hosts().is_empty());
    assert_eq!(c.get_dbname(), Some("mydb"));
    let c = parse("postgres://user@localhost");
    assert_eq!(c.get_user(), Some("user"));
    assert_eq!(c.get_password(), None);
}

#[test]
fn url_empty_user_and_password_are_unset() {
    let c = parse("postgres://:@h/db");
    assert_eq!(c.get_user(), None);
    assert_eq!(c.get_password(), None);
    let c = parse("postgres://bob:@h");
    assert_eq!(c.get_user(), Some("bob"));
    assert_eq!(c.get_password(), None);
}

#[test]
fn url_password_with_special_characters() {
    let c = parse("postgres://u:p%40ss%3Aw%2Fo%3Frd@h/db");
    assert_eq!(c.get_password(), Some(&b"p@ss:w/o?rd"[..]));
    // An unencoded '@' or ':' in the password still works: the last '@'
    // ends the user info and the first ':' starts the password.
    let c = parse("postgres://u:p@ss:x@h/db");
    assert_eq!(c.get_user(), Some("u"));
    assert_eq!(c.get_password(), Some(&b"p@ss:x"[..]));
    assert_eq!(c.get_hosts(), &[tcp("h")]);
}

#[test]
fn url_password_may_be_non_utf8() {
    let c = parse("postgres://u:%FF%FE@h");
    assert_eq!(c.get_password(), Some(&[0xff, 0xfe][..]));
    let c = parse("postgres://h?password=%FF");
    assert_eq!(c.get_password(), Some(&[0xff][..]));
}

#[test]
fn url_percent_decoding_everywhere() {
    let c = parse("postgres://us%65r@h%6Fst/d%62?application_name=my%20app&opt%69ons=-c%20x%3Dy");
    assert_eq!(c.get_user(), Some("user"));
    assert_eq!(c.get_hosts(), &[tcp("host")]);
    assert_eq!(c.get_dbname(), Some("db"));
    assert_eq!(c.get_application_name(), Some("my app"));
    assert_eq!(c.get_options(), Some("-c x=y"));
    // '+' is not a space in libpq URLs.
    assert_eq!(parse("postgres://h/a+b").get_dbname(), Some("a+b"));
    // Non-ASCII text.
    assert_eq!(
        parse("postgres://h/%C3%A9t%C3%A9").get_dbname(),
        Some("été")
    );
    assert_eq!(parse("postgres://h/été").get_dbname(), Some("été"));
}

#[test]
fn url_ipv6() {
    let c = parse("postgres://[::1]:5432/db");
    assert_eq!(c.get_hosts(), &[tcp("::1")]);
    assert_eq!(c.get_ports(), &[5432]);
    let c = parse("postgres://[2001:db8::1234]/database");
    assert_eq!(c.get_hosts(), &[tcp("2001:db8::1234")]);
    assert!(c.get_ports().is_empty());
    let c = parse("postgres://u:p@[fe80::1%25eth0]:6000");
    assert_eq!(c.get_hosts(), &[tcp("fe80::1%eth0")]);
    assert_eq!(c.get_ports(), &[6000]);
}

#[test]
fn url_unix_socket_hosts() {
    let c = parse("postgresql://%2Fvar%2Flib%2Fpostgresql/dbname");
    assert_eq!(c.get_hosts(), &[unix("/var/lib/postgresql")]);
    assert_eq!(c.get_dbname(), Some("dbname"));
    let c = parse("postgresql:///dbname?host=/var/lib/postgresql");
    assert_eq!(c.get_hosts(), &[unix("/var/lib/postgresql")]);
    let c = parse("postgres://%2Ftmp:5433");
    assert_eq!(c.get_hosts(), &[unix("/tmp")]);
    assert_eq!(c.get_ports(), &[5433]);
    let c = parse("postgres:///db?host=%2Ftmp");
    assert_eq!(c.get_hosts(), &[unix("/tmp")]);
}

#[test]
fn url_multiple_hosts() {
    let c = parse(
        "postgresql://host1:123,host2:456/somedb?target_session_attrs=any&application_name=myapp",
    );
    assert_eq!(c.get_hosts(), &[tcp("host1"), tcp("host2")]);
    assert_eq!(c.get_ports(), &[123, 456]);
    assert_eq!(c.get_target_session_attrs(), Some(TargetSessionAttrs::Any));

    // An empty port among others means the default port.
    let c = parse("postgres://a:5433,b,[::1]:7000/db");
    assert_eq!(c.get_hosts(), &[tcp("a"), tcp("b"), tcp("::1")]);
    assert_eq!(c.get_ports(), &[5433, 5432, 7000]);

    // No ports at all: left unset, so PGPORT can apply.
    let c = parse("postgres://a,b/db");
    assert_eq!(c.get_hosts(), &[tcp("a"), tcp("b")]);
    assert!(c.get_ports().is_empty());

    // An empty host among others means the default host.
    let c = parse("postgres://:5433,b/db");
    assert_eq!(c.get_hosts(), &[tcp("localhost"), tcp("b")]);
    assert_eq!(c.get_ports(), &[5433, 5432]);

    let c = parse("postgres://a,%2Ftmp:6000");
    assert_eq!(c.get_hosts(), &[tcp("a"), unix("/tmp")]);
    assert_eq!(c.get_ports(), &[5432, 6000]);
}

#[test]
fn url_port_without_host_leaves_host_unset() {
    let c = parse("postgres://:5433/db");
    assert!(c.get_hosts().is_empty());
    assert_eq!(c.get_ports(), &[5433]);
}

#[test]
fn url_query_overrides_authority() {
    let c = parse("postgres://u@h:1/db?host=other&port=2&user=v&dbname=x");
    assert_eq!(c.get_hosts(), &[tcp("other")]);
    assert_eq!(c.get_ports(), &[2]);
    assert_eq!(c.get_user(), Some("v"));
    assert_eq!(c.get_dbname(), Some("x"));
    let c = parse("postgres:///db?host=a,b&port=1,2");
    assert_eq!(c.get_hosts(), &[tcp("a"), tcp("b")]);
    assert_eq!(c.get_ports(), &[1, 2]);
}

#[test]
fn url_query_details() {
    // Empty items are skipped and a value may contain '='.
    let c = parse("postgres://h/db?&options=-c x=y&&connect_timeout=5&");
    assert_eq!(c.get_options(), Some("-c x=y"));
    assert_eq!(c.get_connect_timeout(), Some(Duration::from_secs(5)));
    // JDBC's ssl=true.
    assert_eq!(
        parse("postgres://h?ssl=true").get_ssl_mode(),
        Some(SslMode::Require)
    );
    // Empty value unsets.
    assert_eq!(parse("postgres://h/db?dbname=").get_dbname(), None);
}

#[test]
fn surrounding_whitespace_is_ignored() {
    assert_eq!(parse("  postgres://h/db\n"), parse("postgres://h/db"));
    assert_eq!(parse("\thost=h dbname=db\n"), parse("host=h dbname=db"));
}

#[test]
fn url_dbname_keeps_slashes() {
    assert_eq!(parse("postgres://h/a/b").get_dbname(), Some("a/b"));
}

#[test]
fn url_errors_name_the_part() {
    let e = parse_err("postgres://h:abc/db");
    assert_eq!(e.part(), "abc");
    assert_eq!(
        e.to_string(),
        "invalid port \"abc\" in \"postgres://h:abc/db\""
    );

    let e = parse_err("postgres://h:0/db");
    assert_eq!(e.part(), "0");
    let e = parse_err("postgres://h:65536/db");
    assert_eq!(e.part(), "65536");
    let e = parse_err("postgres://h:-1/db");
    assert_eq!(e.part(), "-1");
    let e = parse_err("postgres://a:1,b:x");
    assert_eq!(e.part(), "x");

    let e = parse_err("postgres://h/db?foo=bar");
    assert_eq!(e.part(), "foo");
    assert_eq!(e.to_string(), "unknown connection parameter \"foo\"");

    let e = parse_err("postgres://h/db?service=x");
    assert_eq!(e.part(), "service");
    assert!(e.to_string().contains("not supported"), "{e}");

    let e = parse_err("postgres://us%zzer@h/db");
    assert_eq!(e.part(), "%zz");
    assert_eq!(e.to_string(), "invalid percent-encoding \"%zz\" in user");

    let e = parse_err("postgres://h/db%4");
    assert_eq!(e.part(), "%4");
    assert!(e.to_string().contains("dbname"), "{e}");

    let e = parse_err("postgres://h%/db");
    assert_eq!(e.part(), "%");
    assert!(e.to_string().contains("host"), "{e}");

    let e = parse_err("postgres://h/db%00");
    assert_eq!(e.part(), "%00");

    let e = parse_err("postgres://u@h/%FF");
    assert_eq!(e.part(), "dbname");
    assert!(e.to_string().contains("UTF-8"), "{e}");

    let e = parse_err("postgres://[::1/db");
    assert_eq!(e.part(), "[::1");
    assert!(e.to_string().contains("unterminated \"[\""), "{e}");

    let e = parse_err("postgres://[]:5432/db");
    assert!(e.to_string().contains("empty IPv6"), "{e}");

    let e = parse_err("postgres://[::1]x:5432/db");
    assert_eq!(e.part(), "x:5432");

    let e = parse_err("postgres://h/db?sslmode=bogus");
    assert_eq!(e.part(), "bogus");
    assert!(e.to_string().contains("sslmode"), "{e}");

    let e = parse_err("postgres://h/db?sslmode");
    assert_eq!(e.part(), "sslmode");
    assert!(e.to_string().contains("missing \"=\""), "{e}");

    let e = parse_err("postgres://h/db?ssl=false");
    assert_eq!(e.part(), "false");

    let e = parse_err("postgres://h/db?application_name=%FF");
    assert_eq!(e.part(), "application_name");
}

#[test]
fn url_errors_never_show_the_password() {
    let e = parse_err("postgres://u:hunter2@h:abc/db");
    assert_eq!(e.part(), "abc");
    assert!(!e.to_string().contains("hunter2"), "{e}");
    assert!(
        e.to_string().contains("postgres://u:********@h:abc/db"),
        "{e}"
    );

    let e = parse_err("postgres://u:hun%zzter2@h/db");
    assert_eq!(e.part(), "password");
    assert!(!e.to_string().contains("hun"), "{e}");
    assert!(!e.to_string().contains("%zz"), "{e}");

    let e = parse_err("postgres://h/db?password=ab%zcd");
    assert!(!e.to_string().contains("%zc"), "{e}");
    let e = parse_err("postgres://h/db?sslpassword=ab%zcd");
    assert!(!e.to_string().contains("%zc"), "{e}");
    let e = parse_err("postgres://h/db?sslpassword=%FF");
    assert_eq!(e.part(), "sslpassword");
}

#[test]
fn other_schemes_and_missing_scheme() {
    let e = parse_err("mysql://u@h/db");
    assert_eq!(e.part(), "mysql");
    assert!(e.to_string().contains("unsupported URL scheme"), "{e}");

    for s in [
        "localhost:5432/db",
        "user:secret@host/db",
        "host/db?sslmode=require",
    ] {
        let e = parse_err(s);
        assert_eq!(e.part(), "scheme", "{s}");
        assert!(e.to_string().contains("postgres://"), "{e}");
        assert!(!e.to_string().contains("secret"), "{e}");
    }
}

// ------------------------------------------------------------ conninfo

#[test]
fn conninfo_basic() {
    let c = parse("host=localhost port=5432 dbname=mydb connect_timeout=10");
    assert_eq!(c.get_hosts(), &[tcp("localhost")]);
    assert_eq!(c.get_ports(), &[5432]);
    assert_eq!(c.get_dbname(), Some("mydb"));
    assert_eq!(c.get_connect_timeout(), Some(Duration::from_secs(10)));
}

#[test]
fn conninfo_empty_string_is_empty_config() {
    assert_eq!(parse(""), Config::new());
    assert_eq!(parse("  \t\n "), Config::new());
}

#[test]
fn conninfo_whitespace_around_equals() {
    let c = parse("  host = a\tuser=\n b  ");
    assert_eq!(c.get_hosts(), &[tcp("a")]);
    assert_eq!(c.get_user(), Some("b"));
}

#[test]
fn conninfo_quoting_and_escapes() {
    let c = parse(r"password='it\'s a \\ secret' options='-c geqo=off' application_name=''");
    assert_eq!(c.get_password(), Some(&br"it's a \ secret"[..]));
    assert_eq!(c.get_options(), Some("-c geqo=off"));
    assert_eq!(c.get_application_name(), None);
    // Backslash escapes work in bare values too, including for spaces.
    let c = parse(r"user=a\ b dbname=c\\d");
    assert_eq!(c.get_user(), Some("a b"));
    assert_eq!(c.get_dbname(), Some(r"c\d"));
    // Quotes right after text are literal characters of a bare value.
    assert_eq!(parse("user=o'brien").get_user(), Some("o'brien"));
    // Unicode passes through.
    assert_eq!(parse("dbname='été ü'").get_dbname(), Some("été ü"));
}

#[test]
fn conninfo_multiple_hosts_and_ports() {
    let c = parse("host=a,b,/tmp port=1,,3");
    assert_eq!(c.get_hosts(), &[tcp("a"), tcp("b"), unix("/tmp")]);
    assert_eq!(c.get_ports(), &[1, 5432, 3]);
    let c = parse("host=a,,b");
    assert_eq!(c.get_hosts(), &[tcp("a"), tcp("localhost"), tcp("b")]);
}

#[test]
fn conninfo_ipv6_hosts() {
    assert_eq!(parse("host=::1").get_hosts(), &[tcp("::1")]);
    assert_eq!(
        parse("host=[::1],fe80::2").get_hosts(),
        &[tcp("::1"), tcp("fe80::2")]
    );
}

#[test]
fn conninfo_later_pairs_win_and_empty_unsets() {
    let c = parse("user=a user=b sslmode=require sslmode=");
    assert_eq!(c.get_user(), Some("b"));
    assert_eq!(c.get_ssl_mode(), None);
    let c = parse("host=a host=");
    assert!(c.get_hosts().is_empty());
}

#[test]
fn conninfo_every_known_key() {
    let c = parse(
        "host=h hostaddr=10.0.0.1 port=1 user=u password=p dbname=d application_name=a \
         fallback_application_name=f options=o connect_timeout=7 sslmode=disable \
         target_session_attrs=read-write load_balance_hosts=random keepalives=0 \
         keepalives_idle=30 keepalives_interval=4 keepalives_count=3 \
         tcp_user_timeout=1500 passfile=/pp client_encoding=UTF8 \
         sslcert=/c sslkey=/k sslrootcert=/r sslpassword=sp sslcrl=/l sslcrldir=/ld \
         channel_binding=require sslnegotiation=direct gssencmode=disable \
         statement_cache_capacity=0 query_mode=simple max_message_size=1024 \
         scram_max_iterations=4096 coalesce_sync=on",
    );
    assert_eq!(c.get_hosts(), &[tcp("h")]);
    assert_eq!(
        c.get_hostaddrs(),
        &[Some("10.0.0.1".parse::<IpAddr>().unwrap())]
    );
    assert_eq!(c.get_ports(), &[1]);
    assert_eq!(c.get_user(), Some("u"));
    assert_eq!(c.get_password(), Some(&b"p"[..]));
    assert_eq!(c.get_dbname(), Some("d"));
    assert_eq!(c.get_application_name(), Some("a"));
    assert_eq!(c.get_fallback_application_name(), Some("f"));
    assert_eq!(c.get_options(), Some("o"));
    assert_eq!(c.get_connect_timeout(), Some(Duration::from_secs(7)));
    assert_eq!(c.get_ssl_mode(), Some(SslMode::Disable));
    assert_eq!(
        c.get_target_session_attrs(),
        Some(TargetSessionAttrs::ReadWrite)
    );
    assert_eq!(c.get_load_balance_hosts(), Some(LoadBalanceHosts::Random));
    assert!(!c.get_keepalives());
    assert_eq!(c.get_keepalives_idle(), Some(Duration::from_secs(30)));
    assert_eq!(c.get_keepalives_interval(), Some(Duration::from_secs(4)));
    assert_eq!(c.get_keepalives_count(), Some(3));
    assert_eq!(c.get_tcp_user_timeout(), Some(Duration::from_millis(1500)));
    assert_eq!(c.get_passfile(), Some(Path::new("/pp")));
    assert_eq!(c.get_ssl_cert(), Some(Path::new("/c")));
    assert_eq!(c.get_ssl_key(), Some(Path::new("/k")));
    assert_eq!(c.get_ssl_root_cert(), Some(Path::new("/r")));
    assert_eq!(c.get_ssl_password(), Some("sp"));
    assert_eq!(c.get_ssl_crl(), Some(Path::new("/l")));
    assert_eq!(c.get_ssl_crl_dir(), Some(Path::new("/ld")));
    assert_eq!(c.get_channel_binding(), Some(ChannelBinding::Require));
    assert_eq!(c.get_ssl_negotiation(), Some(SslNegotiation::Direct));
    assert_eq!(c.get_statement_cache_capacity(), 0);
    assert_eq!(c.get_query_mode(), QueryMode::Simple);
    assert_eq!(c.get_max_message_size(), 1024);
    assert_eq!(c.get_scram_max_iterations(), 4096);
    assert!(c.get_coalesce_sync());
}

#[test]
fn enum_keywords_round_trip() {
    for mode in [
        SslMode::Disable,
        SslMode::Allow,
        SslMode::Prefer,
        SslMode::Require,
        SslMode::VerifyCa,
        SslMode::VerifyFull,
    ] {
        assert_eq!(mode.as_str().parse::<SslMode>(), Ok(mode));
    }
    for attrs in [
        TargetSessionAttrs::Any,
        TargetSessionAttrs::ReadWrite,
        TargetSessionAttrs::ReadOnly,
        TargetSessionAttrs::Primary,
        TargetSessionAttrs::Standby,
        TargetSessionAttrs::PreferStandby,
    ] {
        assert_eq!(attrs.to_string().parse::<TargetSessionAttrs>(), Ok(attrs));
    }
    for mode in [QueryMode::Cached, QueryMode::Unnamed, QueryMode::Simple] {
        assert_eq!(mode.as_str().parse::<QueryMode>(), Ok(mode));
    }
    assert_eq!(SslMode::default(), SslMode::Prefer);
    assert_eq!(TargetSessionAttrs::default(), TargetSessionAttrs::Any);
    assert_eq!(LoadBalanceHosts::default(), LoadBalanceHosts::Disable);
    assert_eq!(QueryMode::default(), QueryMode::Cached);
    assert_eq!(ChannelBinding::default(), ChannelBinding::Prefer);
    assert_eq!(SslNegotiation::default(), SslNegotiation::Postgres);
    // libpq spells these in lowercase only.
    assert!("Require".parse::<SslMode>().is_err());
}

#[test]
fn client_encoding_spellings() {
    for ok in ["UTF8", "utf8", "UTF-8", "utf_8", "unicode", "Unicode"] {
        parse(&format!("client_encoding={ok}"));
    }
    let e = parse_err("client_encoding=LATIN1");
    assert_eq!(e.part(), "LATIN1");
    assert!(e.to_string().contains("always uses UTF8"), "{e}");
}

#[test]
fn conninfo_errors_name_the_part() {
    let e = parse_err("host x");
    assert_eq!(e.part(), "host");
    assert_eq!(e.to_string(), "missing \"=\" after \"host\" at position 5");

    let e = parse_err("host=a user");
    assert_eq!(e.to_string(), "missing \"=\" after \"user\" at position 11");

    let e = parse_err("=x");
    assert_eq!(e.part(), "=");

    let e = parse_err("password='abc");
    assert_eq!(e.part(), "password");
    assert_eq!(e.to_string(), "unterminated quoted value for \"password\"");

    let e = parse_err("bogus=1");
    assert_eq!(e.part(), "bogus");
    assert_eq!(e.to_string(), "unknown connection parameter \"bogus\"");

    // Keys are case-sensitive, as in libpq.
    assert_eq!(parse_err("HOST=x").part(), "HOST");

    let cases = [
        ("port=abc", "abc"),
        ("port=0", "0"),
        ("port=65536", "65536"),
        ("port=1,x", "x"),
        ("port=+5", "+5"),
        ("connect_timeout=-1", "-1"),
        ("connect_timeout=1.5", "1.5"),
        ("connect_timeout=abc", "abc"),
        (
            "connect_timeout=99999999999999999999999",
            "99999999999999999999999",
        ),
        ("keepalives=2", "2"),
        ("keepalives_idle=-3", "-3"),
        ("keepalives_interval=1500ms", "1500ms"),
        ("keepalives_interval=32768", "32768"),
        ("keepalives_count=128", "128"),
        ("keepalives_count=-1", "-1"),
        ("tcp_user_timeout=x", "x"),
        ("sslmode=maybe", "maybe"),
        ("target_session_attrs=rw", "rw"),
        ("load_balance_hosts=yes", "yes"),
        ("channel_binding=always", "always"),
        ("sslnegotiation=fast", "fast"),
        ("query_mode=fast", "fast"),
        ("max_message_size=0", "0"),
        ("scram_max_iterations=0", "0"),
        ("scram_max_iterations=4294967296", "4294967296"),
        ("statement_cache_capacity=-1", "-1"),
        ("hostaddr=example.com", "example.com"),
        ("gssencmode=require", "require"),
        ("gssencmode=sometimes", "sometimes"),
        ("service=foo", "service"),
        ("replication=database", "replication"),
    ];
    for (input, part) in cases {
        let e = parse_err(input);
        assert_eq!(e.part(), part, "{input}: {e}");
        assert!(e.to_string().contains(part), "{input}: {e}");
    }
}

#[test]
fn connect_timeout_accepts_surrounding_spaces_and_zero() {
    assert_eq!(
        parse("connect_timeout=' 12 '").get_connect_timeout(),
        Some(Duration::from_secs(12))
    );
    assert_eq!(
        parse("connect_timeout=0").get_connect_timeout(),
        Some(Duration::ZERO)
    );
}

#[test]
fn conninfo_errors_do_not_echo_password_tails() {
    // An unquoted password with a space: "ret" would be taken as a key.
    let e = parse_err("password=sec ret host=h");
    assert!(!e.to_string().contains("ret"), "{e}");
    assert!(e.to_string().contains("quote"), "{e}");
    let e = parse_err("password=sec ret=x");
    assert!(!e.to_string().contains("ret"), "{e}");
    let e = parse_err("sslpassword=a b='c");
    assert!(!e.to_string().contains('b'), "{e}");
    // After a quoted secret there is no ambiguity.
    let e = parse_err("password='sec' bogus=1");
    assert_eq!(e.part(), "bogus");
    // A known key with a bad value after a bare secret is reported normally.
    let e = parse_err("password=sec port=x");
    assert_eq!(e.part(), "x");
}

#[test]
fn nul_bytes_are_rejected() {
    let e = parse_err("user=a\0b");
    assert!(e.to_string().contains("NUL"), "{e}");
    let e = parse_err("postgres://h/a\0");
    assert!(e.to_string().contains("position 14"), "{e}");
}

#[test]
fn url_and_conninfo_agree() {
    assert_eq!(
        parse("postgresql://app:s%40cret@[::1]:6432/orders"),
        parse("host=::1 port=6432 user=app password='s@cret' dbname=orders")
    );
    assert_eq!(
        parse("postgres://a:1,b:2/d?sslmode=require&keepalives=0"),
        parse("host=a,b port=1,2 dbname=d sslmode=require keepalives=0")
    );
}

#[test]
fn from_str_matches_parse() {
    let c: Config = "host=a".parse().unwrap();
    assert_eq!(c, parse("host=a"));
}

// ------------------------------------------------------------- builder

#[test]
fn builder_defaults_and_setters() {
    let c = Config::new();
    assert_eq!(c, Config::default());
    assert!(c.get_hosts().is_empty());
    assert!(c.get_keepalives());
    assert_eq!(c.get_statement_cache_capacity(), 256);
    assert_eq!(c.get_query_mode(), QueryMode::Cached);
    assert_eq!(c.get_max_message_size(), 1 << 30);
    assert_eq!(c.get_scram_max_iterations(), 1_000_000);

    let mut c = Config::new();
    c.host("a")
        .host("/run/pg")
        .host("")
        .host_path("relative/dir")
        .port(1)
        .user("u")
        .password("pw")
        .param("search_path", "s")
        .param("TimeZone", "UTC")
        .param("search_path", "t");
    assert_eq!(
        c.get_hosts(),
        &[
            tcp("a"),
            unix("/run/pg"),
            tcp("localhost"),
            unix("relative/dir")
        ]
    );
    assert_eq!(c.get_ports(), &[1]);
    assert_eq!(c.get_password(), Some(&b"pw"[..]));
    assert_eq!(
        c.get_params(),
        &[
            ("search_path".to_owned(), "t".to_owned()),
            ("TimeZone".to_owned(), "UTC".to_owned())
        ]
    );
}

#[test]
fn debug_redacts_passwords() {
    let mut c = parse("postgres://u:hunter2@h/db?sslpassword=keypass");
    c.host("x");
    let shown = format!("{c:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(!shown.contains("keypass"), "{shown}");
    assert!(shown.contains("Secret(***)"), "{shown}");
    assert!(shown.contains("\"u\""), "{shown}");

    let r = resolve(&c, &FakeEnv::new());
    let shown = format!("{r:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(!shown.contains("keypass"), "{shown}");
    assert!(!shown.contains("104, 117"), "{shown}"); // bytes of "hu"
    let shown = format!("{:?}", r.targets[0]);
    assert!(
        !shown.contains("hunter2") && shown.contains("Secret(***)"),
        "{shown}"
    );

    let e = Config::new();
    assert!(format!("{e:?}").contains("password: None"));
}

/// The names of a struct's fields, from a destructuring without `..`: the
/// list cannot miss a field, or this does not compile.
macro_rules! field_names {
    ($value:expr, $ty:ident { $($field:ident,)* }) => {{
        let $ty { $($field: _,)* } = $value;
        [$(stringify!($field)),*]
    }};
}

#[test]
fn debug_shows_every_field_and_no_secret() {
    let c = parse("postgres://u:hunter2@h/db?sslpassword=keypass&require_auth=scram-sha-256");
    let r = resolve(&c, &FakeEnv::new());
    let shown = [
        format!("{c:?}"),
        format!("{r:?}"),
        format!("{:?}", r.targets[0]),
    ];
    let names: [&[&str]; 3] = [
        &field_names!(
            &c,
            Config {
                hosts,
                hostaddrs,
                ports,
                user,
                password,
                dbname,
                application_name,
                fallback_application_name,
                options,
                connect_timeout,
                ssl_mode,
                target_session_attrs,
                load_balance_hosts,
                keepalives,
                keepalives_idle,
                keepalives_interval,
                keepalives_count,
                tcp_user_timeout,
                query_timeout,
                coalesce_sync,
                passfile,
                statement_cache_capacity,
                query_mode,
                max_message_size,
                scram_max_iterations,
                params,
                ssl_cert,
                ssl_key,
                ssl_root_cert,
                ssl_password,
                ssl_crl,
                ssl_crl_dir,
                channel_binding,
                ssl_negotiation,
                require_auth,
                min_protocol_version,
                max_protocol_version,
            }
        ),
        &field_names!(
            &r,
            ResolvedConfig {
                targets,
                user,
                dbname,
                application_name,
                options,
                connect_timeout,
                ssl_mode,
                target_session_attrs,
                load_balance_hosts,
                keepalives,
                keepalives_idle,
                keepalives_interval,
                keepalives_count,
                tcp_user_timeout,
                query_timeout,
                coalesce_sync,
                statement_cache_capacity,
                query_mode,
                max_message_size,
                scram_max_iterations,
                params,
                ssl_cert,
                ssl_key,
                ssl_root_cert,
                ssl_password,
                ssl_crl,
                ssl_crl_dir,
                channel_binding,
                ssl_negotiation,
                require_auth,
                min_protocol_version,
                max_protocol_version,
            }
        ),
        &field_names!(
            &r.targets[0],
            Target {
                host,
                port,
                password,
                host_name,
            }
        ),
    ];
    for (shown, names) in shown.iter().zip(names) {
        for name in names {
            // Each field follows "{ " or ", ".
            assert!(
                shown.contains(&format!(" {name}: ")),
                "{name} missing: {shown}"
            );
        }
        for secret in ["hunter2", "keypass", "104, 117, 110"] {
            assert!(!shown.contains(secret), "{secret} shown: {shown}");
        }
    }
}

#[test]
fn every_table_key_parses_and_an_empty_value_restores_the_default() {
    assert!(fields::KEYS.len() >= 36, "{:?}", fields::KEYS);
    for key in fields::KEYS {
        // Known to both string forms (an unknown key is an error).
        assert_eq!(parse(&format!("{key}=")), Config::new(), "{key}");
        assert_eq!(
            parse(&format!("postgres://?{key}=")),
            Config::new(),
            "{key}"
        );
    }
    let mut c = parse("sslmode=require keepalives=0 statement_cache_capacity=3 user=u");
    for key in ["sslmode", "keepalives", "statement_cache_capacity", "user"] {
        assign::assign(&mut c, key, "").unwrap();
    }
    assert_eq!(c, Config::new());
}

#[test]
fn the_secret_keys_are_exactly_those_debug_hides() {
    let value = "Zq9Zq9";
    for key in fields::KEYS {
        let mut c = Config::new();
        // Only keys that take such a text; the others reject it.
        if assign::assign(&mut c, key, value).is_err() {
            assert!(!params::is_secret(key), "{key}");
            continue;
        }
        let hidden = !format!("{c:?}").contains(value);
        assert_eq!(params::is_secret(key), hidden, "{key}: {c:?}");
    }
    assert!(params::is_secret("password") && params::is_secret("sslpassword"));
}

/// Every parameter of the table reaches `ResolvedConfig`: a row added to
/// the table but forgotten in `resolve` (or in `ResolvedConfig`) fails here,
/// and so does a row without a sample below.
#[test]
fn every_table_key_changes_the_resolved_config() {
    // key, a setting of it, and what both sides share (some settings need
    // a companion to be valid).
    let samples: &[(&str, &str, &str)] = &[
        ("host", "host=h2", ""),
        ("hostaddr", "hostaddr=10.1.1.1", ""),
        ("port", "port=6000", ""),
        ("user", "user=u2", ""),
        ("password", "password=pw", ""),
        ("dbname", "dbname=d2", ""),
        ("application_name", "application_name=a2", ""),
        (
            "fallback_application_name",
            "fallback_application_name=f2",
            "",
        ),
        ("options", "options=-cx=1", ""),
        ("connect_timeout", "connect_timeout=3", ""),
        ("sslmode", "sslmode=require", ""),
        (
            "target_session_attrs",
            "target_session_attrs=read-write",
            "",
        ),
        ("load_balance_hosts", "load_balance_hosts=random", ""),
        ("keepalives", "keepalives=0", ""),
        ("keepalives_idle", "keepalives_idle=5", ""),
        ("keepalives_interval", "keepalives_interval=5", ""),
        ("keepalives_count", "keepalives_count=3", ""),
        ("tcp_user_timeout", "tcp_user_timeout=100", ""),
        ("query_timeout", "query_timeout=100", ""),
        ("coalesce_sync", "coalesce_sync=on", ""),
        ("passfile", "passfile=/pf", ""),
        ("statement_cache_capacity", "statement_cache_capacity=3", ""),
        ("query_mode", "query_mode=unnamed", ""),
        ("max_message_size", "max_message_size=1000", ""),
        ("scram_max_iterations", "scram_max_iterations=5", ""),
        ("sslcert", "sslcert=/c", ""),
        ("sslkey", "sslkey=/k", ""),
        ("sslrootcert", "sslrootcert=/r", ""),
        ("sslpassword", "sslpassword=sp", ""),
        ("sslcrl", "sslcrl=/l", ""),
        ("sslcrldir", "sslcrldir=/ld", ""),
        ("channel_binding", "channel_binding=require", ""),
        ("sslnegotiation", "sslnegotiation=direct", "sslmode=require"),
        ("require_auth", "require_auth=password", ""),
        ("min_protocol_version", "min_protocol_version=3.2", ""),
        ("max_protocol_version", "max_protocol_version=3.2", ""),
    ];
    let mut sampled: Vec<&str> = samples.iter().map(|(key, _, _)| *key).collect();
    let mut keys = fields::KEYS.to_vec();
    sampled.sort_unstable();
    keys.sort_unstable();
    assert_eq!(sampled, keys, "every key of the table needs a sample here");

    let env = FakeEnv::new().file("/pf", "*:*:*:*:filepw\n", Some(0o100600));
    for (key, with, shared) in samples {
        let base = format!("user=u host=h {shared}");
        let without = resolve(&parse(&base), &env);
        let with = resolve(&parse(&format!("{base} {with}")), &env);
        assert_ne!(with, without, "{key} does not reach ResolvedConfig");
    }
}

// ------------------------------------------------------------- resolve

#[test]
fn resolve_defaults() {
    let r = resolve(&Config::new(), &FakeEnv::new());
    assert_eq!(r.targets.len(), 1);
    assert_eq!(r.targets[0].host, tcp("localhost"));
    assert_eq!(r.targets[0].port, 5432);
    assert_eq!(r.targets[0].password, None);
    assert_eq!(r.targets[0].host_name, None);
    assert_eq!(r.user, "osuser");
    assert_eq!(r.dbname, "osuser");
    assert_eq!(r.connect_timeout, Some(Duration::from_secs(10)));
    assert_eq!(r.ssl_mode, SslMode::Prefer);
    assert_eq!(r.target_session_attrs, TargetSessionAttrs::Any);
    assert_eq!(r.load_balance_hosts, LoadBalanceHosts::Disable);
    assert!(r.keepalives);
    assert_eq!(r.keepalives_idle, None);
    assert_eq!(r.tcp_user_timeout, None);
    assert_eq!(r.statement_cache_capacity, 256);
    assert_eq!(r.max_message_size, 1 << 30);
    assert_eq!(r.scram_max_iterations, 1_000_000);
    assert_eq!(r.application_name, None);
    assert_eq!(r.options, None);
    assert_eq!(r.channel_binding, ChannelBinding::Prefer);
    assert_eq!(r.ssl_negotiation, SslNegotiation::Postgres);
    assert_eq!(r.ssl_cert, None);
}

#[test]
fn resolve_user_fallbacks() {
    let env = FakeEnv::default().var("LOGNAME", "logname");
    assert_eq!(resolve(&Config::new(), &env).user, "logname");
    let env = FakeEnv::default()
        .var("USER", "")
        .var("USERNAME", "winuser");
    assert_eq!(resolve(&Config::new(), &env).user, "winuser");
    let env = FakeEnv::default().var("USER", "u").var("PGUSER", "pguser");
    assert_eq!(resolve(&Config::new(), &env).user, "pguser");
    assert_eq!(resolve(&parse("user=cfg"), &env).user, "cfg");

    let e = resolve_err(&Config::new(), &FakeEnv::default());
    assert_eq!(e.part(), "user");
    assert_eq!(e.to_string(), "no user given and USER is not set");
}

#[test]
fn resolve_env_fills_unset_fields_only() {
    let env = FakeEnv::new()
        .var("PGHOST", "envhost")
        .var("PGPORT", "6000")
        .var("PGUSER", "envuser")
        .var("PGDATABASE", "envdb")
        .var("PGAPPNAME", "envapp")
        .var("PGOPTIONS", "-c x=1")
        .var("PGCONNECT_TIMEOUT", "3")
        .var("PGSSLMODE", "require")
        .var("PGTARGETSESSIONATTRS", "standby")
        .var("PGLOADBALANCEHOSTS", "random")
        .var("PGCLIENTENCODING", "utf8")
        .var("PGSSLCERT", "/env/cert")
        .var("PGSSLKEY", "/env/key")
        .var("PGSSLROOTCERT", "/env/root")
        .var("PGSSLCRL", "/env/crl")
        .var("PGSSLCRLDIR", "/env/crldir")
        .var("PGCHANNELBINDING", "disable")
        .var("PGSSLNEGOTIATION", "direct");
    let r = resolve(&Config::new(), &env);
    assert_eq!(r.targets[0].host, tcp("envhost"));
    assert_eq!(r.targets[0].port, 6000);
    assert_eq!(r.user, "envuser");
    assert_eq!(r.dbname, "envdb");
    assert_eq!(r.application_name.as_deref(), Some("envapp"));
    assert_eq!(r.options.as_deref(), Some("-c x=1"));
    assert_eq!(r.connect_timeout, Some(Duration::from_secs(3)));
    assert_eq!(r.ssl_mode, SslMode::Require);
    assert_eq!(r.target_session_attrs, TargetSessionAttrs::Standby);
    assert_eq!(r.load_balance_hosts, LoadBalanceHosts::Random);
    assert_eq!(r.ssl_cert.as_deref(), Some(Path::new("/env/cert")));
    assert_eq!(r.ssl_key.as_deref(), Some(Path::new("/env/key")));
    assert_eq!(r.ssl_root_cert.as_deref(), Some(Path::new("/env/root")));
    assert_eq!(r.ssl_crl.as_deref(), Some(Path::new("/env/crl")));
    assert_eq!(r.ssl_crl_dir.as_deref(), Some(Path::new("/env/crldir")));
    assert_eq!(r.channel_binding, ChannelBinding::Disable);
    assert_eq!(r.ssl_negotiation, SslNegotiation::Direct);

    let c = parse(
        "host=cfghost port=7000 user=cfguser dbname=cfgdb application_name=cfgapp \
         options=-cy=2 connect_timeout=4 sslmode=allow target_session_attrs=primary \
         load_balance_hosts=disable sslcert=/c channel_binding=require sslnegotiation=postgres",
    );
    let r = resolve(&c, &env);
    assert_eq!(r.targets[0].host, tcp("cfghost"));
    assert_eq!(r.targets[0].port, 7000);
    assert_eq!(r.user, "cfguser");
    assert_eq!(r.dbname, "cfgdb");
    assert_eq!(r.application_name.as_deref(), Some("cfgapp"));
    assert_eq!(r.options.as_deref(), Some("-cy=2"));
    assert_eq!(r.connect_timeout, Some(Duration::from_secs(4)));
    assert_eq!(r.ssl_mode, SslMode::Allow);
    assert_eq!(r.target_session_attrs, TargetSessionAttrs::Primary);
    assert_eq!(r.load_balance_hosts, LoadBalanceHosts::Disable);
    assert_eq!(r.ssl_cert.as_deref(), Some(Path::new("/c")));
    assert_eq!(r.channel_binding, ChannelBinding::Require);
    assert_eq!(r.ssl_negotiation, SslNegotiation::Postgres);
}

#[test]
fn resolve_empty_env_vars_count_as_unset() {
    let env = FakeEnv::new()
        .var("PGHOST", "")
        .var("PGPORT", "")
        .var("PGSSLMODE", "")
        .var("PGCONNECT_TIMEOUT", "");
    let r = resolve(&Config::new(), &env);
    assert_eq!(r.targets[0].host, tcp("localhost"));
    assert_eq!(r.targets[0].port, 5432);
    assert_eq!(r.ssl_mode, SslMode::Prefer);
    assert_eq!(r.connect_timeout, Some(Duration::from_secs(10)));
}

#[test]
fn resolve_application_name_fallback() {
    let c = parse("fallback_application_name=lib");
    assert_eq!(
        resolve(&c, &FakeEnv::new()).application_name.as_deref(),
        Some("lib")
    );
    let env = FakeEnv::new().var("PGAPPNAME", "env");
    assert_eq!(resolve(&c, &env).application_name.as_deref(), Some("env"));
    let c = parse("fallback_application_name=lib application_name=own");
    assert_eq!(resolve(&c, &env).application_name.as_deref(), Some("own"));
}

#[test]
fn resolve_connect_timeout_zero_disables() {
    let r = resolve(&parse("connect_timeout=0"), &FakeEnv::new());
    assert_eq!(r.connect_timeout, None);
    let env = FakeEnv::new().var("PGCONNECT_TIMEOUT", "0");
    assert_eq!(resolve(&Config::new(), &env).connect_timeout, None);
    let mut c = Config::new();
    c.connect_timeout(Duration::from_millis(1500));
    assert_eq!(
        resolve(&c, &env).connect_timeout,
        Some(Duration::from_millis(1500))
    );
}

#[test]
fn resolve_zero_keepalive_settings_mean_system_default() {
    let r = resolve(
        &parse("keepalives_idle=0 keepalives_interval=0 keepalives_count=0 tcp_user_timeout=0"),
        &FakeEnv::new(),
    );
    assert_eq!(r.keepalives_idle, None);
    assert_eq!(r.keepalives_interval, None);
    assert_eq!(r.keepalives_count, None);
    assert_eq!(r.tcp_user_timeout, None);
    let r = resolve(
        &parse(
            "keepalives_idle=5 keepalives_interval=1min keepalives_count=127 tcp_user_timeout=250",
        ),
        &FakeEnv::new(),
    );
    assert_eq!(r.keepalives_idle, Some(Duration::from_secs(5)));
    assert_eq!(r.keepalives_interval, Some(Duration::from_secs(60)));
    assert_eq!(r.keepalives_count, Some(127));
    assert_eq!(r.tcp_user_timeout, Some(Duration::from_millis(250)));
}

#[test]
fn resolve_bad_env_values_name_the_variable() {
    let cases = [
        ("PGPORT", "abc"),
        ("PGPORT", "0"),
        ("PGCONNECT_TIMEOUT", "-5"),
        ("PGSSLMODE", "on"),
        ("PGTARGETSESSIONATTRS", "x"),
        ("PGLOADBALANCEHOSTS", "x"),
        ("PGHOSTADDR", "not-an-ip"),
        ("PGCLIENTENCODING", "SQL_ASCII"),
        ("PGCHANNELBINDING", "x"),
        ("PGSSLNEGOTIATION", "x"),
    ];
    for (var, value) in cases {
        let e = resolve_err(&Config::new(), &FakeEnv::new().var(var, value));
        assert_eq!(e.part(), var, "{e}");
        assert!(e.to_string().contains(var), "{e}");
        assert!(e.to_string().contains(value), "{e}");
    }
    // A configured value shadows a broken variable: it is not even read.
    let env = FakeEnv::new().var("PGSSLMODE", "on");
    assert_eq!(
        resolve(&parse("sslmode=disable"), &env).ssl_mode,
        SslMode::Disable
    );
}

#[test]
fn resolve_multiple_hosts_and_ports() {
    let r = resolve(&parse("host=a,b,c port=1,2,3"), &FakeEnv::new());
    let got: Vec<_> = r.targets.iter().map(|t| (t.host.clone(), t.port)).collect();
    assert_eq!(got, vec![(tcp("a"), 1), (tcp("b"), 2), (tcp("c"), 3)]);

    // One port for all hosts.
    let r = resolve(&parse("host=a,b port=9"), &FakeEnv::new());
    assert!(r.targets.iter().all(|t| t.port == 9));

    // Hosts from the configuration, ports from the environment.
    let env = FakeEnv::new().var("PGPORT", "7,8");
    let r = resolve(&parse("host=a,b"), &env);
    assert_eq!(r.targets[1].port, 8);

    let mut c = Config::new();
    c.host("a").host("b").host("c").port(1).port(2);
    let e = resolve_err(&c, &FakeEnv::new());
    assert_eq!(e.part(), "port");
    assert_eq!(e.to_string(), "could not match 2 port numbers to 3 hosts");
}

#[test]
fn count_mismatches_are_caught_at_parse_or_resolve() {
    // The URL's host list is replaced by the query's, leaving 2 ports for 3
    // hosts.
    let e = parse_err("postgres://a:1,b:2/db?host=x,y,z");
    assert_eq!(e.part(), "port");
    assert!(e.to_string().contains("2 port numbers to 3 hosts"), "{e}");
    let e = parse_err("host=a,b,c port=1,2");
    assert_eq!(e.to_string(), "could not match 2 port numbers to 3 hosts");
    let e = parse_err("host=a hostaddr=::1,::2");
    assert_eq!(e.part(), "hostaddr");
    // Ports alone cannot be checked until the hosts are known.
    parse("port=1,2");
    let env = FakeEnv::new().var("PGHOST", "a,b,c");
    let e = resolve_err(&parse("port=1,2"), &env);
    assert!(e.to_string().contains("2 port numbers to 3 hosts"), "{e}");
}

#[test]
fn resolve_builder_port_zero_is_rejected() {
    let mut c = Config::new();
    c.port(0);
    assert_eq!(resolve_err(&c, &FakeEnv::new()).part(), "0");
}

#[test]
fn resolve_unix_hosts() {
    let env = FakeEnv::new().var("PGHOST", "/var/run/postgresql");
    let r = resolve(&Config::new(), &env);
    assert_eq!(r.targets[0].host, unix("/var/run/postgresql"));
    assert_eq!(r.targets[0].port, 5432);
}

#[test]
fn resolve_hostaddr() {
    let c = parse("host=db.example,other hostaddr=10.0.0.1,");
    let r = resolve(&c, &FakeEnv::new());
    assert_eq!(r.targets[0].host, tcp("10.0.0.1"));
    assert_eq!(r.targets[0].host_name.as_deref(), Some("db.example"));
    assert_eq!(r.targets[1].host, tcp("other"));
    assert_eq!(r.targets[1].host_name, None);

    let r = resolve(&parse("hostaddr=::1"), &FakeEnv::new());
    assert_eq!(r.targets[0].host, tcp("::1"));
    assert_eq!(r.targets[0].host_name, None);

    let env = FakeEnv::new().var("PGHOSTADDR", "10.0.0.1");
    let e = resolve_err(&parse("host=a,b"), &env);
    assert_eq!(e.part(), "hostaddr");
    assert_eq!(
        e.to_string(),
        "could not match 2 host names to 1 hostaddr values"
    );

    let mut c = Config::new();
    c.hostaddr("127.0.0.1".parse().unwrap())
        .hostaddr("::1".parse().unwrap());
    let r = resolve(&c, &FakeEnv::new());
    assert_eq!(r.targets.len(), 2);

    // PGHOSTADDR applies even when the host comes from the configuration,
    // as in libpq.
    let env = FakeEnv::new().var("PGHOSTADDR", "192.0.2.1");
    let r = resolve(&parse("host=named"), &env);
    assert_eq!(r.targets[0].host, tcp("192.0.2.1"));
    assert_eq!(r.targets[0].host_name.as_deref(), Some("named"));
}

#[test]
fn resolve_sslnegotiation_direct_needs_strong_sslmode() {
    let e = resolve_err(&parse("sslnegotiation=direct"), &FakeEnv::new());
    assert_eq!(e.part(), "sslnegotiation");
    assert!(e.to_string().contains("prefer"), "{e}");
    resolve(
        &parse("sslnegotiation=direct sslmode=verify-ca"),
        &FakeEnv::new(),
    );
}

#[test]
fn resolve_validates_limits_and_text() {
    let mut c = Config::new();
    c.max_message_size(0);
    assert_eq!(resolve_err(&c, &FakeEnv::new()).part(), "max_message_size");
    let mut c = Config::new();
    c.scram_max_iterations(0);
    assert_eq!(
        resolve_err(&c, &FakeEnv::new()).part(),
        "scram_max_iterations"
    );
    let mut c = Config::new();
    c.user("a\0b");
    assert_eq!(resolve_err(&c, &FakeEnv::new()).part(), "user");
    let mut c = Config::new();
    c.password(b"a\0b");
    assert_eq!(resolve_err(&c, &FakeEnv::new()).part(), "password");
    let mut c = Config::new();
    c.options("-c\0");
    assert_eq!(resolve_err(&c, &FakeEnv::new()).part(), "options");
}

#[test]
fn resolve_validates_params() {
    let mut c = Config::new();
    c.param("search_path", "app").param("TimeZone", "UTC");
    let r = resolve(&c, &FakeEnv::new());
    assert_eq!(r.params.len(), 2);
    for reserved in ["user", "database", "client_encoding", "_pq_.x", ""] {
        let mut c = Config::new();
        c.param(reserved, "x");
        assert_eq!(resolve_err(&c, &FakeEnv::new()).part(), reserved);
    }
    let mut c = Config::new();
    c.param("a", "b\0");
    resolve_err(&c, &FakeEnv::new());
}

// ------------------------------------------------------------ passwords

#[test]
fn password_precedence() {
    let env = FakeEnv::new()
        .var("PGPASSWORD", "envpw")
        .pgpass("*:*:*:*:filepw\n");
    assert_eq!(
        resolve(&parse("password=cfgpw"), &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        Some(b"cfgpw".to_vec())
    );
    assert_eq!(
        resolve(&Config::new(), &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        Some(b"envpw".to_vec())
    );
    let env = FakeEnv::new().pgpass("*:*:*:*:filepw\n");
    assert_eq!(
        resolve(&Config::new(), &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        Some(b"filepw".to_vec())
    );
    // An empty password counts as none given, as in libpq.
    let mut c = Config::new();
    c.password("");
    assert_eq!(
        resolve(&c, &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        Some(b"filepw".to_vec())
    );
}

fn pgpass_password(config: &str, pgpass: &str) -> Option<Vec<u8>> {
    let env = FakeEnv::new().pgpass(pgpass);
    resolve(&parse(config), &env).targets[0]
        .password
        .clone()
        .map(Secret::into_inner)
}

#[test]
fn pgpass_matching() {
    let file = "\
# comment line: hostname:port:database:username:password
db1:5432:app:alice:one
db2:*:*:alice:two
*:6000:*:*:three
*:*:*:bob:four
*:*:*:*:fallback
";
    let pw = |config: &str| pgpass_password(config, file);
    assert_eq!(pw("host=db1 dbname=app user=alice"), Some(b"one".to_vec()));
    assert_eq!(
        pw("host=db1 dbname=other user=alice"),
        Some(b"fallback".to_vec())
    );
    assert_eq!(
        pw("host=db2 port=1 dbname=x user=alice"),
        Some(b"two".to_vec())
    );
    assert_eq!(pw("host=db3 port=6000 user=alice"), Some(b"three".to_vec()));
    assert_eq!(pw("host=db3 user=bob"), Some(b"four".to_vec()));
    assert_eq!(pw("host=db3"), Some(b"fallback".to_vec()));
    // The database defaults to the user name before matching.
    assert_eq!(
        pgpass_password("host=h user=carol", "h:*:carol:carol:same\n"),
        Some(b"same".to_vec())
    );
    // First match wins, even when a later line is more specific.
    assert_eq!(
        pgpass_password("host=h user=u", "*:*:*:u:first\nh:5432:u:u:second\n"),
        Some(b"first".to_vec())
    );
    // No match.
    assert_eq!(pgpass_password("host=h user=u", "other:*:*:*:x\n"), None);
}

#[test]
fn pgpass_per_target() {
    let env = FakeEnv::new().pgpass("a:*:*:*:pa\nb:5433:*:*:pb\n");
    let r = resolve(&parse("host=a,b,c port=5432,5433,5434"), &env);
    let got: Vec<_> = r
        .targets
        .iter()
        .map(|t| t.password.clone().map(Secret::into_inner))
        .collect();
    assert_eq!(got, vec![Some(b"pa".to_vec()), Some(b"pb".to_vec()), None]);
}

#[test]
fn pgpass_escapes_and_format_details() {
    // Escaped ':' and '\' in fields and password.
    assert_eq!(
        pgpass_password(
            "host=h user=we:ird dbname=d",
            "h:*:d:we\\:ird:pa\\:ss\\\\word\n"
        ),
        Some(b"pa:ss\\word".to_vec())
    );
    // A literal '*' is not a wildcard when escaped.
    assert_eq!(pgpass_password("host=h user=u", "\\*:*:*:*:x\n"), None);
    assert_eq!(
        pgpass_password("host=* user=u", "\\*:*:*:*:x\n"),
        Some(b"x".to_vec())
    );
    // A '*' that is only part of a field is literal.
    assert_eq!(pgpass_password("host=h user=u", "h*:*:*:*:x\n"), None);
    // CRLF line endings, no final newline, blank lines.
    assert_eq!(
        pgpass_password("host=h user=u", "\r\n\nh:*:*:*:crlf\r\n"),
        Some(b"crlf".to_vec())
    );
    assert_eq!(
        pgpass_password("host=h user=u", "h:*:*:*:last"),
        Some(b"last".to_vec())
    );
    // Lines with too few fields are skipped.
    assert_eq!(
        pgpass_password("host=h user=u", "h:*:*:short\nh:*:*:*:ok\n"),
        Some(b"ok".to_vec())
    );
    // An unescaped ':' ends the password (libpq).
    assert_eq!(
        pgpass_password("host=h user=u", "h:*:*:*:pw:extra\n"),
        Some(b"pw".to_vec())
    );
    // '#' only starts a comment at the beginning of a line.
    assert_eq!(
        pgpass_password("host=h user=u", "#h:*:*:*:no\nh:*:*:*:pw#x\n"),
        Some(b"pw#x".to_vec())
    );
    // A first match with an empty password gives no password.
    assert_eq!(
        pgpass_password("host=h user=u", "h:*:*:*:\n*:*:*:*:later\n"),
        None
    );
    // The port is compared as written.
    assert_eq!(pgpass_password("host=h user=u", "h:05432:*:*:x\n"), None);
}

#[test]
fn pgpass_localhost_matches_unix_sockets() {
    let file = "localhost:5432:*:*:local\n";
    assert_eq!(
        pgpass_password("host=/var/run/postgresql user=u", file),
        Some(b"local".to_vec())
    );
    assert_eq!(pgpass_password("user=u", file), Some(b"local".to_vec()));
    assert_eq!(pgpass_password("host=remote user=u", file), None);
    // The socket directory itself can also be named.
    assert_eq!(
        pgpass_password("host=/tmp user=u", "/tmp:*:*:*:bypath\n"),
        Some(b"bypath".to_vec())
    );
}

#[test]
fn pgpass_uses_host_name_not_hostaddr() {
    let file = "db.example:*:*:*:named\n10.0.0.9:*:*:*:numeric\n";
    assert_eq!(
        pgpass_password("host=db.example hostaddr=10.0.0.1 user=u", file),
        Some(b"named".to_vec())
    );
    assert_eq!(
        pgpass_password("hostaddr=10.0.0.9 user=u", file),
        Some(b"numeric".to_vec())
    );
}

#[test]
fn pgpass_non_utf8_password() {
    let mut env = FakeEnv::new().home("/home/u");
    env.files.insert(
        PathBuf::from("/home/u/.pgpass"),
        (b"*:*:*:*:\xff\xfe\n".to_vec(), Some(0o600)),
    );
    assert_eq!(
        resolve(&Config::new(), &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        Some(vec![0xff, 0xfe])
    );
}

#[test]
fn pgpass_file_location() {
    let contents = "*:*:*:*:pw\n";
    // passfile= beats PGPASSFILE beats ~/.pgpass.
    let env = FakeEnv::new()
        .home("/home/u")
        .file("/home/u/.pgpass", "*:*:*:*:home\n", Some(0o600))
        .file("/env/pass", "*:*:*:*:env\n", Some(0o600))
        .file("/cfg/pass", contents, Some(0o600))
        .var("PGPASSFILE", "/env/pass");
    assert_eq!(
        resolve(&parse("passfile=/cfg/pass"), &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        Some(b"pw".to_vec())
    );
    assert_eq!(
        resolve(&Config::new(), &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        Some(b"env".to_vec())
    );
    let env = FakeEnv::new()
        .home("/home/u")
        .file("/home/u/.pgpass", "*:*:*:*:home\n", Some(0o600));
    assert_eq!(
        resolve(&Config::new(), &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        Some(b"home".to_vec())
    );
    // A missing file, or no home directory, is fine.
    assert_eq!(
        resolve(&parse("passfile=/nope"), &env).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        None
    );
    assert_eq!(
        resolve(&Config::new(), &FakeEnv::new()).targets[0]
            .password
            .clone()
            .map(Secret::into_inner),
        None
    );
}

#[test]
fn pgpass_ignored_when_others_can_read_it() {
    for (mode, used) in [
        (Some(0o100600), true),
        (Some(0o600), true),
        (Some(0o400), true),
        (Some(0o100640), false),
        (Some(0o100604), false),
        (Some(0o100610), false),
        (Some(0o644), false),
        (Some(0o040700), false), // a directory
        (None, true),            // no mode bits known (e.g. Windows)
    ] {
        let env = FakeEnv::new()
            .home("/h")
            .file("/h/.pgpass", "*:*:*:*:pw\n", mode);
        let got = resolve(&Config::new(), &env).targets[0].password.clone();
        assert_eq!(got.is_some(), used, "mode {mode:?}");
    }
}

#[test]
fn pgpass_not_read_when_password_given() {
    // The configured password applies to every target, over the file.
    let env = FakeEnv::new().pgpass("*:*:*:*:file\n");
    let r = resolve(&parse("host=a,b password=given"), &env);
    assert!(r
        .targets
        .iter()
        .all(|t| t.password.as_ref().map(|p| p.expose().as_slice()) == Some(&b"given"[..])));
}

#[test]
fn process_environment_reads_real_files() {
    let env = ProcessEnvironment;
    assert!(env.read_file(Path::new("/definitely/not/here")).is_err());
    assert_eq!(env.file_mode(Path::new("/definitely/not/here")), None);
    assert_eq!(env.var("PGPIPE_TEST_SURELY_UNSET_VARIABLE"), None);
}

// ------------------------------------------------------------ proptests

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_never_panics(s in any::<String>()) {
        let _ = Config::parse(&s);
    }

    #[test]
    fn parse_url_never_panics(s in any::<String>()) {
        let _ = Config::parse(&format!("postgres://{s}"));
    }

    #[test]
    fn parse_url_like_never_panics(s in "[a-z%:@/?&=,\\[\\]0-9.\u{e9}]{0,40}") {
        if let Ok(config) = Config::parse(&format!("postgresql://{s}")) {
            let _ = config.resolve(&FakeEnv::new());
        }
    }

    #[test]
    fn parse_conninfo_like_never_panics(s in "[a-z_= '\\\\,/0-9\t]{0,40}") {
        if let Ok(config) = Config::parse(&s) {
            let _ = config.resolve(&FakeEnv::new());
        }
    }

    #[test]
    fn pgpass_never_panics(file in any::<Vec<u8>>(), host in "[a-z/]{0,5}") {
        let _ = pgpass::PassFile::parse(&file).lookup(&pgpass::Query {
            host: &host,
            unix: host.starts_with('/'),
            port: 5432,
            dbname: "d",
            user: "u",
        });
    }

    #[test]
    fn quoted_conninfo_values_round_trip(value in any::<String>()) {
        prop_assume!(!value.contains('\0'));
        let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
        let config = Config::parse(&format!("application_name='{quoted}'")).unwrap();
        let expected = (!value.is_empty()).then_some(value.as_str());
        prop_assert_eq!(config.get_application_name(), expected);
    }
}

// ------------------------------------------------------------ security settings

#[test]
fn durations_take_units_and_bare_numbers_keep_their_unit() {
    let c = parse(
        "postgres://h/db?connect_timeout=250ms&keepalives_idle=5min&tcp_user_timeout=2s\
         &query_timeout=1500",
    );
    assert_eq!(c.get_connect_timeout(), Some(Duration::from_millis(250)));
    assert_eq!(c.get_keepalives_idle(), Some(Duration::from_secs(300)));
    assert_eq!(c.get_tcp_user_timeout(), Some(Duration::from_secs(2)));
    // Bare numbers: connect_timeout in s, query_timeout in ms (libpq's and
    // the documented units).
    assert_eq!(c.get_query_timeout(), Some(Duration::from_millis(1500)));
    let c = parse("host=h connect_timeout=2 query_timeout=1h");
    assert_eq!(c.get_connect_timeout(), Some(Duration::from_secs(2)));
    assert_eq!(c.get_query_timeout(), Some(Duration::from_secs(3600)));
    for bad in ["2 sec", "ms", "-1s", "1.5s", "99999999999999999999"] {
        let e = parse_err(&format!("host=h connect_timeout='{bad}'"));
        assert!(e.to_string().contains("connect_timeout"), "{bad}: {e}");
    }
}

#[test]
fn security_keys_parse_and_resolve() {
    let c = parse(
        "postgres://h/db?require_auth=!password,!md5&min_protocol_version=3.0\
         &max_protocol_version=latest",
    );
    let r = resolve(&c, &FakeEnv::new().var("USER", "u"));
    assert!(!r.require_auth.allows(AuthMethod::Md5));
    assert!(r.require_auth.allows(AuthMethod::ScramSha256));
    assert_eq!(r.min_protocol_version, ProtocolVersion::V3_0);
    assert_eq!(r.max_protocol_version, ProtocolVersion::Latest);
    // Defaults: everything allowed, protocol 3.0.
    let r = resolve(&parse("host=h"), &FakeEnv::new().var("USER", "u"));
    assert!(r.require_auth.is_any());
    assert_eq!(r.max_protocol_version, ProtocolVersion::V3_0);
    // From the environment, as libpq names the variables.
    let env = FakeEnv::new()
        .var("USER", "u")
        .var("PGREQUIREAUTH", "scram-sha-256")
        .var("PGMINPROTOCOLVERSION", "3.2");
    let r = resolve(&parse("host=h"), &env);
    assert!(!r.require_auth.allows(AuthMethod::None));
    // min 3.2 raises the default max with it.
    assert_eq!(r.max_protocol_version.minor(), 2);
    let e = resolve_err(
        &parse("host=h min_protocol_version=3.2 max_protocol_version=3.0"),
        &FakeEnv::new().var("USER", "u"),
    );
    assert!(e.to_string().contains("greater than"), "{e}");
    let e = parse_err("host=h require_auth=md5,!password");
    assert!(e.to_string().contains("cannot be mixed"), "{e}");
}

#[test]
fn sslrootcert_system_means_verify_full() {
    let env = FakeEnv::new().var("USER", "u");
    let r = resolve(&parse("host=h sslrootcert=system"), &env);
    assert_eq!(r.ssl_mode, SslMode::VerifyFull);
    let r = resolve(
        &parse("host=h sslrootcert=system sslmode=verify-full"),
        &env,
    );
    assert_eq!(r.ssl_mode, SslMode::VerifyFull);
    for weak in ["disable", "allow", "prefer", "require", "verify-ca"] {
        let e = resolve_err(
            &parse(&format!("host=h sslrootcert=system sslmode={weak}")),
            &env,
        );
        assert!(
            e.to_string().contains(&format!("weak sslmode \"{weak}\"")),
            "{e}"
        );
    }
}

#[test]
fn channel_binding_require_needs_tls() {
    let env = FakeEnv::new().var("USER", "u");
    let e = resolve_err(
        &parse("host=h sslmode=disable channel_binding=require"),
        &env,
    );
    assert_eq!(e.part(), "channel_binding");
    let r = resolve(&parse("host=h channel_binding=require"), &env);
    assert_eq!(r.channel_binding, ChannelBinding::Require);
}

/// A connect looks the password file up only when the server asks
/// (`PasswordFile`, through the process's cache of real files); what it
/// finds must be what resolving puts in each target, for every way of
/// naming a host.
#[test]
fn deferred_password_file_lookup_matches_resolve() {
    let dir = std::env::temp_dir().join(format!("pgpipe-deferred-pgpass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("pgpass");
    let contents = "db.example:*:*:*:named\n10.0.0.9:*:*:*:numeric\n/run/pg:*:*:*:socket\n\
                    localhost:5433:*:*:local\nb:5434:*:u:second\n*:*:d:*:any\n";
    std::fs::write(&path, contents).expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    let env = FakeEnv::new().file(path.to_str().expect("path"), contents, Some(0o100600));
    for conninfo in [
        "host=db.example hostaddr=10.0.0.1 user=u",
        "hostaddr=10.0.0.9 user=u",
        // The one name the target itself does not carry.
        "host=/run/pg hostaddr=10.0.0.2 user=u",
        "host=/run/pg user=u",
        "port=5433 user=u",
        "host=a,b port=5433,5434 user=u",
        "host=a,db.example user=u dbname=d",
        "host=db.example hostaddr=10.0.0.1 user=u password=given",
    ] {
        let config = parse(&format!("{conninfo} passfile={}", path.display()));
        let eager = resolve(&config, &env);
        let (deferred, file) =
            super::resolve::resolve(&config, &env, super::resolve::PassFiles::Deferred)
                .expect("resolves");
        assert_eq!(deferred.targets.len(), eager.targets.len(), "{conninfo}");
        for (i, target) in eager.targets.iter().enumerate() {
            let configured = deferred.targets[i].password.clone().map(Secret::into_inner);
            let found = configured.or_else(|| file.password(&deferred, i));
            assert_eq!(
                found,
                target.password.clone().map(Secret::into_inner),
                "{conninfo}, target {i}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
