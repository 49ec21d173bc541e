//! Clusters of every major version of the matrix (13 to 18): each starts,
//! reports its version, makes a standby that replicates and can be
//! promoted, and has a TLS sibling that accepts TLS. A version that is not
//! installed is skipped with a printed reason, unless `PGPIPE_PG_VERSIONS`
//! (set by scripts/test.sh) claims it is, and then the test fails.

use pgpipe_testkit::{version_available, Cluster, TlsCluster};

const MATRIX: [u32; 6] = [13, 14, 15, 16, 17, 18];

fn installed(major: u32) -> bool {
    match version_available(major) {
        Ok(true) => true,
        Ok(false) => {
            eprintln!("skipped PostgreSQL {major}: not installed (scripts/ensure-postgres-versions.sh {major})");
            false
        }
        Err(e) => panic!("{e}"),
    }
}

fn first(cluster: &Cluster, sql: &str) -> String {
    cluster
        .query("postgres", sql)
        .unwrap_or_else(|e| panic!("{sql} on {}: {e}", cluster.version()))[0][0]
        .clone()
        .unwrap_or_default()
}

#[test]
fn every_installed_major_starts_replicates_and_promotes() {
    let mut ran = Vec::new();
    for major in MATRIX {
        if !installed(major) {
            continue;
        }
        let primary = Cluster::start_version(major)
            .unwrap_or_else(|e| panic!("cannot start PostgreSQL {major}: {e}"));
        assert_eq!(primary.major_version(), major, "{}", primary.version());
        let num: u32 = first(&primary, "SHOW server_version_num").parse().unwrap();
        assert_eq!(num / 10000, major);

        let db = primary.create_database("versions").unwrap();
        primary
            .execute(
                db.name(),
                "CREATE TABLE t (v int); INSERT INTO t VALUES (1)",
            )
            .unwrap();
        let standby = primary
            .start_standby()
            .unwrap_or_else(|e| panic!("standby of PostgreSQL {major}: {e}"));
        assert_eq!(standby.major_version(), major);
        primary
            .execute(db.name(), "INSERT INTO t VALUES (2)")
            .unwrap();
        primary.wait_replicated(&standby).unwrap();
        let rows = standby
            .query(
                db.name(),
                "SELECT string_agg(v::text, ',' ORDER BY v) FROM t",
            )
            .unwrap();
        assert_eq!(rows[0][0].as_deref(), Some("1,2"), "PostgreSQL {major}");
        assert_eq!(first(&standby, "SELECT pg_is_in_recovery()"), "t");
        primary.stop().unwrap();
        standby.promote().unwrap();
        assert_eq!(first(&standby, "SELECT pg_is_in_recovery()"), "f");
        standby
            .execute(db.name(), "INSERT INTO t VALUES (3)")
            .unwrap_or_else(|e| panic!("write after promotion on {major}: {e}"));
        ran.push(major);
    }
    eprintln!("versions started, replicated and promoted: {ran:?}");
}

#[test]
fn every_installed_major_serves_tls() {
    for major in MATRIX {
        if !installed(major) {
            continue;
        }
        let tls = TlsCluster::start_version(true, major)
            .unwrap_or_else(|e| panic!("cannot start a TLS cluster of PostgreSQL {major}: {e}"));
        assert_eq!(tls.cluster().major_version(), major);
        assert_eq!(first(tls.cluster(), "SHOW ssl"), "on", "PostgreSQL {major}");
        let plain = TlsCluster::start_version(false, major).unwrap();
        assert_eq!(first(plain.cluster(), "SHOW ssl"), "off");
    }
}
