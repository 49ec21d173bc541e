//! A cluster from a TOML file (feature `cluster-toml`): the shards, the map
//! and the budget it gives reach the right databases, and every kind of bad
//! file is refused with the file, the line and the field named.

mod common;

use std::path::{Path, PathBuf};

use pgpipe::cluster::{ClusterBuilder, ShardMap};
use pgpipe::ErrorKind;

/// A file in a directory of its own, deleted with it.
struct TempFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Writes `text` to a file named `name` in a directory of its own.
fn file(name: &str, text: &str) -> TempFile {
    let dir = tempfile::Builder::new()
        .prefix("pgpipe-cluster-file-")
        .tempdir()
        .unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    TempFile { _dir: dir, path }
}

/// The error for `text`, checked to name the file.
fn refused(name: &str, text: &str) -> String {
    let path = file(name, text);
    let e = ClusterBuilder::from_file(&path).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    let message = e.to_string();
    assert!(
        message.contains(&path.path.display().to_string()),
        "{message}"
    );
    message
}

fn assert_names(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} is not in: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_file_routes_to_its_shards() {
    common::bounded(async {
        let c = common::cluster();
        let dbs: Vec<_> = (0..2)
            .map(|id| {
                let db = common::database("cluster_file");
                c.execute(
                    db.name(),
                    &format!("CREATE TABLE whoami (shard int4); INSERT INTO whoami VALUES ({id})"),
                )
                .unwrap();
                db
            })
            .collect();
        let url = |i: usize| format!("postgres://{}@127.0.0.1:{}/{}", c.superuser(), c.port(), dbs[i].name());
        let path = file(
            "good.toml",
            &format!(
                "max_connections = 3\n\n[map]\nranges = [\n  {{ start = 0, end = 100, shard = 7 }},\n  \
                 {{ start = 100, end = 200, shard = 9 }},\n]\n\n[[shards]]\nid = 7\nhosts = [\"{}\"]\n\n\
                 [[shards]]\nid = 9\nhosts = [\"{}\"]\n",
                url(0),
                url(1)
            ),
        );
        let cluster = ClusterBuilder::from_file(&path).unwrap().build().unwrap();
        assert_eq!(cluster.shard_ids(), vec![7, 9]);
        assert_eq!(cluster.stats().budget.unwrap().limit, 3);
        for (key, expected) in [(5i64, 0), (150, 1)] {
            let shard = cluster.shard(key).await.unwrap();
            let id: i32 = shard
                .primary()
                .query_one("SELECT shard FROM whoami", ())
                .await
                .unwrap()
                .get(0);
            assert_eq!(id, expected, "key {key}");
        }
        let e = cluster.shard(250i64).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Routing);

        // The map alone, from the same file or one holding only a map.
        ShardMap::from_file(&path).unwrap();
        ShardMap::from_file(file("hash.toml", "[map]\nhash = 4\n")).unwrap();
    })
    .await
}

#[test]
fn bad_files_name_the_file_the_line_and_the_field() {
    let host = "postgres://app@db/mail";
    // TOML that does not parse.
    let m = refused(
        "syntax.toml",
        &format!("[[shards]]\nid = 0\nhosts = [\"{host}\"\n"),
    );
    assert_names(&m, &["line "]);
    // A key the format does not have.
    let m = refused(
        "unknown.toml",
        &format!("[[shards]]\nid = 0\nhots = [\"{host}\"]\n"),
    );
    assert_names(&m, &["line 3", "hots"]);
    // A value of the wrong type.
    let m = refused(
        "type.toml",
        &format!("[[shards]]\nid = \"zero\"\nhosts = [\"{host}\"]\n"),
    );
    assert_names(&m, &["line 2", "id"]);
    // No shards at all.
    let m = refused("empty.toml", "max_connections = 4\n");
    assert_names(&m, &["shards", "at least one shard"]);
    // A shard without hosts.
    let m = refused("nohosts.toml", "[[shards]]\nid = 0\nhosts = []\n");
    assert_names(&m, &["line 3", "shards[0].hosts", "no hosts"]);
    // The same shard twice.
    let m = refused(
        "twice.toml",
        &format!("[[shards]]\nid = 0\nhosts = [\"{host}\"]\n\n[[shards]]\nid = 0\nhosts = [\"{host}\"]\n"),
    );
    assert_names(&m, &["line 6", "shards[1].id", "listed twice"]);
    // A connection string that does not parse.
    let m = refused(
        "url.toml",
        &format!(
            "[[shards]]\nid = 0\nhosts = [\"{host}\",\n  \"postgres://app@db:notaport/mail\"]\n"
        ),
    );
    assert_names(&m, &["line 4", "shards[0].hosts[1]"]);
    // Maps: an empty range, overlapping ranges, both kinds, neither, zero shards.
    let shards = format!("[[shards]]\nid = 0\nhosts = [\"{host}\"]\n");
    let m = refused(
        "emptyrange.toml",
        &format!("{shards}[map]\nranges = [\n  {{ start = 0, end = 10, shard = 0 }},\n  {{ start = 10, end = 10, shard = 0 }},\n]\n"),
    );
    assert_names(&m, &["line 7", "map.ranges[1]", "empty"]);
    let m = refused(
        "overlap.toml",
        &format!("{shards}[map]\nranges = [{{ start = 0, end = 10, shard = 0 }}, {{ start = 5, end = 20, shard = 0 }}]\n"),
    );
    assert_names(&m, &["line 4", "map.ranges", "overlap"]);
    let m = refused(
        "both.toml",
        &format!("{shards}[map]\nhash = 1\nranges = []\n"),
    );
    assert_names(&m, &["map", "not both"]);
    let m = refused("neither.toml", &format!("{shards}[map]\n"));
    assert_names(&m, &["map", "hash"]);
    let m = refused("zero.toml", &format!("{shards}[map]\nhash = 0\n"));
    assert_names(&m, &["line 5", "map.hash"]);
    let m = refused("budget.toml", &format!("max_connections = 0\n{shards}"));
    assert_names(&m, &["line 1", "max_connections"]);
    // A file that is not there.
    let e = ClusterBuilder::from_file("/nonexistent/pgpipe/shards.toml").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(
        e.to_string().contains("/nonexistent/pgpipe/shards.toml"),
        "{e}"
    );
    // A map file without a map.
    let e = ShardMap::from_file(file("nomap.toml", &shards)).unwrap_err();
    assert!(e.to_string().contains("no [map] table"), "{e}");
}
