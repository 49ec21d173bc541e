//! A TCP fault proxy: sits between a client and a server and, on command
//! from the test at run time, delays, throttles, slices, holds, cuts or
//! resets the traffic of every connection through it.
//!
//! ```no_run
//! use std::time::Duration;
//! use pgpipe_testkit::{AuthRole, Cluster, Direction, FaultProxy, LinkFaults};
//!
//! let cluster = Cluster::shared()?;
//! let proxy = FaultProxy::start(("127.0.0.1", cluster.port()))?;
//! // The client connects to the proxy instead of the server.
//! let url = proxy.rewrite_url(&cluster.url(AuthRole::Trust, "postgres"), cluster.port());
//! // 50 ms each way, and the server's replies cut into 7-byte writes.
//! proxy.set(Direction::ToServer, LinkFaults { latency: Duration::from_millis(50), ..Default::default() });
//! proxy.set(Direction::ToClient, LinkFaults { slice: Some(7), ..Default::default() });
//! // ... later: the link dies silently, then every connection is reset.
//! proxy.black_hole(true);
//! proxy.reset_all();
//! proxy.heal();
//! # let _ = url;
//! # Ok::<(), pgpipe_testkit::TestkitError>(())
//! ```
//!
//! The proxy runs on a thread of its own (its own one-thread tokio runtime),
//! so a test that blocks its runtime (or has none) still gets its traffic
//! forwarded; every control method is a plain synchronous call that can be
//! made from anywhere. Dropping the [`FaultProxy`] closes every connection
//! through it.

mod faults;
mod pump;
mod rng;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::AbortHandle;

pub use faults::{Direction, LinkFaults};
use pump::{pump, End};

use crate::TestkitError;

/// What every connection's pumps read: the faults of each direction, and a
/// generation per direction so that byte budgets restart when set again.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(crate) dirs: [LinkFaults; 2],
    pub(crate) generation: [u64; 2],
}

/// Counters of a [`FaultProxy`] (see [`FaultProxy::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProxyStats {
    /// Connections accepted from clients (refused ones included).
    pub accepted: u64,
    /// Connections refused ([`FaultProxy::refuse_new`]) or whose server
    /// could not be reached.
    pub refused: u64,
    /// Connections open right now.
    pub open: usize,
    /// Connections ended by [`FaultProxy::reset_all`].
    pub reset: u64,
    /// Bytes delivered to the server.
    pub to_server: u64,
    /// Bytes delivered to the client.
    pub to_client: u64,
    /// `write()` calls made to deliver them (both directions).
    pub writes: u64,
}

struct Conn {
    sockets: [Arc<TcpStream>; 2],
    task: AbortHandle,
    /// Set by [`FaultProxy::black_hole_open_connections`]: this connection
    /// delivers nothing any more, whatever the settings say.
    held: Arc<AtomicBool>,
}

struct State {
    settings: watch::Sender<Settings>,
    refuse: AtomicBool,
    conns: Mutex<HashMap<u64, Conn>>,
    accepted: AtomicU64,
    refused: AtomicU64,
    reset: AtomicU64,
    delivered: [Arc<AtomicU64>; 2],
    writes: Arc<AtomicU64>,
}

/// A running fault proxy: a loopback TCP relay in front of one upstream
/// that delays, throttles, slices, holds, cuts or resets its traffic on
/// command.
pub struct FaultProxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    state: Arc<State>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FaultProxy {
    /// Starts a proxy on a free loopback port that forwards every
    /// connection to `upstream` (resolved once, now).
    pub fn start(upstream: impl ToSocketAddrs) -> Result<FaultProxy, TestkitError> {
        let upstream = upstream
            .to_socket_addrs()
            .map_err(|e| TestkitError::io("resolving the proxy's upstream", e))?
            .next()
            .ok_or_else(|| TestkitError::new("the proxy's upstream resolved to no address"))?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|e| TestkitError::io("binding the proxy's port", e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| TestkitError::io("configuring the proxy's port", e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| TestkitError::io("the proxy's address", e))?;
        let state = Arc::new(State {
            settings: watch::Sender::new(Settings::default()),
            refuse: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            reset: AtomicU64::new(0),
            delivered: [Arc::default(), Arc::default()],
            writes: Arc::default(),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TestkitError::io("starting the proxy's runtime", e))?;
        let (shutdown, stop) = oneshot::channel();
        let thread_state = state.clone();
        let accept_state = state.clone();
        let thread = std::thread::Builder::new()
            .name(format!("fault-proxy-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(_) => return,
                    };
                    tokio::select! {
                        () = accept_loop(listener, upstream, accept_state) => {}
                        _ = stop => {}
                    }
                });
                // Dropping the runtime cancels every connection's task; the
                // map's sockets go with the state.
                drop(runtime);
                thread_state.lock_conns().clear();
            })
            .map_err(|e| TestkitError::io("starting the proxy's thread", e))?;
        Ok(FaultProxy {
            addr,
            upstream,
            state,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port clients connect to (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Where the proxy forwards to.
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// `url` with `:server_port` replaced by the proxy's port, for URLs of
    /// the form `postgres://user@127.0.0.1:PORT/...` as the testkit makes.
    pub fn rewrite_url(&self, url: &str, server_port: u16) -> String {
        url.replacen(
            &format!(":{server_port}/"),
            &format!(":{}/", self.port()),
            1,
        )
    }

    /// Replaces the faults of one direction (on open connections too).
    pub fn set(&self, dir: Direction, faults: LinkFaults) {
        self.update(dir, |f| *f = faults);
    }

    /// Changes the faults of one direction in place.
    pub fn update(&self, dir: Direction, change: impl FnOnce(&mut LinkFaults)) {
        self.state.settings.send_modify(|s| {
            change(&mut s.dirs[dir.index()]);
            s.generation[dir.index()] += 1;
        });
    }

    /// Holds (or releases) all traffic in both directions: see
    /// [`LinkFaults::black_hole`].
    pub fn black_hole(&self, on: bool) {
        for dir in Direction::BOTH {
            self.update(dir, |f| f.black_hole = on);
        }
    }

    /// Black-holes the connections open now, for good (until they are
    /// reset or the proxy is dropped); connections opened later are not
    /// affected. This is a link that died under a client's existing
    /// connections while the server stays reachable: the client must notice
    /// on its own (timeouts, keepalives) and open new connections.
    /// Returns how many connections were held.
    pub fn black_hole_open_connections(&self) -> usize {
        let n = {
            let conns = self.state.lock_conns();
            for conn in conns.values() {
                conn.held.store(true, Ordering::SeqCst);
            }
            conns.len()
        };
        // Wakes every pump to look at its flag.
        self.state.settings.send_modify(|_| {});
        n
    }

    /// Clears every fault in both directions and stops refusing connections.
    pub fn heal(&self) {
        self.refuse_new(false);
        for dir in Direction::BOTH {
            self.set(dir, LinkFaults::default());
        }
    }

    /// While on, new connections are accepted and reset at once (the client
    /// sees a connection reset before any byte); open ones are untouched.
    pub fn refuse_new(&self, on: bool) {
        self.state.refuse.store(on, Ordering::SeqCst);
    }

    /// Resets every open connection: both the client and the server see a
    /// TCP RST (not an orderly close). Returns how many were reset.
    pub fn reset_all(&self) -> usize {
        let conns: Vec<Conn> = self.state.lock_conns().drain().map(|(_, c)| c).collect();
        for conn in &conns {
            for s in &conn.sockets {
                let _ = socket2::SockRef::from(&**s).set_linger(Some(std::time::Duration::ZERO));
            }
            conn.task.abort();
        }
        self.state
            .reset
            .fetch_add(conns.len() as u64, Ordering::Relaxed);
        conns.len()
    }

    /// The proxy's counters.
    pub fn stats(&self) -> ProxyStats {
        ProxyStats {
            accepted: self.state.accepted.load(Ordering::Relaxed),
            refused: self.state.refused.load(Ordering::Relaxed),
            open: self.state.lock_conns().len(),
            reset: self.state.reset.load(Ordering::Relaxed),
            to_server: self.state.delivered[0].load(Ordering::Relaxed),
            to_client: self.state.delivered[1].load(Ordering::Relaxed),
            writes: self.state.writes.load(Ordering::Relaxed),
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultProxy")
            .field("addr", &self.addr)
            .field("upstream", &self.upstream)
            .field("settings", &*self.state.settings.borrow())
            .finish()
    }
}

impl State {
    fn lock_conns(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Conn>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }
}

async fn accept_loop(listener: TcpListener, upstream: SocketAddr, state: Arc<State>) {
    let mut next_id = 0u64;
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        state.accepted.fetch_add(1, Ordering::Relaxed);
        if state.refuse.load(Ordering::SeqCst) {
            reset(&client);
            state.refused.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        next_id += 1;
        let id = next_id;
        let state2 = state.clone();
        // The connection is registered before its task runs, so that
        // reset_all() never misses one that is still connecting upstream.
        let client = Arc::new(client);
        let held = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(serve(id, client.clone(), upstream, state2, held.clone()));
        let _ = client.set_nodelay(true);
        let placeholder = Conn {
            sockets: [client.clone(), client],
            task: task.abort_handle(),
            held,
        };
        state.lock_conns().insert(id, placeholder);
    }
}

async fn serve(
    id: u64,
    client: Arc<TcpStream>,
    upstream: SocketAddr,
    state: Arc<State>,
    held: Arc<AtomicBool>,
) {
    let server = match TcpStream::connect(upstream).await {
        Ok(s) => Arc::new(s),
        Err(_) => {
            reset(&client);
            state.refused.fetch_add(1, Ordering::Relaxed);
            state.lock_conns().remove(&id);
            return;
        }
    };
    let _ = server.set_nodelay(true);
    {
        let mut conns = state.lock_conns();
        match conns.get_mut(&id) {
            Some(conn) => conn.sockets[1] = server.clone(),
            // Reset while connecting upstream.
            None => {
                reset(&server);
                return;
            }
        }
    }
    let rx = state.settings.subscribe();
    let to_server = pump(
        client.clone(),
        server.clone(),
        Direction::ToServer,
        rx.clone(),
        held.clone(),
        state.delivered[0].clone(),
        state.writes.clone(),
    );
    let to_client = pump(
        server.clone(),
        client.clone(),
        Direction::ToClient,
        rx,
        held,
        state.delivered[1].clone(),
        state.writes.clone(),
    );
    tokio::pin!(to_server, to_client);
    let (mut a, mut b) = (None, None);
    let end = loop {
        tokio::select! {
            end = &mut to_server, if a.is_none() => a = Some(end),
            end = &mut to_client, if b.is_none() => b = Some(end),
        }
        match (a, b) {
            (Some(End::Eof), Some(End::Eof)) => break End::Eof,
            (Some(End::Reset), _) | (_, Some(End::Reset)) => break End::Reset,
            (Some(End::Close), _) | (_, Some(End::Close)) => break End::Close,
            _ => {}
        }
    };
    match end {
        End::Reset => {
            reset(&client);
            reset(&server);
        }
        End::Close | End::Eof => {
            for s in [&client, &server] {
                let _ = socket2::SockRef::from(&**s).shutdown(std::net::Shutdown::Both);
            }
        }
    }
    state.lock_conns().remove(&id);
}

/// Makes the socket's close send an RST.
fn reset(s: &TcpStream) {
    let _ = socket2::SockRef::from(s).set_linger(Some(std::time::Duration::ZERO));
}
