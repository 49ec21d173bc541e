//! CPU per answered request of an HTTP run: the service process's (client
//! side: HTTP, the driver, the runtime) and the database backends' (server
//! side), read from `/proc` before and after each run.
//!
//! Why: on a shared machine the request rate of a closed loop also
//! measures how much CPU the scheduler grants each side, and a service
//! whose pool has 16 busy backends is granted more than one with 4 (each
//! runnable process gets its share against whatever else runs). CPU per
//! request does not depend on that share: it is what a service costs where
//! the database has a machine of its own.

use std::time::Duration;

use crate::server_cpu::{clock_tick, process_ticks, ServerCpu, ServerSnapshot};

/// Watches the server's backends (when they are on this machine) and,
/// per run, a started service's process.
#[derive(Debug, Default)]
pub struct CpuWatch {
    server: Option<ServerCpu>,
}

/// The counters at the start of a run.
#[derive(Debug)]
pub struct CpuMark {
    service: Option<(u32, u64)>,
    server: Option<ServerSnapshot>,
}

/// CPU per answered request over one run, in µs; `None` where it could not
/// be read (an external service, a remote server, no request answered).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PerRequest {
    /// The service process.
    pub service_us: Option<f64>,
    /// The database backends.
    pub server_us: Option<f64>,
}

impl CpuWatch {
    /// Watches the backends of the server at `url` when they run on this
    /// machine; without them (remote, not reachable) only the services'
    /// CPU is read, and why is printed.
    pub async fn new(url: Option<&str>) -> CpuWatch {
        let Some(url) = url else {
            return CpuWatch::default();
        };
        match ServerCpu::connect(url).await {
            Ok(server) => CpuWatch { server },
            Err(e) => {
                eprintln!("pgpipe-bench http: no server CPU per request: {e}");
                CpuWatch::default()
            }
        }
    }

    /// Reads the counters before a run of the service `pid` (`None`: a
    /// service this tool did not start).
    pub async fn mark(&self, pid: Option<u32>) -> CpuMark {
        let service = pid.and_then(|pid| Some((pid, process_ticks(pid)?)));
        let server = match &self.server {
            Some(s) => s.snapshot().await.ok(),
            None => None,
        };
        CpuMark { service, server }
    }

    /// CPU per request since `mark`, for a run that answered `requests`.
    pub async fn per_request(&self, mark: CpuMark, requests: u64) -> PerRequest {
        if requests == 0 {
            return PerRequest::default();
        }
        let per = |cpu: Duration| cpu.as_secs_f64() * 1e6 / requests as f64;
        let service_us = mark.service.and_then(|(pid, before)| {
            let after = process_ticks(pid)?;
            Some(per(clock_tick() * after.saturating_sub(before) as u32))
        });
        let server_us = match (&self.server, mark.server) {
            (Some(s), Some(before)) => match s.snapshot().await {
                Ok(after) => Some(per(s.between(&before, &after))),
                Err(_) => None,
            },
            _ => None,
        };
        PerRequest {
            service_us,
            server_us,
        }
    }
}
