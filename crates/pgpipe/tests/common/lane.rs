//! The pool's shared lane in tests.

use pgpipe::Pool;

/// Grows `pool`'s shared lane to `connections` with overlapping statements
/// from separate tasks (the lane opens a connection when every one it has
/// is busy), then checks that it got there.
pub async fn grow_lane(pool: &Pool, connections: usize) {
    for _ in 0..200 {
        let tasks: Vec<_> = (0..2 * connections)
            .map(|_| {
                let pool = pool.clone();
                tokio::spawn(async move { pool.execute("SELECT pg_sleep(0.005)", ()).await })
            })
            .collect();
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        if pool.stats().shared == connections {
            break;
        }
    }
    assert_eq!(pool.stats().shared, connections, "{:?}", pool.stats());
}
