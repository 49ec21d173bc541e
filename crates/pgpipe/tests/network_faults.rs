//! Network faults between the client and a real server, injected by the
//! testkit's FaultProxy: a link that dies silently under a pipelined burst,
//! a reset in the middle of a result, a drip-fed large result, a connect
//! that stalls half-way, and the TCP keepalive / user-timeout settings.
//!
//! Invariants: every caller gets its own answer or an error, every wait ends
//! within its bound, and the pool replaces what the network broke.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{bounded, cluster, database};
use pgpipe::{ErrorKind, Pool};
use pgpipe_testkit::{
    AuthRole, Direction, FaultProxy, LinkFaults, TestDatabase, TlsCluster, TlsRole,
};
use tokio::time::Instant;

fn proxy_for_cluster() -> FaultProxy {
    FaultProxy::start(("127.0.0.1", cluster().port())).expect("fault proxy")
}

/// The database's trust URL, through the proxy.
fn proxied_url(proxy: &FaultProxy, db: &TestDatabase) -> String {
    proxy.rewrite_url(&db.url(AuthRole::Trust), cluster().port())
}

fn with_params(url: &str, params: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

/// A link that dies under the pool's connections in the middle of a
/// pipelined burst (the server stays reachable for new connections): every
/// caller gets its own answer or a timeout within the query timeout plus
/// slack, and the pool goes on serving from fresh connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_black_holed_link_mid_burst_times_out_callers_and_the_pool_replaces_connections() {
    bounded(async {
        let db = database("net_blackhole");
        let proxy = proxy_for_cluster();
        const QUERY_TIMEOUT: Duration = Duration::from_millis(1500);
        let url = with_params(
            &proxied_url(&proxy, &db),
            "query_timeout=1500&pool_max_size=4&pool_acquire_timeout=20000&pool_health_check_after=200",
        );
        let pool = Pool::connect(&url).await.unwrap();
        // Warm: every connection of the pool is open.
        let warm: Vec<_> = (0..4).map(|_| pool.get()).collect();
        for c in futures_join(warm).await {
            c.unwrap();
        }
        let created_before = pool.stats().created;

        let ok = Arc::new(AtomicU64::new(0));
        let failed = Arc::new(AtomicU64::new(0));
        let slowest = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for t in 0..64i64 {
            let (pool, ok, failed, slowest) =
                (pool.clone(), ok.clone(), failed.clone(), slowest.clone());
            tasks.push(tokio::spawn(async move {
                for i in 0..40i64 {
                    let id = t * 1000 + i;
                    let started = Instant::now();
                    let r = if i % 2 == 0 {
                        pool.query_one("SELECT $1::int8", (id,)).await
                    } else {
                        match pool.get().await {
                            Ok(c) => c.query_one("SELECT $1::int8", (id,)).await,
                            Err(e) => Err(e),
                        }
                    };
                    slowest.fetch_max(started.elapsed().as_millis() as u64, Ordering::Relaxed);
                    match r {
                        Ok(row) => {
                            assert_eq!(row.get::<i64, _>(0), id, "another caller's answer");
                            ok.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            assert!(
                                e.is_timeout() || e.is_closed() || e.kind() == ErrorKind::Io,
                                "unexpected error: {e:?}"
                            );
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }));
        }
        // Mid-burst: the link under every open connection dies.
        while ok.load(Ordering::Relaxed) < 200 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let held = proxy.black_hole_open_connections();
        assert!(held >= 1);
        for t in tasks {
            t.await.unwrap();
        }
        let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
        println!(
            "black hole: {held} connections held; {ok} ok, {failed} failed, slowest call {} ms",
            slowest.load(Ordering::Relaxed)
        );
        assert_eq!(ok + failed, 64 * 40);
        assert!(failed > 0, "the black hole failed no call");
        // Each call is bounded: one query timeout for the statement, one
        // acquire timeout at worst for a checkout, plus slack for a loaded
        // machine. (A bound, not a speed: nothing here waits forever.)
        let bound = QUERY_TIMEOUT + Duration::from_secs(20) + Duration::from_secs(10);
        assert!(
            Duration::from_millis(slowest.load(Ordering::Relaxed)) < bound,
            "a call took {} ms",
            slowest.load(Ordering::Relaxed)
        );

        // The pool serves again, from new connections: the held ones never
        // answer again.
        let deadline = Instant::now() + Duration::from_secs(40);
        let mut served = 0;
        while served < 20 {
            assert!(Instant::now() < deadline, "the pool did not recover: {:?}", pool.stats());
            let r = pool.query_one("SELECT 7::int4", ()).await;
            match r {
                Ok(row) => {
                    assert_eq!(row.get::<i32, _>(0), 7);
                    served += 1;
                }
                Err(e) => assert!(e.is_timeout() || e.is_closed(), "{e:?}"),
            }
            let r = match pool.get().await {
                Ok(c) => c.query_one("SELECT 8::int4", ()).await,
                Err(e) => Err(e),
            };
            match r {
                Ok(row) => {
                    assert_eq!(row.get::<i32, _>(0), 8);
                    served += 1;
                }
                Err(e) => assert!(e.is_timeout() || e.is_closed(), "{e:?}"),
            }
        }
        let stats = pool.stats();
        assert!(stats.created > created_before, "{stats:?}");
        assert!(stats.size <= stats.max_size, "{stats:?}");
    })
    .await
}

async fn futures_join<F: std::future::Future>(futs: Vec<F>) -> Vec<F::Output> {
    let mut out = Vec::with_capacity(futs.len());
    let handles: Vec<_> = futs.into_iter().map(Box::pin).collect();
    // Poll them together so that each checkout holds its connection while
    // the others open theirs.
    let mut handles: Vec<_> = handles.into_iter().map(Some).collect();
    let mut results: Vec<Option<F::Output>> = (0..handles.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (h, r) in handles.iter_mut().zip(results.iter_mut()) {
            if let Some(f) = h {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        *r = Some(v);
                        *h = None;
                    }
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.extend(
        results
            .into_iter()
            .map(|r| r.expect("every future finished")),
    );
    out
}

/// An RST in the middle of a streamed result ends the stream with an error
/// (never a truncated "success"), closes that connection, and a new
/// connection works.
#[tokio::test]
async fn a_reset_in_the_middle_of_a_result_ends_the_stream_with_an_error() {
    bounded(async {
        let db = database("net_rst");
        let proxy = proxy_for_cluster();
        let client = pgpipe::connect(&proxied_url(&proxy, &db)).await.unwrap();
        let mut rows = client
            .query_stream(
                "SELECT g::int8, repeat('x', 100) FROM generate_series(1, 2000000) g",
                (),
            )
            .await
            .unwrap();
        let mut seen = 0i64;
        let err = loop {
            match rows.next().await {
                Some(Ok(row)) => {
                    seen += 1;
                    assert_eq!(row.get::<i64, _>(0), seen);
                    if seen == 1000 {
                        assert_eq!(proxy.reset_all(), 1);
                    }
                }
                Some(Err(e)) => break e,
                None => panic!("the stream ended cleanly after {seen} rows despite the reset"),
            }
        };
        assert!(seen < 2_000_000);
        assert!(
            matches!(err.kind(), ErrorKind::Io | ErrorKind::Closed),
            "{err:?}"
        );
        assert!(client.is_closed());
        let err = client.query_one("SELECT 1", ()).await.unwrap_err();
        assert!(err.is_closed(), "{err:?}");
        let fresh = pgpipe::connect(&proxied_url(&proxy, &db)).await.unwrap();
        let v: i32 = fresh.query_one("SELECT 3::int4", ()).await.unwrap().get(0);
        assert_eq!(v, 3);
    })
    .await
}

/// A 100 MB result drip-fed in small writes, read by a slow consumer: all of
/// it arrives in order, and what the client holds unread stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drip_fed_100_mb_result_arrives_whole_with_bounded_buffering() {
    bounded(async {
        let db = database("net_drip");
        let proxy = proxy_for_cluster();
        proxy.set(
            Direction::ToClient,
            LinkFaults {
                slice: Some(1500),
                ..Default::default()
            },
        );
        let (client, mut connection) = pgpipe::connect_with_driver(&proxied_url(&proxy, &db))
            .await
            .unwrap();
        const LIMIT: usize = 256 * 1024;
        connection.max_buffered(LIMIT);
        tokio::spawn(connection);
        // 100,000 rows of 1,000 bytes: 100 MB of values.
        const N: i64 = 100_000;
        let mut rows = client
            .query_stream(
                "SELECT g::int8, repeat(chr(65 + (g % 26)::int), 1000) FROM generate_series(1, $1::int8) g",
                (N,),
            )
            .await
            .unwrap();
        let (mut count, mut bytes) = (0i64, 0usize);
        while let Some(row) = rows.next().await {
            let row = row.unwrap();
            count += 1;
            assert_eq!(row.get::<i64, _>(0), count);
            let s: &str = row.get(1);
            assert_eq!(s.len(), 1000);
            assert_eq!(s.as_bytes()[0], b'A' + (count % 26) as u8);
            bytes += s.len();
            if count % 10_000 == 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        assert_eq!(count, N);
        assert_eq!(bytes, 100_000_000);
        let peak = client.stats().peak_buffered_bytes;
        println!("drip-fed 100 MB: peak buffered {peak} bytes (bound {LIMIT})");
        // Bounded by the limit plus one 64 KiB socket read (and the message
        // being framed).
        assert!(peak <= LIMIT + 128 * 1024, "peak buffered {peak} bytes");
    })
    .await
}

/// A server that goes silent right after AuthenticationOk (and one that
/// never says anything): connect_timeout ends the attempt with a timeout.
#[tokio::test]
async fn a_connect_that_stalls_after_authentication_ok_times_out() {
    bounded(async {
        let db = database("net_stall");
        let proxy = proxy_for_cluster();
        let url = with_params(&proxied_url(&proxy, &db), "connect_timeout=2");
        // Trust: the server's first message is AuthenticationOk, 9 bytes.
        for stall_after in [9u64, 0] {
            proxy.update(Direction::ToClient, |f| f.stall_after = Some(stall_after));
            let started = Instant::now();
            let err = match pgpipe::connect(&url).await {
                Ok(_) => panic!("connected through a stalled link (stall after {stall_after})"),
                Err(e) => e,
            };
            assert!(err.is_timeout(), "stall after {stall_after}: {err:?}");
            assert!(err.to_string().contains("connect_timeout"), "{err}");
            // Bounded: 2 s plus slack for a loaded machine.
            assert!(started.elapsed() < Duration::from_secs(20));
        }
        proxy.heal();
        let client = pgpipe::connect(&url).await.unwrap();
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
        // The pool's acquire gives up within acquire_timeout when every new
        // connection stalls.
        proxy.update(Direction::ToClient, |f| f.stall_after = Some(9));
        let pool = Pool::connect_lazy(&with_params(&url, "pool_acquire_timeout=1500")).unwrap();
        let err = match pool.get().await {
            Ok(_) => panic!("a pool connection through a stalled link"),
            Err(e) => e,
        };
        assert!(err.is_timeout(), "{err:?}");
    })
    .await
}

/// A connect with sslmode=require whose link stalls during TLS: right after
/// the server's 'S' answer to SSLRequest (the ServerHello never comes), in
/// the middle of the server's handshake flight, and with the client's
/// ClientHello cut short. connect_timeout ends each attempt with a timeout
/// error; a healed link connects over TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connect_that_stalls_during_the_tls_handshake_times_out() {
    // Started before the test's time bound counts: initdb and a server
    // start take tens of seconds on a loaded machine (bounded in the testkit).
    let tls =
        TlsCluster::with_tls().unwrap_or_else(|e| panic!("cannot start the TLS cluster: {e}"));
    bounded(async {
        let proxy = FaultProxy::start(("127.0.0.1", tls.cluster().port())).expect("fault proxy");
        let url = proxy.rewrite_url(
            &tls.url(
                TlsRole::SslOnly,
                "127.0.0.1",
                "sslmode=require&connect_timeout=2",
            ),
            tls.cluster().port(),
        );
        // To the client: 1 byte is the 'S'; 1 + 60 stops inside the
        // ServerHello. To the server: 8 bytes are the SSLRequest, 8 + 40
        // stops inside the ClientHello.
        let stalls = [
            (Direction::ToClient, 1u64, "after the server's 'S'"),
            (Direction::ToClient, 61, "inside the server's handshake"),
            (Direction::ToServer, 48, "inside the ClientHello"),
        ];
        for (dir, after, what) in stalls {
            proxy.heal();
            proxy.update(dir, |f| f.stall_after = Some(after));
            let started = Instant::now();
            let err = match pgpipe::connect(&url).await {
                Ok(_) => panic!("connected through a link that stalls {what}"),
                Err(e) => e,
            };
            assert!(err.is_timeout(), "stall {what}: {err:?}");
            assert!(err.to_string().contains("connect_timeout"), "{what}: {err}");
            // Bounded: 2 s plus slack for a loaded machine.
            assert!(started.elapsed() < Duration::from_secs(30), "{what}");
        }
        proxy.heal();
        let client = pgpipe::connect(&url).await.unwrap();
        let ssl: bool = client
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                (),
            )
            .await
            .unwrap()
            .get(0);
        assert!(ssl, "the healed link connects over TLS");
    })
    .await
}

/// keepalives, keepalives_idle, keepalives_interval, keepalives_count and
/// tcp_user_timeout reach the socket: read
/// back with getsockopt on the client's own socket (found by its peer, the
/// proxy's unique port).
#[tokio::test]
async fn keepalive_and_tcp_user_timeout_are_set_on_the_socket() {
    bounded(async {
        let db = database("net_keepalive");
        let proxy = proxy_for_cluster();
        let url = with_params(
            &proxied_url(&proxy, &db),
            "keepalives_idle=7&keepalives_interval=3&keepalives_count=4&tcp_user_timeout=4000",
        );
        let client = pgpipe::connect(&url).await.unwrap();
        client.query_one("SELECT 1", ()).await.unwrap();
        let fd = socket_with_peer_port(proxy.port()).expect("the client's socket");
        assert_eq!(sockopt(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 1);
        assert_eq!(sockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 7);
        assert_eq!(sockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 3);
        assert_eq!(sockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT), 4);
        assert_eq!(sockopt(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT), 4000);
        drop(client);

        let proxy2 = proxy_for_cluster();
        let off = with_params(&proxied_url(&proxy2, &db), "keepalives=0");
        let client = pgpipe::connect(&off).await.unwrap();
        client.query_one("SELECT 1", ()).await.unwrap();
        let fd = socket_with_peer_port(proxy2.port()).expect("the client's socket");
        assert_eq!(sockopt(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 0);
        assert_eq!(sockopt(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT), 0);
    })
    .await
}

/// The open file descriptor of this process whose TCP peer is 127.0.0.1:port.
fn socket_with_peer_port(port: u16) -> Option<i32> {
    for entry in std::fs::read_dir("/proc/self/fd").ok()? {
        let fd: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        // SAFETY: getpeername on an fd number of our own process with a
        // correctly sized sockaddr_in buffer; a non-socket just fails.
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let r = unsafe {
            libc::getpeername(fd, (&mut addr as *mut libc::sockaddr_in).cast(), &mut len)
        };
        if r == 0 && addr.sin_family == libc::AF_INET as u16 && u16::from_be(addr.sin_port) == port
        {
            return Some(fd);
        }
    }
    None
}

fn sockopt(fd: i32, level: i32, name: i32) -> i32 {
    let mut value: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into a c_int of the right size.
    let r = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    assert_eq!(r, 0, "getsockopt({level}, {name})");
    value
}
