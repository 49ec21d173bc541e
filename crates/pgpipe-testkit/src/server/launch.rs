//! Starting postgres on a chosen port and waiting until it answers a real
//! startup handshake (or reporting why it did not, with the server's log).

use std::fs::{self, OpenOptions};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{clean_env, log_tail, Server, START_TIMEOUT};
use crate::error::TestkitError;
use crate::mini_client::{Endpoint, Login, MiniClient};
use crate::process::{run_as, spawn_tied};
use crate::roles::SUPERUSER;

impl Server {
    /// Starts postgres and waits until it answers a real startup handshake.
    /// Returns server_version.
    pub(super) fn launch(&self) -> Result<String, Launch> {
        let failed = |e: TestkitError| Launch::Failed(e);
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .map_err(|e| failed(TestkitError::io("opening the server log", e)))?;
        let log_start = log.metadata().map(|m| m.len()).unwrap_or(0);
        let log_err = log
            .try_clone()
            .map_err(|e| failed(TestkitError::io("dup of the server log", e)))?;
        let mut cmd = Command::new(self.bindir.join("postgres"));
        cmd.arg("-D").arg(&self.data_dir);
        for (k, v) in self.settings() {
            cmd.arg("-c").arg(format!("{k}={v}"));
        }
        for (k, v) in &self.extra_settings {
            cmd.arg("-c").arg(format!("{k}={v}"));
        }
        cmd.stdin(Stdio::null()).stdout(log).stderr(log_err);
        clean_env(&mut cmd);
        run_as(&mut cmd, self.run_as.as_ref());
        let child = spawn_tied(cmd).map_err(|e| {
            failed(TestkitError::io(
                format!("starting {}", self.bindir.join("postgres").display()),
                e,
            ))
        })?;
        self.pid.store(child.id(), Ordering::SeqCst);
        *self.child.lock().unwrap_or_else(|p| p.into_inner()) = Some(child);

        let result = self.wait_ready(log_start);
        if result.is_err() {
            self.stop(libc::SIGQUIT, Duration::from_secs(5));
        }
        result
    }

    /// The command-line settings: fast (nothing survives a test run) and
    /// private (loopback TCP and our own socket directory only).
    fn settings(&self) -> Vec<(&'static str, String)> {
        vec![
            ("port", self.port.to_string()),
            ("listen_addresses", "127.0.0.1".into()),
            (
                "unix_socket_directories",
                self.socket_dir.to_string_lossy().into_owned(),
            ),
            ("fsync", "off".into()),
            ("synchronous_commit", "off".into()),
            ("full_page_writes", "off".into()),
            ("max_connections", "300".into()),
            ("shared_buffers", "128MB".into()),
            ("huge_pages", "off".into()),
            ("checkpoint_timeout", "1h".into()),
            ("max_wal_size", "4GB".into()),
            // PostgreSQL 15's defaults, explicit because standbys
            // (Cluster::start_standby) depend on them.
            ("wal_level", "replica".into()),
            ("max_wal_senders", "10".into()),
            ("hot_standby", "on".into()),
            ("log_min_messages", "warning".into()),
            ("logging_collector", "off".into()),
            ("log_destination", "stderr".into()),
            // Deterministic, whatever the machine's zone.
            ("timezone", "UTC".into()),
            ("log_timezone", "UTC".into()),
        ]
    }

    fn wait_ready(&self, log_start: u64) -> Result<String, Launch> {
        let deadline = Instant::now() + START_TIMEOUT;
        let tcp = Login {
            endpoint: Endpoint::Tcp("127.0.0.1".into(), self.port),
            user: SUPERUSER.to_string(),
            password: None,
            dbname: "postgres".to_string(),
            timeout: Duration::from_secs(2),
        };
        let mut last: String;
        loop {
            let exited = {
                let mut slot = self.child.lock().unwrap_or_else(|p| p.into_inner());
                match slot.as_mut().map(|c| c.try_wait()) {
                    Some(Ok(Some(status))) => Some(status.to_string()),
                    Some(Ok(None)) => None,
                    Some(Err(e)) => Some(format!("unknown status ({e})")),
                    None => Some("not running".into()),
                }
            };
            if let Some(status) = exited {
                let tail = log_tail(&self.log_path, log_start, 30);
                let e = TestkitError::new(format!(
                    "postgres exited during startup ({status}) on port {}; server log:\n{tail}",
                    self.port,
                ));
                let port_taken = [
                    "could not bind",
                    "could not create any TCP/IP sockets",
                    "Address already in use",
                ]
                .iter()
                .any(|s| tail.contains(s));
                return Err(if port_taken {
                    Launch::PortTaken(e)
                } else {
                    Launch::Failed(e)
                });
            }
            // A real handshake over TCP, then a check that it is our server
            // answering (another test process may have bound the port first,
            // in which case ours will exit and be noticed above).
            match MiniClient::connect(&tcp) {
                Ok(mut client) => {
                    let version = client
                        .parameter("server_version")
                        .unwrap_or_default()
                        .to_string();
                    match client.simple_query("SHOW data_directory") {
                        Ok(rows) if rows_match(&rows, &self.data_dir) => return Ok(version),
                        Ok(_) => last = "another server answers on this port".into(),
                        Err(e) => last = e.to_string(),
                    }
                }
                Err(e) => last = e.to_string(),
            }
            if Instant::now() >= deadline {
                let tail = log_tail(&self.log_path, log_start, 30);
                return Err(Launch::Failed(TestkitError::new(format!(
                    "postgres did not accept connections on 127.0.0.1:{} within {} s (last attempt: {last}); \
                     server log:\n{tail}",
                    self.port,
                    START_TIMEOUT.as_secs(),
                ))));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

pub(super) enum Launch {
    /// The port was taken between choosing it and the server binding it.
    PortTaken(TestkitError),
    Failed(TestkitError),
}

fn rows_match(rows: &[Vec<Option<String>>], data_dir: &Path) -> bool {
    rows.first()
        .and_then(|r| r.first())
        .and_then(|v| v.as_deref())
        .is_some_and(|dir| {
            fs::canonicalize(dir)
                .map(|d| d == data_dir)
                .unwrap_or(false)
        })
}
