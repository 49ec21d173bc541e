//! A peer that stops answering at the TCP level (no ACK, no RST): only the
//! kernel can notice, through `tcp_user_timeout` (unacknowledged data) and
//! TCP keepalive (an idle connection). A proxy cannot fake that, since
//! the kernel keeps acknowledging what the proxy does not read.
//!
//! The test runs itself again in a private network namespace (unshare
//! CLONE_NEWNET, which needs CAP_SYS_ADMIN and CAP_NET_ADMIN: root on CI),
//! starts its own server there, and takes the loopback interface down under
//! open connections: from then on every segment is lost, as on a cable cut.
//! The namespace's own keepalive interval and probe count are set to
//! Linux's defaults (75 s, 9 probes: per-namespace sysctls, nothing outside
//! changes), so only pgpipe's `keepalives_interval` and `keepalives_count`
//! can make an idle dead peer show up within the test's bound.

mod common;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pgpipe_testkit::{AuthRole, Cluster};

/// Set in the re-run test process (inside the namespace).
const INNER: &str = "PGPIPE_DEAD_PEER_IN_NETNS";
const TEST_NAME: &str = "a_dead_peer_is_found_by_tcp_user_timeout_and_keepalive";

#[test]
fn a_dead_peer_is_found_by_tcp_user_timeout_and_keepalive() {
    if std::env::var_os(INNER).is_some() {
        inside_the_namespace();
        return;
    }
    let missing = missing_capabilities();
    if !missing.is_empty() {
        eprintln!(
            "SKIPPED {TEST_NAME}: a private network namespace needs {} (run the tests as root); \
             tcp_user_timeout and keepalive are then only checked as socket options \
             (network_faults.rs)",
            missing.join(" and ")
        );
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env(INNER, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: unshare is async-signal-safe; it runs in the forked child
    // before exec, so only the re-run test process gets the namespace.
    unsafe {
        cmd.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .expect("re-running the test in a new network namespace (unshare CLONE_NEWNET)");
    // Readers on their own threads, so a chatty child cannot block on a
    // full pipe while we wait for it.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    // initdb, a server start and two kernel timeouts: generous on a
    // loaded machine, but bounded.
    let deadline = Instant::now() + Duration::from_secs(240);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the test process") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    match status {
        Some(s) if s.success() && out.contains("1 passed") => {}
        Some(s) => panic!("the test in the namespace failed ({s}):\n{out}\n{err}"),
        None => panic!("the test in the namespace did not end in 240 s:\n{out}\n{err}"),
    }
}

/// The capabilities the namespace needs that this process lacks.
fn missing_capabilities() -> Vec<&'static str> {
    const CAP_NET_ADMIN: u32 = 12;
    const CAP_SYS_ADMIN: u32 = 21;
    let effective = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        })
        .unwrap_or(0);
    [
        (CAP_SYS_ADMIN, "CAP_SYS_ADMIN"),
        (CAP_NET_ADMIN, "CAP_NET_ADMIN"),
    ]
    .into_iter()
    .filter(|(bit, _)| effective & (1 << bit) == 0)
    .map(|(_, name)| name)
    .collect()
}

fn inside_the_namespace() {
    set_loopback(true);
    // Per network namespace: the system's slow defaults, written out so
    // that the test does not depend on what the namespace inherited.
    for (name, value) in [("tcp_keepalive_intvl", "75"), ("tcp_keepalive_probes", "9")] {
        let path = format!("/proc/sys/net/ipv4/{name}");
        std::fs::write(&path, value).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("a server in the namespace: {e}"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(common::bounded(async {
        let base = cluster.url(AuthRole::Trust, "postgres");
        let sep = if base.contains('?') { '&' } else { '?' };

        // Unacknowledged data: the query's bytes are retransmitted into the
        // void until tcp_user_timeout (2 s) makes the kernel give up.
        // keepalives=0 so that only the user timeout can end it.
        let client = pgpipe::connect(&format!("{base}{sep}keepalives=0&tcp_user_timeout=2000"))
            .await
            .expect("connect");
        client.query_one("SELECT 1", ()).await.expect("SELECT 1");
        set_loopback(false);
        let e = match client.query_one("SELECT 2", ()).await {
            Ok(_) => panic!("a query to a dead peer answered"),
            Err(e) => e,
        };
        assert!(kernel_timed_out(&e), "tcp_user_timeout: {e:?}");
        set_loopback(true);

        // An idle connection: nothing is sent, so only keepalive probes
        // find out: after keepalives_idle = 1 s, two unanswered probes
        // 1 s apart (the system's 75 s x 9 would outlast the bound). The
        // client sees the connection closed without asking anything.
        let client = pgpipe::connect(&format!(
            "{base}{sep}keepalives_idle=1&keepalives_interval=1&keepalives_count=2"
        ))
        .await
        .expect("connect");
        client.query_one("SELECT 1", ()).await.expect("SELECT 1");
        set_loopback(false);
        common::eventually("keepalive closes the idle connection", || {
            let closed = client.is_closed();
            async move { closed }
        })
        .await;
        let e = match client.query_one("SELECT 2", ()).await {
            Ok(_) => panic!("a closed client answered"),
            Err(e) => e,
        };
        assert!(e.is_closed() || kernel_timed_out(&e), "keepalive: {e:?}");
        set_loopback(true);
    }));
    drop(runtime);
    drop(cluster);
}

/// Whether the error comes from the kernel giving up (ETIMEDOUT) on the
/// socket: an I/O error whose message or source carries that errno.
fn kernel_timed_out(e: &pgpipe::Error) -> bool {
    let errno = format!("os error {}", libc::ETIMEDOUT);
    if e.kind() == pgpipe::ErrorKind::Io && e.to_string().contains(&errno) {
        return true;
    }
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.raw_os_error() == Some(libc::ETIMEDOUT) {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// Brings the namespace's loopback interface up or down (SIOCSIFFLAGS).
fn set_loopback(up: bool) {
    // SAFETY: plain socket/ioctl/close calls on a socket of our own with
    // a zeroed, NUL-terminated ifreq.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let mut req: libc::ifreq = std::mem::zeroed();
        for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        let r = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req);
        assert_eq!(r, 0, "SIOCGIFFLAGS lo: {}", std::io::Error::last_os_error());
        let flags = req.ifr_ifru.ifru_flags;
        let up_flag = libc::IFF_UP as libc::c_short;
        req.ifr_ifru.ifru_flags = if up {
            flags | up_flag
        } else {
            flags & !up_flag
        };
        let r = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req);
        assert_eq!(
            r,
            0,
            "SIOCSIFFLAGS lo {}: {}",
            if up { "up" } else { "down" },
            std::io::Error::last_os_error()
        );
        libc::close(fd);
    }
}
