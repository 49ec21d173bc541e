//! A one-member etcd (v3 API) on loopback for Patroni's leader key.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::process::{find_binary, Supervised, ETCD_VAR};
use super::rest;
use crate::error::TestkitError;
use crate::ports::free_port;
use crate::process::RunAs;

/// How long etcd may take to answer `/health`.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running etcd, stopped on drop.
pub(super) struct Etcd {
    client: SocketAddr,
    process: Supervised,
}

impl Etcd {
    /// Starts etcd with its data in `dir/etcd`, clients and peers on free
    /// loopback ports; returns once it reports itself healthy.
    pub(super) fn start(dir: &Path, user: Option<&RunAs>) -> Result<Etcd, TestkitError> {
        let binary = find_binary(ETCD_VAR, "etcd")?;
        let client = SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let peer = SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let mut cmd = Command::new(&binary);
        cmd.arg("--name")
            .arg("pgpipe")
            .arg("--data-dir")
            .arg(dir.join("etcd"))
            .arg("--listen-client-urls")
            .arg(format!("http://{client}"))
            .arg("--advertise-client-urls")
            .arg(format!("http://{client}"))
            .arg("--listen-peer-urls")
            .arg(format!("http://{peer}"))
            .arg("--initial-advertise-peer-urls")
            .arg(format!("http://{peer}"))
            .arg("--initial-cluster")
            .arg(format!("pgpipe=http://{peer}"))
            .args([
                "--initial-cluster-state",
                "new",
                "--enable-v2=false",
                "--logger",
                "zap",
                "--log-level",
                "warn",
            ]);
        let process = Supervised::start("etcd", cmd, user, &dir.join("etcd.log"), libc::SIGTERM)?;
        let etcd = Etcd { client, process };
        etcd.wait_healthy()?;
        Ok(etcd)
    }

    /// etcd's client address (Patroni's nodes reach it through proxies).
    pub(super) fn client_addr(&self) -> SocketAddr {
        self.client
    }

    pub(super) fn log_tail(&self, n: usize) -> String {
        self.process.log_tail(n)
    }

    fn wait_healthy(&self) -> Result<(), TestkitError> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let last = match rest::get(self.client, "/health") {
                Ok((200, body)) if body.contains("true") => return Ok(()),
                Ok((status, body)) => format!("{status}: {body}"),
                Err(e) => e.to_string(),
            };
            if let Some(exited) = self.process.exited() {
                return Err(TestkitError::new(format!(
                    "{exited}; its log:\n{}",
                    self.log_tail(30)
                )));
            }
            if Instant::now() >= deadline {
                return Err(TestkitError::new(format!(
                    "etcd on {} was not healthy within {} s (last: {last}); its log:\n{}",
                    self.client,
                    START_TIMEOUT.as_secs(),
                    self.log_tail(30)
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
