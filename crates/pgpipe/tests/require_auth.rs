//! `require_auth` (libpq 16) against the real server's md5, scram,
//! password and trust roles: allowed lists, disallowed lists and negated
//! lists; a refused method fails before any password is sent.

mod common;

use common::{bounded, cluster, database};
use pgpipe::ErrorKind;
use pgpipe_testkit::AuthRole;

async fn try_connect(role: AuthRole, require_auth: &str) -> Result<(), pgpipe::Error> {
    let db = database("require_auth");
    let url = format!("{}?require_auth={require_auth}", db.url(role));
    let client = pgpipe::connect(&url).await?;
    client.query_one("SELECT 1::int4", ()).await.map(|_| ())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_disallowed_and_negated_lists() {
    if cluster().is_external() {
        eprintln!("skipped: the auth roles exist only on the testkit's own cluster");
        return;
    }
    bounded(async {
        use AuthRole::*;
        let cases: &[(AuthRole, &str, bool)] = &[
            (Md5, "md5", true),
            (Md5, "password,md5", true),
            (Md5, "!password", true),
            (Md5, "scram-sha-256", false),
            (Md5, "!md5", false),
            (Scram, "scram-sha-256", true),
            (Scram, "!md5,!password", true),
            (Scram, "md5,password", false),
            (Scram, "!scram-sha-256", false),
            (Password, "password", true),
            (Password, "!md5", true),
            (Password, "!password", false),
            (Password, "scram-sha-256,md5", false),
            (Trust, "none", true),
            (Trust, "!md5", true),
            (Trust, "md5", false),
            (Trust, "!none", false),
        ];
        let mut wrong = Vec::new();
        for (role, list, ok) in cases {
            match (try_connect(*role, list).await, ok) {
                (Ok(()), true) => {}
                (Err(e), false)
                    if e.kind() == ErrorKind::Auth
                        && e.to_string().contains(&format!(
                            "authentication method requirement \"{}\" failed",
                            list.parse::<pgpipe::config::RequireAuth>()
                                .unwrap()
                                .describe()
                        )) => {}
                (got, _) => wrong.push(format!("{role:?} require_auth={list}: {got:?}")),
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    })
    .await;
}

#[tokio::test]
async fn bad_lists_are_configuration_errors() {
    for list in ["md5,!password", "kerberos", "md5,md5"] {
        let e = pgpipe::connect(&format!("postgres://u@127.0.0.1:1/d?require_auth={list}"))
            .await
            .expect_err(list);
        assert_eq!(e.kind(), ErrorKind::Config, "{list}: {e}");
    }
}
