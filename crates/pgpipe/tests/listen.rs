//! LISTEN/NOTIFY against real servers: fan-out over several channels and
//! subscribers in order, exactly one Gap after the listener's backend is
//! terminated (then re-LISTEN proven), a slow subscriber lagging with
//! bounded memory, the liveness ping noticing a silent connection, the
//! listener finding the primary of a primary+standby pair, and
//! notifications on a plain client.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{bounded, connect, database, eventually};
use pgpipe::{Event, GapReason, Listener, Notifications};
use pgpipe_testkit::{AuthRole, Cluster};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The next event, which must come within a generous bound.
async fn next(sub: &mut Notifications) -> Event {
    tokio::time::timeout(Duration::from_secs(20), sub.next())
        .await
        .expect("no event within 20 s")
        .expect("the subscription ended")
        .expect("the subscription failed")
}

fn payload(event: Event) -> (String, String) {
    match event {
        Event::Notification(n) => (n.channel().to_owned(), n.payload().to_owned()),
        other => panic!("expected a notification, got {other:?}"),
    }
}

#[tokio::test]
async fn three_channels_ten_thousand_notifications_each_once_in_order() {
    let db = database("listen_fanout");
    bounded(async {
        let listener = Listener::builder(db.url(AuthRole::Trust))
            .buffer(20_000)
            .connect()
            .await
            .unwrap();
        let mut all = listener.subscribe(&["ch0", "ch1", "ch2"]).await.unwrap();
        let mut only_one = listener.listen("ch1").await.unwrap();
        // A channel name is a quoted identifier, not SQL.
        let odd = "we\"ird; DROP TABLE x; --";
        let mut weird = listener.listen(odd).await.unwrap();

        let sender = connect(&db).await;
        // One transaction: delivered together at commit, in order.
        sender
            .execute(
                "SELECT pg_notify('ch' || (g % 3), g::text) FROM generate_series(1, 10000) g",
                (),
            )
            .await
            .unwrap();
        sender.notify(odd, "safe").await.unwrap();

        let mut last: HashMap<String, i64> = HashMap::new();
        for _ in 0..10_000 {
            let (channel, payload) = payload(next(&mut all).await);
            let n: i64 = payload.parse().unwrap();
            assert_eq!(channel, format!("ch{}", n % 3));
            let before = last.insert(channel.clone(), n).unwrap_or(0);
            assert!(n > before, "{channel}: {n} after {before}");
        }
        for k in 0..3334 {
            let (channel, payload) = payload(next(&mut only_one).await);
            assert_eq!(
                (channel.as_str(), payload),
                ("ch1", (3 * k + 1).to_string())
            );
        }
        assert_eq!(
            payload(next(&mut weird).await),
            (odd.to_owned(), "safe".to_owned())
        );
        // Nothing more, nothing twice.
        sender.notify("ch0", "end").await.unwrap();
        assert_eq!(payload(next(&mut all).await), ("ch0".into(), "end".into()));
        assert_eq!(all.buffered(), 0);
        assert_eq!(only_one.buffered(), 0);
        let stats = listener.stats();
        assert_eq!((stats.lagged, stats.gaps, stats.reconnects), (0, 0, 0));
    })
    .await;
}

#[tokio::test]
async fn a_terminated_backend_yields_exactly_one_gap_then_notifications_again() {
    let db = database("listen_terminate");
    bounded(async {
        let listener = Listener::builder(db.url(AuthRole::Trust))
            .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(200))
            .connect()
            .await
            .unwrap();
        let mut sub = listener.subscribe(&["a", "b", "c"]).await.unwrap();
        let other = connect(&db).await;
        other.notify("a", "before").await.unwrap();
        assert_eq!(payload(next(&mut sub).await), ("a".into(), "before".into()));

        let pid = listener.backend_pid();
        let killed: bool = other
            .query_one("SELECT pg_terminate_backend($1)", (pid,))
            .await
            .unwrap()
            .get(0);
        assert!(killed);
        // One gap, and only once the LISTENs are back: so a notification
        // sent after it is seen must arrive.
        assert_eq!(
            next(&mut sub).await,
            Event::Gap {
                reason: GapReason::Reconnected
            }
        );
        assert_ne!(listener.backend_pid(), pid);
        for channel in ["a", "b", "c"] {
            other.notify(channel, "after").await.unwrap();
            assert_eq!(
                payload(next(&mut sub).await),
                (channel.into(), "after".into())
            );
        }
        let stats = listener.stats();
        assert_eq!((stats.reconnects, stats.gaps), (1, 1));
    })
    .await;
}

#[tokio::test]
async fn a_slow_subscriber_lags_with_bounded_memory() {
    let db = database("listen_lag");
    bounded(async {
        let listener = Listener::builder(db.url(AuthRole::Trust))
            .buffer(100)
            .connect()
            .await
            .unwrap();
        let mut slow = listener.listen("busy").await.unwrap();
        let other = connect(&db).await;
        other
            .execute(
                "SELECT pg_notify('busy', g::text) FROM generate_series(1, 1000) g",
                (),
            )
            .await
            .unwrap();
        eventually("the listener has seen all 1000", || async {
            let s = listener.stats();
            s.delivered + s.lagged == 1000
        })
        .await;
        let stats = listener.stats();
        assert_eq!(stats.peak_buffered, 100);
        assert_eq!(stats.lagged, 900);
        assert_eq!(slow.buffered(), 100);
        // The first 100 in order, then the gap where the rest were lost.
        for i in 1..=100 {
            assert_eq!(
                payload(next(&mut slow).await),
                ("busy".into(), i.to_string())
            );
        }
        assert_eq!(
            next(&mut slow).await,
            Event::Gap {
                reason: GapReason::Lagged(900)
            }
        );
        // Caught up: delivery goes on.
        other.notify("busy", "fresh").await.unwrap();
        assert_eq!(
            payload(next(&mut slow).await),
            ("busy".into(), "fresh".into())
        );
    })
    .await;
}

/// A TCP proxy whose connections can be silenced: bytes stop flowing both
/// ways, as with a peer that vanished without closing, while new
/// connections work.
struct SilencingProxy {
    port: u16,
    silenced: Arc<AtomicBool>,
    generation: Arc<AtomicU64>,
}

impl SilencingProxy {
    async fn start(target_port: u16) -> SilencingProxy {
        let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = socket.local_addr().unwrap().port();
        let silenced = Arc::new(AtomicBool::new(false));
        let generation = Arc::new(AtomicU64::new(0));
        let (s, g) = (silenced.clone(), generation.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = socket.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", target_port)).await
                else {
                    continue;
                };
                // Connections made after a silencing are not silenced.
                let born = g.load(Ordering::SeqCst);
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                for (mut from, mut to) in [(cr, sw), (sr, cw)].map(|(r, w)| {
                    (
                        Box::new(r) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
                        w,
                    )
                }) {
                    let (s, g) = (s.clone(), g.clone());
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 16 * 1024];
                        loop {
                            let n = match from.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => n,
                            };
                            if s.load(Ordering::SeqCst) && g.load(Ordering::SeqCst) > born {
                                // Silent forever (until the test ends).
                                std::future::pending::<()>().await;
                            }
                            if to.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    });
                }
            }
        });
        SilencingProxy {
            port,
            silenced,
            generation,
        }
    }

    fn silence_existing(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.silenced.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn the_liveness_ping_notices_a_silent_connection() {
    let db = database("listen_ping");
    bounded(async {
        let port = common::cluster().port();
        let proxy = SilencingProxy::start(port).await;
        let direct = db.url(AuthRole::Trust);
        let via_proxy = direct.replace(&format!(":{port}/"), &format!(":{}/", proxy.port));
        assert_ne!(
            direct, via_proxy,
            "the test URL has no port to replace: {direct}"
        );
        let listener = Listener::builder(&via_proxy)
            .ping_interval(Duration::from_millis(300))
            .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(200))
            .connect()
            .await
            .unwrap();
        let mut sub = listener.listen("alive").await.unwrap();
        proxy.silence_existing();
        // No FIN, no RST: only the ping can tell.
        assert_eq!(
            next(&mut sub).await,
            Event::Gap {
                reason: GapReason::Reconnected
            }
        );
        let other = connect(&db).await;
        other.notify("alive", "again").await.unwrap();
        assert_eq!(
            payload(next(&mut sub).await),
            ("alive".into(), "again".into())
        );
        assert_eq!(listener.stats().reconnects, 1);
    })
    .await;
}

#[tokio::test]
async fn a_listener_on_a_primary_and_standby_ends_up_on_the_primary() {
    tokio::time::timeout(Duration::from_secs(120), async {
        let primary = Cluster::start().expect("primary");
        let standby = primary.start_standby().expect("standby");
        // Standby listed first, and no target_session_attrs in the URL.
        let url = format!(
            "postgres://{}@127.0.0.1:{},127.0.0.1:{}/postgres?connect_timeout=3",
            primary.superuser(),
            standby.port(),
            primary.port()
        );
        let listener = Listener::connect(&url).await.unwrap();
        let mut sub = listener.listen("jobs").await.unwrap();
        let on_primary = pgpipe::connect(&format!(
            "postgres://{}@127.0.0.1:{}/postgres",
            primary.superuser(),
            primary.port()
        ))
        .await
        .unwrap();
        let mine: bool = on_primary
            .query_one(
                "SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $1",
                (listener.backend_pid(),),
            )
            .await
            .unwrap()
            .get(0);
        assert!(mine, "the listener's backend is not on the primary");
        on_primary.notify("jobs", "42").await.unwrap();
        assert_eq!(payload(next(&mut sub).await), ("jobs".into(), "42".into()));
    })
    .await
    .expect("the primary+standby listener test exceeded its bound");
}

#[tokio::test]
async fn a_plain_client_delivers_notifications_only_when_asked() {
    let db = database("listen_client");
    bounded(async {
        let mut client = connect(&db).await;
        let other = connect(&db).await;
        // Nobody asked: counted and dropped.
        client.batch_execute("LISTEN unheard").await.unwrap();
        for i in 0..5 {
            other.notify("unheard", &i.to_string()).await.unwrap();
        }
        eventually("five notifications were counted", || async {
            // A round trip lets the driver read what arrived.
            client.execute("SELECT 1", ()).await.unwrap();
            client.stats().notifications_dropped == 5
        })
        .await;

        let mut news = client.listen("news").await.unwrap();
        let mut everything = client.notifications();
        other.notify("news", "one").await.unwrap();
        other.notify("unheard", "two").await.unwrap();
        assert_eq!(
            payload(next(&mut news).await),
            ("news".into(), "one".into())
        );
        assert_eq!(
            payload(next(&mut everything).await),
            ("news".into(), "one".into())
        );
        assert_eq!(
            payload(next(&mut everything).await),
            ("unheard".into(), "two".into())
        );
        // Between and inside query responses alike.
        let tx = client.transaction().await.unwrap();
        tx.execute("SELECT 1", ()).await.unwrap();
        other.notify("news", "mid-transaction").await.unwrap();
        tx.execute("SELECT pg_sleep(0.05)", ()).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(
            payload(next(&mut news).await),
            ("news".into(), "mid-transaction".into())
        );
        // Dropping the subscription UNLISTENs the channel.
        drop(news);
        eventually("news is no longer listened to", || async {
            let channels: Vec<String> = client
                .query("SELECT pg_listening_channels()", ())
                .await
                .unwrap()
                .iter()
                .map(|r| r.get::<String, _>(0))
                .collect();
            !channels.contains(&"news".to_owned())
        })
        .await;
        // The stream ends with an error when the connection closes.
        client.close();
        let end = tokio::time::timeout(Duration::from_secs(20), everything.next())
            .await
            .expect("the subscription did not end");
        match end {
            Some(Err(e)) => assert!(e.is_closed(), "{e}"),
            Some(Ok(Event::Notification(_))) | None => {}
            other => panic!("unexpected {other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn a_listener_url_that_does_not_parse_is_a_config_error() {
    let err = Listener::builder("postgres://localhost:notaport/db")
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), pgpipe::ErrorKind::Config, "{err}");
    // A ConfigError converts into pgpipe::Error, so `?` works on it.
    fn parse(s: &str) -> Result<pgpipe::Config, pgpipe::Error> {
        Ok(s.parse::<pgpipe::Config>()?)
    }
    let err = parse("postgres://localhost:notaport/db").unwrap_err();
    assert_eq!(err.kind(), pgpipe::ErrorKind::Config, "{err}");
    assert!(err.to_string().contains("port"), "{err}");
}
