//! One PostgreSQL node under Patroni, with the proxies that carry every
//! connection to it (clients, replication, the REST API) and its own
//! connection to etcd.

use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::config::NodeConfig;
use super::process::{find_binary, read_pid, Supervised, PATRONI_VAR};
use crate::error::TestkitError;
use crate::mini_client::{Endpoint, Login, MiniClient};
use crate::ports::free_port;
use crate::process::{signal, RunAs};
use crate::proxy::FaultProxy;
use crate::roles::SUPERUSER;
use crate::server::first_value;

/// One member of a [`PatroniCluster`](super::PatroniCluster).
pub struct PatroniNode {
    name: String,
    dir: PathBuf,
    pg_port: u16,
    rest_port: u16,
    pg_proxy: FaultProxy,
    rest_proxy: FaultProxy,
    etcd_proxy: FaultProxy,
    patroni: Supervised,
}

impl PatroniNode {
    /// Writes the node's configuration under `dir` (created, owned by the
    /// server user) and starts its Patroni.
    pub(super) fn start(
        name: &str,
        dir: PathBuf,
        bindir: &Path,
        etcd: SocketAddr,
        user: Option<&RunAs>,
    ) -> Result<PatroniNode, TestkitError> {
        let patroni = find_binary(PATRONI_VAR, "patroni")?;
        for d in [dir.clone(), dir.join("sock")] {
            fs::create_dir_all(&d)
                .map_err(|e| TestkitError::io(format!("creating {}", d.display()), e))?;
            // PostgreSQL wants its socket directory private to its user.
            set_mode(&d, 0o700)?;
            if let Some(user) = user {
                std::os::unix::fs::chown(&d, Some(user.uid), Some(user.gid))
                    .map_err(|e| TestkitError::io(format!("chown of {}", d.display()), e))?;
            }
        }
        let pg_port = free_port()?;
        let rest_port = free_port()?;
        let pg_proxy = FaultProxy::start(("127.0.0.1", pg_port))?;
        let rest_proxy = FaultProxy::start(("127.0.0.1", rest_port))?;
        let etcd_proxy = FaultProxy::start(etcd)?;
        let yaml = NodeConfig {
            name,
            dir: &dir,
            bindir,
            pg_port,
            pg_proxy_port: pg_proxy.port(),
            rest_port,
            rest_proxy_port: rest_proxy.port(),
            etcd_proxy_port: etcd_proxy.port(),
        }
        .yaml();
        let config = dir.join("patroni.yml");
        fs::write(&config, yaml)
            .map_err(|e| TestkitError::io(format!("writing {}", config.display()), e))?;
        set_mode(&config, 0o600)?;
        if let Some(user) = user {
            std::os::unix::fs::chown(&config, Some(user.uid), Some(user.gid))
                .map_err(|e| TestkitError::io(format!("chown of {}", config.display()), e))?;
        }
        let mut cmd = Command::new(patroni);
        cmd.arg(&config).current_dir(&dir);
        // SIGTERM: Patroni stops its PostgreSQL, then exits.
        let patroni = Supervised::start(
            format!("patroni ({name})"),
            cmd,
            user,
            &dir.join("patroni.log"),
            libc::SIGTERM,
        )?;
        Ok(PatroniNode {
            name: name.to_string(),
            dir,
            pg_port,
            rest_port,
            pg_proxy,
            rest_proxy,
            etcd_proxy,
            patroni,
        })
    }

    /// The member's name in Patroni (`node1`, `node2`, `node3`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The host clients connect to (`127.0.0.1`).
    pub fn host(&self) -> &str {
        "127.0.0.1"
    }

    /// The port clients connect to: the proxy in front of PostgreSQL, the
    /// address Patroni advertises (replicas stream through it too), cut by
    /// a partition.
    pub fn port(&self) -> u16 {
        self.pg_proxy.port()
    }

    /// The port PostgreSQL itself listens on, outside any partition (for
    /// checks made from "outside the network", such as the final count).
    pub fn server_port(&self) -> u16 {
        self.pg_port
    }

    /// The URL of the node's REST API as the other members reach it
    /// (through its proxy), e.g. `http://127.0.0.1:PORT`.
    pub fn rest_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.rest_proxy.port())
    }

    /// The REST API's own address, outside any partition.
    pub(super) fn rest_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.rest_port))
    }

    /// The postmaster's pid, from `postmaster.pid`, when PostgreSQL runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        read_pid(&self.dir.join("data/postmaster.pid"))
    }

    /// Patroni's log (PostgreSQL's goes there too): the last `n` lines.
    pub fn log_tail(&self, n: usize) -> String {
        self.patroni.log_tail(n)
    }

    /// `pg_is_in_recovery()` on the node's own port; an error when it does
    /// not answer.
    pub fn in_recovery(&self) -> Result<bool, TestkitError> {
        let rows = self.query("SELECT pg_is_in_recovery()")?;
        Ok(first_value(&rows) == Some("t"))
    }

    /// The timeline the node writes on (the first eight hex digits of its
    /// current WAL file's name); an error when it does not answer or is in
    /// recovery (only a primary has a current write position).
    pub fn write_timeline(&self) -> Result<u32, TestkitError> {
        let rows = self.query("SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)")?;
        let text = first_value(&rows).unwrap_or_default();
        u32::from_str_radix(text, 16)
            .map_err(|_| TestkitError::new(format!("{}: {text:?} is not a timeline", self.name)))
    }

    /// Runs `sql` on the node's own port (outside any partition) as the
    /// superuser, in the `postgres` database; text rows.
    pub fn query(&self, sql: &str) -> Result<Vec<Vec<Option<String>>>, TestkitError> {
        let login = Login {
            endpoint: Endpoint::Tcp("127.0.0.1".into(), self.pg_port),
            user: SUPERUSER.to_string(),
            password: None,
            dbname: "postgres".to_string(),
            timeout: Duration::from_secs(10),
        };
        MiniClient::connect(&login)?.simple_query(sql)
    }

    /// Black-holes (or releases) every link of the node: clients and
    /// replicas to its PostgreSQL, the other members to its REST API, and
    /// its own connection to etcd.
    pub(super) fn isolate(&self, on: bool) {
        for proxy in [&self.pg_proxy, &self.rest_proxy, &self.etcd_proxy] {
            if on {
                proxy.black_hole(true);
            } else {
                proxy.heal();
            }
        }
    }

    /// Resets every connection open through the PostgreSQL proxy.
    pub(super) fn reset_client_connections(&self) -> usize {
        self.pg_proxy.reset_all()
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the node's Patroni: its REST
    /// API stops answering while PostgreSQL goes on.
    pub(super) fn freeze_patroni(&self, frozen: bool) {
        if let Some(pid) = self.patroni.pid() {
            signal(pid, if frozen { libc::SIGSTOP } else { libc::SIGCONT });
        }
    }

    /// Why Patroni is not running, if it is not.
    pub(super) fn exited(&self) -> Option<String> {
        self.patroni.exited()
    }

    /// Stops Patroni (which stops PostgreSQL), then makes sure no
    /// postmaster of this node is left, whatever happened to Patroni.
    pub(super) fn stop(&self) {
        self.isolate(false);
        self.freeze_patroni(false);
        self.patroni.stop(Duration::from_secs(60));
        if let Some(pid) = self.postmaster_pid() {
            if alive(pid) {
                signal(pid, libc::SIGQUIT);
                let deadline = std::time::Instant::now() + Duration::from_secs(10);
                while alive(pid) && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
                if alive(pid) {
                    signal(pid, libc::SIGKILL);
                }
            }
        }
    }
}

impl std::fmt::Debug for PatroniNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatroniNode")
            .field("name", &self.name)
            .field("port", &self.port())
            .field("server_port", &self.pg_port)
            .field("rest_url", &self.rest_url())
            .finish()
    }
}

fn set_mode(path: &Path, mode: u32) -> Result<(), TestkitError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| TestkitError::io(format!("chmod of {}", path.display()), e))
}

/// True while `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(") ").and_then(|(_, r)| r.chars().next()) != Some('Z')
}
