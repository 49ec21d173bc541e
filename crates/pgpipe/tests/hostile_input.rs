//! Hostile input from users: NUL bytes in startup parameters are refused
//! before anything is sent; passwords never appear in an error message or a
//! `Debug` rendering (property test over URLs and conninfo strings); the
//! configuration parsers take arbitrary text without panicking.

mod common;

use common::{bounded, cluster, database};
use pgpipe::{Config, ErrorKind, PoolConfig};
use pgpipe_testkit::{AuthRole, FaultProxy};
use proptest::prelude::*;

/// NUL in user, database, application_name or options: refused with a clear
/// error before a connection is even opened (the proxy sees none).
#[tokio::test]
async fn nul_bytes_in_startup_parameters_are_refused_before_sending() {
    bounded(async {
        let db = database("hostile_nul");
        let proxy = FaultProxy::start(("127.0.0.1", cluster().port())).unwrap();
        let base = proxy.rewrite_url(&db.url(AuthRole::Trust), cluster().port());
        let port = proxy.port();
        let user = AuthRole::Trust.user();
        let cases = [
            (
                "user",
                format!("postgres://us%00er@127.0.0.1:{port}/{}", db.name()),
            ),
            (
                "dbname",
                format!("postgres://{user}@127.0.0.1:{port}/da%00ta"),
            ),
            ("application_name", format!("{base}?application_name=a%00b")),
            ("options", format!("{base}?options=-c%20x%3D1%00")),
            (
                "user",
                format!("host=127.0.0.1 port={port} user='a\0b' dbname=x"),
            ),
        ];
        for (what, url) in &cases {
            let err = match pgpipe::connect(url).await {
                Ok(_) => panic!("a NUL in {what} was accepted: {url:?}"),
                Err(e) => e,
            };
            assert_eq!(err.kind(), ErrorKind::Config, "{what}: {err:?}");
            let text = err.to_string();
            assert!(
                text.contains("NUL") || text.contains("nul") || text.contains("\\0"),
                "{what}: {text}"
            );
            // Says where: the parameter, or the position in the raw string.
            assert!(
                text.contains(what) || text.contains("position"),
                "the error should say where: {text}"
            );
        }
        assert_eq!(proxy.stats().accepted, 0, "a connection was opened");
        // The same through a pool.
        let err = match pgpipe::Pool::connect(&format!("{base}?application_name=x%00")).await {
            Ok(_) => panic!("a NUL through the pool was accepted"),
            Err(e) => e,
        };
        assert_eq!(err.kind(), ErrorKind::Config, "{err:?}");
        assert_eq!(proxy.stats().accepted, 0, "a connection was opened");
    })
    .await
}

/// Passwords are 12+ characters with a marker no other part contains, so a
/// leak shows as a plain substring.
fn password() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9]{8,20}".prop_map(|s| format!("Pw{s}Zq"))
}

/// The other parts of a connection string, valid or not.
fn other_part() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("sslmode=disable".to_owned()),
        Just("port=notaport".to_owned()),
        Just("sslmode=bogus".to_owned()),
        Just("unknown_key=1".to_owned()),
        Just("connect_timeout=-5".to_owned()),
        Just("pool_max_size=0".to_owned()),
        Just("pool_max_size=lots".to_owned()),
        Just("target_session_attrs=weird".to_owned()),
        Just("host=".to_owned()),
        "[a-z_]{1,12}=[ -~]{0,12}",
    ]
}

fn assert_no_password(password: &str, what: &str, text: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        !text.contains(password),
        "{what} shows the password: {text}"
    );
    Ok(())
}

fn check_config(password: &str, input: &str) -> Result<(), TestCaseError> {
    match Config::parse(input) {
        Ok(config) => {
            assert_no_password(password, "Config Debug", &format!("{config:?}"))?;
            let env = pgpipe::config::ProcessEnvironment;
            match config.resolve(&env) {
                Ok(resolved) => {
                    assert_no_password(password, "ResolvedConfig Debug", &format!("{resolved:?}"))?
                }
                Err(e) => {
                    assert_no_password(password, "resolve error", &e.to_string())?;
                    assert_no_password(password, "resolve error Debug", &format!("{e:?}"))?;
                }
            }
        }
        Err(e) => {
            assert_no_password(password, "parse error", &e.to_string())?;
            assert_no_password(password, "parse error Debug", &format!("{e:?}"))?;
        }
    }
    match PoolConfig::from_url(input) {
        Ok((config, pool)) => {
            assert_no_password(
                password,
                "pool Config Debug",
                &format!("{config:?} {pool:?}"),
            )?;
        }
        Err(e) => {
            assert_no_password(password, "pool parse error", &e.to_string())?;
            assert_no_password(password, "pool parse error Debug", &format!("{e:?}"))?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn passwords_never_appear_in_url_errors_or_debug(
        password in password(),
        user in "[a-z]{1,8}",
        host in prop_oneof![Just("127.0.0.1"), Just("db.example"), Just("[::1]"), Just("a,b:x"), Just("h:99999")],
        parts in proptest::collection::vec(other_part(), 0..4),
    ) {
        let query = parts.join("&");
        let url = format!("postgres://{user}:{password}@{host}/app?{query}");
        check_config(&password, &url)?;
        // The password as a query parameter too.
        let url = format!("postgres://{user}@{host}/app?password={password}&{query}");
        check_config(&password, &url)?;
    }

    #[test]
    fn passwords_never_appear_in_conninfo_errors_or_debug(
        password in password(),
        parts in proptest::collection::vec(other_part(), 0..4),
        quoted in any::<bool>(),
    ) {
        let pw = if quoted { format!("'{password}'") } else { password.clone() };
        let conninfo = format!("host=db user=app password={pw} {}", parts.join(" "));
        check_config(&password, &conninfo)?;
    }

    /// Arbitrary text: the parsers answer, never panic.
    #[test]
    fn config_parsers_take_arbitrary_text(input in "\\PC{0,80}", raw in proptest::collection::vec(any::<u8>(), 0..80)) {
        let _ = Config::parse(&input);
        let _ = PoolConfig::from_url(&input);
        let _ = Config::parse(&format!("postgres://{input}"));
        let _ = Config::parse(&format!("host={input}"));
        let lossy = String::from_utf8_lossy(&raw);
        let _ = Config::parse(&lossy);
        let _ = Config::parse(&format!("postgresql://u@h/{lossy}?{lossy}"));
    }
}

/// A connect error (nothing listening) names the host, never the password.
#[tokio::test]
async fn connect_errors_do_not_show_the_password() {
    bounded(async {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let secret = "PwSecretConnectZq";
        for url in [
            format!("postgres://app:{secret}@127.0.0.1:{port}/x?connect_timeout=2"),
            format!("host=127.0.0.1 port={port} user=app password={secret} connect_timeout=2"),
        ] {
            let err = match pgpipe::connect(&url).await {
                Ok(_) => panic!("connected to a closed port"),
                Err(e) => e,
            };
            assert!(!err.to_string().contains(secret), "{err}");
            assert!(!format!("{err:?}").contains(secret), "{err:?}");
        }
        // Wrong password against the real server: the error says so, without
        // echoing it.
        let wrong = format!(
            "postgres://{}:PwWrongOneZq@127.0.0.1:{}/postgres",
            AuthRole::Scram.user(),
            cluster().port()
        );
        let err = match pgpipe::connect(&wrong).await {
            Ok(_) => panic!("a wrong password was accepted"),
            Err(e) => e,
        };
        assert!(!err.to_string().contains("PwWrongOneZq"), "{err}");
        assert!(!format!("{err:?}").contains("PwWrongOneZq"), "{err:?}");
    })
    .await
}
