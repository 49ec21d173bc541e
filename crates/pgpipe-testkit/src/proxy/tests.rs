//! The proxy against a plain echo server, with blocking std sockets (the
//! proxy has its own thread). Every read is bounded by a socket timeout.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::{Direction, FaultProxy, LinkFaults};

const BOUND: Duration = Duration::from_secs(20);

/// An echo server on a free port: echoes every connection until EOF.
fn echo_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if conn.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    port
}

fn setup() -> (FaultProxy, TcpStream) {
    let proxy = FaultProxy::start(("127.0.0.1", echo_server())).unwrap();
    let client = TcpStream::connect(proxy.addr()).unwrap();
    client.set_read_timeout(Some(BOUND)).unwrap();
    // Accepted (and not still in the listen backlog) before the test starts.
    eventually("connection accepted", || proxy.stats().open == 1);
    (proxy, client)
}

fn read_exact(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    s.read_exact(&mut buf).unwrap();
    buf
}

/// Polls `cond` until true, within the bound.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + BOUND;
    while !cond() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_clean_link_forwards_everything_both_ways() {
    let (proxy, mut client) = setup();
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let mut writer = client.try_clone().unwrap();
    let sent = data.clone();
    let t = std::thread::spawn(move || writer.write_all(&sent).unwrap());
    assert_eq!(read_exact(&mut client, data.len()), data);
    t.join().unwrap();
    // The proxy counts a chunk once its forwarding write has returned, which
    // can be after the other end already read it (a soak run caught
    // to_server at 196,608 of 200,000): wait for the counts, bounded.
    let len = data.len() as u64;
    eventually("every byte counted", || {
        let s = proxy.stats();
        s.to_server == len && s.to_client == len
    });
    let stats = proxy.stats();
    assert_eq!(stats.accepted, 1);
    assert_eq!(stats.open, 1);
    assert_eq!(stats.to_server, len);
    assert_eq!(stats.to_client, len);
    // An orderly close travels through, and the proxy forgets the connection.
    client.shutdown(Shutdown::Write).unwrap();
    assert_eq!(client.read(&mut [0u8; 1]).unwrap(), 0);
    eventually("connection closed", || proxy.stats().open == 0);
}

#[test]
fn latency_delays_each_chunk_and_keeps_order() {
    let (proxy, mut client) = setup();
    proxy.set(
        Direction::ToClient,
        LinkFaults {
            latency: Duration::from_millis(150),
            jitter: Duration::from_millis(50),
            ..Default::default()
        },
    );
    let start = Instant::now();
    for i in 0..5u8 {
        client.write_all(&[i]).unwrap();
    }
    // Lower bounds only: a loaded machine may add to them, never take away.
    assert_eq!(read_exact(&mut client, 5), vec![0, 1, 2, 3, 4]);
    assert!(start.elapsed() >= Duration::from_millis(150));
}

#[test]
fn bandwidth_caps_the_rate() {
    let (proxy, mut client) = setup();
    proxy.set(
        Direction::ToServer,
        LinkFaults {
            bandwidth: Some(100_000),
            ..Default::default()
        },
    );
    let start = Instant::now();
    let data = vec![7u8; 50_000];
    let mut writer = client.try_clone().unwrap();
    let t = std::thread::spawn(move || writer.write_all(&data).unwrap());
    read_exact(&mut client, 50_000);
    t.join().unwrap();
    // 50 kB at 100 kB/s: at least half a second.
    assert!(
        start.elapsed() >= Duration::from_millis(450),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn slices_split_writes_and_deliver_every_byte() {
    let (proxy, mut client) = setup();
    proxy.set(
        Direction::ToClient,
        LinkFaults {
            slice: Some(3),
            ..Default::default()
        },
    );
    let writes = proxy.stats().writes;
    client.write_all(b"hello, sliced world").unwrap();
    assert_eq!(read_exact(&mut client, 19), b"hello, sliced world");
    // 19 bytes in one write to the server (a clean direction) and at least
    // seven 3-byte writes back.
    // (The counter moves just after each write: wait for it.)
    eventually("eight writes counted", || {
        proxy.stats().writes - writes >= 8
    });
}

#[test]
fn a_black_hole_holds_traffic_without_closing_and_releases_it() {
    let (proxy, mut client) = setup();
    client.write_all(b"a").unwrap();
    assert_eq!(read_exact(&mut client, 1), b"a");
    proxy.black_hole(true);
    client.write_all(b"bcd").unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let err = client.read(&mut [0u8; 8]).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{err:?}"
    );
    assert_eq!(proxy.stats().open, 1);
    proxy.black_hole(false);
    client.set_read_timeout(Some(BOUND)).unwrap();
    assert_eq!(read_exact(&mut client, 3), b"bcd");
}

#[test]
fn close_after_n_bytes_delivers_exactly_n_then_ends_the_stream() {
    let (proxy, mut client) = setup();
    proxy.update(Direction::ToClient, |f| f.close_after = Some(5));
    client.write_all(b"0123456789").unwrap();
    let mut got = Vec::new();
    client.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"01234");
    eventually("connection closed", || proxy.stats().open == 0);
}

#[test]
fn close_after_zero_closes_an_idle_connection() {
    let (proxy, mut client) = setup();
    client.write_all(b"x").unwrap();
    assert_eq!(read_exact(&mut client, 1), b"x");
    proxy.update(Direction::ToServer, |f| f.close_after = Some(0));
    let mut rest = Vec::new();
    client.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
}

#[test]
fn stall_after_n_bytes_holds_the_rest_until_cleared() {
    let (proxy, mut client) = setup();
    proxy.update(Direction::ToClient, |f| f.stall_after = Some(2));
    client.write_all(b"abcdef").unwrap();
    assert_eq!(read_exact(&mut client, 2), b"ab");
    client
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    assert!(client.read(&mut [0u8; 8]).is_err());
    proxy.update(Direction::ToClient, |f| f.stall_after = None);
    client.set_read_timeout(Some(BOUND)).unwrap();
    assert_eq!(read_exact(&mut client, 4), b"cdef");
}

#[test]
fn reset_all_sends_an_rst() {
    let (proxy, mut client) = setup();
    client.write_all(b"x").unwrap();
    assert_eq!(read_exact(&mut client, 1), b"x");
    assert_eq!(proxy.reset_all(), 1);
    let err = client.read(&mut [0u8; 1]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err:?}");
    assert_eq!(proxy.stats().reset, 1);
    assert_eq!(proxy.stats().open, 0);
}

#[test]
fn refused_connections_are_reset_and_healing_lets_them_in() {
    let (proxy, _first) = setup();
    proxy.refuse_new(true);
    let mut c = TcpStream::connect(proxy.addr()).unwrap();
    c.set_read_timeout(Some(BOUND)).unwrap();
    let r = c.read(&mut [0u8; 1]);
    assert!(
        matches!(&r, Err(e) if e.kind() == ErrorKind::ConnectionReset) || matches!(r, Ok(0)),
        "{r:?}"
    );
    eventually(&format!("refusal counted: {:?}", proxy.stats()), || {
        proxy.stats().refused == 1
    });
    proxy.heal();
    let mut c = TcpStream::connect(proxy.addr()).unwrap();
    c.set_read_timeout(Some(BOUND)).unwrap();
    c.write_all(b"ok").unwrap();
    assert_eq!(read_exact(&mut c, 2), b"ok");
}

#[test]
fn an_unreachable_upstream_resets_the_client() {
    // A port nobody listens on: bind, note, close.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let proxy = FaultProxy::start(("127.0.0.1", port)).unwrap();
    let mut c = TcpStream::connect(proxy.addr()).unwrap();
    c.set_read_timeout(Some(BOUND)).unwrap();
    let r = c.read(&mut [0u8; 1]);
    assert!(r.is_err() || matches!(r, Ok(0)), "{r:?}");
    eventually("refusal counted", || proxy.stats().refused == 1);
}

#[test]
fn dropping_the_proxy_closes_its_connections() {
    let (proxy, mut client) = setup();
    client.write_all(b"x").unwrap();
    assert_eq!(read_exact(&mut client, 1), b"x");
    drop(proxy);
    let r = client.read(&mut [0u8; 1]);
    assert!(r.is_err() || matches!(r, Ok(0)), "{r:?}");
}

#[test]
fn black_holing_open_connections_spares_new_ones() {
    let (proxy, mut old) = setup();
    assert_eq!(proxy.black_hole_open_connections(), 1);
    old.write_all(b"lost").unwrap();
    let mut new = TcpStream::connect(proxy.addr()).unwrap();
    new.set_read_timeout(Some(BOUND)).unwrap();
    new.write_all(b"fine").unwrap();
    assert_eq!(read_exact(&mut new, 4), b"fine");
    old.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    assert!(old.read(&mut [0u8; 4]).is_err());
    assert_eq!(proxy.stats().open, 2);
}
