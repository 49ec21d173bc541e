//! The services under load: started as child processes (the
//! `pgpipe-service` binary next to this one when it was built, else this
//! binary's `service` subcommand), one per driver, or given as URLs.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};

use super::client::{Conn, Req};

/// How long a service may take to start and answer `/health`.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a service may take to shut down gracefully.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// A service to load.
#[derive(Debug)]
pub struct Target {
    /// Its name in the results (the driver).
    pub name: String,
    /// Where it listens.
    pub addr: SocketAddr,
    child: Option<Child>,
    /// Where its log goes (started services).
    pub log: Option<PathBuf>,
}

/// The services `--services` can start.
pub const NAMES: &[&str] = &["pgpipe", "pgpipe-per-statement", "tokio-postgres"];

/// The service binary's driver for a service name, and whether its
/// statements share Syncs (pgpipe only).
fn driver_of(name: &str) -> (&str, Option<bool>) {
    match name {
        "pgpipe" => ("pgpipe", Some(true)),
        "pgpipe-per-statement" => ("pgpipe", Some(false)),
        other => (other, None),
    }
}

/// How a started service is configured.
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    /// The database.
    pub url: String,
    /// Pool size.
    pub pool_size: usize,
    /// Runtime worker threads.
    pub workers: Option<usize>,
    /// Directory for `<driver>-flame.svg`.
    pub profile_dir: Option<PathBuf>,
    /// The program to run them from (see [`HttpArgs::service_exe`](super::HttpArgs::service_exe)).
    pub exe: Option<PathBuf>,
}

/// The program that runs a service, and whether it is a pgpipe-bench
/// (which needs the `service` argument): `chosen`, else the pgpipe-service
/// beside this program, else this program.
fn executable(chosen: Option<&Path>) -> Result<(PathBuf, bool), String> {
    if let Some(exe) = chosen {
        let is_service = exe
            .file_stem()
            .is_some_and(|n| n.to_string_lossy().starts_with("pgpipe-service"));
        return Ok((exe.to_path_buf(), !is_service));
    }
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let sibling = me.with_file_name(format!("pgpipe-service{}", std::env::consts::EXE_SUFFIX));
    if sibling.is_file() {
        Ok((sibling, false))
    } else {
        Ok((me, true))
    }
}

impl Target {
    /// An already running service at `url` (`http://host:port`).
    pub fn external(name: &str, url: &str) -> Result<Target, String> {
        let hostport = url.trim_start_matches("http://").trim_end_matches('/');
        let addr = std::net::ToSocketAddrs::to_socket_addrs(hostport)
            .map_err(|e| format!("--target {name}={url}: {e}"))?
            .next()
            .ok_or_else(|| format!("--target {name}={url}: no address"))?;
        Ok(Target {
            name: name.to_string(),
            addr,
            child: None,
            log: None,
        })
    }

    /// Starts the service on `driver` and waits until it answers `/health`.
    pub async fn start(driver: &str, opts: &ServiceOptions) -> Result<Target, String> {
        let (exe, via_bench) = executable(opts.exe.as_deref())?;
        let log = std::env::temp_dir().join(format!("pgpipe-bench-http-{driver}.log"));
        let log_file = std::fs::File::create(&log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let mut cmd = Command::new(&exe);
        if via_bench {
            cmd.arg("service");
        }
        let (service_driver, coalesce) = driver_of(driver);
        cmd.args(["--driver", service_driver, "--listen", "127.0.0.1:0"])
            .args(["--pool-size", &opts.pool_size.to_string()])
            .env("DATABASE_URL", &opts.url)
            .env("RUST_LOG", "warn,pgpipe_service=info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file);
        if let Some(w) = opts.workers {
            cmd.args(["--workers", &w.to_string()]);
        }
        if let Some(on) = coalesce {
            cmd.args(["--coalesce-sync", if on { "true" } else { "false" }]);
        }
        if let Some(dir) = &opts.profile_dir {
            cmd.arg("--profile")
                .arg(dir.join(format!("{driver}-flame.svg")));
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut target = Target {
            name: driver.to_string(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            child: Some(child),
            log: Some(log.clone()),
        };
        let line = tokio::task::spawn_blocking(move || rx.recv_timeout(START_TIMEOUT))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|_| format!("{driver} service did not start; see {}", log.display()))?;
        target.addr = line
            .trim()
            .strip_prefix("listening on http://")
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| {
                format!(
                    "{driver} service did not start ({line:?}); see {}",
                    log.display()
                )
            })?;
        wait_healthy(target.addr).await?;
        Ok(target)
    }

    /// The process id of a service this tool started.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops a started service with SIGTERM (graceful: it writes its
    /// profile) and waits for it; external targets are left alone.
    pub fn stop(&mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!("{} service exited with {status}", self.name));
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "{} service did not stop within {STOP_TIMEOUT:?}",
                        self.name
                    ));
                }
            }
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Waits until `GET /health` answers 200.
pub async fn wait_healthy(addr: SocketAddr) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    let req = Req {
        method: Method::GET,
        path: "/health".into(),
        body: Bytes::new(),
    };
    let mut last = String::new();
    while Instant::now() < deadline {
        let mut conn = Conn::new(addr);
        match conn.send(&req).await {
            Ok((StatusCode::OK, _)) => return Ok(()),
            Ok((status, body)) => last = format!("{status}: {}", String::from_utf8_lossy(&body)),
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!(
        "{addr}/health did not answer 200 within {START_TIMEOUT:?}: {last}"
    ))
}

/// PUTs every key of a kv mix once (through `addr`), so that GETs find
/// their values.
pub async fn preload_kv(addr: SocketAddr, keys: u64, value_size: usize) -> Result<(), String> {
    let workers = 16u64;
    let mut tasks = Vec::new();
    for w in 0..workers {
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::new(addr);
            let mut key = w;
            while key < keys {
                let req = Req {
                    method: Method::PUT,
                    path: format!("/v0/entity?id=k{key}"),
                    body: super::mix::kv_value(key, value_size),
                };
                match conn.send(&req).await {
                    Ok((StatusCode::CREATED, _)) => {}
                    Ok((s, b)) => {
                        return Err(format!(
                            "preload PUT k{key}: {s} {}",
                            String::from_utf8_lossy(&b)
                        ))
                    }
                    Err(e) => return Err(format!("preload PUT k{key}: {e}")),
                }
                key += workers;
            }
            Ok(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// The flame graph a started service writes with `--profile`.
pub fn flame_path(dir: &Path, driver: &str) -> PathBuf {
    dir.join(format!("{driver}-flame.svg"))
}
