//! `--pin` against a real throwaway cluster: the postmaster, the processes
//! it already forked and the backends it forks later all run on the
//! server's CPUs.

use pgpipe_bench::pin;
use pgpipe_testkit::{AuthRole, Cluster};

#[tokio::test]
async fn a_pinned_cluster_keeps_its_backends_on_its_cpus() {
    let available = pin::available_cpus().unwrap();
    assert!(!available.is_empty());
    let target = vec![*available.last().unwrap()];
    // A cluster of its own: pinning the shared one would touch other tests.
    let cluster = Cluster::start().unwrap();
    let root = cluster.dir().expect("a testkit cluster has a directory");
    pin::pin_cluster(root, &target).unwrap();

    let postmaster: u32 = std::fs::read_to_string(root.join("data/postmaster.pid"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(pin::affinity_of(postmaster).unwrap(), target);

    // A backend forked after pinning inherits the mask.
    let client = pgpipe::connect(&cluster.url(AuthRole::Trust, "postgres"))
        .await
        .unwrap();
    let backend: i32 = client
        .query_one("SELECT pg_backend_pid()", ())
        .await
        .unwrap()
        .get(0);
    assert_eq!(pin::affinity_of(backend as u32).unwrap(), target);
}
