//! Authentication of every role against the shared cluster, with the
//! testkit's setup client (cleartext; MD5 and SCRAM are pgpipe-proto's, so
//! these tests check them against a real server).

use std::time::Duration;

use crate::mini_client::{Endpoint, Login, MiniClient};
use crate::{AuthRole, Cluster};

fn cluster() -> &'static Cluster {
    Cluster::shared().unwrap_or_else(|e| panic!("cannot start the shared cluster: {e}"))
}

fn login(endpoint: Endpoint, role: AuthRole, password: &str) -> Login {
    Login {
        endpoint,
        user: role.user().to_string(),
        password: Some(password.to_string()),
        dbname: "postgres".to_string(),
        timeout: Duration::from_secs(30),
    }
}

fn endpoints(c: &Cluster) -> [Endpoint; 2] {
    [
        Endpoint::Tcp(c.host().to_string(), c.port()),
        Endpoint::from_host(&c.socket_dir().to_string_lossy(), c.port()),
    ]
}

#[test]
fn every_role_logs_in_with_its_password_and_is_refused_with_a_wrong_one() {
    let c = cluster();
    if c.is_external() {
        eprintln!("skipped: auth roles need the testkit cluster (PGPIPE_TEST_URL is set)");
        return;
    }
    for endpoint in endpoints(c) {
        for role in AuthRole::ALL {
            let mut client = MiniClient::connect(&login(endpoint.clone(), role, role.password()))
                .unwrap_or_else(|e| panic!("{role:?} over {endpoint}: {e}"));
            let rows = client.simple_query("SELECT current_user").unwrap();
            assert_eq!(rows, vec![vec![Some(role.user().to_string())]]);
            if role == AuthRole::Trust {
                continue;
            }
            let err = match MiniClient::connect(&login(endpoint.clone(), role, "wrong password")) {
                Ok(_) => panic!("{role:?} over {endpoint} accepted a wrong password"),
                Err(e) => e,
            };
            assert_eq!(err.code(), Some("28P01"), "{role:?} over {endpoint}: {err}");
        }
    }
}

#[test]
fn passwords_are_stored_as_their_method_needs() {
    let c = cluster();
    if c.is_external() {
        eprintln!("skipped: auth roles need the testkit cluster (PGPIPE_TEST_URL is set)");
        return;
    }
    let rows = c
        .query(
            "postgres",
            "SELECT rolname, rolpassword FROM pg_authid WHERE rolname LIKE 'pgpipe\\_%' ORDER BY rolname",
        )
        .unwrap();
    let secret = |role: AuthRole| {
        rows.iter()
            .find(|r| r[0].as_deref() == Some(role.user()))
            .unwrap_or_else(|| panic!("role {} missing: {rows:?}", role.user()))[1]
            .clone()
    };
    let md5 = secret(AuthRole::Md5).unwrap();
    assert!(md5.starts_with("md5") && md5.len() == 35, "{md5}");
    assert!(secret(AuthRole::Scram)
        .unwrap()
        .starts_with("SCRAM-SHA-256$"));
    assert!(secret(AuthRole::Password).is_some());
    assert_eq!(secret(AuthRole::Trust), None);
}

#[test]
fn unknown_users_are_refused() {
    let c = cluster();
    if c.is_external() {
        eprintln!("skipped: the external server's pg_hba.conf is not the testkit's");
        return;
    }
    let mut l = login(
        Endpoint::Tcp(c.host().to_string(), c.port()),
        AuthRole::Trust,
        "",
    );
    l.user = "nobody_here".into();
    let err = MiniClient::connect(&l).map(|_| ()).unwrap_err();
    // No pg_hba.conf line matches: 28000 (invalid authorization specification).
    assert_eq!(err.code(), Some("28000"), "{err}");
}

/// Every role logs in to a standby with its (replicated) password, over TCP
/// and the standby's own socket, in a database created on the primary.
#[test]
fn roles_log_in_to_a_standby_with_their_replicated_passwords() {
    let primary = Cluster::start().unwrap_or_else(|e| panic!("cannot start a cluster: {e}"));
    let db = primary.create_database("standby_login").unwrap();
    let standby = primary.start_standby().unwrap();
    primary.wait_replicated(&standby).unwrap();
    for endpoint in endpoints(&standby) {
        for role in AuthRole::ALL {
            let mut l = login(endpoint.clone(), role, role.password());
            l.dbname = db.name().to_string();
            let mut client =
                MiniClient::connect(&l).unwrap_or_else(|e| panic!("{role:?} over {endpoint}: {e}"));
            let rows = client
                .simple_query("SELECT current_user, current_database(), pg_is_in_recovery()")
                .unwrap();
            assert_eq!(
                rows,
                vec![vec![
                    Some(role.user().to_string()),
                    Some(db.name().to_string()),
                    Some("t".to_string())
                ]]
            );
        }
    }
}
